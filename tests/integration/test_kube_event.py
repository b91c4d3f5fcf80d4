"""The Kubernetes Event destination (issue 16): the real `krc run` against the fake API server
(tests/fakekube, which validates events.k8s.io/v1 Events like the real API server and enforces
the RBAC of deploy/manifests) writes a Warning `RestartDiagnosed` Event on the restarted pod,
and the real `kubectl describe pod` shows it.

Also: on by default (no configuration, with or without Slack), off with `--kubernetes-events
false` or KRC_KUBERNETES_EVENTS=false, retried through 5xx, a 403 (no RBAC for it) warned about
once and not retried, a 404 (namespace gone) dropped, and the fake's own validation (what the
real API server refuses, the fake refuses).

    python3 tests/integration/test_kube_event.py --krc build/krc
Set KUBECTL=/path/to/kubectl to describe with a specific kubectl (e.g. Debian's 1.20).
"""

import copy
import json
import os
import re
import shutil
import sqlite3
import ssl
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request

import krc_harness as h
from test_fakekube_kubectl import find_kubectl

SCRUB = ["SLACK_WEBHOOK_URL", "SLACK_CHANNEL", "SLACK_USERNAME", "SLACK_BOT_TOKEN",
         "SLACK_ICON", "CLUSTER_NAME", "MUTE_SECONDS", "KRC_SLACK_API_URL",
         "KRC_STORM_THRESHOLD", "KRC_RECOVERED_AFTER", "WATCHED_NAMESPACES",
         "IGNORED_NAMESPACES", "WATCHED_POD_NAME_PREFIXES", "IGNORED_POD_NAME_PREFIXES",
         "KRC_KUBERNETES_EVENTS", "POD_NAME", "POD_NAMESPACE"]
EVENTS = "/apis/events.k8s.io/v1/namespaces/%s/events"
CONTROLLER = "krc.io/kube-restart-collector"
MICRO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")


class KubeEventTest(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.krc = None
        self.home = tempfile.mkdtemp(prefix="krc-kevent-home-")
        self.addCleanup(shutil.rmtree, self.home, True)

    def tearDown(self):
        if self.krc is not None:
            code = self.krc.stop(timeout=60)
            self.assertEqual(code, 0, "krc did not shut down cleanly:\n" + self.krc.tail(30))

    def start_krc(self, env=None, args=()):
        full = {k: None for k in SCRUB}
        full["POD_NAME"] = "krc-7d4b9c-x1"
        full.update(env or {})
        self.krc = h.Krc(self.kube.kubeconfig, list(args), full)
        self.krc.wait_synced()
        return self.krc

    def webhook(self, name):
        return self.slack.webhook_url(name)

    def posts(self, ns):
        return [r for r in self.kube.requests()
                if r["method"] == "POST" and r["path"] == EVENTS % ns]

    def wait_posts(self, ns, n=1, status=None):
        def got():
            p = [r for r in self.posts(ns) if status is None or r["status"] == status]
            return p if len(p) >= n else None
        return h.wait_until(got, 30 * h.SLOWDOWN, what="%d POST(s) of the Event in %s (log:\n%s)"
                            % (n, ns, self.krc.tail(20) if self.krc else ""))

    def api(self, method, path, body=None):
        """A request to the fake API server as krc makes it (its token, its CA)."""
        ctx = ssl.create_default_context(cafile=self.kube.ca)
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.kube.api_url + path, data=data, method=method, headers={
            "Authorization": "Bearer " + self.kube.current_token(),
            "Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def kubectl(self, kubectl, *args):
        env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
        env["KUBECONFIG"] = self.kube.kubeconfig
        env["HOME"] = self.home
        r = subprocess.run([kubectl] + list(args), env=env, capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(r.returncode, 0, "kubectl %s: %s" % (" ".join(args), r.stderr))
        return r.stdout

    # ---- the Event ----------------------------------------------------------------------

    def test_event_on_the_pod_shown_by_kubectl_describe(self):
        pod = self.kube.create_pod("shop", "orders-api-0", containers=["app", "sidecar"])
        self.start_krc({"SLACK_WEBHOOK_URL": self.webhook("alerts")})
        self.kube.restart("shop", "orders-api-0", "app", exit_code=137, reason="OOMKilled",
                          logs="allocating 2GiB\n")
        self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN)
        self.assertEqual([r["status"] for r in self.wait_posts("shop")], [201])
        # "posted (" stays the mark of a message (other tests count those lines)
        self.krc.wait_log("alert for shop/orders-api-0")
        self.assertEqual(len(self.krc.logs(contains="posted (")), 1)

        # what the API server stored, read back through events.k8s.io/v1 (by the test, not
        # krc: krc may only create events, so the fake stops enforcing RBAC now)
        self.kube.set_rbac(None)
        code, lst = self.api("GET", EVENTS % "shop")
        self.assertEqual(code, 200)
        evs = [e for e in lst["items"] if e.get("reason") == "RestartDiagnosed"]
        self.assertEqual(len(evs), 1, lst)
        ev = evs[0]
        self.assertEqual(ev["type"], "Warning")
        self.assertEqual(ev["action"], "Diagnose")
        self.assertEqual(ev["reportingController"], CONTROLLER)
        self.assertEqual(ev["reportingInstance"], "krc-7d4b9c-x1")  # POD_NAME
        self.assertRegex(ev["eventTime"], MICRO)
        self.assertEqual(ev["regarding"], {
            "kind": "Pod", "apiVersion": "v1", "namespace": "shop", "name": "orders-api-0",
            "uid": pod["metadata"]["uid"], "fieldPath": "spec.containers{app}"})
        self.assertTrue(ev["note"].startswith("oom_killed (high confidence): "), ev["note"])
        self.assertLessEqual(len(ev["note"].encode()), 1024)
        self.assertTrue(ev["metadata"]["name"].startswith("orders-api-0."))
        self.assertEqual(ev["metadata"]["namespace"], "shop")
        # krc's log names it
        self.assertTrue(self.krc.wait_log("Kubernetes Event for shop/orders-api-0 container "
                                          "app (oom_killed) written"))

        kubectl = find_kubectl()
        if kubectl is None:
            self.fail("no kubectl (PATH or $KUBECTL) to describe the pod with: scripts/setup-test "
                      "installs Debian's kubernetes-client")
        out = self.kubectl(kubectl, "describe", "pod", "-n", "shop", "orders-api-0")
        lines = [x for x in out.splitlines() if "RestartDiagnosed" in x]
        self.assertEqual(len(lines), 1, out)
        cols = lines[0].split()
        self.assertEqual(cols[0], "Warning", lines[0])
        self.assertEqual(cols[1], "RestartDiagnosed", lines[0])
        self.assertEqual(cols[3], CONTROLLER, lines[0])  # From: reportingController
        self.assertIn("oom_killed (high confidence):", lines[0])
        # the Age column comes from eventTime (no deprecated timestamps): not "<unknown>"
        self.assertNotIn("<unknown>", lines[0])
        # and in the core/v1 view every event tool reads
        out = self.kubectl(kubectl, "get", "events", "-n", "shop", "-o", "json")
        core = [e for e in json.loads(out)["items"] if e.get("reason") == "RestartDiagnosed"]
        self.assertEqual(core[0]["involvedObject"]["fieldPath"], "spec.containers{app}")
        self.assertEqual(core[0]["reportingComponent"], CONTROLLER)

    def test_on_by_default_without_slack(self):
        """No configuration at all: nothing goes to Slack, the Event is still written."""
        self.kube.create_pod("batch", "report-0")
        self.start_krc()
        self.kube.restart("batch", "report-0", "app", exit_code=1, logs="Error: boom\n")
        self.assertEqual([r["status"] for r in self.wait_posts("batch")], [201])
        self.assertEqual(self.slack.messages(), [])
        # the Event is a destination: the restart is alerted (to the cluster), not "not_posted"
        (d,) = self.krc.wait_diagnosed(1)
        self.assertEqual(d["decision"], "alert")
        self.assertEqual(len(self.krc.logs(contains="no Slack destination configured")), 1)

    def test_off(self):
        for i, how in enumerate(({"args": ["--kubernetes-events", "false"]},
                                 {"env": {"KRC_KUBERNETES_EVENTS": "false"}})):
            with self.subTest(how):
                ns = "off-%d" % i
                self.kube.create_pod(ns, "web-0")
                env = {"SLACK_WEBHOOK_URL": self.webhook(ns)}
                env.update(how.get("env", {}))
                self.start_krc(env, how.get("args", ()))
                self.kube.restart(ns, "web-0", "app", exit_code=1, logs="oops\n")
                self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN,
                                         webhook=self.slack.webhook_path(ns))
                self.assertEqual(self.posts(ns), [])
                self.assertEqual(self.krc.logs(contains="writing an events.k8s.io/v1 Event"), [])
                self.assertEqual(self.krc.stop(timeout=60), 0)
                self.krc = None

    # ---- delivery: retries, 403, 404 ----------------------------------------------------

    def test_5xx_is_retried(self):
        self.kube.create_pod("shop", "cart-0")
        self.kube.fault(type="http_error", status=503, count=2, method="POST",
                        path_regex="^/apis/events.k8s.io/")
        self.start_krc()
        self.kube.restart("shop", "cart-0", "app", exit_code=1, logs="oops\n")
        self.wait_posts("shop", status=201)
        self.assertEqual([r["status"] for r in self.posts("shop")], [503, 503, 201])
        line = self.krc.wait_log("Kubernetes Event for shop/cart-0 container app")[0]["msg"]
        self.assertTrue(line.endswith("written (3 attempts)"), line)

    def test_events_are_paced(self):
        """One Event per second on the Event destination's lane (docs/destinations.md): a burst
        of restarts is not a burst of writes to the API server."""
        for i in range(3):  # bare pods: three incidents (issue 27: one workload's would be one)
            self.kube.create_pod("shop", "burst-%d" % i, owner=False)
        self.start_krc()
        for i in range(3):
            self.kube.restart("shop", "burst-%d" % i, "app", exit_code=1, logs="oops\n")
        posts = self.wait_posts("shop", n=3, status=201)
        times = sorted(r["time"] for r in posts)
        gaps = [b - a for a, b in zip(times, times[1:])]
        # pacing waits a full second from the previous attempt's start; the fake records a
        # request on arrival, so one late arrival shortens the next gap by its lateness (0.885 s
        # seen on an overloaded machine). Unpaced, the gaps are a few ms; paced at half the
        # rate, the span is 1 s.
        self.assertTrue(all(g >= 0.5 for g in gaps) and times[-1] - times[0] >= 0.9 * len(gaps),
                        "gaps between the Event POSTs: %r" % gaps)

    def test_forbidden_warns_once_and_is_not_retried(self):
        rbac = copy.deepcopy(h.shipped_rbac_objects())
        for o in rbac:
            if o["kind"] == "ClusterRole":
                o["rules"] = [r for r in o["rules"] if "events.k8s.io" not in r["apiGroups"]]
        self.kube.set_rbac(rbac, user="system:serviceaccount:krc:krc")
        for i in range(2):
            self.kube.create_pod("shop", "web-%d" % i)
        self.start_krc({"SLACK_WEBHOOK_URL": self.webhook("alerts"), "MUTE_SECONDS": "0"})
        for i in range(2):
            self.kube.restart("shop", "web-%d" % i, "app", exit_code=1, logs="oops\n")
        # Slack gets both alerts all the same
        self.slack.wait_messages(2, timeout=30 * h.SLOWDOWN)
        self.wait_posts("shop", n=2)
        time.sleep(2 * h.SLOWDOWN)  # what a retry would take (1 s backoff)
        self.assertEqual([r["status"] for r in self.posts("shop")], [403, 403])
        warns = self.krc.logs(contains="Kubernetes Events: krc may not create events")
        self.assertEqual(len(warns), 1, warns)
        self.assertEqual(warns[0]["level"], "warn")
        self.assertIn('namespace "shop"', warns[0]["msg"])
        self.assertIn('grant the verb "create" on "events" in "events.k8s.io"', warns[0]["msg"])
        failed = self.krc.logs(contains="not delivered")
        self.assertEqual(len(failed), 2, failed)
        for f in failed:
            self.assertIn("cannot create events in namespace \"shop\"", f["msg"])
            self.assertNotIn("retried", f["msg"])

    def test_namespace_gone_is_dropped(self):
        self.kube.create_pod("gone", "job-0")
        self.kube.fault(type="http_error", status=404, count=1, method="POST", reason="NotFound",
                        path_regex="^/apis/events.k8s.io/", message='namespaces "gone" not found')
        self.start_krc()
        self.kube.restart("gone", "job-0", "app", exit_code=1, logs="oops\n")
        self.wait_posts("gone")
        self.krc.wait_log('Kubernetes Event for namespace "gone" dropped')
        time.sleep(2 * h.SLOWDOWN)
        self.assertEqual([r["status"] for r in self.posts("gone")], [404])


    # ---- once per restart: the name is the restart's --------------------------------------

    def restart_events(self, ns):
        """The RestartDiagnosed Events the fake API server holds in ns (read by the test, not
        krc: its RBAC is switched off for the read and put back)."""
        rbac = self.kube.rbac_state()
        self.assertTrue(rbac["enabled"], rbac)
        self.kube.set_rbac(None)
        try:
            code, lst = self.api("GET", EVENTS % ns)
        finally:
            self.kube.set_rbac(rbac["objects"], user=rbac["user"])
        self.assertEqual(code, 200, lst)
        return [e for e in lst["items"] if e.get("reason") == "RestartDiagnosed"]

    def test_two_daemons_on_fresh_databases_write_one_event_per_restart(self):
        """Issue 25: a krc started again on a fresh database reports the restarts of its
        start-up window again; their Events have the restart's name, so the API server answers
        409 AlreadyExists and there is still one Event per restart. Another restart of the same
        container is another Event."""
        self.kube.create_pod("shop", "api-0", containers=["app", "sidecar"])
        self.kube.create_pod("shop", "worker-0")
        env = {"SLACK_WEBHOOK_URL": self.webhook("alerts"), "MUTE_SECONDS": "0"}
        self.start_krc(env)
        self.kube.restart("shop", "api-0", "app", exit_code=137, reason="OOMKilled",
                          logs="allocating\n")
        self.wait_posts("shop", n=1, status=201)
        self.kube.restart("shop", "api-0", "app", exit_code=1, logs="boom\n")  # count 2
        self.kube.restart("shop", "worker-0", "app", exit_code=1, logs="oops\n")
        self.kube.restart("shop", "api-0", "sidecar", exit_code=2, logs="bad flag\n")
        self.wait_posts("shop", n=4, status=201)
        first = self.restart_events("shop")
        self.assertEqual(len(first), 4, first)
        names = sorted(e["metadata"]["name"] for e in first)
        for n in names:
            self.assertRegex(n, r"^(api|worker)-0\.krc-[0-9a-f]{16}$")
        self.assertEqual(self.krc.stop(timeout=60), 0)
        self.krc = None

        # the second daemon: a fresh database (the harness gives each its own), the same cluster;
        # the pods' statuses show the last termination of each container (3 of the 4 restarts)
        k2 = self.start_krc(env)
        k2.wait_diagnosed(3)
        lines = k2.wait_log("there already, not written again", count=3)
        self.assertTrue(all(l["level"] == "info" for l in lines), lines)
        h.wait_until(lambda: len([r for r in self.posts("shop") if r["status"] == 409]) >= 3,
                     20 * h.SLOWDOWN, what="three 409 answers")
        time.sleep(2 * h.SLOWDOWN)  # what a retry would take (1 s backoff): none comes
        statuses = sorted(r["status"] for r in self.posts("shop"))
        self.assertEqual(statuses, [201] * 4 + [409] * 3, statuses)
        self.assertEqual(k2.logs(contains="not delivered"), [])
        self.assertEqual(k2.logs(contains="retrying"), [])
        # the Slack messages went again (the database that would have said "done" is new) ...
        self.slack.wait_messages(4 + 3, timeout=30 * h.SLOWDOWN)
        # ... but the cluster still has one Event per restart, the same four
        second = self.restart_events("shop")
        self.assertEqual(sorted(e["metadata"]["name"] for e in second), names)
        # both rows delivered in the new database: a 409 AlreadyExists is not a failure
        rows = h.wait_until(lambda: [r for r in self.outbox() if r[2] == "dest:kubernetes-event"
                                     and r[3] == "delivered"]
                            if len([r for r in self.outbox() if r[2] == "dest:kubernetes-event"
                                    and r[3] == "delivered"]) == 3 else None,
                            20 * h.SLOWDOWN, what="three delivered Event rows")
        self.assertEqual(len(rows), 3)

        # counted apart in /metrics: three there already, none failed
        port = k2.http_port()
        self.assertEqual(self.events_metric(port, "already_exists"), 3)
        self.assertEqual(self.events_metric(port, "failed"), 0)

        # a new restart while the second daemon runs: a new Event
        self.kube.restart("shop", "worker-0", "app", exit_code=1, logs="again\n")
        self.wait_posts("shop", n=5, status=201)
        self.assertEqual(len(self.restart_events("shop")), 5)
        h.wait_until(lambda: self.events_metric(port, "created") == 1, 20 * h.SLOWDOWN,
                     what="krc_kube_events_total{result=\"created\"} 1")
        self.assertEqual(self.events_metric(port, "already_exists"), 3)

    @staticmethod
    def events_metric(port, result):
        status, body = h.http_get(port, "/metrics")
        want = 'krc_kube_events_total{result="%s"} ' % result
        for line in body.splitlines():
            if line.startswith(want):
                return float(line[len(want):])
        return None

    # ---- the kubernetes-event destination (the destinations framework) ------------------

    def outbox(self):
        c = sqlite3.connect(os.path.join(self.krc.dbdir, "krc.db"), timeout=10)
        try:
            return c.execute("SELECT id, restart_id, destination, state FROM outbox "
                             "ORDER BY id").fetchall()
        finally:
            c.close()

    def config(self, text):
        d = tempfile.mkdtemp(prefix="krc-kevent-cfg-")
        self.addCleanup(shutil.rmtree, d, True)
        path = os.path.join(d, "krc.yaml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_event_row_beside_the_message_of_the_same_restart(self):
        """One outbox row per destination, the Event's among them, under the same restart
        (krc_store_record_many writes them in one transaction); both delivered."""
        self.kube.create_pod("shop", "api-0")
        self.start_krc({"SLACK_WEBHOOK_URL": self.webhook("alerts")})
        self.kube.restart("shop", "api-0", "app", exit_code=1, logs="oops\n")
        self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN)
        self.wait_posts("shop", status=201)
        rows = h.wait_until(lambda: [r for r in self.outbox() if r[3] == "delivered"]
                            if len([r for r in self.outbox() if r[3] == "delivered"]) == 2
                            else None, 20 * h.SLOWDOWN, what="two delivered outbox rows")
        self.assertEqual(sorted(r[2] for r in rows), ["dest:kubernetes-event", "webhook:default"])
        self.assertEqual(rows[0][1], rows[1][1])
        self.assertGreater(rows[0][1], 0)

    def test_declared_destination_replaces_the_implicit_one(self):
        """A declared kubernetes-event destination is routed like any other and the implicit
        one is not there: one Event per restart, never two."""
        path = self.config("destinations:\n"
                           "  - name: cluster\n    type: kubernetes-event\n"
                           "routes:\n"
                           "  - namespace: shop\n    destinations: [cluster]\n")
        self.kube.create_pod("shop", "a-0")
        self.kube.create_pod("other", "b-0")
        self.start_krc({}, ["--config", path])
        self.krc.wait_log("the declared kubernetes-event destinations, by route")
        self.kube.restart("shop", "a-0", "app", exit_code=1, logs="oops\n")
        self.kube.restart("other", "b-0", "app", exit_code=1, logs="oops\n")
        self.wait_posts("shop", status=201)
        self.krc.wait_log("Kubernetes Event for shop/a-0 container app (")
        self.krc.wait_log("restart diagnosed", count=2)  # the other restart was seen ...
        time.sleep(2 * h.SLOWDOWN)
        self.assertEqual(len(self.posts("shop")), 1)
        self.assertEqual(self.posts("other"), [])  # ... and no route sends it an Event
        self.assertEqual([r[2] for r in self.outbox()], ["dest:cluster"])

    def test_declared_destination_with_events_off_is_refused(self):
        path = self.config("destinations:\n  - name: cluster\n    type: kubernetes-event\n"
                           "    default: true\n")
        env = {k: v for k, v in os.environ.items() if k not in SCRUB}
        p = subprocess.run([h.krc_binary(), "run", "--config", path, "--kubernetes-events",
                            "false", "--kubeconfig", self.kube.kubeconfig],
                           capture_output=True, text=True, timeout=30, env=env)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("%s:2:5: destinations (cluster): type kubernetes-event needs "
                      "kubernetesEvents: true (it is false)" % path, p.stdout + p.stderr)
        # krc config check says the same at its line and column
        off = self.config("kubernetesEvents: false\ndestinations:\n  - name: cluster\n"
                          "    type: kubernetes-event\n")
        p = subprocess.run([h.krc_binary(), "config", "check", off], capture_output=True,
                           text=True, timeout=30, env=env)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("%s:3:5: destinations (cluster): type kubernetes-event needs "
                      "kubernetesEvents: true" % off, p.stderr)
        # with Events on, another type may not take the implicit destination's name
        clash = self.config("destinations:\n  - name: kubernetes-event\n    type: webhook\n"
                            "    url: https://hooks.example.test/x\n"
                            "    secretEnv: KRC_IT_UNSET_SECRET\n")
        p = subprocess.run([h.krc_binary(), "config", "check", clash], capture_output=True,
                           text=True, timeout=30, env=env)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("%s:2:5: destinations (kubernetes-event): the name is the implicit "
                      "Kubernetes Event destination's" % clash, p.stderr)

    def test_turned_off_pending_events_are_marked_failed(self):
        """An Event left pending (the API server kept failing) when krc stops, and krc started
        again with kubernetesEvents false: the row is marked failed with a log line, not
        left pending forever; the message's row is untouched."""
        self.kube.create_pod("shop", "q-0")
        self.kube.fault(type="http_error", status=503, count=1000, method="POST",
                        path_regex="^/apis/events.k8s.io/")
        db_dir = tempfile.mkdtemp(prefix="krc-kevent-db-")
        self.addCleanup(shutil.rmtree, db_dir, True)
        db = os.path.join(db_dir, "krc.db")
        self.start_krc({"KRC_DB": db, "SLACK_WEBHOOK_URL": self.webhook("alerts")})
        self.kube.restart("shop", "q-0", "app", exit_code=1, logs="oops\n")
        self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN)
        self.wait_posts("shop", n=2)  # failing, retried
        self.assertEqual(self.krc.stop(timeout=60), 0)
        self.krc = None
        c = sqlite3.connect(db, timeout=10)
        rows = dict(c.execute("SELECT destination, state FROM outbox").fetchall())
        c.close()
        self.assertEqual(rows, {"webhook:default": "delivered",
                                "dest:kubernetes-event": "pending"})
        self.start_krc({"KRC_DB": db, "SLACK_WEBHOOK_URL": self.webhook("alerts")},
                       ["--kubernetes-events", "false"])
        line = self.krc.wait_log("a Kubernetes Event, and kubernetesEvents is false now")[0]
        self.assertEqual(line["level"], "warn")
        self.assertIn("marked failed, not written", line["msg"])
        c = sqlite3.connect(db, timeout=10)
        rows = dict(c.execute("SELECT destination, state FROM outbox").fetchall())
        c.close()
        self.assertEqual(rows, {"webhook:default": "delivered",
                                "dest:kubernetes-event": "failed"})


class FakeValidatesLikeTheApiServer(unittest.TestCase):
    """What the real API server refuses for events.k8s.io/v1, the fake refuses (so the test
    above proves krc's Event valid)."""

    @classmethod
    def setUpClass(cls):
        cls.kube = h.admin.FakeKube(rbac=False)
        cls.kube.start()
        cls.kube.create_pod("shop", "web-0")

    @classmethod
    def tearDownClass(cls):
        cls.kube.stop()

    def good(self, **over):
        ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
              "metadata": {"name": "web-0.%x" % time.time_ns(), "namespace": "shop"},
              "eventTime": "2026-12-03T15:58:00.123456Z", "type": "Warning",
              "reason": "RestartDiagnosed", "action": "Diagnose",
              "reportingController": CONTROLLER, "reportingInstance": "krc-0",
              "regarding": {"kind": "Pod", "apiVersion": "v1", "namespace": "shop",
                            "name": "web-0"},
              "note": "oom_killed (high confidence): x"}
        for k, v in over.items():
            if v is None:
                ev.pop(k, None)
            else:
                ev[k] = v
        return ev

    api = KubeEventTest.api

    def test_valid_is_created_and_listed(self):
        code, body = self.api("POST", EVENTS % "shop", self.good(note="n" * 1024))
        self.assertEqual(code, 201, body)
        self.assertEqual(body["note"], "n" * 1024)
        code, got = self.api("GET", EVENTS % "shop" + "/" + body["metadata"]["name"])
        self.assertEqual((code, got["reason"]), (200, "RestartDiagnosed"))
        code, lst = self.api("GET", "/api/v1/namespaces/shop/events")
        self.assertIn(body["metadata"]["name"], [e["metadata"]["name"] for e in lst["items"]])
        # the same name again: 409 with the API server's AlreadyExists Status (what krc counts as
        # already written), whatever the rest of the body says
        name = body["metadata"]["name"]
        code, st = self.api("POST", EVENTS % "shop", self.good(
            metadata={"name": name}, note="another restart"))
        self.assertEqual(code, 409)
        self.assertEqual(st, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                              "status": "Failure", "reason": "AlreadyExists", "code": 409,
                              "message": 'events.events.k8s.io "%s" already exists' % name,
                              "details": {"name": name, "group": "events.k8s.io",
                                          "kind": "events"}})
        code, got = self.api("GET", EVENTS % "shop" + "/" + name)
        self.assertEqual(got["note"], "n" * 1024)  # the first one stays

    def test_name_taken_through_core_v1_is_taken(self):
        """core/v1 and events.k8s.io/v1 Events are one resource: a name written through either
        API is taken in both (krc's 409 AlreadyExists can come from a core/v1 Event)."""
        core = self.kube.add_event(namespace="shop", metadata={"name": "web-0.krc-0011"},
                                   involvedObject={"kind": "Pod", "namespace": "shop",
                                                   "name": "web-0"},
                                   reason="BackOff", message="x", type="Warning")
        self.assertEqual(core["metadata"]["name"], "web-0.krc-0011")
        code, st = self.api("POST", EVENTS % "shop", self.good(metadata={"name": "web-0.krc-0011"}))
        self.assertEqual((code, st["reason"]), (409, "AlreadyExists"))

    def test_refusals(self):
        cases = [
            ({"eventTime": None}, "eventTime: Required value"),
            ({"reportingController": None}, "reportingController: Required value"),
            ({"reportingInstance": None}, "reportingInstance: Required value"),
            ({"action": None}, "action: Required value"),
            ({"reason": None}, "reason: Required value"),
            ({"regarding": None}, "regarding: Required value"),
            ({"note": "n" * 1025}, "note: Invalid value: \"\": can have at most 1024"),
            ({"note": "é" * 513}, "can have at most 1024"),  # bytes, not characters
            ({"type": "Error"}, "type: Invalid value"),
            ({"reportingInstance": "k" * 129}, "reportingInstance: Invalid value"),
            ({"reportingController": "krc.io/a/b"}, "reportingController: Invalid value"),
            ({"metadata": {"name": "Web_0.1"}}, "metadata.name: Invalid value"),
            ({"metadata": {}}, "name or generateName is required"),
            ({"deprecatedCount": 3}, "deprecatedCount: Invalid value: \"\": needs to be unset"),
        ]
        for over, needle in cases:
            with self.subTest(over=list(over)):
                code, body = self.api("POST", EVENTS % "shop", self.good(**over))
                self.assertEqual(code, 422, body)
                self.assertEqual(body["reason"], "Invalid")
                self.assertIn(needle, body["message"])
        code, body = self.api("POST", EVENTS % "shop", self.good(
            metadata={"name": "x.1", "namespace": "other"}))
        self.assertEqual(code, 400, body)
        code, body = self.api("POST", EVENTS % "nowhere", self.good(metadata={"name": "x.1"}))
        self.assertEqual(code, 404, body)
        self.assertEqual(body["message"], 'namespaces "nowhere" not found')


if __name__ == "__main__":
    h.main()
