#!/usr/bin/env python3
"""latency_server: the API server and the Slack sink of krc's alert-latency benchmark.

Two modes, each meant to run in its own process (so that the Slack sink's arrival times are
not delayed by the API server's Python threads, and the other way round):

  latency_server.py api   --state-dir DIR [--churn-pods 1000] [--measured-pods 240]
                          [--measured-prefix lat] [--webhooks 10] [--pod-size 10240]
  latency_server.py slack --state-dir DIR [--min-gap-ms 900]

api: a TLS Kubernetes API server (bearer token, test CA from the openssl CLI) holding
churn pods (~10 KB each, from bench/podgen.py) and measured pods. It serves the streaming list
(ADDED for every pod, then the initial-events-end BOOKMARK) followed by the watch, plain
watches from a resourceVersion, one-page LISTs, and for every pod its events (by
involvedObject.uid), its node, the node's events and the previous container log.

On the watch it streams background churn: MODIFIED events of the churn pods whose status
changes (readiness flips) without any restart, at --rate events/s, pre-encoded at start-up and
written in batches (one HTTP chunk per batch, resourceVersion patched in place). At scheduled
times it writes a restart event of a measured pod (app container's restartCount 0 -> 1,
lastState OOMKilled) as its own chunk and records CLOCK_MONOTONIC just after the write returned.

Admin API (plain HTTP on 127.0.0.1; the port is in ready.json):
  GET  /stats                 counters: events/bytes written, per-second churn, requests served
  POST /churn?rate=N          change the churn rate (0 stops it)
  POST /schedule              body {"restarts": [{"pod": NAME, "delay_s": S}, ...]}: restart
                              those measured pods S seconds from now (relative to the request)
  GET  /injections            [{pod, uid, write_mono_ns, write_wall_ns, due_mono_ns}, ...]
  GET  /requests              per-pod log/events fetch counts

slack: a minimal HTTP/1.1 keep-alive webhook sink. Every POST /services/... is answered 200
"ok" (or 429 with Retry-After: 1 when it comes less than --min-gap-ms after the previous
accepted POST to the same webhook, like Slack's one-message-per-second limit) and recorded with
CLOCK_MONOTONIC taken once its body was read. GET /_posts returns the records.

Both write ready.json into the state directory once listening ({"api_port", "admin_port"} or
{"port"}); api also writes ca.crt, token and kubeconfig. Standard library only (Python 3.11).
SIGTERM/SIGINT stop them.
"""

from __future__ import annotations

import argparse
import bisect
import hmac
import http.server
import json
import logging
import os
import re
import secrets
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import podgen  # noqa: E402  (bench/podgen.py: realistic ~10 KB pods)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests/lib'))
from testtls import make_certs, run_openssl, write_atomic  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                                'tests/fakekube'))
import fakekube  # noqa: E402  (the test fake: its server plumbing and Status objects)
from fakekube import ApiError, status_obj  # noqa: E402

LOG = logging.getLogger("latency_server")

RV_WIDTH = 12
RV_SENTINEL = "9" * RV_WIDTH  # placeholder patched in place with the event's resourceVersion
RV_BASE = 100000000000  # keeps every resourceVersion RV_WIDTH digits long
BATCH_PERIOD_S = 0.010  # one churn chunk every 10 ms (50 events at 5k/s)
MAX_CATCH_UP_S = 1.0  # a writer more than this behind schedule skips ahead (counted)


def dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))




# --------------------------------------------------------------------------------------------
# pods and the objects served for a restart


class Pod:
    """One pod: its identity and pre-encoded watch events (bytes, RV_SENTINEL inside)."""

    def __init__(self, index, name, namespace, node, uid):
        self.index = index
        self.name = name
        self.namespace = namespace
        self.node = node
        self.uid = uid
        self.added = b""  # ADDED event, restartCount 0
        self.variants = []  # churn: MODIFIED events without a restart
        self.restart = b""  # measured pods: MODIFIED event with restartCount 1
        self.restarted = False


def pod_dict(index, name, namespace, node, uid, size, ready=True, restarted_at=None):
    pod = podgen.pod_with_size(index, namespace, 0, 1 if restarted_at else 0, size)
    md = pod["metadata"]
    md["name"] = name
    md["uid"] = uid
    md["resourceVersion"] = RV_SENTINEL
    md["generateName"] = name.rsplit("-", 1)[0] + "-"
    md["annotations"].pop("alert-slack-channel", None)  # routes decide, not the annotation
    pod["spec"]["nodeName"] = node
    st = pod["status"]
    app = st["containerStatuses"][0]
    if restarted_at:
        # podgen's crash-looping variant: OOMKilled, exit 137, now waiting in CrashLoopBackOff;
        # here the termination just happened.
        app["restartCount"] = 1
        term = app["lastState"]["terminated"]
        term["startedAt"] = iso(restarted_at - 300)
        term["finishedAt"] = iso(restarted_at)
        app["state"]["waiting"]["message"] = (
            "back-off 10s restarting failed container=app pod=%s_%s(%s)" % (name, namespace, uid))
    elif not ready:
        app["ready"] = False
        for c in st["conditions"]:
            if c["type"] in ("Ready", "ContainersReady"):
                c["status"] = "False"
                c["reason"] = "ContainersNotReady"
                c["message"] = "containers with unready status: [app]"
    return pod


def watch_line(etype, pod) -> bytes:
    b = dumps({"type": etype, "object": pod}).encode() + b"\n"
    if b.count(RV_SENTINEL.encode()) != 1:
        raise RuntimeError("resourceVersion sentinel is not unique in a pod")
    return b


def uid_of(i, salt):
    h = "%032x" % ((i * 0x9E3779B97F4A7C15F39CC0605CEDC835 + salt) & ((1 << 128) - 1))
    return "%s-%s-4%s-8%s-%s" % (h[0:8], h[8:12], h[13:16], h[17:20], h[20:32])


def node_json(name) -> bytes:
    conds = [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory",
         "kubelet has sufficient memory available"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]
    return dumps({
        "kind": "Node", "apiVersion": "v1",
        "metadata": {"name": name, "uid": uid_of(len(name), 77), "resourceVersion": "5501",
                     "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                "node.kubernetes.io/instance-type": "m6i.2xlarge",
                                "topology.kubernetes.io/zone": "eu-west-1a"}},
        "spec": {"podCIDR": "10.244.3.0/24", "providerID": "aws:///eu-west-1a/i-0abc"},
        "status": {
            "capacity": {"cpu": "8", "memory": "32386544Ki", "pods": "110",
                         "ephemeral-storage": "101430960Ki"},
            "allocatable": {"cpu": "7910m", "memory": "31235568Ki", "pods": "110",
                            "ephemeral-storage": "93478772582"},
            "conditions": [{"type": t, "status": s, "reason": r, "message": m,
                            "lastHeartbeatTime": iso(time.time() - 10),
                            "lastTransitionTime": "2026-07-01T00:00:00Z"}
                           for t, s, r, m in conds],
            "nodeInfo": {"kubeletVersion": "v1.32.4", "containerRuntimeVersion":
                         "containerd://1.7.27", "osImage": "Ubuntu 24.04 LTS",
                         "kernelVersion": "6.8.0-1021-aws", "architecture": "amd64",
                         "operatingSystem": "linux"}}}).encode()


def event_obj(ns, pod: Pod, reason, message, etype, count, ts, component="kubelet"):
    return {
        "metadata": {"name": "%s.%x" % (pod.name, abs(hash((reason, ts))) & 0xFFFFFFFF),
                     "namespace": ns, "resourceVersion": "7001",
                     "creationTimestamp": iso(ts)},
        "involvedObject": {"kind": "Pod", "namespace": ns, "name": pod.name, "uid": pod.uid,
                           "apiVersion": "v1", "resourceVersion": "6900",
                           "fieldPath": "spec.containers{app}"},
        "reason": reason, "message": message, "type": etype, "count": count,
        "source": {"component": component, "host": pod.node},
        "firstTimestamp": iso(ts - 600), "lastTimestamp": iso(ts),
        "reportingComponent": component, "reportingInstance": pod.node,
    }


def pod_events_json(pod: Pod, now) -> bytes:
    ns = pod.namespace
    items = [
        event_obj(ns, pod, "Pulled", 'Container image "registry.local/web:1.4.2" already present '
                  "on machine", "Normal", 2, now - 1),
        event_obj(ns, pod, "Created", "Created container: app", "Normal", 2, now - 1),
        event_obj(ns, pod, "Started", "Started container app", "Normal", 2, now - 1),
        event_obj(ns, pod, "BackOff", "Back-off restarting failed container app in pod %s_%s(%s)"
                  % (pod.name, ns, pod.uid), "Warning", 1, now),
    ]
    return dumps({"kind": "EventList", "apiVersion": "v1",
                  "metadata": {"resourceVersion": "7002"}, "items": items}).encode()


EMPTY_EVENTS = dumps({"kind": "EventList", "apiVersion": "v1",
                      "metadata": {"resourceVersion": "7002"}, "items": []}).encode()


def previous_log(pod: Pod, lines=50) -> bytes:
    base = time.time() - 60
    out = []
    for k in range(lines - 3):
        out.append("%s.%09dZ INFO  [worker-%d] handled request id=%08x path=/api/orders "
                   "status=200 duration_ms=%d" % (iso(base + k)[:-1], k * 1000, k % 8,
                                                  k * 2654435761 & 0xFFFFFFFF, 3 + k % 40))
    out.append("%s.000000000Z WARN  memory usage 498Mi of 512Mi limit" % iso(base + 57)[:-1])
    out.append("%s.000000000Z ERROR java.lang.OutOfMemoryError: Java heap space"
               % iso(base + 58)[:-1])
    out.append("%s.000000000Z ERROR \tat com.example.orders.Cache.put(Cache.java:88)"
               % iso(base + 58)[:-1])
    return ("\n".join(out) + "\n").encode()


# --------------------------------------------------------------------------------------------
# shared state


class Injection:
    __slots__ = ("pod", "due_ns", "write_mono_ns", "write_wall_ns", "rv")

    def __init__(self, pod, due_ns):
        self.pod = pod
        self.due_ns = due_ns
        self.write_mono_ns = 0
        self.write_wall_ns = 0
        self.rv = 0


class State:
    def __init__(self, a):
        self.lock = threading.Lock()
        self.wake = threading.Condition(self.lock)
        self.token = secrets.token_urlsafe(32)
        self.rate = a.rate
        self.rv = RV_BASE
        self.pods = []  # churn pods then measured pods
        self.by_name = {}
        self.by_uid = {}
        self.pending = []  # Injection, sorted by due_ns
        self.done = []
        self.counters = {"events_sent": 0, "churn_events": 0, "bytes_sent": 0,
                         "restart_events": 0, "watch_requests": 0, "list_requests": 0,
                         "behind_schedule_skips": 0, "requests": 0}
        self.per_second = {}  # int(monotonic) -> churn events written in that second
        self.fetches = {}  # kind -> count
        self.fetches_by_pod = {}  # pod -> {kind: count}
        self.serve_ns = {}  # kind -> [total_ns, count, max_ns]
        self.active_watch = 0
        self.watch_seq = 0
        t0 = time.time()
        salt = secrets.randbits(64)
        for i in range(a.churn_pods):
            name = "web-%05d-7d9c8b6f5-x7k2p" % i
            p = Pod(i, name, "ns-%03d" % (i % a.namespaces), "node-%03d" % (i % 40),
                    uid_of(i, salt))
            p.added = watch_line("ADDED", pod_dict(i, p.name, p.namespace, p.node, p.uid,
                                                   a.pod_size))
            p.variants = [watch_line("MODIFIED", pod_dict(i, p.name, p.namespace, p.node, p.uid,
                                                          a.pod_size, ready=r))
                          for r in (False, True)]
            self.add_pod(p)
        for j in range(a.measured_pods):
            i = a.churn_pods + j
            hook = j % max(1, a.webhooks)
            name = "%s%d-%04d" % (a.measured_prefix, hook, j)
            p = Pod(i, name, a.measured_namespace, "node-lat-%02d" % (j % 8), uid_of(i, salt))
            p.added = watch_line("ADDED", pod_dict(i, p.name, p.namespace, p.node, p.uid,
                                                   a.pod_size))
            self.add_pod(p)
        self.n_churn = a.churn_pods
        self.nodes = {}
        for p in self.pods:
            if p.node not in self.nodes:
                self.nodes[p.node] = node_json(p.node)
        self.batch_cache = {}
        LOG.info("%d churn pods, %d measured pods pre-encoded in %.1f s (%.1f KB per event)",
                 a.churn_pods, a.measured_pods, time.time() - t0,
                 (sum(len(p.added) for p in self.pods) / max(1, len(self.pods))) / 1024)

    def add_pod(self, p):
        self.pods.append(p)
        self.by_name[(p.namespace, p.name)] = p
        self.by_uid[p.uid] = p

    def count(self, key, n=1):
        with self.lock:
            self.counters[key] = self.counters.get(key, 0) + n

    def fetched(self, kind, pod_name, ns):
        with self.lock:
            self.fetches[kind] = self.fetches.get(kind, 0) + 1
            if pod_name is not None:
                d = self.fetches_by_pod.setdefault(pod_name, {})
                d[kind] = d.get(kind, 0) + 1
            self.counters["requests"] += 1

    def served(self, kind, ns):
        with self.lock:
            s = self.serve_ns.setdefault(kind, [0, 0, 0])
            s[0] += ns
            s[1] += 1
            s[2] = max(s[2], ns)

    def schedule(self, restarts):
        now = time.monotonic_ns()
        out = []
        with self.lock:
            for r in restarts:
                p = self.by_name.get((r.get("namespace") or self.pods[-1].namespace, r["pod"]))
                if p is None or p.index < self.n_churn:
                    raise ValueError("no measured pod %r" % r["pod"])
                if p.restarted:
                    raise ValueError("pod %r was already restarted" % r["pod"])
                p.restarted = True
                # pre-encode now, so the write at the due time costs nothing
                p.restart = watch_line("MODIFIED", pod_dict(
                    p.index, p.name, p.namespace, p.node, p.uid, ARGS.pod_size,
                    restarted_at=time.time() + float(r["delay_s"])))
                inj = Injection(p, now + int(float(r["delay_s"]) * 1e9))
                bisect.insort(self.pending, inj, key=lambda x: x.due_ns)
                out.append(p.name)
            self.wake.notify_all()
        return out

    def stats(self):
        with self.lock:
            c = dict(self.counters)
            c["rate_target"] = self.rate
            c["per_second"] = sorted(self.per_second.items())
            c["fetches"] = dict(self.fetches)
            c["serve_ms"] = {k: {"avg": v[0] / v[1] / 1e6, "max": v[2] / 1e6, "n": v[1]}
                             for k, v in self.serve_ns.items() if v[1]}
            c["pending_restarts"] = len(self.pending)
            c["active_watch"] = self.active_watch
            c["resource_version"] = self.rv
        return c


# --------------------------------------------------------------------------------------------
# API handler


EVENTS_RE = re.compile(r"^/api/v1/namespaces/([^/]+)/events$")
NODE_RE = re.compile(r"^/api/v1/nodes/([^/]+)$")
POD_RE = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)$")
LOG_RE = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)/log$")


class ApiHandler(fakekube.TlsHandlerMixin, http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "latency_server"
    sys_version = ""
    tcp_nodelay = True

    def log_message(self, format, *args):  # noqa: A002 - base class signature
        LOG.debug("%s " + format, self.client_address, *args)

    @property
    def st(self) -> State:
        return self.server.state

    def do_GET(self):
        t0 = time.monotonic_ns()
        parsed = urllib.parse.urlsplit(self.path)
        try:
            q = dict(urllib.parse.parse_qsl(parsed.query, keep_blank_values=True))
            auth = self.headers.get("Authorization", "")
            given = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
            if not given or not hmac.compare_digest(given.encode(), self.st.token.encode()):
                raise ApiError(401, "Unauthorized", "Unauthorized")
            kind = self.route(parsed.path, q)
            if kind:
                self.st.served(kind, time.monotonic_ns() - t0)
        except ApiError as e:
            LOG.info("GET %s -> %d %s", parsed.path, e.code, e.message)
            self.send_body(e.code, dumps(status_obj(e.code, e.reason, e.message)).encode())
        except (ConnectionError, ssl.SSLError, socket.timeout, OSError) as e:
            LOG.info("GET %s: client went away: %s", parsed.path, e)
            self.close_connection = True

    def send_body(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def route(self, path, q):
        st = self.st
        if path == "/api/v1/pods":
            if q.get("watch") in ("true", "1"):
                self.serve_watch(q)
                return None
            self.serve_list()
            return "list"
        m = EVENTS_RE.match(path)
        if m:
            sel = q.get("fieldSelector", "")
            fields = dict(kv.split("=", 1) for kv in sel.replace("!=", "=!").split(",")
                          if "=" in kv)
            if "involvedObject.uid" in fields:
                p = st.by_uid.get(fields["involvedObject.uid"])
                st.fetched("pod_events", p.name if p else None, m.group(1))
                body = pod_events_json(p, time.time()) if p and p.restarted else EMPTY_EVENTS
                self.send_body(200, body)
                return "pod_events"
            st.fetched("node_events", None, m.group(1))
            self.send_body(200, EMPTY_EVENTS)
            return "node_events"
        m = NODE_RE.match(path)
        if m:
            st.fetched("node", None, None)
            body = st.nodes.get(m.group(1))
            if body is None:
                raise ApiError(404, "NotFound", 'nodes "%s" not found' % m.group(1))
            self.send_body(200, body)
            return "node"
        m = LOG_RE.match(path)
        if m:
            p = st.by_name.get((m.group(1), m.group(2)))
            st.fetched("log", m.group(2), m.group(1))
            if p is None:
                raise ApiError(404, "NotFound", 'pods "%s" not found' % m.group(2))
            if not p.restarted or q.get("previous") not in ("true", "1"):
                raise ApiError(400, "BadRequest", 'previous terminated container "app" in pod '
                               '"%s" not found' % p.name)
            body = previous_log(p, int(q.get("tailLines") or 50))
            limit = int(q.get("limitBytes") or 0)
            if limit > 0:
                body = body[:limit]
            self.send_body(200, body, "text/plain")
            return "log"
        m = POD_RE.match(path)
        if m:
            p = st.by_name.get((m.group(1), m.group(2)))
            st.fetched("pod", m.group(2), m.group(1))
            if p is None:
                raise ApiError(404, "NotFound", 'pods "%s" not found' % m.group(2))
            line = p.restart if p.restarted else p.added
            obj = line[line.index(b'"object":') + 9:-2].replace(
                RV_SENTINEL.encode(), b"%d" % st.rv)
            self.send_body(200, obj)
            return "pod"
        raise ApiError(404, "NotFound", "the server could not find the requested resource")

    def serve_list(self):
        st = self.st
        st.count("list_requests")
        with st.lock:
            rv = st.rv
        rvb = b"%d" % rv
        items = []
        for p in st.pods:
            line = p.restart if p.restarted else p.added
            obj = line[line.index(b'"object":') + 9:-2]
            items.append(obj.replace(RV_SENTINEL.encode(), rvb))
        body = b'{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"%d"},' \
               b'"items":[' % rv + b",".join(items) + b"]}"
        self.send_body(200, body)

    # ---- WATCH ----

    def chunk(self, data: bytes):
        self.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n")

    def serve_watch(self, q):
        st = self.st
        streaming = q.get("sendInitialEvents") in ("true", "1")
        if streaming and q.get("resourceVersionMatch") != "NotOlderThan":
            raise ApiError(422, "Invalid", "sendInitialEvents requires "
                           "resourceVersionMatch=NotOlderThan")
        try:
            timeout = int(q.get("timeoutSeconds") or 0)
        except ValueError:
            raise ApiError(400, "BadRequest", "invalid timeoutSeconds") from None
        st.count("watch_requests")
        with st.lock:
            st.watch_seq += 1
            me = st.watch_seq
            st.active_watch = me  # the newest watch gets the churn and the restarts
            st.wake.notify_all()
        deadline = time.monotonic() + timeout if timeout > 0 else None
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        if streaming or q.get("resourceVersion") in (None, "", "0"):
            with st.lock:
                rv = st.rv
            rvb = b"%d" % rv
            buf = []
            size = 0
            for p in st.pods:
                line = p.restart if p.restarted else p.added
                if p.restarted:
                    line = line.replace(b'"type":"MODIFIED"', b'"type":"ADDED"', 1)
                buf.append(line.replace(RV_SENTINEL.encode(), rvb))
                size += len(line)
                if size >= 1 << 20:
                    self.chunk(b"".join(buf))
                    buf, size = [], 0
            if streaming and q.get("allowWatchBookmarks") in ("true", "1"):
                buf.append(b'{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1",'
                           b'"metadata":{"resourceVersion":"%d","annotations":'
                           b'{"k8s.io/initial-events-end":"true"}},"spec":{"containers":null},'
                           b'"status":{}}}\n' % rv)
            if buf:
                self.chunk(b"".join(buf))
            self.wfile.flush()
        try:
            self.watch_loop(me, deadline)
        finally:
            with st.lock:
                if st.active_watch == me:
                    st.active_watch = 0
        try:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (OSError, ssl.SSLError):
            self.close_connection = True

    def watch_loop(self, me, deadline):
        st = self.st
        pods = st.pods[:st.n_churn]
        n = len(pods)
        sentinel_off = [[v.index(RV_SENTINEL.encode()) for v in p.variants] for p in pods]
        k = 0  # churn cursor
        flip = 0
        next_batch = time.monotonic()
        last_bookmark = time.monotonic()
        sock_write = self.wfile.write
        while True:
            now_ns = time.monotonic_ns()
            now = now_ns / 1e9
            if deadline is not None and now >= deadline:
                LOG.info("watch %d: timeoutSeconds reached", me)
                return
            with st.lock:
                if st.active_watch != me:
                    LOG.info("watch %d: superseded by a newer watch", me)
                    return
                due = []
                while st.pending and st.pending[0].due_ns <= now_ns:
                    due.append(st.pending.pop(0))
                rate = st.rate
                for inj in due:
                    st.rv += 1
                    inj.rv = st.rv
            for inj in due:
                line = inj.pod.restart.replace(RV_SENTINEL.encode(), b"%d" % inj.rv, 1)
                sock_write(b"%x\r\n" % len(line) + line + b"\r\n")
                inj.write_mono_ns = time.monotonic_ns()
                inj.write_wall_ns = time.time_ns()
                with st.lock:
                    st.done.append(inj)
                    st.counters["restart_events"] += 1
                    st.counters["events_sent"] += 1
                    st.counters["bytes_sent"] += len(line)
            if rate > 0 and now >= next_batch:
                if now - next_batch > MAX_CATCH_UP_S:
                    next_batch = now
                    st.count("behind_schedule_skips")
                per = max(1, int(round(rate * BATCH_PERIOD_S)))
                parts = [b""]
                offs = []
                pos = 0
                for _ in range(per):
                    v = pods[k].variants[flip]
                    offs.append(pos + sentinel_off[k][flip])
                    parts.append(v)
                    pos += len(v)
                    k += 1
                    if k == n:
                        k = 0
                        flip ^= 1
                with st.lock:
                    rv0 = st.rv + 1
                    st.rv += per
                hdr = b"%x\r\n" % pos
                parts[0] = hdr
                parts.append(b"\r\n")
                buf = bytearray(b"".join(parts))
                h = len(hdr)
                for j, off in enumerate(offs):
                    buf[h + off:h + off + RV_WIDTH] = b"%d" % (rv0 + j)
                sock_write(buf)
                next_batch += per / rate
                sec = int(time.monotonic())
                with st.lock:
                    st.counters["events_sent"] += per
                    st.counters["churn_events"] += per
                    st.counters["bytes_sent"] += pos
                    st.per_second[sec] = st.per_second.get(sec, 0) + per
                continue
            if time.monotonic() - last_bookmark > 5.0:
                with st.lock:
                    rv = st.rv
                self.chunk(b'{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1",'
                           b'"metadata":{"resourceVersion":"%d"},"spec":{"containers":null},'
                           b'"status":{}}}\n' % rv)
                last_bookmark = time.monotonic()
            # sleep until the next batch, the next restart, or a change
            with st.lock:
                wait = 1.0
                if st.rate > 0:
                    wait = min(wait, next_batch - time.monotonic())
                if st.pending:
                    wait = min(wait, (st.pending[0].due_ns - time.monotonic_ns()) / 1e9)
                if wait > 0:
                    st.wake.wait(wait)


# --------------------------------------------------------------------------------------------
# admin handler


class AdminHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002
        LOG.debug("admin " + format, *args)

    def reply(self, code, obj):
        body = dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        st = self.server.state
        path = urllib.parse.urlsplit(self.path).path
        if path == "/stats":
            return self.reply(200, st.stats())
        if path == "/injections":
            with st.lock:
                out = [{"pod": i.pod.name, "uid": i.pod.uid, "rv": i.rv,
                        "due_mono_ns": i.due_ns, "write_mono_ns": i.write_mono_ns,
                        "write_wall_ns": i.write_wall_ns} for i in st.done]
            return self.reply(200, out)
        if path == "/requests":
            with st.lock:
                return self.reply(200, {"fetches": dict(st.fetches),
                                        "by_pod": dict(st.fetches_by_pod)})
        return self.reply(404, {"error": "unknown path"})

    def do_POST(self):
        st = self.server.state
        parsed = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(parsed.query))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        try:
            if parsed.path == "/churn":
                with st.lock:
                    st.rate = max(0, int(q.get("rate", "0")))
                    st.wake.notify_all()
                return self.reply(200, {"rate": st.rate})
            if parsed.path == "/schedule":
                names = st.schedule(json.loads(body)["restarts"])
                return self.reply(200, {"scheduled": len(names)})
        except (ValueError, KeyError, TypeError) as e:
            return self.reply(400, {"error": str(e)})
        return self.reply(404, {"error": "unknown path"})


# --------------------------------------------------------------------------------------------
# Slack sink


POD_NAME_RE = re.compile(rb"\b([a-z]+\d-\d{4}|storm-\d{3,4})\b")


class SinkState:
    def __init__(self, min_gap_ms):
        self.lock = threading.Lock()
        self.posts = []
        self.last_ok = {}  # path -> monotonic ns of the last accepted POST
        self.min_gap_ns = int(min_gap_ms * 1e6)


class SlackHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002
        LOG.debug("slack " + format, *args)

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def reply(self, code, body: bytes, ctype="text/html", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        t = time.monotonic_ns()
        wall = time.time_ns()
        st = self.server.state
        path = self.path
        if not path.startswith("/services/"):
            return self.reply(404, b"no_service")
        names = [m.decode() for m in POD_NAME_RE.findall(body)]
        text = ""
        try:
            text = json.loads(body).get("text", "")[:300]
        except (ValueError, AttributeError):
            pass
        with st.lock:
            last = st.last_ok.get(path)
            limited = last is not None and t - last < st.min_gap_ns
            if not limited:
                st.last_ok[path] = t
            st.posts.append({"path": path, "mono_ns": t, "wall_ns": wall, "bytes": len(body),
                             "pods": list(dict.fromkeys(names)), "text": text,
                             "status": 429 if limited else 200})
        if limited:
            return self.reply(429, b"rate_limited", extra=(("Retry-After", "1"),))
        return self.reply(200, b"ok")

    def do_GET(self):
        if self.path == "/_posts":
            with self.server.state.lock:
                body = dumps(self.server.state.posts).encode()
            return self.reply(200, body, "application/json")
        return self.reply(404, b"not found")


# --------------------------------------------------------------------------------------------
# setup


Server = fakekube.TlsHttpServer




def serve_forever(servers, ready_path, ready):
    fakekube.serve_in_threads(servers, poll_interval=0.5)
    write_atomic(ready_path, (dumps(ready) + "\n").encode(), 0o644)
    fakekube.wait_for_stop_signal()
    for s in servers:
        s.shutdown()


ARGS = None


def main(argv=None):
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("api", "slack"))
    ap.add_argument("--state-dir", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--admin-port", type=int, default=0)
    ap.add_argument("--rate", type=int, default=5000, help="churn events/s (default 5000)")
    ap.add_argument("--churn-pods", type=int, default=1000)
    ap.add_argument("--measured-pods", type=int, default=240)
    ap.add_argument("--measured-prefix", default="lat",
                    help="measured pod names are PREFIX<webhook>-<NNNN> (default lat)")
    ap.add_argument("--measured-namespace", default="bench-lat")
    ap.add_argument("--webhooks", type=int, default=10,
                    help="measured pod j goes to webhook j %% N (its name carries the digit)")
    ap.add_argument("--namespaces", type=int, default=20)
    ap.add_argument("--pod-size", type=int, default=10240)
    ap.add_argument("--min-gap-ms", type=float, default=900.0,
                    help="slack: answer 429 to a POST this soon after the previous one to the "
                         "same webhook (default 900)")
    ap.add_argument("--log-level", default="INFO")
    a = ap.parse_args(argv)
    ARGS = a
    if a.webhooks < 1 or a.webhooks > 10:
        ap.error("--webhooks must be 1..10 (one digit in the pod name)")
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, a.log_level.upper(),
                                                         logging.INFO),
                        format="%(asctime)s latency_server %(levelname)s %(message)s")
    sys.setswitchinterval(0.0005)
    os.makedirs(a.state_dir, exist_ok=True)
    ready_path = os.path.join(a.state_dir, "ready.json")
    if a.mode == "slack":
        srv = Server(("127.0.0.1", a.port), SlackHandler, SinkState(a.min_gap_ms))
        LOG.info("slack sink on 127.0.0.1:%d", srv.server_address[1])
        serve_forever([srv], ready_path, {"port": srv.server_address[1], "pid": os.getpid()})
        return 0
    make_certs(a.state_dir, 'latency-bench-ca')
    st = State(a)
    token_path = os.path.join(a.state_dir, "token")
    write_atomic(token_path, st.token.encode())
    ctx = fakekube.server_ssl_context(a.state_dir, minimum_tls12=False)
    api = Server(("127.0.0.1", a.port), ApiHandler, st, ctx)
    admin = Server(("127.0.0.1", a.admin_port), AdminHandler, st)
    port = api.server_address[1]
    write_atomic(os.path.join(a.state_dir, "kubeconfig"),
               fakekube.kubeconfig_text("https://127.0.0.1:%d" % port,
                               os.path.join(a.state_dir, "ca.crt"), token_path, name="bench",
                               namespace=None).encode())
    LOG.info("API on https://127.0.0.1:%d, admin on 127.0.0.1:%d", port,
             admin.server_address[1])
    serve_forever([api, admin], ready_path,
                  {"api_port": port, "admin_port": admin.server_address[1], "pid": os.getpid()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
