"""Client for the fakekube admin API, used by integration tests and benchmarks.

    with FakeKube() as fk:
        fk.create_pod("payments", "web-1", containers=["app", "sidecar"])
        fk.restart("payments", "web-1", "app", exit_code=137, reason="OOMKilled",
                   logs="out of memory\\n")
        subprocess.run(["kubectl", "get", "pods", "-A"],
                       env=dict(os.environ, KUBECONFIG=fk.kubeconfig))

Standard library only.  See README.md in this directory for the admin API itself.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
# The server started as an imported module, not as a script: Python compiles a script at
# every start (fakekube.py: 4,700 lines, 77 ms of CPU) but takes an imported module's
# bytecode from its cache (ctest's PYTHONPYCACHEPREFIX, in the build tree). Its arguments
# follow as sys.argv[1:].
LAUNCH = ("import sys; sys.path.insert(0, %r); import fakekube; sys.exit(fakekube.main())" % HERE)

# The RBAC a FakeKube enforces when the test does not say (rbac=None): None (nothing
# enforced), a path, a list of objects, or a callable returning one of those (evaluated at
# start).  tests/integration/krc_harness.py sets it to the rules rendered from
# deploy/manifests, so every integration test runs krc under the shipped RBAC.
DEFAULT_RBAC = None


class FakeKubeError(RuntimeError):
    """An admin call failed (non-2xx); .status and .body carry the details."""

    def __init__(self, method, path, status, body):
        super().__init__("fakekube admin %s %s -> %d: %s" % (method, path, status, body))
        self.status = status
        self.body = body


def _now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _fields(names):
    return {"f:" + n: {} for n in names}


def _container_fields(c):
    f = {".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:resources": {
        ".": {}, "f:limits": {".": {}, "f:memory": {}}, "f:requests": {
            ".": {}, "f:cpu": {}, "f:memory": {}}},
        "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}
    if c.get("livenessProbe"):
        f["f:livenessProbe"] = {".": {}, "f:failureThreshold": {}, "f:httpGet": {
            ".": {}, "f:path": {}, "f:port": {}, "f:scheme": {}}, "f:periodSeconds": {},
            "f:successThreshold": {}, "f:timeoutSeconds": {}}
    if c.get("readinessProbe"):
        f["f:readinessProbe"] = {".": {}, "f:failureThreshold": {}, "f:httpGet": {
            ".": {}, "f:path": {}, "f:port": {}, "f:scheme": {}}, "f:periodSeconds": {},
            "f:successThreshold": {}, "f:timeoutSeconds": {}}
    if c.get("ports"):
        f["f:ports"] = {".": {}, 'k:{"containerPort":%d,"protocol":"TCP"}' % c["ports"][0][
            "containerPort"]: {".": {}, "f:containerPort": {}, "f:name": {}, "f:protocol": {}}}
    return f


def _container(spec, i):
    """A realistic container spec from a name or a partial dict."""
    c = {"name": spec} if isinstance(spec, str) else dict(spec)
    name = c["name"]
    c.setdefault("image", "registry.example.com/team/%s:1.%d.%d" % (name, 4 + i, 2))
    c.setdefault("ports", [{"name": "http", "containerPort": 8080 + i, "protocol": "TCP"}])
    c.setdefault("resources", {"limits": {"memory": "512Mi"},
                               "requests": {"cpu": "100m", "memory": "256Mi"}})
    port = c["ports"][0]["containerPort"] if c["ports"] else 8080
    c.setdefault("livenessProbe", {"httpGet": {"path": "/healthz", "port": port,
                                               "scheme": "HTTP"},
                                   "timeoutSeconds": 1, "periodSeconds": 10,
                                   "successThreshold": 1, "failureThreshold": 3})
    c.setdefault("readinessProbe", {"httpGet": {"path": "/ready", "port": port,
                                                "scheme": "HTTP"},
                                    "timeoutSeconds": 1, "periodSeconds": 5,
                                    "successThreshold": 1, "failureThreshold": 3})
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("imagePullPolicy", "IfNotPresent")
    return c


def build_pod(namespace, name, containers=("app",), labels=None, annotations=None,
              init_containers=None, node="fake-node-1", owner=True, status=None, spec=None,
              metadata=None):
    """A realistic partial Pod (metadata.managedFields, ownerReferences, resources, probes);
    the server fills uid, resourceVersion, creationTimestamp and the status.

    node="" (or None) creates an unscheduled (Pending) pod.  status/spec/metadata are merged
    over the generated parts (status: e.g. {"containerStatuses": [{"name": "app",
    "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]})."""
    ts = _now()
    base = name.rsplit("-", 1)[0] if "-" in name else name
    tmpl_hash = hashlib.sha1(("%s/%s" % (namespace, base)).encode()).hexdigest()[:10]
    lab = {"app.kubernetes.io/name": base, "pod-template-hash": tmpl_hash}
    lab.update(labels or {})
    ann = {"kubectl.kubernetes.io/restartedAt": ts}
    ann.update(annotations or {})
    cs = [_container(c, i) for i, c in enumerate(containers)]
    ics = [_container(c, i) for i, c in enumerate(init_containers or [])]
    for c in ics:
        c.pop("readinessProbe", None)
        if c.get("restartPolicy") != "Always":
            c.pop("livenessProbe", None)
            c["ports"] = []
    md = {"name": name, "namespace": namespace, "labels": lab, "annotations": ann,
          "generateName": base + "-"}
    if owner:
        rs = "%s-%s" % (base, tmpl_hash)
        md["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                  "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, namespace + "/" + rs)),
                                  "controller": True, "blockOwnerDeletion": True}]
    spec_fields = {"f:containers": {'k:{"name":"%s"}' % c["name"]: _container_fields(c)
                                    for c in cs},
                   "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {},
                   "f:schedulerName": {}, "f:securityContext": {},
                   "f:terminationGracePeriodSeconds": {}}
    md["managedFields"] = [
        {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
         "time": ts, "fieldsType": "FieldsV1",
         "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/"
                                                              "restartedAt": {}},
                                     "f:generateName": {},
                                     "f:labels": dict({".": {}}, **_fields(lab)),
                                     "f:ownerReferences": {".": {}}},
                      "f:spec": spec_fields}},
        {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": ts,
         "fieldsType": "FieldsV1", "subresource": "status",
         "fieldsV1": {"f:status": {"f:conditions": {
             'k:{"type":"%s"}' % t: {".": {}, "f:lastProbeTime": {},
                                     "f:lastTransitionTime": {}, "f:status": {},
                                     "f:type": {}}
             for t in ("ContainersReady", "Initialized", "PodReadyToStartContainers", "Ready")},
             "f:containerStatuses": {}, "f:hostIP": {}, "f:hostIPs": {}, "f:phase": {},
             "f:podIP": {}, "f:podIPs": {".": {}}, "f:startTime": {}}}},
    ]
    md.update(metadata or {})
    sp = {"containers": cs, "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
          "dnsPolicy": "ClusterFirst", "serviceAccountName": "default",
          "serviceAccount": "default", "securityContext": {},
          "schedulerName": "default-scheduler", "enableServiceLinks": True,
          "volumes": [{"name": "kube-api-access-" + tmpl_hash[:5], "projected": {
              "defaultMode": 420, "sources": [
                  {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                  {"configMap": {"name": "kube-root-ca.crt",
                                 "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                  {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                      "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}}]}
    for c in cs + ics:
        c["volumeMounts"] = [{"name": sp["volumes"][0]["name"], "readOnly": True,
                              "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]
    if ics:
        sp["initContainers"] = ics
    if node:
        sp["nodeName"] = node
    sp.update(spec or {})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": sp}
    if status:
        pod["status"] = status
    return pod


class FakeKube:
    """Starts fakekube.py in a temporary state dir; stops it (and removes the dir) on exit."""

    def __init__(self, token=None, tls=True, state_dir=None, config=None, start_timeout=20.0,
                 keep_state=False, log_path=None, rbac=None, token_subject=None,
                 client_ca=None, port=None, start_rv=None):
        """rbac: RBAC objects to enforce for the token (a path to JSON/YAML as `kubectl
        kustomize` renders it, or a list of Role/ClusterRole/RoleBinding/ClusterRoleBinding
        dicts); None: DEFAULT_RBAC; False: nothing enforced.  token_subject: the user the
        token authenticates as (default: the only ServiceAccount subject of the bindings)."""
        self.rbac = rbac
        self.token_subject = token_subject
        self.client_ca = client_ca  # a CA file: its client certificates authenticate
        self.port = port  # the API port (None: any free one)
        self.start_rv = start_rv  # first resourceVersion (a restart continues the old one)
        self._owns_dir = state_dir is None
        self.state_dir = state_dir or tempfile.mkdtemp(prefix="fakekube-")
        self.token = token
        self.tls = tls
        self.initial_config = config
        self.start_timeout = start_timeout
        self.keep_state = keep_state
        self.log_path = log_path or os.path.join(self.state_dir, "fakekube.log")
        self.proc = None
        self.api_port = None
        self.admin_port = None

    # ---- lifecycle ----

    @property
    def kubeconfig(self):
        return os.path.join(self.state_dir, "kubeconfig")

    @property
    def ca(self):
        return os.path.join(self.state_dir, "ca.crt")

    @property
    def token_path(self):
        return os.path.join(self.state_dir, "token")

    @property
    def api_url(self):
        return "%s://127.0.0.1:%d" % ("https" if self.tls else "http", self.api_port)

    def current_token(self):
        with open(self.token_path) as f:
            return f.read().strip()

    def start(self):
        cmd = [sys.executable, "-c", LAUNCH, "--state-dir", self.state_dir]
        if self.token:
            cmd.append("--token=" + self.token)  # a token may begin with "-"
        rbac = DEFAULT_RBAC if self.rbac is None else self.rbac
        if callable(rbac):
            rbac = rbac()
        if rbac is not None and rbac is not False:
            if not isinstance(rbac, str):
                path = os.path.join(self.state_dir, "rbac.json")
                with open(path, "w") as f:
                    json.dump(rbac, f)
                rbac = path
            cmd += ["--rbac", rbac]
        if self.token_subject:
            cmd += ["--token-subject", self.token_subject]
        if self.client_ca:
            cmd += ["--client-ca", self.client_ca]
        if self.port:
            cmd += ["--port", str(self.port)]
        if self.start_rv is not None:
            cmd += ["--start-rv", str(self.start_rv)]
        if not self.tls:
            cmd.append("--no-tls")
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        ready = os.path.join(self.state_dir, "ready.json")
        deadline = time.monotonic() + self.start_timeout
        delay = 0.01
        while True:
            if self.proc.poll() is not None:
                msg = "fakekube exited with %s during startup; log: %s\n%s" % (
                    self.proc.returncode, self.log_path, self.log_tail())
                self.stop()
                raise RuntimeError(msg)
            try:
                with open(ready) as f:
                    info = json.load(f)
                if info.get("pid") == self.proc.pid:
                    break
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("fakekube did not become ready within %.0f s; log:\n%s"
                                   % (self.start_timeout, self.log_tail()))
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
        self.api_port = info["api_port"]
        self.admin_port = info["admin_port"]
        if self.initial_config:
            self.config(**self.initial_config)
        return self

    def log_tail(self, n=4000):
        try:
            with open(self.log_path, "rb") as f:
                data = f.read()
            return data[-n:].decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
        if getattr(self, "_log", None):
            self._log.close()
            self._log = None
        if self._owns_dir and not self.keep_state:
            shutil.rmtree(self.state_dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # ---- raw admin calls ----

    def call(self, method, path, body=None, timeout=60):
        conn = http.client.HTTPConnection("127.0.0.1", self.admin_port, timeout=timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            headers = {"Content-Type": "application/json"} if data is not None else {}
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
        finally:
            conn.close()
        try:
            out = json.loads(raw) if raw else None
        except ValueError:
            out = raw.decode("utf-8", "replace")
        if resp.status >= 300:
            raise FakeKubeError(method, path, resp.status, out)
        return out

    # ---- objects ----

    def create_pod(self, namespace, name, containers=("app",), labels=None, annotations=None,
                   init_containers=None, node="fake-node-1", **kw):
        """Create one realistic pod (see build_pod); returns the stored Pod."""
        return self.call("POST", "/admin/pods",
                         build_pod(namespace, name, containers, labels, annotations,
                                   init_containers, node, **kw))

    def create_pods(self, pods):
        """Bulk creation in one request: pods is a list of Pod dicts (build_pod) or of dicts of
        create_pod keyword arguments.  One resourceVersion and one ADDED event per pod.
        Returns a summary per pod: {"namespace", "name", "uid", "resourceVersion"}."""
        objs = [p if "metadata" in p else build_pod(**p) for p in pods]
        return self.call("POST", "/admin/pods", objs, timeout=300)

    def bulk_pods(self, namespace, count, prefix="pod", containers=("app",), start=0, **kw):
        """Create count realistic pods named prefix-00000... (server-side copies of one
        template, one resourceVersion and ADDED event each); returns the server's summary
        {"created", "first", "last"}."""
        tmpl = build_pod(namespace, "%s-%05d" % (prefix, start), containers, **kw)
        return self.call("POST", "/admin/pods/bulk",
                         {"template": tmpl, "count": count, "prefix": prefix,
                          "namespace": namespace, "start": start}, timeout=300)

    def get_pod(self, namespace, name):
        return self.call("GET", "/admin/pods/%s/%s" % (namespace, name))

    def update_pod(self, namespace, name, patch):
        """JSON merge patch (RFC 7386) into the stored pod; emits MODIFIED."""
        return self.call("PUT", "/admin/pods/%s/%s" % (namespace, name), patch)

    def set_container_status(self, namespace, name, container, patch):
        """Merge patch into one container's status (containerStatuses or
        initContainerStatuses), keeping the other containers untouched."""
        pod = self.get_pod(namespace, name)
        st = pod.get("status", {})
        for key in ("containerStatuses", "initContainerStatuses"):
            lst = st.get(key) or []
            for i, s in enumerate(lst):
                if s.get("name") == container:
                    lst[i] = _merge(s, patch)
                    return self.update_pod(namespace, name, {"status": {key: lst}})
        raise KeyError("pod %s/%s has no container status %s" % (namespace, name, container))

    def restart(self, namespace, name, container, exit_code=1, reason="Error", message=None,
                finished_at=None, started_at=None, waiting=False, logs=None, signal_num=None):
        """The container died and was restarted: restartCount+1, lastState.terminated set,
        MODIFIED.  logs (text) becomes that container's previous log (default: its current
        log).  waiting=True leaves it in CrashLoopBackOff instead of running."""
        body = {"container": container, "exitCode": exit_code, "reason": reason,
                "waiting": waiting}
        for k, v in (("message", message), ("finishedAt", finished_at),
                     ("startedAt", started_at), ("logs", logs), ("signal", signal_num)):
            if v is not None:
                body[k] = v
        return self.call("POST", "/admin/pods/%s/%s/restart" % (namespace, name), body)

    def delete_pod(self, namespace, name):
        return self.call("DELETE", "/admin/pods/%s/%s" % (namespace, name))

    # ---- what the kubelet writes for the restarts of Kubernetes 1.33+ (issue 26) ----
    # Each is a sequence of status updates (one MODIFIED each), in the order the kubelet
    # reports them; field names from the Kubernetes API reference (core/v1 PodStatus,
    # ContainerStatus, PodCondition) and the KEPs named (see /work/shared/protocols.md Part 8
    # and docs/design/kubernetes-1.33-fields.md).

    def _edit(self, namespace, name, edit):
        """Read the pod, let edit(pod) change it in place, write back its metadata, spec and
        status (lists replaced whole); returns the stored Pod."""
        pod = self.get_pod(namespace, name)
        edit(pod)
        return self.update_pod(namespace, name, {k: pod[k] for k in ("metadata", "spec", "status")
                                                 if k in pod})

    @staticmethod
    def _statuses(pod, init=False):
        st = pod.setdefault("status", {})
        return st.setdefault("initContainerStatuses" if init else "containerStatuses", [])

    @staticmethod
    def _set_condition(pod, ctype, status, ts, reason=None, message=None):
        """Set (or add, before Ready) the pod condition ctype; lastTransitionTime changes only
        when the status does, as the kubelet writes it."""
        st = pod.setdefault("status", {})
        conds = st.setdefault("conditions", [])
        gen = pod["metadata"].get("generation")
        for c in conds:
            if c.get("type") == ctype:
                if c.get("status") != status:
                    c["lastTransitionTime"] = ts
                c["status"] = status
                break
        else:
            c = {"type": ctype, "status": status, "lastProbeTime": None,
                 "lastTransitionTime": ts}
            at = next((i for i, x in enumerate(conds) if x.get("type") == "Ready"), len(conds))
            conds.insert(at, c)
        for k, v in (("reason", reason), ("message", message)):
            if v is None:
                c.pop(k, None)
            else:
                c[k] = v
        if gen is not None:  # KEP-5067 (GA 1.35): conditions[].observedGeneration
            c["observedGeneration"] = gen

    @staticmethod
    def _stop(s, exit_code, reason, ts, message=None):
        """Container status s stops now: state.terminated (its current instance)."""
        started = (s.get("state", {}).get("running") or {}).get("startedAt") or ts
        term = {"exitCode": exit_code, "reason": reason, "startedAt": started, "finishedAt": ts,
                "containerID": s.get("containerID") or "containerd://" + uuid.uuid4().hex}
        if message:
            term["message"] = message
        s["state"] = {"terminated": term}
        s["ready"] = False
        s["started"] = False

    @staticmethod
    def _start_again(s, ts):
        """Container status s (stopped) runs again: restartCount+1, lastState.terminated."""
        s["lastState"] = {"terminated": s["state"]["terminated"]}
        s["restartCount"] = int(s.get("restartCount", 0)) + 1
        s["state"] = {"running": {"startedAt": ts}}
        s["containerID"] = "containerd://" + uuid.uuid4().hex
        s["ready"] = True
        s["started"] = True

    @staticmethod
    def _ready(pod, ready, ts):
        unready = [s["name"] for s in pod["status"].get("containerStatuses", [])
                   if not s.get("ready")]
        for c in pod["status"].get("conditions", []):
            if c.get("type") in ("Ready", "ContainersReady"):
                want = "True" if ready and not unready else "False"
                if c.get("status") != want:
                    c["lastTransitionTime"] = ts
                c["status"] = want
                if want == "True":
                    c.pop("reason", None)
                    c.pop("message", None)
                else:
                    c["reason"] = "ContainersNotReady"
                    c["message"] = "containers with unready status: [%s]" % " ".join(unready)

    def _previous_logs(self, namespace, name, logs):
        for container, text in (logs or {}).items():
            self.set_logs(namespace, name, container, text, previous=True)

    def restart_all(self, namespace, name, trigger, exit_code, others_exit_code=137,
                    logs=None, pause=0.0, stagger=0.0):
        """KEP-5532 (alpha 1.35): container `trigger` exits exit_code, which its
        restartPolicyRules action RestartAllContainers holds; the kubelet sets the pod
        condition AllContainersRestarting True, kills every other container (no preStop:
        others_exit_code, 137 = SIGKILL), then starts them all again: every restartCount rises
        in one status update (with stagger: one container per update, stagger seconds apart,
        the trigger first), and AllContainersRestarting turns False.  logs: {container:
        previous log}.  pause: seconds between the stop and the first start."""
        def stop(pod):
            ts = _now()
            self._set_condition(pod, "AllContainersRestarting", "True", ts)
            for s in self._statuses(pod):
                code = exit_code if s["name"] == trigger else others_exit_code
                self._stop(s, code, "Error", ts)
            self._ready(pod, False, ts)
        if not any(s["name"] == trigger for s in self._statuses(self.get_pod(namespace, name))):
            raise KeyError("pod %s/%s has no container %s" % (namespace, name, trigger))
        self._edit(namespace, name, stop)
        if pause:
            time.sleep(pause)

        def start(pod, which, last):
            ts = _now()
            for s in self._statuses(pod):
                if s["name"] in which:
                    self._start_again(s, ts)
            if last:
                self._set_condition(pod, "AllContainersRestarting", "False", ts)
            self._ready(pod, True, ts)
        self._previous_logs(namespace, name, logs)
        names = [s["name"] for s in self._statuses(self.get_pod(namespace, name))]
        names.sort(key=lambda n: n != trigger)
        groups = [[n] for n in names] if stagger else [names]
        out = None
        for i, which in enumerate(groups):
            if i:
                time.sleep(stagger)
            out = self._edit(namespace, name,
                             lambda pod, w=which, last=i == len(groups) - 1: start(pod, w, last))
        return out

    def resize_restart(self, namespace, name, container, resource, quantity, exit_code=143,
                       logs=None, finish=True):
        """KEP-1287 (GA 1.35): an in-place resize of `resource` of `container` to `quantity`
        (its request and limit) whose resizePolicy is RestartContainer.  The spec changes
        (metadata.generation + 1); the kubelet accepts it (allocatedResources, PodResizeInProgress
        True, status.observedGeneration), stops the container (exit_code: 143, SIGTERM) and
        starts it again (restartCount + 1) while status resources still show the old values;
        with finish the resize completes in a last update (status resources = the new ones,
        PodResizeInProgress removed)."""
        def spec(pod):
            pod["metadata"]["generation"] = int(pod["metadata"].get("generation", 1)) + 1
            for c in pod["spec"]["containers"]:
                if c["name"] == container:
                    res = c.setdefault("resources", {})
                    for s in self._statuses(pod):  # what the kubelet actuated so far
                        if s["name"] == container and "resources" not in s:
                            s["resources"] = json.loads(json.dumps(res))
                    for k in ("requests", "limits"):
                        res.setdefault(k, {})[resource] = quantity
        self._edit(namespace, name, spec)

        def accept(pod):
            ts = _now()
            pod["status"]["observedGeneration"] = pod["metadata"]["generation"]
            self._set_condition(pod, "PodResizeInProgress", "True", ts)
            for s in self._statuses(pod):
                if s["name"] == container:
                    s.setdefault("allocatedResources", {})[resource] = quantity
                    self._stop(s, exit_code, "Error", ts)
            self._ready(pod, False, ts)
        self._edit(namespace, name, accept)

        def start(pod):
            ts = _now()
            for s in self._statuses(pod):
                if s["name"] == container:
                    self._start_again(s, ts)
            self._ready(pod, True, ts)
        self._previous_logs(namespace, name, logs)
        out = self._edit(namespace, name, start)
        if finish:
            def done(pod):
                for s in self._statuses(pod):
                    if s["name"] == container:
                        for k in ("requests", "limits"):
                            s.setdefault("resources", {}).setdefault(k, {})[resource] = quantity
                pod["status"]["conditions"] = [c for c in pod["status"]["conditions"]
                                               if c.get("type") != "PodResizeInProgress"]
            out = self._edit(namespace, name, done)
        return out

    def begin_deletion(self, namespace, name, grace_seconds=None):
        """A graceful DELETE as the API server records it: metadata.deletionTimestamp (now +
        the grace period) and deletionGracePeriodSeconds (default: the spec's
        terminationGracePeriodSeconds); the pod stays until the kubelet is done."""
        def mark(pod):
            grace = grace_seconds if grace_seconds is not None else int(
                pod["spec"].get("terminationGracePeriodSeconds", 30))
            at = datetime.now(timezone.utc).timestamp() + grace
            pod["metadata"]["deletionTimestamp"] = datetime.fromtimestamp(
                int(at), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            pod["metadata"]["deletionGracePeriodSeconds"] = grace
            pod["metadata"]["generation"] = int(pod["metadata"].get("generation", 1)) + 1
        return self._edit(namespace, name, mark)

    def sandbox_change(self, namespace, name, exit_code=255, reason="Unknown", reboot=True,
                       pause=0.0, stagger=0.0):
        """A re-created pod sandbox (KEP-3085), as after a node reboot: the node's kubelet
        reports Rebooted (reboot=True), the pod condition PodReadyToStartContainers turns False
        and every container (and sidecar) has stopped (exit_code, reason: "Unknown" is what a
        reboot leaves); the kubelet reports SandboxChanged ("Pod sandbox changed, it will be
        killed and re-created."), PodReadyToStartContainers turns True with the new sandbox and
        every container runs again (each restartCount + 1, in one update; with stagger, one
        container per update, stagger seconds apart, as the kubelet starts them in turn)."""
        pod = self.get_pod(namespace, name)
        node = pod["spec"].get("nodeName", "")
        if reboot:
            self.add_event(namespace="default", involvedObject={
                "kind": "Node", "name": node, "uid": node}, reason="Rebooted",
                message="Node %s has been rebooted, boot id: %s" % (node, uuid.uuid4()),
                type="Warning", source={"component": "kubelet", "host": node})

        def stop(pod):
            ts = _now()
            self._set_condition(pod, "PodReadyToStartContainers", "False", ts)
            for init in (False, True):
                for s in self._statuses(pod, init):
                    if "running" in (s.get("state") or {}):
                        self._stop(s, exit_code, reason, ts)
            self._ready(pod, False, ts)
        self._edit(namespace, name, stop)
        self.add_pod_event(self.get_pod(namespace, name), "SandboxChanged",
                           "Pod sandbox changed, it will be killed and re-created.",
                           type_="Normal")
        if pause:
            time.sleep(pause)

        def stopped(pod):
            return [(init, s["name"]) for init in (True, False)
                    for s in self._statuses(pod, init)
                    if (s.get("state") or {}).get("terminated", {}).get("reason") == reason]

        def start(pod, which):
            ts = _now()
            self._set_condition(pod, "PodReadyToStartContainers", "True", ts)
            for init, cname in which:
                for s in self._statuses(pod, init):
                    if s["name"] == cname:
                        self._start_again(s, ts)
            self._ready(pod, True, ts)
        todo = stopped(self.get_pod(namespace, name))
        groups = [[x] for x in todo] if stagger else [todo]
        out = None
        for i, which in enumerate(groups):
            if i:
                time.sleep(stagger)
            out = self._edit(namespace, name, lambda pod, w=which: start(pod, w))
        return out

    def add_event(self, event=None, **kw):
        """core/v1 Event, partial (server fills metadata, timestamps, count, source).
        Keyword form: add_event(namespace=..., involvedObject={...}, reason=..., message=...,
        type="Warning")."""
        ev = dict(event or {})
        ns = kw.pop("namespace", None)
        ev.update(kw)
        if ns:
            ev.setdefault("metadata", {})["namespace"] = ns
        return self.call("POST", "/admin/events", ev)

    def add_pod_event(self, pod, reason, message, type_="Warning", container=None,
                      component="kubelet", **kw):
        """A kubelet-style event about a stored Pod object."""
        md = pod["metadata"]
        io = {"kind": "Pod", "namespace": md["namespace"], "name": md["name"],
              "uid": md["uid"], "apiVersion": "v1", "resourceVersion": md["resourceVersion"]}
        if container:
            io["fieldPath"] = "spec.containers{%s}" % container
        host = (pod.get("spec") or {}).get("nodeName", "")
        ev = {"involvedObject": io, "reason": reason, "message": message, "type": type_,
              "source": {"component": component, "host": host}}
        ev.update(kw)
        return self.call("POST", "/admin/events", ev)

    def add_node(self, node_or_name, labels=None, **kw):
        node = {"metadata": {"name": node_or_name, "labels": labels or {}}} if isinstance(
            node_or_name, str) else node_or_name
        node.update(kw)
        return self.call("POST", "/admin/nodes", node)

    def set_logs(self, namespace, pod, container, text, previous=False, append=False):
        return self.call("POST", "/admin/logs", {"namespace": namespace, "pod": pod,
                                                 "container": container, "text": text,
                                                 "previous": previous, "append": append})

    def get_lease(self, namespace, name):
        return self.call("GET", "/admin/leases/%s/%s" % (namespace, name))

    def put_lease(self, lease):
        return self.call("POST", "/admin/leases", lease)

    def add_resource_claim(self, claim):
        """A ResourceClaim (resource.k8s.io/v1 shape: metadata, spec, status) that the API
        serves at /apis/resource.k8s.io/v1/namespaces/NS/resourceclaims/NAME."""
        return self.call("POST", "/admin/resourceclaims", claim)

    # ---- workload controllers, ConfigMaps, Secrets (issue 27: what changed) ----

    def deployment(self, namespace, name, containers, replicas=3,
                   manager="kubectl-client-side-apply", ready=True, node="fake-node-1",
                   labels=None, template_spec=None, time=None, realistic=True):
        """A Deployment as `manager` created it and what the controllers then write: the
        Deployment (generation 1, annotation deployment.kubernetes.io/revision "1",
        managedFields: `manager` owning f:spec, kube-controller-manager the revision and the
        status), its ReplicaSet <name>-<pod-template-hash> (same annotation, ownerReferences
        to the Deployment with controller: true, the pod-template-hash label, status
        replicas/readyReplicas) and `replicas` running pods owned by it (ready unless
        ready=False).  containers: names or partial container dicts (realistic=True fills
        image, ports, resources and probes as create_pod does).  time: RFC 3339 UTC of the
        creation (default now).  Returns {"deployment", "replicaset", "pods"}."""
        body = {"containers": [_container(c, i) if realistic else
                               ({"name": c} if isinstance(c, str) else dict(c))
                               for i, c in enumerate(containers)],
                "replicas": replicas, "manager": manager, "ready": ready, "node": node}
        for k, v in (("labels", labels), ("template_spec", template_spec), ("time", time)):
            if v is not None:
                body[k] = v
        return self.call("POST", "/admin/deployments/%s/%s/create" % (namespace, name), body)

    def rollout(self, namespace, name, containers_patch=None, manager="kubectl-client-side-apply",
                new_pods=1, old_ready=None, ready=True, node="fake-node-1", template_spec=None,
                time=None):
        """`manager` changes the Deployment's pod template: containers_patch maps container
        names to JSON merge patches (e.g. {"api": {"image": "api:1.4.3", "resources":
        {"limits": {"memory": "512Mi"}}}}), template_spec is a merge patch of the pod spec.
        generation + 1; the controller makes the new ReplicaSet (revision = highest + 1,
        creation time `time` or now; the ReplicaSet of an earlier identical template is
        re-used, as a rollback does), writes the revision annotation, starts new_pods running
        pods of it (tests crash them with restart()), and with old_ready scales the previous
        ReplicaSet to old_ready pods (its other pods deleted) so that its status says
        old_ready ready replicas; the Deployment's status follows.  Returns {"deployment",
        "replicaset", "old_replicaset", "revision", "pods"}."""
        body = {"containers_patch": containers_patch or {}, "manager": manager,
                "new_pods": new_pods, "old_ready": old_ready, "ready": ready, "node": node}
        for k, v in (("template_spec", template_spec), ("time", time)):
            if v is not None:
                body[k] = v
        return self.call("POST", "/admin/deployments/%s/%s/rollout" % (namespace, name), body)

    def _controller_call(self, resource, action, namespace, name, containers=None,
                         realistic=True, **kw):
        body = {k: v for k, v in kw.items() if v is not None}
        if containers is not None:
            body["containers"] = [_container(c, i) if realistic else
                                  ({"name": c} if isinstance(c, str) else dict(c))
                                  for i, c in enumerate(containers)]
        return self.call("POST", "/admin/%s/%s/%s/%s" % (resource, namespace, name, action),
                         body)

    def statefulset(self, namespace, name, containers, replicas=1,
                    manager="kubectl-client-side-apply", ready=True, node="fake-node-1",
                    labels=None, service_name=None, template_spec=None, time=None,
                    realistic=True):
        """A StatefulSet and what its controller writes: the ControllerRevision
        <name>-<hash> (revision 1; data {"spec": {"template": {..., "$patch": "replace"}}},
        label controller.kubernetes.io/hash), pods <name>-0.. (labels
        controller-revision-hash = the revision's name, statefulset.kubernetes.io/pod-name,
        apps.kubernetes.io/pod-index) and the status (currentRevision = updateRevision).
        Returns {"statefulset", "controllerrevision", "pods"}."""
        return self._controller_call(
            "statefulsets", "create", namespace, name, containers, realistic,
            replicas=replicas, manager=manager, ready=ready, node=node, labels=labels,
            service_name=service_name, template_spec=template_spec, time=time)

    def rollout_statefulset(self, namespace, name, containers_patch=None,
                            manager="kubectl-client-side-apply", new_pods=1, ready=True,
                            node=None, template_spec=None, time=None):
        """The pod template changes (generation + 1): a new ControllerRevision (revision + 1,
        the status's updateRevision) and the RollingUpdate replaces new_pods pods from the
        highest ordinal down (same names, new uids); currentRevision stays until every pod
        is updated."""
        return self._controller_call(
            "statefulsets", "rollout", namespace, name, containers_patch=containers_patch or {},
            manager=manager, new_pods=new_pods, ready=ready, node=node,
            template_spec=template_spec, time=time)

    def daemonset(self, namespace, name, containers, nodes=("fake-node-1",),
                  manager="kubectl-client-side-apply", ready=True, labels=None,
                  template_spec=None, time=None, realistic=True):
        """A DaemonSet, its ControllerRevision, one pod per node (labels
        controller-revision-hash = the revision's hash, pod-template-generation; the node
        affinity and tolerations the controller adds) and its status."""
        return self._controller_call(
            "daemonsets", "create", namespace, name, containers, realistic,
            nodes=list(nodes), manager=manager, ready=ready, labels=labels,
            template_spec=template_spec, time=time)

    def rollout_daemonset(self, namespace, name, containers_patch=None,
                          manager="kubectl-client-side-apply", new_pods=1, ready=True,
                          template_spec=None, time=None):
        """A new ControllerRevision; the pods of new_pods nodes are replaced."""
        return self._controller_call(
            "daemonsets", "rollout", namespace, name, containers_patch=containers_patch or {},
            manager=manager, new_pods=new_pods, ready=ready, template_spec=template_spec,
            time=time)

    def job(self, namespace, name, containers, pods=1, restart_policy="OnFailure",
            manager="kubectl-create", ready=True, node="fake-node-1", labels=None, time=None,
            realistic=True):
        """A Job (selector and pod labels batch.kubernetes.io/controller-uid and job-name),
        `pods` running pods owned by it (restart_policy OnFailure: containers restart in
        place) and its status (active, ready, startTime)."""
        return self._controller_call(
            "jobs", "create", namespace, name, containers, realistic, pods=pods,
            restart_policy=restart_policy, manager=manager, ready=ready, node=node,
            labels=labels, time=time)

    def cronjob(self, namespace, name, containers, schedule="*/5 * * * *",
                restart_policy="OnFailure", manager="kubectl-client-side-apply", labels=None,
                time=None, realistic=True):
        """A CronJob (run it with run_cronjob)."""
        return self._controller_call(
            "cronjobs", "create", namespace, name, containers, realistic, schedule=schedule,
            restart_policy=restart_policy, manager=manager, labels=labels, time=time)

    def run_cronjob(self, namespace, name, time=None, pods=1, ready=True, node="fake-node-1"):
        """The CronJob controller starts the run scheduled at `time` (default now): the Job
        <name>-<minutes since the epoch> owned by the CronJob (annotation
        batch.kubernetes.io/cronjob-scheduled-timestamp), its pods, the CronJob's status.
        Returns {"cronjob", "job", "pods"}."""
        return self._controller_call("cronjobs", "run", namespace, name, time=time,
                                     pods=pods, ready=ready, node=node)

    def replace_pod(self, namespace, name, node=None, ready=True, time=None):
        """Delete a pod of a ReplicaSet made by deployment()/rollout(); its controller
        creates a replacement pod (new name and uid, restartCount 0), returned."""
        body = {"ready": ready}
        for k, v in (("node", node), ("time", time)):
            if v is not None:
                body[k] = v
        return self.call("POST", "/admin/pods/%s/%s/replace" % (namespace, name), body)

    def get_object(self, resource, namespace, name=None):
        """Any stored object: get_object("replicasets", "shop", "api-x"); cluster-scoped
        resources take the name alone (get_object("nodes", "n1"))."""
        path = "/admin/%s/%s" % (resource, namespace if name is None else
                                 "%s/%s" % (namespace, name))
        return self.call("GET", path)

    def create_object(self, resource, obj, manager=None, subresource=None, time=None):
        """POST a partial object of any served resource (deployments, replicasets,
        statefulsets, daemonsets, controllerrevisions, jobs, cronjobs, configmaps, secrets,
        ...); the server fills metadata and the API server's defaults.  With manager, the
        write is recorded in metadata.managedFields as that manager's Update (at time)."""
        return self.call("POST", "/admin/%s%s" % (resource, _write_query(
            manager, subresource, time)), obj)

    def update_object(self, resource, namespace, name, patch, manager=None, subresource=None,
                      time=None):
        """JSON merge patch of a stored object (name=None for cluster-scoped ones: then
        namespace is the name); with manager, recorded in managedFields (subresource
        "status" for a status write)."""
        path = "/admin/%s/%s" % (resource, namespace if name is None else
                                 "%s/%s" % (namespace, name))
        return self.call("PUT", path + _write_query(manager, subresource, time), patch)

    def delete_object(self, resource, namespace, name=None):
        path = "/admin/%s/%s" % (resource, namespace if name is None else
                                 "%s/%s" % (namespace, name))
        return self.call("DELETE", path)

    def configmap(self, namespace, name, data, manager="kubectl-create", time=None,
                  labels=None, binary_data=None):
        """Create (or replace the data of) a ConfigMap; managedFields: `manager` owns the
        f:data keys it wrote, at `time` (RFC 3339 UTC, default now)."""
        body = {"data": data, "manager": manager}
        for k, v in (("time", time), ("labels", labels), ("binaryData", binary_data)):
            if v is not None:
                body[k] = v
        return self.call("POST", "/admin/configmaps/%s/%s/write" % (namespace, name), body)

    def edit_configmap(self, namespace, name, data_patch, manager="kubectl-edit", time=None):
        """Change some keys of a ConfigMap's data (None deletes a key), as `manager` at
        `time`: that manager's managedFields entry takes the changed f:data keys and its time
        becomes `time`."""
        body = {"data_patch": data_patch, "manager": manager}
        if time is not None:
            body["time"] = time
        return self.call("POST", "/admin/configmaps/%s/%s/write" % (namespace, name), body)

    def secret(self, namespace, name, data, manager="kubectl-create", time=None,
               string_data=False, type_="Opaque"):
        """Create (or replace the data of) a Secret; data values are plain text (encoded
        here).  string_data=True writes them as stringData (the managed field is then
        f:stringData, as when a client sends stringData)."""
        if string_data:
            body = {"data": None, "stringData": dict(data)}
        else:
            body = {"data": {k: base64.b64encode(v.encode() if isinstance(v, str) else v)
                             .decode() for k, v in data.items()}}
        body["manager"] = manager
        if time is not None:
            body["time"] = time
        return self.call("POST", "/admin/secrets/%s/%s/write" % (namespace, name), body)

    def edit_secret(self, namespace, name, data_patch, manager="kubectl-edit", time=None):
        """Change some keys of a Secret (plain text values, None deletes)."""
        patch = {k: None if v is None else base64.b64encode(
            v.encode() if isinstance(v, str) else v).decode() for k, v in data_patch.items()}
        body = {"data_patch": patch, "manager": manager}
        if time is not None:
            body["time"] = time
        return self.call("POST", "/admin/secrets/%s/%s/write" % (namespace, name), body)

    def update_node(self, name, patch, manager="kubelet", subresource="status", time=None):
        """JSON merge patch of a Node as `manager` writes it: the kubelet's status (nodeInfo
        versions, conditions) by default; labels or taints with e.g.
        manager="kubectl-label"/"kubectl-taint", subresource=None."""
        return self.update_object("nodes", name, None, patch, manager, subresource, time)

    def set_node_versions(self, name, kubelet=None, runtime=None, kernel=None, time=None):
        """The node's kubelet reports new versions (status.nodeInfo), as after an upgrade."""
        info = {}
        for k, v in (("kubeletVersion", kubelet), ("kubeProxyVersion", kubelet),
                     ("containerRuntimeVersion", runtime), ("kernelVersion", kernel)):
            if v is not None:
                info[k] = v
        return self.update_node(name, {"status": {"nodeInfo": info}}, time=time)

    def set_node_taints(self, name, taints, manager="kubectl-taint", time=None):
        """spec.taints replaced by `taints` (list of {key, value?, effect})."""
        return self.update_node(name, {"spec": {"taints": taints}}, manager, None, time)

    def set_node_labels(self, name, labels, manager="kubectl-label", time=None):
        """Merge labels into the node's (None deletes one)."""
        return self.update_node(name, {"metadata": {"labels": labels}}, manager, None, time)

    def set_node_condition(self, name, ctype, status, reason="", message="", time=None):
        """The kubelet reports node condition ctype (e.g. MemoryPressure) as status."""
        node = self.get_object("nodes", name)
        conds = node.get("status", {}).get("conditions", [])
        ts = time or _now()
        for c in conds:
            if c.get("type") == ctype:
                if c.get("status") != status:
                    c["lastTransitionTime"] = ts
                c.update(status=status, reason=reason, message=message, lastHeartbeatTime=ts)
                break
        else:
            conds.append({"type": ctype, "status": status, "lastHeartbeatTime": ts,
                          "lastTransitionTime": ts, "reason": reason, "message": message})
        return self.update_node(name, {"status": {"conditions": conds}}, time=time)

    # ---- control ----

    def compact(self, rv=None, close_watches=True):
        body = {"close_watches": close_watches}
        if rv is not None:
            body["rv"] = rv
        return self.call("POST", "/admin/compact", body)

    def fault(self, **kw):
        """fault(type="drop_watches"), fault(type="http_error", status=503, count=2,
        path_regex="^/api/v1/pods$"), ... see README."""
        return self.call("POST", "/admin/faults", kw)

    def clear_faults(self):
        return self.fault(type="clear")

    def config(self, **kw):
        return self.call("POST", "/admin/config", kw)

    def requests(self):
        """Every API request: method, path, query, status, user_agent, accept, and authz
        (the authorization attributes verb, apiGroup, resource, subresource, namespace,
        name, or verb and path for a non-resource URL, and whether RBAC allowed it)."""
        return self.call("GET", "/admin/requests")

    def rbac_state(self):
        """{"enabled", "user", "objects"}: the RBAC being enforced."""
        return self.call("GET", "/admin/rbac")

    def set_rbac(self, objects, user=None):
        """Replace the enforced RBAC objects (None: enforce nothing); user: the token's."""
        body = {"objects": objects}
        if user:
            body["user"] = user
        return self.call("PUT", "/admin/rbac", body)

    def clear_requests(self):
        return self.call("DELETE", "/admin/requests")

    def state(self):
        return self.call("GET", "/admin/state")

    def wait_for(self, predicate, timeout=10.0, interval=0.02, what="condition"):
        """Poll predicate() until truthy (returns its value) or raise TimeoutError."""
        deadline = time.monotonic() + timeout
        while True:
            v = predicate()
            if v:
                return v
            if time.monotonic() > deadline:
                raise TimeoutError("timed out after %.1f s waiting for %s" % (timeout, what))
            time.sleep(interval)


def _write_query(manager, subresource, time):
    q = {k: v for k, v in (("manager", manager), ("subresource", subresource), ("time", time))
         if v is not None}
    return "?" + urllib.parse.urlencode(q) if q else ""


def _merge(target, patch):
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge(out.get(k), v)
    return out
