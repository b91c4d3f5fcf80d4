"""Destinations checked before they are needed (issue 25): a destination URL that cannot work
is refused by `krc config check`, at start (before any watch) and on a reload, with a message
naming the destination; `krc notify test` sends a message marked as a test to each destination
and explains each answer (the fake Slack answering 200, 404 no_service and 403 invalid_token).

    python3 tests/integration/test_notify.py --krc build/krc
"""

import os
import re
import signal
import subprocess

import sys

import krc_harness as h
from test_alerts import SCRUB, AlertTestBase
from test_metrics_promtool import prometheus_tool

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakedest"))
import fakedest  # noqa: E402

HEADLINE = "krc test message \u2014 no restart happened"
ROUTING_KEY = "R0UT1NGKEY0123456789abcdefABCDEF"  # 32 characters, as PagerDuty's
SIGNING_SECRET = "whsec-test-notify-0a1b2c3d"


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if k not in SCRUB and not k.startswith("KRC_")
           and k not in ("KUBECONFIG",) and not k.startswith("KUBERNETES_SERVICE")}
    env.update(extra or {})
    return env


class NotifyTest(AlertTestBase):
    def krc_cmd(self, *args, env=None, timeout=60):
        return subprocess.run([h.krc_binary()] + list(args), capture_output=True, text=True,
                              timeout=timeout * h.SLOWDOWN, env=clean_env(env))

    # ---- URLs refused before they are needed ----

    BAD_FILES = [
        # a misspelled scheme in a declared destination
        ("destinations:\n  - name: team-chat\n    type: slack-webhook\n"
         "    url: htps://hooks.slack.com/services/T0/B0/secretpart1\n",
         "destinations[0] (team-chat).url: the URL has the scheme \"htps://\"; it must be "
         "https://"),
        # no scheme at all: never looked up as a host name
        ("slackWebhookUrl: hooks.slack.com/services/T0/B0/secretpart2\n",
         "SLACK_WEBHOOK_URL (slackWebhookUrl): the URL has no scheme"),
        # the Web API over plain http to a host that is not loopback: the bot token would travel
        ("destinations:\n  - name: bot\n    type: slack-api\n    tokenEnv: KRC_IT_BOT_TOKEN\n"
         "    channel: \"#ops\"\n    apiUrl: http://slack.example.com/api\n",
         "destinations[0] (bot).apiUrl: the URL is plain http:// to a host that is not loopback"),
    ]

    def test_bad_urls_refused_by_config_check_and_at_start(self):
        env = {"KRC_IT_BOT_TOKEN": "xoxb-it-notify-0001"}
        for text, want in self.BAD_FILES:
            with self.subTest(want=want):
                path = self.config_file(text)
                p = self.krc_cmd("config", "check", path, env=env)
                self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
                self.assertIn(want, p.stderr)
                self.assertNotIn("secretpart", p.stdout + p.stderr)
                # krc run stops before it reads any credentials or watches anything
                p = self.krc_cmd("run", "--kubeconfig", self.kube.kubeconfig, "--config", path,
                                 "--listen", "off", env=env)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn(want, p.stderr)
                self.assertNotIn("watch", p.stderr.lower())
                self.assertNotIn("secretpart", p.stdout + p.stderr)
                # and krc notify test sends nothing with it
                p = self.krc_cmd("notify", "test", "--config", path, env=env)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertTrue(p.stderr.startswith("krc notify test: "), p.stderr)
                self.assertIn(want, p.stderr)
                self.assertEqual(p.stdout, "")

    def test_bad_urls_from_the_environment_refused_at_start(self):
        cases = [({"SLACK_WEBHOOK_URL": "htps://hooks.slack.com/services/T0/B0/secretpart3"},
                  "SLACK_WEBHOOK_URL (slackWebhookUrl): the URL has the scheme \"htps://\""),
                 ({"SLACK_WEBHOOK_URL": "hooks.slack.com/services/T0/B0/secretpart4"},
                  "SLACK_WEBHOOK_URL (slackWebhookUrl): the URL has no scheme"),
                 ({"SLACK_BOT_TOKEN": "xoxb-it-notify-0002",
                   "KRC_SLACK_API_URL": "http://slack.example.com/api"},
                  "KRC_SLACK_API_URL (slackApiUrl, used with SLACK_BOT_TOKEN): the URL is plain "
                  "http:// to a host that is not loopback")]
        for env, want in cases:
            with self.subTest(want=want):
                p = self.krc_cmd("run", "--kubeconfig", self.kube.kubeconfig, "--listen", "off",
                                 env=env)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn(want, p.stderr)
                self.assertNotIn("secretpart", p.stdout + p.stderr)
                self.assertNotIn("xoxb-it-notify", p.stdout + p.stderr)
        # the opt-in lets plain http through (here to a port where nothing listens)
        p = self.krc_cmd("notify", "test", env={"SLACK_BOT_TOKEN": "xoxb-it-notify-0003",
                                                "KRC_SLACK_API_URL": "http://slack.invalid/api",
                                                "KRC_SLACK_ALLOW_INSECURE_HTTP": "true"})
        self.assertNotIn("not loopback", p.stderr)

    def test_reload_with_a_bad_url_is_refused_and_the_old_configuration_kept(self):
        good = self.webhook("reload-ok")
        path = self.config_file("destinations:\n  - name: chat\n    type: slack-webhook\n"
                                "    url: %s\n    default: true\n" % good)
        self.start_krc(args=["--config", path])
        with open(path, "w") as f:
            f.write("destinations:\n  - name: chat\n    type: slack-webhook\n"
                    "    url: hooks.slack.com/services/T0/B0/secretpart5\n    default: true\n")
        self.krc.proc.send_signal(signal.SIGHUP)
        self.wait_log("configuration reload rejected")
        self.wait_log("destinations[0] (chat).url: the URL has no scheme")
        # still running with the old destination: a restart is posted to it
        self.kube.create_pod("shop", "web-1")
        self.kube.restart("shop", "web-1", "app", exit_code=137, reason="OOMKilled")
        self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN, webhook=self.slack.webhook_path(
            "reload-ok"))
        self.assertNotIn("secretpart", self.krc.text())

    # ---- per-destination metrics ----

    def metrics(self, port):
        status, body = h.http_get(port, "/metrics")
        self.assertEqual(status, 200)
        return body

    @staticmethod
    def sample(body, name, **labels):
        want = ",".join('%s="%s"' % kv for kv in sorted(labels.items()))
        for line in body.splitlines():
            m = re.match(r'^%s\{([^}]*)\} (\S+)$' % re.escape(name), line)
            if m and ",".join(sorted(m.group(1).split(","))) == want:
                return float(m.group(2))
        return None

    def test_destination_metrics_move_with_failure_then_success(self):
        url = self.slack.webhook_url("metrics-chat", revoked=True)
        self.secrets += [url]
        path = self.config_file("destinations:\n  - name: chat\n    type: slack-webhook\n"
                                "    url: %s\n    default: true\n" % url)
        self.start_krc(args=["--config", path])
        # the start says where each destination posts: name, kind, host, never the path
        line = self.wait_log("destination chat (slack-webhook)")[0]["msg"]
        self.assertIn("posts to host 127.0.0.1:", line)
        self.assertNotIn("/services/", self.krc.text())
        port = self.krc.http_port()
        body = self.metrics(port)
        labels = {"destination": "chat", "kind": "slack-webhook"}
        self.assertEqual(self.sample(body, "krc_destination_last_success_timestamp_seconds",
                                     **labels), 0)
        self.assertEqual(self.sample(body, "krc_destination_last_failure_timestamp_seconds",
                                     **labels), 0)
        self.assertEqual(self.sample(body, "krc_destination_failures_total", reason="http_4xx",
                                     **labels), 0)
        # a revoked webhook: the failure is explained in the log and counted
        self.kube.create_pod("shop", "web-1")
        self.kube.restart("shop", "web-1", "app", exit_code=137, reason="OOMKilled")
        self.wait_log("(404 no_service: this webhook was revoked or mistyped)")
        body = self.metrics(port)
        failed_at = self.sample(body, "krc_destination_last_failure_timestamp_seconds", **labels)
        self.assertGreater(failed_at, 1.7e9)
        self.assertEqual(self.sample(body, "krc_destination_last_success_timestamp_seconds",
                                     **labels), 0)
        self.assertEqual(self.sample(body, "krc_destination_failures_total", reason="http_4xx",
                                     **labels), 1)
        self.assertEqual(self.sample(body, "krc_destination_failures_total", reason="http_5xx",
                                     **labels), 0)
        # the Kubernetes Event of that restart is counted apart, not as a notification
        h.wait_until(lambda: self.sample(self.metrics(port), "krc_kube_events_total",
                                         result="created") == 1,
                     20 * h.SLOWDOWN, what="one Kubernetes Event counted")
        body = self.metrics(port)
        self.assertEqual(self.sample(body, "krc_notifications_total", result="sent"), 0)
        self.assertEqual(self.sample(body, "krc_notifications_total", result="failed"), 1)
        # the webhook works again: the next restart succeeds, and success is newer than failure
        self.slack.webhook_url("metrics-chat", revoked=False)
        # another workload's restart (web-1's repeats are its incident's, paced: issue 27)
        self.kube.create_pod("shop", "api-1")
        self.kube.restart("shop", "api-1", "app", exit_code=137, reason="OOMKilled")
        self.wait_posted(1)
        body = self.metrics(port)
        ok_at = self.sample(body, "krc_destination_last_success_timestamp_seconds", **labels)
        self.assertGreaterEqual(ok_at, failed_at)
        self.assertEqual(self.sample(body, "krc_destination_failures_total", reason="http_4xx",
                                     **labels), 1)
        self.assertEqual(self.sample(body, "krc_notifications_total", result="sent"), 1)
        promtool = prometheus_tool("promtool")
        if promtool is not None:
            p = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True,
                               text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    # ---- krc notify test ----

    def notify_setup(self):
        ok = self.webhook("notify-ok")
        revoked = self.slack.webhook_url("notify-revoked", revoked=True)
        bad_token = self.webhook("notify-badtoken")
        self.secrets += [revoked]
        self.slack.fault(type="respond", status=403, error="invalid_token", count=-1,
                         path_regex=self.slack.webhook_path("notify-badtoken"))
        path = self.config_file(
            "clusterName: it-cluster\n"
            "destinations:\n"
            "  - name: good\n    type: slack-webhook\n    url: %s\n"
            "  - name: revoked\n    type: slack-webhook\n    urlEnv: KRC_IT_REVOKED_URL\n"
            "  - name: badtoken\n    type: slack-webhook\n    url: %s\n"
            "  - name: events\n    type: kubernetes-event\n" % (ok, bad_token))
        return path, {"KRC_IT_REVOKED_URL": revoked, "SLACK_WEBHOOK_URL": ok}

    def test_notify_test_prints_each_answer_explained(self):
        path, env = self.notify_setup()
        p = self.krc_cmd("notify", "test", "--config", path, env=env)
        out = p.stdout
        self.assertEqual(p.returncode, 1, out + p.stderr)
        lines = out.strip().splitlines()
        self.assertIn("slack (SLACK_WEBHOOK_URL): 200 ok: sent", lines)
        self.assertIn("good (slack-webhook): 200 ok: sent", lines)
        self.assertIn("revoked (slack-webhook): failed: 404 no_service: this webhook was revoked "
                      "or mistyped", lines)
        self.assertIn("badtoken (slack-webhook): failed: 403 invalid_token: the token is not "
                      "valid (revoked or mistyped)", lines)
        self.assertIn("events (kubernetes-event): skipped: it is not a message (krc run writes "
                      "it; nothing is sent here)", lines)
        self.assertEqual(len(lines), 5, out)
        for s in self.secrets:
            self.assertNotIn(s, out + p.stderr)
        # the messages that arrived say they are a test, and name the cluster
        msgs = self.slack.messages(webhook=self.slack.webhook_path("notify-ok"))
        self.assertEqual(len(msgs), 2, msgs)  # SLACK_WEBHOOK_URL and "good" are the same hook
        for m in msgs:
            self.assertEqual(m["text"], HEADLINE)
            self.assertIn("it-cluster", str(m["body"]))

    def test_notify_test_one_destination_and_an_unknown_name(self):
        path, env = self.notify_setup()
        p = self.krc_cmd("notify", "test", "--destination", "good", "--config", path, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.strip(), "good (slack-webhook): 200 ok: sent")
        p = self.krc_cmd("notify", "test", "--destination", "revoked", "--config", path, env=env)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        p = self.krc_cmd("notify", "test", "--destination", "godo", "--config", path, env=env)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn('no destination is named "godo" (destinations: slack, good, revoked, '
                      'badtoken, events)', p.stderr)
        self.assertEqual(p.stdout, "")


    def test_notify_test_every_kind_in_its_own_format(self):
        """PagerDuty (an info trigger resolved at once), Teams, Google Chat and the signed webhook
        against the fake that checks each body against its service's rules."""
        dest = fakedest.FakeDest().start()
        self.addCleanup(dest.stop)
        secret = self.config_file(SIGNING_SECRET + "\n")
        path = self.config_file(
            "clusterName: it-cluster\n"
            "destinations:\n"
            "  - name: oncall\n    type: pagerduty\n    url: %s\n    routingKeyEnv: KRC_IT_PD\n"
            "  - name: teams\n    type: teams\n    urlEnv: KRC_IT_TEAMS\n"
            "  - name: chat\n    type: google-chat\n    urlEnv: KRC_IT_CHAT\n"
            "  - name: audit\n    type: webhook\n    url: %s\n    secretFile: %s\n"
            % (dest.pagerduty_url, dest.webhook_url("audit", SIGNING_SECRET), secret))
        env = {"KRC_IT_PD": ROUTING_KEY, "KRC_IT_TEAMS": dest.teams_url("ops"),
               "KRC_IT_CHAT": dest.gchat_url("SPACE1")}
        p = self.krc_cmd("notify", "test", "--config", path, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.strip().splitlines(),
                         ["oncall (pagerduty): 202 ok: sent", "teams (teams): 202 ok: sent",
                          "chat (google-chat): 200 ok: sent", "audit (webhook): 200 ok: sent"])
        for s in [ROUTING_KEY, SIGNING_SECRET, "fake-SPACE1-token"]:
            self.assertNotIn(s, p.stdout + p.stderr)
        self.assertEqual([r["errors"] for r in dest.requests()], [[]] * 5)
        pd = [r["json"] for r in dest.requests("/pagerduty/")]
        self.assertEqual([e["event_action"] for e in pd], ["trigger", "resolve"])
        self.assertEqual(pd[0]["dedup_key"], pd[1]["dedup_key"])
        self.assertTrue(pd[0]["dedup_key"].startswith("krc-test/"))
        self.assertEqual(pd[0]["payload"]["severity"], "info")
        self.assertIn(HEADLINE, pd[0]["payload"]["summary"])
        self.assertIn("it-cluster", pd[0]["payload"]["summary"])
        hook = dest.requests("/webhook/")[0]["json"]
        self.assertEqual((hook["kind"], hook["cluster"], hook["test"]["headline"]),
                         ("test", "it-cluster", HEADLINE))
        self.assertIn(HEADLINE, str(dest.requests("/teams/")[0]["json"]))
        self.assertIn(HEADLINE, dest.requests("/chat/")[0]["json"]["text"])


if __name__ == "__main__":
    h.main()
