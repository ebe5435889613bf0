"""Text hygiene through the real binary: bytes that are not UTF-8 (\\xff\\xfe, a 3-byte character
cut in half) and control characters (ESC [ 31m, BEL, OSC 52, the 8-bit CSI 0x9b, U+009B, U+202E)
planted in a fixture root (os-release, the kernel log, a DTK version file), in a snapshot given to
`diff`, in a file name given to `libs` and in arguments. Every snapshot and JSON output must load
with Python's strict json.load, the JUnit file must parse as XML, and no raw control character may
reach standard output or error of run, diff, libs and explain."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

import sclib

HOSTILE = (b"\x1b[31mred\x1b[0m \x07bell \x1b]52;c;SGVsbG8=\x07 csi\x9b31m c1\xc2\x9b31m "
           b"rtl\xe2\x80\xaeevil bad\xff\xfe half\xe2\x82")
EURO = "\u20ac".encode()


def raw_controls(data):
    """The control characters a terminal would act on in data (bytes): C0 but newline and tab, DEL,
    C1 as raw bytes or as U+0080-U+009F, bidirectional controls; and whether data is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return ["not UTF-8: %r" % data[max(0, e.start - 20):e.end + 20]]
    bidi = {0x061C, 0x200E, 0x200F, 0x2028, 0x2029} | set(range(0x202A, 0x202F)) | \
        set(range(0x2066, 0x206A))
    return ["U+%04X at %d" % (ord(c), i) for i, c in enumerate(text)
            if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F or ord(c) in bidi]


def strict_json(path):
    with open(path, encoding="utf-8", errors="strict") as f:
        return json.load(f)


def run_bytes(args, **kw):
    """Runs the binary with args; returns (exit code, stdout bytes, stderr bytes)."""
    env = dict(os.environ, NO_COLOR="1")
    p = subprocess.run([sclib.STACKCHECK] + args, capture_output=True, env=env, timeout=300, **kw)
    return p.returncode, p.stdout, p.stderr


class Hygiene(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sc-hyg-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def assertTerminalSafe(self, data, what):
        self.assertEqual(raw_controls(data), [], "%s: %r" % (what, data[-600:]))

    def hostile_root(self):
        """A copy of the hygon-dcu fixture with hostile bytes in os-release (one PRETTY_NAME
        longer than the field, cut inside a 3-byte character), the kernel log and a DTK version
        file."""
        root = sclib.copy_fixture("hygon-dcu")
        self.addCleanup(shutil.rmtree, root, True)
        long_name = b"L" * 254 + EURO + b"tail"  # the 256-byte field ends inside the euro sign
        with open(os.path.join(root, "etc/os-release"), "wb") as f:
            f.write(b'PRETTY_NAME="OS ' + HOSTILE + b'"\nID=' + long_name + b"\nVERSION_ID=1\n")
        with open(os.path.join(root, "var/log/kern.log"), "ab") as f:
            f.write(b"Oct  9 18:00:00 dcu01 kernel: [9999.1] [drm:amdgpu_job_timedout [hydcu]] "
                    b"*ERROR* ring gfx_0.0.0 timeout " + HOSTILE + b"\n")
        with open(os.path.join(root, "opt/dtk-25.04.2/.info/version"), "wb") as f:
            f.write(b"25.04.2 " + HOSTILE + b"\n")
        return root

    def test_run_on_hostile_fixture(self):
        root = self.hostile_root()
        snap, junit = os.path.join(self.tmp, "s.json"), os.path.join(self.tmp, "j.xml")
        rc, out, err = run_bytes(["--sysroot", root, "-v", "--json", snap, "--junit", junit])
        self.assertIn(rc, (0, 1), err)
        self.assertTerminalSafe(out, "report")
        self.assertTerminalSafe(err, "stderr")
        self.assertIn(b"\\x1b]52;c;", out)  # the text is there, escaped
        self.assertIn(b"\\u202e", out)
        s = strict_json(snap)
        sclib.validate_snapshot(self, s)
        os_facts = s["host"]["os"]
        self.assertIn("\x1b]52;c;SGVsbG8=\x07", os_facts["pretty_name"])  # kept, JSON-escaped
        self.assertIn("bad\ufffd\ufffd half\ufffd\ufffd", os_facts["pretty_name"])
        self.assertEqual(os_facts["id"], "L" * 254)  # cut before the euro sign, not inside it
        ET.parse(junit)

    def test_app_output_through_report_snapshot_and_junit(self):
        """The app's output reaches a finding's message, so the report and the JUnit file."""
        snap, junit = os.path.join(self.tmp, "s.json"), os.path.join(self.tmp, "j.xml")
        hostile = os.path.join(self.tmp, "hostile.bin")
        with open(hostile, "wb") as f:
            f.write(HOSTILE + b" nonchar\xef\xbf\xbf\n")
        rc, out, err = run_bytes(["--keep-going", "-v", "--app", "cat %s; exit 1" % hostile,
                                  "--json", snap, "--junit", junit])
        self.assertEqual(rc, 1, err)
        self.assertTerminalSafe(out, "report")
        self.assertTerminalSafe(err, "stderr")
        self.assertIn(b"]52;c;SGVsbG8=", out)  # the message made it, its controls neutered
        message = next(f["message"] for layer in strict_json(snap)["layers"]
                       for p in layer["probes"] for f in p["findings"] if f["id"] == "app.failed")
        self.assertIn("nonchar\ufffd", message)
        cases = ET.parse(junit).getroot().iter("testcase")
        smoke = next(c for c in cases if c.get("name") == "app.smoke")
        self.assertIn("nonchar\ufffd", ET.tostring(smoke, encoding="unicode"))

    def crafted_snapshot(self, base):
        """base with hostile text in created, a finding's severity and message, a numerics type;
        written as bytes (not all of them UTF-8)."""
        s = json.loads(json.dumps(base))
        s["created"] = "\x1b]52;c;SGVsbG8=\x07\x1b[2J"
        probe = s["layers"][0]["probes"][0]
        probe["findings"].append({"id": "driver.hostile\x1b[31m", "severity": "error\x07",
                                  "message": "m\x1b]0;title\x07 \u202eevil \u009b31m",
                                  "hint": None})
        s["layers"][-1]["probes"].append({
            "id": "app.script", "backend": "none", "status": "pass", "reason": None,
            "duration_ms": 1, "applicable": True, "findings": [],
            "facts": {"numerics": {"modules": [
                {"module": "m\x1b[1m", "type": "Linear\x07\x1b[5m", "mean": 1.0}]}}})
        text = json.dumps(s, ensure_ascii=False).encode()
        return text.replace(b"evil", b"evil\xff\xfe\xe2\x82")

    def test_diff_of_hostile_snapshots(self):
        rc, _, err = run_bytes(["--sysroot", sclib.fixture("plain-server"), "--json",
                                os.path.join(self.tmp, "a.json")])
        a = strict_json(os.path.join(self.tmp, "a.json"))
        b_path = os.path.join(self.tmp, "b.json")
        with open(b_path, "wb") as f:
            f.write(self.crafted_snapshot(a))
        c = json.loads(json.dumps(a))
        c["schema"] = "stackcheck/\x1b]52;c;SGVsbG8=\x07"
        c_path = os.path.join(self.tmp, "c.json")
        with open(c_path, "w") as f:
            json.dump(c, f)
        a_path = os.path.join(self.tmp, "a.json")
        for args in (["diff", a_path, b_path], ["diff", b_path, a_path, "--json", "-"],
                     ["diff", a_path, c_path]):
            rc, out, err = run_bytes(args)
            self.assertIn(rc, (0, 1, 2), err)
            self.assertTerminalSafe(err, " ".join(args) + " stderr")
            if "--json" in args:
                json.loads(out.decode("utf-8", "strict"))
            else:
                self.assertTerminalSafe(out, " ".join(args))
        rc, out, err = run_bytes(["diff", a_path, c_path])
        self.assertEqual(rc, 2)
        self.assertIn(b"\\x1b]52;c;", err)

    def test_libs_explain_and_arguments(self):
        name = os.path.join(self.tmp.encode(), b"lib\x1b[31m\x07\xe2\x80\xae\xff.so")
        shutil.copy("/bin/true", name)
        out_json = os.path.join(self.tmp, "libs.json")
        rc, out, err = run_bytes([b"libs", b"--no-symbols", b"--json", out_json.encode(), name])
        self.assertIn(rc, (0, 1), err)
        self.assertTerminalSafe(out, "libs")
        self.assertTerminalSafe(err, "libs stderr")
        doc = strict_json(out_json)
        self.assertIn("\ufffd.so", doc["files"][0]["path"])
        # explain exits 1 for a text that matches nothing, 2 for the usage errors below.
        for args, shown in (([b"explain", b"\x1b]52;c;SGVsbG8=\x07"], b"\\x1b]52"),
                            ([b"--\x1b[31mcolour"], b"\\x1b[31m"), ([b"libs", b"--\x1b[2J"], b"\\x1b[2J"),
                            ([b"diff", b"--\x9b1m", b"a", b"b"], "\ufffd1m".encode()),
                            ([b"diff", b"--\xc2\x9b1m", b"a", b"b"], b"\\u009b1m"),
                            ([b"run", b"unexpected\xe2\x80\xae"], b"\\u202e")):
            rc, out, err = run_bytes(args)
            self.assertEqual(rc, 1 if args[0] == b"explain" else 2, args)
            self.assertTerminalSafe(out, repr(args))
            self.assertTerminalSafe(err, repr(args) + " stderr")
            self.assertIn(shown, err)


if __name__ == "__main__":
    sclib.main()
