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

    def json(self, method, path, body=None):
        code, hdrs, data = self.request(method, path, body)
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

    def __init__(self, raw, path):
        self.sock = raw.connect(timeout=60)
        raw.send(self.sock, "GET", path)
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


if __name__ == "__main__":
    sys.argv = strip_krc_arg(sys.argv)
    unittest.main(verbosity=2)
