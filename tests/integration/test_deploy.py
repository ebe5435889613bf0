"""deploy/daemonset.yaml (issue 13 point 5): linted with yamllint (strict, the repository's
.yamllint), the shape a GPU/NPU node needs (device nodes, /sys read-only, host paths for the
snapshots and the textfile collector, every taint tolerated), and the command it runs, run here on
a fixture root with its paths moved into a temporary directory: it must write a snapshot and
metrics promtool accepts. (kubectl create --dry-run=client needs an API server, so it is not run.)
"""
import os
import re
import shutil
import subprocess
import tempfile

import sclib
from sclib import unittest

DAEMONSET = os.path.join(sclib.SOURCE_DIR, "deploy", "daemonset.yaml")


def load():
    import yaml
    with open(DAEMONSET) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    return next(d for d in docs if d["kind"] == "DaemonSet")


class DaemonSet(unittest.TestCase):
    @unittest.skipUnless(shutil.which("yamllint"), "yamllint (Debian package yamllint) missing")
    def test_yamllint_strict(self):
        r = subprocess.run(["yamllint", "-s", "-c", os.path.join(sclib.SOURCE_DIR, ".yamllint"),
                            DAEMONSET], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_devices_sys_and_host_paths(self):
        spec = load()["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in spec["volumes"]}
        mounts = {m["name"]: m for m in spec["containers"][0]["volumeMounts"]}
        self.assertEqual(volumes["dev"]["hostPath"]["path"], "/dev")
        self.assertEqual(mounts["dev"]["mountPath"], "/dev")
        self.assertEqual(volumes["sys"]["hostPath"]["path"], "/sys")
        self.assertTrue(mounts["sys"]["readOnly"])
        for name, path in (("snapshots", "/var/lib/stackcheck"),
                           ("textfile", "/var/lib/node_exporter/textfile_collector")):
            self.assertEqual(volumes[name]["hostPath"]["path"], path)
            self.assertEqual(mounts[name]["mountPath"], path)
        self.assertIn({"operator": "Exists"}, spec["tolerations"])
        terms = spec["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        vendors = {re.search(r"_(\w{4})\.present", t["matchExpressions"][0]["key"]).group(1)
                   for t in terms}
        self.assertEqual(vendors, {"10de", "1002", "1d94", "19e5"})

    def test_its_command_writes_a_snapshot_and_metrics(self):
        container = load()["spec"]["template"]["spec"]["containers"][0]
        script = container["args"][0]
        run = re.search(r"while :; do (stackcheck .*?);", script).group(1)
        tmp = tempfile.mkdtemp(prefix="sc-deploy-")
        self.addCleanup(shutil.rmtree, tmp, True)
        run = run.replace("/var/lib/", tmp + "/").replace("$(NODE_NAME)", "node-a")
        argv = run.split()[1:] + ["--sysroot", sclib.fixture("mi250x-8gcd")]
        r = sclib.run(argv, json_file=False, timeout=120)
        self.assertEqual(r.rc, 0, r.stdout + r.stderr)
        self.assertTrue(os.path.isfile(os.path.join(tmp, "stackcheck", "node-a.json")))
        prom = os.path.join(tmp, "node_exporter", "textfile_collector", "stackcheck.prom")
        if shutil.which("promtool"):
            with open(prom) as f:
                check = subprocess.run(["promtool", "check", "metrics"], stdin=f,
                                       capture_output=True, text=True)
            self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        self.assertEqual(subprocess.run(["sh", "-n", "-c", script]).returncode, 0)


if __name__ == "__main__":
    sclib.main()
