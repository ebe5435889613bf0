"""The operator analysis of the app helper (probes/app_stackcheck_ops.py) on recorded profiler
traces and logs (tests/data/ops/): where each operator ran, which ran on the CPU while the step
used a device, what crossed between host and device, what was compiled, and the fallback and
recompile messages frameworks print. Pure Python; no torch needed."""
import importlib.util
import json
import os
import unittest

import sclib

DATA = os.path.join(sclib.SOURCE_DIR, "tests", "data", "ops")


def load_ops():
    path = os.path.join(sclib.SOURCE_DIR, "probes", "app_stackcheck_ops.py")
    spec = importlib.util.spec_from_file_location("stackcheck_ops", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ops = load_ops()


def analyze(name):
    with open(os.path.join(DATA, name)) as f:
        return ops.analyze(ops.events_from_trace(json.load(f)))


def row(analysis, name):
    return next(r for r in analysis["ops"] if r["name"] == name)


class Classifier(unittest.TestCase):
    def test_cuda_trace_scatter_on_the_host_is_a_fallback(self):
        a = analyze("cuda_kineto_trace.json")
        self.assertEqual((a["accelerator"], a["steps"], a["ranked_by"]), ("cuda", 2, "device"))
        self.assertEqual([r["name"] for r in a["fallback"]["ops"]], ["aten::scatter_add_"])
        self.assertEqual(a["fallback"]["ops"][0]["host_calls"], 2)
        # the data-loader thread's arithmetic never drives the device: no fallback
        self.assertNotIn("aten::div", [r["name"] for r in a["fallback"]["ops"]])
        self.assertEqual(row(a, "aten::addmm")["devices"], ["cuda"])
        self.assertEqual(a["top"][0]["name"], "aten::addmm")

    def test_cuda_trace_traffic_and_syncs_per_step(self):
        t = analyze("cuda_kineto_trace.json")["traffic"]
        d2h = t["copies"]["device_to_host"]
        self.assertEqual((d2h["count"], d2h["per_step"], d2h["bytes"]), (6, 3.0, 524312))
        self.assertEqual(t["copies"]["host_to_device"]["bytes_per_step"], 262144)
        callers = {c["op"]: c["bytes"] for c in d2h["callers"]}
        self.assertEqual(callers["aten::item"], 8)
        self.assertEqual(callers["aten::nonzero"], 16)
        self.assertEqual(t["syncs"]["by_kind"], {"nonzero": 2, "item": 2, "synchronize": 6})

    def test_rocm_trace_copy_tied_by_correlation(self):
        a = analyze("rocm_kineto_trace.json")
        self.assertEqual(a["traffic"]["copies"]["device_to_host"]["callers"][0]["op"],
                         "aten::item")
        self.assertEqual([r["name"] for r in a["fallback"]["ops"]], ["aten::sort"])

    def test_npu_trace_fallback_ai_cpu_and_compiles(self):
        a = analyze("npu_trace_view.json")
        self.assertEqual((a["accelerator"], a["format"]), ("npu", "torch_npu"))
        self.assertEqual([r["name"] for r in a["fallback"]["ops"]], ["aten::isin"])
        self.assertEqual(row(a, "aten::index")["devices"], ["npu:ai_cpu"])
        self.assertEqual(a["device_compiles"]["count"], 1)
        self.assertEqual(a["device_compiles"]["triggered_by"][0]["op"], "aten::mm(32x64, 64x32)")
        self.assertEqual(a["traffic"]["syncs"]["by_kind"], {"synchronize": 1})

    def test_cpu_trace_has_no_fallback_but_counts_syncs(self):
        a = analyze("cpu_legacy_trace.json")
        self.assertIsNone(a["accelerator"])
        self.assertEqual(a["fallback"]["count"], 0)
        self.assertEqual(a["traffic"]["syncs"]["by_kind"], {"item": 2, "nonzero": 2})

    def test_malformed_traces_are_skipped_not_raised(self):
        for trace in (None, 7, "x", {}, {"traceEvents": "no"}, [1, "a", None],
                      [{"ph": "X", "ts": "nan", "dur": None}, {"ph": "X", "cat": "kernel"}],
                      {"traceEvents": [{"ph": "s", "id": 1}, {"ph": "X", "ts": 1, "dur": -5,
                                                              "cat": "cpu_op", "args": []}]}):
            a = ops.analyze(ops.events_from_trace(trace))
            self.assertEqual(a["fallback"]["count"], 0, trace)


class Logs(unittest.TestCase):
    def test_torch_npu_and_rocm_fallback_warnings(self):
        with open(os.path.join(DATA, "fallback_warnings.log")) as f:
            found = ops.parse_fallback_warnings(f.read())
        cpu = {(w["operator"], w["backend"]): w["count"] for w in found if w["kind"] == "cpu"}
        # the line a terminal wrapped counts too, and the rank prefixes do not hide a warning
        self.assertEqual(cpu[("torchvision::nms", "NPU")], 2)
        self.assertEqual(cpu[("aten::isin.Tensor_Tensor_out", "NPU")], 2)
        self.assertEqual(cpu[("aten::_scaled_dot_product_efficient_attention", "NPU")], 1)
        self.assertEqual(cpu[("aten::linalg_cholesky_ex.L", "MPS")], 1)
        device = [w["what"] for w in found if w["kind"] == "device"]
        self.assertEqual(device, ["hipBLASLt replaced by hipBLAS",
                                  "MIOpen fallback convolution solver",
                                  "Flash attention kernel not used",
                                  "Memory efficient kernel not used"])

    def test_warning_parser_is_bounded(self):
        line = ("Warning: CAUTION: The operator 'aten::op%d' is not currently supported on the NPU "
                "backend and will fall back to run on the CPU.\n")
        found = ops.parse_fallback_warnings("".join(line % i for i in range(500)))
        self.assertEqual(len(found), 64)
        self.assertEqual(ops.parse_fallback_warnings("The operator '" + "x" * 5000), [])

    def test_dynamo_recompile_log(self):
        text = ("Recompiling function forward in /app/model.py:10\n"
                "    triggered by the following guard failure(s):\n"
                "    - tensor 'L['x']' size mismatch at index 0. expected 8, actual 16\n"
                "Recompiling function forward in /app/model.py:10\n"
                "    - tensor 'L['x']' size mismatch at index 0. expected 16, actual 24\n"
                "torch._dynamo hit config.cache_size_limit (8)\n")
        r = ops.parse_recompile_log(text)
        self.assertEqual(r["recompiles"], 2)
        self.assertEqual(r["functions"], ["forward"])
        self.assertEqual(r["cache_limit_hit"], 8)
        self.assertEqual(r["shape_changes"][1], {"tensor": "L['x']", "index": 0,
                                                 "expected": 16, "actual": 24})


if __name__ == "__main__":
    sclib.main()
