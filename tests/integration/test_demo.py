#!/usr/bin/env python3
"""Run the real `krc demo` and check what it promises (docs/demo.md):

    python3 test_demo.py --krc /path/to/krc [unittest options]

- a full run (with an http_proxy in the environment): exit 0 well under a minute; every scenario pod recorded with the
  cause code its real case calls for; the NotReady node's 8 memcached restarts
  are one incident (issue 27: one alert, the others muted, no storm); every alert reached the embedded
  Slack webhook and was printed; alerts.html exists and parses; `krc history
  --db` and `krc mcp --db` (stdio, tools/call list_restarts) work on the
  history; headless Chromium (Debian's `chromium`, a test dependency: its
  absence fails the test) loads alerts.html and its screenshot is not blank; the
  the rest: no generated file (kubeconfig, config) is left; the port is free.
- Ctrl-C: SIGINT mid-run (and before krc has synced) ends it with exit 130,
  promptly, leaving no generated file, a free port and a sound history.
- the simulated API server speaks the protocol docs/demo.md describes (checked
  over HTTP while a demo runs: 401 without the token, LIST pages, streaming
  list and watch, field selectors, the previous log, Status errors).
- bad options: exit 2; an output directory that cannot be made: exit 1 naming it.
"""
import argparse
import calendar
import html.parser
import http.client
import json
import os
import re
import select
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest
import zlib

KRC = None
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RUN_LIMIT_S = 60  # a generous bound, not a benchmark (docs/performance.md has none for this)

# pod (namespace/name) -> the cause its case calls for (scenario.c; docs/demo.md)
EXPECTED = {
    "event-streams/es-zookeeper-0": "oom_killed",
    "test/liveness-rc-rlchs": "liveness_probe_failed",
    "astronomer/airflow-worker-0": "app_error",
    "ml-training/llama-ft-sweep-lr3e5-7xkq2": "gpu_out_of_memory",
    "llm/lightspeed-core-85b57d9576-bdz6c": "command_not_found",
    "argo/my-py-workflow-4181571205": "start_failed",
    "backstage/backstage-backend-6d9c7b8f5-x2lqp": "dependency_unreachable",
}
# The case's files alone give `killed`; in the demo the node goes NotReady first, and a
# collected storm restart (its events and node read) names it: `node_not_ready`; since issue 27
# the 8 pods are one incident whose muted repeats carry that cause. A restart
# the storm guard grouped is not collected (docs/causes.md, "Muted repeats"): diagnosed from
# what the watch saw, nothing shows the node, and it reads `killed`.
STORM = {"cache/memcached-%d" % i: "node_not_ready" for i in range(8)}
STORM_GROUPED_CAUSE = "killed"
# the crash loops: pod -> how often its container crashes (restartCount 1..N)
CRASH_LOOPS = {"astronomer/airflow-worker-0": 3, "ml-training/llama-ft-sweep-lr3e5-7xkq2": 3}
STORM_NODE = "small-1gb-3"
# The field demonstrations (issue 26; scenario.c, docs/demo.md): 1.35-shaped pods composed from
# the Kubernetes API reference, labelled as such, not public cases.
# pod -> container -> (cause, decision, delivery)
FIELD = {
    "batch/etl-shard-3-q8v2n": {"loader": ("restart_rule", "intentional", None)},
    # one alert, for the container whose exit triggered the restart of all 4
    "inference/infer-0": {"server": ("app_error", "alert", "delivered"),
                          "tokenizer": ("restarted_with_others", "intentional", None),
                          "metrics": ("restarted_with_others", "intentional", None),
                          "cache": ("restarted_with_others", "intentional", None)},
    "ml-serving/vllm-0": {"vllm": ("gpu_device_unhealthy", "alert", "delivered")},
    "analytics/report-builder-7c9d5f6b8-m4tqz": {"builder": ("oom_killed", "alert", "delivered")},
}
FIELD_RESTARTS = sum(len(v) for v in FIELD.values())
# the proving field of each, as the report JSON of `krc history show` has it
FIELD_PROOF = {
    "batch/etl-shard-3-q8v2n": "restart_policy_rules",
    "inference/infer-0": "restart_policy_rules",
    "ml-serving/vllm-0": "allocated_resources_status",
}
# Change tracking (issue 27; docs/demo.md "What changed"): the first alert of each alerted pod
# says what changed before its first crash. The missing-binary case's Deployment rolled out
# revision 2 (the simulation's own rollout: its previous revision's args named the image's
# command) 4 min before; the storm's node went NotReady; the other tracked workloads, served
# by the simulated cluster, did not change (the StatefulSets' one ControllerRevision and the
# other two Deployments' one ReplicaSet are 30 days old; a Job's template cannot change); a
# ReplicationController's or an Argo Workflow's pod is not tracked: no line.
NO_CHANGE = "No change to the workload or its node in the 24 h before the first crash."
WHAT_CHANGED = {
    "llm/lightspeed-core-85b57d9576-bdz6c":
        r"Deployment llm/lightspeed-core rolled out revision 2 at \d\d:\d\d, 4 min before the "
        r"first crash: args python3\.12 src/lightspeed_stack\.py → -c "
        r"/app-config/lightspeed-stack\.yaml",
    "cache/memcached-0":
        r"Node small-1gb-3 changed at \d\d:\d\d, \d+ s before the first crash: "
        r"condition DiskPressure False → Unknown; condition MemoryPressure False → Unknown; "
        r"condition PIDPressure False → Unknown; condition Ready True → Unknown",
    "event-streams/es-zookeeper-0": re.escape(NO_CHANGE),
    "astronomer/airflow-worker-0": re.escape(NO_CHANGE),
    "ml-training/llama-ft-sweep-lr3e5-7xkq2": re.escape(NO_CHANGE),
    "backstage/backstage-backend-6d9c7b8f5-x2lqp": re.escape(NO_CHANGE),
    "inference/infer-0": re.escape(NO_CHANGE),
    "ml-serving/vllm-0": re.escape(NO_CHANGE),
    "analytics/report-builder-7c9d5f6b8-m4tqz": re.escape(NO_CHANGE),
    "test/liveness-rc-rlchs": None,
    "argo/my-py-workflow-4181571205": None,
}
# the StatefulSets and Jobs the simulated cluster serves, the owners of the cases' pods
STATEFULSETS = {("event-streams", "es-zookeeper"), ("astronomer", "airflow-worker"),
                ("cache", "memcached"), ("inference", "infer"), ("ml-serving", "vllm")}
JOBS = {("ml-training", "llama-ft-sweep-lr3e5"), ("batch", "etl-shard-3")}
# labels the StatefulSet controller adds to each of its pods (not in the template)
STS_POD_LABELS = {"controller-revision-hash", "statefulset.kubernetes.io/pod-name",
                  "apps.kubernetes.io/pod-index"}
# what change tracking lists and watches (src/track/track.c), all synced against the simulation
TRACKED = ["deployments", "replicasets", "statefulsets", "daemonsets", "controllerrevisions",
           "jobs", "cronjobs", "nodes"]
KEPT = {"history.db", "history.db-wal", "history.db-shm", "alerts.html"}


def mcp_call(tool, args):
    """structuredContent of one tools/call over `krc mcp --db` (stdio)."""
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "test_demo", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": tool, "arguments": args}}]
    p = subprocess.run([KRC, "mcp", "--db", RUN["db"]],
                       input="".join(json.dumps(m) + "\n" for m in msgs),
                       capture_output=True, text=True, timeout=30, check=True)
    answers = {a.get("id"): a for a in map(json.loads, p.stdout.splitlines())}
    res = answers[2]["result"]
    if res.get("isError"):
        raise AssertionError("%s: %s" % (tool, res["content"][0]["text"]))
    return res["structuredContent"]


def port_is_free(port):
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def sim_port(text):
    m = re.search(r"http://127\.0\.0\.1:(\d+)", text)
    return int(m.group(1)) if m else None


def read_until(proc, pattern, timeout=30):
    """Read the demo's stdout until `pattern` (bytes regex) is in what was read so
    far; the text read so far. What was read is kept on the Popen object."""
    buf = getattr(proc, "krc_seen", b"")
    deadline = time.monotonic() + timeout
    while not re.search(pattern, buf):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError("no %r in %r" % (pattern, buf[-2000:]))
        r, _, _ = select.select([proc.stdout], [], [], left)
        if r:
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                raise AssertionError("krc demo ended early: %r" % buf[-2000:])
            buf += chunk
            proc.krc_seen = buf
    return buf.decode("utf-8", "replace")


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = 0
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.tags += 1

    def handle_data(self, data):
        self.text.append(data)


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = body[0:4], body[4:8], body[8], body[9]
            w, h = int.from_bytes(w, "big"), int.from_bytes(h, "big")
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, rows, prev, stride = zlib.decompress(idat), [], bytearray(w * bpp), w * bpp
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


RUN = {}


def setUpModule():
    RUN["tmp"] = tempfile.TemporaryDirectory(prefix="krc-demo-test-")
    out = os.path.join(RUN["tmp"].name, "out")
    t0 = time.monotonic()
    # a proxy in the environment (port 9: nothing listens) must not carry the
    # requests to the simulated cluster on loopback
    env = dict(os.environ, http_proxy="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9",
               no_proxy="example.com", KRC_LOG_LEVEL="info")
    p = subprocess.run([KRC, "demo", "--out", out], capture_output=True, text=True,
                       timeout=RUN_LIMIT_S * 2, env=env)
    RUN.update(out=out, proc=p, elapsed=time.monotonic() - t0,
               db=os.path.join(out, "history.db"))


def tearDownModule():
    RUN["tmp"].cleanup()


class DemoRunTest(unittest.TestCase):
    def setUp(self):
        self.p = RUN["proc"]
        self.assertEqual(self.p.returncode, 0, self.p.stderr[-3000:])

    def history(self):
        p = subprocess.run([KRC, "history", "--db", RUN["db"], "--format", "json",
                            "--limit", "1000"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_finishes_within_a_minute(self):
        self.assertLess(RUN["elapsed"], RUN_LIMIT_S)

    def by_pod(self):
        """pod -> its restarts, oldest first."""
        out = {}
        for r in sorted(self.history(), key=lambda r: r["id"]):
            out.setdefault("%s/%s" % (r["namespace"], r["pod"]), []).append(r)
        return out

    def expected_causes(self):
        """pod -> the cause of its first restart (a storm restart grouped before it was
        queued, delivery None: not collected)."""
        pods = self.by_pod()
        return {pod: (STORM_GROUPED_CAUSE if pod in STORM and pod in pods
                      and pods[pod][0]["decision"] == "grouped"
                      and pods[pod][0]["delivery"] is None else cause)
                for pod, cause in {**EXPECTED, **STORM}.items()}

    def test_every_case_gets_its_cause(self):
        pods = self.by_pod()
        expected = self.expected_causes()
        # the storm's first restarts are collected and name the node
        self.assertIn("node_not_ready", [expected[p] for p in STORM])
        for pod, cause in expected.items():
            self.assertIn(pod, pods, "no restart recorded for %s" % pod)
            first = pods[pod][0]
            self.assertEqual(first["cause"], cause, "%s: %s" % (pod, first["summary"]))
            self.assertEqual([r["restart_count"] for r in pods[pod]],
                             list(range(1, CRASH_LOOPS.get(pod, 1) + 1)), pod)
        self.assertEqual(set(pods), set(EXPECTED) | set(STORM) | set(FIELD))
        for pod in EXPECTED:
            self.assertEqual((pods[pod][0]["decision"], pods[pod][0]["delivery"]),
                             ("alert", "delivered"), pod)

    def test_crash_loops_are_muted_repeats(self):
        """The two crash loops restart 3 times; the repeats come within muteSeconds (600 s),
        so krc records them as muted (nothing posted) and alerts once per pod."""
        pods = self.by_pod()
        for pod in CRASH_LOOPS:
            repeats = pods[pod][1:]
            self.assertEqual([(r["decision"], r["delivery"]) for r in repeats],
                             [("muted", None)] * (CRASH_LOOPS[pod] - 1), pod)
            self.assertTrue(all(r["exit_code"] == 1 for r in repeats), repeats)
            # not collected, the repeats carry the cause of the pod's alert, whose termination
            # they repeat (exit code 1, reason Error), at most medium, and say so
            first = pods[pod][0]
            self.assertEqual([(r["cause"], r["confidence"]) for r in repeats],
                             [(first["cause"], "medium")] * (CRASH_LOOPS[pod] - 1), pod)
            with sqlite3.connect("file:%s?mode=ro" % RUN["db"], uri=True) as db:
                for r in repeats:
                    dg = json.loads(db.execute("SELECT report_json FROM reports WHERE restart_id"
                                               " = ?", (r["id"],)).fetchone()[0])["diagnosis"]
                    self.assertEqual(dg["evidence"][0],
                                     "same exit code 1 and reason Error as restart #%d (diagnosed "
                                     "%s with its log); this restart's log was not collected "
                                     "(muted repeat)" % (first["id"], first["cause"]))
                    self.assertTrue(any("previous log" in u for u in dg["unchecked"]),
                                    dg["unchecked"])
            name = pod.split("/")[1]
            # one alert: one header line "[krc-demo] Title: ns/pod"
            self.assertEqual(len(re.findall(r"^\[krc-demo\] [^\n]*: %s(?: \(|$)" % re.escape(pod),
                                            self.p.stdout, re.M)), 1, "one alert for %s" % pod)
            self.assertIn("%s: crashes again the same way (restartCount %d, the kubelet's "
                          "BackOff)" % (pod, CRASH_LOOPS[pod]), self.p.stdout)
            self.assertIn(name, self.p.stdout)
        # every other pod crashed once
        self.assertEqual(sum(len(v) for v in pods.values()),
                         len(EXPECTED) + len(STORM) + FIELD_RESTARTS
                         + sum(n - 1 for n in CRASH_LOOPS.values()))

    def alert_texts(self):
        """pod -> the text of each alert printed for it (its header line to the "krc" line)."""
        out = {}
        for m in re.finditer(r"^\[krc-demo\] [^\n]*: ([a-z0-9-]+/[a-z0-9-]+)(?: \(|\n)(.*?)^krc$",
                             self.p.stdout, re.M | re.S):
            out.setdefault(m.group(1), []).append(m.group(0))
        return out

    def test_what_changed(self):
        """Change tracking on (trackChanges: true): the first alert of each alerted pod carries
        what changed before its first crash, in the printed alert (Slack's "What changed" field)
        and in its report in the history: the missing-binary case's rollout with the exact
        previous and new args, the storm node's conditions, "no change" for the tracked
        workloads that did not change, and nothing for a pod no tracked kind owns."""
        alerts = self.alert_texts()
        pods = self.by_pod()
        self.assertEqual(set(WHAT_CHANGED) - set(alerts), set(), "pods without a printed alert")
        with sqlite3.connect("file:%s?mode=ro" % RUN["db"], uri=True) as db:
            for pod, want in WHAT_CHANGED.items():
                first = alerts[pod][0]
                line = re.search(r"^What changed: (.*)$", first, re.M)
                report = json.loads(db.execute("SELECT report_json FROM reports WHERE restart_id"
                                               " = ?", (pods[pod][0]["id"],)).fetchone()[0])
                if want is None:
                    self.assertIsNone(line, "%s: %s" % (pod, first))
                    self.assertNotIn("what_changed", report, pod)
                    continue
                self.assertIsNotNone(line, "%s: no what-changed line in %s" % (pod, first))
                self.assertRegex(line.group(1), "^%s$" % want, pod)
                self.assertEqual(report["what_changed"]["summary"], line.group(1), pod)
        # the rollout, as the report's change object has it: who, which revisions, what
        with sqlite3.connect("file:%s?mode=ro" % RUN["db"], uri=True) as db:
            pod = "llm/lightspeed-core-85b57d9576-bdz6c"
            report = json.loads(db.execute("SELECT report_json FROM reports WHERE restart_id = ?",
                                           (pods[pod][0]["id"],)).fetchone()[0])
        [change] = report["what_changed"]["changes"]
        self.assertEqual({k: change[k] for k in ("kind", "namespace", "name", "revision",
                                                 "previous_revision", "manager", "items")},
                         {"kind": "Deployment", "namespace": "llm", "name": "lightspeed-core",
                          "revision": "2", "previous_revision": "1",
                          "manager": "kubectl-client-side-apply",
                          "items": ["args python3.12 src/lightspeed_stack.py → -c "
                                    "/app-config/lightspeed-stack.yaml"]})

    def test_change_tracking_synced(self):
        """Every watch of change tracking reached sync against the simulated cluster (krc's
        info log: "change tracking: R (all namespaces) synced"), none was left out and nothing
        it asked for was refused or missing (no 404, 403 or 406)."""
        err = self.p.stderr
        tail = err[-1500:]
        self.assertTrue("change tracking: 8 of 8 watches started" in err, tail)
        for r in TRACKED:
            self.assertTrue("change tracking: %s (all namespaces) synced" % r in err, (r, tail))
        for bad in ("not started", "change tracking off", "stopped:", "demo: krc listed"):
            self.assertFalse(bad in err, (bad, tail))
        self.assertIsNone(re.search(r"\b(404|403|406)\b|NotFound|Forbidden|NotAcceptable", err),
                          tail)

    def test_summary_shows_the_crash_loop_and_its_gpus(self):
        """restart_summary names the crash-looping workloads (from the pods' ownerReferences)
        and the GPU the crash-looping fine-tuning pod holds."""
        s = mcp_call("restart_summary", {"since": "1h", "limit": 50})
        wl = {(w["namespace"], w["kind"], w["name"]): w["restarts"] for w in s["workloads"]}
        self.assertEqual(wl[("ml-training", "Job", "llama-ft-sweep-lr3e5")], 3)
        # the CUDA crash loop's muted repeats carry its gpu_out_of_memory (not app_error)
        top = {(w["namespace"], w["kind"], w["name"]): w["top_cause"] for w in s["workloads"]}
        self.assertEqual(top[("ml-training", "Job", "llama-ft-sweep-lr3e5")], "gpu_out_of_memory")
        self.assertEqual(wl[("astronomer", "StatefulSet", "airflow-worker")], 3)
        self.assertEqual(wl[("cache", "StatefulSet", "memcached")], 8)
        # a ReplicaSet NAME-HASH with the pod-template-hash label is its Deployment
        self.assertEqual(wl[("backstage", "Deployment", "backstage-backend")], 1)
        self.assertEqual(wl[("llm", "Deployment", "lightspeed-core")], 1)
        self.assertEqual([(p["namespace"], p["pod"], p["gpus"], p["restarts"])
                          for p in s["gpu_pods"]],
                         [("ml-training", "llama-ft-sweep-lr3e5-7xkq2", 1, 3)])
        self.assertEqual(s["gpus_held"], 1)

    def test_field_demonstrations(self):
        """The 1.35 field demonstrations (issue 26): announced as such, not as public cases;
        the restart-rule retry and the 3 containers restarted with the others recorded
        intentional and not paged; the restart-all gives one alert, for its trigger, naming
        the 4 containers; the unhealthy GPU and the pod-level OOM are alerted with their
        proof; each recorded with its proving field."""
        out = self.p.stdout
        self.assertIn("field demonstrations follow. Their pods are composed from the field "
                      "definitions of the Kubernetes API reference; they are not public crash "
                      "cases.", out)
        header = out.index("field demonstrations follow")
        for pod in FIELD:
            line = re.search(r"^>> +[\d.]+s  %s: .*\n   (.*)$" % re.escape(pod), out, re.M)
            self.assertIsNotNone(line, pod)
            self.assertGreater(line.start(), header, pod)
            self.assertTrue(line.group(1).startswith("field demonstration, not a public case: "),
                            line.group(1))
            self.assertRegex(line.group(1), r"KEP-\d+: .*in 1\.3\d")
            self.assertNotIn("facts from", line.group(1))
        # every public case comes before them
        for pod in EXPECTED:
            self.assertLess(out.index(pod + ":"), header, pod)
        pods = self.by_pod()
        for pod, containers in FIELD.items():
            got = {r["container"]: (r["cause"], r["decision"], r["delivery"]) for r in pods[pod]}
            self.assertEqual(got, containers, pod)
            alerts = re.findall(r"^\[krc-demo\] [^\n]*: %s$" % re.escape(pod), out, re.M)
            paged = [c for c, v in containers.items() if v[1] == "alert"]
            self.assertEqual(len(alerts), len(paged), (pod, alerts))
            for r in pods[pod]:
                p = subprocess.run([KRC, "history", "show", str(r["id"]), "--db", RUN["db"],
                                    "--format", "json"], capture_output=True, text=True,
                                   timeout=30)
                self.assertEqual(p.returncode, 0, p.stderr)
                report = json.loads(p.stdout)["report"]
                dg = report["diagnosis"]
                self.assertEqual(dg["cause"], r["cause"])
                self.assertEqual(dg.get("intentional", False), r["decision"] == "intentional",
                                 (pod, r["container"]))
                if pod in FIELD_PROOF and r["container"] == dg["container"] and \
                        r["cause"] != "restarted_with_others":
                    mine = [c for c in report["containers"] if c["name"] == r["container"]][0]
                    self.assertIn(FIELD_PROOF[pod], mine, (pod, sorted(mine)))
                if r["cause"] == "oom_killed":
                    self.assertEqual(report["pod"]["resources"]["limits"], {"memory": "2Gi"})
        # each of their alerts says so, in the terminal and in alerts.html, and no other does
        note = ("Field demonstration, not a public case: the pod is composed from the field "
                "definitions of the Kubernetes API reference (docs/demo.md)")
        paged = sum(v[1] == "alert" for cs in FIELD.values() for v in cs.values())
        noted = re.findall(r"^\(%s\)\n\[krc-demo\] [^\n]*: (\S+)$" % re.escape(note), out, re.M)
        self.assertEqual(sorted(noted), sorted(pod for pod, cs in FIELD.items()
                                               for v in cs.values() if v[1] == "alert"))
        self.assertEqual(out.count(note), paged)
        with open(os.path.join(RUN["out"], "alerts.html"), encoding="utf-8") as f:
            page = f.read()
        msgs = page.split('<div class="msg')[1:]
        with_note = [m for m in msgs if '<div class="note">' + note + "</div>" in m]
        self.assertEqual(len(with_note), paged)
        for m in with_note:
            self.assertTrue(any(pod.split("/")[1] in m for pod in FIELD), m[:300])
        for m in msgs:
            if any(pod.split("/")[1] in m for pod in EXPECTED):
                self.assertNotIn(note, m)
        # the restart-all alert names the rule and all 4 containers
        self.assertIn("action RestartAllContainers, exitCodes In [88]: this exit restarted all 4 "
                      "containers of the pod", out)
        # the device and the kubelet's message for it
        self.assertIn("while the kubelet reports its device GPU-5a1e0b7c-2f3d-4e8a-9b6c-"
                      "0d1e2f3a4b5c (nvidia.com/gpu) Unhealthy: ECC error count exceeded "
                      "threshold", out)
        # the pod-level limit (spec.resources, KEP-2837)
        self.assertIn("under the pod-level memory limit 2Gi (spec.resources)", out)
        s = mcp_call("restart_summary", {"since": "1h", "limit": 50})
        self.assertEqual(s["intentional"],
                         sum(v[1] == "intentional" for cs in FIELD.values() for v in cs.values()))

    def test_the_notready_nodes_restarts_are_one_incident(self):
        """Issue 27: the 8 memcached pods of one StatefulSet killed on the NotReady node (one
        container, one cause) are one incident: its first restart is alerted (collected: it
        names the node), the others are muted repeats, and the storm guard, which counts
        incidents, sees one arrival: no storm, no summary. (Before incidents the storm guard
        grouped them into a summary.)"""
        rows = [r for r in self.history() if "cache/%s" % r["pod"] in STORM]
        self.assertEqual(len(rows), len(STORM))
        self.assertTrue(all(r["node"] == STORM_NODE for r in rows))
        self.assertEqual(sorted(r["decision"] for r in rows),
                         ["alert"] + ["muted"] * (len(STORM) - 1))
        alerted = [r for r in rows if r["decision"] == "alert"]
        self.assertEqual(alerted[0]["delivery"], "delivered")
        with sqlite3.connect("file:%s?mode=ro" % RUN["db"], uri=True) as db:
            summaries = db.execute("SELECT count(*) FROM outbox WHERE kind = 'summary'")
            self.assertEqual(summaries.fetchone()[0], 0)
            inc = db.execute("SELECT workload_kind, workload_name, restarts FROM incidents "
                             "WHERE namespace = 'cache'").fetchall()
            failed = db.execute("SELECT count(*) FROM outbox WHERE state = 'failed'").fetchone()
        self.assertEqual(inc, [("StatefulSet", "memcached", len(STORM))])
        self.assertEqual([r for r in self.history() if r["delivery"] == "failed"], [])
        self.assertEqual(failed[0], 0)
        table = self.p.stdout[self.p.stdout.index("DECISION/DELIVERY"):]
        self.assertNotIn("/failed", table)
        self.assertNotIn("attempt", table)
        # the node's state reached the alert
        self.assertIn("Kubelet stopped posting node status.", self.p.stdout)

    def test_kubernetes_events_written(self):
        """Events are on by default in the demo too: the simulated API server checks and
        creates them (as the API server would) and the demo prints each; the first case,
        before any storm, gets one."""
        out = self.p.stdout
        written = out.count("Kubernetes Event written on pod ")
        self.assertIn("Kubernetes Event written on pod event-streams/es-zookeeper-0: "
                      "RestartDiagnosed: oom_killed (high confidence): ", out)
        with sqlite3.connect("file:%s?mode=ro" % RUN["db"], uri=True) as db:
            states = [r[0] for r in db.execute(
                "SELECT state FROM outbox WHERE destination = 'dest:kubernetes-event'")]
        self.assertEqual(states, ["delivered"] * written)

    def test_alerts_printed_as_they_arrive(self):
        out = self.p.stdout
        for pod in EXPECTED:
            ns, name = pod.split("/")
            self.assertIn("%s/%s" % (ns, name), out)
        # each step is announced before its alert is printed
        first_step = out.index("event-streams/es-zookeeper-0:")
        first_alert = out.index("OOMKilled: event-streams/es-zookeeper-0\n")
        self.assertLess(first_step, first_alert)
        self.assertNotIn("\033[", out)  # not a terminal: no colours

    def test_html_page(self):
        path = os.path.join(RUN["out"], "alerts.html")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        page = Page()
        page.feed(text)
        page.close()
        self.assertGreater(page.tags, 50)
        body = "".join(page.text)
        for pod in EXPECTED:
            self.assertIn(pod.split("/")[1], body)

    def test_chromium_renders_the_page(self):
        exe = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(n)), None)
        if exe is None:
            self.fail("chromium is not installed: scripts/setup-test installs Debian's chromium "
                      "as a test dependency")
        page = os.path.join(RUN["out"], "alerts.html")
        shot = os.path.join(RUN["tmp"].name, "shot.png")
        with tempfile.TemporaryDirectory(prefix="krc-demo-chromium-") as profile:
            base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--user-data-dir=" + profile, "--window-size=1000,1400"]
            p = subprocess.run(base + ["--dump-dom", "file://" + page], capture_output=True,
                               text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            for pod in EXPECTED:
                self.assertIn(pod.split("/")[1], p.stdout)
            p = subprocess.run(base + ["--screenshot=" + shot, "file://" + page],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        w, h, bpp, rows = png_pixels(shot)
        self.assertEqual((w, h), (1000, 1400))
        colours, inked = set(), 0
        for row in rows[::4]:
            for x in range(0, w * bpp, bpp * 4):
                px = row[x:x + 3]
                colours.add(px)
                inked += px != b"\xff\xff\xff"
        # text, code blocks and colour bars: many colours, a good share not white
        self.assertGreater(len(colours), 20)
        self.assertGreater(inked, (w // 4) * (h // 4) // 20)

    def test_readme_picture_is_the_oom_kill(self):
        """scripts/readme-picture picks the demo's OOM kill by its cause code and draws it
        (it is what docs/images/alert.png is made from)."""
        png = os.path.join(RUN["tmp"].name, "readme.png")
        page = os.path.join(RUN["out"], "alerts.html")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "readme-picture"),
                            page, "--out", png], capture_output=True, text=True, timeout=240)
        self.assertEqual(r.returncode, 0, r.stderr)
        m = re.search(r"\((\d+)x(\d+), (\d+) pixels drawn\) from message (\d+) of ", r.stdout)
        self.assertIsNotNone(m, r.stdout)
        n = int(m.group(4))
        with open(page, encoding="utf-8") as f:
            text = f.read()
        start = text.index('<div class="msg" id="m%d">' % n)
        end = text.find('<div class="msg" id="m%d">' % (n + 1))
        msg = text[start:end if end > 0 else len(text)]
        self.assertIn('data-block-id="cause:oom_killed"', msg)
        self.assertIn("es-zookeeper-0", msg)
        w, h, _, _ = png_pixels(png)
        self.assertEqual((w, h), (1000, int(m.group(2))))
        self.assertTrue(300 < h < 1400, h)  # one message, not the page
        self.assertGreater(int(m.group(3)), 20000)
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "readme-picture"),
                            page, "--cause", "no_such_cause", "--out", png],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no message with the cause code no_such_cause", r.stderr)

    def test_mcp_doc_examples_are_this_demos_answers(self):
        """docs/mcp.md quotes real answers of the MCP tools on a demo history: the stable
        fields (causes, counts, names, nodes, texts) must be what the tools answer on this
        fresh one; a changed cause code in a copy of the page is caught."""
        tool = os.path.join(ROOT, "scripts", "mcp-examples")
        doc = os.path.join(ROOT, "docs", "mcp.md")
        r = subprocess.run([sys.executable, tool, "--krc", KRC, "--db", RUN["db"], "--check", doc],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("5 examples match", r.stdout)
        with open(doc, encoding="utf-8") as f:
            text = f.read()
        self.assertIn('"cause": "gpu_out_of_memory"', text)
        bad = os.path.join(RUN["tmp"].name, "mcp-bad.md")
        with open(bad, "w", encoding="utf-8") as f:
            f.write(text.replace('"cause": "gpu_out_of_memory"', '"cause": "oom_killed"', 1))
        r = subprocess.run([sys.executable, tool, "--krc", KRC, "--db", RUN["db"], "--check", bad],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("does not match the tools' answers", r.stderr)
        self.assertRegex(r.stderr, r'quoted block \d+\.causes: quoted entry not returned now: '
                                   r'\{"cause": "oom_killed", "pods": 1, "restarts": 3\}')

    def test_history_table_and_show(self):
        self.assertIn("ID  TIME (UTC)", self.p.stdout)
        p = subprocess.run([KRC, "history", "--db", RUN["db"]], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("gpu_out_of_memory", p.stdout)
        p = subprocess.run([KRC, "history", "show", "1", "--db", RUN["db"]], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("es-zookeeper-0", p.stdout)

    def test_mcp_list_restarts(self):
        msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "test_demo", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "list_restarts", "arguments": {"limit": 100}}}]
        p = subprocess.run([KRC, "mcp", "--db", RUN["db"]],
                           input="".join(json.dumps(m) + "\n" for m in msgs),
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        answers = {a["id"]: a for a in map(json.loads, p.stdout.splitlines())}
        res = answers[2]["result"]
        self.assertFalse(res["isError"], res)
        rows = res["structuredContent"]["restarts"]
        got = {"%s/%s" % (r["namespace"], r["pod"]): r["cause"]
               for r in rows if r["restart_count"] == 1
               and "%s/%s" % (r["namespace"], r["pod"]) not in FIELD}
        self.assertEqual(got, self.expected_causes())
        got = {("%s/%s" % (r["namespace"], r["pod"]), r["container"]): r["cause"]
               for r in rows if "%s/%s" % (r["namespace"], r["pod"]) in FIELD}
        self.assertEqual(got, {(pod, c): v[0] for pod, cs in FIELD.items()
                               for c, v in cs.items()})
        self.assertEqual(len(res["structuredContent"]["restarts"]),
                         len(EXPECTED) + len(STORM) + FIELD_RESTARTS
                         + sum(n - 1 for n in CRASH_LOOPS.values()))

    def test_nothing_generated_is_left(self):
        self.assertLessEqual(set(os.listdir(RUN["out"])), KEPT)
        port = sim_port(self.p.stdout)
        self.assertIsNotNone(port)
        self.assertTrue(port_is_free(port))

    def test_help_lists_demo(self):
        p = subprocess.run([KRC, "help"], capture_output=True, text=True, timeout=10)
        self.assertIn("krc demo [--out DIR]", p.stdout)
        p = subprocess.run([KRC, "demo", "--help"], capture_output=True, text=True, timeout=10)
        self.assertEqual(p.returncode, 0)
        self.assertIn("--out DIR", p.stdout)


class DemoInterruptTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="krc-demo-int-")
        self.addCleanup(self.tmp.cleanup)
        self.out = os.path.join(self.tmp.name, "out")

    def start(self):
        return subprocess.Popen([KRC, "demo", "--out", self.out], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

    def interrupt(self, proc, seen):
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - t0
        self.assertEqual(proc.returncode, 130, err.decode()[-2000:])
        self.assertLess(took, 15)  # the sender drains at most 10 s, then the rest is cut
        self.assertIn(b"interrupted", err)
        self.assertLessEqual(set(os.listdir(self.out)), KEPT)
        port = sim_port(seen)
        self.assertIsNotNone(port)
        self.assertTrue(port_is_free(port))
        db = os.path.join(self.out, "history.db")
        with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as c:
            self.assertEqual(c.execute("PRAGMA integrity_check").fetchone()[0], "ok")
            return c.execute("SELECT count(*) FROM restarts").fetchone()[0]

    def test_sigint_mid_run(self):
        proc = self.start()
        seen = read_until(proc, rb"Application error: astronomer/airflow-worker-0\n")
        recorded = self.interrupt(proc, seen)
        self.assertGreaterEqual(recorded, 3)  # the partial history is kept

    def test_sigint_before_the_first_crash(self):
        proc = self.start()
        seen = read_until(proc, rb"Simulated cluster: .*\n")
        self.interrupt(proc, seen)


class DemoSimProtocolTest(unittest.TestCase):
    """The embedded API server, while a demo runs, through its generated kubeconfig."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="krc-demo-sim-")
        out = os.path.join(cls.tmp.name, "out")
        cls.proc = subprocess.Popen([KRC, "demo", "--out", out], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)
        read_until(cls.proc, rb"krc is watching")
        with open(os.path.join(out, ".krc-demo-kubeconfig")) as f:
            text = f.read()
        cls.port = int(re.search(r"server: http://127\.0\.0\.1:(\d+)", text).group(1))
        cls.token = re.search(r"token: (\S+)", text).group(1)

    @classmethod
    def tearDownClass(cls):
        out, err = cls.proc.communicate(timeout=90)
        cls.rc = cls.proc.returncode
        cls.tmp.cleanup()
        if cls.rc != 0:
            raise AssertionError("krc demo failed: %s" % err.decode()[-2000:])

    def get(self, path, token=True, timeout=10, accept=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        headers = {"Authorization": "Bearer " + self.token} if token else {}
        if accept is not None:
            headers["Accept"] = accept
        c.request("GET", path, headers=headers)
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, r.getheader("Content-Type"), body

    def get_json(self, path, status=200, accept=None):
        st, ctype, body = self.get(path, accept=accept)
        self.assertEqual(st, status, body[:500])
        self.assertEqual(ctype, "application/json")
        doc = json.loads(body)
        if status != 200:
            self.assertEqual((doc["kind"], doc["code"]), ("Status", status))
        return doc

    def watch(self, query, seconds, path="/api/v1/pods", accept=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=seconds + 10)
        headers = {"Authorization": "Bearer " + self.token}
        if accept is not None:
            headers["Accept"] = accept
        c.request("GET", "%s?watch=true&allowWatchBookmarks=true&timeoutSeconds=%d&%s"
                  % (path, seconds, query), headers=headers)
        r = c.getresponse()
        self.assertEqual(r.status, 200)
        self.assertEqual(r.getheader("Transfer-Encoding"), "chunked")
        events = [json.loads(line) for line in r.read().splitlines()]  # ends at timeoutSeconds
        c.close()
        return events

    def test_wait_for_the_crash_loop_backoff(self):
        """(Runs last: it waits for the third crash.) The fine-tuning pod crashes 3 times:
        restartCount 3, the kubelet's back-off for it, and one BackOff event whose count grew
        (as the event recorder keeps it), in the case's words; the pod is owned by the case's
        Job."""
        path = "/api/v1/namespaces/ml-training/pods/llama-ft-sweep-lr3e5-7xkq2"
        deadline = time.monotonic() + 40
        while True:
            pod = self.get_json(path)
            st = pod["status"]["containerStatuses"][0]
            if st["restartCount"] == 3 or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        self.assertEqual(st["restartCount"], 3)
        self.assertEqual(st["state"]["waiting"]["reason"], "CrashLoopBackOff")
        self.assertTrue(st["state"]["waiting"]["message"].startswith(
            "back-off 40s restarting failed container=trainer pod=llama-ft-sweep-lr3e5-7xkq2_"
            "ml-training("), st["state"]["waiting"])
        self.assertEqual(st["lastState"]["terminated"]["exitCode"], 1)
        self.assertEqual([(o["kind"], o["name"]) for o in pod["metadata"]["ownerReferences"]],
                         [("Job", "llama-ft-sweep-lr3e5")])
        ev = self.get_json("/api/v1/namespaces/ml-training/events?fieldSelector="
                           "involvedObject.name%3Dllama-ft-sweep-lr3e5-7xkq2,reason%3DBackOff")
        self.assertEqual(len(ev["items"]), 1, ev["items"])
        e = ev["items"][0]
        self.assertEqual((e["type"], e["count"], e["source"]["component"]),
                         ("Warning", 2, "kubelet"))
        self.assertTrue(e["message"].startswith(
            "Back-off restarting failed container trainer in pod llama-ft-sweep-lr3e5-7xkq2_"
            "ml-training("), e["message"])
        self.assertLess(e["firstTimestamp"], e["lastTimestamp"])

    def test_token_required(self):
        st, _, body = self.get("/api/v1/pods", token=False)
        self.assertEqual(st, 401)
        self.assertEqual(json.loads(body)["reason"], "Unauthorized")

    def test_list_and_pages(self):
        full = self.get_json("/api/v1/pods")
        self.assertEqual(full["kind"], "PodList")
        self.assertGreater(int(full["metadata"]["resourceVersion"]), 0)
        names = sorted(p["metadata"]["namespace"] + "/" + p["metadata"]["name"]
                       for p in full["items"])
        self.assertEqual(names, sorted(list(EXPECTED) + list(STORM) + list(FIELD)))
        paged, cont, pages = [], None, 0
        while True:
            q = "/api/v1/pods?limit=4" + ("&continue=" + cont if cont else "")
            page = self.get_json(q)
            self.assertLessEqual(len(page["items"]), 4)
            paged += [p["metadata"]["namespace"] + "/" + p["metadata"]["name"]
                      for p in page["items"]]
            pages += 1
            cont = page["metadata"].get("continue")
            if not cont:
                break
        self.assertEqual(sorted(paged), names)
        self.assertEqual(pages, (len(names) + 3) // 4)
        cache = self.get_json("/api/v1/namespaces/cache/pods")["items"]
        self.assertEqual(sorted(p["metadata"]["name"] for p in cache),
                         sorted(k.split("/")[1] for k in STORM))

    def test_streaming_list_then_watch(self):
        events = self.watch("sendInitialEvents=true&resourceVersionMatch=NotOlderThan", 2)
        added = [e for e in events if e["type"] == "ADDED"]
        self.assertEqual(len(added), len(EXPECTED) + len(STORM) + len(FIELD))
        end = events[len(added)]
        self.assertEqual(end["type"], "BOOKMARK")
        self.assertEqual(end["object"]["metadata"]["annotations"],
                         {"k8s.io/initial-events-end": "true"})
        rv = int(end["object"]["metadata"]["resourceVersion"])
        # from that resourceVersion on: the crashes, in order, each newer than the last
        later = self.watch("resourceVersion=%d" % rv, 4)
        modified = [e for e in later if e["type"] == "MODIFIED"]
        self.assertGreater(len(modified), 0, later)
        rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in modified]
        self.assertEqual(rvs, sorted(set(rvs)))
        self.assertGreater(rvs[0], rv)
        st = modified[0]["object"]["status"]["containerStatuses"][0]
        self.assertEqual(st["restartCount"], 1)
        self.assertIn("terminated", st["lastState"])

    META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
    META = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

    def test_tracked_kinds_list(self):
        """What change tracking lists: the ReplicaSet cases' Deployments and ReplicaSets (the
        rollout's two), the StatefulSet cases' StatefulSets and ControllerRevisions, the Job
        cases' Jobs, each the owner of its pods, empty lists of the kinds the simulation has
        none of, the nodes; with the metadata client's Accept header,
        PartialObjectMetadataList with managedFields."""
        rs = self.get_json("/apis/apps/v1/replicasets")
        self.assertEqual((rs["kind"], rs["apiVersion"]), ("ReplicaSetList", "apps/v1"))
        by_name = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in rs["items"]}
        self.assertEqual(set(by_name), {("llm", "lightspeed-core-85b57d9576"),
                                        ("llm", "lightspeed-core-5c8f7b9d64"),
                                        ("backstage", "backstage-backend-6d9c7b8f5"),
                                        ("analytics", "report-builder-7c9d5f6b8")})
        cur, prev = by_name[("llm", "lightspeed-core-85b57d9576")], \
            by_name[("llm", "lightspeed-core-5c8f7b9d64")]
        for o, rev, h in ((cur, "2", "85b57d9576"), (prev, "1", "5c8f7b9d64")):
            md = o["metadata"]
            self.assertEqual(md["annotations"]["deployment.kubernetes.io/revision"], rev)
            self.assertEqual(md["labels"]["pod-template-hash"], h)
            self.assertEqual([(r["kind"], r["name"]) for r in md["ownerReferences"]],
                             [("Deployment", "lightspeed-core")])
        self.assertLess(prev["metadata"]["creationTimestamp"], cur["metadata"]["creationTimestamp"])
        self.assertEqual(
            [c["args"] for c in cur["spec"]["template"]["spec"]["containers"]],
            [["-c", "/app-config/lightspeed-stack.yaml"]])
        self.assertEqual(
            [c["args"] for c in prev["spec"]["template"]["spec"]["containers"]],
            [["python3.12", "src/lightspeed_stack.py"]])
        ns = self.get_json("/apis/apps/v1/namespaces/backstage/replicasets")["items"]
        self.assertEqual([o["metadata"]["name"] for o in ns], ["backstage-backend-6d9c7b8f5"])
        meta = self.get_json("/apis/apps/v1/deployments", accept=self.META_LIST)
        self.assertEqual((meta["kind"], meta["apiVersion"]),
                         ("PartialObjectMetadataList", "meta.k8s.io/v1"))
        self.assertEqual(sorted(o["metadata"]["name"] for o in meta["items"]),
                         ["backstage-backend", "lightspeed-core", "report-builder"])
        for o in meta["items"]:
            self.assertEqual(set(o), {"kind", "apiVersion", "metadata"})
            self.assertEqual(o["kind"], "PartialObjectMetadata")
        lc = [o for o in meta["items"] if o["metadata"]["name"] == "lightspeed-core"][0]
        self.assertEqual(lc["metadata"]["managedFields"][0]["manager"],
                         "kubectl-client-side-apply")
        self.assertIn("f:template", lc["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"])
        self.check_statefulsets()
        self.check_jobs()
        for path in ("/apis/apps/v1/daemonsets", "/apis/batch/v1/cronjobs"):
            doc = self.get_json(path)
            self.assertEqual(doc["items"], [], path)
            self.assertGreater(int(doc["metadata"]["resourceVersion"]), 0)
        nodes = self.get_json("/api/v1/nodes")
        self.assertEqual(nodes["kind"], "NodeList")
        self.assertIn(STORM_NODE, [n["metadata"]["name"] for n in nodes["items"]])
        # pages, as the pods'
        page = self.get_json("/apis/apps/v1/replicasets?limit=3")
        self.assertEqual(len(page["items"]), 3)
        rest = self.get_json("/apis/apps/v1/replicasets?limit=3&continue="
                             + page["metadata"]["continue"])
        self.assertEqual(len(rest["items"]), 1)
        self.assertNotIn("continue", rest["metadata"])
        # one object, and the errors
        d = self.get_json("/apis/apps/v1/namespaces/llm/deployments/lightspeed-core")
        self.assertEqual(d["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "2")
        self.get_json("/apis/apps/v1/namespaces/llm/deployments/nope", status=404)
        self.get_json("/apis/apps/v1/deployments", accept=self.META, status=406)
        self.get_json("/apis/apps/v1/deployments",
                      accept="application/json;as=Foo;g=meta.k8s.io;v=v1", status=406)
        self.get_json("/apis/apps/v1/replicasets?labelSelector=app%3Dx", status=400)

    def pods_of(self, ns, kind, name):
        pods = self.get_json("/api/v1/namespaces/%s/pods" % ns)["items"]
        return [p for p in pods
                if [(o["kind"], o["name"]) for o in p["metadata"]["ownerReferences"]]
                == [(kind, name)]]

    def assert_pod_of_template(self, pod, template, added=()):
        """The pod is its owner's template: its spec but the node, its labels but those the
        controller adds to each pod."""
        spec = dict(pod["spec"])
        self.assertIn("nodeName", spec)
        del spec["nodeName"]
        self.assertEqual(spec, template["spec"], pod["metadata"]["name"])
        labels = {k: v for k, v in pod["metadata"]["labels"].items() if k not in added}
        self.assertEqual(labels, template["metadata"]["labels"], pod["metadata"]["name"])

    def check_statefulsets(self):
        """The StatefulSet cases' owners: each StatefulSet's current and update revision is its
        one ControllerRevision NAME-HASH (revision 1, owned by it, made with it 30 days ago,
        its data the template as a patch replacing it), and its pods carry that hash."""
        day = 86400
        sts = self.get_json("/apis/apps/v1/statefulsets")
        self.assertEqual((sts["kind"], sts["apiVersion"]), ("StatefulSetList", "apps/v1"))
        by_name = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in sts["items"]}
        self.assertEqual(set(by_name), STATEFULSETS)
        crs = self.get_json("/apis/apps/v1/controllerrevisions")
        self.assertEqual(crs["kind"], "ControllerRevisionList")
        revs = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in crs["items"]}
        self.assertEqual(len(revs), len(STATEFULSETS))
        now = time.time()
        for (ns, name), o in sorted(by_name.items()):
            st = o["status"]
            rev = st["currentRevision"]
            self.assertEqual(st["updateRevision"], rev)
            self.assertRegex(rev, r"^%s-[bcdfghjklmnpqrstvwxz2456789]+$" % re.escape(name))
            cr = revs[(ns, rev)]
            self.assertEqual(cr["revision"], 1)
            self.assertEqual([(r["kind"], r["name"], r["uid"], r["controller"])
                              for r in cr["metadata"]["ownerReferences"]],
                             [("StatefulSet", name, o["metadata"]["uid"], True)])
            self.assertEqual(cr["metadata"]["creationTimestamp"],
                             o["metadata"]["creationTimestamp"])
            created = calendar.timegm(time.strptime(cr["metadata"]["creationTimestamp"],
                                                    "%Y-%m-%dT%H:%M:%SZ"))
            self.assertLess(created, now - day, rev)  # older than krc's 24 h lookback
            template = dict(cr["data"]["spec"]["template"])
            self.assertEqual(template.pop("$patch"), "replace")
            self.assertEqual(template, o["spec"]["template"], rev)
            pods = self.pods_of(ns, "StatefulSet", name)
            self.assertEqual(len(pods), o["spec"]["replicas"], name)
            for p in pods:
                self.assertEqual(p["metadata"]["ownerReferences"][0]["uid"],
                                 o["metadata"]["uid"])
                self.assertEqual(p["metadata"]["labels"]["controller-revision-hash"], rev)
                self.assertEqual(p["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"],
                                 p["metadata"]["name"])
                self.assert_pod_of_template(p, o["spec"]["template"], STS_POD_LABELS)
                self.assertLess(o["metadata"]["creationTimestamp"],
                                p["metadata"]["creationTimestamp"])

    def check_jobs(self):
        """The Job cases' owners: each Job's template is its pod's (restartPolicy OnFailure or
        Never, the controller-uid and job-name labels), its selector its uid, its pod not older
        than it."""
        jobs = self.get_json("/apis/batch/v1/jobs")
        self.assertEqual((jobs["kind"], jobs["apiVersion"]), ("JobList", "batch/v1"))
        by_name = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in jobs["items"]}
        self.assertEqual(set(by_name), JOBS)
        for (ns, name), o in sorted(by_name.items()):
            uid = o["metadata"]["uid"]
            self.assertEqual(o["spec"]["selector"],
                             {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
            self.assertIn(o["spec"]["template"]["spec"]["restartPolicy"], ("OnFailure", "Never"))
            [p] = self.pods_of(ns, "Job", name)
            self.assertEqual(p["metadata"]["ownerReferences"][0]["uid"], uid)
            self.assertEqual({k: p["metadata"]["labels"].get(k) for k in
                              ("controller-uid", "batch.kubernetes.io/controller-uid",
                               "job-name", "batch.kubernetes.io/job-name")},
                             {"controller-uid": uid, "batch.kubernetes.io/controller-uid": uid,
                              "job-name": name, "batch.kubernetes.io/job-name": name})
            self.assert_pod_of_template(p, o["spec"]["template"])
            self.assertLessEqual(o["metadata"]["creationTimestamp"],
                                 p["metadata"]["creationTimestamp"])
        self.assertEqual(by_name[("ml-training", "llama-ft-sweep-lr3e5")]["spec"]["template"]
                         ["spec"]["restartPolicy"], "OnFailure")  # the case's pod.json

    def test_tracked_kinds_watch(self):
        """Change tracking's watches: a streaming list of each kind (metadata only where it
        asks for it) ends with the initial-events-end bookmark; a kind with no objects is
        an empty list, then a quiet watch with BOOKMARKs, not a 404."""
        events = self.watch("sendInitialEvents=true&resourceVersionMatch=NotOlderThan", 1,
                            path="/apis/apps/v1/deployments", accept=self.META)
        self.assertEqual([e["type"] for e in events], ["ADDED"] * 3 + ["BOOKMARK"])
        self.assertEqual({e["object"]["kind"] for e in events}, {"PartialObjectMetadata"})
        self.assertEqual(events[-1]["object"]["metadata"]["annotations"],
                         {"k8s.io/initial-events-end": "true"})
        events = self.watch("sendInitialEvents=true&resourceVersionMatch=NotOlderThan", 1,
                            path="/apis/apps/v1/replicasets")
        self.assertEqual([e["type"] for e in events], ["ADDED"] * 4 + ["BOOKMARK"])
        self.assertEqual(events[0]["object"]["kind"], "ReplicaSet")
        events = self.watch("sendInitialEvents=true&resourceVersionMatch=NotOlderThan", 1,
                            path="/apis/apps/v1/controllerrevisions")
        self.assertEqual([e["type"] for e in events],
                         ["ADDED"] * len(STATEFULSETS) + ["BOOKMARK"])
        self.assertEqual(events[0]["object"]["kind"], "ControllerRevision")
        # empty: the end marker at once, then a bookmark when idle (every 5 s)
        events = self.watch("sendInitialEvents=true&resourceVersionMatch=NotOlderThan", 6,
                            path="/apis/apps/v1/daemonsets")
        self.assertGreaterEqual(len(events), 2, events)
        self.assertEqual({e["type"] for e in events}, {"BOOKMARK"})
        self.assertEqual(events[0]["object"]["metadata"]["annotations"],
                         {"k8s.io/initial-events-end": "true"})
        self.assertEqual(events[0]["object"]["kind"], "DaemonSet")
        self.assertNotIn("annotations", events[1]["object"]["metadata"])
        # nodes: the storm's node goes NotReady during the run, a MODIFIED event
        nodes = self.get_json("/api/v1/nodes")
        later = self.watch("resourceVersion=%s" % nodes["metadata"]["resourceVersion"], 1,
                           path="/api/v1/nodes")
        self.assertEqual({e["type"] for e in later} - {"MODIFIED", "BOOKMARK"}, set())

    def test_streaming_list_needs_its_parameters(self):
        self.get_json("/api/v1/pods?watch=true&sendInitialEvents=true", status=422)

    def test_events_and_field_selectors(self):
        pod = self.get_json("/api/v1/namespaces/test/pods/liveness-rc-rlchs")
        uid = pod["metadata"]["uid"]
        read_until(self.proc, rb"liveness-rc-rlchs \(liveness\)", 30)
        evs = self.get_json("/api/v1/namespaces/test/events?fieldSelector=involvedObject.uid%3D"
                            + uid)
        self.assertEqual(evs["kind"], "EventList")
        self.assertEqual({e["reason"] for e in evs["items"]}, {"Pulled", "Unhealthy", "Killing"})
        none = self.get_json("/api/v1/namespaces/other/events?fieldSelector=involvedObject.uid%3D"
                             + uid)
        self.assertEqual(none["items"], [])
        bad = self.get_json("/api/v1/events?fieldSelector=spec.nodeName%3Dx", status=400)
        self.assertIn("field label not supported: spec.nodeName", bad["message"])
        self.get_json("/api/v1/nodes/no-such-node", status=404)
        self.assertEqual(self.get_json("/api/v1/nodes/gpu-a100-07")["status"]["capacity"]
                         ["nvidia.com/gpu"], "8")

    def test_previous_log(self):
        read_until(self.proc, rb"OOMKilled: event-streams/es-zookeeper-0\n", 30)
        base = "/api/v1/namespaces/event-streams/pods/es-zookeeper-0/log?container=zookeeper"
        st, ctype, body = self.get(base + "&previous=true&tailLines=2&timestamps=true")
        self.assertEqual(st, 200)
        lines = body.decode().splitlines()
        self.assertEqual(len(lines), 2)
        for line in lines:
            self.assertRegex(line, r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z ")
        self.assertTrue(lines[1].endswith("Reaped zombie process with pid=38"))
        st, _, body = self.get(base + "&previous=true&limitBytes=10")
        self.assertEqual((st, body), (200, b"Wrote ZooK"))
        st, _, body = self.get("/api/v1/namespaces/event-streams/pods/es-zookeeper-0/log"
                               "?container=nope&previous=true")
        self.assertEqual(st, 400)
        self.assertEqual(self.get_json("/api/v1/namespaces/test/pods/liveness-rc-rlchs/log?"
                                       "container=liveness&previous=true", status=400)["message"],
                         'previous terminated container "liveness" in pod "liveness-rc-rlchs" '
                         'not found')

    def test_created_events_are_named_per_namespace(self):
        """An Event's name is unique within its namespace (409 there, 201 in another one), and
        the namespace is taken from the URL when the body has none, as the API server does."""
        def post(ns, meta):
            ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": meta,
                  "eventTime": "2026-12-03T15:58:00.123456Z", "type": "Normal",
                  "reason": "ReviewCheck", "action": "Check",
                  "reportingController": "krc.io/test", "reportingInstance": "t-0",
                  "regarding": {"kind": "Pod", "name": "p"}, "note": "x"}
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            c.request("POST", "/apis/events.k8s.io/v1/namespaces/%s/events" % ns,
                      body=json.dumps(ev).encode(),
                      headers={"Authorization": "Bearer " + self.token,
                               "Content-Type": "application/json"})
            r = c.getresponse()
            doc = json.loads(r.read())
            c.close()
            return r.status, doc

        st, doc = post("rv-a", {"name": "same.1"})
        self.assertEqual(st, 201, doc)
        self.assertEqual(doc["metadata"]["namespace"], "rv-a")
        self.assertEqual(post("rv-b", {"name": "same.1", "namespace": "rv-b"})[0], 201)
        st, doc = post("rv-a", {"name": "same.1", "namespace": "rv-a"})
        self.assertEqual((st, doc["reason"]), (409, "AlreadyExists"))

    def test_unknown_paths_and_methods(self):
        self.get_json("/api/v1/namespaces/test/secrets/x", status=404)
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        c.request("DELETE", "/api/v1/namespaces/test/pods/liveness-rc-rlchs",
                  headers={"Authorization": "Bearer " + self.token})
        r = c.getresponse()
        self.assertEqual(r.status, 405)
        r.read()
        c.request("POST", "/services/T/B/x", body=b"not json")
        r = c.getresponse()
        self.assertEqual((r.status, r.read()), (400, b"invalid_payload"))
        c.close()


class DemoUsageTest(unittest.TestCase):
    def test_bad_options(self):
        for args in (["--bogus"], ["--out"], ["--out="]):
            p = subprocess.run([KRC, "demo"] + args, capture_output=True, text=True, timeout=10)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn("usage: krc demo", p.stderr)

    def test_out_dir_that_cannot_be_made(self):
        with tempfile.TemporaryDirectory() as tmp:
            blocker = os.path.join(tmp, "file")
            open(blocker, "w").close()
            p = subprocess.run([KRC, "demo", "--out", os.path.join(blocker, "sub")],
                               capture_output=True, text=True, timeout=10)
            self.assertEqual(p.returncode, 1)
            self.assertIn(os.path.join(blocker, "sub"), p.stderr)
            self.assertIn("cannot create the directory", p.stderr)


def main():
    global KRC
    ap = argparse.ArgumentParser()
    ap.add_argument("--krc", required=True)
    args, rest = ap.parse_known_args()
    KRC = os.path.abspath(args.krc)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
