"""Kubeconfig exec credential plugins (EKS/GKE/AKS style) against the fake API server: the
plugin is a small script written by each test that prints an ExecCredential with the fake's
current token; krc runs it at the first request, re-runs it after a 401 or when the credential
expires, shows the install hint when the command is missing, and names the kubeconfig user and
the failure when the plugin fails or prints garbage. The token never reaches krc's output. The
plugin gets an allow-list of krc's environment and the kubeconfig's env, never krc's secrets; its
stderr is redacted in the log; a plugin that leaves a process holding its stdout is not waited
for."""

import base64
import json
import os
import shutil
import stat
import subprocess
import tempfile
import time
import unittest

import krc_harness as h
from admin import FakeKube

FAST = ["--watch-idle-timeout", "3s"]
V1 = "client.authentication.k8s.io/v1"
# krc's own secrets, as a deployment sets them (loopback Slack URLs: nothing is posted here)
WEBHOOK = "http://127.0.0.1:9/services/T0KRC/B0KRC/webhookSecretPath0123456789"
SECRETS = {"SLACK_WEBHOOK_URL": WEBHOOK, "SLACK_BOT_TOKEN": "xoxb-1111-2222-botSecretValue",
           "SLACK_CHANNEL": "#alerts", "KRC_SLACK_API_URL": "http://127.0.0.1:9/api/",
           "PGPASSWORD": "pgSecretValue0123", "TEAMS_WEBHOOK_URL": "teamsSecretValue0123",
           "MY_SERVICE_TOKEN": "serviceTokenSecretValue0123"}
# a JWT as a plugin's debug output could show it
JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJrcmMtdGVzdCJ9.c2lnbmF0dXJlLW9mLXRoZS1qd3Q"

PLUGIN = """#!/bin/sh
# fake exec credential plugin: counts its runs, answers with the fake API server's token
d='%(dir)s'
n=$(( $(cat "$d/runs" 2>/dev/null || echo 0) + 1 ))
# written whole (another run may read it meanwhile: krc runs the plugin for each watch)
echo $n > "$d/runs.$$" && mv -f "$d/runs.$$" "$d/runs"
printf '%%s' "$KUBERNETES_EXEC_INFO" > "$d/info"
echo "fake-plugin: run $n for $FAKE_PROFILE" >&2
tok=$(cat '%(token)s')
printf '{"apiVersion":"%(api)s","kind":"ExecCredential","status":{"token":"%%s"%(more)s}}\\n' "$tok"
"""


class ExecPluginTest(unittest.TestCase):
    def setUp(self):
        self.kube = FakeKube()
        self.kube.start()
        self.kube.config(bookmark_interval=1)
        self.dir = tempfile.mkdtemp(prefix="krc-exec-")
        self.krc = None

    def tearDown(self):
        if self.krc is not None:
            self.krc.kill()
        self.kube.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def write_script(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, stat.S_IRWXU)
        return path

    def kubeconfig(self, command, exec_extra=""):
        """The fake's kubeconfig with its user's tokenFile replaced by an exec plugin."""
        with open(self.kube.kubeconfig) as f:
            text = f.read()
        lines = text.splitlines()
        out = []
        for line in lines:
            if line.strip().startswith("tokenFile:"):
                indent = line[:len(line) - len(line.lstrip())]
                out += [indent + "exec:",
                        indent + "  apiVersion: " + V1,
                        indent + "  command: " + json.dumps(command),
                        indent + "  args: [get-token, --cluster, fake]",
                        indent + "  env: [{name: FAKE_PROFILE, value: prod}]",
                        indent + "  interactiveMode: Never"]
                out += [indent + "  " + x for x in exec_extra.splitlines() if x]
            else:
                out.append(line)
        path = os.path.join(self.dir, "kubeconfig")
        with open(path, "w") as f:
            f.write("\n".join(out) + "\n")
        self.assertIn("exec:", "\n".join(out))
        return path

    def plugin(self, more=""):
        return self.write_script("plugin", PLUGIN % {"dir": self.dir, "token": self.kube.token_path,
                                                     "api": V1, "more": more})

    def read(self, name):
        with open(os.path.join(self.dir, name)) as f:
            return f.read()

    def runs(self):
        try:
            with open(os.path.join(self.dir, "runs")) as f:
                return int(f.read())
        except FileNotFoundError:
            return 0

    def test_token_from_plugin_and_refresh_after_401(self):
        self.kube.create_pod("default", "exec-0")
        cfg = self.kubeconfig(self.plugin())
        self.krc = h.Krc(cfg, FAST)
        self.krc.wait_synced()
        first_runs = self.runs()
        self.assertGreaterEqual(first_runs, 1)
        # cached: no expirationTimestamp, so no run per request
        self.kube.restart("default", "exec-0", "app")
        self.krc.wait_restarts(1)
        self.assertEqual(self.runs(), first_runs)
        info = json.loads(self.read("info"))
        self.assertEqual(info, {"apiVersion": V1, "kind": "ExecCredential",
                                "spec": {"interactive": False}})
        # the plugin's stderr is in krc's log
        self.krc.wait_log("fake-plugin: run 1 for prod")
        old = self.kube.current_token()
        # the API server's token changes: the next request gets a 401 and krc runs the plugin
        self.kube.config(token="rotated-exec-token-0123456789")
        self.kube.fault(type="drop_watches")
        self.kube.restart("default", "exec-0", "app")
        self.krc.wait_restarts(2)
        self.assertGreater(self.runs(), first_runs)
        text = self.krc.text()
        self.assertNotIn("rotated-exec-token-0123456789", text)
        self.assertNotIn(old, text)

    def test_expired_credential_is_renewed(self):
        self.kube.create_pod("default", "exp-0")
        # already expired when printed: every request needs a fresh one
        cfg = self.kubeconfig(self.plugin(',"expirationTimestamp":"2001-01-01T00:00:00Z"'))
        self.krc = h.Krc(cfg, FAST)
        self.krc.wait_synced()
        n = self.runs()
        self.kube.restart("default", "exp-0", "app")
        self.krc.wait_restarts(1)
        h.wait_until(lambda: self.runs() > n, what="the plugin to run again")

    def test_provide_cluster_info(self):
        cfg = self.kubeconfig(self.plugin(), "provideClusterInfo: true")
        self.krc = h.Krc(cfg, FAST)
        self.krc.wait_synced()
        info = json.loads(self.read("info"))
        cluster = info["spec"]["cluster"]
        self.assertTrue(cluster["server"].startswith("https://127.0.0.1:"))
        with open(os.path.join(self.kube.state_dir, "ca.crt"), "rb") as f:
            self.assertEqual(base64.b64decode(cluster["certificate-authority-data"]), f.read())
        self.assertFalse(info["spec"]["interactive"])

    def test_client_certificate_reaches_tls(self):
        # The fake API server does not check client certificates; a broken one from the plugin
        # must still reach the TLS layer and fail the connection with a message that says so.
        bad = ',"clientCertificateData":"-----BEGIN CERTIFICATE-----\\\\nAAAA\\\\n' \
              '-----END CERTIFICATE-----\\\\n","clientKeyData":"-----BEGIN PRIVATE KEY-----' \
              '\\\\nAAAA\\\\n-----END PRIVATE KEY-----\\\\n"'
        cfg = self.kubeconfig(self.plugin(bad))
        self.krc = h.Krc(cfg, FAST)
        line = self.krc.wait_log("retrying in")[0]["msg"]
        self.assertRegex(line, r"(?i)certificate|SSL|key")
        self.assertIsNone(self.krc.proc.poll())

    def test_client_certificate_and_token(self):
        # a real certificate and key (openssl), with the token: krc presents both and works
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                        os.path.join(self.dir, "client.key"), "-out",
                        os.path.join(self.dir, "client.crt"), "-days", "2",
                        "-subj", "/CN=exec-user"], check=True, capture_output=True)
        crt = self.read("client.crt").replace("\n", "\\\\n")
        key = self.read("client.key").replace("\n", "\\\\n")
        more = ',"clientCertificateData":"%s","clientKeyData":"%s"' % (crt, key)
        self.kube.create_pod("default", "cert-0")
        cfg = self.kubeconfig(self.plugin(more))
        self.krc = h.Krc(cfg, FAST)
        self.krc.wait_synced()
        self.kube.restart("default", "cert-0", "app")
        self.krc.wait_restarts(1)

    def test_missing_command_shows_install_hint(self):
        cfg = self.kubeconfig("krc-test-no-such-auth-plugin",
                              "installHint: 'krc-test-no-such-auth-plugin is needed; see "
                              "https://example.test/install'")
        self.krc = h.Krc(cfg, FAST)
        line = self.krc.wait_log("krc-test-no-such-auth-plugin is needed")[0]["msg"]
        self.assertIn('user "fake"', line)
        self.assertIn('exec credential plugin "krc-test-no-such-auth-plugin" not found', line)
        self.assertIn("https://example.test/install", line)
        self.assertIn("retrying in", line)  # an authentication error: krc waits for a fix
        self.assertIsNone(self.krc.proc.poll())

    def test_failing_plugin(self):
        path = self.write_script("fail", "#!/bin/sh\necho 'error: SSO session expired, run "
                                         "aws sso login' >&2\nexit 255\n")
        cfg = self.kubeconfig(path)
        self.krc = h.Krc(cfg, FAST)
        line = self.krc.wait_log("failed with exit status 255")[0]["msg"]
        self.assertIn('user "fake"', line)
        self.assertIn("error: SSO session expired, run aws sso login", line)
        self.assertIn("retrying in", line)
        self.assertIsNone(self.krc.proc.poll())
        # the user logs in (the plugin works now): krc gets going without a restart
        os.replace(self.plugin(), path)
        self.krc.wait_synced(timeout=40)

    def test_plugin_printing_garbage(self):
        path = self.write_script("garbage", "#!/bin/sh\necho 'not-json-but-maybe-a-secret'\n")
        cfg = self.kubeconfig(path)
        self.krc = h.Krc(cfg, FAST)
        line = self.krc.wait_log("not an ExecCredential JSON object")[0]["msg"]
        self.assertIn('user "fake"', line)
        self.assertNotIn("not-json-but-maybe-a-secret", self.krc.text())
        self.assertIn("retrying in", line)
        self.assertIsNone(self.krc.proc.poll())

    def credential_script(self, before):
        """A plugin that runs the shell lines `before`, then prints the fake's token."""
        return self.write_script("plugin-x", "#!/bin/sh\n%s\ntok=$(cat '%s')\n"
                                 "printf '{\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\","
                                 "\"status\":{\"token\":\"%%s\"}}\\n' \"$tok\"\n"
                                 % (before, self.kube.token_path, V1))

    def test_plugin_environment_has_no_krc_secrets(self):
        env_out = os.path.join(self.dir, "env")
        cfg = self.kubeconfig(self.credential_script("env > '%s'" % env_out))
        self.krc = h.Krc(cfg, FAST, env=dict(SECRETS, AWS_ROLE_ARN="arn:aws:iam::1:role/krc",
                                             AWS_PROFILE="default", LC_ALL="C.UTF-8",
                                             NO_PROXY="127.0.0.1,localhost"))
        self.krc.wait_synced()
        with open(env_out) as f:
            dump = dict(line.split("=", 1) for line in f.read().splitlines() if "=" in line)
        for name, value in SECRETS.items():
            self.assertNotIn(name, dump)
            self.assertNotIn(value, "\n".join(dump.values()))
        self.assertNotIn("KRC_DB", dump)  # the harness sets it: krc's own
        self.assertNotIn("KRC_LISTEN", dump)
        # the allow-list, the kubeconfig's env, the request
        self.assertEqual(dump["AWS_ROLE_ARN"], "arn:aws:iam::1:role/krc")
        self.assertEqual(dump["AWS_PROFILE"], "default")
        self.assertEqual(dump["LC_ALL"], "C.UTF-8")
        self.assertEqual(dump["NO_PROXY"], "127.0.0.1,localhost")
        self.assertEqual(dump["PATH"], os.environ["PATH"])
        self.assertEqual(dump["FAKE_PROFILE"], "prod")
        self.assertEqual(json.loads(dump["KUBERNETES_EXEC_INFO"])["kind"], "ExecCredential")

    def test_plugin_stderr_is_redacted_in_the_log(self):
        cfg = self.kubeconfig(self.credential_script(
            "echo 'debug: got Authorization: Bearer %s' >&2\n"
            "echo 'debug: posting to %s' >&2\n"
            "echo 'debug: aws_secret_access_key=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY' >&2"
            % (JWT, WEBHOOK)))
        self.krc = h.Krc(cfg, FAST, env={"SLACK_WEBHOOK_URL": WEBHOOK})
        self.krc.wait_synced()
        self.krc.wait_log("debug: posting to")
        line = self.krc.wait_log("debug: got Authorization")[0]["msg"]
        self.assertIn("Bearer [REDACTED]", line)
        text = self.krc.text()
        self.assertNotIn(JWT, text)
        self.assertNotIn("eyJzdWIiOiJrcmMtdGVzdCJ9", text)
        self.assertNotIn("webhookSecretPath", text)
        self.assertNotIn("wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY", text)

    def test_plugin_leaving_a_process_on_stdout(self):
        # the plugin starts a helper that inherits its stdout and outlives it: the credential
        # it printed is used once it has exited, not after the helper (30 s) or the timeout
        # (60 s)
        pidfile = os.path.join(self.dir, "helper.pid")
        cfg = self.kubeconfig(self.credential_script("sleep 30 &\necho $! > '%s'" % pidfile))
        start = time.monotonic()
        self.krc = h.Krc(cfg, FAST)
        self.krc.wait_synced(timeout=10)
        self.assertLess(time.monotonic() - start, 10)
        self.krc.wait_log("kept its output open")
        with open(pidfile) as f:
            helper = int(f.read())
        # the helper was killed with the plugin's process group
        def gone():
            try:
                with open("/proc/%d/stat" % helper) as st:
                    return st.read().split(") ", 1)[1].startswith("Z")
            except FileNotFoundError:
                return True
        h.wait_until(gone, timeout=5, what="the plugin's helper to be killed")

    def test_interactive_always_is_refused_at_start(self):
        cfg = self.kubeconfig(self.plugin())
        with open(cfg) as f:
            text = f.read().replace("interactiveMode: Never", "interactiveMode: Always")
        with open(cfg, "w") as f:
            f.write(text)
        self.krc = h.Krc(cfg, FAST)
        self.assertNotEqual(self.krc.wait_exit(), 0)
        self.assertIn("exec.interactiveMode is Always, but krc runs the plugin without a "
                      "terminal", self.krc.text())
        self.assertEqual(self.runs(), 0)


if __name__ == "__main__":
    h.main()
