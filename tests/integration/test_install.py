"""`cmake --install BUILD --prefix P` (BUILD: the directory of --krc): P/bin/krc works on its own,
and the man page P/share/man/man1/krc.1 renders without warnings (groff, from Debian's
groff-base, which scripts/setup-test installs) and stays in step with `krc help`: every command
krc lists is documented, and every option the page names exists in that command's help."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import krc_harness as h

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAN_SOURCE = os.path.join(ROOT, "docs", "krc.1")
ORDERS = os.path.join(ROOT, "tests", "fixtures", "corpus", "01-orders-api-oomkilled")


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, **kw)


def options(text):
    """The long options (--name) a help text or a piece of roff names."""
    return set(re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", text.replace("\\-", "-")))


def man_commands(roff):
    """{command: roff of its entry} from the COMMANDS section (`.TP` then `.B krc CMD`)."""
    section = roff.split(".SH COMMANDS\n", 1)[1].split("\n.SH ", 1)[0]
    entries = {}
    for block in section.split(".TP\n")[1:]:
        m = re.match(r"\.B krc ([a-z]+)", block)
        if m is None:
            raise AssertionError("a COMMANDS entry does not start with .B krc CMD: %r"
                                 % block[:80])
        entries[m.group(1)] = block
    return entries


class InstallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.build = os.path.dirname(os.path.abspath(h.krc_binary()))
        cls.tmp = tempfile.mkdtemp(prefix="krc-install-")
        cls.prefix = os.path.join(cls.tmp, "prefix")
        p = run(["cmake", "--install", cls.build, "--prefix", cls.prefix])
        if p.returncode != 0:
            raise AssertionError("cmake --install %s --prefix %s failed (%d):\n%s%s"
                                 % (cls.build, cls.prefix, p.returncode, p.stdout, p.stderr))
        cls.krc = os.path.join(cls.prefix, "bin", "krc")
        cls.man = os.path.join(cls.prefix, "share", "man", "man1", "krc.1")
        with open(MAN_SOURCE) as f:
            cls.roff = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def env(self):
        """No PATH to the build tree and a HOME of its own: the installed binary alone."""
        return {"PATH": "/usr/bin:/bin", "HOME": self.tmp, "LC_ALL": "C.UTF-8"}

    def test_installed_files(self):
        self.assertTrue(os.access(self.krc, os.X_OK), self.krc)
        with open(self.man) as f:
            self.assertEqual(f.read(), self.roff, "the installed man page is not docs/krc.1")
        files = sorted(os.path.relpath(os.path.join(d, n), self.prefix)
                       for d, _, names in os.walk(self.prefix) for n in names)
        self.assertEqual(files, ["bin/krc", "share/man/man1/krc.1"])

    def test_installed_krc_runs(self):
        built = run([h.krc_binary(), "version"])
        p = run([self.krc, "version"], env=self.env())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"^krc \d+\.\d+\.\d+\n$")
        self.assertEqual(p.stdout, built.stdout)
        p = run([self.krc, "help"], env=self.env())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Usage:\n  krc run ", p.stdout)
        p = run([self.krc], env=self.env())
        self.assertEqual(p.returncode, 2)
        # and does its job: a saved OOM-killed pod is explained as one
        p = run([self.krc, "explain", "--pod", os.path.join(ORDERS, "pod.json"),
                 "--events", os.path.join(ORDERS, "events.json"), "--format", "json"],
                env=self.env())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["cause"], "oom_killed")

    def test_man_page_renders_without_warnings(self):
        if shutil.which("groff") is None:
            self.fail("groff is not installed: scripts/setup-test installs Debian's groff-base")
        p = run(["groff", "-man", "-Tutf8", "-ww", "-rLL=80n", self.man],
                env=dict(os.environ, LC_ALL="C.UTF-8"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "", "groff warnings")
        text = re.sub(r".\x08", "", p.stdout)  # overstrike bold/underline
        for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS",
                        "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES"):
            self.assertRegex(text, r"(?m)^%s$" % section)
        self.assertIn("krc - Kubernetes pod restart diagnostics collector", text)
        # and groff does warn: a broken request in a copy of the page
        broken = os.path.join(self.tmp, "broken.1")
        with open(broken, "w") as f:
            f.write(self.roff.replace(".SH FILES\n", ".SH FILES\n.nosuchrequest\n"))
        p = run(["groff", "-man", "-Tutf8", "-ww", "-z", broken])
        self.assertIn("nosuchrequest", p.stderr)

    def test_man_page_follows_krc_help(self):
        help_text = run([h.krc_binary(), "help"]).stdout
        listed = set(re.findall(r"(?m)^  krc ([a-z]+)", help_text))
        self.assertIn("run", listed)
        documented = man_commands(self.roff)
        self.assertEqual(listed - set(documented), set(),
                         "commands of `krc help` missing from docs/krc.1's COMMANDS")
        self.assertEqual(set(documented) - listed, set(),
                         "docs/krc.1's COMMANDS names commands `krc help` does not list")
        for cmd, entry in documented.items():
            if cmd in ("run", "help", "version"):
                own = help_text
            else:
                p = run([h.krc_binary(), cmd, "--help"])
                own = p.stdout + p.stderr
            self.assertEqual(options(entry) - options(own), set(),
                             "docs/krc.1 names options `krc %s --help` does not know" % cmd)
        run_section = self.roff.split(".SH OPTIONS\n", 1)[1].split("\n.SH ", 1)[0]
        self.assertEqual(options(run_section) - options(help_text), set(),
                         "docs/krc.1's OPTIONS names options `krc help` does not know")
        # the page's version is the binary's
        version = run([h.krc_binary(), "version"]).stdout.split()[1]
        th = re.search(r"(?m)^\.TH .*$", self.roff).group(0)
        self.assertRegex(th, r'^\.TH KRC 1 \S+ "krc %s"' % re.escape(version),
                         "docs/krc.1's .TH line does not carry krc's version")


if __name__ == "__main__":
    h.main()
