"""Golden snapshots of the fixture roots: every root under tests/fixtures has an expected.json, the
snapshot of `stackcheck --sysroot ROOT` normalised (times, the command line, the version, the
caller's user and environment dropped), so a change in any fact shows in review.

  python3 tests/integration/golden.py --refresh [ROOT...]   rewrite expected.json (all or some)
  python3 tests/integration/golden.py [ROOT...]             compare, print a diff per change

tools/refresh-golden.sh runs the first form; test_golden.py the second."""
import difflib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("SC_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures")
STACKCHECK = os.environ.get("STACKCHECK", os.path.join(SOURCE_DIR, "build", "stackcheck"))
EXPECTED = "expected.json"
# What makes a directory a root file system rather than a folder of other test data.
ROOT_MARKERS = ("sys", "proc", "etc", "dev", "usr", "opt")
# A fixed environment: what the caller has set must not leak into the facts.
CLEAN_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/root", "NO_COLOR": "1", "LC_ALL": "C"}
# Keys that differ from run to run or from machine to machine, wherever they are.
VOLATILE_KEYS = {"duration_ms", "created"}
# Top-level parts that say who ran it, when and how, not what the root holds.
VOLATILE_TOP = ("argv", "sysroot", "env", "created")


def fixture_roots():
    """The names of the fixture roots, sorted."""
    names = []
    for name in sorted(os.listdir(FIXTURES)):
        path = os.path.join(FIXTURES, name)
        if os.path.isdir(path) and any(os.path.isdir(os.path.join(path, m)) for m in ROOT_MARKERS):
            names.append(name)
    return names


def _drop_volatile(node):
    if isinstance(node, dict):
        return {k: _drop_volatile(v) for k, v in node.items() if k not in VOLATILE_KEYS}
    if isinstance(node, list):
        return [_drop_volatile(v) for v in node]
    return node


def normalise(snapshot):
    """The snapshot without what depends on the time, the caller or the build."""
    s = {k: v for k, v in snapshot.items() if k not in VOLATILE_TOP}
    if isinstance(s.get("tool"), dict):
        s["tool"] = {k: v for k, v in s["tool"].items() if k != "version"}
    if isinstance(s.get("host"), dict):
        s["host"] = {k: v for k, v in s["host"].items() if k != "user"}
    return _drop_volatile(s)


def run_root(root, stackcheck=STACKCHECK, extra=()):
    """Runs stackcheck on root (a directory or a capture) and returns its snapshot, normalised."""
    proc = subprocess.run([stackcheck, "--sysroot", root, "--json", "-", *extra],
                          env=CLEAN_ENV, capture_output=True, text=True, timeout=300)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"stackcheck --sysroot {root}: exit {proc.returncode}: {proc.stderr}")
    return normalise(json.loads(proc.stdout))


def dump(snapshot):
    return json.dumps(snapshot, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def diff_text(expected, actual, name):
    """A unified diff of two normalised snapshots, empty when they are the same."""
    return "".join(difflib.unified_diff(dump(expected).splitlines(True),
                                        dump(actual).splitlines(True),
                                        f"tests/fixtures/{name}/{EXPECTED}",
                                        f"stackcheck --sysroot tests/fixtures/{name}", n=4))


def expected_path(name):
    return os.path.join(FIXTURES, name, EXPECTED)


def refresh(names):
    for name in names:
        with open(expected_path(name), "w", encoding="utf-8") as f:
            f.write(dump(run_root(os.path.join(FIXTURES, name))))
        print(f"wrote tests/fixtures/{name}/{EXPECTED}")
    return 0


def compare(names):
    changed = 0
    for name in names:
        actual = run_root(os.path.join(FIXTURES, name))
        try:
            with open(expected_path(name), encoding="utf-8") as f:
                expected = json.load(f)
        except FileNotFoundError:
            print(f"tests/fixtures/{name}: no {EXPECTED} (run tools/refresh-golden.sh {name})")
            changed += 1
            continue
        text = diff_text(expected, actual, name)
        if text:
            print(text)
            changed += 1
    return 1 if changed else 0


def main(argv):
    refreshing = "--refresh" in argv
    names = [a.rstrip("/").split("/")[-1] for a in argv if a != "--refresh"] or fixture_roots()
    unknown = [n for n in names if n not in fixture_roots()]
    if unknown:
        print(f"not a fixture root under tests/fixtures: {', '.join(unknown)}", file=sys.stderr)
        return 2
    return refresh(names) if refreshing else compare(names)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
