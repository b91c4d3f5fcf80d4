"""Intentional restarts (issue 26) with the real `krc run` against the fake Kubernetes API
(tests/fakekube, 1.35-shaped pods) and the fake Slack: a restart that a field of the pod proves
intended (a restart rule, the stop signal) is not paged by default, is recorded with its cause
and "intentional": true, and is counted apart (krc_restarts_intentional_total,
krc_notifications_total{result="intentional"}, restart_summary's `intentional`); with
pageIntentionalRestarts it is paged like a crash. It never marks the pod's mute: the pod's next
real crash is alerted.

Each scenario is a method that creates its pod (before krc starts) and returns a Scenario:
the restart to trigger and what krc must record. More scenarios (restart-all, resize, sidecar
during deletion) are added the same way.

    python3 tests/integration/test_intentional.py --krc build/krc [-k page]
"""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import krc_harness as h

# Settings of the outer shell that would change krc's behaviour are removed.
SCRUB = ["SLACK_WEBHOOK_URL", "SLACK_CHANNEL", "SLACK_USERNAME", "SLACK_BOT_TOKEN",
         "SLACK_ICON", "CLUSTER_NAME", "MUTE_SECONDS", "KRC_SLACK_API_URL",
         "KRC_STORM_THRESHOLD", "KRC_STORM_WINDOW", "KRC_STORM_SUMMARY_DELAY",
         "KRC_RECOVERED_AFTER", "KRC_LOG_IGNORE_PATTERNS", "KRC_SLACK_CA_FILE",
         "WATCHED_NAMESPACES", "IGNORED_NAMESPACES", "WATCHED_POD_NAME_PREFIXES",
         "IGNORED_POD_NAME_PREFIXES", "IGNORE_RESTART_COUNT",
         "IGNORE_RESTARTS_WITH_EXIT_CODE_ZERO", "KRC_WORKERS", "KRC_KUBERNETES_EVENTS",
         "KRC_PAGE_INTENTIONAL_RESTARTS", "KRC_MCP_NAMESPACES", "KRC_REDACT_PATTERNS"]


class Scenario:
    """A pod whose next restart krc must take as intentional."""

    def __init__(self, namespace, pod, container, cause, trigger, proof):
        self.namespace = namespace
        self.pod = pod
        self.container = container
        self.cause = cause      # the cause code recorded
        self.trigger = trigger  # restarts the container once
        self.proof = proof      # a text the stored diagnosis's evidence names


def metric(text, name, **labels):
    """The value of one series of a Prometheus text (0 when the series is absent)."""
    for line in text.splitlines():
        m = re.match(r"^%s(?:\{(.*)\})? (\S+)$" % re.escape(name), line)
        if not m:
            continue
        have = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1) or ""))
        if have == {k: str(v) for k, v in labels.items()}:
            return float(m.group(2))
    return 0.0


def restart_summary(db):
    """restart_summary's structured answer from `krc mcp --db DB` (stdio)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("KUBERNETES_SERVICE") and k not in SCRUB}
    p = subprocess.Popen([h.krc_binary(), "mcp", "--db", db], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "restart_summary", "arguments": {"since": "1h"}}}]
    out, err = p.communicate("".join(json.dumps(m) + "\n" for m in msgs).encode(), timeout=30)
    answers = {}
    for line in out.decode().splitlines():
        obj = json.loads(line)
        answers[obj.get("id")] = obj
    res = answers[2]["result"]
    assert not res["isError"], (res, err.decode())
    return res["structuredContent"]


class IntentionalRestarts(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.krc = None
        self.dbdir = tempfile.mkdtemp(prefix="krc-it-db-")
        self.addCleanup(shutil.rmtree, self.dbdir, True)
        self.db = os.path.join(self.dbdir, "krc.db")
        self.secrets = []

    def tearDown(self):
        if self.krc is not None:
            result = getattr(self._outcome, "result", None)
            failed = getattr(result, "errors", []) + getattr(result, "failures", [])
            if any(t is self for t, _ in failed):
                print("---- krc log tail (%s) ----\n%s" % (self.id(), self.krc.tail(80)))
            self.assertEqual(self.krc.stop(timeout=60), 0, self.krc.tail(30))
            out = self.krc.text()
            for s in self.secrets:
                self.assertNotIn(s, out, "a secret appeared in krc's output")

    def start_krc(self, args=(), **env):
        url = self.slack.webhook_url("alerts", mode="app")
        self.secrets += [url, url.rsplit("/", 1)[1]]
        full = {k: None for k in SCRUB}
        full.update({"SLACK_WEBHOOK_URL": url, "KRC_DB": self.db})
        full.update(env)
        self.krc = h.Krc(self.kube.kubeconfig, list(args), full)
        self.krc.wait_synced()

    # ---- scenarios (one helper each) ----

    def restart_rule_retry(self, ns="jobs", name="retry-0"):
        """KEP-5307 (1.34): container restartPolicy Never with a rule that restarts it in place
        on exit code 42; it exits 42."""
        self.kube.create_pod(ns, name, containers=[{
            "name": "app", "restartPolicy": "Never",
            "restartPolicyRules": [{"action": "Restart",
                                    "exitCodes": {"operator": "In", "values": [42]}}]}])
        return Scenario(ns, name, "app", "restart_rule",
                        lambda: self.kube.restart(ns, name, "app", exit_code=42, reason="Error",
                                                  logs="upstream not ready: exit 42 to retry\n"),
                        "restartPolicyRules[0]")

    def stop_signal_exit(self, ns="jobs", name="worker-0"):
        """KEP-4960 (1.33): lifecycle.stopSignal SIGUSR1, reported as
        containerStatuses[].stopSignal; the container exits 138 = 128 + SIGUSR1."""
        self.kube.create_pod(ns, name, containers=[{
            "name": "app", "lifecycle": {"stopSignal": "SIGUSR1"}}])
        return Scenario(ns, name, "app", "terminated",
                        lambda: self.kube.restart(ns, name, "app", exit_code=138, reason="Error",
                                                  logs="draining connections\n"),
                        "stopSignal SIGUSR1")

    def scenarios(self):
        return [self.restart_rule_retry(), self.stop_signal_exit()]

    # ---- checks ----

    def stored(self, sc):
        """The newest stored restart of the scenario's pod: (row, `history show` JSON)."""
        rows = h.wait_until(lambda: [r for r in h.history(self.db)
                                     if (r["namespace"], r["pod"]) == (sc.namespace, sc.pod)],
                            30 * h.SLOWDOWN, what="a stored restart of %s" % sc.pod)
        p = subprocess.run([h.krc_binary(), "history", "show", str(rows[0]["id"]), "--db",
                            self.db, "--format", "json"], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return rows[0], json.loads(p.stdout)

    def metrics(self):
        status, body = h.http_get(self.krc.http_port(), "/metrics")
        self.assertEqual(status, 200)
        return body

    # ---- tests ----

    def test_not_paged_by_default_recorded_and_counted_apart(self):
        scs = self.scenarios()
        self.start_krc()
        for sc in scs:
            sc.trigger()
        for sc in scs:
            self.krc.wait_diagnosed(1, pod=sc.pod, cause=sc.cause, decision="intentional")
        self.assertEqual(len(self.krc.logs(msg="restart not alerted: intentional "
                                               "(pageIntentionalRestarts alerts them)")), 2)
        for sc in scs:
            row, show = self.stored(sc)
            self.assertEqual((row["cause"], row["decision"]), (sc.cause, "intentional"))
            diag = show["report"]["diagnosis"]
            self.assertIs(diag.get("intentional"), True, diag)
            self.assertTrue(any(sc.proof in e for e in diag["evidence"]), diag["evidence"])
            self.assertEqual(show["notifications"], [])
        # a real crash of the same pod afterwards is alerted: the intentional restart did not
        # mark the pod's mute (muteSeconds is 600 by default)
        worker = scs[1]
        self.kube.restart(worker.namespace, worker.pod, "app", exit_code=1, reason="Error",
                          logs="panic: nil map\n")
        self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN)
        time.sleep(1.5)  # a window for a message of an intentional restart; asserted below
        msgs = self.slack.messages()
        self.assertEqual(len(msgs), 1, [m["text"][:120] for m in msgs])
        self.assertIn(worker.pod, msgs[0]["text"])
        self.krc.wait_diagnosed(1, pod=worker.pod, decision="alert")
        self.krc.wait_log(" posted (")
        # kubernetesEvents (the default): one RestartDiagnosed Event, the crash's
        events = h.wait_until(lambda: [q for q in self.kube.requests()
                                       if q["method"] == "POST" and "/events" in q["path"]],
                              30 * h.SLOWDOWN, what="the crash's Event")
        time.sleep(1)
        events = [q for q in self.kube.requests()
                  if q["method"] == "POST" and "/events" in q["path"]]
        self.assertEqual(len(events), 1, events)
        text = self.metrics()
        for sc in scs:
            self.assertEqual(metric(text, "krc_restarts_intentional_total",
                                    namespace=sc.namespace, cause=sc.cause), 1, sc.cause)
        self.assertEqual(metric(text, "krc_notifications_total", result="intentional"), 2)
        self.assertEqual(metric(text, "krc_notifications_total", result="sent"), 1)
        self.assertEqual(metric(text, "krc_notifications_total", result="muted"), 0)
        s = restart_summary(self.db)
        self.assertEqual((s["restarts"], s["intentional"]), (3, 2), s)

    def test_page_setting_pages_them(self):
        scs = self.scenarios()
        self.start_krc(KRC_PAGE_INTENTIONAL_RESTARTS="true")
        for sc in scs:
            sc.trigger()
        for sc in scs:
            self.krc.wait_diagnosed(1, pod=sc.pod, cause=sc.cause, decision="alert")
        self.slack.wait_messages(2, timeout=30 * h.SLOWDOWN)
        self.assertEqual(sorted(p for m in self.slack.messages()
                                for p in (scs[0].pod, scs[1].pod) if p in m["text"]),
                         sorted([scs[0].pod, scs[1].pod]))
        for sc in scs:
            row, show = self.stored(sc)
            self.assertEqual(row["decision"], "alert")
            self.assertIs(show["report"]["diagnosis"].get("intentional"), True)
        self.krc.wait_log(" posted (", count=2)
        text = self.metrics()
        for sc in scs:
            self.assertEqual(metric(text, "krc_restarts_intentional_total",
                                    namespace=sc.namespace, cause=sc.cause), 1, sc.cause)
        self.assertEqual(metric(text, "krc_notifications_total", result="intentional"), 0)
        self.assertEqual(metric(text, "krc_notifications_total", result="sent"), 2)
        self.assertEqual(restart_summary(self.db)["intentional"], 2)

    def test_page_setting_is_applied_at_reload(self):
        """pageIntentionalRestarts changed in the --config file takes effect at SIGHUP."""
        first = self.restart_rule_retry(name="retry-0")
        second = self.restart_rule_retry(name="retry-1")
        path = os.path.join(self.dbdir, "config.yaml")
        with open(path, "w") as f:
            f.write("pageIntentionalRestarts: false\n")
        self.start_krc(args=["--config", path])
        first.trigger()
        self.krc.wait_diagnosed(1, pod=first.pod, cause="restart_rule", decision="intentional")
        with open(path, "w") as f:
            f.write("pageIntentionalRestarts: true\n")
        self.krc.proc.send_signal(signal.SIGHUP)
        self.krc.wait_log("configuration reloaded")
        self.assertEqual(self.krc.logs(contains="pageIntentionalRestarts changed"), [])
        second.trigger()
        self.krc.wait_diagnosed(1, pod=second.pod, cause="restart_rule", decision="alert")
        msgs = self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN)
        self.assertIn(second.pod, msgs[0]["text"])
        self.assertEqual(len(self.slack.messages()), 1)


if __name__ == "__main__":
    h.main()
