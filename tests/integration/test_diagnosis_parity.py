"""The live path (the daemon against the fake Kubernetes API server) and
`krc explain` on the same pod, events and previous log give the same
diagnosis: both build the report with the same parser and run the same
rules (issue 11).

    python3 test_diagnosis_parity.py --krc /path/to/krc
"""
import json
import os
import subprocess
import tempfile
import time
import unittest
from datetime import datetime, timedelta, timezone

import krc_harness as h
from admin import FakeKube

NODE_OOM = ("<--- Last few GCs --->\n"
            "[1:0x5d5e3c0]   512 ms: Mark-Compact 2043.1 (2083.4) -> 2041.9 (2084.2) MB\n"
            "<--- JS stacktrace --->\n"
            "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n")


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


class ParityTest(unittest.TestCase):
    def setUp(self):
        self.kube = FakeKube()
        self.kube.start()
        self.krc = None
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        if self.krc is not None:
            code = self.krc.stop(timeout=60)
            self.assertEqual(code, 0, "krc did not shut down cleanly:\n" + self.krc.tail(20))
        self.kube.stop()
        self.tmp.cleanup()

    def explain(self, ns, pod, logs=None):
        """krc explain on the pod as the API server holds it now, with the same (empty)
        events the daemon read and the same previous log."""
        files = {"pod": self.kube.get_pod(ns, pod),
                 "events": {"apiVersion": "v1", "kind": "List", "items": []}}
        args = [h.KRC, "explain", "--format", "json"]
        for name, doc in files.items():
            path = os.path.join(self.tmp.name, "%s-%s.json" % (pod, name))
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            args += ["--" + name, path]
        if logs is not None:
            path = os.path.join(self.tmp.name, pod + "-logs.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write(logs)
            args += ["--logs", path]
        p = subprocess.run(args, capture_output=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        return json.loads(p.stdout)

    def test_same_diagnosis_live_and_explain(self):
        now = datetime.now(timezone.utc)
        # a liveness probe in the spec and no events: a hypothesis, the exit code names the cause
        self.kube.create_pod("shop", "probe-0", containers=(
            {"name": "app", "livenessProbe": {"exec": {"command": ["/bin/check"]},
                                              "periodSeconds": 10, "failureThreshold": 3}},))
        # a Node.js heap exhaustion ending in SIGSEGV: the runtime's heap, not a segfault
        self.kube.create_pod("shop", "heap-0")
        self.db = os.path.join(self.tmp.name, "krc.db")
        self.krc = h.Krc(self.kube.kubeconfig, ["--watch-idle-timeout", "3s"],
                         env={"KRC_DB": self.db})
        self.krc.wait_synced()
        self.kube.restart("shop", "probe-0", "app", exit_code=137, reason="Error",
                          started_at=iso(now - timedelta(minutes=5)), finished_at=iso(now),
                          waiting=True, logs="")
        self.kube.restart("shop", "heap-0", "app", exit_code=139, reason="Error",
                          started_at=iso(now - timedelta(seconds=5)), finished_at=iso(now),
                          waiting=True, logs=NODE_OOM)
        live = {d["pod"]: d for d in self.krc.wait_diagnosed(2)}

        probe = self.explain("shop", "probe-0")
        self.assertEqual(probe["cause"], "killed")
        self.assertTrue(any("hypothesis, not a finding: a liveness probe is configured" in e
                            for e in probe["evidence"]), probe["evidence"])
        self.assertEqual(live["probe-0"]["cause"], probe["cause"])
        self.assertEqual(live["probe-0"]["summary"], probe["summary"])

        heap = self.explain("shop", "heap-0", NODE_OOM)
        self.assertEqual(heap["cause"], "app_out_of_memory")
        self.assertIn("JavaScript heap out of memory", heap["summary"])
        self.assertEqual(live["heap-0"]["cause"], heap["cause"])
        self.assertEqual(live["heap-0"]["summary"], heap["summary"])
        # what the daemon stored (krc history show: the report's diagnosis) carries the same
        # confidence, next step and commands as krc explain's answer
        for pod, answer in (("probe-0", probe), ("heap-0", heap)):
            stored = self.stored_diagnosis(pod)
            for key in ("cause", "summary", "confidence", "next_step", "commands"):
                self.assertEqual(stored[key], answer[key], "%s: %s" % (pod, key))
            self.assertIn(answer["confidence"], ("low", "medium", "high"))
            self.assertTrue(answer["next_step"])
            self.assertTrue(answer["commands"])

    def test_issue26_patterns_live_and_explain(self):
        """The issue 26 patterns give the same verdict live and in krc explain: an NCCL
        failure (gpu_error) in a pod holding 8 GPUs plus HAMi's gpucores/gpumem quantities
        (8 devices, not 16108), exit 0 after "SIGTERM received" (terminated), and a Python
        module missing at start (app_error, not dependency_unreachable)."""
        now = datetime.now(timezone.utc)
        started, finished = iso(now - timedelta(seconds=5)), iso(now)
        nccl_log = ("rank 3: init\nRuntimeError: NCCL error: unhandled system error (run with "
                    "NCCL_DEBUG=INFO for details)\n")
        stop_log = "listening on :8080\nSIGTERM received, shutting down\nbye\n"
        module_log = ("Traceback (most recent call last):\n  File \"/app/serve.py\", line 3, "
                      "in <module>\n    from transformers import AutoModel\n"
                      "ModuleNotFoundError: No module named 'transformers'\n")
        self.kube.create_pod("ml", "nccl-0", containers=(
            {"name": "app", "resources": {"limits": {
                "memory": "64Gi", "nvidia.com/gpu": "8", "nvidia.com/gpucores": "100",
                "nvidia.com/gpumem": "16000"}}},))
        self.kube.create_pod("ml", "stop-0")
        self.kube.create_pod("ml", "pymod-0")
        self.db = os.path.join(self.tmp.name, "krc.db")
        self.krc = h.Krc(self.kube.kubeconfig, ["--watch-idle-timeout", "3s"],
                         env={"KRC_DB": self.db})
        self.krc.wait_synced()
        for pod, code, reason, logs in (("nccl-0", 1, "Error", nccl_log),
                                        ("stop-0", 0, "Completed", stop_log),
                                        ("pymod-0", 1, "Error", module_log)):
            self.kube.restart("ml", pod, "app", exit_code=code, reason=reason,
                              started_at=started, finished_at=finished, waiting=True,
                              logs=logs)
        live = {d["pod"]: d for d in self.krc.wait_diagnosed(3)}
        want = {"nccl-0": ("gpu_error", nccl_log), "stop-0": ("terminated", stop_log),
                "pymod-0": ("app_error", module_log)}
        for pod, (cause, logs) in want.items():
            answer = self.explain("ml", pod, logs)
            self.assertEqual(answer["cause"], cause, pod)
            self.assertEqual(live[pod]["cause"], answer["cause"], pod)
            self.assertEqual(live[pod]["summary"], answer["summary"], pod)
            stored = self.stored_diagnosis(pod)
            for key in ("cause", "summary", "confidence", "next_step", "gpus"):
                self.assertEqual(stored[key], answer[key], "%s: %s" % (pod, key))
        self.assertEqual(self.explain("ml", "nccl-0", nccl_log)["gpus"], 8)
        self.assertIn("'transformers'", self.explain("ml", "pymod-0", module_log)["next_step"])

    def test_device_unhealthy_live_and_explain(self):
        """Issue 26: a container that exits 1 while the kubelet reports its GPU Unhealthy
        (allocatedResourcesStatus, KEP-4680) is gpu_device_unhealthy live, stored and in krc
        explain, above the CUDA error in its log; an Unknown device is only evidence."""
        now = datetime.now(timezone.utc)
        started, finished = iso(now - timedelta(seconds=5)), iso(now)
        log = "step 812\nRuntimeError: CUDA error: uncorrectable ECC error encountered\n"
        gpu = {"name": "app", "resources": {"limits": {"memory": "16Gi", "nvidia.com/gpu": "1"}}}
        for pod, health in (("gpu-bad-0", "Unhealthy"), ("gpu-unknown-0", "Unknown")):
            self.kube.create_pod("ml", pod, containers=(gpu,))
            self.kube.set_container_status("ml", pod, "app", {"allocatedResourcesStatus": [
                {"name": "nvidia.com/gpu", "resources": [
                    {"resourceID": "GPU-0b7c2f3d", "health": health,
                     "message": "ECC error count exceeded threshold"}]}]})
        self.db = os.path.join(self.tmp.name, "krc.db")
        self.krc = h.Krc(self.kube.kubeconfig, ["--watch-idle-timeout", "3s"],
                         env={"KRC_DB": self.db})
        self.krc.wait_synced()
        for pod in ("gpu-bad-0", "gpu-unknown-0"):
            self.kube.restart("ml", pod, "app", exit_code=1, reason="Error", started_at=started,
                              finished_at=finished, waiting=True, logs=log)
        live = {d["pod"]: d for d in self.krc.wait_diagnosed(2)}
        for pod, cause in (("gpu-bad-0", "gpu_device_unhealthy"), ("gpu-unknown-0", "gpu_error")):
            answer = self.explain("ml", pod, log)
            self.assertEqual(answer["cause"], cause, pod)
            self.assertEqual(live[pod]["cause"], answer["cause"], pod)
            self.assertEqual(live[pod]["summary"], answer["summary"], pod)
            stored = self.stored_diagnosis(pod)
            for key in ("cause", "summary", "confidence", "next_step", "evidence"):
                self.assertEqual(stored[key], answer[key], "%s: %s" % (pod, key))
            self.assertTrue(any("GPU-0b7c2f3d" in e and "ECC error count" in e
                                for e in answer["evidence"]), answer["evidence"])
        bad = self.explain("ml", "gpu-bad-0", log)
        self.assertEqual(bad["confidence"], "high")
        self.assertIn("GPU-0b7c2f3d (nvidia.com/gpu) Unhealthy", bad["summary"])
        self.assertIn("cordon and drain the pod's node", bad["next_step"])

    def stored_diagnosis(self, pod):
        deadline = time.monotonic() + 30
        while True:
            p = subprocess.run([h.KRC, "history", "--db", self.db, "--format", "json"],
                               capture_output=True, text=True, timeout=30)
            if p.returncode == 0:
                rows = [r for r in json.loads(p.stdout) if r["pod"] == pod]
                if rows:
                    break
            self.assertLess(time.monotonic(), deadline, "no stored restart of " + pod)
            time.sleep(0.2)
        p = subprocess.run([h.KRC, "history", "show", str(rows[0]["id"]), "--db", self.db,
                            "--format", "json"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)["report"]["diagnosis"]

if __name__ == "__main__":
    h.main()
