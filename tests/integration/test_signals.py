"""Signals with the real binary: SIGHUP reloads filters, routes and mute settings without
dropping the watch, and a bad file is rejected with the old configuration kept; SIGTERM under
load drains for a bounded time and leaves the rest in the outbox, which the next start sends."""

import json
import os
import re
import signal
import tempfile
import time
import unittest

import krc_harness as h


FAST = ["--watch-idle-timeout", "3s"]


def metrics(port):
    status, body = h.http_get(port, "/metrics")
    assert status == 200, (status, body)
    return body


class ReloadTest(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.tmp = tempfile.TemporaryDirectory()
        self.cfg = os.path.join(self.tmp.name, "krc.yaml")
        self.default = self.slack.webhook_url("alerts")
        self.payments = self.slack.webhook_url("payments")
        self.payments2 = self.slack.webhook_url("payments-new")
        self.krc = None

    def tearDown(self):
        if self.krc is not None:
            self.krc.kill()
        self.tmp.cleanup()

    def write(self, text):
        # the way a ConfigMap volume updates: a new file renamed into place
        tmp = self.cfg + ".new"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.cfg)

    def start(self):
        self.krc = h.Krc(self.kube.kubeconfig, FAST + ["--config", self.cfg], {})
        self.port = self.krc.http_port()
        self.krc.wait_synced()
        return self.krc

    def hup(self, expect):
        before = len(self.krc.logs(contains=expect))
        self.krc.proc.send_signal(signal.SIGHUP)
        self.krc.wait_log(expect, count=before + 1)

    def to(self, name):
        return self.slack.messages(webhook=self.slack.webhook_path(name))

    def watch_requests(self):  # the pod watches' (not change tracking's)
        return [r for r in self.kube.requests() if r["path"].endswith("/pods") and (
            r.get("query", {}).get("watch") or "limit" in r.get("query", {}))]

    def test_valid_reload_applies_filters_routes_and_mute_without_a_new_watch(self):
        self.write("slackWebhookUrl: %s\nignoredNamespaces: noisy\nmuteSeconds: 0\n"
                   "stormThreshold: 0\n"
                   "routes:\n  - namespace: payments\n    webhookUrl: %s\n"
                   % (self.default, self.payments))
        # bare pods: pay-0 and pay-1 are incidents of their own (issue 27; as pods of one
        # workload, pay-1's restart would repeat pay-0's open incident)
        for ns, pod in (("noisy", "chatty-0"), ("payments", "pay-0"), ("payments", "pay-1")):
            self.kube.create_pod(ns, pod, owner=False)
        k = self.start()
        self.kube.restart("noisy", "chatty-0", "app", exit_code=1, logs="n\n")
        self.kube.restart("payments", "pay-0", "app", exit_code=1, logs="p\n")
        self.slack.wait_messages(1, webhook=self.slack.webhook_path("payments"))
        k.wait_restarts(1)
        self.assertEqual(len(self.to("alerts")), 0, "noisy is ignored before the reload")
        watches = len(self.watch_requests())

        self.write("slackWebhookUrl: %s\nignoredNamespaces: \"\"\nmuteSeconds: 600\n"
                   "stormThreshold: 0\n"
                   "routes:\n  - namespace: payments\n    webhookUrl: %s\n"
                   % (self.default, self.payments2))
        self.hup("configuration reloaded")
        self.kube.restart("noisy", "chatty-0", "app", exit_code=1, logs="n2\n")
        self.slack.wait_messages(1, webhook=self.slack.webhook_path("alerts"))
        self.kube.restart("payments", "pay-1", "app", exit_code=1, logs="p2\n")
        self.slack.wait_messages(1, webhook=self.slack.webhook_path("payments-new"))
        # mute is 600 s now: the next restart of the same pod is muted
        self.kube.restart("payments", "pay-1", "app", exit_code=1, logs="p3\n")
        k.wait_diagnosed(1, pod="pay-1", decision="muted")
        self.assertEqual(len(self.to("payments")), 1)
        self.assertEqual(len(self.to("payments-new")), 1)
        # the watch went on: no new LIST or WATCH because of the reload
        self.assertEqual(len(self.watch_requests()), watches)
        self.assertEqual(len(k.logs(contains="pod sync complete")), 1)
        self.assertIn('krc_config_reloads_total{result="success"} 1', metrics(self.port))
        self.assertEqual(k.stop(), 0)

    def test_invalid_file_is_rejected_and_the_old_configuration_kept(self):
        self.write("slackWebhookUrl: %s\nignoredNamespaces: noisy\nmuteSeconds: 0\n"
                   % self.default)
        self.kube.create_pod("noisy", "chatty-0")
        self.kube.create_pod("shop", "web-0")
        k = self.start()
        self.write("slackWebhookUrl: %s\nignoredNamespaces: \"\"\nmuteSecond: 0\n"
                   "ignoreRestartCount: many\nwatchedPodNamePrefixes: \"(\"\n" % self.default)
        self.hup("configuration reload rejected")
        time.sleep(0.5)  # all lines of the rejection are logged together
        text = "\n".join(l["msg"] for l in k.logs(contains="configuration reload rejected"))
        self.assertIn("unknown key \"muteSecond\"", text)
        self.assertIn("ignoreRestartCount", text)
        self.assertRegex(text, r"krc\.yaml:3:1")
        self.assertIn('krc_config_reloads_total{result="failure"} 1', metrics(self.port))
        # the old configuration still holds: noisy stays ignored, shop alerts
        self.kube.restart("noisy", "chatty-0", "app", exit_code=1, logs="n\n")
        self.kube.restart("shop", "web-0", "app", exit_code=1, logs="s\n")
        self.slack.wait_messages(1)
        time.sleep(1.5)
        pods = [m for m in self.slack.messages() if "chatty-0" in json.dumps(m)]
        self.assertEqual(pods, [])
        # an invalid regular expression in a filter is rejected too
        self.write("slackWebhookUrl: %s\nignoredNamespaces: \"(\"\n" % self.default)
        self.hup("configuration reload rejected")
        # and the daemon is still alive and watching
        self.kube.restart("shop", "web-0", "app", exit_code=1, logs="s2\n")
        self.slack.wait_messages(2)
        self.assertEqual(k.stop(), 0)

    def test_options_that_need_a_restart_are_named_and_kept(self):
        self.write("slackWebhookUrl: %s\nworkers: 2\n" % self.default)
        self.kube.create_pod("shop", "web-0")
        k = self.start()
        self.write("slackWebhookUrl: %s\nworkers: 4\nclusterName: prod-eu\n" % self.default)
        self.hup("configuration reloaded")
        self.assertTrue(k.logs(contains="workers changed; it takes effect when krc is restarted"))
        self.assertFalse(k.logs(contains="clusterName changed"))
        self.kube.restart("shop", "web-0", "app", exit_code=1, logs="s\n")
        msg = self.slack.wait_messages(1)[0]
        self.assertIn("prod-eu", json.dumps(msg))  # the new cluster name is live
        # watched namespaces decide which namespaces are watched: not reloadable
        self.write("slackWebhookUrl: %s\nwatchedNamespaces: shop\n" % self.default)
        self.hup("configuration reload rejected")
        self.assertTrue(k.logs(contains="restart krc to apply it"))
        self.assertEqual(k.stop(), 0)


class SigtermUnderLoadTest(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.tmp = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.tmp.name, "krc.db")
        self.procs = []

    def tearDown(self):
        for k in self.procs:
            k.kill()
        self.tmp.cleanup()

    def start(self):
        env = {"SLACK_WEBHOOK_URL": self.slack.webhook_url("alerts"), "KRC_DB": self.db,
               "MUTE_SECONDS": "0", "KRC_STORM_THRESHOLD": "0"}
        k = h.Krc(self.kube.kubeconfig, FAST, env)
        self.procs.append(k)
        k.wait_synced()
        return k

    def history(self):
        return h.history(self.db, "--limit", "1000")

    def test_a_hung_slack_request_is_cut_after_the_grace(self):
        self.kube.create_pod("load", "job-00")
        k = self.start()
        self.slack.fault(type="hang", seconds=60, count=-1)
        self.kube.restart("load", "job-00", "app", exit_code=1, logs="x\n")
        h.wait_until(lambda: "fault: hanging" in self.slack.log_tail(), 30, what="the hung request")
        t0 = time.monotonic()
        self.assertEqual(k.stop(timeout=40), 0)
        self.assertLess(time.monotonic() - t0, 10 + 5 + 3)
        self.assertIn("did not finish in 5s; aborted", k.text())
        self.assertEqual([r.get("delivery") for r in self.history()], ["pending"])

    def test_sigterm_under_load_loses_nothing(self):
        n = 30
        for i in range(n):
            self.kube.create_pod("load", "job-%02d" % i)
        # a slow Slack: every message takes 1.5 s, so most are still queued at SIGTERM
        self.slack.fault(type="hang", seconds=1.5, count=-1)
        k = self.start()
        for i in range(n):
            self.kube.restart("load", "job-%02d" % i, "app", exit_code=1, logs="x %d\n" % i)
        k.wait_diagnosed(n, timeout=60)
        self.slack.wait_messages(2, timeout=30)
        t0 = time.monotonic()
        self.assertEqual(k.stop(timeout=40), 0)
        took = time.monotonic() - t0
        # bounded drain: 10 s, plus up to 5 s for the request in flight when it ended
        self.assertLess(took, 10 + 5 + 3, "shutdown took %.1fs" % took)
        sent_before = len(self.slack.messages())
        self.assertLess(sent_before, n, "the test needs messages left at SIGTERM")
        rows = self.history()
        self.assertEqual(len(rows), n, "every restart is recorded")
        pending = [r for r in rows if r.get("delivery") != "delivered"]
        self.assertGreater(len(pending), 0)
        self.assertIn("not sent", k.text())  # what is left is said, not silently dropped

        self.slack.fault(type="clear")
        k2 = self.start()
        k2.wait_log("undelivered notification")
        self.slack.wait_messages(n, timeout=60)
        h.wait_until(lambda: all(r.get("delivery") == "delivered" for r in self.history()), 30,
                     what="every outbox row delivered")
        time.sleep(2)  # a window for duplicates; asserted below
        pods = []
        for m in self.slack.messages():
            pods.extend(set(re.findall(r"job-\d\d", json.dumps(m.get("body")))))
        self.assertEqual(sorted(set(pods)), ["job-%02d" % i for i in range(n)])
        # The message in flight when the drain budget ran out was allowed to finish (Slack
        # answers within 1.5 s here), so nothing is sent twice.
        self.assertEqual(len(pods), n, sorted(pods))
        self.assertEqual(k2.stop(), 0)


if __name__ == "__main__":
    h.main()
