"""Device health that turns Unhealthy after the restart (issue 26), on the real binary and the
fake API server: the kubelet may write containerStatuses[].allocatedResourcesStatus (KEP-4680,
alpha 1.31) after the crash. Within deviceHealthRecheckSeconds (default 60) of a restart of a
container holding a GPU, a pod update that reports the device Unhealthy amends the restart
once: the stored report says gpu_device_unhealthy (krc history, krc history show) and one
amendment goes to Slack (a reply in the alert's thread with the Web API). After the window:
nothing."""

import json
import os
import ssl
import subprocess
import tempfile
import time
import unittest
import urllib.request

import krc_harness as h

SCRUB = ["SLACK_WEBHOOK_URL", "SLACK_CHANNEL", "SLACK_USERNAME", "SLACK_BOT_TOKEN",
         "SLACK_ICON", "CLUSTER_NAME", "MUTE_SECONDS", "KRC_SLACK_API_URL",
         "KRC_STORM_THRESHOLD", "KRC_STORM_WINDOW", "KRC_RECOVERED_AFTER", "KRC_WORKERS",
         "KRC_DEVICE_HEALTH_RECHECK_SECONDS", "KRC_PAGE_INTENTIONAL_RESTARTS"]

CUDA_LOG = ("loading checkpoint step 4000\n"
            "RuntimeError: CUDA error: an illegal memory access was encountered\n")


def gpu_container(name):
    return {"name": name,
            "resources": {"limits": {"nvidia.com/gpu": "1", "memory": "8Gi"},
                          "requests": {"nvidia.com/gpu": "1", "cpu": "2", "memory": "8Gi"}}}


def device_status(health):
    """allocatedResourcesStatus as the kubelet writes it for a device-plugin resource."""
    return {"allocatedResourcesStatus": [{"name": "nvidia.com/gpu", "resources": [
        {"resourceID": "GPU-7d3a9f1e", "health": health,
         "message": "XID 79: GPU has fallen off the bus" if health == "Unhealthy" else ""}]}]}


class LateDeviceHealthTest(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.krc = None
        self.dbdir = tempfile.mkdtemp(prefix="krc-devh-")
        self.db = os.path.join(self.dbdir, "krc.db")

    def tearDown(self):
        if self.krc is not None:
            self.krc.kill()

    def start(self, env):
        full = {k: None for k in SCRUB}
        full.update(env)
        full["KRC_DB"] = self.db
        self.krc = h.Krc(self.kube.kubeconfig, ["--watch-idle-timeout", "30s"], full)
        self.krc.wait_synced()

    def crash(self):
        self.kube.create_pod("ml", "trainer-0", containers=[gpu_container("train")])
        self.kube.set_container_status("ml", "trainer-0", "train", device_status("Healthy"))

    def rows(self):
        return [r for r in h.history(self.db) if r.get("pod") == "trainer-0"]

    def events(self):
        """The Events stored in namespace ml, read back by the test (krc may only create)."""
        self.kube.set_rbac(None)
        ctx = ssl.create_default_context(cafile=self.kube.ca)
        req = urllib.request.Request(
            self.kube.api_url + "/apis/events.k8s.io/v1/namespaces/ml/events",
            headers={"Authorization": "Bearer " + self.kube.current_token(),
                     "Accept": "application/json"})
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            items = json.loads(r.read())["items"]
        return [e for e in items if e.get("reason") == "RestartDiagnosed"]

    def show(self, row_id):
        p = subprocess.run([h.krc_binary(), "history", "show", str(row_id), "--db", self.db],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_unhealthy_20s_after_restart_amends_thread(self):
        self.crash()
        self.start({"SLACK_BOT_TOKEN": self.slack.token, "SLACK_CHANNEL": "#alerts",
                    "KRC_SLACK_API_URL": self.slack.api_url, "MUTE_SECONDS": "600"})
        t0 = time.monotonic()
        self.kube.restart("ml", "trainer-0", "train", exit_code=1, reason="Error", waiting=True,
                          logs=CUDA_LOG)
        (parent,) = self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN,
                                             kind="chat.postMessage")
        self.assertIsNone(parent["thread_ts"])
        (row,) = h.wait_until(lambda: self.rows() or None, 20 * h.SLOWDOWN, what="the record")
        self.assertNotEqual(row["cause"], "gpu_device_unhealthy")
        first_cause = row["cause"]

        # the kubelet reports the device Unhealthy 20 s after the restart
        h.wait_until(lambda: time.monotonic() - t0 >= 20, 30, what="20 s after the restart")
        self.kube.set_container_status("ml", "trainer-0", "train", device_status("Unhealthy"))

        posts = self.slack.wait_messages(2, timeout=30 * h.SLOWDOWN, kind="chat.postMessage")
        reply = posts[1]
        self.assertEqual(reply["thread_ts"], parent["ts"])
        text = json.dumps(reply)
        self.assertIn("Update to the alert of ml/trainer-0 container train", text)
        self.assertIn("GPU-7d3a9f1e", text)
        self.assertIn("fallen off the bus", text)

        # the stored report is amended: cause, summary and the evidence of what it was
        (row,) = h.wait_until(
            lambda: [r for r in self.rows() if r["cause"] == "gpu_device_unhealthy"] or None,
            20 * h.SLOWDOWN, what="the amended record")
        self.assertIn("GPU-7d3a9f1e", row["summary"])
        out = self.show(row["id"])
        self.assertIn("gpu_device_unhealthy", out)
        self.assertIn("amended", out)
        self.assertIn("first diagnosed as %s" % first_cause, out)
        self.krc.wait_log("amended: gpu_device_unhealthy")

        # once per restart: a later update that still says Unhealthy sends nothing more
        self.kube.set_container_status("ml", "trainer-0", "train", {"ready": False})
        time.sleep(3)
        self.assertEqual(len(self.slack.messages(kind="chat.postMessage")), 2)
        self.assertEqual(len(self.rows()), 1)

    def test_unhealthy_after_window_changes_nothing(self):
        self.crash()
        # a window of 3 s (the default is 60): the device turns Unhealthy after it
        self.start({"SLACK_WEBHOOK_URL": self.slack.webhook_url("alerts"),
                    "KRC_DEVICE_HEALTH_RECHECK_SECONDS": "3"})
        t0 = time.monotonic()
        self.kube.restart("ml", "trainer-0", "train", exit_code=1, reason="Error", waiting=True,
                          logs=CUDA_LOG)
        self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN)
        (row,) = h.wait_until(lambda: self.rows() or None, 20 * h.SLOWDOWN, what="the record")
        h.wait_until(lambda: time.monotonic() - t0 >= 5, 30, what="past the window")
        self.kube.set_container_status("ml", "trainer-0", "train", device_status("Unhealthy"))
        time.sleep(4)
        self.assertEqual(len(self.slack.messages()), 1)
        (after,) = self.rows()
        self.assertEqual(after["cause"], row["cause"])
        self.assertNotEqual(after["cause"], "gpu_device_unhealthy")
        self.assertFalse([ln for ln in self.krc.lines if "amend" in json.dumps(ln)])

    def test_webhook_amendment_is_its_own_message(self):
        self.crash()
        self.start({"SLACK_WEBHOOK_URL": self.slack.webhook_url("alerts"),
                    "KRC_DEVICE_HEALTH_RECHECK_SECONDS": "30"})
        self.kube.restart("ml", "trainer-0", "train", exit_code=1, reason="Error", waiting=True,
                          logs=CUDA_LOG)
        self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN)
        h.wait_until(lambda: self.rows() or None, 20 * h.SLOWDOWN, what="the record")
        self.kube.set_container_status("ml", "trainer-0", "train", device_status("Unhealthy"))
        msgs = self.slack.wait_messages(2, timeout=30 * h.SLOWDOWN)
        self.assertIn("Update to the alert of ml/trainer-0 container train", json.dumps(msgs[1]))
        self.assertNotIn("Update to the alert", json.dumps(msgs[0]))
        time.sleep(2)
        self.assertEqual(len(self.slack.messages()), 2)
        # the Kubernetes Event: a second one, named after the first, with the amended cause
        evs = h.wait_until(lambda: (lambda e: e if len(e) == 2 else None)(self.events()),
                           20 * h.SLOWDOWN, what="two Events")
        names = sorted(e["metadata"]["name"] for e in evs)
        self.assertEqual(names[1], names[0] + "-amended", names)
        amended = [e for e in evs if e["metadata"]["name"].endswith("-amended")][0]
        self.assertTrue(amended["note"].startswith("gpu_device_unhealthy"), amended["note"])
        self.assertIn("Update to the alert of ml/trainer-0", amended["note"])

    def test_unhealthy_at_once_with_two_workers(self):
        """The device turns Unhealthy right after the restart, while the first diagnosis may
        still be under way on the other worker: still one alert, one amendment, one record."""
        self.crash()
        self.start({"SLACK_WEBHOOK_URL": self.slack.webhook_url("alerts"), "KRC_WORKERS": "2",
                    "KRC_KUBERNETES_EVENTS": "false"})
        self.kube.restart("ml", "trainer-0", "train", exit_code=1, reason="Error", waiting=True,
                          logs=CUDA_LOG)
        self.kube.set_container_status("ml", "trainer-0", "train", device_status("Unhealthy"))
        msgs = self.slack.wait_messages(2, timeout=30 * h.SLOWDOWN)
        self.assertNotIn("Update to the alert", json.dumps(msgs[0]))
        self.assertIn("Update to the alert of ml/trainer-0 container train", json.dumps(msgs[1]))
        h.wait_until(lambda: [r for r in self.rows() if r["cause"] == "gpu_device_unhealthy"]
                     or None, 20 * h.SLOWDOWN, what="the amended record")
        time.sleep(2)
        self.assertEqual(len(self.slack.messages()), 2)
        self.assertEqual(len(self.rows()), 1)

if __name__ == "__main__":
    h.main()
