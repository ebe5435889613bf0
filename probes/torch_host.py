# The warm interpreter of a parallel run: started at the run's first moment in the interpreter the
# framework layer uses (embedded or as a subprocess, like the probes), it imports torch once, then
# serves the framework probes: each request is forked into a worker that runs the probe's own code
# with torch already imported and the requester's stdout, stderr and step pipe. The import itself
# touches no device, so every worker initialises its devices as a fresh process would.
#
# Run as `prog LISTEN_FD MODE`. A request is one JSON line {"mode", "code_file", "argv", "result",
# "step", "first"} sent with SCM_RIGHTS carrying the requester's stdout, stderr (and step
# pipe when "step" is true); the answers are lines: "started PID", then "done EXITCODE" from the
# worker once its code has run (before the exit of a process this size, which takes a while), or
# "status WAITSTATUS" from the host when the worker died without saying so; or "refused WHY". A
# requester that goes away has its worker killed.
import builtins
import json
import os
import select
import signal
import socket
import sys
import time
import traceback
import warnings

MODE = sys.argv[2] if len(sys.argv) > 2 else "subprocess"
REQUEST_MAX = 1 << 16
READ_TIMEOUT_S = 5.0


def import_torch():
    """What the probes would have seen importing torch themselves: the time it took, the error it
    raised."""
    start = time.monotonic()
    error = None
    try:
        import torch  # noqa: F401
    except BaseException as exc:  # a failed import is replayed to each worker
        error = exc
    return {"import_ms": (time.monotonic() - start) * 1000.0, "error": error}


def well_formed(req):
    return (isinstance(req, dict) and isinstance(req.get("code_file"), str)
            and isinstance(req.get("result"), str) and isinstance(req.get("argv"), list))


def read_request(conn):
    """(request, fds) from a requester, or (None, fds) when what came is no request; the fds it
    received are closed when reading fails."""
    fds = []
    try:
        data, ancillary, _, _ = conn.recvmsg(REQUEST_MAX, socket.CMSG_SPACE(3 * 4))
        for level, kind, blob in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds += [int.from_bytes(blob[i:i + 4], sys.byteorder)
                        for i in range(0, len(blob) - 3, 4)]
        while data and not data.endswith(b"\n") and len(data) < REQUEST_MAX:
            more = conn.recv(REQUEST_MAX - len(data))
            if not more:
                break
            data += more
    except OSError:
        for fd in fds:
            os.close(fd)
        raise
    try:
        req = json.loads(data.decode("utf-8"))
    except ValueError:
        req = None
    return (req if well_formed(req) else None), fds


def keep_only(fds):
    """In a worker: every descriptor but the standard ones and fds closed (other requests'
    streams and connections, the host's socket and wakeup pipe), so that they reach their end
    when their own worker does."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in fds:
            try:
                os.close(fd)
            except OSError:
                pass


def run_worker(req, fds, conn):
    """In the forked worker: the requester's streams, environment and argv, the probe's code as
    __main__; says it is done on conn and exits, never returns."""
    status = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setpgid(0, 0)
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        keep_only({conn.fileno()} | ({fds[2]} if len(fds) > 2 else set()))
        os.environ["STACKCHECK_RESULT"] = req["result"]
        if req.get("step") and len(fds) > 2:
            os.environ["STACKCHECK_STEP_FD"] = str(fds[2])
        else:
            os.environ.pop("STACKCHECK_STEP_FD", None)
        sys.argv = [str(a) for a in req["argv"]]
        main = type(sys)("__main__")
        main.__dict__["__builtins__"] = builtins
        sys.modules["__main__"] = main
        with open(req["code_file"]) as f:
            code = compile(f.read(), "<stackcheck>", "exec")
        exec(code, main.__dict__)
        status = 0
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            conn.sendall(("done %d\n" % status).encode())
            os.killpg(0, signal.SIGKILL)  # with whatever the code left in its group: nothing stays
        finally:
            os._exit(status)


def refusal(req):
    """Why req cannot be served here (stackcheck checks the interpreter before it asks)."""
    if req is None:
        return "malformed"
    if req.get("mode") not in ("any", MODE):
        return "mode %s" % MODE
    return None


def pending(server):
    """Every request waiting now as (request, fds, conn), those marked "first" (the longest chain
    of work: the collective's launcher, which still forks its ranks) first."""
    waiting = []
    server.setblocking(False)
    try:
        while True:
            try:
                conn, _ = server.accept()
            except (BlockingIOError, InterruptedError):
                break
            conn.settimeout(READ_TIMEOUT_S)  # a requester sends its line at once, or never
            try:
                req, fds = read_request(conn)
            except OSError:
                conn.close()
                continue
            conn.settimeout(None)
            waiting.append((req, fds, conn))
    finally:
        server.setblocking(True)
    waiting.sort(key=lambda w: not (w[0] and w[0].get("first")))
    return waiting


def accept(server, workers):
    for req, fds, conn in pending(server):
        start(server, workers, req, fds, conn)


def start(server, workers, req, fds, conn):
    """Forks the worker for req, or refuses it; a requester gone meanwhile changes nothing here
    (its worker is then killed as one whose requester hung up)."""
    why = refusal(req) or (None if len(fds) >= 2 else "no streams")
    try:
        if why:
            try:
                conn.sendall(("refused %s\n" % why).encode())
            finally:
                conn.close()
        else:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                server.close()
                run_worker(req, fds, conn)
            workers[pid] = conn
            conn.sendall(("started %d\n" % pid).encode())
    except OSError:
        pass
    finally:
        for fd in fds:
            os.close(fd)


def reap(workers):
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = workers.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall(("status %d\n" % status).encode())
            except OSError:
                pass
            conn.close()


def drop_gone(ready, workers):
    """A requester that hung up (its deadline passed, it was killed, or it has its answer): its
    worker goes too, and is only reaped from then on."""
    for pid, conn in list(workers.items()):
        if conn is not None and conn in ready:
            try:
                gone = not conn.recv(1)
            except OSError:
                gone = True
            if gone:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
                conn.close()
                workers[pid] = None


def serve(server):
    """Until the runner goes: requests, requesters that hang up, and workers that end (a worker's
    end wakes the loop through SIGCHLD's wakeup pipe, so its answer is not late)."""
    parent = os.getppid()
    workers = {}
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.set_wakeup_fd(wake_w)
    while os.getppid() == parent:
        talking = [conn for conn in workers.values() if conn is not None]
        ready, _, _ = select.select([server, wake_r] + talking, [], [], 0.5)
        if wake_r in ready:
            try:
                os.read(wake_r, 512)
            except BlockingIOError:
                pass
        if server in ready:
            accept(server, workers)
        drop_gone(ready, workers)
        reap(workers)


if __name__ == "__main__":
    # Python 3.12 warns at each fork of a process with threads; a worker is a fork by design
    warnings.filterwarnings("ignore", message=".*use of fork\\(\\) may lead to deadlocks",
                            category=DeprecationWarning)
    builtins._stackcheck_torch_preimport = import_torch()
    serve(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0, int(sys.argv[1])))
