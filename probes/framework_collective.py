"""framework.collective: one process per rank with torch.distributed on the backend torch's build
implies (nccl for CUDA and ROCm/DTK builds, where it loads RCCL; hccl with torch_npu; gloo on the
CPU), an all-reduce and a broadcast of known values, verified and timed, and the collective and
runtime libraries each rank mapped. Run as `prog CONFIG.json` it is the launcher: it starts the
ranks as subprocesses of the same interpreter (`prog rank R CONFIG.json`), waits for them with a
deadline on the rendezvous and one on the collectives, kills the ranks that are left, and writes
the whole result to STACKCHECK_RESULT. Python 3.6 and later; torch 1.8 to 2.x.
"""
import builtins
import datetime
import json
import os
import signal
import socket
import subprocess
import sys
import time
import traceback

ELEMENTS = 1024  # verified elements
TIMED_BYTES = 4 << 20  # the all-reduce that is timed
TIMED_RUNS = 5
LIBRARY_STEMS = ("libnccl", "librccl", "libhccl", "libgloo", "libmpi", "libtorch_cpu",
                 "libamdhip64", "libcudart", "libascendcl")


def progress(cfg, rank, phase):
    try:
        with open(os.path.join(cfg["dir"], "rank%d.phase" % rank), "w") as f:
            f.write(phase)
    except OSError:
        pass


def mapped_libraries():
    found = {}
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                path = parts[5].strip() if len(parts) == 6 else ""
                base = os.path.basename(path)
                if path.startswith("/") and base.startswith(LIBRARY_STEMS) and ".so" in base:
                    found[path] = os.path.realpath(path)
    except OSError:
        pass
    return [{"path": p, "realpath": r} for p, r in sorted(found.items())]


def pick_backend(torch):
    """(backend, device type, build) from what this torch can use."""
    build = "hip" if getattr(torch.version, "hip", None) else (
        "cuda" if getattr(torch.version, "cuda", None) else None)
    if torch.cuda.is_available() and torch.cuda.device_count() > 0:
        return "nccl", "cuda", build
    try:
        import importlib.util
        if importlib.util.find_spec("torch_npu") is not None:
            import torch_npu  # noqa: F401  (registers torch.npu and hccl)
            if torch.npu.is_available() and torch.npu.device_count() > 0:
                return "hccl", "npu", "npu"
    except Exception:
        pass
    return "gloo", "cpu", build


def safe(fn, default):
    try:
        return fn()
    except Exception:
        return default


def decided_world(torch, cfg):
    """The world when stackcheck did not know it yet (the probe started before framework.torch
    was final): one rank per device torch counts, by framework.torch's own rule, else per device
    the NPU runtime listed, at least one."""
    n = safe(torch.cuda.device_count, 0) if safe(torch.cuda.is_available, False) else 0
    if not isinstance(n, int) or n < 1:
        n = cfg.get("acl_devices") or 0
    return max(int(n), 1)


def synchronize(torch, kind):
    mod = getattr(torch, kind, None) if kind != "cpu" else None
    if mod is not None:
        mod.synchronize()


def timed(fn, torch, kind):
    start = time.monotonic()
    fn()
    synchronize(torch, kind)
    return (time.monotonic() - start) * 1000.0


def collectives(torch, dist, rank, world, device, kind):
    """The verified all-reduce and broadcast, then the timed all-reduce."""
    out = {}
    x = torch.full((ELEMENTS,), float(rank + 1), device=device)
    out["all_reduce_ms"] = round(timed(lambda: dist.all_reduce(x), torch, kind), 3)
    expected = world * (world + 1) / 2.0
    got = x.cpu()
    out["all_reduce"] = {"expected": expected, "first": float(got[0]), "elements": ELEMENTS,
                         "wrong": int((got != expected).sum())}
    y = torch.arange(ELEMENTS, dtype=torch.float32, device=device) if rank == 0 else torch.zeros(
        ELEMENTS, device=device)
    out["broadcast_ms"] = round(timed(lambda: dist.broadcast(y, src=0), torch, kind), 3)
    want = torch.arange(ELEMENTS, dtype=torch.float32)
    out["broadcast"] = {"wrong": int((y.cpu() != want).sum())}
    big = torch.ones(TIMED_BYTES // 4, device=device)
    runs = sorted(timed(lambda: dist.all_reduce(big), torch, kind) for _ in range(TIMED_RUNS))
    out["timed"] = {"bytes": TIMED_BYTES, "runs": TIMED_RUNS,
                    "median_ms": round(runs[len(runs) // 2], 3)}
    return out


def rank_main(rank, cfg):
    progress(cfg, rank, "import torch")
    start = time.monotonic()
    import torch
    import torch.distributed as dist
    warm = getattr(builtins, "_stackcheck_torch_preimport", None)
    import_ms = warm["import_ms"] if warm else (time.monotonic() - start) * 1000.0
    out = {"rank": rank, "import_ms": round(import_ms, 1)}
    if cfg.get("world") is None:  # rank 0 alone so far: it decides, and the launcher starts the rest
        cfg["world"] = decided_world(torch, cfg)
        with open(os.path.join(cfg["dir"], "world"), "w") as f:
            f.write(str(cfg["world"]))
    backend, kind, build = pick_backend(torch)
    out.update(backend=backend, device_type=kind, build=build, torch=torch.__version__)
    device = "cpu"
    if kind != "cpu":
        device = "%s:%d" % (kind, rank % getattr(torch, kind).device_count())
        getattr(torch, kind).set_device(device)
    out["device"] = device
    progress(cfg, rank, "init_process_group (rendezvous)")
    start = time.monotonic()
    dist.init_process_group(backend, init_method="tcp://127.0.0.1:%d" % cfg["port"], rank=rank,
                            world_size=cfg["world"],
                            timeout=datetime.timedelta(seconds=cfg["deadline_s"] * 2))
    out["init_ms"] = round((time.monotonic() - start) * 1000.0, 1)
    progress(cfg, rank, "ready")
    progress(cfg, rank, "collectives")
    out.update(collectives(torch, dist, rank, cfg["world"], device, kind))
    out["libraries"] = mapped_libraries()
    progress(cfg, rank, "barrier")
    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(cfg["dir"], "rank%d.json" % rank), "w") as f:
        json.dump(out, f)
    progress(cfg, rank, "done")


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def read_text(path, default=None):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


class ForkedRank:
    """A rank forked from this process, which a warm interpreter made with torch imported: the
    part of Popen the launcher uses. It stays in the launcher's process group, so whatever ends
    the launcher's group ends it too."""

    def __init__(self, rank, cfg, env, log):
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid, self.returncode = os.fork(), None
        if self.pid == 0:
            status = 1
            try:
                os.dup2(log.fileno(), 1)
                os.dup2(log.fileno(), 2)
                os.environ.clear()
                os.environ.update(env)
                rank_main(rank, cfg)
                status = 0
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)

    def poll(self):
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = (-os.WTERMSIG(status) if os.WIFSIGNALED(status)
                                   else os.WEXITSTATUS(status))
        return self.returncode

    def kill(self):
        os.kill(self.pid, signal.SIGKILL)

    def wait(self):
        while self.poll() is None:
            time.sleep(0.01)


def start_rank(cfg, config_path, rank):
    env = dict(os.environ)
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")  # the ranks meet on this host only
    world = cfg["world"] if cfg.get("world") is not None else ""
    env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"] = str(rank), str(world), str(rank)
    with open(os.path.join(cfg["dir"], "rank%d.log" % rank), "w") as log:
        if getattr(builtins, "_stackcheck_torch_preimport", None) is not None:
            return ForkedRank(rank, cfg, env, log)
        return subprocess.Popen([cfg["executable"], cfg["self"], "rank", str(rank), config_path],
                                env=env, stdout=log, stderr=log, start_new_session=True)


def rank0_world(cfg, rank0):
    """The world rank 0 decided, waiting for it within the start-up deadline; 1 when rank 0
    ended or the deadline passed first (its result then says why)."""
    start = time.monotonic()
    while True:
        ended = rank0.poll() is not None or time.monotonic() - start > cfg["startup_s"]
        text = read_text(os.path.join(cfg["dir"], "world"))
        if text and text.strip().isdigit():
            return max(int(text), 1)
        if ended:
            return 1
        time.sleep(0.005)


def start_ranks(cfg, config_path):
    """Every rank; when the world is not known yet, rank 0 first, which decides it."""
    procs = [start_rank(cfg, config_path, 0)] if cfg.get("world") is None else []
    if procs:
        cfg["world"] = rank0_world(cfg, procs[0])
        with open(config_path, "w") as f:
            json.dump(cfg, f)
    for rank in range(len(procs), cfg["world"]):
        procs.append(start_rank(cfg, config_path, rank))
    return procs


def phases(cfg):
    return [read_text(os.path.join(cfg["dir"], "rank%d.phase" % r), "not started")
            for r in range(cfg["world"])]


def wait(procs, cfg):
    """Waits for the ranks: the rendezvous within startup_s, the collectives within deadline_s
    after every rank is ready. Returns (what ran out or None, seconds waited on the collectives)."""
    start, ready_at = time.monotonic(), None
    while any(p.poll() is None for p in procs):
        now = time.monotonic()
        if ready_at is None and all(ph not in ("not started", "import torch",
                                               "init_process_group (rendezvous)")
                                    for ph in phases(cfg)):
            ready_at = now
        if ready_at is None and now - start > cfg["startup_s"]:
            return "startup", 0.0
        if ready_at is not None and now - ready_at > cfg["deadline_s"]:
            return "collectives", now - ready_at
        time.sleep(0.01)
    return None, (time.monotonic() - ready_at) if ready_at else 0.0


def kill(procs):
    for p in procs:
        if p.poll() is None:
            try:
                if isinstance(p, ForkedRank):
                    p.kill()
                else:
                    os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
        p.wait()


def launcher(config_path):
    with open(config_path) as f:
        cfg = json.load(f)
    cfg["port"] = free_port()
    with open(config_path, "w") as f:
        json.dump(cfg, f)
    procs = start_ranks(cfg, config_path)
    try:
        expired, waited = wait(procs, cfg)
        seen = phases(cfg)
    finally:
        kill(procs)
    ranks = []
    for rank, p in enumerate(procs):
        r = json.loads(read_text(os.path.join(cfg["dir"], "rank%d.json" % rank), "null"))
        log = read_text(os.path.join(cfg["dir"], "rank%d.log" % rank), "")
        ranks.append({"rank": rank, "exit_code": p.returncode, "phase": seen[rank], "result": r,
                      "log_tail": log[-1500:] if r is None else None})
    result = {"world": cfg["world"], "deadline_s": cfg["deadline_s"],
              "startup_s": cfg["startup_s"], "expired": expired,
              "collectives_s": round(waited, 3), "ranks": ranks}
    with open(os.environ["STACKCHECK_RESULT"], "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "rank":
        with open(sys.argv[3]) as f:
            rank_main(int(sys.argv[2]), json.load(f))
    else:
        launcher(sys.argv[1])
