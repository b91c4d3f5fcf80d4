#!/usr/bin/env python3
"""`krc mcp` on a history that a real `krc run` filled from the fake API server: raw JSON-RPC
over stdio and over Streamable HTTP, both protocol eras, every tool checked against its output
schema, and the refusals (malformed JSON, unknown method or tool, invalid arguments, a 10 MB
request, missing or wrong token, a foreign Origin, a content type other than application/json),
after each of which the server keeps serving. The scope (security issue 24): the tools answer
only about what krc watches (the filters, from the environment or --config, and mcpNamespaces),
refusing other namespaces before any API request, in krc mcp and in the daemon's /mcp; --config's
redactPatterns; untrusted_fields.

    python3 test_mcp.py --krc /path/to/krc [unittest options]
"""
import http.client
import json
import os
import re
import select
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

import jsonschema

import krc_harness as h

FAST = ["--watch-idle-timeout", "3s"]
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}}
TOOLS = ["list_restarts", "get_restart_report", "pod_restart_timeline", "restart_summary",
         "explain_pod", "list_incidents", "get_incident", "what_changed"]

# Filled once by setUpModule: a history database written by krc run.
DB = None
TMP = None
KUBE = None


def fill_history():
    """krc run against FakeKube: web-1 (Deployment web) exits 1 twice, then is OOM-killed;
    trainer-0 (2 GPUs) is OOM-killed twice; api-0 exits 1 once with a secret in its log."""
    class Holder(unittest.TestCase):
        def runTest(self):
            pass
    holder = Holder()
    h.start_fakes(holder)
    kube = holder.kube
    kube.create_pod("shop", "web-1")
    kube.create_pod("shop", "api-0")
    kube.create_pod("ml", "trainer-0", node="gpu-node-1")
    pod = kube.get_pod("ml", "trainer-0")
    containers = pod["spec"]["containers"]
    res = containers[0].setdefault("resources", {})
    res.setdefault("limits", {})["nvidia.com/gpu"] = "2"
    res.setdefault("requests", {})["nvidia.com/gpu"] = "2"
    kube.update_pod("ml", "trainer-0", {"spec": {"containers": containers}})
    db = os.path.join(TMP.name, "krc.db")
    env = {"SLACK_WEBHOOK_URL": holder.slack.webhook_url("alerts"), "KRC_DB": db,
           "CLUSTER_NAME": "test", "MUTE_SECONDS": "0"}
    k = h.Krc(kube.kubeconfig, FAST, env)
    try:
        k.wait_synced()
        steps = [("shop", "web-1", dict(exit_code=1, logs="starting\npanic: nil map\n")),
                 ("ml", "trainer-0", dict(exit_code=137, reason="OOMKilled",
                                          logs="loading\nallocating 40GiB\n")),
                 ("shop", "api-0", dict(exit_code=1, logs="connect postgres://app:hunter2@db/x"
                                                          "\nDB_PASSWORD=s3cr3tvalue\nfatal\n")),
                 ("shop", "web-1", dict(exit_code=1, logs="starting\npanic: nil map\n")),
                 ("ml", "trainer-0", dict(exit_code=137, reason="OOMKilled",
                                          logs="loading\nallocating 40GiB\n")),
                 ("shop", "web-1", dict(exit_code=137, reason="OOMKilled", logs="big\n"))]
        for n, (ns, name, kw) in enumerate(steps, 1):
            kube.restart(ns, name, "app", **kw)
            k.wait_diagnosed(n, timeout=30)
        h.wait_until(lambda: count_rows(db) == len(steps), 30, what="every restart recorded")
        if k.stop() != 0:
            raise AssertionError("krc run failed: %s" % k.tail())
    finally:
        k.kill()
    return holder, db


def seed_incidents(path):
    """A history with incidents and recorded changes written through the store API by
    tests/tools/incident_seed (BUILD/tests/ next to krc, or $KRC_INCIDENT_SEED): the ids."""
    seed = os.environ.get("KRC_INCIDENT_SEED") or os.path.join(
        os.path.dirname(os.path.abspath(h.krc_binary())), "tests", "incident_seed")
    p = subprocess.run([seed, path], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError("%s %s: %s" % (seed, path, p.stderr))
    return json.loads(p.stdout)


def count_rows(db):
    p = subprocess.run([h.krc_binary(), "history", "--db", db, "--format", "json"],
                       capture_output=True, text=True, timeout=30)
    return len(json.loads(p.stdout)) if p.returncode == 0 else -1


HOLDER = None


def setUpModule():
    global DB, TMP, HOLDER
    TMP = tempfile.TemporaryDirectory()
    HOLDER, DB = fill_history()


def tearDownModule():
    if HOLDER is not None:
        HOLDER.doCleanups()
    TMP.cleanup()


def mcp_env(extra=None):
    """The environment of a `krc mcp` child: this one without Kubernetes or krc filter settings
    (krc mcp reads them, as krc run does), plus extra."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("KUBERNETES_SERVICE") and k not in SCOPE_VARS}
    env.update(extra or {})
    return env


SCOPE_VARS = ("WATCHED_NAMESPACES", "IGNORED_NAMESPACES", "WATCHED_POD_NAME_PREFIXES",
              "IGNORED_POD_NAME_PREFIXES", "KRC_MCP_NAMESPACES", "KRC_REDACT_PATTERNS")


class Stdio:
    """A `krc mcp` child over stdio; one JSON-RPC message per line."""

    def __init__(self, *args, env=None, db=True):
        self.proc = subprocess.Popen([h.krc_binary(), "mcp"] +
                                     (["--db", db if isinstance(db, str) else DB] if db else []) +
                                     list(args),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=mcp_env(env))
        self.buf = b""
        self.next_id = 0

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read_line(self, timeout=20):
        deadline = time.time() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError("no answer from krc mcp")
            r, _, _ = select.select([self.proc.stdout], [], [], left)
            if r:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
                if not chunk:
                    raise AssertionError("krc mcp closed stdout: %s" % self.proc.stderr.read())
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, method, params=None, modern=False):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None or modern:
            msg["params"] = dict(params or {})
            if modern:
                msg["params"]["_meta"] = META
        self.send_raw((json.dumps(msg) + "\n").encode())
        resp = self.read_line()
        assert resp.get("id") == self.next_id, resp
        return resp

    def close(self):
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=20)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return rc


def text_of(result):
    return result["content"][0]["text"]


class McpStdioTest(unittest.TestCase):
    def setUp(self):
        self.c = Stdio()
        init = self.c.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                             "clientInfo": {"name": "test", "version": "1"}})
        self.assertEqual(init["result"]["protocolVersion"], "2025-11-25")
        self.c.send_raw(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.schemas = {t["name"]: t for t in self.c.request("tools/list")["result"]["tools"]}

    def tearDown(self):
        self.assertEqual(self.c.close(), 0)  # exits at end of input

    def call(self, name, args, modern=False):
        r = self.c.request("tools/call", {"name": name, "arguments": args}, modern=modern)
        self.assertIn("result", r, r)
        res = r["result"]
        if not res["isError"]:
            # the text item is the structured content, which conforms to the output schema
            self.assertEqual(json.loads(text_of(res)), res["structuredContent"])
            jsonschema.validate(res["structuredContent"], self.schemas[name]["outputSchema"])
        return res

    def test_tools_are_listed_read_only_with_schemas(self):
        self.assertEqual(sorted(self.schemas), sorted(TOOLS))
        for t in self.schemas.values():
            self.assertTrue(t["annotations"]["readOnlyHint"], t["name"])
            self.assertFalse(t["annotations"]["destructiveHint"], t["name"])
            jsonschema.Draft202012Validator.check_schema(t["inputSchema"])
            jsonschema.Draft202012Validator.check_schema(t["outputSchema"])
            self.assertFalse(t["inputSchema"]["additionalProperties"])

    def test_list_restarts_filters_and_pages(self):
        res = self.call("list_restarts", {})
        rows = res["structuredContent"]["restarts"]
        self.assertEqual(len(rows), 6)
        self.assertNotIn("next_cursor", res["structuredContent"])
        self.assertEqual(rows[0]["pod"], "web-1")  # newest first
        self.assertEqual(rows[0]["cause"], "oom_killed")
        ml = self.call("list_restarts", {"namespace": "ml"})["structuredContent"]["restarts"]
        self.assertEqual([(r["pod"], r["cause"]) for r in ml], [("trainer-0", "oom_killed")] * 2)
        self.assertEqual(len(self.call("list_restarts", {"pod": "web"})
                             ["structuredContent"]["restarts"]), 3)
        self.assertEqual(len(self.call("list_restarts", {"cause": "oom_killed", "since": "1h"})
                             ["structuredContent"]["restarts"]), 3)
        self.assertEqual(self.call("list_restarts", {"since": "2099-01-01T00:00:00Z"})
                         ["structuredContent"]["restarts"], [])
        # pages of 4 then 2: the same rows, none twice
        page1 = self.call("list_restarts", {"limit": 4})["structuredContent"]
        page2 = self.call("list_restarts", {"limit": 4, "cursor": page1["next_cursor"]})
        page2 = page2["structuredContent"]
        self.assertEqual([r["id"] for r in page1["restarts"] + page2["restarts"]],
                         [r["id"] for r in rows])
        self.assertNotIn("next_cursor", page2)

    def test_cluster_argument_and_field(self):
        # list_restarts, pod_restart_timeline and restart_summary take an exact cluster name
        for name in ("list_restarts", "pod_restart_timeline", "restart_summary"):
            self.assertEqual(self.schemas[name]["inputSchema"]["properties"]["cluster"]["type"],
                             "string", name)
        self.assertNotIn("cluster", self.schemas["get_restart_report"]["inputSchema"]["properties"])
        # every restart carries the cluster that recorded it: krc run had CLUSTER_NAME test
        rows = self.call("list_restarts", {})["structuredContent"]["restarts"]
        self.assertEqual({r["cluster"] for r in rows}, {"test"}, rows)
        rep = self.call("get_restart_report", {"id": rows[0]["id"]})["structuredContent"]
        self.assertEqual(rep["restart"]["cluster"], rows[0]["cluster"])
        # the three tools accept it (the output is checked against the schema by call())
        self.call("list_restarts", {"cluster": "test", "namespace": "shop"})
        tl = self.call("pod_restart_timeline", {"cluster": "test", "namespace": "shop",
                                                "pod": "web-1"})["structuredContent"]
        self.assertEqual(tl["cluster"], "test")
        s = self.call("restart_summary", {"cluster": "test", "since": "1h"})["structuredContent"]
        self.assertEqual(s["cluster"], "test")
        res = self.call("list_restarts", {"cluster": 7})
        self.assertTrue(res["isError"])
        self.assertIn("'cluster' must be a string", text_of(res))

    def test_get_restart_report(self):
        rows = self.call("list_restarts", {"pod": "trainer"})["structuredContent"]["restarts"]
        rep = self.call("get_restart_report", {"id": rows[0]["id"]})["structuredContent"]
        self.assertEqual(rep["restart"]["id"], rows[0]["id"])
        diag = rep["report"]["diagnosis"]
        self.assertEqual(diag["cause"], "oom_killed")
        self.assertEqual(diag["gpus"], 2)
        self.assertIn("allocating 40GiB", rep["report"]["log"]["text"])
        # the log tail is bounded and cut at a line start
        full = rep["report"]["log"]["text"]
        short = self.call("get_restart_report", {"id": rows[0]["id"], "log_bytes": 60})
        cut = short["structuredContent"]["report"]["log"]["text"]
        self.assertLessEqual(len(cut.encode()), 60)
        self.assertLess(len(cut), len(full), full)
        self.assertTrue(full.endswith(cut) and full[len(full) - len(cut) - 1] == "\n", cut)
        self.assertIn("allocating 40GiB", cut)
        self.assertGreater(short["structuredContent"]["report"]["log"]["omitted_bytes"], 0)
        missing = self.call("get_restart_report", {"id": 999999})
        self.assertTrue(missing["isError"])
        self.assertIn("no restart with id 999999", text_of(missing))

    def test_secrets_in_logs_are_redacted(self):
        rows = self.call("list_restarts", {"pod": "api-0"})["structuredContent"]["restarts"]
        rep = self.call("get_restart_report", {"id": rows[0]["id"]})
        text = json.dumps(rep)
        self.assertNotIn("hunter2", text)
        self.assertNotIn("s3cr3tvalue", text)
        log = rep["structuredContent"]["report"]["log"]["text"]
        self.assertIn("postgres://app:[REDACTED]@db/x", log)
        self.assertIn("DB_PASSWORD=[REDACTED]\n", log)

    def test_timeline_and_summary(self):
        tl = self.call("pod_restart_timeline", {"namespace": "shop", "pod": "web-1"})
        causes = [r["cause"] for r in tl["structuredContent"]["restarts"]]
        self.assertEqual(causes, ["oom_killed", "app_error", "app_error"])
        self.assertEqual(tl["structuredContent"]["pod"], "web-1")
        self.assertEqual(len(self.call("pod_restart_timeline",
                                       {"namespace": "shop", "workload": "web"})
                             ["structuredContent"]["restarts"]), 3)
        bad = self.call("pod_restart_timeline", {"namespace": "shop"})
        self.assertTrue(bad["isError"])
        s = self.call("restart_summary", {"since": "1h"})["structuredContent"]
        self.assertEqual(s["restarts"], 6)
        top = s["workloads"][0]
        self.assertEqual((top["namespace"], top["name"], top["restarts"], top["top_cause"]),
                         ("shop", "web", 3, "app_error"))
        self.assertEqual({c["cause"]: c["restarts"] for c in s["causes"]},
                         {"oom_killed": 3, "app_error": 3})
        self.assertEqual(s["gpus_held"], 2)
        self.assertEqual([(p["pod"], p["gpus"]) for p in s["gpu_pods"]], [("trainer-0", 2)])
        self.assertEqual({n["node"] for n in s["nodes"]}, {"gpu-node-1", "fake-node-1"})

    def test_modern_era_on_the_same_connection(self):
        d = self.c.request("server/discover", modern=True)["result"]
        self.assertEqual(d["resultType"], "complete")
        self.assertIn(MODERN, d["supportedVersions"])
        self.assertEqual(d["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "krc")
        lst = self.c.request("tools/list", modern=True)["result"]
        self.assertEqual([t["name"] for t in lst["tools"]], TOOLS)
        self.assertEqual((lst["resultType"], lst["cacheScope"]), ("complete", "private"))
        res = self.call("list_restarts", {"limit": 1}, modern=True)
        self.assertEqual(len(res["structuredContent"]["restarts"]), 1)
        r = self.c.request("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion":
                                                    "2099-01-01",
                                                    "io.modelcontextprotocol/clientCapabilities":
                                                    {}}})
        self.assertEqual(r["error"]["code"], -32022)
        self.assertEqual(self.c.request("ping", modern=True)["error"]["code"], -32601)

    def test_errors_and_the_server_keeps_serving(self):
        def alive():
            self.assertEqual(self.c.request("ping")["result"], {})
        self.c.send_raw(b'{"jsonrpc":"2.0","id":1,"method":\n')
        self.assertEqual(self.c.read_line()["error"]["code"], -32700)
        self.c.send_raw(b'{"jsonrpc":"2.0","id":"x","method":"ping"}\n')  # answered after the
        self.assertEqual(self.c.read_line()["id"], "x")  # one above: still serving
        self.assertEqual(self.c.request("resources/list")["error"]["code"], -32601)
        alive()
        r = self.c.request("tools/call", {"name": "drop_tables", "arguments": {}})
        self.assertEqual(r["error"]["code"], -32602)
        self.assertIn("Unknown tool", r["error"]["message"])
        alive()
        for args, needle in (({"limit": 0}, "'limit'"), ({"limit": "5"}, "'limit'"),
                             ({"color": "red"}, "unknown argument 'color'"),
                             ({"since": "yesterday"}, "since 'yesterday'"),
                             ({"cause": "gremlins"}, "cause 'gremlins'"),
                             ({"cursor": "nope"}, "cursor 'nope'")):
            res = self.call("list_restarts", args)
            self.assertTrue(res["isError"], args)
            self.assertIn(needle, text_of(res))
        r = self.c.request("tools/call", {"name": "list_restarts", "arguments": [1]})
        self.assertEqual(r["error"]["code"], -32602)
        alive()
        # a 10 MB line: refused without reading it into memory, the next line is served
        self.c.send_raw(b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"' +
                        b"a" * (10 << 20) + b'"}}\n')
        self.assertEqual(self.c.read_line()["error"]["code"], -32600)
        alive()
        # notifications get no answer: the next answer is the next request's
        self.c.send_raw(b'{"jsonrpc":"2.0","method":"notifications/cancelled",'
                        b'"params":{"requestId":3}}\n')
        alive()

    def test_explain_pod_without_a_cluster_says_so(self):
        res = self.call("explain_pod", {"namespace": "shop", "pod": "web-1"})
        self.assertTrue(res["isError"])
        self.assertIn("--kubeconfig", text_of(res))


class McpDatabaseUrlTest(unittest.TestCase):
    def test_a_url_is_never_shown_with_its_password(self):
        url = "postgresql://krc:hunter2@127.0.0.1:1/krc?password=hunter3"
        with tempfile.TemporaryDirectory() as tmp:
            pw = os.path.join(tmp, "pw")
            with open(pw, "w") as fh:
                fh.write("hunter4\n")
            msgs = [{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "list_restarts", "arguments": {}}}]
            p = subprocess.run([h.krc_binary(), "mcp", "--db", url, "--db-password-file", pw,
                                "--log-level", "debug"],
                               input="".join(json.dumps(m) + "\n" for m in msgs),
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertNotIn("hunter", p.stdout + p.stderr)
            self.assertIn("postgresql://krc:****@127.0.0.1:1/krc?password=****", p.stderr)
            res = json.loads(p.stdout.splitlines()[0])["result"]
            self.assertTrue(res["isError"])  # nothing listens on port 1 (or no PostgreSQL)
            self.assertIn("cannot read the restart history", text_of(res))
            # a password file is for a URL only
            p = subprocess.run([h.krc_binary(), "mcp", "--db", DB, "--db-password-file", pw],
                               input="", capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 1)
            self.assertIn("is for a PostgreSQL URL", p.stderr)


class McpExplainTest(unittest.TestCase):
    def test_explain_pod_live(self):
        # only this test's requests (the daemons of the history wrote Kubernetes Events)
        HOLDER.kube.clear_requests()
        c = Stdio("--kubeconfig", HOLDER.kube.kubeconfig)
        try:
            tools = {t["name"]: t for t in c.request("tools/list")["result"]["tools"]}
            r = c.request("tools/call", {"name": "explain_pod",
                                         "arguments": {"namespace": "ml", "pod": "trainer-0"}})
            res = r["result"]
            self.assertFalse(res["isError"], res)
            sc = res["structuredContent"]
            jsonschema.validate(sc, tools["explain_pod"]["outputSchema"])
            self.assertEqual((sc["container"], sc["restart_count"]), ("app", 2))
            self.assertEqual(sc["report"]["diagnosis"]["cause"], "oom_killed")
            r = c.request("tools/call", {"name": "explain_pod",
                                         "arguments": {"namespace": "ml", "pod": "nope-0"}})
            self.assertTrue(r["result"]["isError"])
            self.assertIn("not found", text_of(r["result"]))
            r = c.request("tools/call", {"name": "explain_pod",
                                         "arguments": {"namespace": "ml", "pod": "../x"}})
            self.assertTrue(r["result"]["isError"])
            # only reads went to the API server
            methods = {q.get("method") for q in HOLDER.kube.requests()}
            self.assertLessEqual(methods - {None}, {"GET"}, methods)
        finally:
            self.assertEqual(c.close(), 0)


def tool(c, name, args):
    """tools/call on a Stdio child: the result."""
    r = c.request("tools/call", {"name": name, "arguments": args})
    assert "result" in r, r
    return r["result"]


class McpScopeTest(unittest.TestCase):
    """What the tools answer about (security issue 24): the filters krc run would watch by (from
    the environment, or from --config with the environment over it) and mcpNamespaces; a
    namespace outside is refused with a tool error naming the setting, before any Kubernetes
    API request; "." and ".." are no names."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.kube = HOLDER.kube

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, text):
        path = os.path.join(self.tmp.name, "krc.yaml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def start(self, *args, env=None):
        c = Stdio(*args, env=env)
        self.addCleanup(lambda: self.assertEqual(c.close(), 0))
        schemas = {t["name"]: t for t in c.request("tools/list")["result"]["tools"]}

        def call(name, arguments):
            res = tool(c, name, arguments)
            if not res["isError"]:
                jsonschema.validate(res["structuredContent"], schemas[name]["outputSchema"])
            return res
        return call

    def namespaces(self, call, args=None):
        res = call("list_restarts", args or {})
        self.assertFalse(res["isError"], res)
        return [r["namespace"] for r in res["structuredContent"]["restarts"]]

    def refused(self, res, *needles):
        self.assertTrue(res["isError"], res)
        for n in needles:
            self.assertIn(n, text_of(res))

    def test_explain_pod_keeps_to_the_label_selector(self):
        """labelSelector selects the daemon's watch on the API server: explain_pod asks the API
        server with the same selector (a LIST by name and labels), and refuses a pod it does not
        select."""
        self.kube.clear_requests()
        call = self.start("--kubeconfig", self.kube.kubeconfig,
                          env={"KRC_LABEL_SELECTOR": "app.kubernetes.io/name=api"})
        self.refused(call("explain_pod", {"namespace": "ml", "pod": "trainer-0"}),
                     "pod ml/trainer-0 is outside what this MCP server answers about",
                     "labelSelector")
        reqs = [q for q in self.kube.requests() if "/namespaces/ml/" in q["path"]]
        # nothing but the selected LIST was read: no pod GET, no log, no events
        self.assertEqual([q["path"] for q in reqs], ["/api/v1/namespaces/ml/pods"], reqs)
        self.assertEqual((reqs[0]["query"].get("labelSelector"),
                          reqs[0]["query"].get("fieldSelector")),
                         ("app.kubernetes.io/name=api", "metadata.name=trainer-0"))
        call = self.start("--kubeconfig", self.kube.kubeconfig,
                          env={"KRC_LABEL_SELECTOR": "app.kubernetes.io/name in (trainer,api)"})
        res = call("explain_pod", {"namespace": "ml", "pod": "trainer-0"})
        self.assertFalse(res["isError"], res)
        self.assertEqual(res["structuredContent"]["report"]["diagnosis"]["cause"], "oom_killed")

    def test_the_filters_of_the_environment(self):
        everything = self.start()
        ml_id = everything("list_restarts", {"namespace": "ml"})["structuredContent"][
            "restarts"][0]["id"]
        self.kube.clear_requests()
        call = self.start("--kubeconfig", self.kube.kubeconfig,
                          env={"WATCHED_NAMESPACES": "shop"})
        self.assertEqual(self.namespaces(call), ["shop"] * 4)
        self.refused(call("list_restarts", {"namespace": "ml"}),
                     "namespace ml is outside what this MCP server answers about",
                     "watchedNamespaces")
        self.refused(call("pod_restart_timeline", {"namespace": "ml", "pod": "trainer-0"}),
                     "watchedNamespaces")
        self.refused(call("get_restart_report", {"id": ml_id}), "watchedNamespaces")
        s = call("restart_summary", {"since": "1h"})["structuredContent"]
        self.assertEqual((s["restarts"], s["gpus_held"], s["untrusted_fields"]), (4, 0, []))
        self.assertEqual({w["namespace"] for w in s["workloads"]}, {"shop"})
        # the review's case: explain_pod of a namespace krc does not watch read its log
        self.refused(call("explain_pod", {"namespace": "ml", "pod": "trainer-0"}),
                     "namespace ml", "watchedNamespaces")
        self.refused(call("explain_pod", {"namespace": "..", "pod": ".."}),
                     "namespaces are RFC 1123 DNS labels")
        self.refused(call("explain_pod", {"namespace": "shop", "pod": ".."}),
                     "pod names are RFC 1123 DNS subdomains")
        self.assertEqual(self.kube.requests(), [])  # refused before any API request
        res = call("explain_pod", {"namespace": "shop", "pod": "web-1"})
        self.assertFalse(res["isError"], res)
        self.assertIn("/report/log/text", res["structuredContent"]["untrusted_fields"])
        paths = [q["path"] for q in self.kube.requests()]
        self.assertIn("/api/v1/namespaces/shop/pods/web-1", paths)
        self.assertEqual([p for p in paths if "/namespaces/ml/" in p], [])
        # the other filters, by the name of their setting
        call = self.start(env={"IGNORED_NAMESPACES": "^m", "IGNORED_POD_NAME_PREFIXES": "api"})
        self.assertEqual(self.namespaces(call), ["shop"] * 3)
        self.refused(call("list_restarts", {"namespace": "ml"}), "ignoredNamespaces")
        self.refused(call("pod_restart_timeline", {"namespace": "shop", "pod": "api-0"}),
                     "pod api-0 in namespace shop", "ignoredPodNamePrefixes")

    def test_config_file_and_mcp_namespaces(self):
        path = self.write("watchedNamespaces: [shop, ml]\nmcpNamespaces: ml\n"
                          "slackWebhookUrl: https://hooks.slack.com/services/T/B/x\n")
        call = self.start("--config", path)
        self.assertEqual(self.namespaces(call), ["ml", "ml"])
        self.refused(call("list_restarts", {"namespace": "shop"}), "namespace shop",
                     "not in mcpNamespaces")
        # the environment over the file, the flag over both, as for krc run
        call = self.start("--config", path, env={"KRC_MCP_NAMESPACES": "shop"})
        self.assertEqual(set(self.namespaces(call)), {"shop"})
        call = self.start("--config", path, "--mcp-namespaces", "^(ml|shop)$",
                          env={"KRC_MCP_NAMESPACES": "shop"})
        self.assertEqual(set(self.namespaces(call)), {"shop", "ml"})
        call = self.start("--config", path, env={"WATCHED_NAMESPACES": "shop"})
        self.assertEqual(self.namespaces(call), [])  # watched shop, of which only ml
        # mistakes stop the start, naming the file or the setting
        for text, needle in (("mcpNamespaces: 'team-['\n", "mcpNamespaces"),
                             ("watchedNamespace: shop\n", "unknown key \"watchedNamespace\""),
                             ("redactPatterns: ['(']\n", "redactPatterns")):
            bad = self.write(text)
            p = subprocess.run([h.krc_binary(), "mcp", "--db", DB, "--config", bad],
                               input="", capture_output=True, text=True, timeout=30,
                               env=mcp_env())
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn(needle, p.stderr)
        p = subprocess.run([h.krc_binary(), "mcp", "--db", DB, "--config",
                            os.path.join(self.tmp.name, "missing.yaml")],
                           input="", capture_output=True, text=True, timeout=30, env=mcp_env())
        self.assertEqual(p.returncode, 1)
        self.assertIn("missing.yaml: cannot open", p.stderr)

    def test_redact_patterns_of_the_config_file(self):
        """explain_pod's live report goes through krc mcp's redactor: built-in scanners plus
        the file's redactPatterns (docs/mcp.md said so; krc mcp used the built-in ones only)."""
        self.kube.create_pod("billing", "invoicer-0")
        self.kube.restart("billing", "invoicer-0", "app", exit_code=1,
                          logs="charging\ncustomer ACME-123456 declined\n")
        args = {"namespace": "billing", "pod": "invoicer-0"}
        plain = self.start("--kubeconfig", self.kube.kubeconfig)
        log = plain("explain_pod", args)["structuredContent"]["report"]["log"]["text"]
        self.assertIn("ACME-123456", log)
        path = self.write("redactPatterns:\n  - 'ACME-[0-9]+'\n")
        for extra, env in ((["--config", path], None),
                           ([], {"KRC_REDACT_PATTERNS": "ACME-[0-9]+"})):
            call = self.start("--kubeconfig", self.kube.kubeconfig, *extra, env=env)
            res = call("explain_pod", args)
            self.assertFalse(res["isError"], res)
            text = json.dumps(res)
            self.assertNotIn("ACME-123456", text)
            self.assertIn("customer [REDACTED] declined",
                          res["structuredContent"]["report"]["log"]["text"])


class Http:
    """A `krc mcp --listen` child; the port comes from its log."""

    def __init__(self, *args, listen="127.0.0.1:0", db=None):
        self.proc = subprocess.Popen([h.krc_binary(), "mcp", "--db", db or DB, "--listen", listen,
                                      "--log-level", "info"] + list(args),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.port = None
        ready = threading.Event()

        def read():
            for line in self.proc.stderr:
                self.lines.append(line)
                m = re.search(r"port (\d+) at /mcp", line)
                if m:
                    self.port = int(m.group(1))
                    ready.set()
            ready.set()
        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        ready.wait(20)
        if self.port is None:
            raise AssertionError("krc mcp did not start: %s" % "".join(self.lines))

    def post(self, body, headers=None, method="POST"):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        hdrs = {"Content-Type": "application/json",
                "Accept": "application/json, text/event-stream"}
        hdrs.update(headers or {})
        hdrs = {k: v for k, v in hdrs.items() if v is not None}  # None: not sent
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        try:
            conn.request(method, "/mcp", body=body, headers=hdrs)
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        hdrs = dict(resp.getheaders())
        is_json = hdrs.get("Content-Type", "").startswith("application/json")
        return resp.status, hdrs, (json.loads(data) if data and is_json else None)

    def post_huge(self, size):
        """Announce a body of size bytes, send what the server takes, return the status."""
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=20)
        try:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % size)
            try:
                sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":"' +
                             b"a" * (size - 60) + b'"}}')
            except OSError:
                pass  # the server answered and closed before taking it all
            data = b""
            try:
                while b"\r\n" not in data:
                    chunk = sock.recv(4096)
                    if not chunk:
                        break
                    data += chunk
            except ConnectionResetError:
                pass
        finally:
            sock.close()
        m = re.match(rb"HTTP/1\.[01] (\d+)", data)
        if m is None:
            raise AssertionError("no HTTP status for a %d-byte request: %r" % (size, data[:200]))
        return int(m.group(1))

    def stop(self):
        self.proc.terminate()
        rc = self.proc.wait(timeout=20)
        self.reader.join(20)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return rc


def rpc(method, params=None, id_=1):
    msg = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


class McpHttpTest(unittest.TestCase):
    def setUp(self):
        self.s = Http()

    def tearDown(self):
        self.assertEqual(self.s.stop(), 0)

    def alive(self):
        status, _, body = self.s.post(rpc("ping", id_="alive"))
        self.assertEqual((status, body["result"]), (200, {}))

    def test_legacy_session(self):
        status, hdrs, body = self.s.post(rpc("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}))
        self.assertEqual(status, 200)
        self.assertTrue(hdrs["Content-Type"].startswith("application/json"))
        self.assertEqual(body["result"]["protocolVersion"], "2025-06-18")
        status, _, body = self.s.post({"jsonrpc": "2.0", "method": "notifications/initialized"},
                                      {"MCP-Protocol-Version": "2025-06-18"})
        self.assertEqual((status, body), (202, None))
        status, _, body = self.s.post(rpc("tools/call", {"name": "list_restarts",
                                                         "arguments": {"limit": 2}}),
                                      {"MCP-Protocol-Version": "2025-06-18"})
        self.assertEqual(status, 200)
        self.assertEqual(len(body["result"]["structuredContent"]["restarts"]), 2)
        status, _, body = self.s.post(rpc("ping"), {"MCP-Protocol-Version": "1999-01-01"})
        self.assertEqual(status, 400)

    def test_modern_stateless(self):
        hdrs = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                "Mcp-Name": "restart_summary"}
        status, _, body = self.s.post(rpc("tools/call", {"name": "restart_summary",
                                                         "arguments": {}, "_meta": META}), hdrs)
        self.assertEqual(status, 200, body)
        self.assertEqual(body["result"]["resultType"], "complete")
        self.assertEqual(body["result"]["structuredContent"]["restarts"], 6)
        hdrs["Mcp-Name"] = "list_restarts"
        status, _, body = self.s.post(rpc("tools/call", {"name": "restart_summary",
                                                         "arguments": {}, "_meta": META}), hdrs)
        self.assertEqual((status, body["error"]["code"]), (400, -32020))
        status, _, body = self.s.post(rpc("nope/nope", {"_meta": META}),
                                      {"MCP-Protocol-Version": MODERN, "Mcp-Method": "nope/nope"})
        self.assertEqual((status, body["error"]["code"]), (404, -32601))
        status, _, body = self.s.post(rpc("server/discover", {}),
                                      {"Mcp-Method": "server/discover"})
        self.assertEqual((status, body["error"]["code"]), (400, -32602))

    def test_concurrent_calls(self):
        # several connections at once share the tools' one database connection
        errors = []

        def worker(n):
            try:
                for i in range(8):
                    name = ("list_restarts", "restart_summary", "pod_restart_timeline")[(n + i) % 3]
                    args = {"namespace": "shop", "pod": "web-1"} if name == \
                        "pod_restart_timeline" else {}
                    status, _, body = self.s.post(rpc("tools/call", {"name": name,
                                                                     "arguments": args}))
                    if status != 200 or body["result"]["isError"]:
                        errors.append((status, body))
            except Exception as e:  # noqa: BLE001
                errors.append(e)
        threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(errors, [])

    def test_refusals_and_the_server_keeps_serving(self):
        status, _, body = self.s.post("{not json")
        self.assertEqual((status, body["error"]["code"], body["id"]), (400, -32700, None))
        self.alive()
        status, _, body = self.s.post(rpc("sampling/createMessage", {}))
        self.assertEqual(body["error"]["code"], -32601)
        status, _, body = self.s.post(rpc("tools/call", {"name": "rm_rf", "arguments": {}}))
        self.assertEqual(body["error"]["code"], -32602)
        status, _, body = self.s.post(rpc("tools/call", {"name": "get_restart_report",
                                                         "arguments": {"id": "one"}}))
        self.assertTrue(body["result"]["isError"])
        self.alive()
        self.assertEqual(self.s.post_huge(10 << 20), 413)
        self.alive()
        status, hdrs, _ = self.s.post(None, method="GET")
        self.assertEqual(status, 405)
        self.assertIn("POST", hdrs.get("Allow", ""))
        status, _, body = self.s.post(rpc("ping"), {"Origin": "http://evil.example"})
        self.assertEqual((status, body["error"]["code"]), (403, -32600))
        status, _, _ = self.s.post(rpc("ping"), {"Host": "evil.example:%d" % self.s.port})
        self.assertEqual(status, 403)
        status, _, _ = self.s.post(rpc("ping"), {"Origin": "http://localhost:6274"})
        self.assertEqual(status, 200)
        status, _, _ = self.s.post(rpc("ping"), {"Content-Type": "text/plain"})
        self.assertEqual(status, 415)
        # the transport POSTs application/json: none, or a look-alike, is 415 too
        for ctype in (None, "application/jsonfoo", "application/json-patch+json"):
            status, hdrs, body = self.s.post(rpc("ping"), {"Content-Type": ctype})
            self.assertEqual((status, body["error"]["code"]), (415, -32600), ctype)
            self.assertEqual(hdrs.get("Accept"), "application/json")
        status, _, body = self.s.post(rpc("ping"),
                                      {"Content-Type": "application/json; charset=utf-8"})
        self.assertEqual((status, body["result"]), (200, {}))
        # an Accept that allows no JSON answer
        status, _, body = self.s.post(rpc("ping"), {"Accept": "text/event-stream"})
        self.assertEqual((status, body["error"]["code"]), (406, -32600))
        status, _, _ = self.s.post(rpc("ping"), {"Accept": "*/*"})
        self.assertEqual(status, 200)
        # bytes that are not UTF-8 in the method: a parse error, and the answer is JSON
        status, _, body = self.s.post(b'{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}')
        self.assertEqual((status, body["error"]["code"], body["id"]), (400, -32700, None))
        self.alive()


class McpHttpTokenTest(unittest.TestCase):
    def test_token(self):
        path = os.path.join(TMP.name, "token")
        with open(path, "w") as f:
            f.write("s3cret-token-123\n")
        s = Http("--token-file", path)
        try:
            status, hdrs, body = s.post(rpc("ping"))
            self.assertEqual((status, body["error"]["code"]), (401, -32001))
            self.assertIn("Bearer", hdrs.get("WWW-Authenticate", ""))
            status, _, _ = s.post(rpc("ping"), {"Authorization": "Bearer wrong"})
            self.assertEqual(status, 401)
            status, _, _ = s.post(rpc("ping"), {"Authorization": "Bearer s3cret-token-123x"})
            self.assertEqual(status, 401)
            status, _, body = s.post(rpc("ping"), {"Authorization": "Bearer s3cret-token-123"})
            self.assertEqual((status, body["result"]), (200, {}))
            self.assertNotIn("s3cret", "".join(s.lines))
        finally:
            self.assertEqual(s.stop(), 0)

    def test_a_public_address_needs_a_token(self):
        p = subprocess.run([h.krc_binary(), "mcp", "--db", DB, "--listen", "0.0.0.0:0"],
                           capture_output=True, text=True, timeout=20)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--token-file is required", p.stderr)
        empty = os.path.join(TMP.name, "empty")
        open(empty, "w").close()
        p = subprocess.run([h.krc_binary(), "mcp", "--db", DB, "--listen", "0.0.0.0:0",
                            "--token-file", empty], capture_output=True, text=True, timeout=20)
        self.assertEqual(p.returncode, 1)
        self.assertIn("token file %s: empty" % empty, p.stderr)


class McpIncidentsTest(unittest.TestCase):
    """list_incidents, get_incident and what_changed (issue 27) on a history with incidents and
    recorded changes that the store API wrote (incident_seed): every answer against its output
    schema, over stdio and HTTP in both eras, the scope (filters and mcpNamespaces, in krc mcp
    and the daemon's /mcp), untrusted_fields, and the refusals."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.db = os.path.join(cls.tmp.name, "incidents.db")
        cls.ids = seed_incidents(cls.db)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def start(self, *args, env=None):
        c = Stdio(*args, env=env, db=self.db)
        self.addCleanup(lambda: self.assertEqual(c.close(), 0))
        schemas = {t["name"]: t for t in c.request("tools/list")["result"]["tools"]}
        self.assertEqual(list(schemas), TOOLS)

        def call(name, arguments):
            res = tool(c, name, arguments)
            if not res["isError"]:
                self.assertEqual(json.loads(text_of(res)), res["structuredContent"])
                jsonschema.validate(res["structuredContent"], schemas[name]["outputSchema"])
            return res
        return call, schemas

    def ok(self, res):
        self.assertFalse(res["isError"], res)
        return res["structuredContent"]

    def test_schemas(self):
        _, schemas = self.start()
        for name in ("list_incidents", "get_incident", "what_changed"):
            t = schemas[name]
            self.assertTrue(t["annotations"]["readOnlyHint"], name)
            jsonschema.Draft202012Validator.check_schema(t["inputSchema"])
            jsonschema.Draft202012Validator.check_schema(t["outputSchema"])
            self.assertFalse(t["inputSchema"]["additionalProperties"])
        props = schemas["what_changed"]["inputSchema"]["properties"]
        self.assertEqual(sorted(props),
                         ["cluster", "limit", "namespace", "pod", "since", "workload"])
        self.assertEqual(sorted(schemas["list_incidents"]["inputSchema"]["properties"]),
                         ["cluster", "cursor", "limit", "namespace", "open", "since", "workload"])
        self.assertEqual(schemas["get_incident"]["inputSchema"]["required"], ["id"])

    def test_list_get_and_what_changed(self):
        call, _ = self.start()
        ids = self.ids
        rows = self.ok(call("list_incidents", {}))["incidents"]
        self.assertEqual([r["id"] for r in rows],
                         [ids["trainer"], ids["dns"], ids["canary"], ids["api"]])
        self.assertEqual([r["id"] for r in self.ok(call("list_incidents", {"open": True}))
                          ["incidents"]], [ids["dns"], ids["canary"], ids["api"]])
        api = self.ok(call("list_incidents", {"namespace": "shop",
                                              "workload": "Deployment/api"}))["incidents"]
        self.assertEqual([(r["workload"], r["restarts"], r["ended_at"]) for r in api],
                         [("Deployment/api", 3, None)])
        page = self.ok(call("list_incidents", {"limit": 2}))
        rest = self.ok(call("list_incidents", {"limit": 2, "cursor": page["next_cursor"]}))
        self.assertEqual([r["id"] for r in page["incidents"] + rest["incidents"]],
                         [r["id"] for r in rows])
        self.assertNotIn("next_cursor", rest)
        # one incident: the first failure's evidence kept, the latest one's, the changes before
        # it, what was sent; every id cited is one the other tools take
        inc = self.ok(call("get_incident", {"id": ids["api"], "log_bytes": 200}))
        self.assertIn("FIRST-CRASH-LOG", inc["first"]["report"]["log"]["text"])
        self.assertIn("LATEST-CRASH-LOG", inc["latest"]["report"]["log"]["text"])
        self.assertEqual([(c["kind"], c["name"], c["revision"]) for c in inc["changes"]],
                         [("Deployment", "api", "12"), ("Node", "node-a", "9001")])
        self.assertEqual([(m["kind"], m["state"]) for m in inc["messages"]],
                         [("alert", "delivered"), ("reply", "pending")])
        first = self.ok(call("get_restart_report", {"id": inc["incident"]["first_restart_id"]}))
        self.assertEqual(first["restart"]["pod"], "api-7d9f-1")
        for ptr in ("/first/report/log/text", "/latest/report/log/text", "/changes/0/items",
                    "/messages/0/text", "/first/report/what_changed/summary"):
            self.assertIn(ptr, inc["untrusted_fields"])
        # what changed: a workload, a pod's workload
        wc = self.ok(call("what_changed", {"namespace": "shop", "workload": "Deployment/api",
                                           "since": "3d"}))
        self.assertEqual([c["revision"] for c in wc["changes"]], ["13", "12", "9001", "11"])
        self.assertEqual(sorted(wc["nodes"]), ["node-a", "node-b"])
        # a pod: its workload's changes and those of the nodes the pod ran on (node-b only)
        wc = self.ok(call("what_changed", {"namespace": "shop", "pod": "api-7d9f-3"}))
        self.assertEqual((wc["workload"], wc["nodes"], [c["revision"] for c in wc["changes"]]),
                         ("Deployment/api", ["node-b"], ["13", "12"]))
        self.assertIn("/changes/0/items", wc["untrusted_fields"])
        for name, args, needle in (
                ("get_incident", {"id": 999999}, "no incident with id 999999"),
                ("get_incident", {"id": "x"}, "'id' must be an integer"),
                ("list_incidents", {"workload": "api"}, "Kind/name"),
                ("list_incidents", {"open": 1}, "'open' must be true or false"),
                ("what_changed", {"namespace": "shop"}, "either workload"),
                ("what_changed", {"namespace": "shop", "pod": "gone-1"},
                 "no restart of pod gone-1"),
                ("what_changed", {"namespace": "shop", "workload": "Deployment/api",
                                  "limit": 500}, "'limit'")):
            res = call(name, args)
            self.assertTrue(res["isError"], (name, args, res))
            self.assertIn(needle, text_of(res))

    def test_scope(self):
        """A token limited to namespaces never sees others: mcpNamespaces (the flag, as the
        environment and the file give it) and the filters."""
        ids = self.ids
        for call, _ in (self.start("--mcp-namespaces", "shop"),
                        self.start(env={"WATCHED_NAMESPACES": "shop"})):
            self.assertEqual({r["namespace"] for r in self.ok(call("list_incidents", {}))
                              ["incidents"]}, {"shop"})
            res = call("list_incidents", {"namespace": "kube-system"})
            self.assertTrue(res["isError"])
            self.assertIn("namespace kube-system is outside what this MCP server answers about",
                          text_of(res))
            res = call("get_incident", {"id": ids["dns"]})
            self.assertTrue(res["isError"])
            self.assertIn("incident %d is outside" % ids["dns"], text_of(res))
            self.assertNotIn("kube-system", text_of(res))
            self.assertNotIn("coredns", text_of(res))
            res = call("what_changed", {"namespace": "kube-system",
                                        "workload": "Deployment/coredns"})
            self.assertTrue(res["isError"])
            self.assertIn("namespace kube-system", text_of(res))
            self.ok(call("get_incident", {"id": ids["api"]}))
        call, _ = self.start(env={"IGNORED_POD_NAME_PREFIXES": "web-canary"})
        self.assertNotIn(ids["canary"], [r["id"] for r in self.ok(call("list_incidents", {}))
                                         ["incidents"]])
        res = call("get_incident", {"id": ids["canary"]})
        self.assertIn("ignoredPodNamePrefixes", text_of(res))
        res = call("what_changed", {"namespace": "shop", "workload": "Deployment/web-canary"})
        self.assertIn("ignoredPodNamePrefixes", text_of(res))

    def test_http_both_eras_with_a_token(self):
        path = os.path.join(self.tmp.name, "token")
        with open(path, "w") as f:
            f.write("incident-token-9\n")
        s = Http("--token-file", path, "--mcp-namespaces", "shop,ml", db=self.db)
        try:
            auth = {"Authorization": "Bearer incident-token-9"}
            st, _, body = s.post(rpc("tools/call", {"name": "list_incidents", "arguments": {}}),
                                 auth)
            self.assertEqual(st, 200, body)
            got = body["result"]["structuredContent"]["incidents"]
            self.assertEqual({r["namespace"] for r in got}, {"shop", "ml"})
            params = {"name": "get_incident", "arguments": {"id": self.ids["trainer"]},
                      "_meta": META}
            st, _, body = s.post(rpc("tools/call", params),
                                 dict(auth, **{"MCP-Protocol-Version": MODERN,
                                               "Mcp-Method": "tools/call",
                                               "Mcp-Name": "get_incident"}))
            self.assertEqual(st, 200, body)
            res = body["result"]
            self.assertEqual(res["resultType"], "complete")
            self.assertFalse(res["isError"], res)
            self.assertEqual(res["structuredContent"]["incident"]["workload"], "Pod/trainer-0")
            st, _, _ = s.post(rpc("tools/call", {"name": "list_incidents", "arguments": {}}))
            self.assertEqual(st, 401)
        finally:
            self.assertEqual(s.stop(), 0)

    def test_daemon_mcp(self):
        """The daemon's /mcp answers with the incident tools, within what it watches."""
        db = os.path.join(self.tmp.name, "daemon.db")
        ids = seed_incidents(db)
        token = os.path.join(self.tmp.name, "daemon-token")
        with open(token, "w") as f:
            f.write("incident-daemon-5\n")
        k = h.Krc(HOLDER.kube.kubeconfig, FAST + ["--watched-namespaces", "shop"],
                  {"SLACK_WEBHOOK_URL": HOLDER.slack.webhook_url("d"), "KRC_DB": db,
                   "KRC_MCP_TOKEN_FILE": token})
        try:
            k.wait_synced()
            port = k.http_port()

            def call(name, args):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
                try:
                    conn.request("POST", "/mcp", body=json.dumps(rpc("tools/call", {
                        "name": name, "arguments": args})), headers={
                        "Content-Type": "application/json",
                        "Authorization": "Bearer incident-daemon-5"})
                    resp = conn.getresponse()
                    data = resp.read()
                finally:
                    conn.close()
                self.assertEqual(resp.status, 200, data)
                return json.loads(data)["result"]
            rows = call("list_incidents", {})["structuredContent"]["incidents"]
            # the seeded ones of the watched namespace, never the trainer's; a restart of the
            # shared fake cluster's shop pods (another test's) that the daemon saw in its
            # start-up window may have opened one more, in shop
            got = sorted(r["id"] for r in rows)
            self.assertIn(ids["api"], got)
            self.assertIn(ids["canary"], got)
            self.assertNotIn(ids["trainer"], got)
            self.assertEqual({r["namespace"] for r in rows}, {"shop"}, rows)
            res = call("get_incident", {"id": ids["trainer"]})
            self.assertTrue(res["isError"])
            self.assertIn("watchedNamespaces", text_of(res))
            res = call("what_changed", {"namespace": "shop", "pod": "api-7d9f-1"})
            self.assertFalse(res["isError"], res)
            self.assertEqual(res["structuredContent"]["workload"], "Deployment/api")
        finally:
            self.assertEqual(k.stop(), 0)


class McpDaemonTest(unittest.TestCase):
    """krc run serves the same tools at /mcp on its --listen endpoint when mcpTokenFile is set,
    and not otherwise."""

    def post(self, port, body, token=None):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        hdrs = {"Content-Type": "application/json"}
        if token:
            hdrs["Authorization"] = "Bearer " + token
        try:
            conn.request("POST", "/mcp", body=json.dumps(body), headers=hdrs)
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        return resp.status, data

    def test_daemon_serves_mcp_with_a_token(self):
        kube = HOLDER.kube
        kube.create_pod("batch", "job-1")
        path = os.path.join(TMP.name, "daemon-token")
        with open(path, "w") as f:
            f.write("daemon-token-42\n")
        k = h.Krc(kube.kubeconfig, FAST, {"SLACK_WEBHOOK_URL": HOLDER.slack.webhook_url("d"),
                                          "KRC_MCP_TOKEN_FILE": path, "MUTE_SECONDS": "0"})
        try:
            k.wait_synced()
            port = k.http_port()
            kube.restart("batch", "job-1", "app", exit_code=2, logs="bad flag\n")
            k.wait_diagnosed(1, timeout=30)
            status, _ = self.post(port, rpc("ping"))
            self.assertEqual(status, 401)
            status, _ = self.post(port, rpc("ping"), "wrong")
            self.assertEqual(status, 401)

            def listed():
                st, data = self.post(port, rpc("tools/call", {"name": "list_restarts",
                                                               "arguments": {"namespace":
                                                                             "batch"}}),
                                     "daemon-token-42")
                self.assertEqual(st, 200, data)
                return json.loads(data)["result"]["structuredContent"]["restarts"]
            h.wait_until(lambda: len(listed()) == 1, 20, what="the restart at /mcp")
            self.assertEqual(listed()[0]["pod"], "job-1")
            # explain_pod reads the cluster with the daemon's credentials
            st, data = self.post(port, rpc("tools/call", {"name": "explain_pod", "arguments": {
                "namespace": "batch", "pod": "job-1"}}), "daemon-token-42")
            res = json.loads(data)["result"]
            self.assertFalse(res["isError"], res)
            self.assertEqual(res["structuredContent"]["restart_count"], 1)
            self.assertNotIn("daemon-token-42", k.text())
        finally:
            self.assertEqual(k.stop(), 0)

    def test_sighup_reloads_the_token_file(self):
        """A rotated token file is read again on SIGHUP: the old token is refused and the new
        one accepted; a missing or empty file then keeps the token, with a log line that names
        the file and never a token."""
        path = os.path.join(TMP.name, "rotating-token")
        with open(path, "w") as f:
            f.write("first-token-1111\n")
        k = h.Krc(HOLDER.kube.kubeconfig, FAST, {"SLACK_WEBHOOK_URL":
                                                 HOLDER.slack.webhook_url("d"),
                                                 "KRC_MCP_TOKEN_FILE": path})
        try:
            k.wait_synced()
            port = k.http_port()
            self.assertEqual(self.post(port, rpc("ping"), "first-token-1111")[0], 200)
            # rotate as a Secret volume does: a new file renamed over the old one
            with open(path + ".new", "w") as f:
                f.write("second-token-2222\n")
            os.rename(path + ".new", path)
            # not before the signal
            self.assertEqual(self.post(port, rpc("ping"), "first-token-1111")[0], 200)
            k.proc.send_signal(signal.SIGHUP)
            k.wait_log("mcpTokenFile %s re-read" % path)
            self.assertEqual(self.post(port, rpc("ping"), "first-token-1111")[0], 401)
            self.assertEqual(self.post(port, rpc("ping"), "second-token-2222")[0], 200)
            # a missing file keeps the token
            os.unlink(path)
            k.proc.send_signal(signal.SIGHUP)
            k.wait_log("mcpTokenFile not reloaded")
            line = k.logs(contains="mcpTokenFile not reloaded")[-1]["msg"]
            self.assertIn(path, line)
            self.assertEqual(self.post(port, rpc("ping"), "second-token-2222")[0], 200)
            # so does an empty one
            with open(path, "w") as f:
                f.write("  \n")
            k.proc.send_signal(signal.SIGHUP)
            k.wait_log("mcpTokenFile not reloaded", count=2)
            line = k.logs(contains="mcpTokenFile not reloaded")[-1]["msg"]
            self.assertIn("token file %s: empty" % path, line)
            self.assertEqual(self.post(port, rpc("ping"), "second-token-2222")[0], 200)
            self.assertEqual(self.post(port, rpc("ping"), "")[0], 401)
            # the same token again: said so
            with open(path, "w") as f:
                f.write("second-token-2222\n")
            k.proc.send_signal(signal.SIGHUP)
            k.wait_log("the token is unchanged")
            self.assertEqual(self.post(port, rpc("ping"), "second-token-2222")[0], 200)
            self.assertNotIn("first-token-1111", k.text())
            self.assertNotIn("second-token-2222", k.text())
        finally:
            self.assertEqual(k.stop(), 0)

    def test_daemon_answers_about_what_it_watches(self):
        """The review's case: krc run --watched-namespaces default returned another namespace's
        previous log through explain_pod. Now /mcp refuses what the daemon does not watch, before
        any API request, and a SIGHUP's mcpNamespaces applies from the next call (a bad one is
        rejected, naming it, and the running scope kept)."""
        kube = HOLDER.kube
        kube.create_pod("reports", "nightly-0")
        token = os.path.join(TMP.name, "scope-token")
        with open(token, "w") as f:
            f.write("scope-token-77\n")
        cfg = os.path.join(TMP.name, "scope.yaml")
        with open(cfg, "w") as f:
            f.write("mcpNamespaces: reports\n")
        k = h.Krc(kube.kubeconfig, FAST + ["--config", cfg, "--watched-namespaces", "reports"],
                  {"SLACK_WEBHOOK_URL": HOLDER.slack.webhook_url("d"),
                   "KRC_MCP_TOKEN_FILE": token, "MUTE_SECONDS": "0"})

        def call(name, args):
            st, data = self.post(port, rpc("tools/call", {"name": name, "arguments": args}),
                                 "scope-token-77")
            self.assertEqual(st, 200, data)
            return json.loads(data)["result"]
        try:
            k.wait_synced()
            port = k.http_port()
            kube.restart("reports", "nightly-0", "app", exit_code=3, logs="disk full\n")
            k.wait_diagnosed(1, timeout=30)
            h.wait_until(lambda: len(call("list_restarts", {})["structuredContent"]["restarts"])
                         == 1, 20, what="the restart at /mcp")
            kube.clear_requests()
            for name, args in (("explain_pod", {"namespace": "shop", "pod": "web-1"}),
                               ("list_restarts", {"namespace": "shop"}),
                               ("pod_restart_timeline", {"namespace": "shop", "pod": "web-1"})):
                res = call(name, args)
                self.assertTrue(res["isError"], res)
                self.assertIn("namespace shop is outside what this MCP server answers about",
                              text_of(res))
                self.assertIn("watchedNamespaces", text_of(res))
            self.assertEqual([q["path"] for q in kube.requests()
                              if "/namespaces/shop/" in q["path"]], [])
            self.assertFalse(call("explain_pod", {"namespace": "reports",
                                                  "pod": "nightly-0"})["isError"])
            # SIGHUP: mcpNamespaces is reloaded with the filters
            with open(cfg, "w") as f:
                f.write("mcpNamespaces: other\n")
            k.proc.send_signal(signal.SIGHUP)
            k.wait_log("configuration reloaded")
            res = call("list_restarts", {"namespace": "reports"})
            self.assertTrue(res["isError"], res)
            self.assertIn("not in mcpNamespaces", text_of(res))
            self.assertEqual(call("list_restarts", {})["structuredContent"]["restarts"], [])
            with open(cfg, "w") as f:
                f.write("mcpNamespaces: 'reports-['\n")
            k.proc.send_signal(signal.SIGHUP)
            k.wait_log("configuration reload rejected")
            self.assertIn("mcpNamespaces", k.logs(contains="configuration reload rejected")[-1]
                          ["msg"])
            self.assertIn("not in mcpNamespaces",
                          text_of(call("list_restarts", {"namespace": "reports"})))
        finally:
            self.assertEqual(k.stop(), 0)

    def test_no_mcp_without_a_token_file(self):
        k = h.Krc(HOLDER.kube.kubeconfig, FAST, {"SLACK_WEBHOOK_URL":
                                                 HOLDER.slack.webhook_url("d")})
        try:
            k.wait_synced()
            status, _ = self.post(k.http_port(), rpc("ping"))
            self.assertEqual(status, 404)
        finally:
            self.assertEqual(k.stop(), 0)

    def test_an_unreadable_token_file_stops_the_start(self):
        k = h.Krc(HOLDER.kube.kubeconfig, FAST, {"KRC_MCP_TOKEN_FILE": "/nonexistent/token"})
        try:
            self.assertNotEqual(k.wait_exit(), 0)
            self.assertIn("mcpTokenFile: token file /nonexistent/token", k.text())
        finally:
            k.kill()


if __name__ == "__main__":
    h.main()
