"""Shared helpers for the integration tests: run the built binary, read its snapshot, validate it
against docs/snapshot.schema.json, make temporary fixture roots, and run as an unprivileged user."""
import atexit
import copy
import glob
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

# SC_TEST_BINARY runs the tests against another binary than the build's (the release binary:
# tools/release-check.sh); ctest sets STACKCHECK per test, and passes SC_TEST_BINARY through.
STACKCHECK = os.environ.get("SC_TEST_BINARY") or os.environ.get("STACKCHECK", "build/stackcheck")
SOURCE_DIR = os.environ.get("SC_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
BUILD_DIR = os.environ.get("SC_BUILD_DIR", os.path.join(SOURCE_DIR, "build"))
STUB_DIR = os.environ.get("SC_STUB_DIR", os.path.join(BUILD_DIR, "tests", "stubs"))
FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures")
SANITIZED = os.environ.get("SC_SANITIZE", "0") in ("1", "ON", "TRUE", "true")
DEBIAN_PYTHON = "/usr/bin/python3"
PYENV = os.path.join(os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv")), "versions")


def quick_python():
    """An interpreter without torch when there is one (the framework layer is then quick), else
    Debian's."""
    found = sorted(glob.glob(os.path.join(PYENV, "3.11.*", "bin", "python3")))
    return found[-1] if found else DEBIAN_PYTHON


class Run:
    """The outcome of one stackcheck run: exit code, output, the parsed snapshot, wall time."""

    def __init__(self, rc, stdout, stderr, snapshot, seconds):
        self.rc, self.stdout, self.stderr = rc, stdout, stderr
        self.snapshot, self.seconds = snapshot, seconds

    def probe(self, probe_id):
        for layer in self.snapshot["layers"]:
            for p in layer["probes"]:
                if p["id"] == probe_id:
                    return p
        raise KeyError(probe_id)

    def layer(self, name):
        return next(layer for layer in self.snapshot["layers"] if layer["name"] == name)

    def finding_ids(self, probe_id=None):
        ids = []
        for layer in self.snapshot["layers"]:
            for p in layer["probes"]:
                if probe_id is None or p["id"] == probe_id:
                    ids += [f["id"] for f in p["findings"]]
        return ids

    def finding(self, finding_id):
        for layer in self.snapshot["layers"]:
            for p in layer["probes"]:
                for f in p["findings"]:
                    if f["id"] == finding_id:
                        return f
        raise KeyError(finding_id)


_reachable_binary = None


def binary_for_any_user():
    """A copy of the binary in a world-readable directory: the checkout may sit in a directory
    only its owner can enter (mktemp -d), and an unprivileged run must still be able to exec it."""
    global _reachable_binary
    if _reachable_binary is None:
        d = tempfile.mkdtemp(prefix="sc-bin-")
        os.chmod(d, 0o755)
        _reachable_binary = os.path.join(d, "stackcheck")
        shutil.copy2(STACKCHECK, _reachable_binary)
        os.chmod(_reachable_binary, 0o755)
        atexit.register(shutil.rmtree, d, True)
    return _reachable_binary


def run(args, env=None, timeout=300, json_file=True, cwd=None, user=None, stdin=None):
    """Runs stackcheck with args (plus --json to a temporary file when json_file) and returns a Run.
    env entries replace the inherited ones; a value of None removes the variable."""
    full_env = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            full_env.pop(k, None)
        else:
            full_env[k] = v
    tmp = tempfile.mkdtemp(prefix="sc-run-")
    os.chmod(tmp, 0o777)
    snap_path = os.path.join(tmp, "snapshot.json")
    cmd = [STACKCHECK] + list(args)
    if json_file and args[:1] not in (["libs"], ["diff"], ["explain"], ["list"]):
        cmd += ["--json", snap_path]
    preexec = None
    if user is not None:
        uid, gid, groups = user
        cmd[0] = binary_for_any_user()

        def preexec():
            os.setgroups(groups)
            os.setgid(gid)
            os.setuid(uid)
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=timeout,
                          cwd=cwd, preexec_fn=preexec, input=stdin)
    seconds = time.monotonic() - start
    snapshot = None
    if os.path.exists(snap_path):
        with open(snap_path) as f:
            snapshot = json.load(f)
    shutil.rmtree(tmp, ignore_errors=True)
    return Run(proc.returncode, proc.stdout, proc.stderr, snapshot, seconds)


def validate_snapshot(testcase, snapshot):
    """Asserts that snapshot validates against docs/snapshot.schema.json."""
    import jsonschema
    with open(os.path.join(SOURCE_DIR, "docs", "snapshot.schema.json")) as f:
        schema = json.load(f)
    try:
        jsonschema.validate(snapshot, schema)
    except jsonschema.ValidationError as e:
        testcase.fail("snapshot does not validate: %s at %s" % (e.message, list(e.absolute_path)))


def source_files(*patterns):
    """The project's source files matching patterns (e.g. "*.c") under src/ (every depth) and
    probes/; never empty, so a test that reads the sources cannot pass by reading nothing."""
    import glob
    paths = []
    for pattern in patterns:
        paths += glob.glob(os.path.join(SOURCE_DIR, "src", "**", pattern), recursive=True)
        paths += glob.glob(os.path.join(SOURCE_DIR, "probes", pattern))
    if not paths:
        raise AssertionError("no source files match %s" % (patterns,))
    return sorted(paths)


def fixture(name):
    """Path of a committed fixture root under tests/fixtures."""
    return os.path.join(FIXTURES, name)


def copy_fixture(name):
    """A writable temporary copy of a committed fixture root; the caller removes it."""
    dst = tempfile.mkdtemp(prefix="sc-fx-")
    shutil.copytree(fixture(name), dst, dirs_exist_ok=True, symlinks=True)
    return dst


def stub(name):
    """Absolute path of a stub library built by the test suite (libNAME.so)."""
    return os.path.join(STUB_DIR, "lib%s.so" % name)


def unprivileged():
    """(uid, gid, groups) of the 'nobody' user, for tests that need real permission denial."""
    import pwd
    pw = pwd.getpwnam("nobody")
    return (pw.pw_uid, pw.pw_gid, [])


class TempDirCase(unittest.TestCase):
    """A test class with a temporary directory cls.tmp (mode 0755, so an unprivileged run may
    enter it), removed after its tests."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sc-%s-" % cls.__name__.lower())
        os.chmod(cls.tmp, 0o755)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)


class SysrootCase(unittest.TestCase):
    """Base of the tests that run one driver probe on fixture roots: PROBE is its id, ENV the
    environment overrides every run gets (values of None remove a variable)."""
    PROBE = None
    ENV = None

    def sysroot(self, root, **kw):
        """Runs stackcheck --sysroot root; the snapshot must exist and validate."""
        r = run(["--sysroot", root], env=kw.pop("env", self.ENV), **kw)
        self.assertIsNotNone(r.snapshot, r.stderr)
        validate_snapshot(self, r.snapshot)
        return r

    def drv(self, r):
        return r.probe(self.PROBE)

    def only_finding(self, r, fid):
        """The probe's one finding with id fid (the test fails unless there is exactly one)."""
        found = [f for f in self.drv(r)["findings"] if f["id"] == fid]
        self.assertEqual(len(found), 1, self.drv(r)["findings"])
        return found[0]

    def problems(self, r):
        """The ids of the probe's warn and error findings, in order."""
        return [f["id"] for f in self.drv(r)["findings"] if f["severity"] != "info"]

    def temp_copy(self, name):
        """A writable copy of a fixture, removed after the test."""
        root = copy_fixture(name)
        os.chmod(root, 0o755)
        self.addCleanup(shutil.rmtree, root, True)
        return root

    def write(self, root, rel, text, append=False):
        """Writes (or appends) text to rel inside root, making its directories."""
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a" if append else "w") as f:
            f.write(text)


def normalised(snapshot):
    """A snapshot (or a part of one) without what differs between two runs of the same thing: times, the command
    line and the creation date."""
    s = copy.deepcopy(snapshot)
    for key in ("argv", "created", "run"):
        s.pop(key, None)

    def walk(x):
        if isinstance(x, dict):
            for k in list(x):
                if k.endswith("_ms") or k in ("timing", "load_init_ms"):
                    x[k] = 0
                else:
                    walk(x[k])
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(s)
    return s


def main():
    unittest.main(verbosity=2)
