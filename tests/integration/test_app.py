"""The app layer through the real binary: --app commands that pass, fail in their third stage,
crash, hang, flood their output, close it early or leave a child behind; --app-script scripts that
fail, crash or hang in a named stage, leak memory across repetitions, or produce NaN at a known
module of a small torch model; and the staged torch smoke test of examples/. The driver layer fails
on a machine without an accelerator, so every run uses --keep-going."""
import json
import os
import random
import subprocess
import tempfile
import textwrap
import unittest

import sclib

DEBIAN_PYTHON = sclib.DEBIAN_PYTHON
quick_python = sclib.quick_python


def has_torch():
    return subprocess.run([DEBIAN_PYTHON, "-c", "import torch"], capture_output=True).returncode == 0


def stray(pattern):
    """True when a process whose command line matches pattern (a regular expression that does not
    match itself, like 'sleep 12[3]') is alive."""
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True).returncode == 0


def marker_number():
    return random.randint(100000, 999999)


def sleeper(number):
    """(the shell command that sleeps with a unique marker, the pgrep pattern for it)"""
    text = "99%d" % number
    return "sleep %s" % text, "sleep %s[%s]" % (text[:-1], text[-1])


class AppCommand(unittest.TestCase):
    """--app CMD: the probe app.smoke."""

    def app(self, cmd, *extra):
        run = sclib.run(["--keep-going", "--app", cmd] + list(extra))
        self.assertIsNotNone(run.snapshot, run.stderr)
        return run, run.probe("app.smoke")

    def test_stages_metrics_and_output_slices(self):
        run, p = self.app("echo ::stackcheck stage import; echo imported; "
                          "echo ::stackcheck stage 'one tensor'; echo warm >&2; "
                          "echo ::stackcheck metric tensor_ms 3.25; "
                          "echo ::stackcheck stage forward; echo done")
        sclib.validate_snapshot(self, run.snapshot)
        self.assertEqual(p["status"], "pass", p)
        f = p["facts"]
        self.assertEqual([s["name"] for s in f["stages"]], ["import", "one tensor", "forward"])
        self.assertEqual({s["status"] for s in f["stages"]}, {"pass"})
        self.assertEqual(f["stages"][0]["output_tail"], "imported\n")
        # standard error is a separate pipe: its lines join the stage current when they are read
        self.assertEqual(f["stderr"]["tail"], "warm\n")
        self.assertIn("warm\n", "".join(s["output_tail"] for s in f["stages"][1:]))
        self.assertEqual(f["stages"][1]["metrics"], {"tensor_ms": 3.25})
        self.assertEqual(f["metrics"], {"tensor_ms": 3.25})
        self.assertEqual(f["exit_code"], 0)
        self.assertIsNone(f["first_failed_stage"])
        self.assertEqual(p["findings"], [])

    def test_fails_in_its_third_stage(self):
        run, p = self.app("echo ::stackcheck stage import; echo ::stackcheck stage config; "
                          "echo ::stackcheck stage 'load weights'; echo reading ckpt; "
                          "echo 'boom: weights.bin missing' >&2; exit 3")
        self.assertEqual(p["status"], "fail")
        self.assertEqual(run.rc, 1)
        f = p["facts"]
        self.assertEqual([s["status"] for s in f["stages"]], ["pass", "pass", "fail"])
        self.assertEqual(f["first_failed_stage"], "load weights")
        self.assertEqual(f["exit_code"], 3)
        self.assertIn("boom: weights.bin missing", f["stages"][2]["output_tail"])
        finding = run.finding("app.failed")
        self.assertIn("status 3", finding["message"])
        self.assertIn("'load weights'", finding["message"])
        self.assertIn("boom: weights.bin missing", finding["message"])
        self.assertIn("app.failed", run.stdout)

    def test_crash_is_a_finding(self):
        run, p = self.app("echo ::stackcheck stage kernel; kill -SEGV $$")
        self.assertEqual(p["status"], "fail")  # the probe worked; the app crashed
        self.assertEqual(p["facts"]["signal"], "SIGSEGV")
        self.assertIsNone(p["facts"]["exit_code"])
        msg = run.finding("app.crashed")["message"]
        self.assertIn("SIGSEGV", msg)
        self.assertIn("'kernel'", msg)

    def test_hang_ends_at_the_deadline_with_a_finding(self):
        cmd, pattern = sleeper(marker_number())
        run, p = self.app("echo ::stackcheck stage 'wait for device'; %s" % cmd, "--timeout", "3")
        # the app's own deadline fires before the probe's: a finding, not a probe timeout
        self.assertEqual(p["status"], "fail", p)
        self.assertTrue(p["facts"]["timed_out"])
        self.assertIn("'wait for device'", run.finding("app.timeout")["message"])
        self.assertLess(run.seconds, 3 + 10)
        self.assertFalse(stray(pattern))

    def test_flood_without_newlines_is_bounded(self):
        run, p = self.app("echo ::stackcheck stage flood; head -c 50M /dev/zero | tr '\\0' x")
        self.assertEqual(p["status"], "pass")
        out = p["facts"]["stdout"]
        self.assertEqual(out["bytes"], 50 * 1024 * 1024 + len("::stackcheck stage flood\n"))
        self.assertTrue(out["truncated"])
        self.assertLessEqual(len(out["tail"]), 16384)
        self.assertEqual(p["facts"]["stages"][0]["output_bytes"], 50 * 1024 * 1024)
        self.assertLess(len(json.dumps(run.snapshot)), 1 << 20)

    def test_child_left_behind_is_killed(self):
        cmd, pattern = sleeper(marker_number())
        run, p = self.app("%s & echo ::stackcheck stage spawn; echo started" % cmd)
        self.assertEqual(p["status"], "pass")
        self.assertGreaterEqual(p["facts"]["processes_killed"], 1)
        self.assertLess(run.seconds, 60)
        self.assertFalse(stray(pattern))

    def test_child_in_a_new_session_is_killed_too(self):
        cmd, pattern = sleeper(marker_number())
        run, p = self.app("setsid %s & echo ::stackcheck stage spawn" % cmd)
        self.assertEqual(p["status"], "pass")
        self.assertFalse(stray(pattern))

    def test_output_closed_early(self):
        run, p = self.app("echo ::stackcheck stage quiet; exec 1>&- 2>&-; sleep 1; exit 0")
        self.assertEqual(p["status"], "pass")
        self.assertEqual(p["facts"]["stages"][0]["name"], "quiet")
        self.assertGreaterEqual(p["facts"]["duration_ms"], 900)

    def test_repeat_keeps_startup_apart(self):
        run, p = self.app("echo ::stackcheck stage step; echo x", "--app-repeat", "3")
        t = p["facts"]["timing"]
        self.assertEqual(p["facts"]["runs"], 3)
        self.assertEqual(t["steady_runs"], 2)
        self.assertIsInstance(t["first_ms"], float)
        self.assertIsInstance(t["steady_median_ms"], float)
        self.assertEqual(t["stages"][0]["name"], "step")
        self.assertEqual(t["stages"][0]["steady_runs"], 2)

    def test_repeat_stops_at_the_first_failure(self):
        run, p = self.app("echo ::stackcheck stage s; exit 1", "--app-repeat", "4")
        self.assertEqual(p["facts"]["runs"], 1)
        self.assertIn("app.failed", run.finding_ids("app.smoke"))

    def test_secrets_are_scrubbed(self):
        run, p = self.app("echo https://alice:hunter2secret@example.com/x; true")
        self.assertNotIn("hunter2secret", json.dumps(run.snapshot))

    def test_without_app_it_is_not_applicable(self):
        run = sclib.run(["--keep-going"])
        p = run.probe("app.smoke")
        self.assertEqual(p["status"], "skip")
        self.assertFalse(p["applicable"])
        self.assertEqual(p["reason"], "no --app given")


class AppScript(unittest.TestCase):
    """--app-script FILE.py: the probe app.script, in the framework layer's interpreter."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sc-app-")

    def script(self, text, *extra, python=None):
        path = os.path.join(self.tmp, "app.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        run = sclib.run(["--keep-going", "--python", python or quick_python(), "--app-script",
                         path] + list(extra))
        self.assertIsNotNone(run.snapshot, run.stderr)
        return run, run.probe("app.script")

    def test_fails_in_a_named_stage(self):
        run, p = self.script("""
            import stackcheck
            with stackcheck.stage("import"):
                import json
            with stackcheck.stage("config"):
                cfg = json.loads('{"layers": 2}')
            with stackcheck.stage("build model"):
                print("building", cfg)
                raise ValueError("bad config: layers must be > 2")
            """)
        sclib.validate_snapshot(self, run.snapshot)
        f = p["facts"]
        self.assertEqual([s["status"] for s in f["stages"]], ["pass", "pass", "fail"])
        self.assertEqual(f["first_failed_stage"], "build model")
        self.assertIn("building", f["stages"][2]["output_tail"])
        msg = run.finding("app.failed")["message"]
        self.assertIn("'build model'", msg)
        self.assertIn("ValueError: bad config", msg)

    def test_a_stage_name_with_control_characters_stays_one_line(self):
        # a newline or tab would split the step pipe's and the progress file's lines
        run, p = self.script("""
            import stackcheck
            with stackcheck.stage("load\\nshard\\t1"):
                raise RuntimeError("no shard")
            """)
        self.assertEqual(p["facts"]["first_failed_stage"], "load shard 1")
        self.assertIn("run 1: load shard 1", [s["name"] for s in p["steps"]])

    def test_crash_names_its_stage(self):
        run, p = self.script("""
            import os, signal, stackcheck
            with stackcheck.stage("native call"):
                os.kill(os.getpid(), signal.SIGSEGV)
            """)
        self.assertEqual(p["status"], "fail")
        msg = run.finding("app.crashed")["message"]
        self.assertIn("SIGSEGV", msg)
        self.assertIn("'native call'", msg)

    def test_hang_names_its_stage(self):
        run, p = self.script("""
            import time, stackcheck
            with stackcheck.stage("wait for device"):
                time.sleep(600)
            """, "--timeout", "3")
        self.assertEqual(p["status"], "fail", p)
        self.assertIn("'wait for device'", run.finding("app.timeout")["message"])
        self.assertLess(run.seconds, 3 + 30)

    def test_memory_growth_across_repetitions(self):
        run, p = self.script("""
            import builtins, stackcheck
            with stackcheck.stage("step"):
                builtins.__dict__.setdefault("_kept", []).append(b"x" * (24 << 20))
            """, "--app-repeat", "5")
        mem = p["facts"]["memory"]
        self.assertEqual(len(mem["after_each_run"]), 5)
        self.assertIn("RSS", mem["source"])
        self.assertIn("app.memory-growth", run.finding_ids("app.script"))
        t = p["facts"]["timing"]
        self.assertEqual(t["steady_runs"], 4)

    @unittest.skipIf(sclib.SANITIZED, "AddressSanitizer keeps freed memory resident (quarantine)")
    def test_no_growth_without_a_leak(self):
        run, p = self.script("""
            import stackcheck
            with stackcheck.stage("step"):
                data = b"x" * (24 << 20)
            """, "--app-repeat", "5")
        self.assertNotIn("app.memory-growth", run.finding_ids("app.script"))
        self.assertEqual(p["status"], "pass")

    @unittest.skipUnless(has_torch(), "Debian's python3-torch is not installed")
    def test_first_nonfinite_module(self):
        run, p = self.script("""
            import stackcheck
            import torch
            import torch.nn as nn

            class Unstable(nn.Module):
                def forward(self, x):
                    return torch.sqrt(x - 100.0)  # negative inputs: NaN

            model = nn.Sequential()
            model.add_module("embed", nn.Linear(4, 8))
            body = nn.Sequential(nn.ReLU(), nn.Linear(8, 8), Unstable(), nn.Linear(8, 2))
            model.add_module("body", body)
            with stackcheck.stage("small forward"):
                stackcheck.watch(model, stackcheck.fixed_input((3, 4)), name="tiny")
            """, python=DEBIAN_PYTHON)
        numerics = p["facts"]["numerics"]
        self.assertEqual(numerics["first_nonfinite"]["module"], "body.2")
        self.assertEqual(numerics["first_nonfinite"]["type"], "Unstable")
        names = [m["module"] for m in numerics["modules"]]
        self.assertEqual(names[:3], ["embed", "body.0", "body.1"])
        self.assertTrue(all(m["nan"] == 0 for m in numerics["modules"][:3]))
        self.assertEqual(numerics["modules"][0]["shape"], [3, 8])
        self.assertEqual(numerics["modules"][0]["dtype"], "float32")
        msg = run.finding("app.first-nonfinite-module")["message"]
        self.assertIn("'body.2'", msg)
        self.assertIn("Unstable", msg)

    @unittest.skipUnless(has_torch(), "Debian's python3-torch is not installed")
    def test_example_smoke_torch(self):
        example = os.path.join(sclib.SOURCE_DIR, "examples", "smoke_torch.py")
        run = sclib.run(["--keep-going", "--python", DEBIAN_PYTHON, "--app-script", example])
        sclib.validate_snapshot(self, run.snapshot)
        p = run.probe("app.script")
        self.assertEqual(p["status"], "pass", p)
        f = p["facts"]
        self.assertEqual([s["name"] for s in f["stages"]],
                         ["import", "device tensor", "config", "build model", "load weights",
                          "one operator", "small forward"])
        self.assertEqual({s["status"] for s in f["stages"]}, {"pass"})
        self.assertEqual(f["numerics"]["name"], "SmokeNet")
        self.assertEqual(f["numerics"]["device"], "cpu")
        self.assertIsNone(f["numerics"]["first_nonfinite"])
        names = [m["module"] for m in f["numerics"]["modules"]]
        for name in ("encoder.0", "blocks.0.1", "blocks.1.1", "head", "(root)"):
            self.assertIn(name, names)
        self.assertIn("matmul_max_abs_error", f["metrics"])
        self.assertEqual(f["python"]["executable"], DEBIAN_PYTHON)

    def test_without_app_script_it_is_not_applicable(self):
        run = sclib.run(["--keep-going", "--python", quick_python()])
        p = run.probe("app.script")
        self.assertEqual(p["status"], "skip")
        self.assertFalse(p["applicable"])


if __name__ == "__main__":
    sclib.main()
