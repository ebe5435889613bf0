"""The live report and the parallel runner through the real binary. Under a pseudo-terminal: the
driver layer's lines arrive while a slow app script still runs, a status line names the app's
current stage and is gone from the final screen. Off a terminal: "still running" lines for a slow
probe, none with --progress=never or -q. Step timings in the snapshot; a summary on every passing
probe's line; and serial (--jobs 1) and parallel runs that give the same snapshot on every fixture
and on this machine."""
import json
import os
import pty
import select
import subprocess
import tempfile
import textwrap
import time
import unittest

import sclib

SLOW_SCRIPT = textwrap.dedent("""\
    import time
    import stackcheck
    with stackcheck.stage("load"):
        time.sleep(0.2)
    with stackcheck.stage("slow train"):
        time.sleep(7)
    """)


def script_file(text):
    fd, path = tempfile.mkstemp(suffix=".py", prefix="sc-live-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def run_in_pty(args, timeout=300):
    """Runs stackcheck on a pseudo-terminal; returns (exit code, [(seconds, bytes)...])."""
    pid, fd = pty.fork()
    if pid == 0:
        env = dict(os.environ)
        env.pop("NO_COLOR", None)
        os.execve(sclib.STACKCHECK, [sclib.STACKCHECK] + args, env)
    start, chunks = time.monotonic(), []
    while time.monotonic() - start < timeout:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not data:
            break
        chunks.append((time.monotonic() - start, data))
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), chunks


def screen(raw):
    """The lines a terminal shows after raw: carriage return, erase to end of line and colours
    applied, so a status line rewritten in place leaves nothing behind once erased."""
    lines, line, col, i = [], [], 0, 0
    while i < len(raw):
        c = raw[i]
        if raw.startswith("\033[K", i):
            del line[col:]
            i += 3
            continue
        if c == "\033":  # a colour: ESC [ ... m
            end = raw.find("m", i)
            i = end + 1 if end > 0 else len(raw)
            continue
        if c == "\r":
            col = 0
        elif c == "\n":
            lines.append("".join(line))
            line, col = [], 0
        else:
            if col < len(line):
                line[col] = c
            else:
                line.append(c)
            col += 1
        i += 1
    if line:
        lines.append("".join(line))
    return lines


class LiveOnTerminal(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.script = script_file(SLOW_SCRIPT)
        cls.rc, cls.chunks = run_in_pty(["--keep-going", "--python", sclib.quick_python(),
                                         "--app-script", cls.script])
        cls.raw = b"".join(c for _, c in cls.chunks).decode("utf-8", "replace")

    @classmethod
    def tearDownClass(cls):
        os.unlink(cls.script)

    def arrival(self, text):
        """Seconds after the start when text had arrived, or None."""
        seen = b""
        for t, data in self.chunks:
            seen += data
            if text.encode() in seen:
                return t
        return None

    def test_driver_lines_arrive_before_the_slow_app_ends(self):
        end = self.chunks[-1][0]
        driver = self.arrival("driver.devices")
        self.assertIsNotNone(driver, self.raw)
        self.assertIsNotNone(self.arrival("stackcheck "), self.raw)
        # the app's second stage alone sleeps 7 s after the driver layer is done
        self.assertLess(driver, end - 5, (driver, end))
        self.assertLess(self.arrival("runtime.hip"), end - 5)

    def test_status_line_names_the_stage_and_is_erased(self):
        self.assertIn("running: app.script (run 1: slow train)", self.raw)
        self.assertRegex(self.raw, r"app\.script \(run 1: slow train\) \d+\.\d s of \d+ s")
        final = screen(self.raw)
        self.assertFalse([l for l in final if "running:" in l], final)
        self.assertTrue(any(l.startswith("Verdict:") for l in final), final)
        app = [l for l in final if "app.script" in l]
        self.assertEqual(len(app), 1, final)
        self.assertIn("PASS", app[0])

    def test_app_summary_names_its_stages(self):
        app = next(l for l in screen(self.raw) if "app.script" in l)
        self.assertRegex(app, r"stages load 0\.\d s, slow train 7\.\d s; one run \d+\.\d s")


class LiveOffTerminal(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.script = script_file(SLOW_SCRIPT)
        cls.run_ = sclib.run(["--keep-going", "--python", sclib.quick_python(),
                              "--app-script", cls.script])

    @classmethod
    def tearDownClass(cls):
        os.unlink(cls.script)

    def test_still_running_line_for_a_slow_probe(self):
        out = self.run_.stdout
        self.assertRegex(out, r"(?m)^still running: app\.script \(run 1: slow train\) \d+\.\d s "
                              r"of \d+ s$")
        self.assertNotIn("\r", out)
        self.assertNotIn("\033", out)
        # it comes before the app layer's lines, which arrive when the app ended
        self.assertLess(out.index("still running: app.script"), out.index("app        "))

    def test_step_timings_in_the_snapshot(self):
        sclib.validate_snapshot(self, self.run_.snapshot)
        steps = self.run_.probe("app.script")["steps"]
        names = [s["name"] for s in steps]
        self.assertIn("run 1: load", names)
        train = steps[names.index("run 1: slow train")]
        self.assertGreater(train["duration_ms"], 6500)
        hip = [s["name"] for s in self.run_.probe("runtime.hip")["steps"]]
        self.assertEqual(hip[:2], ["loading the runtime", "initialising"])
        torch = [s["name"] for s in self.run_.probe("framework.torch")["steps"]]
        self.assertEqual(torch[0], "starting python")

    def test_never_and_quiet_print_no_progress(self):
        for flag in ("--progress=never", "-q"):
            r = sclib.run(["--keep-going", "--python", sclib.quick_python(), flag,
                           "--app", "sleep 6"])
            self.assertNotIn("still running", r.stdout + r.stderr, flag)
            self.assertIsNotNone(r.snapshot)

    def test_always_rewrites_off_a_terminal(self):
        out = subprocess.run([sclib.STACKCHECK, "--progress", "always"], capture_output=True,
                             timeout=300).stdout.decode("utf-8", "replace")
        self.assertIn("\r", out)  # NO_COLOR: erased with blanks, no escape sequence
        self.assertNotIn("\033", out)
        self.assertIn("running: driver.devices", out)
        self.assertNotIn("running:", "\n".join(screen(out)))

    def test_bad_values(self):
        for args in (["--progress", "sometimes"], ["--jobs", "0"], ["--jobs", "x"]):
            r = sclib.run(args, json_file=False)
            self.assertEqual(r.rc, 2, args)


def passing_lines(stdout):
    return [l for l in stdout.splitlines() if l.startswith("  PASS ")]


class Summaries(unittest.TestCase):
    def test_every_passing_probe_says_what_it_saw(self):
        fixtures = sorted(d for d in os.listdir(sclib.FIXTURES)
                          if os.path.isdir(os.path.join(sclib.FIXTURES, d)))
        seen = 0
        for name in fixtures:
            r = sclib.run(["--sysroot", sclib.fixture(name)])
            for line in passing_lines(r.stdout):
                seen += 1
                probe_id, _, summary = line[len("  PASS     "):].partition(" ")
                self.assertTrue(summary.strip(), (name, line))
        self.assertGreater(seen, 5)

    def test_here_the_libraries_name_their_count_roots_and_runtime(self):
        r = sclib.run(["--keep-going", "--python", sclib.DEBIAN_PYTHON])
        hip = next(l for l in passing_lines(r.stdout) if "libraries.hip" in l)
        self.assertRegex(hip, r"\d+ libraries from /usr; runtime libamdhip64\.so\.5 \(/usr\)")
        for line in passing_lines(r.stdout):
            self.assertTrue(line[len("  PASS     "):].partition(" ")[2].strip(), line)


class SerialAndParallel(unittest.TestCase):
    def compare(self, args):
        serial = sclib.run(["--jobs", "1"] + args)
        parallel = sclib.run(["--jobs", "4"] + args)
        self.assertEqual(serial.rc, parallel.rc, args)
        self.assertEqual(sclib.normalised(serial.snapshot), sclib.normalised(parallel.snapshot),
                         args)
        return serial, parallel

    def test_same_snapshot_on_every_fixture(self):
        fixtures = sorted(d for d in os.listdir(sclib.FIXTURES)
                          if os.path.isdir(os.path.join(sclib.FIXTURES, d)))
        self.assertGreater(len(fixtures), 5)
        for name in fixtures:
            with self.subTest(fixture=name):
                serial, parallel = self.compare(["--sysroot", sclib.fixture(name)])
                self.assertEqual(serial.stdout, parallel.stdout)

    def test_same_snapshot_here(self):
        self.compare(["--keep-going", "--python", sclib.DEBIAN_PYTHON])


if __name__ == "__main__":
    unittest.main()
