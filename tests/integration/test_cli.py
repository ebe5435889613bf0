"""The command line as a user and a CI job meet it: help, version, exit codes, sub-commands, the
snapshot on standard output, JUnit, colour only on a terminal, redaction of planted secrets, schema
validation, and the findings catalogue kept in step with the code."""
import os
import pty
import re
import tempfile
import xml.etree.ElementTree as ET

import sclib
from sclib import unittest

SECRETS = {
    "TORCH_HUB_TOKEN": "tok-planted-0001",
    "HF_TOKEN": "hf_plantedplantedplanted0002",
    "PYTHONPATH": "https://alice:planted-pass-0003@pkgs.example.com/simple",
    "HIP_PATH": "/opt/rocm/hip?token=planted-0004",
    "NCCL_SOCKET_IFNAME": "eth0 password=planted-0005",
    "AWS_SECRET_ACCESS_KEY": "planted-0006",
}


class CommandLine(unittest.TestCase):
    def test_help_and_version(self):
        r = sclib.run(["--help"], json_file=False)
        self.assertEqual(r.rc, 0)
        self.assertIn("Exit status:", r.stdout)
        self.assertIn("2  usage error or unreadable input", r.stdout)
        for opt in ("--json", "--junit", "--sysroot", "--keep-going", "--timeout", "--no-color"):
            self.assertIn(opt, r.stdout)
        r = sclib.run(["--version"], json_file=False)
        self.assertEqual(r.rc, 0)
        self.assertRegex(r.stdout, r"^stackcheck \d+\.\d+\.\d+\n$")

    def test_usage_errors_exit_2(self):
        for args in (["--bogus"], ["--timeout", "abc"], ["--timeout", "-1"], ["extra"],
                     ["--sysroot", "/nonexistent/root"], ["explain"],
                     ["--app-repeat", "0"]):
            r = sclib.run(args, json_file=False)
            self.assertEqual(r.rc, 2, args)
            self.assertIn("stackcheck:", r.stderr, args)

    def test_explain_and_list(self):
        r = sclib.run(["explain", "driver.no-accelerator"], json_file=False)
        self.assertEqual(r.rc, 0)
        self.assertTrue(r.stdout.startswith("### `driver.no-accelerator`"))
        self.assertIn("**Remedy:**", r.stdout)
        r = sclib.run(["list"], json_file=False)
        self.assertEqual(r.rc, 0)
        self.assertIn("driver.amd", r.stdout)
        self.assertIn("driver.no-accelerator", r.stdout)

    def test_live_run_snapshot_validates(self):
        r = sclib.run([])
        self.assertIn(r.rc, (0, 1))
        self.assertIsNotNone(r.snapshot)
        sclib.validate_snapshot(self, r.snapshot)
        self.assertEqual(r.snapshot["summary"]["exit_code"], r.rc)
        self.assertEqual([l["name"] for l in r.snapshot["layers"]],
                         ["driver", "runtime", "libraries", "framework", "app"])
        self.assertIn("Verdict:", r.stdout)

    def test_json_to_stdout_report_to_stderr(self):
        r = sclib.run(["--json", "-"], json_file=False)
        import json
        snap = json.loads(r.stdout)
        self.assertEqual(snap["schema"], "stackcheck/snapshot/v1")
        self.assertIn("Verdict:", r.stderr)
        self.assertEqual(snap["summary"]["exit_code"], r.rc)

    def test_junit(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "junit.xml")
            r = sclib.run(["--junit", path])
            root = ET.parse(path).getroot()
            self.assertEqual(root.tag, "testsuites")
            suites = [s.get("name") for s in root.findall("testsuite")]
            self.assertEqual(suites, ["driver", "runtime", "libraries", "framework", "app"])
            cases = {c.get("name"): c for c in root.iter("testcase")}
            probes = [p["id"] for l in r.snapshot["layers"] for p in l["probes"]]
            self.assertEqual(sorted(cases), sorted(probes))
            for layer in r.snapshot["layers"]:
                for p in layer["probes"]:
                    c = cases[p["id"]]
                    want = {"fail": "failure", "crash": "failure", "timeout": "error",
                            "error": "error", "skip": "skipped"}.get(p["status"])
                    self.assertEqual([e.tag for e in c], [want] if want else [], p["id"])

    def test_unwritable_snapshot_path_exits_2_after_report(self):
        # A missing directory is created now; a regular file where a directory must be is not.
        with tempfile.NamedTemporaryFile() as plain:
            r = sclib.run(["--json", plain.name + "/s.json"], json_file=False)
        self.assertEqual(r.rc, 2)
        self.assertIn("Verdict:", r.stdout)
        self.assertIn("Not a directory", r.stderr)

    def test_redaction_of_planted_secrets(self):
        r = sclib.run(["--keep-going", "--app", "echo https://bob:planted-0007@x.example/"],
                      env=SECRETS)
        import json
        text = json.dumps(r.snapshot) + r.stdout + r.stderr
        for value in list(SECRETS.values()) + ["planted-0007"]:
            for fragment in re.findall(r"planted[-\w]*|tok-planted-0001", value):
                self.assertNotIn(fragment, text, value)
        env = r.snapshot["env"]
        self.assertEqual(env["TORCH_HUB_TOKEN"], "[redacted]")
        self.assertNotIn("HF_TOKEN", env)
        self.assertNotIn("AWS_SECRET_ACCESS_KEY", env)
        self.assertEqual(env["PYTHONPATH"], "https://[redacted]@pkgs.example.com/simple")
        self.assertIn("[redacted]", " ".join(r.snapshot["argv"]))

    def test_colour_only_on_a_terminal(self):
        r = sclib.run([], env={"NO_COLOR": None})
        self.assertNotIn("\x1b[", r.stdout)  # a pipe is not a terminal
        env = dict(os.environ)
        env.pop("NO_COLOR", None)
        for extra, want_colour in (({}, True), ({"NO_COLOR": "1"}, False)):
            pid, fd = pty.fork()
            if pid == 0:
                os.execve(sclib.STACKCHECK, [sclib.STACKCHECK], dict(env, **extra))
            out = b""
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            os.waitpid(pid, 0)
            self.assertEqual(b"\x1b[" in out, want_colour, extra)
        r = sclib.run(["--no-color"], env={"NO_COLOR": None})
        self.assertNotIn("\x1b[", r.stdout)


class FindingsCatalogue(unittest.TestCase):
    """Every finding id the code can emit is documented in docs/findings.md, and vice versa."""

    def documented(self):
        with open(os.path.join(sclib.SOURCE_DIR, "docs", "findings.md")) as f:
            text = f.read()
        return re.findall(r"^### `([^`]+)`$", text, re.M), text

    def emitted(self, prefixes):
        ids = set()
        sources = sclib.source_files("*.c", "*.py")
        literal = re.compile(r"[\"']((?:%s)\.[a-z0-9]+(?:-[a-z0-9]+)*)[\"']" % "|".join(prefixes))
        for path in sources:
            with open(path, errors="replace") as f:
                ids.update(literal.findall(f.read()))
        return ids

    def test_every_id_documented_and_every_entry_used(self):
        ids, text = self.documented()
        self.assertEqual(len(ids), len(set(ids)), "duplicate entries")
        for i in ids:
            self.assertRegex(i, r"^[a-z0-9]+\.[a-z0-9]+(-[a-z0-9]+)*$")
            entry = text.split("### `%s`" % i, 1)[1].split("\n### ", 1)[0]
            self.assertRegex(entry, r"\*\*Severity:\*\* (info|warn|error)", i)
            self.assertIn("**Remedy:**", entry, i)
        prefixes = sorted({i.split(".")[0] for i in ids})
        code_ids = self.emitted(prefixes)
        # probe ids share the layer names; finding ids never use them as prefixes
        code_ids = {i for i in code_ids if i.split(".")[0] not in
                    ("driver", "runtime", "libraries", "framework", "app") or i in ids}
        self.assertEqual(sorted(code_ids - set(ids)), [], "emitted but not documented")
        self.assertEqual(sorted(set(ids) - code_ids), [], "documented but never emitted")


if __name__ == "__main__":
    sclib.main()
