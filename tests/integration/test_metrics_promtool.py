#!/usr/bin/env python3
"""Check the /metrics exposition with the Prometheus tools themselves.

tests/tools/metrics_demo (built next to the unit tests, in BUILD/tests/) serves
the daemon's metrics filled with sample values through the real HTTP server.
This test scrapes it, runs `promtool check metrics` on the text, and lets a
real Prometheus server scrape it and answer queries through its HTTP API.
Both come in the Debian package `prometheus`: from PATH, else from .test-tools/prometheus,
where scripts/setup-test unpacks the package (installing it would register and start a
prometheus service). A missing tool fails the test that needs it.

    python3 test_metrics_promtool.py --krc BUILD/krc [unittest options]

The demo is found as BUILD/tests/metrics_demo next to --krc, or through the
environment variable KRC_METRICS_DEMO.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

KRC = None
DEMO = None
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def prometheus_tool(name):
    """promtool or prometheus: from PATH, else unpacked by scripts/setup-test, else None."""
    found = shutil.which(name)
    if found is not None:
        return found
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    unpacked = os.path.join(root, ".test-tools", "prometheus", "usr", "bin", name)
    return unpacked if os.access(unpacked, os.X_OK) else None


def http_get(url, timeout=5):
    """(status, content type, body text); HTTP errors are answers too."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read().decode("utf-8", "replace")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Demo:
    """metrics_demo on 127.0.0.1:0; stop() sends SIGTERM and returns the exit code."""

    def __init__(self):
        self.proc = subprocess.Popen([DEMO], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()  # the demo prints it once listening
        if not line.startswith("port "):
            self.proc.kill()
            _, err = self.proc.communicate(timeout=10)
            raise AssertionError("metrics_demo did not start: %r %s" % (line, err))
        self.port = int(line.split()[1])
        self.base = "http://127.0.0.1:%d" % self.port

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            raise AssertionError("metrics_demo did not stop on SIGTERM")
        self.stderr = err
        return self.proc.returncode


class MetricsEndpoint(unittest.TestCase):
    def setUp(self):
        self.demo = Demo()

    def tearDown(self):
        rc = self.demo.stop()
        self.assertEqual(rc, 0, "metrics_demo exited %s: %s" % (rc, self.demo.stderr))

    def test_routes(self):
        st, ct, body = http_get(self.demo.base + "/healthz")
        self.assertEqual((st, body), (200, "ok\n"))
        st, ct, body = http_get(self.demo.base + "/readyz")
        self.assertEqual((st, body), (200, "ok\n"))
        st, ct, body = http_get(self.demo.base + "/metrics")
        self.assertEqual(st, 200)
        self.assertEqual(ct, CONTENT_TYPE)
        self.assertTrue(body.endswith("\n"))
        self.assertIn("\nkrc_up 1\n", body)
        # label escaping of a quote, a backslash and a newline
        self.assertIn('krc_restarts_detected_total{namespace="we\\"ird\\\\ns\\n",'
                      'cause="killed"} 1\n', body)
        # the namespace cap: 205 sample namespaces + 1, the last 6 are "other"
        self.assertIn('krc_restarts_detected_total{namespace="other",cause="app_error"} 6\n',
                      body)
        st, _, _ = http_get(self.demo.base + "/nothing")
        self.assertEqual(st, 404)
        req = urllib.request.Request(self.demo.base + "/metrics", data=b"x", method="POST")
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(req, timeout=5)
        self.assertEqual(cm.exception.code, 405)
        self.assertEqual(cm.exception.headers.get("Allow"), "GET, HEAD")

    def test_promtool_check_metrics(self):
        promtool = prometheus_tool("promtool")
        if promtool is None:
            self.fail("promtool not found (PATH or .test-tools/prometheus, where scripts/setup-test "
                      "unpacks Debian's prometheus package)")
        st, ct, body = http_get(self.demo.base + "/metrics")
        self.assertEqual(st, 200)
        p = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0,
                         "promtool check metrics failed:\n%s%s" % (p.stdout, p.stderr))
        self.assertEqual(p.stdout.strip() + p.stderr.strip(), "",
                         "promtool reported lint problems")
        # and promtool does find problems: a counter without _total, a bad escape
        for bad, why in (("# HELP x_requests A.\n# TYPE x_requests counter\nx_requests 1\n",
                          "_total"),
                         ('# HELP x_total A.\n# TYPE x_total counter\nx_total{a="\\q"} 1\n',
                          "escape")):
            p = subprocess.run([promtool, "check", "metrics"], input=bad, capture_output=True,
                               text=True, timeout=60)
            self.assertNotEqual(p.returncode, 0, bad)
            self.assertIn(why, p.stdout + p.stderr)


class PrometheusScrape(unittest.TestCase):
    """A real Prometheus server scrapes the demo every second."""

    def setUp(self):
        self.prometheus = prometheus_tool("prometheus")
        if self.prometheus is None:
            self.fail("prometheus not found (PATH or .test-tools/prometheus, where "
                      "scripts/setup-test unpacks Debian's prometheus package)")
        self.tmp = tempfile.mkdtemp(prefix="krc-prom-")
        self.demo = Demo()
        self.prom = None

    def tearDown(self):
        if self.prom is not None:
            self.prom.terminate()
            try:
                self.prom.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.prom.kill()
                self.prom.wait()
            self.prom_log.close()
        self.demo.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def start_prometheus(self):
        cfg = os.path.join(self.tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n"
                    "  scrape_interval: 1s\n"
                    "  scrape_timeout: 1s\n"
                    "scrape_configs:\n"
                    "  - job_name: krc\n"
                    "    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % self.demo.port)
        log_path = os.path.join(self.tmp, "prometheus.log")
        self.prom_log = open(log_path, "w")
        # Prometheus needs a fixed port: take a free one; retry if it is taken
        # between our check and its bind.
        for _ in range(5):
            port = free_port()
            self.prom = subprocess.Popen(
                [self.prometheus, "--config.file=" + cfg,
                 "--storage.tsdb.path=" + os.path.join(self.tmp, "data"),
                 "--web.listen-address=127.0.0.1:%d" % port, "--log.level=warn"],
                stdout=self.prom_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and self.prom.poll() is None:
                try:
                    st, _, _ = http_get("http://127.0.0.1:%d/-/ready" % port, timeout=2)
                    if st == 200:
                        return "http://127.0.0.1:%d" % port
                except (urllib.error.URLError, ConnectionError, OSError):
                    pass
                time.sleep(0.2)
            if self.prom.poll() is None:
                break
        self.prom_log.flush()
        with open(log_path) as f:
            log = f.read()
        self.fail("prometheus did not become ready:\n%s" % log[-3000:])

    def query(self, base, expr):
        url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        st, _, body = http_get(url)
        self.assertEqual(st, 200, body)
        doc = json.loads(body)
        self.assertEqual(doc["status"], "success", body)
        return doc["data"]["result"]

    def test_prometheus_scrapes_metrics(self):
        base = self.start_prometheus()
        deadline = time.monotonic() + 90
        result = []
        while time.monotonic() < deadline:
            result = self.query(base, "krc_up")
            if result:
                break
            time.sleep(0.25)
        self.assertTrue(result, "krc_up never appeared in Prometheus")
        self.assertEqual(result[0]["value"][1], "1")
        self.assertEqual(result[0]["metric"]["job"], "krc")

        # the scrape itself is healthy
        st, _, body = http_get(base + "/api/v1/targets")
        targets = json.loads(body)["data"]["activeTargets"]
        self.assertEqual(len(targets), 1)
        self.assertEqual(targets[0]["health"], "up", targets[0].get("lastError"))
        self.assertEqual(targets[0]["lastError"], "")

        # values and labels arrive intact: the escaped namespace, the histogram
        r = self.query(base, 'krc_restarts_detected_total{cause="killed"}')
        self.assertEqual(len(r), 1)
        self.assertEqual(r[0]["metric"]["namespace"], 'we"ird\\ns\n')
        self.assertEqual(r[0]["value"][1], "1")
        r = self.query(base, 'krc_notifications_total{result="sent"}')
        self.assertEqual(r[0]["value"][1], "12")
        r = self.query(base, "krc_restart_to_notification_seconds_count")
        self.assertEqual(r[0]["value"][1], "51")
        r = self.query(base, 'krc_restart_to_notification_seconds_bucket{le="+Inf"}')
        self.assertEqual(r[0]["value"][1], "51")
        r = self.query(base, "histogram_quantile(0.5, krc_restart_to_notification_seconds_bucket)")
        self.assertTrue(0.25 <= float(r[0]["value"][1]) <= 0.5, r)
        r = self.query(base, 'count(krc_restarts_detected_total{namespace="other"})')
        self.assertEqual(r[0]["value"][1], "1")
        r = self.query(base, "process_resident_memory_bytes")
        self.assertGreater(float(r[0]["value"][1]), 1e5)
        r = self.query(base, "krc_build_info")
        self.assertIn("version", r[0]["metric"])


def main():
    global KRC, DEMO
    ap = argparse.ArgumentParser()
    ap.add_argument("--krc", required=True)
    args, rest = ap.parse_known_args()
    KRC = os.path.abspath(args.krc)
    DEMO = os.environ.get("KRC_METRICS_DEMO") or os.path.join(os.path.dirname(KRC), "tests",
                                                              "metrics_demo")
    if not os.access(DEMO, os.X_OK):
        sys.exit("test_metrics_promtool: %s not found: build the metrics_demo target "
                 "(cmake --build BUILD --target metrics_demo) or set KRC_METRICS_DEMO" % DEMO)
    unittest.main(argv=[sys.argv[0]] + rest)


if __name__ == "__main__":
    main()
