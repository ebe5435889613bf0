"""Output path templates (issue 13 point 1): %h, %j, %t and %% in --json, --junit and --prometheus;
missing directories are created; writes stay atomic; a job id or host name never adds a
directory."""
import glob
import json
import os
import re
import socket

import sclib
from sclib import unittest

ROOT = sclib.fixture("plain-server")  # quick and offline: the driver layer fails, nothing more


class PathTemplates(sclib.TempDirCase):
    def run_with(self, out, env=None, extra=()):
        return sclib.run(["--sysroot", ROOT, "-q", "--json", out] + list(extra),
                         env=env, json_file=False)

    def test_host_job_and_time_expand_and_directories_are_created(self):
        base = os.path.join(self.tmp, "snaps")
        r = self.run_with(os.path.join(base, "%h", "%j-%t.json"), env={"SLURM_JOB_ID": "4242"})
        self.assertEqual(r.rc, 1, r.stderr)
        host = socket.gethostname().split(".")[0]
        made = glob.glob(os.path.join(base, host, "4242-*.json"))
        self.assertEqual(len(made), 1, os.listdir(base))
        self.assertRegex(os.path.basename(made[0]), r"^4242-\d{8}T\d{6}Z\.json$")
        with open(made[0]) as f:
            self.assertEqual(json.load(f)["summary"]["status"], "fail")
        self.assertEqual(os.listdir(os.path.dirname(made[0])), [os.path.basename(made[0])],
                         "a temporary was left behind")

    def test_without_a_job_id_j_is_none_and_percent_is_literal(self):
        r = self.run_with(os.path.join(self.tmp, "j", "%j-100%%.json"),
                          env={"SLURM_JOB_ID": None})
        self.assertEqual(r.rc, 1, r.stderr)
        self.assertTrue(os.path.isfile(os.path.join(self.tmp, "j", "none-100%.json")))

    def test_a_hostile_job_id_adds_no_directory(self):
        r = self.run_with(os.path.join(self.tmp, "h", "%j.json"),
                          env={"SLURM_JOB_ID": "../../escape/x"})
        self.assertEqual(r.rc, 1, r.stderr)
        self.assertEqual(os.listdir(os.path.join(self.tmp, "h")), ["_._.._escape_x.json"])
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "escape")))

    def test_every_output_of_one_run_names_the_same_time(self):
        d = os.path.join(self.tmp, "same")
        r = self.run_with(os.path.join(d, "s-%t.json"),
                          extra=["--junit", os.path.join(d, "j-%t.xml"),
                                 "--prometheus", os.path.join(d, "m-%t.prom")])
        self.assertEqual(r.rc, 1, r.stderr)
        stamps = {re.sub(r"^[sjm]-", "", os.path.splitext(n)[0]) for n in os.listdir(d)}
        self.assertEqual(len(os.listdir(d)), 3)
        self.assertEqual(len(stamps), 1, os.listdir(d))

    def test_an_existing_file_is_replaced_whole(self):
        path = os.path.join(self.tmp, "r", "%h.json")
        for _ in range(2):
            self.assertEqual(self.run_with(path).rc, 1)
        d = os.path.join(self.tmp, "r")
        self.assertEqual(len(os.listdir(d)), 1, os.listdir(d))
        with open(os.path.join(d, os.listdir(d)[0])) as f:
            json.load(f)

    def test_an_unknown_conversion_is_a_usage_error_before_the_run(self):
        r = self.run_with(os.path.join(self.tmp, "u", "%q.json"))
        self.assertEqual(r.rc, 2)
        self.assertIn("unknown %q", r.stderr)
        self.assertNotIn("Verdict", r.stdout)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "u")))

    def test_a_link_in_the_parent_is_followed_but_a_file_is_refused(self):
        real = os.path.join(self.tmp, "real")
        os.mkdir(real)
        os.symlink(real, os.path.join(self.tmp, "link"))
        self.assertEqual(self.run_with(os.path.join(self.tmp, "link", "new", "%h.json")).rc, 1)
        self.assertEqual(len(os.listdir(os.path.join(real, "new"))), 1)
        plain = os.path.join(self.tmp, "plain")
        open(plain, "w").close()
        r = self.run_with(os.path.join(plain, "sub", "x.json"))
        self.assertEqual(r.rc, 2)
        self.assertIn("Not a directory", r.stderr)


if __name__ == "__main__":
    sclib.main()
