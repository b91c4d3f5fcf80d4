#!/usr/bin/env python3
"""One slow address cannot starve the HTTP endpoint (issue 24), on the real binary.

`krc run`: a client on 127.0.0.1 tries to hold 64 connections for 60 s, each sending one byte
of an endless request head every 5 s (the review's attack: it took the old endpoint down, and
the kubelet then restarts krc in a loop). Meanwhile another address, 127.0.0.2, must get
/healthz answered within 1 s throughout, /readyz and /metrics too, and a container restart in
the meantime must be alerted. Afterwards /metrics counts the refusals and cuts in
krc_http_connections_rejected_total{reason}, and the warnings were rate-limited and named the
slow address, never the other one.

`krc mcp --listen` (the same server) gets a shorter version: 64 slow connections for 25 s while
/healthz and /mcp answer 127.0.0.2 within 1 s.

    python3 test_http_starvation.py --krc /path/to/krc [unittest options]
"""
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import krc_harness as h

HERE = os.path.dirname(os.path.abspath(__file__))
SLOW_CLIENTS = os.path.join(HERE, "slow_clients.py")
ATTACKER = "127.0.0.1"
OTHER = "127.0.0.2"  # all of 127/8 is loopback on Linux: a second client address
LIMIT_S = 1.0  # the acceptance: every answer to the other address within 1 s


def request(port, method, path, body=None, headers=None, source=OTHER, timeout=10):
    """(status, body bytes, seconds taken) of one request on a new connection from `source`;
    status None with the error text as body when it failed. The timeout is longer than
    LIMIT_S so that a slow answer is measured, not hidden."""
    t0 = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                      source_address=(source, 0))
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, data, time.monotonic() - t0
    except OSError as e:
        return None, str(e).encode(), time.monotonic() - t0
    finally:
        conn.close()


def rejected(metrics_text):
    """{reason: count} of krc_http_connections_rejected_total."""
    return {m.group(1): float(m.group(2)) for m in re.finditer(
        r'^krc_http_connections_rejected_total\{reason="([a-z_]+)"\} (\S+)$', metrics_text, re.M)}


class Attack:
    """slow_clients.py in its own process, from ATTACKER."""

    def __init__(self, port, seconds, connections=64, every=5):
        self.seconds = seconds
        self.proc = subprocess.Popen(
            [sys.executable, SLOW_CLIENTS, "--port", str(port), "--source", ATTACKER,
             "--connections", str(connections), "--every", str(every),
             "--seconds", str(seconds)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.started = time.monotonic()

    def running(self):
        return self.proc.poll() is None

    def finish(self):
        out, err = self.proc.communicate(timeout=self.seconds + 60)
        if self.proc.returncode != 0:
            raise AssertionError("slow_clients.py failed (%d): %s" % (self.proc.returncode, err))
        return json.loads(out)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


class Prober(threading.Thread):
    """Asks, from OTHER, one request every `interval` s while the attack runs, cycling through
    `requests` (method, path, body, headers, check(body)); records each (time, path, status,
    seconds, ok)."""

    def __init__(self, port, attack, requests, interval=0.25):
        super().__init__(daemon=True)
        self.port = port
        self.attack = attack
        self.requests = requests
        self.interval = interval
        self.results = []

    def run(self):
        i = 0
        while self.attack.running():
            method, path, body, headers, check = self.requests[i % len(self.requests)]
            i += 1
            status, data, took = request(self.port, method, path, body, headers)
            ok = status == 200 and took <= LIMIT_S and check(data)
            self.results.append((time.monotonic() - self.attack.started, path, status,
                                 round(took, 3), ok, data[:200]))
            time.sleep(self.interval)

    def failures(self):
        return [r for r in self.results if not r[4]]

    def report(self):
        """The failures by path, and the first few of each, for an assertion message."""
        out = []
        for path in sorted({r[1] for r in self.results}):
            bad = [r for r in self.failures() if r[1] == path]
            out.append("%s: %d of %d failed or slower than %.1f s%s" % (
                path, len(bad), sum(1 for r in self.results if r[1] == path), LIMIT_S,
                "".join("\n  %.1f s in: status %s in %.3f s: %r" % (r[0], r[2], r[3], r[5][:80])
                        for r in bad[:5])))
        return "\n".join(out)

    def answered(self, path):
        return sum(1 for r in self.results if r[1] == path and r[4])


def warnings_of(lines):
    """The 'http connection rejected' warnings among JSON log lines."""
    return [l for l in lines if l.get("msg") == "http connection rejected"]


class DaemonStarvationTest(unittest.TestCase):
    SECONDS = 60

    def setUp(self):
        h.start_fakes(self)
        self.krc = None
        self.attack = None

    def tearDown(self):
        if self.attack is not None:
            self.attack.kill()
        if self.krc is not None:
            self.krc.kill()

    def test_slow_address_does_not_starve_the_endpoint(self):
        self.kube.create_pod("shop", "web-1")
        self.krc = h.Krc(self.kube.kubeconfig, ["--watch-idle-timeout", "3s"],
                         {"SLACK_WEBHOOK_URL": self.slack.webhook_url("alerts"),
                          "MUTE_SECONDS": "0"}, log_level="info")
        port = self.krc.http_port()
        self.krc.wait_synced()
        h.wait_until(lambda: request(port, "GET", "/readyz")[0] == 200, 20, what="readiness")

        self.attack = Attack(port, self.SECONDS)
        prober = Prober(port, self.attack, [
            ("GET", "/healthz", None, None, lambda b: b == b"ok\n"),
            ("GET", "/healthz", None, None, lambda b: b == b"ok\n"),
            ("GET", "/readyz", None, None, lambda b: b == b"ok\n"),
            ("GET", "/metrics", None, None,
             lambda b: b"krc_http_connections_rejected_total" in b),
        ])
        prober.start()

        # a restart in the meantime is alerted, while the attack goes on (by 15 s every slow
        # connection has been opened, and the first of them cut)
        time.sleep(15)
        self.kube.restart("shop", "web-1", "app", exit_code=137, reason="OOMKilled",
                          logs="allocating\n")
        self.slack.wait_messages(1, timeout=30)
        self.assertTrue(self.attack.running(), "the alert must come during the attack")

        stats = self.attack.finish()
        prober.join(10)
        self.assertEqual(prober.failures(), [], "answers to %s:\n%s" % (OTHER, prober.report()))
        # throughout: answers in every part of the minute
        healthz = [r[0] for r in prober.results if r[1] == "/healthz"]
        self.assertGreaterEqual(len(healthz), self.SECONDS)
        for second in range(0, self.SECONDS - 5, 5):
            self.assertTrue(any(second <= t < second + 5 for t in healthz),
                            "no /healthz answer %d..%d s into the attack" % (second, second + 5))
        self.assertGreater(prober.answered("/metrics"), 10)
        # the attacker tried all along: it opened far more than it was allowed to hold
        self.assertGreater(stats["connects"], 200, stats)
        self.assertGreater(stats["closed"], 150, stats)

        status, body, _ = request(port, "GET", "/metrics")
        counts = rejected(body.decode())
        print("\n%d answers to %s, slowest %.3f s; attacker %s; rejected %s"
              % (len(prober.results), OTHER, max(r[3] for r in prober.results), stats, counts))
        self.assertEqual(set(counts), {"connection_limit", "per_address_limit", "head_timeout",
                                       "request_timeout", "idle_timeout"}, body)
        self.assertGreater(counts["per_address_limit"], 100, counts)
        self.assertGreater(counts["head_timeout"], 10, counts)
        self.assertEqual(counts["connection_limit"], 0, counts)

        # warnings: named the slow address, rate-limited per reason, never the other address
        lines = warnings_of(self.krc.logs())
        self.assertTrue(lines, "no warning logged")
        for reason in ("per_address_limit", "head_timeout"):
            mine = [l for l in lines if l["reason"] == reason]
            self.assertGreaterEqual(len(mine), 1, reason)
            self.assertLessEqual(len(mine), self.SECONDS // 10 + 3, mine)
            self.assertTrue(any(l["suppressed"] > 0 for l in mine), mine)
        for l in lines:
            self.assertEqual(l["level"], "warn", l)
            self.assertEqual(l["client"], ATTACKER, l)
        logged = sum(1 + l["suppressed"] for l in lines if l["reason"] == "per_address_limit")
        self.assertLessEqual(logged, counts["per_address_limit"])
        self.assertNotIn("X-Slow", self.krc.text(), "request contents are never logged")
        self.assertFalse(self.krc.exited(), "krc must keep running")
        h.wait_until(lambda: request(port, "GET", "/healthz", source=ATTACKER)[0] == 200, 10,
                     what="the slow address served again once it stops")
        self.assertEqual(self.krc.stop(), 0)


class McpStarvationTest(unittest.TestCase):
    """`krc mcp --listen` uses the same server: /healthz and /mcp keep answering."""
    SECONDS = 25

    def test_mcp_listen_keeps_answering(self):
        tmp = tempfile.TemporaryDirectory(prefix="krc-test-mcp-")
        self.addCleanup(tmp.cleanup)
        proc = subprocess.Popen([h.krc_binary(), "mcp", "--db", os.path.join(tmp.name, "krc.db"),
                                 "--listen", "127.0.0.1:0", "--log-level", "info"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        lines = []
        ready = threading.Event()
        port = []

        def read():
            for line in proc.stderr:
                lines.append(line)
                m = re.search(r"port (\d+) at /mcp", line)
                if m:
                    port.append(int(m.group(1)))
                    ready.set()
            ready.set()
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        attack = None
        try:
            ready.wait(20)
            self.assertTrue(port, "krc mcp did not start: %s" % "".join(lines))
            port = port[0]
            ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
            mcp_headers = {"Content-Type": "application/json",
                           "Accept": "application/json, text/event-stream"}
            attack = Attack(port, self.SECONDS)
            prober = Prober(port, attack, [
                ("GET", "/healthz", None, None, lambda b: b == b"ok\n"),
                ("POST", "/mcp", ping, mcp_headers, lambda b: b'"result":{}' in b),
            ])
            prober.start()
            stats = attack.finish()
            prober.join(10)
            print("\n%d answers to %s, slowest %.3f s; attacker %s"
                  % (len(prober.results), OTHER, max(r[3] for r in prober.results), stats))
            self.assertEqual(prober.failures(), [],
                             "answers to %s:\n%s" % (OTHER, prober.report()))
            self.assertGreaterEqual(prober.answered("/healthz"), self.SECONDS)
            self.assertGreaterEqual(prober.answered("/mcp"), self.SECONDS)
            self.assertGreater(stats["closed"], 50, stats)
            warned = [l for l in lines if "http connection rejected" in l]
            self.assertTrue(any("reason=per_address_limit client=127.0.0.1" in l
                                for l in warned), "".join(lines))
            self.assertTrue(any("reason=head_timeout client=127.0.0.1" in l for l in warned),
                            "".join(lines))
            self.assertLessEqual(len(warned), 2 * (self.SECONDS // 10 + 2), "".join(warned))
            self.assertIsNone(proc.poll(), "krc mcp must keep running")
        finally:
            if attack is not None:
                attack.kill()
            proc.terminate()
            rc = proc.wait(20)
            reader.join(10)
            proc.stderr.close()
        self.assertEqual(rc, 0)


if __name__ == "__main__":
    h.main()
