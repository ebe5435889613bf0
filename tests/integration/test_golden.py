"""Every fixture root under tests/fixtures has an expected.json (its normalised snapshot); a change
in any fact, finding or status shows here as a diff, to be reviewed and taken with
tools/refresh-golden.sh (see tests/README.md)."""
import copy
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402


class GoldenSnapshots(unittest.TestCase):
    def test_every_fixture_root_matches_its_expected_json(self):
        roots = golden.fixture_roots()
        self.assertGreaterEqual(len(roots), 10)
        problems = []
        for name in roots:
            path = golden.expected_path(name)
            if not os.path.exists(path):
                problems.append(f"tests/fixtures/{name}: no expected.json; run "
                                f"tools/refresh-golden.sh {name} and review what it wrote")
                continue
            with open(path, encoding="utf-8") as f:
                expected = golden.json.load(f)
            text = golden.diff_text(expected, golden.run_root(os.path.join(golden.FIXTURES, name)),
                                    name)
            if text:
                problems.append(text)
        self.assertFalse(problems, "\n".join(problems) + "\nIf the change is meant, run "
                         "tools/refresh-golden.sh and commit the new expected.json files.")

    def test_a_changed_fact_shows_as_a_readable_diff(self):
        name = "hygon-dcu"
        with open(golden.expected_path(name), encoding="utf-8") as f:
            expected = golden.json.load(f)
        actual = copy.deepcopy(expected)
        actual["host"]["kernel"] = "6.1.0-changed"
        text = golden.diff_text(expected, actual, name)
        self.assertIn(f"--- tests/fixtures/{name}/expected.json", text)
        self.assertIn('-  "kernel": "4.19.90', text)
        self.assertIn('+  "kernel": "6.1.0-changed"', text)
        self.assertEqual(golden.diff_text(expected, expected, name), "")

    def test_normalising_drops_only_what_varies_between_runs(self):
        snap = {"schema": "s", "created": "t", "argv": ["x"], "sysroot": "/r", "env": {"A": "1"},
                "tool": {"name": "stackcheck", "version": "9"},
                "host": {"kernel": "k", "user": {"uid": 0}},
                "layers": [{"probes": [{"id": "p", "duration_ms": 1.5, "facts": {"v": 1}}]}]}
        self.assertEqual(golden.normalise(snap),
                         {"schema": "s", "tool": {"name": "stackcheck"}, "host": {"kernel": "k"},
                          "layers": [{"probes": [{"id": "p", "facts": {"v": 1}}]}]})


if __name__ == "__main__":
    unittest.main()
