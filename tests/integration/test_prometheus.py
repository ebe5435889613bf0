"""--prometheus FILE (issue 13 point 4): node_exporter textfile-collector metrics, written
atomically, accepted by `promtool check metrics`, with the series the dashboards and alerts use."""
import os
import re
import shutil
import subprocess

import sclib
from sclib import unittest

PROMTOOL = shutil.which("promtool")


def series(text):
    """{(name, frozenset(labels.items())): value} of the exposition text."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^(\w+)(?:\{(.*)\})? (\S+)$', line)
        assert m, line
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        out[(m.group(1), frozenset(labels.items()))] = float(m.group(3))
    return out


def find(s, name, **labels):
    return [v for (n, ls), v in s.items() if n == name and set(labels.items()) <= set(ls)]


@unittest.skipUnless(PROMTOOL, "promtool (Debian package prometheus) is not installed")
class Metrics(sclib.SysrootCase):
    def metrics(self, root, env=None):
        tmp = self.temp_dir()
        path = os.path.join(tmp, "textfile", "stackcheck.prom")
        r = sclib.run(["--sysroot", root, "-q", "--prometheus", path], env=env)
        self.assertIsNotNone(r.snapshot, r.stderr)
        with open(path) as f:
            text = f.read()
        check = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                               text=True)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr + text)
        self.assertEqual(os.listdir(os.path.dirname(path)), ["stackcheck.prom"])
        return r, text, series(text)

    def temp_dir(self):
        import tempfile
        d = tempfile.mkdtemp(prefix="sc-prom-")
        self.addCleanup(shutil.rmtree, d, True)
        return d

    def test_a_passing_node_devices_and_info(self):
        r, text, s = self.metrics(sclib.fixture("mi250x-8gcd"))
        self.assertEqual(r.rc, 0)
        self.assertEqual(find(s, "stackcheck_verdict", status="pass"), [1])
        self.assertEqual(find(s, "stackcheck_layer_status", layer="driver", status="pass"), [1])
        self.assertEqual(find(s, "stackcheck_layer_status", layer="driver", status="fail"), [0])
        self.assertEqual(find(s, "stackcheck_probe_status", probe="driver.amd", status="pass"),
                         [1])
        self.assertEqual(find(s, "stackcheck_devices", backend="amd", arch="gfx90a"), [8])
        info = [dict(ls) for (n, ls), v in s.items() if n == "stackcheck_info"]
        self.assertEqual(len(info), 1)
        self.assertEqual(info[0]["driver"], "amdgpu 6.3.6")
        self.assertEqual(info[0]["firmware"], "fw 78")
        for label in ("runtime", "toolkit", "torch", "kernel", "stackcheck_version"):
            self.assertIn(label, info[0])
        stamp = find(s, "stackcheck_last_run_timestamp_seconds")
        self.assertEqual(len(stamp), 1)
        self.assertGreater(stamp[0], 1.7e9)
        self.assertIn("# TYPE stackcheck_probe_status gauge", text)

    def test_a_failing_node_counts_its_findings(self):
        r, _, s = self.metrics(sclib.fixture("plain-server"))
        self.assertEqual(r.rc, 1)
        self.assertEqual(find(s, "stackcheck_verdict", status="fail"), [1])
        self.assertEqual(find(s, "stackcheck_findings", id="driver.no-accelerator",
                              severity="error"), [1])
        self.assertEqual(find(s, "stackcheck_layer_status", layer="driver", status="fail"), [1])

    def test_label_values_are_escaped(self):
        root = self.temp_copy("mi250x-8gcd")
        self.write(root, "proc/sys/kernel/osrelease", '6.1"evil\\x} 1\n')
        _, text, s = self.metrics(root)  # promtool accepts it: nothing broke out of the label
        info = [dict(ls) for (n, ls), v in s.items() if n == "stackcheck_info"][0]
        self.assertEqual(info["kernel"], '6.1\\"evil\\\\x} 1')


if __name__ == "__main__":
    sclib.main()
