"""One PostgreSQL database for many replicas and clusters (issue 17), with the real binary and
a real PostgreSQL server (Debian's postgresql-15, started by tests/tools/pg_server.py as the
test user, or as `postgres` when the tests run as root):

- two krc replicas with leader election on one database; the leader is killed with kill -9 while
  Slack answers 500 and its messages wait in the shared outbox: the new leader fences the outbox
  with its Lease's transition count and posts every restart exactly once; one history;
- two "clusters" (two fake API servers, two krc with different clusterName) writing to one
  database: `krc history --cluster` and the MCP tools see both, separately and together;
- PostgreSQL stopped for a minute while restarts happen: alerts keep going, /readyz and
  krc_store_unwritten_records say so, and nothing is missing from the history once it is back;
- krc started while PostgreSQL is stopped: it starts, alerts, keeps the records in memory and
  writes them once the server answers; the message an earlier krc left pending in the outbox is
  posted then (the outbox resumed late).
Every test gets its own database on the one server of this module."""

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

import krc_harness as h
from admin import FakeKube

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import pg_server  # noqa: E402

LEASE_NS, LEASE_NAME = "krc", "krc"
DURATION, DEADLINE, RETRY = 3, 2, 1
ELECT = ["--leader-elect", "--lease-namespace", LEASE_NS, "--lease-name", LEASE_NAME,
         "--lease-duration", "%ds" % DURATION, "--lease-renew-deadline", "%ds" % DEADLINE,
         "--lease-retry-period", "%ds" % RETRY, "--watch-idle-timeout", "3s"]

PG = None
TMP = None
SERIAL = [0]


def setUpModule():
    global PG, TMP
    TMP = tempfile.TemporaryDirectory(prefix="krc-pg-it-")
    os.chmod(TMP.name, 0o755)  # as root the server runs as `postgres`, which must reach its data
    PG = pg_server.PgServer(os.path.join(TMP.name, "pg"))
    PG.start()


def tearDownModule():
    if PG is not None:
        PG.stop()
    TMP.cleanup()


def password():
    return PG.password()


def fresh_database():
    """A new empty database on the test server and its URL (no password in it)."""
    SERIAL[0] += 1
    return PG.create_database("krc_it_%d_%d" % (os.getpid(), SERIAL[0]))


def history(url, *args):
    p = subprocess.run([h.krc_binary(), "history", "--db", url, "--db-password-file",
                        PG.password_file, "--format", "json"] + list(args),
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise AssertionError("krc history --db %s failed (%d): %s" % (url, p.returncode, p.stderr))
    return json.loads(p.stdout)


class PgCase(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.procs = []
        self.url = fresh_database()

    def tearDown(self):
        for k in self.procs:
            k.kill()

    def start(self, name, args=(), kube=None, cluster="ha", webhook="alerts", env=None):
        e = {"SLACK_WEBHOOK_URL": self.slack.webhook_url(webhook), "CLUSTER_NAME": cluster,
             "MUTE_SECONDS": "0", "KRC_STORM_THRESHOLD": "0", "POD_NAME": name,
             "KRC_DB": self.url, "KRC_DB_PASSWORD_FILE": PG.password_file,
             "KRC_KUBERNETES_EVENTS": "false"}
        e.update(env or {})
        k = h.Krc((kube or self.kube).kubeconfig, list(args), e)
        k.port = k.http_port()
        k.name = name
        self.procs.append(k)
        return k

    def alerts_for(self, pod):
        return [m for m in self.slack.messages() if re.search(r"\b%s\b" % re.escape(pod),
                                                                 json.dumps(m.get("body")))]

    def assert_no_password_logged(self, k):
        self.assertNotIn(password(), k.text())


class ReplicasOnOneDatabase(PgCase):
    def test_leader_killed_while_slack_fails_every_restart_posted_once(self):
        pods = ["app-%d" % i for i in range(5)]
        for p in pods:
            self.kube.create_pod("shop", p)
        a = self.start("krc-a", ELECT)
        a.wait_log("became the leader")
        a.wait_synced()
        b = self.start("krc-b", ELECT)
        b.wait_log("standby; lease krc/krc is held by \"krc-a\"")

        # Slack fails: krc-a records three restarts and keeps retrying their messages
        self.slack.fault(type="down", status=500)
        for p in pods[:3]:
            self.kube.restart("shop", p, "app", exit_code=1, logs="boom %s\n" % p)
        a.wait_log("retrying in", timeout=30)
        h.wait_until(lambda: len(history(self.url)) == 3, 20, what="three restarts recorded")
        a.kill()  # kill -9 in the middle of sending
        rows = history(self.url)
        self.assertTrue(all(r["delivery"] == "pending" for r in rows), rows)

        # two restarts while nobody leads; krc-b takes over while Slack still fails
        for p in pods[3:]:
            self.kube.restart("shop", p, "app", exit_code=1, logs="gap %s\n" % p)
        b.wait_log("became the leader", timeout=DURATION + RETRY + 10)
        b.wait_synced()
        b.wait_log("retrying in", timeout=30)
        time.sleep(2)
        self.slack.fault(type="clear")

        self.slack.wait_messages(5, timeout=60)
        time.sleep(3)  # a window for a duplicate to show up; asserted below
        for p in pods:
            self.assertEqual(len(self.alerts_for(p)), 1, "%s: %s" % (p, b.tail(60)))
        # one history: five restarts, each once, all delivered, whoever recorded them
        h.wait_until(lambda: all(r["delivery"] == "delivered" for r in history(self.url)), 20,
                     what="every row delivered")
        rows = history(self.url)
        self.assertEqual(sorted(r["pod"] for r in rows), pods)
        self.assertTrue(all(r["cluster"] == "ha" for r in rows), rows)
        # krc-b re-detected the first three in its start-up window and found them recorded
        self.assertTrue(b.logs(contains="already recorded"), b.tail(80))
        self.assertEqual(b.stop(), 0)
        self.assert_no_password_logged(b)

    def test_a_deposed_leader_cannot_post_a_row_the_new_leader_owns(self):
        """The fence: once a newer leader has fenced the cluster with a higher Lease
        transition count, a claim with the old token is refused."""
        self.kube.create_pod("shop", "web-1")
        a = self.start("krc-a", ELECT)
        a.wait_log("became the leader")
        a.wait_synced()
        h.wait_until(lambda: PG.query("SELECT count(*) FROM krc_fences", self.url_db()).strip()
                     == "1", 20, what="the fence row written at the take-over")
        token = int(PG.query("SELECT token FROM krc_fences WHERE cluster = 'ha'",
                             self.url_db()).strip())
        # a newer leader of the same cluster (as after a take-over) raises the fence
        PG.query("UPDATE krc_fences SET token = %d WHERE cluster = 'ha'" % (token + 5),
                 self.url_db())
        self.kube.restart("shop", "web-1", "app", exit_code=1, logs="x\n")
        a.wait_log("owned by a newer leader", timeout=30)
        time.sleep(2)
        self.assertEqual(self.alerts_for("web-1"), [], "a fenced replica posted")
        rows = history(self.url)
        self.assertEqual([r["delivery"] for r in rows], ["pending"], rows)

    def url_db(self):
        return self.url.rsplit("/", 1)[1]


class TwoClustersOneDatabase(PgCase):
    def test_history_and_mcp_see_both_clusters_separately_and_together(self):
        kube2 = FakeKube()
        kube2.start()
        self.addCleanup(kube2.stop)
        kube2.config(bookmark_interval=1)
        self.kube.create_pod("shop", "eu-web")
        kube2.create_pod("shop", "us-web")
        eu = self.start("krc-eu", ["--watch-idle-timeout", "3s"], cluster="eu")
        us = self.start("krc-us", ["--watch-idle-timeout", "3s"], kube=kube2, cluster="us")
        eu.wait_synced()
        us.wait_synced()
        self.kube.restart("shop", "eu-web", "app", exit_code=137, reason="OOMKilled", logs="a\n")
        kube2.restart("shop", "us-web", "app", exit_code=1, logs="b\n")
        kube2.restart("shop", "us-web", "app", exit_code=1, logs="c\n")
        h.wait_until(lambda: len(history(self.url)) == 3, 30, what="three restarts in one history")

        self.assertEqual([r["pod"] for r in history(self.url, "--cluster", "eu")], ["eu-web"])
        self.assertEqual([r["pod"] for r in history(self.url, "--cluster", "us")],
                         ["us-web", "us-web"])
        self.assertEqual(history(self.url, "--cluster", "nowhere"), [])
        self.assertEqual(sorted(r["cluster"] for r in history(self.url)), ["eu", "us", "us"])

        mcp = subprocess.Popen([h.krc_binary(), "mcp", "--db", self.url, "--db-password-file",
                                PG.password_file], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            def call(i, name, args):
                mcp.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                            "params": {"name": name, "arguments": args,
                                                       "_meta": META}}) + "\n")
                mcp.stdin.flush()
                resp = json.loads(mcp.stdout.readline())
                self.assertFalse(resp["result"].get("isError"), resp)
                return resp["result"]["structuredContent"]

            every = call(1, "list_restarts", {})
            self.assertEqual(sorted(r["cluster"] for r in every["restarts"]), ["eu", "us", "us"])
            us_only = call(2, "list_restarts", {"cluster": "us"})
            self.assertEqual([r["pod"] for r in us_only["restarts"]], ["us-web", "us-web"])
            self.assertEqual(call(3, "restart_summary", {"cluster": "eu"})["restarts"], 1)
            self.assertEqual(call(4, "restart_summary", {})["restarts"], 3)
        finally:
            mcp.stdin.close()
            self.assertEqual(mcp.wait(timeout=20), 0, mcp.stderr.read())
            mcp.stdout.close()
            mcp.stderr.close()
        self.assertEqual(eu.stop(), 0)
        self.assertEqual(us.stop(), 0)


META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


class DatabaseDown(PgCase):
    def test_postgres_stopped_for_a_minute_alerts_continue_and_nothing_is_lost(self):
        pods = ["db-%d" % i for i in range(4)]
        for p in pods:
            self.kube.create_pod("shop", p)
        k = self.start("krc-0", ["--watch-idle-timeout", "3s"])
        k.wait_synced()
        self.kube.restart("shop", pods[0], "app", exit_code=1, logs="before\n")
        self.slack.wait_messages(1, timeout=30)
        h.wait_until(lambda: len(history(self.url)) == 1, 20, what="the first restart recorded")

        PG.stop()
        stopped = time.monotonic()
        try:
            for p in pods[1:]:
                self.kube.restart("shop", p, "app", exit_code=1, logs="while down\n")
            # alerts keep going without the database
            self.slack.wait_messages(4, timeout=60)
            h.wait_until(lambda: h.http_get(k.port, "/readyz")[0] == 503, 30,
                         what="/readyz unready while records wait")
            metrics = h.http_get(k.port, "/metrics")[1]
            m = re.search(r"^krc_store_unwritten_records (\d+)", metrics, re.M)
            self.assertTrue(m and int(m.group(1)) >= 1, metrics)
            time.sleep(max(0.0, 60 - (time.monotonic() - stopped)))  # down for a minute
        finally:
            PG.start()
        h.wait_until(lambda: h.http_get(k.port, "/readyz")[0] == 200, 60,
                     what="/readyz ready once every record is written")
        rows = history(self.url)
        self.assertEqual(sorted(r["pod"] for r in rows), pods)
        for p in pods:
            self.assertEqual(len(self.alerts_for(p)), 1, p)
        metrics = h.http_get(k.port, "/metrics")[1]
        self.assertRegex(metrics, r"(?m)^krc_store_unwritten_records 0$")
        self.assertEqual(k.stop(), 0)
        self.assert_no_password_logged(k)


class DatabaseDownAtStart(PgCase):
    def test_krc_started_while_postgres_is_stopped_writes_once_it_answers(self):
        pods = ["late-0", "late-1"]
        for p in ["old-0"] + pods:
            self.kube.create_pod("shop", p)
        # an earlier krc leaves a message pending in the outbox (Slack failing, kill -9)
        self.slack.fault(type="down", status=500)
        a = self.start("krc-a")
        a.wait_synced()
        self.kube.restart("shop", "old-0", "app", exit_code=1, logs="old\n")
        a.wait_log("retrying in", timeout=30)
        h.wait_until(lambda: len(history(self.url)) == 1, 20, what="old-0 recorded")
        a.kill()
        self.slack.fault(type="clear")

        PG.stop()
        try:
            # old-0 is then outside krc-0's start-up window (whole seconds): only the outbox has it
            time.sleep(3)
            k = self.start("krc-0", ["--startup-window", "1s"])
            k.wait_log("history database: ", timeout=20)
            k.wait_synced()
            self.assertEqual(h.http_get(k.port, "/readyz")[0], 503)
            for p in pods:
                self.kube.restart("shop", p, "app", exit_code=1, logs="while down\n")
            # alerts go out without the database
            h.wait_until(lambda: all(len(self.alerts_for(p)) == 1 for p in pods), 30,
                         what="alerts posted while PostgreSQL is down")
            metrics = h.http_get(k.port, "/metrics")[1]
            m = re.search(r"^krc_store_unwritten_records (\d+)", metrics, re.M)
            self.assertTrue(m and int(m.group(1)) >= 1, metrics)
            self.assertEqual(h.http_get(k.port, "/readyz")[0], 503)
            self.assertEqual(self.alerts_for("old-0"), [])
        finally:
            PG.start()
        h.wait_until(lambda: h.http_get(k.port, "/readyz")[0] == 200, 30,
                     what="/readyz ready once the records are written")
        h.wait_until(lambda: len(self.alerts_for("old-0")) == 1, 20,
                     what="the pending message of the earlier krc posted (late resume)")
        h.wait_until(lambda: all(r["delivery"] == "delivered" for r in history(self.url)
                                 if r["pod"] == "old-0"), 20, what="old-0 marked delivered")
        rows = history(self.url)
        self.assertEqual(sorted(r["pod"] for r in rows), sorted(["old-0"] + pods))
        time.sleep(1)  # a window for a duplicate; asserted below
        for p in ["old-0"] + pods:
            self.assertEqual(len(self.alerts_for(p)), 1, "%s: %s" % (p, k.tail(60)))
        self.assertRegex(h.http_get(k.port, "/metrics")[1],
                         r"(?m)^krc_store_unwritten_records 0$")
        self.assertEqual(k.stop(), 0)
        self.assert_no_password_logged(k)


if __name__ == "__main__":
    h.main()
