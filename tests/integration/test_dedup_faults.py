"""Issue 12, the de-duplication and store/watch faults, with the real binary against
the fake API server and the fake Slack:

* scenario 4: Slack accepted a message but marking it delivered failed (another
  connection held the database's write lock for 8 s): it must not be posted again,
  neither by the running krc nor after a restart (also after kill -9);
* scenario 5: a restart is identified by its termination (finishedAt, containerID),
  not by its restartCount: a count that goes down and climbs back, or a newer
  termination at the same count, is a new crash; a replay is not;
* a malformed watch line right after an API outage does not cost the outage's backoff (it
  is skipped, and the stream goes on);
* an expired continue token falls back to one full list instead of paging from
  page 1 forever."""

import json
import os
import sqlite3
import tempfile
import time
import unittest
from datetime import datetime, timedelta, timezone

import krc_harness as h

FAST = ["--watch-idle-timeout", "3s"]


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


class DedupFaultsTest(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.db = os.path.join(self.tmp.name, "krc.db")
        self.url = self.slack.webhook_url("alerts")
        self.procs = []
        self.lock = None

    def tearDown(self):
        if self.lock is not None:
            self.lock.close()
        failed = self._outcome_failed()
        for k in self.procs:
            if failed:
                print("---- krc log tail ----\n" + k.tail(60))
            k.kill()

    def _outcome_failed(self):
        result = getattr(self._outcome, "result", None)
        errors = getattr(result, "errors", []) + getattr(result, "failures", [])
        return any(t is self for t, _ in errors)

    def start(self, args=(), extra_env=None, synced=True):
        env = {"SLACK_WEBHOOK_URL": self.url, "KRC_DB": self.db, "CLUSTER_NAME": "test",
               "MUTE_SECONDS": "0"}
        env.update(extra_env or {})
        k = h.Krc(self.kube.kubeconfig, list(FAST) + list(args), env)
        self.procs.append(k)
        if synced:
            k.wait_synced()
        return k

    def alerts_for(self, pod):
        return [m for m in self.slack.messages() if pod in json.dumps(m.get("body"))]

    def history(self):
        return h.history(self.db)

    def outbox_rows(self):
        c = sqlite3.connect(self.db, timeout=10)
        try:
            # the Slack message's rows (a restart's Kubernetes Event has a row of its own)
            return c.execute("SELECT id, state FROM outbox WHERE destination != "
                             "'dest:kubernetes-event' ORDER BY id").fetchall()
        finally:
            c.close()

    # ---- scenario 4: "mark delivered" fails ------------------------------------------

    def hold_write_lock_across_delivery(self, pod):
        """Make Slack answer the first POST 1.5 s late; as soon as the restart and its
        pending message are committed, take the database's write lock (BEGIN EXCLUSIVE from
        another connection) and keep it (at least 8 s, and until krc gave up); krc's update
        after Slack's 200 then waits out its 5 s busy timeout and fails. Returns krc and the
        time the lock was taken."""
        self.kube.create_pod("shop", pod)
        self.slack.fault(type="hang", seconds=1.5, count=1)
        k = self.start()
        self.kube.restart("shop", pod, "app", exit_code=137, reason="OOMKilled", logs="a\n")
        h.wait_until(lambda: os.path.exists(self.db) and len(self.outbox_rows()) == 1, 20,
                     interval=0.01, what="the pending notification")
        self.lock = sqlite3.connect(self.db, timeout=10, isolation_level=None)
        self.lock.execute("BEGIN EXCLUSIVE")
        return k, time.monotonic()

    @staticmethod
    def wait_mark_failed(k, pod):
        """krc's line saying the alert (not the pod's Kubernetes Event, which has an outbox
        row of its own) could not be marked delivered."""
        h.wait_until(lambda: [x for x in k.logs(contains="could not be marked delivered")
                              if x["msg"].startswith("alert for shop/%s " % pod)],
                     30 * h.SLOWDOWN, what="the alert's failed delivered mark")

    def release_lock(self, taken, seconds=8.0):
        """Release the lock once it was held `seconds` (the caller waited for krc's
        failure first, however late the POST came on a loaded machine)."""
        time.sleep(max(0.0, taken + seconds - time.monotonic()))
        self.lock.execute("ROLLBACK")
        self.lock.close()
        self.lock = None

    def test_scenario4_mark_delivered_fails_then_kill9_not_reposted(self):
        k, taken = self.hold_write_lock_across_delivery("web-4a")
        self.wait_mark_failed(k, "web-4a")
        self.assertEqual(len(self.alerts_for("web-4a")), 1)
        k.kill()  # kill -9 before any retry could reach the database
        self.release_lock(taken)
        self.assertEqual([s for _, s in self.outbox_rows()], ["pending"])
        k2 = self.start()
        k2.wait_log("already recorded", timeout=20)  # the start-up window saw it again
        time.sleep(3)  # a window for a duplicate to show up; asserted below
        self.assertEqual(len(self.alerts_for("web-4a")), 1,
                         "posted again after the restart:\n" + k2.tail(30))
        self.assertEqual([s for _, s in self.outbox_rows()], ["delivered"])
        self.assertEqual(k2.stop(), 0)

    def test_scenario4_mark_delivered_retried_while_running(self):
        k, taken = self.hold_write_lock_across_delivery("web-4b")
        self.wait_mark_failed(k, "web-4b")
        self.release_lock(taken)
        h.wait_until(lambda: [s for _, s in self.outbox_rows()] == ["delivered"], 20,
                     what="the row marked delivered once the lock is gone")
        self.assertEqual(k.stop(), 0)
        k2 = self.start()
        k2.wait_log("already recorded", timeout=20)
        time.sleep(3)  # a window for a duplicate to show up; asserted below
        self.assertEqual(len(self.alerts_for("web-4b")), 1)
        self.assertFalse(k2.logs(contains="resuming"), k2.tail(20))
        self.assertEqual(k2.stop(), 0)

    # ---- scenario 5: the identity of a restart -------------------------------------------

    def test_scenario5_termination_identity(self):
        pod = "web-5"
        self.kube.create_pod("shop", pod)
        k = self.start()
        self.kube.restart("shop", pod, "app", exit_code=1, logs="one\n")   # count 1
        h.wait_until(lambda: len(self.alerts_for(pod)) == 1, 20, what="first alert")

        # the kubelet's count is reset (node reboot): no new termination, no alert
        self.kube.set_container_status("shop", pod, "app", {"restartCount": 0})
        time.sleep(1.5)
        # it crashes again and the count climbs back to 1: a new crash
        self.kube.restart("shop", pod, "app", exit_code=2, logs="two\n")   # count 1 again
        h.wait_until(lambda: len(self.alerts_for(pod)) == 2, 20,
                     what="the crash after the count went down:\n" + k.tail(20))

        # same count, a newer termination (e.g. a status rewrite): a new crash
        now = datetime.now(timezone.utc)
        term = {"exitCode": 3, "reason": "Error", "startedAt": iso(now - timedelta(seconds=5)),
                "finishedAt": iso(now + timedelta(seconds=2)),
                "containerID": "containerd://5f5f5f5f5f5f5f5f5f5f5f5f"}
        self.kube.set_container_status("shop", pod, "app", {"lastState": {"terminated": term}})
        h.wait_until(lambda: len(self.alerts_for(pod)) == 3, 20,
                     what="the newer termination at the same count:\n" + k.tail(20))

        # a replay of that status (an unrelated change): not a new crash
        self.kube.update_pod("shop", pod, {"metadata": {"labels": {"touched": "yes"}}})
        self.kube.set_container_status("shop", pod, "app", {"lastState": {"terminated": term}})
        time.sleep(3)  # a window for a duplicate to show up; asserted below
        self.assertEqual(len(self.alerts_for(pod)), 3)
        self.assertEqual(k.stop(), 0)

        # a new krc relists and sees the last termination again (start-up window): replay
        k2 = self.start()
        k2.wait_log("already recorded", timeout=20)
        time.sleep(3)  # a window for a duplicate to show up; asserted below
        self.assertEqual(len(self.alerts_for(pod)), 3, k2.tail(30))
        self.assertEqual(len(self.history()), 3)
        self.assertEqual(k2.stop(), 0)

    # ---- the watch: a bad line after an outage ---------------------------------------------

    def test_malformed_line_after_outage_reported_within_10s(self):
        self.kube.create_pod("shop", "web-w")
        k = self.start()
        # an outage of 12 s: the watch is cut and reconnects fail, the backoff grows
        self.kube.fault(type="refuse_connections", seconds=12)
        self.kube.fault(type="drop_watches")
        k.wait_log("retrying in", timeout=10, count=3)
        self.kube.clear_requests()
        # the API server is back: as soon as the watch is open again, a malformed line
        # comes before its next event, which is a restart
        # the pod watch's own: the change-tracking watches reconnect on their own backoff
        h.wait_until(lambda: any(r["path"] == "/api/v1/pods" and r["query"].get("watch")
                                 and r["status"] == 200 for r in self.kube.requests()),
                     60, interval=0.01, what="the pod watch reconnected after the outage")
        self.kube.fault(type="malformed_line", text="{\"type\":\"MODIFIED\",\"object\":")
        t0 = time.monotonic()
        self.kube.restart("shop", "web-w", "app", exit_code=137, reason="OOMKilled")
        k.wait_restarts(1, timeout=40)
        elapsed = time.monotonic() - t0
        self.assertTrue(k.logs(contains="undecodable"), k.tail(30))
        self.assertLess(elapsed, 10.0, "restart reported %.1fs after the malformed line:\n%s"
                        % (elapsed, k.tail(30)))
        self.assertEqual(k.stop(), 0)

    # ---- the pager: an expired continue token ----------------------------------------------

    def test_expired_continue_token_falls_back_to_one_full_list(self):
        self.kube.config(streaming_list=False)
        self.kube.create_pods([{"namespace": "shop", "name": "p-%02d" % i} for i in range(25)])
        # every continuation is refused as expired, as when the snapshot is compacted
        # faster than the pages can be read on a very large cluster
        self.kube.fault(type="http_error", status=410, reason="Expired", count=100000,
                        query_regex="continue=", message="The provided continue parameter is "
                        "too old to display a consistent list result.")
        k = self.start(extra_env={"KRC_LIST_PAGE_SIZE": "10"}, synced=False)
        k.wait_synced(timeout=30)
        self.assertTrue(k.logs(contains="continue token expired"), k.tail(20))
        lists = [r for r in self.kube.requests()
                 if r["path"] == "/api/v1/pods" and not r["query"].get("watch")]
        full = [r for r in lists if "limit" not in r["query"] and "continue" not in r["query"]]
        self.assertEqual(len(full), 1, lists)
        self.assertEqual(full[0]["status"], 200)
        line = k.wait_log("pod sync complete")[0]["msg"]
        self.assertIn("25 pods in 1 pages", line)
        # the watch goes on from the full list's resourceVersion
        self.kube.restart("shop", "p-07", "app", exit_code=1)
        k.wait_restarts(1)
        self.assertEqual(k.stop(), 0)


if __name__ == "__main__":
    h.main()
