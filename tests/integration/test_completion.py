"""Bash completion (completion/stackcheck.bash): sourced in bash, the completion function is called
with COMP_WORDS and COMP_CWORD set as bash sets them, and must offer the sub-commands, each
sub-command's options (as its --help lists them), the probe and finding ids of `stackcheck list`
for `explain`, files for FILE and PATH arguments, directories for DIR, and nothing where a number
or a name is expected. The words come from the binary being completed."""
import os
import subprocess
import tempfile
import unittest

import sclib

SCRIPT = os.path.join(sclib.SOURCE_DIR, "completion", "stackcheck.bash")


def complete(*words, cwd=None):
    """COMPREPLY after completing the last of words (the command is the binary under test)."""
    words = [os.path.abspath(sclib.STACKCHECK)] + list(words)
    quoted = " ".join("'%s'" % w.replace("'", "'\\''") for w in words)
    script = ('source "%s" || exit 3\nCOMP_WORDS=(%s)\nCOMP_CWORD=%d\n_stackcheck\n'
              'printf "%%s\\n" "${COMPREPLY[@]}"\n' % (SCRIPT, quoted, len(words) - 1))
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True,
                       text=True, cwd=cwd, timeout=60)
    if r.returncode != 0:
        raise AssertionError("bash failed (%d): %s" % (r.returncode, r.stderr))
    return [w for w in r.stdout.split("\n") if w]


def listed_ids():
    """Every probe and finding id `stackcheck list` prints."""
    out = sclib.run(["list"], json_file=False).stdout
    return sorted(line.split()[0] for line in out.splitlines()
                  if line.startswith("  ") and "." in line.split()[0])


class Completion(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sc-completion-")
        os.makedirs(os.path.join(cls.tmp, "roots", "centos"))
        for name in ("good.json", "bad.json", "libext.so"):
            open(os.path.join(cls.tmp, name), "w").close()

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_registered_for_the_command(self):
        r = subprocess.run(["bash", "--norc", "-c", 'source "%s" && complete -p stackcheck' % SCRIPT],
                           capture_output=True, text=True)
        self.assertEqual(r.stdout.strip(), "complete -F _stackcheck stackcheck")

    def test_subcommands(self):
        self.assertEqual(complete(""), ["run", "explain", "list", "libs", "diff", "capture", "fleet"])
        self.assertEqual(complete("ex"), ["explain"])
        self.assertEqual(complete("li"), ["list", "libs"])
        self.assertEqual(complete("--keep-going", ""), [])  # a sub-command comes first

    def test_options_of_each_subcommand(self):
        run = complete("--")
        for opt in ("--json", "--junit", "--sysroot", "--keep-going", "--timeout", "--hip-library",
                    "--python", "--ext", "--app-script", "--no-color", "--version", "--help"):
            self.assertIn(opt, run)
        self.assertNotIn("--rtol", run)  # diff's, not run's
        self.assertEqual(complete("--ju"), ["--junit"])
        self.assertEqual(sorted(complete("-")), sorted(run + ["-q", "-v", "-h"]))
        self.assertEqual(sorted(complete("libs", "--")),
                         sorted(["--arch", "--json", "--sysroot", "--ld-library-path",
                                 "--no-symbols", "--help"]))
        self.assertEqual(sorted(complete("diff", "--")), ["--atol", "--help", "--json", "--rtol"])
        self.assertEqual(complete("run", "--sys"), ["--sysroot"])

    def test_explain_offers_every_probe_and_finding_id(self):
        self.assertEqual(sorted(complete("explain", "")), listed_ids())
        self.assertEqual(complete("explain", "runtime."), ["runtime.hip", "runtime.cuda",
                                                           "runtime.acl"])
        self.assertIn("hip.no-device", complete("explain", "hip.no"))
        self.assertIn("driver.no-accelerator", complete("explain", "driver.no"))
        self.assertEqual(complete("explain", "hip.no-device", ""), [])  # one id only
        self.assertEqual(complete("list", ""), [])

    def test_file_and_directory_arguments(self):
        t = self.tmp
        self.assertEqual(complete("--json", t + "/go"), [t + "/good.json"])
        # "--json=FILE": bash splits the word at "=" (COMP_WORDBREAKS)
        self.assertEqual(complete("--json", "=", t + "/go"), [t + "/good.json"])
        self.assertEqual(len(complete("--json", "=")), len(os.listdir(".")))
        self.assertEqual(complete("--sysroot", t + "/"), [t + "/roots"])  # directories only
        self.assertEqual(complete("--sysroot", t + "/roots/"), [t + "/roots/centos"])
        self.assertEqual(complete("--ext", t + "/libe"), [t + "/libext.so"])
        self.assertEqual(complete("libs", "--sysroot", t + "/ro"), [t + "/roots"])
        self.assertEqual(complete("libs", t + "/libe"), [t + "/libext.so"])
        self.assertEqual(sorted(complete("diff", t + "/good.json", t + "/")),
                         sorted([t + "/good.json", t + "/bad.json", t + "/libext.so",
                                 t + "/roots"]))
        self.assertEqual(complete("diff", "--json", t + "/ba"), [t + "/bad.json"])

    def test_nothing_for_numbers_and_names(self):
        self.assertEqual(complete("--timeout", ""), [])
        self.assertEqual(complete("--app-repeat", "1"), [])
        self.assertEqual(complete("--arch", "gfx"), [])
        self.assertEqual(complete("diff", "--rtol", ""), [])


if __name__ == "__main__":
    unittest.main()
