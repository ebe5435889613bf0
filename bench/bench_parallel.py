#!/usr/bin/env python3
"""Benchmark of the parallel runner (issue 17): a full run with the framework layer, serial
(--jobs 1) and parallel (--jobs N, default the online CPUs), side by side with a bare
`python3 -c "import torch"` in the same interpreter. The three are run interleaved (the order
rotates each round), so load on the machine falls on all of them alike; the figures are medians,
with each probe's median duration in both modes.

Usage: bench/bench_parallel.py [--build DIR] [--python PATH] [--runs N] [--jobs N]
Goal: the parallel run at most 1.05x the bare import, and never slower than --jobs 1."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd):
    start = time.monotonic()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def probe_durations(path, into):
    with open(path) as f:
        snap = json.load(f)
    for layer in snap["layers"]:
        for p in layer["probes"]:
            into.setdefault(p["id"], []).append(p["duration_ms"] / 1000.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    stackcheck = os.path.join(a.build, "stackcheck")
    if subprocess.run([a.python, "-c", "import torch"], capture_output=True).returncode:
        sys.exit("%s has no importable torch" % a.python)
    tmp = tempfile.mkdtemp(prefix="sc-bench-")
    base = [stackcheck, "--keep-going", "-q", "--progress=never", "--python", a.python]
    commands = {
        "bare import torch": [a.python, "-c", "import torch"],
        "stackcheck --jobs 1": base + ["--jobs", "1", "--json", os.path.join(tmp, "s.json")],
        "stackcheck --jobs %d" % a.jobs: base + ["--jobs", str(a.jobs), "--json",
                                                 os.path.join(tmp, "p.json")],
    }
    names = list(commands)
    times = {n: [] for n in names}
    serial, parallel = {}, {}
    for name in names:  # one warm-up round: page cache, Python's bytecode
        timed(commands[name])
    for r in range(a.runs):
        for k in range(len(names)):
            name = names[(r + k) % len(names)]
            times[name].append(timed(commands[name]))
        probe_durations(os.path.join(tmp, "s.json"), serial)
        probe_durations(os.path.join(tmp, "p.json"), parallel)
    bare = statistics.median(times[names[0]])
    print("%d interleaved runs each, %s, %d online CPUs\n" % (a.runs, a.python, os.cpu_count()))
    print("| command | median s | min s | vs bare import |")
    print("|---|---:|---:|---:|")
    for name in names:
        m = statistics.median(times[name])
        print("| %s | %.3f | %.3f | %.2fx |" % (name, m, min(times[name]), m / bare))
    print("\n| probe | --jobs 1 median s | --jobs %d median s |" % a.jobs)
    print("|---|---:|---:|")
    for pid in serial:
        print("| %s | %.3f | %.3f |" % (pid, statistics.median(serial[pid]),
                                        statistics.median(parallel.get(pid, [0]))))
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
