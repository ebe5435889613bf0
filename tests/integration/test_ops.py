"""The operator and training checks of the app helper through the real binary and Debian's CPU torch:
stackcheck.profile() of a step with an explicit .cpu()/.item() round trip (copies, bytes and
synchronising calls counted, where they were made), stackcheck.train_watch() of a model whose
backward produces NaN at a known step and module, stackcheck.scaling(), the memory series of
repetitions that grow linearly with its fitted growth, and --app-profile/--app-trace (the top
operators in the snapshot and the report, the Chrome trace written)."""
import json
import os
import subprocess
import tempfile
import textwrap
import unittest

import sclib

DEBIAN_PYTHON = sclib.DEBIAN_PYTHON


def has_torch():
    return subprocess.run([DEBIAN_PYTHON, "-c", "import torch"], capture_output=True).returncode == 0


# A two-layer model whose 'gate' module gives NaN gradients in the backward of step 3 only; the
# step moves an 8x4 float32 output to the host (.cpu()) and one scalar (.item()); each
# repetition keeps 8 MiB more (a linear leak).
TRAIN_SCRIPT = """
import builtins
import stackcheck
import torch
import torch.nn as nn

ARMED = [False]


class Spike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * float("nan") if ARMED[0] else grad


class Gate(nn.Module):
    def forward(self, x):
        return Spike.apply(x)


torch.manual_seed(0)
model = nn.Sequential()
model.add_module("embed", nn.Linear(4, 8))
model.add_module("gate", Gate())
model.add_module("act", nn.ReLU())
model.add_module("head", nn.Linear(8, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = stackcheck.fixed_input((8, 4))


def infer():
    y = model(x)
    host = y.cpu()
    return host.sum().item()


def train_step(step):
    ARMED[0] = step == 3
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    return loss


with stackcheck.stage("profile"):
    stackcheck.profile(infer, steps=4, name="infer")
with stackcheck.stage("train"):
    stackcheck.train_watch(train_step, steps=6, model=model, name="tiny")
with stackcheck.stage("scaling"):
    stackcheck.scaling(lambda device: model(x.to(device)), steps=3, devices=["cpu", "cpu"])
with stackcheck.stage("leak"):
    builtins.__dict__.setdefault("_kept", []).append(b"x" * (8 << 20))
"""

PROFILED_SCRIPT = """
import stackcheck
import torch

with stackcheck.stage("step"):
    a = stackcheck.fixed_input((64, 64))
    for _ in range(3):
        b = torch.mm(a, a).relu()
    print("value", b.sum().item())
"""


@unittest.skipUnless(has_torch(), "Debian's python3-torch is not installed")
class TrainingRun(unittest.TestCase):
    """One run of TRAIN_SCRIPT with five repetitions, shared by the tests below."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sc-ops-")
        path = os.path.join(cls.tmp, "train.py")
        with open(path, "w") as f:
            f.write(TRAIN_SCRIPT)
        cls.out = sclib.run(["--keep-going", "--python", DEBIAN_PYTHON, "--app-script", path,
                             "--app-repeat", "5", "-v"])
        cls.probe = cls.out.probe("app.script")
        cls.facts = cls.probe["facts"]

    def test_snapshot_valid_and_stages_pass(self):
        sclib.validate_snapshot(self, self.out.snapshot)
        self.assertEqual([s["status"] for s in self.facts["stages"]], ["pass"] * 4,
                         self.facts.get("error"))

    def test_profile_counts_the_round_trip(self):
        prof = self.facts["profile"]
        self.assertEqual((prof["name"], prof["steps"], prof["accelerator"]), ("infer", 4, None))
        calls = {c["call"]: c for c in prof["traffic"]["host_calls"]}
        self.assertEqual(calls[".cpu()"]["count"], 4)
        self.assertEqual(calls[".cpu()"]["bytes"], 4 * 8 * 4 * 4)  # 8x4 float32 per step
        self.assertEqual(calls[".item()"]["count"], 4)
        self.assertIn("train.py", calls[".cpu()"]["where"])
        self.assertIn("(infer)", calls[".cpu()"]["where"])
        d2h = prof["traffic"]["copies"]["device_to_host"]
        self.assertEqual((d2h["per_step"], d2h["bytes_per_step"]), (2, 8 * 4 * 4 + 4))
        self.assertEqual(prof["traffic"]["syncs"]["by_kind"], {"item": 4})
        names = [op["name"] for op in prof["ops"]]
        self.assertIn("aten::addmm", names)
        addmm = next(op for op in prof["ops"] if op["name"] == "aten::addmm")
        self.assertEqual(addmm["count"], 8)  # two linear layers, four steps
        self.assertEqual(addmm["devices"], ["cpu"])
        self.assertIn("8x4, 4x8", addmm["input_shapes"][0])
        self.assertLessEqual(len(prof["top"]), 15)
        self.assertEqual(prof["fallback"]["count"], 0)  # on the CPU nothing falls back
        self.assertFalse(prof["recompiles"]["available"])  # torch 1.13 has no torch.compile
        msg = self.out.finding("app.host-device-traffic")["message"]
        self.assertIn("2 device-to-host copies (132 bytes)", msg)
        self.assertIn("1 synchronising call", msg)
        self.assertIn(".cpu() at train.py:", msg)
        self.assertNotIn("app.cpu-fallback", self.out.finding_ids())

    def test_nonfinite_after_steps_names_step_and_module(self):
        watch = self.facts["train_watch"]
        self.assertEqual(watch["first_nonfinite"], {"module": "gate", "type": "Gate",
                                                    "phase": "backward", "nan": 64, "inf": 0,
                                                    "step": 3})
        self.assertEqual(watch["steps_run"], 3)  # it stops after the first non-finite step
        losses = [s["loss"] for s in watch["steps"]]
        self.assertTrue(all(isinstance(v, float) for v in losses[:2]))
        self.assertIsNotNone(watch["steps"][1]["grad_norm"])
        self.assertIsNone(watch["steps"][2]["grad_norm"])
        self.assertEqual(sorted(watch["steps"][0]["grad_norms"]), ["embed", "head"])
        msg = self.out.finding("app.nonfinite-after-steps")["message"]
        self.assertIn("step 3 of 'tiny'", msg)
        self.assertIn("backward of module 'gate' (Gate)", msg)
        self.assertIn("at step 2", msg)
        self.assertEqual(self.probe["status"], "fail")

    def test_scaling_ratio(self):
        s = self.facts["scaling"]
        self.assertEqual((s["devices"], s["world"], s["steps"]), (["cpu", "cpu"], 2, 3))
        self.assertGreater(s["one_device_ms_per_step"], 0)
        # the times are rounded in the facts: compare within 2% of the ratio
        self.assertAlmostEqual(s["speedup"], 2 * s["one_device_ms_per_step"] /
                               s["all_devices_ms_per_step"], delta=0.01 + 0.02 * s["speedup"])
        self.assertAlmostEqual(s["efficiency"], s["speedup"] / 2, delta=0.001)
        # app.poor-scaling follows the efficiency (below 70% of two devices' worth)
        self.assertEqual("app.poor-scaling" in self.out.finding_ids(), s["efficiency"] < 0.7)

    @unittest.skipIf(sclib.SANITIZED, "AddressSanitizer keeps freed memory resident (quarantine)")
    def test_memory_series_fit(self):
        host = self.facts["memory"]["host"]
        self.assertEqual(len(host["after_each_run"]), 5)
        fit = host["fit"]
        self.assertEqual(fit["steady_runs"], 4)
        mib = fit["bytes_per_step"] / float(1 << 20)
        self.assertGreater(mib, 7.0)
        self.assertLess(mib, 9.5)
        self.assertGreater(fit["r2"], 0.95)
        msg = self.out.finding("app.memory-growth")["message"]
        self.assertIn("least-squares line", msg)
        self.assertIn("host memory (process RSS)", msg)
        self.assertIsNone(self.facts["memory"]["device"])


@unittest.skipUnless(has_torch(), "Debian's python3-torch is not installed")
class ProfiledRepetition(unittest.TestCase):
    def test_app_profile_top_operators_and_trace(self):
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(tmp, "step.py")
            with open(script, "w") as f:
                f.write(textwrap.dedent(PROFILED_SCRIPT))
            trace = os.path.join(tmp, "trace.json")
            run = sclib.run(["--keep-going", "--python", DEBIAN_PYTHON, "--app-script", script,
                             "--app-repeat", "2", "--app-trace", trace])
            prof = run.probe("app.script")["facts"]["profile"]
            self.assertEqual(prof["name"], "repetition 2")
            self.assertEqual(prof["trace_file"], trace)
            with open(trace) as f:
                events = json.load(f)
            events = events["traceEvents"] if isinstance(events, dict) else events
            self.assertIn("aten::mm", {e.get("name") for e in events})
        top = [op["name"] for op in prof["top"]]
        self.assertIn("aten::mm", top[:3])
        mm = next(op for op in prof["top"] if op["name"] == "aten::mm")
        self.assertEqual(mm["count"], 3)
        self.assertEqual(mm["input_shapes"], ["64x64, 64x64"])
        self.assertIn("top operators by host time", run.stdout)
        self.assertRegex(run.stdout, r"aten::mm +[0-9.]+ ms +[0-9.]+%  3 calls")

    def test_trace_under_a_file_is_a_finding(self):
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(tmp, "step.py")
            with open(script, "w") as f:
                f.write(textwrap.dedent(PROFILED_SCRIPT))
            # the output writer makes missing directories, but not one where a file is
            run = sclib.run(["--keep-going", "--python", DEBIAN_PYTHON, "--app-script", script,
                             "--app-trace", os.path.join(script, "trace.json")])
        self.assertIn("app.trace-not-written", run.finding_ids("app.script"))
        self.assertIsNone(run.probe("app.script")["facts"]["profile"]["trace_file"])


@unittest.skipUnless(has_torch(), "Debian's python3-torch is not installed")
class ExampleTrainSmoke(unittest.TestCase):
    def test_example_with_a_nan_at_step_five(self):
        example = os.path.join(sclib.SOURCE_DIR, "examples", "train_smoke.py")
        run = sclib.run(["--keep-going", "--python", DEBIAN_PYTHON, "--app-script", example,
                         "--app-repeat", "2"], env={"SMOKE_NAN_STEP": "5"})
        sclib.validate_snapshot(self, run.snapshot)
        f = run.probe("app.script")["facts"]
        self.assertEqual([s["name"] for s in f["stages"]],
                         ["import", "device", "build model", "numerics", "profile", "train",
                          "scaling"])
        self.assertEqual({s["status"] for s in f["stages"]}, {"pass"}, f.get("error"))
        self.assertEqual(f["profile"]["name"], "train step")
        self.assertIn("aten::mm", [op["name"] for op in f["profile"]["top"]])
        first = f["train_watch"]["first_nonfinite"]
        self.assertEqual((first["step"], first["module"], first["phase"]), (5, "block",
                                                                           "backward"))
        self.assertEqual(len(f["train_watch"]["steps"]), 5)
        self.assertEqual(f["numerics"]["name"], "smoke model")
        self.assertEqual(f["scaling"]["devices"], ["cpu"])
        self.assertEqual(len(f["memory"]["host"]["after_each_run"]), 2)
        ids = run.finding_ids("app.script")
        self.assertIn("app.nonfinite-after-steps", ids)
        self.assertIn("app.host-device-traffic", ids)
        # the numerics stage looked at the model before the NaN step spoiled it
        self.assertNotIn("app.first-nonfinite-module", ids)


if __name__ == "__main__":
    sclib.main()
