"""DRA ResourceClaims on the real binary and the fake API server (issue 26): a pod whose
status.resourceClaimStatuses names a ResourceClaim (resource.k8s.io/v1) and whose container's
allocatedResourcesStatus reports the claim's device ("claim:gpu/gpu") Unhealthy restarts; krc
reads the claim, and

- the alert and the stored report (`krc history show`) name the device with its driver, pool
  and device (status.allocation.devices.results) and the condition its driver reports of it
  (status.devices);
- a claim the API no longer has is a note naming it, and the diagnosis is made all the same;
- a pod without claims makes no ResourceClaim request.

The claim is tests/fixtures/k8s-1.35/resourceclaim-gpu.json (the pod fixture
pod-restart-fields.json's claim)."""

import json
import os
import subprocess
import tempfile
import unittest

import jsonschema

import krc_harness as h

CLAIM = os.path.join(h.ROOT, "tests", "fixtures", "k8s-1.35", "resourceclaim-gpu.json")
SCHEMA = os.path.join(h.ROOT, "docs", "report-schema.json")
CLAIM_NAME = "trainer-0-gpu-x7k2p"
CLAIM_PATH = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/" + CLAIM_NAME
DEVICE_WORDS = ("ResourceClaim trainer-0-gpu-x7k2p: driver gpu.example.com, pool gpu-node-7, "
                "device gpu-3")


def load_claim():
    with open(CLAIM, encoding="utf-8") as f:
        return json.load(f)


class DraClaimTest(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.krc = None
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.db = os.path.join(self.tmp.name, "krc.db")

    def tearDown(self):
        if self.krc is not None:
            self.krc.kill()

    def start(self):
        self.krc = h.Krc(self.kube.kubeconfig, ["--watch-idle-timeout", "30s",
                                                "--mute-seconds", "0"],
                         {"SLACK_WEBHOOK_URL": self.slack.webhook_url("alerts"),
                          "KRC_DB": self.db})
        self.krc.wait_synced()

    def gpu_pod(self, with_claim=True):
        """trainer-0 in ml: a container holding the DRA claim gpu (request gpu), the claim's
        ResourceClaim named in status.resourceClaimStatuses, served when with_claim."""
        self.kube.add_node("gpu-node-7")
        self.kube.create_pod("ml", "trainer-0", containers=[{
            "name": "trainer", "resources": {"claims": [{"name": "gpu", "request": "gpu"}]}}],
            node="gpu-node-7")
        self.kube.update_pod("ml", "trainer-0", {
            "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]},
            "status": {"resourceClaimStatuses": [{"name": "gpu",
                                                  "resourceClaimName": CLAIM_NAME}]}})
        if with_claim:
            self.kube.add_resource_claim(load_claim())

    def unhealthy_restart(self):
        """The kubelet reports the claim's device Unhealthy, then the container exits 1."""
        self.kube.set_container_status("ml", "trainer-0", "trainer", {
            "allocatedResourcesStatus": [{"name": "claim:gpu/gpu", "resources": [{
                "resourceID": "gpu.example.com/gpu-node-7/gpu-3", "health": "Unhealthy",
                "message": "XID 79: GPU has fallen off the bus"}]}]})
        self.kube.restart("ml", "trainer-0", "trainer", exit_code=1, reason="Error",
                          logs="Traceback (most recent call last):\nRuntimeError: CUDA error\n")

    def stored_report(self):
        rows = h.wait_until(lambda: [r for r in h.history(self.db) if r["pod"] == "trainer-0"],
                            30 * h.SLOWDOWN, what="the stored restart")
        p = subprocess.run([h.krc_binary(), "history", "show", str(rows[0]["id"]), "--db",
                            self.db, "--format", "json"], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)["report"]

    def claim_gets(self):
        return [r for r in self.kube.requests() if r["path"] == CLAIM_PATH]

    def test_claim_device_named(self):
        self.gpu_pod()
        self.start()
        self.unhealthy_restart()
        (d,) = self.krc.wait_diagnosed(1, pod="trainer-0")
        self.assertEqual(d["cause"], "gpu_device_unhealthy", d)
        msg = json.dumps(self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN)[0],
                         ensure_ascii=False)
        self.assertIn(DEVICE_WORDS, msg)
        self.assertNotIn("Collection notes", msg)
        self.assertEqual([r["status"] for r in self.claim_gets()], [200])

        report = self.stored_report()
        with open(SCHEMA, encoding="utf-8") as f:  # the documented shape, devices included
            schema = json.load(f)
        restart = [o for o in schema["oneOf"] if o["properties"]["kind"].get("const") ==
                   "restart"][0]["properties"]["report"]
        jsonschema.Draft202012Validator(dict(restart, **{"$defs": schema["$defs"]})).validate(
            report)
        diag = report["diagnosis"]
        self.assertEqual(diag["cause"], "gpu_device_unhealthy")
        self.assertIn(DEVICE_WORDS, diag["summary"])
        self.assertTrue([e for e in diag["evidence"] if
                         "ResourceClaim trainer-0-gpu-x7k2p, device gpu-3: condition "
                         "Ready=False, reason DeviceLost" in e], diag["evidence"])
        (cs,) = report["pod"]["resource_claim_statuses"]
        self.assertEqual(cs["name"], "gpu")
        self.assertEqual(cs["resource_claim_name"], CLAIM_NAME)
        self.assertIs(cs["allocated"], True)
        self.assertEqual(cs["devices"], [{
            "request": "gpu", "driver": "gpu.example.com", "pool": "gpu-node-7",
            "device": "gpu-3", "conditions": [{
                "type": "Ready", "status": "False", "reason": "DeviceLost",
                "message": "XID 79: GPU has fallen off the bus"}]}])

    def test_claim_gone_is_a_note(self):
        self.gpu_pod(with_claim=False)
        self.start()
        self.unhealthy_restart()
        (d,) = self.krc.wait_diagnosed(1, pod="trainer-0")
        self.assertEqual(d["cause"], "gpu_device_unhealthy", d)
        msg = json.dumps(self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN)[0],
                         ensure_ascii=False)
        self.assertIn("ResourceClaim %s no longer exists" % CLAIM_NAME, msg)
        self.assertNotIn("driver gpu.example.com", msg)
        self.assertEqual([r["status"] for r in self.claim_gets()], [404])
        report = self.stored_report()
        self.assertIn("ResourceClaim %s no longer exists" % CLAIM_NAME, report["notes"])
        (cs,) = report["pod"]["resource_claim_statuses"]
        self.assertNotIn("devices", cs)
        self.assertIn("(DRA claim gpu, request gpu) Unhealthy", report["diagnosis"]["summary"])

    def test_no_claims_no_request(self):
        self.kube.create_pod("shop", "web-1")
        self.start()
        self.kube.restart("shop", "web-1", "app", exit_code=1, reason="Error", logs="boom\n")
        self.krc.wait_diagnosed(1, pod="web-1")
        self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN)
        self.assertEqual([r for r in self.kube.requests() if "resourceclaims" in r["path"]], [])


if __name__ == "__main__":
    h.main()
