#!/usr/bin/env python3
"""Run the real `krc history` against databases written by a fixture writer
that follows the store's schema (version 9, src/store/schema.c), and `krc history incidents |
incident ID | changes` against a history written through the store API by
tests/tools/incident_seed (BUILD/tests/incident_seed next to --krc, or $KRC_INCIDENT_SEED).

    python3 test_history.py --krc /path/to/krc [unittest options]
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

KRC = None
TIMEOUT = 20

SCHEMA_V1 = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version (version) VALUES (1);
CREATE TABLE restarts (
  id INTEGER PRIMARY KEY, pod_uid TEXT NOT NULL, container TEXT NOT NULL,
  restart_count INTEGER NOT NULL, namespace TEXT NOT NULL, pod TEXT NOT NULL,
  workload_kind TEXT, workload_name TEXT, node TEXT, cause TEXT NOT NULL,
  exit_code INTEGER, signal INTEGER NOT NULL DEFAULT 0, reason TEXT,
  started_at INTEGER NOT NULL DEFAULT 0, finished_at INTEGER NOT NULL DEFAULT 0,
  detected_at INTEGER NOT NULL, decision TEXT NOT NULL, summary TEXT,
  UNIQUE (pod_uid, container, restart_count));
CREATE INDEX restarts_detected ON restarts (detected_at);
CREATE INDEX restarts_namespace ON restarts (namespace, detected_at);
CREATE INDEX restarts_cause ON restarts (cause, detected_at);
CREATE INDEX restarts_pod ON restarts (pod, detected_at);
CREATE TABLE reports (
  restart_id INTEGER PRIMARY KEY REFERENCES restarts (id) ON DELETE CASCADE,
  message TEXT, report_json TEXT);
CREATE TABLE outbox (
  id INTEGER PRIMARY KEY, restart_id INTEGER REFERENCES restarts (id) ON DELETE CASCADE,
  kind TEXT NOT NULL, destination TEXT NOT NULL, channel TEXT, thread_key TEXT,
  body TEXT NOT NULL, fallback TEXT, state TEXT NOT NULL DEFAULT 'pending',
  attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL, delivered_at INTEGER, slack_ts TEXT);
CREATE INDEX outbox_restart ON outbox (restart_id);
CREATE INDEX outbox_pending ON outbox (id) WHERE state = 'pending';
CREATE INDEX outbox_thread ON outbox (thread_key, delivered_at) WHERE slack_ts IS NOT NULL;
"""

# migration 1 -> 2 (issue 11)
SCHEMA_V2 = SCHEMA_V1 + """
ALTER TABLE restarts ADD COLUMN confidence TEXT;
UPDATE schema_version SET version = 2;
"""

NEXT_STEP = "Raise the memory limit of %s or find what grows its memory"


# migration 2 -> 3 (issue 12): the restarts table rebuilt with a restart's identity (its
# termination) as the key, as schema.c's migrate_identity does.
SCHEMA_V3 = SCHEMA_V2 + """
CREATE TABLE restarts_new (
  id INTEGER PRIMARY KEY, pod_uid TEXT NOT NULL, container TEXT NOT NULL,
  restart_count INTEGER NOT NULL, namespace TEXT NOT NULL, pod TEXT NOT NULL,
  workload_kind TEXT, workload_name TEXT, node TEXT, cause TEXT NOT NULL,
  exit_code INTEGER, signal INTEGER NOT NULL DEFAULT 0, reason TEXT,
  started_at INTEGER NOT NULL DEFAULT 0, finished_at INTEGER NOT NULL DEFAULT 0,
  detected_at INTEGER NOT NULL, decision TEXT NOT NULL, summary TEXT, confidence TEXT,
  identity TEXT NOT NULL, UNIQUE (pod_uid, container, identity));
INSERT INTO restarts_new SELECT id, pod_uid, container, restart_count, namespace, pod,
  workload_kind, workload_name, node, cause, exit_code, signal, reason, started_at,
  finished_at, detected_at, decision, summary, confidence, CASE WHEN finished_at > 0
  THEN 't' || finished_at || '//' || restart_count ELSE 'c' || restart_count END
  FROM restarts;
DROP TABLE restarts;
ALTER TABLE restarts_new RENAME TO restarts;
CREATE INDEX restarts_detected ON restarts (detected_at);
CREATE INDEX restarts_namespace ON restarts (namespace, detected_at);
CREATE INDEX restarts_cause ON restarts (cause, detected_at);
CREATE INDEX restarts_pod ON restarts (pod, detected_at);
UPDATE schema_version SET version = 3;
"""

# migration 3 -> 4 (issue 14): the GPUs column and the MCP tools' covering indexes.
SCHEMA_V4 = SCHEMA_V3 + """
ALTER TABLE restarts ADD COLUMN gpus INTEGER NOT NULL DEFAULT 0;
CREATE INDEX restarts_window ON restarts (detected_at, namespace, workload_kind,
  workload_name, pod, pod_uid, cause, node, gpus);
CREATE INDEX restarts_workload ON restarts (workload_name, detected_at);
UPDATE schema_version SET version = 4;
"""

# migration 4 -> 5 (issue 15): the outbox states 'withdrawn' (an alert folded into a storm
# summary before it was posted) and 'superseded' (a new leader found the row posted by the
# previous leader); schema 4 wrote such rows as 'failed' with these last errors.
# (This fixture's outbox has no CHECK constraint, so the rebuild of schema.c is not needed.)
SCHEMA_V5 = SCHEMA_V4 + """
UPDATE outbox SET state = 'withdrawn', attempts = 0, last_error = NULL
  WHERE state = 'failed' AND last_error = 'withdrawn: grouped into an alert-storm summary';
UPDATE outbox SET state = 'superseded', attempts = 0, last_error = NULL
  WHERE state = 'failed' AND last_error = 'superseded: the previous leader posted this restart';
UPDATE schema_version SET version = 5;
"""

# migration 5 -> 6 (issue 17): the cluster that recorded a restart, in the covering index too.
SCHEMA_V6 = SCHEMA_V5 + """
ALTER TABLE restarts ADD COLUMN cluster TEXT NOT NULL DEFAULT '';
DROP INDEX restarts_window;
CREATE INDEX restarts_window ON restarts (detected_at, namespace, workload_kind,
  workload_name, pod, pod_uid, cause, node, gpus, cluster);
UPDATE schema_version SET version = 6;
"""

# migration 6 -> 7: the delivered message's reference is not Slack's alone.
SCHEMA_V7 = SCHEMA_V6 + """
ALTER TABLE outbox RENAME COLUMN slack_ts TO message_ref;
UPDATE schema_version SET version = 7;
"""

# migration 7 -> 8 (issue 26): whether the diagnosis was intentional, in the covering index too.
SCHEMA_V8 = SCHEMA_V7 + """
ALTER TABLE restarts ADD COLUMN intentional INTEGER NOT NULL DEFAULT 0;
DROP INDEX restarts_window;
CREATE INDEX restarts_window ON restarts (detected_at, namespace, workload_kind,
  workload_name, pod, pod_uid, cause, node, gpus, cluster, intentional);
UPDATE schema_version SET version = 8;
"""

# migration 8 -> 9 (issue 27): incidents and changes (schema.c's INCIDENTS_V9).
SCHEMA_V9 = SCHEMA_V8 + """
CREATE TABLE incidents (
  id INTEGER PRIMARY KEY, cluster TEXT NOT NULL DEFAULT '', namespace TEXT NOT NULL,
  workload_kind TEXT NOT NULL, workload_name TEXT NOT NULL, container TEXT NOT NULL,
  cause TEXT NOT NULL, restarts BIGINT NOT NULL DEFAULT 1, first_restart_id BIGINT,
  latest_restart_id BIGINT, first_at BIGINT NOT NULL, last_at BIGINT NOT NULL, ended_at BIGINT,
  thread_key TEXT, last_reply_at BIGINT NOT NULL DEFAULT 0,
  last_update_at BIGINT NOT NULL DEFAULT 0, told_restarts BIGINT NOT NULL DEFAULT 0);
CREATE UNIQUE INDEX incidents_open ON incidents (cluster, namespace, workload_kind,
  workload_name, container, cause) WHERE ended_at IS NULL;
CREATE INDEX incidents_namespace ON incidents (namespace, id);
CREATE INDEX incidents_workload ON incidents (workload_name, id);
CREATE INDEX incidents_first ON incidents (first_restart_id);
CREATE INDEX incidents_latest ON incidents (latest_restart_id);
CREATE INDEX incidents_ended ON incidents (ended_at) WHERE ended_at IS NOT NULL;
ALTER TABLE restarts ADD COLUMN incident_id BIGINT;
CREATE INDEX restarts_incident ON restarts (incident_id);
CREATE TABLE changes (
  id INTEGER PRIMARY KEY, cluster TEXT NOT NULL DEFAULT '', namespace TEXT NOT NULL,
  kind TEXT NOT NULL, name TEXT NOT NULL, revision TEXT NOT NULL, at BIGINT NOT NULL,
  manager TEXT, summary TEXT, detail_json TEXT, recorded_at BIGINT NOT NULL,
  UNIQUE (cluster, namespace, kind, name, revision));
CREATE INDEX changes_recorded ON changes (recorded_at);
CREATE INDEX changes_object ON changes (namespace, kind, name, at);
UPDATE schema_version SET version = 9;
"""

def report_doc(ns, pod, container, cause, log_lines=40):
    return {
        "version": 1,
        "pod": {"namespace": ns, "name": pod, "uid": "uid-" + pod, "node": "node-1",
                "owner": {"kind": "ReplicaSet", "name": "web-5d9f"},
                "workload": {"kind": "Deployment", "name": "web"}, "created_at": None,
                "phase": "Running", "reason": None, "message": None,
                "restart_policy": "Always", "grace_period": 30, "slack_channel": None,
                "labels": {"app": "web"}, "annotations": {}},
        "diagnosis": {"container": container, "is_init": False, "is_sidecar": False,
                      "cause": cause, "has_termination": True, "exit_code": 137,
                      "signal": 9, "signal_name": "SIGKILL", "reason": "OOMKilled",
                      "restart_count": 3, "started_at": "2026-12-02T17:20:00Z",
                      "finished_at": "2026-12-02T17:30:00Z", "gpus": 0,
                      "summary": "container %s was OOM-killed" % container,
                      "evidence": ["lastState.terminated.reason is OOMKilled",
                                   "memory limit 256Mi"]},
        "containers": [{"name": container, "is_init": False, "is_sidecar": False,
                        "image": "shop/web:1.2", "ready": False, "restart_count": 3,
                        "state": "waiting", "state_reason": "CrashLoopBackOff",
                        "state_message": "back-off 40s restarting failed container",
                        "state_started_at": None,
                        "last": {"exit_code": 137, "signal": 0, "reason": "OOMKilled",
                                 "message": None, "started_at": None, "finished_at": None,
                                 "container_id": "containerd://abc"},
                        "limits": {"memory": "256Mi"}, "requests": {},
                        "probes": {"liveness": True, "readiness": False, "startup": False},
                        "termination_message_policy": "File"}],
        "events": [{"type": "Warning", "reason": "BackOff",
                    "message": "Back-off restarting failed container", "count": 5,
                    "first": "2026-12-02T17:00:00Z", "last": "2026-12-02T17:30:00Z",
                    "object": {"kind": "Pod", "namespace": ns, "name": pod},
                    "field_path": "spec.containers{%s}" % container,
                    "source": {"component": "kubelet", "host": "node-1"}}],
        "node": {"name": "node-1",
                 "conditions": [{"type": "MemoryPressure", "status": "True",
                                 "reason": "KubeletHasInsufficientMemory",
                                 "message": "kubelet has insufficient memory available"}],
                 "capacity": {}, "allocatable": {}, "kubelet_version": "v1.31.2",
                 "container_runtime_version": None, "kernel_version": None,
                 "os_image": None, "unschedulable": False},
        "notes": ["previous log cut to the last 1000 lines"],
        "log": {"container": container, "bytes": 4000, "absent": False, "empty": False,
                "truncated": True, "omitted_bytes": 0,
                "text": "\n".join("line %d of the log tail" % i for i in range(log_lines))},
    }


def add_next_step(doc, confidence):
    """The issue-11 keys of the diagnosis, as report_json writes them."""
    d = doc["diagnosis"]
    d["confidence"] = confidence
    d["unchecked"] = ["no pod events were available, so a liveness kill cannot be ruled out"]
    d["next_step"] = NEXT_STEP % d["container"]
    d["commands"] = ["kubectl logs -n %s %s -c %s --previous"
                     % (doc["pod"]["namespace"], doc["pod"]["name"], d["container"]),
                     "kubectl describe node node-1"]
    return doc


class Fixture:
    """Writes a krc database the way `krc run` would."""

    def __init__(self, path, schema_version=9):
        self.db = sqlite3.connect(path)
        self.schema = schema_version
        self.db.executescript({1: SCHEMA_V1, 2: SCHEMA_V2, 3: SCHEMA_V3, 4: SCHEMA_V4,
                               5: SCHEMA_V5, 6: SCHEMA_V6, 7: SCHEMA_V7,
                               8: SCHEMA_V8}.get(schema_version, SCHEMA_V9))
        if schema_version not in (1, 2, 3, 4, 5, 6, 7, 8, 9):
            self.db.execute("UPDATE schema_version SET version = ?", (schema_version,))
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.commit()

    def restart(self, ns, pod, container="app", count=1, detected=None, cause="oom_killed",
                decision="alert", exit_code=137, signal=9, message=None, report=True,
                delivery=None, attempts=0, last_error=None, confidence="high", edit=None):
        """confidence None: a restart recorded before schema 2 (no column
        value, no next step in its report). edit(doc) may change the report."""
        detected = int(time.time()) if detected is None else detected
        doc = report_doc(ns, pod, container, cause)
        if confidence is not None:
            add_next_step(doc, confidence)
        if edit is not None:
            edit(doc)
        doc = json.dumps(doc) if report else None
        cols = ("pod_uid, container, restart_count, namespace, pod, workload_kind, "
                "workload_name, node, cause, exit_code, signal, reason, started_at, "
                "finished_at, detected_at, decision, summary")
        vals = ("uid-" + pod, container, count, ns, pod, "Deployment", "web", "node-1", cause,
                exit_code, signal, "OOMKilled", detected - 600, detected - 2, detected, decision,
                "container %s was OOM-killed" % container)
        if confidence is not None:
            cols += ", confidence"
            vals += (confidence,)
        if self.schema >= 3:
            cols += ", identity"
            vals += ("t%d//%d" % (detected - 2, count),)
        cur = self.db.execute("INSERT INTO restarts (%s) VALUES (%s)"
                              % (cols, ",".join("?" * len(vals))), vals)
        rid = cur.lastrowid
        self.db.execute("INSERT INTO reports (restart_id, message, report_json) VALUES (?,?,?)",
                        (rid, message, doc))
        if delivery is not None:
            self.db.execute(
                "INSERT INTO outbox (restart_id, kind, destination, channel, thread_key, body, "
                "fallback, state, attempts, last_error, created_at, updated_at, delivered_at, "
                "%s) VALUES (?, 'alert', 'webhook:default', '#alerts', ?, ?, NULL, ?, ?, "
                "?, ?, ?, ?, ?)" % ("message_ref" if self.schema >= 7 else "slack_ts"),
                (rid, ns + "/" + pod, json.dumps({"text": message or "alert"}), delivery,
                 attempts, last_error, detected, detected + 5,
                 detected + 5 if delivery == "delivered" else None,
                 "1700000000.000100" if delivery == "delivered" else None))
        return rid

    def close(self):
        self.db.commit()
        self.db.close()


def run(args, env=None, check_rc=None):
    e = dict(os.environ)
    e.pop("KRC_DB", None)
    if env:
        e.update(env)
    p = subprocess.run([KRC, "history"] + args, capture_output=True, text=True,
                       timeout=TIMEOUT, env=e)
    if check_rc is not None and p.returncode != check_rc:
        raise AssertionError("krc history %s: exit %d, expected %d\nstdout: %s\nstderr: %s" %
                             (args, p.returncode, check_rc, p.stdout, p.stderr))
    return p


class HistoryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="krc-history-")
        self.path = os.path.join(self.tmp.name, "krc.db")
        self.now = int(time.time())

    def tearDown(self):
        self.tmp.cleanup()

    def populate(self):
        f = Fixture(self.path)
        ids = {}
        ids["old"] = f.restart("shop", "web-1", count=1, detected=self.now - 3 * 86400,
                               delivery="delivered", confidence=None)
        ids["web"] = f.restart("shop", "web-1", count=2, detected=self.now - 1800,
                               message="*OOMKilled* web-1 &amp; friends &lt;3",
                               delivery="delivered", attempts=2)
        ids["job"] = f.restart("batch", "job-7", count=4, detected=self.now - 600,
                               cause="app_error", exit_code=1, signal=0, decision="muted",
                               confidence="medium")
        ids["worker"] = f.restart("shop", "worker-2", count=9, detected=self.now - 60,
                                  cause="liveness_probe_failed", delivery="pending", attempts=3,
                                  last_error="HTTP 500 from Slack, retrying")
        f.close()
        return ids

    def test_table_newest_first(self):
        ids = self.populate()
        p = run(["--db", self.path], check_rc=0)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0].split(), ["ID", "TIME", "(UTC)", "NAMESPACE/POD", "CONTAINER",
                                            "RESTARTS", "EXIT", "CAUSE", "CONFIDENCE",
                                            "DECISION/DELIVERY"])
        rows = [ln.split() for ln in lines[1:]]
        self.assertEqual([int(r[0]) for r in rows],
                         [ids["worker"], ids["job"], ids["web"], ids["old"]])
        conf = lines[0].index("CONFIDENCE")
        self.assertEqual([ln[conf:].split()[0] for ln in lines[1:]],
                         ["high", "medium", "high", "-"])
        worker = lines[1]
        self.assertIn("shop/worker-2", worker)
        self.assertIn("liveness_probe_failed", worker)
        self.assertIn("alert/pending (3 attempts)", worker)
        self.assertIn("137 (SIGKILL)", lines[3])
        self.assertIn("alert/delivered", lines[3])
        self.assertIn("muted", lines[2])
        # time column: "YYYY-MM-DD HH:MM:SS" in UTC
        t = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(self.now - 60))
        self.assertIn(t, worker)

    def test_withdrawn_alert_is_not_a_failure(self):
        """An alert folded into a storm summary before it was posted reads as withdrawn, in the
        table, the JSON and the detail view: never as failed."""
        f = Fixture(self.path)
        rid = f.restart("batch", "job-3", detected=self.now - 30, cause="killed",
                        decision="grouped", delivery="withdrawn")
        f.close()
        p = run(["--db", self.path], check_rc=0)
        self.assertIn("grouped/withdrawn", p.stdout)
        self.assertNotIn("failed", p.stdout)
        self.assertNotIn("attempt", p.stdout)
        p = run(["--db", self.path, "--format", "json"], check_rc=0)
        self.assertEqual(json.loads(p.stdout)[0]["delivery"], "withdrawn")
        p = run(["show", str(rid), "--db", self.path], check_rc=0)
        self.assertIn("withdrawn, 0 attempts", p.stdout)
        self.assertIn("not posted: grouped into the alert-storm summary", p.stdout)

    def test_superseded_alert_is_not_a_failure(self):
        """A row that a new leader found posted by the previous leader reads as superseded, in
        the table, the JSON and the detail view: never as failed."""
        f = Fixture(self.path)
        rid = f.restart("shop", "web-7", detected=self.now - 30, cause="app_error",
                        decision="alert", delivery="superseded")
        f.close()
        p = run(["--db", self.path], check_rc=0)
        self.assertIn("alert/superseded", p.stdout)
        self.assertNotIn("failed", p.stdout)
        self.assertNotIn("attempt", p.stdout)
        p = run(["--db", self.path, "--format", "json"], check_rc=0)
        self.assertEqual(json.loads(p.stdout)[0]["delivery"], "superseded")
        p = run(["show", str(rid), "--db", self.path], check_rc=0)
        self.assertIn("superseded, 0 attempts", p.stdout)
        self.assertIn("not posted by this replica: the previous leader posted this restart",
                      p.stdout)

    def test_filters_json(self):
        ids = self.populate()

        def ids_of(*args):
            p = run(["--db", self.path, "--format", "json"] + list(args), check_rc=0)
            return [r["id"] for r in json.loads(p.stdout)]

        self.assertEqual(ids_of(), [ids["worker"], ids["job"], ids["web"], ids["old"]])
        self.assertEqual(ids_of("--namespace", "shop"), [ids["worker"], ids["web"], ids["old"]])
        self.assertEqual(ids_of("--namespace=batch"), [ids["job"]])
        self.assertEqual(ids_of("--pod", "w"), [ids["worker"], ids["web"], ids["old"]])
        self.assertEqual(ids_of("--pod", "web"), [ids["web"], ids["old"]])
        self.assertEqual(ids_of("--pod", "eb"), [])
        self.assertEqual(ids_of("--cause", "app_error"), [ids["job"]])
        self.assertEqual(ids_of("--since", "1h"), [ids["worker"], ids["job"], ids["web"]])
        self.assertEqual(ids_of("--since", "15m"), [ids["worker"], ids["job"]])
        self.assertEqual(ids_of("--since", "1h30m", "--namespace", "shop"),
                         [ids["worker"], ids["web"]])
        self.assertEqual(ids_of("--limit", "2"), [ids["worker"], ids["job"]])
        self.assertEqual(ids_of("--since", "1d", "--cause", "oom_killed"), [ids["web"]])
        # an RFC 3339 time works as --since too (the same parser as the MCP tools' since)
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.now - 15 * 60))
        self.assertEqual(ids_of("--since", at), [ids["worker"], ids["job"]])
        at = time.strftime("%Y-%m-%dT%H:%M:%S+01:00", time.gmtime(self.now - 15 * 60 + 3600))
        self.assertEqual(ids_of("--since", at), [ids["worker"], ids["job"]])
        p = run(["--db", self.path, "--format", "json", "--pod", "worker"], check_rc=0)
        row = json.loads(p.stdout)[0]
        self.assertEqual(row["namespace"], "shop")
        self.assertEqual(row["restart_count"], 9)
        self.assertEqual(row["delivery"], "pending")
        self.assertEqual(row["attempts"], 3)
        self.assertEqual(row["decision"], "alert")
        self.assertEqual(row["confidence"], "high")
        self.assertEqual(row["workload"], {"kind": "Deployment", "name": "web"})
        self.assertEqual(row["detected_at"], self.now - 60)
        self.assertTrue(row["time"].endswith("Z"))
        p = run(["--db", self.path, "--namespace", "nope"], check_rc=0)
        self.assertIn("no restarts recorded that match", p.stdout)

    def test_show_text(self):
        ids = self.populate()
        p = run(["show", str(ids["web"]), "--db", self.path], check_rc=0)
        out = p.stdout
        self.assertIn("Restart #%d" % ids["web"], out)
        self.assertIn("shop/web-1 container app, restart 2", out)
        # the Slack text, mrkdwn entities decoded
        self.assertIn("*OOMKilled* web-1 & friends <3", out)
        self.assertIn("Cause:      oom_killed (confidence: high)\n", out)
        self.assertIn("Next step:  " + NEXT_STEP % "app" + "\n", out)
        self.assertIn("Commands:\n  $ kubectl logs -n shop web-1 -c app --previous\n"
                      "  $ kubectl describe node node-1\n", out)
        self.assertIn("Not checked:\n  - no pod events were available, so a liveness kill "
                      "cannot be ruled out\n", out)
        self.assertIn("lastState.terminated.reason is OOMKilled", out)  # evidence
        self.assertIn("Back-off restarting failed container", out)  # events
        self.assertIn("MemoryPressure=True", out)  # node
        self.assertIn("previous log cut to the last 1000 lines", out)  # notes
        self.assertIn("line 39 of the log tail", out)  # log
        self.assertIn("delivered", out)
        self.assertIn("2 attempts", out)
        self.assertIn("webhook:default", out)
        p = run(["show", str(ids["worker"]), "--db", self.path], check_rc=0)
        self.assertIn("pending, 3 attempts", p.stdout)
        self.assertIn("last error: HTTP 500 from Slack, retrying", p.stdout)
        p = run(["show", str(ids["job"]), "--db", self.path], check_rc=0)
        self.assertIn("nothing to send (decision muted)", p.stdout)
        self.assertIn("Cause:      app_error (confidence: medium)\n", p.stdout)
        # recorded before schema 2: no confidence, no next step, and no claim of one
        p = run(["show", str(ids["old"]), "--db", self.path], check_rc=0)
        self.assertIn("Cause:      oom_killed\n", p.stdout)
        self.assertNotIn("confidence", p.stdout)
        self.assertNotIn("Next step", p.stdout)
        self.assertNotIn("Commands:", p.stdout)

    def test_show_json(self):
        ids = self.populate()
        p = run(["show", str(ids["worker"]), "--db", self.path, "--format", "json"], check_rc=0)
        doc = json.loads(p.stdout)
        self.assertEqual(doc["id"], ids["worker"])
        self.assertEqual(doc["report"]["diagnosis"]["cause"], "liveness_probe_failed")
        self.assertEqual(doc["confidence"], "high")
        self.assertEqual(doc["report"]["diagnosis"]["next_step"], NEXT_STEP % "app")
        self.assertEqual(len(doc["report"]["diagnosis"]["commands"]), 2)
        self.assertEqual(len(doc["notifications"]), 1)
        n = doc["notifications"][0]
        self.assertEqual(n["state"], "pending")
        self.assertEqual(n["attempts"], 3)
        self.assertEqual(n["destination"], "webhook:default")
        self.assertEqual(n["body"], {"text": "alert"})

    def test_errors(self):
        missing = os.path.join(self.tmp.name, "nothing", "krc.db")
        p = run(["--db", missing], check_rc=1)
        self.assertIn("no history at %s: krc run has not recorded anything yet" % missing,
                      p.stderr)
        self.assertFalse(os.path.exists(os.path.dirname(missing)))  # read-only: creates nothing
        # KRC_DB is the default
        p = run([], env={"KRC_DB": missing}, check_rc=1)
        self.assertIn(missing, p.stderr)
        garbage = os.path.join(self.tmp.name, "garbage.db")
        with open(garbage, "wb") as fh:
            fh.write(os.urandom(4096))
        p = run(["--db", garbage], check_rc=1)
        self.assertIn(garbage, p.stderr)
        self.assertIn("corrupt", p.stderr)
        newer = os.path.join(self.tmp.name, "newer.db")
        Fixture(newer, schema_version=10).close()
        p = run(["--db", newer], check_rc=1)
        self.assertIn("newer", p.stderr)
        self.assertIn(newer, p.stderr)
        # a version-1 database that krc run has not migrated yet: read-only
        # history cannot migrate it and says so
        older = os.path.join(self.tmp.name, "v1.db")
        Fixture(older, schema_version=1).close()
        p = run(["--db", older], check_rc=1)
        self.assertIn("older", p.stderr)
        self.assertIn(older, p.stderr)
        self.populate()
        p = run(["show", "999", "--db", self.path], check_rc=1)
        self.assertIn("no restart with id 999", p.stderr)
        for args in (["--limit", "0"], ["--limit", "x"], ["--cause", "oom"],
                     ["--since", "soon"], ["--since", "0"], ["--since", "2026-13-01T00:00:00Z"],
                     ["--since", "2026-12-03 08:00:00"], ["--format", "yaml"],
                     ["--bogus"], ["--db"], ["show"], ["show", "abc"], ["show", "1", "2"],
                     ["show", "1", "--format", "table"], ["show", "1", "--pod", "x"],
                     ["extra"], ["--pod", "a", "--pod", "b"], ["--namespace="]):
            p = run(["--db", self.path] + args)
            self.assertEqual(p.returncode, 2, "%s: %s" % (args, p.stderr))
            self.assertTrue(p.stderr.strip(), args)
        p = run(["--cause", "oom", "--db", self.path], check_rc=2)
        self.assertIn("oom_killed", p.stderr)  # lists the valid codes

    def test_cluster_and_database_url(self):
        self.populate()
        # every JSON row names its cluster: "" for one unnamed cluster (a plain SQLite file)
        rows = json.loads(run(["--db", self.path, "--format", "json"], check_rc=0).stdout)
        self.assertEqual([r["cluster"] for r in rows], [""] * 4)
        # the table of one SQLite file is as before: no CLUSTER column
        p = run(["--db", self.path], check_rc=0)
        self.assertTrue(p.stdout.startswith("ID  TIME (UTC)"), p.stdout)
        self.assertNotIn("CLUSTER", p.stdout)
        p = run(["show", "1", "--db", self.path], check_rc=0)
        self.assertNotIn("Cluster:", p.stdout)
        # --cluster is a list option with a value
        run(["--db", self.path, "--cluster", "eu-1"], check_rc=0)
        for args in (["show", "1", "--cluster", "eu-1"], ["--cluster="], ["--cluster"]):
            p = run(["--db", self.path] + args)
            self.assertEqual(p.returncode, 2, "%s: %s" % (args, p.stderr))
        # a URL is named without its password (here it cannot be opened: nothing listens on port
        # 1, or PostgreSQL is not built in)
        url = "postgres://krc:hunter2@127.0.0.1:1/krc?sslmode=disable&password=hunter3"
        for p in (run(["--db", url], check_rc=1), run([], env={"KRC_DB": url}, check_rc=1)):
            self.assertIn("postgres://krc:****@127.0.0.1:1/krc?sslmode=disable&password=****",
                          p.stderr)
            self.assertNotIn("hunter", p.stderr + p.stdout)
        # a password file is for a URL; the variable of a pod does not stop a local file
        pw = os.path.join(self.tmp.name, "pw")
        with open(pw, "w") as fh:
            fh.write("hunter2\n")
        p = run(["--db", self.path, "--db-password-file", pw], check_rc=1)
        self.assertIn("--db-password-file %s is for a PostgreSQL URL" % pw, p.stderr)
        run(["--db", self.path], env={"KRC_DB_PASSWORD_FILE": pw}, check_rc=0)
        p = run(["--db", url, "--db-password-file", pw], check_rc=1)
        self.assertNotIn("hunter", p.stderr + p.stdout)

    def test_terminal_safe_and_read_only(self):
        def evil(doc):
            # every text of the report the show output prints, with escape sequences, C1
            # controls (U+009B is an 8-bit CSI) and a bidirectional override
            doc["node"]["name"] = "node\x1b[31m-1"
            doc["node"]["kubelet_version"] = "v1\u009b2J"
            doc["log"]["container"] = "app\x1b[2J"
            doc["log"]["cut"] = {"note": "cut \x1b]0;title\x07here"}
            doc["log"]["text"] = "line \x1b[1mbold\x1b[0m\r\nfake\u202eline"
            doc["events"][0]["message"] = "event \x1b[8mhidden"
        f = Fixture(self.path)
        f.restart("shop", "evil\x1b]0;pwned\x07-pod", message="hi \x1b[2J there",
                  decision="alert\x1b[5m", edit=evil)
        f.close()
        before = os.stat(self.path)
        p = run(["--db", self.path], check_rc=0)
        self.assertNotIn("\x1b", p.stdout)
        p = run(["show", "1", "--db", self.path], check_rc=0)
        for c in ("\x1b", "\x07", "\x9b", "\u009b", "\u202e", "\r"):
            self.assertNotIn(c, p.stdout, repr(c))
        # shown as visible symbols (Control Pictures: U+241B for ESC, U+2407 for BEL), not
        # removed, so a reader sees that the name holds them
        self.assertIn("hi \u241b[2J there", p.stdout)
        self.assertIn("shop/evil\u241b]0;pwned\u2407-pod container app", p.stdout)
        self.assertIn("Node node\u241b[31m-1: kubelet v1\ufffd2J", p.stdout)
        self.assertIn("Previous log of app\u241b[2J (4000 bytes", p.stdout)
        self.assertIn("(cut \u241b]0;title\u2407here)", p.stdout)
        self.assertIn("| line \u241b[1mbold\u241b[0m\n  | fake\ufffdline", p.stdout)
        self.assertIn("event \u241b[8mhidden", p.stdout)
        self.assertIn("nothing to send (decision alert\u241b[5m)", p.stdout)
        after = os.stat(self.path)
        self.assertEqual(before.st_mtime_ns, after.st_mtime_ns)
        self.assertEqual(before.st_size, after.st_size)

    def test_reads_while_a_writer_holds_the_lock(self):
        self.populate()
        writer = sqlite3.connect(self.path)
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("DELETE FROM restarts")  # not committed: readers see the old rows
        try:
            p = run(["--db", self.path, "--format", "json"], check_rc=0)
            self.assertEqual(len(json.loads(p.stdout)), 4)
        finally:
            writer.rollback()
            writer.close()

    def test_since_1h_over_10000_rows(self):
        f = Fixture(self.path)
        doc = json.dumps(report_doc("shop", "web", "app", "oom_killed", log_lines=200))
        rows = []
        for i in range(10000):
            rows.append(("uid-%d" % (i % 500), "app", i, "ns-%d" % (i % 20), "web-%d" % (i % 500),
                         "oom_killed" if i % 3 else "app_error", self.now - (10000 - i) * 30 + 15,
                         doc))
        for i, row in enumerate(rows):
            f.db.execute(
                "INSERT INTO restarts (id, pod_uid, container, restart_count, namespace, pod, "
                "cause, detected_at, decision, identity) VALUES (?,?,?,?,?,?,?,?, 'alert', ?)",
                (i + 1,) + row[:-1] + ("c%d" % row[2],))
            f.db.execute("INSERT INTO reports (restart_id, report_json) VALUES (?, ?)",
                         (i + 1, row[-1]))
        f.close()
        best = None
        for _ in range(3):
            t0 = time.monotonic()
            p = run(["--db", self.path, "--since", "1h", "--limit", "1000", "--format", "json"],
                    check_rc=0)
            elapsed = time.monotonic() - t0
            best = elapsed if best is None else min(best, elapsed)
        self.assertEqual(len(json.loads(p.stdout)), 120)  # 30 s apart, the last hour
        # the whole process, sanitizers included; bench_store measures the query alone
        self.assertLess(best, 1.0)
        print("  krc history --since 1h over 10,000 rows: %.0f ms (whole process)" %
              (best * 1000), file=sys.stderr)


def incident_seed():
    """tests/tools/incident_seed: next to --krc (BUILD/tests/), or $KRC_INCIDENT_SEED."""
    path = os.environ.get("KRC_INCIDENT_SEED") or os.path.join(os.path.dirname(KRC), "tests",
                                                               "incident_seed")
    if not os.access(path, os.X_OK):
        raise AssertionError("%s is missing: build the incident_seed target (KRC_TESTS=ON)"
                             % path)
    return path


RFC3339 = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"


class IncidentsTest(unittest.TestCase):
    """krc history incidents | incident ID | changes (issue 27) on a history that the store
    API wrote: incidents (one open across three pods, one ended) and recorded changes."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="krc-history-incidents-")
        self.path = os.path.join(self.tmp.name, "krc.db")
        p = subprocess.run([incident_seed(), self.path], capture_output=True, text=True,
                           timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.ids = json.loads(p.stdout)

    def tearDown(self):
        self.tmp.cleanup()

    def incidents(self, *args):
        p = run(["incidents", "--db", self.path, "--format", "json"] + list(args), check_rc=0)
        return json.loads(p.stdout)

    def test_incidents_json_has_the_issue_keys(self):
        rows = self.incidents()
        ids = self.ids
        self.assertEqual([r["id"] for r in rows],
                         [ids["trainer"], ids["dns"], ids["canary"], ids["api"]])
        for r in rows:
            for key in ("id", "namespace", "workload", "container", "cause", "restarts",
                        "first_at", "last_at", "ended_at"):
                self.assertIn(key, r)
            self.assertRegex(r["first_at"], RFC3339)
            self.assertRegex(r["last_at"], RFC3339)
        api = rows[-1]
        self.assertEqual((api["namespace"], api["workload"], api["container"], api["cause"],
                          api["restarts"], api["ended_at"]),
                         ("shop", "Deployment/api", "app", "oom_killed", 3, None))
        self.assertEqual((api["first_restart_id"], api["latest_restart_id"]),
                         (ids["api_first"], ids["api_latest"]))
        trainer = rows[0]
        self.assertEqual(trainer["workload"], "Pod/trainer-0")
        self.assertRegex(trainer["ended_at"], RFC3339)
        # open and recent: --open, --since (open then, or ended since), --namespace, --limit
        self.assertEqual([r["id"] for r in self.incidents("--open")],
                         [ids["dns"], ids["canary"], ids["api"]])
        self.assertEqual([r["id"] for r in self.incidents("--since", "30m")],
                         [ids["dns"], ids["canary"], ids["api"]])
        self.assertEqual(len(self.incidents("--since", "1d")), 4)
        self.assertEqual([r["id"] for r in self.incidents("--namespace", "shop", "--limit", "1")],
                         [ids["canary"]])

    def test_incidents_table(self):
        p = run(["incidents", "--db", self.path], check_rc=0)
        lines = p.stdout.splitlines()
        self.assertRegex(lines[0], r"^ID +NAMESPACE +WORKLOAD +CONTAINER +CAUSE +RESTARTS +"
                                   r"FIRST \(UTC\) +LAST \(UTC\) +ENDED \(UTC\)$")
        self.assertEqual(len(lines), 5)
        self.assertIn("Deployment/api", lines[4])
        self.assertTrue(lines[4].endswith("open"), lines[4])
        p = run(["incidents", "--db", self.path, "--namespace", "nowhere"], check_rc=0)
        self.assertRegex(p.stdout, r"^no incidents that match open or ended since "
                                   r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\n$")

    def test_incident_keeps_the_first_failure(self):
        p = run(["incident", str(self.ids["api"]), "--db", self.path], check_rc=0)
        out = p.stdout
        self.assertIn("Deployment shop/api, container app", out)
        self.assertIn("3 (first restart #%d, latest #%d" % (self.ids["api_first"],
                                                            self.ids["api_latest"]), out)
        self.assertIn("rolled out revision 12", out)
        self.assertIn("memory limit 1Gi \u2192 512Mi", out)
        self.assertIn("Node node-a", out)
        self.assertNotIn("node-z", out)
        self.assertLess(out.index("FIRST-CRASH-LOG"), out.index("LATEST-CRASH-LOG"))
        self.assertIn("alert to webhook:default: delivered", out)
        # the same as JSON
        doc = json.loads(run(["incident", str(self.ids["api"]), "--db", self.path, "--format",
                              "json"], check_rc=0).stdout)
        self.assertEqual(doc["incident"]["id"], self.ids["api"])
        self.assertEqual(doc["first"]["restart"]["id"], self.ids["api_first"])
        self.assertIn("FIRST-CRASH-LOG", doc["first"]["report"]["log"]["text"])
        self.assertEqual(doc["latest"]["restart"]["id"], self.ids["api_latest"])
        self.assertEqual([(c["kind"], c["name"], c["revision"]) for c in doc["changes"]],
                         [("Deployment", "api", "12"), ("Node", "node-a", "9001")])
        self.assertEqual([m["kind"] for m in doc["messages"]], ["alert", "reply"])

    def test_changes(self):
        rows = json.loads(run(["changes", "--workload", "shop/Deployment/api", "--db", self.path,
                               "--format", "json"], check_rc=0).stdout)
        self.assertEqual([(c["kind"], c["revision"]) for c in rows],
                         [("Deployment", "13"), ("Deployment", "12"), ("Node", "9001"),
                          ("Deployment", "11")])
        self.assertEqual(rows[1]["items"], ["image api:1.4.2 \u2192 api:1.4.3",
                                            "memory limit 1Gi \u2192 512Mi"])
        self.assertEqual((rows[1]["previous_revision"], rows[1]["previous_ready"]), ("11", 3))
        self.assertRegex(rows[1]["at"], RFC3339)
        p = run(["changes", "--workload", "shop/Deployment/api", "--since", "1d", "--db",
                 self.path], check_rc=0)
        self.assertEqual(len(p.stdout.splitlines()), 4)
        self.assertNotIn("api:1.4.1", p.stdout)

    def test_open_and_recent_by_default(self):
        """Without --since: the open incidents and those that ended in the last 24 h; an
        incident that ended two days ago takes --since (MCP's list_incidents alike)."""
        old = os.path.join(self.tmp.name, "old.db")
        p = subprocess.run([incident_seed(), old, str(int(time.time()) - 2 * 86400)],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stderr)
        ids = json.loads(p.stdout)
        rows = json.loads(run(["incidents", "--db", old, "--format", "json"], check_rc=0).stdout)
        self.assertEqual([r["id"] for r in rows], [ids["dns"], ids["canary"], ids["api"]])
        rows = json.loads(run(["incidents", "--db", old, "--format", "json", "--since", "3d"],
                              check_rc=0).stdout)
        self.assertEqual(rows[0]["id"], ids["trainer"])
        req = [{"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "list_incidents", "arguments": a}}
               for n, a in ((1, {}), (2, {"since": "3d"}))]
        p = subprocess.run([KRC, "mcp", "--db", old], capture_output=True, text=True,
                           input="".join(json.dumps(r) + "\n" for r in req), timeout=TIMEOUT)
        answers = [json.loads(line)["result"]["structuredContent"]
                   for line in p.stdout.splitlines()]
        self.assertEqual([[r["id"] for r in a["incidents"]] for a in answers],
                         [[ids["dns"], ids["canary"], ids["api"]],
                          [ids["trainer"], ids["dns"], ids["canary"], ids["api"]]])
        self.assertRegex(answers[0]["since"], RFC3339)

    def test_a_pruned_restart(self):
        """An incident whose first restart is gone from the history (an ended incident's
        restarts pruned by age): said so, never an error; MCP answers first: null."""
        db = sqlite3.connect(self.path)
        db.execute("DELETE FROM reports WHERE restart_id = ?", (self.ids["api_first"],))
        db.execute("DELETE FROM outbox WHERE restart_id = ?", (self.ids["api_first"],))
        db.execute("DELETE FROM restarts WHERE id = ?", (self.ids["api_first"],))
        db.commit()
        db.close()
        p = run(["incident", str(self.ids["api"]), "--db", self.path], check_rc=0)
        self.assertIn("First failure: restart #%d is no longer in the history"
                      % self.ids["api_first"], p.stdout)
        self.assertIn("LATEST-CRASH-LOG", p.stdout)
        doc = json.loads(run(["incident", str(self.ids["api"]), "--db", self.path, "--format",
                              "json"], check_rc=0).stdout)
        self.assertIsNone(doc["first"])
        self.assertEqual(doc["latest"]["restart"]["id"], self.ids["api_latest"])
        req = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "get_incident", "arguments": {"id": self.ids["api"]}}}
        p = subprocess.run([KRC, "mcp", "--db", self.path], input=json.dumps(req) + "\n",
                           capture_output=True, text=True, timeout=TIMEOUT)
        res = json.loads(p.stdout.splitlines()[0])["result"]
        self.assertFalse(res["isError"], res)
        self.assertIsNone(res["structuredContent"]["first"])
        self.assertIn("/latest/report/log/text", res["structuredContent"]["untrusted_fields"])

    def test_errors(self):
        for args in (["changes"], ["changes", "--workload", "Deployment/api"],
                     ["changes", "--workload", "shop/deploy/api"], ["incident"],
                     ["incident", "x"], ["incident", "1", "2"], ["incidents", "--open=1"],
                     ["incidents", "--format", "text"], ["incidents", "--since", "soon"],
                     ["incidents", "--workload", "api"], ["incidents", "--limit", "0"]):
            p = run(["--db", self.path] + args)
            self.assertEqual(p.returncode, 2, "%s: %s" % (args, p.stderr))
            self.assertTrue(p.stderr.strip(), args)
        p = run(["incident", "999999", "--db", self.path], check_rc=1)
        self.assertIn("no incident with id 999999", p.stderr)
        # read-only: a history of the schema before incidents is refused, not migrated
        old = os.path.join(self.tmp.name, "v8.db")
        Fixture(old, schema_version=8).close()
        p = run(["incidents", "--db", old], check_rc=1)
        self.assertIn("older", p.stderr)


class IncidentsPostgresTest(unittest.TestCase):
    """The same history written to PostgreSQL (schema 4) through the store API: krc history
    answers as it does from SQLite, with the same ids, and from a URL with a password file
    (tests/tools/pg_server.py starts a server of Debian's postgresql)."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                        "tools"))
        import pg_server
        cls.tmp = tempfile.TemporaryDirectory(prefix="krc-history-pg-")
        os.chmod(cls.tmp.name, 0o755)  # as root the server runs as `postgres`
        cls.pg = pg_server.PgServer(os.path.join(cls.tmp.name, "pg"))
        cls.pg.start()

    @classmethod
    def tearDownClass(cls):
        cls.pg.stop()
        cls.tmp.cleanup()

    def test_both_backends_answer_alike(self):
        url = self.pg.create_database("krc_history_incidents_%d" % os.getpid())
        now = str(int(time.time()))
        answers = []
        for db in (os.path.join(self.tmp.name, "krc.db"), url):
            env = dict(os.environ, PGPASSWORD=self.pg.password())
            p = subprocess.run([incident_seed(), db, now], capture_output=True, text=True,
                               timeout=60, env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            ids = json.loads(p.stdout)
            pw = ["--db-password-file", self.pg.password_file] if db == url else []
            incidents = json.loads(run(["incidents", "--db", db, "--format", "json"] + pw,
                                       check_rc=0).stdout)
            incident = json.loads(run(["incident", str(ids["api"]), "--db", db, "--format",
                                       "json"] + pw, check_rc=0).stdout)
            changes = json.loads(run(["changes", "--workload", "shop/Deployment/api", "--db",
                                      db, "--format", "json"] + pw, check_rc=0).stdout)
            for c in incident["changes"] + changes:
                c.pop("recorded_at")  # the time each was written
            answers.append((ids, incidents, incident["incident"], incident["changes"],
                            [(m["kind"], m["state"]) for m in incident["messages"]],
                            incident["first"]["report"], changes))
        # a shared store's table names the cluster of each row (as krc history's does)
        p = run(["incidents", "--db", url, "--db-password-file", self.pg.password_file],
                check_rc=0)
        self.assertRegex(p.stdout.splitlines()[0], r"^ID +CLUSTER +NAMESPACE +WORKLOAD")
        self.assertEqual(answers[0], answers[1])
        self.assertEqual(len(answers[1][1]), 4)
        self.assertNotIn(self.pg.password(), json.dumps(answers[1]))


def main():
    global KRC
    ap = argparse.ArgumentParser()
    ap.add_argument("--krc", required=True)
    args, rest = ap.parse_known_args()
    KRC = os.path.abspath(args.krc)
    unittest.main(argv=[sys.argv[0]] + rest)


if __name__ == "__main__":
    main()
