#!/usr/bin/env python3
"""Generate realistic Kubernetes pod JSON for benchmarks and end-to-end tests.

Each pod looks like what an API server sends for a Deployment pod: labels,
annotations, ownerReferences, a large managedFields block, a spec with two
containers and one restartable init container (sidecar) with env vars, probes,
resources and volumes, and a status with conditions and container statuses.
A pod is about 10 KB by default; --size pads managedFields to reach a target.

Output formats:
  list   one PodList JSON document (metadata.resourceVersion, optional continue)
  watch  one watch event per line ({"type": ..., "object": pod}), optionally
         followed by a BOOKMARK line

Examples:
  podgen.py --count 1000 --namespaces 20 --format list > pods.json
  podgen.py --count 5000 --format watch --type MODIFIED --restart-every 10 > events.jsonl
"""

import argparse
import json
import random
import sys
import uuid


def iso(ts):
    """Unix seconds -> RFC 3339 seconds precision in UTC (metav1.Time)."""
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def managed_fields(pad_entries):
    """A managedFields block like kube-controller-manager and kubelet write."""
    spec_fields = {
        "f:metadata": {
            "f:generateName": {},
            "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}, "f:team": {}},
            "f:ownerReferences": {".": {}, 'k:{"uid":"5e1c7d0a-8f8e-4a55-9d3e-0f1d2c3b4a59"}': {}},
        },
        "f:spec": {
            "f:containers": {
                'k:{"name":"app"}': {
                    ".": {},
                    "f:env": {
                        ".": {},
                        **{'k:{"name":"ENV_%d"}' % i: {".": {}, "f:name": {}, "f:value": {}}
                           for i in range(6)},
                    },
                    "f:image": {},
                    "f:imagePullPolicy": {},
                    "f:livenessProbe": {".": {}, "f:httpGet": {".": {}, "f:path": {}, "f:port": {}}},
                    "f:name": {},
                    "f:ports": {".": {}, 'k:{"containerPort":8080,"protocol":"TCP"}': {}},
                    "f:resources": {".": {}, "f:limits": {".": {}, "f:memory": {}},
                                    "f:requests": {".": {}, "f:cpu": {}, "f:memory": {}}},
                    "f:terminationMessagePath": {},
                    "f:volumeMounts": {".": {}, 'k:{"mountPath":"/etc/app"}': {}},
                },
                'k:{"name":"metrics"}': {".": {}, "f:image": {}, "f:name": {}},
            },
            "f:dnsPolicy": {},
            "f:enableServiceLinks": {},
            "f:initContainers": {'k:{"name":"log-shipper"}': {".": {}, "f:image": {},
                                                             "f:restartPolicy": {}}},
            "f:restartPolicy": {},
            "f:schedulerName": {},
            "f:securityContext": {},
            "f:terminationGracePeriodSeconds": {},
            "f:volumes": {".": {}, 'k:{"name":"config"}': {".": {}, "f:configMap": {}, "f:name": {}}},
        },
    }
    status_fields = {
        "f:status": {
            "f:conditions": {
                'k:{"type":"%s"}' % t: {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {},
                                        "f:status": {}, "f:type": {}}
                for t in ("ContainersReady", "Initialized", "PodReadyToStartContainers",
                          "PodScheduled", "Ready")
            },
            "f:containerStatuses": {},
            "f:hostIP": {},
            "f:hostIPs": {},
            "f:initContainerStatuses": {},
            "f:phase": {},
            "f:podIP": {},
            "f:podIPs": {".": {}, 'k:{"ip":"10.244.3.17"}': {".": {}, "f:ip": {}}},
            "f:startTime": {},
        }
    }
    for i in range(pad_entries):
        status_fields["f:status"]["f:pad%04d" % i] = {".": {}, "f:value": {}}
    return [
        {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
         "time": "2026-07-30T07:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": spec_fields},
        {"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
         "time": "2026-07-30T07:43:55Z", "fieldsType": "FieldsV1", "fieldsV1": status_fields,
         "subresource": "status"},
    ]


def container_spec(name, image, port, n_env):
    return {
        "name": name,
        "image": image,
        "ports": [{"containerPort": port, "protocol": "TCP", "name": "http"}],
        "env": [{"name": "ENV_%d" % i, "value": "value-%d-%s" % (i, "x" * 12)} for i in range(n_env)],
        "resources": {"limits": {"memory": "512Mi"}, "requests": {"cpu": "250m", "memory": "256Mi"}},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": True},
                         {"name": "kube-api-access-x7k2p", "readOnly": True,
                          "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": port, "scheme": "HTTP"},
                          "initialDelaySeconds": 10, "timeoutSeconds": 1, "periodSeconds": 10,
                          "successThreshold": 1, "failureThreshold": 3},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": port, "scheme": "HTTP"},
                           "timeoutSeconds": 1, "periodSeconds": 5, "successThreshold": 1,
                           "failureThreshold": 3},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
    }


def make_pod(i, namespace, rv, restarts=0, pad_entries=0, created=1785394800):
    """One pod as a dict. restarts > 0 gives a crash-looping app container
    whose last termination was an OOM kill."""
    name = "web-%s-%05d" % ("7d9c8b6f5", i)
    uid = str(uuid.UUID(int=random.getrandbits(128), version=4))
    started = created + 2
    app_status = {
        "name": "app", "ready": restarts == 0, "started": restarts == 0, "restartCount": restarts,
        "image": "registry.local/web:1.4.2",
        "imageID": "registry.local/web@sha256:" + "9e0d" * 16,
        "containerID": "containerd://" + "b7a2" * 16,
        "state": {"running": {"startedAt": iso(started)}},
        "lastState": {},
    }
    if restarts > 0:
        app_status["state"] = {"waiting": {
            "reason": "CrashLoopBackOff",
            "message": "back-off 2m40s restarting failed container=app pod=%s_%s(%s)"
                       % (name, namespace, uid)}}
        app_status["lastState"] = {"terminated": {
            "exitCode": 137, "reason": "OOMKilled", "startedAt": iso(started + 600),
            "finishedAt": iso(started + 700), "containerID": "containerd://" + "b7a2" * 16}}
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "generateName": "web-7d9c8b6f5-",
            "namespace": namespace,
            "uid": uid,
            "resourceVersion": str(rv),
            "creationTimestamp": iso(created),
            "labels": {"app": "web", "pod-template-hash": "7d9c8b6f5", "team": "payments",
                       "app.kubernetes.io/version": "1.4.2"},
            "annotations": {
                "kubectl.kubernetes.io/default-container": "app",
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "9090",
                "alert-slack-channel": "#payments-alerts",
            },
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                 "name": "web-7d9c8b6f5",
                                 "uid": "5e1c7d0a-8f8e-4a55-9d3e-0f1d2c3b4a59",
                                 "controller": True, "blockOwnerDeletion": True}],
            "managedFields": managed_fields(pad_entries),
        },
        "spec": {
            "volumes": [{"name": "config", "configMap": {"name": "web-config", "defaultMode": 420}},
                        {"name": "kube-api-access-x7k2p", "projected": {"defaultMode": 420, "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {"configMap": {"name": "kube-root-ca.crt",
                                           "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}],
            "initContainers": [{"name": "log-shipper", "image": "fluent/fluent-bit:3.1",
                                "restartPolicy": "Always",
                                "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
                                "terminationMessagePath": "/dev/termination-log",
                                "terminationMessagePolicy": "File",
                                "imagePullPolicy": "IfNotPresent"}],
            "containers": [container_spec("app", "registry.local/web:1.4.2", 8080, 6),
                           container_spec("metrics", "registry.local/exporter:0.9", 9090, 2)],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "web",
            "serviceAccount": "web",
            "nodeName": "node-%02d" % (i % 40),
            "securityContext": {"runAsNonRoot": True, "fsGroup": 2000},
            "schedulerName": "default-scheduler",
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                             "effect": "NoExecute", "tolerationSeconds": 300},
                            {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                             "effect": "NoExecute", "tolerationSeconds": 300}],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": t, "status": "True", "lastProbeTime": None,
                            "lastTransitionTime": iso(created + 5)}
                           for t in ("PodReadyToStartContainers", "Initialized", "Ready",
                                     "ContainersReady", "PodScheduled")],
            "hostIP": "10.0.3.%d" % (i % 250 + 1),
            "hostIPs": [{"ip": "10.0.3.%d" % (i % 250 + 1)}],
            "podIP": "10.244.3.17",
            "podIPs": [{"ip": "10.244.3.17"}],
            "startTime": iso(created + 1),
            "initContainerStatuses": [{
                "name": "log-shipper", "ready": True, "started": True, "restartCount": 0,
                "image": "fluent/fluent-bit:3.1",
                "imageID": "docker.io/fluent/fluent-bit@sha256:" + "ab12" * 16,
                "containerID": "containerd://" + "4f1c" * 16,
                "state": {"running": {"startedAt": iso(started)}}, "lastState": {}}],
            "containerStatuses": [app_status, {
                "name": "metrics", "ready": True, "started": True, "restartCount": 0,
                "image": "registry.local/exporter:0.9",
                "imageID": "registry.local/exporter@sha256:" + "77aa" * 16,
                "containerID": "containerd://" + "c3d4" * 16,
                "state": {"running": {"startedAt": iso(started)}}, "lastState": {}}],
            "qosClass": "Burstable",
        },
    }


def dumps(obj):
    # compact, like the Go encoder
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def pod_with_size(i, namespace, rv, restarts, size):
    pad = 0
    pod = make_pod(i, namespace, rv, restarts, pad)
    if size > 0:
        base = len(dumps(pod))
        if base < size:
            per_entry = len(dumps(make_pod(i, namespace, rv, restarts, 10))) - base
            pad = (size - base) * 10 // max(per_entry, 1)
            pod = make_pod(i, namespace, rv, restarts, pad)
    return pod


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=100, help="number of pods (default 100)")
    ap.add_argument("--namespaces", type=int, default=10, help="spread over N namespaces")
    ap.add_argument("--size", type=int, default=10240,
                    help="approximate bytes per pod, reached by padding managedFields "
                         "(default 10240; 0: no padding, ~8.4 KB)")
    ap.add_argument("--format", choices=("list", "watch"), default="list")
    ap.add_argument("--type", default="MODIFIED", help="watch event type (default MODIFIED)")
    ap.add_argument("--restart-every", type=int, default=0,
                    help="every Nth pod is crash-looping (restartCount > 0); 0: none")
    ap.add_argument("--rv-start", type=int, default=1000, help="first resourceVersion")
    ap.add_argument("--continue-token", default="", help="list: metadata.continue")
    ap.add_argument("--bookmark", action="store_true", help="watch: end with a BOOKMARK line")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    a = ap.parse_args()
    if a.count < 0 or a.namespaces < 1:
        ap.error("--count must be >= 0 and --namespaces >= 1")
    random.seed(a.seed)
    out = sys.stdout if a.output == "-" else open(a.output, "w", encoding="utf-8")
    rv = a.rv_start
    try:
        if a.format == "list":
            meta = {"resourceVersion": str(a.rv_start + a.count)}
            if a.continue_token:
                meta["continue"] = a.continue_token
            out.write('{"kind":"PodList","apiVersion":"v1","metadata":%s,"items":[' % dumps(meta))
            for i in range(a.count):
                restarts = 3 if a.restart_every and i % a.restart_every == 0 else 0
                pod = pod_with_size(i, "ns-%03d" % (i % a.namespaces), rv, restarts, a.size)
                del pod["kind"]  # list items carry no kind/apiVersion
                del pod["apiVersion"]
                out.write(("," if i else "") + dumps(pod))
                rv += 1
            out.write("]}\n")
        else:
            for i in range(a.count):
                restarts = 3 if a.restart_every and i % a.restart_every == 0 else 0
                pod = pod_with_size(i, "ns-%03d" % (i % a.namespaces), rv, restarts, a.size)
                out.write(dumps({"type": a.type, "object": pod}) + "\n")
                rv += 1
            if a.bookmark:
                out.write(dumps({"type": "BOOKMARK", "object": {
                    "kind": "Pod", "apiVersion": "v1",
                    "metadata": {"resourceVersion": str(rv)},
                    "spec": {"containers": None}, "status": {}}}) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
