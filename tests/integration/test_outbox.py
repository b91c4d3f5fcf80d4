"""The durable history and the crash-safe outbox, with the real binary: kill -9 at the awkward
moments, restart, and count what the fake Slack received; a corrupt database does not stop
alerting; `krc history` shows what was recorded."""

import json
import os
import subprocess
import tempfile
import time
import unittest

import krc_harness as h


FAST = ["--watch-idle-timeout", "3s"]


class OutboxTest(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.tmp = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.tmp.name, "krc.db")
        self.url = self.slack.webhook_url("alerts")
        self.procs = []

    def tearDown(self):
        for k in self.procs:
            k.kill()
        self.tmp.cleanup()

    def start(self, extra_env=None):
        # Slack is the only destination here, so the outbox counts below are Slack's alone:
        # whether the Kubernetes Event rows were delivered before a kill -9 is a race these
        # tests do not ask about (test_destinations covers the Event sink's outbox).
        env = {"SLACK_WEBHOOK_URL": self.url, "KRC_DB": self.db, "CLUSTER_NAME": "test",
               "MUTE_SECONDS": "0", "KRC_KUBERNETES_EVENTS": "false"}
        env.update(extra_env or {})
        k = h.Krc(self.kube.kubeconfig, FAST, env)
        self.procs.append(k)
        k.wait_synced()
        return k

    def history(self, *args):
        return h.history(self.db, *args)

    def wait_post_in_flight(self):
        """Until the fake Slack holds krc's POST (its one hang fault taken): a fixed sleep
        here would, on a slow machine, kill krc before the POST left."""
        h.wait_until(lambda: self.slack.stats()["faults_applied"] >= 1, 20,
                     what="krc's POST hung by the fake Slack")

    def alerts_for(self, pod):
        return [m for m in self.slack.messages() if pod in json.dumps(m.get("body"))]

    def test_kill9_while_slack_fails_then_recovers_delivers_exactly_once(self):
        self.kube.create_pod("shop", "web-1")
        self.kube.create_pod("shop", "web-2")
        self.slack.fault(type="down", status=500)
        k = self.start()
        self.kube.restart("shop", "web-1", "app", exit_code=137, reason="OOMKilled", logs="a\n")
        self.kube.restart("shop", "web-2", "app", exit_code=1, logs="b\n")
        k.wait_log("retrying in", timeout=30)
        h.wait_until(lambda: len(self.history()) == 2, 20, what="two recorded restarts")
        k.kill()  # kill -9: both alerts are recorded and pending
        pending = [r for r in self.history() if r.get("delivery") != "delivered"]
        self.assertEqual(len(pending), 2, self.history())
        self.slack.fault(type="clear")
        k2 = self.start()
        h.wait_until(lambda: len(self.slack.messages()) >= 2, 30, what="two messages")
        k2.wait_log("resuming 2 undelivered")
        time.sleep(3)  # window for a duplicate to show up; asserted below
        self.assertEqual(len(self.alerts_for("web-1")), 1)
        self.assertEqual(len(self.alerts_for("web-2")), 1)
        self.assertTrue(k2.logs(contains="already recorded"),
                        "the start-up window re-detects both restarts; they must be recognised")
        self.assertEqual(k2.stop(), 0)
        self.assertTrue(all(r["delivery"] == "delivered" for r in self.history()),
                        self.history())

    def test_kill9_between_write_and_send_loses_nothing(self):
        self.kube.create_pod("shop", "api-1")
        # Slack takes the request but answers only after 4 s: krc dies before that answer
        # arrives... but Slack did not accept anything yet when krc is killed below, since
        # the fake records a message only once it answers (it answers 500 here).
        self.slack.fault(type="hang", seconds=4, status=500, count=1)
        k = self.start()
        self.kube.restart("shop", "api-1", "app", exit_code=1, logs="x\n")
        h.wait_until(lambda: len(self.history()) == 1, 20, what="the recorded restart")
        self.wait_post_in_flight()  # the fake hangs it 4 s, then answers 500
        k.kill()
        time.sleep(4.5)  # let the hung request end (with its 500) before the restart
        self.assertEqual(self.slack.messages(), [])
        k2 = self.start()
        h.wait_until(lambda: len(self.slack.messages()) >= 1, 30, what="the resumed alert")
        time.sleep(2)
        self.assertEqual(len(self.alerts_for("api-1")), 1, "no loss, no duplicate")
        self.assertEqual(k2.stop(), 0)

    def test_kill9_between_send_and_mark_gives_at_most_one_duplicate(self):
        """Slack accepts the message but krc dies before marking it delivered: at the next
        start it is sent again. This is the one case where a duplicate is expected (the
        outbox cannot know whether Slack got it), and exactly one."""
        self.kube.create_pod("shop", "dup-1")
        self.slack.fault(type="hang", seconds=4, count=1)  # then answers 200 "ok"
        k = self.start()
        self.kube.restart("shop", "dup-1", "app", exit_code=1, logs="x\n")
        k.wait_log("restart diagnosed")
        self.wait_post_in_flight()  # Slack has not answered (the fake hangs it 4 s)
        self.assertEqual(self.slack.messages(), [])
        k.kill()
        h.wait_until(lambda: len(self.slack.messages()) == 1, 10,
                     what="Slack accepting the hung message")
        k2 = self.start()
        h.wait_until(lambda: len(self.slack.messages()) >= 2, 30, what="the resent alert")
        time.sleep(2)
        self.assertEqual(len(self.alerts_for("dup-1")), 2, "exactly one duplicate")
        self.assertEqual(k2.stop(), 0)

    def test_restart_of_krc_does_not_realert(self):
        self.kube.create_pod("shop", "once-1")
        k = self.start()
        self.kube.restart("shop", "once-1", "app", exit_code=2, logs="x\n")
        h.wait_until(lambda: len(self.slack.messages()) == 1, 20, what="the alert")
        self.assertEqual(k.stop(), 0)
        k2 = self.start()
        k2.wait_log("already recorded")
        time.sleep(2)
        self.assertEqual(len(self.slack.messages()), 1)
        self.assertEqual(k2.stop(), 0)

    def test_corrupt_database_keeps_alerting(self):
        with open(self.db, "wb") as f:
            f.write(b"this is not a database" * 100)
        self.kube.create_pod("shop", "c-1")
        k = self.start()
        line = k.wait_log("history database unavailable")[0]["msg"]
        self.assertIn(self.db, line)
        self.kube.restart("shop", "c-1", "app", exit_code=1, logs="x\n")
        h.wait_until(lambda: len(self.slack.messages()) == 1, 20, what="the alert")
        self.assertEqual(k.stop(), 0)
        p = subprocess.run([h.krc_binary(), "history", "--db", self.db], capture_output=True,
                           text=True, timeout=30)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(self.db, p.stderr)

    def test_history_lists_and_shows_the_recorded_report(self):
        self.kube.create_pod("ml", "trainer-0")
        k = self.start()
        self.kube.restart("ml", "trainer-0", "app", exit_code=137, reason="OOMKilled",
                          logs="loading\nallocating 40GiB\n")
        h.wait_until(lambda: len(self.slack.messages()) == 1, 20, what="the alert")
        self.assertEqual(k.stop(), 0)
        rows = self.history("--namespace", "ml", "--since", "1h")
        self.assertEqual(len(rows), 1)
        row = rows[0]
        self.assertEqual(row["pod"], "trainer-0")
        self.assertEqual(row["cause"], "oom_killed")
        self.assertEqual(self.history("--cause", "segfault"), [])
        p = subprocess.run([h.krc_binary(), "history", "show", str(row["id"]), "--db", self.db],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("trainer-0", p.stdout)
        self.assertIn("allocating 40GiB", p.stdout)
        # the daemon stored the diagnosis' confidence (schema 2), the same the alert showed
        self.assertIn(row["confidence"], ("low", "medium", "high"))
        self.assertIn("Cause:      oom_killed (confidence: %s)" % row["confidence"], p.stdout)
        alert = json.dumps(self.slack.messages()[0])
        self.assertIn("confidence: %s" % row["confidence"], alert)
        p = subprocess.run([h.krc_binary(), "history", "show", str(row["id"]), "--db", self.db,
                            "--format", "json"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        diag = json.loads(p.stdout)["report"]["diagnosis"]
        self.assertEqual(diag["confidence"], row["confidence"])
        for key in ("commands", "unchecked"):
            self.assertIsInstance(diag[key], list)
        self.assertIn("next_step", diag)


if __name__ == "__main__":
    h.main()
