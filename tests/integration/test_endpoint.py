"""The health and metrics endpoint of the real daemon: /healthz, /readyz flipping while the API
server is away, /metrics counting what happened (checked by promtool when installed)."""

import re
import shutil
import subprocess
import unittest
import urllib.error
import urllib.request

import krc_harness as h


def get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=5) as r:
            return r.status, r.read().decode(), r.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), e.headers.get("Content-Type", "")


def metric(text, name, labels=""):
    pat = re.compile(r"^%s%s (\S+)$" % (re.escape(name), re.escape(labels)), re.M)
    m = pat.search(text)
    return float(m.group(1)) if m else None


class EndpointTest(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.krc = None

    def tearDown(self):
        if self.krc is not None:
            self.krc.kill()

    def start(self):
        self.krc = h.Krc(self.kube.kubeconfig, ["--watch-idle-timeout", "3s"],
                         {"SLACK_WEBHOOK_URL": self.slack.webhook_url("alerts")})
        line = self.krc.wait_log("health and metrics on")[0]["msg"]
        self.port = int(re.search(r"\(port (\d+)\)", line).group(1))
        return self.krc

    def test_probes_and_metrics(self):
        self.kube.create_pod("shop", "web-1")
        self.kube.create_pod("shop", "web-2")
        self.start()
        self.assertEqual(get(self.port, "/healthz")[0], 200)
        h.wait_until(lambda: get(self.port, "/readyz")[0] == 200, 20, what="readiness")
        self.kube.restart("shop", "web-1", "app", exit_code=137, reason="OOMKilled", logs="x\n")
        self.slack.wait_messages(1, timeout=20)
        # the fake Slack has the message before krc has read its answer and counted it (the
        # Kubernetes Event, which used to be counted here too, no longer is: issue 25)
        h.wait_until(lambda: metric(get(self.port, "/metrics")[1], "krc_notifications_total",
                                    '{result="sent"}') >= 1, 20, what="the message counted")
        status, text, ctype = get(self.port, "/metrics")
        self.assertEqual(status, 200)
        self.assertTrue(ctype.startswith("text/plain; version=0.0.4"), ctype)
        self.assertEqual(metric(text, "krc_pods_tracked"), 2)
        self.assertEqual(metric(text, "krc_restarts_detected_total",
                                '{namespace="shop",cause="oom_killed"}'), 1)
        self.assertGreaterEqual(metric(text, "krc_notifications_total", '{result="sent"}'), 1)
        # one observation per destination delivered: the Slack message and the Kubernetes
        # Event on the pod (on by default)
        h.wait_until(lambda: metric(get(self.port, "/metrics")[1],
                                    "krc_restart_to_notification_seconds_count") == 2, 20,
                     what="both deliveries observed")
        self.assertGreaterEqual(metric(text, "krc_watch_events_total", '{type="MODIFIED"}'), 1)
        self.assertEqual(metric(text, "krc_ready"), 1)
        self.assertEqual(metric(text, "krc_store_unwritten_records"), 0)
        self.assertNotIn("web-1", text, "pod names are never labels")
        self.assertNotIn(self.slack.webhook_url("alerts"), text)
        self.assertEqual(get(self.port, "/nope")[0], 404)
        promtool = shutil.which("promtool")
        if promtool:
            p = subprocess.run([promtool, "check", "metrics"], input=text, text=True,
                               capture_output=True, timeout=30)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        else:
            print("promtool not installed: format check skipped")

    def test_readiness_flips_while_the_api_server_is_away(self):
        self.start()
        h.wait_until(lambda: get(self.port, "/readyz")[0] == 200, 20, what="readiness")
        self.kube.fault(type="refuse_connections", seconds=8)
        self.kube.fault(type="drop_watches")
        status, body = h.wait_until(
            lambda: (lambda r: r[:2] if r[0] == 503 else None)(get(self.port, "/readyz")), 15,
            what="/readyz 503 while the API server is away")
        self.assertIn("Kubernetes API unreachable", body)
        self.assertEqual(get(self.port, "/healthz")[0], 200, "liveness must not follow the API")
        h.wait_until(lambda: get(self.port, "/readyz")[0] == 200, 40,
                     what="readiness back after the API server returns")
        self.assertEqual(self.krc.stop(), 0)


if __name__ == "__main__":
    h.main()
