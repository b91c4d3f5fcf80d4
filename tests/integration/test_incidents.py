"""Incidents and what changed (issue 27, acceptance), the real `krc run` against the fake API
server (tests/fakekube) and the strict fake Slack (tests/fakeslack, Web API threads):

- a Deployment rollout that changes the image and the memory limit, then crash-loops: the
  first alert names both changes and the previous revision's ready pods;
- 20 restarts across 3 replacement pods: one incident, one thread, count 20, the first
  failure's log still retrievable (krc history incident ID) after the pods are gone;
- recovery: one resolved message;
- a leader hand-over in the middle: the same incident and thread continue, nothing sent twice;
- a ConfigMap edited before a crash: named with trackConfigChanges on; with it off, no
  request for a ConfigMap at all.

    python3 tests/integration/test_incidents.py --krc build/krc [-k Handover]
"""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest
from datetime import datetime, timedelta, timezone

import krc_harness as h
from admin import FakeKubeError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakedest"))
import fakedest  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import pg_server  # noqa: E402

SCRUB = ["SLACK_WEBHOOK_URL", "SLACK_CHANNEL", "SLACK_USERNAME", "SLACK_BOT_TOKEN",
         "SLACK_ICON", "CLUSTER_NAME", "MUTE_SECONDS", "KRC_SLACK_API_URL",
         "KRC_STORM_THRESHOLD", "KRC_STORM_WINDOW", "KRC_STORM_SUMMARY_DELAY",
         "KRC_RECOVERED_AFTER", "KRC_INCIDENT_REPLY_INTERVAL", "KRC_INCIDENT_UPDATE_INTERVAL",
         "KRC_TRACK_CHANGES", "KRC_TRACK_CONFIG_CHANGES", "KRC_WORKERS",
         "WATCHED_NAMESPACES", "IGNORED_NAMESPACES", "WATCHED_POD_NAME_PREFIXES",
         "IGNORED_POD_NAME_PREFIXES", "IGNORE_RESTART_COUNT",
         "IGNORE_RESTARTS_WITH_EXIT_CODE_ZERO"]

ARROW = "\u2192"
LEASE_NS, LEASE_NAME = "krc", "krc"


texts, full_text = h.message_texts, h.message_text  # what a message says


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def utcnow():
    return datetime.now(timezone.utc).replace(microsecond=0)


def elect(duration=3, deadline=2, retry=1):
    return ["--leader-elect", "--lease-namespace", LEASE_NS, "--lease-name", LEASE_NAME,
            "--lease-duration", "%ds" % duration, "--lease-renew-deadline", "%ds" % deadline,
            "--lease-retry-period", "%ds" % retry, "--watch-idle-timeout", "3s"]


def crash_log(pod, n):
    """A previous log whose first lines are the same for every crash and whose last names the
    pod and the crash: the first failure's log is told from the others by its last line."""
    return ("starting api on :8080\nloading config from /etc/api/config.yaml\n"
            "fatal: crash %d of %s: out of memory allocating the cache\n" % (n, pod))


class Base(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.procs = []
        self.dbdir = tempfile.mkdtemp(prefix="krc-test-db-")
        self.db = os.path.join(self.dbdir, "krc.db")

    def tearDown(self):
        # every krc still running shuts down cleanly (an AddressSanitizer build reports a leak
        # or an error by its exit status)
        codes = []
        for k in self.procs:
            if not k.exited():
                code = k.stop(timeout=60)
                codes.append(code)
                if code != 0:
                    print("---- krc log tail (%s) ----\n%s" % (self.id(), k.tail(80)))
        self.assertEqual([c for c in codes if c != 0], [], "krc did not shut down cleanly")

    # ---- helpers ----

    def start(self, extra=None, args=(), name="krc-a"):
        env = {k: None for k in SCRUB}
        env.update({"SLACK_BOT_TOKEN": self.slack.token, "SLACK_CHANNEL": "#alerts",
                    "KRC_SLACK_API_URL": self.slack.api_url, "MUTE_SECONDS": "600",
                    "KRC_RECOVERED_AFTER": "4s", "KRC_STORM_THRESHOLD": "0",
                    "KRC_DB": self.db, "POD_NAME": name, "CLUSTER_NAME": "prod"})
        env.update(extra or {})
        k = h.Krc(self.kube.kubeconfig, list(args), env)
        self.procs.append(k)
        return k

    def posts(self):
        return self.slack.messages(kind="chat.postMessage")

    def wait_posts(self, n, timeout=30):
        return self.slack.wait_messages(n, timeout=timeout * h.SLOWDOWN, kind="chat.postMessage")

    def incidents(self):
        con = sqlite3.connect(self.db)
        try:
            con.row_factory = sqlite3.Row
            return [dict(r) for r in con.execute("SELECT * FROM incidents ORDER BY id")]
        finally:
            con.close()

    def history(self, *args):
        p = subprocess.run([h.krc_binary(), "history", "--db", self.db] + list(args),
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, "krc history %s: %s" % (" ".join(args), p.stderr))
        return p.stdout

    def crash(self, pod, n):
        self.kube.restart("shop", pod, "api", exit_code=137, reason="OOMKilled",
                          logs=crash_log(pod, n), waiting=True)

    def set_ready(self, pod):
        self.kube.set_container_status("shop", pod, "api", {
            "ready": True, "started": True,
            "state": {"waiting": None, "running": {"startedAt": iso(utcnow())}}})

    def deployment(self, name="api", replicas=1, ready=True):
        return self.kube.deployment(
            "shop", name, [{"name": "api", "image": "api:1.4.2",
                            "resources": {"limits": {"memory": "1Gi", "cpu": "500m"},
                                          "requests": {"memory": "1Gi", "cpu": "250m"}}}],
            replicas=replicas, ready=ready)

    def crash_loop(self, k, pods, per_pod, first_n=1):
        """per_pod[i] restarts of pods[i] (each pod replaced by the next when it is done,
        as the ReplicaSet controller does after a deletion); returns the pods used."""
        n = first_n
        used = []
        pod = pods
        for i, count in enumerate(per_pod):
            used.append(pod)
            for _ in range(count):
                self.crash(pod, n)
                n += 1
                k.wait_diagnosed(n - 1)
                time.sleep(0.2)  # a crash loop takes time: the paced replies fall in it
            if i + 1 < len(per_pod):
                new = self.kube.replace_pod("shop", pod, ready=False)
                pod = new["metadata"]["name"]
        return used


class IncidentTest(Base):
    # ---- the acceptance ----

    def test_rollout_then_crash_loop_names_both_changes_and_the_ready_pods(self):
        self.deployment(replicas=3)
        k = self.start()
        k.wait_synced()
        # change tracking has seen the Deployment and its ReplicaSet before the rollout
        k.wait_log("sync complete", count=1)
        out = self.kube.rollout("shop", "api", {"api": {"image": "api:1.4.3", "resources": {
            "limits": {"memory": "512Mi"}}}}, new_pods=1, old_ready=3)
        new_pod = out["pods"][0]["metadata"]["name"]
        time.sleep(1.5 * h.SLOWDOWN)  # the tracker's watch delivers the new ReplicaSet
        self.crash(new_pod, 1)
        (alert,) = self.wait_posts(1)
        text = full_text(alert)
        self.assertIn("What changed", text, text)
        self.assertIn("Deployment shop/api rolled out revision 2", text)
        self.assertIn("image api:1.4.2 %s api:1.4.3" % ARROW, text)
        self.assertIn("memory limit 1Gi %s 512Mi" % ARROW, text)
        self.assertIn("3 pods of revision 1 are still ready", text)
        # the stored report says it too (every destination, get_incident)
        (inc,) = self.incidents()
        report = json.loads(self.history("show", str(inc["first_restart_id"]), "--format",
                                         "json"))
        blob = json.dumps(report, ensure_ascii=False)
        self.assertIn("memory limit 1Gi %s 512Mi" % ARROW, blob)
        self.assertIn('"previous_ready": 3', blob)

    def test_twenty_restarts_three_pods_one_incident_one_thread_then_resolved(self):
        pods = self.deployment(replicas=1, ready=False)["pods"]
        first_pod = pods[0]["metadata"]["name"]
        k = self.start({"KRC_INCIDENT_REPLY_INTERVAL": "1s"})
        k.wait_synced()
        used = self.crash_loop(k, first_pod, [7, 7, 6])
        self.assertEqual(len(set(used)), 3)
        k.wait_diagnosed(20)
        # one incident of 20 restarts, open
        incs = self.incidents()
        self.assertEqual(len(incs), 1, incs)
        inc = incs[0]
        self.assertEqual((inc["namespace"], inc["workload_kind"], inc["workload_name"],
                          inc["container"], inc["cause"]),
                         ("shop", "Deployment", "api", "api", "oom_killed"))
        self.assertEqual(inc["restarts"], 20)
        self.assertIsNone(inc["ended_at"])
        # one thread: the first alert, every other message a reply under it
        posts = self.posts()
        tops = [m for m in posts if not m["thread_ts"]]
        self.assertEqual(len(tops), 1, [full_text(m)[:120] for m in tops])
        parent = tops[0]
        self.assertIn(first_pod, full_text(parent))
        replies = [m for m in posts if m["thread_ts"]]
        self.assertTrue(all(m["thread_ts"] == parent["ts"] for m in replies))
        # paced: fewer replies than repeats (one a second at most; the 19 repeats take more
        # than 3.8 s), each counting the repeats since the last message: the counts add up to
        # the incident's total at that reply, less the first alert's restart
        self.assertGreaterEqual(len(replies), 2, [full_text(m)[:120] for m in posts])
        self.assertLess(len(replies), 19)
        told = 0
        for m in replies:
            got = re.search(r"(\d+) more restarts? since the last message, (\d+) since",
                            full_text(m))
            self.assertIsNotNone(got, full_text(m)[:300])
            told += int(got.group(1))
            self.assertEqual(told, int(got.group(2)) - 1, full_text(m)[:300])
        self.assertLessEqual(told, 19)
        # the last pod runs ready for the settle time: one resolved message, in the thread
        self.set_ready(used[-1])
        h.wait_until(lambda: [m for m in self.posts() if "Resolved" in full_text(m)],
                     30 * h.SLOWDOWN, what="the resolved message")
        time.sleep(3 * h.SLOWDOWN)
        resolved = [m for m in self.posts() if "Resolved" in full_text(m)]
        self.assertEqual(len(resolved), 1)
        self.assertEqual(resolved[0]["thread_ts"], parent["ts"])
        self.assertIn("20 restarts", full_text(resolved[0]))
        self.assertEqual(len([m for m in self.posts() if not m["thread_ts"]]), 1)
        # the first failure's log is kept: the pods are gone, the history has it
        for p in used:
            try:
                self.kube.delete_pod("shop", p)
            except FakeKubeError:
                pass
        detail = json.loads(self.history("incident", str(inc["id"]), "--format", "json"))
        self.assertEqual(detail["incident"]["restarts"], 20)
        self.assertIsNotNone(detail["incident"]["ended_at"])
        self.assertIn("fatal: crash 1 of %s" % first_pod,
                      json.dumps(detail["first"], ensure_ascii=False))
        # the latest is the last pod's: a repeat (muted, or the paced reply when one was due)
        self.assertEqual(detail["latest"]["restart"]["pod"], used[-1])
        self.assertIn(detail["latest"]["restart"]["decision"], ("muted", "thread_reply"))

    def test_recovery_sends_one_resolved_message(self):
        pods = self.deployment(replicas=1, ready=False)["pods"]
        pod = pods[0]["metadata"]["name"]
        k = self.start()
        k.wait_synced()
        for n in range(1, 4):
            self.crash(pod, n)
            k.wait_diagnosed(n)
        (parent,) = self.wait_posts(1)
        self.assertEqual(len(self.posts()), 1, "repeats within 10m are not replies")
        self.set_ready(pod)
        t0 = time.monotonic()
        msgs = self.wait_posts(2, timeout=30)
        self.assertGreaterEqual(time.monotonic() - t0, 3.0, "before the settle time (4s)")
        resolved = msgs[1]
        self.assertEqual(resolved["thread_ts"], parent["ts"])
        text = full_text(resolved)
        self.assertIn("Resolved", text)
        self.assertIn("Deployment shop/api", text)
        self.assertIn("3 restarts", text)
        # one only, and the incident ended in the history
        time.sleep(6 * h.SLOWDOWN)
        self.assertEqual(len(self.posts()), 2)
        (inc,) = self.incidents()
        self.assertIsNotNone(inc["ended_at"])
        self.assertEqual(inc["restarts"], 3)
        # a later crash is a new incident: a new alert, a new thread
        self.crash(pod, 4)
        msgs = self.wait_posts(3)
        self.assertFalse(msgs[2]["thread_ts"])
        self.assertEqual(len(self.incidents()), 2)

    def test_handover_in_the_middle_continues_the_incident_and_thread(self):
        pods = self.deployment(replicas=1, ready=False)["pods"]
        pod = pods[0]["metadata"]["name"]
        extra = {"KRC_INCIDENT_REPLY_INTERVAL": "2s"}
        a = self.start(extra, elect(), name="krc-a")
        a.wait_log("became the leader")
        a.wait_synced()
        for n in range(1, 5):
            self.crash(pod, n)
            a.wait_diagnosed(n)
        (parent,) = self.wait_posts(1)
        time.sleep(2.5)
        self.crash(pod, 5)
        a.wait_diagnosed(5)
        self.wait_posts(2)  # a paced reply in the thread
        h.wait_until(lambda: a.logs(contains="thread reply for shop/") and
                     a.logs(contains="posted ("), 20, what="the reply posted")
        before = len(self.posts())
        # the leader dies (kill -9): its Lease runs out, a new process takes over with the
        # same history
        a.kill()
        b = self.start(extra, elect(), name="krc-b")
        b.wait_log("became the leader", timeout=30)
        b.wait_synced()
        b.wait_log("open incident(s) continued from the history")
        time.sleep(2.5)
        for n in range(6, 9):
            self.crash(pod, n)
            b.wait_diagnosed(n - 5)
        self.wait_posts(before + 1)
        # the same incident: its count goes on, no second incident, no second alert
        (inc,) = self.incidents()
        self.assertEqual(inc["restarts"], 8)
        posts = self.posts()
        tops = [m for m in posts if not m["thread_ts"]]
        self.assertEqual([m["ts"] for m in tops], [parent["ts"]],
                         "the new leader started a new thread")
        self.assertTrue(all(m["thread_ts"] == parent["ts"] for m in posts if m["thread_ts"]))
        # the end: one resolved message, in the same thread, from the new leader only
        self.set_ready(pod)
        msgs = h.wait_until(lambda: [m for m in self.posts() if "Resolved" in full_text(m)],
                            30 * h.SLOWDOWN, what="the resolved message")
        time.sleep(5 * h.SLOWDOWN)
        msgs = [m for m in self.posts() if "Resolved" in full_text(m)]
        self.assertEqual(len(msgs), 1)
        self.assertEqual(msgs[0]["thread_ts"], parent["ts"])
        self.assertIn("8 restarts", full_text(msgs[0]))
        # nothing twice: every message body once
        bodies = [json.dumps(m["body"], sort_keys=True) for m in self.posts()]
        self.assertEqual(len(bodies), len(set(bodies)))

    def test_each_destination_gets_one_resolved_message(self):
        """The end is one "resolved" message per destination of the first alert: the signed
        webhook's `resolved` event and the first alert's report with what changed, both valid
        against docs/report-schema.json (fakedest checks), PagerDuty's resolve with the
        trigger's dedup_key (its repeats sent nothing), one Teams message."""
        secret = "whsec-incidents-5f1c0f0e8a2b"
        key = "R0UT1NGKEY0123456789abcdefABCDEF"
        dest = fakedest.FakeDest().start()
        self.addCleanup(dest.stop)
        cfg = os.path.join(self.dbdir, "krc.yaml")
        with open(os.path.join(self.dbdir, "secret"), "w") as f:
            f.write(secret + "\n")
        with open(cfg, "w") as f:
            f.write("destinations:\n"
                    "  - name: hook\n    type: webhook\n    url: %s\n    secretFile: %s\n"
                    "    default: true\n"
                    "  - name: pd\n    type: pagerduty\n    url: %s\n"
                    "    routingKeyEnv: KRC_IT_PD_KEY\n    default: true\n"
                    "  - name: teams\n    type: teams\n    url: %s\n    default: true\n"
                    % (dest.webhook_url("hook", secret), os.path.join(self.dbdir, "secret"),
                       dest.pagerduty_url, dest.teams_url("teams")))
        pod = self.deployment(replicas=1, ready=False)["pods"][0]["metadata"]["name"]
        k = self.start({"KRC_IT_PD_KEY": key}, ["--config", cfg])
        k.wait_synced()
        for n in range(1, 4):
            self.crash(pod, n)
            k.wait_diagnosed(n)
        (report,) = dest.wait(1, "/webhook/hook", timeout=30 * h.SLOWDOWN)
        (trigger,) = dest.wait(1, "/pagerduty/", timeout=30 * h.SLOWDOWN)
        dest.wait(1, "/teams/", timeout=30 * h.SLOWDOWN)
        self.assertEqual(report["errors"], [])
        self.assertIn("what_changed", report["json"]["report"])
        self.assertIn("Deployment shop/api", report["json"]["report"]["what_changed"]["summary"])
        self.assertEqual(trigger["json"]["event_action"], "trigger")
        self.set_ready(pod)
        resolved = dest.wait(2, "/webhook/hook", timeout=30 * h.SLOWDOWN)[1]
        resolve = dest.wait(2, "/pagerduty/", timeout=30 * h.SLOWDOWN)[1]
        teams = dest.wait(2, "/teams/", timeout=30 * h.SLOWDOWN)[1]
        for r in (resolved, resolve, teams):
            self.assertEqual(r["errors"], [], r["path"])
        self.assertEqual(resolved["json"]["kind"], "resolved")
        res = resolved["json"]["resolved"]
        self.assertEqual((res["namespace"], res["workload"], res["container"], res["cause"],
                          res["restarts"], res["pod"], res["moved_on"]),
                         ("shop", "Deployment/api", "api", "oom_killed", 3, pod, False))
        (inc,) = self.incidents()
        self.assertEqual(res["incident_id"], inc["id"])
        self.assertEqual(resolve["json"]["event_action"], "resolve")
        self.assertEqual(resolve["json"]["dedup_key"], trigger["json"]["dedup_key"])
        self.assertIn("Resolved", json.dumps(teams["json"]))
        time.sleep(5 * h.SLOWDOWN)
        for path in ("/webhook/hook", "/pagerduty/", "/teams/"):
            self.assertEqual(len(dest.requests(path, accepted=True)), 2, path)

    def configmap_crash(self, track_configs):
        if track_configs:
            # the RBAC a user deploys with the setting: deploy/overlays/config-changes
            self.kube.set_rbac(h.shipped_rbac_objects(
                os.path.join(h.ROOT, "deploy", "overlays", "config-changes")),
                user="system:serviceaccount:krc:krc")
        self.kube.configmap("shop", "api-config", {"mode": "fast"}, manager="kubectl-create",
                            time=iso(utcnow() - timedelta(hours=2)))
        pods = self.kube.deployment(
            "shop", "api", [{"name": "api", "image": "api:1.4.2", "envFrom": [
                {"configMapRef": {"name": "api-config"}}]}], replicas=1)["pods"]
        pod = pods[0]["metadata"]["name"]
        k = self.start({"KRC_TRACK_CONFIG_CHANGES": "true" if track_configs else "false"})
        k.wait_synced()
        self.kube.edit_configmap("shop", "api-config", {"mode": "slow"}, manager="kubectl-edit",
                                 time=iso(utcnow() - timedelta(minutes=3)))
        self.kube.clear_requests()
        self.crash(pod, 1)
        (alert,) = self.wait_posts(1)
        cm_requests = [r for r in self.kube.requests() if "/configmaps" in r["path"]]
        return full_text(alert), cm_requests

    def test_configmap_edited_before_the_crash_is_named_when_on(self):
        text, cm_requests = self.configmap_crash(True)
        self.assertIn("ConfigMap shop/api-config", text)
        self.assertIn("data changed", text)
        self.assertTrue(cm_requests)
        for r in cm_requests:
            self.assertEqual(r.get("method", "GET"), "GET")

    def test_configmap_is_invisible_when_off(self):
        text, cm_requests = self.configmap_crash(False)
        self.assertNotIn("api-config", text)
        self.assertEqual(cm_requests, [], "krc asked for a ConfigMap with the setting off")

    def test_configmap_asked_for_the_first_alert_only_of_an_intended_looking_crash_loop(self):
        """A crash loop of a pod whose every restart looks intended to the watch (its
        container's reported stop signal, KEP-4960; such a restart is analysed before it is
        routed) but is a liveness kill (the events say so): the incident's first alert looks
        its ConfigMap up (trackConfigChanges), its muted repeats never do (a crash loop costs
        no such request), nor does a restart that is intended (held back, never routed)."""
        self.kube.set_rbac(h.shipped_rbac_objects(
            os.path.join(h.ROOT, "deploy", "overlays", "config-changes")),
            user="system:serviceaccount:krc:krc")
        self.kube.configmap("shop", "worker-config", {"mode": "fast"},
                            manager="kubectl-create", time=iso(utcnow() - timedelta(hours=2)))
        self.kube.create_pod("shop", "worker-0", containers=[{
            "name": "app", "lifecycle": {"stopSignal": "SIGUSR1"},
            "envFrom": [{"configMapRef": {"name": "worker-config"}}]}])
        k = self.start({"KRC_TRACK_CONFIG_CHANGES": "true"})
        k.wait_synced()
        self.kube.edit_configmap("shop", "worker-config", {"mode": "slow"},
                                 manager="kubectl-edit", time=iso(utcnow() - timedelta(minutes=3)))

        def config_requests():
            return [r for r in self.kube.requests()
                    if "/configmaps" in r["path"] or "/secrets" in r["path"]]

        def liveness_kill(n):
            """The kubelet kills the container for its liveness probe: it exits 138 (128 +
            SIGUSR1, its stop signal)."""
            pod = self.kube.get_pod("shop", "worker-0")
            now = utcnow()
            self.kube.add_pod_event(pod, "Unhealthy",
                                    "Liveness probe failed: HTTP probe failed with statuscode: 500",
                                    container="app", firstTimestamp=iso(now - timedelta(seconds=9)),
                                    lastTimestamp=iso(now - timedelta(seconds=9)))
            self.kube.add_pod_event(pod, "Killing",
                                    "Container app failed liveness probe, will be restarted",
                                    type_="Normal", container="app",
                                    firstTimestamp=iso(now - timedelta(seconds=8)),
                                    lastTimestamp=iso(now - timedelta(seconds=8)))
            self.kube.restart("shop", "worker-0", "app", exit_code=138, reason="Error",
                              started_at=iso(now - timedelta(seconds=30)), finished_at=iso(now),
                              logs="serving\ncrash %d\n" % n)

        self.kube.clear_requests()
        liveness_kill(1)
        (alert,) = self.wait_posts(1)
        (d,) = k.wait_diagnosed(1)
        self.assertEqual((d["cause"], d["decision"]), ("liveness_probe_failed", "alert"))
        self.assertTrue(config_requests(), "the first alert did not look its ConfigMap up")
        self.assertIn("ConfigMap shop/worker-config", full_text(alert))

        self.kube.clear_requests()
        for n in range(2, 5):
            liveness_kill(n)
            k.wait_diagnosed(n)
        diagnosed = k.diagnosed()
        self.assertEqual([(x["cause"], x["decision"]) for x in diagnosed[1:]],
                         [("liveness_probe_failed", "muted")] * 3)
        # and one that is intended: stopped with its stop signal (no probe kill since it
        # started); held back, never routed
        time.sleep(2)
        now = utcnow()
        self.kube.restart("shop", "worker-0", "app", exit_code=138, reason="Error",
                          started_at=iso(now), finished_at=iso(now), logs="draining\n")
        k.wait_diagnosed(5)
        self.assertEqual(k.diagnosed()[4]["decision"], "intentional")
        self.assertEqual(config_requests(), [],
                         "ConfigMap or Secret asked for a repeat or an intended restart")
        self.assertEqual(len(self.posts()), 1)


class PostgresHandoverTest(Base):
    """Two replicas on one PostgreSQL history (the shared outbox): the leader dies in the
    middle of an incident and the standby, another replica, continues the same incident and
    thread; nothing is sent twice."""
    PG = None
    TMP = None

    @classmethod
    def setUpClass(cls):
        cls.TMP = tempfile.TemporaryDirectory(prefix="krc-pg-inc-")
        os.chmod(cls.TMP.name, 0o755)  # as root the server runs as `postgres`
        cls.PG = pg_server.PgServer(os.path.join(cls.TMP.name, "pg"))
        cls.PG.start()

    @classmethod
    def tearDownClass(cls):
        cls.PG.stop()
        cls.TMP.cleanup()

    def setUp(self):
        super().setUp()
        self.url = self.PG.create_database("krc_inc_%d_%d" % (os.getpid(), int(time.time())))

    def start(self, extra=None, args=(), name="krc-a"):
        env = {"KRC_DB": self.url, "KRC_DB_PASSWORD_FILE": self.PG.password_file}
        env.update(extra or {})
        return super().start(env, args, name)

    def incidents(self):
        p = subprocess.run([h.krc_binary(), "history", "incidents", "--db", self.url,
                            "--db-password-file", self.PG.password_file, "--since", "1h",
                            "--format", "json"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return sorted(json.loads(p.stdout), key=lambda x: x["id"])

    def test_handover_to_another_replica_continues_the_incident_and_thread(self):
        pod = self.deployment(replicas=1, ready=False)["pods"][0]["metadata"]["name"]
        extra = {"KRC_INCIDENT_REPLY_INTERVAL": "2s"}
        a = self.start(extra, elect(), name="krc-a")
        a.wait_log("became the leader")
        a.wait_synced()
        b = self.start(extra, elect(), name="krc-b")
        b.wait_log("standby; lease krc/krc is held by \"krc-a\"")
        for n in range(1, 4):
            self.crash(pod, n)
            a.wait_diagnosed(n)
        (parent,) = self.wait_posts(1)
        time.sleep(2.5)
        self.crash(pod, 4)
        a.wait_diagnosed(4)
        self.wait_posts(2)
        before = len(self.posts())
        a.kill()  # the leader dies mid-incident
        b.wait_log("became the leader", timeout=30)
        b.wait_synced()
        b.wait_log("open incident(s) continued from the history")
        time.sleep(2.5)
        for n in range(5, 8):
            self.crash(pod, n)
            b.wait_diagnosed(n - 4)
        self.wait_posts(before + 1)
        (inc,) = self.incidents()
        self.assertEqual(inc["restarts"], 7)
        self.assertIsNone(inc["ended_at"])
        tops = [m for m in self.posts() if not m["thread_ts"]]
        self.assertEqual([m["ts"] for m in tops], [parent["ts"]],
                         "the new leader started a new thread")
        self.assertTrue(all(m["thread_ts"] == parent["ts"] for m in self.posts()
                            if m["thread_ts"]))
        self.set_ready(pod)
        h.wait_until(lambda: [m for m in self.posts() if "Resolved" in full_text(m)],
                     30 * h.SLOWDOWN, what="the resolved message")
        time.sleep(5 * h.SLOWDOWN)
        resolved = [m for m in self.posts() if "Resolved" in full_text(m)]
        self.assertEqual(len(resolved), 1)
        self.assertEqual(resolved[0]["thread_ts"], parent["ts"])
        self.assertIn("7 restarts", full_text(resolved[0]))
        bodies = [json.dumps(m["body"], sort_keys=True) for m in self.posts()]
        self.assertEqual(len(bodies), len(set(bodies)))
        self.assertIsNotNone(self.incidents()[0]["ended_at"])

    def test_postgres_down_at_start_then_back_continues_and_ends_the_incidents(self):
        """krc starts while PostgreSQL does not answer (it connects on use): once the database
        answers, the open incidents an earlier krc left are loaded (a repeat continues the
        incident and its thread, no second alert), and the incidents opened while it was down
        end in the history too: one that ended while it was down (its record written late),
        one that ends after it came back; the resolved messages count every restart."""
        extra = {"KRC_INCIDENT_REPLY_INTERVAL": "2s"}
        api = self.deployment("api", ready=False)["pods"][0]["metadata"]["name"]
        web = self.deployment("web", ready=False)["pods"][0]["metadata"]["name"]
        db = self.deployment("db", ready=False)["pods"][0]["metadata"]["name"]
        a = self.start(extra, name="krc-a")
        a.wait_synced()
        self.crash(api, 1)
        (parent,) = self.wait_posts(1)
        h.wait_until(lambda: [i for i in self.incidents() if i["workload"] == "Deployment/api"],
                     20 * h.SLOWDOWN, what="the api incident recorded")
        self.assertEqual(a.stop(), 0)

        self.PG.stop()
        try:
            # api's restart is then outside krc-b's start-up window (whole seconds): krc-b,
            # which cannot ask the history whether it is recorded, does not report it again
            time.sleep(3)
            b = self.start(extra, ["--startup-window", "1s"], name="krc-b")
            b.wait_log("history database: ", timeout=20)
            b.wait_synced()
            # two incidents while the database is down: alerted, their records kept in memory
            self.crash(web, 1)
            self.crash(db, 1)
            b.wait_diagnosed(2)
            self.wait_posts(3)
            # web recovers and ends while the database is still down
            self.set_ready(web)
            h.wait_until(lambda: [m for m in self.posts() if "Resolved" in full_text(m)],
                         30 * h.SLOWDOWN, what="web's resolved message")
        finally:
            self.PG.start()
        # the late resume (every 5 s): the open incidents, then the outbox
        b.wait_log("undelivered notifications from before are resumed", timeout=30)
        self.assertTrue(b.logs(contains="open incident(s) continued from the history"))
        b.wait_log("restart(s) recorded late", timeout=30)
        # a repeat of api: the earlier krc's incident and thread (a reply, no second alert)
        before = len(self.posts())
        self.crash(api, 2)
        b.wait_diagnosed(3)
        (reply,) = self.wait_posts(before + 1)[before:]
        self.assertEqual(reply["thread_ts"], parent["ts"], full_text(reply)[:200])
        tops = [m for m in self.posts() if not m["thread_ts"]]
        self.assertEqual(len(tops), 3, [full_text(m)[:120] for m in tops])  # api, web, db
        # both end: one resolved message each, in its own thread, counting its restarts
        self.set_ready(api)
        self.set_ready(db)
        h.wait_until(lambda: len([m for m in self.posts() if "Resolved" in full_text(m)]) >= 3,
                     30 * h.SLOWDOWN, what="the resolved messages of api and db")
        time.sleep(3 * h.SLOWDOWN)
        resolved = [m for m in self.posts() if "Resolved" in full_text(m)]
        self.assertEqual(len(resolved), 3)
        api_resolved = [m for m in resolved if m["thread_ts"] == parent["ts"]]
        self.assertEqual(len(api_resolved), 1)
        self.assertIn("2 restarts", full_text(api_resolved[0]))
        # the history: every incident ended, none left open
        incs = h.wait_until(lambda: (lambda v: v if all(i["ended_at"] for i in v) else None)(
            self.incidents()), 20 * h.SLOWDOWN, what="every incident ended in the history")
        self.assertEqual(sorted((i["workload"], i["restarts"]) for i in incs),
                         [("Deployment/api", 2), ("Deployment/db", 1), ("Deployment/web", 1)])


if __name__ == "__main__":
    h.main()
