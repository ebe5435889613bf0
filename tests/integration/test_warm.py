"""The warm interpreter: torch is imported once, in the interpreter the framework layer uses, from
the run's first moment in a parallel run (while a lower layer is still being checked) or at
framework.torch's turn in a serial one, and the framework probes fork from it; their facts are the
ones a run without it gets (STACKCHECK_WARM=0), where each imports torch itself; the warm
interpreter and its files are gone after the run. A fake torch package logs each import (the
process's argv[0], its pid, the time it began)."""
import array
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

import sclib
import test_framework

FAKE_LOGGING = """
import os, sys, time
with open(os.environ["SC_TEST_IMPORTS"], "a") as _f:
    _f.write("%s %d %.3f\\n" % (os.path.basename(sys.argv[0]) if sys.argv else "?", os.getpid(),
                               time.time()))
time.sleep(0.5)
""" + test_framework.FAKE_ROCM


class WarmInterpreter(unittest.TestCase):
    def setUp(self):
        self.fake = test_framework.FakeTorch(FAKE_LOGGING)
        self.tmp = tempfile.mkdtemp(prefix="sc-warm-")
        self.imports = os.path.join(self.tmp, "imports")

    def tearDown(self):
        self.fake.cleanup()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_jobs(self, jobs, *extra, env=None):
        open(self.imports, "w").close()
        scratch = os.path.join(self.tmp, "scratch")
        os.mkdir(scratch)
        started = time.time()
        python = (env or {}).pop("SC_TEST_PYTHON", sclib.DEBIAN_PYTHON)
        r = sclib.run(["--jobs", jobs, "--keep-going", "--python", python] + list(extra),
                      env=self.fake.env(SC_TEST_IMPORTS=self.imports, TMPDIR=scratch, **(env or {})))
        self.assertEqual(os.listdir(scratch), [], "the run left files behind")
        os.rmdir(scratch)
        with open(self.imports) as f:
            lines = [line.split() for line in f if line.strip()]
        return r, [(argv0, int(pid), float(t) - started) for argv0, pid, t in lines]

    def test_parallel_run_imports_torch_once_in_the_warm_interpreter(self):
        r, imports = self.run_jobs("2")
        self.assertEqual(len(imports), 1, imports)
        argv0, pid, _ = imports[0]
        self.assertEqual(argv0, "stackcheck-torch-host")
        self.assertFalse(os.path.exists("/proc/%d" % pid), "the warm interpreter outlived the run")
        torch = r.probe("framework.torch")["facts"]["torch"]
        self.assertEqual(torch["version"], test_framework.FAKE_VERSION)
        self.assertGreaterEqual(torch["import_ms"], 500)  # the warm interpreter's own import time
        self.assertEqual(r.probe("framework.torch")["facts"]["python"]["mode"], "embedded")
        # the collective's launcher and rank were forked from it too: no import of their own
        self.assertNotEqual(r.probe("framework.collective")["status"], "skip")

    def test_serial_run_imports_once_at_the_turn_of_framework_torch(self):
        r, imports = self.run_jobs("1")
        self.assertEqual([argv0 for argv0, _, _ in imports], ["stackcheck-torch-host"])
        self.assertEqual(r.probe("framework.torch")["facts"]["torch"]["version"],
                         test_framework.FAKE_VERSION)

    def test_without_it_each_probe_imports_and_the_facts_agree(self):
        serial, imports = self.run_jobs("1", env={"STACKCHECK_WARM": "0"})
        self.assertNotIn("stackcheck-torch-host", [argv0 for argv0, _, _ in imports])
        self.assertGreaterEqual(len(imports), 2, imports)  # framework.torch and the rank
        parallel, _ = self.run_jobs("2")
        self.assertEqual(serial.rc, parallel.rc)
        self.assertEqual(sclib.normalised(serial.probe("framework.torch")),
                         sclib.normalised(parallel.probe("framework.torch")))
        # the fake torch has no torch.distributed: the rank fails alike, its traceback naming the
        # rank's code by another (temporary) file name
        tails = []
        for r in (serial, parallel):
            p = sclib.normalised(r.probe("framework.collective"))
            self.assertIn("ranks", p["facts"], p)
            tail = p["facts"]["ranks"][0].pop("log_tail")
            tails.append(tail.strip().splitlines()[-1])
            p["findings"] = [f["id"] for f in p["findings"]]
            tails.append(p)
        self.assertEqual(tails[0], tails[2])
        self.assertIn("torch.distributed", tails[0])
        self.assertEqual(tails[1], tails[3])

    def test_import_starts_while_a_lower_layer_is_checked(self):
        # runtime.hip hangs in its stub until its 4 s deadline: the warm import began long before
        r, imports = self.run_jobs("2", "--hip-library", sclib.stub("hipstub"), "--timeout", "4",
                                   env={"SC_HIPSTUB_MODE": "hang"})
        self.assertEqual(r.probe("runtime.hip")["status"], "timeout")
        self.assertEqual([argv0 for argv0, _, _ in imports], ["stackcheck-torch-host"])
        self.assertLess(imports[0][2], 3.0, imports)

    def test_subprocess_interpreter_is_warm_too(self):
        r, imports = self.run_jobs("2", env={"STACKCHECK_PYTHON_SUBPROCESS": "1"})
        self.assertEqual([argv0 for argv0, _, _ in imports], ["stackcheck-torch-host"])
        self.assertEqual(r.probe("framework.torch")["facts"]["python"]["mode"], "subprocess")

    def test_interpreter_behind_a_script_wrapper_is_warm_too(self):
        # its files do not name the interpreter: it is started once the interpreter has answered
        wrapper = os.path.join(self.tmp, "python3")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\nexec %s \"$@\"\n" % sclib.DEBIAN_PYTHON)
        os.chmod(wrapper, 0o755)
        r, imports = self.run_jobs("2", env={"SC_TEST_PYTHON": wrapper})
        self.assertEqual([argv0 for argv0, _, _ in imports], ["stackcheck-torch-host"])
        self.assertEqual(r.probe("framework.torch")["facts"]["torch"]["version"],
                         test_framework.FAKE_VERSION)

    def test_gate_closed_stops_the_warm_interpreter(self):
        # the driver layer fails and nothing is waived: the framework layer is skipped, and the
        # speculative import is stopped with nothing left behind
        open(self.imports, "w").close()
        scratch = os.path.join(self.tmp, "scratch")
        os.mkdir(scratch)
        r = sclib.run(["--jobs", "2", "--python", sclib.DEBIAN_PYTHON],
                      env=self.fake.env(SC_TEST_IMPORTS=self.imports, TMPDIR=scratch))
        self.assertEqual(r.rc, 1)
        self.assertEqual(r.probe("framework.torch")["status"], "skip")
        self.assertEqual(r.probe("framework.collective")["status"], "skip")
        self.assertEqual(os.listdir(scratch), [])
        with open(self.imports) as f:
            for line in f:
                self.assertFalse(os.path.exists("/proc/%s" % line.split()[1]))


class Protocol(unittest.TestCase):
    """probes/torch_host.py on its own, in the Debian interpreter with the fake torch: what it
    answers to a malformed request, to a requester that connects and goes, to another mode, and to
    a good request (its code run in a worker with the requester's streams and argv, "done" before
    the worker's exit); requests waiting together are served "first" first."""

    def setUp(self):
        self.fake = test_framework.FakeTorch(test_framework.FAKE_ROCM)
        self.tmp = tempfile.mkdtemp(prefix="sc-warm-protocol-")
        self.path = os.path.join(self.tmp, "warm.sock")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(self.path)
        server.listen(8)
        host = os.path.join(os.environ["SC_SOURCE_DIR"], "probes", "torch_host.py")
        self.host = subprocess.Popen([sclib.DEBIAN_PYTHON, host, str(server.fileno()),
                                      "subprocess"], pass_fds=[server.fileno()],
                                     env=dict(os.environ, PYTHONPATH=self.fake.dir))
        server.close()

    def tearDown(self):
        self.host.kill()
        self.host.wait()
        self.fake.cleanup()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect(self.path)
        return s

    def send(self, s, request, out):
        line = (json.dumps(request) + "\n").encode()
        s.sendmsg([line], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                            array.array("i", [out.fileno(), out.fileno()]))])

    def answers(self, s):
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return data.decode().splitlines()
            data += chunk

    def request(self, name, code, mode="subprocess", first=False):
        code_file = os.path.join(self.tmp, name + ".py")
        with open(code_file, "w") as f:
            f.write(code)
        return {"mode": mode, "code_file": code_file, "argv": [name, "x"], "first": first,
                "result": os.path.join(self.tmp, name + ".json"), "step": False}

    def test_answers(self):
        s = self.connect()
        s.sendall(b"not json\n")
        self.assertEqual(self.answers(s), ["refused malformed"])
        self.connect().close()  # connects and goes before it asks
        s = self.connect()
        with open(os.path.join(self.tmp, "out"), "w") as out:
            self.send(s, self.request("other", "", mode="embedded"), out)
        self.assertEqual(self.answers(s), ["refused mode subprocess"])
        code = ("import builtins, json, os, sys, torch\n"
                "warm = builtins._stackcheck_torch_preimport\n"
                "print('from the worker')\n"
                "json.dump({'argv': sys.argv, 'torch': torch.__version__, 'pid': os.getpid(),\n"
                "           'import_ms': warm['import_ms']},\n"
                "          open(os.environ['STACKCHECK_RESULT'], 'w'))\n"
                "raise SystemExit(3)\n")
        s = self.connect()
        with open(os.path.join(self.tmp, "out"), "w") as out:
            self.send(s, self.request("good", code), out)
        lines = self.answers(s)
        started, done = lines[:2]
        self.assertRegex(started, r"^started \d+$")
        self.assertEqual(done, "done 3")  # from the worker, before its exit
        for line in lines[2:]:  # then the host's word once it reaped the worker, which ended
            self.assertEqual(line, "status %d" % signal.SIGKILL)  # its group, itself with it
        with open(os.path.join(self.tmp, "good.json")) as f:
            result = json.load(f)
        self.assertEqual((result["argv"], result["torch"]),
                         (["good", "x"], test_framework.FAKE_VERSION))
        self.assertEqual(result["pid"], int(started.split()[1]))
        self.assertGreaterEqual(result["import_ms"], 0)
        with open(os.path.join(self.tmp, "out")) as f:
            self.assertIn("from the worker", f.read())

    def test_first_is_served_first(self):
        # while the host imports (its fake torch takes no time), two requests wait together
        code = "import os\nopen(os.environ['STACKCHECK_RESULT'], 'w').write('x')\n"
        sockets = []
        with open(os.path.join(self.tmp, "out"), "w") as out:
            os.kill(self.host.pid, signal.SIGSTOP)  # so that both wait in its backlog
            try:
                for name, first in (("plain", False), ("first", True)):
                    sockets.append(self.connect())
                    self.send(sockets[-1], self.request(name, code, first=first), out)
            finally:
                os.kill(self.host.pid, signal.SIGCONT)
        pids = [int(self.answers(s)[0].split()[1]) for s in sockets]
        self.assertLess(pids[1], pids[0])  # "first" was forked first


if __name__ == "__main__":
    sclib.main()
