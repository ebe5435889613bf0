"""--deadline (issue 13 point 3: the health check's own deadline under Slurm's 60 s): an isolated
probe gets at most what is left of the run's deadline, probes not started by then are skipped with
the reason, and the snapshot is still written."""
import sclib
from sclib import unittest


class Deadline(unittest.TestCase):
    def test_a_hanging_app_is_cut_at_the_run_deadline(self):
        r = sclib.run(["--keep-going", "--python", sclib.quick_python(), "--app", "sleep 60",
                       "--deadline", "4", "-q"], timeout=120)
        self.assertIsNotNone(r.snapshot, r.stderr)
        self.assertLess(r.seconds, 30 if not sclib.SANITIZED else 60)
        statuses = {p["id"]: (p["status"], p["reason"] or "")
                    for layer in r.snapshot["layers"] for p in layer["probes"]}
        late = [pid for pid, (st, why) in statuses.items()
                if st == "skip" and "deadline (--deadline 4 s) passed" in why]
        app = statuses["app.smoke"]
        self.assertTrue(app[0] == "timeout" or "app.smoke" in late, statuses)
        self.assertEqual(r.rc, 1)

    def test_an_invalid_deadline_is_a_usage_error(self):
        for bad in ("0", "-1", "x", "1e9"):
            r = sclib.run(["--deadline", bad], json_file=False)
            self.assertEqual(r.rc, 2, bad)
            self.assertIn("invalid --deadline", r.stderr)


if __name__ == "__main__":
    sclib.main()
