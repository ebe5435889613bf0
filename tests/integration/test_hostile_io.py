"""What stackcheck is pointed at cannot hang it or be damaged by it. Outputs: --json to a private
character device, a symlink (dangling too), a FIFO with and without a reader, and --junit beside a
planted temporary symlink. Reads: a FIFO planted at each file the passive probes read in a fixture
sysroot, as the FILE of `stackcheck libs`, as a DT_NEEDED candidate, and inside an --ext
directory; every run ends within a generous bound, with a snapshot that says what was not read."""
import json
import os
import select
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sclib  # noqa: E402
from test_libs import so  # noqa: E402

WALL = 20  # seconds: a bound against hangs only; these runs take well under one


def run_bounded(args, **kw):
    """Runs stackcheck with args (no --json added) within WALL seconds; returns the
    CompletedProcess, or fails the calling test on a hang."""
    try:
        return subprocess.run([sclib.STACKCHECK] + list(args), capture_output=True, text=True,
                              timeout=WALL, **kw)
    except subprocess.TimeoutExpired:
        raise AssertionError("stackcheck %s did not finish within %d s" % (args, WALL))


class FifoReader(threading.Thread):
    """Reads a FIFO until its writer has come and gone (or a deadline): a reader exists from the
    start, so a writer's open does not fail, and this thread never blocks forever."""

    def __init__(self, path, deadline=WALL):
        super().__init__(daemon=True)
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.deadline = time.monotonic() + deadline
        self.data = b""

    def run(self):
        while time.monotonic() < self.deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if not ready:
                continue
            chunk = os.read(self.fd, 65536)
            if not chunk:  # EOF: a writer came and closed (before, select stays quiet)
                break
            self.data += chunk
        os.close(self.fd)


class OutputPaths(unittest.TestCase):
    """--json and --junit never replace what the path names."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sc-out-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.root = sclib.fixture("plain-server")

    def path(self, name):
        return os.path.join(self.dir, name)

    def stackcheck(self, *args):
        return run_bounded(["--sysroot", self.root] + list(args))

    def assert_snapshot_file(self, path):
        with open(path) as f:
            snap = json.load(f)
        self.assertEqual(snap["schema"], "stackcheck/snapshot/v1")

    def test_json_to_a_character_device_writes_it_and_keeps_it(self):
        dev = self.path("null")
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # private, never the real one
        rdev = os.lstat(dev).st_rdev
        r = self.stackcheck("--json", dev)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        st = os.lstat(dev)
        self.assertTrue(stat.S_ISCHR(st.st_mode), "the device was replaced")
        self.assertEqual(st.st_rdev, rdev)
        self.assertEqual([n for n in os.listdir(self.dir) if n != "null"], [], "a temporary left")

    def test_json_through_a_symlink_writes_its_target(self):
        link, target = self.path("link.json"), self.path("target.json")
        os.symlink("target.json", link)  # dangling: the run creates the target
        for _ in range(2):  # then replaces it, still through the link
            r = self.stackcheck("--json", link)
            self.assertIn(r.returncode, (0, 1), r.stderr)
            self.assertTrue(os.path.islink(link), "the link was replaced")
            self.assertEqual(os.readlink(link), "target.json")
            self.assert_snapshot_file(target)
        self.assertEqual(sorted(os.listdir(self.dir)), ["link.json", "target.json"])

    def test_json_to_a_fifo_with_a_reader(self):
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        reader = FifoReader(fifo)
        reader.start()
        r = self.stackcheck("--json", fifo)
        reader.join(WALL)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        self.assertEqual(json.loads(reader.data)["schema"], "stackcheck/snapshot/v1")
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced")

    def test_json_to_a_fifo_without_a_reader_is_a_clear_error(self):
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        r = self.stackcheck("--json", fifo)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("no reader on FIFO", r.stderr)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        self.assertEqual(os.listdir(self.dir), ["fifo"])

    def test_json_to_a_directory_is_an_error(self):
        r = self.stackcheck("--json", self.dir)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("is a directory", r.stderr)

    def test_junit_beside_a_planted_temporary_symlink(self):
        victim, xml = self.path("victim"), self.path("j.xml")
        with open(victim, "w") as f:
            f.write("precious\n")
        os.symlink(victim, xml + ".tmp")  # the name 0.1 wrote through
        r = self.stackcheck("--junit", xml)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        with open(victim) as f:
            self.assertEqual(f.read(), "precious\n")
        self.assertTrue(os.path.islink(xml + ".tmp"))
        with open(xml) as f:
            self.assertIn("<testsuites", f.read())

    def test_junit_through_a_symlink_and_to_a_device(self):
        dev, link = self.path("dev"), self.path("j.xml")
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        os.symlink("junit-target.xml", link)
        r = self.stackcheck("--junit", link, "--json", dev)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        self.assertTrue(os.path.islink(link))
        self.assertTrue(stat.S_ISCHR(os.lstat(dev).st_mode))
        with open(self.path("junit-target.xml")) as f:
            self.assertIn("<testsuites", f.read())


class NoReadBlocks(unittest.TestCase):
    """A FIFO where a file is expected is refused, recorded in the snapshot's not_read, and never
    waited on; the run goes on."""

    # (fixture, file inside it, (probe id, JSON path to a reason naming it) or None)
    SITES = [
        ("hygon-dcu", "etc/os-release", None),
        ("hygon-dcu", "var/log/kern.log", ("driver.amd", ["kernel_log", "unavailable", "errors"])),
        ("hygon-dcu", "sys/class/kfd/kfd/topology/nodes/1/properties", None),
        ("hygon-dcu", "sys/bus/pci/devices/0000:3f:00.0/vendor", None),
        ("hygon-dcu", "opt/dtk-24.04.1/.info/version", None),
        ("hygon-dcu", "etc/group", None),
        ("ascend-910b", "usr/local/Ascend/driver/version.info",
         ("driver.ascend", ["unavailable", "driver"])),
    ]

    def plant(self, fixture_name, rel):
        root = sclib.copy_fixture(fixture_name)
        os.chmod(root, 0o755)
        self.addCleanup(shutil.rmtree, root, True)
        path = os.path.join(root, rel)
        os.remove(path)
        os.mkfifo(path)
        return root

    def run_root(self, root, *extra):
        out = os.path.join(root, "..", os.path.basename(root) + ".json")
        self.addCleanup(lambda: os.path.exists(out) and os.remove(out))
        r = run_bounded(["--sysroot", root, "--json", out] + list(extra))
        self.assertTrue(os.path.exists(out), r.stderr)
        with open(out) as f:
            snap = json.load(f)
        sclib.validate_snapshot(self, snap)
        return r, snap

    def test_fifo_at_each_read_site(self):
        for fixture_name, rel, reason_at in self.SITES:
            with self.subTest(rel):
                root = self.plant(fixture_name, rel)
                start = time.monotonic()
                r, snap = self.run_root(root)
                self.assertLess(time.monotonic() - start, WALL)
                self.assertIn({"path": "/" + rel, "type": "FIFO",
                               "reason": "not a regular file where one was expected: not read"},
                              snap["not_read"])
                if rel == "etc/os-release":
                    self.assertIn("not a regular file", snap["host"]["os"]["unavailable"]["id"])
                if reason_at:
                    run = sclib.Run(r.returncode, r.stdout, r.stderr, snap, 0)
                    node = run.probe(reason_at[0])["facts"]
                    for key in reason_at[1]:
                        node = node[key]
                    self.assertIn("not a regular file", node)

    def test_a_clean_fixture_has_nothing_not_read(self):
        root = sclib.copy_fixture("hygon-dcu")
        self.addCleanup(shutil.rmtree, root, True)
        _, snap = self.run_root(root)
        self.assertEqual(snap["not_read"], [])


class LibrariesDoNotBlock(unittest.TestCase):
    """The ELF reader and the resolver: a FIFO as the file, as a DT_NEEDED candidate and in --ext."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sc-fifo-libs-")
        os.chmod(cls.tmp, 0o755)
        t = cls.tmp
        so(t + "/ext/libpipe.so", "int pipe_dep(void){return 0;}\n", "libpipe.so")
        so(t + "/ext/libuser.so", "int user(void){return 0;}\n", "libuser.so",
           ["-L" + t + "/ext", "-l:libpipe.so"], ["-Wl,--disable-new-dtags", "-Wl,-rpath,$ORIGIN"])
        os.remove(t + "/ext/libpipe.so")
        os.mkfifo(t + "/ext/libpipe.so")  # the DT_NEEDED candidate found through $ORIGIN
        os.mkfifo(t + "/ext/libfifo.so")  # named like a shared object in the --ext directory
        os.mkfifo(t + "/plain.fifo")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_libs_on_a_fifo_is_an_error_not_a_wait(self):
        out = os.path.join(self.tmp, "libs.json")
        r = run_bounded(["libs", "--json", out, self.tmp + "/plain.fifo"])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("not a regular file", r.stderr)
        with open(out) as f:
            self.assertEqual(json.load(f)["files"], [])

    def test_fifo_as_a_dt_needed_candidate_is_unreadable(self):
        r = run_bounded(["libs", "--json", "-", self.tmp + "/ext/libuser.so"])
        self.assertEqual(r.returncode, 1, r.stderr)
        f = json.loads(r.stdout)["files"][0]
        unreadable = [x["message"] for x in f["findings"] if x["id"] == "libs.unreadable"]
        self.assertEqual(len(unreadable), 1, f["findings"])
        self.assertIn("libpipe.so", unreadable[0])
        self.assertIn("not a regular file", unreadable[0])

    def test_ext_directory_with_fifos(self):
        out = os.path.join(self.tmp, "ext-run.json")
        r = run_bounded(["--keep-going", "--sysroot", self.tmp, "--ext", "/ext", "--json", out])
        with open(out) as f:
            snap = json.load(f)
        sclib.validate_snapshot(self, snap)
        ext = sclib.Run(r.returncode, r.stdout, r.stderr, snap, 0).probe("libraries.ext")
        self.assertEqual([f["path"] for f in ext["facts"]["files"]], ["/ext/libuser.so"])
        skipped = {s["path"]: s["reason"] for s in ext["facts"]["skipped"]}
        self.assertEqual(sorted(skipped), ["/ext/libfifo.so", "/ext/libpipe.so"])
        self.assertIn("a FIFO", skipped["/ext/libfifo.so"])
        self.assertTrue(any(f["id"] == "libs.unreadable" and "libpipe.so" in f["message"]
                            for f in ext["findings"]), ext["findings"])
        self.assertIn({"path": "/ext/libpipe.so", "type": "FIFO",
                       "reason": "not a regular file where one was expected: not read"},
                      snap["not_read"])

    def test_ext_file_that_is_a_fifo(self):
        out = os.path.join(self.tmp, "ext-file.json")
        r = run_bounded(["--keep-going", "--sysroot", self.tmp, "--ext", "/plain.fifo",
                         "--json", out])
        with open(out) as f:
            snap = json.load(f)
        ext = sclib.Run(r.returncode, r.stdout, r.stderr, snap, 0).probe("libraries.ext")
        self.assertEqual(ext["status"], "fail")
        self.assertTrue(any("not a regular file" in f["message"] for f in ext["findings"]))


class DiffInputs(unittest.TestCase):
    """diff reads what the user names: a FIFO is read as a stream (like "-"), within the size
    bound; a directory is an error."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sc-diff-io-")
        cls.snap = os.path.join(cls.tmp, "a.json")
        r = run_bounded(["--sysroot", sclib.fixture("plain-server"), "--json", cls.snap])
        assert os.path.exists(cls.snap), r.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_fifo_input_is_read_like_standard_input(self):
        fifo = os.path.join(self.tmp, "in.fifo")
        os.mkfifo(fifo)
        self.addCleanup(os.remove, fifo)
        with open(self.snap, "rb") as f:
            data = f.read()

        def feed():
            with open(fifo, "wb") as w:  # waits for the reader, as a shell's writer does
                w.write(data)
        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        r = run_bounded(["diff", fifo, self.snap])
        writer.join(WALL)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_directory_input_is_an_error(self):
        r = run_bounded(["diff", self.tmp, self.snap])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("Is a directory", r.stderr)


class SourceRules(unittest.TestCase):
    """Files are opened for reading only through sc_root_open_file, which refuses what would
    block: no other code opens a path inside the root for reading."""

    def test_no_direct_read_open_inside_the_root(self):
        import re
        bad = []
        for path in sclib.source_files("*.c"):
            if os.path.basename(path).startswith("sysroot"):
                continue
            with open(path) as f:
                text = f.read()
            for m in re.finditer(r"sc_root_openat\(([^;]*)\)", text):
                if "O_PATH" not in m.group(1) and "O_DIRECTORY" not in m.group(1):
                    bad.append("%s: %s" % (os.path.basename(path), m.group(0)))
        self.assertEqual(bad, [])


if __name__ == "__main__":
    sclib.main()
