"""stackcheck fleet (issue 13 point 2) over snapshots of the 0.1.0 format (the golden fixture of an
8-GCD MI250X node): a majority, a node with an older driver, a node missing a device, a failed
node, a slow node, and corrupt, foreign and unreadable files."""
import copy
import json
import os

import sclib
from sclib import unittest

BASE = os.path.join(sclib.FIXTURES, "diff-golden", "fx-mi250x-8gcd.json")


def probe(snap, pid):
    return next(p for layer in snap["layers"] for p in layer["probes"] if p["id"] == pid)


class Fleet(sclib.TempDirCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with open(BASE) as f:
            cls.base = json.load(f)
        assert cls.base["tool"]["version"] == "0.1.0"
        cls.dir = os.path.join(cls.tmp, "snaps")
        os.mkdir(cls.dir)
        for i in range(1, 6):
            s = copy.deepcopy(cls.base)
            if i % 2:  # a newer snapshot names its host; a 0.1.0 one is named by its file
                s["host"]["hostname"] = "n%02d" % i
            if i == 4:
                probe(s, "driver.amd")["duration_ms"] = 500.0
            cls.write("n%02d.json" % i, s)
        s = copy.deepcopy(cls.base)
        probe(s, "driver.amd")["facts"]["module"]["version"] = "6.2.4"
        cls.write("n06.json", s)
        s = copy.deepcopy(cls.base)
        probe(s, "driver.amd")["facts"]["devices"].pop()
        cls.write("n07.json", s)
        s = copy.deepcopy(cls.base)
        s["summary"] = {"status": "fail", "exit_code": 1, "first_failure": {
            "layer": "runtime", "probe": "runtime.hip", "status": "fail",
            "finding": "hip.no-device", "message": "no device", "hint": "-"}}
        cls.write("n08.json", s)
        with open(os.path.join(cls.dir, "corrupt.json"), "w") as f:
            f.write(json.dumps(cls.base)[:4000])
        cls.write("foreign.json", {"name": "not a snapshot"})
        os.mkfifo(os.path.join(cls.dir, "fifo.json"))  # must be refused, never waited on
        with open(os.path.join(cls.dir, "notes.txt"), "w") as f:
            f.write("not read: only *.json are")

    @classmethod
    def write(cls, name, snap):
        with open(os.path.join(cls.dir, name), "w") as f:
            json.dump(snap, f)

    def fleet(self, *args):
        out = os.path.join(self.tmp, "fleet.json")
        if os.path.exists(out):
            os.unlink(out)
        r = sclib.run(["fleet", "--json", out] + list(args), json_file=False, timeout=60)
        result = None
        if os.path.exists(out):
            with open(out) as f:
                result = json.load(f)
        return r, result

    def test_groups_majority_and_differences(self):
        r, res = self.fleet(self.dir)
        self.assertEqual(r.rc, 1, r.stderr)
        self.assertEqual(res["schema"], "stackcheck/fleet/v1")
        self.assertEqual((res["files"], res["nodes"], res["failed"]), (11, 8, 1))
        major = res["groups"][0]
        self.assertTrue(major["majority"])
        self.assertEqual(major["names"], ["n01", "n02", "n03", "n04", "n05"])
        self.assertEqual(major["stack"]["driver"], ["amdgpu 6.3.6"])
        self.assertEqual(major["differs"], [])
        by_name = {tuple(g["names"]): g for g in res["groups"][1:]}
        self.assertEqual(set(by_name), {("n06",), ("n07",)})
        self.assertEqual(by_name[("n06",)]["differs"], [
            {"role": "driver", "majority": ["amdgpu 6.3.6"], "group": ["amdgpu 6.2.4"]}])
        dev = by_name[("n07",)]["differs"]
        self.assertEqual([d["role"] for d in dev], ["devices"])
        self.assertIn("8 x aldebaran", dev[0]["majority"][0])
        self.assertIn("7 x aldebaran", dev[0]["group"][0])
        self.assertIn("amdgpu 6.3.6 -> amdgpu 6.2.4", r.stdout)

    def test_failed_nodes_by_first_failing_layer_and_finding(self):
        r, res = self.fleet(self.dir)
        self.assertEqual(res["failures"], [{
            "layer": "runtime", "finding": "hip.no-device", "probe": "runtime.hip",
            "status": "fail", "nodes": 1, "names": ["n08"]}])
        self.assertIn("runtime hip.no-device: 1 node (n08)", r.stdout)

    def test_outliers_missing_device_and_slow_probe(self):
        r, res = self.fleet(self.dir)
        got = {(o["node"], o["fact"]): o for o in res["outliers"]}
        self.assertEqual(set(got), {("n07", "devices"), ("n04", "driver.amd duration")})
        self.assertEqual((got["n07", "devices"]["value"], got["n07", "devices"]["median"]), (7, 8))
        self.assertEqual(got["n04", "driver.amd duration"]["value"], 500)
        r, res = self.fleet("--factor", "1000", self.dir)
        self.assertNotIn("n04", [o["node"] for o in res["outliers"]])

    def test_corrupt_foreign_and_unreadable_files_are_named_and_skipped(self):
        r, res = self.fleet(self.dir)
        reasons = {os.path.basename(s["file"]): s["reason"] for s in res["skipped"]["files"]}
        self.assertEqual(res["skipped"]["count"], 3)
        self.assertIn("ends early (truncated)", reasons["corrupt.json"])
        self.assertIn("not a stackcheck snapshot", reasons["foreign.json"])
        self.assertIn("not a regular file", reasons["fifo.json"])
        self.assertNotIn("notes.txt", reasons)
        self.assertIn("corrupt.json is not valid JSON: it ends early", r.stdout)

    def test_healthy_identical_nodes_exit_0(self):
        files = [os.path.join(self.dir, "n%02d.json" % i) for i in (1, 2, 3, 5)]
        r, res = self.fleet(*files)
        self.assertEqual(r.rc, 0, r.stdout)
        self.assertTrue(res["identical"])
        self.assertIn("Verdict: every node healthy, one stack", r.stdout)

    def test_a_node_that_differs_alone_exits_1(self):
        files = [os.path.join(self.dir, "n%02d.json" % i) for i in (1, 2, 6)]
        self.assertEqual(self.fleet(*files)[0].rc, 1)

    def test_nothing_readable_or_bad_usage_exits_2(self):
        r, res = self.fleet(os.path.join(self.dir, "corrupt.json"),
                            os.path.join(self.tmp, "missing"))
        self.assertEqual(r.rc, 2)
        self.assertEqual(res["nodes"], 0)
        self.assertIn("cannot open", r.stdout)
        self.assertEqual(sclib.run(["fleet"], json_file=False).rc, 2)
        self.assertEqual(sclib.run(["fleet", "--factor", "0.5", self.dir], json_file=False).rc, 2)
        self.assertEqual(sclib.run(["fleet", "--bogus", self.dir], json_file=False).rc, 2)

    def test_snapshots_of_the_wrong_shape_cost_nothing_but_themselves(self):
        d = os.path.join(self.tmp, "odd")
        os.mkdir(d)
        schema = "stackcheck/snapshot/v1"
        odd = [
            {"schema": schema, "layers": [1, "x", None, {"probes": 7}], "summary": "fail"},
            {"schema": schema, "layers": [], "summary": {"status": "fail", "first_failure": []}},
            {"schema": schema, "layers": [{"probes": [{"id": 5, "status": {}, "facts": []}]}],
             "host": {"hostname": ["n"]}, "summary": {"status": 3}},
            {"schema": schema, "layers": [{"probes": [{"id": "runtime.hip", "status": "pass",
                                                        "duration_ms": "slow", "facts": {
                                                            "timing": {"a": "b"},
                                                            "devices": [{"memory": 5}]}}]}]},
        ]
        for i, snap in enumerate(odd):
            with open(os.path.join(d, "odd%d.json" % i), "w") as f:
                json.dump(snap, f)
        with open(os.path.join(d, "bidi\u202e.json"), "w") as f:
            json.dump(dict(odd[1], host={"hostname": "evil\x1b[31m\u202e"}), f)
        r, res = self.fleet(d)
        self.assertEqual(res["nodes"], 5)
        self.assertEqual(r.rc, 1)
        self.assertNotIn("\x1b", r.stdout)
        self.assertNotIn("\u202e", r.stdout)

    def test_json_to_standard_output_moves_the_text_to_standard_error(self):
        r = sclib.run(["fleet", "--json", "-", self.dir], json_file=False, timeout=60)
        self.assertEqual(json.loads(r.stdout)["nodes"], 8)
        self.assertIn("Majority stack", r.stderr)


if __name__ == "__main__":
    sclib.main()
