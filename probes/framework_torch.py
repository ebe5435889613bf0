# framework.torch, the part that runs inside the user's interpreter: import torch (timed), describe the
# build and the devices it sees, run the seed's device round trip, list the native runtime libraries the
# import mapped, then import the user's modules. Writes one JSON document to $STACKCHECK_RESULT.
# Runs on Python 3.6+ with any torch; every step is guarded so a partial answer still gets written.
import json
import os
import sys
import time

# torch's own native libraries; each backend's stack (libamdhip64, libcudart, libascendcl...) comes
# from the backend table through the config's "libraries", and its build fields ("hip", "cuda")
# through "builds". The defaults serve a config without them.
TORCH_LIBS = ("libtorch_hip", "libtorch_cuda", "libc10_hip", "libc10_cuda", "libtorch_cpu")
DEFAULT_LIBS = ("libamdhip64", "libgalaxyhip", "libhsa-runtime64", "libcudart", "libcuda.so",
                "libascendcl", "libtorch_npu", "libnccl", "librccl", "libMIOpen", "libcudnn")
DEFAULT_BUILDS = ("hip", "cuda")


def mapped_files():
    """Shared objects mapped into this process, in first-mapped order."""
    seen = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                path = parts[5].strip() if len(parts) == 6 else ""
                if path.startswith("/") and ".so" in os.path.basename(path) and path not in seen:
                    seen.append(path)
    except OSError:
        pass
    return seen


def describe(paths):
    return [{"name": os.path.basename(p), "path": p, "realpath": os.path.realpath(p)} for p in paths]


def error_of(exc):
    return {"type": type(exc).__name__, "message": str(exc)[:4000],
            "name": getattr(exc, "name", None), "path": getattr(exc, "path", None)}


def safe(fn, default=None):
    try:
        return fn()
    except Exception:
        return default


def device_arch(torch, i, hip):
    props = torch.cuda.get_device_properties(i)
    arch = getattr(props, "gcnArchName", None)
    if arch and hip:
        return props, arch
    return props, "sm_%d%d" % (props.major, props.minor)


def devices(torch, hip):
    out = []
    for i in range(torch.cuda.device_count()):
        props, arch = device_arch(torch, i, hip)
        out.append({"index": i, "name": props.name, "arch": arch,
                    "total_memory": int(props.total_memory)})
    return out


def round_trip(torch, dev):
    result = {"device": dev}
    try:
        x = torch.arange(8, device=dev, dtype=torch.float32)
        values = (x * 2).cpu().tolist()
        result["values"] = values
        result["ok"] = values == [float(2 * i) for i in range(8)]
    except Exception as exc:
        result["ok"] = False
        result["error"] = error_of(exc)
    return result


def accelerator_facts(torch, facts):
    hip = facts.get("hip")
    facts["is_available"] = safe(torch.cuda.is_available, False)
    facts["device_count"] = safe(torch.cuda.device_count, 0) if facts["is_available"] else 0
    facts["arch_list"] = safe(torch.cuda.get_arch_list, [])
    dnn = safe(torch.backends.cudnn.version)
    facts["miopen" if hip else "cudnn"] = dnn
    if facts["device_count"]:
        facts["devices"] = safe(lambda: devices(torch, hip), [])
        return "cuda"
    npu = getattr(torch, "npu", None)
    if npu is not None and safe(npu.is_available, False):
        facts["npu_device_count"] = safe(npu.device_count, 0)
        return "npu"
    return None


def import_plugins(facts):
    """Accelerator plug-ins that register a device with torch only once imported (torch.npu)."""
    import importlib.util
    plugins = {}
    for name in ("torch_npu",):
        if safe(lambda: importlib.util.find_spec(name)) is None:
            continue
        try:
            mod = __import__(name)
            plugins[name] = {"version": str(getattr(mod, "__version__", "")), "ok": True}
        except Exception as exc:
            plugins[name] = {"ok": False, "error": error_of(exc)}
    if plugins:
        facts["plugins"] = plugins


def torch_facts(torch, import_ms, builds):
    version = getattr(torch, "version", None)
    facts = {"version": str(getattr(torch, "__version__", "")), "file": getattr(torch, "__file__", None)}
    for build in builds:
        facts[build] = safe(lambda: getattr(version, build, None))
    facts["git_version"] = safe(lambda: version.git_version)
    facts["import_ms"] = round(import_ms, 1)
    import_plugins(facts)
    dev = accelerator_facts(torch, facts)
    return facts, dev


def import_module(name, before):
    entry = {"module": name}
    start = time.monotonic()
    try:
        mod = __import__(name)
        for part in name.split(".")[1:]:
            mod = getattr(mod, part)
        entry["ok"] = True
        entry["file"] = getattr(mod, "__file__", None)
    except BaseException as exc:  # a SystemExit in a user module must not end the probe
        entry["ok"] = False
        entry["error"] = error_of(exc)
    entry["import_ms"] = round((time.monotonic() - start) * 1000.0, 1)
    entry["native_libraries"] = describe([p for p in mapped_files() if p not in before])
    return entry


def step(name):
    """Tells stackcheck the step this child begins (a line on its step pipe), when it listens."""
    fd = os.environ.get("STACKCHECK_STEP_FD")
    try:
        if fd:
            os.write(int(fd), (name + "\n").encode("utf-8", "replace"))
    except (OSError, ValueError):
        pass


def main():
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    out = {"python": {"executable": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3],
                      "prefix": sys.prefix}}
    before = mapped_files()
    step("importing torch")
    start = time.monotonic()
    try:
        import torch
        builds = tuple(config.get("builds", DEFAULT_BUILDS))
        out["torch"], dev = torch_facts(torch, (time.monotonic() - start) * 1000.0, builds)
        if dev:
            step("device round trip")
            out["round_trip"] = round_trip(torch, dev)
    except BaseException as exc:
        out["import_error"] = error_of(exc)
        out["import_ms"] = round((time.monotonic() - start) * 1000.0, 1)
    mapped = mapped_files()
    listed = TORCH_LIBS + tuple(config.get("libraries", DEFAULT_LIBS))
    out["mapped_libraries"] = describe([p for p in mapped if os.path.basename(p).startswith(listed)])
    out["imports"] = []
    for name in config.get("imports", []):
        out["imports"].append(import_module(name, mapped))
        mapped = mapped_files()
    return out


if __name__ == "__main__":
    try:
        result = main()
    except BaseException as exc:
        result = {"probe_error": error_of(exc)}
    with open(os.environ["STACKCHECK_RESULT"], "w") as f:
        json.dump(result, f)
