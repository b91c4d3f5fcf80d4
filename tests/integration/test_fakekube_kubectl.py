#!/usr/bin/env python3
"""Proves that tests/fakekube speaks the real Kubernetes protocol.

Two parts:
  * KubectlTest: real kubectl (the gcloud dispatcher or a plain kubectl binary, e.g. Debian's
    kubernetes-client) against the fake: paginated get, watch, logs --previous, events with
    field selectors, bad token.
  * ProtocolTest: raw HTTP/1.1 over TLS checks of the details kubectl does not exercise but the
    C daemon depends on (watch framing and chunking, bookmarks, in-band 410, streaming list,
    ListOptions validation, continue-token expiry, 429/403 bodies, leases, logs, faults).

Run by ctest as `python3 test_fakekube_kubectl.py --krc /path/to/krc` (--krc is ignored).
Set KUBECTL=/path/to/kubectl to pick a specific kubectl.
"""

import json
import os
import queue
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fakekube"))

from admin import FakeKube  # noqa: E402


def strip_krc_arg(argv):
    out = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--krc":
            skip = True
            continue
        if a.startswith("--krc="):
            continue
        out.append(a)
    return out


def find_kubectl():
    env = os.environ.get("KUBECTL")
    if env:
        return env if os.access(env, os.X_OK) else None
    return shutil.which("kubectl")


KUBECTL = find_kubectl()


# --------------------------------------------------------------------------------------------
# raw HTTP helpers


class Raw:
    """Minimal HTTP/1.1 client over TLS that exposes chunk boundaries and abrupt EOFs."""

    def __init__(self, fk, token=None):
        self.fk = fk
        self.token = token if token is not None else fk.current_token()
        self.ctx = ssl.create_default_context(cafile=fk.ca)

    def connect(self, timeout=10):
        s = socket.create_connection(("127.0.0.1", self.fk.api_port), timeout=timeout)
        return self.ctx.wrap_socket(s, server_hostname="127.0.0.1")

    def send(self, sock, method, path, body=None, headers=None):
        h = {"Host": "127.0.0.1:%d" % self.fk.api_port, "Accept": "application/json",
             "User-Agent": "fakekube-protocol-test"}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        data = b""
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
            h["Content-Length"] = str(len(data))
        h.update(headers or {})
        req = "%s %s HTTP/1.1\r\n%s\r\n" % (method, path, "".join(
            "%s: %s\r\n" % kv for kv in h.items()))
        sock.sendall(req.encode() + data)

    @staticmethod
    def read_head(f):
        status_line = f.readline()
        if not status_line:
            raise ConnectionError("EOF before status line")
        code = int(status_line.split()[1])
        headers = {}
        while True:
            line = f.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            k, v = line.decode().split(":", 1)
            headers[k.strip().lower()] = v.strip()
        return code, headers

    def request(self, method, path, body=None, headers=None):
        """Returns (status, headers, body bytes); reads Content-Length or chunked bodies."""
        sock = self.connect()
        try:
            self.send(sock, method, path, body, headers)
            f = sock.makefile("rb")
            code, hdrs = self.read_head(f)
            if hdrs.get("transfer-encoding") == "chunked":
                data = b"".join(c for c in read_chunks(f) if c is not None)
            else:
                n = int(hdrs.get("content-length", "0"))
                data = f.read(n) if n else b""
            return code, hdrs, data
        finally:
            sock.close()

    def json(self, method, path, body=None, headers=None):
        code, hdrs, data = self.request(method, path, body, headers)
        return code, hdrs, json.loads(data) if data else None


def read_chunks(f):
    """Yields chunk payloads; yields None after the terminating chunk; raises EOFError on an
    abrupt end."""
    while True:
        line = f.readline()
        if not line:
            raise EOFError("connection closed without terminating chunk")
        size = int(line.split(b";")[0].strip(), 16)
        if size == 0:
            f.readline()
            yield None
            return
        data = f.read(size)
        if len(data) != size:
            raise EOFError("short chunk")
        if f.read(2) != b"\r\n":
            raise AssertionError("chunk not followed by CRLF")
        yield data


class Watch:
    """An open watch request; a reader thread collects chunks and events."""

    def __init__(self, raw, path, headers=None):
        self.sock = raw.connect(timeout=60)
        raw.send(self.sock, "GET", path, headers=headers)
        self.f = self.sock.makefile("rb")
        self.t0 = time.monotonic()
        self.status, self.headers = Raw.read_head(self.f)
        self.head_time = time.monotonic() - self.t0
        self.chunks = []
        self.events = []
        self.lines = []
        self.end = None  # "clean" | "abrupt"
        self.end_time = None
        self.cv = threading.Condition()
        self._buf = b""
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            for c in read_chunks(self.f):
                if c is None:
                    self._finish("clean")
                    return
                with self.cv:
                    self.chunks.append(c)
                    self._buf += c
                    while b"\n" in self._buf:
                        line, self._buf = self._buf.split(b"\n", 1)
                        self.lines.append(line)
                        try:
                            self.events.append(json.loads(line))
                        except ValueError:
                            self.events.append({"type": "<malformed>", "raw": line})
                    self.cv.notify_all()
        except (EOFError, OSError, ValueError):
            self._finish("abrupt")

    def _finish(self, how):
        with self.cv:
            self.end = how
            self.end_time = time.monotonic() - self.t0
            self.cv.notify_all()

    def wait(self, pred, timeout=10, what="watch condition"):
        deadline = time.monotonic() + timeout
        with self.cv:
            while not pred(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("timed out waiting for %s; events=%s end=%s" % (
                        what, [e.get("type") for e in self.events], self.end))
                self.cv.wait(left)

    def wait_end(self, timeout=10):
        self.wait(lambda w: w.end is not None, timeout, "end of watch")
        return self.end

    def types(self):
        return [e.get("type") for e in self.events]

    def close(self):
        try:
            socket.socket.shutdown(self.sock, socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.f.close()
            self.sock.close()
        except OSError:
            pass


def q(**kw):
    return "?" + urllib.parse.urlencode(kw) if kw else ""


# --------------------------------------------------------------------------------------------
# kubectl


class KubectlTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if KUBECTL is None:
            raise AssertionError("no kubectl found (PATH or $KUBECTL): scripts/setup-test "
                                 "installs Debian's kubernetes-client")
        cls.fk = FakeKube().start()
        cls.home = tempfile.mkdtemp(prefix="fakekube-kubectl-home-")

    @classmethod
    def tearDownClass(cls):
        log = cls.fk.log_tail(n=1 << 30)
        cls.fk.stop()
        shutil.rmtree(cls.home, ignore_errors=True)
        assert "Traceback" not in log and "internal error" not in log, log[-3000:]

    def env(self, kubeconfig=None):
        env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
        env["KUBECONFIG"] = kubeconfig or self.fk.kubeconfig
        env["HOME"] = self.home  # private discovery cache
        return env

    def kubectl(self, *args, kubeconfig=None, timeout=60, check=True):
        r = subprocess.run([KUBECTL] + list(args), env=self.env(kubeconfig),
                           capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            self.fail("kubectl %s failed (%d): %s\nserver log:\n%s"
                      % (" ".join(args), r.returncode, r.stderr, self.fk.log_tail()))
        return r

    def test_get_pods_paginated(self):
        ns_names = {}
        specs = []
        for i in range(23):
            ns = "page-ns-%d" % (i % 3)
            name = "pager-%03d" % i
            ns_names.setdefault(ns, []).append(name)
            specs.append({"namespace": ns, "name": name, "containers": ["app", "sidecar"]})
        self.fk.create_pods(specs)
        self.fk.config(max_page_size=5)
        try:
            self.fk.clear_requests()
            r = self.kubectl("get", "pods", "-A", "-o", "json")
            items = json.loads(r.stdout)["items"]
            got = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in items
                   if p["metadata"]["namespace"].startswith("page-ns-")}
            want = {(ns, n) for ns, names in ns_names.items() for n in names}
            self.assertEqual(got, want)
            lists = [x for x in self.fk.requests()
                     if x["path"] == "/api/v1/pods" and x["method"] == "GET"]
            with_continue = [x for x in lists if x["query"].get("continue")]
            self.assertGreaterEqual(len(lists), 5, lists)
            self.assertEqual(len(with_continue), len(lists) - 1, lists)
            self.assertTrue(all(x["query"].get("limit") for x in lists), lists)
            self.assertTrue(all(x["status"] == 200 for x in lists), lists)

            r = self.kubectl("get", "pods", "-n", "page-ns-1", "-o", "name")
            self.assertEqual(sorted(r.stdout.split()),
                             sorted("pod/" + n for n in ns_names["page-ns-1"]))
        finally:
            self.fk.config(max_page_size=0)

    def test_watch_sees_restart(self):
        ns = "watch-ns"
        self.fk.create_pods([{"namespace": ns, "name": "w-%d" % i} for i in range(3)])
        self.fk.clear_requests()
        total = self.fk.state()["pods"]
        p = subprocess.Popen([KUBECTL, "get", "pods", "-A", "-w", "-o", "name"],
                             env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        lines = queue.Queue()

        def reader():
            for line in p.stdout:
                lines.put(line.strip())

        threading.Thread(target=reader, daemon=True).start()
        try:
            got = []
            deadline = time.monotonic() + 30
            while len(got) < total:
                got.append(lines.get(timeout=max(0.1, deadline - time.monotonic())))
            self.assertEqual(len(got), len(set(got)), got)
            self.assertTrue({"pod/w-0", "pod/w-1", "pod/w-2"} <= set(got), got)
            # wait until kubectl's watch request is open, then restart a container
            self.fk.wait_for(lambda: any(x["query"].get("watch") in ("true", "1")
                                         for x in self.fk.requests()), 20, what="watch request")
            self.fk.restart(ns, "w-1", "app", exit_code=137, reason="OOMKilled")
            line = lines.get(timeout=20)
            self.assertEqual(line, "pod/w-1")
            watches = [x for x in self.fk.requests() if x["query"].get("watch")]
            self.assertTrue(watches[0]["query"].get("resourceVersion"), watches)
        finally:
            p.kill()
            p.wait(10)
            p.stdout.close()
            p.stderr.close()

    def test_logs_previous(self):
        ns = "logs-ns"
        self.fk.create_pod(ns, "crashy-0", containers=["app", "sidecar"])
        self.fk.set_logs(ns, "crashy-0", "app", "starting\nrunning\n")
        self.fk.restart(ns, "crashy-0", "app", exit_code=137, reason="OOMKilled",
                        logs="line one\nfatal: out of memory\n")
        r = self.kubectl("logs", "-n", ns, "crashy-0", "-c", "app", "--previous")
        self.assertEqual(r.stdout, "line one\nfatal: out of memory\n")
        r = self.kubectl("logs", "-n", ns, "crashy-0", "-c", "sidecar", "--previous",
                         check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('previous terminated container "sidecar" in pod "crashy-0" not found',
                      r.stderr)
        r = self.kubectl("logs", "-n", ns, "crashy-0", "-c", "app", "--tail=1")
        self.assertEqual(r.stdout, "")  # the new instance has not logged anything yet

    def test_events_field_selector(self):
        ns = "ev-ns"
        pod = self.fk.create_pod(ns, "trainer-0")
        other = self.fk.create_pod(ns, "trainer-1")
        want = [
            self.fk.add_pod_event(pod, "BackOff", "Back-off restarting failed container app",
                                  container="app"),
            self.fk.add_pod_event(pod, "Unhealthy", "Liveness probe failed: timeout",
                                  container="app"),
        ]
        self.fk.add_pod_event(pod, "Pulled", "Container image already present on machine",
                              type_="Normal", container="app")
        self.fk.add_pod_event(other, "BackOff", "Back-off restarting failed container app")
        uid = pod["metadata"]["uid"]
        r = self.kubectl("get", "events", "-n", ns, "--field-selector",
                         "involvedObject.uid=%s,type!=Normal" % uid, "-o", "json")
        items = json.loads(r.stdout)["items"]
        self.assertEqual(sorted(e["metadata"]["name"] for e in items),
                         sorted(e["metadata"]["name"] for e in want))
        for e in items:
            self.assertIn("reportingComponent", e)
            self.assertIn("reportingInstance", e)

    def test_bad_token_unauthorized(self):
        d = tempfile.mkdtemp(prefix="fakekube-badtok-")
        try:
            bad_tok = os.path.join(d, "token")
            with open(bad_tok, "w") as f:
                f.write("not-the-token")
            with open(self.fk.kubeconfig) as f:
                kc = f.read().replace(json.dumps(self.fk.token_path), json.dumps(bad_tok))
            kcp = os.path.join(d, "kubeconfig")
            with open(kcp, "w") as f:
                f.write(kc)
            r = self.kubectl("get", "--raw", "/api/v1/namespaces/default/pods",
                             kubeconfig=kcp, check=False)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("Unauthorized", r.stderr)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def test_workload_controllers(self):
        """kubectl lists and gets every workload resource, and its own rollout logic (which
        follows ownerReferences with controller: true, the pod-template-hash label and the
        deployment.kubernetes.io/revision annotations) understands what the fake wrote."""
        ns = "wl-kubectl"
        self.fk.deployment(ns, "api", [{"name": "api", "image": "api:1.4.2",
                                        "resources": {"limits": {"memory": "1Gi"}}}])
        out = self.fk.rollout(ns, "api", {"api": {"image": "api:1.4.3", "resources": {
            "limits": {"memory": "512Mi"}}}}, new_pods=1)
        new_rs = out["replicaset"]["metadata"]["name"]
        old_rs = out["old_replicaset"]["metadata"]["name"]
        tmpl = {"metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "postgres:16.4"}]}}
        self.fk.create_object("statefulsets", {"metadata": {"name": "db", "namespace": ns},
                                               "spec": {"serviceName": "db",
                                                        "template": tmpl}})
        self.fk.create_object("controllerrevisions", {
            "metadata": {"name": "db-6c8f9d7b5", "namespace": ns,
                         "labels": {"app": "db", "controller.kubernetes.io/hash": "6c8f9d7b5"}},
            "revision": 1, "data": {"spec": {"template": tmpl}}})
        self.fk.create_object("daemonsets", {"metadata": {"name": "agent", "namespace": ns},
                                             "spec": {"template": dict(tmpl, metadata={
                                                 "labels": {"app": "agent"}})}})
        self.fk.create_object("jobs", {"metadata": {"name": "migrate", "namespace": ns},
                                       "spec": {"template": {"spec": {"containers": [
                                           {"name": "m", "image": "migrate:3"}]}}}})
        self.fk.create_object("cronjobs", {"metadata": {"name": "nightly", "namespace": ns},
                                           "spec": {"schedule": "0 3 * * *", "jobTemplate": {
                                               "spec": {"template": {"spec": {"containers": [
                                                   {"name": "n", "image": "report:1"}]}}}}}})
        self.fk.configmap(ns, "api-config", {"LOG_LEVEL": "info"})
        self.fk.secret(ns, "api-secret", {"password": "hunter2"})
        r = self.kubectl("get", "deploy,rs,sts,ds,controllerrevisions,jobs,cronjobs", "-n", ns,
                         "-o", "json")
        got = sorted((i["kind"], i["metadata"]["name"]) for i in json.loads(r.stdout)["items"])
        self.assertEqual(got, sorted([
            ("Deployment", "api"), ("ReplicaSet", new_rs), ("ReplicaSet", old_rs),
            ("StatefulSet", "db"), ("DaemonSet", "agent"),
            ("ControllerRevision", "db-6c8f9d7b5"), ("Job", "migrate"),
            ("CronJob", "nightly")]))
        r = self.kubectl("get", "cm,secrets", "-n", ns, "-o", "name")
        self.assertEqual(sorted(r.stdout.split()),
                         ["configmap/api-config", "secret/api-secret"])
        # short names and categories from discovery
        r = self.kubectl("get", "all", "-n", ns, "-o", "name")
        for want in ("deployment.apps/api", "replicaset.apps/" + new_rs,
                     "statefulset.apps/db", "daemonset.apps/agent", "job.batch/migrate",
                     "cronjob.batch/nightly"):
            self.assertIn(want, r.stdout.split())
        r = self.kubectl("get", "cj", "nightly", "-n", ns, "-o",
                         "jsonpath={.spec.jobTemplate.spec.template.spec.restartPolicy}")
        self.assertEqual(r.stdout, "Never")
        r = self.kubectl("get", "secret", "api-secret", "-n", ns, "-o",
                         "jsonpath={.data.password}")
        self.assertEqual(r.stdout, "aHVudGVyMg==")
        # kubectl's own view of the rollout
        r = self.kubectl("rollout", "history", "deploy/api", "-n", ns)
        self.assertEqual([ln.split()[0] for ln in r.stdout.splitlines()[2:] if ln.strip()],
                         ["1", "2"], r.stdout)
        r = self.kubectl("rollout", "history", "deploy/api", "-n", ns, "--revision=1")
        self.assertIn("api:1.4.2", r.stdout)
        self.assertIn("1Gi", r.stdout)
        r = self.kubectl("describe", "deploy", "api", "-n", ns)
        self.assertRegex(r.stdout, r"NewReplicaSet:\s+%s \(1/1 replicas created\)" % new_rs)
        self.assertRegex(r.stdout, r"OldReplicaSets:\s+%s \(3/3 replicas created\)" % old_rs)
        self.assertRegex(r.stdout, r"ScalingReplicaSet\s+\S+\s+deployment-controller\s+"
                                   r"Scaled up replica set %s from 0 to 1" % new_rs)
        r = self.kubectl("describe", "rs", new_rs, "-n", ns)
        self.assertRegex(r.stdout, r"SuccessfulCreate\s+\S+\s+replicaset-controller\s+"
                                   r"Created pod: %s" % out["pods"][0]["metadata"]["name"])
        r = self.kubectl("rollout", "status", "deploy/api", "-n", ns, "--watch=false")
        self.assertIn("1 out of 3 new replicas have been updated", r.stdout)
        hash_ = out["replicaset"]["metadata"]["labels"]["pod-template-hash"]
        r = self.kubectl("get", "pods", "-n", ns, "-l", "pod-template-hash=" + hash_, "-o",
                         "name")
        self.assertEqual(r.stdout.split(), ["pod/" + out["pods"][0]["metadata"]["name"]])

    def test_statefulset_daemonset_history(self):
        """kubectl reads the StatefulSet's and DaemonSet's history from the
        ControllerRevisions the fake wrote (owned with controller: true, revision numbers,
        the template in data)."""
        ns = "wl-history"
        self.fk.statefulset(ns, "db", [{"name": "db", "image": "postgres:16.4"}], replicas=2)
        self.fk.rollout_statefulset(ns, "db", {"db": {"image": "postgres:16.5"}})
        self.fk.daemonset(ns, "agent", [{"name": "agent", "image": "agent:1"}],
                          nodes=["n1", "n2"])
        self.fk.rollout_daemonset(ns, "agent", {"agent": {"image": "agent:2"}})
        for kind in ("sts/db", "ds/agent"):
            r = self.kubectl("rollout", "history", kind, "-n", ns)
            self.assertEqual([ln.split()[0] for ln in r.stdout.splitlines()[2:] if ln.strip()],
                             ["1", "2"], r.stdout)
        r = self.kubectl("rollout", "history", "sts/db", "-n", ns, "--revision=1")
        self.assertIn("postgres:16.4", r.stdout)
        r = self.kubectl("rollout", "history", "ds/agent", "-n", ns, "--revision=2")
        self.assertIn("agent:2", r.stdout)
        r = self.kubectl("rollout", "status", "sts/db", "-n", ns, "--watch=false")
        self.assertIn("1 out of 2 new pods have been updated", r.stdout)
        r = self.kubectl("rollout", "status", "ds/agent", "-n", ns, "--watch=false")
        self.assertIn("1 out of 2 new pods have been updated", r.stdout)
        r = self.kubectl("get", "events", "-n", ns, "--field-selector",
                         "involvedObject.kind=StatefulSet", "-o", "json")
        msgs = [(e["reason"], e["message"], e["source"]["component"])
                for e in json.loads(r.stdout)["items"]]
        for want in (("SuccessfulCreate", "create Pod db-0 in StatefulSet db successful",
                      "statefulset-controller"),
                     ("SuccessfulDelete", "delete Pod db-1 in StatefulSet db successful",
                      "statefulset-controller")):
            self.assertIn(want, msgs)

    def test_watch_sees_rollout(self):
        ns = "wl-watch"
        self.fk.deployment(ns, "web", ["web"], replicas=2)
        p = subprocess.Popen([KUBECTL, "get", "rs", "-n", ns, "-w", "-o", "name"],
                             env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(ln.strip()) for ln in p.stdout],
                         daemon=True).start()
        try:
            first = lines.get(timeout=30)
            self.assertTrue(first.startswith("replicaset.apps/web-"), first)
            self.fk.wait_for(lambda: any(
                x["path"] == "/apis/apps/v1/namespaces/%s/replicasets" % ns and
                x["query"].get("watch") in ("true", "1") for x in self.fk.requests()), 20,
                what="kubectl's replicaset watch")
            out = self.fk.rollout(ns, "web", {"web": {"image": "web:2"}})
            new = "replicaset.apps/" + out["replicaset"]["metadata"]["name"]
            seen = []
            deadline = time.monotonic() + 20
            while new not in seen:
                seen.append(lines.get(timeout=max(0.1, deadline - time.monotonic())))
        finally:
            p.kill()
            p.wait(10)
            p.stdout.close()
            p.stderr.close()

    def test_token_rotation(self):
        old = self.fk.current_token()
        self.fk.config(token="rotated-" + old[:8])
        try:
            self.assertEqual(self.fk.current_token(), "rotated-" + old[:8])
            code, _, _ = Raw(self.fk, token=old).request("GET", "/api/v1/pods")
            self.assertEqual(code, 401)
            r = self.kubectl("get", "--raw", "/api/v1/namespaces/default/pods")
            self.assertEqual(json.loads(r.stdout)["kind"], "PodList")
        finally:
            self.fk.config(token=old)


# --------------------------------------------------------------------------------------------
# protocol details


class ProtocolTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fk = FakeKube().start()
        cls.raw = Raw(cls.fk)

    @classmethod
    def tearDownClass(cls):
        log = cls.fk.log_tail(n=1 << 30)
        cls.fk.stop()
        assert "Traceback" not in log and "internal error" not in log, log[-3000:]

    def tearDown(self):
        self.fk.clear_faults()
        self.fk.config(bookmark_interval=1.0, chunk_size=0, streaming_list=True,
                       max_page_size=0)

    def rv(self):
        return self.fk.state()["resource_version"]

    def test_unauthorized_status(self):
        code, hdrs, body = Raw(self.fk, token="").json("GET", "/api/v1/pods")
        self.assertEqual(code, 401)
        self.assertEqual(body, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                "status": "Failure", "message": "Unauthorized",
                                "reason": "Unauthorized", "code": 401})
        code, _, _ = Raw(self.fk, token="wrong").json("GET", "/version")
        self.assertEqual(code, 401)

    def test_paging_and_expired_continue(self):
        ns = "pg"
        self.fk.bulk_pods(ns, 12, prefix="p")
        code, _, page1 = self.raw.json("GET", "/api/v1/namespaces/pg/pods" + q(limit=5))
        self.assertEqual(code, 200)
        self.assertEqual(len(page1["items"]), 5)
        self.assertNotIn("kind", page1["items"][0])
        list_rv = page1["metadata"]["resourceVersion"]
        self.assertEqual(page1["metadata"]["remainingItemCount"], 7)
        # a write between pages must not change the snapshot
        self.fk.create_pod(ns, "p-00003a")
        self.fk.delete_pod(ns, "p-00011")
        code, _, page2 = self.raw.json("GET", "/api/v1/namespaces/pg/pods" + q(
            limit=5, **{"continue": page1["metadata"]["continue"]}))
        code, _, page3 = self.raw.json("GET", "/api/v1/namespaces/pg/pods" + q(
            limit=5, **{"continue": page2["metadata"]["continue"]}))
        self.assertEqual(page2["metadata"]["resourceVersion"], list_rv)
        self.assertEqual(page3["metadata"]["resourceVersion"], list_rv)
        self.assertNotIn("continue", page3["metadata"])
        names = [p["metadata"]["name"] for pg in (page1, page2, page3) for p in pg["items"]]
        self.assertEqual(names, ["p-%05d" % i for i in range(12)])
        # expired continue token -> 410 Expired with a fresh inconsistent token
        code, _, page1 = self.raw.json("GET", "/api/v1/namespaces/pg/pods" + q(limit=5))
        self.fk.create_pod(ns, "p-extra")
        self.fk.compact()
        code, _, st = self.raw.json("GET", "/api/v1/namespaces/pg/pods" + q(
            limit=5, **{"continue": page1["metadata"]["continue"]}))
        self.assertEqual(code, 410)
        self.assertEqual(st["reason"], "Expired")
        self.assertTrue(st["metadata"]["continue"])
        code, _, rest = self.raw.json("GET", "/api/v1/namespaces/pg/pods" + q(
            limit=50, **{"continue": st["metadata"]["continue"]}))
        self.assertEqual(code, 200)
        self.assertIn("p-extra", [p["metadata"]["name"] for p in rest["items"]])
        # exact list at a compacted RV
        code, _, st = self.raw.json("GET", "/api/v1/pods" + q(
            resourceVersion=list_rv, resourceVersionMatch="Exact"))
        self.assertEqual((code, st["reason"], st["message"]),
                         (410, "Expired", "The resourceVersion for the provided list is too "
                                          "old."))

    def test_list_option_validation(self):
        cases = [
            q(resourceVersionMatch="Exact", resourceVersion="0"),
            q(resourceVersionMatch="NotOlderThan"),
            q(resourceVersionMatch="Bogus", resourceVersion="5"),
            q(sendInitialEvents="true"),
            q(watch="true", sendInitialEvents="true", allowWatchBookmarks="true"),
            q(watch="true", resourceVersionMatch="NotOlderThan"),
        ]
        for c in cases:
            code, _, st = self.raw.json("GET", "/api/v1/pods" + c)
            self.assertEqual((code, st["reason"], st["code"]), (422, "Invalid", 422), c)
            self.assertTrue(st["message"].startswith('ListOptions.meta.k8s.io "" is invalid: '),
                            st["message"])
            self.assertTrue(st["details"]["causes"], st)
        code, _, st = self.raw.json("GET", "/api/v1/pods" + q(labelSelector="a in (b"))
        self.assertEqual(code, 400)
        code, _, st = self.raw.json("GET", "/api/v1/pods" + q(fieldSelector="spec.bogus=1"))
        self.assertEqual((code, st["message"]), (400, "field label not supported: spec.bogus"))

    def test_selectors(self):
        ns = "sel"
        self.fk.create_pod(ns, "a-1", labels={"tier": "web", "env": "prod"})
        self.fk.create_pod(ns, "a-2", labels={"tier": "db", "env": "prod"})
        self.fk.create_pod(ns, "a-3", labels={"tier": "web"}, node="other-node")
        self.fk.create_pod(ns, "a-4", labels={"tier": "cache"}, node="")

        def names(**kw):
            code, _, body = self.raw.json("GET", "/api/v1/namespaces/sel/pods" + q(**kw))
            self.assertEqual(code, 200, body)
            return sorted(p["metadata"]["name"] for p in body["items"])

        self.assertEqual(names(labelSelector="tier=web"), ["a-1", "a-3"])
        self.assertEqual(names(labelSelector="tier!=web"), ["a-2", "a-4"])
        self.assertEqual(names(labelSelector="tier in (db,cache)"), ["a-2", "a-4"])
        self.assertEqual(names(labelSelector="tier notin (db,cache),env"), ["a-1"])
        self.assertEqual(names(labelSelector="!env"), ["a-3", "a-4"])
        self.assertEqual(names(fieldSelector="spec.nodeName=other-node"), ["a-3"])
        self.assertEqual(names(fieldSelector="status.phase=Pending"), ["a-4"])
        self.assertEqual(names(fieldSelector="metadata.name!=a-1,status.phase==Running"),
                         ["a-2", "a-3"])

    def test_watch_framing_chunks_and_changes(self):
        ns = "wf"
        self.fk.create_pod(ns, "f-1")
        rv = self.rv()
        self.fk.config(chunk_size=7)
        w = Watch(self.raw, "/api/v1/namespaces/wf/pods" + q(watch="true",
                                                             resourceVersion=str(rv)))
        try:
            self.assertEqual(w.status, 200)
            self.assertEqual(w.headers["content-type"], "application/json")
            self.assertEqual(w.headers["transfer-encoding"], "chunked")
            self.assertLess(w.head_time, 1.0)  # headers flushed before any event
            self.fk.restart(ns, "f-1", "app", exit_code=1)
            self.fk.create_pod("other-ns", "f-x")  # another namespace: not seen
            self.fk.delete_pod(ns, "f-1")
            w.wait(lambda w: len(w.events) >= 2, what="MODIFIED+DELETED")
            self.assertEqual(w.types(), ["MODIFIED", "DELETED"])
            self.assertTrue(all(len(c) <= 7 for c in w.chunks))
            obj = w.events[0]["object"]
            self.assertEqual((obj["kind"], obj["apiVersion"]), ("Pod", "v1"))
            self.assertEqual(obj["status"]["containerStatuses"][0]["restartCount"], 1)
            self.assertEqual(obj["status"]["containerStatuses"][0]["lastState"]["terminated"][
                "exitCode"], 1)
        finally:
            w.close()

    def test_watch_selector_transitions(self):
        ns = "wsel"
        self.fk.create_pod(ns, "s-1", labels={"team": "a"})
        rv = self.rv()
        w = Watch(self.raw, "/api/v1/pods" + q(watch="1", resourceVersion=str(rv),
                                               labelSelector="team=a"))
        try:
            self.fk.update_pod(ns, "s-1", {"metadata": {"labels": {"team": "b"}}})
            self.fk.update_pod(ns, "s-1", {"metadata": {"labels": {"team": "a"}}})
            w.wait(lambda w: len(w.events) >= 2)
            self.assertEqual(w.types(), ["DELETED", "ADDED"])
        finally:
            w.close()

    def test_watch_initial_state_bookmarks_and_timeout(self):
        ns = "wb"
        self.fk.create_pod(ns, "b-1")
        self.fk.create_pod(ns, "b-2")
        self.fk.config(bookmark_interval=0.3)
        w = Watch(self.raw, "/api/v1/namespaces/wb/pods" + q(
            watch="true", allowWatchBookmarks="true", timeoutSeconds="2"))
        try:
            self.assertEqual(w.wait_end(timeout=6), "clean")
            types = w.types()
            self.assertEqual(types[:2], ["ADDED", "ADDED"])
            self.assertIn("BOOKMARK", types)
            self.assertTrue(1.8 <= w.end_time <= 3.5, w.end_time)
            bm = [e for e in w.events if e["type"] == "BOOKMARK"][0]["object"]
            self.assertEqual(bm["spec"], {"containers": None})
            self.assertEqual(bm["status"], {})
            self.assertEqual(set(bm["metadata"]), {"resourceVersion", "creationTimestamp"})
        finally:
            w.close()
        # no bookmarks requested: the timeout closes cleanly with no event at all
        rv = self.rv()
        w = Watch(self.raw, "/api/v1/pods" + q(watch="true", resourceVersion=str(rv),
                                               timeoutSeconds="1"))
        try:
            self.assertEqual(w.wait_end(timeout=5), "clean")
            self.assertEqual(w.events, [])
        finally:
            w.close()

    def test_watch_expired_is_in_band(self):
        self.fk.create_pod("exp", "e-1")
        old = self.rv()
        self.fk.create_pod("exp", "e-2")
        compacted = self.fk.compact()["compacted_rv"]
        w = Watch(self.raw, "/api/v1/pods" + q(watch="true", resourceVersion=str(old)))
        try:
            self.assertEqual(w.status, 200)
            self.assertEqual(w.wait_end(), "clean")
            self.assertEqual(len(w.events), 1)
            self.assertEqual(w.events[0], {"type": "ERROR", "object": {
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "too old resource version: %d (%d)" % (old, compacted),
                "reason": "Expired", "code": 410}})
        finally:
            w.close()
        # an open watch is ended with an in-band 410 by a compaction
        w = Watch(self.raw, "/api/v1/pods" + q(watch="true", resourceVersion=str(self.rv())))
        try:
            self.fk.wait_for(lambda: self.fk.state()["open_watches"] >= 1)
            self.fk.compact()
            self.assertEqual(w.wait_end(), "clean")
            self.assertEqual(w.types(), ["ERROR"])
            self.assertEqual(w.events[0]["object"]["code"], 410)
        finally:
            w.close()

    def test_streaming_list(self):
        ns = "sl"
        for i in range(3):
            self.fk.create_pod(ns, "l-%d" % i)
        path = "/api/v1/namespaces/sl/pods" + q(
            watch="true", sendInitialEvents="true", resourceVersionMatch="NotOlderThan",
            allowWatchBookmarks="true", resourceVersion="")
        w = Watch(self.raw, path)
        try:
            w.wait(lambda w: len(w.events) >= 4)
            self.assertEqual(w.types()[:4], ["ADDED"] * 3 + ["BOOKMARK"])
            md = w.events[3]["object"]["metadata"]
            self.assertEqual(md["annotations"], {"k8s.io/initial-events-end": "true"})
            self.fk.restart(ns, "l-0", "app")
            w.wait(lambda w: "MODIFIED" in w.types())
        finally:
            w.close()
        self.fk.config(streaming_list=False)
        code, _, st = self.raw.json("GET", path)
        self.assertEqual(code, 422)
        self.assertIn("sendInitialEvents", st["message"])

    def test_watch_faults(self):
        self.fk.create_pod("flt", "x-1")
        w = Watch(self.raw, "/api/v1/pods" + q(watch="true", resourceVersion=str(self.rv())))
        try:
            self.fk.wait_for(lambda: self.fk.state()["open_watches"] >= 1)
            self.fk.fault(type="malformed_line", text='{"type":"ADDED","object":')
            self.fk.restart("flt", "x-1", "app")
            w.wait(lambda w: len(w.events) >= 2)
            self.assertEqual(w.types(), ["<malformed>", "MODIFIED"])
            self.fk.fault(type="drop_watches")
            self.assertEqual(w.wait_end(), "abrupt")
        finally:
            w.close()
        w = Watch(self.raw, "/api/v1/pods" + q(watch="true", resourceVersion=str(self.rv()),
                                               allowWatchBookmarks="true"))
        try:
            self.fk.fault(type="stall_watches", seconds=1.5)
            t0 = time.monotonic()
            self.fk.restart("flt", "x-1", "app")
            w.wait(lambda w: "MODIFIED" in w.types(), timeout=5)
            self.assertGreaterEqual(time.monotonic() - t0, 1.2)
            self.assertIsNone(w.end)
        finally:
            w.close()

    def test_http_faults_and_forbidden(self):
        self.fk.fault(type="http_error", status=429, count=1, path_regex="^/api/v1/pods$",
                      retry_after=3)
        code, hdrs, body = self.raw.request("GET", "/api/v1/pods")
        self.assertEqual((code, body), (429, b"Too many requests, please try again later.\n"))
        self.assertEqual(hdrs["retry-after"], "3")
        self.assertTrue(hdrs["content-type"].startswith("text/plain"))
        code, _, _ = self.raw.request("GET", "/api/v1/pods")
        self.assertEqual(code, 200)
        self.fk.fault(type="http_error", status=500, count=1)
        code, _, st = self.raw.json("GET", "/api/v1/nodes")
        self.assertEqual((code, st["reason"]), (500, "InternalError"))
        self.fk.fault(type="forbid", verb="watch", resource="pods")
        code, _, st = self.raw.json("GET", "/api/v1/pods?watch=true")
        self.assertEqual(code, 403)
        self.assertEqual(st["message"],
                         'pods is forbidden: User "system:serviceaccount:krc:krc" cannot watch '
                         'resource "pods" in API group "" at the cluster scope')
        self.assertEqual(st["details"], {"kind": "pods"})
        self.fk.fault(type="forbid", verb="get", resource="pods/log", namespace="x")
        code, _, st = self.raw.json("GET", "/api/v1/namespaces/x/pods/p/log")
        self.assertEqual(st["message"],
                         'pods "p" is forbidden: User "system:serviceaccount:krc:krc" cannot get '
                         'resource "pods/log" in API group "" in the namespace "x"')
        self.fk.fault(type="refuse_connections", seconds=1)
        with self.assertRaises((ConnectionError, ssl.SSLError, OSError)):
            self.raw.request("GET", "/version")

    def test_client_disconnect_mid_watch(self):
        self.fk.bulk_pods("dc", 300, prefix="d")
        ws = [Watch(self.raw, "/api/v1/pods" + q(watch="true")) for _ in range(3)]
        for w in ws:
            w.wait(lambda w: len(w.events) >= 1)
            w.close()  # hang up while the server is still writing the initial burst
        w = Watch(self.raw, "/api/v1/pods" + q(watch="true", resourceVersion=str(self.rv())))
        w.close()  # idle watch: noticed without any write
        self.fk.wait_for(lambda: self.fk.state()["open_watches"] == 0, 10,
                         what="server to notice closed watches")
        code, _, body = self.raw.json("GET", "/api/v1/namespaces/dc/pods" + q(limit=1))
        self.assertEqual((code, len(body["items"])), (200, 1))

    def test_leases(self):
        base = "/apis/coordination.k8s.io/v1/namespaces/krc/leases"
        code, _, st = self.raw.json("GET", base + "/krc-leader")
        self.assertEqual((code, st["message"]),
                         (404, 'leases.coordination.k8s.io "krc-leader" not found'))
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                 "metadata": {"name": "krc-leader", "namespace": "krc"},
                 "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15,
                          "acquireTime": "2026-07-30T07:00:01.000000Z",
                          "renewTime": "2026-07-30T07:52:40.482113Z", "leaseTransitions": 0}}
        code, _, created = self.raw.json("POST", base, lease)
        self.assertEqual(code, 201)
        self.assertEqual(created["spec"]["renewTime"], "2026-07-30T07:52:40.482113Z")
        code, _, st = self.raw.json("POST", base, lease)
        self.assertEqual((code, st["reason"]), (409, "AlreadyExists"))
        upd = dict(created, spec=dict(created["spec"], renewTime="2026-07-30T07:52:42.000001Z"))
        code, _, updated = self.raw.json("PUT", base + "/krc-leader", upd)
        self.assertEqual(code, 200)
        self.assertNotEqual(updated["metadata"]["resourceVersion"],
                            created["metadata"]["resourceVersion"])
        code, _, st = self.raw.json("PUT", base + "/krc-leader", upd)  # stale RV
        self.assertEqual((code, st["reason"], st["message"]), (
            409, "Conflict", 'Operation cannot be fulfilled on leases.coordination.k8s.io '
            '"krc-leader": the object has been modified; please apply your changes to the '
            'latest version and try again'))

    def test_logs(self):
        ns = "lg"
        self.fk.create_pod(ns, "one", containers=["app"])
        self.fk.set_logs(ns, "one", "app", "a\nb\nc\n")
        base = "/api/v1/namespaces/lg/pods/one/log"
        code, hdrs, body = self.raw.request("GET", base + q(tailLines=2))
        self.assertEqual((code, body), (200, b"b\nc\n"))
        self.assertTrue(hdrs["content-type"].startswith("text/plain"))
        code, _, body = self.raw.request("GET", base + q(limitBytes=3))
        self.assertEqual(body, b"a\nb")
        code, _, body = self.raw.request("GET", base + q(timestamps="true", tailLines=1))
        self.assertRegex(body.decode(), r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z c\n$")
        # as the kubelet: limitBytes counts from the start of the tailLines window, time
        # stamps included, so a long line early in the window hides the lines after it
        self.fk.set_logs(ns, "one", "app", "a\n" + "L" * 10 + "\nz\n")
        code, _, body = self.raw.request("GET", base + q(tailLines=2, limitBytes=5))
        self.assertEqual((code, body), (200, b"LLLLL"))
        code, _, body = self.raw.request("GET", base + q(tailLines=1, limitBytes=10,
                                                          timestamps="true"))
        self.assertRegex(body.decode(), r"^\d{4}-\d\d-\d\d$")
        code, _, st = self.raw.json("GET", base + q(container="nope"))
        self.assertEqual((code, st["message"]), (400, "container nope is not valid for pod one"))
        code, _, st = self.raw.json("GET", "/api/v1/namespaces/lg/pods/ghost/log")
        self.assertEqual((code, st["message"]), (404, 'pods "ghost" not found'))
        self.fk.create_pod(ns, "pending", node="")
        code, _, body = self.raw.request("GET", "/api/v1/namespaces/lg/pods/pending/log")
        self.assertEqual((code, body), (204, b""))

    def test_nodes_and_node_events(self):
        code, _, st = self.raw.json("GET", "/api/v1/nodes/gpu-1")
        self.assertEqual((code, st["message"]), (404, 'nodes "gpu-1" not found'))
        self.fk.add_node("gpu-1", labels={"nvidia.com/gpu.product": "H100"})
        code, _, node = self.raw.json("GET", "/api/v1/nodes/gpu-1")
        self.assertEqual((code, node["kind"]), (200, "Node"))
        self.fk.add_event(involvedObject={"kind": "Node", "name": "gpu-1", "uid": "gpu-1"},
                          reason="SystemOOM", type="Warning",
                          message="System OOM encountered, victim process: python, pid: 4242")
        code, _, evs = self.raw.json("GET", "/api/v1/events" + q(
            fieldSelector="involvedObject.kind=Node,involvedObject.name=gpu-1"))
        self.assertEqual(len(evs["items"]), 1)
        self.assertEqual(evs["items"][0]["metadata"]["namespace"], "default")

    # ---- workload controllers, ConfigMaps, Secrets (issue 27) ----

    def test_discovery_apps_batch(self):
        code, _, groups = self.raw.json("GET", "/apis")
        self.assertEqual(code, 200)
        names = [g["name"] for g in groups["groups"]]
        for g in ("apps", "batch", "coordination.k8s.io", "events.k8s.io", "resource.k8s.io"):
            self.assertIn(g, names)
        for g in groups["groups"]:
            self.assertEqual(g["preferredVersion"], {"groupVersion": g["name"] + "/v1",
                                                     "version": "v1"})
        code, _, grp = self.raw.json("GET", "/apis/apps")
        self.assertEqual((code, grp["kind"], grp["name"]), (200, "APIGroup", "apps"))
        want = {"apps/v1": {"deployments": ("Deployment", ["deploy"]),
                            "replicasets": ("ReplicaSet", ["rs"]),
                            "statefulsets": ("StatefulSet", ["sts"]),
                            "daemonsets": ("DaemonSet", ["ds"]),
                            "controllerrevisions": ("ControllerRevision", None)},
                "batch/v1": {"jobs": ("Job", None), "cronjobs": ("CronJob", ["cj"])}}
        for gv, resources in want.items():
            code, _, rl = self.raw.json("GET", "/apis/" + gv)
            self.assertEqual((code, rl["kind"], rl["groupVersion"]),
                             (200, "APIResourceList", gv))
            got = {r["name"]: r for r in rl["resources"]}
            self.assertEqual(set(got), set(resources))
            for name, (kind, short) in resources.items():
                self.assertEqual(got[name]["kind"], kind)
                self.assertEqual(got[name].get("shortNames"), short)
                self.assertTrue(got[name]["namespaced"])
                self.assertEqual(got[name]["verbs"], ["get", "list", "watch"])
        code, _, core = self.raw.json("GET", "/api/v1")
        got = {r["name"]: r for r in core["resources"]}
        self.assertEqual(got["configmaps"]["shortNames"], ["cm"])
        self.assertEqual(got["secrets"]["verbs"], ["get", "list", "watch"])
        code, _, st = self.raw.json("GET", "/apis/apps/v1/namespaces/x/pods")
        self.assertEqual((code, st["message"]),
                         (404, "the server could not find the requested resource"))
        code, _, st = self.raw.json("GET", "/apis/apps/v1/namespaces/x/deployments/ghost")
        self.assertEqual((code, st["message"], st["details"]),
                         (404, 'deployments.apps "ghost" not found',
                          {"name": "ghost", "group": "apps", "kind": "deployments"}))
        code, _, st = self.raw.json("GET", "/apis/batch/v1/namespaces/x/cronjobs/ghost")
        self.assertEqual(st["message"], 'cronjobs.batch "ghost" not found')
        code, _, st = self.raw.json("GET", "/api/v1/namespaces/x/configmaps/ghost")
        self.assertEqual(st["message"], 'configmaps "ghost" not found')

    META = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
    META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

    def test_partial_object_metadata(self):
        """The metadata-only representation as the API server's response.go writes it
        (asPartialObjectMetadata / asPartialObjectMetadataList of k8s.io/apiserver
        pkg/endpoints/handlers; /work/shared/protocols.md 8.2): kind PartialObjectMetadata
        (list: PartialObjectMetadataList), apiVersion meta.k8s.io/v1, the whole ObjectMeta
        (managedFields included) and nothing else; list items carry kind and apiVersion;
        the list keeps resourceVersion, continue and remainingItemCount; the wrong one of
        the two for the request is 406 NotAcceptable."""
        ns = "pom"
        self.fk.configmap(ns, "app-a", {"k": "v1"}, time="2026-12-06T03:40:00Z")
        self.fk.edit_configmap(ns, "app-a", {"k": "v2"}, time="2026-12-06T03:50:00Z")
        self.fk.configmap(ns, "app-b", {"x": "1"})
        self.fk.secret(ns, "db", {"password": "s3cr3t"})
        code, hdrs, full = self.raw.json("GET", "/api/v1/namespaces/pom/configmaps/app-a")
        self.assertEqual((code, full["kind"], full["data"]), (200, "ConfigMap", {"k": "v2"}))
        for accept in (self.META,
                       # client-go's metadata client: protobuf first (this fake speaks JSON)
                       "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;"
                       "g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;"
                       "g=meta.k8s.io;v=v1,application/json"):
            code, hdrs, meta = self.raw.json("GET", "/api/v1/namespaces/pom/configmaps/app-a",
                                             headers={"Accept": accept})
            self.assertEqual(code, 200)
            self.assertTrue(hdrs["content-type"].startswith("application/json"))
            self.assertEqual(meta, {"kind": "PartialObjectMetadata",
                                    "apiVersion": "meta.k8s.io/v1",
                                    "metadata": full["metadata"]})
        mf = meta["metadata"]["managedFields"]
        self.assertEqual([(e["manager"], e["time"]) for e in mf],
                         [("kubectl-create", "2026-12-06T03:40:00Z"),
                          ("kubectl-edit", "2026-12-06T03:50:00Z")])
        self.assertEqual(mf[1]["fieldsV1"], {"f:data": {"f:k": {}}})
        code, _, meta = self.raw.json("GET", "/api/v1/namespaces/pom/secrets/db",
                                      headers={"Accept": self.META})
        self.assertEqual(set(meta), {"kind", "apiVersion", "metadata"})
        self.assertNotIn("s3cr3t", json.dumps(meta))
        self.assertNotIn("czNjcjN0", json.dumps(meta))  # base64 of the value
        code, _, meta = self.raw.json("GET", "/apis/apps/v1/namespaces/pom/deployments/x",
                                      headers={"Accept": self.META})
        self.assertEqual((code, meta["kind"]), (404, "Status"))  # errors stay Status
        # v1beta1 is served too
        code, _, meta = self.raw.json(
            "GET", "/api/v1/namespaces/pom/configmaps/app-b",
            headers={"Accept": "application/json;as=PartialObjectMetadata;g=meta.k8s.io;"
                               "v=v1beta1"})
        self.assertEqual(meta["apiVersion"], "meta.k8s.io/v1beta1")
        # LIST
        code, _, lst = self.raw.json("GET", "/api/v1/namespaces/pom/configmaps",
                                     headers={"Accept": self.META_LIST})
        self.assertEqual(code, 200)
        self.assertEqual(set(lst), {"kind", "apiVersion", "metadata", "items"})
        self.assertEqual((lst["kind"], lst["apiVersion"]),
                         ("PartialObjectMetadataList", "meta.k8s.io/v1"))
        self.assertEqual([i["metadata"]["name"] for i in lst["items"]], ["app-a", "app-b"])
        for i in lst["items"]:
            self.assertEqual(set(i), {"kind", "apiVersion", "metadata"})
            self.assertEqual((i["kind"], i["apiVersion"]),
                             ("PartialObjectMetadata", "meta.k8s.io/v1"))
        code, _, page = self.raw.json("GET", "/api/v1/namespaces/pom/configmaps" + q(limit=1),
                                      headers={"Accept": self.META_LIST})
        self.assertEqual(page["metadata"]["remainingItemCount"], 1)
        code, _, page2 = self.raw.json("GET", "/api/v1/namespaces/pom/configmaps" + q(
            limit=1, **{"continue": page["metadata"]["continue"]}),
            headers={"Accept": self.META_LIST})
        self.assertEqual([i["metadata"]["name"] for i in page2["items"]], ["app-b"])
        self.assertEqual(page2["metadata"]["resourceVersion"],
                         page["metadata"]["resourceVersion"])
        code, _, empty = self.raw.json("GET", "/api/v1/namespaces/nothing-here/secrets",
                                       headers={"Accept": self.META_LIST})
        self.assertEqual(empty["items"], [])
        # the wrong representation for the request
        code, _, st = self.raw.json("GET", "/api/v1/namespaces/pom/configmaps",
                                    headers={"Accept": self.META})
        self.assertEqual(st, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                              "status": "Failure",
                              "message": "you requested PartialObjectMetadata, but the "
                                         "requested object is a list (*core.ConfigMapList)",
                              "reason": "NotAcceptable", "code": 406})
        self.assertEqual(code, 406)
        code, _, st = self.raw.json("GET", "/apis/apps/v1/namespaces/pom/deployments/x",
                                    headers={"Accept": self.META_LIST})
        self.assertEqual(code, 404)  # not found before any conversion
        self.fk.deployment(ns, "web", ["web"], replicas=1)
        code, _, st = self.raw.json("GET", "/apis/apps/v1/namespaces/pom/deployments/web",
                                    headers={"Accept": self.META_LIST})
        self.assertEqual((code, st["reason"], st["message"]), (
            406, "NotAcceptable", "you requested PartialObjectMetadataList, but the requested "
            "object is not a list (*apps.Deployment)"))

    def test_partial_object_metadata_watch(self):
        """A watch with as=PartialObjectMetadata sends every object (bookmarks too) as
        PartialObjectMetadata.  With as=PartialObjectMetadataList the API server's
        watchEmbeddedEncoder cannot convert one object, falls back to the unconverted one,
        which the meta.k8s.io codec negotiated for the conversion cannot encode: the
        watch (handlers/watch.go HandleHTTP) ends at its first event, writing nothing."""
        ns = "pomw"
        self.fk.configmap(ns, "c1", {"a": "1"})
        self.fk.configmap(ns, "c2", {"b": "2"})
        self.fk.config(bookmark_interval=0.3)
        path = "/api/v1/namespaces/pomw/configmaps" + q(
            watch="true", sendInitialEvents="true", resourceVersionMatch="NotOlderThan",
            allowWatchBookmarks="true")
        w = Watch(self.raw, path, headers={"Accept": self.META})
        try:
            w.wait(lambda w: len(w.events) >= 3)
            self.assertEqual(w.types()[:3], ["ADDED", "ADDED", "BOOKMARK"])
            for e in w.events[:2]:
                self.assertEqual(set(e["object"]), {"kind", "apiVersion", "metadata"})
                self.assertEqual(e["object"]["kind"], "PartialObjectMetadata")
            end = w.events[2]["object"]
            self.assertEqual(end, {"kind": "PartialObjectMetadata",
                                   "apiVersion": "meta.k8s.io/v1", "metadata": {
                                       "resourceVersion": end["metadata"]["resourceVersion"],
                                       "creationTimestamp": None,
                                       "annotations": {"k8s.io/initial-events-end": "true"}}})
            self.fk.edit_configmap(ns, "c1", {"a": "changed"}, manager="helm",
                                   time="2026-12-06T04:00:00Z")
            w.wait(lambda w: "MODIFIED" in w.types())
            mod = [e for e in w.events if e["type"] == "MODIFIED"][0]["object"]
            self.assertEqual(set(mod), {"kind", "apiVersion", "metadata"})
            self.assertIn(("helm", "2026-12-06T04:00:00Z"),
                          [(m["manager"], m["time"]) for m in mod["metadata"]["managedFields"]])
            self.assertNotIn("changed", json.dumps(mod))
            w.wait(lambda w: w.types().count("BOOKMARK") >= 2)
            bm = [e for e in w.events if e["type"] == "BOOKMARK"][1]["object"]
            self.assertEqual(set(bm), {"kind", "apiVersion", "metadata"})
            self.assertEqual(bm["kind"], "PartialObjectMetadata")
        finally:
            w.close()
        w = Watch(self.raw, "/api/v1/namespaces/pomw/configmaps" + q(watch="true"),
                  headers={"Accept": self.META_LIST})
        try:
            self.assertEqual(w.status, 200)
            self.assertEqual(w.wait_end(), "clean")
            self.assertEqual(w.events, [])
        finally:
            w.close()
        rv = self.rv()  # no initial events: the stream lasts until the first change
        w = Watch(self.raw, "/api/v1/namespaces/pomw/configmaps" + q(
            watch="true", resourceVersion=str(rv)), headers={"Accept": self.META_LIST})
        try:
            self.fk.wait_for(lambda: self.fk.state()["open_watches"] >= 1)
            time.sleep(0.3)
            self.assertIsNone(w.end)
            self.fk.edit_configmap(ns, "c2", {"b": "3"})
            self.assertEqual(w.wait_end(), "clean")
            self.assertEqual(w.events, [])
        finally:
            w.close()

    def test_workload_list_watch_bookmarks(self):
        ns = "wlw"
        self.fk.deployment(ns, "api", ["api"], replicas=2)
        self.fk.create_object("jobs", {"metadata": {"name": "j", "namespace": ns},
                                       "spec": {"template": {"spec": {"containers": [
                                           {"name": "j"}]}}}})
        self.fk.config(bookmark_interval=0.3)
        shells = {
            "/apis/apps/v1/namespaces/wlw/replicasets": ("ReplicaSet", {
                "spec": {"selector": None, "template": {
                    "metadata": {"creationTimestamp": None}, "spec": {"containers": None}}},
                "status": {"replicas": 0}}),
            "/apis/apps/v1/namespaces/wlw/deployments": ("Deployment", {
                "spec": {"selector": None, "template": {
                    "metadata": {"creationTimestamp": None}, "spec": {"containers": None}},
                    "strategy": {}}, "status": {}}),
            "/apis/batch/v1/namespaces/wlw/jobs": ("Job", {
                "spec": {"template": {"metadata": {"creationTimestamp": None},
                                      "spec": {"containers": None}}}, "status": {}}),
        }
        for path, (kind, shell) in shells.items():
            w = Watch(self.raw, path + q(watch="true", sendInitialEvents="true",
                                         resourceVersionMatch="NotOlderThan",
                                         allowWatchBookmarks="true"))
            try:
                w.wait(lambda w: "BOOKMARK" in w.types(), what=kind + " initial events")
                types = w.types()
                self.assertEqual(types, ["ADDED"] * (len(types) - 1) + ["BOOKMARK"])
                self.assertEqual({e["object"]["kind"] for e in w.events[:-1]}, {kind})
                bm = w.events[-1]["object"]
                self.assertEqual(bm["metadata"]["annotations"],
                                 {"k8s.io/initial-events-end": "true"})
                self.assertEqual({k: v for k, v in bm.items()
                                  if k not in ("kind", "apiVersion", "metadata")}, shell)
            finally:
                w.close()
        code, _, lst = self.raw.json("GET", "/apis/apps/v1/replicasets" + q(
            labelSelector="app=api", limit=1))
        self.assertEqual((code, lst["kind"], lst["apiVersion"]), (200, "ReplicaSetList",
                                                                  "apps/v1"))
        self.assertNotIn("kind", lst["items"][0])
        code, _, lst = self.raw.json("GET", "/apis/apps/v1/namespaces/wlw/replicasets" + q(
            fieldSelector="status.replicas=2"))
        self.assertEqual(len(lst["items"]), 1)
        code, _, st = self.raw.json("GET", "/apis/apps/v1/replicasets" + q(
            fieldSelector="spec.replicas=2"))
        self.assertEqual((code, st["message"]), (400, "field label not supported: "
                                                      "spec.replicas"))
        rv = self.rv()
        w = Watch(self.raw, "/apis/apps/v1/namespaces/wlw/deployments" + q(
            watch="true", resourceVersion=str(rv)))
        try:
            self.fk.rollout(ns, "api", {"api": {"image": "api:2"}})
            w.wait(lambda w: len(w.events) >= 3)
            self.assertEqual(set(w.types()), {"MODIFIED"})
            last = w.events[-1]["object"]
            self.assertEqual((last["kind"], last["apiVersion"]), ("Deployment", "apps/v1"))
            self.assertEqual(last["metadata"]["annotations"][
                "deployment.kubernetes.io/revision"], "2")
        finally:
            w.close()
        # the forbid fault works for the new resources
        self.fk.fault(type="forbid", verb="list", resource="secrets", namespace="wlw")
        code, _, st = self.raw.json("GET", "/api/v1/namespaces/wlw/secrets",
                                    headers={"Accept": self.META_LIST})
        self.assertEqual((code, st["message"]), (
            403, 'secrets is forbidden: User "system:serviceaccount:krc:krc" cannot list '
            'resource "secrets" in API group "" in the namespace "wlw"'))


class WorkloadRbacTest(unittest.TestCase):
    """RBAC is enforced for the new resources like for the others; a metadata-only request
    needs the same verb as a full one (the Accept header changes nothing for RBAC)."""

    SA = "system:serviceaccount:krc:krc"

    def rbac(self, rules):
        return [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                 "metadata": {"name": "krc"}, "rules": rules},
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                 "metadata": {"name": "krc"},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                             "name": "krc"},
                 "subjects": [{"kind": "ServiceAccount", "name": "krc", "namespace": "krc"}]}]

    def test_rbac(self):
        rules = [{"apiGroups": ["apps"], "verbs": ["get", "list", "watch"],
                  "resources": ["deployments", "replicasets"]},
                 {"apiGroups": [""], "verbs": ["get"], "resources": ["configmaps"]}]
        with FakeKube(rbac=self.rbac(rules)) as fk:
            raw = Raw(fk)
            fk.deployment("shop", "api", ["api"], replicas=1)
            fk.configmap("shop", "cfg", {"a": "1"})
            fk.secret("shop", "pw", {"p": "x"})
            fk.create_object("jobs", {"metadata": {"name": "j", "namespace": "shop"},
                                      "spec": {"template": {"spec": {"containers": [
                                          {"name": "j"}]}}}})
            code, _, _ = raw.json("GET", "/apis/apps/v1/deployments" + q(watch="true",
                                                                           timeoutSeconds="1"))
            self.assertEqual(code, 200)
            code, _, _ = raw.json("GET", "/apis/apps/v1/namespaces/shop/replicasets")
            self.assertEqual(code, 200)
            code, _, st = raw.json("GET", "/apis/apps/v1/statefulsets")
            self.assertEqual((code, st["message"], st["details"]), (
                403, 'statefulsets.apps is forbidden: User "%s" cannot list resource '
                '"statefulsets" in API group "apps" at the cluster scope' % self.SA,
                {"group": "apps", "kind": "statefulsets"}))
            code, _, st = raw.json("GET", "/apis/batch/v1/namespaces/shop/jobs/j")
            self.assertEqual((code, st["message"]), (
                403, 'jobs.batch "j" is forbidden: User "%s" cannot get resource "jobs" in '
                'API group "batch" in the namespace "shop"' % self.SA))
            code, _, meta = raw.json("GET", "/api/v1/namespaces/shop/configmaps/cfg",
                                     headers={"Accept": ProtocolTest.META})
            self.assertEqual((code, meta["kind"]), (200, "PartialObjectMetadata"))
            code, _, st = raw.json("GET", "/api/v1/namespaces/shop/configmaps",
                                   headers={"Accept": ProtocolTest.META_LIST})
            self.assertEqual((code, st["reason"]), (403, "Forbidden"))
            code, _, st = raw.json("GET", "/api/v1/namespaces/shop/secrets/pw",
                                   headers={"Accept": ProtocolTest.META})
            self.assertEqual((code, st["message"]), (
                403, 'secrets "pw" is forbidden: User "%s" cannot get resource "secrets" in '
                'API group "" in the namespace "shop"' % self.SA))
            # the request log has the attributes of each
            authz = [(r["authz"]["verb"], r["authz"]["apiGroup"], r["authz"]["resource"],
                      r["authz"]["allowed"]) for r in fk.requests()]
            self.assertEqual(authz, [("watch", "apps", "deployments", True),
                                     ("list", "apps", "replicasets", True),
                                     ("list", "apps", "statefulsets", False),
                                     ("get", "batch", "jobs", False),
                                     ("get", "", "configmaps", True),
                                     ("list", "", "configmaps", False),
                                     ("get", "", "secrets", False)])
            accepts = [r["accept"] for r in fk.requests()]
            self.assertEqual(accepts[4], ProtocolTest.META)


class WorkloadAdminTest(unittest.TestCase):
    """The admin helpers write what the controllers and managers of a real cluster write."""

    @classmethod
    def setUpClass(cls):
        cls.fk = FakeKube(rbac=False).start()

    @classmethod
    def tearDownClass(cls):
        log = cls.fk.log_tail(n=1 << 30)
        cls.fk.stop()
        assert "Traceback" not in log and "internal error" not in log, log[-3000:]

    @staticmethod
    def entry(obj, manager, subresource=None):
        es = [e for e in obj["metadata"].get("managedFields") or []
              if e["manager"] == manager and e.get("subresource") == subresource]
        assert len(es) <= 1, es
        return es[0] if es else None

    def test_deployment(self):
        fk = self.fk
        out = fk.deployment("shop", "api", [{"name": "api", "image": "api:1.4.2",
                                             "resources": {"limits": {"memory": "1Gi"}}}],
                            replicas=3, time="2026-12-06T03:00:00Z")
        dep, rs, pods = out["deployment"], out["replicaset"], out["pods"]
        md = dep["metadata"]
        self.assertEqual(md["generation"], 1)
        self.assertEqual(md["annotations"]["deployment.kubernetes.io/revision"], "1")
        self.assertEqual(md["creationTimestamp"], "2026-12-06T03:00:00Z")
        applied = json.loads(md["annotations"]["kubectl.kubernetes.io/last-applied-"
                                               "configuration"])
        self.assertEqual(applied["spec"]["template"]["spec"]["containers"][0]["image"],
                         "api:1.4.2")
        mine = self.entry(dep, "kubectl-client-side-apply")
        self.assertEqual((mine["operation"], mine["apiVersion"], mine["time"],
                          mine["fieldsType"]),
                         ("Update", "apps/v1", "2026-12-06T03:00:00Z", "FieldsV1"))
        self.assertIn("f:spec", mine["fieldsV1"])
        c = mine["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"][
            'k:{"name":"api"}']
        self.assertIn("f:image", c)
        self.assertEqual(self.entry(dep, "kube-controller-manager")["fieldsV1"],
                         {"f:metadata": {"f:annotations": {
                             "f:deployment.kubernetes.io/revision": {}}}})
        self.assertIn("f:status", self.entry(dep, "kube-controller-manager",
                                             "status")["fieldsV1"])
        # the ReplicaSet: <name>-<pod-template-hash>, owned by the Deployment
        h = rs["metadata"]["labels"]["pod-template-hash"]
        self.assertRegex(h, r"^[bcdfghjklmnpqrstvwxz2456789]{1,10}$")
        self.assertEqual(rs["metadata"]["name"], "api-" + h)
        self.assertEqual(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
                         "1")
        self.assertEqual(rs["metadata"]["ownerReferences"], [{
            "apiVersion": "apps/v1", "kind": "Deployment", "name": "api",
            "uid": md["uid"], "controller": True, "blockOwnerDeletion": True}])
        self.assertEqual(rs["spec"]["selector"]["matchLabels"],
                         {"app": "api", "pod-template-hash": h})
        self.assertEqual(rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"], h)
        self.assertEqual(rs["status"], {"replicas": 3, "fullyLabeledReplicas": 3,
                                        "readyReplicas": 3, "availableReplicas": 3,
                                        "observedGeneration": 1})
        self.assertEqual(len(pods), 3)
        for p in pods:
            self.assertTrue(p["metadata"]["name"].startswith("api-%s-" % h))
            self.assertEqual(p["metadata"]["labels"]["pod-template-hash"], h)
            self.assertEqual(p["metadata"]["ownerReferences"][0]["uid"], rs["metadata"]["uid"])
            self.assertTrue(p["metadata"]["ownerReferences"][0]["controller"])
            self.assertEqual(p["spec"]["containers"][0]["image"], "api:1.4.2")
            self.assertEqual(p["status"]["phase"], "Running")
            self.assertEqual([x["manager"] for x in p["metadata"]["managedFields"]],
                             ["kube-controller-manager", "kubelet"])
        self.assertEqual(dep["status"]["readyReplicas"], 3)
        self.assertEqual([(x["type"], x["status"], x["reason"])
                          for x in dep["status"]["conditions"]],
                         [("Available", "True", "MinimumReplicasAvailable"),
                          ("Progressing", "True", "NewReplicaSetAvailable")])
        # the same template hashes the same; another one differently
        again = fk.deployment("other", "api", [{"name": "api", "image": "api:1.4.2",
                                                "resources": {"limits": {"memory": "1Gi"}}}])
        self.assertEqual(again["replicaset"]["metadata"]["labels"]["pod-template-hash"], h)
        with self.assertRaises(Exception) as e:
            fk.deployment("shop", "api", ["api"])
        self.assertEqual(e.exception.status, 409)

        # rollout: image and memory limit, one new pod, the old ReplicaSet keeps its 3
        r = fk.rollout("shop", "api", {"api": {"image": "api:1.4.3", "resources": {
            "limits": {"memory": "512Mi"}}}}, time="2026-12-06T03:52:00Z")
        dep2, rs2, old = r["deployment"], r["replicaset"], r["old_replicaset"]
        self.assertEqual(r["revision"], 2)
        self.assertEqual(dep2["metadata"]["generation"], 2)
        self.assertEqual(dep2["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
                         "2")
        self.assertEqual(self.entry(dep2, "kubectl-client-side-apply")["time"],
                         "2026-12-06T03:52:00Z")
        h2 = rs2["metadata"]["labels"]["pod-template-hash"]
        self.assertNotEqual(h2, h)
        self.assertEqual(rs2["metadata"]["creationTimestamp"], "2026-12-06T03:52:00Z")
        self.assertEqual(rs2["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
                         "2")
        self.assertEqual(rs2["spec"]["template"]["spec"]["containers"][0]["resources"][
            "limits"]["memory"], "512Mi")
        self.assertEqual(old["metadata"]["name"], "api-" + h)
        self.assertEqual(old["status"]["readyReplicas"], 3)
        self.assertEqual(len(r["pods"]), 1)
        self.assertEqual(rs2["status"]["readyReplicas"], 1)
        self.assertEqual(dep2["status"]["updatedReplicas"], 1)
        self.assertEqual(dep2["status"]["replicas"], 4)
        self.assertEqual(dep2["status"]["conditions"][1]["reason"], "ReplicaSetUpdated")
        # the new pod crash-loops: the ReplicaSet controller's status follows the pod
        newpod = r["pods"][0]["metadata"]["name"]
        fk.restart("shop", newpod, "api", exit_code=137, reason="OOMKilled", waiting=True)
        rs2 = fk.get_object("replicasets", "shop", rs2["metadata"]["name"])
        self.assertNotIn("readyReplicas", rs2["status"])
        self.assertEqual(rs2["status"]["replicas"], 1)
        self.assertEqual(self.entry(rs2, "kube-controller-manager", "status")["fieldsV1"][
            "f:status"].keys() >= {"f:replicas", "f:observedGeneration"}, True)
        dep3 = fk.get_object("deployments", "shop", "api")
        # calculateStatus: the ReplicaSets want 3 + 1, 3 (the old ones) are available
        self.assertEqual(dep3["status"]["unavailableReplicas"], 1)
        self.assertEqual(dep3["status"]["readyReplicas"], 3)
        # a replacement pod of the same ReplicaSet: new name, restart count 0
        repl = fk.replace_pod("shop", newpod)
        self.assertNotEqual(repl["metadata"]["name"], newpod)
        self.assertEqual(repl["metadata"]["ownerReferences"][0]["name"],
                         rs2["metadata"]["name"])
        self.assertEqual(repl["status"]["containerStatuses"][0]["restartCount"], 0)
        with self.assertRaises(Exception) as e:
            fk.get_pod("shop", newpod)
        self.assertEqual(e.exception.status, 404)
        self.assertEqual(fk.get_object("replicasets", "shop", rs2["metadata"]["name"])[
            "status"]["readyReplicas"], 1)
        fk.delete_pod("shop", repl["metadata"]["name"])
        self.assertEqual(fk.get_object("replicasets", "shop", rs2["metadata"]["name"])[
            "status"]["replicas"], 0)
        fk.create_pod("shop", "loose-1")
        with self.assertRaises(Exception) as e:
            fk.replace_pod("shop", "loose-1")
        self.assertIn("no controller stored", e.exception.body["error"])
        # scaling the old ReplicaSet down; a rollback re-uses revision 1's ReplicaSet
        r = fk.rollout("shop", "api", {"api": {"image": "api:1.4.4"}}, old_ready=1, new_pods=2)
        self.assertEqual(r["revision"], 3)
        self.assertEqual(r["old_replicaset"]["metadata"]["name"], rs2["metadata"]["name"])
        self.assertEqual(r["old_replicaset"]["spec"]["replicas"], 1)
        back = fk.rollout("shop", "api", {"api": {"image": "api:1.4.2", "resources": {
            "limits": {"memory": "1Gi"}}}}, new_pods=0)
        self.assertEqual(back["revision"], 4)
        self.assertEqual(back["replicaset"]["metadata"]["name"], "api-" + h)
        self.assertEqual(back["replicaset"]["metadata"]["annotations"][
            "deployment.kubernetes.io/revision-history"], "1")
        # errors name what is wrong
        for args, status, text in (
                (("shop", "api", {"nope": {"image": "x"}}), 400, "has no container nope"),
                (("shop", "api", {"api": {"image": "api:1.4.2"}}), 400, "changes nothing"),
                (("shop", "ghost", {"api": {"image": "x"}}), 404, "not found")):
            with self.assertRaises(Exception) as e:
                fk.rollout(*args, new_pods=0)
            self.assertEqual(e.exception.status, status)
            self.assertIn(text, e.exception.body["error"])
        with self.assertRaises(Exception) as e:
            fk.rollout("shop", "api", {"api": {"image": "z"}}, time="03:52")
        self.assertIn("RFC 3339", e.exception.body["error"])

    def test_scale_down_ranking_and_events(self):
        fk = self.fk
        out = fk.deployment("rank", "web", ["web"], replicas=3)
        pods = [p["metadata"]["name"] for p in out["pods"]]
        fk.restart("rank", pods[1], "web", exit_code=1, waiting=True)  # not ready
        r = fk.rollout("rank", "web", {"web": {"image": "web:2"}}, old_ready=2)
        old = r["old_replicaset"]
        for n in (pods[0], pods[2]):
            self.assertEqual(fk.get_pod("rank", n)["metadata"]["name"], n)
        with self.assertRaises(Exception) as e:
            fk.get_pod("rank", pods[1])  # the not-ready one went first
        self.assertEqual(e.exception.status, 404)
        self.assertEqual((old["spec"]["replicas"], old["status"]["readyReplicas"]), (2, 2))
        raw = Raw(fk)
        code, _, lst = raw.json("GET", "/api/v1/namespaces/rank/events")
        got = [(e["involvedObject"]["kind"], e["reason"], e["message"], e["source"])
               for e in lst["items"]]
        rs1, rs2 = old["metadata"]["name"], r["replicaset"]["metadata"]["name"]
        for want in (
                ("Deployment", "ScalingReplicaSet", "Scaled up replica set %s from 0 to 3" % rs1,
                 {"component": "deployment-controller"}),
                ("Deployment", "ScalingReplicaSet", "Scaled up replica set %s from 0 to 1" % rs2,
                 {"component": "deployment-controller"}),
                ("Deployment", "ScalingReplicaSet",
                 "Scaled down replica set %s from 3 to 2" % rs1,
                 {"component": "deployment-controller"}),
                ("ReplicaSet", "SuccessfulDelete", "Deleted pod: " + pods[1],
                 {"component": "replicaset-controller"}),
                ("ReplicaSet", "SuccessfulCreate", "Created pod: " + pods[0],
                 {"component": "replicaset-controller"})):
            self.assertIn(want, got)

    def test_configmap_and_secret(self):
        fk = self.fk
        cm = fk.configmap("cfg", "app", {"a": "1", "b": "2"}, time="2026-12-06T03:00:00Z")
        self.assertEqual([(e["manager"], e["time"], e["fieldsV1"]) for e in
                          cm["metadata"]["managedFields"]],
                         [("kubectl-create", "2026-12-06T03:00:00Z",
                           {"f:data": {".": {}, "f:a": {}, "f:b": {}}})])
        cm = fk.edit_configmap("cfg", "app", {"a": "10"}, time="2026-12-06T03:30:00Z")
        self.assertEqual(cm["data"], {"a": "10", "b": "2"})
        self.assertEqual([(e["manager"], e["time"], e["fieldsV1"]) for e in
                          cm["metadata"]["managedFields"]],
                         [("kubectl-create", "2026-12-06T03:00:00Z",
                           {"f:data": {".": {}, "f:b": {}}}),
                          ("kubectl-edit", "2026-12-06T03:30:00Z", {"f:data": {"f:a": {}}})])
        # a label change by another manager does not touch f:data
        fk.update_object("configmaps", "cfg", "app", {"metadata": {"labels": {"t": "x"}}},
                         manager="kubectl-label", time="2026-12-06T03:40:00Z")
        cm = fk.get_object("configmaps", "cfg", "app")
        lab = self.entry(cm, "kubectl-label")
        self.assertEqual(lab["fieldsV1"], {"f:metadata": {"f:labels": {".": {}, "f:t": {}}}})
        # the same manager again: one entry, its time moves, it keeps what it had
        cm = fk.edit_configmap("cfg", "app", {"b": None, "c": "3"},
                               time="2026-12-06T03:50:00Z")
        self.assertEqual(self.entry(cm, "kubectl-edit"),
                         {"manager": "kubectl-edit", "operation": "Update", "apiVersion": "v1",
                          "time": "2026-12-06T03:50:00Z", "fieldsType": "FieldsV1",
                          "fieldsV1": {"f:data": {"f:a": {}, "f:c": {}}}})
        self.assertEqual(self.entry(cm, "kubectl-create")["fieldsV1"],
                         {"f:data": {".": {}}})
        rv = cm["metadata"]["resourceVersion"]
        same = fk.edit_configmap("cfg", "app", {"c": "3"})
        self.assertEqual((same["metadata"]["resourceVersion"], same["changed"]), (rv, False))
        # entries are sorted by operation, time, manager
        times = [e["time"] for e in cm["metadata"]["managedFields"]]
        self.assertEqual(times, sorted(times))
        s = fk.secret("cfg", "db", {"password": "hunter2"}, time="2026-12-06T02:00:00Z")
        self.assertEqual(s["data"], {"password": "aHVudGVyMg=="})
        self.assertEqual(s["type"], "Opaque")
        self.assertEqual(self.entry(s, "kubectl-create")["fieldsV1"],
                         {"f:data": {".": {}, "f:password": {}}, "f:type": {}})
        s = fk.edit_secret("cfg", "db", {"password": "changed"}, manager="vault-agent",
                           time="2026-12-06T02:10:00Z")
        self.assertEqual(self.entry(s, "vault-agent")["fieldsV1"],
                         {"f:data": {"f:password": {}}})
        s = fk.secret("cfg", "sd", {"token": "t0k"}, string_data=True, manager="helm")
        self.assertEqual(s["data"], {"token": "dDBr"})
        self.assertNotIn("stringData", s)
        self.assertEqual(self.entry(s, "helm")["fieldsV1"]["f:stringData"],
                         {".": {}, "f:token": {}})
        self.assertNotIn("hunter2", fk.log_tail(n=1 << 30))
        with self.assertRaises(Exception) as e:
            fk.call("POST", "/admin/configmaps/cfg/x/write", {"stringData": {"a": "b"}})
        self.assertEqual(e.exception.status, 400)

    def test_node_changes(self):
        fk = self.fk
        fk.add_node("n-upg", labels={"nvidia.com/cuda.driver.major": "550"})
        n = fk.set_node_versions("n-upg", kubelet="v1.34.0", time="2026-12-06T01:00:00Z")
        self.assertEqual(n["status"]["nodeInfo"]["kubeletVersion"], "v1.34.0")
        e = self.entry(n, "kubelet", "status")
        self.assertEqual((e["time"], e["fieldsV1"]), ("2026-12-06T01:00:00Z", {"f:status": {
            "f:nodeInfo": {"f:kubeProxyVersion": {}, "f:kubeletVersion": {}}}}))
        n = fk.set_node_taints("n-upg", [{"key": "gpu", "value": "broken",
                                          "effect": "NoSchedule"}])
        self.assertEqual(n["spec"]["taints"][0]["effect"], "NoSchedule")
        self.assertEqual(self.entry(n, "kubectl-taint")["fieldsV1"],
                         {"f:spec": {"f:taints": {}}})
        n = fk.set_node_labels("n-upg", {"nvidia.com/cuda.driver.major": "560"})
        self.assertEqual(n["metadata"]["labels"]["nvidia.com/cuda.driver.major"], "560")
        n = fk.set_node_condition("n-upg", "MemoryPressure", "True",
                                  reason="KubeletHasInsufficientMemory",
                                  message="kubelet has insufficient memory available")
        mp = [c for c in n["status"]["conditions"] if c["type"] == "MemoryPressure"][0]
        self.assertEqual((mp["status"], mp["reason"]), ("True", "KubeletHasInsufficientMemory"))
        self.assertEqual(len([c for c in n["status"]["conditions"]
                              if c["type"] == "MemoryPressure"]), 1)

    def test_statefulset_daemonset(self):
        fk = self.fk
        out = fk.statefulset("ctl", "db", [{"name": "db", "image": "postgres:16.4"}],
                             replicas=3, time="2026-12-06T02:00:00Z")
        sts, cr, pods = out["statefulset"], out["controllerrevision"], out["pods"]
        h = cr["metadata"]["labels"]["controller.kubernetes.io/hash"]
        self.assertEqual(cr["metadata"]["name"], "db-" + h)
        self.assertEqual((cr["revision"], cr["metadata"]["ownerReferences"][0]["kind"],
                          cr["metadata"]["ownerReferences"][0]["controller"]),
                         (1, "StatefulSet", True))
        tmpl = cr["data"]["spec"]["template"]
        self.assertEqual(tmpl["$patch"], "replace")
        self.assertEqual(tmpl["spec"]["containers"][0]["image"], "postgres:16.4")
        self.assertEqual([p["metadata"]["name"] for p in pods], ["db-0", "db-1", "db-2"])
        self.assertEqual(pods[2]["metadata"]["labels"]["controller-revision-hash"], "db-" + h)
        self.assertEqual(pods[2]["metadata"]["labels"]["apps.kubernetes.io/pod-index"], "2")
        self.assertEqual(pods[2]["spec"]["hostname"], "db-2")
        self.assertEqual((sts["status"]["currentRevision"], sts["status"]["updateRevision"],
                          sts["status"]["readyReplicas"]), ("db-" + h, "db-" + h, 3))
        r = fk.rollout_statefulset("ctl", "db", {"db": {"image": "postgres:16.5"}},
                                   time="2026-12-06T03:00:00Z")
        cr2 = r["controllerrevision"]
        self.assertEqual(cr2["revision"], 2)
        self.assertNotEqual(cr2["metadata"]["name"], cr["metadata"]["name"])
        self.assertEqual([p["metadata"]["name"] for p in r["pods"]], ["db-2"])
        self.assertNotEqual(r["pods"][0]["metadata"]["uid"], pods[2]["metadata"]["uid"])
        self.assertEqual(r["pods"][0]["spec"]["containers"][0]["image"], "postgres:16.5")
        st = r["statefulset"]["status"]
        self.assertEqual((st["currentRevision"], st["updateRevision"], st["currentReplicas"],
                          st["updatedReplicas"]),
                         ("db-" + h, cr2["metadata"]["name"], 2, 1))
        self.assertEqual(r["statefulset"]["metadata"]["generation"], 2)
        # a replaced pod keeps its name and gets the update revision
        new0 = fk.replace_pod("ctl", "db-0")
        self.assertEqual(new0["metadata"]["name"], "db-0")
        self.assertEqual(new0["metadata"]["labels"]["controller-revision-hash"],
                         cr2["metadata"]["name"])
        fk.restart("ctl", "db-0", "db", exit_code=1, waiting=True)
        st = fk.get_object("statefulsets", "ctl", "db")["status"]
        self.assertEqual((st["readyReplicas"], st["availableReplicas"], st["updatedReplicas"]),
                         (2, 2, 2))

        out = fk.daemonset("ctl", "agent", [{"name": "agent", "image": "agent:1"}],
                           nodes=["n-a", "n-b"])
        ds, dcr, dpods = out["daemonset"], out["controllerrevision"], out["pods"]
        dh = dcr["metadata"]["labels"]["controller.kubernetes.io/hash"]
        self.assertEqual(sorted(p["spec"]["nodeName"] for p in dpods), ["n-a", "n-b"])
        for p in dpods:
            self.assertEqual(p["metadata"]["labels"]["controller-revision-hash"], dh)
            self.assertEqual(p["metadata"]["labels"]["pod-template-generation"], "1")
            self.assertTrue(p["metadata"]["name"].startswith("agent-"))
        self.assertEqual((ds["status"]["desiredNumberScheduled"], ds["status"]["numberReady"]),
                         (2, 2))
        r = fk.rollout_daemonset("ctl", "agent", {"agent": {"image": "agent:2"}})
        self.assertEqual(r["controllerrevision"]["revision"], 2)
        self.assertEqual(r["pods"][0]["metadata"]["labels"]["pod-template-generation"], "2")
        self.assertEqual(r["daemonset"]["status"]["updatedNumberScheduled"], 1)
        with self.assertRaises(Exception) as e:
            fk.rollout_daemonset("ctl", "agent", {"agent": {"image": "agent:2"}})
        self.assertIn("changes nothing", e.exception.body["error"])

    def test_job_cronjob(self):
        fk = self.fk
        out = fk.job("ctl", "migrate", [{"name": "m", "image": "migrate:3"}])
        job, pod = out["job"], out["pods"][0]
        uid = job["metadata"]["uid"]
        self.assertEqual(pod["metadata"]["labels"]["batch.kubernetes.io/job-name"], "migrate")
        self.assertEqual(pod["metadata"]["labels"]["batch.kubernetes.io/controller-uid"], uid)
        self.assertEqual(pod["metadata"]["ownerReferences"][0]["kind"], "Job")
        self.assertEqual(pod["spec"]["restartPolicy"], "OnFailure")
        self.assertEqual((job["status"]["active"], job["status"]["ready"]), (1, 1))
        fk.restart("ctl", pod["metadata"]["name"], "m", exit_code=2, waiting=True)
        self.assertEqual(fk.get_object("jobs", "ctl", "migrate")["status"]["ready"], 0)
        fk.cronjob("ctl", "nightly", [{"name": "report", "image": "report:1"}],
                   schedule="0 3 * * *")
        r = fk.run_cronjob("ctl", "nightly", time="2026-12-06T03:00:00Z")
        jmd = r["job"]["metadata"]
        self.assertEqual(jmd["name"], "nightly-29942100")  # minutes since the epoch
        self.assertEqual(jmd["ownerReferences"][0]["kind"], "CronJob")
        self.assertEqual(jmd["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"],
                         "2026-12-06T03:00:00Z")
        self.assertEqual(r["pods"][0]["metadata"]["ownerReferences"][0]["name"],
                         "nightly-29942100")
        self.assertEqual(r["cronjob"]["status"]["active"][0]["name"], "nightly-29942100")
        self.assertEqual(r["cronjob"]["status"]["lastScheduleTime"], "2026-12-06T03:00:00Z")
        with self.assertRaises(Exception) as e:
            fk.run_cronjob("ctl", "nightly", time="2026-12-06T03:00:00Z")
        self.assertEqual(e.exception.status, 409)
        with self.assertRaises(Exception) as e:
            fk.job("ctl", "migrate", ["m"])
        self.assertEqual(e.exception.status, 409)

    def test_other_workloads_defaults(self):
        fk = self.fk
        sts = fk.create_object("statefulsets", {
            "metadata": {"name": "db", "namespace": "wd"},
            "spec": {"serviceName": "db", "replicas": 2, "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "postgres:16.4"}]}}},
            "status": {"replicas": 2, "readyReplicas": 2, "currentRevision": "db-6c8f9d7b5",
                       "updateRevision": "db-6c8f9d7b5"}}, manager="kubectl-client-side-apply")
        self.assertEqual(sts["spec"]["selector"], {"matchLabels": {"app": "db"}})
        self.assertEqual(sts["spec"]["updateStrategy"]["type"], "RollingUpdate")
        self.assertEqual(sts["metadata"]["generation"], 1)
        self.assertEqual(sts["status"]["updateRevision"], "db-6c8f9d7b5")
        self.assertIn("f:spec", self.entry(sts, "kubectl-client-side-apply")["fieldsV1"])
        self.assertNotIn("f:status", self.entry(sts, "kubectl-client-side-apply")["fieldsV1"])
        cr = fk.create_object("controllerrevisions", {
            "metadata": {"name": "db-6c8f9d7b5", "namespace": "wd"}, "revision": 3,
            "data": {"spec": {"template": {"spec": {"containers": [{"name": "db"}]}}}}})
        self.assertEqual((cr["revision"], cr["kind"], cr["apiVersion"]),
                         (3, "ControllerRevision", "apps/v1"))
        self.assertNotIn("generation", cr["metadata"])
        with self.assertRaises(Exception) as e:
            fk.create_object("controllerrevisions", {"metadata": {"name": "x"}})
        self.assertIn("revision", e.exception.body["error"])
        job = fk.create_object("jobs", {"metadata": {"name": "m", "namespace": "wd"},
                                        "spec": {"template": {"spec": {"containers": [
                                            {"name": "m"}]}}}})
        uid = job["metadata"]["uid"]
        self.assertEqual(job["spec"]["selector"],
                         {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
        self.assertEqual(job["spec"]["template"]["metadata"]["labels"][
            "batch.kubernetes.io/job-name"], "m")
        self.assertEqual(job["spec"]["template"]["spec"]["restartPolicy"], "Never")
        self.assertEqual(job["spec"]["backoffLimit"], 6)
        with self.assertRaises(Exception) as e:
            fk.create_object("cronjobs", {"metadata": {"name": "c"}, "spec": {}})
        self.assertIn("schedule", e.exception.body["error"])
        st = fk.state()
        self.assertGreaterEqual(st["objects"]["statefulsets"], 1)


if __name__ == "__main__":
    sys.argv = strip_krc_arg(sys.argv)
    unittest.main(verbosity=2)
