#!/usr/bin/env python3
"""`stackcheck explain`: finding ids, probe ids and raw error text. The texts are the errors users
paste (the issue's own hipErrorNoBinaryForGpu line among them); each must name the findings that
cover it, what they mean and the command that checks it, and exit 0; text that matches nothing
exits 1."""
import re
import unittest

import sclib


def explain(*words):
    return sclib.run(["explain"] + list(words), json_file=False)


class ExplainText(unittest.TestCase):
    def assertCovers(self, r, *ids):
        self.assertEqual(r.rc, 0, r.stderr)
        for finding in ids:
            self.assertRegex(r.stdout, r"\n    %s \((error|warn|info)\): \S" % re.escape(finding))
        self.assertIn("  check: stackcheck", r.stdout)

    def test_hip_no_binary_for_gpu(self):
        r = explain("hipErrorNoBinaryForGpu: Unable to find code object for all current devices")
        self.assertTrue(r.stdout.startswith("HIP runtime error hipErrorNoBinaryForGpu (209)\n"))
        self.assertCovers(r, "hip.no-binary-for-gpu", "libs.no-code-for-device")
        self.assertIn("--ext FILE", r.stdout)
        # The meaning is the first sentence of the finding's docs entry.
        self.assertIn("hip.no-binary-for-gpu (error): The runtime has no code for this device:",
                      r.stdout)

    def test_codes_and_names_of_each_vendor(self):
        cases = {
            "hipErrorNoDevice": ["hip.no-device", "amd.kfd-permission"],
            "hipErrorInvalidDeviceFunction 98": ["hip.no-binary-for-gpu"],
            "RuntimeError: CUDA error: no kernel image is available for execution on the device":
                ["libs.no-code-for-device", "torch.no-arch-for-device"],
            "CUDA_ERROR_NO_DEVICE": ["cuda.no-device", "nvidia.driver-not-loaded"],
            "cudaErrorNoKernelImageForDevice": ["libs.no-code-for-device"],
            "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES": ["amd.kfd-permission"],
            "NPU error, error code is 507033": ["acl.device-setup-failed"],
            "107002": ["acl.device-setup-failed"],
            "EH9999: Inner Error!": ["acl.init-failed"],
            "EE1001": ["acl.devices-hidden"],
            "EI0006": ["app.timeout"],
            "halMemCreate failed drvRetCode=6": ["ascend.kernel-log-errors"],
            "dcmi module initialize failed. ret is -8005": ["ascend.container-devices-not-mapped"],
            "-8020": ["acl.device-setup-failed"],
            "version `GLIBCXX_3.4.30' not found": ["libs.missing-symbol-version"],
            "undefined symbol: _ZN3c104cuda9SetDeviceEi": ["libs.undefined-symbol"],
            "libfoo.so.3: cannot open shared object file: No such file or directory":
                ["libs.missing-library"],
        }
        for text, ids in cases.items():
            with self.subTest(text=text):
                self.assertCovers(explain(text), *ids)

    def test_unquoted_words_are_one_text(self):
        r = explain("hip", "error", "100")
        self.assertCovers(r, "hip.no-device")
        self.assertNotIn("cudaErrorNoDevice", r.stdout)

    def test_a_bare_short_code_shows_every_api(self):
        r = explain("100")
        self.assertEqual(r.rc, 0)
        for name in ("hipErrorNoDevice", "CUDA_ERROR_NO_DEVICE", "cudaErrorNoDevice"):
            self.assertIn(name, r.stdout)

    def test_nothing_matched_exits_1(self):
        for text in ("everything is fine", "no.such-id", "error 100"):
            with self.subTest(text=text):
                r = explain(text)
                self.assertEqual(r.rc, 1)
                self.assertEqual(r.stdout, "")
                self.assertIn("no finding, probe or known error matches", r.stderr)

    def test_finding_and_probe_ids_first(self):
        r = explain("hip.no-device")
        self.assertEqual(r.rc, 0)
        self.assertTrue(r.stdout.startswith("### `hip.no-device`"))
        r = explain("runtime.hip")
        self.assertEqual(r.rc, 0)
        self.assertTrue(r.stdout.startswith("probe runtime.hip: runtime layer, amd backend"))
        r = explain()
        self.assertEqual(r.rc, 2)


if __name__ == "__main__":
    sclib.main()
