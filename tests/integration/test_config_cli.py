"""`krc config check|print|keys` with the real binary: every mistake of a file reported with its
line and column, secrets redacted in the effective configuration, docs/configuration.md current."""

import os
import re
import socket
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


def krc(*args, env=None, cwd=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "KRC_"))}
    e.update(env or {})
    return subprocess.run([os.path.abspath(h.krc_binary())] + list(args), capture_output=True,
                          text=True, timeout=30, env=e, cwd=cwd)


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

    def test_check_names_the_file_of_a_cross_field_mistake(self):
        # a file whose name begins a message ("lease" / "leaseRenewDeadline ...") still gets it
        with open(os.path.join(self.tmp.name, "lease"), "w") as f:
            f.write("leaderElect: true\nleaseDuration: 5s\nleaseRenewDeadline: 5s\n")
        p = krc("config", "check", "lease", cwd=self.tmp.name)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertTrue(p.stderr.startswith("lease: leaseRenewDeadline (5s) must be less than"),
                        p.stderr)

    def test_print_redacts_secrets_and_applies_precedence(self):
        hook = "https://hooks.example.test/services/T1/B1/supersecret"
        path = self.write("clusterName: from-file\nmuteSeconds: 60\nslackWebhookUrl: %s\n" % hook)
        p = krc("config", "print", "--config", path, env={"MUTE_SECONDS": "120"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('clusterName: "from-file"', p.stdout)
        self.assertIn("muteSeconds: 120", p.stdout)  # environment over file
        self.assertIn('slackWebhookUrl: "[REDACTED]"', p.stdout)
        self.assertNotIn("supersecret", p.stdout + p.stderr)
        # the printed configuration is itself a valid file once the secret is put back: the
        # placeholder is refused as a URL, and said to be one
        again = self.write(p.stdout)
        c = krc("config", "check", again)
        self.assertEqual(c.returncode, 1, c.stdout + c.stderr)
        self.assertIn("SLACK_WEBHOOK_URL (slackWebhookUrl): the URL is the placeholder krc config "
                      "print writes for a secret", c.stderr)
        again = self.write(p.stdout.replace('"[REDACTED]"', '"%s"' % hook))
        self.assertEqual(krc("config", "check", again).returncode, 0)

    def test_print_durations_in_the_largest_exact_unit(self):
        """config print: 30 days is 30d (was 2592000s), each duration in the largest unit
        (d, h, m, s) that holds it exactly, and the printed file reads back to the same
        values."""
        path = self.write("historyMaxAge: 1d12h\nstormWindow: 90\nrecoveredAfter: 5400s\n"
                          "startupWindow: 2h\nwatchIdleTimeout: 61s\n")
        p = krc("config", "print", "--config", path)
        self.assertEqual(p.returncode, 0, p.stderr)
        for line in ("historyMaxAge: 36h", "stormWindow: 90s", "recoveredAfter: 90m",
                     "startupWindow: 2h", "watchIdleTimeout: 61s", "watchBookmarkInterval: 1m",
                     "leaseDuration: 15s"):
            self.assertRegex(p.stdout, r"(?m)^%s$" % re.escape(line))
        default = krc("config", "print")
        self.assertEqual(default.returncode, 0, default.stderr)
        self.assertRegex(default.stdout, r"(?m)^historyMaxAge: 30d$")
        self.assertNotIn("2592000", default.stdout)
        # round trip: the printed configuration, read again, prints the same (but for the
        # first comment line, which names the file)
        def body(text):
            return [ln for ln in text.splitlines() if not ln.startswith("#")]
        for out in (p.stdout, default.stdout):
            again = krc("config", "print", "--config", self.write(out))
            self.assertEqual(again.returncode, 0, again.stderr)
            self.assertEqual(body(again.stdout), body(out))
            self.assertGreater(len(body(out)), 30)

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

    def readme_example(self):
        with open(os.path.join(h.ROOT, "README.md")) as f:
            readme = f.read()
        m = re.search(r"Example `--config` file:\n\n```yaml\n(.*?)```", readme, re.S)
        self.assertIsNotNone(m, "README.md has no example --config file")
        return m.group(1)

    def test_readme_example_passes_check(self):
        text = self.readme_example()
        path = self.write(text)
        p = krc("config", "check", path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "%s: ok\n" % path)
        # a webhookUrlEnv variable that is not set here is a note, not a mistake of the file
        for var in re.findall(r"webhookUrlEnv: (\S+)", text):
            self.assertIn("note: %s:" % path, p.stderr)
            self.assertIn("environment variable %s is not set here; krc run will need it" % var,
                          p.stderr)
        self.assertNotIn("needs webhookUrl", p.stderr)

    def test_unset_webhook_env_is_one_error_for_run(self):
        path = self.write(self.readme_example())
        p = krc("run", "--config", path, "--kubeconfig", os.path.join(self.tmp.name, "none"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr.splitlines(), [
            "krc run: invalid configuration:",
            "%s:5:20: routes[0].webhookUrlEnv: environment variable SLACK_WEBHOOK_ML is not set"
            % path])

    def test_values_with_controls_are_shown_not_obeyed(self):
        # a key and values with escape sequences (YAML's \\e is ESC), DEL, a C1 CSI and a bidi
        # override: the mistakes of check and run quote them as visible symbols (U+241B for
        # ESC), print writes them as YAML escapes
        path = self.write('"bad\\e[31mkey": 1\nlogLevel: "de\\e]0;pwned\\abug"\n')
        for p in (krc("config", "check", path),
                  krc("run", "--config", path, "--kubeconfig", os.path.join(self.tmp.name, "x"))):
            self.assertNotEqual(p.returncode, 0)
            self.assertNotIn("\x1b", p.stderr)
            self.assertNotIn("\x07", p.stderr)
            self.assertIn('unknown key "bad\u241b[31mkey"', p.stderr)
            self.assertIn('not "de\u241b]0;pwned\u2407bug"', p.stderr)
        path = self.write('clusterName: "prod\\e[2J\\x7f\\u009b\\u202e-eu"\n')
        p = krc("config", "print", "--config", path)
        self.assertEqual(p.returncode, 0, p.stderr)
        for c in ("\x1b", "\x7f", "\u009b", "\u202e"):
            self.assertNotIn(c, p.stdout, repr(c))
        self.assertIn('clusterName: "prod\\x1b[2J\\x7f\\x9b\\u202e-eu"', p.stdout)

    def test_did_you_mean(self):
        path = self.write("clusterNme: prod\nroutes:\n  - namespce: a\n    channel: '#x'\n")
        p = krc("config", "check", path)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr.splitlines(), [
            '%s:1:1: unknown key "clusterNme" (did you mean "clusterName"?)' % path,
            '%s:3:5: routes[0]: unknown key "namespce" (did you mean "namespace"? allowed: '
            'namespace|pod|container|webhookUrl|webhookUrlEnv|channel|destinations)' % path])
        p = krc("run", "--mute-second", "5")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr, "krc run: unknown option --mute-second; did you mean "
                                   "--mute-seconds? (see krc help)\n")
        p = krc("config", "print", env={"KRC_WORKER": "4"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("environment variable KRC_WORKER is not a krc option; did you mean "
                      "KRC_WORKERS?", p.stderr)

    def test_bare_krc_prints_short_usage_and_exits_2(self):
        p = krc()
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, "")
        lines = p.stderr.splitlines()
        self.assertLess(len(lines), 20, p.stderr)
        self.assertIn("Usage: krc COMMAND", p.stderr)
        for cmd in ("run", "explain", "history", "config", "help"):
            self.assertRegex(p.stderr, r"\n  %s +\S" % cmd)
        # the full help is still there on request
        full = krc("help")
        self.assertEqual(full.returncode, 0)
        self.assertGreater(len(full.stdout.splitlines()), 60)

    def test_busy_listen_port_says_what_to_do(self):
        kubeconfig = os.path.join(self.tmp.name, "kubeconfig")
        with open(kubeconfig, "w") as f:
            f.write("current-context: c\n"
                    "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                    "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
                    "users: [{name: u, user: {token: abcdef}}]\n")
        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen(1)
            port = busy.getsockname()[1]
            p = krc("run", "--kubeconfig", kubeconfig, "--listen", "127.0.0.1:%d" % port,
                    "--db", os.path.join(self.tmp.name, "krc.db"))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("cannot listen on 127.0.0.1:%d: Address already in use; another process "
                      "uses that port: pick a free one with --listen HOST:PORT" % port, p.stderr)
        self.assertIn("or turn the endpoint off with --listen off", p.stderr)


if __name__ == "__main__":
    h.main()
