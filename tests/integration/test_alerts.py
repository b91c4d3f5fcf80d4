"""The real `krc run` against the fake Kubernetes API (tests/fakekube) and the strict fake
Slack (tests/fakeslack): every restart is collected, diagnosed and posted as exactly one
valid, safe message (issue 3, acceptance).

Each test asserts on what the fake Slack accepted (parsed blocks and text, the effective
channel, threads, uploaded files, its statistics) and on krc's JSON log lines
("restart detected", "restart diagnosed" with cause/decision, "... posted (N attempts)").
Every test also checks that no webhook URL or bot token appears in krc's output.

    python3 tests/integration/test_alerts.py --krc build/krc [-k Storm]
"""

import json
import os
import re
import shutil
import tempfile
import time
import unittest
from datetime import datetime, timedelta, timezone

import krc_harness as h


# Settings of the outer shell that would change krc's behaviour are removed.
SCRUB = ["SLACK_WEBHOOK_URL", "SLACK_CHANNEL", "SLACK_USERNAME", "SLACK_BOT_TOKEN",
         "SLACK_ICON", "CLUSTER_NAME", "MUTE_SECONDS", "KRC_SLACK_API_URL",
         "KRC_STORM_THRESHOLD", "KRC_STORM_WINDOW", "KRC_STORM_SUMMARY_DELAY",
         "KRC_RECOVERED_AFTER", "KRC_LOG_TAIL_LINES", "KRC_LOG_LIMIT_BYTES",
         "KRC_LOG_TRANSFER_LIMIT_BYTES",
         "KRC_REDACT_PATTERNS", "KRC_LOG_IGNORE_PATTERNS", "KRC_SLACK_CA_FILE",
         "WATCHED_NAMESPACES", "IGNORED_NAMESPACES", "WATCHED_POD_NAME_PREFIXES",
         "IGNORED_POD_NAME_PREFIXES", "IGNORE_RESTART_COUNT",
         "IGNORE_RESTARTS_WITH_EXIT_CODE_ZERO", "KRC_WORKERS"]

TRACEBACK = (
    "INFO:app:loading configuration from /etc/app/config.yaml\n"
    "Traceback (most recent call last):\n"
    '  File "/app/main.py", line 42, in <module>\n'
    "    main()\n"
    '  File "/app/main.py", line 37, in main\n'
    "    port = int(cfg[\"port\"])\n"
    "ValueError: invalid literal for int() with base 10: 'eighty'\n")


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def utcnow():
    return datetime.now(timezone.utc).replace(microsecond=0)


texts, full_text = h.message_texts, h.message_text  # what a message says


def blocks(msg):
    """Top-level blocks plus the blocks of attachments (colour bar layout)."""
    body = msg["body"]
    out = list(body.get("blocks") or [])
    for a in body.get("attachments") or []:
        out += a.get("blocks") or []
    return out


def block_text(b):
    return "\n".join(texts(b))


def find_block(msg, needle, type_=None):
    for b in blocks(msg):
        if (type_ is None or b.get("type") == type_) and needle in block_text(b):
            return b
    return None


def code_blocks(msg):
    """The code blocks (```...```) of the message's blocks, with their fences."""
    return [c for b in blocks(msg) for c in re.findall(r"```.*?```", block_text(b), re.S)]


def log_code(msg):
    """The log tail: everything inside code blocks except the kubectl commands."""
    return "\n".join(c for c in code_blocks(msg) if not c.startswith("```\nkubectl "))


def cause_code(msg):
    """The cause code of a restart alert: its header's block_id "cause:CODE" (the text says
    the cause once, by its title)."""
    head = blocks(msg)[0]
    return (head.get("block_id") or "").partition("cause:")[2]


def write_file(text, suffix=".yaml"):
    fd, path = tempfile.mkstemp(prefix="krc-it-", suffix=suffix)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


class AlertTestBase(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.krc = None
        self.secrets = []  # strings that must never appear in krc's output
        self.tmpfiles = []
        self.tmpdirs = []

    def tearDown(self):
        try:
            if self.krc is not None:
                if self._outcome_failed():
                    print("---- krc log tail (%s) ----\n%s" % (self.id(), self.krc.tail(80)))
                code = self.krc.stop(timeout=60)
                self.assertEqual(code, 0, "krc did not shut down cleanly:\n" + self.crash_report())
                out = self.krc.text()
                for s in self.secrets:
                    self.assertNotIn(s, out, "a secret appeared in krc's output")
        finally:
            for p in self.tmpfiles:
                try:
                    os.unlink(p)
                except OSError:
                    pass
            for d in self.tmpdirs:
                shutil.rmtree(d, ignore_errors=True)

    def _outcome_failed(self):
        result = getattr(self._outcome, "result", None)
        errors = getattr(result, "errors", []) + getattr(result, "failures", [])
        return any(t is self for t, _ in errors)

    def crash_report(self):
        """The sanitizer report if krc printed one, else the tail of its output."""
        lines = self.krc.text().split("\n")
        for i, line in enumerate(lines):
            if ("ERROR: AddressSanitizer" in line or "ERROR: LeakSanitizer" in line
                    or "runtime error:" in line):
                return "\n".join(lines[i:i + 30])
        return self.krc.tail(20)

    def wait_log(self, contains, timeout=30.0, count=1):
        """Wait for `count` krc log lines containing `contains`; fails at once if krc dies."""
        def ready():
            if self.krc.exited():
                raise AssertionError("krc exited (code %s) while waiting for %r:\n%s"
                                     % (self.krc.proc.returncode, contains, self.crash_report()))
            got = self.krc.logs(contains=contains)
            return got if len(got) >= count else None
        try:
            return h.wait_until(ready, timeout * h.SLOWDOWN,
                                what="%d log line(s) containing %r" % (count, contains))
        except AssertionError as e:
            if self.krc.exited() or "timed out" not in str(e):
                raise
            raise AssertionError("%s; log tail:\n%s" % (e, self.krc.tail(40)))

    # ---- set-up helpers ----

    def webhook(self, name="alerts", mode="app", channel=None):
        url = self.slack.webhook_url(name, mode=mode, channel=channel)
        self.secrets += [url, url.rsplit("/", 1)[1]]
        return url

    def config_file(self, text):
        path = write_file(text)
        self.tmpfiles.append(path)
        return path

    def start_krc(self, env=None, args=()):
        full = {k: None for k in SCRUB}
        full.update(env or {})
        for k in ("SLACK_BOT_TOKEN",):
            if full.get(k):
                self.secrets.append(full[k])
        self.krc = h.Krc(self.kube.kubeconfig, list(args), full)
        self.krc.wait_synced()
        return self.krc

    # ---- assertion helpers ----

    def wait_posted(self, n=1, timeout=30.0, contains="posted ("):
        return self.wait_log(contains, timeout=timeout, count=n)

    def assert_valid(self, msg):
        """The fake accepted it with every check run, within Slack's limits."""
        for check in ("json_object", "unicode", "has_content", "text_length", "total_length"):
            self.assertIn(check, msg["checks"])
        if blocks(msg):
            for check in ("blocks_count", "block_types", "block_text_lengths",
                          "block_ids_unique"):
                self.assertIn(check, msg["checks"])
        raw = json.dumps(msg["body"], ensure_ascii=False)
        for ping in ("<!channel>", "<!here>", "<!everyone>", "<@U"):
            self.assertNotIn(ping, raw, "an unescaped mention reached Slack")
        for t in texts(msg["body"]):
            self.assertEqual(t.count("```") % 2, 0, "unbalanced code fence in %r" % t[:300])
        for c in code_blocks(msg):
            self.assertTrue(c.endswith("```"), "code block not closed: %r" % c[-200:])
            self.assertEqual(c.count("```"), 2, "log text opened/closed a code fence: %r"
                             % c[:300])

    def only_message(self, settle=1.5, **filters):
        """Exactly one accepted message (and still one after `settle` seconds)."""
        self.slack.wait_messages(1, timeout=30, **filters)
        time.sleep(settle)  # a window for a duplicate to arrive; asserted below
        msgs = self.slack.messages(**filters)
        self.assertEqual(len(msgs), 1, "expected one message, got %d: %s"
                         % (len(msgs), [m["text"][:120] for m in msgs]))
        self.assert_valid(msgs[0])
        return msgs[0]

    def assert_no_rejections(self):
        st = self.slack.stats()
        self.assertEqual(st["rejected"], {}, "fake Slack rejected something: %s" % st)
        self.assertEqual(st["status_429"], 0)


class DiagnosisAlerts(AlertTestBase):
    """One valid message per restart, with the right cause, events, node and log tail."""

    def test_01_oom_kill_with_events_node_and_log(self):
        url = self.webhook("alerts")
        self.kube.add_node({"metadata": {"name": "node-a"}, "status": {"conditions": [
            {"type": "MemoryPressure", "status": "True", "reason": "KubeletHasInsufficientMemory",
             "message": "kubelet has insufficient memory available"},
            {"type": "Ready", "status": "True", "reason": "KubeletReady",
             "message": "kubelet is posting ready status"}]}})
        pod = self.kube.create_pod("shop", "cart-7d9f-abcde", node="node-a")
        self.start_krc({"SLACK_WEBHOOK_URL": url, "CLUSTER_NAME": "prod-eu"})
        now = utcnow()
        self.kube.add_pod_event(pod, "BackOff",
                                "Back-off restarting failed container app in pod "
                                "cart-7d9f-abcde_shop(%s)" % pod["metadata"]["uid"],
                                container="app", firstTimestamp=iso(now - timedelta(seconds=20)),
                                lastTimestamp=iso(now), count=3)
        self.kube.add_pod_event(pod, "Pulled", 'Container image "registry.example.com/team/'
                                'app:1.4.2" already present on machine', type_="Normal",
                                container="app")
        self.kube.add_event(namespace="default", involvedObject={
            "kind": "Node", "name": "node-a", "uid": "node-a", "apiVersion": "v1"},
            reason="SystemOOM", type="Warning",
            message="System OOM encountered, victim process: java, pid: 4242",
            source={"component": "kubelet", "host": "node-a"})
        log = "".join("processed batch %d of orders\n" % i for i in range(1, 31))
        log += "allocating cache of 2048 MiB for region eu-west\n"
        self.kube.restart("shop", "cart-7d9f-abcde", "app", exit_code=137, reason="OOMKilled",
                          started_at=iso(now - timedelta(minutes=5)), finished_at=iso(now),
                          logs=log)
        msg = self.only_message()
        (d,) = self.krc.wait_diagnosed(1)
        self.assertEqual((d["namespace"], d["pod"], d["container"]),
                         ("shop", "cart-7d9f-abcde", "app"))
        self.assertEqual(d["cause"], "oom_killed")
        self.assertEqual(d["decision"], "alert")
        (det,) = self.krc.restarts()
        self.assertEqual((det["restart_count"], det["exit_code"], det["reason"]),
                         (1, 137, "OOMKilled"))
        self.wait_log("alert for shop/cart-7d9f-abcde container app (oom_killed) posted "
                          "(1 attempt)")
        self.assertEqual(msg["webhook"], self.slack.webhook_path("alerts"))
        self.assertIn("OOM", msg["text"])
        self.assertIn("shop/cart-7d9f-abcde", msg["text"])
        self.assertIn("prod-eu", msg["text"])
        header = blocks(msg)[0]
        self.assertEqual(header["type"], "header")
        self.assertIn("shop/cart-7d9f-abcde", header["text"]["text"])
        # the node's pressure leads (header and notification), its words said once
        self.assertIn("Node node-a MemoryPressure \u00b7 OOMKilled: ", header["text"]["text"])
        self.assertIn("Node node-a MemoryPressure", msg["text"])
        self.assertEqual(full_text(msg).count("kubelet has insufficient memory available"), 1)
        # the cause once: its title in the header, its code only in the header's block_id
        self.assertEqual(header.get("block_id"), "cause:oom_killed")
        self.assertIsNone(find_block(msg, "oom_killed"), "cause code shown:\n" + full_text(msg))
        self.assertIsNotNone(find_block(msg, "Container app "), "container missing")
        self.assertIsNotNone(find_block(msg, "137"), "exit code missing")
        # warning events: the node's SystemOOM; not the kubelet's back-off boilerplate nor
        # the Normal Pulled event (it is not evidence)
        events = find_block(msg, "*Warning events*")
        self.assertIsNotNone(events, "warning events missing:\n" + full_text(msg))
        events = block_text(events)
        self.assertIn("node *SystemOOM*", events)
        self.assertIn("System OOM encountered, victim process: java, pid: 4242", events)
        self.assertNotIn("Back-off restarting failed container", full_text(msg))
        self.assertNotIn("already present on machine", full_text(msg))
        self.assertNotIn(pod["metadata"]["uid"], full_text(msg))
        # log tail: the last lines, in a code block
        code = log_code(msg)
        self.assertIn("allocating cache of 2048 MiB for region eu-west", code)
        self.assertIn("processed batch 30 of orders", code)
        self.assert_no_rejections()
        # collection used the protocol the issue asks for
        logs = [r for r in self.kube.requests() if r["path"].endswith("/log")]
        self.assertEqual(len(logs), 1, logs)
        q = logs[0]["query"]
        self.assertEqual((q.get("container"), q.get("previous"), q.get("tailLines"),
                          q.get("limitBytes"), q.get("timestamps")),
                         ("app", "true", "50", str(4 * 1024 * 1024 + 1), "true"))
        ev = [r for r in self.kube.requests() if r["path"] == "/api/v1/namespaces/shop/events"]
        self.assertTrue(ev and "involvedObject.uid=" + pod["metadata"]["uid"] in
                        ev[0]["query"].get("fieldSelector", ""), ev)

    def test_02_liveness_kill(self):
        url = self.webhook("alerts")
        self.kube.add_node("fake-node-1")
        pod = self.kube.create_pod("api", "gateway-5c6d-x2x2")
        self.start_krc({"SLACK_WEBHOOK_URL": url})
        now = utcnow()
        self.kube.add_pod_event(pod, "Unhealthy",
                                "Liveness probe failed: HTTP probe failed with statuscode: 503",
                                container="app", count=3,
                                firstTimestamp=iso(now - timedelta(seconds=30)),
                                lastTimestamp=iso(now - timedelta(seconds=10)))
        self.kube.add_pod_event(pod, "Killing",
                                "Container app failed liveness probe, will be restarted",
                                type_="Normal", container="app",
                                firstTimestamp=iso(now - timedelta(seconds=9)),
                                lastTimestamp=iso(now - timedelta(seconds=9)))
        self.kube.restart("api", "gateway-5c6d-x2x2", "app", exit_code=137, reason="Error",
                          started_at=iso(now - timedelta(minutes=10)), finished_at=iso(now),
                          logs="GET /healthz 503 (db pool exhausted)\n" * 3)
        msg = self.only_message()
        (d,) = self.krc.wait_diagnosed(1)
        self.assertEqual(d["cause"], "liveness_probe_failed")
        self.assertEqual(d["decision"], "alert")
        self.assertIn("liveness", msg["text"].lower())
        text = full_text(msg)
        self.assertEqual(cause_code(msg), "liveness_probe_failed")
        self.assertIn("Liveness probe failed: ", text)
        self.assertIn("statuscode: 503", text)
        self.assertIn("GET /healthz 503 (db pool exhausted)", log_code(msg))
        self.assert_no_rejections()

    def test_03_python_traceback(self):
        url = self.webhook("alerts")
        self.kube.create_pod("jobs", "importer-0")
        self.start_krc({"SLACK_WEBHOOK_URL": url})
        self.kube.restart("jobs", "importer-0", "app", exit_code=1, reason="Error",
                          logs=TRACEBACK)
        msg = self.only_message()
        (d,) = self.krc.wait_diagnosed(1)
        self.assertEqual(d["cause"], "app_error")
        self.assertEqual(cause_code(msg), "app_error")
        code = log_code(msg)
        self.assertIn("Traceback (most recent call last):", code)
        self.assertIn('File "/app/main.py", line 37, in main', code)
        self.assertIn("ValueError: invalid literal for int() with base 10: 'eighty'", code)
        # mrkdwn escaping of log text: "<module>" must not reach Slack as markup
        self.assertIn("&lt;module&gt;", code)
        self.assertNotIn("<module>", code)
        self.assert_no_rejections()

    def test_04_cuda_oom_on_gpu_pod(self):
        url = self.webhook("ml-alerts")
        self.kube.add_node({"metadata": {"name": "gpu-node-3", "labels": {
            "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}}, "status": {
            "capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "8"}}})
        self.kube.create_pod("ml", "trainer-0", node="gpu-node-3", containers=[{
            "name": "trainer", "image": "registry.example.com/ml/trainer:2.3.0",
            "resources": {"limits": {"nvidia.com/gpu": "2", "memory": "64Gi"},
                          "requests": {"nvidia.com/gpu": "2", "cpu": "8", "memory": "64Gi"}}}])
        self.start_krc({"SLACK_WEBHOOK_URL": url})
        log = ("epoch 3 step 1200 loss 0.4312\n"
               "Traceback (most recent call last):\n"
               '  File "/workspace/train.py", line 88, in <module>\n'
               "    out = model(batch)\n"
               "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 "
               "has a total capacity of 79.15 GiB of which 1.06 GiB is free.\n")
        self.kube.restart("ml", "trainer-0", "trainer", exit_code=1, reason="Error", logs=log)
        msg = self.only_message()
        (d,) = self.krc.wait_diagnosed(1)
        self.assertEqual(d["cause"], "gpu_out_of_memory")
        self.assertEqual(d.get("gpus"), 2)
        text = full_text(msg)
        self.assertEqual(cause_code(msg), "gpu_out_of_memory")
        self.assertRegex(text, r"\b2 GPUs\b", "the message must say the pod holds 2 GPUs")
        self.assertIn("CUDA out of memory. Tried to allocate 2.00 GiB", log_code(msg))
        self.assert_no_rejections()

    def test_05_no_previous_log_is_a_note_not_a_failure(self):
        url = self.webhook("alerts")
        self.kube.create_pod("shop", "silent-0")
        self.kube.create_pod("shop", "gone-log-0")
        self.start_krc({"SLACK_WEBHOOK_URL": url, "MUTE_SECONDS": "0"})
        # 1. the previous instance wrote nothing: 200 with an empty body
        self.kube.restart("shop", "silent-0", "app", exit_code=2, reason="Error", logs="")
        # 2. the previous container is gone (no containerID): the API answers 400
        #    'previous terminated container "app" in pod "gone-log-0" not found'
        now = utcnow()
        self.kube.set_container_status("shop", "gone-log-0", "app", {
            "restartCount": 1, "lastState": {"terminated": {
                "exitCode": 2, "reason": "Error", "startedAt": iso(now - timedelta(minutes=1)),
                "finishedAt": iso(now)}}})
        self.slack.wait_messages(2, timeout=30)
        self.wait_posted(2)
        msgs = self.slack.messages()
        self.assertEqual(len(msgs), 2)
        by_pod = {}
        for m in msgs:
            self.assert_valid(m)
            for pod in ("silent-0", "gone-log-0"):
                if "shop/" + pod in m["text"]:
                    by_pod[pod] = m
        self.assertEqual(set(by_pod), {"silent-0", "gone-log-0"})
        self.assertEqual(len(self.krc.diagnosed()), 2)
        statuses = {r["query"].get("previous"): r["status"] for r in self.kube.requests()
                    if r["path"] == "/api/v1/namespaces/shop/pods/gone-log-0/log"}
        self.assertEqual(statuses, {"true": 400}, "the fake should have answered 400")
        gone = full_text(by_pod["gone-log-0"])
        self.assertIn("no previous log", gone.lower())
        # said once; the API's words ("previous terminated container ... not found") change
        # nothing for the reader and are not repeated
        self.assertEqual(len(re.findall(r"no previous log|previous log[^.\n]*not available",
                                        gone, re.I)), 1, gone)
        self.assertNotIn("previous terminated container", gone)
        silent = full_text(by_pod["silent-0"])
        self.assertRegex(silent.lower(), r"empty|no previous log|wrote nothing")
        self.assertEqual(self.krc.logs(contains="not delivered"), [])
        self.assert_no_rejections()


class SafetyAndDelivery(AlertTestBase):
    def test_06_huge_line_bad_bytes_and_mentions_stay_safe(self):
        url = self.webhook("alerts")
        pod = self.kube.create_pod("web", "front-0")
        self.start_krc({"SLACK_WEBHOOK_URL": url})
        hostile = "ping <!channel> and <!here> and <@U123> ``` closing fence <https://evil|click>"
        self.kube.add_pod_event(pod, "Failed", "probe said: " + hostile, container="app")
        # The collector keeps the end (64 KiB) of the last 50 lines: the 1 MB line comes
        # first and is dropped, the hostile short lines and a long line after it are shown.
        log = ("<!channel> " + "A" * (1024 * 1024) + " end-of-huge-line\n"
               + "bad bytes \udcff\udcfe\udcc3( in the middle\n"
               + hostile + "\n"
               + "```\n"
               + "triple ``` fence `inline` and ````` five\n"
               + "\x1b[31mred ansi\x1b[0m and a\ttab\n"
               + "<!channel> " + "B" * 5000 + " end-of-long-line\n")
        self.kube.restart("web", "front-0", "app", exit_code=1, reason="Error", logs=log)
        msg = self.only_message()
        self.wait_log("posted (1 attempt)")
        self.assertEqual(self.krc.logs(contains="plain text"), [],
                         "the blocks should have been accepted as they are")
        self.assert_no_rejections()
        text = full_text(msg)
        self.assertIn("&lt;!channel&gt;", text)
        self.assertIn("&lt;@U123&gt;", text)
        self.assertIn("\ufffd", log_code(msg), "invalid UTF-8 should show as U+FFFD")
        self.assertIn("bad bytes", log_code(msg))
        self.assertNotIn("\x1b", json.dumps(msg["body"]))
        self.assertIn("BBBBBBBBBB", log_code(msg))
        self.assertIn("[line cut]", log_code(msg))
        self.assertLessEqual(msg["counts"]["total_chars"], 40000)
        # the event message is escaped too
        ev = find_block(msg, "probe said")
        self.assertIsNotNone(ev)
        self.assertNotIn("<!", block_text(ev))

    def test_07_429_retry_after_and_500_burst(self):
        url = self.webhook("alerts")
        self.kube.create_pod("shop", "a-0")
        self.kube.create_pod("shop", "b-0")
        self.start_krc({"SLACK_WEBHOOK_URL": url})
        self.slack.fault(type="respond", status=429, retry_after=2, count=1,
                         path_regex="^/services/")
        t0 = time.monotonic()
        self.kube.restart("shop", "a-0", "app", exit_code=1, logs="boom a\n")
        self.slack.wait_messages(1, timeout=30)
        self.assertGreaterEqual(time.monotonic() - t0, 2.0, "Retry-After 2 not honoured")
        self.wait_log("rate limited (429), retrying in 2.0s")
        self.wait_log("alert for shop/a-0 container app (app_error) posted (2 attempts)")
        self.slack.fault(type="respond", status=500, count=3, path_regex="^/services/")
        self.kube.restart("shop", "b-0", "app", exit_code=1, logs="boom b\n")
        self.wait_log("alert for shop/b-0", timeout=60)
        self.wait_log("alert for shop/b-0 container app (app_error) posted (4 attempts)",
                          timeout=5)
        time.sleep(1.5)  # a window for duplicates; asserted below
        msgs = self.slack.messages()
        self.assertEqual(sorted(re.search(r": ([^\s/]+/[^\s/]+?)(?= |$)", m["text"]).group(1)
                                for m in msgs), ["shop/a-0", "shop/b-0"],
                         [m["text"] for m in msgs])
        for m in msgs:
            self.assert_valid(m)
        retries = self.krc.logs(contains="retrying in")
        self.assertGreaterEqual(len(retries), 4, "1 retry after the 429, 3 after the 500s")
        self.assertEqual(len(self.krc.logs(contains="rollup_error; retrying")), 3)
        st = self.slack.stats()
        self.assertEqual(st["faults_applied"], 4)
        self.assertEqual(st["accepted"]["webhook"], 2)

    def test_08_invalid_blocks_and_invalid_payload_fall_back_to_text(self):
        url = self.webhook("alerts")
        self.kube.create_pod("shop", "a-0")
        self.kube.create_pod("shop", "b-0")
        self.start_krc({"SLACK_WEBHOOK_URL": url})
        self.slack.fault(type="respond", status=400, error="invalid_blocks", count=1)
        self.kube.restart("shop", "a-0", "app", exit_code=137, reason="OOMKilled",
                          logs="fill\n")
        self.wait_log("alert for shop/a-0 container app (oom_killed) posted as plain text "
                          "(2 attempts)")
        self.slack.fault(type="respond", status=400, error="invalid_payload", count=1)
        self.kube.restart("shop", "b-0", "app", exit_code=1, logs=TRACEBACK)
        self.wait_log("alert for shop/b-0 container app (app_error) posted as plain text "
                          "(2 attempts)")
        msgs = self.slack.messages()
        self.assertEqual(len(msgs), 2)
        for m, pod, cause in ((msgs[0], "a-0", "OOM"), (msgs[1], "b-0", "")):
            self.assert_valid(m)
            self.assertNotIn("blocks", m["body"], "the fallback is text only")
            self.assertIn("shop/" + pod, m["text"])
            self.assertIn(cause, m["text"])
            self.assertLessEqual(len(m["text"]), 4000)
        self.assertIn("ValueError", msgs[1]["text"], "the fallback should carry the log tail")
        # Slack's answer is logged
        self.assertEqual(len(self.krc.logs(contains="invalid_blocks")), 1)
        self.assertEqual(len(self.krc.logs(contains="invalid_payload")), 1)

    def test_16_webhook_url_and_token_never_in_output(self):
        # debug logging (the harness default), a webhook in the config file, one in a route,
        # one revoked (an error that names the destination) and a bot token in the env.
        good = self.webhook("alerts")
        routed = self.webhook("routed")
        revoked = self.slack.webhook_url("revoked", revoked=True)
        self.secrets += [revoked, revoked.rsplit("/", 1)[1]]
        cfg = self.config_file("slackWebhookUrl: %s\nroutes:\n  - namespace: dead\n"
                               "    webhookUrl: %s\n  - namespace: routed\n"
                               "    webhookUrl: %s\n" % (good, revoked, routed))
        self.kube.create_pod("shop", "a-0")
        self.kube.create_pod("dead", "b-0")
        self.kube.create_pod("routed", "c-0")
        self.start_krc({}, ["--config", cfg])
        self.kube.restart("shop", "a-0", "app", exit_code=1, logs="x\n")
        self.kube.restart("dead", "b-0", "app", exit_code=1, logs="y\n")
        self.kube.restart("routed", "c-0", "app", exit_code=1, logs="z\n")
        self.wait_log("alert for dead/b-0 container app (app_error) not delivered")
        self.wait_posted(2)
        self.assertIn("no_service", self.krc.logs(contains="not delivered")[0]["msg"])
        self.assertEqual(len(self.slack.messages()), 2)
        out = self.krc.text()
        self.assertIn("127.0.0.1", out)  # the host may be named ...
        for s in self.secrets:  # ... never the secret path (tearDown checks again at exit)
            self.assertNotIn(s, out)
        self.assertNotIn("/services/T0FAKE0001/", out)

    def test_16_bot_token_never_in_output(self):
        token = self.slack.token
        self.kube.create_pod("shop", "a-0")
        self.slack.config(channels=[{"id": "C0ALERTS1", "name": "alerts"}])
        self.start_krc({"SLACK_BOT_TOKEN": token, "SLACK_CHANNEL": "#missing",
                        "KRC_SLACK_API_URL": self.slack.api_url})
        self.kube.restart("shop", "a-0", "app", exit_code=1, logs="x\n")
        self.wait_log("not delivered")
        self.assertIn("channel_not_found", self.krc.text())
        self.assertNotIn(token, self.krc.text())
        self.assertNotIn(token[5:], self.krc.text())


class NoiseControl(AlertTestBase):
    def test_09_mute_second_restart_of_same_pod(self):
        url = self.webhook("alerts")
        self.kube.create_pod("shop", "flaky-0")
        self.start_krc({"SLACK_WEBHOOK_URL": url, "MUTE_SECONDS": "600"})
        self.kube.restart("shop", "flaky-0", "app", exit_code=1, logs="first\n")
        self.slack.wait_messages(1, timeout=30)
        self.kube.restart("shop", "flaky-0", "app", exit_code=1, logs="second\n")
        self.krc.wait_diagnosed(2)
        self.assertEqual([d["decision"] for d in self.krc.diagnosed()], ["alert", "muted"])
        self.assertEqual([r["restart_count"] for r in self.krc.restarts()], [1, 2])
        msg = self.only_message()
        self.assertIn("first", log_code(msg))
        self.assertEqual(len(self.krc.logs(contains="posted (")), 1)
        logs = [r for r in self.kube.requests() if r["path"].endswith("/log")]
        self.assertEqual(len(logs), 1, "a muted restart costs no log fetch")

    def test_10_storm_of_200_restarts(self):
        """Default settings (storm threshold 5 in 30 s, first summary after 10 s)."""
        url = self.webhook("alerts")
        # bare pods (no owner): 200 workloads, 200 incidents (issue 27: the storm guard counts
        # incidents; the repeats of one workload's would be one incident)
        self.kube.bulk_pods("batch", 200, prefix="worker", owner=False)
        self.start_krc({"SLACK_WEBHOOK_URL": url})
        self.wait_log("tracking 200 pods")
        self.kube.clear_requests()
        t0 = time.monotonic()
        t0_wall = time.time()
        for i in range(200):
            # an absolute schedule: 200 restarts 45 ms apart, all within 9 s
            delay = t0 + i * 0.045 - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self.kube.restart("batch", "worker-%05d" % i, "app", exit_code=1,
                              logs="connect to db-0.db:5432 failed: connection refused\n")
        spread = time.monotonic() - t0
        self.assertLess(spread, 10.0, "the test could not inject the restarts in time")
        self.krc.wait_diagnosed(200, timeout=60)
        self.assertEqual(len(self.krc.restarts()), 200)
        decisions = [d["decision"] for d in self.krc.diagnosed()]
        self.assertEqual(set(decisions) - {"alert", "grouped"}, set(), decisions)
        self.wait_log("alert storm:")
        # what Slack accepted in the first 60 s after the first restart
        h.wait_until(lambda: time.monotonic() - t0 >= 61, 62, what="61 s")
        msgs = self.slack.messages()
        first_minute = [m for m in msgs if m["time"] <= t0_wall + 60]
        self.assertLessEqual(len(first_minute), 3, [m["text"][:100] for m in first_minute])
        for m in msgs:
            self.assert_valid(m)
        st = self.slack.stats()
        self.assertEqual(st["status_429"], 0)
        self.assertEqual(st["rate_limited"], 0)
        fetches = [r for r in self.kube.requests() if r["path"].endswith("/log")]
        self.assertLessEqual(len(fetches), 10, "log fetches for grouped restarts")
        summaries = self.krc.logs(contains="storm summary of")
        self.assertGreaterEqual(len(summaries), 1)
        summary_msgs = [m for m in msgs if "storm" in m["text"].lower()]
        self.assertEqual(len(summary_msgs), len(summaries))
        self.assertIn("batch", full_text(summary_msgs[0]))
        # every restart is counted: posted individually or in a summary
        posted = [x for x in self.krc.logs(contains=" posted (") if x["msg"].startswith("alert")]
        summed = sum(int(re.search(r"storm summary of (\d+) restarts posted", x["msg"]).group(1))
                     for x in summaries)
        self.assertEqual(len(posted) + summed, 200,
                         "%d alerted + %d in summaries" % (len(posted), summed))
        first = int(re.search(r"storm summary of (\d+)", summaries[0]["msg"]).group(1))
        text = full_text(summary_msgs[0])
        self.assertRegex(text, r"\b%d restarts\b" % first)
        # The remaining checks are gathered, so one run shows every shortcoming.
        problems = []
        # The reader must be able to tell how many restarts the storm had: the restarts
        # alerted one by one before it began are named (or the total is given).
        if not (re.search(r"\b200\b", text) or
                re.search(r"\b%d\b[^.\n]*alerted" % len(posted), text)):
            problems.append("the first summary says %d restarts but neither the total (200) "
                            "nor the %d alerted one by one before the storm: %r"
                            % (first, len(posted), text[:300]))
        # The log tells the truth about each restart: one logged with decision "alert" was
        # posted, or a later line says it went into the summary instead.
        lost = []
        for d in self.krc.diagnosed(decision="alert"):
            key = "%s/%s" % (d["namespace"], d["pod"])
            said = [x for x in self.krc.logs(contains=key)
                    if "posted (" in x["msg"] or "group" in x["msg"]]
            if not said:
                lost.append(key)
        if lost:
            problems.append("%d restart(s) logged with decision alert were neither posted nor "
                            "logged as grouped (%d alerts were posted): %s"
                            % (len(lost), len(posted), lost))
        if problems:
            self.fail("storm handling:\n- " + "\n- ".join(problems))

    def test_10b_alerts_grouped_by_a_storm_are_not_sent_after_a_restart_of_krc(self):
        """Alerts withdrawn into a storm summary stay withdrawn: the history's outbox must not
        resume them when krc starts again."""
        url = self.webhook("alerts")
        dbdir = tempfile.mkdtemp(prefix="krc-it-db-")
        self.tmpdirs.append(dbdir)
        db = os.path.join(dbdir, "krc.db")
        env = {"SLACK_WEBHOOK_URL": url, "KRC_DB": db, "KRC_STORM_THRESHOLD": "4",
               "KRC_STORM_SUMMARY_DELAY": "1s"}
        for i in range(8):  # bare pods: one incident each (the storm counts incidents)
            self.kube.create_pod("batch", "job-%d" % i, owner=False)
        self.start_krc(env)
        # four alerts: one posted at once, the others wait for the 1/s pacing ...
        for i in range(4):
            self.kube.restart("batch", "job-%d" % i, "app", exit_code=1, logs="boom\n")
        self.krc.wait_diagnosed(4, decision="alert")
        # ... when the fifth restart starts a storm that takes the queued ones back
        for i in range(4, 8):
            self.kube.restart("batch", "job-%d" % i, "app", exit_code=1, logs="boom\n")
        self.krc.wait_diagnosed(8)
        self.wait_log("storm summary of")
        posted = len(self.krc.logs(contains=" posted ("))
        before = self.slack.messages()
        self.assertEqual(len(before), posted)
        self.assertLessEqual(len(before), 4, [m["text"][:80] for m in before])
        first = self.krc
        self.assertEqual(first.stop(), 0)
        for s in self.secrets:
            self.assertNotIn(s, first.text())
        # the same history database, a new process
        self.start_krc(env)
        self.wait_log("started")
        time.sleep(3)  # resumed alerts would be posted now (paced 1/s); asserted below
        after = self.slack.messages()
        self.assertEqual(len(after), len(before),
                         "krc posted %d old alert(s) after its restart: %s; log: %s"
                         % (len(after) - len(before), [m["text"][:80] for m in after[len(before):]],
                            [x["msg"] for x in self.krc.logs(contains="outbox")]))

    def test_15_silence_and_log_ignore(self):
        url = self.webhook("alerts")
        now = utcnow()
        cfg = self.config_file(
            "slackWebhookUrl: %s\n"
            "logIgnorePatterns:\n  - 'known flaky shutdown \\(ticket [0-9]+\\)'\n"
            "silences:\n"
            "  - namespace: maint\n    reason: database maintenance\n"
            "    start: %s\n    end: %s\n"
            "  - namespace: old-maint\n    start: %s\n    end: %s\n"
            % (url, iso(now - timedelta(hours=1)), iso(now + timedelta(hours=1)),
               iso(now - timedelta(hours=3)), iso(now - timedelta(hours=2))))
        self.secrets.append(url)
        for ns, pod in (("maint", "db-0"), ("shop", "noisy-0"), ("shop", "web-0"),
                        ("old-maint", "db-0")):
            self.kube.create_pod(ns, pod)
        self.start_krc({}, ["--config", cfg])
        self.kube.restart("maint", "db-0", "app", exit_code=1, logs="maintenance restart\n")
        self.kube.restart("shop", "noisy-0", "app", exit_code=1,
                          logs="shutting down\nknown flaky shutdown (ticket 4711)\n")
        self.kube.restart("shop", "web-0", "app", exit_code=1, logs="real problem\n")
        self.kube.restart("old-maint", "db-0", "app", exit_code=1, logs="after the window\n")
        self.krc.wait_diagnosed(4)
        self.slack.wait_messages(2, timeout=30)
        time.sleep(2)  # a window for unwanted messages; asserted below
        texts_ = sorted(m["text"] for m in self.slack.messages())
        self.assertEqual(len(texts_), 2, texts_)
        self.assertIn("shop/web-0", texts_[0] + texts_[1])
        self.assertIn("old-maint/db-0", texts_[0] + texts_[1])
        dec = {(d["namespace"], d["pod"]): d["decision"] for d in self.krc.diagnosed()}
        self.assertEqual(dec[("maint", "db-0")], "silenced")
        self.assertEqual(dec[("shop", "web-0")], "alert")
        self.assertEqual(dec[("old-maint", "db-0")], "alert")
        # a restart suppressed by a log-ignore pattern is recorded as silenced, not "alert"
        self.assertEqual(dec[("shop", "noisy-0")], "silenced",
                         "the log-ignored restart is logged with decision %r"
                         % dec[("shop", "noisy-0")])


class Routing(AlertTestBase):
    def test_11_routes_and_channel_annotation(self):
        default = self.webhook("general", mode="legacy", channel="#general")
        team_a = self.webhook("team-a")
        pay = self.webhook("payments")
        cfg = self.config_file(
            "routes:\n"
            "  - namespace: team-a\n    webhookUrl: %s\n"
            "  - pod: pay\n    webhookUrlEnv: KRC_IT_PAY_WEBHOOK\n" % team_a)
        self.kube.create_pod("team-a", "api-0")
        self.kube.create_pod("team-a", "payroll-0")  # first match wins: team-a
        self.kube.create_pod("shop", "payments-0")
        self.kube.create_pod("shop", "web-0")
        self.kube.create_pod("shop", "annotated-0",
                             annotations={"alert-slack-channel": "#shop-oncall"})
        self.kube.create_pod("shop", "labelled-0", labels={"alert-slack-channel": "shop-labels"})
        self.kube.create_pod("team-a", "annotated-0",
                             annotations={"alert-slack-channel": "#ignored"})
        self.start_krc({"SLACK_WEBHOOK_URL": default, "KRC_IT_PAY_WEBHOOK": pay},
                       ["--config", cfg])
        plan = [("team-a", "api-0"), ("team-a", "payroll-0"), ("shop", "payments-0"),
                ("shop", "web-0"), ("shop", "annotated-0"), ("shop", "labelled-0"),
                ("team-a", "annotated-0")]
        for ns, pod in plan:
            self.kube.restart(ns, pod, "app", exit_code=1, logs="crash\n")
        self.wait_posted(len(plan), timeout=40)
        time.sleep(1.5)  # duplicates would show up here; asserted below
        msgs = self.slack.messages()
        self.assertEqual(len(msgs), len(plan), [m["text"] for m in msgs])
        where = {}
        for m in msgs:
            self.assert_valid(m)
            key = re.search(r": ([^\s/]+/[^\s/]+?)(?= |$)", m["text"]).group(1)
            self.assertNotIn(key, where, "duplicate message for " + key)
            where[key] = (m["webhook"], m["channel"], m["ignored_overrides"])
        p = self.slack.webhook_path
        self.assertEqual(where["team-a/api-0"][:2], (p("team-a"), "#team-a"))
        self.assertEqual(where["team-a/payroll-0"][:2], (p("team-a"), "#team-a"))
        self.assertEqual(where["shop/payments-0"][:2], (p("payments"), "#payments"))
        self.assertEqual(where["shop/web-0"][:2], (p("general"), "#general"))
        self.assertEqual(where["shop/annotated-0"][:2], (p("general"), "#shop-oncall"))
        self.assertEqual(where["shop/labelled-0"][:2][0], p("general"))
        self.assertIn(where["shop/labelled-0"][1], ("shop-labels", "#shop-labels"))
        # an app webhook is bound to its channel: the annotation is ignored by Slack
        self.assertEqual(where["team-a/annotated-0"][:2], (p("team-a"), "#team-a"))
        self.assertIn("channel", where["team-a/annotated-0"][2])

    def test_12_no_destination(self):
        """Nothing configured at all (the Kubernetes Event, on by default, turned off too:
        with it the restart has a destination, test_kube_event.py)."""
        self.kube.create_pod("shop", "web-0")
        self.start_krc({"KRC_KUBERNETES_EVENTS": "false"})
        self.wait_log("no Slack destination configured")
        warn = self.krc.logs(contains="no Slack destination configured")[0]
        self.assertEqual(warn["level"], "warn")
        self.kube.restart("shop", "web-0", "app", exit_code=137, reason="OOMKilled",
                          logs="x\n")
        (d,) = self.krc.wait_diagnosed(1)
        self.assertEqual((d["cause"], d["decision"]), ("oom_killed", "not_posted"))
        time.sleep(1)  # anything sent would arrive here; asserted below
        self.assertEqual(self.slack.requests(), [])
        # it still collects everything for the record
        self.assertTrue([r for r in self.kube.requests() if r["path"].endswith("/log")])


class WebApi(AlertTestBase):
    def start_api(self, extra=None):
        env = {"SLACK_BOT_TOKEN": self.slack.token, "SLACK_CHANNEL": "#alerts",
               "KRC_SLACK_API_URL": self.slack.api_url, "MUTE_SECONDS": "600",
               "KRC_RECOVERED_AFTER": "2s"}
        env.update(extra or {})
        return self.start_krc(env)

    def test_13_thread_file_reply_and_recovered(self):
        self.kube.create_pod("shop", "cart-0")
        # issue 27: a repeat of the incident is a reply at most once per
        # incidentReplyInterval (default 10m); 0 here: each repeat is one, as this test needs
        self.start_api({"KRC_INCIDENT_REPLY_INTERVAL": "0s"})
        self.wait_log("Web API")
        full = "".join("request %04d served in 12ms\n" % i for i in range(1, 201))
        full += "panic: runtime error: invalid memory address or nil pointer dereference\n"
        self.kube.restart("shop", "cart-0", "app", exit_code=2, reason="Error", logs=full,
                          waiting=True)
        (parent,) = self.slack.wait_messages(1, timeout=30, kind="chat.postMessage")
        self.assert_valid(parent)
        self.assertIsNone(parent["thread_ts"])
        self.assertEqual(parent["channel"].lstrip("#"), "alerts")
        ts = parent["ts"]
        self.assertRegex(ts, r"^\d+\.\d{6}$")
        # the whole previous log (not only the 50-line tail) as a file in the thread
        files = self.slack.wait_for(lambda: [f for f in self.slack.files() if f["completed"]],
                                    20, what="a completed file upload")
        self.assertEqual(len(files), 1)
        f = files[0]
        self.assertEqual(f["thread_ts"], ts)
        self.assertIn("request 0001 served", f["text"])
        self.assertIn("request 0200 served", f["text"])
        self.assertIn("nil pointer dereference", f["text"])
        self.assertNotIn("request 0001 served", log_code(parent), "the tail is 50 lines")
        shares = self.slack.messages(kind="file_share")
        self.assertEqual([s["thread_ts"] for s in shares], [ts])
        # the second restart is a reply in that thread, not a new message and not muted
        self.kube.restart("shop", "cart-0", "app", exit_code=2, reason="Error",
                          logs="panic: again\n", waiting=True)
        self.krc.wait_diagnosed(2)
        self.assertEqual([d["decision"] for d in self.krc.diagnosed()],
                         ["alert", "thread_reply"])
        self.wait_log("thread reply for shop/cart-0 container app")
        posts = self.slack.messages(kind="chat.postMessage")
        self.assertEqual(len(posts), 2)
        self.assertEqual(posts[1]["thread_ts"], ts)
        self.assertFalse(posts[1]["reply_to_reply"])
        self.assertIn("panic: again", log_code(posts[1]))
        # the container comes back and runs ready: the incident's one "resolved" reply (issue
        # 27: it replaces the pod's "recovered" one) in the same thread
        self.kube.set_container_status("shop", "cart-0", "app", {
            "ready": True, "started": True,
            "state": {"waiting": None, "running": {"startedAt": iso(utcnow())}}})
        t_ready = time.monotonic()
        try:
            rec = self.slack.wait_for(
                lambda: [m for m in self.slack.messages(kind="chat.postMessage")
                         if m["ts"] not in (ts, posts[1]["ts"])], 20)
        except TimeoutError:
            self.fail("no recovered reply within 20 s of the container running ready "
                      "(recoveredAfter 2s) after a thread reply; krc logged: %s"
                      % [x["msg"] for x in self.krc.logs(contains="recovered")])
        self.assertGreaterEqual(time.monotonic() - t_ready, 1.0)
        self.assertEqual(rec[0]["thread_ts"], ts)
        self.assertEqual(len(rec), 1)
        self.assertRegex(rec[0]["text"].lower(), r"recovered|run ready")
        self.assertIn("cart-0", full_text(rec[0]))
        self.assert_no_rejections()

    def test_13b_recovered_after_a_single_restart(self):
        self.kube.create_pod("shop", "api-0")
        self.start_api()
        # the new instance runs (and is ready) from the moment of the restart
        self.kube.restart("shop", "api-0", "app", exit_code=1, logs="oops\n")
        (parent,) = self.slack.wait_messages(1, timeout=30, kind="chat.postMessage")
        rec = self.slack.wait_messages(2, timeout=25, kind="chat.postMessage")[1]
        self.assertEqual(rec["thread_ts"], parent["ts"])
        self.assertIn("ready", full_text(rec).lower())
        # issue 27: the incident's resolved message replaces the pod's recovered reply
        self.wait_log("resolved message of incident #1 (Deployment shop/api, pod api-0) posted",
                      timeout=5)

    def test_13c_recovered_after_crashloop_backoff(self):
        """The usual case: the container is in CrashLoopBackOff when the alert goes out and
        only later runs ready; the reply must follow recoveredAfter (2 s), not minutes."""
        self.kube.create_pod("shop", "queue-0")
        self.start_api()
        self.kube.restart("shop", "queue-0", "app", exit_code=1, logs="oops\n", waiting=True)
        (parent,) = self.slack.wait_messages(1, timeout=30, kind="chat.postMessage")
        self.kube.clear_requests()
        # the watch sees the container come up (no GET: recovery comes from the watch events)
        pod_path = "/api/v1/namespaces/shop/pods/queue-0"
        self.kube.set_container_status("shop", "queue-0", "app", {
            "ready": True, "started": True,
            "state": {"waiting": None, "running": {"startedAt": iso(utcnow())}}})
        t_ready = time.monotonic()
        try:
            rec = self.slack.wait_messages(2, timeout=20, kind="chat.postMessage")[1]
        except TimeoutError:
            self.fail("no recovered reply within 20 s of the container running ready "
                      "(recoveredAfter 2s)")
        self.assertGreaterEqual(time.monotonic() - t_ready, 1.0)
        self.assertEqual([r for r in self.kube.requests() if r["path"] == pod_path], [],
                         "krc GET the pod although the watch showed it")
        self.assertEqual(rec["thread_ts"], parent["ts"])

    def test_14_redaction_in_messages_and_files(self):
        self.kube.create_pod("auth", "login-0")
        self.start_api({"KRC_REDACT_PATTERNS": "acct-[0-9]{6}"})
        jwt = ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0."
               "abcDEF1234567890ghiJKL_mnoPQR-stuVWX")
        log = ("connecting with password=hunter2 to db\n"
               "session token " + jwt + " accepted\n"
               "GET /v1/me Authorization: Bearer abcdef123456\n"
               "customer acct-004711 rejected\n"
               "fatal: login failed\n")
        pod = self.kube.get_pod("auth", "login-0")
        self.kube.add_pod_event(pod, "Failed", "probe with password=hunter2 failed",
                                container="app")
        self.kube.restart("auth", "login-0", "app", exit_code=1, logs=log)
        (msg,) = self.slack.wait_messages(1, timeout=30, kind="chat.postMessage")
        files = self.slack.wait_for(lambda: [f for f in self.slack.files() if f["completed"]],
                                    20, what="the log file")
        self.assertIn("fatal: login failed", log_code(msg))
        self.assertIn("fatal: login failed", files[0]["text"])
        secrets = ["hunter2", jwt, "eyJzdWIiOiIxIn0", "abcdef123456", "acct-004711"]
        for m in self.slack.messages():
            raw = json.dumps(m["body"], ensure_ascii=False)
            for s in secrets:
                self.assertNotIn(s, raw, "secret %r reached Slack in a message" % s)
        for f in self.slack.files():
            for s in secrets:
                self.assertNotIn(s, f.get("text") or "", "secret %r in the uploaded file" % s)
        self.assertRegex(full_text(msg).lower(), r"\d+ secrets? redacted")
        n = int(re.search(r"(\d+) secrets? redacted", full_text(msg).lower()).group(1))
        self.assertGreaterEqual(n, 4)


if __name__ == "__main__":
    h.main()
