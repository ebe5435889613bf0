"""--slurm against a real one-node Slurm (issue 13 point 3): munged, slurmctld and slurmd started
here as root in the foreground (no systemd), with a minimal slurm.conf in a temporary directory,
and stopped after. A job through srun writes a snapshot; the health check drains the node when a
fixture makes the verdict fail and resumes it when it passes; a drain set by someone else is left
alone; `stackcheck fleet` reads the snapshots the jobs wrote."""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import sclib
from sclib import unittest

NODE = "sctest1"
DAEMONS = ["/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd"]
FAILING = sclib.fixture("plain-server")  # driver.no-accelerator
PASSING = sclib.fixture("mi250x-8gcd")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CONF = """ClusterName=sctest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={tmp}/munge.sock
CredType=cred/munge
StateSaveLocation={tmp}/state
SlurmdSpoolDir={tmp}/spool
SlurmctldPidFile={tmp}/slurmctld.pid
SlurmdPidFile={tmp}/slurmd.pid
SlurmctldLogFile={tmp}/slurmctld.log
SlurmdLogFile={tmp}/slurmd.log
PlugStackConfig={tmp}/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/linear
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
HealthCheckProgram={tmp}/health.sh
HealthCheckInterval=2
HealthCheckNodeState=ANY
NodeName={node} NodeHostname={host} NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


class Slurm(unittest.TestCase):
    procs = []

    @classmethod
    def setUpClass(cls):
        missing = [d for d in DAEMONS + ["/usr/bin/scontrol", "/usr/bin/srun"]
                   if not os.access(d, os.X_OK)]
        if missing or os.geteuid() != 0:
            raise unittest.SkipTest("needs root and %s" % (", ".join(missing) or "root"))
        cls.tmp = tempfile.mkdtemp(prefix="sc-slurm-")
        os.chmod(cls.tmp, 0o755)
        for d in ("state", "spool", "snaps"):
            os.mkdir(os.path.join(cls.tmp, d))
        cls.conf = os.path.join(cls.tmp, "slurm.conf")
        with open(cls.conf, "w") as f:
            f.write(CONF.format(tmp=cls.tmp, node=NODE, host=socket.gethostname(),
                                ctld_port=free_port(), slurmd_port=free_port()))
        open(os.path.join(cls.tmp, "plugstack.conf"), "w").close()
        # slurmd's health check: stackcheck --slurm on the root named in health.root, nothing
        # while there is none (so the other tests run undisturbed). slurmd gives it no PATH.
        health = os.path.join(cls.tmp, "health.sh")
        with open(health, "w") as f:
            # slurmd clears the environment: scontrol needs to be told where this slurm.conf is
            # (a real cluster's is at the default path).
            f.write("#!/bin/sh\n[ -f %s/health.root ] || exit 0\nexport SLURM_CONF=%s\n"
                    "exec %s --slurm --sysroot \"$(cat %s/health.root)\" >>%s/health.log 2>&1\n"
                    % (cls.tmp, cls.conf, os.path.abspath(sclib.STACKCHECK), cls.tmp, cls.tmp))
        os.chmod(health, 0o755)
        cls.env = dict(os.environ, SLURM_CONF=cls.conf)
        try:
            cls.start()
        except Exception:
            cls.stop()
            raise

    @classmethod
    def start(cls):
        key = os.path.join(cls.tmp, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        t = cls.tmp
        cls.spawn(["/usr/sbin/munged", "-F", "--force", "--key-file=" + key,
                   "--socket=%s/munge.sock" % t, "--pid-file=%s/munged.pid" % t,
                   "--log-file=%s/munged.log" % t, "--seed-file=%s/munge.seed" % t])
        cls.wait_for(lambda: os.path.exists(os.path.join(t, "munge.sock")), "munged")
        cls.spawn(["/usr/sbin/slurmctld", "-D", "-i", "-f", cls.conf])
        cls.spawn(["/usr/sbin/slurmd", "-D", "-N", NODE, "-f", cls.conf])
        cls.wait_for(lambda: "State=IDLE" in cls.show_node(), "slurmctld and slurmd")

    @classmethod
    def spawn(cls, argv):
        log = open(os.path.join(cls.tmp, os.path.basename(argv[0]) + ".out"), "w")
        cls.procs.append(subprocess.Popen(argv, env=cls.env, stdout=log, stderr=log,
                                          start_new_session=True))
        log.close()

    @classmethod
    def wait_for(cls, ready, what, seconds=60):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if ready():
                return
            dead = [p.args[0] for p in cls.procs if p.poll() is not None]
            if dead:
                break
            time.sleep(0.5)
        logs = ""
        for name in sorted(os.listdir(cls.tmp)):
            if name.endswith((".out", ".log")):
                with open(os.path.join(cls.tmp, name), errors="replace") as f:
                    logs += "--- %s\n%s" % (name, f.read()[-1500:])
        raise unittest.SkipTest("the one-node Slurm did not start (%s): %s\n%s"
                                % (what, "exited: " + ", ".join(dead) if dead else "timeout",
                                   logs))

    @classmethod
    def stop(cls):
        for p in reversed(cls.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
        cls.procs = []
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def tearDownClass(cls):
        cls.stop()

    @classmethod
    def show_node(cls):
        r = subprocess.run(["scontrol", "show", "node", NODE], env=cls.env, capture_output=True,
                           text=True, timeout=30)
        return r.stdout

    def scontrol(self, *args):
        r = subprocess.run(["scontrol"] + list(args), env=self.env, capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)

    def node(self):
        """(State, Reason without the [user@time] stamp) of the node."""
        state, reason = "", ""
        for line in self.show_node().splitlines():
            for word in line.split():
                if word.startswith("State="):
                    state = word[6:]
            if line.strip().startswith("Reason="):
                reason = line.strip()[7:].rsplit(" [", 1)[0]
        return state, reason

    def health_check(self, root):
        """Runs stackcheck as slurmd runs its HealthCheckProgram: as root, SLURMD_NODENAME set."""
        env = dict(self.env, SLURMD_NODENAME=NODE, NO_COLOR=None)
        return sclib.run(["--slurm", "--sysroot", root], env=env, json_file=False, timeout=90)

    def srun(self, root, out):
        """One job step per node writing its snapshot to out, as docs/slurm.md's recipe does."""
        return subprocess.run(["srun", "-N1", "--ntasks-per-node=1", "-t", "2",
                               os.path.abspath(sclib.STACKCHECK), "--sysroot", root, "-q",
                               "--json", out], env=self.env, capture_output=True, text=True,
                              timeout=120)

    def test_1_a_job_through_srun_writes_a_snapshot(self):
        snaps = os.path.join(self.tmp, "snaps")
        r = self.srun(PASSING, os.path.join(snaps, "%h-%j.json"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        names = os.listdir(snaps)
        self.assertEqual(len(names), 1, names)
        host = socket.gethostname().split(".")[0]
        self.assertRegex(names[0], r"^%s-\d+\.json$" % host)
        with open(os.path.join(snaps, names[0])) as f:
            self.assertEqual(json.load(f)["summary"]["status"], "pass")

    def test_2_a_failing_verdict_drains_and_a_passing_one_resumes(self):
        r = self.health_check(FAILING)
        self.assertEqual(r.rc, 1, r.stdout + r.stderr)
        self.assertEqual(r.stdout.count("\n"), 1, r.stdout)  # one line, no report
        self.assertIn("drained", r.stdout)
        self.assertNotIn("\x1b[", r.stdout)
        state, reason = self.node()
        self.assertIn("DRAIN", state)
        self.assertEqual(reason, "stackcheck: driver driver.no-accelerator")
        print("\n" + [l for l in self.show_node().splitlines() if "Reason=" in l][0].strip())
        again = self.health_check(FAILING)  # a second failing check keeps it as it is
        self.assertIn("already drained", again.stdout)
        self.assertEqual(self.node()[1], "stackcheck: driver driver.no-accelerator")
        r = self.health_check(PASSING)
        self.assertEqual(r.rc, 0, r.stdout + r.stderr)
        self.assertIn("resumed", r.stdout)
        state, reason = self.node()
        self.assertNotIn("DRAIN", state)
        self.assertEqual(reason, "")

    def test_3_a_drain_set_by_someone_else_is_left_alone(self):
        self.scontrol("update", "nodename=" + NODE, "state=drain", "reason=disk replacement")
        try:
            for root, rc in ((PASSING, 0), (FAILING, 1)):
                r = self.health_check(root)
                self.assertEqual(r.rc, rc, r.stdout + r.stderr)
                self.assertIn("left alone", r.stdout)
                state, reason = self.node()
                self.assertIn("DRAIN", state)
                self.assertEqual(reason, "disk replacement")
        finally:
            self.scontrol("update", "nodename=" + NODE, "state=resume")

    def test_4_without_a_reachable_scontrol_it_says_so_and_exits_2(self):
        env = dict(self.env, SLURMD_NODENAME=NODE)
        r = sclib.run(["--slurm", "--scontrol", "/nonexistent/scontrol", "--sysroot", FAILING],
                      env=env, json_file=False, timeout=90)
        self.assertEqual(r.rc, 2)
        self.assertIn("cannot run /nonexistent/scontrol", r.stdout)

    def test_5_fleet_reads_the_snapshots_the_jobs_wrote(self):
        snaps = os.path.join(self.tmp, "fleet")
        for root in (PASSING, PASSING, sclib.fixture("hygon-dcu"), FAILING):
            self.srun(root, os.path.join(snaps, "%h-%j.json"))
        self.assertEqual(len(os.listdir(snaps)), 4)
        r = sclib.run(["fleet", snaps], json_file=False)
        print("\n" + r.stdout)
        self.assertEqual(r.rc, 1, r.stdout)
        self.assertIn("Majority stack: 2 nodes", r.stdout)
        self.assertIn("amdgpu 6.3.6 -> hydcu", r.stdout)
        self.assertIn("driver driver.no-accelerator: 1 node", r.stdout)
    def test_6_slurmd_runs_it_as_its_health_check_program(self):
        marker = os.path.join(self.tmp, "health.root")

        def until(cond, what):
            end = time.monotonic() + 60
            while time.monotonic() < end:
                if cond(self.node()):
                    return
                time.sleep(0.5)
            with open(os.path.join(self.tmp, "health.log"), errors="replace") as f:
                self.fail("%s: node %s; health.log: %s" % (what, self.node(), f.read()[-2000:]))
        try:
            with open(marker, "w") as f:
                f.write(FAILING)
            until(lambda n: "DRAIN" in n[0] and n[1] == "stackcheck: driver driver.no-accelerator",
                  "not drained by slurmd's health check")
            with open(marker, "w") as f:
                f.write(PASSING)
            until(lambda n: "DRAIN" not in n[0] and n[1] == "", "not resumed")
        finally:
            os.unlink(marker)
        with open(os.path.join(self.tmp, "health.log")) as f:
            log = f.read()
        self.assertIn("stackcheck: %s: fail: driver driver.no-accelerator; drained" % NODE, log)
        self.assertIn("resumed: stackcheck had drained it", log)


if __name__ == "__main__":
    sclib.main()
