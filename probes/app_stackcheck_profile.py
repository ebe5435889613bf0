"""The live half of the operator profile (module `stackcheck_profile` of app scripts): runs the
user's step under torch.profiler (torch_npu.profiler on Ascend), with the host-side calls that copy
to the host counted where they are made, the fallback warnings the frameworks print captured, and
TorchDynamo's compile counters read before and after; stackcheck_ops judges what was recorded.
Every feature is detected, never assumed: torch 1.8 to 2.x, with or without kineto, CUDA, ROCm,
torch_npu or the CPU alone.
"""
import json
import os
import shutil
import sys
import tempfile
import time
import warnings

import stackcheck_ops

MAX_HOST_CALLS = 64  # distinct (call, place) pairs kept
_HERE = os.path.dirname(os.path.abspath(__file__))
_OWN = ("stackcheck.py", "stackcheck_ops.py", "stackcheck_profile.py", "stackcheck_train.py")

# Tensor methods that bring values to the host: on a device each one copies and waits.
HOST_CALLS = (("item", ".item()"), ("tolist", ".tolist()"), ("numpy", ".numpy()"),
              ("cpu", ".cpu()"), ("to", ".to('cpu')"))


def _caller():
    """file:line (function) of the first frame outside torch and stackcheck's own files."""
    frame = sys._getframe(2)
    torch_dir = os.sep + "torch" + os.sep
    while frame is not None:
        path = frame.f_code.co_filename
        own = os.path.dirname(os.path.abspath(path)) == _HERE and os.path.basename(path) in _OWN
        if not own and torch_dir not in path and "<stackcheck>" not in path:
            return "%s:%d (%s)" % (os.path.basename(path), frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return "?"


def _to_host(args, kwargs):
    """True when Tensor.to(...) names the CPU as its device."""
    target = kwargs.get("device", args[0] if args else None)
    if isinstance(target, str):
        return target.split(":")[0] == "cpu"
    return getattr(target, "type", None) == "cpu"


class _HostCalls(object):
    """Wraps the Tensor methods of HOST_CALLS while the step runs and counts each call by place."""

    def __init__(self, torch):
        self.torch, self.calls, self.saved = torch, {}, {}

    def note(self, label, tensor):
        try:
            nbytes = int(tensor.numel()) * int(tensor.element_size())
            on_device = tensor.device.type != "cpu"
        except Exception:  # a tensor subclass without storage
            nbytes, on_device = None, None
        key = (label, _caller())
        rec = self.calls.get(key)
        if rec is None:
            if len(self.calls) >= MAX_HOST_CALLS:
                return
            rec = self.calls[key] = {"call": label, "where": key[1], "count": 0, "bytes": 0,
                                     "on_device": on_device}
        rec["count"] += 1
        rec["bytes"] = rec["bytes"] + nbytes if nbytes is not None and rec["bytes"] is not None \
            else None

    def _wrap(self, name, label):
        original = getattr(self.torch.Tensor, name)
        calls = self

        def wrapper(tensor, *args, **kwargs):
            if name != "to" or _to_host(args, kwargs):
                calls.note(label, tensor)
            return original(tensor, *args, **kwargs)

        wrapper.__name__ = getattr(original, "__name__", name)
        wrapper.__doc__ = getattr(original, "__doc__", None)
        return original, wrapper

    def __enter__(self):
        for name, label in HOST_CALLS:
            try:
                original, wrapper = self._wrap(name, label)
                setattr(self.torch.Tensor, name, wrapper)
                self.saved[name] = original
            except (AttributeError, TypeError):
                continue
        return self

    def __exit__(self, *exc):
        for name, original in self.saved.items():
            setattr(self.torch.Tensor, name, original)
        return False

    def result(self):
        return sorted(self.calls.values(), key=lambda r: -r["count"])


class _Stderr(object):
    """Everything written to file descriptor 2 while it is active (C++ warnings of torch_npu and
    c10 go there, not through Python), passed on to the real standard error afterwards."""

    def __enter__(self):
        self.text, self.saved, self.tmp = "", None, None
        try:
            sys.stderr.flush()
            self.tmp = tempfile.TemporaryFile()
            self.saved = os.dup(2)
            os.dup2(self.tmp.fileno(), 2)
        except (OSError, ValueError, AttributeError):
            self.saved = None
        return self

    def __exit__(self, *exc):
        if self.saved is None:
            return False
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.tmp.seek(0)
        data = self.tmp.read(8 << 20)
        self.tmp.close()
        if data:
            os.write(2, data)
        self.text = data.decode("utf-8", "replace")
        return False


class _Warnings(object):
    """Python warnings raised while active, recorded and then shown as they would have been."""

    def __enter__(self):
        self.cm = warnings.catch_warnings(record=True)
        self.records = self.cm.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        self.cm.__exit__(*exc)
        self.text = ""
        seen = set()
        for w in self.records:
            line = warnings.formatwarning(w.message, w.category, w.filename, w.lineno)
            self.text += line
            if line not in seen:
                seen.add(line)
                sys.stderr.write(line)
        return False


class _DynamoLog(object):
    """TorchDynamo's log records (recompiles, the cache limit) while active."""

    def __enter__(self):
        import logging
        self.lines, self.logger = [], None

        class Keep(logging.Handler):
            def emit(inner, record):
                if len(self.lines) < 256:
                    self.lines.append(record.getMessage()[:2000])

        if "torch._dynamo" in sys.modules:
            self.logger, self.handler = logging.getLogger("torch._dynamo"), Keep()
            self.logger.addHandler(self.handler)
        return self

    def __exit__(self, *exc):
        if self.logger is not None:
            self.logger.removeHandler(self.handler)
        return False


def _dynamo_counters(torch):
    """TorchDynamo's counters as {category: {name: n}}, or None when there is no TorchDynamo."""
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is None:
        return None
    try:
        from torch._dynamo.utils import counters
        return {cat: dict(c) for cat, c in counters.items()}
    except Exception:
        return None


def _counter_delta(before, after, cat, name):
    return after.get(cat, {}).get(name, 0) - before.get(cat, {}).get(name, 0)


def _recompiles(torch, before, after, log_text, device_compiles):
    """What compiled during the profiled steps (the warm-up compiles are expected)."""
    out = {"device_compiles": device_compiles}
    if before is None or after is None:
        reason = ("torch %s has no torch.compile (TorchDynamo came with torch 2.0)"
                  % torch.__version__ if not hasattr(torch, "compile")
                  else "the step did not use torch.compile")
        out.update(available=False, reason=reason, recompiles=None)
    else:
        frames = _counter_delta(before, after, "frames", "ok")
        out.update(available=True, reason=None, recompiles=frames,
                   graphs=_counter_delta(before, after, "stats", "unique_graphs"))
    out["log"] = stackcheck_ops.parse_recompile_log(log_text)
    npu = getattr(torch, "npu", None)
    try:
        out["npu_jit_compile"] = not npu.is_jit_compile_false() if npu is not None else None
    except Exception:
        out["npu_jit_compile"] = None
    return out


def accelerator_of(torch):
    """The device type the step's tensors most likely live on: "cuda" (ROCm builds too), "npu",
    or None for the CPU."""
    for name in ("cuda", "npu"):
        mod = getattr(torch, name, None)
        try:
            if mod is not None and mod.is_available() and mod.is_initialized():
                return name
        except Exception:
            continue
    return None


def _synchronize(torch, accelerator):
    mod = getattr(torch, accelerator, None) if accelerator else None
    try:
        if mod is not None:
            mod.synchronize()
    except Exception:
        pass


def _npu_profiler(torch):
    try:
        import torch_npu
        return torch_npu.profiler
    except Exception:
        return None


def _torch_profiler(torch, accelerator, record_shapes):
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU]
    if accelerator == "cuda" and hasattr(ProfilerActivity, "CUDA"):
        activities.append(ProfilerActivity.CUDA)
    return profile(activities=activities, record_shapes=record_shapes)


def _read_npu_trace(workdir):
    for root, _dirs, files in os.walk(workdir):
        if "trace_view.json" in files and root.endswith("ASCEND_PROFILER_OUTPUT"):
            return os.path.join(root, "trace_view.json")
    return None


def _run_steps(fn, steps, torch, accelerator):
    result, times = None, []
    for _ in range(steps):
        start = time.monotonic()
        result = fn()
        _synchronize(torch, accelerator)
        times.append((time.monotonic() - start) * 1000.0)
    return result, times


def _profile_npu(fn, steps, torch, workdir, record_shapes):
    npu_prof = _npu_profiler(torch)
    acts = [npu_prof.ProfilerActivity.CPU, npu_prof.ProfilerActivity.NPU]
    with npu_prof.profile(activities=acts, record_shapes=record_shapes,
                          on_trace_ready=npu_prof.tensorboard_trace_handler(workdir)):
        result, times = _run_steps(fn, steps, torch, "npu")
    path = _read_npu_trace(workdir)
    if path is None:
        return result, times, None, "torch_npu.profiler wrote no trace_view.json"
    with open(path) as f:
        return result, times, path, json.load(f)


def _profile_torch(fn, steps, torch, accelerator, workdir, record_shapes):
    with _torch_profiler(torch, accelerator, record_shapes) as prof:
        result, times = _run_steps(fn, steps, torch, accelerator)
    path = os.path.join(workdir, "trace.json")
    trace = None
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    except (OSError, ValueError, RuntimeError):
        path = None
    kineto = isinstance(trace, dict) and any(
        isinstance(e, dict) and "cat" in e for e in trace.get("traceEvents", [])[:200])
    if not kineto:  # a legacy export has no shapes and no device events: read the events
        return result, times, path, prof.events()
    return result, times, path, trace


def _analyze(raw, accelerator, steps):
    if isinstance(raw, str):
        return {"available": False, "reason": raw}
    live = len(raw) > 0 and hasattr(raw[0], "time_range") if isinstance(raw, list) else False
    parsed = (stackcheck_ops.events_from_profiler(raw) if live
              else stackcheck_ops.events_from_trace(raw))
    out = stackcheck_ops.analyze(parsed, accelerator=accelerator, steps=steps)
    out["available"] = True
    return out


def _host_traffic(analysis, host_calls, steps):
    """Adds the host calls; on the CPU, where nothing was copied, they are what a device run
    would copy, and the totals say so."""
    traffic = analysis.setdefault("traffic", {"copies": {}, "syncs": {"count": 0}})
    traffic["host_calls"] = host_calls
    measured = bool(traffic["copies"]) or analysis.get("accelerator") is not None
    traffic["measured"] = measured
    if measured:
        return
    count = sum(c["count"] for c in host_calls)
    known = all(c["bytes"] is not None for c in host_calls)
    nbytes = sum(c["bytes"] for c in host_calls) if known else None
    traffic["copies"]["device_to_host"] = {
        "count": count, "per_step": round(count / float(steps), 3), "bytes": nbytes,
        "bytes_per_step": round(nbytes / float(steps)) if nbytes is not None else None,
        "callers": [{"op": c["call"] + " at " + c["where"], "count": c["count"],
                     "bytes": c["bytes"]} for c in host_calls[:8]],
        "would_be": True}


def _write_trace(src, dest):
    if src and dest:
        shutil.copyfile(src, dest)


def run(fn, steps=5, warmup=1, name="step", trace=None, record_shapes=True):
    """Runs fn warmup times, then steps times under the profiler; returns (the profile, fn's last
    result). The profile is {name, steps, warmup, profiler, ...stackcheck_ops.analyze..., traffic
    with host_calls, fallback_warnings[], recompiles{}, step_ms[], trace_file}."""
    import torch
    import torch.profiler
    steps, warmup = max(int(steps), 1), max(int(warmup), 0)
    accelerator = accelerator_of(torch)
    workdir = tempfile.mkdtemp(prefix="stackcheck-profile-")
    out = {"name": str(name), "steps": steps, "warmup": warmup, "torch": torch.__version__}
    try:
        with _Stderr() as err, _Warnings() as warns, _DynamoLog() as dlog:
            for _ in range(warmup):
                fn()
            _synchronize(torch, accelerator)
            accelerator = accelerator or accelerator_of(torch)
            before = _dynamo_counters(torch)
            with _HostCalls(torch) as calls:
                if accelerator == "npu" and _npu_profiler(torch) is not None:
                    out["profiler"] = "torch_npu.profiler"
                    result, times, path, raw = _profile_npu(fn, steps, torch, workdir,
                                                            record_shapes)
                else:
                    out["profiler"] = torch.profiler.__name__
                    result, times, path, raw = _profile_torch(fn, steps, torch, accelerator,
                                                              workdir, record_shapes)
            after = _dynamo_counters(torch)
        out.update(_analyze(raw, accelerator, steps))
        _host_traffic(out, calls.result(), steps)
        out["step_ms"] = [round(t, 3) for t in times]
        out["fallback_warnings"] = stackcheck_ops.parse_fallback_warnings(
            err.text + "\n" + warns.text)
        out["recompiles"] = _recompiles(torch, before, after, "\n".join(dlog.lines),
                                        out.pop("device_compiles", None))
        _write_trace(path, trace)
        out["trace_file"] = os.path.abspath(trace) if trace and path else None
        return out, result
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
