"""`stackcheck capture OUT.tar.gz` and its replay with --sysroot: a replay gives the same passive
facts and findings as the run that captured (on this machine and on every fixture root), from the
tarball and from its unpacked directory; what leaves the machine is redacted; a hostile tarball
is refused with a clear error and leaves nothing behind."""
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402
from sclib import STACKCHECK, TempDirCase, fixture, main  # noqa: E402


def stackcheck(args, env=None, tmpdir=None, timeout=300):
    e = dict(golden.CLEAN_ENV)
    e.update(env or {})
    if tmpdir:
        e["TMPDIR"] = tmpdir
    return subprocess.run([STACKCHECK, *args], env=e, capture_output=True, text=True,
                          timeout=timeout)


def tar_bytes(members):
    """A gzip-compressed tar of (TarInfo, data or None) pairs, written as they are."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for info, data in members:
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return gzip.compress(raw.getvalue())


def member(name, kind=tarfile.REGTYPE, data=b"", target=""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    info.linkname = target
    info.mode = 0o644
    return info, data if kind == tarfile.REGTYPE else None


class CaptureReplay(TempDirCase):
    def capture(self, out, *args, env=None):
        r = stackcheck(["capture", *args, out], env=env, tmpdir=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.getsize(out) > 0)
        return r

    def assert_same(self, expected, actual, what):
        self.assertEqual(golden.dump(expected), golden.dump(actual), what)

    def test_live_capture_replays_to_the_same_facts_and_findings(self):
        out = os.path.join(self.tmp, "live.tar.gz")
        snap = os.path.join(self.tmp, "live.json")
        r = self.capture(out, "--json", snap)
        self.assertRegex(r.stdout, r"captured \d+ files \(\d+ bytes\).* into .*live\.tar\.gz")
        with open(snap) as f:
            live = golden.normalise(json.load(f))
        self.assertTrue(any(p["facts"] for layer in live["layers"] for p in layer["probes"]))
        self.assert_same(live, golden.run_root(out), "replay of the tarball")
        unpacked = os.path.join(self.tmp, "live-unpacked")
        os.mkdir(unpacked)
        # any tar reads it (ustar with pax headers): GNU tar unpacks it here
        subprocess.run(["tar", "-xzf", out, "-C", unpacked], check=True)
        self.assertTrue(os.path.isfile(os.path.join(unpacked, ".stackcheck", "capture.json")))
        self.assert_same(live, golden.run_root(unpacked), "replay of the unpacked directory")
        self.assertEqual(os.listdir(self.tmp).count("live-unpacked"), 1)
        self.assertFalse([n for n in os.listdir(self.tmp) if n.startswith("stackcheck-")],
                         "a private directory left behind")

    def test_replay_gives_the_passive_facts_of_a_plain_live_run(self):
        """The driver layer and the host read files only in a plain run too (bar the DRM
        interface version, which needs the live device): a replay matches them."""
        out = os.path.join(self.tmp, "plain.tar.gz")
        self.capture(out)
        live = stackcheck(["--json", "-"], tmpdir=self.tmp)
        self.assertIn(live.returncode, (0, 1), live.stderr)
        live = golden.normalise(json.loads(live.stdout))
        replay = golden.run_root(out)

        def passive(snap):
            driver = next(layer for layer in snap["layers"] if layer["name"] == "driver")
            probes = [{k: v for k, v in p.items() if k != "facts"} for p in driver["probes"]]
            facts = [{k: v for k, v in p["facts"].items() if k != "drm"}
                     for p in driver["probes"]]
            return {"host": snap["host"], "probes": probes, "facts": facts}
        self.assert_same(passive(live), passive(replay), "driver layer and host")

    def test_capture_of_every_fixture_root_replays_as_the_root(self):
        for name in golden.fixture_roots():
            with self.subTest(root=name):
                out = os.path.join(self.tmp, name + ".tar.gz")
                self.capture(out, "--sysroot", fixture(name))
                self.assert_same(golden.run_root(fixture(name)), golden.run_root(out), name)

    def test_replayed_errors_and_environment(self):
        # a capture of a capture keeps what the first one recorded
        first = os.path.join(self.tmp, "first.tar.gz")
        second = os.path.join(self.tmp, "second.tar.gz")
        self.capture(first, env={"HIP_VISIBLE_DEVICES": "1", "HF_TOKEN": "hf_s3cretvalue"})
        self.capture(second, "--sysroot", first)
        self.assert_same(golden.run_root(first), golden.run_root(second), "capture of a capture")
        with tarfile.open(first) as tf:
            manifest = json.load(tf.extractfile(".stackcheck/capture.json"))
        self.assertEqual(manifest["format"], "stackcheck-capture/1")
        self.assertEqual(manifest["root"], "live")
        self.assertEqual(manifest["env"]["HIP_VISIBLE_DEVICES"], "1")
        r = stackcheck(["--sysroot", first, "--json", "-"], tmpdir=self.tmp)
        self.assertEqual(json.loads(r.stdout)["env"].get("HIP_VISIBLE_DEVICES"), "1", r.stderr)


class CaptureRedaction(TempDirCase):
    def test_secrets_never_leave_in_the_tarball(self):
        root = os.path.join(self.tmp, "root")
        shutil.copytree(fixture("plain-server"), root, symlinks=True)
        with open(os.path.join(root, "etc", "os-release"), "a") as f:
            f.write('HOME_URL="https://deploy:hunter2secret@mirror.internal.example/os"\n')
        with open(os.path.join(root, "etc", "passwd"), "a") as f:
            f.write("alice:$6$saltsalt$hashhashhash:1234:1234:Alice Liddell,,,:/home/alice:"
                    "/bin/zsh\n")
        out = os.path.join(self.tmp, "red.tar.gz")
        r = stackcheck(["capture", "--sysroot", root, out],
                       env={"HF_TOKEN": "hf_s3cretvalue", "NCCL_DEBUG": "INFO"}, tmpdir=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, "rb") as f:
            content = gzip.decompress(f.read())
        for secret in (b"hunter2secret", b"hf_s3cretvalue", b"Alice Liddell", b"/home/alice",
                       b"$6$saltsalt", b"alice"):
            self.assertNotIn(secret, content)
        with tarfile.open(out) as tf:
            passwd = tf.extractfile("etc/passwd").read().decode()
            manifest = json.load(tf.extractfile(".stackcheck/capture.json"))
        self.assertIn("root:x:0:0:::", passwd)
        self.assertEqual(manifest["env"]["NCCL_DEBUG"], "INFO")

    def test_size_limits_leave_content_out_and_say_so(self):
        out = os.path.join(self.tmp, "small.tar.gz")
        r = stackcheck(["capture", "--sysroot", fixture("hygon-dcu"), "--max-file-size", "100",
                        out], tmpdir=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        with tarfile.open(out) as tf:
            manifest = json.load(tf.extractfile(".stackcheck/capture.json"))
            omitted = {o["path"]: o for o in manifest["omitted"]}
            self.assertIn("/proc/cpuinfo", omitted)
            self.assertEqual(tf.getmember("proc/cpuinfo").size, 0)
        self.assertIn("limit", omitted["/proc/cpuinfo"]["reason"])
        replay = golden.run_root(out)
        self.assertIsNone(replay["host"]["cpu"])  # a null, with the reason
        self.assertIn("omitted from the capture",
                      replay["host"]["os"]["unavailable"]["pretty_name"])
        for bad in ("0", "-1", "x", str(2 << 30)):
            r = stackcheck(["capture", "--max-file-size", bad, out], tmpdir=self.tmp)
            self.assertEqual(r.returncode, 2)
            self.assertIn("--max-file-size", r.stderr)


class HostileTarballs(TempDirCase):
    """Each is refused (exit 2) with a message that says what is wrong; nothing is written
    outside the private directory, and that directory is removed."""
    CASES = {
        "traversal": ([member("../evil", data=b"x")], "unsafe"),
        "traversal-deep": ([member("etc/../../evil", data=b"x")], "unsafe"),
        "absolute": ([member("/tmp/evil", data=b"x")], "unsafe"),
        "symlink-out": ([member("out", tarfile.SYMTYPE, target="/"),
                         member("out/evil", data=b"x")], "symbolic link"),
        "symlink-dotdot": ([member("up", tarfile.SYMTYPE, target="../../.."),
                            member("up/evil", data=b"x")], "symbolic link"),
        "hardlink": ([member("etc/passwd", data=b"x"),
                      member("hard", tarfile.LNKTYPE, target="etc/passwd")], "hard link"),
        "device": ([member("dev/sda", tarfile.BLKTYPE)], "block device"),
        "fifo": ([member("fifo", tarfile.FIFOTYPE)], "FIFO"),
        "twice": ([member("a", data=b"1"), member("a", data=b"2")], "twice"),
        "bad-manifest": ([member(".stackcheck/capture.json", data=b"{")], "manifest"),
        "manifest-format": ([member(".stackcheck/capture.json", data=json.dumps({
            "format": "stackcheck-capture/99", "root": "live"}).encode())], "manifest is not"),
        "manifest-node": ([member(".stackcheck/capture.json", data=json.dumps({
            "format": "stackcheck-capture/1", "root": "live", "omitted": [], "errors": [],
            "access": [], "env": {}, "nodes": [{"path": "/dev/kfd", "type": "teleporter",
                                               "major": 1, "minor": 1, "mode": "0666",
                                               "uid": 0, "gid": 0}]}).encode())], "a node"),
        "manifest-env": ([member(".stackcheck/capture.json", data=json.dumps({
            "format": "stackcheck-capture/1", "root": "live", "nodes": [], "omitted": [],
            "errors": [], "access": [], "env": {"SSH_AUTH_SOCK": "/tmp/agent"}}).encode())],
            "environment variable"),
    }

    def refused(self, path, needle):
        r = stackcheck(["--sysroot", path, "--json", "-"], tmpdir=self.tmp, timeout=120)
        self.assertEqual(r.returncode, 2, r.stderr + r.stdout)
        self.assertEqual(r.stdout, "")
        self.assertIn(needle.lower(), r.stderr.lower())
        self.assertFalse([n for n in os.listdir(self.tmp) if n.startswith("stackcheck-")],
                         "the private directory is left behind")
        self.assertFalse(os.path.exists(os.path.join(os.path.dirname(self.tmp), "evil")))
        return r

    def test_each_hostile_archive_is_refused(self):
        for name, (members, needle) in self.CASES.items():
            with self.subTest(case=name):
                path = os.path.join(self.tmp, name + ".tar.gz")
                with open(path, "wb") as f:
                    f.write(tar_bytes(members))
                self.refused(path, needle)

    def test_huge_declared_size_is_refused_before_reading(self):
        info = tarfile.TarInfo("big")
        info.size = 1 << 40
        raw = info.tobuf(tarfile.GNU_FORMAT) + b"\0" * 1024  # the data is not there
        path = os.path.join(self.tmp, "huge.tar")
        with open(path, "wb") as f:
            f.write(raw)
        r = self.refused(path, "declares 1099511627776 bytes")
        self.assertIn("is not a capture stackcheck can replay", r.stderr)

    def test_malformed_archives(self):
        good = tar_bytes([member("etc/os-release", data=b"ID=x\n")])
        raw = gzip.decompress(good)
        bad_sum = bytearray(raw)
        bad_sum[0] ^= 1  # the name changes, the checksum does not
        cases = {"truncated-gzip": (good[: len(good) // 2], "corrupt"),
                 "no-end": (gzip.compress(raw[:1024]), "truncated"),
                 "checksum": (bytes(bad_sum), "checksum"),
                 "not-tar": (b"just some text, not an archive\n" * 40, "checksum"),
                 "empty": (b"", "truncated")}
        for name, (data, needle) in cases.items():
            with self.subTest(case=name):
                path = os.path.join(self.tmp, name + ".tar.gz")
                with open(path, "wb") as f:
                    f.write(data)
                self.refused(path, needle)

    def test_a_fifo_named_as_the_capture_is_not_waited_on(self):
        path = os.path.join(self.tmp, "fifo.tar.gz")
        os.mkfifo(path)
        self.addCleanup(os.unlink, path)
        r = stackcheck(["--sysroot", path, "--json", "-"], tmpdir=self.tmp, timeout=60)
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    main()
