"""Nothing the run starts outlives it: daemons started by a runtime's constructor (the HIP stub),
by an --app-script, by an --app command and by a --python interpreter are gone after the run, also
when they setsid() out of the process group or are orphaned by a double fork, and also when their
starter crashed or was killed at its deadline, and a chain of 80 processes each in its own session.
A --python that closes its output and sleeps costs one deadline per run, never a hang, and is asked
once. Each daemon writes its pid to a file the
test names, so the test checks those very processes."""
import os
import random
import shutil
import signal
import tempfile
import time

import sclib
from sclib import unittest


def alive(pid, marker):
    """True when pid is a running process (not a zombie) whose command line holds marker."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            if marker.encode() not in f.read().replace(b"\0", b" "):
                return False
        with open("/proc/%d/status" % pid) as f:
            state = next(line.split()[1] for line in f if line.startswith("State:"))
    except (OSError, StopIteration):
        return False
    return state not in ("Z", "X")


class ReapCase(unittest.TestCase):
    """A temporary directory with the (empty) pid file, a sleep command under a marker only this
    test uses, and a clean-up that kills the recorded daemons should a run have left them."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sc-reap-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.pidfile = os.path.join(self.tmp, "pids")
        open(self.pidfile, "w").close()
        self.marker = "sleep 9%05d" % random.randint(0, 99999)
        self.addCleanup(self.kill_leftovers)

    def pids(self):
        with open(self.pidfile) as f:
            return [int(line) for line in f if line.strip()]

    def kill_leftovers(self):
        for pid in self.pids():
            if alive(pid, self.marker):
                os.kill(pid, signal.SIGKILL)

    def assert_all_gone(self, expected):
        """Exactly `expected` daemons were started, and each is gone within a short wait."""
        pids = self.pids()
        self.assertEqual(len(pids), expected, pids)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and any(alive(p, self.marker) for p in pids):
            time.sleep(0.05)
        self.assertEqual([p for p in pids if alive(p, self.marker)], [], "left running")

    def sleeper(self):
        """Shell code that records its pid and sleeps under the marker."""
        return "echo $$ >> %s; exec %s" % (self.pidfile, self.marker)

    def wait_for(self, n):
        """Shell code that waits (20 s at most) until n daemons recorded their pids."""
        return ("i=0; while [ $(wc -l < %s) -lt %d ] && [ $i -lt 400 ]; do sleep 0.05; "
                "i=$((i+1)); done" % (self.pidfile, n))


class RuntimeDaemons(ReapCase):
    """runtime.hip with a stub whose constructor starts a setsid'd and a double-forked daemon."""

    def hip(self, mode, *extra):
        self.marker = "stackcheck"  # the daemons are forked copies of the probe
        env = {"SC_HIPSTUB_MODE": mode, "SC_HIPSTUB_DAEMON": self.pidfile}
        run = sclib.run(["--keep-going", "--hip-library", sclib.stub("hipstub")] + list(extra),
                        env=env, timeout=120)
        self.assertIsNotNone(run.snapshot, run.stderr)
        return run.probe("runtime.hip")

    def test_daemons_of_a_runtime_are_gone(self):
        p = self.hip("ok", "--timeout", "20")
        self.assertEqual(p["status"], "pass", p)
        # the daemons held the child's result pipe: the probe waited for them until its deadline
        self.assertLess(p["duration_ms"], 10000)
        self.assert_all_gone(2)

    def test_daemons_are_gone_when_the_runtime_crashes(self):
        p = self.hip("crash")
        self.assertEqual(p["status"], "crash", p)
        self.assertIn("SIGSEGV", p["reason"])
        self.assert_all_gone(2)

    def test_daemons_are_gone_when_the_runtime_hangs(self):
        p = self.hip("hang", "--timeout", "2")
        self.assertEqual(p["status"], "timeout", p)
        self.assert_all_gone(2)


# A setsid'd child left running, and a daemon orphaned by a double fork (its parent exits at once).
SCRIPT = """
import os, subprocess, time
import stackcheck
with stackcheck.stage("spawn"):
    subprocess.Popen(["setsid", "sh", "-c", {cmd!r}])
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.execvp("sh", ["sh", "-c", {cmd!r}])
        os._exit(0)
    os.waitpid(pid, 0)
    subprocess.run(["sh", "-c", {wait!r}])
with stackcheck.stage("work"):
    {work}
"""


class AppScriptDaemons(ReapCase):
    """--app-script: the daemons the script starts, after it finished and after its deadline."""

    def script(self, work, *extra):
        path = os.path.join(self.tmp, "app.py")
        with open(path, "w") as f:
            f.write(SCRIPT.format(cmd=self.sleeper(), wait=self.wait_for(2), work=work))
        run = sclib.run(["--keep-going", "--python", sclib.quick_python(), "--app-script", path]
                        + list(extra), timeout=120)
        self.assertIsNotNone(run.snapshot, run.stderr)
        return run, run.probe("app.script")

    def test_daemons_of_a_script_are_gone(self):
        run, p = self.script("pass")
        self.assertEqual(p["status"], "pass", p)
        self.assert_all_gone(2)

    def test_daemons_of_a_script_killed_at_its_deadline_are_gone(self):
        run, p = self.script("time.sleep(600)", "--timeout", "4")
        self.assertIn("'work'", run.finding("app.timeout")["message"])
        self.assert_all_gone(2)


class AppCommandDaemons(ReapCase):
    """--app CMD: the same two shapes from a shell command, and a deep chain of sessions."""

    def app(self, tail, *extra):
        daemon = "sh -c '%s'" % self.sleeper()
        cmd = "setsid %s & (setsid %s &); %s%s" % (daemon, daemon, self.wait_for(2), tail)
        run = sclib.run(["--keep-going", "--app", cmd] + list(extra), timeout=120)
        self.assertIsNotNone(run.snapshot, run.stderr)
        return run, run.probe("app.smoke")

    def test_daemons_of_a_command_are_gone(self):
        run, p = self.app("")
        self.assertEqual(p["status"], "pass", p)
        self.assertGreaterEqual(p["facts"]["processes_killed"], 2)
        self.assert_all_gone(2)

    def test_daemons_of_a_command_killed_at_its_deadline_are_gone(self):
        run, p = self.app("; sleep 600", "--timeout", "3")
        self.assertTrue(p["facts"]["timed_out"], p)
        self.assert_all_gone(2)

    def test_a_deep_chain_of_sessions_is_gone(self):
        # each link setsid()s and is the parent of the next: killing one link at a time, and
        # waiting for its child to come back before the next, gives up long before the end
        chain = os.path.join(self.tmp, "chain.sh")
        with open(chain, "w") as f:
            f.write("#!/bin/sh\nif [ $1 -gt 1 ]; then setsid %s $(($1 - 1)) & fi\n%s\n"
                    % (chain, self.sleeper()))
        os.chmod(chain, 0o755)
        cmd = "setsid %s 80 & %s" % (chain, self.wait_for(80))
        run = sclib.run(["--keep-going", "--app", cmd], timeout=120)
        p = run.probe("app.smoke")
        self.assertEqual(p["status"], "pass", p)
        self.assertEqual(p["facts"]["processes_killed"], 80)
        self.assert_all_gone(80)


class PythonLocate(ReapCase):
    """A --python that misbehaves while it is asked about itself (a shell script standing in for
    the interpreter): it is started once per run, whatever the layers that ask, and what it starts
    is killed."""

    DEADLINE = 5

    def fake_python(self, body):
        self.counter = os.path.join(self.tmp, "started")
        path = os.path.join(self.tmp, "python3")
        with open(path, "w") as f:
            f.write("#!/bin/sh\necho started >> %s\n%s\n" % (self.counter, body))
        os.chmod(path, 0o755)
        script = os.path.join(self.tmp, "app.py")
        with open(script, "w") as f:
            f.write("print('never runs')\n")
        # three layers ask: libraries.torch, framework.torch and app.script
        run = sclib.run(["--keep-going", "--timeout", str(self.DEADLINE), "--python", path,
                         "--app-script", script], timeout=90)
        self.assertIsNotNone(run.snapshot, run.stderr)
        return run

    def starts(self):
        with open(self.counter) as f:
            return len(f.read().split())

    def test_closes_its_output_and_sleeps(self):
        # a daemon that does not hold the output, then the interpreter itself sleeps
        run = self.fake_python("setsid sh -c '%s' >/dev/null &\nexec 1>&-\n%s"
                               % (self.sleeper(), self.sleeper()))
        # one deadline, not a hang in waitpid and not one deadline per layer
        self.assertLess(run.seconds, 2 * self.DEADLINE)
        self.assertEqual(self.starts(), 1)
        reason = run.probe("libraries.torch")["reason"]
        self.assertIn("did not finish within %.1f s" % self.DEADLINE, reason)
        self.assertIn("did not finish", run.finding("torch.python-not-found")["message"])
        self.assertIn("did not finish", run.probe("app.script")["reason"])
        self.assert_all_gone(2)

    def test_leaves_a_daemon_holding_its_output(self):
        run = self.fake_python("setsid sh -c '%s' &\n%s\nexit 0" % (self.sleeper(),
                                                                     self.wait_for(1)))
        # the interpreter exited: the daemon that holds the pipe open is not waited for
        self.assertLess(run.seconds, self.DEADLINE)
        self.assertEqual(self.starts(), 1)
        self.assertIn("no SC-PYINFO", run.probe("libraries.torch")["reason"])
        self.assert_all_gone(1)


if __name__ == "__main__":
    sclib.main()
