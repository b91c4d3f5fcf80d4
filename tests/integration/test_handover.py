"""Exactly once across a leader hand-over (issue 12, scenarios 1, 2, 3 and 6), with the real
binary: krc replicas elect a leader on a Lease in the fake API server, the test plays the other
holders of that Lease (it writes and renews it), and the fake Slack counts the messages of each
restart. Every test asserts that each real restart is posted exactly once.

1. the start-up window counts back from the moment a replica starts watching (takes over), not
   from the start of its process;
2. the predecessor's hand-over list is read at the take-over that succeeds, not before a PUT
   that loses a 409 race;
3. a leader that loses the Lease (to another holder, or by the renew deadline) starts no further
   POST; the next leader posts what it had not delivered, and the lost leader's outbox rows are
   never sent again;
6. Lease expiry is timed with the observed record's leaseDurationSeconds.
"""

import json
import os
import re
import sqlite3
import tempfile
import time
import unittest
from datetime import datetime, timezone

import krc_harness as h
from admin import FakeKubeError


LEASE_NS, LEASE_NAME = "krc", "krc"
ANNOTATION = "krc.io/handled-restarts"


def elect(duration=3, deadline=2, retry=1):
    return ["--leader-elect", "--lease-namespace", LEASE_NS, "--lease-name", LEASE_NAME,
            "--lease-duration", "%ds" % duration, "--lease-renew-deadline", "%ds" % deadline,
            "--lease-retry-period", "%ds" % retry, "--watch-idle-timeout", "3s"]


def micro_now():
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class HandoverTest(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.procs = []

    def tearDown(self):
        for k in self.procs:
            k.kill()

    # ---- helpers ----

    def start(self, name, args, webhook="alerts", db=None):
        env = {"SLACK_WEBHOOK_URL": self.slack.webhook_url(webhook), "CLUSTER_NAME": "ha",
               "MUTE_SECONDS": "0", "KRC_STORM_THRESHOLD": "0", "POD_NAME": name}
        if db is not None:
            env["KRC_DB"] = db
        k = h.Krc(self.kube.kubeconfig, list(args), env)
        k.port = k.http_port()
        self.procs.append(k)
        return k

    def lease(self):
        try:
            return self.kube.get_lease(LEASE_NS, LEASE_NAME)
        except FakeKubeError:
            return None

    def holder(self):
        return ((self.lease() or {}).get("spec") or {}).get("holderIdentity")

    def put_other_holder(self, holder, duration, handled=None):
        """The Lease as another holder writes it when it (re)new(s) it; handled: the
        pods whose restart #1 that holder lists as handled (None: keep the annotation)."""
        lease = self.lease() or {"metadata": {"name": LEASE_NAME, "namespace": LEASE_NS},
                                 "spec": {"acquireTime": micro_now(), "leaseTransitions": 0}}
        lease["spec"]["holderIdentity"] = holder
        lease["spec"]["leaseDurationSeconds"] = duration
        lease["spec"]["renewTime"] = micro_now()
        if handled is not None:
            lines = "".join(self.handled_entry(pod) for pod in handled)
            lease["metadata"].setdefault("annotations", {})[ANNOTATION] = lines
        self.kube.put_lease(lease)

    def handled_entry(self, pod, count=1):
        """One line of the hand-over list, as a krc leader writes it: the restart's
        identity "t<finishedAt>[:<16 id chars>]#<count>" (src/kube/leader.c); before the pod
        has a termination, the encoding of an older krc (the bare count)."""
        p = self.kube.get_pod("shop", pod)
        uid = p["metadata"]["uid"]
        term = None
        for cs in (p.get("status") or {}).get("containerStatuses") or []:
            if cs.get("name") == "app":
                term = (cs.get("lastState") or {}).get("terminated")
        if not term or not term.get("finishedAt"):
            return "%d %s app %d\n" % (int(time.time()), uid, count)
        fin = int(datetime.strptime(term["finishedAt"], "%Y-%m-%dT%H:%M:%SZ")
                  .replace(tzinfo=timezone.utc).timestamp())
        cid = re.sub(r"[^0-9A-Za-z]", "", (term.get("containerID") or "").split("://")[-1])[:16]
        return "%d %s app t%d%s#%d\n" % (int(time.time()), uid, fin, ":" + cid if cid else "",
                                         count)

    def posted(self, webhook=None):
        """The pod named by each message the fake Slack accepted (one pod per alert)."""
        out = []
        filters = {"webhook": self.slack.webhook_path(webhook)} if webhook else {}
        for m in self.slack.messages(**filters):
            pods = set(re.findall(r"app-\d+", json.dumps(m.get("body"))))
            self.assertEqual(len(pods), 1, m)
            out.extend(pods)
        return sorted(out)

    def wait_posted(self, pod, timeout=30):
        h.wait_until(lambda: pod in self.posted(), timeout * h.SLOWDOWN,
                     what="a message for %s (have %s)" % (pod, self.posted()))

    # ---- scenario 1 ----

    def test_startup_window_counts_from_the_takeover_not_from_process_start(self):
        for pod in ("app-1", "app-2"):
            self.kube.create_pod("shop", pod)
        self.put_other_holder("other", 3, handled=[])
        started = time.time()
        b = self.start("krc-b", elect() + ["--startup-window", "5s"])
        b.wait_log("standby; lease krc/krc is held by \"other\"")
        # handled by "other" long enough ago that its list no longer keeps it: a restart after
        # krc-b's process started, more than the 5 s window before krc-b takes over
        finished = int(started) + 1
        self.kube.restart("shop", "app-1", "app", exit_code=1, finished_at=rfc3339(finished),
                          logs="old\n")
        while time.time() < finished + 5 + 3:  # "other" keeps renewing
            self.put_other_holder("other", 3)
            time.sleep(0.5)
        self.assertFalse(b.logs(contains="became the leader"), b.tail())
        b.wait_log("became the leader", timeout=3 + 1 + 10)
        self.assertGreater(time.time() - finished, 5)
        b.wait_synced()
        # a restart after the take-over is alerted (and queued behind app-1's, were there one)
        self.kube.restart("shop", "app-2", "app", exit_code=1, logs="new\n")
        self.wait_posted("app-2")
        self.assertEqual(self.posted(), ["app-2"], b.tail(60))
        self.assertFalse([l for l in b.restarts() if l.get("pod") == "app-1"], b.tail(60))
        self.assertEqual(b.stop(), 0)

    # ---- scenario 2 ----

    def test_predecessor_list_is_read_at_the_takeover_that_succeeds(self):
        for pod in ("app-1", "app-2", "app-3"):
            self.kube.create_pod("shop", pod)
        for pod in ("app-1", "app-2"):
            self.kube.restart("shop", pod, "app", exit_code=1, logs="x\n")
        # "old-1" handled app-1 and stopped renewing
        self.put_other_holder("old-1", 6, handled=["app-1"])
        # krc-b's first take-over PUT loses a race (409 Conflict) ...
        self.kube.fault(type="http_error", status=409, count=1, method="PUT",
                        path_regex="/leases/krc$", reason="Conflict",
                        message='Operation cannot be fulfilled on leases.coordination.k8s.io '
                                '"krc": the object has been modified; please apply your '
                                'changes to the latest version and try again')
        b = self.start("krc-b", elect(6, 4, 2))

        def lost_put():
            return [r for r in self.kube.requests()
                    if r["method"] == "PUT" and r["path"].endswith("/leases/krc")
                    and r["status"] == 409]
        h.wait_until(lost_put, 20, interval=0.02, what="krc-b's take-over PUT answered 409")
        # ... to "old-2", which took the Lease over, handled app-2 too, and then stopped
        self.put_other_holder("old-2", 6, handled=["app-1", "app-2"])
        self.assertFalse(b.logs(contains="became the leader"), b.tail())
        b.wait_log("became the leader", timeout=6 + 2 + 10)
        self.assertEqual(self.holder(), "krc-b")
        b.wait_synced()
        self.kube.restart("shop", "app-3", "app", exit_code=1, logs="new\n")
        self.wait_posted("app-3")
        # app-1 and app-2 were re-detected by the relist; app-3's message is queued behind
        self.assertEqual(len(b.logs(contains="already handled by the previous leader")), 2,
                         b.tail(60))
        self.assertEqual(self.posted(), ["app-3"], b.tail(60))
        self.assertEqual(b.stop(), 0)

    # ---- scenario 3 ----

    def test_a_leader_that_loses_the_lease_posts_nothing_more(self):
        for pod in ("app-1", "app-2", "app-3"):
            self.kube.create_pod("shop", pod)
        db_a = os.path.join(tempfile.mkdtemp(prefix="krc-test-db-"), "krc.db")
        a = self.start("krc-a", elect(), webhook="alerts-a", db=db_a)
        a.wait_log("became the leader")
        a.wait_synced()
        b = self.start("krc-b", elect(), webhook="alerts-b")
        b.wait_log("standby; lease krc/krc is held by \"krc-a\"")
        # Slack is slow for krc-a: its first POST hangs, then fails (500)
        self.slack.fault(type="hang", seconds=8, status=500, count=1,
                         path_regex=re.escape(self.slack.webhook_path("alerts-a")))
        for pod in ("app-1", "app-2"):
            self.kube.restart("shop", pod, "app", exit_code=1, logs="boom\n")
        a.wait_diagnosed(2)
        # krc-a cannot renew any more: the Lease went to krc-b (with the list krc-a last wrote)
        self.put_other_holder("krc-b", 3)
        a.wait_log("lost the lease krc/krc", timeout=10)
        self.assertEqual(a.wait_exit(30), 1)
        b.wait_log("became the leader", timeout=10)
        b.wait_synced()
        self.wait_posted("app-1")
        self.wait_posted("app-2")
        # krc-a started no POST after losing the Lease: the one in flight failed, nothing else
        self.assertEqual(self.posted("alerts-a"), [], a.tail(60))
        self.assertEqual(self.posted("alerts-b"), ["app-1", "app-2"])

        # krc-a comes back (its outbox holds both messages, pending): as a standby it posts
        # nothing; when it leads again, what krc-b posted is not sent again
        a2 = self.start("krc-a", elect(), webhook="alerts-a", db=db_a)
        a2.wait_log("standby; lease krc/krc is held by \"krc-b\"")
        self.assertEqual(b.stop(), 0)  # releases the Lease
        a2.wait_log("became the leader", timeout=10)
        a2.wait_synced()
        self.kube.restart("shop", "app-3", "app", exit_code=1, logs="later\n")
        self.wait_posted("app-3")
        self.assertEqual(self.posted(), ["app-1", "app-2", "app-3"], a2.tail(60))
        self.assertEqual(len(a2.logs(contains="posted by the previous leader; not sent again")),
                         1, a2.tail(60))
        self.assertEqual(a2.stop(), 0)
        # krc-a's rows of what krc-b posted are stored as superseded (not failed: nothing
        # failed, another leader delivered them); its own app-3 as delivered
        con = sqlite3.connect(db_a)
        try:
            states = dict(con.execute(
                "SELECT r.pod, o.state FROM outbox o JOIN restarts r ON r.id = o.restart_id "
                "WHERE o.kind = 'alert' AND o.destination != 'dest:kubernetes-event'").fetchall())
            failed = con.execute("SELECT count(*) FROM outbox WHERE state = 'failed'").fetchone()
        finally:
            con.close()
        self.assertEqual(states, {"app-1": "superseded", "app-2": "superseded",
                                  "app-3": "delivered"})
        self.assertEqual(failed, (0,))

    def test_a_leader_that_cannot_renew_posts_nothing_more(self):
        """Scenario 3 by the renew deadline: the API server stops answering Lease requests."""
        for pod in ("app-1", "app-2"):
            self.kube.create_pod("shop", pod)
        a = self.start("krc-a", elect(), webhook="alerts-a")
        a.wait_log("became the leader")
        a.wait_synced()
        b = self.start("krc-b", elect(), webhook="alerts-b")
        b.wait_log("standby; lease krc/krc is held by \"krc-a\"")
        self.slack.fault(type="hang", seconds=8, status=500, count=1,
                         path_regex=re.escape(self.slack.webhook_path("alerts-a")))
        for pod in ("app-1", "app-2"):
            self.kube.restart("shop", pod, "app", exit_code=1, logs="boom\n")
        a.wait_diagnosed(2)
        self.kube.fault(type="http_error", status=503, count=1000, path_regex="/leases")
        a.wait_log("renew deadline", timeout=10)
        self.assertEqual(a.wait_exit(30), 1)
        self.kube.clear_faults()
        b.wait_log("became the leader", timeout=3 + 1 + 10)
        b.wait_synced()
        self.wait_posted("app-1")
        self.wait_posted("app-2")
        self.assertEqual(self.posted("alerts-a"), [], a.tail(60))
        self.assertEqual(self.posted(), ["app-1", "app-2"])
        self.assertEqual(b.stop(), 0)

    # ---- scenario 6 ----

    def test_expiry_uses_the_observed_lease_duration(self):
        self.kube.create_pod("shop", "app-1")
        self.put_other_holder("other", 60, handled=[])
        k = self.start("krc-a", elect(6, 4, 1))
        k.wait_log("standby; lease krc/krc is held by \"other\"")
        # "other" renews every 8 s, well within its 60 s: krc (6 s) must not take the Lease
        until = time.monotonic() + 20
        while time.monotonic() < until:
            self.put_other_holder("other", 60)
            time.sleep(min(8, max(0, until - time.monotonic())))
        self.assertFalse(k.logs(contains="became the leader"), k.tail())
        self.assertEqual(self.holder(), "other")
        status, body = h.http_get(k.port, "/readyz")
        self.assertEqual((status, "held by other" in body), (503, True), body)
        # its last renewal says 2 s: that is the duration krc waits for
        self.put_other_holder("other", 2)
        stopped = time.monotonic()
        k.wait_log("became the leader", timeout=2 + 1 + 10)
        self.assertLess(time.monotonic() - stopped, 6, "waited its own 6 s, not the Lease's 2 s")
        k.wait_synced()
        self.kube.restart("shop", "app-1", "app", exit_code=1, logs="x\n")
        self.wait_posted("app-1")
        self.assertEqual(self.posted(), ["app-1"])
        self.assertEqual(k.stop(), 0)


if __name__ == "__main__":
    h.main()
