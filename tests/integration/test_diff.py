"""`stackcheck diff` through the real binary: two runs of the staged torch smoke test where one
module's weights were perturbed (the diff names that module first), the tolerance options, snapshots
of the fixture roots of the driver and runtime layers (devices, kernel, driver module, installs),
an NVIDIA node against a DCU node as one platforms table, bad input: truncated, not JSON, huge, another schema version, wrong types, missing files; the output
of fixed snapshot pairs against what the pairwise comparison wrote (tests/fixtures/diff-golden:
same lines in the same order); and pathological sizes (findings, probes, stages, modules, lists and
keys by the ten thousand) under a time bound."""
import collections
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pathological  # noqa: E402
import sclib  # noqa: E402

DEBIAN_PYTHON = "/usr/bin/python3"
EXAMPLE = os.path.join(sclib.SOURCE_DIR, "examples", "smoke_torch.py")


def has_torch():
    return subprocess.run([DEBIAN_PYTHON, "-c", "import torch"], capture_output=True).returncode == 0


def diff(*args):
    return sclib.run(["diff"] + list(args), json_file=False)


class DiffBase(sclib.TempDirCase):

    @classmethod
    def save(cls, name, snapshot):
        path = os.path.join(cls.tmp, name)
        with open(path, "w") as f:
            json.dump(snapshot, f)
        return path

    @classmethod
    def write(cls, name, text):
        path = os.path.join(cls.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path


@unittest.skipUnless(has_torch(), "Debian's python3-torch is not installed")
class DiffNumerics(DiffBase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        args = ["--keep-going", "--python", DEBIAN_PYTHON, "--app-script", EXAMPLE]
        cls.a = cls.save("a.json", sclib.run(args).snapshot)
        cls.b = cls.save("b.json", sclib.run(args, env={"SMOKE_PERTURB": "blocks.1.1"}).snapshot)

    def test_same_snapshot_has_no_change(self):
        run = diff(self.a, self.a)
        self.assertEqual(run.rc, 0, run.stdout + run.stderr)
        self.assertIn("no change that matters", run.stdout)
        self.assertIn("all 13 modules agree", run.stdout)

    def test_perturbed_module_is_named_first(self):
        run = diff(self.a, self.b)
        self.assertEqual(run.rc, 1, run.stderr)
        self.assertIn("first module whose statistics differ: 'blocks.1.1' (Linear)", run.stdout)

    def test_json_output(self):
        run = diff(self.a, self.b, "--json", "-")
        self.assertEqual(run.rc, 1, run.stderr)
        result = json.loads(run.stdout)
        self.assertEqual(result["schema"], "stackcheck/diff/v1")
        self.assertTrue(result["differs"])
        first = result["numerics"][0]["first_divergent"]
        self.assertEqual(first["module"], "blocks.1.1")
        self.assertEqual(result["numerics"][0]["probe"], "app.script")
        self.assertIn("first module whose statistics differ", run.stderr)  # text went to stderr
        stages = [t["what"] for t in result["timings"] if t["probe"] == "app.script"]
        self.assertIn("stage load weights", stages)

    def test_wide_tolerance_hides_the_perturbation(self):
        run = diff(self.a, self.b, "--rtol", "1e9", "--json", os.path.join(self.tmp, "d.json"))
        self.assertEqual(run.rc, 0, run.stdout)
        with open(os.path.join(self.tmp, "d.json")) as f:
            self.assertIsNone(json.load(f)["numerics"][0]["first_divergent"])


class DiffFixtures(DiffBase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.snaps = {}
        for name in ("mi250x-8gcd", "hygon-dcu", "plain-server"):
            if os.path.isdir(sclib.fixture(name)):
                run = sclib.run(["--sysroot", sclib.fixture(name)])
                cls.snaps[name] = cls.save(name + ".json", run.snapshot)

    def need(self, *names):
        for name in names:
            if name not in self.snaps:
                self.skipTest("fixture %s is missing" % name)

    def test_two_nodes(self):
        self.need("mi250x-8gcd", "hygon-dcu")
        run = diff(self.snaps["mi250x-8gcd"], self.snaps["hygon-dcu"], "--json", "-")
        self.assertEqual(run.rc, 1, run.stderr)
        result = json.loads(run.stdout)
        changes = {c["what"]: c for c in result["changes"]}
        self.assertEqual(changes["host kernel"]["area"], "host")
        self.assertEqual(changes["driver.amd module.name"]["a"], "amdgpu")
        self.assertEqual(changes["driver.amd module.name"]["b"], "hydcu")
        self.assertEqual(changes["driver.amd devices count"]["a"], 8)
        gfx = [c["b"]["gfx_target"] for c in result["changes"]
               if c["area"] == "devices" and isinstance(c["b"], dict)]
        self.assertIn("gfx928", gfx)
        installs = [c["what"] for c in result["changes"] if c["area"] == "installs"]
        self.assertTrue(any("/opt/dtk-25.04" in w for w in installs), installs)
        added = [f["id"] for f in result["findings"]["added"]]
        self.assertIn("hip.multiple-installs", added)

    def test_findings_resolved(self):
        self.need("plain-server", "mi250x-8gcd")
        run = diff(self.snaps["plain-server"], self.snaps["mi250x-8gcd"], "--json", "-")
        self.assertEqual(run.rc, 1)
        resolved = [f["id"] for f in json.loads(run.stdout)["findings"]["resolved"]]
        self.assertIn("driver.no-accelerator", resolved)
        self.assertIn("- driver.no-accelerator", run.stderr)

    def test_same_node_twice(self):
        self.need("hygon-dcu")
        again = self.save("again.json", sclib.run(["--sysroot", sclib.fixture("hygon-dcu")]).snapshot)
        run = diff(self.snaps["hygon-dcu"], again)
        self.assertEqual(run.rc, 0, run.stdout)


class DiffPlatforms(DiffBase):
    """An NVIDIA node against a DCU node (snapshots of the fixture roots by this binary): one
    table that sets devices, driver, firmware and runtime stack side by side, instead of two
    unrelated lists of per-probe changes; a DCU node against an AMD one keeps the list."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.snaps = {name: cls.save(name + ".json",
                                    sclib.run(["--sysroot", sclib.fixture(name)]).snapshot)
                     for name in ("nvidia-h200", "hygon-dcu", "mi250x-8gcd")}

    def rows(self, result):
        return {r["role"]: (r["a"], r["b"]) for r in result["platforms"]["rows"]}

    def test_nvidia_against_dcu(self):
        run = diff(self.snaps["nvidia-h200"], self.snaps["hygon-dcu"], "--json", "-")
        self.assertEqual(run.rc, 1, run.stderr)
        result = json.loads(run.stdout)
        p = result["platforms"]
        self.assertTrue(p["differ"])
        self.assertEqual([b["name"] for b in p["a"]["backends"]], ["nvidia"])
        self.assertEqual([b["name"] for b in p["b"]["backends"]], ["amd"])
        rows = self.rows(result)
        self.assertEqual(rows["devices"], ("2 x NVIDIA H200", "4 x K100_AI (gfx928, 64 GiB)"))
        self.assertEqual(rows["driver"], ("nvidia 550.127.05", "hydcu 6.3.8-V1.13.3"))
        self.assertEqual(rows["firmware"], ("vbios 96.00.99.00.01", "fw 1016"))
        self.assertEqual(rows["toolkit"][0], "CUDA toolkit 12.4.1 (/usr/local/cuda-12.4)")
        self.assertIn("dtk 25.04.2 (/opt/dtk-25.04.2)", rows["toolkit"][1])
        self.assertEqual(rows["runtime"],
                         ("CUDA (/usr/lib/x86_64-linux-gnu/libcuda.so.550.127.05)", None))
        self.assertEqual(p["b"]["devices"], [{"backend": "amd", "count": 4, "name": "K100_AI",
                                              "arch": "gfx928", "memory_bytes": 64 << 30}])
        # the text: one row a role, both sides on it
        text = run.stderr
        self.assertRegex(text, r"\n  devices +2 x NVIDIA H200 +4 x K100_AI \(gfx928, 64 GiB\)\n")
        self.assertRegex(text, r"\n  driver +nvidia 550\.127\.05 +hydcu 6\.3\.8-V1\.13\.3\n")
        self.assertRegex(text, r"\n  runtime +CUDA \(/usr/lib/x86_64-linux-gnu/libcuda\.so\."
                               r"550\.127\.05\)\n +\(none\)\n")
        # the two unrelated per-probe lists are folded into one line; the JSON keeps them
        self.assertNotIn("driver.nvidia device 0000:18:00.0", text)
        self.assertNotIn("driver.amd devices count", text)
        self.assertRegex(text, r"\(\d+ more changes of driver\.amd, .*: the platforms table sums")
        whats = [c["what"] for c in result["changes"]]
        self.assertIn("driver.nvidia device 0000:18:00.0", whats)
        self.assertIn("driver.amd devices count", whats)
        self.assertIn("host kernel", text)  # what the table does not cover is still listed

    def test_same_backend_keeps_the_list(self):
        run = diff(self.snaps["mi250x-8gcd"], self.snaps["hygon-dcu"], "--json", "-")
        result = json.loads(run.stdout)
        self.assertFalse(result["platforms"]["differ"])
        self.assertEqual(result["platforms"]["summarised"], [])
        self.assertEqual(self.rows(result)["devices"],
                         ("8 x aldebaran (gfx90a, 64 GiB)", "4 x K100_AI (gfx928, 64 GiB)"))
        self.assertNotIn("Platforms:", run.stderr)
        self.assertIn("[devices] driver.amd devices count: 8 -> 4", run.stderr)

    def test_snapshots_of_0_1_read(self):
        # the committed snapshots of 0.1.0 set side by side as the fresh ones do
        run = diff(os.path.join(GOLDEN, "fx-nvidia-h200.json"),
                   os.path.join(GOLDEN, "fx-hygon-dcu.json"), "--json", "-")
        fresh = diff(self.snaps["nvidia-h200"], self.snaps["hygon-dcu"], "--json", "-")
        self.assertEqual(self.rows(json.loads(run.stdout)), self.rows(json.loads(fresh.stdout)))


class DiffBadInput(DiffBase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.good = cls.save("good.json", {"schema": "stackcheck/snapshot/v1", "layers": [],
                                          "host": {"kernel": "6.1"}, "created": "t"})

    def bad(self, path, *expected):
        for args in ((path, self.good), (self.good, path)):
            run = diff(*args)
            self.assertEqual(run.rc, 2, run.stdout + run.stderr)
            for text in expected:
                self.assertIn(text, run.stderr)
            self.assertNotIn("Sanitizer", run.stderr)
            self.assertNotIn("runtime error", run.stderr)

    def test_truncated(self):
        with open(self.good) as f:
            text = f.read()
        self.bad(self.write("trunc.json", text[: len(text) // 2]), "not valid JSON")

    def test_not_json(self):
        self.bad(self.write("text.json", "hello, world\n"), "not valid JSON")
        self.bad(self.write("empty.json", ""), "not valid JSON")
        self.bad(self.write("array.json", "[1, 2]"), "not a stackcheck snapshot")

    def test_huge(self):
        path = os.path.join(self.tmp, "huge.json")
        with open(path, "wb") as f:
            f.truncate(65 << 20)
        self.bad(path, "larger than")

    def test_other_schema_version(self):
        path = self.save("v2.json", {"schema": "stackcheck/snapshot/v2", "layers": []})
        self.bad(path, "stackcheck/snapshot/v2", "stackcheck/snapshot/v1")

    def test_missing_file_and_usage(self):
        self.bad(os.path.join(self.tmp, "absent.json"), "cannot open")
        run = diff(self.good)
        self.assertEqual(run.rc, 2)
        run = diff(self.good, self.good, "--rtol", "abc")
        self.assertEqual(run.rc, 2)
        self.assertIn("--rtol", run.stderr)

    def test_wrong_types_anywhere(self):
        docs = [
            {"schema": "stackcheck/snapshot/v1", "layers": [1, "x", None, {"probes": 5}],
             "host": [], "summary": 3, "created": 7},
            {"schema": "stackcheck/snapshot/v1", "host": {"kernel": {"x": 1}, "os": 5},
             "layers": [{"probes": [{"id": "driver.amd", "status": 1, "facts": [],
                                     "findings": {"id": "x"}, "duration_ms": "slow"},
                                    {"id": "app.script", "facts": {
                                        "numerics": {"modules": [1, {"module": 2},
                                                                 {"module": "m", "mean": "x"}],
                                                     "input": "x"},
                                        "stages": [{"name": 5}], "timing": {"a_ms": []}},
                                     "findings": [None, {"id": 5}]}]}]},
        ]
        paths = [self.save("w%d.json" % i, d) for i, d in enumerate(docs)]
        for a in paths + [self.good]:
            for b in paths + [self.good]:
                run = diff(a, b, "--json", os.path.join(self.tmp, "out.json"))
                self.assertIn(run.rc, (0, 1), run.stderr)
                self.assertNotIn("Sanitizer", run.stderr)
                if a == b:
                    self.assertEqual(run.rc, 0, run.stdout)


GOLDEN = os.path.join(sclib.FIXTURES, "diff-golden")
GOLDEN_EXPECTED = os.path.join(GOLDEN, "expected.json")


def golden_pairs():
    """The snapshot pairs whose output is pinned: the fixture roots' snapshots in a ring, each
    with its neighbours both ways; the unit tests' hand-made pairs both ways; the numerics watches
    among themselves; documents of the wrong types among themselves; and repeated keys everywhere
    (the first match wins, as the scans found it)."""
    names = sorted(n for n in os.listdir(GOLDEN) if n.endswith(".json") and n != "expected.json")
    group = {}
    for n in names:
        group.setdefault(n.rsplit("-", 1)[0] if not n.startswith("fx-") else "fx", []).append(n)
    ring = group.pop("fx")
    pairs = [(ring[0], ring[0], ())]
    for i, a in enumerate(ring):
        b = ring[(i + 1) % len(ring)]
        pairs += [(a, b, ()), (b, a, ())]
    for members in group.values():
        pairs += [(a, b, ()) for a in members for b in members]
    pairs.append(("unit-numerics-a.json", "unit-numerics-b.json", ("--rtol", "0.1")))
    pairs.append(("dup-a.json", "fx-mi250x-8gcd.json", ()))
    return pairs


def golden_key(a, b, args):
    return " ".join((a, b) + tuple(args))


def golden_run(a, b, args):
    """The exit status, the text (standard error with --json -) and the JSON of one comparison,
    less its "platforms" section (added after 0.1; DiffPlatforms pins it)."""
    proc = subprocess.run([os.path.abspath(sclib.STACKCHECK), "diff", a, b, "--json", "-"] +
                          list(args), capture_output=True, text=True, cwd=GOLDEN, timeout=60)
    result = json.loads(proc.stdout)
    result.pop("platforms")
    return {"rc": proc.returncode, "text": proc.stderr, "json": result}


class DiffGolden(unittest.TestCase):
    """The output of fixed pairs, line for line, as the pairwise comparison of 0.1 wrote it (run
    with SC_DIFF_GOLDEN=write to record it again after a deliberate change of the output). The
    JSON's "platforms" section, added after 0.1, is left out here (DiffPlatforms and
    unit.test_diff_platforms pin it). Deliberate changes: the fx-* pairs of two different
    backends (or a backend against none) print the platforms table, and the per-probe changes of
    a backend only one side runs on are folded into one line under it (their JSON is unchanged);
    in the dup-* pairs, whose snapshots repeat probe ids and keys (stackcheck
    never writes such), only the first with its id or key is compared; the pairwise code compared
    every repetition again, which found changes between a snapshot and itself and, repeated
    thousands of times, took minutes."""

    def test_output_is_unchanged(self):
        if os.environ.get("SC_DIFF_GOLDEN") == "write":
            got = {golden_key(*p): golden_run(*p) for p in golden_pairs()}
            with open(GOLDEN_EXPECTED, "w") as f:
                f.write("{\n" + ",\n".join("%s: %s" % (json.dumps(k), json.dumps(got[k]))
                                            for k in sorted(got)) + "\n}\n")
        with open(GOLDEN_EXPECTED) as f:
            expected = json.load(f)
        pairs = golden_pairs()
        self.assertEqual(sorted(expected), sorted(golden_key(*p) for p in pairs))
        for p in pairs:
            with self.subTest(pair=golden_key(*p)):
                got, want = golden_run(*p), expected[golden_key(*p)]
                self.assertEqual(got["rc"], want["rc"])
                self.assertEqual(got["text"].splitlines(), want["text"].splitlines())
                self.assertEqual(got["json"], want["json"])


class DiffLongNames(DiffBase):
    """Names longer than the width a change line gives them are cut on a character boundary:
    no replacement character in the text or the JSON."""

    def test_cut_inside_a_multibyte_name(self):
        run = sclib.run(["--sysroot", sclib.fixture("plain-server")])
        a = run.snapshot
        long_id = "driver.x" + "\u4e2d" * 120  # 3 bytes a character: a cut at 100 bytes is inside one
        a["layers"][0]["probes"].append({"id": long_id, "backend": "none", "status": "pass",
                                         "reason": None, "duration_ms": 1, "applicable": True,
                                         "facts": {}, "findings": []})
        b = json.loads(json.dumps(a))
        b["layers"][0]["probes"][-1]["status"] = "fail"
        out = diff(self.save("long-a.json", a), self.save("long-b.json", b), "--json", "-")
        self.assertNotIn("\ufffd", out.stdout + out.stderr)
        self.assertIn("x" + "\u4e2d" * 30 + " status", out.stdout + out.stderr)


class DiffPathological(DiffBase):
    """Sizes that made the pairwise comparison quadratic (20,000 findings a side took 17 s, 20,000
    probes 108 s) finish in seconds, with every change still found."""

    def check(self, shape, size, rc=1):
        d = os.path.join(self.tmp, shape)
        a, b = pathological.write_diff_pair(d, size, shape)
        run = diff(a, b, "--json", os.path.join(d, "out.json"))
        self.assertEqual(run.rc, rc, run.stderr)
        self.assertLess(run.seconds, 5 if not sclib.SANITIZED else 30)
        with open(os.path.join(d, "out.json")) as f:
            return json.load(f)

    def areas(self, result):
        return collections.Counter(c["area"] for c in result["changes"])

    def test_findings(self):
        result = self.check("findings", 20000)
        self.assertEqual(len(result["findings"]["added"]), 10000)
        self.assertEqual(len(result["findings"]["resolved"]), 10000)

    def test_probes(self):
        result = self.check("probes", 20000)
        self.assertEqual(len(result["findings"]["added"]), 10000)
        self.assertEqual(self.areas(result)["status"], 20000)
        self.assertEqual(len(result["timings"]), 10000)

    def test_stages(self):
        result = self.check("stages", 20000, rc=0)
        self.assertEqual(len([t for t in result["timings"] if t["what"].startswith("stage ")]),
                         10000)

    def test_lists(self):
        # devices and libraries: the first 4096 items of a list are compared (LIST_MAX)
        areas = self.areas(self.check("lists", 20000))
        self.assertEqual((areas["libraries"], areas["installs"], areas["devices"]),
                         (4096, 20000, 8192))

    def test_keys(self):
        result = self.check("keys", 20000)
        self.assertEqual(self.areas(result)["app"], 20000)
        self.assertEqual(len(result["timings"]), 10000 + 1)

    def test_repeated_probe_id(self):
        # a probe id repeated 20,000 times against one with 20,000 keys: compared once, not once
        # per repetition (which took minutes); a snapshot against itself has no change
        result = self.check("repeats", 20000)
        self.assertEqual(self.areas(result), {"app": 20000})
        self.assertEqual(len(result["timings"]), 2)
        a = os.path.join(self.tmp, "repeats", "a.json")
        run = diff(a, a)
        self.assertEqual(run.rc, 0, run.stdout)
        self.assertLess(run.seconds, 5 if not sclib.SANITIZED else 30)

    def test_platforms(self):
        # devices completed by PCI address from the other list, roles deduplicated, libraries in
        # lists of lists: each role keeps 64 entries and counts the rest
        result = self.check("platforms", 10000)
        p = result["platforms"]
        self.assertTrue(p["differ"])
        self.assertEqual((len(p["a"]["devices"]), p["a"]["devices_more"]), (64, 4096 - 64))
        self.assertEqual(len(p["b"]["toolkit"]), 64)
        self.assertEqual(len(p["b"]["collective"]), 64)
        rows = {r["role"]: r for r in p["rows"]}
        self.assertEqual(rows["devices"]["a"],
                         "1 x gpu0 (sm_0, 0.0 GiB), 1 x gpu1 (sm_1, 0.0 GiB), "
                         "1 x gpu2 (sm_2, 0.0 GiB) +4093 more")
        self.assertEqual(rows["collective"]["b"][:40], "librccl.so.5000 (/opt/r5000), librccl.so")

    def test_modules_in_another_order(self):
        result = self.check("modules", 16384, rc=0)
        self.assertEqual(result["numerics"][0]["compared"], 16384)

if __name__ == "__main__":
    sclib.main()
