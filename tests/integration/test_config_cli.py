"""`krc config check|print|keys` with the real binary: every mistake of a file reported with its
line and column, secrets redacted in the effective configuration, docs/configuration.md current."""

import os
import subprocess
import tempfile
import unittest

import krc_harness as h

BAD = """clusterName: prod
watchedNamespace: typo
muteSeconds: -1
routes: 5
silences:
  - start: never
logLevel: loud
"""


def krc(*args, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "KRC_"))}
    e.update(env or {})
    return subprocess.run([h.krc_binary()] + list(args), capture_output=True, text=True,
                          timeout=30, env=e)


class ConfigCliTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, text):
        path = os.path.join(self.tmp.name, "krc.yaml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_check_reports_all_five_mistakes_with_lines(self):
        path = self.write(BAD)
        p = krc("config", "check", path)
        self.assertEqual(p.returncode, 1)
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 5, p.stderr)
        for line, want in zip(lines, [":2:1: unknown key \"watchedNamespace\"",
                                      ":3:14: muteSeconds must be a whole number from 0 to",
                                      ":4:9: routes must be a list of mappings",
                                      ":6:12: silences[0].start must be an RFC 3339 time",
                                      ":7:11: logLevel must be one of debug|info|warn|error"]):
            self.assertTrue(line.startswith(path), line)
            self.assertIn(want, line)

    def test_check_accepts_a_good_file(self):
        path = self.write("clusterName: prod\nmuteSeconds: 300\nwatchedNamespaces: [a, b]\n")
        p = krc("config", "check", path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("ok", p.stdout)

    def test_print_redacts_secrets_and_applies_precedence(self):
        hook = "https://hooks.example.test/services/T1/B1/supersecret"
        path = self.write("clusterName: from-file\nmuteSeconds: 60\nslackWebhookUrl: %s\n" % hook)
        p = krc("config", "print", "--config", path, env={"MUTE_SECONDS": "120"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('clusterName: "from-file"', p.stdout)
        self.assertIn("muteSeconds: 120", p.stdout)  # environment over file
        self.assertIn('slackWebhookUrl: "[REDACTED]"', p.stdout)
        self.assertNotIn("supersecret", p.stdout + p.stderr)
        # the printed configuration is itself a valid file
        again = self.write(p.stdout)
        self.assertEqual(krc("config", "check", again).returncode, 0)

    def test_docs_configuration_is_current(self):
        p = krc("config", "keys")
        self.assertEqual(p.returncode, 0)
        with open(os.path.join(h.ROOT, "docs", "configuration.md")) as f:
            doc = f.read()
        self.assertIn(p.stdout.strip(), doc,
                      "docs/configuration.md is out of date: regenerate its table with "
                      "`krc config keys`")

    def test_usage_errors(self):
        self.assertEqual(krc("config").returncode, 2)
        self.assertEqual(krc("config", "frobnicate").returncode, 2)
        p = krc("config", "check", os.path.join(self.tmp.name, "missing.yaml"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("missing.yaml", p.stderr)


if __name__ == "__main__":
    h.main()
