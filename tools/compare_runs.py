#!/usr/bin/env python3
"""Runs two stackcheck binaries on the same inputs and says whether they wrote the same snapshot,
report and JUnit file once what differs between any two runs is taken out (creation time, argv,
durations and other timings). The inputs: every fixture root under tests/fixtures (plain, and
--keep-going -v), the live machine (plain, --keep-going, and with Debian's Python), the stub HIP
runtime in several behaviours, and an app command. A change that must not alter the output (a
refactoring, a parallel runner against --jobs 1) is checked with it.

usage: tools/compare_runs.py BEFORE AFTER [--stubs DIR]"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "fixtures")
TIMING_KEYS = ("duration_ms", "pid", "rss_bytes")
CLEAN = ("LD_LIBRARY_PATH", "ROCM_PATH", "SC_HIPSTUB_MODE", "HSA_OVERRIDE_GFX_VERSION")


def cases(stubs):
    roots = sorted(d for d in os.listdir(FIXTURES)
                   if os.path.isdir(os.path.join(FIXTURES, d)) and d != "diff-golden")
    for r in roots:
        yield "fixture " + r, ["--sysroot", os.path.join(FIXTURES, r)], {}
        yield "fixture -k -v " + r, ["--sysroot", os.path.join(FIXTURES, r), "--keep-going",
                                     "-v"], {}
    yield "fixture hygon-dcu, env.sh", ["--sysroot", os.path.join(FIXTURES, "hygon-dcu")], {
        "LD_LIBRARY_PATH": "/opt/dtk/lib:/opt/dtk/hip/lib", "ROCM_PATH": "/opt/dtk"}
    yield "live", [], {}
    yield "live -k", ["--keep-going"], {}
    yield "live -k -v python3", ["--keep-going", "-v", "--python", "/usr/bin/python3"], {}
    for mode in ("ok", "no-device", "crash", "hang", "garbage", "compile-fail", "wrong-result"):
        yield "hipstub " + mode, ["--keep-going", "--timeout", "2", "--hip-library",
                                  os.path.join(stubs, "libhipstub.so")], {"SC_HIPSTUB_MODE": mode}
    yield "app", ["--keep-going", "--app", "echo hi; exit 3"], {}


def normalised(o, key=None):
    if isinstance(o, dict):
        return {k: normalised(v, k) for k, v in o.items()}
    if isinstance(o, list):
        return [normalised(v, key) for v in o]
    timing = key and (key.endswith("_ms") or key in TIMING_KEYS)
    return "N" if timing and isinstance(o, (int, float)) and not isinstance(o, bool) else o


def normalised_text(t):
    return re.sub(r"\([0-9.]+ ms\)", "(T ms)", re.sub(r'time="[0-9.]+"', 'time="T"', t))


def run(binary, args, extra):
    env = {k: v for k, v in os.environ.items() if k not in CLEAN}
    env.update(extra, NO_COLOR="1")
    with tempfile.TemporaryDirectory() as d:
        snap, xml = os.path.join(d, "s.json"), os.path.join(d, "j.xml")
        p = subprocess.run([binary] + args + ["--json", snap, "--junit", xml],
                           capture_output=True, text=True, env=env)
        with open(snap) as f:
            s = json.load(f)
        with open(xml) as f:
            junit = f.read()
    s["created"], s["argv"] = "C", "A"
    return {"exit code": p.returncode, "snapshot": json.dumps(normalised(s), indent=1),
            "report": normalised_text(p.stdout), "junit": normalised_text(junit),
            "stderr": p.stderr}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--stubs", default=os.path.join(REPO, "build", "tests", "stubs"))
    a = ap.parse_args()
    differing = 0
    for name, args, env in cases(a.stubs):
        x, y = run(a.before, args, env), run(a.after, args, env)
        diff = [k for k in x if x[k] != y[k]]
        print("%-40s %s" % (name, "differs: " + ", ".join(diff) if diff else "same"))
        for k in diff:
            lines = difflib.unified_diff(str(x[k]).splitlines(), str(y[k]).splitlines(),
                                         lineterm="")
            print("\n".join(list(lines)[:40]))
        differing += bool(diff)
    print("%d differing" % differing)
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
