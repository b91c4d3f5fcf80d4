#!/usr/bin/env python3
"""benchserver: a lightweight TLS Kubernetes API server for krc's performance benchmarks.

Unlike tests/fakekube (which stores every object), this server stores no pods: it synthesises
N pods from a ~10 KB template (bench/podgen.py: labels, annotations, ownerReferences, a large
managedFields block, two containers and a sidecar) with a unique name, uid and resourceVersion
per pod, and only keeps one restart counter per pod (a few bytes) so that LIST pages, the
streaming list and watch events stay consistent with each other.

It serves:
  GET /version, /api, /apis, /api/v1           (legacy discovery, enough for kubectl 1.27+)
  GET /api/v1/pods?limit=&continue=            paginated LIST (all pages share one resourceVersion)
  GET /api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan
                                               streaming list: N ADDED events, then the
                                               initial-events-end BOOKMARK, then the watch
  GET /api/v1/pods?watch=true&resourceVersion=RV   plain watch
and what krc's collector asks for when it diagnoses a restart (answered from templates in a few
microseconds each, so that a restart storm measures krc rather than this server):
  GET /api/v1/namespaces/NS/events?fieldSelector=involvedObject.uid=UID
                                               EventList: five kubelet/scheduler events of that
                                               pod (Scheduled, Pulled, Created, Started, BackOff)
  GET /api/v1/namespaces/default/events?fieldSelector=involvedObject.kind=Node,...
                                               an empty EventList (any selector without a uid)
  GET /api/v1/nodes/NODE                       a ~8 KB Node (labels, managedFields, images)
  GET /api/v1/namespaces/NS/pods/POD/log       200 text/plain: the last tailLines (default all
                                               50) timestamped lines of an OOM-killed JVM
  GET /api/v1/namespaces/NS/pods/POD           the pod as it is now
A watch stays open (a BOOKMARK every --bookmark-interval seconds) until timeoutSeconds, until the
admin API tells it to stream events or to expire (in-band ERROR 410), or until shutdown.

Admin API (plain HTTP on 127.0.0.1, for run_bench.py):
  GET  /stats                                   counters, open watches, resourceVersion
  POST /events?count=M&restart_every=K&type=MODIFIED&prerender=0|1
                                                every open watch streams M MODIFIED events as fast
                                                as its client reads; every Kth event (and the last
                                                one) raises the app container's restartCount;
                                                prerender=1 renders them all first (M x 10 KB of
                                                memory) so that the server is never the bottleneck
  POST /expire                                  every open watch gets ERROR 410 Expired and ends
  POST /config?streaming=0|1                    0: answer streaming-list requests with 422
  POST /reset                                   all restart counters back to 0

Run:  python3 benchserver.py --state-dir DIR --pods 10000
The state directory receives ca.crt, token, kubeconfig and ready.json ({"api_port",
"admin_port", "pid"}) once the server listens.
"""

from __future__ import annotations

import argparse
import array
import base64
import hmac
import http.server
import json
import logging
import os
import queue
import secrets
import select
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import podgen  # noqa: E402  (bench/podgen.py, the shared realistic pod generator)
import benchworkloads  # noqa: E402  (bench/benchworkloads.py: --replicasets)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests/lib'))
from testtls import make_certs, run_openssl, write_atomic  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                                'tests/fakekube'))
import fakekube  # noqa: E402  (the test fake: its server plumbing and Status objects)
from fakekube import ApiError, status_obj  # noqa: E402

LOG = logging.getLogger("benchserver")

SERVER_VERSION = {
    "major": "1", "minor": "32", "gitVersion": "v1.32.4",
    "gitCommit": "59526cd4867447956156ae3a602fcbac10a2c335", "gitTreeState": "clean",
    "buildDate": "2025-04-22T16:02:27Z", "goVersion": "go1.23.6", "compiler": "gc",
    "platform": "linux/amd64",
}

POD_RESOURCES = {
    "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "v1",
    "resources": [{"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
                   "verbs": ["get", "list", "watch"], "shortNames": ["po"],
                   "categories": ["all"]}],
}

TABLE_COLUMNS = json.dumps([
    {"name": n, "type": t, "format": f, "description": d, "priority": p}
    for n, t, f, d, p in (
        ("Name", "string", "name", "Name must be unique within a namespace.", 0),
        ("Ready", "string", "", "The aggregate readiness state of this pod.", 0),
        ("Status", "string", "", "The aggregate status of the containers in this pod.", 0),
        ("Restarts", "string", "", "The number of times the containers in this pod have been "
         "restarted and when the last container in this pod has restarted.", 0),
        ("Age", "string", "", "CreationTimestamp is a timestamp representing the server time "
         "when this object was created.", 0),
        ("IP", "string", "", "IP address allocated to the pod.", 1),
        ("Node", "string", "", "Name of the node this pod is assigned to.", 1),
        ("Nominated Node", "string", "", "Name of the node nominated by the scheduler.", 1),
        ("Readiness Gates", "string", "", "Pod readiness gates.", 1))],
    separators=(",", ":"))

BATCH_BYTES = 64 * 1024  # bytes rendered before one chunked write (larger buffers hit
# mmap-backed allocations whose page faults make join/encode ten times slower)


def dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"))




# --------------------------------------------------------------------------------------------
# pod templates

# pod i has uid bits i * UID_MUL + UID_ADD (mod 2^128): odd multiplier, so pod_index_by_uid()
# can invert it from the low bits the uid string keeps
UID_MUL = 0x9E3779B97F4A7C15F39CC0605CEDC835
UID_ADD = 0x1234567
UID_LOW_BITS = 60  # the uid string keeps the low 60 bits of the 128-bit value intact
UID_LOW_MASK = (1 << UID_LOW_BITS) - 1
UID_MUL_INV = pow(UID_MUL & UID_LOW_MASK, -1, 1 << UID_LOW_BITS)


class PodTemplates:
    """%-format templates of one pod, rendered with a dict per pod.

    Built once from podgen.py with sentinel strings in the fields that differ between pods,
    so rendering a 10 KB pod is one C-level string format (a few microseconds)."""

    SENTINELS = {
        "@@NAME@@": "name", "@@UID@@": "uid", "@@RV@@": "rv", "@@NS@@": "ns",
        "@@NODE@@": "node",
    }

    def __init__(self, size, namespaces, nodes):
        self.namespaces = max(1, namespaces)
        self.nodes = max(1, nodes)
        self.item = {}   # restarted (0/1) -> list item template (no kind/apiVersion)
        self.event = {}  # restarted (0/1) -> watch line template, %(type)s for the type
        self.row = {}  # restarted (0/1) -> Table row template
        for restarted in (0, 1):
            pod = podgen.pod_with_size(0, "ns-000", 1000, restarted, size)
            del pod["kind"]
            del pod["apiVersion"]
            md = pod["metadata"]
            md["name"], md["uid"], md["resourceVersion"], md["namespace"] = (
                "@@NAME@@", "@@UID@@", "@@RV@@", "@@NS@@")
            pod["spec"]["nodeName"] = "@@NODE@@"
            app = pod["status"]["containerStatuses"][0]
            assert app["name"] == "app"
            app["restartCount"] = "@@RC@@"
            if restarted:
                # the CrashLoopBackOff message names the pod
                app["state"]["waiting"]["message"] = (
                    "back-off 2m40s restarting failed container=app pod=@@NAME@@_@@NS@@(@@UID@@)")
            text = dumps(pod).replace("%", "%%").replace('"@@RC@@"', "%(rc)d")
            for s, key in self.SENTINELS.items():
                text = text.replace(s, "%%(%s)s" % key)
            self.item[restarted] = text
            self.event[restarted] = ('{"type":"%(type)s","object":{"kind":"Pod",'
                                     '"apiVersion":"v1",' + text[1:] + "}\n")
            # server-side printing (kubectl's default output): one Table row whose object
            # is the pod's PartialObjectMetadata, as kube-apiserver sends by default
            meta = dumps({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                          "metadata": md}).replace("%", "%%")
            for s, key in self.SENTINELS.items():
                meta = meta.replace(s, "%%(%s)s" % key)
            cells = ('["%%(name)s","%s","%s","%%(rc)d%s","125d","10.244.3.17","%%(node)s",'
                     '"<none>","<none>"]' % ("1/2" if restarted else "2/2",
                                             "CrashLoopBackOff" if restarted else "Running",
                                             " (5m ago)" if restarted else ""))
            self.row[restarted] = '{"cells":%s,"object":%s}' % (cells, meta)

    def fields(self, i, rv, rc, etype="ADDED"):
        u = (i * UID_MUL + UID_ADD) & ((1 << 128) - 1)
        h = "%032x" % u
        return {
            "name": "web-%06d-7d9c8b6f5-x7k2p" % i,
            "uid": "%s-%s-4%s-8%s-%s" % (h[0:8], h[8:12], h[13:16], h[17:20], h[20:32]),
            "rv": rv, "ns": "ns-%03d" % (i % self.namespaces),
            "node": "node-%03d" % (i % self.nodes), "rc": rc, "type": etype,
        }

    def render_item(self, i, rv, rc):
        return self.item[1 if rc else 0] % self.fields(i, rv, rc)

    def render_event(self, etype, i, rv, rc):
        return self.event[1 if rc else 0] % self.fields(i, rv, rc, etype)

    def render_row(self, i, rv, rc):
        return self.row[1 if rc else 0] % self.fields(i, rv, rc)

    def render_table_event(self, etype, i, rv, rc, with_columns):
        return '{"type":"%s","object":{"kind":"Table","apiVersion":"meta.k8s.io/v1",' \
            '"metadata":{"resourceVersion":"%d"},"columnDefinitions":%s,"rows":[%s]}}\n' % (
                etype, rv, TABLE_COLUMNS if with_columns else "null", self.render_row(i, rv, rc))


# --------------------------------------------------------------------------------------------
# what krc's collector GETs after a restart: pod events, the node, node events, previous log



def event_item(ns, name, uid, node, reason, message, etype, count, first, last, component,
               seq):
    """One core/v1 Event as kube-apiserver returns it (managedFields included)."""
    ev_name = "%s.%016x" % (name, 0x1807d3ad1141fde8 + seq)
    src = {"component": component}
    if component == "kubelet":
        src["host"] = node
    io = {"kind": "Pod", "namespace": ns, "name": name, "uid": uid, "apiVersion": "v1",
          "resourceVersion": "1000"}
    if component == "kubelet":
        io["fieldPath"] = "spec.containers{app}"
    return {
        "metadata": {
            "name": ev_name, "namespace": ns, "uid": "7c0e%04x-52a1-4f7b-9d3e-%012x" % (seq, seq),
            "resourceVersion": str(2000 + seq), "creationTimestamp": first,
            "managedFields": [{"manager": component, "operation": "Update",
                               "apiVersion": "v1", "time": last, "fieldsType": "FieldsV1",
                               "fieldsV1": {"f:count": {}, "f:firstTimestamp": {},
                                            "f:involvedObject": {}, "f:lastTimestamp": {},
                                            "f:message": {}, "f:reason": {},
                                            "f:reportingComponent": {},
                                            "f:reportingInstance": {}, "f:source": {
                                                "f:component": {}, "f:host": {}},
                                            "f:type": {}}}]},
        "involvedObject": io, "reason": reason, "message": message, "source": src,
        "firstTimestamp": first, "lastTimestamp": last, "count": count, "type": etype,
        "eventTime": None, "reportingComponent": component,
        "reportingInstance": node if component == "kubelet" else "",
    }


class CollectorTemplates:
    """Pre-rendered answers to the collector's four GETs. Events and the node are %-format
    templates (one C-level format per request); the log is fixed bytes."""

    def __init__(self, created=1785394800):
        def iso(t):
            return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
        started, finished = created + 602, created + 702  # podgen's OOMKilled lastState
        sent = {"ns": "@@NS@@", "name": "@@NAME@@", "uid": "@@UID@@", "node": "@@NODE@@"}
        items = [
            event_item(sent["ns"], sent["name"], sent["uid"], sent["node"], "Scheduled",
                       "Successfully assigned %s/%s to %s" % (sent["ns"], sent["name"],
                                                              sent["node"]),
                       "Normal", 1, iso(created), iso(created), "default-scheduler", 1),
            event_item(sent["ns"], sent["name"], sent["uid"], sent["node"], "Pulled",
                       'Container image "registry.local/web:1.4.2" already present on machine',
                       "Normal", "@@RC1@@", iso(created + 2), iso(finished + 40), "kubelet", 2),
            event_item(sent["ns"], sent["name"], sent["uid"], sent["node"], "Created",
                       "Created container app", "Normal", "@@RC1@@", iso(created + 2),
                       iso(finished + 40), "kubelet", 3),
            event_item(sent["ns"], sent["name"], sent["uid"], sent["node"], "Started",
                       "Started container app", "Normal", "@@RC1@@", iso(created + 2),
                       iso(finished + 40), "kubelet", 4),
            event_item(sent["ns"], sent["name"], sent["uid"], sent["node"], "BackOff",
                       "Back-off restarting failed container app in pod %s_%s(%s)"
                       % (sent["name"], sent["ns"], sent["uid"]),
                       "Warning", "@@RC@@", iso(finished + 1), iso(finished + 1), "kubelet", 5),
        ]
        text = dumps({"kind": "EventList", "apiVersion": "v1",
                      "metadata": {"resourceVersion": "@@RV@@"}, "items": items})
        text = text.replace("%", "%%").replace('"@@RC1@@"', "%(rc1)d") \
            .replace('"@@RC@@"', "%(rc)d")
        for s, key in PodTemplates.SENTINELS.items():
            text = text.replace(s, "%%(%s)s" % key)
        self.pod_events = text
        self.empty_events = '{"kind":"EventList","apiVersion":"v1","metadata":' \
            '{"resourceVersion":"%d"},"items":[]}'
        self.node = self.node_template(created, iso)
        lines = []
        t = started
        for k in range(47):
            t += 2
            lines.append("%s.%03dZ  INFO 1 --- [web] [nio-8080-exec-%d] c.e.web.RequestLogFilter"
                         "                : GET /api/v1/orders?customerId=%d&page=0&size=20 -> "
                         "200 (%d ms)" % (iso(t)[:-1], (k * 37) % 1000, k % 40 + 1,
                                           60000 + k * 131, 9 + k % 23))
        lines.append("%s.512Z  WARN 1 --- [web] [nio-8080-exec-12] c.e.web.CacheWarmer"
                     "                     : heap usage 97%% of 512Mi after full GC"
                     % iso(finished - 3)[:-1])
        lines.append("%s.020Z ERROR 1 --- [web] [nio-8080-exec-3] o.a.c.c.C.[.[.[/]."
                     "[dispatcherServlet]    : Servlet.service() threw exception: "
                     "java.lang.OutOfMemoryError: Java heap space" % iso(finished - 1)[:-1])
        lines.append("%s.021Z ERROR 1 --- [web] [nio-8080-exec-3] o.a.c.c.C.[.[.[/]."
                     "[dispatcherServlet]    :     at java.base/java.util.Arrays.copyOf"
                     "(Arrays.java:3537)" % iso(finished - 1)[:-1])
        # timestamps=true: the kubelet prefixes each line with its RFC 3339 receive time
        self.log_lines = {
            True: ["%s.%09dZ %s\n" % (iso(finished - 100 + k * 2)[:-1], 1000 * k + 17, ln)
                   for k, ln in enumerate(lines)],
            False: [ln + "\n" for ln in lines]}
        self.log_tails = {}

    @staticmethod
    def node_template(created, iso):
        images = []
        for k, (repo, tag, size) in enumerate((
                ("registry.local/web", "1.4.2", 318224761),
                ("registry.local/exporter", "0.9", 24117248),
                ("docker.io/fluent/fluent-bit", "3.1", 37381822),
                ("registry.k8s.io/kube-proxy", "v1.32.4", 30897112),
                ("registry.k8s.io/pause", "3.10", 320368),
                ("docker.io/calico/node", "v3.28.1", 118402251),
                ("docker.io/calico/cni", "v3.28.1", 94535610),
                ("registry.k8s.io/coredns/coredns", "v1.11.3", 18562039),
                ("quay.io/prometheus/node-exporter", "v1.8.2", 12034157),
                ("registry.k8s.io/metrics-server/metrics-server", "v0.7.2", 19494617),
                ("docker.io/library/redis", "7.4.1", 45123987),
                ("docker.io/library/postgres", "16.4", 155672034))):
            digest = ("%064x" % ((k + 1) * 0x9E3779B97F4A7C15F39CC0605CEDC835))[-64:]
            images.append({"names": ["%s@sha256:%s" % (repo, digest), "%s:%s" % (repo, tag)],
                           "sizeBytes": size})
        hb = iso(created + 86400 * 30)
        conds = [{"type": t, "status": s, "lastHeartbeatTime": hb,
                  "lastTransitionTime": iso(created - 3600), "reason": r, "message": m}
                 for t, s, r, m in (
                     ("NetworkUnavailable", "False", "CalicoIsUp", "Calico is running on this node"),
                     ("MemoryPressure", "False", "KubeletHasSufficientMemory",
                      "kubelet has sufficient memory available"),
                     ("DiskPressure", "False", "KubeletHasNoDiskPressure",
                      "kubelet has no disk pressure"),
                     ("PIDPressure", "False", "KubeletHasSufficientPID",
                      "kubelet has sufficient PID available"),
                     ("Ready", "True", "KubeletReady", "kubelet is posting ready status"))]
        node = {
            "kind": "Node", "apiVersion": "v1",
            "metadata": {
                "name": "@@NODE@@", "uid": "3f8d2c1a-6b7e-4d5f-9a0b-1c2d3e4f5a6b",
                "resourceVersion": "@@RV@@", "creationTimestamp": iso(created - 3600),
                "labels": {
                    "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                    "beta.kubernetes.io/instance-type": "m6i.2xlarge",
                    "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": "@@NODE@@",
                    "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "m6i.2xlarge",
                    "topology.kubernetes.io/region": "eu-west-1",
                    "topology.kubernetes.io/zone": "eu-west-1b",
                    "node-role.kubernetes.io/worker": "", "pool": "general"},
                "annotations": {
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                    "kubeadm.alpha.kubernetes.io/cri-socket":
                        "unix:///var/run/containerd/containerd.sock",
                    "projectcalico.org/IPv4Address": "10.0.3.17/24",
                    "projectcalico.org/IPv4IPIPTunnelAddr": "10.244.3.1"},
                "managedFields": [
                    {"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
                     "time": iso(created - 3600), "fieldsType": "FieldsV1",
                     "fieldsV1": {"f:metadata": {"f:annotations": {
                         ".": {}, "f:node.alpha.kubernetes.io/ttl": {},
                         "f:volumes.kubernetes.io/controller-managed-attach-detach": {}},
                         "f:labels": {".": {}, "f:beta.kubernetes.io/arch": {},
                                      "f:beta.kubernetes.io/os": {}, "f:kubernetes.io/arch": {},
                                      "f:kubernetes.io/hostname": {}, "f:kubernetes.io/os": {}}},
                         "f:spec": {"f:podCIDR": {}, "f:podCIDRs": {}}}},
                    {"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
                     "time": hb, "fieldsType": "FieldsV1", "subresource": "status",
                     "fieldsV1": {"f:status": {
                         "f:allocatable": {"f:cpu": {}, "f:memory": {}, "f:pods": {}},
                         "f:conditions": {'k:{"type":"%s"}' % c["type"]: {
                             "f:lastHeartbeatTime": {}, "f:lastTransitionTime": {},
                             "f:message": {}, "f:reason": {}, "f:status": {}}
                             for c in conds},
                         "f:images": {}, "f:nodeInfo": {"f:bootID": {},
                                                        "f:kubeletVersion": {}}}}}]},
            "spec": {"podCIDR": "10.244.3.0/24", "podCIDRs": ["10.244.3.0/24"],
                     "providerID": "aws:///eu-west-1b/i-0a1b2c3d4e5f60718"},
            "status": {
                "capacity": {"cpu": "8", "ephemeral-storage": "104845292Ki",
                             "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                             "memory": "32459578Ki", "pods": "110"},
                "allocatable": {"cpu": "7910m", "ephemeral-storage": "95551679124",
                                "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                                "memory": "31442746Ki", "pods": "110"},
                "conditions": conds,
                "addresses": [{"type": "InternalIP", "address": "10.0.3.17"},
                              {"type": "Hostname", "address": "@@NODE@@"}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {"machineID": "5d76a4abca7999d540c3d586ef6432dc",
                             "systemUUID": "4d9e23e1-02f9-47fa-87b3-4345e0765f09",
                             "bootID": "ef59c245-3af8-4cb9-8456-b6ce278af350",
                             "kernelVersion": "6.1.0-25-cloud-amd64",
                             "osImage": "Debian GNU/Linux 12 (bookworm)",
                             "containerRuntimeVersion": "containerd://1.7.22",
                             "kubeletVersion": "v1.32.4", "kubeProxyVersion": "v1.32.4",
                             "operatingSystem": "linux", "architecture": "amd64"},
                "images": images}}
        text = dumps(node).replace("%", "%%")
        for s, key in PodTemplates.SENTINELS.items():
            text = text.replace(s, "%%(%s)s" % key)
        return text

    def render_pod_events(self, f, rv):
        return self.pod_events % dict(f, rc1=f["rc"] + 1, rv=rv)

    def render_node(self, name, rv):
        return self.node % {"node": name, "rv": rv}

    def log_tail(self, n, timestamps):
        """The last n lines (all for n <= 0), cached per (n, timestamps)."""
        lines = self.log_lines[bool(timestamps)]
        n = len(lines) if n <= 0 else min(n, len(lines))
        out = self.log_tails.get((n, bool(timestamps)))
        if out is None:
            out = self.log_tails[(n, bool(timestamps))] = "".join(lines[-n:]).encode()
        return out


def pod_index_by_uid(uid, tpl, n):
    """The pod index whose synthetic uid this is, or None (uids are i*UID_MUL+UID_ADD)."""
    parts = uid.split("-")
    if len(parts) != 5 or len(parts[3]) != 4 or len(parts[4]) != 12:
        return None
    try:
        low = int(parts[3][1:] + parts[4], 16)
    except ValueError:
        return None
    i = ((low - UID_ADD) * UID_MUL_INV) & UID_LOW_MASK
    if i >= n or tpl.fields(i, 0, 0)["uid"] != uid:
        return None
    return i


def pod_index_by_name(ns, name, tpl, n):
    """The pod index of web-NNNNNN-7d9c8b6f5-x7k2p in its namespace, or None."""
    if not name.startswith("web-") or not name[4:10].isdigit():
        return None
    i = int(name[4:10])
    if i >= n:
        return None
    f = tpl.fields(i, 0, 0)
    return i if f["name"] == name and f["ns"] == ns else None


def bookmark_line(rv, end_marker=False):
    md = {"resourceVersion": str(rv)}
    if end_marker:
        md["annotations"] = {"k8s.io/initial-events-end": "true"}
    return dumps({"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1",
                                                 "metadata": md, "spec": {"containers": None},
                                                 "status": {}}}) + "\n"


# --------------------------------------------------------------------------------------------
# shared state


class State:
    def __init__(self, n_pods, templates, bookmark_interval):
        self.n = n_pods
        self.tpl = templates
        self.ctpl = CollectorTemplates()
        self.bookmark_interval = bookmark_interval
        self.lock = threading.Lock()
        self.rc = array.array("i", bytes(4 * n_pods))  # app restartCount per pod
        self.pod_rv = array.array("q", range(1000, 1000 + n_pods))  # last change per pod
        self.rv = 1000 + n_pods  # current resourceVersion
        self.streaming = True
        self.token = ""
        self.watches = {}  # id -> queue.Queue of commands
        self.next_watch = 0
        self.counters = {"list_requests": 0, "list_items": 0, "streaming_lists": 0,
                         "streaming_rejected": 0, "watch_requests": 0, "events_sent": 0,
                         "restart_events_sent": 0, "expired_sent": 0, "event_rounds_done": 0,
                         "bytes_sent": 0, "table_requests": 0, "json_requests": 0,
                         "get_pod_events": 0, "get_other_events": 0, "get_node": 0,
                         "get_log": 0, "get_pod": 0, "get_not_found": 0, "connections": 0}
        self.shutdown = threading.Event()
        self.workloads = None  # benchworkloads.Workloads with --replicasets
        self.open_track_watches = 0
        self.counters["track_requests"] = 0

    def count(self, key, n=1):
        with self.lock:
            self.counters[key] += n

    def stats(self):
        with self.lock:
            return dict(self.counters, open_watches=len(self.watches), resource_version=self.rv,
                        pods=self.n, streaming=self.streaming,
                        open_track_watches=self.open_track_watches,
                        replicasets=self.workloads.n_rs if self.workloads else 0)

    def register_watch(self):
        q = queue.Queue()
        with self.lock:
            wid = self.next_watch
            self.next_watch += 1
            self.watches[wid] = q
        return wid, q

    def unregister_watch(self, wid):
        with self.lock:
            self.watches.pop(wid, None)

    def broadcast(self, cmd):
        with self.lock:
            qs = list(self.watches.values())
        for q in qs:
            q.put(cmd)
        return len(qs)


# --------------------------------------------------------------------------------------------
# API handler


class ApiHandler(fakekube.TlsHandlerMixin, http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "benchserver"
    sys_version = ""

    def log_message(self, format, *args):  # noqa: A002 - base class signature
        LOG.debug("%s " + format, self.client_address, *args)

    @property
    def st(self) -> State:
        return self.server.state

    def do_GET(self):
        parsed = urllib.parse.urlsplit(self.path)
        try:
            self.q = dict(urllib.parse.parse_qsl(parsed.query, keep_blank_values=True))
            if parsed.path != "/version":
                self.check_auth()
            self.route(parsed.path)
        except ApiError as e:
            LOG.info("GET %s -> %d %s", self.path, e.code, e.message)
            self.send_json(e.code, status_obj(e.code, e.reason, e.message))
        except (ConnectionError, ssl.SSLError, socket.timeout, OSError) as e:
            LOG.info("GET %s: client went away: %s", parsed.path, e)
            self.close_connection = True

    def check_auth(self):
        auth = self.headers.get("Authorization", "")
        given = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        if not given or not hmac.compare_digest(given.encode(), self.st.token.encode()):
            raise ApiError(401, "Unauthorized", "Unauthorized")

    def send_json(self, code, obj):
        body = dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def start_chunked(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    @staticmethod
    def frame(text: str) -> bytes:
        """One HTTP chunk. (bytes %-formatting of a large payload is slow: join instead.)"""
        data = text.encode()
        return b"".join((b"%x\r\n" % len(data), data, b"\r\n"))

    def write_chunk(self, text: str):
        self.write_framed(self.frame(text))

    def write_framed(self, framed: bytes):
        self.wfile.write(framed)
        self.st.count("bytes_sent", len(framed))

    def end_chunked(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def wants_table(self):
        return "as=Table" in self.headers.get("Accept", "")

    def route(self, path):
        if path == "/version":
            return self.send_json(200, SERVER_VERSION)
        if path == "/api":
            return self.send_json(200, {"kind": "APIVersions", "versions": ["v1"],
                                        "serverAddressByClientCIDRs": []})
        if path == "/apis":
            return self.send_json(200, {"kind": "APIGroupList", "apiVersion": "v1",
                                        "groups": []})
        if path == "/api/v1":
            return self.send_json(200, POD_RESOURCES)
        if path == "/api/v1/pods":
            if self.q.get("watch") in ("true", "1"):
                return self.serve_watch()
            return self.serve_list()
        if path in benchworkloads.TRACKED and self.st.workloads is not None:
            return self.serve_tracked(path)
        parts = path.split("/")
        # /api/v1/nodes/NAME
        if len(parts) == 5 and parts[3] == "nodes":
            return self.serve_node(parts[4])
        # /api/v1/namespaces/NS/events, /api/v1/namespaces/NS/pods/NAME[/log]
        if len(parts) >= 6 and parts[3] == "namespaces":
            ns = parts[4]
            if len(parts) == 6 and parts[5] == "events":
                return self.serve_events(ns)
            if len(parts) in (7, 8) and parts[5] == "pods":
                if len(parts) == 7:
                    return self.serve_pod(ns, parts[6])
                if parts[7] == "log":
                    return self.serve_log(ns, parts[6])
        self.st.count("get_not_found")
        raise ApiError(404, "NotFound", "the server could not find the requested resource")

    # ---- what krc's collector asks for after a restart ----

    def send_raw(self, code, ctype, body: bytes):
        """Status line, headers and body in one write (one TLS record for small answers)."""
        head = ("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
                "Cache-Control: no-cache, private\r\n\r\n"
                % (code, self.responses.get(code, ("",))[0], ctype, len(body))).encode()
        self.wfile.write(head + body)
        self.st.count("bytes_sent", len(head) + len(body))

    def current_rv(self):
        with self.st.lock:
            return self.st.rv

    def pod_or_404(self, ns, name):
        i = pod_index_by_name(ns, name, self.st.tpl, self.st.n)
        if i is None:
            self.st.count("get_not_found")
            raise ApiError(404, "NotFound", 'pods "%s" not found' % name)
        return i

    def serve_events(self, ns):
        st = self.st
        sel = self.q.get("fieldSelector", "")
        uid = None
        for term in sel.split(","):
            k, _, v = term.partition("=")
            if k == "involvedObject.uid":
                uid = v
        i = pod_index_by_uid(uid, st.tpl, st.n) if uid else None
        if i is not None and st.tpl.fields(i, 0, 0)["ns"] == ns:
            st.count("get_pod_events")
            f = st.tpl.fields(i, 0, st.rc[i])
            body = st.ctpl.render_pod_events(f, self.current_rv())
        else:  # node events in "default", or a uid we never made: nothing recorded
            st.count("get_other_events")
            body = st.ctpl.empty_events % self.current_rv()
        self.send_raw(200, "application/json", body.encode())

    def serve_node(self, name):
        st = self.st
        nodes = st.tpl.nodes
        if not (name.startswith("node-") and name[5:].isdigit() and int(name[5:]) < nodes
                and name == "node-%03d" % int(name[5:])):
            st.count("get_not_found")
            raise ApiError(404, "NotFound", 'nodes "%s" not found' % name)
        st.count("get_node")
        self.send_raw(200, "application/json",
                      st.ctpl.render_node(name, self.current_rv()).encode())

    def serve_pod(self, ns, name):
        st = self.st
        i = self.pod_or_404(ns, name)
        st.count("get_pod")
        body = '{"kind":"Pod","apiVersion":"v1",' + \
            st.tpl.render_item(i, st.pod_rv[i], st.rc[i])[1:]
        self.send_raw(200, "application/json", body.encode())

    def serve_log(self, ns, name):
        st = self.st
        i = self.pod_or_404(ns, name)
        container = self.q.get("container", "app")
        if container not in ("app", "metrics", "log-shipper"):
            raise ApiError(400, "BadRequest", 'container %s is not valid for pod %s'
                           % (container, name))
        if self.q.get("previous") in ("true", "1") and (container != "app" or st.rc[i] == 0):
            raise ApiError(400, "BadRequest", 'previous terminated container "%s" in pod "%s" '
                           'not found' % (container, name))
        try:
            tail = int(self.q.get("tailLines") or 0)
            limit = int(self.q.get("limitBytes") or 0)
        except ValueError:
            raise ApiError(400, "BadRequest", "invalid tailLines or limitBytes")
        body = st.ctpl.log_tail(tail, self.q.get("timestamps") in ("true", "1"))
        if limit > 0:
            body = body[:limit]  # the API server cuts the first limit bytes
        st.count("get_log")
        self.send_raw(200, "text/plain", body)

    # ---- LIST ----

    def serve_list(self):
        st = self.st
        if "sendInitialEvents" in self.q:
            raise ApiError(422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: "
                           "sendInitialEvents: Forbidden: sendInitialEvents is forbidden "
                           "for list")
        try:
            limit = int(self.q.get("limit") or 0)
        except ValueError:
            raise ApiError(400, "BadRequest", "invalid limit %r" % self.q.get("limit"))
        start, list_rv = 0, None
        cont = self.q.get("continue")
        if cont:
            try:
                tok = json.loads(base64.urlsafe_b64decode(cont.encode()))
                start, list_rv = int(tok["start"]), int(tok["rv"])
            except (ValueError, KeyError, TypeError):
                raise ApiError(400, "BadRequest", "invalid continue token")
        with st.lock:
            if list_rv is None:
                list_rv = st.rv
        end = st.n if limit <= 0 else min(st.n, start + limit)
        meta = {"resourceVersion": str(list_rv)}
        if end < st.n:
            meta["continue"] = base64.urlsafe_b64encode(
                dumps({"v": "meta.k8s.io/v1", "rv": list_rv, "start": end}).encode()).decode()
            meta["remainingItemCount"] = st.n - end
        st.count("list_requests")
        st.count("list_items", end - start)
        st.count("table_requests" if self.wants_table() else "json_requests")
        self.start_chunked()
        if self.wants_table():
            render = st.tpl.render_row
            buf = ['{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":%s,'
                   '"columnDefinitions":%s,"rows":[' % (dumps(meta), TABLE_COLUMNS)]
        else:
            render = st.tpl.render_item
            buf = ['{"kind":"PodList","apiVersion":"v1","metadata":%s,"items":[' % dumps(meta)]
        size = 0
        for i in range(start, end):
            item = render(i, st.pod_rv[i], st.rc[i])
            buf.append(item if i == start else "," + item)
            size += len(item)
            if size >= BATCH_BYTES:
                self.write_chunk("".join(buf))
                buf, size = [], 0
        buf.append("]}\n")
        self.write_chunk("".join(buf))
        self.end_chunked()

    # ---- change tracking's resources (--replicasets) ----

    def tracked_items(self, path):
        """(count, render(i, rv) -> the item's JSON text) of a tracked resource."""
        st = self.st
        wl = st.workloads
        what = benchworkloads.TRACKED[path][2]
        if what == "rs":
            return wl.n_rs, wl.render_rs
        if what == "deploy":
            return wl.n_deploy, wl.render_deployment
        if what == "node":
            return st.tpl.nodes, lambda i, rv: st.ctpl.render_node("node-%03d" % i, rv)
        return 0, None

    def serve_tracked(self, path):
        """LIST (limit/continue) or WATCH (streaming list, then bookmarks until the timeout)
        of a resource krc's change tracking watches. Not among the pod watches: /events and
        /expire do not reach them."""
        st = self.st
        kind, api_version, _ = benchworkloads.TRACKED[path]
        n, render = self.tracked_items(path)
        meta_only = "as=PartialObjectMetadata" in self.headers.get("Accept", "")
        st.count("track_requests")
        with st.lock:
            rv = st.rv
        if self.q.get("watch") in ("true", "1"):
            return self.serve_tracked_watch(n, render, rv)
        try:
            limit = int(self.q.get("limit") or 0)
            start = int(base64.urlsafe_b64decode(self.q["continue"].encode())) \
                if self.q.get("continue") else 0
        except (ValueError, KeyError):
            raise ApiError(400, "BadRequest", "invalid limit or continue")
        end = n if limit <= 0 else min(n, start + limit)
        meta = {"resourceVersion": str(rv)}
        if end < n:
            meta["continue"] = base64.urlsafe_b64encode(str(end).encode()).decode()
            meta["remainingItemCount"] = n - end
        if meta_only:
            kind, api_version = "PartialObjectMetadataList", "meta.k8s.io/v1"
        self.start_chunked()
        buf = ['{"kind":"%s","apiVersion":"%s","metadata":%s,"items":['
               % (kind, api_version, dumps(meta))]
        size = 0
        for i in range(start, end):
            item = render(i, rv)
            buf.append(item if i == start else "," + item)
            size += len(item)
            if size >= BATCH_BYTES:
                self.write_chunk("".join(buf))
                buf, size = [], 0
        buf.append("]}\n")
        self.write_chunk("".join(buf))
        self.end_chunked()

    def serve_tracked_watch(self, n, render, rv):
        st = self.st
        try:
            timeout = int(self.q.get("timeoutSeconds") or 0)
        except ValueError:
            raise ApiError(400, "BadRequest", "invalid timeoutSeconds")
        streaming = self.q.get("sendInitialEvents") in ("true", "1")
        if streaming and not st.streaming:
            raise ApiError(422, "Invalid", "sendInitialEvents: Forbidden (benchmark: streaming "
                           "list off)")
        bookmarks = self.q.get("allowWatchBookmarks") in ("true", "1")
        deadline = time.monotonic() + timeout if timeout > 0 else None
        with st.lock:
            st.open_track_watches += 1
        try:
            self.start_chunked()
            if streaming:
                buf, size = [], 0
                for i in range(n):
                    line = '{"type":"ADDED","object":%s}\n' % render(i, rv)
                    buf.append(line)
                    size += len(line)
                    if size >= BATCH_BYTES:
                        self.write_chunk("".join(buf))
                        buf, size = [], 0
                if bookmarks:
                    buf.append(bookmark_line(rv, end_marker=True))
                if buf:
                    self.write_chunk("".join(buf))
                self.wfile.flush()
            next_bookmark = time.monotonic() + st.bookmark_interval
            while not st.shutdown.is_set():
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    self.end_chunked()
                    return
                if self.peer_gone():
                    self.close_connection = True
                    return
                if bookmarks and now >= next_bookmark:
                    next_bookmark = now + st.bookmark_interval
                    self.write_chunk(bookmark_line(rv))
                    self.wfile.flush()
                time.sleep(0.2)
            self.end_chunked()
        finally:
            with st.lock:
                st.open_track_watches -= 1

    # ---- WATCH ----

    def serve_watch(self):
        st = self.st
        streaming = self.q.get("sendInitialEvents") in ("true", "1")
        try:
            timeout = int(self.q.get("timeoutSeconds") or 0)
        except ValueError:
            raise ApiError(400, "BadRequest", "invalid timeoutSeconds")
        if streaming:
            if not st.streaming:
                st.count("streaming_rejected")
                raise ApiError(422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: "
                               "sendInitialEvents: Forbidden: sendInitialEvents is not "
                               "supported by this server (benchmark: streaming list off)")
            if self.q.get("resourceVersionMatch") != "NotOlderThan":
                raise ApiError(422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: "
                               "resourceVersionMatch: Forbidden: sendInitialEvents requires "
                               "resourceVersionMatch=NotOlderThan")
            st.count("streaming_lists")
        st.count("watch_requests")
        st.count("table_requests" if self.wants_table() else "json_requests")
        self.table_columns_sent = False
        self.bookmarks = self.q.get("allowWatchBookmarks") in ("true", "1")
        if streaming and not self.bookmarks:
            LOG.info("streaming list without allowWatchBookmarks: no end marker will be sent")
        wid, cmds = st.register_watch()
        deadline = time.monotonic() + timeout if timeout > 0 else None
        try:
            self.start_chunked()
            if streaming:
                self.send_initial_events()
            self.watch_loop(cmds, deadline)
        finally:
            st.unregister_watch(wid)

    def send_initial_events(self):
        st = self.st
        tpl = st.tpl
        buf, size = [], 0
        for i in range(st.n):
            line = tpl.render_event("ADDED", i, st.pod_rv[i], st.rc[i])
            buf.append(line)
            size += len(line)
            if size >= BATCH_BYTES:
                self.write_chunk("".join(buf))
                buf, size = [], 0
        with st.lock:
            rv = st.rv
        if self.bookmarks:
            buf.append(bookmark_line(rv, end_marker=True))
        self.write_chunk("".join(buf))
        self.wfile.flush()

    def peer_gone(self):
        """True once the client closed or reset the connection (an idle watch never reads)."""
        try:
            p = select.poll()
            p.register(self.connection.fileno(),
                       select.POLLRDHUP | select.POLLHUP | select.POLLERR)
            return bool(p.poll(0))
        except (OSError, ValueError):
            return True

    def watch_loop(self, cmds, deadline):
        st = self.st
        next_bookmark = time.monotonic() + st.bookmark_interval
        while not st.shutdown.is_set():
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                self.end_chunked()  # server-side timeout: the stream just ends
                return
            if self.peer_gone():
                LOG.debug("watch client %s went away", self.client_address)
                self.close_connection = True
                return
            if now >= next_bookmark:
                next_bookmark = now + st.bookmark_interval
                if self.bookmarks:
                    with st.lock:
                        rv = st.rv
                    self.write_chunk(bookmark_line(rv))
                    self.wfile.flush()
            try:
                cmd = cmds.get(timeout=0.1)
            except queue.Empty:
                continue
            if cmd[0] == "expire":
                with st.lock:
                    rv = st.rv
                line = dumps({"type": "ERROR", "object": status_obj(
                    410, "Expired", "too old resource version: 1 (%d)" % rv)}) + "\n"
                self.write_chunk(line)
                self.end_chunked()
                st.count("expired_sent")
                return
            if cmd[0] == "events":
                self.send_events(cmd[1], cmd[2], cmd[3], cmd[4])
        self.end_chunked()

    def send_events(self, count, restart_every, etype, prerender):
        """count events round-robin over the pods; every restart_every-th (and the last) one
        raises a restartCount. Written as fast as the client reads: with prerender, all events
        are rendered first (count x ~10 KB of memory) so the client, not this Python server,
        is the bottleneck; without, rendering and writing alternate in 64 KB batches."""
        st = self.st
        tpl = st.tpl
        n = st.n
        table = self.wants_table()
        buf, size, restarts = [], 0, 0
        chunks = []
        t0 = time.monotonic()
        if prerender:
            def out(text):
                chunks.append(self.frame(text))
        else:
            out = self.write_chunk
        for k in range(count):
            i = k % n
            bump = (k + 1) % restart_every == 0 or k == count - 1
            with st.lock:
                st.rv += 1
                rv = st.rv
                if bump:
                    st.rc[i] += 1
                rc = st.rc[i]
                st.pod_rv[i] = rv
            restarts += bump
            if table:
                line = tpl.render_table_event(etype, i, rv, rc, not self.table_columns_sent)
                self.table_columns_sent = True
            else:
                line = tpl.render_event(etype, i, rv, rc)
            buf.append(line)
            size += len(line)
            if size >= BATCH_BYTES:
                out("".join(buf))
                buf, size = [], 0
        if buf:
            out("".join(buf))
        t1 = time.monotonic()
        for c in chunks:
            self.write_framed(c)
        self.wfile.flush()
        t2 = time.monotonic()
        LOG.info("%d events (%s) sent in %.2fs%s", count, "prerendered" if prerender else "live",
                 t2 - t0, " (rendering %.2fs, writing %.2fs)" % (t1 - t0, t2 - t1)
                 if prerender else "")
        with st.lock:
            st.counters["events_sent"] += count
            st.counters["restart_events_sent"] += restarts
            st.counters["event_rounds_done"] += 1


# --------------------------------------------------------------------------------------------
# admin handler


class AdminHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002
        LOG.debug("admin " + format, *args)

    def reply(self, code, obj):
        body = (dumps(obj) + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if urllib.parse.urlsplit(self.path).path == "/stats":
            return self.reply(200, self.server.state.stats())
        return self.reply(404, {"error": "unknown path %s" % self.path})

    def do_POST(self):
        st: State = self.server.state
        parsed = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(parsed.query))
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        try:
            if parsed.path == "/events":
                count = int(q.get("count", "1000"))
                every = int(q.get("restart_every", "1"))
                etype = q.get("type", "MODIFIED")
                if count < 1 or every < 1 or etype not in ("MODIFIED", "ADDED"):
                    raise ValueError("count and restart_every must be >= 1, type "
                                     "MODIFIED or ADDED")
                restarts = sum(1 for k in range(count)
                               if (k + 1) % every == 0 or k == count - 1)
                prerender = q.get("prerender", "0") == "1"
                w = st.broadcast(("events", count, every, etype, prerender))
                return self.reply(200, {"watches": w, "events": count,
                                        "restart_events": restarts})
            if parsed.path == "/expire":
                return self.reply(200, {"watches": st.broadcast(("expire",))})
            if parsed.path == "/config":
                if "streaming" in q:
                    if q["streaming"] not in ("0", "1"):
                        raise ValueError("streaming must be 0 or 1")
                    with st.lock:
                        st.streaming = q["streaming"] == "1"
                return self.reply(200, st.stats())
            if parsed.path == "/reset":
                with st.lock:
                    for i in range(st.n):
                        st.rc[i] = 0
                return self.reply(200, st.stats())
        except ValueError as e:
            return self.reply(400, {"error": str(e)})
        return self.reply(404, {"error": "unknown path %s" % parsed.path})


# --------------------------------------------------------------------------------------------
# startup


class Server(fakekube.TlsHttpServer):
    request_queue_size = 64

    def accepted(self):
        self.state.count("connections")




def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--state-dir", required=True, help="where certs, token, kubeconfig go")
    ap.add_argument("--pods", type=int, default=10000, help="number of pods (default 10000)")
    ap.add_argument("--pod-size", type=int, default=10240,
                    help="approximate bytes per pod (default 10240)")
    ap.add_argument("--namespaces", type=int, default=200, help="namespaces (default 200)")
    ap.add_argument("--nodes", type=int, default=0,
                    help="nodes the pods spread over (default: pods/100, at least 1)")
    ap.add_argument("--bookmark-interval", type=float, default=5.0,
                    help="seconds between BOOKMARKs on an idle watch (default 5)")
    ap.add_argument("--no-streaming", action="store_true",
                    help="answer streaming-list requests with 422 (LIST+WATCH path)")
    ap.add_argument("--replicasets", type=int, default=0,
                    help="also serve this many ReplicaSets (Deployments of 10 revisions), the "
                         "Deployments, the nodes and empty lists of the other workload "
                         "controllers, for krc's change tracking (default 0: none, 404)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--admin-port", type=int, default=0)
    ap.add_argument("--log-level", default="INFO")
    a = ap.parse_args(argv)
    if a.pods < 1 or a.pod_size < 0 or a.namespaces < 1 or a.bookmark_interval <= 0:
        ap.error("--pods and --namespaces must be >= 1, --pod-size >= 0, "
                 "--bookmark-interval > 0")
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, a.log_level.upper(),
                                                         logging.INFO),
                        format="%(asctime)s benchserver %(levelname)s %(message)s")
    state_dir = os.path.abspath(a.state_dir)
    os.makedirs(state_dir, exist_ok=True)
    ready_path = os.path.join(state_dir, "ready.json")
    if os.path.exists(ready_path):
        os.unlink(ready_path)

    tpl = PodTemplates(a.pod_size, a.namespaces, a.nodes or max(1, a.pods // 100))
    st = State(a.pods, tpl, a.bookmark_interval)
    st.streaming = not a.no_streaming
    if a.replicasets > 0:
        st.workloads = benchworkloads.Workloads(a.replicasets, a.namespaces)
    st.token = secrets.token_urlsafe(32)
    token_path = os.path.join(state_dir, "token")
    write_atomic(token_path, st.token.encode())

    make_certs(state_dir, 'benchserver-ca')
    ssl_ctx = fakekube.server_ssl_context(state_dir)
    api = Server(("127.0.0.1", a.port), ApiHandler, st, ssl_ctx)
    admin = Server(("127.0.0.1", a.admin_port), AdminHandler, st)
    api_port, admin_port = api.server_address[1], admin.server_address[1]
    write_atomic(os.path.join(state_dir, "kubeconfig"),
               fakekube.kubeconfig_text("https://127.0.0.1:%d" % api_port,
                               os.path.join(state_dir, "ca.crt"), token_path, name="bench",
                               namespace=None).encode())
    fakekube.serve_in_threads((api, admin))
    item_bytes = len(tpl.render_item(0, 1000, 0))
    write_atomic(ready_path, dumps({"api_port": api_port, "admin_port": admin_port,
                                  "pid": os.getpid(), "pod_bytes": item_bytes,
                                  "event_bytes": len(tpl.render_event("MODIFIED", 0, 1000, 1))
                                  }).encode(), 0o644)
    LOG.info("ready: https://127.0.0.1:%d admin http://127.0.0.1:%d, %d pods of ~%d bytes",
             api_port, admin_port, a.pods, item_bytes)
    fakekube.wait_for_stop_signal(st.shutdown)
    LOG.info("shutting down")
    for srv in (api, admin):
        srv.shutdown()
        srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
