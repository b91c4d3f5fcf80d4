"""One destination's rate limit never delays another's messages (issue 13, acceptance).

Two routes send to two webhooks of the fake Slack. The fake answers every POST to one of
them with 429 and `Retry-After: 30`. A restart routed to the other webhook must be posted
within one second of the time the same kind of restart took without any 429; the held
message must still be pending (not posted, not given up) while its Retry-After runs, stay in
the outbox when krc shuts down in the middle of that wait, and be posted once at the next
start.

    python3 tests/integration/test_route_isolation.py --krc build/krc
"""

import re
import sqlite3
import tempfile
import time

import krc_harness as h
from test_alerts import AlertTestBase


class RouteIsolation(AlertTestBase):
    def post_time(self, ns, pod, webhook_path, n):
        """Seconds from the restart of ns/pod until the fake accepted the n-th message of
        `webhook_path`."""
        t0 = time.monotonic()
        self.kube.restart(ns, pod, "app", exit_code=1, logs="crash %s\n" % pod)
        self.slack.wait_messages(n, timeout=10 * h.SLOWDOWN, webhook=webhook_path)
        return time.monotonic() - t0

    def test_429_on_one_route_does_not_delay_another(self):
        slow = self.webhook("slow")
        fast = self.webhook("fast")
        db_dir = tempfile.mkdtemp(prefix="krc-it-iso-")
        self.tmpdirs.append(db_dir)
        cfg = self.config_file(
            "routes:\n"
            "  - namespace: slow\n    webhookUrl: %s\n"
            "  - namespace: fast\n    webhookUrl: %s\n" % (slow, fast))
        for ns, pod in (("fast", "base-0"), ("fast", "iso-0"), ("slow", "held-0")):
            self.kube.create_pod(ns, pod)
        self.start_krc({"KRC_DB": db_dir + "/krc.db"}, ["--config", cfg])
        p_fast = self.slack.webhook_path("fast")
        p_slow = self.slack.webhook_path("slow")

        # The time a restart takes to reach Slack when nothing is rate limited.
        baseline = self.post_time("fast", "base-0", p_fast, 1)
        # The fast webhook's own pacing (one message per second) is not what is measured:
        # let its window pass.
        time.sleep(1.2)

        # Every POST to the slow webhook is answered 429 with Retry-After: 30.
        self.slack.fault(type="respond", status=429, retry_after=30, count=-1,
                         path_regex="^" + re.escape(p_slow) + "$")
        self.kube.restart("slow", "held-0", "app", exit_code=1, logs="crash held-0\n")
        self.wait_log("rate limited (429), retrying in 30.0s")
        t_held = time.monotonic()

        # While the slow route waits out its Retry-After, the fast one is not held.
        isolated = self.post_time("fast", "iso-0", p_fast, 2)
        # one second, as the issue asks (scaled only under a slow wrapper such as valgrind)
        self.assertLess(isolated - baseline, 1.0 * h.SLOWDOWN,
                        "a 429 on one route delayed another route's message by %.2fs "
                        "(baseline %.2fs, with the 429 %.2fs)"
                        % (isolated - baseline, baseline, isolated))

        # The held message is still pending about 5 s into its 30 s wait: not posted, not
        # given up, and not retried before its Retry-After.
        left = 5.0 - (time.monotonic() - t_held)
        if left > 0:
            time.sleep(left)  # asserted below: nothing may happen in this window
        self.assertEqual(self.slack.messages(webhook=p_slow), [])
        self.assertEqual(len(self.krc.logs(contains="rate limited (429)")), 1,
                         "the held message was retried before its Retry-After")
        self.assertEqual(self.krc.logs(contains="alert for slow/held-0"), [])
        self.assertEqual(len(self.slack.messages(webhook=p_fast)), 2)

        # Shutting down in the middle of the wait keeps it pending in the outbox (posted at
        # the next start); the fast route's messages are delivered.
        self.assertEqual(self.krc.stop(timeout=40), 0, self.crash_report())
        with sqlite3.connect(db_dir + "/krc.db") as db:
            rows = sorted(db.execute("SELECT destination, state FROM outbox WHERE destination "
                                     "!= 'dest:kubernetes-event'"))
        self.assertEqual(rows, [("route:0", "pending"), ("route:1", "delivered"),
                                ("route:1", "delivered")])
        first = self.krc.text()
        for secret in self.secrets:
            self.assertNotIn(secret, first, "a secret appeared in krc's output")

        # At the next start, without the 429, the held message is posted from the outbox,
        # once, and nothing posted before is posted again.
        self.slack.clear_faults()
        self.start_krc({"KRC_DB": db_dir + "/krc.db"}, ["--config", cfg])
        self.slack.wait_messages(1, timeout=20 * h.SLOWDOWN, webhook=p_slow)
        self.wait_log("from before the restart of krc posted")
        time.sleep(1.5)  # a window for duplicates; asserted below
        self.assertEqual(len(self.slack.messages(webhook=p_slow)), 1)
        self.assertEqual(len(self.slack.messages(webhook=p_fast)), 2)


if __name__ == "__main__":
    h.main()
