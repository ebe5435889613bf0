"""Operator profiles read as data (module `stackcheck_ops` of app scripts): where each operator ran,
what crossed between host and device, which calls made the host wait, what was compiled, and the
fallback warnings frameworks print. Pure functions over a profiler's events or a Chrome trace
(torch.profiler/kineto for CUDA and ROCm, torch 1.x's legacy export, torch_npu's trace_view.json),
so a trace recorded on any machine can be judged on any other. Imports nothing but the standard
library; runs on Python 3.6 and later.

    analysis = stackcheck_ops.analyze(stackcheck_ops.events_from_trace(json.load(f)))
"""
import re

MAX_EVENTS = 500000  # trace events read; more are counted, not kept
MAX_OPS_LISTED = 200  # operators listed in a result, by time
MAX_SHAPES = 4  # distinct input shapes kept per operator
MAX_CALLERS = 8  # callers kept per copy or sync kind

# Operators that do no arithmetic (views, metadata, allocation, dispatch wrappers): their running
# on the host is no fallback.
NO_WORK = frozenset((
    "aten::view", "aten::reshape", "aten::_reshape_alias", "aten::as_strided", "aten::as_strided_",
    "aten::t", "aten::transpose", "aten::permute", "aten::expand", "aten::expand_as",
    "aten::slice", "aten::select", "aten::unsqueeze", "aten::squeeze", "aten::detach",
    "aten::detach_", "aten::alias", "aten::empty", "aten::empty_strided", "aten::empty_like",
    "aten::resize_", "aten::to", "aten::_to_copy", "aten::contiguous", "aten::resolve_conj",
    "aten::resolve_neg", "aten::lift", "aten::lift_fresh", "aten::size", "aten::stride",
    "aten::numel", "aten::split", "aten::chunk", "aten::narrow", "aten::unbind", "aten::flatten",
    "aten::unflatten", "aten::view_as", "aten::result_type", "aten::_unsafe_view", "aten::set_",
    "aten::item", "aten::_local_scalar_dense", "aten::is_nonzero", "aten::record_stream",
    "aten::_has_compatible_shallow_copy_type", "aten::requires_grad_", "aten::output_nr",
    "aten::_version", "aten::dim", "aten::is_floating_point", "aten::scalar_tensor",
    "aten::zeros", "aten::ones", "aten::full", "aten::empty_like", "detach", "aten::new_empty",
    "aten::new_empty_strided", "aten::_nested_tensor_from_mask_left_aligned",
))

# Operators that make the host wait for the device: a value the host needs (item, a bool, the
# size of a result).
SYNC_OPS = {
    "aten::_local_scalar_dense": "item",
    "aten::nonzero": "nonzero",
    "aten::nonzero_static": "nonzero",
    "aten::_unique2": "unique",
    "aten::unique_consecutive": "unique",
    "aten::unique_dim": "unique",
    "aten::equal": "equal",
}
SYNC_RUNTIME = re.compile(r"(?:cuda|hip)(?:Stream|Device|Event)Synchronize|"
                          r"aclrtSynchronize(?:Stream|Device|Event)")
COMPILE_RUNTIME = re.compile(r"aclopCompile")
MEMCPY_KIND = re.compile(r"memcpy|Copy(?:HostToDevice|DeviceToHost|DeviceToDevice)|MEMCPY",
                         re.IGNORECASE)

# Trace categories: kineto (torch 1.8 to 2.x, CUDA and ROCm) and torch_npu spell them so.
OP_CATS = ("cpu_op", "operator")
KERNEL_CATS = ("kernel",)
MEMCPY_CATS = ("gpu_memcpy", "memcpy")
MEMSET_CATS = ("gpu_memset", "memset")
RUNTIME_CATS = ("cuda_runtime", "runtime", "cuda_driver", "hip_runtime", "hip_driver")
STEP = re.compile(r"^ProfilerStep#\d+$")


def _num(value, default=None):
    try:
        value = float(value)
    except (TypeError, ValueError):
        return default
    return value if value == value and value not in (float("inf"), float("-inf")) else default


def _shapes(value):
    """Input shapes as text, "8x16, 16, []": from kineto's [[8, 16], [16], []] or torch_npu's
    "8,16;16;"."""
    if isinstance(value, str):
        value = [part.split(",") if part else [] for part in value.replace(" ", "").split(";")]
    if not isinstance(value, (list, tuple)) or not value:
        return None
    parts = []
    for dims in value[:16]:
        if isinstance(dims, (list, tuple)):
            parts.append("x".join(str(d) for d in dims[:8]) or "[]")
        else:
            parts.append("[]")
    return ", ".join(parts)[:200] if any(p != "[]" for p in parts) else None


def _all_scalar(shapes):
    """True when every input is a scalar or empty: host-side bookkeeping, not a fallback."""
    if shapes is None:
        return False
    for part in shapes.split(", "):
        n = 1
        for d in part.split("x") if part != "[]" else []:
            try:
                n *= int(d)
            except ValueError:
                return False
        if n > 1:
            return False
    return True


def _process_names(raw):
    names = {}
    for e in raw:
        if isinstance(e, dict) and e.get("ph") == "M" and e.get("name") == "process_name":
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            names[e.get("pid")] = str(args.get("name", ""))
    return names


def _device_of(e, args, pnames):
    """The device a device-side event ran on: "cuda", "npu", "npu:ai_cpu"..."""
    task = args.get("Task Type")
    if task is not None:
        return "npu:ai_cpu" if str(task).upper() == "AI_CPU" else "npu"
    pname = pnames.get(e.get("pid"), "")
    if "Ascend" in pname or "NPU" in pname:
        return "npu"
    return "cuda"  # kineto's device events: CUDA, and ROCm builds, which torch calls cuda too


def _kind_of(e, args, pnames):
    cat = str(e.get("cat", "")).lower()
    name = str(e.get("name", ""))
    if "Task Type" in args:
        return "memcpy" if MEMCPY_KIND.search(str(args.get("Task Type"))) else "kernel"
    if cat in OP_CATS or (not cat and pnames.get(e.get("pid"), e.get("pid")) == "CPU functions"):
        return "step" if STEP.match(name) else "op"
    if cat in KERNEL_CATS:
        return "kernel"
    if cat in MEMCPY_CATS:
        return "memcpy"
    if cat in MEMSET_CATS:
        return "memset"
    if cat in RUNTIME_CATS or name.startswith("AscendCL@"):
        return "runtime"
    if STEP.match(name):
        return "step"
    return None


def _direction(name, args):
    text = "%s %s" % (name, args.get("Task Type", ""))
    for pattern, direction in (("HtoD", "host_to_device"), ("HostToDevice", "host_to_device"),
                               ("DtoH", "device_to_host"), ("DeviceToHost", "device_to_host"),
                               ("DtoD", "device_to_device"), ("DeviceToDevice", "device_to_device"),
                               ("PtoP", "device_to_device")):
        if pattern in text:
            return direction
    return "unknown"


def _normal(e, kind, args, pnames):
    ts, dur = _num(e.get("ts")), _num(e.get("dur"), 0.0)
    if ts is None:
        return None
    ev = {"kind": kind, "name": str(e.get("name", "?"))[:300], "ts": ts, "dur": max(dur, 0.0),
          "pid": e.get("pid"), "tid": e.get("tid"), "ext": args.get("External id"),
          "corr": args.get("correlation")}
    if kind == "op":
        ev["shapes"] = _shapes(args.get("Input Dims", args.get("Input dims")))
    elif kind in ("kernel", "memcpy", "memset"):
        ev["device"] = _device_of(e, args, pnames)
        ev["bytes"] = _num(args.get("bytes"))
        if kind == "memcpy":
            ev["direction"] = _direction(ev["name"], args)
    return ev


def events_from_trace(trace):
    """Normalised events from a Chrome trace: a dict with traceEvents or a plain list (torch 1.x's
    legacy export). Returns {"events": [...], "flows": [...], "dropped": n, "format": "..."}.
    Anything malformed is skipped, never raised on."""
    raw = trace.get("traceEvents") if isinstance(trace, dict) else trace
    if not isinstance(raw, list):
        return {"events": [], "flows": [], "dropped": 0, "format": "not a trace"}
    pnames = _process_names(raw[:MAX_EVENTS])
    events, flows, dropped = [], [], max(0, len(raw) - MAX_EVENTS)
    for e in raw[:MAX_EVENTS]:
        if not isinstance(e, dict):
            continue
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        if e.get("ph") in ("s", "f") and e.get("id") is not None:
            ts = _num(e.get("ts"))
            if ts is not None:
                flows.append({"ph": e["ph"], "id": e.get("id"), "pid": e.get("pid"),
                              "tid": e.get("tid"), "ts": ts})
            continue
        if e.get("ph") != "X":
            continue
        kind = _kind_of(e, args, pnames)
        ev = _normal(e, kind, args, pnames) if kind else None
        if ev is not None:
            events.append(ev)
    fmt = "kineto" if any("cat" in e for e in raw[:100] if isinstance(e, dict)) else "legacy"
    if any(ev.get("device", "").startswith("npu") for ev in events):
        fmt = "torch_npu"
    return {"events": events, "flows": flows, "dropped": dropped, "format": fmt}


def events_from_profiler(function_events):
    """Normalised events from torch.profiler's events() (FunctionEvent objects, torch 1.8 to 2.x):
    the path for builds without kineto's trace fields (Debian's torch 1.13 exports a legacy trace
    without shapes). Device kernels the profiler attached to an op are attributed to it."""
    events = []
    for fe in function_events:
        if len(events) >= MAX_EVENTS:
            break
        dev = str(getattr(fe, "device_type", "CPU")).split(".")[-1].lower()
        if dev != "cpu":
            continue  # the device copy of a kernel; it is attributed through the op below
        tr = getattr(fe, "time_range", None)
        if tr is None:
            continue
        name = str(fe.name)
        shapes = getattr(fe, "input_shapes", None)
        op = {"kind": "step" if STEP.match(name) else "op", "name": name[:300],
              "ts": float(tr.start), "dur": max(float(tr.end - tr.start), 0.0),
              "pid": "host", "tid": getattr(fe, "thread", 0), "ext": None, "corr": None,
              "shapes": _shapes(shapes)}
        index = len(events)
        events.append(op)
        for k in getattr(fe, "kernels", None) or []:
            kname = str(getattr(k, "name", "kernel"))
            kind = "memcpy" if MEMCPY_KIND.search(kname) else "kernel"
            ev = {"kind": kind, "name": kname[:300], "ts": op["ts"],
                  "dur": float(getattr(k, "duration", 0) or 0), "pid": "device", "tid": 0,
                  "ext": None, "corr": None, "device": "cuda", "bytes": None, "op": index}
            if kind == "memcpy":
                ev["direction"] = _direction(kname, {})
            events.append(ev)
    return {"events": events, "flows": [], "dropped": 0, "format": "profiler events"}


# --- the operator tree and the attribution of device work -------------------------------------

def _inside(op, parent):
    """True when op nests in parent: it starts inside it and ends by its end, within the 1 us a
    legacy trace's rounding to whole microseconds may add."""
    end, parent_end = op["ts"] + op["dur"], parent["ts"] + parent["dur"]
    return parent["ts"] <= op["ts"] < parent_end and end <= parent_end + 1.0


def _build_tree(ops):
    """Nests each thread's ops by time: parent index, children, self host time. ops is a list of
    op events, annotated in place; returns the per-thread lists of top-level ops in time order."""
    by_thread = {}
    for i, op in enumerate(ops):
        op["parent"], op["children"], op["index"] = None, [], i
        by_thread.setdefault((op["pid"], op["tid"]), []).append(op)
    roots = {}
    for key, lst in by_thread.items():
        lst.sort(key=lambda o: (o["ts"], -o["dur"]))
        stack, tops = [], []
        for op in lst:
            while stack and not _inside(op, stack[-1]):
                stack.pop()
            if stack:
                op["parent"] = stack[-1]["index"]
                stack[-1]["children"].append(op["index"])
            else:
                tops.append(op)
            stack.append(op)
        roots[key] = tops
    for op in ops:
        child_time = sum(ops[c]["dur"] for c in op["children"])
        op["self_host"] = max(op["dur"] - child_time, 0.0)
    return roots


def _innermost(ops, tops, ts):
    """The innermost op of one thread (its top-level ops in tops, in time order) that contains ts."""
    lo, hi = 0, len(tops)
    while lo < hi:
        mid = (lo + hi) // 2
        if tops[mid]["ts"] <= ts:
            lo = mid + 1
        else:
            hi = mid
    if lo == 0:
        return None
    op = tops[lo - 1]
    if ts > op["ts"] + op["dur"]:
        return None
    while True:
        inner = None
        for c in op["children"]:
            child = ops[c]
            if child["ts"] <= ts <= child["ts"] + child["dur"]:
                inner = child
        if inner is None:
            return op["index"]
        op = inner


def _op_at(ops, roots, pid, tid, ts):
    """The innermost op at ts on thread (pid, tid); torch_npu puts CANN's API calls in a process
    of their own on the same thread ids, so the thread alone is tried next."""
    tops = roots.get((pid, tid))
    if tops is None:
        tops = next((t for (p, t_id), t in roots.items() if t_id == tid), [])
    return _innermost(ops, tops, ts)


def _attribute(events, flows, ops, roots):
    """Sets dev["op"] (the index into ops of the op that launched it) on every device event, by
    the op's External id (kineto), the runtime call with the same correlation id, or a flow
    arrow from the op (torch_npu's torch_to_npu)."""
    by_ext = {}
    for op in ops:
        if op.get("ext") is not None:
            by_ext.setdefault(op["ext"], op["index"])
    runtime_by_corr = {}
    for ev in events:
        if ev["kind"] == "runtime" and ev.get("corr") is not None:
            runtime_by_corr.setdefault(ev["corr"], ev)
    flow_start = {f["id"]: f for f in flows if f["ph"] == "s"}
    device_at = {}
    for ev in events:
        if ev["kind"] in ("kernel", "memcpy", "memset"):
            device_at.setdefault((ev["pid"], ev["tid"], ev["ts"]), ev)
    for f in flows:
        start = flow_start.get(f["id"])
        dev = device_at.get((f["pid"], f["tid"], f["ts"])) if f["ph"] == "f" else None
        if start is not None and dev is not None and "op" not in dev:
            dev["op"] = _op_at(ops, roots, start["pid"], start["tid"], start["ts"])
    for ev in events:
        if ev["kind"] not in ("kernel", "memcpy", "memset") or ev.get("op") is not None:
            continue
        if ev.get("ext") is not None and ev["ext"] in by_ext:
            ev["op"] = by_ext[ev["ext"]]
            continue
        rt = runtime_by_corr.get(ev.get("corr")) if ev.get("corr") is not None else None
        if rt is not None:
            ev["op"] = _op_at(ops, roots, rt["pid"], rt["tid"], rt["ts"])


def _top_level(ops, index):
    while ops[index]["parent"] is not None:
        index = ops[index]["parent"]
    return ops[index]["name"]


def _mark_device_work(events, ops):
    """Each op's own device time, and the devices its own and its children's work ran on."""
    for op in ops:
        op["self_device"], op["devices"], op["subtree_device"] = 0.0, set(), False
    for ev in events:
        if ev["kind"] in ("kernel", "memcpy", "memset") and ev.get("op") is not None:
            op = ops[ev["op"]]
            op["self_device"] += ev["dur"]
            while op is not None and ev["device"] not in op["devices"]:
                op["devices"].add(ev["device"])
                op["subtree_device"] = True
                op = ops[op["parent"]] if op["parent"] is not None else None


def _on_host(op, active_threads):
    """A leaf op that does arithmetic, on a thread that drives the device, with no device work of
    its own: it ran on the host."""
    return (not op["children"] and not op["subtree_device"] and op["name"] not in NO_WORK
            and (op["pid"], op["tid"]) in active_threads and not _all_scalar(op.get("shapes")))


def _aggregate(ops, accelerator, active_threads):
    table = {}
    for op in ops:
        row = table.get(op["name"])
        if row is None:
            row = table[op["name"]] = {"name": op["name"], "count": 0, "host_self_us": 0.0,
                                       "device_self_us": 0.0, "devices": set(), "host_calls": 0,
                                       "shapes": [], "called_from": {}}
        row["count"] += 1
        row["host_self_us"] += op["self_host"]
        row["device_self_us"] += op["self_device"]
        row["devices"] |= op["devices"]
        on_host = accelerator is not None and _on_host(op, active_threads)
        if not op["devices"]:
            row["devices"].add("cpu")
        if on_host:
            row["host_calls"] += 1
            caller = _top_level(ops, op["index"])
            row["called_from"][caller] = row["called_from"].get(caller, 0) + 1
        if op.get("shapes") and op["shapes"] not in row["shapes"] and \
                len(row["shapes"]) < MAX_SHAPES:
            row["shapes"].append(op["shapes"])
    return table


def _ms(us):
    return round(us / 1000.0, 4)


def _row_json(row, steps):
    return {"name": row["name"], "count": row["count"],
            "per_step": round(row["count"] / float(steps), 3),
            "host_self_ms": _ms(row["host_self_us"]), "device_self_ms": _ms(row["device_self_us"]),
            "devices": sorted(row["devices"]) or ["cpu"], "host_calls": row["host_calls"],
            "input_shapes": row["shapes"]}


def _callers_json(counter):
    items = sorted(counter.items(), key=lambda kv: (-kv[1]["count"], kv[0]))[:MAX_CALLERS]
    return [{"op": k, "count": v["count"], "bytes": v.get("bytes")} for k, v in items]


def _bump(counter, key, nbytes=None):
    c = counter.setdefault(key, {"count": 0, "bytes": None})
    c["count"] += 1
    if nbytes is not None:
        c["bytes"] = (c["bytes"] or 0) + int(nbytes)


def _traffic(events, ops, roots, steps):
    copies = {}
    for ev in events:
        if ev["kind"] != "memcpy":
            continue
        d = copies.setdefault(ev["direction"], {"count": 0, "bytes": 0, "bytes_known": True,
                                                 "callers": {}})
        d["count"] += 1
        if ev.get("bytes") is None:
            d["bytes_known"] = False
        else:
            d["bytes"] += int(ev["bytes"])
        caller = _top_level(ops, ev["op"]) if ev.get("op") is not None else "(no op)"
        _bump(d["callers"], caller, ev.get("bytes"))
    syncs, sync_callers = {}, {}
    for op in ops:
        kind = SYNC_OPS.get(op["name"])
        if kind:
            syncs[kind] = syncs.get(kind, 0) + 1
            _bump(sync_callers, _top_level(ops, op["index"]))
    for ev in events:
        if ev["kind"] == "runtime" and SYNC_RUNTIME.search(ev["name"]):
            syncs["synchronize"] = syncs.get("synchronize", 0) + 1
            idx = _op_at(ops, roots, ev["pid"], ev["tid"], ev["ts"])
            _bump(sync_callers, _top_level(ops, idx) if idx is not None else "(no op)")
    out = {"copies": {}, "syncs": {"count": sum(syncs.values()), "by_kind": syncs,
                                   "per_step": round(sum(syncs.values()) / float(steps), 3),
                                   "callers": _callers_json(sync_callers)}}
    for direction, d in sorted(copies.items()):
        out["copies"][direction] = {
            "count": d["count"], "per_step": round(d["count"] / float(steps), 3),
            "bytes": d["bytes"] if d["bytes_known"] else None,
            "bytes_per_step": round(d["bytes"] / float(steps)) if d["bytes_known"] else None,
            "callers": _callers_json(d["callers"])}
    return out


def _compiles(events, ops, roots):
    found, shapes = 0, {}
    for ev in events:
        if ev["kind"] != "runtime" or not COMPILE_RUNTIME.search(ev["name"]):
            continue
        found += 1
        idx = _op_at(ops, roots, ev["pid"], ev["tid"], ev["ts"])
        key = "%s(%s)" % (ops[idx]["name"], ops[idx].get("shapes") or "?") if idx is not None \
            else "(no op)"
        shapes[key] = shapes.get(key, 0) + 1
    listed = sorted(shapes.items(), key=lambda kv: -kv[1])[:MAX_CALLERS]
    return {"count": found, "triggered_by": [{"op": k, "count": v} for k, v in listed]}


def _infer_accelerator(events):
    kinds = sorted({ev["device"] for ev in events if ev.get("device")})
    if not kinds:
        return None
    return "npu" if any(k.startswith("npu") for k in kinds) else kinds[0]


def analyze(parsed, accelerator=None, steps=None, top=15):
    """The profile of normalised events (from events_from_trace or events_from_profiler):
    {accelerator, steps, ops[], top[], fallback{}, traffic{}, device_compiles{}, ...}.
    accelerator is the device the step's tensors live on ("cuda", "npu"), or None for the CPU;
    when None it is inferred from the device events. steps divides counts into per-step ones;
    when None the trace's ProfilerStep#N ranges are counted (else 1)."""
    events = parsed.get("events", [])
    ops = [ev for ev in events if ev["kind"] == "op"]
    roots = _build_tree(ops)
    _attribute(events, parsed.get("flows", []), ops, roots)
    _mark_device_work(events, ops)
    if accelerator is None:
        accelerator = _infer_accelerator(events)
    if steps is None:
        steps = sum(1 for ev in events if ev["kind"] == "step") or 1
    steps = max(int(steps), 1)
    active = {(op["pid"], op["tid"]) for op in ops if op["subtree_device"]}
    table = _aggregate(ops, accelerator, active)
    timed = "device_self_us" if any(r["device_self_us"] > 0 for r in table.values()) \
        else "host_self_us"
    rows = sorted(table.values(), key=lambda r: (-r[timed], r["name"]))
    fallback = [r for r in rows if r["host_calls"] > 0]
    fallback.sort(key=lambda r: (-r["host_self_us"], r["name"]))
    total = sum(r[timed] for r in rows) or 1.0
    return {
        "accelerator": accelerator, "steps": steps, "format": parsed.get("format"),
        "events": len(events), "events_dropped": parsed.get("dropped", 0),
        "ops_total": len(rows), "ranked_by": "device" if timed == "device_self_us" else "host",
        "ops": [_row_json(r, steps) for r in rows[:MAX_OPS_LISTED]],
        "top": [dict(_row_json(r, steps), share=round(r[timed] / total, 4)) for r in rows[:top]],
        "fallback": {"count": len(fallback), "host_ms": _ms(sum(r["host_self_us"]
                                                                for r in fallback)),
                     "ops": [dict(_row_json(r, steps), called_from=sorted(
                         r["called_from"], key=lambda k: -r["called_from"][k])[:MAX_CALLERS])
                         for r in fallback[:MAX_OPS_LISTED]]},
        "traffic": _traffic(events, ops, roots, steps),
        "device_compiles": _compiles(events, ops, roots),
    }


# --- warnings that name a fallback ---------------------------------------------------------------

# torch_npu: "[W VariableFallbackKernel.cpp:51] Warning: CAUTION: The operator 'aten::isin...' is
# not currently supported on the NPU backend and will fall back to run on the CPU. This may have
# performance implications. (function npu_cpu_fallback)"; MPS prints the same sentence as a
# UserWarning. Intel XPU: "Aten Op fallback from XPU to CPU happends". Samples with their sources
# are in tests/data/ops/.
CPU_FALLBACK = re.compile(r"The operator '([^']{1,200})' is not currently supported on the "
                          r"(\S{1,40}) backend and will fall back to run on the CPU")
XPU_FALLBACK = re.compile(r"Aten Op fallback from (\S{1,40}) to CPU")
# Slower paths on the device itself: a BLAS backend replaced, a fallback convolution solver, an
# attention kernel not used.
DEVICE_FALLBACKS = (
    (re.compile(r"Attempting to use hipBLASLt on an? unsupported architecture"),
     "hipBLASLt replaced by hipBLAS"),
    (re.compile(r"MIOpen\(HIP\): Warning \[[^\]\n]{0,80}\] \[GetSolutionsFallback"),
     "MIOpen fallback convolution solver"),
    (re.compile(r"(Flash attention|Memory efficient|CuDNN attention) kernel not used because"),
     None),
    (re.compile(r"Torch was not compiled with flash attention"), "flash attention not compiled"),
)


def parse_fallback_warnings(text, limit=64):
    """Fallbacks named in a log (a string). Returns [{kind: "cpu"|"device", operator, backend,
    what, count, sample}], at most limit entries. Lines a terminal wrapped are joined first for
    the CPU sentence, whose operator name may be cut anywhere."""
    found, order = {}, []

    def note(key, entry, sample):
        if key not in found:
            if len(order) >= limit:
                return
            entry.update(count=0, sample=sample[:300])
            found[key] = entry
            order.append(key)
        found[key]["count"] += 1

    joined = re.sub(r"\r?\n", "", text)
    for m in CPU_FALLBACK.finditer(joined):
        note(("cpu", m.group(1), m.group(2)),
             {"kind": "cpu", "operator": m.group(1), "backend": m.group(2),
              "what": "%s ran on the CPU" % m.group(1)}, m.group(0))
    for m in XPU_FALLBACK.finditer(joined):
        note(("cpu", None, m.group(1)), {"kind": "cpu", "operator": None, "backend": m.group(1),
                                          "what": "an operator ran on the CPU"}, m.group(0))
    for line in text.splitlines():
        for pattern, what in DEVICE_FALLBACKS:
            m = pattern.search(line)
            if m:
                label = what or "%s kernel not used" % m.group(1)
                note(("device", label), {"kind": "device", "operator": None, "backend": None,
                                         "what": label}, line.strip())
    return [found[k] for k in order]


# --- recompiles named in a log --------------------------------------------------------------------

# TorchDynamo: "Recompiling function forward in /x.py:10 ... triggered by the following guard
# failure(s): - tensor 'L['x']' size mismatch at index 0. expected 8, actual 16", and at the cache
# limit "torch._dynamo hit config.cache_size_limit (8)".
RECOMPILE = re.compile(r"Recompiling function (\S{1,200})")
CACHE_LIMIT = re.compile(r"hit config\.(?:recompile_limit|cache_size_limit) \((\d+)\)")
SIZE_MISMATCH = re.compile(r"tensor '([^\n]{1,120}?)' size mismatch at index (\d+)\. expected "
                           r"(\d+), actual (\d+)")


def parse_recompile_log(text, limit=32):
    """{recompiles, cache_limit_hit, functions[], shape_changes[{tensor, index, expected,
    actual}]} from TorchDynamo's log text."""
    shapes = []
    for m in SIZE_MISMATCH.finditer(text):
        entry = {"tensor": m.group(1), "index": int(m.group(2)), "expected": int(m.group(3)),
                 "actual": int(m.group(4))}
        if entry not in shapes and len(shapes) < limit:
            shapes.append(entry)
    functions = []
    for m in RECOMPILE.finditer(text):
        if m.group(1) not in functions and len(functions) < limit:
            functions.append(m.group(1))
    limit_hit = CACHE_LIMIT.search(text)
    return {"recompiles": len(RECOMPILE.findall(text)), "functions": functions,
            "cache_limit_hit": int(limit_hit.group(1)) if limit_hit else None,
            "shape_changes": shapes}
