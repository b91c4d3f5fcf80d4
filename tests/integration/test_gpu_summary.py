"""GPU time lost in MCP's restart_summary (issue 26: "a field in restart_summary"), on the real
binary and the fake API server: a pod holding 2 GPUs is kept in back-off for T seconds, runs,
and crashes again; each stored restart carries the device-seconds counted since the
container's previous restart (restarts.accel_seconds_lost), and `restart_summary`'s
accelerator_seconds_lost is their sum: 2 x T within 2 s per device. A pod without devices adds
nothing."""

import json
import os
import subprocess
import tempfile
import time
import unittest

import krc_harness as h

GPUS = 2


def restart_summary(db):
    """restart_summary of `krc mcp --db DB` over stdio (the daemon is stopped)."""
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "restart_summary", "arguments": {"since": "1h"}}}]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRC_")}
    p = subprocess.run([h.krc_binary(), "mcp", "--db", db],
                       input="".join(json.dumps(m) + "\n" for m in msgs), capture_output=True,
                       text=True, timeout=60, env=env)
    if p.returncode != 0:
        raise AssertionError("krc mcp failed (%d): %s" % (p.returncode, p.stderr))
    answers = {m.get("id"): m for m in map(json.loads, p.stdout.splitlines())}
    return answers[2]["result"]["structuredContent"]


class GpuSummaryTest(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.krc = None
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.db = os.path.join(self.tmp.name, "krc.db")

    def tearDown(self):
        if self.krc is not None:
            self.krc.kill()

    def test_summary_sums_the_time_lost(self):
        self.kube.create_pod("ml", "trainer-7x2", containers=[{
            "name": "train", "resources": {"limits": {"nvidia.com/gpu": str(GPUS)},
                                           "requests": {"nvidia.com/gpu": str(GPUS)}}}])
        self.kube.create_pod("shop", "web-1")
        self.krc = h.Krc(self.kube.kubeconfig, ["--watch-idle-timeout", "30s",
                                                "--mute-seconds", "0"],
                         {"SLACK_WEBHOOK_URL": self.slack.webhook_url("alerts"),
                          "KRC_DB": self.db})
        self.krc.wait_synced()

        t0 = time.time()
        self.kube.restart("ml", "trainer-7x2", "train", exit_code=1, reason="Error",
                          waiting=True, logs="RuntimeError: CUDA error\n")
        self.kube.restart("shop", "web-1", "app", exit_code=1, reason="Error", logs="boom\n")
        self.krc.wait_diagnosed(2)
        h.wait_until(lambda: time.time() - t0 >= 5, 30, what="5 s of back-off")
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        t1 = time.time()
        self.kube.set_container_status("ml", "trainer-7x2", "train", {
            "state": {"waiting": None, "running": {"startedAt": now}}, "ready": True,
            "started": True})
        held = t1 - t0
        # the watch delivers the running container before it crashes again
        time.sleep(1.0 * h.SLOWDOWN)
        self.kube.restart("ml", "trainer-7x2", "train", exit_code=1, reason="Error",
                          logs="RuntimeError: CUDA error\n")
        self.krc.wait_diagnosed(2, pod="trainer-7x2")
        h.wait_until(lambda: len(h.history(self.db)) >= 3, 30 * h.SLOWDOWN,
                     what="3 stored restarts")
        self.assertEqual(self.krc.stop(timeout=60), 0, self.krc.tail(20))
        self.krc = None

        s = restart_summary(self.db)
        self.assertEqual(s["restarts"], 3, s)
        got = s["accelerator_seconds_lost"]
        self.assertLessEqual(abs(got - GPUS * held), 2 * GPUS,
                             "restart_summary says %s device-seconds, the fake kept %d GPUs "
                             "in back-off %.1f s" % (got, GPUS, held))


if __name__ == "__main__":
    h.main()
