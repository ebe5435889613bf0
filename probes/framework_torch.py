# framework.torch, the part that runs inside the user's interpreter: import torch (timed), describe the
# build and the devices it sees, run the seed's device round trip, list the native runtime libraries the
# import mapped, then import the user's modules. Writes one JSON document to $STACKCHECK_RESULT.
# Runs on Python 3.6+ with any torch; every step is guarded so a partial answer still gets written.
import builtins
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


MAX_PATH_ENTRIES = 256  # sys.path entries searched for a module's other copies
MAX_CANDIDATES = 32
MAX_DIR_FILES = 512  # files of a package directory looked at for its newest mtime
MAX_SITE_FILES = 4096  # names of a site directory looked at for .pth and .egg-link files


def first_lines(path, count):
    lines = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                lines.append(line.strip())
                if len(lines) >= count:
                    break
    except (OSError, ValueError):
        pass
    return lines


def site_dirs():
    dirs = []
    try:
        import site
        dirs += list(getattr(site, "getsitepackages", lambda: [])())
        dirs.append(site.getusersitepackages())
    except Exception:
        pass
    dirs += [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    return [d for i, d in enumerate(dirs) if d and d not in dirs[:i] and os.path.isdir(d)][:16]


def path_sources():
    """What put directories on sys.path: {real path: the .pth file naming it} and {real path: the
    .egg-link file naming it}, from the site directories."""
    pth, links = {}, {}
    for d in site_dirs():
        try:
            names = os.listdir(d)[:MAX_SITE_FILES]
        except OSError:
            continue
        for n in sorted(names):
            path = os.path.join(d, n)
            if n.endswith(".pth"):
                for line in first_lines(path, 1000):
                    if line and not line.startswith(("#", "import ", "import\t")):
                        pth.setdefault(os.path.realpath(os.path.join(d, line)), path)
            elif n.endswith(".egg-link"):
                target = first_lines(path, 1)
                if target and target[0]:
                    links.setdefault(os.path.realpath(os.path.join(d, target[0])), path)
    return pth, links


def newest_mtime(origin, package_dir):
    """The file's mtime; for a package, the newest of the files directly in its directory (a
    rebuilt extension inside it counts)."""
    best = None
    try:
        best = os.stat(origin).st_mtime if origin else None
    except OSError:
        pass
    if package_dir:
        try:
            names = os.listdir(package_dir)[:MAX_DIR_FILES]
        except OSError:
            names = []
        for n in names:
            try:
                st = os.stat(os.path.join(package_dir, n))
            except OSError:
                continue
            if not os.path.isdir(os.path.join(package_dir, n)) and (best is None or
                                                                    st.st_mtime > best):
                best = st.st_mtime
    return best


def describe_spec(spec, where, entry, sources):
    from importlib.machinery import EXTENSION_SUFFIXES
    locations = list(spec.submodule_search_locations or [])
    origin = spec.origin if spec.origin not in (None, "namespace", "built-in", "frozen") else None
    if origin and not os.path.isabs(origin):
        return None
    package_dir = locations[0] if locations else None
    if origin is None and not package_dir:
        return None
    kind = ("namespace" if origin is None else "package" if locations else
            "extension" if origin.endswith(tuple(EXTENSION_SUFFIXES)) else "module")
    path = origin or package_dir
    real_entry = os.path.realpath(entry) if entry is not None else None
    return {"path": path, "realpath": os.path.realpath(path), "kind": kind, "from": where,
            "entry": entry, "dir": package_dir, "mtime": newest_mtime(origin, package_dir),
            "added_by": sources[0].get(real_entry) if real_entry else None,
            "egg_link": sources[1].get(real_entry) if real_entry else None}


def search_path(name):
    """Where the import system looks for name: sys.path for a top-level module, the parent
    package's __path__ for a submodule (None when the parent is not importable)."""
    if "." not in name:
        return sys.path
    parent = sys.modules.get(name.rsplit(".", 1)[0])
    return list(getattr(parent, "__path__", None) or []) if parent else None


def module_candidates(name):
    """Every place the import system finds name, in the order it asks them: meta path finders
    before the path finder, each sys.path entry (each parent __path__ entry for a submodule),
    then the finders after it (editable installs). Copies of one file are listed once."""
    import importlib.machinery as machinery
    sources = safe(path_sources, ({}, {}))
    out, seen = [], set()

    def add(spec, where, entry):
        c = safe(lambda: describe_spec(spec, where, entry, sources)) if spec else None
        if c and c["realpath"] not in seen and len(out) < MAX_CANDIDATES:
            seen.add(c["realpath"])
            out.append(c)

    path = search_path(name)
    for i, finder in enumerate(sys.meta_path):
        if finder in (machinery.BuiltinImporter, machinery.FrozenImporter):
            continue
        if finder is machinery.PathFinder:
            for k, entry in enumerate((path or [])[:MAX_PATH_ENTRIES]):
                where = ("sys.path[%d]" if "." not in name else "__path__[%d]") % k
                add(safe(lambda: machinery.PathFinder.find_spec(name, [entry])), where, entry)
            continue
        add(safe(lambda: finder.find_spec(name, path)), "sys.meta_path[%d] (%s)" % (
            i, type(finder).__name__), None)
    return out


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
    entry["candidates"] = safe(lambda: module_candidates(name), [])
    imported = os.path.realpath(entry["file"]) if entry.get("file") else None
    for c in entry["candidates"]:
        c["imported"] = c["realpath"] == imported
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
    step("importing torch")
    start = time.monotonic()
    # In a parallel run the warm interpreter imported torch before forking this process: its time
    # and its error are this import's.
    warm = getattr(builtins, "_stackcheck_torch_preimport", None)
    try:
        if warm and warm["error"] is not None:
            raise warm["error"]
        import torch
        import_ms = warm["import_ms"] if warm else (time.monotonic() - start) * 1000.0
        builds = tuple(config.get("builds", DEFAULT_BUILDS))
        out["torch"], dev = torch_facts(torch, import_ms, builds)
        if dev:
            step("device round trip")
            out["round_trip"] = round_trip(torch, dev)
    except BaseException as exc:
        out["import_error"] = error_of(exc)
        out["import_ms"] = round(warm["import_ms"] if warm else (time.monotonic() - start) * 1000.0,
                                 1)
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
