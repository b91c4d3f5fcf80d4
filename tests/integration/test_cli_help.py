"""`krc help` against each command's own --help (issue 25, point 10): every synopsis of
`krc help` names exactly the options of that command's own synopsis (`krc history --help`,
...), and `krc run`'s synopsis names only options `krc run` knows."""
import re
import subprocess
import unittest

import krc_harness as h

OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def run(*args):
    p = subprocess.run([h.krc_binary()] + list(args), capture_output=True, text=True,
                       timeout=30, stdin=subprocess.DEVNULL)
    return p.stdout + p.stderr


def synopses(text, command):
    """{form: options} of the synopsis lines of `command` in a help text: the lines that start
    (after "usage:" or indentation) with `krc COMMAND ...`, and the lines that continue them
    (indented, starting with "["). form is "krc history" or "krc history show"."""
    found = {}
    form = None
    for line in text.splitlines():
        m = re.match(r"^\s*(?:usage:\s*)?(krc %s(?: [a-z]+)?)\b(.*)$" % re.escape(command),
                     line, re.IGNORECASE)
        if m:
            words = m.group(1).split()
            # "krc config check FILE ...": the form is the command and a sub-command word
            form = " ".join(words)
            rest = m.group(2)
            # the options of the synopsis, not of a description on the same line
            rest = re.split(r"\s{3,}[a-z]", rest)[0]
            found.setdefault(form, set()).update(OPTION.findall(rest))
        elif form is not None and re.match(r"^\s+\[", line):
            found[form].update(OPTION.findall(line))
        else:
            form = None
    return found


class HelpSynopsisTest(unittest.TestCase):
    def test_each_synopsis_matches_the_commands_own(self):
        help_text = run("help")
        commands = sorted(set(re.findall(r"(?m)^  krc ([a-z]+)", help_text)))
        self.assertIn("history", commands)
        checked = 0
        for cmd in commands:
            if cmd in ("run", "help", "version"):
                continue
            listed = synopses(help_text, cmd)
            own = synopses(run(cmd, "--help"), cmd)
            with self.subTest(command=cmd):
                self.assertTrue(own, "`krc %s --help` has no synopsis" % cmd)
                got = set().union(*listed.values())
                want = set().union(*own.values())
                self.assertEqual(got, want,
                                 "`krc help` names %s for krc %s, its own --help %s"
                                 % (sorted(got), cmd, sorted(want)))
                checked += 1
        self.assertGreaterEqual(checked, 5)

    def test_history_synopsis_has_cluster_and_password_file(self):
        """The issue's example: both history forms name --db-password-file, the list names
        --cluster."""
        listed = synopses(run("help"), "history")
        self.assertIn("--cluster", listed["krc history"])
        self.assertIn("--db-password-file", listed["krc history"])
        self.assertIn("--db-password-file", listed["krc history show"])

    def test_run_synopsis_names_run_options(self):
        """krc run's synopsis: options krc run knows (each asks for its value, where an
        unknown one is "unknown option")."""
        syn = synopses(run("help"), "run")["krc run"]
        self.assertEqual(syn, {"--kubeconfig", "--context", "--config"})
        self.assertIn("unknown option --bogus", run("run", "--bogus"))
        for opt in sorted(syn):
            with self.subTest(option=opt):
                self.assertIn("option %s needs a value" % opt, run("run", opt))

    def test_demo_time_is_the_measured_one(self):
        """docs/demo.md measured 20.1 s: help and `krc demo --help` say about 20."""
        self.assertIn("About 20 s;", run("help"))
        self.assertIn("About 20 seconds;", run("demo", "--help"))


if __name__ == "__main__":
    h.main()
