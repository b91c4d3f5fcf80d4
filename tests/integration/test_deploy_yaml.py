"""The deploy YAML: the Helm chart (deploy/helm/krc) rendered without helm by
tests/tools/helmrender (Go's text/template + sprig + sigs.k8s.io/yaml, as Helm), the Kustomize
base and overlays (deploy/manifests, deploy/overlays) rendered by `kubectl kustomize`.

Checked here:
- the renderer behaves like helm on the features the chart uses (a small chart of its own);
- the chart with default values and with several value sets (a Go-tool values file, plain
  watched namespaces, two replicas, persistence, a ServiceMonitor, Secret references, a full
  config, an external PostgreSQL database, NetworkPolicy peers): the objects, the environment,
  the RBAC, the NetworkPolicy, the refusals, values.yaml documented;
- the chart's RBAC rules are the Kustomize base's rules, its pod settings the same, and its
  NetworkPolicy admits the same as the base's;
- yamllint (deploy/.yamllint) passes on values.yaml, Chart.yaml, the manifests and every
  rendered output, and fails on a bad file;
- every rendered object validates strictly against the Kubernetes OpenAPI schemas
  (tests/schema/validate.js, kubernetes-models from npm), and deliberately wrong objects fail;
- the real krc binary accepts what the chart renders: `krc config check` on the config file,
  every environment variable is a krc setting, and `krc run` parses the rendered arguments and
  environment (it then stops at the missing kubeconfig).
"""

import base64
import copy
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import krc_harness as h
import yaml  # Debian python3-yaml (yamllint depends on it)

ROOT = h.ROOT
CHART = os.path.join(ROOT, "deploy", "helm", "krc")
MANIFESTS = os.path.join(ROOT, "deploy", "manifests")
OVERLAYS = os.path.join(ROOT, "deploy", "overlays")
SCHEMA_DIR = os.path.join(ROOT, "tests", "schema")
VALIDATOR = os.path.join(SCHEMA_DIR, "validate.js")
YAMLLINT_CONFIG = os.path.join(ROOT, "deploy", ".yamllint")
GO_TOOL_VALUES = os.path.join(ROOT, "tests", "fixtures", "helm", "go-tool-values.yaml")
GO_PACKAGES = ("golang-go golang-github-masterminds-sprig-dev golang-gopkg-yaml.v3-dev "
               "golang-gopkg-yaml.v2-dev golang-k8s-sigs-yaml-dev")
NPM_INSTALL = "npm ci --no-audit --no-fund --prefix tests/schema"

RELEASE, NAMESPACE = "krc", "krc"
CONFIG_PATH = "/etc/krc/config.yaml"
# Set by the chart from the downward API for leader election; not krc configuration keys.
DOWNWARD_ENV = {"POD_NAME", "POD_NAMESPACE"}

FULL_CONFIG = {
    "config": {
        "clusterName": "from-config",
        "logFormat": "text",
        "historyMaxRows": 20000,
        "workers": 3,
        "stormThreshold": 10,
        "routes": [{"namespace": "^ml-", "webhookUrlEnv": "SLACK_WEBHOOK_ML"},
                   {"pod": "payments", "channel": "#payments-oncall"}],
        "silences": [{"namespace": "batch", "daily": "01:00-03:00", "reason": "nightly"}],
        "redactPatterns": ["customer_id=[0-9]+"],
        "watchedNamespaces": ["shop", "ml-train"],
    },
    "slackBotToken": "xoxb-not-a-real-token",
    "slackChannel": "#alerts",
    "extraEnv": [{"name": "SLACK_WEBHOOK_ML",
                  "valueFrom": {"secretKeyRef": {"name": "ml-slack", "key": "url"}}}],
    "extraArgs": ["--log-level", "debug"],
    "muteSeconds": 1000000,
    "ignoreRestartCount": 0,
}

PG_URL = "postgres://krc@pg.example.internal:5432/krc?sslmode=verify-full"
PG_PASSWORD_FILE = "/etc/krc-db/password"

# name -> (values dict or None, values files)
VALUE_SETS = {
    "default": ({}, []),
    "go-tool": (None, [GO_TOOL_VALUES]),
    "plain-namespaces": ({"watchedNamespaces": "shop, payments"}, []),
    "regex-namespaces": ({"watchedNamespaces": ["shop", "^ml-"]}, []),
    "ha": ({"replicaCount": 2}, []),
    "persistence": ({"persistence": {"enabled": True, "storageClass": "fast"}}, []),
    "service-monitor": ({"serviceMonitor": {"enabled": True, "labels": {"release": "prom"},
                                            "scrapeTimeout": "10s"}}, []),
    "secret-refs": ({"slackWebhookUrlSecretKeyRef": {"name": "slack", "key": "webhook"},
                     "slackBotTokenSecretKeyRef": {"name": "slack", "key": "bot-token"},
                     "slackChannel": "#alerts"}, []),
    "full-config": (FULL_CONFIG, []),
    "postgres": ({"replicaCount": 2, "clusterName": "eu-1",
                  "history": {"database": {"url": PG_URL,
                                           "passwordSecret": {"name": "krc-db", "key": "pw"}}}},
                 []),
    "network-policy": ({"mcpTokenSecretKeyRef": {"name": "krc-mcp", "key": "token"},
                        "networkPolicy": {
                            "metricsScrapers": [{"namespaceSelector": {"matchLabels": {
                                "kubernetes.io/metadata.name": "monitoring"}}}],
                            "mcpClients": [{"podSelector": {"matchLabels": {"role": "agent"}}},
                                           {"ipBlock": {"cidr": "192.168.10.0/24"}}],
                            "nodeCidrs": ["10.0.0.0/16", "fd00:10::/64"]}}, []),
}


# change tracking (trackChanges, on by default): list and watch of the workload controllers
TRACKED = {(g, r, v) for g, rs in (("apps", ("deployments", "replicasets", "statefulsets",
                                             "daemonsets", "controllerrevisions")),
                                    ("batch", ("jobs", "cronjobs")))
           for r in rs for v in ("list", "watch")}


class RenderError(Exception):
    pass


_renderer = []


def renderer():
    """Builds tests/tools/helmrender (GOPATH mode, Debian's Go packages) next to krc."""
    if _renderer:
        return _renderer[0]
    if shutil.which("go") is None:
        raise AssertionError("go is not installed: apt-get install %s (scripts/setup-test)" % GO_PACKAGES)
    outdir = os.path.join(os.path.dirname(os.path.abspath(h.krc_binary())), "helmrender")
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, "helmrender")
    env = dict(os.environ, GO111MODULE="off", GOPATH="/usr/share/gocode", GOFLAGS="",
               GOCACHE=os.path.join(outdir, "gocache"))
    # built under a name of this process's own, then renamed into place: test_rbac.py may
    # build it at the same time (ctest -j2), and must never run a half-written binary
    tmp = "%s.%d" % (out, os.getpid())
    p = subprocess.run(["go", "build", "-o", tmp, "./tests/tools/helmrender"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise AssertionError("building tests/tools/helmrender failed (packages: %s):\n%s"
                             % (GO_PACKAGES, p.stderr))
    os.replace(tmp, out)
    _renderer.append(out)
    return out


def render_text(values=None, files=(), sets=(), chart=CHART, strict=True, name=RELEASE,
                namespace=NAMESPACE, notes=None):
    """`helm template`: the rendered stream; RenderError with helmrender's message on failure."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [renderer(), "--name", name, "--namespace", namespace]
        if strict:
            args.append("--strict")
        for f in files:
            args += ["-f", f]
        if values is not None:
            vf = os.path.join(tmp, "values.yaml")
            with open(vf, "w") as f:
                yaml.safe_dump(values, f)
            args += ["-f", vf]
        for s in sets:
            args += ["--set", s]
        notes_file = os.path.join(tmp, "NOTES.txt")
        args += ["--notes", notes_file, chart]
        p = subprocess.run(args, capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise RenderError(p.stderr.strip())
        if notes is not None and os.path.exists(notes_file):
            with open(notes_file) as f:
                notes.append(f.read())
        return p.stdout


def render(*args, **kwargs):
    return [d for d in yaml.safe_load_all(render_text(*args, **kwargs)) if d]


def render_set(name):
    values, files = VALUE_SETS[name]
    return render(values, files)


def kustomize_run(path):
    return subprocess.run(["kubectl", "kustomize", path], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)


def kustomize_version():
    """kubectl's kustomize version as a tuple, (0,) when kubectl does not say (before 1.24)."""
    p = subprocess.run(["kubectl", "version", "--client"], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=60)
    m = re.search(r"Kustomize Version: v?([0-9]+)\.([0-9]+)", p.stdout)
    return (int(m.group(1)), int(m.group(2))) if m else (0,)


def kustomize_text(path):
    p = kustomize_run(path)
    if p.returncode != 0:
        raise AssertionError("kubectl kustomize %s failed: %s(deploy/ needs kustomize 4.1 or later, "
                             "kubectl 1.22 or later; this kubectl's: %s)"
                             % (path, p.stderr, ".".join(map(str, kustomize_version()))))
    return p.stdout


def kustomize_dirs():
    dirs = []
    if os.path.isdir(MANIFESTS):
        dirs.append(MANIFESTS)
    if os.path.isdir(OVERLAYS):
        dirs += sorted(os.path.join(OVERLAYS, d) for d in os.listdir(OVERLAYS)
                       if os.path.exists(os.path.join(OVERLAYS, d, "kustomization.yaml")))
    return dirs


def by_kind(docs, kind):
    return [d for d in docs if d["kind"] == kind]


def one(docs, kind):
    found = by_kind(docs, kind)
    assert len(found) == 1, "expected one %s, got %d" % (kind, len(found))
    return found[0]


def container(docs):
    return one(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]


def env_of(docs):
    return {e["name"]: e for e in container(docs).get("env") or []}


def config_of(docs):
    cms = [d for d in by_kind(docs, "ConfigMap") if "config.yaml" in d.get("data", {})]
    assert len(cms) == 1
    return cms[0]["data"]["config.yaml"]


def rule_set(objs):
    """RBAC rules as (role kind, namespace, apiGroup, resource, verb, resourceName) tuples."""
    out = set()
    for o in objs:
        if o["kind"] not in ("Role", "ClusterRole"):
            continue
        for r in o.get("rules") or []:
            for g in r.get("apiGroups") or [""]:
                for res in r.get("resources") or []:
                    for v in r.get("verbs") or []:
                        for n in r.get("resourceNames") or ["*"]:
                            out.add((o["kind"], o["metadata"].get("namespace"), g, res, v, n))
    return out


class RendererTest(unittest.TestCase):
    """helmrender does what helm does with the features the chart relies on."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.chart = os.path.join(self.tmp.name, "demo")
        os.makedirs(os.path.join(self.chart, "templates"))
        self.write("Chart.yaml", "apiVersion: v2\nname: demo\nversion: 1.2.3\nappVersion: \"9.9\"\n")
        self.write("values.yaml", "a:\n  b: 1\n  c: keep\nbig: 1000000\nname: \"\"\nlist: [x, y]\n")
        self.write("templates/_helpers.tpl",
                   '{{- define "demo.name" -}}{{ .Chart.Name }}-{{ .Release.Name }}{{- end -}}\n'
                   'helpers produce no output\n')
        self.write("templates/cm.yaml",
                   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                   "  name: {{ include \"demo.name\" . }}\n  namespace: {{ .Release.Namespace }}\n"
                   "data:\n  b: {{ .Values.a.b | quote }}\n  c: {{ .Values.a.c | default \"gone\" }}\n"
                   "  big: {{ .Values.big | quote }}\n  tpl: {{ tpl \"{{ .Chart.AppVersion }}\" . }}\n"
                   "  yaml: |\n    {{- toYaml .Values.list | nindent 4 }}\n"
                   "  base: {{ .Template.BasePath }}\n"
                   "---\n\n---\n"
                   "{{- if .Values.extra }}\napiVersion: v1\nkind: Secret\nmetadata:\n  name: extra\n"
                   "{{- end }}\n")
        self.write("templates/NOTES.txt", "notes of {{ .Release.Name }}\n")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, text):
        with open(os.path.join(self.chart, rel), "w") as f:
            f.write(text)

    def test_renders_like_helm(self):
        notes = []
        text = render_text(chart=self.chart, name="rel", namespace="ns", strict=False,
                           sets=["a.b=2"], notes=notes)
        docs = [d for d in yaml.safe_load_all(text) if d]
        self.assertEqual(len(docs), 1, text)  # empty documents and false ifs dropped
        self.assertIn("# Source: demo/templates/cm.yaml", text)
        self.assertNotIn("helpers produce no output", text)
        cm = docs[0]
        self.assertEqual(cm["metadata"], {"name": "demo-rel", "namespace": "ns"})
        self.assertEqual(cm["data"]["b"], "2")  # --set wins over values.yaml
        self.assertEqual(cm["data"]["c"], "keep")
        # Helm reads values files into float64: one million prints in exponent form.
        self.assertEqual(cm["data"]["big"], "1e+06")
        self.assertEqual(cm["data"]["tpl"], 9.9)
        # values are YAML 1.1 for Helm (sigs.k8s.io/yaml over yaml.v2): an unquoted y is true
        self.assertEqual(cm["data"]["yaml"], "- x\n- true\n")
        self.assertEqual(cm["data"]["base"], "demo/templates")
        self.assertEqual(notes, ["notes of rel\n"])

    def test_values_files_coalesce_and_null_deletes(self):
        vf = os.path.join(self.tmp.name, "v.yaml")
        with open(vf, "w") as f:
            f.write("a:\n  c: null\nextra: true\n")
        docs = render(files=[vf], chart=self.chart, strict=False)
        self.assertEqual(docs[0]["data"]["c"], "gone")
        self.assertEqual(docs[0]["data"]["b"], "1")
        self.assertEqual([d["kind"] for d in docs], ["ConfigMap", "Secret"])

    def test_strict_mode_rejects_missing_keys(self):
        self.write("templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
                                        "data:\n  a: \"{{ .Values.nosuchkey }}\"\n")
        with self.assertRaises(RenderError) as cm:
            render_text(chart=self.chart, strict=True)
        self.assertIn("nosuchkey", str(cm.exception))
        # helm's default, missingkey=zero: "<no value>", removed from the output
        self.assertEqual(render(chart=self.chart, strict=False)[0]["data"], {"a": ""})
        # a field of a missing key is an error in both modes, as in helm
        self.write("templates/cm.yaml", "{{ .Values.nosuchkey.x }}")
        with self.assertRaises(RenderError) as cm:
            render_text(chart=self.chart, strict=False)
        self.assertIn("nil pointer", str(cm.exception))

    def test_errors_are_errors(self):
        cases = {
            '{{ required "name is required" .Values.name }}': "name is required",
            '{{ fail "refused" }}': "refused",
            '{{ include "no.such" . }}': "no.such",
            "{{ .Values.a.b | nosuchfunc }}": "nosuchfunc",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  name: y\n": "already defined",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [x\n": "YAML",
            "apiVersion: v1\nkind: ConfigMap\n": "metadata.name",
        }
        for tpl, message in cases.items():
            with self.subTest(tpl=tpl):
                self.write("templates/cm.yaml", tpl)
                with self.assertRaises(RenderError) as cm:
                    render_text(chart=self.chart, strict=False)
                self.assertIn(message, str(cm.exception))

    def test_chart_yaml_is_checked(self):
        for text, message in [("apiVersion: v1\nname: demo\nversion: 1.0.0\n", "apiVersion"),
                              ("apiVersion: v2\nname: demo\nversion: one\n", "SemVer"),
                              ("apiVersion: v2\nname: other\nversion: 1.0.0\n", "directory"),
                              ("apiVersion: v2\nname: demo\nversion: 1.0.0\nnosuch: 1\n", "nosuch"),
                              ("apiVersion: v2\nname: demo\nversion: 1.0.0\nkubeVersion: \">=1.99.0-0\"\n",
                               "incompatible")]:
            with self.subTest(text=text):
                self.write("Chart.yaml", text)
                with self.assertRaises(RenderError) as cm:
                    render_text(chart=self.chart, strict=False)
                self.assertIn(message, str(cm.exception))


class ChartTest(unittest.TestCase):
    """The chart's objects for each value set."""

    def test_default_values(self):
        docs = render_set("default")
        self.assertEqual(sorted(d["kind"] for d in docs),
                         ["ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment",
                          "NetworkPolicy", "Service", "ServiceAccount"])
        dep = one(docs, "Deployment")
        pod = dep["spec"]["template"]["spec"]
        c = container(docs)
        self.assertEqual(dep["spec"]["replicas"], 1)
        self.assertEqual(dep["spec"]["strategy"], {"type": "Recreate"})
        self.assertEqual(c["image"], "ghcr.io/kube-restart-collector/krc:0.1.0")
        self.assertEqual(c["args"], ["run", "--config", CONFIG_PATH])
        # nothing set: krc's defaults apply; KRC_DB as in the config file (the image sets it too)
        self.assertEqual(c["env"], [{"name": "KRC_DB", "value": "/var/lib/krc/krc.db"}])
        self.assertEqual(pod["serviceAccountName"], "krc")
        self.assertEqual(pod["securityContext"]["runAsNonRoot"], True)
        self.assertEqual(pod["securityContext"]["runAsUser"], 65532)
        self.assertEqual(pod["securityContext"]["seccompProfile"], {"type": "RuntimeDefault"})
        sc = c["securityContext"]
        self.assertEqual((sc["runAsNonRoot"], sc["runAsUser"], sc["readOnlyRootFilesystem"],
                          sc["allowPrivilegeEscalation"], sc["capabilities"]),
                         (True, 65532, True, False, {"drop": ["ALL"]}))
        self.assertEqual(sc["seccompProfile"], {"type": "RuntimeDefault"})
        self.assertEqual(c["ports"], [{"name": "http", "containerPort": 8080, "protocol": "TCP"}])
        self.assertEqual(c["livenessProbe"]["httpGet"], {"path": "/healthz", "port": "http"})
        self.assertEqual(c["readinessProbe"]["httpGet"], {"path": "/readyz", "port": "http"})
        self.assertEqual(c["resources"], {"requests": {"cpu": "50m", "memory": "64Mi"},
                                          "limits": {"cpu": "500m", "memory": "192Mi"}})
        mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
        self.assertEqual(mounts, {"/etc/krc": "config", "/var/lib/krc": "data", "/tmp": "tmp"})
        vols = {v["name"]: v for v in pod["volumes"]}
        self.assertEqual(vols["data"]["emptyDir"], {"sizeLimit": "1Gi"})
        self.assertEqual(vols["config"]["configMap"]["name"], "krc-config")
        cfg = yaml.safe_load(config_of(docs))
        self.assertEqual(cfg, {"db": "/var/lib/krc/krc.db", "logFormat": "json", "logLevel": "info"})
        svc = one(docs, "Service")
        self.assertEqual(svc["spec"]["ports"][0]["port"], 8080)
        self.assertEqual(svc["spec"]["selector"], dep["spec"]["selector"]["matchLabels"])
        for o in docs:
            if o["kind"] not in ("ClusterRole", "ClusterRoleBinding"):
                self.assertEqual(o["metadata"]["namespace"], NAMESPACE, o["kind"])

    def test_go_tool_values_reach_krc_under_the_same_variables(self):
        docs = render_set("go-tool")
        env = env_of(docs)
        plain = {k: e["value"] for k, e in env.items() if "value" in e}
        self.assertEqual(plain, {
            "KRC_DB": "/var/lib/krc/krc.db", "CLUSTER_NAME": "prod-eu", "SLACK_CHANNEL": "restart-info-prod",
            "SLACK_USERNAME": "k8s-pod-restart-info-collector", "MUTE_SECONDS": "900",
            "IGNORE_RESTART_COUNT": "20", "IGNORED_NAMESPACES": "kube-system,^tmp-",
            "IGNORED_POD_NAME_PREFIXES": "debug-,canary-",
            "IGNORE_RESTARTS_WITH_EXIT_CODE_ZERO": "true"})
        self.assertEqual(env["SLACK_WEBHOOK_URL"]["valueFrom"],
                         {"secretKeyRef": {"name": "krc", "key": "slackWebhookUrl"}})
        secret = one(docs, "Secret")
        self.assertEqual(base64.b64decode(secret["data"]["slackWebhookUrl"]).decode(),
                         "https://hooks.slack.com/services/T0000/B0000/not-a-real-webhook")
        self.assertNotIn("slackWebhookUrl", config_of(docs))
        pod = one(docs, "Deployment")["spec"]["template"]
        self.assertEqual(pod["metadata"]["annotations"]["team"], "platform")
        self.assertEqual(pod["spec"]["imagePullSecrets"], [{"name": "registry-credentials"}])
        self.assertEqual(pod["spec"]["nodeSelector"], {"kubernetes.io/os": "linux", "pool": "system"})
        self.assertEqual(pod["spec"]["tolerations"][0]["key"], "dedicated")
        self.assertEqual(container(docs)["resources"]["limits"], {"cpu": "50m", "memory": "100Mi"})
        # the Go tool's empty podSecurityContext does not remove the secure defaults
        self.assertEqual(pod["spec"]["securityContext"]["runAsUser"], 65532)

    def test_secret_key_refs_create_no_secret(self):
        docs = render_set("secret-refs")
        self.assertEqual(by_kind(docs, "Secret"), [])
        env = env_of(docs)
        self.assertEqual(env["SLACK_WEBHOOK_URL"]["valueFrom"],
                         {"secretKeyRef": {"name": "slack", "key": "webhook"}})
        self.assertEqual(env["SLACK_BOT_TOKEN"]["valueFrom"],
                         {"secretKeyRef": {"name": "slack", "key": "bot-token"}})
        # a reference wins over an inline value: still no Secret
        docs = render({"slackWebhookUrl": "https://x.invalid/hook",
                       "slackWebhookUrlSecretKeyRef": {"name": "slack", "key": "webhook"}})
        self.assertEqual(by_kind(docs, "Secret"), [])
        with self.assertRaises(RenderError) as cm:
            render({"slackWebhookUrlSecretKeyRef": {"name": "slack"}})
        self.assertIn("slackWebhookUrlSecretKeyRef.key is required", str(cm.exception))

    def test_plain_watched_namespaces_use_namespaced_roles(self):
        docs = render_set("plain-namespaces")
        roles = {(r["metadata"]["namespace"], r["metadata"]["name"]): r for r in by_kind(docs, "Role")}
        self.assertEqual(set(roles), {("shop", "krc"), ("payments", "krc"),
                                      ("default", "krc-node-events")})
        for ns in ("shop", "payments"):
            self.assertEqual(rule_set([roles[(ns, "krc")]]), {
                ("Role", ns, "", "pods", "get", "*"), ("Role", ns, "", "pods", "list", "*"),
                ("Role", ns, "", "pods", "watch", "*"), ("Role", ns, "", "pods/log", "get", "*"),
                ("Role", ns, "", "events", "list", "*"),
                ("Role", ns, "resource.k8s.io", "resourceclaims", "get", "*"),
                ("Role", ns, "events.k8s.io", "events", "create", "*")} |
                {("Role", ns, g, r, v, "*") for g, r, v in TRACKED})
        self.assertEqual(rule_set([roles[("default", "krc-node-events")]]),
                         {("Role", "default", "", "events", "list", "*")})
        cr = one(docs, "ClusterRole")
        self.assertEqual(rule_set([cr]), {("ClusterRole", None, "", "nodes", v, "*")
                                          for v in ("get", "list", "watch")})
        bindings = by_kind(docs, "RoleBinding")
        self.assertEqual(sorted(b["metadata"]["namespace"] for b in bindings),
                         ["default", "payments", "shop"])
        for b in bindings + by_kind(docs, "ClusterRoleBinding"):
            self.assertEqual(b["subjects"], [{"kind": "ServiceAccount", "name": "krc",
                                              "namespace": NAMESPACE}])
            self.assertTrue(any(r["metadata"]["name"] == b["roleRef"]["name"]
                                and r["kind"] == b["roleRef"]["kind"]
                                for r in by_kind(docs, "Role") + by_kind(docs, "ClusterRole")))
        self.assertEqual(env_of(docs)["WATCHED_NAMESPACES"]["value"], "shop, payments")
        # the same permissions as the cluster-wide mode, only narrower in scope
        flat = {t[2:] for t in rule_set(docs)}
        self.assertEqual(flat, {t[2:] for t in rule_set(render_set("default"))})
        # watching "default" itself needs no extra Role for node events
        docs = render({"watchedNamespaces": "default,shop"})
        self.assertEqual(sorted(r["metadata"]["namespace"] for r in by_kind(docs, "Role")),
                         ["default", "shop"])

    def test_kubernetes_events_off_grants_nothing_for_them(self):
        on = render_set("default")
        self.assertIn(("ClusterRole", None, "events.k8s.io", "events", "create", "*"),
                      rule_set(on))
        self.assertNotIn("KRC_KUBERNETES_EVENTS", env_of(on))
        for values in ({"kubernetesEvents": False}, {"config": {"kubernetesEvents": False}},
                       {"kubernetesEvents": False, "watchedNamespaces": "shop,payments"}):
            with self.subTest(values):
                docs = render(values)
                self.assertEqual([t for t in rule_set(docs) if t[2] == "events.k8s.io"], [])
                # krc is told, so it does not try what RBAC does not allow
                self.assertEqual(env_of(docs)["KRC_KUBERNETES_EVENTS"]["value"], "false")
                # everything else is granted as before
                self.assertEqual({t[2:] for t in rule_set(docs)},
                                 {t[2:] for t in rule_set(on) if t[2] != "events.k8s.io"})

    def test_track_changes_off_grants_nothing_for_it(self):
        on = render_set("default")
        tracked = {("ClusterRole", None, g, r, v, "*") for g, r, v in TRACKED}
        self.assertLessEqual(tracked, rule_set(on))
        self.assertNotIn("KRC_TRACK_CHANGES", env_of(on))
        self.assertNotIn("KRC_TRACK_CONFIG_CHANGES", env_of(on))
        node_watch = {("ClusterRole", None, "", "nodes", v, "*") for v in ("list", "watch")}
        for values in ({"trackChanges": False}, {"config": {"trackChanges": False}},
                       {"trackChanges": False, "trackConfigChanges": True}):
            with self.subTest(values):
                docs = render(values)
                self.assertEqual(rule_set(docs), rule_set(on) - tracked - node_watch)
                self.assertEqual(env_of(docs)["KRC_TRACK_CHANGES"]["value"], "false")
                self.assertNotIn("KRC_TRACK_CONFIG_CHANGES", env_of(docs))
        docs = render({"trackChanges": False, "watchedNamespaces": "shop,payments"})
        self.assertEqual([t for t in rule_set(docs) if t[2] in ("apps", "batch")], [])
        self.assertEqual(rule_set([one(docs, "ClusterRole")]),
                         {("ClusterRole", None, "", "nodes", "get", "*")})

    def test_track_config_changes_grants_get_on_configmaps_and_secrets(self):
        on = render_set("default")
        self.assertEqual([t for t in rule_set(on) if t[3] in ("configmaps", "secrets")], [])
        for values in ({"trackConfigChanges": True}, {"config": {"trackConfigChanges": True}}):
            with self.subTest(values):
                docs = render(values)
                self.assertEqual(rule_set(docs) - rule_set(on), {
                    ("ClusterRole", None, "", "configmaps", "get", "*"),
                    ("ClusterRole", None, "", "secrets", "get", "*")})
                self.assertEqual(env_of(docs)["KRC_TRACK_CONFIG_CHANGES"]["value"], "true")
        docs = render({"trackConfigChanges": True, "watchedNamespaces": "shop,payments"})
        self.assertEqual({t for t in rule_set(docs) if t[3] in ("configmaps", "secrets")}, {
            ("Role", ns, "", r, "get", "*") for ns in ("shop", "payments")
            for r in ("configmaps", "secrets")})

    def test_namespaces_from_the_config_file_count_too(self):
        docs = render_set("full-config")
        self.assertEqual(sorted(r["metadata"]["namespace"] for r in by_kind(docs, "Role")),
                         ["default", "ml-train", "shop"])
        self.assertNotIn("WATCHED_NAMESPACES", env_of(docs))

    def test_regex_or_no_watched_namespaces_use_a_cluster_role(self):
        for name in ("regex-namespaces", "default"):
            with self.subTest(name):
                docs = render_set(name)
                self.assertEqual(by_kind(docs, "Role"), [])
                self.assertEqual(by_kind(docs, "RoleBinding"), [])
                self.assertEqual(rule_set(docs), {
                    ("ClusterRole", None, "", "pods", v, "*") for v in ("get", "list", "watch")} | {
                    ("ClusterRole", None, "", "pods/log", "get", "*"),
                    ("ClusterRole", None, "", "events", "list", "*"),
                    ("ClusterRole", None, "", "nodes", "get", "*"),
                    ("ClusterRole", None, "", "nodes", "list", "*"),
                    ("ClusterRole", None, "", "nodes", "watch", "*"),
                    ("ClusterRole", None, "resource.k8s.io", "resourceclaims", "get", "*"),
                    ("ClusterRole", None, "events.k8s.io", "events", "create", "*")} | {
                    ("ClusterRole", None, g, r, v, "*") for g, r, v in TRACKED})
        self.assertEqual(env_of(render_set("regex-namespaces"))["WATCHED_NAMESPACES"]["value"],
                         "shop,^ml-")

    def test_two_replicas_turn_on_leader_election(self):
        docs = render_set("ha")
        dep = one(docs, "Deployment")
        c = container(docs)
        self.assertEqual(dep["spec"]["replicas"], 2)
        self.assertEqual(c["args"], ["run", "--config", CONFIG_PATH, "--leader-elect",
                                     "--lease-name", "krc", "--lease-namespace", NAMESPACE])
        env = env_of(docs)
        self.assertEqual(env["POD_NAME"]["valueFrom"], {"fieldRef": {"fieldPath": "metadata.name"}})
        self.assertEqual(env["POD_NAMESPACE"]["valueFrom"],
                         {"fieldRef": {"fieldPath": "metadata.namespace"}})
        # new pods come up as standbys, ready through /readyz/replica (/readyz is 503 on a
        # standby and would stall the rollout); the old leader then releases the Lease
        self.assertEqual(dep["spec"]["strategy"], {"type": "RollingUpdate", "rollingUpdate": {
            "maxSurge": 1, "maxUnavailable": 0}})
        self.assertEqual(c["readinessProbe"]["httpGet"], {"path": "/readyz/replica",
                                                          "port": "http"})
        self.assertIn("podAntiAffinity", dep["spec"]["template"]["spec"]["affinity"])
        lease_roles = [r for r in by_kind(docs, "Role") if r["metadata"]["name"] == "krc-leader-election"]
        self.assertEqual(len(lease_roles), 1)
        self.assertEqual(lease_roles[0]["metadata"]["namespace"], NAMESPACE)
        self.assertEqual(rule_set(lease_roles), {
            ("Role", NAMESPACE, "coordination.k8s.io", "leases", "create", "*"),
            ("Role", NAMESPACE, "coordination.k8s.io", "leases", "get", "krc"),
            ("Role", NAMESPACE, "coordination.k8s.io", "leases", "update", "krc")})
        rb = [b for b in by_kind(docs, "RoleBinding") if b["metadata"]["name"] == "krc-leader-election"]
        self.assertEqual(rb[0]["roleRef"]["name"], "krc-leader-election")
        # a custom lease name is the one RBAC allows
        docs = render({"leaderElection": {"enabled": True, "leaseName": "krc-lock"}}, name="prod")
        self.assertEqual(one(docs, "Deployment")["spec"]["replicas"], 1)
        args = container(docs)["args"]
        self.assertEqual(args[args.index("--lease-name") + 1], "krc-lock")
        self.assertIn(("Role", NAMESPACE, "coordination.k8s.io", "leases", "update", "krc-lock"),
                      rule_set(docs))
        # one replica, no leader election: no Lease access at all
        self.assertFalse(any(t[3] == "leases" for t in rule_set(render_set("default"))))

    def test_persistence(self):
        docs = render_set("persistence")
        pvc = one(docs, "PersistentVolumeClaim")
        self.assertEqual(pvc["metadata"]["name"], "krc-data")
        self.assertEqual(pvc["spec"], {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                                       "resources": {"requests": {"storage": "1Gi"}}})
        pod = one(docs, "Deployment")["spec"]["template"]["spec"]
        vols = {v["name"]: v for v in pod["volumes"]}
        self.assertEqual(vols["data"], {"name": "data", "persistentVolumeClaim": {"claimName": "krc-data"}})
        self.assertEqual(one(docs, "Deployment")["spec"]["strategy"], {"type": "Recreate"})
        self.assertEqual(yaml.safe_load(config_of(docs))["db"], "/var/lib/krc/krc.db")
        docs = render({"persistence": {"enabled": True, "existingClaim": "mine", "storageClass": "-"}})
        self.assertEqual(by_kind(docs, "PersistentVolumeClaim"), [])
        vols = {v["name"]: v for v in one(docs, "Deployment")["spec"]["template"]["spec"]["volumes"]}
        self.assertEqual(vols["data"]["persistentVolumeClaim"], {"claimName": "mine"})
        pvc = one(render({"persistence": {"enabled": True, "storageClass": "-"}}), "PersistentVolumeClaim")
        self.assertEqual(pvc["spec"]["storageClassName"], "")

    def test_external_database(self):
        docs = render_set("postgres")
        dep = one(docs, "Deployment")
        pod = dep["spec"]["template"]["spec"]
        c = container(docs)
        # the URL is krc's db (file and environment), the password a mounted file
        self.assertEqual(yaml.safe_load(config_of(docs))["db"], PG_URL)
        env = env_of(docs)
        self.assertEqual(env["KRC_DB"], {"name": "KRC_DB", "value": PG_URL})
        self.assertEqual(env["KRC_DB_PASSWORD_FILE"], {"name": "KRC_DB_PASSWORD_FILE",
                                                       "value": PG_PASSWORD_FILE})
        vols = {v["name"]: v for v in pod["volumes"]}
        self.assertEqual(vols["db-password"]["secret"],
                         {"secretName": "krc-db", "defaultMode": 0o400,
                          "items": [{"key": "pw", "path": "password"}]})
        mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
        self.assertEqual(mounts["/etc/krc-db"], {"name": "db-password", "mountPath": "/etc/krc-db",
                                                 "readOnly": True})
        # no volume for /var/lib/krc, no claim, no Secret of the chart's own
        self.assertNotIn("data", vols)
        self.assertNotIn("/var/lib/krc", mounts)
        self.assertEqual(by_kind(docs, "PersistentVolumeClaim"), [])
        self.assertEqual(by_kind(docs, "Secret"), [])
        # two replicas: leader election, rolling updates through standbys
        self.assertEqual(dep["spec"]["replicas"], 2)
        self.assertIn("--leader-elect", c["args"])
        self.assertEqual(dep["spec"]["strategy"]["type"], "RollingUpdate")
        # without a password Secret: no variable, no volume
        docs = render({"history": {"database": {"url": PG_URL}}})
        self.assertNotIn("KRC_DB_PASSWORD_FILE", env_of(docs))
        self.assertNotIn("db-password",
                         {v["name"] for v in one(docs, "Deployment")["spec"]["template"]["spec"]["volumes"]})
        # a Secret without a URL (SQLite) is not mounted
        docs = render({"history": {"database": {"passwordSecret": {"name": "krc-db"}}}})
        self.assertNotIn("KRC_DB_PASSWORD_FILE", env_of(docs))
        self.assertEqual(env_of(docs)["KRC_DB"]["value"], "/var/lib/krc/krc.db")
        # the notes name the database, and ask for a clusterName when there is none
        notes = []
        render({"history": {"database": {"url": PG_URL}}}, notes=notes)
        self.assertIn("History and outbox: PostgreSQL " + PG_URL, notes[0])
        self.assertIn("clusterName is not set", notes[0])
        notes = []
        render(VALUE_SETS["postgres"][0], notes=notes)
        self.assertNotIn("clusterName is not set", notes[0])

    def test_mcp_token_secret(self):
        # off by default: no variable, no volume
        docs = render({})
        self.assertNotIn("KRC_MCP_TOKEN_FILE", env_of(docs))
        pod = one(docs, "Deployment")["spec"]["template"]["spec"]
        self.assertNotIn("mcp-token", {v["name"] for v in pod["volumes"]})
        docs = render({"mcpTokenSecretKeyRef": {"name": "krc-mcp", "key": "bearer"}})
        self.assertEqual(env_of(docs)["KRC_MCP_TOKEN_FILE"], {"name": "KRC_MCP_TOKEN_FILE",
                                                              "value": "/etc/krc-mcp/token"})
        self.assertEqual(by_kind(docs, "Secret"), [])  # the token stays in the user's Secret
        pod = one(docs, "Deployment")["spec"]["template"]["spec"]
        vols = {v["name"]: v for v in pod["volumes"]}
        self.assertEqual(vols["mcp-token"]["secret"],
                         {"secretName": "krc-mcp", "defaultMode": 0o400,
                          "items": [{"key": "bearer", "path": "token"}]})
        mounts = {m["name"]: m for m in pod["containers"][0]["volumeMounts"]}
        self.assertEqual(mounts["mcp-token"], {"name": "mcp-token", "mountPath": "/etc/krc-mcp",
                                               "readOnly": True})

    def test_mcp_namespaces(self):
        # what /mcp answers about (docs/mcp.md, "Scope"): unset by default, a list or a string
        self.assertNotIn("KRC_MCP_NAMESPACES", env_of(render({})))
        for value in (["shop", "^team-"], "shop,^team-"):
            env = env_of(render({"mcpNamespaces": value}))
            self.assertEqual(env["KRC_MCP_NAMESPACES"], {"name": "KRC_MCP_NAMESPACES",
                                                         "value": "shop,^team-"})

    def test_destinations_take_their_secrets_from_mounted_secret_keys(self):
        values = {"destinations": [
            {"name": "oncall", "type": "pagerduty", "default": True,
             "routingKeySecretKeyRef": {"name": "pagerduty", "key": "routing-key"}},
            {"name": "audit", "type": "webhook", "url": "https://audit.example.com/krc",
             "secretSecretKeyRef": {"name": "audit-hook", "key": "secret"},
             "headersSecretKeyRef": {"name": "audit-hook", "key": "headers"}},
            {"name": "chat", "type": "teams", "urlSecretKeyRef": {"name": "teams", "key": "url"}}],
            "config": {"routes": [{"namespace": "payments", "destinations": ["oncall", "audit"]}]}}
        docs = render(values)
        cfg = yaml.safe_load(config_of(docs))
        self.assertEqual(cfg["destinations"][0], {
            "name": "oncall", "type": "pagerduty", "default": True,
            "routingKeyFile": "/etc/krc-destinations/oncall-routingkey/value"})
        self.assertEqual(cfg["destinations"][2]["urlFile"], "/etc/krc-destinations/chat-url/value")
        self.assertEqual(by_kind(docs, "Secret"), [])  # the secrets stay in the user's Secrets
        pod = one(docs, "Deployment")["spec"]["template"]["spec"]
        vols = {v["name"]: v for v in pod["volumes"]}
        self.assertEqual(vols["dest-audit-headers"]["secret"],
                         {"secretName": "audit-hook", "defaultMode": 0o400,
                          "items": [{"key": "headers", "path": "value"}]})
        mounts = {m["mountPath"]: m for m in pod["containers"][0]["volumeMounts"]}
        for d in cfg["destinations"]:
            for k, v in d.items():
                if k.endswith("File"):
                    self.assertTrue(mounts[os.path.dirname(v)]["readOnly"])
        # krc accepts the rendered file once the mounted files exist (here: in a temporary dir)
        with tempfile.TemporaryDirectory() as tmp:
            content = {"routingKeyFile": "0123456789abcdef0123456789abcdef",
                       "secretFile": "s3cret", "headersFile": "X-Team: payments",
                       "urlFile": "https://example.webhook.office.com/workflows/x"}
            for d in cfg["destinations"]:
                for k in list(d):
                    if k.endswith("File"):
                        d[k] = os.path.join(tmp, d["name"] + k)
                        with open(d[k], "w") as f:
                            f.write(content[k] + "\n")
            path = os.path.join(tmp, "config.yaml")
            with open(path, "w") as f:
                yaml.safe_dump(cfg, f)
            p = subprocess.run([h.krc_binary(), "config", "check", path], capture_output=True,
                               text=True, timeout=30)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertNotIn("note:", p.stdout + p.stderr)
        for bad, message in (
                ({"name": "c", "type": "teams", "url": "https://x.invalid/hook"},
                 "destinations[0].url: a teams URL is a secret; use urlSecretKeyRef"),
                ({"name": "p", "type": "pagerduty", "routingKey": "k" * 32},
                 "destinations[0].routingKey: a secret does not belong in values"),
                ({"type": "webhook"}, "destinations[0].name is required")):
            with self.subTest(bad=bad):
                with self.assertRaises(RenderError) as cm:
                    render({"destinations": [bad]})
                self.assertIn(message, str(cm.exception))
        with self.assertRaises(RenderError) as cm:
            render({"config": {"destinations": []}})
        self.assertIn("config.destinations: use the value destinations", str(cm.exception))

    def test_service_monitor(self):
        docs = render_set("service-monitor")
        sm = one(docs, "ServiceMonitor")
        svc = one(docs, "Service")
        self.assertEqual(sm["apiVersion"], "monitoring.coreos.com/v1")
        self.assertEqual(sm["metadata"]["labels"]["release"], "prom")
        for k, v in sm["spec"]["selector"]["matchLabels"].items():
            self.assertEqual(svc["metadata"]["labels"].get(k), v, "ServiceMonitor selects the Service")
        self.assertEqual(sm["spec"]["namespaceSelector"], {"matchNames": [NAMESPACE]})
        self.assertEqual(sm["spec"]["endpoints"], [{"port": "http", "path": "/metrics", "scheme": "http",
                                                    "interval": "30s", "scrapeTimeout": "10s"}])
        self.assertIn("http", [p["name"] for p in svc["spec"]["ports"]])
        self.assertEqual(by_kind(render_set("default"), "ServiceMonitor"), [])

    def check_network_policy(self, docs):
        """The NetworkPolicy selects krc's pods, restricts ingress only, and every rule names
        peers (a rule without `from` would admit everyone) and only the http port. Returns its
        ingress rules."""
        np = one(docs, "NetworkPolicy")
        dep = one(docs, "Deployment")
        self.assertEqual(np["apiVersion"], "networking.k8s.io/v1")
        self.assertEqual(np["metadata"]["namespace"], dep["metadata"]["namespace"])
        self.assertEqual(np["spec"]["podSelector"], {"matchLabels":
                                                     dep["spec"]["selector"]["matchLabels"]})
        pod_labels = dep["spec"]["template"]["metadata"]["labels"]
        for k, v in np["spec"]["podSelector"]["matchLabels"].items():
            self.assertEqual(pod_labels.get(k), v, "the policy selects krc's pods")
        self.assertEqual(np["spec"]["policyTypes"], ["Ingress"], "egress is not restricted")
        self.assertNotIn("egress", np["spec"])
        port_names = [p["name"] for p in container(docs)["ports"]]
        self.assertEqual(port_names, ["http"])
        rules = np["spec"]["ingress"]
        for rule in rules:
            self.assertTrue(rule.get("from"), rule)
            self.assertEqual(rule["ports"], [{"protocol": "TCP", "port": "http"}], rule)
        return rules

    def test_network_policy(self):
        # default: on, the Prometheus pods of any namespace, nothing else
        rules = self.check_network_policy(render_set("default"))
        self.assertEqual(rules, [{"from": [{"namespaceSelector": {}, "podSelector": {
            "matchLabels": {"app.kubernetes.io/name": "prometheus"}}}],
            "ports": [{"protocol": "TCP", "port": "http"}]}])
        # scrapers, MCP clients (with /mcp served) and node ranges, each a rule of its own
        docs = render_set("network-policy")
        rules = self.check_network_policy(docs)
        values = VALUE_SETS["network-policy"][0]["networkPolicy"]
        self.assertEqual([r["from"] for r in rules],
                         [values["metricsScrapers"], values["mcpClients"],
                          [{"ipBlock": {"cidr": "10.0.0.0/16"}},
                           {"ipBlock": {"cidr": "fd00:10::/64"}}]])
        # MCP clients are admitted only while /mcp is served
        values = copy.deepcopy(VALUE_SETS["network-policy"][0])
        del values["mcpTokenSecretKeyRef"]
        rules = self.check_network_policy(render(values))
        self.assertNotIn(values["networkPolicy"]["mcpClients"], [r["from"] for r in rules])
        self.assertEqual(len(rules), 2)
        # no peer at all: no ingress rule, so only the node's own traffic (the probes) gets in
        rules = self.check_network_policy(render({"networkPolicy": {"metricsScrapers": []}}))
        self.assertEqual(rules, [])
        # off
        self.assertEqual(by_kind(render({"networkPolicy": {"enabled": False}}), "NetworkPolicy"),
                         [])
        for values, message in (
                ({"metricsScrapers": ["prometheus"]},
                 "networkPolicy.metricsScrapers[0] must be a NetworkPolicy peer"),
                ({"mcpClients": [{}]}, "networkPolicy.mcpClients[0] must be a NetworkPolicy peer"),
                ({"mcpClients": [{"podSelecter": {}}]},
                 "networkPolicy.mcpClients[0] must be a NetworkPolicy peer"),
                ({"nodeCidrs": ["10.0.0.0"]}, "networkPolicy.nodeCidrs[0] must be a CIDR")):
            with self.subTest(values=values):
                with self.assertRaises(RenderError) as cm:
                    render({"networkPolicy": values})
                self.assertIn(message, str(cm.exception))

    def test_config_change_rolls_the_pods(self):
        def checksums(values):
            ann = one(render(values), "Deployment")["spec"]["template"]["metadata"]["annotations"]
            return ann["checksum/config"], ann["checksum/secret"]
        base = checksums({})
        self.assertEqual(base, checksums({}))
        self.assertEqual(base, checksums({"podAnnotations": {"a": "b"}}))
        self.assertNotEqual(base[0], checksums({"config": {"muteSeconds": 60}})[0])
        self.assertNotEqual(base[1], checksums({"slackWebhookUrl": "https://x.invalid/h"})[1])

    def test_full_config(self):
        docs = render_set("full-config")
        cfg = yaml.safe_load(config_of(docs))
        self.assertEqual(cfg["routes"][0], {"namespace": "^ml-", "webhookUrlEnv": "SLACK_WEBHOOK_ML"})
        self.assertEqual(cfg["historyMaxRows"], 20000)
        self.assertEqual(cfg["db"], "/var/lib/krc/krc.db")
        env = env_of(docs)
        self.assertEqual(env["MUTE_SECONDS"]["value"], "1000000")  # not 1e+06
        self.assertEqual(env["IGNORE_RESTART_COUNT"]["value"], "0")  # 0 is a value, not "unset"
        self.assertEqual(env["SLACK_BOT_TOKEN"]["valueFrom"]["secretKeyRef"],
                         {"name": "krc", "key": "slackBotToken"})
        self.assertEqual(env["SLACK_WEBHOOK_ML"]["valueFrom"]["secretKeyRef"]["name"], "ml-slack")
        self.assertNotIn("SLACK_WEBHOOK_URL", env)
        self.assertEqual(container(docs)["args"][-2:], ["--log-level", "debug"])
        self.assertEqual(sorted(one(docs, "Secret")["data"]), ["slackBotToken"])

    def test_refusals(self):
        cases = [
            ({"persistence": {"enabled": True}, "replicaCount": 2}, "persistence.enabled needs replicaCount 1"),
            ({"config": {"listen": "0.0.0.0:9090"}}, "config.listen"),
            ({"config": {"slackWebhookUrl": "https://x.invalid"}}, "config.slackWebhookUrl"),
            ({"config": {"slackBotToken": "xoxb-1"}}, "config.slackBotToken"),
            ({"config": {"routes": [{"pod": "a", "webhookUrl": "https://x.invalid"}]}},
             "config.routes[0].webhookUrl"),
            ({"image": {"repository": "devopsairwallex/k8s-pod-restart-info-collector", "tag": "v1.3.0"}},
             "Go tool's image"),
            ({"muteSeconds": 1.5}, "muteSeconds must be a whole number"),
            ({"useGooglechat": True}, "Slack only"),
            ({"serviceMonitor": {"enabled": True}, "service": {"enabled": False}}, "needs service.enabled"),
            ({"serviceAccount": {"create": False}}, "serviceAccount.name is required"),
            ({"history": {"database": {"url": "postgres://krc:hunter2@pg/krc"}}},
             "history.database.url holds a password"),
            ({"history": {"database": {"url": "postgresql://pg/krc?sslmode=require&password=hunter2"}}},
             "history.database.url holds a password"),
            ({"history": {"database": {"url": "mysql://krc:hunter2@pg/krc"}}},
             "history.database.url must be a PostgreSQL URL"),
            ({"history": {"database": {"url": PG_URL}}, "persistence": {"enabled": True}},
             "turn persistence off"),
            ({"history": {"database": {"url": PG_URL}}, "config": {"db": "/x.db"}},
             "config.db and history.database.url both set"),
            ({"history": {"database": {"url": PG_URL}}, "config": {"dbPasswordFile": "/p"}},
             "config.dbPasswordFile"),
            ({"history": {"database": {"url": PG_URL, "passwordSecret": {"name": "s", "key": ""}}}},
             "history.database.passwordSecret.key is required"),
        ]
        for values, message in cases:
            with self.subTest(values=values):
                with self.assertRaises(RenderError) as cm:
                    render(values)
                self.assertIn(message, str(cm.exception))
                self.assertNotIn("hunter2", str(cm.exception))  # a refused password is not shown

    def test_notes(self):
        notes = []
        render({}, notes=notes)
        self.assertIn("WARNING: no Slack destination", notes[0])
        self.assertIn("all namespaces", notes[0])
        notes = []
        render(VALUE_SETS["secret-refs"][0], notes=notes)
        self.assertNotIn("WARNING", notes[0])
        notes = []
        render(VALUE_SETS["plain-namespaces"][0], notes=notes)
        self.assertIn("shop, payments (namespaced Roles)", notes[0])
        self.assertIn("NetworkPolicy: port 8080 (http) admits only the kubelet's probes", notes[0])
        self.assertIn("(metricsScrapers); a Prometheus", notes[0])
        notes = []
        render(VALUE_SETS["network-policy"][0], notes=notes)
        self.assertIn("(metricsScrapers, mcpClients)", notes[0])
        notes = []
        render({"networkPolicy": {"enabled": False}}, notes=notes)
        self.assertNotIn("NetworkPolicy", notes[0])

    def test_every_value_is_documented(self):
        """Each key of values.yaml has a comment: on the lines just above it, or on its line."""
        with open(os.path.join(CHART, "values.yaml")) as f:
            lines = f.read().splitlines()
        key_re = re.compile(r"^(\s*)([A-Za-z0-9_./-]+):(\s|$)")
        undocumented = []
        for i, line in enumerate(lines):
            m = key_re.match(line)
            if not m:
                continue
            if re.search(r"\s#\s", line):
                continue
            j = i - 1
            while j >= 0 and lines[j].strip() == "":
                j -= 1
            prev = lines[j] if j >= 0 else ""
            if not (prev.strip().startswith("#") and
                    len(prev) - len(prev.lstrip()) == len(m.group(1))):
                undocumented.append("values.yaml:%d: %s" % (i + 1, m.group(2)))
        self.assertEqual(undocumented, [])
        # and every top-level key the templates use exists in values.yaml (--strict rendering
        # of every value set above would fail otherwise); the Go tool's keys are all there
        with open(os.path.join(CHART, "values.yaml")) as f:
            values = yaml.safe_load(f)
        for key in ("clusterName", "slackWebhookUrl", "slackWebhookUrlSecretKeyRef", "slackChannel",
                    "slackUsername", "muteSeconds", "ignoreRestartCount", "ignoredNamespaces",
                    "ignoredPodNamePrefixes", "watchedNamespaces", "watchedPodNamePrefixes",
                    "ignoreRestartsWithExitCodeZero", "resources", "nodeSelector", "tolerations",
                    "affinity", "podAnnotations", "imagePullSecrets", "nameOverride",
                    "fullnameOverride", "podSecurityContext", "image"):
            self.assertIn(key, values)


class KustomizeParityTest(unittest.TestCase):
    """The chart grants what the Kustomize base grants, and runs the pod the same way."""

    @classmethod
    def setUpClass(cls):
        cls.base = [d for d in yaml.safe_load_all(kustomize_text(MANIFESTS)) if d]

    def test_postgres_overlay_is_the_charts_external_database(self):
        docs = [d for d in yaml.safe_load_all(kustomize_text(os.path.join(OVERLAYS, "postgres"))) if d]
        chart = render_set("postgres")
        dep = one(docs, "Deployment")
        c = container(docs)
        env = env_of(docs)
        self.assertTrue(env["KRC_DB"]["value"].startswith("postgres://krc@"))
        self.assertNotIn(":", env["KRC_DB"]["value"].split("://", 1)[1].split("@", 1)[0])
        self.assertEqual(env["KRC_DB_PASSWORD_FILE"], env_of(chart)["KRC_DB_PASSWORD_FILE"])
        # the password volume as the chart mounts it (the Secret's key aside), no /var/lib/krc
        vols = {v["name"]: v for v in dep["spec"]["template"]["spec"]["volumes"]}
        cvols = {v["name"]: v for v in one(chart, "Deployment")["spec"]["template"]["spec"]["volumes"]}
        self.assertEqual(vols["db-password"]["secret"]["secretName"], "krc-db")
        self.assertEqual(vols["db-password"]["secret"]["items"], [{"key": "password", "path": "password"}])
        self.assertEqual(vols["db-password"]["secret"]["defaultMode"],
                         cvols["db-password"]["secret"]["defaultMode"])
        self.assertEqual(set(vols), set(cvols))
        mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
        cmounts = {m["mountPath"]: m["name"] for m in container(chart)["volumeMounts"]}
        self.assertEqual(mounts, cmounts)
        # two leader-elected replicas (the ha overlay's)
        self.assertEqual(dep["spec"]["replicas"], 2)
        self.assertIn("--leader-elect", c["args"])

    def test_network_policy_admits_the_same(self):
        """The base's NetworkPolicy: krc's pods, ingress only, the http port, and the same
        scrapers as the chart's default. Its scraper selector is a matchExpressions because
        kustomize's labels with includeSelectors (as commonLabels did) rewrite a NetworkPolicy's
        podSelector.matchLabels: the rendered base must still name Prometheus, not krc."""
        def requirements(sel):
            out = {(k, "In", (v,)) for k, v in (sel.get("matchLabels") or {}).items()}
            out |= {(e["key"], e["operator"], tuple(sorted(e.get("values") or [])))
                    for e in sel.get("matchExpressions") or []}
            return out

        def peers(rules):
            return [[{k: requirements(v) if k.endswith("Selector") else v for k, v in p.items()}
                     for p in r["from"]] for r in rules]

        np = one(self.base, "NetworkPolicy")
        dep = one(self.base, "Deployment")
        self.assertEqual(np["spec"]["podSelector"]["matchLabels"],
                         dep["spec"]["selector"]["matchLabels"])
        self.assertEqual(np["spec"]["policyTypes"], ["Ingress"])
        for rule in np["spec"]["ingress"]:
            self.assertEqual(rule["ports"], [{"protocol": "TCP", "port": "http"}])
        self.assertEqual(peers(np["spec"]["ingress"]),
                         peers(one(render_set("default"), "NetworkPolicy")["spec"]["ingress"]))
        self.assertEqual(peers(np["spec"]["ingress"]),
                         [[{"namespaceSelector": set(), "podSelector": {
                             ("app.kubernetes.io/name", "In", ("prometheus",))}}]])

    def test_rbac_rules_are_the_same(self):
        # The base always carries the Lease Role; the chart only with leader election.
        chart = render_set("ha")
        self.assertEqual(rule_set(chart), rule_set(self.base))
        base_no_lease = {t for t in rule_set(self.base) if t[3] != "leases"}
        self.assertEqual(rule_set(render_set("default")), base_no_lease)

    def test_bindings_name_the_service_account(self):
        for docs in (render_set("ha"), self.base):
            sa = one(docs, "ServiceAccount")["metadata"]
            for b in by_kind(docs, "RoleBinding") + by_kind(docs, "ClusterRoleBinding"):
                self.assertEqual(b["subjects"], [{"kind": "ServiceAccount", "name": sa["name"],
                                                  "namespace": sa["namespace"]}])

    def test_pod_settings_are_the_same(self):
        chart = one(render_set("default"), "Deployment")["spec"]["template"]["spec"]
        base = one(self.base, "Deployment")["spec"]["template"]["spec"]
        cc, bc = chart["containers"][0], base["containers"][0]
        for key in ("securityContext", "resources", "livenessProbe", "readinessProbe", "ports"):
            self.assertEqual(cc[key], bc[key], key)
        self.assertEqual(chart["securityContext"], base["securityContext"])
        self.assertEqual(cc["args"], bc["args"])
        self.assertEqual(sorted((m["name"], m["mountPath"]) for m in cc["volumeMounts"]),
                         sorted((m["name"], m["mountPath"]) for m in bc["volumeMounts"]))
        self.assertEqual(cc["image"].rsplit(":", 1)[0], bc["image"].rsplit(":", 1)[0])


class KustomizeWarningsTest(unittest.TestCase):
    """`kubectl kustomize` prints nothing on stderr for the base and each overlay: no field that
    kustomize 5 deprecates (commonLabels, bases, patchesStrategicMerge, vars, ...)."""

    def test_no_warning(self):
        dirs = kustomize_dirs()
        self.assertEqual([os.path.relpath(d, ROOT) for d in dirs],
                         ["deploy/manifests", "deploy/overlays/config-changes",
                          "deploy/overlays/ha", "deploy/overlays/mcp", "deploy/overlays/postgres"])
        for d in dirs:
            with self.subTest(os.path.relpath(d, ROOT)):
                p = kustomize_run(d)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stderr, "")

    def test_a_deprecated_field_is_seen(self):
        """The check above can fail: a copy of an overlay written the old way warns."""
        if kustomize_version() < (5, 0):
            self.skipTest("kustomize before 5 does not warn about deprecated fields")
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(os.path.join(ROOT, "deploy"), os.path.join(tmp, "deploy"))
            path = os.path.join(tmp, "deploy", "overlays", "ha", "kustomization.yaml")
            with open(path) as f:
                text = f.read()
            old = text.replace("resources:\n  - ../../manifests", "bases:\n  - ../../manifests")
            self.assertNotEqual(old, text)
            with open(path, "w") as f:
                f.write(old)
            p = kustomize_run(os.path.dirname(path))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("'bases' is deprecated", p.stderr)


class YamllintTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if shutil.which("yamllint") is None:
            raise AssertionError("yamllint is not installed: apt-get install yamllint (scripts/setup-test)")

    def yamllint(self, *paths):
        return subprocess.run(["yamllint", "--strict", "-f", "parsable", "-c", YAMLLINT_CONFIG] + list(paths),
                              capture_output=True, text=True, timeout=120)

    def test_deploy_yaml_and_rendered_output_pass(self):
        files = [os.path.join(CHART, "values.yaml"), os.path.join(CHART, "Chart.yaml"),
                 GO_TOOL_VALUES]
        for d in [MANIFESTS] + [os.path.join(OVERLAYS, x) for x in
                                (os.listdir(OVERLAYS) if os.path.isdir(OVERLAYS) else [])]:
            if os.path.isdir(d):
                files += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith((".yaml", ".yml")))
        with tempfile.TemporaryDirectory() as tmp:
            for name in VALUE_SETS:
                values, vfiles = VALUE_SETS[name]
                text = render_text(values, vfiles)
                path = os.path.join(tmp, "chart-%s.yaml" % name)
                with open(path, "w") as f:
                    f.write(text)
                files.append(path)
                cfg = os.path.join(tmp, "chart-%s-config.yaml" % name)
                with open(cfg, "w") as f:
                    f.write(config_of([d for d in yaml.safe_load_all(text) if d]))
                files.append(cfg)
            for d in kustomize_dirs():
                path = os.path.join(tmp, "kustomize-%s.yaml" % os.path.basename(d))
                with open(path, "w") as f:
                    f.write(kustomize_text(d))
                files.append(path)
            p = self.yamllint(*files)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_yamllint_catches_mistakes(self):
        with tempfile.TemporaryDirectory() as tmp:
            for text, rule in [("a: yes\n", "truthy"), ("a: 1 \n", "trailing-spaces"),
                               ("a:\n   b: 1\n", "indentation"), ("a: 1\na: 2\n", "key-duplicates"),
                               ("a: " + "x" * 130 + "\n", "line-length")]:
                with self.subTest(rule=rule):
                    path = os.path.join(tmp, "bad.yaml")
                    with open(path, "w") as f:
                        f.write(text)
                    p = self.yamllint(path)
                    self.assertNotEqual(p.returncode, 0)
                    self.assertIn("(%s)" % rule, p.stdout)


class SchemaTest(unittest.TestCase):
    """Every rendered object against the Kubernetes OpenAPI schemas (tests/schema)."""

    @classmethod
    def setUpClass(cls):
        if not os.path.isdir(os.path.join(SCHEMA_DIR, "node_modules")):
            raise AssertionError("tests/schema/node_modules is missing: run `%s` from the "
                             "repository root (scripts/setup-test does)" % NPM_INSTALL)
        if shutil.which("node") is None:
            raise AssertionError("node is not installed (apt-get install nodejs)")

    def validate(self, text):
        return subprocess.run(["node", VALIDATOR, "-"], input=text, capture_output=True, text=True,
                              timeout=120)

    def validate_many(self, streams):
        """{name: YAML text} -> {name: the validator's lines for it}, in one node process."""
        with tempfile.TemporaryDirectory() as tmp:
            paths = {}
            for i, (name, text) in enumerate(streams.items()):
                paths[name] = os.path.join(tmp, "%03d.yaml" % i)
                with open(paths[name], "w") as f:
                    f.write(text)
            p = subprocess.run(["node", VALIDATOR] + list(paths.values()), capture_output=True,
                               text=True, timeout=300)
            self.assertIn(p.returncode, (0, 1), p.stdout + p.stderr)
            sections = {}
            current = None
            for line in p.stdout.splitlines():
                if line.startswith("== "):
                    current = line[3:]
                    sections[current] = []
                elif re.match(r"^\d+ objects, \d+ invalid$", line):
                    current = None
                elif current is not None:
                    sections[current].append(line)
            return {name: "\n".join(sections.get(path, [])) for name, path in paths.items()}

    def test_every_rendered_object_is_valid(self):
        streams = {"chart " + n: render_text(*VALUE_SETS[n]) for n in VALUE_SETS}
        for d in kustomize_dirs():
            streams["kustomize " + os.path.relpath(d, ROOT)] = kustomize_text(d)
        kinds = set()
        results = self.validate_many(streams)
        for name, text in streams.items():
            with self.subTest(name):
                out = results[name]
                lines = out.splitlines()
                n = len([d for d in yaml.safe_load_all(text) if d])
                self.assertEqual(len(lines), n, out)  # one "ok" line per object, nothing else
                self.assertTrue(all(line.startswith("ok ") for line in lines), out)
                kinds |= {line.split()[1] for line in lines}
        for kind in ("Deployment", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
                     "RoleBinding", "Secret", "ConfigMap", "Service", "PersistentVolumeClaim",
                     "ServiceMonitor", "NetworkPolicy"):
            self.assertIn(kind, kinds)

    def test_the_crashing_pod_of_docs_install_is_valid(self):
        with open(os.path.join(ROOT, "docs", "install.md")) as f:
            doc = f.read()
        blocks = re.findall(r"```yaml\n(.*?)```", doc, re.S)
        pods = [b for b in blocks if re.search(r"^kind: Pod$", b, re.M)]
        self.assertEqual(len(pods), 1, "docs/install.md has one Pod manifest")
        p = self.validate(pods[0])
        self.assertEqual(p.returncode, 0, p.stdout)

    def test_wrong_objects_fail(self):
        docs = render_set("service-monitor")
        dep = one(docs, "Deployment")
        sm = one(docs, "ServiceMonitor")

        def mutated(obj, fn):
            o = copy.deepcopy(obj)
            fn(o)
            return yaml.safe_dump(o)

        def pod_c(o):
            return o["spec"]["template"]["spec"]["containers"][0]

        cases = [
            (lambda o: pod_c(o).__setitem__("imagePullPolicy", "Sometimes"),
             "/spec/template/spec/containers/0/imagePullPolicy: must be one of Always, IfNotPresent, Never"),
            (lambda o: o["spec"].__setitem__("replicaCount", 2), "/spec/replicaCount: unknown field"),
            (lambda o: pod_c(o)["securityContext"].__setitem__("readOnlyRootFS", True),
             "/spec/template/spec/containers/0/securityContext/readOnlyRootFS: unknown field"),
            (lambda o: o["spec"].__setitem__("replicas", "two"), "/spec/replicas: must be of type integer"),
            (lambda o: pod_c(o).pop("name"), "missing required field name"),
            (lambda o: pod_c(o)["ports"][0].__setitem__("name", "metrics-http-port"), "not a valid port name"),
            (lambda o: pod_c(o)["livenessProbe"]["httpGet"].__setitem__("port", "web"),
             'no container port named "web"'),
            (lambda o: o["metadata"]["labels"].__setitem__("bad", "not a label value"), "invalid label value"),
            (lambda o: o["spec"]["selector"]["matchLabels"].__setitem__("x", "y"), "does not match"),
            (lambda o: pod_c(o)["volumeMounts"][0].__setitem__("name", "nosuch"), 'no volume "nosuch"'),
            (lambda o: o["metadata"].__setitem__("name", "Krc_Upper"), "DNS-1123 subdomain"),
            (lambda o: pod_c(o)["env"].__setitem__(0, {"name": "X", "vaule": "y"})
             if pod_c(o).get("env") else pod_c(o).__setitem__("env", [{"name": "X", "vaule": "y"}]),
             "/env/0/vaule: unknown field"),
        ]
        streams = {message: mutated(dep, fn) for fn, message in cases}
        results = self.validate_many(streams)
        for message in streams:
            with self.subTest(message):
                self.assertTrue(results[message].startswith("FAIL Deployment"), results[message])
                self.assertIn(message, results[message])
        sm_cases = [
            (lambda o: o["spec"]["endpoints"][0].__setitem__("interval", "30 seconds"), "Prometheus duration"),
            (lambda o: o["spec"]["endpoints"][0].__setitem__("portName", "http"), "portName: unknown field"),
            (lambda o: o["spec"].__setitem__("endpoints", []), "at least one endpoint"),
            (lambda o: o["spec"].pop("selector"), "/spec/selector: missing"),
            (lambda o: o["metadata"].__setitem__("lables", {}), "/metadata/lables: unknown field"),
        ]
        streams = {message: mutated(sm, fn) for fn, message in sm_cases}
        results = self.validate_many(streams)
        for message in streams:
            with self.subTest(message):
                self.assertTrue(results[message].startswith("FAIL ServiceMonitor"), results[message])
                self.assertIn(message, results[message])
        np = one(render_set("network-policy"), "NetworkPolicy")
        np_cases = [
            (lambda o: o["spec"]["ingress"][0]["from"][0].__setitem__("podSelecter", {}),
             "podSelecter: unknown field"),
            (lambda o: o["spec"]["ingress"][2]["from"][0]["ipBlock"].pop("cidr"),
             "missing required field cidr"),
        ]
        streams = {message: mutated(np, fn) for fn, message in np_cases}
        results = self.validate_many(streams)
        for message in streams:
            with self.subTest(message):
                self.assertTrue(results[message].startswith("FAIL NetworkPolicy"), results[message])
                self.assertIn(message, results[message])
        # an unknown kind is not waved through, and the unmodified objects pass
        p = self.validate("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n")
        self.assertEqual(p.returncode, 1)
        self.assertIn("no schema", p.stdout)
        p = self.validate(yaml.safe_dump(dep) + "---\n" + yaml.safe_dump(sm))
        self.assertEqual(p.returncode, 0, p.stdout)


class BinaryAcceptsChartTest(unittest.TestCase):
    """The real krc accepts the configuration, variables and arguments the chart renders."""

    @classmethod
    def setUpClass(cls):
        cls.krc = h.krc_binary()
        keys = subprocess.run([cls.krc, "config", "keys"], capture_output=True, text=True, timeout=30)
        assert keys.returncode == 0, keys.stderr
        cls.env_names = set(re.findall(r"^\| `[^`]+` \| `([A-Z0-9_]+)` \|", keys.stdout, re.M))
        assert "SLACK_WEBHOOK_URL" in cls.env_names and "MUTE_SECONDS" in cls.env_names, keys.stdout

    def clean_env(self):
        names = self.env_names | DOWNWARD_ENV | {"KUBECONFIG", "KUBERNETES_SERVICE_HOST",
                                                 "KUBERNETES_SERVICE_PORT"}
        return {k: v for k, v in os.environ.items()
                if k not in names and not k.startswith(("SLACK_", "KRC_"))}

    def pod_env(self, docs):
        """The container's environment as the kubelet would set it (Secrets: stand-ins)."""
        dummies = {"SLACK_BOT_TOKEN": "xoxb-0-0-test", "POD_NAME": "krc-0", "POD_NAMESPACE": NAMESPACE}
        env = self.clean_env()
        for e in container(docs).get("env") or []:
            env[e["name"]] = e["value"] if "value" in e else dummies.get(
                e["name"], "https://hooks.slack.invalid/services/T000/B000/" + e["name"].lower())
        return env

    def test_rendered_config_passes_krc_config_check(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name in VALUE_SETS:
                with self.subTest(name):
                    docs = render_set(name)
                    path = os.path.join(tmp, "config.yaml")
                    with open(path, "w") as f:
                        f.write(config_of(docs))
                    # with the pod's environment: a route's webhookUrlEnv must be set
                    p = subprocess.run([self.krc, "config", "check", path], capture_output=True,
                                       text=True, timeout=30, env=self.pod_env(docs))
                    self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_every_variable_is_a_krc_setting(self):
        for name in VALUE_SETS:
            with self.subTest(name):
                docs = render_set(name)
                extra = {e["name"] for e in (VALUE_SETS[name][0] or {}).get("extraEnv", [])}
                unknown = set(env_of(docs)) - self.env_names - DOWNWARD_ENV - extra
                self.assertEqual(unknown, set())
                # a route's webhookUrlEnv is fed by extraEnv
                for r in yaml.safe_load(config_of(docs)).get("routes", []):
                    if "webhookUrlEnv" in r:
                        self.assertIn(r["webhookUrlEnv"], env_of(docs))

    def test_krc_run_accepts_the_rendered_arguments_and_environment(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name in VALUE_SETS:
                with self.subTest(name):
                    docs = render_set(name)
                    c = container(docs)
                    cfg = yaml.safe_load(config_of(docs))
                    cfg["db"] = os.path.join(tmp, "%s.db" % name)
                    cfg_path = os.path.join(tmp, "%s.yaml" % name)
                    with open(cfg_path, "w") as f:
                        yaml.safe_dump(cfg, f)
                    self.assertEqual(c["args"][:3], ["run", "--config", CONFIG_PATH])
                    args = [a if a != CONFIG_PATH else cfg_path for a in c["args"]]
                    env = self.pod_env(docs)
                    kubeconfig = os.path.join(tmp, "no-such-kubeconfig")
                    p = subprocess.run([self.krc] + args + ["--kubeconfig", kubeconfig],
                                       capture_output=True, text=True, timeout=60, env=env,
                                       stdin=subprocess.DEVNULL)
                    # 2 would be a usage error (unknown flag, bad value); 1 is the missing
                    # kubeconfig, reached only after the options were accepted.
                    self.assertEqual(p.returncode, 1, p.stderr)
                    self.assertIn("cannot configure Kubernetes access", p.stderr)
                    self.assertIn("no-such-kubeconfig", p.stderr)


if __name__ == "__main__":
    h.main()
