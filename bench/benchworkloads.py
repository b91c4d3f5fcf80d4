"""benchworkloads: the workload controllers and nodes benchserver serves to krc's change
tracking (`benchserver.py --replicasets N`).

N ReplicaSets as a cluster keeps them: Deployments of 10 revisions each (the default
revisionHistoryLimit; the last Deployment may have fewer), each revision's ReplicaSet with the
full pod template (two containers, ~20 env variables of which some are references, resources,
three probes, ConfigMap/Secret volumes, service account, node selector, tolerations), the
managedFields the deployment controller writes, ownerReferences and a status; the old revisions
scaled to zero. Revision r of a Deployment differs from r-1 in its image tag, and every third
revision in its memory limit, as real rollouts do. The Deployments themselves are served as
PartialObjectMetadata (krc watches them metadata-only) with a kubectl-client-side-apply entry
in managedFields. Nodes are the collector's node template. StatefulSets, DaemonSets,
ControllerRevisions, Jobs and CronJobs are empty lists.

Every object is rendered from its index with one %-format, so the server holds no copy."""

from __future__ import annotations

import json
import time

REVISIONS = 10  # ReplicaSets per Deployment


def dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"))


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class Workloads:
    def __init__(self, n_rs, namespaces, created=1785394800):
        self.n_rs = n_rs
        self.n_deploy = (n_rs + REVISIONS - 1) // REVISIONS if n_rs else 0
        self.namespaces = max(1, namespaces)
        self.created = created
        self.rs_tpl = self._rs_template()
        self.deploy_tpl = self._deploy_template()

    # ---- ReplicaSets ----------------------------------------------------------------------

    def _rs_template(self):
        env = []
        for k in range(16):
            env.append({"name": "SETTING_%02d" % k, "value": "value-@@D@@-%d" % k})
        env.append({"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {
            "name": "svc-@@D@@-db", "key": "password"}}})
        env.append({"name": "FEATURE_FLAGS", "valueFrom": {"configMapKeyRef": {
            "name": "svc-@@D@@-flags", "key": "flags"}}})
        env.append({"name": "POD_NAME", "valueFrom": {"fieldRef": {
            "apiVersion": "v1", "fieldPath": "metadata.name"}}})
        env.append({"name": "MEMORY_LIMIT", "valueFrom": {"resourceFieldRef": {
            "containerName": "app", "resource": "limits.memory", "divisor": "1"}}})
        probe = {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                 "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 2,
                 "successThreshold": 1, "failureThreshold": 3}
        app = {"name": "app", "image": "registry.example.com/team-@@T@@/svc-@@D@@:1.@@R@@.0",
               "imagePullPolicy": "IfNotPresent", "command": ["/usr/local/bin/svc"],
               "args": ["--port=8080", "--metrics-port=9090", "--log-format=json"],
               "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                         {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
               "env": env, "envFrom": [{"configMapRef": {"name": "svc-@@D@@-env"}}],
               "resources": {"limits": {"cpu": "1", "memory": "@@MEM@@"},
                             "requests": {"cpu": "250m", "memory": "256Mi"}},
               "livenessProbe": probe, "readinessProbe": dict(probe, periodSeconds=5),
               "startupProbe": dict(probe, failureThreshold=30),
               "volumeMounts": [{"name": "config", "mountPath": "/etc/svc"},
                                {"name": "tls", "mountPath": "/etc/tls", "readOnly": True}],
               "terminationMessagePath": "/dev/termination-log",
               "terminationMessagePolicy": "File",
               "securityContext": {"runAsNonRoot": True, "allowPrivilegeEscalation": False,
                                   "readOnlyRootFilesystem": True,
                                   "capabilities": {"drop": ["ALL"]}}}
        sidecar = {"name": "proxy", "image": "registry.example.com/mesh/proxy:2.7.1",
                   "args": ["proxy", "sidecar", "--concurrency=2"],
                   "resources": {"limits": {"cpu": "500m", "memory": "128Mi"},
                                 "requests": {"cpu": "50m", "memory": "64Mi"}},
                   "readinessProbe": {"httpGet": {"path": "/ready", "port": 15021},
                                      "periodSeconds": 2},
                   "terminationMessagePath": "/dev/termination-log",
                   "terminationMessagePolicy": "File"}
        labels = {"app.kubernetes.io/name": "svc-@@D@@", "app.kubernetes.io/part-of":
                  "team-@@T@@", "pod-template-hash": "@@H@@"}
        mf_fields = {"f:metadata": {"f:annotations": {
            ".": {}, "f:deployment.kubernetes.io/desired-replicas": {},
            "f:deployment.kubernetes.io/max-replicas": {},
            "f:deployment.kubernetes.io/revision": {}},
            "f:labels": {".": {}, "f:app.kubernetes.io/name": {}, "f:pod-template-hash": {}},
            "f:ownerReferences": {".": {}, 'k:{"uid":"@@DUID@@"}': {}}},
            "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {
                "f:metadata": {"f:labels": {".": {}, "f:app.kubernetes.io/name": {}}},
                "f:spec": {'f:containers': {'k:{"name":"app"}': {".": {}, "f:image": {},
                                                                 "f:name": {}}}}}}}
        rs = {
            "metadata": {
                "name": "svc-@@D@@-@@H@@", "namespace": "@@NS@@", "uid": "@@UID@@",
                "resourceVersion": "@@RV@@", "generation": 1,
                "creationTimestamp": "@@CREATED@@", "labels": labels,
                "annotations": {"deployment.kubernetes.io/desired-replicas": "3",
                                "deployment.kubernetes.io/max-replicas": "4",
                                "deployment.kubernetes.io/revision": "@@R@@"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                     "name": "svc-@@D@@", "uid": "@@DUID@@",
                                     "controller": True, "blockOwnerDeletion": True}],
                "managedFields": [
                    {"manager": "kube-controller-manager", "operation": "Update",
                     "apiVersion": "apps/v1", "time": "@@CREATED@@", "fieldsType": "FieldsV1",
                     "fieldsV1": mf_fields},
                    {"manager": "kube-controller-manager", "operation": "Update",
                     "apiVersion": "apps/v1", "time": "@@CREATED@@", "fieldsType": "FieldsV1",
                     "fieldsV1": {"f:status": {"f:availableReplicas": {},
                                               "f:fullyLabeledReplicas": {},
                                               "f:observedGeneration": {},
                                               "f:readyReplicas": {}, "f:replicas": {}}},
                     "subresource": "status"}]},
            "spec": {"replicas": "@@REPL@@",
                     "selector": {"matchLabels": {"app.kubernetes.io/name": "svc-@@D@@",
                                                  "pod-template-hash": "@@H@@"}},
                     "template": {"metadata": {"labels": labels,
                                               "annotations": {"prometheus.io/scrape": "true"}},
                                  "spec": {
                                      "containers": [app, sidecar],
                                      "volumes": [
                                          {"name": "config", "configMap": {
                                              "name": "svc-@@D@@-config", "defaultMode": 420}},
                                          {"name": "tls", "secret": {
                                              "secretName": "svc-@@D@@-tls", "defaultMode": 420}}],
                                      "serviceAccountName": "svc-@@D@@",
                                      "nodeSelector": {"kubernetes.io/os": "linux"},
                                      "tolerations": [{"key": "dedicated", "operator": "Equal",
                                                       "value": "team-@@T@@",
                                                       "effect": "NoSchedule"}],
                                      "restartPolicy": "Always",
                                      "terminationGracePeriodSeconds": 30,
                                      "dnsPolicy": "ClusterFirst",
                                      "schedulerName": "default-scheduler",
                                      "securityContext": {"fsGroup": 2000}}}},
            "status": {"replicas": "@@REPL@@", "fullyLabeledReplicas": "@@REPL@@",
                       "readyReplicas": "@@REPL@@", "availableReplicas": "@@REPL@@",
                       "observedGeneration": 1}}
        text = dumps(rs).replace("%", "%%")
        for s, k in (("@@D@@", "d"), ("@@T@@", "t"), ("@@R@@", "r"), ("@@H@@", "h"),
                     ("@@NS@@", "ns"), ("@@UID@@", "uid"), ("@@DUID@@", "duid"),
                     ("@@RV@@", "rv"), ("@@CREATED@@", "created"), ("@@MEM@@", "mem")):
            text = text.replace(s, "%%(%s)s" % k)
        text = text.replace('"@@REPL@@"', "%(repl)d")
        return text

    def _rs_fields(self, i, rv):
        d, r = divmod(i, REVISIONS)
        r += 1  # revisions 1..10
        last = min(REVISIONS, self.n_rs - d * REVISIONS)
        return {"d": "%05d" % d, "t": "%02d" % (d % 40), "r": r,
                "h": "%010x" % ((d * 7919 + r * 104729) * 2654435761 % (1 << 40)),
                "ns": "ns-%03d" % (d % self.namespaces),
                "uid": "%08x-0000-4000-8000-%012x" % (d, i),
                "duid": "%08x-0000-4000-8000-%012x" % (d, 0xffffffffffff),
                "rv": rv, "created": iso(self.created + d * 60 + r * 3600),
                "mem": "%dMi" % (512 * (1 + (r // 3) % 2)), "repl": 3 if r == last else 0}

    def render_rs(self, i, rv):
        return self.rs_tpl % self._rs_fields(i, rv)

    # ---- Deployments (PartialObjectMetadata) ------------------------------------------------

    def _deploy_template(self):
        md = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {
            "name": "svc-%(d)s", "namespace": "%(ns)s", "uid": "%(duid)s",
            "resourceVersion": "%(rv)s", "generation": "@@GEN@@",
            "creationTimestamp": "%(created)s",
            "labels": {"app.kubernetes.io/name": "svc-%(d)s"},
            "annotations": {"deployment.kubernetes.io/revision": "%(r)s"},
            "managedFields": [
                {"manager": "kubectl-client-side-apply", "operation": "Update",
                 "apiVersion": "apps/v1", "time": "%(applied)s", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {}}}}}},
                {"manager": "kube-controller-manager", "operation": "Update",
                 "apiVersion": "apps/v1", "time": "%(applied)s", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:status": {}}, "subresource": "status"}]}}
        return dumps(md).replace('"@@GEN@@"', "%(r)s")

    def render_deployment(self, d, rv):
        r = min(REVISIONS, self.n_rs - d * REVISIONS)
        f = self._rs_fields(d * REVISIONS + r - 1, rv)
        f["applied"] = f["created"]
        return self.deploy_tpl % f


# (path, kind of the list, item renderer name or None for an empty list)
TRACKED = {
    "/apis/apps/v1/replicasets": ("ReplicaSetList", "apps/v1", "rs"),
    "/apis/apps/v1/deployments": ("DeploymentList", "apps/v1", "deploy"),
    "/apis/apps/v1/statefulsets": ("StatefulSetList", "apps/v1", None),
    "/apis/apps/v1/daemonsets": ("DaemonSetList", "apps/v1", None),
    "/apis/apps/v1/controllerrevisions": ("ControllerRevisionList", "apps/v1", None),
    "/apis/batch/v1/jobs": ("JobList", "batch/v1", None),
    "/apis/batch/v1/cronjobs": ("CronJobList", "batch/v1", None),
    "/api/v1/nodes": ("NodeList", "v1", "node"),
}


def main(argv=None):
    """Write N ReplicaSets as JSON lines (bench/bench_track.c reads them):
    python3 bench/benchworkloads.py 30000 > /tmp/rs.jsonl"""
    import sys
    args = sys.argv[1:] if argv is None else argv
    n = int(args[0]) if args else 30000
    w = Workloads(n, 200)
    out = sys.stdout
    for i in range(n):
        out.write(w.render_rs(i, 1000 + i))
        out.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
