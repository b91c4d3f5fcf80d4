#!/usr/bin/env node
// Strict validation of Kubernetes manifests against the Kubernetes OpenAPI schemas.
//
//   node tests/schema/validate.js FILE...      (FILE "-" reads standard input)
//
// Every YAML document of every FILE must be an object of a known kind. Each is checked with
// the validator that kubernetes-models generated from the Kubernetes OpenAPI schema of its kind
// (types, enums, required fields), and, strictly, for fields the schema does not know: the
// document is handed to the validator through a Proxy that records which properties the
// validator looks up; a property that the schema of its object never reads is an unknown field
// (kubectl --validate=strict and the API server's strict field validation reject those).
// On top of the schema, the rules of the API server's own validation that matter for
// hand-written manifests: object, label, annotation, container, port, volume and env var names,
// named ports and volume mounts that resolve, a Deployment selector that matches its template.
// ServiceMonitor (monitoring.coreos.com/v1) has no core schema: its shape is checked here,
// minimally (known fields, selector, endpoints with port, path, scheme and durations).
//
// Prints one line per object ("ok KIND NAME" or "FAIL KIND NAME" followed by its errors), with
// a "== FILE" line before each file's objects when there are several files, and exits 0 when
// all are valid, 1 when one is not, 2 when a file cannot be read or parsed.
"use strict";

const fs = require("fs");
const path = require("path");
const yaml = require("js-yaml");

// The generated validators are not in the packages' "exports": load them by file path.
const MODELS_DIR = path.dirname(require.resolve("kubernetes-models"));
const APIMACHINERY_DIR = path.dirname(require.resolve("@kubernetes-models/apimachinery"));

// ---------------------------------------------------------------------------------------------
// Schema validation with unknown-field detection

function schemaValidatorFor(apiVersion, kind) {
  if (typeof apiVersion !== "string" || typeof kind !== "string") return null;
  const modPath = `kubernetes-models/${apiVersion}`;
  let mod;
  try {
    mod = require(modPath);
  } catch (e) {
    return null;
  }
  const cls = mod[kind];
  if (typeof cls !== "function" || cls.apiVersion !== apiVersion || cls.kind !== kind) return null;
  const alias = Object.keys(mod).find((k) => k.startsWith("IoK8s") && mod[k] === cls);
  if (!alias) return null;
  return require(path.join(MODELS_DIR, "_schemas", `${alias}.js`)).validate;
}

// Runs validate(doc) with every object of doc behind a recording Proxy; returns the schema
// errors and the unknown fields (JSON pointers).
function strictValidate(validate, doc) {
  const seen = new WeakMap();
  const proxies = new WeakMap();
  function wrap(o) {
    if (o === null || typeof o !== "object") return o;
    if (proxies.has(o)) return proxies.get(o);
    const keys = new Set();
    seen.set(o, keys);
    const p = new Proxy(o, {
      get(target, key, receiver) {
        if (typeof key === "string") keys.add(key);
        return wrap(Reflect.get(target, key, receiver));
      },
    });
    proxies.set(o, p);
    return p;
  }
  const ok = validate(wrap(doc));
  const errors = ok ? [] : (validate.errors || []).map(ajvMessage);
  const unknown = [];
  (function walk(o, at) {
    if (o === null || typeof o !== "object") return;
    const keys = seen.get(o);
    if (!keys) {
      unknown.push(`${at || "/"}: not covered by the schema`);
      return;
    }
    if (Array.isArray(o)) {
      o.forEach((x, i) => walk(x, `${at}/${i}`));
      return;
    }
    for (const k of Object.keys(o)) {
      if (keys.has(k)) walk(o[k], `${at}/${k}`);
      else unknown.push(`${at}/${k}: unknown field`);
    }
  })(doc, "");
  return errors.concat(unknown);
}

function ajvMessage(e) {
  const at = e.instancePath || "/";
  switch (e.keyword) {
    case "enum":
      return `${at}: must be one of ${e.params.allowedValues.join(", ")}`;
    case "required":
      return `${at}: missing required field ${e.params.missingProperty}`;
    case "type":
      return `${at}: must be of type ${e.params.type}`;
    case "format":
      return `${at}: must match format ${e.params.format}`;
    default:
      return `${at}: ${e.keyword} ${JSON.stringify(e.params)}`;
  }
}

// ---------------------------------------------------------------------------------------------
// The API server's name rules (k8s.io/apimachinery/pkg/util/validation)

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const PROM_DURATION = /^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$/;

function isLabel(s) {
  return typeof s === "string" && s.length <= 63 && DNS1123_LABEL.test(s);
}
function isSubdomain(s) {
  return typeof s === "string" && s.length <= 253 && DNS1123_SUBDOMAIN.test(s);
}
function isQualifiedName(s) {
  if (typeof s !== "string") return false;
  const parts = s.split("/");
  if (parts.length > 2) return false;
  const name = parts[parts.length - 1];
  if (parts.length === 2 && (parts[0].length === 0 || !isSubdomain(parts[0]))) return false;
  return name.length <= 63 && QUALIFIED_NAME.test(name);
}
function isPortName(s) {
  return (
    typeof s === "string" && s.length >= 1 && s.length <= 15 && /^[a-z0-9-]+$/.test(s) &&
    /[a-z]/.test(s) && !s.startsWith("-") && !s.endsWith("-") && !s.includes("--")
  );
}

const CLUSTER_SCOPED = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "Node", "PersistentVolume",
  "StorageClass", "CustomResourceDefinition", "PriorityClass"]);
const RBAC_KINDS = new Set(["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"]);

function checkMeta(doc, errs) {
  const m = doc.metadata;
  if (!m || typeof m !== "object") {
    errs.push("/metadata: missing");
    return;
  }
  if (typeof m.name !== "string" || m.name === "") {
    errs.push("/metadata/name: missing");
  } else if (RBAC_KINDS.has(doc.kind)) {
    if (m.name === "." || m.name === ".." || /[/%]/.test(m.name)) errs.push(`/metadata/name: "${m.name}" is not a valid path segment name`);
  } else if (doc.kind === "Service" || doc.kind === "Namespace") {
    const re = doc.kind === "Service" ? DNS1035_LABEL : DNS1123_LABEL;
    if (m.name.length > 63 || !re.test(m.name)) errs.push(`/metadata/name: "${m.name}" must be a DNS-1035/1123 label (63 characters, a-z0-9-)`);
  } else if (!isSubdomain(m.name)) {
    errs.push(`/metadata/name: "${m.name}" must be a DNS-1123 subdomain`);
  }
  if (m.namespace !== undefined) {
    if (CLUSTER_SCOPED.has(doc.kind)) errs.push(`/metadata/namespace: ${doc.kind} is cluster-scoped`);
    else if (!isLabel(m.namespace)) errs.push(`/metadata/namespace: "${m.namespace}" is not a valid namespace name`);
  }
  checkLabels(m.labels, "/metadata/labels", errs);
  for (const k of Object.keys(m.annotations || {})) {
    if (!isQualifiedName(k)) errs.push(`/metadata/annotations/${k}: invalid annotation key`);
  }
}

function checkLabels(labels, at, errs) {
  for (const [k, v] of Object.entries(labels || {})) {
    if (!isQualifiedName(k)) errs.push(`${at}/${k}: invalid label key`);
    if (typeof v !== "string" || v.length > 63 || !LABEL_VALUE.test(v)) errs.push(`${at}/${k}: invalid label value ${JSON.stringify(v)}`);
  }
}

function checkPodSpec(spec, at, errs) {
  if (!spec || typeof spec !== "object") return;
  const volumes = new Set();
  for (const [i, v] of (spec.volumes || []).entries()) {
    if (!isLabel(v.name)) errs.push(`${at}/volumes/${i}/name: "${v.name}" must be a DNS-1123 label`);
    if (volumes.has(v.name)) errs.push(`${at}/volumes/${i}/name: duplicate volume "${v.name}"`);
    volumes.add(v.name);
  }
  const names = new Set();
  const all = [].concat(spec.initContainers || [], spec.containers || []);
  for (const [i, c] of all.entries()) {
    const cat = `${at}/containers/${i}`;
    if (!isLabel(c.name)) errs.push(`${cat}/name: "${c.name}" must be a DNS-1123 label`);
    if (names.has(c.name)) errs.push(`${cat}/name: duplicate container "${c.name}"`);
    names.add(c.name);
    if (!c.image) errs.push(`${cat}/image: missing`);
    const ports = new Set();
    for (const [j, p] of (c.ports || []).entries()) {
      if (p.name !== undefined) {
        if (!isPortName(p.name)) errs.push(`${cat}/ports/${j}/name: "${p.name}" is not a valid port name (IANA_SVC_NAME)`);
        if (ports.has(p.name)) errs.push(`${cat}/ports/${j}/name: duplicate port "${p.name}"`);
        ports.add(p.name);
      }
      if (!(Number.isInteger(p.containerPort) && p.containerPort >= 1 && p.containerPort <= 65535)) errs.push(`${cat}/ports/${j}/containerPort: must be 1-65535`);
    }
    for (const probe of ["livenessProbe", "readinessProbe", "startupProbe"]) {
      const port = c[probe] && c[probe].httpGet && c[probe].httpGet.port;
      if (typeof port === "string" && !ports.has(port)) errs.push(`${cat}/${probe}/httpGet/port: no container port named "${port}"`);
    }
    const envs = new Set();
    for (const [j, e] of (c.env || []).entries()) {
      if (!ENV_VAR_NAME.test(e.name || "")) errs.push(`${cat}/env/${j}/name: "${e.name}" is not a valid variable name`);
      if (envs.has(e.name)) errs.push(`${cat}/env/${j}/name: duplicate variable "${e.name}"`);
      envs.add(e.name);
      if (e.value !== undefined && e.valueFrom !== undefined) errs.push(`${cat}/env/${j}: value and valueFrom are exclusive`);
      if (e.valueFrom && Object.keys(e.valueFrom).length !== 1) errs.push(`${cat}/env/${j}/valueFrom: exactly one source`);
    }
    const mounts = new Set();
    for (const [j, m] of (c.volumeMounts || []).entries()) {
      if (!volumes.has(m.name)) errs.push(`${cat}/volumeMounts/${j}/name: no volume "${m.name}"`);
      if (mounts.has(m.mountPath)) errs.push(`${cat}/volumeMounts/${j}/mountPath: mounted twice`);
      mounts.add(m.mountPath);
    }
  }
  if ((spec.containers || []).length === 0) errs.push(`${at}/containers: at least one container`);
}

function checkSelectorMatches(selector, labels, at, errs) {
  const ml = (selector && selector.matchLabels) || {};
  if (Object.keys(ml).length === 0 && !(selector && selector.matchExpressions)) errs.push(`${at}/selector: empty selector`);
  for (const [k, v] of Object.entries(ml)) {
    if ((labels || {})[k] !== v) errs.push(`${at}/selector: matchLabels ${k}=${v} does not match the pod template`);
  }
}

function checkSemantics(doc, errs) {
  checkMeta(doc, errs);
  const spec = doc.spec || {};
  switch (doc.kind) {
    case "Deployment":
    case "StatefulSet":
    case "DaemonSet":
      checkSelectorMatches(spec.selector, spec.template && spec.template.metadata && spec.template.metadata.labels, "/spec", errs);
      checkLabels(spec.template && spec.template.metadata && spec.template.metadata.labels, "/spec/template/metadata/labels", errs);
      checkPodSpec(spec.template && spec.template.spec, "/spec/template/spec", errs);
      if (doc.kind === "Deployment" && spec.strategy && spec.strategy.type === "Recreate" && spec.strategy.rollingUpdate) {
        errs.push("/spec/strategy/rollingUpdate: not allowed with type Recreate");
      }
      break;
    case "Pod":
      checkPodSpec(spec, "/spec", errs);
      break;
    case "Service":
      for (const [i, p] of (spec.ports || []).entries()) {
        if ((spec.ports.length > 1 || p.name !== undefined) && !isPortName(p.name)) errs.push(`/spec/ports/${i}/name: "${p.name}" is not a valid port name`);
        if (typeof p.targetPort === "string" && !isPortName(p.targetPort)) errs.push(`/spec/ports/${i}/targetPort: "${p.targetPort}" is not a valid port name`);
      }
      checkLabels(spec.selector, "/spec/selector", errs);
      break;
    case "ConfigMap":
    case "Secret":
      for (const field of ["data", "stringData", "binaryData"]) {
        for (const [k, v] of Object.entries(doc[field] || {})) {
          if (!CONFIG_KEY.test(k)) errs.push(`/${field}/${k}: invalid key`);
          if (doc.kind === "Secret" && field === "data" && !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) errs.push(`/data/${k}: not base64`);
        }
      }
      break;
    case "Role":
    case "ClusterRole":
      for (const [i, r] of (doc.rules || []).entries()) {
        if (!(r.verbs || []).length) errs.push(`/rules/${i}/verbs: empty`);
        if (!r.nonResourceURLs && !(r.resources || []).length) errs.push(`/rules/${i}/resources: empty`);
        if (!r.nonResourceURLs && !r.apiGroups) errs.push(`/rules/${i}/apiGroups: missing`);
      }
      break;
    case "RoleBinding":
    case "ClusterRoleBinding": {
      const kinds = doc.kind === "RoleBinding" ? ["Role", "ClusterRole"] : ["ClusterRole"];
      if (!doc.roleRef || !kinds.includes(doc.roleRef.kind)) errs.push(`/roleRef/kind: must be ${kinds.join(" or ")}`);
      if (doc.roleRef && doc.roleRef.apiGroup !== "rbac.authorization.k8s.io") errs.push("/roleRef/apiGroup: must be rbac.authorization.k8s.io");
      for (const [i, s] of (doc.subjects || []).entries()) {
        if (s.kind === "ServiceAccount" && !s.namespace && doc.kind === "ClusterRoleBinding") errs.push(`/subjects/${i}/namespace: required for a ServiceAccount`);
      }
      break;
    }
    default:
      break;
  }
}

// ---------------------------------------------------------------------------------------------
// ServiceMonitor (monitoring.coreos.com/v1): no core schema; a minimal shape check.

const SM_SPEC = new Set(["selector", "namespaceSelector", "endpoints", "jobLabel", "targetLabels", "podTargetLabels",
  "sampleLimit", "targetLimit", "labelLimit", "labelNameLengthLimit", "labelValueLengthLimit", "attachMetadata",
  "scrapeProtocols", "fallbackScrapeProtocol", "keepDroppedTargets", "bodySizeLimit", "scrapeClass",
  "selectorMechanism", "scrapeClassicHistograms", "nativeHistogramBucketLimit", "nativeHistogramMinBucketFactor",
  "convertClassicHistogramsToNHCB"]);
const SM_ENDPOINT = new Set(["port", "targetPort", "path", "scheme", "params", "interval", "scrapeTimeout",
  "tlsConfig", "bearerTokenFile", "bearerTokenSecret", "authorization", "honorLabels", "honorTimestamps",
  "trackTimestampsStaleness", "basicAuth", "oauth2", "metricRelabelings", "relabelings", "proxyUrl",
  "followRedirects", "enableHttp2", "filterRunning", "noProxy", "proxyFromEnvironment", "proxyConnectHeader"]);

function validateServiceMonitor(doc) {
  const errs = [];
  const metaValidate = require(path.join(APIMACHINERY_DIR, "_schemas", "IoK8sApimachineryPkgApisMetaV1ObjectMeta.js")).validate;
  for (const k of Object.keys(doc)) {
    if (!["apiVersion", "kind", "metadata", "spec"].includes(k)) errs.push(`/${k}: unknown field`);
  }
  errs.push(...strictValidate(metaValidate, doc.metadata || {}).map((e) => `/metadata${e.startsWith("/") ? e : "/" + e}`));
  const spec = doc.spec;
  if (!spec || typeof spec !== "object" || Array.isArray(spec)) {
    errs.push("/spec: missing");
    return errs;
  }
  for (const k of Object.keys(spec)) if (!SM_SPEC.has(k)) errs.push(`/spec/${k}: unknown field`);
  const sel = spec.selector;
  if (!sel || typeof sel !== "object") errs.push("/spec/selector: missing");
  else {
    const selValidate = require(path.join(APIMACHINERY_DIR, "_schemas", "IoK8sApimachineryPkgApisMetaV1LabelSelector.js")).validate;
    errs.push(...strictValidate(selValidate, sel).map((e) => `/spec/selector${e}`));
    checkLabels(sel.matchLabels, "/spec/selector/matchLabels", errs);
  }
  if (spec.namespaceSelector !== undefined) {
    const ns = spec.namespaceSelector;
    for (const k of Object.keys(ns || {})) if (!["any", "matchNames"].includes(k)) errs.push(`/spec/namespaceSelector/${k}: unknown field`);
    if (ns && ns.any !== undefined && typeof ns.any !== "boolean") errs.push("/spec/namespaceSelector/any: must be a boolean");
    if (ns && ns.matchNames !== undefined && !(Array.isArray(ns.matchNames) && ns.matchNames.every(isLabel))) errs.push("/spec/namespaceSelector/matchNames: must be a list of namespace names");
  }
  if (!Array.isArray(spec.endpoints) || spec.endpoints.length === 0) errs.push("/spec/endpoints: at least one endpoint");
  for (const [i, ep] of (Array.isArray(spec.endpoints) ? spec.endpoints : []).entries()) {
    const at = `/spec/endpoints/${i}`;
    if (!ep || typeof ep !== "object") {
      errs.push(`${at}: must be an object`);
      continue;
    }
    for (const k of Object.keys(ep)) if (!SM_ENDPOINT.has(k)) errs.push(`${at}/${k}: unknown field`);
    if (ep.port === undefined && ep.targetPort === undefined) errs.push(`${at}: port or targetPort required`);
    if (ep.port !== undefined && !isPortName(ep.port)) errs.push(`${at}/port: must be a Service port name`);
    if (ep.path !== undefined && !(typeof ep.path === "string" && ep.path.startsWith("/"))) errs.push(`${at}/path: must start with /`);
    if (ep.scheme !== undefined && !["http", "https", "HTTP", "HTTPS"].includes(ep.scheme)) errs.push(`${at}/scheme: must be http or https`);
    for (const d of ["interval", "scrapeTimeout"]) {
      if (ep[d] !== undefined && !(typeof ep[d] === "string" && ep[d] !== "" && PROM_DURATION.test(ep[d]))) errs.push(`${at}/${d}: must be a Prometheus duration such as 30s`);
    }
    if (ep.honorLabels !== undefined && typeof ep.honorLabels !== "boolean") errs.push(`${at}/honorLabels: must be a boolean`);
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------

function validateDoc(doc) {
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) return ["document is not a mapping"];
  if (doc.apiVersion === "monitoring.coreos.com/v1" && doc.kind === "ServiceMonitor") {
    const errs = validateServiceMonitor(doc);
    checkMeta(doc, errs);
    return errs;
  }
  const validate = schemaValidatorFor(doc.apiVersion, doc.kind);
  if (!validate) return [`no schema for apiVersion ${JSON.stringify(doc.apiVersion)} kind ${JSON.stringify(doc.kind)}`];
  const errs = strictValidate(validate, doc);
  checkSemantics(doc, errs);
  return errs;
}

function main(argv) {
  if (argv.length === 0 || argv.includes("-h") || argv.includes("--help")) {
    process.stderr.write("usage: node validate.js FILE... (- for standard input)\n");
    return 2;
  }
  let failed = 0;
  let count = 0;
  for (const file of argv) {
    let docs;
    try {
      const text = fs.readFileSync(file === "-" ? 0 : file, "utf8");
      docs = yaml.loadAll(text, null, { filename: file });
    } catch (e) {
      process.stdout.write(`ERROR ${file}: ${e.message}\n`);
      return 2;
    }
    if (argv.length > 1) process.stdout.write(`== ${file}\n`);
    for (const doc of docs) {
      if (doc === null || doc === undefined) continue;
      count++;
      const errs = validateDoc(doc);
      const name = `${(doc && doc.kind) || "?"} ${(doc && doc.metadata && doc.metadata.namespace) ? doc.metadata.namespace + "/" : ""}${(doc && doc.metadata && doc.metadata.name) || "?"}`;
      if (errs.length) {
        failed++;
        process.stdout.write(`FAIL ${name} (${path.basename(file)})\n`);
        for (const e of errs) process.stdout.write(`  ${e}\n`);
      } else {
        process.stdout.write(`ok ${name}\n`);
      }
    }
  }
  process.stdout.write(`${count} objects, ${failed} invalid\n`);
  if (count === 0) return 2;
  return failed ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
