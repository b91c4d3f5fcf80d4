"""Change tracking in the real daemon against the fake API server (issue 27).

krc lists and watches the workload controllers and the nodes (the Deployments, StatefulSets,
DaemonSets and Jobs as metadata only), and records what changed in the history: a rollout
(revision, manager from the Deployment's managedFields, the template's items), a StatefulSet's
new ControllerRevision, a node's new kubelet and taint. With trackChanges off it asks for none
of them. The alert's "what changed" line is tested with the incidents (test_incidents.py).

    python3 tests/integration/test_track.py --krc build/krc
"""

import os
import sqlite3
import tempfile
import time
import unittest

import krc_harness as h

TRACKED = ["deployments", "replicasets", "statefulsets", "daemonsets", "controllerrevisions",
           "jobs", "cronjobs", "nodes"]
PATHS = ["/apis/apps/v1/" + r for r in TRACKED[:5]] + ["/apis/batch/v1/jobs",
                                                       "/apis/batch/v1/cronjobs", "/api/v1/nodes"]
ARROW = "\u2192"
DRAIN_S = 5  # the krc-store thread drains the recorded changes this often (daemon_retention.c)


class TrackTest(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.db = os.path.join(self.tmp.name, "krc.db")
        self.kube.add_node("fake-node-1")
        self.krc = None

    def tearDown(self):
        if self.krc is not None:
            self.krc.stop()

    def start(self, *args):
        self.krc = h.Krc(self.kube.kubeconfig, ["--db", self.db, "--listen", "127.0.0.1:0"] +
                         list(args), {"SLACK_WEBHOOK_URL": None})
        line = self.krc.wait_log("health and metrics on")[0]["msg"]
        import re  # noqa: PLC0415
        self.port = int(re.search(r"\(port (\d+)\)", line).group(1))

    def wait_synced(self):
        def synced():
            return all(self.krc.logs(contains="change tracking: %s (all namespaces) synced" % r)
                       for r in TRACKED)
        h.wait_until(synced, 20 * h.SLOWDOWN, what="every tracked resource synced (log:\n%s)"
                     % self.krc.tail())

    def changes(self):
        if not os.path.exists(self.db):
            return []
        con = sqlite3.connect(self.db)
        try:
            return [dict(zip(("kind", "namespace", "name", "revision", "manager", "summary",
                              "detail_json"), row)) for row in con.execute(
                "SELECT kind, namespace, name, revision, manager, summary, detail_json "
                "FROM changes ORDER BY id")]
        except sqlite3.OperationalError:
            return []  # the table is created with the store's first connection
        finally:
            con.close()

    def wait_change(self, pred, what):
        return h.wait_until(lambda: [c for c in self.changes() if pred(c)], 20 * h.SLOWDOWN,
                            what="%s in the history (changes: %s; log:\n%s)"
                                 % (what, self.changes(), self.krc.tail()))

    def test_rollout_and_node_changes_are_recorded(self):
        self.kube.deployment("shop", "api", [{"name": "api", "image": "registry.example.com/api:1.4.2",
                                              "resources": {"limits": {"memory": "1Gi"}},
                                              "env": [{"name": "TOKEN", "value": "hunter2"}]}],
                             replicas=3)
        self.kube.statefulset("data", "db", ["pg"])
        self.start()
        self.wait_synced()
        # created within the lookback before krc started: their first revisions are recorded
        self.wait_change(lambda c: c["kind"] == "Deployment" and c["revision"] == "1" and
                         c["summary"] == "created", "shop/api's first revision")
        # the metadata-only watches asked for PartialObjectMetadata, the others for objects
        reqs = [r for r in self.kube.requests() if r["path"].split("?")[0] in PATHS]
        for r in reqs:
            base = r["path"].split("?")[0]
            meta = base.rsplit("/", 1)[1] in ("deployments", "statefulsets", "daemonsets", "jobs")
            self.assertEqual("as=PartialObjectMetadata" in r.get("accept", ""), meta, r)
        self.assertEqual(set(r["path"].split("?")[0] for r in reqs), set(PATHS))
        self.assertFalse([r for r in self.kube.requests() if r["status"] >= 400 and
                          r["path"].split("?")[0] in PATHS])
        self.assertEqual(h.http_get(self.port, "/readyz")[0], 200)

        self.kube.rollout("shop", "api", {"api": {"image": "registry.example.com/api:1.4.3",
                                                  "resources": {"limits": {"memory": "512Mi"}}}},
                          manager="kubectl-client-side-apply", new_pods=1, old_ready=2)
        (c,) = self.wait_change(lambda c: c["kind"] == "Deployment" and c["revision"] == "2",
                                "the rollout of shop/api")
        self.assertEqual((c["namespace"], c["name"]), ("shop", "api"))
        self.assertEqual(c["summary"], "image api:1.4.2 %s api:1.4.3; memory limit 1Gi %s 512Mi"
                         % (ARROW, ARROW))
        self.assertNotIn("hunter2", c["detail_json"])
        import json  # noqa: PLC0415
        detail = json.loads(c["detail_json"])
        self.assertEqual(detail["previous_revision"], "1")
        self.assertEqual(detail["manager"], "kubectl-client-side-apply")
        self.assertEqual(c["manager"], "kubectl-client-side-apply")

        self.kube.rollout_statefulset("data", "db", {"pg": {"image": "postgres:17.1"}})
        (c,) = self.wait_change(lambda c: c["kind"] == "StatefulSet" and c["revision"] == "2",
                                "the StatefulSet's revision 2")
        self.assertEqual((c["namespace"], c["name"]), ("data", "db"))
        self.assertIn("image ", c["summary"])
        self.assertIn("postgres:17.1", c["summary"])

        self.kube.set_node_versions("fake-node-1", kubelet="v1.99.0")
        self.kube.set_node_taints("fake-node-1", [{"key": "gpu", "value": "broken",
                                                   "effect": "NoSchedule"}])
        nodes = self.wait_change(lambda c: c["kind"] == "Node" and "taint" in c["summary"],
                                 "the node's taint")
        self.assertEqual(nodes[0]["name"], "fake-node-1")
        self.assertIn("taint gpu=broken:NoSchedule added", nodes[0]["summary"])
        self.assertTrue([c for c in self.changes() if c["kind"] == "Node" and
                         "kubelet " in c["summary"] and "v1.99.0" in c["summary"]],
                        self.changes())
        # each change once
        keys = [(c["kind"], c["namespace"], c["name"], c["revision"]) for c in self.changes()]
        self.assertEqual(len(keys), len(set(keys)))

    def test_off_asks_for_nothing(self):
        self.kube.deployment("shop", "api", ["api"], replicas=1)
        self.start("--track-changes", "false")
        self.krc.wait_log("pod sync complete")
        self.krc.wait_log("change tracking off")
        h.wait_until(lambda: h.http_get(self.port, "/readyz")[0] == 200, 10 * h.SLOWDOWN,
                     what="/readyz")
        self.kube.rollout("shop", "api", {"api": {"image": "api:2"}})
        # The krc-store thread writes the recorded changes every DRAIN_S: watch the history for
        # a whole period and a margin after the rollout, so that a change recorded by mistake
        # (before or by the rollout) would be there by the end.
        deadline = time.monotonic() + DRAIN_S + 3 * h.SLOWDOWN
        while True:
            self.assertEqual([r["path"] for r in self.kube.requests()
                              if r["path"].split("?")[0] in PATHS], [])
            self.assertEqual(self.changes(), [])
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
        # the history is there, with its (empty) changes table: not a file krc never wrote
        self.assertTrue(os.path.exists(self.db), self.db)
        con = sqlite3.connect(self.db)
        try:
            self.assertEqual(con.execute("SELECT COUNT(*) FROM changes").fetchone(), (0,))
        finally:
            con.close()


if __name__ == "__main__":
    h.main()
