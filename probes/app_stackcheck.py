"""The `stackcheck` module of app scripts run by `stackcheck --app-script FILE.py`.

    import stackcheck
    with stackcheck.stage("load weights"):
        model.load_state_dict(state)
    stackcheck.metric("tokens_per_s", 1234.5)
    out = stackcheck.watch(model, stackcheck.fixed_input((8, 16)))
    stackcheck.profile(lambda: train_step(batch), steps=5)      # operators, traffic, fallbacks
    stackcheck.train_watch(train_step, steps=20, model=model)   # NaN/Inf by step and module
    stackcheck.scaling(lambda device: step_on(device))          # one device against all

Stages (status, duration, their own output), metrics, the numerics of a watched PyTorch model, the
operator profile, the training watch, the scaling and memory after each repetition go into the
snapshot (probe app.script). Outside stackcheck the same calls print marker lines (`::stackcheck
stage NAME`), which `stackcheck --app CMD` understands, and return their results. Works on Python
3.6 and later; torch is imported only by the calls that need it. The operator analysis is in
stackcheck_ops, the live profiler in stackcheck_profile, the training watch and the scaling in
stackcheck_train.
"""
import builtins
import gc
import json
import math
import os
import sys
import time
import traceback

__all__ = ["stage", "metric", "watch", "fixed_input", "memory", "profile", "train_watch",
           "scaling"]

_SLICE = 2048          # the last characters of output kept per stage
_MAX_MODULES = 4096    # module records kept per watch
_MAX_STAGES = 256      # stages kept per repetition
_state = {"run": None, "stack": [], "numerics": None, "watches": 0, "progress": None,
          "profile": None, "train_watch": None, "scaling": None, "app_profile": False,
          "trace_out": None}


def _ms(start):
    return round((time.monotonic() - start) * 1000.0, 3)


def _num(value):
    """A JSON-safe float: None for NaN and infinities."""
    value = float(value)
    return value if math.isfinite(value) else None


def _tail(text, limit, cut=None):
    """The end of text in at most limit characters. When its beginning is lost, the partial first
    line goes too (else up to the first blank, else all of it): stackcheck redacts what it gets,
    and a secret value cut off from its name could no longer be told from other text."""
    if cut is None:
        cut = len(text) > limit
    text = text[-limit:]
    if not cut:
        return text
    for blanks in ("\n\r", " \t"):
        found = [i for i in (text.find(c) for c in blanks) if i >= 0]
        if found:
            return text[min(found) + 1:]
    return ""


def _step(text):
    """The same place as a step line for stackcheck's live report ("run 1: NAME"), when it listens."""
    fd = os.environ.get("STACKCHECK_STEP_FD")
    try:
        if fd:
            rep, _, where = text.strip().partition("\t")
            os.write(int(fd), ("run %s: %s\n" % (rep, where)).encode("utf-8", "replace"))
    except (OSError, ValueError):
        pass


def _progress(text):
    """Where the script is, kept in a file, so a crash or a hang can still be placed in a stage."""
    _step(text)
    path = _state["progress"]
    if not path:
        return
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError:
        pass


def _one_line(text):
    """A name as one line: control characters (a newline, a tab) would split it where stackcheck
    reads lines and tab-separated fields."""
    return "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in text)


class _Stage(object):
    def __init__(self, name):
        self.name = _one_line(str(name))
        self.record = None

    def __enter__(self):
        run = _state["run"]
        if run is None:
            sys.stdout.write("::stackcheck stage %s\n" % self.name)
            sys.stdout.flush()
            return self
        self.record = {"name": self.name, "status": "running", "start": time.monotonic(),
                       "output_tail": "", "output_bytes": 0, "metrics": {}}
        if len(run["stages"]) < _MAX_STAGES:
            run["stages"].append(self.record)
        else:
            run["stages_dropped"] += 1
        _state["stack"].append(self.record)
        _progress("%d\t%s\n" % (run["index"] + 1, self.name))
        return self

    def __exit__(self, exc_type, exc, tb):
        rec = self.record
        if rec is None:
            return False
        rec["duration_ms"] = _ms(rec.pop("start"))
        if exc_type is None:
            rec["status"] = "pass"
        else:
            rec["status"] = "fail"
            text = "".join(traceback.format_exception_only(exc_type, exc)).strip()
            rec["error"] = _tail(text, 1000)
        if _state["stack"] and _state["stack"][-1] is rec:
            _state["stack"].pop()
        run = _state["run"]
        inner = _state["stack"][-1]["name"] if _state["stack"] else "(after '%s')" % rec["name"]
        _progress("%d\t%s\n" % (run["index"] + 1, inner))
        return False


def stage(name):
    """A context manager that marks one step of the app: `with stackcheck.stage("config"): ...`."""
    return _Stage(name)


def metric(name, value):
    """Records a number for the current stage and the run (the last value of a name wins)."""
    name = str(name).split()[0] if str(name).split() else "metric"
    value = _num(value)
    run = _state["run"]
    if run is None:
        sys.stdout.write("::stackcheck metric %s %r\n" % (name, value))
        return
    run["metrics"][name] = value
    if _state["stack"]:
        _state["stack"][-1]["metrics"][name] = value


class _Tee(object):
    """Passes writes through and keeps the tail of what each stage printed."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        stack = _state["stack"]
        if stack and isinstance(text, str):
            rec = stack[-1]
            rec["output_tail"] = (rec["output_tail"] + text)[-_SLICE:]
            rec["output_bytes"] += len(text)
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def memory():
    """Memory now: the process's resident set and, when torch uses a device, its allocator's bytes.
    `value` is the device figure when there is one, else the resident set."""
    out = {"rss_bytes": None, "device_allocated_bytes": None, "device": None}
    try:
        with open("/proc/self/statm") as f:
            out["rss_bytes"] = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    out["value"], out["source"] = out["rss_bytes"], "process RSS (/proc/self/statm)"
    torch = sys.modules.get("torch")
    for backend in ("cuda", "npu"):
        mod = getattr(torch, backend, None) if torch is not None else None
        try:
            if mod is not None and mod.is_available() and mod.is_initialized():
                total = sum(mod.memory_allocated(i) for i in range(mod.device_count()))
                out["device_allocated_bytes"], out["device"] = total, backend
                out["value"], out["source"] = total, "torch.%s.memory_allocated" % backend
                break
        except Exception:  # a half-working device runtime must not end the app
            continue
    return out


def fixed_input(shape, seed=0, device=None, dtype=None):
    """A tensor of standard normal values that is the same on every machine for one seed: the
    fixed input that makes two snapshots' numerics comparable."""
    import torch
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(tuple(shape), generator=gen)
    if dtype is not None:
        x = x.to(dtype)
    return x.to(device) if device is not None else x


def _first_tensor(value, depth=0):
    import torch
    if isinstance(value, torch.Tensor):
        return value
    if depth > 3:
        return None
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        for item in value:
            found = _first_tensor(item, depth + 1)
            if found is not None:
                return found
    return None


def _stats(t):
    """shape, dtype, mean, std, max_abs over the finite values, and the NaN and Inf counts."""
    import torch
    s = {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
    x = t.detach()
    if x.is_complex():
        x = torch.view_as_real(x)
    x = x.float().reshape(-1)
    nan = int(torch.isnan(x).sum().item())
    inf = int(torch.isinf(x).sum().item())
    finite = x[torch.isfinite(x)] if nan or inf else x
    s["nan"], s["inf"] = nan, inf
    if finite.numel() == 0:
        s["mean"] = s["std"] = s["max_abs"] = None
        return s
    finite = finite.double() if finite.device.type == "cpu" else finite
    mean = finite.mean()
    s["mean"] = _num(mean.item())
    s["std"] = _num(((finite - mean) ** 2).mean().sqrt().item())
    s["max_abs"] = _num(finite.abs().max().item())
    return s


def watch(model, example_input, name="model"):
    """Runs model(example_input) once without gradients and records every module's output
    statistics in call order (the first watch of the first repetition goes into the snapshot).
    Returns the model's output."""
    import torch
    names = {}
    for mod_name, mod in model.named_modules():
        names.setdefault(id(mod), mod_name or "(root)")
    records, seen, handles = [], {}, []
    dropped = [0]

    def hook(mod, inputs, output):
        t = _first_tensor(output)
        if t is None:
            return
        if len(records) >= _MAX_MODULES:
            dropped[0] += 1
            return
        base = names.get(id(mod), type(mod).__name__)
        seen[base] = seen.get(base, 0) + 1
        rec = {"module": base if seen[base] == 1 else "%s#%d" % (base, seen[base]),
               "type": type(mod).__name__}
        rec.update(_stats(t))
        records.append(rec)

    for mod in model.modules():
        handles.append(mod.register_forward_hook(hook))
    try:
        with torch.no_grad():
            output = model(example_input)
    finally:
        for h in handles:
            h.remove()
    _state["watches"] += 1
    if _state["numerics"] is None and _state["run"] is not None:
        _state["numerics"] = _numerics(name, example_input, output, records, dropped[0])
    return output


def _numerics(name, example_input, output, records, dropped):
    first = next((r for r in records if r["nan"] or r["inf"]), None)
    inp = _first_tensor(example_input)
    out = _first_tensor(output)
    result = {"name": str(name), "modules": records, "modules_dropped": dropped,
              "input": _stats(inp) if inp is not None else None,
              "output": _stats(out) if out is not None else None,
              "device": str(inp.device) if inp is not None else None,
              "first_nonfinite": None}
    if first is not None:
        result["first_nonfinite"] = {"module": first["module"], "type": first["type"],
                                     "index": records.index(first), "nan": first["nan"],
                                     "inf": first["inf"]}
    try:
        import torch
        result["torch"] = torch.__version__
    except ImportError:
        pass
    return result


def _keep(key, value):
    """The first result of a kind in the first repetition that has one goes into the snapshot."""
    if _state["run"] is not None and _state[key] is None:
        _state[key] = value


def profile(fn, steps=5, warmup=1, name="step", trace=None):
    """Runs fn() warmup times, then steps times under torch.profiler (torch_npu.profiler on an
    NPU), and returns its profile: per operator the calls, host and device self time, the devices
    it ran on and its input shapes; operators that ran on the host while the step used a device
    (fallback), host-device copies and synchronising calls per step and where they were made,
    fallback warnings the frameworks printed, and compiles during the profiled steps. trace names
    a file for the Chrome trace. Under --app-profile the repetition itself is profiled (a profiler
    cannot nest), and fn just runs."""
    import stackcheck_profile
    if _state["app_profile"] and _state["run"] is not None:
        for _ in range(max(int(warmup), 0) + max(int(steps), 1)):
            fn()
        return None
    result, _ = stackcheck_profile.run(fn, steps=steps, warmup=warmup, name=name, trace=trace)
    _keep("profile", result)
    return result


def train_watch(step_fn, steps=10, model=None, name="train", seed=0, stop_on_nonfinite=True):
    """Runs step_fn(step) for steps 1..steps (forward, backward and optimizer step; it returns the
    loss) after torch.manual_seed(seed), with forward and backward hooks on every module of model:
    per step the loss, the gradient norms (total and per module) and the modules whose outputs or
    gradients held NaN or Inf. Stops after the first step that produced them unless
    stop_on_nonfinite is False. Returns the record; the first one goes into the snapshot."""
    import stackcheck_train
    result = stackcheck_train.run(step_fn, steps=steps, model=model, name=name, seed=seed,
                                  stop_on_nonfinite=stop_on_nonfinite)
    _keep("train_watch", result)
    return result


def scaling(fn, steps=5, warmup=1, devices=None):
    """Times fn(device) on the first device, then on every device at once (one thread each), and
    returns {devices, world, one_device_ms_per_step, all_devices_ms_per_step, speedup,
    efficiency}. devices defaults to every device torch sees (["cpu"] without one)."""
    import stackcheck_train
    result = stackcheck_train.scaling(fn, steps=steps, warmup=warmup, devices=devices)
    _keep("scaling", result)
    return result


def _profiled(script, index):
    """Runs the script once under the profiler (--app-profile): the whole repetition is the step."""
    import stackcheck_profile
    result, _ = stackcheck_profile.run(lambda: _exec_script(script), steps=1, warmup=0,
                                       name="repetition %d" % (index + 1),
                                       trace=_state["trace_out"])
    _state["profile"] = result


def _exec_script(path):
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec")
    env = {"__name__": "__main__", "__file__": path, "__builtins__": builtins,
           "__package__": None, "__spec__": None, "__doc__": None}
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [path]
    sys.path.insert(0, os.path.dirname(path))
    try:
        exec(code, env)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


def _failed_stage(run):
    failed = [s for s in run["stages"] if s["status"] == "fail"]
    if failed:
        return failed[-1]["name"]  # the innermost: inner stages exit first
    open_stages = [s for s in run["stages"] if s["status"] == "running"]
    if open_stages:
        return open_stages[-1]["name"]
    if run["stages"]:
        return "(after '%s')" % run["stages"][-1]["name"]
    return "(before the first stage)"


def _one_run(index, script, profiled=False):
    run = {"index": index, "stages": [], "metrics": {}, "stages_dropped": 0, "ok": True,
           "error": None}
    _state["run"], _state["stack"] = run, []
    _progress("%d\t(before the first stage)\n" % (index + 1))
    start = time.monotonic()
    try:
        if profiled:
            _profiled(script, index)
        else:
            _exec_script(script)
    except SystemExit as e:
        if e.code not in (None, 0):
            run["ok"], run["error"] = False, "SystemExit: %r" % (e.code,)
    except BaseException:  # the script's own failure is the finding, whatever it raised
        run["ok"] = False
        run["error"] = _tail(traceback.format_exc(), 3000)
    run["duration_ms"] = _ms(start)
    for rec in run["stages"]:
        if rec["status"] == "running":  # left open by an exception that skipped __exit__
            rec["status"], rec["duration_ms"] = "fail", _ms(rec.pop("start"))
        kept = rec["output_tail"]
        rec["output_tail"] = _tail(kept, _SLICE, rec["output_bytes"] > len(kept))
    if not run["ok"]:
        run["failed_stage"] = _failed_stage(run)
    gc.collect()
    run["memory"] = memory()
    _state["run"], _state["stack"] = None, []
    return run


def _summary(runs):
    """Per run only what the timing and memory need; the stages in full for the last run."""
    brief = []
    for run in runs:
        stages = {}
        for s in run["stages"]:
            stages[s["name"]] = s.get("duration_ms")
        brief.append({"duration_ms": run["duration_ms"], "ok": run["ok"], "stages": stages,
                      "memory": run["memory"]})
    return brief


def _main(script, repeat):
    """Runs script `repeat` times in this interpreter (the first run is start-up: imports, first
    allocations) and writes the result to the file named by STACKCHECK_RESULT."""
    _state["progress"] = os.environ.get("STACKCHECK_PROGRESS")
    _state["app_profile"] = os.environ.get("STACKCHECK_APP_PROFILE") == "1"
    _state["trace_out"] = os.environ.get("STACKCHECK_TRACE_OUT") or None
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Tee(sys.stdout), _Tee(sys.stderr)
    runs, repeat = [], max(1, int(repeat))
    try:
        for index in range(repeat):
            # --app-profile: the last repetition, the steadiest, runs under the profiler
            runs.append(_one_run(index, script, _state["app_profile"] and index == repeat - 1))
            if not runs[-1]["ok"]:
                break
    finally:
        sys.stdout, sys.stderr = saved
    last = runs[-1]
    result = {"script": script, "python": sys.version.split()[0], "runs": _summary(runs),
              "ok": last["ok"], "error": last["error"], "failed_stage": last.get("failed_stage"),
              "stages": last["stages"], "metrics": last["metrics"],
              "stages_dropped": last["stages_dropped"], "numerics": _state["numerics"],
              "watches": _state["watches"], "profile": _state["profile"],
              "train_watch": _state["train_watch"], "scaling": _state["scaling"],
              "app_profile": _state["app_profile"]}
    with open(os.environ["STACKCHECK_RESULT"], "w") as f:
        json.dump(result, f, allow_nan=False, default=str)
