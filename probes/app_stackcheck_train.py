"""Training over several steps (module `stackcheck_train` of app scripts): the training watch, which
runs N steps with a fixed seed and records the loss, the gradient norms and every module's
non-finite values, forward and backward, naming the first step and module that produced NaN or
Inf; and the scaling check, which times the user's step on one device and on all of them at once.
torch is imported when they are called; torch 1.8 to 2.x.
"""
import math
import threading
import time
import warnings

MAX_MODULES = 512  # modules watched per model
MAX_RECORDS = 64  # non-finite records kept per step
MAX_STEPS = 10000


def _num(value):
    value = float(value)
    return value if math.isfinite(value) else None


def _tensors(value, depth=0):
    """The tensors in a module's output or gradient tuple (a few levels deep)."""
    import torch
    if isinstance(value, torch.Tensor):
        return [value]
    if depth > 2 or value is None:
        return []
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        out = []
        for item in value[:16]:
            out.extend(_tensors(item, depth + 1))
        return out
    return []


def _nonfinite(tensors):
    """(nan, inf) counts over the floating-point tensors."""
    import torch
    nan = inf = 0
    for t in tensors:
        if t is None or not (t.is_floating_point() or t.is_complex()):
            continue
        x = torch.view_as_real(t.detach()) if t.is_complex() else t.detach()
        nan += int(torch.isnan(x).sum().item())
        inf += int(torch.isinf(x).sum().item())
    return nan, inf


class _Watch(object):
    """Forward and backward hooks on every module of a model; what they saw in one step."""

    def __init__(self, model, backward):
        self.names, self.records, self.handles, self.order = {}, [], [], 0
        self.backward = backward
        for name, mod in list(model.named_modules())[:MAX_MODULES]:
            self.names[id(mod)] = (name or "(root)", type(mod).__name__, mod)

    def _record(self, mod, phase, nan, inf, received=False):
        name, kind, _ = self.names[id(mod)]
        self.order += 1
        if (nan or inf) and len(self.records) < MAX_RECORDS:
            self.records.append({"module": name, "type": kind, "phase": phase, "nan": nan,
                                 "inf": inf, "order": self.order, "received": received})

    def forward_hook(self, mod, inputs, output):
        nan, inf = _nonfinite(_tensors(output))
        bad_in = sum(_nonfinite(_tensors(inputs)))
        self._record(mod, "forward", nan, inf, received=bad_in > 0)

    def backward_hook(self, mod, grad_input, grad_output):
        nan, inf = _nonfinite(_tensors(grad_input))
        bad_out = sum(_nonfinite(_tensors(grad_output)))
        self._record(mod, "backward", nan, inf, received=bad_out > 0)

    def __enter__(self):
        for _name, _kind, mod in self.names.values():
            self.handles.append(mod.register_forward_hook(self.forward_hook))
            if self.backward and hasattr(mod, "register_full_backward_hook"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self.handles.append(mod.register_full_backward_hook(self.backward_hook))
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        self.handles = []
        return False

    def param_grads(self):
        """Per module with parameters of its own: the L2 norm of their gradients, and the
        modules whose gradients hold NaN or Inf."""
        norms, bad, total = {}, [], 0.0
        for name, kind, mod in self.names.values():
            grads = [p.grad for p in mod.parameters(recurse=False) if p.grad is not None]
            if not grads:
                continue
            nan, inf = _nonfinite(grads)
            if nan or inf:
                bad.append({"module": name, "type": kind, "phase": "gradient", "nan": nan,
                            "inf": inf})
                norms[name] = None
                continue
            sq = sum(float(g.detach().double().pow(2).sum().item()) for g in grads)
            total += sq
            norms[name] = _num(math.sqrt(sq))
        return norms, bad, (_num(math.sqrt(total)) if not bad else None)


def _first_producer(records, grad_bad):
    """The first module that produced non-finite values: in the forward, the first in call order
    whose output had them while its inputs did not; in the backward, the first (in the order
    backward ran) whose input gradients had them while the gradient it received did not; else the
    first module with non-finite parameter gradients."""
    for phase in ("forward", "backward"):
        recs = sorted((r for r in records if r["phase"] == phase), key=lambda r: r["order"])
        made = [r for r in recs if not r["received"]]
        if made or recs:
            return dict((made or recs)[0])
    return dict(grad_bad[0]) if grad_bad else None


def _loss_value(loss):
    try:
        return _num(loss.detach().float().item() if hasattr(loss, "detach") else loss)
    except (TypeError, ValueError, RuntimeError):
        return None


def _one_step(step_fn, step, watch):
    start = time.monotonic()
    with watch:
        loss = step_fn(step)
    norms, grad_bad, total = watch.param_grads()
    value = _loss_value(loss)
    rec = {"step": step, "loss": value, "loss_nonfinite": loss is not None and value is None,
           "grad_norm": total, "grad_norms": norms,
           "nonfinite": [dict((k, v) for k, v in r.items() if k != "order")
                         for r in watch.records] + grad_bad,
           "duration_ms": round((time.monotonic() - start) * 1000.0, 3)}
    first = _first_producer(watch.records, grad_bad)
    if first is None and rec["loss_nonfinite"]:
        first = {"module": "(loss)", "type": None, "phase": "loss", "nan": None, "inf": None}
    if first is not None:
        first.pop("order", None)
        first.pop("received", None)
        first["step"] = step
    rec["first_nonfinite"] = first
    return rec


def _hooks_refused(exc):
    """True when an exception is the full backward hooks refusing the model (a module's output
    modified in place), not the user's own failure."""
    return "BackwardHookFunction" in str(exc)


def run(step_fn, steps=10, model=None, name="train", seed=0, stop_on_nonfinite=True):
    """Runs step_fn(step) for step = 1..steps (it does forward, backward and the optimizer step,
    and returns the loss) with hooks on every module of model; returns the watch result."""
    import torch
    steps = max(1, min(int(steps), MAX_STEPS))
    torch.manual_seed(seed)
    backward = "full"
    out = {"name": str(name), "seed": seed, "steps_requested": steps, "steps": [],
           "first_nonfinite": None, "torch": torch.__version__}
    out["modules"] = len(list(model.modules())) if model is not None else 0
    for step in range(1, steps + 1):
        watch = _Watch(model, backward == "full") if model is not None else _Watch(
            torch.nn.Module(), False)
        try:
            rec = _one_step(step_fn, step, watch)
        except RuntimeError as exc:
            if backward != "full" or not _hooks_refused(exc):
                raise
            backward = "off: the model modifies a module's output in place (%s)" % str(exc)[:200]
            watch = _Watch(model, False)
            rec = _one_step(step_fn, step, watch)
        out["steps"].append(rec)
        if rec["first_nonfinite"] is not None and out["first_nonfinite"] is None:
            out["first_nonfinite"] = dict(rec["first_nonfinite"])
            if stop_on_nonfinite:
                break
    out["backward_hooks"] = backward
    out["steps_run"] = len(out["steps"])
    return out


# --- scaling: one device against all of them -----------------------------------------------------

def devices_of(torch):
    """Every device torch sees of its accelerator ("cuda:0".. on CUDA and ROCm builds, "npu:0"..),
    else ["cpu"]."""
    for kind in ("cuda", "npu"):
        mod = getattr(torch, kind, None)
        try:
            if mod is not None and mod.is_available() and mod.device_count() > 0:
                return ["%s:%d" % (kind, i) for i in range(mod.device_count())]
        except Exception:
            continue
    return ["cpu"]


def _sync(torch, device):
    kind = device.split(":")[0]
    mod = getattr(torch, kind, None) if kind != "cpu" else None
    if mod is not None:
        mod.synchronize(device)


def _set_device(torch, device):
    kind = device.split(":")[0]
    mod = getattr(torch, kind, None) if kind != "cpu" else None
    if mod is not None and hasattr(mod, "set_device"):
        mod.set_device(device)


def _timed_steps(fn, torch, device, steps, warmup, barrier=None):
    _set_device(torch, device)
    for _ in range(warmup):
        fn(device)
    _sync(torch, device)
    if barrier is not None:
        barrier.wait()
    start = time.monotonic()
    for _ in range(steps):
        fn(device)
    _sync(torch, device)
    return (time.monotonic() - start) * 1000.0


def _all_at_once(fn, torch, devices, steps, warmup):
    """Wall time of steps steps on every device at once, one thread per device (device work
    releases the interpreter lock), from a common start."""
    barrier = threading.Barrier(len(devices) + 1)
    errors, threads = [], []

    def work(device):
        try:
            _timed_steps(fn, torch, device, steps, warmup, barrier)
        except BaseException as exc:  # reported below, in the caller's thread
            errors.append("%s: %s" % (device, exc))
            barrier.abort()

    for device in devices:
        threads.append(threading.Thread(target=work, args=(device,), daemon=True))
        threads[-1].start()
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        pass
    start = time.monotonic()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError("the step failed on " + "; ".join(errors))
    return (time.monotonic() - start) * 1000.0


def scaling(fn, steps=5, warmup=1, devices=None):
    """Times fn(device) for steps steps on the first device, then on every device at once;
    returns {devices, world, one_device_ms_per_step, all_devices_ms_per_step, speedup,
    efficiency}. speedup is the throughput of all devices over one device's (world is ideal)."""
    import torch
    devices = list(devices) if devices else devices_of(torch)
    steps, warmup = max(int(steps), 1), max(int(warmup), 0)
    one = _timed_steps(fn, torch, devices[0], steps, warmup)
    world = len(devices)
    every = _all_at_once(fn, torch, devices, steps, warmup) if world > 1 else one
    speedup = world * one / every if every > 0 else None
    return {"devices": devices, "world": world, "steps": steps,
            "one_device_ms_per_step": round(one / steps, 4),
            "all_devices_ms_per_step": round(every / steps, 4),
            "speedup": round(speedup, 4) if speedup is not None else None,
            "efficiency": round(speedup / world, 4) if speedup is not None else None}
