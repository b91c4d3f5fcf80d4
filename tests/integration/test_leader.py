"""High availability with the real binary: two replicas elect a leader on a
coordination.k8s.io/v1 Lease in the fake API server. Only the leader watches and alerts; kill -9
of the leader hands over within the lease duration and every restart is alerted exactly once;
SIGTERM releases the Lease; a leader that finds another holder stops; readiness shows the role."""

import json
import re
import time
import unittest

import krc_harness as h
from admin import FakeKubeError


LEASE_NS, LEASE_NAME = "krc", "krc"
DURATION, DEADLINE, RETRY = 3, 2, 1
ELECT = ["--leader-elect", "--lease-namespace", LEASE_NS, "--lease-name", LEASE_NAME,
         "--lease-duration", "%ds" % DURATION, "--lease-renew-deadline", "%ds" % DEADLINE,
         "--lease-retry-period", "%ds" % RETRY, "--watch-idle-timeout", "3s"]


get = h.http_get


class LeaderTest(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.procs = []

    def tearDown(self):
        for k in self.procs:
            k.kill()

    def start(self, name, extra=()):
        env = {"SLACK_WEBHOOK_URL": self.slack.webhook_url("alerts"), "CLUSTER_NAME": "ha",
               "MUTE_SECONDS": "0", "KRC_STORM_THRESHOLD": "0", "POD_NAME": name}
        k = h.Krc(self.kube.kubeconfig, ELECT + list(extra), env)
        k.port = k.http_port()
        k.name = name
        self.procs.append(k)
        return k

    def lease(self):
        try:
            return self.kube.get_lease(LEASE_NS, LEASE_NAME)
        except FakeKubeError:
            return None

    def holder(self):
        lease = self.lease()
        return (lease or {}).get("spec", {}).get("holderIdentity")

    def handled(self):
        ann = ((self.lease() or {}).get("metadata", {}).get("annotations") or {})
        return [l for l in ann.get("krc.io/handled-restarts", "").splitlines() if l]

    def alerted_pods(self):
        """The pod named by each message the fake Slack accepted (one pod per alert)."""
        out = []
        for m in self.slack.messages():
            pods = set(re.findall(r"app-\d+", json.dumps(m.get("body"))))
            self.assertEqual(len(pods), 1, m)
            out.extend(pods)
        return sorted(out)

    def two_replicas(self):
        a = self.start("krc-a")
        a.wait_log("became the leader")
        a.wait_synced()
        b = self.start("krc-b")
        b.wait_log("standby; lease krc/krc is held by \"krc-a\"")
        return a, b

    def test_failover_after_kill9_alerts_every_restart_exactly_once(self):
        for i in range(7):
            self.kube.create_pod("shop", "app-%d" % i)
        a, b = self.two_replicas()
        self.assertEqual(self.holder(), "krc-a")
        # readiness reflects the role; the standby does not watch at all
        h.wait_until(lambda: get(a.port, "/readyz")[0] == 200, 20, what="leader ready")
        status, body = get(b.port, "/readyz")
        self.assertEqual(status, 503)
        self.assertIn("standby", body)
        self.assertIn("krc-a", body)
        self.assertEqual(get(b.port, "/healthz")[0], 200)
        # the pods' readiness probe: a standby that reaches its Lease is ready to take over
        self.assertEqual(get(b.port, "/readyz/replica"),
                         (200, "ok: standby: the lease is held by krc-a\n"))
        self.assertEqual(get(a.port, "/readyz/replica"), (200, "ok: leader\n"))
        self.assertIn("krc_leader 0", get(b.port, "/metrics")[1])
        self.assertIn("krc_leader 1", get(a.port, "/metrics")[1])
        self.assertFalse(b.logs(contains="sync complete"))

        # three restarts while krc-a leads: alerted by it, published in the Lease
        for i in range(3):
            self.kube.restart("shop", "app-%d" % i, "app", exit_code=1, logs="boom %d\n" % i)
        self.slack.wait_messages(3, timeout=30)
        h.wait_until(lambda: len(self.handled()) >= 3, 10, what="handled restarts in the Lease")

        a.kill()  # kill -9: no release, the Lease must expire
        killed = time.monotonic()
        # two restarts while nobody leads
        for i in range(3, 5):
            self.kube.restart("shop", "app-%d" % i, "app", exit_code=1, logs="gap %d\n" % i)
        b.wait_log("became the leader", timeout=DURATION + RETRY + 10)
        took = time.monotonic() - killed
        # client-go semantics: the standby's clock starts when it last saw the Lease change
        # (at most one retry period before the kill); it checks every retry period
        self.assertLessEqual(took, DURATION + RETRY + 1.5, "takeover took %.1fs" % took)
        self.assertEqual(self.holder(), "krc-b")
        b.wait_synced()
        # two restarts after the takeover
        for i in range(5, 7):
            self.kube.restart("shop", "app-%d" % i, "app", exit_code=1, logs="after %d\n" % i)
        self.slack.wait_messages(7, timeout=30)
        h.wait_until(lambda: get(b.port, "/readyz")[0] == 200, 20, what="new leader ready")
        time.sleep(3)  # a window for duplicates to show up; asserted below
        self.assertEqual(self.alerted_pods(), ["app-%d" % i for i in range(7)])
        # the start-up window re-detected the first three; the Lease said they were handled
        self.assertEqual(len(b.logs(contains="already handled by the previous leader")), 3,
                         b.tail(80))
        lease = self.lease()
        self.assertGreaterEqual(lease["spec"].get("leaseTransitions", 0), 1)
        self.assertEqual(b.stop(), 0)

    def test_sigterm_releases_the_lease_and_the_standby_takes_over_at_once(self):
        self.kube.create_pod("shop", "app-1")
        a, b = self.two_replicas()
        self.assertEqual(a.stop(), 0)
        a.wait_exit()
        self.assertIn("released the lease", a.text())
        stopped = time.monotonic()
        b.wait_log("became the leader", timeout=10)
        # released: no need to wait for the lease duration
        self.assertLess(time.monotonic() - stopped, DURATION, b.tail())
        b.wait_synced()
        self.kube.restart("shop", "app-1", "app", exit_code=2, logs="x\n")
        self.slack.wait_messages(1, timeout=30)
        self.assertEqual(b.stop(), 0)

    def test_a_leader_that_finds_another_holder_stops(self):
        self.kube.create_pod("shop", "app-1")
        a = self.start("krc-a")
        a.wait_log("became the leader")
        a.wait_synced()
        lease = self.lease()
        lease["spec"]["holderIdentity"] = "intruder"
        lease["spec"]["renewTime"] = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
        self.kube.put_lease(lease)
        a.wait_log("lost the lease krc/krc to \"intruder\"", timeout=10)
        self.assertEqual(a.wait_exit(), 1)

    def test_standby_waits_while_another_holder_renews(self):
        self.kube.create_pod("shop", "app-1")
        now = lambda: time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
        self.kube.put_lease({"metadata": {"name": LEASE_NAME, "namespace": LEASE_NS},
                             "spec": {"holderIdentity": "other", "leaseDurationSeconds": DURATION,
                                      "acquireTime": now(), "renewTime": now()}})
        k = self.start("krc-a")
        deadline = time.monotonic() + 2 * DURATION + 1
        while time.monotonic() < deadline:  # "other" keeps renewing: krc must wait
            lease = self.lease()
            lease["spec"]["renewTime"] = now()
            self.kube.put_lease(lease)
            time.sleep(0.5)
        self.assertFalse(k.logs(contains="became the leader"), k.tail())
        status, body = get(k.port, "/readyz")
        self.assertEqual((status, "held by other" in body), (503, True), body)
        # "other" stops renewing: krc takes over once the lease duration passed
        k.wait_log("became the leader", timeout=DURATION + RETRY + 5)
        self.assertEqual(self.holder(), "krc-a")
        self.assertEqual(self.lease()["spec"].get("leaseTransitions"), 1)
        self.assertEqual(k.stop(), 0)

    def test_lease_timings_are_checked(self):
        import subprocess
        p = subprocess.run([h.krc_binary(), "run", "--leader-elect", "--lease-duration", "5s",
                            "--lease-renew-deadline", "5s", "--kubeconfig", self.kube.kubeconfig],
                           capture_output=True, text=True, timeout=20)
        self.assertEqual(p.returncode, 2)
        self.assertIn("leaseRenewDeadline (5s) must be less than leaseDuration (5s)", p.stderr)


if __name__ == "__main__":
    h.main()
