#!/usr/bin/env python3
"""Run the real `krc demo` and check what it promises (docs/demo.md):

    python3 test_demo.py --krc /path/to/krc [unittest options]

- a full run: exit 0 well under a minute; every scenario pod recorded with the
  cause code its real case calls for; the storm guard grouped the NotReady
  node's restarts and posted a summary; every alert reached the embedded
  Slack webhook and was printed; alerts.html exists and parses; `krc history
  --db` and `krc mcp --db` (stdio, tools/call list_restarts) work on the
  history; no generated file (kubeconfig, config) is left; the port is free.
- Ctrl-C: SIGINT mid-run (and before krc has synced) ends it with exit 130,
  promptly, leaving no generated file, a free port and a sound history.
- bad options: exit 2; an output directory that cannot be made: exit 1 naming it.
"""
import argparse
import html.parser
import json
import os
import re
import select
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

KRC = None
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
STORM = {"cache/memcached-%d" % i: "killed" for i in range(8)}
STORM_NODE = "small-1gb-3"
KEPT = {"history.db", "history.db-wal", "history.db-shm", "alerts.html"}


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


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = 0
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.tags += 1

    def handle_data(self, data):
        self.text.append(data)


RUN = {}


def setUpModule():
    RUN["tmp"] = tempfile.TemporaryDirectory(prefix="krc-demo-test-")
    out = os.path.join(RUN["tmp"].name, "out")
    t0 = time.monotonic()
    p = subprocess.run([KRC, "demo", "--out", out], capture_output=True, text=True,
                       timeout=RUN_LIMIT_S * 2)
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

    def test_every_case_gets_its_cause(self):
        rows = {"%s/%s" % (r["namespace"], r["pod"]): r for r in self.history()}
        for pod, cause in {**EXPECTED, **STORM}.items():
            self.assertIn(pod, rows, "no restart recorded for %s" % pod)
            self.assertEqual(rows[pod]["cause"], cause, "%s: %s" % (pod, rows[pod]["summary"]))
            self.assertEqual(rows[pod]["restart_count"], 1)
        self.assertEqual(len(rows), len(EXPECTED) + len(STORM))
        for pod in EXPECTED:
            self.assertEqual((rows[pod]["decision"], rows[pod]["delivery"]),
                             ("alert", "delivered"), pod)

    def test_storm_guard_grouped_the_notready_node(self):
        rows = [r for r in self.history() if "cache/%s" % r["pod"] in STORM]
        self.assertTrue(all(r["node"] == STORM_NODE for r in rows))
        grouped = [r for r in rows if r["decision"] == "grouped"]
        self.assertGreater(len(grouped), 0, [r["decision"] for r in rows])
        with sqlite3.connect("file:%s?mode=ro" % RUN["db"], uri=True) as db:
            summaries = db.execute("SELECT state, body FROM outbox WHERE kind = 'summary'")
            summaries = summaries.fetchall()
        self.assertEqual([s[0] for s in summaries], ["delivered"])
        self.assertIn(STORM_NODE, summaries[0][1])
        # the node's state reached the alerts that went out one by one
        self.assertIn("Kubelet stopped posting node status.", self.p.stdout)

    def test_alerts_printed_as_they_arrive(self):
        out = self.p.stdout
        for pod in EXPECTED:
            ns, name = pod.split("/")
            self.assertIn("%s/%s" % (ns, name), out)
        # each step is announced before its alert is printed
        first_step = out.index("event-streams/es-zookeeper-0:")
        first_alert = out.index("event-streams/es-zookeeper-0 (zookeeper)")
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
        got = {"%s/%s" % (r["namespace"], r["pod"]): r["cause"]
               for r in res["structuredContent"]["restarts"]}
        self.assertEqual(got, {**EXPECTED, **STORM})

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

    def read_until(self, proc, pattern, timeout=30):
        buf = b""
        deadline = time.monotonic() + timeout
        while not re.search(pattern, buf):
            left = deadline - time.monotonic()
            self.assertGreater(left, 0, "no %r in %r" % (pattern, buf[-2000:]))
            r, _, _ = select.select([proc.stdout], [], [], left)
            if r:
                chunk = os.read(proc.stdout.fileno(), 65536)
                self.assertTrue(chunk, "krc demo ended early: %r" % buf[-2000:])
                buf += chunk
        return buf.decode("utf-8", "replace")

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
        seen = self.read_until(proc, rb"airflow-worker-0 \(worker\)")
        recorded = self.interrupt(proc, seen)
        self.assertGreaterEqual(recorded, 3)  # the partial history is kept

    def test_sigint_before_the_first_crash(self):
        proc = self.start()
        seen = self.read_until(proc, rb"Simulated cluster: .*\n")
        self.interrupt(proc, seen)


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
