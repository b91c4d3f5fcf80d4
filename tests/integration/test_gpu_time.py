"""GPU time lost, on the real binary and the fake API server: a pod holding N GPUs kept in
back-off for T seconds gives krc_accelerator_seconds_lost_total = N x T (within 2 s per
device), the counter grows while the container waits, stops when it runs again, and the alert
says what the container holds and how long it has waited so far. A pod without devices (or
with only gpumem/gpucores-style quantities) gets no series."""

import json
import re
import time
import unittest
import urllib.error
import urllib.request

import krc_harness as h

NAME = "krc_accelerator_seconds_lost_total"
GPUS = 4


def scrape(port):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
            return r.read().decode()
    except urllib.error.HTTPError as e:
        return e.read().decode()


def lost(text, labels):
    m = re.search(r"^%s%s (\S+)$" % (re.escape(NAME), re.escape(labels)), text, re.M)
    return float(m.group(1)) if m else None


SERIES = '{namespace="ml",workload="trainer",resource="nvidia.com/gpu"}'


def gpu_container(name, gpus):
    """A training container's spec: GPUs as the device plugin names them, and HAMi-style
    quantities next to them that are not devices."""
    return {"name": name,
            "resources": {"limits": {"nvidia.com/gpu": str(gpus), "nvidia.com/gpumem": "16000",
                                     "nvidia.com/gpucores": "100", "memory": "8Gi"},
                          "requests": {"nvidia.com/gpu": str(gpus), "cpu": "2",
                                       "memory": "8Gi"}}}


class GpuTimeTest(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.krc = None

    def tearDown(self):
        if self.krc is not None:
            self.krc.kill()

    def start(self):
        self.krc = h.Krc(self.kube.kubeconfig, ["--watch-idle-timeout", "30s"],
                         {"SLACK_WEBHOOK_URL": self.slack.webhook_url("alerts")})
        self.port = self.krc.http_port()
        self.krc.wait_synced()

    def test_backoff_counted(self):
        self.kube.create_pod("ml", "trainer-x2x4q", containers=[gpu_container("train", GPUS)])
        self.kube.create_pod("shop", "web-1", containers=[{
            "name": "app", "resources": {"limits": {"memory": "1Gi", "nvidia.com/gpumem": "1000"}}}])
        self.start()

        t0 = time.time()
        self.kube.restart("ml", "trainer-x2x4q", "train", exit_code=1, reason="Error",
                          waiting=True, logs="RuntimeError: CUDA error: out of memory\n")
        self.kube.restart("shop", "web-1", "app", exit_code=1, reason="Error", waiting=True,
                          logs="boom\n")
        self.krc.wait_restarts(2)
        # the counter grows while the container waits (a scrape counts the open spell)
        first = h.wait_until(lambda: lost(scrape(self.port), SERIES), 20 * h.SLOWDOWN,
                             what="the GPU pod's series")
        h.wait_until(lambda: (lost(scrape(self.port), SERIES) or 0) >= first + GPUS * 2,
                     20 * h.SLOWDOWN, what="the counter growing during back-off")

        # the alert says what the container holds and how long it has waited so far
        msgs = self.slack.wait_messages(2, timeout=20 * h.SLOWDOWN)
        gpu_msgs = [m for m in msgs if "trainer-x2x4q" in json.dumps(m)]
        self.assertEqual(len(gpu_msgs), 1, msgs)
        text = json.dumps(gpu_msgs[0])
        self.assertRegex(text, r"holds 4 nvidia\.com/gpu; \d+ s in back-off so far")
        web = [m for m in msgs if "web-1" in json.dumps(m)]
        self.assertEqual(len(web), 1)
        self.assertNotIn("in back-off so far", json.dumps(web[0]))

        # keep it in back-off until at least 6 s have passed, then it runs again
        h.wait_until(lambda: time.time() - t0 >= 6, 30, what="6 s of back-off")
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        t1 = time.time()
        self.kube.set_container_status("ml", "trainer-x2x4q", "train", {
            "state": {"waiting": None, "running": {"startedAt": now}}, "ready": True,
            "started": True})
        held = t1 - t0

        # once krc has seen it running, the counter stops: two scrapes 1.5 s apart agree
        def settled():
            a = lost(scrape(self.port), SERIES)
            time.sleep(1.5)
            b = lost(scrape(self.port), SERIES)
            return b if a == b else None
        value = h.wait_until(settled, 20 * h.SLOWDOWN, what="the counter to stop")
        print("counter %.3f, %d GPUs x %.3f s held = %.3f" % (value, GPUS, held, GPUS * held))
        self.assertLessEqual(abs(value - GPUS * held), 2 * GPUS,
                             "counter %.3f, expected %d GPUs x %.3f s = %.3f"
                             % (value, GPUS, held, GPUS * held))

        text = scrape(self.port)
        self.assertIn("# TYPE %s counter" % NAME, text)
        # no series for a pod without devices (gpumem is a quantity, not a device)
        self.assertNotIn('%s{namespace="shop"' % NAME, text)
        self.assertEqual(len(re.findall(r"^%s\{" % NAME, text, re.M)), 1, text)

        # the pod is deleted: once krc has seen it go, nothing more is counted
        self.kube.delete_pod("ml", "trainer-x2x4q")
        h.wait_until(lambda: re.search(r"^krc_pods_tracked 1$", scrape(self.port), re.M),
                     20 * h.SLOWDOWN, what="the deletion seen")
        self.assertEqual(lost(scrape(self.port), SERIES), value)


if __name__ == "__main__":
    h.main()
