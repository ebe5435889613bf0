"""The runtime conformance table: {backend, stub behaviour} -> {status, findings, evidence}, run
with the real binary against the stub runtimes (each backend's Backend below says how its runtime
probe is reached; runtime_stubs.py does it). Every backend acts out the shared behaviours (ok,
no-device, error, crash, hang, garbage, permission: tests/stubs/stub_mode.h) and its runtime's own;
a new backend gets these tests by adding its Backend and its rows. Also checks that the fact keys
one probe reads in another's facts (include/sc_facts.h) are where the readers look."""
import os
import re

import runtime_stubs
import sclib
from sclib import unittest

MARGIN = 15 if sclib.SANITIZED else 5  # sanitizer builds start slower


# How each backend's runtime probe is reached: the stub, the variables a run clears, and for a
# backend this machine lacks, the fixture whose driver view the namespace mounts and the names the
# stub takes on LD_LIBRARY_PATH.
AMD = runtime_stubs.Backend(
    "amd", "runtime.hip", "hipstub",
    ("LD_LIBRARY_PATH", "ROCM_PATH", "HIP_PATH", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
     "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "HSA_OVERRIDE_GFX_VERSION"))
NVIDIA = runtime_stubs.Backend(
    "nvidia", "runtime.cuda", "cudastub",
    ("LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "SC_CUDASTUB_DEVICES"),
    fixture="nvidia-h200", libfile="libcuda.so.550.127.05", links=("libcuda.so.1",),
    nvrtc_links=("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"),
    vendor="0x10de")
ASCEND = runtime_stubs.Backend(
    "ascend", "runtime.acl", "aclstub",
    ("LD_LIBRARY_PATH", "ASCEND_RT_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES"),
    fixture="ascend-910b", libfile="libascendcl.so", vendor="0x19e5", node="/dev/davinci0")
BACKENDS = {b.name: b for b in (AMD, NVIDIA, ASCEND)}


class Expect:
    """A check on a fact's value beyond equality."""

    def __init__(self, what, test):
        self.what, self.test = what, test

    def __repr__(self):
        return self.what


PRESENT = Expect("present", lambda v, ctx: v is not Missing)
ABSENT = Expect("absent", lambda v, ctx: v is Missing)
IS_LIST = Expect("a list", lambda v, ctx: isinstance(v, list))


def contains(text):
    return Expect("contains %r" % text, lambda v, ctx: isinstance(v, str) and text in v)


def in_libdir(name):
    """The path of name in the stub's library directory (namespace backends)."""
    return Expect("libdir/%s" % name, lambda v, ctx: v == os.path.join(ctx.libdir(), name))


STUB_REALPATH = Expect("the stub's real path",
                       lambda v, ctx: v == os.path.realpath(ctx.stub_path()))


class Missing:
    """The value of a path that is not there."""


def lookup(obj, path):
    """obj at a dotted path; "*" applies the rest to each element of a list and gives the list of
    results."""
    if not path:
        return obj
    head, _, rest = path.partition(".")
    if head == "*":
        return [lookup(x, rest) for x in obj] if isinstance(obj, list) else Missing
    if isinstance(obj, list):
        return lookup(obj[int(head)], rest) if head.isdigit() and int(head) < len(obj) else Missing
    if isinstance(obj, dict) and head in obj:
        return lookup(obj[head], rest)
    return Missing


def null_with_reason(*keys):
    """facts: each of keys (dotted, under one object) is null and its reason is recorded."""
    checks = {}
    for key in keys:
        parent, _, leaf = key.rpartition(".")
        checks[key] = None
        checks[(parent + "." if parent else "") + "unavailable." + leaf] = PRESENT
    return checks


class Row:
    """One line of the table: what the runtime probe of backend must report when its stub acts
    out behaviour. findings: ids that must be there (None: not checked; []: no finding at all);
    messages: id -> texts its message holds; hints: id -> text its hint holds (True: any hint);
    count: id -> how many times; facts: dotted path -> value or Expect; reason: text of the
    probe's reason; first_failure: (probe, finding) of the summary; seconds: a bound on wall time;
    duration: (low, high) bounds of the probe's duration_ms; runtime_layer: the layer's status."""

    def __init__(self, backend, behaviour, status, findings=None, messages=None, hints=None,
                 count=None, facts=None, reason=None, args=(), env=None, first_failure=None,
                 seconds=None, duration=None, runtime_layer=None):
        self.backend, self.behaviour, self.status = backend, behaviour, status
        self.findings, self.messages = findings, messages or {}
        self.hints, self.count, self.facts = hints or {}, count or {}, facts or {}
        self.reason, self.args, self.env = reason, args, env
        self.first_failure, self.seconds, self.duration = first_failure, seconds, duration
        self.runtime_layer = runtime_layer

    def __repr__(self):
        return "(%s, %s)" % (self.backend, self.behaviour)


HANG = ("--timeout", "2")
H200_BUSES = ["0000:18:00.0", "0000:2a:00.0"]

ROWS = [
    # ---- AMD / Hygon: runtime.hip against libhipstub ----
    Row("amd", "ok", "pass", facts={
        "runtime.version": "6.2.41133", "runtime.realpath": STUB_REALPATH,
        "runtime.matches_loader_pick": False, "device_count": 2,
        "devices.*.pci_address": ["0000:c1:00.0", "0000:d1:00.0"],
        "devices.*.name": ["Stub Instinct MI210 #0", "Stub Instinct MI210 #1"],
        "devices.*.arch": ["gfx90a:sramecc+:xnack-"] * 2,
        "devices.*.total_memory_bytes": [64 << 30] * 2, "devices.*.compute_units": [104] * 2,
        "devices.*.warp_size": [64] * 2, "devices.*.memory.total_bytes": [64 << 30] * 2,
        "devices.*.memory.free_bytes": [63 << 30] * 2, "devices.*.copy_verified": [True] * 2,
        "devices.*.kernel_verified": [True] * 2,
        "devices.*.kernel_result": [[0, 2, 4, 6, 8, 10, 12, 14]] * 2,
        "devices.0.timing.first_launch_ms": PRESENT, "devices.1.timing.first_launch_ms": PRESENT,
        "devices.0.timing.steady_launch_ms": PRESENT,
        "devices.1.timing.steady_launch_ms": PRESENT,
        "devices.0.timing.compile_ms": PRESENT,  # one compile per arch
        "devices.1.timing.compile_ms": ABSENT, "timing.load_init_ms": PRESENT}),
    Row("amd", "no-device", "fail", ["hip.no-device"],
        messages={"hip.no-device": ["hipErrorNoDevice", "driver.amd"]}),
    Row("amd", "error", "fail", ["hip.init-failed"],
        messages={"hip.init-failed": ["hipInit: hipErrorUnknown (999)", "2 devices"]}),
    Row("amd", "crash", "crash", reason="SIGSEGV"),
    Row("amd", "hang", "timeout", args=HANG, seconds=2 + MARGIN),
    Row("amd", "garbage", "fail", ["hip.invalid-answer"],
        messages={"hip.invalid-answer": [
            "version -42", "name not terminated", "arch name not terminated", "total memory",
            "warp_size -1", "compute_units 0", "PCI bus id malformed"]},
        facts=dict(null_with_reason(
            "devices.0.name", "devices.0.arch", "devices.0.total_memory_bytes",
            "devices.0.warp_size", "devices.0.compute_units", "devices.0.pci_address"),
            **{"runtime.version": None})),
    Row("amd", "permission", "fail", ["hip.no-device"],
        messages={"hip.no-device": ["hipErrorNoDevice"]}),
    Row("amd", "garbage-count", "fail", ["hip.invalid-answer"],
        messages={"hip.invalid-answer": ["device count -7"]}, facts={"device_count": None}),
    Row("amd", "insufficient-driver", "fail", ["hip.insufficient-driver"],
        messages={"hip.insufficient-driver": ["hipErrorInsufficientDriver"]}),
    Row("amd", "oom", "fail", ["hip.out-of-memory"],
        messages={"hip.out-of-memory": ["hipErrorOutOfMemory"]}),
    Row("amd", "no-binary", "fail", ["hip.no-binary-for-gpu"],
        messages={"hip.no-binary-for-gpu": ["hipErrorNoBinaryForGpu"]}),
    Row("amd", "launch-fail", "fail", ["hip.kernel-failed"],
        messages={"hip.kernel-failed": ["hipErrorLaunchFailure"]}),
    Row("amd", "compile-fail", "fail", ["hip.kernel-failed"], count={"hip.kernel-failed": 1},
        messages={"hip.kernel-failed": ["HIPRTC_ERROR_COMPILATION", "undeclared identifier"]}),
    Row("amd", "wrong-result", "fail", ["hip.wrong-result"],
        messages={"hip.wrong-result": ["0 3 6 9 12 15 18 21"]}),
    # ---- NVIDIA: runtime.cuda against libcudastub on the H200 fixture's driver view ----
    Row("nvidia", "ok", "pass", [], runtime_layer="pass", facts={
        "driver_api.cuda_version": "12.4", "driver_api.cuda_version_raw": 12040,
        "driver_api.library_driver_version": "550.127.05",
        "driver_api.realpath": in_libdir("libcuda.so.550.127.05"),
        "driver_api.nvrtc.version": "12.4", "driver_library.found_via": "ld_library_path",
        "device_count": 2, "driver_agrees": True, "devices.*.pci_address": H200_BUSES,
        "devices.*.name": ["NVIDIA H200 (stub #0)", "NVIDIA H200 (stub #1)"],
        "devices.*.arch": ["sm_90"] * 2, "devices.*.cc_major": [9] * 2,
        "devices.*.sm_count": [132] * 2, "devices.*.total_memory_bytes": [141 << 30] * 2,
        "devices.*.memory.free_bytes": [(141 << 30) - (512 << 20)] * 2,
        "devices.*.copy_verified": [True] * 2, "devices.*.kernel_verified": [True] * 2,
        "devices.*.kernel_result": [[2.0 * k for k in range(8)]] * 2}),
    Row("nvidia", "no-device", "fail", ["cuda.no-device"],
        messages={"cuda.no-device": ["CUDA_ERROR_NO_DEVICE (100)", "driver.nvidia sees 2 GPU(s)"]}),
    Row("nvidia", "error", "fail", ["cuda.init-failed"],
        messages={"cuda.init-failed": ["CUDA_ERROR_OPERATING_SYSTEM (304)"]}),
    Row("nvidia", "crash", "crash", reason="SIGSEGV", facts={
        "driver_library.realpath": in_libdir("libcuda.so.550.127.05"), "toolkits": IS_LIST}),
    Row("nvidia", "hang", "timeout", args=HANG, seconds=60, duration=(1500, 30000),
        facts={"toolkits": IS_LIST}),
    Row("nvidia", "garbage", "fail", ["cuda.invalid-answer", "cuda.wrong-result"],
        messages={"cuda.invalid-answer": [
            "driver version -7", "name not terminated", "cc_major 99", "PCI bus id malformed",
            "cuMemGetInfo free/total impossible"]},
        facts={"devices.0.name": None, "devices.0.copy_verified": False}),
    Row("nvidia", "permission", "fail", ["cuda.init-failed"],
        messages={"cuda.init-failed": ["CUDA_ERROR_UNKNOWN (999)"]}),
    Row("nvidia", "insufficient-driver", "fail", ["cuda.insufficient-driver"],
        messages={"cuda.insufficient-driver": [
            "CUDA_ERROR_INSUFFICIENT_DRIVER (35)", "the driver supports CUDA 11.4",
            "kernel module 550.127.05"]},
        first_failure=("runtime.cuda", "cuda.insufficient-driver")),
    Row("nvidia", "driver-mismatch", "fail", ["cuda.insufficient-driver"],
        messages={"cuda.insufficient-driver": ["CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)"]}),
    Row("nvidia", "stub-library", "fail", ["cuda.init-failed"],
        messages={"cuda.init-failed": ["CUDA_ERROR_STUB_LIBRARY"]},
        hints={"cuda.init-failed": "stubs"}),
    Row("nvidia", "in-use", "warn", ["cuda.memory-in-use"],
        messages={"cuda.memory-in-use": ["of 144384 MiB"]}),
    # ---- Ascend: runtime.acl against libaclstub on the 910B fixture's driver view ----
    Row("ascend", "ok", "pass", [], facts={
        "acl.path": contains("libascendcl.so"), "acl.interface_version": "1.0.0",
        "acl.cann_version": "8.0.RC3", "device_count": 2, "devices.*.index": [0, 1],
        "devices.*.soc_name": ["Ascend910B2"] * 2,
        "devices.*.memory.total_bytes": [64 << 30] * 2,
        "devices.*.memory.free_bytes": [(64 << 30) - (256 << 20)] * 2,
        "devices.*.copy_verified": [True] * 2}),
    Row("ascend", "no-device", "fail", ["acl.no-device"],
        messages={"acl.no-device": [
            "ACL_ERROR_RT_NO_DEVICE (207004)", "No NPU device found",
            "driver.ascend sees 2 NPU(s) (Ascend 910B at 0000:81:00.0"]}),
    Row("ascend", "error", "fail", ["acl.init-failed"],
        messages={"acl.init-failed": ["ACL_ERROR_RT_DRV_INTERNAL_ERROR (507899)"]}),
    Row("ascend", "crash", "crash", reason="SIGSEGV", facts={"toolkits": IS_LIST}),
    Row("ascend", "hang", "timeout", args=HANG, seconds=60, duration=(1500, 30000)),
    Row("ascend", "garbage", "fail", ["acl.invalid-answer", "acl.copy-failed"],
        messages={"acl.invalid-answer": [
            "aclrtGetVersion gave -3.0.0", "SoC name not terminated or not printable",
            "aclrtGetMemInfo"], "acl.copy-failed": ["came back different"]},
        facts={"devices.0.soc_name": None, "devices.0.copy_verified": False}),
    Row("ascend", "permission", "fail", ["acl.device-setup-failed"],
        messages={"acl.device-setup-failed": ["ACL_ERROR_RT_DEV_SETUP_ERROR (507033)",
                                              "open device 0 failed"]}),
    Row("ascend", "setup-fail", "fail", ["acl.device-setup-failed"],
        messages={"acl.device-setup-failed": [
            "device 0: aclrtSetDevice: ACL_ERROR_RT_DEV_SETUP_ERROR (507033)",
            "drvDeviceOpen failed"]}),
    Row("ascend", "in-use", "warn", ["acl.memory-in-use"],
        messages={"acl.memory-in-use": ["61440 of 65536 MiB HBM in use"]}),
]

SHARED = ("ok", "no-device", "error", "crash", "hang", "garbage", "permission")
FAILURES = ("fail", "error", "timeout", "crash")

_runs = {}


def run_row(row):
    """The run of row (made once per test process)."""
    key = (row.backend, row.behaviour, row.args, tuple(sorted((row.env or {}).items())))
    if key not in _runs:
        _runs[key] = BACKENDS[row.backend].run(row.behaviour, *row.args,
                                                              env=row.env)
    return _runs[key]


class Table(unittest.TestCase):
    def test_every_backend_has_the_shared_behaviours(self):
        for name in BACKENDS:
            have = {r.behaviour for r in ROWS if r.backend == name}
            self.assertEqual(sorted(set(SHARED) - have), [], name)

    def test_every_stub_behaviour_has_a_row(self):
        # the behaviours a stub knows are the rows it has: a new one comes with its row
        for b in BACKENDS.values():
            with open(os.path.join(sclib.SOURCE_DIR, "tests", "stubs", b.stub + ".c")) as f:
                text = f.read()
            known = re.search(r"modes\[\] = \{(.*?)NULL\}", text, re.S).group(1)
            modes = set(re.findall(r'"([a-z-]+)"', known))
            self.assertEqual(modes, {r.behaviour for r in ROWS if r.backend == b.name}, b.name)

    def test_rows(self):
        for row in ROWS:
            with self.subTest(row=row):
                why = BACKENDS[row.backend].usable()
                if why:
                    self.skipTest(why)
                self.check(row, run_row(row))

    def check(self, row, r):
        backend = BACKENDS[row.backend]
        self.assertIsNotNone(r.snapshot, r.stderr)
        sclib.validate_snapshot(self, r.snapshot)
        p = r.probe(backend.probe)
        self.assertEqual(p["status"], row.status, p)
        if row.status in FAILURES:
            self.assertEqual(r.rc, 1)
        self.check_findings(row, r, p)
        if row.reason:
            self.assertIn(row.reason, p["reason"])
        self.check_facts(row, p["facts"], backend)
        if row.first_failure:
            ff = r.snapshot["summary"]["first_failure"]
            self.assertEqual((ff["probe"], ff["finding"]), row.first_failure)
        if row.seconds:
            self.assertLess(r.seconds, row.seconds)
        if row.duration:
            self.assertTrue(row.duration[0] <= p["duration_ms"] < row.duration[1], p)
        if row.runtime_layer:
            self.assertEqual(r.layer("runtime")["status"], row.runtime_layer)
        if backend.name == "nvidia":  # the namespace's driver view is a healthy node
            self.assertEqual(r.probe("driver.nvidia")["status"], "pass")

    def check_findings(self, row, r, p):
        ids = [f["id"] for f in p["findings"]]
        if row.findings == []:
            self.assertEqual(p["findings"], [])
        for fid in row.findings or ():
            self.assertIn(fid, ids)
            f = r.finding(fid)
            # a failing row's findings are errors with a remedy, a warning row's warnings
            self.assertEqual(f["severity"], {"fail": "error", "warn": "warn"}[row.status], fid)
            self.assertTrue(f["hint"], fid)
        for fid, texts in row.messages.items():
            for text in texts:
                self.assertIn(text, r.finding(fid)["message"])
        for fid, text in row.hints.items():
            self.assertIn(text, r.finding(fid)["hint"])
        for fid, n in row.count.items():
            self.assertEqual(ids.count(fid), n)

    def check_facts(self, row, facts, backend):
        for path, want in row.facts.items():
            got = lookup(facts, path)
            if isinstance(want, Expect):
                self.assertTrue(want.test(got, backend), "%s: %r is not %r" % (path, got, want))
            else:
                self.assertEqual(got, want, path)


def fact_keys():
    """The SC_FACT_* names of include/sc_facts.h and their values."""
    with open(os.path.join(sclib.SOURCE_DIR, "include", "sc_facts.h")) as f:
        return dict(re.findall(r'#define (SC_FACT_\w+) "([^"]+)"', f.read()))


def descriptor_lists(field):
    """{runtime probe: the strings of LIST field} of each backend in src/backends/backends.c."""
    with open(os.path.join(sclib.SOURCE_DIR, "src", "backends", "backends.c")) as f:
        text = f.read()
    out = {}
    for body in re.findall(r"static const sc_backend_desc \w+ = \{(.*?)\n\};", text, re.S):
        probe = re.search(r'\.runtime_probe = "([^"]+)"', body).group(1)
        out[probe] = re.findall(r'"([^"]+)"', re.search(r"\.%s = LIST\((.*?)\)," % field, body,
                                                          re.S).group(1))
    return out


# Where each key read across probes is read: (probe, dotted path of SC_FACT_ names), and which run
# shows the writer's facts ("fixture:NAME" offline, else a backend's ok row).
FACT_READS = [
    ("driver.amd", "SC_FACT_DEVICES.*.SC_FACT_PCI_ADDRESS", "fixture:mi250x-8gcd"),
    ("driver.amd", "SC_FACT_DEVICES.*.SC_FACT_GFX_TARGET", "fixture:mi250x-8gcd"),
    ("driver.amd", "SC_FACT_DEVICES.*.SC_FACT_GPU_ID", "fixture:mi250x-8gcd"),
    ("runtime.hip", "SC_FACT_DEVICES.*.SC_FACT_ARCH", "amd"),
    ("runtime.hip", "runtime.SC_FACT_REALPATH", "amd"),  # torch's checks, libraries.hip
    ("runtime.hip", "runtime.SC_FACT_VERSION", "amd"),
    ("runtime.cuda", "driver_api.SC_FACT_REALPATH", "nvidia"),
    ("driver.nvidia", "SC_FACT_DEVICES.*.SC_FACT_PCI_ADDRESS", "nvidia"),
    ("driver.nvidia", "SC_FACT_DEVICES.*.SC_FACT_MODEL", "nvidia"),
    ("driver.nvidia", "SC_FACT_DRIVER_VERSION", "nvidia"),
    ("driver.ascend", "SC_FACT_DEVICES.*.SC_FACT_PCI_ADDRESS", "ascend"),
    ("driver.ascend", "SC_FACT_DEVICES.*.SC_FACT_MODEL", "ascend"),
]
# The runtime library objects a backend's descriptor names (runtime_library_facts): the first is
# the library the probe loaded, with a real path in its ok run.
LOADED_LIBRARY = {"runtime.hip": "amd", "runtime.cuda": "nvidia", "runtime.acl": "ascend"}


class FactKeys(unittest.TestCase):
    """A key one probe reads in another's facts is a contract: renaming it on one side fails here."""

    def test_every_key_is_read_somewhere_listed(self):
        used = {n for _, path, _ in FACT_READS for n in path.split(".")}
        self.assertEqual(sorted(set(fact_keys()) - used), [])

    def test_keys_are_where_readers_look(self):
        keys = fact_keys()
        for probe, path, source in FACT_READS:
            with self.subTest(probe=probe, path=path):
                r = self.source_run(source)
                real = ".".join(keys.get(part, part) for part in path.split("."))
                got = lookup(r.probe(probe)["facts"], real)
                self.assertIsNot(got, Missing, real)
                if isinstance(got, list):
                    self.assertTrue(got and all(v is not Missing and v is not None for v in got),
                                    "%s: %r" % (real, got))

    def test_runtime_library_objects(self):
        keys = fact_keys()
        for probe, objects in descriptor_lists("runtime_library_facts").items():
            with self.subTest(probe=probe):
                facts = self.source_run(LOADED_LIBRARY[probe]).probe(probe)["facts"]
                for key in objects:
                    self.assertIn(key, facts)  # each is there, null with a reason at worst
                self.assertTrue(facts[objects[0]][keys["SC_FACT_REALPATH"]], facts[objects[0]])

    def source_run(self, source):
        if source.startswith("fixture:"):
            name = source.split(":", 1)[1]
            if name not in _runs:
                _runs[name] = sclib.run(["--sysroot", sclib.fixture(name)],
                                        env={"ROCM_PATH": None, "LD_LIBRARY_PATH": None})
            return _runs[name]
        why = BACKENDS[source].usable()
        if why:
            self.skipTest(why)
        return run_row(next(r for r in ROWS if r.backend == source and r.behaviour == "ok"))


if __name__ == "__main__":
    sclib.main()
