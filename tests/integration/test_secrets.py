"""Secrets through every output of the real binary. The secret corpus (tests/data/secret_corpus.txt)
is printed by an --app command that fails and by an --app-script that fails in a stage, and raised
in the script's exception; secrets also sit in the environment (allowlisted prefixes), in the --app
command line, and behind lines longer than every kept tail (so a cut before redaction would keep
the end of a secret without its name). None of them may appear in the report (standard output and
error), the snapshot, the JUnit file, or the text and JSON output of `stackcheck diff` comparing
the run's snapshot with an old-style snapshot that still holds them raw."""
import glob
import json
import os
import shutil
import subprocess
import tempfile
import textwrap
import unittest

import sclib

CORPUS = os.path.join(sclib.SOURCE_DIR, "tests", "data", "secret_corpus.txt")
PYENV = os.path.join(os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv")), "versions")

# Values longer than every tail stackcheck keeps (isolate 2 KiB of an 8 KiB window, app stage
# slices 2 KiB, stream tails 16 KiB, the script harness's 1000 and 3000 characters).
LONG_PASSWORD = "P" * 20000 + "LongPasswordEnd-9Qw8Er"
LONG_BEARER = "T" * 3000 + "LongBearerEnd-3Fg4Hj"
LONG_EXCEPTION = "E" * 5000 + "LongExceptionEnd-2Zx3Cv"

ENV = {
    "HCCL_PASSPHRASE": "env-passphrase-5Qa6Ws",
    "NCCL_PSK": "env-psk-7Ed8Rf",
    "TORCH_HUB_TOKEN": "env-token-9Tg0Yh",
    "HIP_DB_PWD": "env-pwd-1Uj2Ik",
    "HIP_MIRROR": "https://mirror-user:env-url-pw-3Ol4Pm@mirror.example/simple",
    "ROCM_DOWNLOAD": "https://files.example/rocm.tar?token=env-query-token-5Zx6Cv&x=1",
    "NCCL_IB_PKEY": "0x8001",
}
ARGV_SECRETS = ["argv-pass-3Kq7Lm", "argv-user-pw-5Nx2Vb", "argv-url-pw-7Bv8Nm"]
SCRIPT_SECRETS = ["exc-pass-4Rt5Yu", "exc-url-pw-6Hj7Kl", "stderr-token-8Ui9Op"]


def corpus():
    """(every corpus text, every secret of the leak cases)"""
    texts, secrets = [], []
    with open(CORPUS) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            texts.append(fields[1].replace("\\n", "\n"))
            if fields[0] == "leak":
                secrets += fields[2:]
    return texts, secrets


def all_secrets():
    _, secrets = corpus()
    secrets += [v for k, v in ENV.items() if k != "NCCL_IB_PKEY"]
    secrets += ["env-url-pw-3Ol4Pm", "env-query-token-5Zx6Cv"]
    secrets += ARGV_SECRETS + SCRIPT_SECRETS
    secrets += ["LongPasswordEnd-9Qw8Er", "LongBearerEnd-3Fg4Hj", "LongExceptionEnd-2Zx3Cv"]
    return secrets


def quick_python():
    found = sorted(glob.glob(os.path.join(PYENV, "3.11.*", "bin", "python3")))
    return found[-1] if found else "/usr/bin/python3"


class Secrets(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sc-sec-")
        os.chmod(cls.tmp, 0o755)
        texts, _ = corpus()
        cls.text_file = os.path.join(cls.tmp, "corpus.txt")
        with open(cls.text_file, "w") as f:
            f.write("\n".join(texts) + "\n")
        cls.long_file = os.path.join(cls.tmp, "long.txt")
        with open(cls.long_file, "w") as f:
            f.write("password=%s\nAuthorization: Bearer %s\n" % (LONG_PASSWORD, LONG_BEARER))
        script = os.path.join(cls.tmp, "app.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent("""\
                import sys
                import stackcheck
                with stackcheck.stage("connect"):
                    print(open(%r).read())
                    print(open(%r).read())
                    sys.stderr.write("Authorization: Bearer stderr-token-8Ui9Op\\n")
                    raise RuntimeError("password=%s\\nlogin failed: password=exc-pass-4Rt5Yu "
                                       "for https://u:exc-url-pw-6Hj7Kl@h.example/")
                """ % (cls.text_file, cls.long_file, LONG_EXCEPTION)))
        app = ("curl -u alice:argv-user-pw-5Nx2Vb --password argv-pass-3Kq7Lm "
               "https://u:argv-url-pw-7Bv8Nm@h.example/ >/dev/null 2>&1; cat %s %s; exit 1"
               % (cls.long_file, cls.text_file))
        cls.snap = os.path.join(cls.tmp, "snapshot.json")
        cls.junit = os.path.join(cls.tmp, "junit.xml")
        env = dict(os.environ, NO_COLOR="1", **ENV)
        cmd = [sclib.STACKCHECK, "--keep-going", "-v", "--python", quick_python(),
               "--app", app, "--app-script", script, "--json", cls.snap, "--junit", cls.junit]
        p = subprocess.run(cmd, capture_output=True, env=env, timeout=300)
        cls.rc, cls.report = p.returncode, p.stdout + p.stderr
        with open(cls.snap, "rb") as f:
            cls.snapshot_bytes = f.read()
        with open(cls.junit, "rb") as f:
            cls.junit_bytes = f.read()
        cls.snapshot = json.loads(cls.snapshot_bytes.decode("utf-8", "strict"))
        cls.outcome = sclib.Run(p.returncode, p.stdout, p.stderr, cls.snapshot, 0)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def assertNoSecret(self, data, what):
        leaked = [s for s in all_secrets() if s.encode() in data]
        self.assertEqual(leaked, [], "%s leaks" % what)

    def test_the_secrets_reached_the_outputs(self):
        """Guards the other tests: the corpus went through both app probes, redacted."""
        self.assertEqual(self.rc, 1, self.report[-2000:])
        smoke, script = self.outcome.probe("app.smoke"), self.outcome.probe("app.script")
        self.assertEqual([f["id"] for f in smoke["findings"]], ["app.failed"])
        self.assertEqual([f["id"] for f in script["findings"]], ["app.failed"])
        stdout_tail = smoke["facts"]["stdout"]["tail"]
        self.assertIn("Authorization: Bearer [redacted]", stdout_tail)
        self.assertIn("KeyError: 'HIP_VISIBLE_DEVICES'", json.dumps(smoke["facts"]))
        self.assertIn("login failed: password=[redacted] for https://[redacted]@h.example/",
                      script["findings"][0]["message"])
        self.assertIn("password=[redacted]", json.dumps(script["facts"]))
        self.assertEqual(self.snapshot["env"]["NCCL_IB_PKEY"], "0x8001")
        self.assertEqual(self.snapshot["env"]["HCCL_PASSPHRASE"], "[redacted]")
        self.assertEqual(self.snapshot["env"]["HIP_MIRROR"],
                         "https://[redacted]@mirror.example/simple")

    def test_report(self):
        self.assertNoSecret(self.report, "the report")

    def test_snapshot(self):
        self.assertNoSecret(self.snapshot_bytes, "the snapshot")

    def test_junit(self):
        self.assertIn(b"app.failed", self.junit_bytes)
        self.assertNoSecret(self.junit_bytes, "the JUnit file")

    def test_diff(self):
        """An old snapshot may hold secrets raw (0.1 redacted facts only): diff must not print
        them, as text or as JSON."""
        old = json.loads(json.dumps(self.snapshot))
        texts, _ = corpus()
        old["created"] = "password=diff-created-pw-1Aq2Sw"
        old["host"]["os"]["pretty_name"] = texts[0]
        old["env"]["HIP_MIRROR"] = ENV["HIP_MIRROR"]
        probe = old["layers"][0]["probes"][0]
        for i, text in enumerate(texts):
            probe["findings"].append({"id": "driver.old-%d" % i, "severity": "warn",
                                      "message": text, "hint": None})
        old_path = os.path.join(self.tmp, "old.json")
        with open(old_path, "w") as f:
            json.dump(old, f)
        for args in (["diff", old_path, self.snap], ["diff", self.snap, old_path, "--json", "-"]):
            p = subprocess.run([sclib.STACKCHECK] + args, capture_output=True, timeout=120)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn(b"driver.old-", p.stdout + p.stderr)
            self.assertNoSecret(p.stdout + p.stderr, " ".join(args[:1] + args[3:]))
            self.assertNotIn(b"diff-created-pw-1Aq2Sw", p.stdout + p.stderr)


if __name__ == "__main__":
    sclib.main()
