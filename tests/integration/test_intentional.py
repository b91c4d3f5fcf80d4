"""Intentional restarts (issue 26) with the real `krc run` against the fake Kubernetes API
(tests/fakekube, 1.35-shaped pods) and the fake Slack: a restart that a field of the pod proves
intended (a restart rule, the stop signal) is not paged by default, is recorded with its cause
and "intentional": true, and is counted apart (krc_restarts_intentional_total,
krc_notifications_total{result="intentional"}, restart_summary's `intentional`); with
pageIntentionalRestarts it is paged like a crash. It never marks the pod's mute: the pod's next
real crash is alerted.

Each scenario is a method that creates its pod (before krc starts) and returns a Scenario:
the restart to trigger and what krc must record: a restart-rule retry, a stop-signal exit, a
resize restart, a sidecar exit during the pod's deletion. A 4-container restart-all gives one
alert (the trigger's, with its own cause), the other three recorded restarted_with_others; a
re-created sandbox gives one alert (sandbox_changed, the node-level cause) whatever the mute
(muteSeconds 0, Slack Web API thread replies) and the workers. The kubelet's status sequences
come from tests/fakekube/admin.py (restart_all, resize_restart, begin_deletion,
sandbox_change).

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
        if env.get("SLACK_BOT_TOKEN"):  # the Slack Web API instead (threads)
            full.update({"SLACK_WEBHOOK_URL": None, "SLACK_CHANNEL": "#alerts",
                         "KRC_SLACK_API_URL": self.slack.api_url})
            self.secrets.append(env["SLACK_BOT_TOKEN"])
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

    def resize_restart(self, ns="cache", name="redis-0"):
        """KEP-1287 (GA 1.35): resizePolicy memory RestartContainer; the memory of `redis` is
        resized in place from 1Gi to 2Gi: the kubelet (PodResizeInProgress True) stops it
        (exit 143) and starts it again, then finishes the resize."""
        self.kube.create_pod(ns, name, containers=[{
            "name": "redis", "image": "redis:7.4",
            "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
                             {"resourceName": "memory", "restartPolicy": "RestartContainer"}],
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"},
                          "requests": {"cpu": "500m", "memory": "1Gi"}}}])
        return Scenario(ns, name, "redis", "resize_restart",
                        lambda: self.kube.resize_restart(
                            ns, name, "redis", "memory", "2Gi",
                            logs={"redis": "Received SIGTERM scheduling shutdown...\n"}),
                        "resizePolicy: memory RestartContainer")

    def sidecar_exit_during_deletion(self, ns="web", name="web-0"):
        """KEP-753 (GA 1.33): the sidecar `log-shipper` (an init container with restartPolicy
        Always) exits 1 after the pod's deletion was asked (deletionTimestamp,
        deletionGracePeriodSeconds 30)."""
        self.kube.create_pod(ns, name, containers=["web"], init_containers=[{
            "name": "log-shipper", "image": "fluent-bit:3.2", "restartPolicy": "Always"}])

        def trigger():
            self.kube.begin_deletion(ns, name, 30)
            time.sleep(1.1)  # the sidecar stops after the deletion was asked
            self.kube.restart(ns, name, "log-shipper", exit_code=1, reason="Error",
                              logs="[engine] caught signal (SIGTERM)\n")
        return Scenario(ns, name, "log-shipper", "terminated", trigger,
                        "metadata.deletionTimestamp")

    def restart_all(self, ns="infer", name="server-0", stagger=0.0):
        """KEP-5532 (alpha 1.35): four containers; `server`'s rule RestartAllContainers holds
        its exit code 88: the kubelet restarts all four (AllContainersRestarting True, then
        False). Returns the trigger."""
        self.kube.create_pod(ns, name, containers=[
            {"name": "server", "image": "registry.local/infer-server:1.4",
             "restartPolicyRules": [{"action": "RestartAllContainers",
                                     "exitCodes": {"operator": "In", "values": [88]}}]},
            "tokenizer", "metrics", "cache"])
        return lambda: self.kube.restart_all(
            ns, name, "server", 88,
            logs={"server": "loading shard 3\nFATAL: shard 3 checksum mismatch, exiting 88\n"},
            stagger=stagger)

    def sandbox_pod(self, ns="shop", name="api-0", stagger=0.0):
        """Two containers and a sidecar on node fake-node-1, running for an hour, whose
        sandbox a node reboot re-creates (KEP-3085): returns the trigger."""
        hour_ago = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600))
        running = {"state": {"running": {"startedAt": hour_ago}}}
        self.kube.create_pod(
            ns, name, containers=["api", "envoy"], init_containers=[{
                "name": "log-shipper", "image": "fluent-bit:3.2", "restartPolicy": "Always"}],
            metadata={"creationTimestamp": hour_ago},
            status={"startTime": hour_ago,
                    "containerStatuses": [dict(running, name=c) for c in ("api", "envoy")],
                    "initContainerStatuses": [dict(running, name="log-shipper")]})
        return lambda: self.kube.sandbox_change(ns, name, stagger=stagger)

    def scenarios(self):
        return [self.restart_rule_retry(), self.stop_signal_exit(), self.resize_restart(),
                self.sidecar_exit_during_deletion()]

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
                                               "(pageIntentionalRestarts alerts them)")), len(scs))
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
        self.assertEqual(metric(text, "krc_notifications_total", result="intentional"), len(scs))
        self.assertEqual(metric(text, "krc_notifications_total", result="sent"), 1)
        self.assertEqual(metric(text, "krc_notifications_total", result="muted"), 0)
        s = restart_summary(self.db)
        self.assertEqual((s["restarts"], s["intentional"]), (len(scs) + 1, len(scs)), s)

    def test_page_setting_pages_them(self):
        scs = self.scenarios()
        self.start_krc(KRC_PAGE_INTENTIONAL_RESTARTS="true")
        for sc in scs:
            sc.trigger()
        for sc in scs:
            self.krc.wait_diagnosed(1, pod=sc.pod, cause=sc.cause, decision="alert")
        self.slack.wait_messages(len(scs), timeout=30 * h.SLOWDOWN)
        self.assertEqual(sorted(sc.pod for m in self.slack.messages()
                                for sc in scs if sc.pod in m["text"]),
                         sorted(sc.pod for sc in scs))
        for sc in scs:
            row, show = self.stored(sc)
            self.assertEqual(row["decision"], "alert")
            self.assertIs(show["report"]["diagnosis"].get("intentional"), True)
        self.krc.wait_log(" posted (", count=len(scs))
        text = self.metrics()
        for sc in scs:
            self.assertEqual(metric(text, "krc_restarts_intentional_total",
                                    namespace=sc.namespace, cause=sc.cause), 1, sc.cause)
        self.assertEqual(metric(text, "krc_notifications_total", result="intentional"), 0)
        self.assertEqual(metric(text, "krc_notifications_total", result="sent"), len(scs))
        self.assertEqual(restart_summary(self.db)["intentional"], len(scs))

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

    # ---- restart-all: one alert, the trigger's ----

    def check_restart_all(self, stagger=0.0, **env):
        trigger = self.restart_all(stagger=stagger)
        self.start_krc(**env)
        trigger()
        others = ("tokenizer", "metrics", "cache")
        self.krc.wait_diagnosed(3, pod="server-0", cause="restarted_with_others",
                                decision="intentional")
        first = self.krc.wait_diagnosed(1, pod="server-0", container="server")[0]
        self.assertNotIn(first["cause"], ("restarted_with_others", "sandbox_changed"), first)
        self.assertEqual(first["decision"], "alert", first)
        msgs = self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN)
        self.krc.wait_log(" posted (")
        time.sleep(1.5)  # a window for a second message; asserted below
        msgs = self.slack.messages()
        self.assertEqual(len(msgs), 1, [m["text"][:160] for m in msgs])
        self.assertIn("server-0", msgs[0]["text"])
        self.assertIn("Container server exited with code 88", msgs[0]["text"])
        self.assertIn("this exit restarted all 4 containers of the pod", json.dumps(msgs[0]))
        rows = {r["container"]: r for r in h.history(self.db)}
        self.assertEqual(sorted(rows), sorted(("server",) + others))
        for c in others:
            self.assertEqual((rows[c]["cause"], rows[c]["decision"]),
                             ("restarted_with_others", "intentional"), c)
            p = subprocess.run([h.krc_binary(), "history", "show", str(rows[c]["id"]), "--db",
                                self.db, "--format", "json"], capture_output=True, text=True,
                               timeout=30)
            self.assertEqual(p.returncode, 0, p.stderr)
            show = json.loads(p.stdout)
            diag = show["report"]["diagnosis"]
            self.assertIs(diag.get("intentional"), True, c)
            self.assertTrue(any("spec.containers[server].restartPolicyRules[0]: action "
                                "RestartAllContainers" in e for e in diag["evidence"]),
                            diag["evidence"])
            self.assertEqual(show["notifications"], [], c)
        p = subprocess.run([h.krc_binary(), "history", "show", str(rows["server"]["id"]),
                            "--db", self.db, "--format", "json"], capture_output=True,
                           text=True, timeout=30)
        diag = json.loads(p.stdout)["report"]["diagnosis"]
        self.assertNotIn("intentional", diag)
        self.assertEqual(rows["server"]["decision"], "alert")
        self.assertTrue(any("this exit restarted all 4 containers of the pod" in e
                            for e in diag["evidence"]), diag["evidence"])
        text = self.metrics()
        self.assertEqual(metric(text, "krc_restarts_intentional_total", namespace="infer",
                                cause="restarted_with_others"), 3)
        self.assertEqual(metric(text, "krc_notifications_total", result="intentional"), 3)
        self.assertEqual(metric(text, "krc_notifications_total", result="sent"), 1)
        events = [q for q in self.kube.requests()
                  if q["method"] == "POST" and "/events" in q["path"]]
        self.assertEqual(len(events), 1, events)

    def test_restart_all_one_alert(self):
        self.check_restart_all()

    def test_restart_all_one_alert_unmuted_parallel(self):
        """No mute to hide the others' alerts, four workers taking the four restarts at once."""
        self.check_restart_all(MUTE_SECONDS="0", KRC_WORKERS="4")

    def test_restart_all_one_alert_counts_rising_one_by_one(self):
        """The kubelet's status updates may carry the restarts one container at a time."""
        self.check_restart_all(stagger=0.7, MUTE_SECONDS="0")

    # ---- a sandbox change: one alert with the node-level cause ----

    def check_sandbox(self, stagger=0.0, **env):
        trigger = self.sandbox_pod(stagger=stagger)
        self.start_krc(**env)
        trigger()
        containers = ("api", "envoy", "log-shipper")
        got = self.krc.wait_diagnosed(3, pod="api-0")
        self.assertEqual(sorted(d["container"] for d in got), sorted(containers))
        msgs = self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN)
        self.krc.wait_log(" posted (")
        time.sleep(1.5)  # a window for a second message; asserted below
        msgs = self.slack.messages()
        self.assertEqual(len(msgs), 1, [m["text"][:160] for m in msgs])
        self.assertIn("api-0", msgs[0]["text"])
        self.assertIn("Pod sandbox re-created", msgs[0]["text"])
        self.assertIn("a node-level cause (the node rebooted)", json.dumps(msgs[0]))
        alerted = [d for d in got if d["decision"] == "alert"]
        self.assertEqual(len(alerted), 1, got)
        self.assertEqual(alerted[0]["cause"], "sandbox_changed", alerted[0])
        rows = {r["container"]: r for r in h.history(self.db)}
        self.assertEqual(sorted(rows), sorted(containers))
        for c, r in rows.items():
            self.assertEqual(r["cause"], "sandbox_changed", r)
        events = [q for q in self.kube.requests()
                  if q["method"] == "POST" and "/events" in q["path"]]
        self.assertEqual(len(events), 1, events)
        text = self.metrics()
        self.assertEqual(metric(text, "krc_notifications_total", result="sent"), 1)
        self.assertEqual(metric(text, "krc_restarts_detected_total", namespace="shop",
                                cause="sandbox_changed"), 3)
        return got

    def test_sandbox_change_one_alert(self):
        self.check_sandbox()

    def test_sandbox_change_one_alert_unmuted(self):
        self.check_sandbox(MUTE_SECONDS="0")

    def test_sandbox_change_one_alert_unmuted_parallel(self):
        self.check_sandbox(MUTE_SECONDS="0", KRC_WORKERS="4")

    def test_sandbox_change_one_alert_web_api(self):
        """The Slack Web API posts a restart within the mute window as a reply in the pod's
        thread once its alert was posted: the sandbox change's other containers, started one by
        one 1.5 s apart, are not replies either."""
        self.check_sandbox(stagger=1.5, SLACK_BOT_TOKEN=self.slack.token)
        self.assertEqual([m for m in self.slack.messages() if m.get("thread_ts")], [])


if __name__ == "__main__":
    h.main()
