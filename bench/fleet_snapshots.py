#!/usr/bin/env python3
"""Writes N synthetic node snapshots into DIR for `stackcheck fleet`: copies of a real snapshot
(a fixture's, or --base FILE) with a host name each, a few stack variants (an older driver, a
device missing, another toolkit root), some failed nodes, varied timings and a few slow ones.
Usage: fleet_snapshots.py N DIR [--base FILE] [--variants K]"""
import argparse
import copy
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "..", "tests", "fixtures", "diff-golden", "fx-mi250x-8gcd.json")


def probe(snap, pid):
    for layer in snap["layers"]:
        for p in layer["probes"]:
            if p["id"] == pid:
                return p
    raise KeyError(pid)


def variant(base, k):
    """Stack variant k: 0 is the majority; others change the driver version or drop a device."""
    s = copy.deepcopy(base)
    facts = probe(s, "driver.amd")["facts"]
    if k % 2:
        facts["module"]["version"] = "6.%d.%d" % (k // 10, k % 10)
    elif k:
        del facts["devices"][-(k // 2 % len(facts["devices"]) + 1):]
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("dir")
    ap.add_argument("--base", default=BASE)
    ap.add_argument("--variants", type=int, default=8)
    args = ap.parse_args()
    rng = random.Random(13)
    with open(args.base) as f:
        base = json.load(f)
    variants = [variant(base, k) for k in range(args.variants)]
    os.makedirs(args.dir, exist_ok=True)
    for i in range(args.n):
        r = rng.random()
        s = variants[0] if r < 0.9 else variants[rng.randrange(1, args.variants)]
        s = copy.deepcopy(s) if r >= 0.9 or i % 97 == 0 or i % 89 == 0 else s
        name = "node%05d" % i
        s["host"]["hostname"] = name
        for layer in s["layers"]:
            for p in layer["probes"]:
                p["duration_ms"] = round(rng.uniform(0.5, 8.0), 3)
        if i % 97 == 0:
            probe(s, "driver.amd")["duration_ms"] = 900.0
        if i % 89 == 0:
            s["summary"] = {"status": "fail", "exit_code": 1, "first_failure": {
                "layer": "runtime", "probe": "runtime.hip", "status": "fail",
                "finding": "hip.no-device", "message": "no device", "hint": "-"}}
        with open(os.path.join(args.dir, name + ".json"), "w") as f:
            json.dump(s, f, indent=2)


if __name__ == "__main__":
    main()
