"""Issue 26: the restarts a Kubernetes 1.35 pod explains by other containers, the kubelet or
its sandbox give the same verdict in `krc explain` (the pod as JSON, as YAML, and as
`kubectl describe` text where describe shows the proof) and in the daemon (the fake API
server serving the same pod): restarted_with_others (a 4-container restart-all, the trigger
keeping its own cause), resize_restart, a sidecar stopped during the pod's deletion
(terminated, intentional) and sandbox_changed (not intentional). Fixtures:
tests/fixtures/k8s-1.35 (README.md says how they were composed).

    python3 test_explain_k8s135.py --krc /path/to/krc
"""
import copy
import json
import os
import subprocess
import tempfile
import time
import unittest

import krc_harness as h
from admin import FakeKube

K135 = os.path.join(h.ROOT, "tests", "fixtures", "k8s-1.35")

# (pod fixture, events fixture, container, cause, intentional)
CASES = (
    ("restart-all.json", None, "tokenizer", "restarted_with_others", True),
    ("restart-all.json", None, "metrics", "restarted_with_others", True),
    ("restart-all.json", None, "cache", "restarted_with_others", True),
    ("restart-all.json", None, "server", "app_error", False),
    ("resize-restart.json", None, "redis", "resize_restart", True),
    ("sidecar-deletion.json", None, "log-shipper", "terminated", True),
    ("sandbox-changed.json", "sandbox-changed-events.json", "api", "sandbox_changed", False),
    ("sandbox-changed.json", "sandbox-changed-events.json", "envoy", "sandbox_changed", False),
)


def load(name):
    with open(os.path.join(K135, name), encoding="utf-8") as f:
        return json.load(f)


def yaml_text(v, indent=0):
    """A block-style YAML rendering of a JSON value (what kubectl -o yaml prints; strings
    quoted as JSON strings, which YAML reads the same)."""
    pad = " " * indent
    if isinstance(v, dict):
        if not v:
            return pad + "{}\n"
        out = ""
        for k, x in v.items():
            if isinstance(x, (dict, list)) and x:
                out += "%s%s:\n%s" % (pad, k, yaml_text(x, indent + 2))
            else:
                out += "%s%s: %s" % (pad, k, yaml_text(x, 0).lstrip())
        return out
    if isinstance(v, list):
        if not v:
            return pad + "[]\n"
        out = ""
        for x in v:
            item = yaml_text(x, indent + 2)
            out += "%s- %s" % (pad, item[indent + 2:])
        return out
    return pad + json.dumps(v) + "\n"


def explain(args):
    p = subprocess.run([h.krc_binary(), "explain", "--format", "json"] + args,
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError("krc explain %s: exit %d: %s" % (args, p.returncode, p.stderr))
    return json.loads(p.stdout)


class ExplainTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, answer, cause, intentional, what):
        self.assertEqual(answer["cause"], cause, "%s: %s" % (what, answer["summary"]))
        if intentional:
            self.assertIs(answer.get("intentional"), True, what)
        else:
            self.assertNotIn("intentional", answer, what)

    def test_json_and_yaml(self):
        for pod, events, container, cause, intentional in CASES:
            args = ["--container", container]
            if events is not None:
                args += ["--events", os.path.join(K135, events)]
            answer = explain(["--pod", os.path.join(K135, pod)] + args)
            self.check(answer, cause, intentional, "%s %s (JSON)" % (pod, container))
            path = os.path.join(self.tmp.name, pod.replace(".json", ".yaml"))
            with open(path, "w", encoding="utf-8") as f:
                f.write(yaml_text(load(pod)))
            yanswer = explain(["--pod", path] + args)
            self.check(yanswer, cause, intentional, "%s %s (YAML)" % (pod, container))
            for key in ("summary", "confidence", "evidence", "next_step"):
                self.assertEqual(yanswer[key], answer[key], "%s %s: %s" % (pod, container, key))

    def test_restart_all_names_the_trigger(self):
        path = os.path.join(K135, "restart-all.json")
        for container in ("tokenizer", "metrics", "cache"):
            a = explain(["--pod", path, "--container", container])
            self.assertIn("container server exited 88", a["summary"])
            self.assertEqual(a["confidence"], "high")
        trigger = explain(["--pod", path, "--container", "server"])
        self.assertTrue(any("this exit restarted all 4 containers of the pod" in e
                            for e in trigger["evidence"]), trigger["evidence"])

    def test_describe_sandbox(self):
        """kubectl describe shows the SandboxChanged event (without a time) and the
        containers' last states, not the condition's transition time: the same cause, on
        the event alone (medium)."""
        for container in ("api", "envoy"):
            a = explain([os.path.join(K135, "sandbox-changed-describe.txt"),
                         "--container", container])
            self.check(a, "sandbox_changed", False, "describe " + container)
            self.assertEqual(a["confidence"], "medium")
            self.assertIn("the kubelet reported SandboxChanged", a["summary"])


def before(pod):
    """The pod as it was before its restarts: the fixture without its status (the fake
    API server makes every container running, restart count 0) and without a deletion."""
    p = copy.deepcopy(pod)
    p.pop("status", None)
    for k in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion"):
        p["metadata"].pop(k, None)
    return p


class DaemonParityTest(unittest.TestCase):
    """The daemon sees each fixture's pod change from running to its restarted status (one
    MODIFIED) and diagnoses every restarted container; krc explain on the pod the fake API
    server then holds (with the same events) gives the same cause, intentional flag and,
    where no events are involved, summary."""

    def setUp(self):
        self.kube = FakeKube()
        self.kube.start()
        self.krc = None
        self.tmp = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.tmp.name, "krc.db")

    def tearDown(self):
        if self.krc is not None:
            code = self.krc.stop(timeout=60)
            self.assertEqual(code, 0, "krc did not shut down cleanly:\n" + self.krc.tail(20))
        self.kube.stop()
        self.tmp.cleanup()

    def stored(self, pod, container):
        deadline = time.monotonic() + 30 * h.SLOWDOWN
        while True:
            p = subprocess.run([h.krc_binary(), "history", "--db", self.db, "--format", "json"],
                               capture_output=True, text=True, timeout=30)
            if p.returncode == 0:
                rows = [r for r in json.loads(p.stdout)
                        if r["pod"] == pod and r["container"] == container]
                if rows:
                    break
            self.assertLess(time.monotonic(), deadline, "no stored restart of %s/%s"
                            % (pod, container))
            time.sleep(0.2)
        p = subprocess.run([h.krc_binary(), "history", "show", str(rows[0]["id"]), "--db",
                            self.db, "--format", "json"], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)["report"]["diagnosis"]

    def test_same_verdict_live_and_explain(self):
        pods = {}
        for name, events, _, _, _ in CASES:
            pods.setdefault(name, events)
        for name in pods:
            self.kube.create_pods([before(load(name))])
        self.krc = h.Krc(self.kube.kubeconfig, ["--watch-idle-timeout", "3s",
                                                "--mute-seconds", "0"],
                         env={"KRC_DB": self.db})
        self.krc.wait_synced()
        for name, events in pods.items():
            pod = load(name)
            if events is not None:
                for ev in load(events)["items"]:
                    self.kube.add_event(copy.deepcopy(ev))
            patch = {"status": pod["status"]}
            meta = {k: pod["metadata"][k] for k in ("deletionTimestamp",
                                                    "deletionGracePeriodSeconds")
                    if k in pod["metadata"]}
            if meta:
                patch["metadata"] = meta
            self.kube.update_pod(pod["metadata"]["namespace"], pod["metadata"]["name"], patch)
        live = {(d["pod"], d["container"]): d for d in self.krc.wait_diagnosed(len(CASES))}
        for name, events, container, cause, intentional in CASES:
            pod = load(name)
            ns, pname = pod["metadata"]["namespace"], pod["metadata"]["name"]
            self.assertIn((pname, container), live, "not diagnosed live: %s/%s" % (pname,
                                                                                container))
            got = live[(pname, container)]
            path = os.path.join(self.tmp.name, "%s-%s.json" % (pname, container))
            with open(path, "w", encoding="utf-8") as f:
                json.dump(self.kube.get_pod(ns, pname), f)
            args = ["--pod", path, "--container", container]
            if events is not None:
                args += ["--events", os.path.join(K135, events)]
            answer = explain(args)
            what = "%s/%s" % (pname, container)
            self.assertEqual(answer["cause"], cause, "%s: %s" % (what, answer["summary"]))
            self.assertEqual(got["cause"], answer["cause"], "%s: %s" % (what, got["summary"]))
            if events is None:
                self.assertEqual(got["summary"], answer["summary"], what)
            stored = self.stored(pname, container)
            self.assertEqual(stored["cause"], cause, what)
            self.assertEqual(stored.get("intentional", False), intentional, what)
            self.assertEqual(answer.get("intentional", False), intentional, what)


if __name__ == "__main__":
    h.main()
