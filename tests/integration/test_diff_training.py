"""stackcheck diff on the training watch and the operator profile of app.script: the first step
and module whose loss or gradient norm diverges, a step only one side ran, operators that moved to
the CPU, and the biggest time ratios per operator; nothing new in the diff when neither side has
them (the 0.1 output stays as it was)."""
import copy
import json
import os
import unittest

import sclib


def snapshot(facts):
    return {"schema": "stackcheck/snapshot/v1", "created": "2026-01-01T00:00:00Z",
            "layers": [{"name": "app", "status": "pass",
                        "probes": [{"id": "app.script", "status": "pass", "facts": facts,
                                    "findings": []}]}]}


def step(n, loss, embed, head):
    return {"step": n, "loss": loss, "grad_norm": None,
            "grad_norms": {"embed": embed, "head": head}}


TRAIN = {"name": "tiny", "steps": [step(1, 0.5, 1.0, 2.0), step(2, 0.4, 0.9, 1.8),
                                   step(3, 0.3, 0.8, 1.6)], "first_nonfinite": None}

PROFILE = {"steps": 2, "ranked_by": "device",
           "ops": [{"name": "aten::mm", "device_self_ms": 2.0, "host_self_ms": 0.2},
                   {"name": "aten::scatter_add_", "device_self_ms": 1.0, "host_self_ms": 0.1},
                   {"name": "aten::relu", "device_self_ms": 0.4, "host_self_ms": 0.1}],
           "fallback": {"ops": []}}


class DiffTraining(sclib.TempDirCase):
    def diff(self, fa, fb, *extra):
        paths = []
        for name, facts in (("a.json", fa), ("b.json", fb)):
            paths.append(os.path.join(self.tmp, name))
            with open(paths[-1], "w") as f:
                json.dump(snapshot(facts), f)
        out = os.path.join(self.tmp, "diff.json")
        run = sclib.run(["diff"] + paths + ["--json", out] + list(extra), json_file=False)
        with open(out) as f:
            return run, json.load(f)

    def test_gradient_of_a_module_diverges_at_step_two(self):
        b = copy.deepcopy(TRAIN)
        b["steps"][1]["grad_norms"]["head"] = 2.5
        b["steps"][2]["loss"] = 9.0
        run, d = self.diff({"train_watch": TRAIN}, {"train_watch": b})
        self.assertEqual(run.rc, 1)
        self.assertEqual(d["training"]["first_divergent"],
                         {"step": 2, "what": "grad_norm", "module": "head", "a": 1.8, "b": 2.5})
        self.assertEqual(d["training"]["steps_agree"], 1)
        self.assertIn("first divergent step 2: grad_norm of module 'head': 1.8 -> 2.5",
                      run.stdout)

    def test_loss_within_tolerance_agrees_and_beyond_diverges(self):
        b = copy.deepcopy(TRAIN)
        b["steps"][0]["loss"] = 0.5000001
        run, d = self.diff({"train_watch": TRAIN}, {"train_watch": b})
        self.assertIsNone(d["training"]["first_divergent"])
        self.assertEqual(run.rc, 0)
        run, d = self.diff({"train_watch": TRAIN}, {"train_watch": b}, "--rtol", "0",
                           "--atol", "0")
        self.assertEqual(d["training"]["first_divergent"]["what"], "loss")
        self.assertEqual(d["training"]["first_divergent"]["step"], 1)

    def test_one_side_stopped_at_a_nan(self):
        b = copy.deepcopy(TRAIN)
        del b["steps"][2]
        b["first_nonfinite"] = {"module": "gate", "phase": "backward", "step": 3}
        run, d = self.diff({"train_watch": TRAIN}, {"train_watch": b})
        self.assertEqual(d["training"]["first_divergent"]["what"], "steps")
        self.assertEqual(d["training"]["first_divergent"]["step"], 3)
        self.assertEqual(d["training"]["first_nonfinite_b"]["module"], "gate")

    def test_operator_moved_to_the_cpu_and_ratios(self):
        b = copy.deepcopy(PROFILE)
        b["ops"][1]["device_self_ms"] = 8.0
        b["fallback"]["ops"] = [{"name": "aten::scatter_add_"}]
        b["ops"][0]["device_self_ms"] = 2.2
        run, d = self.diff({"profile": PROFILE}, {"profile": b})
        self.assertEqual(run.rc, 1)
        self.assertEqual(d["profile"]["moved_to_cpu"], ["aten::scatter_add_"])
        ratios = d["profile"]["biggest_ratios"]
        self.assertEqual([r["op"] for r in ratios], ["aten::scatter_add_", "aten::mm",
                                                     "aten::relu"])
        self.assertEqual(ratios[0]["ratio"], 8.0)
        self.assertEqual(ratios[0]["a_ms_per_step"], 0.5)
        self.assertIn("moved to the CPU in b: aten::scatter_add_", run.stdout)

    def test_absent_on_both_sides_adds_nothing(self):
        run, d = self.diff({}, {})
        self.assertNotIn("training", d)
        self.assertNotIn("profile", d)
        run, d = self.diff({"profile": PROFILE}, {})
        self.assertIn({"area": "app", "what": "app.script operator profile", "a": "recorded",
                       "b": None, "matters": True}, d["changes"])


if __name__ == "__main__":
    sclib.main()
