#!/usr/bin/env python3
"""fakekube: a small, honest fake Kubernetes API server for integration tests.

Standard library only (Python >= 3.11).  See tests/fakekube/README.md for what is implemented,
the admin API and the deliberate deviations from a real kube-apiserver.  The wire behaviour
follows /work/shared/protocols.md (Part 1, Part 5 and Part 6).

Run:  python3 fakekube.py --state-dir DIR [--port 0] [--admin-port 0] [--token T] [--no-tls]
"""

from __future__ import annotations

import argparse
import base64
import bisect
import collections
import copy
import hmac
import http.server
import json
import logging
import os
import random
import re
import secrets
import select
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import traceback
import urllib.parse
import uuid
from datetime import datetime, timezone
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from testtls import make_certs, run_openssl, write_atomic  # noqa: E402

LOG = logging.getLogger("fakekube")

SERVER_VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.4",
    "gitCommit": "59526cd4867447956156ae3a602fcbac10a2c335",
    "gitTreeState": "clean",
    "buildDate": "2025-04-22T16:02:27Z",
    "goVersion": "go1.23.6",
    "compiler": "gc",
    "platform": "linux/amd64",
}

# resource name -> static description
RESOURCES = {
    "pods": {"kind": "Pod", "apiVersion": "v1", "group": "", "namespaced": True,
             "singular": "pod", "short": ["po"]},
    "events": {"kind": "Event", "apiVersion": "v1", "group": "", "namespaced": True,
               "singular": "event", "short": ["ev"]},
    "nodes": {"kind": "Node", "apiVersion": "v1", "group": "", "namespaced": False,
              "singular": "node", "short": ["no"]},
    "namespaces": {"kind": "Namespace", "apiVersion": "v1", "group": "", "namespaced": False,
                   "singular": "namespace", "short": ["ns"]},
    "leases": {"kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
               "group": "coordination.k8s.io", "namespaced": True, "singular": "lease",
               "short": []},
    # DRA (resource.k8s.io/v1, GA 1.34): the claims a pod's status.resourceClaimStatuses
    # name; served as stored (an admin POST), status included
    "resourceclaims": {"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
                       "group": "resource.k8s.io", "namespaced": True,
                       "singular": "resourceclaim", "short": []},
    # ConfigMaps and Secrets: served in full and as PartialObjectMetadata (metadata only)
    "configmaps": {"kind": "ConfigMap", "apiVersion": "v1", "group": "", "namespaced": True,
                   "singular": "configmap", "short": ["cm"]},
    "secrets": {"kind": "Secret", "apiVersion": "v1", "group": "", "namespaced": True,
                "singular": "secret", "short": []},
    # the workload controllers (apps/v1, batch/v1)
    "deployments": {"kind": "Deployment", "apiVersion": "apps/v1", "group": "apps",
                    "namespaced": True, "singular": "deployment", "short": ["deploy"],
                    "categories": ["all"]},
    "replicasets": {"kind": "ReplicaSet", "apiVersion": "apps/v1", "group": "apps",
                    "namespaced": True, "singular": "replicaset", "short": ["rs"],
                    "categories": ["all"]},
    "statefulsets": {"kind": "StatefulSet", "apiVersion": "apps/v1", "group": "apps",
                     "namespaced": True, "singular": "statefulset", "short": ["sts"],
                     "categories": ["all"]},
    "daemonsets": {"kind": "DaemonSet", "apiVersion": "apps/v1", "group": "apps",
                   "namespaced": True, "singular": "daemonset", "short": ["ds"],
                   "categories": ["all"]},
    "controllerrevisions": {"kind": "ControllerRevision", "apiVersion": "apps/v1",
                            "group": "apps", "namespaced": True,
                            "singular": "controllerrevision", "short": []},
    "jobs": {"kind": "Job", "apiVersion": "batch/v1", "group": "batch", "namespaced": True,
             "singular": "job", "short": [], "categories": ["all"]},
    "cronjobs": {"kind": "CronJob", "apiVersion": "batch/v1", "group": "batch",
                 "namespaced": True, "singular": "cronjob", "short": ["cj"],
                 "categories": ["all"]},
}

# the API groups served besides the core group (discovery order of /apis)
API_GROUPS = ["apps", "events.k8s.io", "batch", "coordination.k8s.io", "resource.k8s.io"]

# what the fake implements, per resource (also what discovery advertises)
VERBS = {
    "pods": ["get", "list", "watch"],
    "events": ["get", "list", "watch"],
    "nodes": ["get", "list", "watch"],
    "namespaces": ["get", "list", "watch"],
    "leases": ["create", "get", "list", "update", "watch"],
    "resourceclaims": ["get", "list", "watch"],
    "configmaps": ["get", "list", "watch"],
    "secrets": ["get", "list", "watch"],
    "deployments": ["get", "list", "watch"],
    "replicasets": ["get", "list", "watch"],
    "statefulsets": ["get", "list", "watch"],
    "daemonsets": ["get", "list", "watch"],
    "controllerrevisions": ["get", "list", "watch"],
    "jobs": ["get", "list", "watch"],
    "cronjobs": ["get", "list", "watch"],
}

# the internal Go type names the API server's 406 messages name (%T of the stored object)
INTERNAL_TYPES = {
    "pods": "core.Pod", "events": "core.Event", "nodes": "core.Node",
    "namespaces": "core.Namespace", "leases": "coordination.Lease",
    "resourceclaims": "resource.ResourceClaim", "configmaps": "core.ConfigMap",
    "secrets": "core.Secret", "deployments": "apps.Deployment",
    "replicasets": "apps.ReplicaSet", "statefulsets": "apps.StatefulSet",
    "daemonsets": "apps.DaemonSet", "controllerrevisions": "apps.ControllerRevision",
    "jobs": "batch.Job", "cronjobs": "batch.CronJob",
}

# empty shells used for BOOKMARK events (what a Go zero value of the kind encodes to)
BOOKMARK_BODY = {
    "pods": {"spec": {"containers": None}, "status": {}},
    "events": {"involvedObject": {}, "reason": "", "source": {}, "firstTimestamp": None,
               "lastTimestamp": None, "eventTime": None, "reportingComponent": "",
               "reportingInstance": ""},
    "nodes": {"spec": {}, "status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
                                     "nodeInfo": {"machineID": "", "systemUUID": "",
                                                  "bootID": "", "kernelVersion": "",
                                                  "osImage": "", "containerRuntimeVersion": "",
                                                  "kubeletVersion": "", "kubeProxyVersion": "",
                                                  "operatingSystem": "", "architecture": ""}}},
    "namespaces": {"spec": {}, "status": {}},
    "leases": {"spec": {}},
    "resourceclaims": {"spec": {"devices": {}}, "status": {}},
    # Go zero values of the apps/v1 and batch/v1 types under their json tags (fields without
    # omitempty, structs, null pointers); the StatefulSet tags were checked against copies of
    # the type, the others are from memory of k8s.io/api; none was compared with a real
    # server's bookmark (clients read only the bookmark's metadata)
    "configmaps": {},
    "secrets": {},
    "deployments": {"spec": {"selector": None, "template": {
        "metadata": {"creationTimestamp": None}, "spec": {"containers": None}},
        "strategy": {}}, "status": {}},
    "replicasets": {"spec": {"selector": None, "template": {
        "metadata": {"creationTimestamp": None}, "spec": {"containers": None}}},
        "status": {"replicas": 0}},
    "statefulsets": {"spec": {"selector": None, "template": {
        "metadata": {"creationTimestamp": None}, "spec": {"containers": None}},
        "serviceName": "", "updateStrategy": {}},
        "status": {"replicas": 0, "availableReplicas": 0}},
    "daemonsets": {"spec": {"selector": None, "template": {
        "metadata": {"creationTimestamp": None}, "spec": {"containers": None}},
        "updateStrategy": {}},
        "status": {"currentNumberScheduled": 0, "numberMisscheduled": 0,
                   "desiredNumberScheduled": 0, "numberReady": 0}},
    "controllerrevisions": {"data": None, "revision": 0},
    "jobs": {"spec": {"template": {"metadata": {"creationTimestamp": None},
                                   "spec": {"containers": None}}}, "status": {}},
    "cronjobs": {"spec": {"schedule": "", "jobTemplate": {
        "metadata": {"creationTimestamp": None}, "spec": {"template": {
            "metadata": {"creationTimestamp": None}, "spec": {"containers": None}}}}},
        "status": {}},
}

TRUE_STRINGS = {"1", "t", "T", "true", "TRUE", "True"}
FALSE_STRINGS = {"0", "f", "F", "false", "FALSE", "False"}

CONTINUE_VERSION = "meta.k8s.io/v1"
EXPIRED_CONTINUE_LONG = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list.")


# --------------------------------------------------------------------------------------------
# small helpers


def now_time() -> str:
    """metav1.Time: second precision, UTC, Z."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_micro() -> str:
    """metav1.MicroTime: exactly six fractional digits."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def nano_stamp(t: float) -> str:
    """RFC3339Nano with a fixed 9-digit fraction, as the kubelet prefixes log lines."""
    sec = int(t)
    ns = int(round((t - sec) * 1e9))
    if ns >= 1000000000:
        sec += 1
        ns -= 1000000000
    base = datetime.fromtimestamp(sec, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return "%s.%09dZ" % (base, ns)


def go_json(obj) -> str:
    """JSON the way Go's encoder writes it: compact, UTF-8, HTML characters escaped."""
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    if "<" in s or ">" in s or "&" in s or "\u2028" in s or "\u2029" in s:
        s = (s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
             .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return s


def parse_bool(name: str, value):
    if value is None:
        return None
    if value in TRUE_STRINGS:
        return True
    if value in FALSE_STRINGS:
        return False
    raise ApiError(400, "BadRequest",
                   'strconv.ParseBool: parsing "%s": invalid syntax (query parameter %s)'
                   % (value, name))


def parse_int(name: str, value):
    if value is None or value == "":
        return None
    try:
        return int(value, 10)
    except ValueError:
        raise ApiError(400, "BadRequest",
                       'strconv.ParseInt: parsing "%s": invalid syntax (query parameter %s)'
                       % (value, name)) from None


def go_duration(seconds: int) -> str:
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    if h:
        return "%dh%dm%ds" % (h, m, s)
    if m:
        return "%dm%ds" % (m, s)
    return "%ds" % s


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch: objects merge recursively, null deletes, anything else
    (including lists) replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def status_obj(code: int, reason: str, message: str, details=None, metadata=None) -> dict:
    obj = {"kind": "Status", "apiVersion": "v1", "metadata": metadata or {},
           "status": "Failure", "message": message}
    if reason:
        obj["reason"] = reason
    if details is not None:
        obj["details"] = details
    obj["code"] = code
    return obj


class ApiError(Exception):
    """An error answered as a Status object (or plain text when plain_text is set)."""

    def __init__(self, code, reason, message, details=None, headers=None, metadata=None,
                 plain_text=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}
        self.metadata = metadata
        self.plain_text = plain_text

    def status(self) -> dict:
        return status_obj(self.code, self.reason, self.message, self.details, self.metadata)


class AbortConnection(Exception):
    """Raised to drop the connection without a proper HTTP ending (fault injection)."""


def invalid_list_options(errors):
    """422 for ListOptions validation errors. errors: list of (field, type, detail, value)."""
    causes = []
    texts = []
    for field, etype, detail, value in errors:
        if etype == "Forbidden":
            msg = "Forbidden: %s" % detail
            reason = "FieldValueForbidden"
        elif etype == "NotSupported":
            msg = 'Unsupported value: "%s": supported values: %s' % (value, detail)
            reason = "FieldValueNotSupported"
        else:
            msg = "Invalid value: %s: %s" % (json.dumps(value), detail)
            reason = "FieldValueInvalid"
        causes.append({"reason": reason, "message": msg, "field": field})
        texts.append("%s: %s" % (field, msg))
    agg = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return ApiError(422, "Invalid", 'ListOptions.meta.k8s.io "" is invalid: %s' % agg,
                    details={"group": "meta.k8s.io", "kind": "ListOptions", "causes": causes})


def not_found(resource: str, name: str) -> ApiError:
    group = RESOURCES[resource]["group"]
    qual = resource + ("." + group if group else "")
    details = {"name": name, "kind": resource}
    if group:
        details = {"name": name, "group": group, "kind": resource}
    return ApiError(404, "NotFound", '%s "%s" not found' % (qual, name), details=details)


def not_acceptable(message) -> ApiError:
    """406 as the API server's errNotAcceptable writes it (a conversion it cannot do)."""
    return ApiError(406, "NotAcceptable", message)


def partial_metadata(obj, api_version="meta.k8s.io/v1") -> dict:
    """meta.AsPartialObjectMetadata: the object's whole ObjectMeta (managedFields
    included), nothing else, as kind PartialObjectMetadata."""
    return {"kind": "PartialObjectMetadata", "apiVersion": api_version,
            "metadata": obj.get("metadata") or {}}


def path_not_found() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource",
                    details={})


# --------------------------------------------------------------------------------------------
# selectors

_LABEL_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_LABEL_VAL = r"[-A-Za-z0-9_.]*"
_RE_NOT_EXISTS = re.compile(r"^\s*!\s*(%s)\s*$" % _LABEL_KEY)
_RE_EXISTS = re.compile(r"^\s*(%s)\s*$" % _LABEL_KEY)
_RE_EQ = re.compile(r"^\s*(%s)\s*(==|=|!=)\s*(%s)\s*$" % (_LABEL_KEY, _LABEL_VAL))
_RE_SET = re.compile(r"^\s*(%s)\s+(in|notin)\s*\(([^()]*)\)\s*$" % _LABEL_KEY)
_RE_CMP = re.compile(r"^\s*(%s)\s*(<|>)\s*(-?\d+)\s*$" % _LABEL_KEY)


def parse_label_selector(text):
    """Returns a list of (key, op, values); op in exists, !exists, =, !=, in, notin, <, >."""
    if text is None or text.strip() == "":
        return []
    parts = []
    depth = 0
    cur = []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    reqs = []
    for p in parts:
        m = _RE_NOT_EXISTS.match(p)
        if m:
            reqs.append((m.group(1), "!exists", None))
            continue
        m = _RE_SET.match(p)
        if m:
            vals = [v.strip() for v in m.group(3).split(",")]
            if any(not re.fullmatch(_LABEL_VAL, v) for v in vals) or vals == [""]:
                raise ApiError(400, "BadRequest",
                               "unable to parse requirement: %r: invalid value list" % p.strip())
            reqs.append((m.group(1), m.group(2), set(vals)))
            continue
        m = _RE_EQ.match(p)
        if m:
            op = "!=" if m.group(2) == "!=" else "="
            reqs.append((m.group(1), op, m.group(3)))
            continue
        m = _RE_CMP.match(p)
        if m:
            reqs.append((m.group(1), m.group(2), int(m.group(3))))
            continue
        m = _RE_EXISTS.match(p)
        if m:
            reqs.append((m.group(1), "exists", None))
            continue
        raise ApiError(400, "BadRequest",
                       "unable to parse requirement: %r: not a valid label selector term"
                       % p.strip())
    return reqs


def label_match(reqs, labels) -> bool:
    labels = labels or {}
    for key, op, val in reqs:
        present = key in labels
        v = labels.get(key)
        if op == "exists":
            ok = present
        elif op == "!exists":
            ok = not present
        elif op == "=":
            ok = present and v == val
        elif op == "!=":
            ok = (not present) or v != val
        elif op == "in":
            ok = present and v in val
        elif op == "notin":
            ok = (not present) or v not in val
        else:
            try:
                iv = int(v) if present else None
            except ValueError:
                iv = None
            ok = iv is not None and (iv > val if op == ">" else iv < val)
        if not ok:
            return False
    return True


def _dig(obj, *path):
    for p in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(p)
    return obj


def _s(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


FIELD_GETTERS = {
    "pods": {
        "metadata.name": lambda o: _dig(o, "metadata", "name"),
        "metadata.namespace": lambda o: _dig(o, "metadata", "namespace"),
        "spec.nodeName": lambda o: _dig(o, "spec", "nodeName"),
        "spec.restartPolicy": lambda o: _dig(o, "spec", "restartPolicy"),
        "spec.schedulerName": lambda o: _dig(o, "spec", "schedulerName"),
        "spec.serviceAccountName": lambda o: _dig(o, "spec", "serviceAccountName"),
        "spec.hostNetwork": lambda o: bool(_dig(o, "spec", "hostNetwork")),
        "status.phase": lambda o: _dig(o, "status", "phase"),
        "status.podIP": lambda o: _dig(o, "status", "podIP"),
        "status.nominatedNodeName": lambda o: _dig(o, "status", "nominatedNodeName"),
    },
    "events": {
        "metadata.name": lambda o: _dig(o, "metadata", "name"),
        "metadata.namespace": lambda o: _dig(o, "metadata", "namespace"),
        "involvedObject.kind": lambda o: _dig(o, "involvedObject", "kind"),
        "involvedObject.namespace": lambda o: _dig(o, "involvedObject", "namespace"),
        "involvedObject.name": lambda o: _dig(o, "involvedObject", "name"),
        "involvedObject.uid": lambda o: _dig(o, "involvedObject", "uid"),
        "involvedObject.apiVersion": lambda o: _dig(o, "involvedObject", "apiVersion"),
        "involvedObject.resourceVersion": lambda o: _dig(o, "involvedObject",
                                                         "resourceVersion"),
        "involvedObject.fieldPath": lambda o: _dig(o, "involvedObject", "fieldPath"),
        "reason": lambda o: o.get("reason"),
        "reportingComponent": lambda o: o.get("reportingComponent"),
        "source": lambda o: _dig(o, "source", "component"),
        "type": lambda o: o.get("type"),
    },
    "nodes": {
        "metadata.name": lambda o: _dig(o, "metadata", "name"),
        "spec.unschedulable": lambda o: bool(_dig(o, "spec", "unschedulable")),
    },
    "namespaces": {
        "metadata.name": lambda o: _dig(o, "metadata", "name"),
        "status.phase": lambda o: _dig(o, "status", "phase"),
    },
    "leases": {
        "metadata.name": lambda o: _dig(o, "metadata", "name"),
        "metadata.namespace": lambda o: _dig(o, "metadata", "namespace"),
    },
}
# the other namespaced resources: metadata.name and metadata.namespace (the generic
# DefaultClusterScopedAttr/DefaultNamespaceScopedAttr), plus what their registry adds
for _r in ("resourceclaims", "configmaps", "secrets", "deployments", "replicasets",
           "statefulsets", "daemonsets", "controllerrevisions", "jobs", "cronjobs"):
    FIELD_GETTERS[_r] = dict(FIELD_GETTERS["leases"])
FIELD_GETTERS["secrets"]["type"] = lambda o: o.get("type")
FIELD_GETTERS["replicasets"]["status.replicas"] = lambda o: _s(_dig(o, "status", "replicas")
                                                               or 0)
FIELD_GETTERS["jobs"]["status.successful"] = lambda o: _s(_dig(o, "status", "succeeded") or 0)


def _split_unescaped(text, sep):
    out, cur, esc = [], [], False
    for ch in text:
        if esc:
            cur.append("\\" + ch)
            esc = False
        elif ch == "\\":
            esc = True
        elif ch == sep:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if esc:
        cur.append("\\")
    out.append("".join(cur))
    return out


def _unescape_field_value(v):
    out, esc = [], False
    for ch in v:
        if esc:
            if ch not in "\\,=":
                raise ApiError(400, "BadRequest",
                               "invalid field selector: invalid escape sequence \\%s" % ch)
            out.append(ch)
            esc = False
        elif ch == "\\":
            esc = True
        else:
            out.append(ch)
    return "".join(out)


def parse_field_selector(resource, text):
    """Returns a list of (getter, op, value) with op in '=', '!='."""
    if text is None or text.strip() == "":
        return []
    getters = FIELD_GETTERS[resource]
    reqs = []
    for term in _split_unescaped(text, ","):
        if term == "":
            continue
        m = re.match(r"^([^=!]+)(!=|==|=)(.*)$", term)
        if not m:
            raise ApiError(400, "BadRequest",
                           "invalid field selector: %r: expected an operator" % term)
        field, op, value = m.group(1).strip(), m.group(2), _unescape_field_value(m.group(3))
        if field not in getters:
            raise ApiError(400, "BadRequest", "field label not supported: %s" % field)
        reqs.append((getters[field], "!=" if op == "!=" else "=", value))
    return reqs


def field_match(reqs, obj) -> bool:
    for getter, op, value in reqs:
        v = _s(getter(obj))
        if (v == value) != (op == "="):
            return False
    return True


def obj_key(resource, obj) -> str:
    md = obj.get("metadata") or {}
    if RESOURCES[resource]["namespaced"]:
        return "%s/%s" % (md.get("namespace", ""), md.get("name", ""))
    return md.get("name", "")


# --------------------------------------------------------------------------------------------
# the store


class HistoryEntry:
    __slots__ = ("rv", "etype", "resource", "key", "obj", "old")

    def __init__(self, rv, etype, resource, key, obj, old):
        self.rv = rv
        self.etype = etype
        self.resource = resource
        self.key = key
        self.obj = obj
        self.old = old


class Watcher:
    def __init__(self, resource, namespace, lsel, fsel, name, rv):
        self.resource = resource
        self.namespace = namespace
        self.lsel = lsel
        self.fsel = fsel
        self.name = name
        self.rv = rv
        self.dropped = False
        self.cut = b""  # with dropped: bytes written (no newline) just before the reset
        self.expired = None  # Status dict to send as ERROR, then close
        self.prefixes = []  # raw lines to write before the next event

    def matches(self, obj) -> bool:
        md = obj.get("metadata") or {}
        if self.namespace is not None and md.get("namespace") != self.namespace:
            return False
        if self.name is not None and md.get("name") != self.name:
            return False
        return label_match(self.lsel, md.get("labels")) and field_match(self.fsel, obj)


class Config:
    def __init__(self):
        self.bookmark_interval = 1.0
        self.streaming_list = True
        self.chunk_size = 0
        self.default_watch_timeout = 1800.0
        self.max_page_size = 0
        self.rv0_ignores_limit = True
        self.bookmark_before_timeout = 2.0
        self.user = "system:serviceaccount:krc:krc"

    NUMERIC = {"bookmark_interval", "default_watch_timeout", "bookmark_before_timeout"}
    INTS = {"chunk_size", "max_page_size"}
    BOOLS = {"streaming_list", "rv0_ignores_limit"}
    STRINGS = {"user"}

    def as_dict(self):
        keys = self.NUMERIC | self.INTS | self.BOOLS | self.STRINGS
        return {k: getattr(self, k) for k in sorted(keys)}


class Store:
    def __init__(self):
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.rv = 1000
        self.compacted_rv = 0
        self.objects = {r: {} for r in RESOURCES}
        self.history = []
        self.history_rvs = []
        self.watchers = set()
        self.logs = {}  # (pod uid, container) -> {"current": [...], "previous": [...]}
        self.snap_cache = collections.OrderedDict()
        self.config = Config()
        self.token = ""
        self.token_path = None
        # faults
        self.stall_until = 0.0
        self.refuse_until = 0.0
        self.http_errors = []  # dicts with remaining count
        self.slow = []  # slow_requests faults: dicts with remaining count
        self.forbids = []
        self.short_watches = 0
        # RBAC (--rbac): None = every authenticated request is allowed
        self.rbac = None
        self.audit_path = None
        self.client_ca = None  # --client-ca: x509 client certificates authenticate
        self.audit_lock = threading.Lock()
        # request log
        self.requests = []
        self.requests_lock = threading.Lock()
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            self._ensure_namespace(ns)

    # ---- writes (caller holds no lock; each takes it) ----

    def _append(self, etype, resource, key, obj, old):
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        if etype == "DELETED":
            self.objects[resource].pop(key, None)
        else:
            self.objects[resource][key] = obj
        self.history.append(HistoryEntry(self.rv, etype, resource, key, obj, old))
        self.history_rvs.append(self.rv)

    def _ensure_namespace(self, ns):
        if not ns or ns in self.objects["namespaces"]:
            return
        obj = {"metadata": {"name": ns, "uid": str(uuid.uuid4()), "resourceVersion": "",
                            "creationTimestamp": now_time(),
                            "labels": {"kubernetes.io/metadata.name": ns}},
               "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
        self._append("ADDED", "namespaces", ns, obj, None)

    def put(self, resource, obj):
        """Create or replace; returns (etype, stored object). obj must not be shared."""
        with self.cond:
            key = obj_key(resource, obj)
            if RESOURCES[resource]["namespaced"]:
                self._ensure_namespace(obj["metadata"].get("namespace"))
            old = self.objects[resource].get(key)
            etype = "MODIFIED" if old is not None else "ADDED"
            self._append(etype, resource, key, obj, old)
            self.cond.notify_all()
            return etype, obj

    def put_many(self, resource, objs):
        with self.cond:
            for obj in objs:
                key = obj_key(resource, obj)
                if RESOURCES[resource]["namespaced"]:
                    self._ensure_namespace(obj["metadata"].get("namespace"))
                old = self.objects[resource].get(key)
                self._append("MODIFIED" if old is not None else "ADDED", resource, key, obj, old)
            self.cond.notify_all()

    def delete(self, resource, key):
        with self.cond:
            old = self.objects[resource].get(key)
            if old is None:
                return None
            gone = dict(old)
            gone["metadata"] = dict(old["metadata"])
            self._append("DELETED", resource, key, gone, old)
            if resource == "pods":
                uid = old["metadata"].get("uid")
                for k in [k for k in self.logs if k[0] == uid]:
                    del self.logs[k]
            self.cond.notify_all()
            return gone

    def get(self, resource, key):
        with self.lock:
            return self.objects[resource].get(key)

    # ---- snapshots for LIST ----

    def snapshot(self, resource, rv):
        """Sorted keys and key->object map of `resource` as of rv (rv >= compacted_rv).
        Caller holds the lock."""
        ck = (resource, rv)
        hit = self.snap_cache.get(ck)
        if hit is not None:
            self.snap_cache.move_to_end(ck)
            return hit
        state = dict(self.objects[resource])
        if rv < self.rv:
            i = len(self.history) - 1
            while i >= 0 and self.history[i].rv > rv:
                e = self.history[i]
                if e.resource == resource:
                    if e.old is None:
                        state.pop(e.key, None)
                    else:
                        state[e.key] = e.old
                i -= 1
        snap = (sorted(state), state)
        self.snap_cache[ck] = snap
        while len(self.snap_cache) > 8:
            self.snap_cache.popitem(last=False)
        return snap

    # ---- compaction ----

    def compact(self, rv=None, close_watches=True):
        with self.cond:
            target = self.rv if rv is None else max(self.compacted_rv, min(int(rv), self.rv))
            self.compacted_rv = target
            idx = bisect.bisect_right(self.history_rvs, target)
            del self.history[:idx]
            del self.history_rvs[:idx]
            for k in [k for k in self.snap_cache if k[1] < target]:
                del self.snap_cache[k]
            n = 0
            if close_watches:
                for w in self.watchers:
                    if w.expired is None:
                        w.expired = status_obj(
                            410, "Expired",
                            "too old resource version: %d (%d)" % (w.rv, target))
                        n += 1
            self.cond.notify_all()
            return {"compacted_rv": target, "watches_closed": n}

    # ---- request log ----

    def record_request(self, entry):
        with self.requests_lock:
            self.requests.append(entry)
            if len(self.requests) > 200000:
                del self.requests[:100000]


# --------------------------------------------------------------------------------------------
# continue tokens


def encode_continue(rv: int, start: str) -> str:
    raw = json.dumps({"v": CONTINUE_VERSION, "rv": rv, "start": start},
                     separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_continue(token: str):
    try:
        pad = "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(token + pad))
        if data.get("v") != CONTINUE_VERSION:
            raise ValueError("unexpected version %r" % data.get("v"))
        rv = data["rv"]
        start = data["start"]
        if not isinstance(rv, int) or not isinstance(start, str) or rv == 0 or rv < -1:
            raise ValueError("bad rv/start")
        return rv, start
    except Exception as e:  # noqa: BLE001 - every decode failure is the same client error
        raise ApiError(400, "BadRequest", "continue key is not valid: %s" % e) from None


# --------------------------------------------------------------------------------------------
# object defaulting (admin side)


def _hex(n):
    return secrets.token_hex(n // 2)


def _container_id():
    return "containerd://" + _hex(64)


def _image_id(image):
    base = image.split("@")[0]
    if ":" in base.rsplit("/", 1)[-1]:
        base = base.rsplit(":", 1)[0]
    if "/" not in base:
        base = "docker.io/library/" + base
    return "%s@sha256:%s" % (base, _hex(64))


def _qos_class(containers):
    any_set = False
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        req = res.get("requests") or {}
        lim = res.get("limits") or {}
        if req or lim:
            any_set = True
        for r in ("cpu", "memory"):
            if r not in lim or (r in req and req[r] != lim[r]):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _default_container_spec(c):
    c = dict(c)
    c.setdefault("image", "registry.example.com/app:1.0")
    c.setdefault("resources", {})
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    tag = c["image"].rsplit("/", 1)[-1]
    c.setdefault("imagePullPolicy", "Always" if (":" not in tag or tag.endswith(":latest"))
                 else "IfNotPresent")
    return c


def _default_pod_spec(spec, what, restart_policy):
    """What the API server fills in a pod spec, of a pod or of a template (`what`, for the
    error): the containers (one "app" container when there are none) and init containers,
    restartPolicy, terminationGracePeriodSeconds and dnsPolicy."""
    containers = spec.get("containers") or [{"name": "app"}]
    if not isinstance(containers, list) or any(
            not isinstance(c, dict) or not c.get("name") for c in containers):
        raise ApiError(400, "BadRequest", "%s spec.containers must be a list of objects with "
                       "a name" % what)
    spec["containers"] = [_default_container_spec(c) for c in containers]
    if spec.get("initContainers"):
        spec["initContainers"] = [_default_container_spec(c) for c in spec["initContainers"]]
    spec.setdefault("restartPolicy", restart_policy)
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")


def default_pod(obj, ts=None):
    """Fills a partial pod the way the API server + scheduler + kubelet would have."""
    ts = ts or now_time()
    if not isinstance(obj, dict):
        raise ApiError(400, "BadRequest", "pod must be a JSON object")
    md = dict(obj.get("metadata") or {})
    if not md.get("name"):
        raise ApiError(400, "BadRequest", "pod metadata.name is required")
    md.setdefault("namespace", "default")
    md["uid"] = md.get("uid") or str(uuid.uuid4())
    md.setdefault("creationTimestamp", ts)
    md["resourceVersion"] = ""
    spec = dict(obj.get("spec") or {})
    _default_pod_spec(spec, "pod", "Always")
    spec.setdefault("serviceAccountName", "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("priority", 0)
    spec.setdefault("tolerations", [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}])
    scheduled = bool(spec.get("nodeName"))
    given = dict(obj.get("status") or {})
    status = {}
    phase = given.get("phase") or ("Running" if scheduled else "Pending")
    status["phase"] = phase

    def cstatus(c, init):
        st = {"name": c["name"]}
        sidecar = init and c.get("restartPolicy") == "Always"
        if not scheduled:
            return None
        if init and not sidecar:
            st["state"] = {"terminated": {"exitCode": 0, "reason": "Completed",
                                          "startedAt": ts, "finishedAt": ts,
                                          "containerID": _container_id()}}
            st["ready"] = True
            st["started"] = False
        else:
            st["state"] = {"running": {"startedAt": ts}}
            st["ready"] = True
            st["started"] = True
        st["lastState"] = {}
        st["restartCount"] = 0
        # KEP-4960 (1.33+, ContainerStopSignals): the kubelet reports the effective stop
        # signal; here only when the spec sets lifecycle.stopSignal (no image to read it from)
        stop = (c.get("lifecycle") or {}).get("stopSignal")
        if stop:
            st["stopSignal"] = stop
        st["image"] = c["image"]
        st["imageID"] = _image_id(c["image"])
        st["containerID"] = _container_id()
        return st

    def merge_statuses(specs, given_list, init):
        given_by_name = {s.get("name"): s for s in (given_list or []) if isinstance(s, dict)}
        out = []
        for c in specs:
            base = cstatus(c, init)
            g = given_by_name.get(c["name"])
            if base is None and g is None:
                continue
            st = merge_patch(base or {"name": c["name"], "lastState": {}, "restartCount": 0,
                                      "ready": False, "image": c["image"],
                                      "imageID": ""}, g or {})
            if g and "state" in g:
                st["state"] = g["state"]  # replace, never mix running+waiting
                if "running" not in g["state"]:
                    st.setdefault("ready", False)
                    if "ready" not in g:
                        st["ready"] = False
                    if "started" not in g:
                        st["started"] = False
            term = (st.get("lastState") or {}).get("terminated")
            if isinstance(term, dict) and not term.get("containerID"):
                term["containerID"] = _container_id()
            out.append(st)
        return out

    init_specs = spec.get("initContainers") or []
    cs = merge_statuses(spec["containers"], given.get("containerStatuses"), False)
    ics = merge_statuses(init_specs, given.get("initContainerStatuses"), True)
    all_ready = scheduled and phase == "Running" and all(s.get("ready") for s in cs) and len(
        cs) == len(spec["containers"])
    unready = [s["name"] for s in cs if not s.get("ready")]
    if scheduled:
        conds = [
            {"type": "PodReadyToStartContainers", "status": "True", "lastProbeTime": None,
             "lastTransitionTime": ts},
            {"type": "Initialized", "status": "True", "lastProbeTime": None,
             "lastTransitionTime": ts},
            {"type": "Ready", "status": "True" if all_ready else "False",
             "lastProbeTime": None, "lastTransitionTime": ts},
            {"type": "ContainersReady", "status": "True" if all_ready else "False",
             "lastProbeTime": None, "lastTransitionTime": ts},
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
             "lastTransitionTime": ts},
        ]
        if not all_ready:
            for c in conds[2:4]:
                c["reason"] = "ContainersNotReady"
                c["message"] = "containers with unready status: [%s]" % " ".join(unready)
        status["conditions"] = conds
        status["hostIP"] = "10.0.%d.%d" % (random.randint(0, 255), random.randint(1, 254))
        status["hostIPs"] = [{"ip": status["hostIP"]}]
        status["podIP"] = "10.244.%d.%d" % (random.randint(0, 255), random.randint(1, 254))
        status["podIPs"] = [{"ip": status["podIP"]}]
        status["startTime"] = ts
        if ics:
            status["initContainerStatuses"] = ics
        status["containerStatuses"] = cs
    else:
        status["conditions"] = [{"type": "PodScheduled", "status": "False",
                                 "lastProbeTime": None, "lastTransitionTime": ts,
                                 "reason": "Unschedulable",
                                 "message": "0/1 nodes are available: 1 node(s) didn't match "
                                            "Pod's node affinity/selector."}]
    status["qosClass"] = _qos_class(spec["containers"])
    extra = {k: v for k, v in given.items()
             if k not in ("containerStatuses", "initContainerStatuses")}
    status = merge_patch(status, extra)
    out = {"metadata": md, "spec": spec, "status": status}
    for k, v in obj.items():
        if k not in out and k not in ("kind", "apiVersion"):
            out[k] = v
    return out


def default_event(obj, ts=None):
    ts = ts or now_time()
    if not isinstance(obj, dict):
        raise ApiError(400, "BadRequest", "event must be a JSON object")
    io = dict(obj.get("involvedObject") or {})
    md = dict(obj.get("metadata") or {})
    ns = md.get("namespace") or io.get("namespace") or "default"
    md["namespace"] = ns
    if not md.get("name"):
        md["name"] = "%s.%x" % (io.get("name") or "event", time.time_ns() + random.randint(
            0, 1 << 20))
    md["uid"] = md.get("uid") or str(uuid.uuid4())
    md.setdefault("creationTimestamp", ts)
    md["resourceVersion"] = ""
    out = {"metadata": md, "involvedObject": io}
    out["reason"] = obj.get("reason", "")
    out["message"] = obj.get("message", "")
    new_api = obj.get("eventTime") is not None
    source = obj.get("source")
    if source is None:
        if new_api:  # events.k8s.io writers leave deprecatedSource empty
            source = {}
        else:
            source = {"component": obj.get("reportingComponent") or "kubelet"}
            if obj.get("reportingInstance"):
                source["host"] = obj["reportingInstance"]
    out["source"] = source
    if new_api:
        out["firstTimestamp"] = obj.get("firstTimestamp")
        out["lastTimestamp"] = obj.get("lastTimestamp")
        if "count" in obj:
            out["count"] = obj["count"]
    else:
        out["firstTimestamp"] = obj.get("firstTimestamp") or ts
        out["lastTimestamp"] = obj.get("lastTimestamp") or out["firstTimestamp"]
        out["count"] = obj.get("count", 1)
    out["type"] = obj.get("type", "Normal")
    out["eventTime"] = obj.get("eventTime")
    for k in ("series", "action", "related"):
        if obj.get(k) is not None:
            out[k] = obj[k]
    out["reportingComponent"] = obj.get("reportingComponent", source.get("component", "")
                                        if not new_api else "")
    out["reportingInstance"] = obj.get("reportingInstance", source.get("host", "")
                                       if not new_api else "")
    return out


EVENTS_GROUP = "events.k8s.io"
EVENTS_V1_VERBS = ["create", "get", "list"]
# the API server's limits for events.k8s.io/v1 (pkg/apis/core/validation/events.go)
EVENT_NOTE_MAX = 1024
EVENT_FIELD_MAX = 128
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
MICRO_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")


def _qualified_name_errors(value):
    """validation.IsQualifiedName: [prefix/]name, prefix a DNS subdomain, name <= 63."""
    if "/" in value:
        prefix, name = value.split("/", 1)
        if "/" in name or not prefix or len(prefix) > 253 or not DNS1123_SUBDOMAIN.match(prefix):
            return ["prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                    "alphanumeric characters, '-' or '.', and must start and end with an "
                    "alphanumeric character"]
    else:
        name = value
    if not name or len(name) > 63 or not QUALIFIED_NAME.match(name):
        return ["name part must consist of alphanumeric characters, '-', '_' or '.', and must "
                "start and end with an alphanumeric character"]
    return []


def validate_event_v1(obj, ns, name):
    """ValidateEventCreate for an events.k8s.io/v1 request: [(field, reason, detail, value)]."""
    errs = []

    def req(field):
        errs.append((field, "FieldValueRequired", "Required value", None))

    def bad(field, value, detail):
        errs.append((field, "FieldValueInvalid", detail, value))

    if not name:
        errs.append(("metadata.name", "FieldValueRequired",
                     "Required value: name or generateName is required", None))
    elif len(name) > 253 or not DNS1123_SUBDOMAIN.match(name):
        bad("metadata.name", name, "a lowercase RFC 1123 subdomain must consist of lower case "
            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
            "character")
    et = obj.get("eventTime")
    if not et:
        req("eventTime")
    elif not isinstance(et, str) or not MICRO_TIME.match(et):
        bad("eventTime", et, "not an RFC 3339 time")
    if obj.get("type") not in ("Normal", "Warning"):
        bad("type", "", "has invalid value: %s" % (obj.get("type") or ""))
    reg = obj.get("regarding")
    if not isinstance(reg, dict) or not reg:
        req("regarding")
    elif not reg.get("namespace") and ns not in ("default", "kube-system"):
        bad("regarding.namespace", reg.get("namespace", ""), "does not match event.namespace")
    rc = obj.get("reportingController") or ""
    if not rc:
        req("reportingController")
    else:
        for m in _qualified_name_errors(rc):
            bad("reportingController", rc, m)
    for field in ("reportingInstance", "action", "reason"):
        v = obj.get(field) or ""
        if not v:
            req(field)
        elif len(v) > EVENT_FIELD_MAX:
            bad(field, "", "can have at most %d characters" % EVENT_FIELD_MAX)
    note = obj.get("note") or ""
    if len(note.encode("utf-8")) > EVENT_NOTE_MAX:
        bad("note", "", "can have at most %d characters" % EVENT_NOTE_MAX)
    for field in ("deprecatedFirstTimestamp", "deprecatedLastTimestamp", "deprecatedCount"):
        if obj.get(field):
            bad(field, "", "needs to be unset")
    src = obj.get("deprecatedSource") or {}
    if src.get("component") or src.get("host"):
        bad("deprecatedSource", "", "needs to be unset")
    if not DNS1123_SUBDOMAIN.match(ns):
        bad("namespace", ns, "a lowercase RFC 1123 subdomain must consist of lower case "
            "alphanumeric characters, '-' or '.'")
    return errs


def invalid_error(kind, group, name, errs):
    """422 Invalid as the API server writes it: one message per field, [a, b] for several."""
    msgs, causes = [], []
    for field, reason, detail, value in errs:
        text = detail if value is None else "Invalid value: %s: %s" % (json.dumps(value), detail)
        msgs.append("%s: %s" % (field, text))
        causes.append({"reason": reason, "message": text, "field": field})
    joined = msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"
    return ApiError(422, "Invalid", '%s.%s "%s" is invalid: %s' % (kind, group, name, joined),
                    details={"name": name, "group": group, "kind": kind, "causes": causes})


def event_to_v1(ev, listed=False):
    """A stored (core/v1 shaped) Event as events.k8s.io/v1 shows it."""
    out = {} if listed else {"kind": "Event", "apiVersion": EVENTS_GROUP + "/v1"}
    out["metadata"] = copy.deepcopy(ev.get("metadata") or {})
    out["eventTime"] = ev.get("eventTime")
    for core, new in (("series", "series"), ("reportingComponent", "reportingController"),
                      ("reportingInstance", "reportingInstance"), ("action", "action"),
                      ("reason", "reason")):
        if ev.get(core):
            out[new] = copy.deepcopy(ev[core])
    out["regarding"] = copy.deepcopy(ev.get("involvedObject") or {})
    if ev.get("related"):
        out["related"] = copy.deepcopy(ev["related"])
    if ev.get("message"):
        out["note"] = ev["message"]
    if ev.get("type"):
        out["type"] = ev["type"]
    if ev.get("source"):
        out["deprecatedSource"] = copy.deepcopy(ev["source"])
    out["deprecatedFirstTimestamp"] = ev.get("firstTimestamp")
    out["deprecatedLastTimestamp"] = ev.get("lastTimestamp")
    if ev.get("count"):
        out["deprecatedCount"] = ev["count"]
    return out


def default_node(obj, ts=None):
    ts = ts or now_time()
    if not isinstance(obj, dict):
        raise ApiError(400, "BadRequest", "node must be a JSON object")
    md = dict(obj.get("metadata") or {})
    if not md.get("name"):
        raise ApiError(400, "BadRequest", "node metadata.name is required")
    md.pop("namespace", None)
    md["uid"] = md.get("uid") or str(uuid.uuid4())
    md.setdefault("creationTimestamp", ts)
    md["resourceVersion"] = ""
    labels = dict(md.get("labels") or {})
    labels.setdefault("kubernetes.io/hostname", md["name"])
    labels.setdefault("kubernetes.io/os", "linux")
    labels.setdefault("kubernetes.io/arch", "amd64")
    md["labels"] = labels
    status = {
        "capacity": {"cpu": "8", "memory": "32870112Ki", "pods": "110",
                     "ephemeral-storage": "101430960Ki"},
        "allocatable": {"cpu": "7910m", "memory": "31719136Ki", "pods": "110",
                        "ephemeral-storage": "93478772582"},
        "conditions": [
            {"type": "MemoryPressure", "status": "False", "lastHeartbeatTime": ts,
             "lastTransitionTime": ts, "reason": "KubeletHasSufficientMemory",
             "message": "kubelet has sufficient memory available"},
            {"type": "DiskPressure", "status": "False", "lastHeartbeatTime": ts,
             "lastTransitionTime": ts, "reason": "KubeletHasNoDiskPressure",
             "message": "kubelet has no disk pressure"},
            {"type": "PIDPressure", "status": "False", "lastHeartbeatTime": ts,
             "lastTransitionTime": ts, "reason": "KubeletHasSufficientPID",
             "message": "kubelet has sufficient PID available"},
            {"type": "Ready", "status": "True", "lastHeartbeatTime": ts,
             "lastTransitionTime": ts, "reason": "KubeletReady",
             "message": "kubelet is posting ready status"}],
        "addresses": [{"type": "InternalIP", "address": "10.0.0.%d" % random.randint(2, 250)},
                      {"type": "Hostname", "address": md["name"]}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {"machineID": _hex(32), "systemUUID": str(uuid.uuid4()),
                     "bootID": str(uuid.uuid4()), "kernelVersion": "6.1.0-25-cloud-amd64",
                     "osImage": "Debian GNU/Linux 12 (bookworm)",
                     "containerRuntimeVersion": "containerd://1.7.22",
                     "kubeletVersion": SERVER_VERSION["gitVersion"],
                     "kubeProxyVersion": SERVER_VERSION["gitVersion"],
                     "operatingSystem": "linux", "architecture": "amd64"},
    }
    given = obj.get("status") or {}
    if "conditions" in given:
        status["conditions"] = given["conditions"]
    status = merge_patch(status, {k: v for k, v in given.items() if k != "conditions"})
    return {"metadata": md, "spec": dict(obj.get("spec") or {}), "status": status}


def default_lease(obj):
    if not isinstance(obj, dict):
        raise ApiError(400, "BadRequest", "lease must be a JSON object")
    md = dict(obj.get("metadata") or {})
    if not md.get("name"):
        raise ApiError(400, "BadRequest", "lease metadata.name is required")
    md.setdefault("namespace", "default")
    md["uid"] = md.get("uid") or str(uuid.uuid4())
    md.setdefault("creationTimestamp", now_time())
    md["resourceVersion"] = ""
    return {"metadata": md, "spec": dict(obj.get("spec") or {})}


def default_resource_claim(obj, ts=None):
    """A ResourceClaim (resource.k8s.io/v1) as given: metadata defaulted like the API
    server's, spec and status kept (status.allocation.devices.results, status.devices)."""
    if not isinstance(obj, dict):
        raise ApiError(400, "BadRequest", "resourceclaim must be a JSON object")
    md = dict(obj.get("metadata") or {})
    if not md.get("name"):
        raise ApiError(400, "BadRequest", "resourceclaim metadata.name is required")
    md.setdefault("namespace", "default")
    md["uid"] = md.get("uid") or str(uuid.uuid4())
    md.setdefault("creationTimestamp", ts or now_time())
    md["resourceVersion"] = ""
    out = {"metadata": md, "spec": copy.deepcopy(obj.get("spec") or {"devices": {}})}
    if obj.get("status") is not None:
        out["status"] = copy.deepcopy(obj["status"])
    return out


# --------------------------------------------------------------------------------------------
# managedFields: what the API server's field manager records for an Update
# (k8s.io/apimachinery/pkg/util/managedfields: the fields a write changed move to the writing
# manager's entry, taken from every other manager; the entry's time is the write's; an entry
# left with no fields is dropped; entries sorted by operation, time, manager, apiVersion,
# subresource).  FieldsV1 paths follow the API types' list markers for the lists that occur
# in the objects this fake builds; the exact set a real server records can differ in detail
# (e.g. which struct nodes carry ".").

# metadata fields the field manager never tracks (the URL and the server own them)
UNMANAGED_METADATA = {"name", "namespace", "uid", "resourceVersion", "generation",
                      "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                      "managedFields", "selfLink"}
# associative lists (+listType=map) and their keys
LIST_MAP_KEYS = {"containers": ("name",), "initContainers": ("name",),
                 "ephemeralContainers": ("name",), "volumes": ("name",), "env": ("name",),
                 "imagePullSecrets": ("name",), "ports": ("containerPort", "protocol"),
                 "volumeMounts": ("mountPath",), "volumeDevices": ("devicePath",),
                 "conditions": ("type",), "ownerReferences": ("uid",),
                 "hostAliases": ("ip",), "resourceClaims": ("name",),
                 "topologySpreadConstraints": ("topologyKey", "whenUnsatisfiable")}
SET_LISTS = {"finalizers"}
# struct-valued fields whose own path is not a managed field (only their members are)
STRUCT_FIELDS = {"metadata", "spec", "status", "template", "strategy", "updateStrategy",
                 "jobTemplate"}
# resources whose status is written through the status subresource only
STATUS_SUBRESOURCE = {"pods", "nodes", "namespaces", "deployments", "replicasets",
                      "statefulsets", "daemonsets", "jobs", "cronjobs", "resourceclaims"}


def _value_paths(key, value, path, out):
    if isinstance(value, dict) and value:
        if key not in STRUCT_FIELDS:
            out[path + (".",)] = None
        for k, v in value.items():
            if path == ("f:metadata",) and k in UNMANAGED_METADATA:
                continue
            _value_paths(k, v, path + ("f:" + k,), out)
    elif isinstance(value, list) and value and key in LIST_MAP_KEYS and all(
            isinstance(i, dict) for i in value):
        out[path + (".",)] = None
        for item in value:
            ident = {}
            for kf in LIST_MAP_KEYS[key]:
                ident[kf] = item.get(kf, "TCP" if kf == "protocol" else "")
            elem = path + ("k:" + json.dumps(ident, sort_keys=True, separators=(",", ":")),)
            out[elem + (".",)] = None
            for k, v in item.items():
                _value_paths(k, v, elem + ("f:" + k,), out)
    elif isinstance(value, list) and value and key in SET_LISTS:
        out[path + (".",)] = None
        for item in value:
            out[path + ("v:" + json.dumps(item, separators=(",", ":")),)] = None
    else:
        out[path] = json.dumps(value, sort_keys=True)  # a leaf: scalar, {} or atomic list


def field_paths(obj):
    """{FieldsV1 path (tuple): leaf value} of an object ("." = the node itself)."""
    out = {}
    for k, v in obj.items():
        if k in ("apiVersion", "kind"):
            continue
        _value_paths(k, v, ("f:" + k,), out)
    return out


def fields_v1(paths):
    root = {}
    for p in sorted(paths):
        node = root
        for seg in p:
            node = node.setdefault(seg, {})
    return root


def paths_of_fields(fv1, prefix=()):
    out = set()
    for k, v in (fv1 or {}).items():
        if isinstance(v, dict) and v:
            out |= paths_of_fields(v, prefix + (k,))
        else:
            out.add(prefix + (k,))
    return out


def record_update(resource, old, new, manager, subresource=None, ts=None,
                  operation="Update", rename=None):
    """Set new["metadata"]["managedFields"] as the API server records a write of `new` over
    `old` (None: a create) by `manager`; returns the paths the write changed.  rename: {top
    field: field the client sent} (a Secret written with stringData: {"f:data":
    "f:stringData"})."""
    ts = ts or now_time()
    info = RESOURCES[resource]
    md = new.setdefault("metadata", {})
    entries = copy.deepcopy(old["metadata"].get("managedFields") or []) if old else []
    newp = field_paths(new)
    oldp = field_paths(old) if old else {}
    changed = {p for p, v in newp.items() if p not in oldp or oldp[p] != v}
    removed = {p for p in oldp if p not in newp}
    if resource in STATUS_SUBRESOURCE:  # the other endpoint's fields are reset, not written
        if subresource == "status":
            changed = {p for p in changed if p[0] == "f:status"}
        else:
            changed = {p for p in changed if p[0] != "f:status"}
    taken = set(changed)
    if rename:
        changed = {(rename.get(p[0], p[0]),) + p[1:] for p in changed}
        taken |= changed
    out = []
    mine = None
    for e in entries:
        paths = paths_of_fields(e.get("fieldsV1")) - taken - removed
        if (e.get("manager"), e.get("operation"), e.get("subresource")) == (
                manager, operation, subresource):
            mine = (e, paths)
            continue
        if paths:
            e["fieldsV1"] = fields_v1(paths)
            out.append(e)
    if mine is not None:
        e, paths = mine
        if changed:
            paths |= changed
            e["time"] = ts
            e["apiVersion"] = info["apiVersion"]
        if paths:
            e["fieldsV1"] = fields_v1(paths)
            out.append(e)
    elif changed:
        e = {"manager": manager, "operation": operation, "apiVersion": info["apiVersion"],
             "time": ts, "fieldsType": "FieldsV1", "fieldsV1": fields_v1(changed)}
        if subresource:
            e["subresource"] = subresource
        out.append(e)
    out.sort(key=lambda e: (e.get("operation", ""), e.get("time") or "", e.get("manager", ""),
                            e.get("apiVersion", ""), e.get("subresource", "")))
    if out:
        md["managedFields"] = out
    else:
        md.pop("managedFields", None)
    return changed


# --------------------------------------------------------------------------------------------
# workload controllers, ConfigMaps and Secrets (admin side): defaulting as the API server's
# SetDefaults_* for apps/v1 and batch/v1, and what the deployment controller writes

SAFE_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
WORKLOAD_RESOURCES = ("deployments", "replicasets", "statefulsets", "daemonsets", "jobs",
                      "cronjobs")


def safe_encode(s):
    """rand.SafeEncodeString: every byte mapped into an alphabet without vowels."""
    return "".join(SAFE_ALPHANUMS[b % len(SAFE_ALPHANUMS)] for b in s.encode())


def fnv32a(data):
    h = 0x811c9dc5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xffffffff
    return h


def pod_template_hash(template, collision_count=None):
    """controller.ComputeHash: FNV-32a over the template (and collisionCount), the decimal
    value SafeEncodeString'd.  The bytes hashed here are the template's canonical JSON, not
    Go's DeepHashObject dump, so the value is not what a real cluster computes for the same
    template; its form (up to 10 characters of the same alphabet) is."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count:
        data += str(collision_count).encode()
    return safe_encode(str(fnv32a(data)))


def default_pod_template(tmpl, restart_policy="Always"):
    """A PodTemplateSpec as the API server defaults it (SetDefaults_PodSpec, containers)."""
    t = copy.deepcopy(tmpl or {})
    md = t.setdefault("metadata", {})
    md.setdefault("creationTimestamp", None)
    spec = t.setdefault("spec", {})
    _default_pod_spec(spec, "template", restart_policy)
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    return t


def _workload_meta(resource, obj, ts):
    if not isinstance(obj, dict):
        raise ApiError(400, "BadRequest", "%s must be a JSON object" % RESOURCES[resource][
            "singular"])
    md = dict(obj.get("metadata") or {})
    if not md.get("name"):
        raise ApiError(400, "BadRequest", "%s metadata.name is required"
                       % RESOURCES[resource]["singular"])
    md.setdefault("namespace", "default")
    md["uid"] = md.get("uid") or str(uuid.uuid4())
    md.setdefault("creationTimestamp", ts)
    md["resourceVersion"] = ""
    if resource in WORKLOAD_RESOURCES:
        md.setdefault("generation", 1)
    return md


def _selector_from(spec, tmpl):
    sel = spec.get("selector")
    if sel is None:
        labels = (tmpl.get("metadata") or {}).get("labels") or {}
        if not labels:
            raise ApiError(400, "BadRequest", "spec.selector is required (or template labels "
                           "to derive it from)")
        sel = {"matchLabels": dict(labels)}
    return sel


def default_workload(resource):
    def defaulter(obj, ts=None):
        ts = ts or now_time()
        md = _workload_meta(resource, obj, ts)
        out = {"metadata": md}
        spec = copy.deepcopy(obj.get("spec") or {})
        status = copy.deepcopy(obj.get("status"))
        if resource == "deployments":
            spec["template"] = default_pod_template(spec.get("template"))
            spec["selector"] = _selector_from(spec, spec["template"])
            spec.setdefault("replicas", 1)
            spec.setdefault("strategy", {"type": "RollingUpdate", "rollingUpdate": {
                "maxUnavailable": "25%", "maxSurge": "25%"}})
            spec.setdefault("revisionHistoryLimit", 10)
            spec.setdefault("progressDeadlineSeconds", 600)
            out["spec"] = spec
            out["status"] = status if status is not None else {}
        elif resource == "replicasets":
            spec["template"] = default_pod_template(spec.get("template"))
            spec["selector"] = _selector_from(spec, spec["template"])
            spec.setdefault("replicas", 1)
            out["spec"] = spec
            out["status"] = status if status is not None else {"replicas": 0}
        elif resource == "statefulsets":
            spec["template"] = default_pod_template(spec.get("template"))
            spec["selector"] = _selector_from(spec, spec["template"])
            spec.setdefault("replicas", 1)
            spec.setdefault("serviceName", "")
            spec.setdefault("podManagementPolicy", "OrderedReady")
            spec.setdefault("updateStrategy", {"type": "RollingUpdate",
                                               "rollingUpdate": {"partition": 0}})
            spec.setdefault("revisionHistoryLimit", 10)
            spec.setdefault("persistentVolumeClaimRetentionPolicy",
                            {"whenDeleted": "Retain", "whenScaled": "Retain"})
            out["spec"] = spec
            out["status"] = status if status is not None else {"replicas": 0,
                                                               "availableReplicas": 0}
        elif resource == "daemonsets":
            spec["template"] = default_pod_template(spec.get("template"))
            spec["selector"] = _selector_from(spec, spec["template"])
            spec.setdefault("updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {
                "maxUnavailable": 1, "maxSurge": 0}})
            spec.setdefault("revisionHistoryLimit", 10)
            out["spec"] = spec
            out["status"] = status if status is not None else {
                "currentNumberScheduled": 0, "numberMisscheduled": 0,
                "desiredNumberScheduled": 0, "numberReady": 0}
        elif resource == "jobs":
            tmpl = default_pod_template(spec.get("template"), restart_policy="Never")
            uid = md["uid"]
            job_labels = {"batch.kubernetes.io/controller-uid": uid,
                          "batch.kubernetes.io/job-name": md["name"],
                          "controller-uid": uid, "job-name": md["name"]}
            tmpl["metadata"]["labels"] = dict(job_labels, **(tmpl["metadata"].get("labels")
                                                             or {}))
            spec["template"] = tmpl
            spec.setdefault("selector", {"matchLabels": {
                "batch.kubernetes.io/controller-uid": uid}})
            spec.setdefault("parallelism", 1)
            spec.setdefault("completions", 1)
            spec.setdefault("backoffLimit", 6)
            spec.setdefault("completionMode", "NonIndexed")
            spec.setdefault("suspend", False)
            spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
            md["labels"] = dict(job_labels, **(md.get("labels") or {}))
            out["spec"] = spec
            out["status"] = status if status is not None else {}
        elif resource == "cronjobs":
            if not spec.get("schedule"):
                raise ApiError(400, "BadRequest", "cronjob spec.schedule is required")
            jt = copy.deepcopy(spec.get("jobTemplate") or {})
            jt.setdefault("metadata", {"creationTimestamp": None})
            jspec = jt.setdefault("spec", {})
            jspec["template"] = default_pod_template(jspec.get("template"),
                                                     restart_policy="Never")
            spec["jobTemplate"] = jt
            spec.setdefault("concurrencyPolicy", "Allow")
            spec.setdefault("suspend", False)
            spec.setdefault("successfulJobsHistoryLimit", 3)
            spec.setdefault("failedJobsHistoryLimit", 1)
            out["spec"] = spec
            out["status"] = status if status is not None else {}
        elif resource == "controllerrevisions":
            rev = obj.get("revision")
            if not isinstance(rev, int) or isinstance(rev, bool):
                raise ApiError(400, "BadRequest", "controllerrevision revision (an integer) "
                               "is required")
            out["data"] = copy.deepcopy(obj.get("data"))
            out["revision"] = rev
        elif resource == "configmaps":
            for k in ("immutable", "data", "binaryData"):
                if obj.get(k) is not None:
                    out[k] = copy.deepcopy(obj[k])
        elif resource == "secrets":
            data = dict(obj.get("data") or {})
            for k, v in (obj.get("stringData") or {}).items():  # as the API server merges it
                data[k] = base64.b64encode(v.encode("utf-8")).decode()
            if obj.get("immutable") is not None:
                out["immutable"] = obj["immutable"]
            if data:
                out["data"] = data
            out["type"] = obj.get("type") or "Opaque"
        return out
    return defaulter


DEFAULTERS = {"pods": default_pod, "events": default_event, "nodes": default_node,
              "leases": lambda o, ts=None: default_lease(o),
              "resourceclaims": default_resource_claim}
for _r in WORKLOAD_RESOURCES + ("controllerrevisions", "configmaps", "secrets"):
    DEFAULTERS[_r] = default_workload(_r)


def log_lines(text, start_time=None):
    """Split text into (timestamp, bytes) lines, keeping newlines."""
    if isinstance(text, str):
        data = text.encode("utf-8", "surrogateescape")
    else:
        data = bytes(text)
    t = time.time() if start_time is None else start_time
    out = []
    for i, line in enumerate(data.splitlines(keepends=True)):
        out.append((t + i * 1e-6, line))
    return out


# --------------------------------------------------------------------------------------------
# RBAC (--rbac FILE): the request attributes and the rule evaluation of the real
# kube-apiserver (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go, plugin/pkg/auth/
# authorizer/rbac/rbac.go, pkg/apis/rbac/v1/evaluation_helpers.go)

RBAC_KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
RBAC_GROUP = "rbac.authorization.k8s.io"

# What the default bootstrap policy grants every authenticated user (ClusterRoles
# system:discovery, system:public-info-viewer and system:basic-user, bound to the group
# system:authenticated), so discovery works for any token, as on a real cluster.
BOOTSTRAP_RULES = [
    {"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz",
                                          "/livez", "/openapi", "/openapi/*", "/readyz",
                                          "/version", "/version/"]},
    {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
     "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
    {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"],
     "resources": ["selfsubjectreviews"]},
]


class RequestAttributes:
    """authorizer.Attributes of one request, as RequestInfoFactory derives them."""

    def __init__(self):
        self.resource_request = False
        self.path = ""
        self.verb = ""
        self.api_group = ""
        self.api_version = ""
        self.namespace = ""
        self.resource = ""
        self.subresource = ""
        self.name = ""

    def as_dict(self):
        if not self.resource_request:
            return {"verb": self.verb, "path": self.path}
        return {"verb": self.verb, "apiGroup": self.api_group, "resource": self.resource,
                "subresource": self.subresource, "namespace": self.namespace,
                "name": self.name}


def _field_selector_name(text):
    """fields.Selector.RequiresExactMatch("metadata.name") of a field selector, or ""."""
    if not text:
        return ""
    try:
        for term in _split_unescaped(text, ","):
            m = re.match(r"^([^=!]+)(!=|==|=)(.*)$", term)
            if m is None:
                if term == "":
                    continue
                return ""  # unparseable: the server resets the options, no name
            if m.group(1).strip() == "metadata.name" and m.group(2) != "!=":
                return _unescape_field_value(m.group(3))
    except ApiError:
        return ""
    return ""


def _valid_path_segment_name(name):
    return name not in (".", "..") and "/" not in name and "%" not in name


def request_attributes(method, path, query_pairs):
    """RequestInfoFactory.NewRequestInfo: verb, API group, namespace, resource, subresource
    and name of a request (query_pairs: list of (key, value))."""
    a = RequestAttributes()
    a.path = path
    a.verb = method.lower()
    parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")] if path.strip(
        "/") else []
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return a
    prefix, parts = parts[0], parts[1:]
    if prefix == "apis":
        if len(parts) < 3:
            return a
        a.api_group, parts = parts[0], parts[1:]
    a.resource_request = True
    a.api_version, parts = parts[0], parts[1:]
    if parts[0] in ("proxy", "watch"):
        if len(parts) < 2:
            a.resource_request = False
            return a
        a.verb, parts = parts[0], parts[1:]
    else:
        a.verb = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update",
                  "PATCH": "patch", "DELETE": "delete"}.get(method, "")
    if parts[0] == "namespaces":
        if len(parts) > 1:
            a.namespace = parts[1]
            if len(parts) > 2 and parts[2] not in ("status", "finalize"):
                parts = parts[2:]
    if len(parts) >= 3 and a.verb != "proxy":
        a.subresource = parts[2]
    if len(parts) >= 2:
        a.name = parts[1]
    if len(parts) >= 1:
        a.resource = parts[0]
    if not a.name and a.verb == "get":
        q = {}
        for k, v in query_pairs:
            q.setdefault(k, v)
        w = q.get("watch")
        if w is None:
            watch = False
        elif w in TRUE_STRINGS or w in FALSE_STRINGS:
            watch = w in TRUE_STRINGS
        else:
            watch = w.lower() not in ("false", "0")
        a.verb = "watch" if watch else "list"
        name = _field_selector_name(q.get("fieldSelector"))
        if name and _valid_path_segment_name(name):
            a.name = name
    if not a.name and a.verb == "delete":
        a.verb = "deletecollection"
    return a


def _has(values, want):
    return "*" in values or want in values


def rule_allows(rule, a: RequestAttributes) -> bool:
    """rbac/v1 RuleAllows."""
    if a.resource_request:
        if not _has(rule.get("verbs") or [], a.verb):
            return False
        if not _has(rule.get("apiGroups") or [], a.api_group):
            return False
        combined = a.resource + ("/" + a.subresource if a.subresource else "")
        ok = False
        for r in rule.get("resources") or []:
            if r == "*" or r == combined or (a.subresource and r == "*/" + a.subresource):
                ok = True
                break
        if not ok:
            return False
        names = rule.get("resourceNames") or []
        return not names or a.name in names
    if not _has(rule.get("verbs") or [], a.verb):
        return False
    for u in rule.get("nonResourceURLs") or []:
        if u == "*" or u == a.path or (u.endswith("*") and a.path.startswith(u[:-1])):
            return True
    return False


def user_groups(user):
    """The groups the API server gives a service-account token (or any authenticated user)."""
    groups = ["system:authenticated"]
    parts = user.split(":")
    if len(parts) == 4 and parts[:2] == ["system", "serviceaccount"]:
        groups = ["system:serviceaccounts", "system:serviceaccounts:" + parts[2]] + groups
    return groups


class Rbac:
    """Role/ClusterRole/RoleBinding/ClusterRoleBinding objects and the RBAC authorizer."""

    def __init__(self, objects):
        self.roles = {}          # (namespace, name) -> rules
        self.cluster_roles = {}  # name -> rules
        self.role_bindings = []  # binding objects (namespaced)
        self.cluster_role_bindings = []
        self.objects = []
        for obj in objects:
            self._add(obj)

    def _add(self, obj):
        if not isinstance(obj, dict):
            raise ValueError("RBAC object is not a mapping: %r" % (obj,))
        kind = obj.get("kind")
        if kind in ("List", "RoleList", "ClusterRoleList", "RoleBindingList",
                    "ClusterRoleBindingList"):
            for item in obj.get("items") or []:
                self._add(item)
            return
        if kind not in RBAC_KINDS:
            return  # other objects of a rendered kustomization are ignored
        api = obj.get("apiVersion", "")
        if api.split("/")[0] != RBAC_GROUP:
            raise ValueError("%s %r: apiVersion %r is not %s/v1" % (
                kind, (obj.get("metadata") or {}).get("name"), api, RBAC_GROUP))
        md = obj.get("metadata") or {}
        name, ns = md.get("name"), md.get("namespace")
        if not name:
            raise ValueError("%s without metadata.name" % kind)
        if kind in ("Role", "RoleBinding") and not ns:
            raise ValueError("%s %s without metadata.namespace" % (kind, name))
        if kind in ("RoleBinding", "ClusterRoleBinding"):
            ref = obj.get("roleRef") or {}
            if ref.get("kind") not in (("Role", "ClusterRole") if kind == "RoleBinding"
                                       else ("ClusterRole",)):
                raise ValueError("%s %s: roleRef.kind %r not allowed" % (kind, name,
                                                                        ref.get("kind")))
            if ref.get("apiGroup") != RBAC_GROUP or not ref.get("name"):
                raise ValueError("%s %s: roleRef needs apiGroup %s and a name" % (
                    kind, name, RBAC_GROUP))
        rules = obj.get("rules") or []
        if kind in ("Role", "ClusterRole"):
            for r in rules:
                if not isinstance(r, dict) or not r.get("verbs"):
                    raise ValueError("%s %s: every rule needs verbs" % (kind, name))
                if r.get("nonResourceURLs") and kind == "Role":
                    raise ValueError("Role %s: nonResourceURLs only in a ClusterRole" % name)
                if not r.get("nonResourceURLs") and not r.get("resources"):
                    raise ValueError("%s %s: a rule needs resources or nonResourceURLs"
                                     % (kind, name))
                if r.get("resources") and "apiGroups" not in r:
                    raise ValueError("%s %s: a resource rule needs apiGroups" % (kind, name))
        if kind == "Role":
            self.roles[(ns, name)] = rules
        elif kind == "ClusterRole":
            if obj.get("aggregationRule"):
                LOG.warning("ClusterRole %s: aggregationRule is not evaluated", name)
            self.cluster_roles[name] = rules
        elif kind == "RoleBinding":
            self.role_bindings.append(obj)
        else:
            self.cluster_role_bindings.append(obj)
        self.objects.append(obj)

    @staticmethod
    def load(path):
        """JSON (an object, a list or a v1 List) or YAML documents (as `kubectl kustomize`
        renders them; needs PyYAML)."""
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            data = json.loads(text)
        except ValueError:
            try:
                import yaml  # noqa: PLC0415 - optional, only for YAML input
            except ImportError:
                raise ValueError("%s is not JSON and PyYAML is not installed (Debian: "
                                 "python3-yaml); give JSON instead" % path) from None
            data = [d for d in yaml.safe_load_all(text) if d is not None]
        if isinstance(data, dict):
            data = [data]
        if not isinstance(data, list):
            raise ValueError("%s: expected RBAC objects" % path)
        return Rbac(data)

    def service_accounts(self):
        """system:serviceaccount:NS:NAME of every ServiceAccount subject, in order."""
        out = []
        for b in self.role_bindings + self.cluster_role_bindings:
            bns = b["metadata"].get("namespace", "")
            for s in b.get("subjects") or []:
                if s.get("kind") == "ServiceAccount":
                    u = "system:serviceaccount:%s:%s" % (s.get("namespace") or bns,
                                                         s.get("name"))
                    if u not in out:
                        out.append(u)
        return out

    @staticmethod
    def _subject_matches(s, binding_ns, user, groups):
        kind = s.get("kind")
        if kind == "User":
            return s.get("name") == user
        if kind == "Group":
            return s.get("name") in groups
        if kind == "ServiceAccount":
            ns = s.get("namespace") or binding_ns
            return user == "system:serviceaccount:%s:%s" % (ns, s.get("name"))
        return False

    def authorize(self, user, a: RequestAttributes):
        """(allowed, reason): RBACAuthorizer.Authorize; reason names roles that bindings
        refer to but that do not exist, as the real one does."""
        groups = user_groups(user)
        for rule in BOOTSTRAP_RULES:
            if rule_allows(rule, a):
                return True, ""
        errors = []
        for b in self.cluster_role_bindings:
            if not any(self._subject_matches(s, "", user, groups)
                       for s in b.get("subjects") or []):
                continue
            name = b["roleRef"]["name"]
            rules = self.cluster_roles.get(name)
            if rules is None:
                errors.append('clusterrole.rbac.authorization.k8s.io "%s" not found' % name)
                continue
            if any(rule_allows(r, a) for r in rules):
                return True, ""
        if a.namespace:
            for b in self.role_bindings:
                bns = b["metadata"]["namespace"]
                if bns != a.namespace or not any(
                        self._subject_matches(s, bns, user, groups)
                        for s in b.get("subjects") or []):
                    continue
                ref = b["roleRef"]
                if ref["kind"] == "Role":
                    rules = self.roles.get((bns, ref["name"]))
                    missing = 'role.rbac.authorization.k8s.io "%s" not found' % ref["name"]
                else:
                    rules = self.cluster_roles.get(ref["name"])
                    missing = 'clusterrole.rbac.authorization.k8s.io "%s" not found' % ref[
                        "name"]
                if rules is None:
                    errors.append(missing)
                    continue
                if any(rule_allows(r, a) for r in rules):
                    return True, ""
        if not errors:
            return False, ""
        if len(errors) == 1:
            return False, "RBAC: " + errors[0]
        return False, "RBAC: [" + ", ".join(errors) + "]"


def forbidden_error(user, a: RequestAttributes, reason=""):
    """The 403 the API server's authorization filter writes (responsewriters.Forbidden)."""
    if not a.resource_request:
        msg = 'User "%s" cannot %s path "%s"' % (user, a.verb, a.path)
    else:
        res = a.resource + ("/" + a.subresource if a.subresource else "")
        if a.namespace:
            msg = 'User "%s" cannot %s resource "%s" in API group "%s" in the namespace "%s"' % (
                user, a.verb, res, a.api_group, a.namespace)
        else:
            msg = 'User "%s" cannot %s resource "%s" in API group "%s" at the cluster scope' % (
                user, a.verb, res, a.api_group)
    if reason:
        msg = "%s: %s" % (msg, reason)
    details = {}
    if a.resource_request:
        qual = a.resource + ("." + a.api_group if a.api_group else "")
        if a.name:
            message = '%s "%s" is forbidden: %s' % (qual, a.name, msg)
        else:
            message = "%s is forbidden: %s" % (qual, msg)
        if a.name:
            details["name"] = a.name
        if a.api_group:
            details["group"] = a.api_group
        if a.resource:
            details["kind"] = a.resource
    else:
        message = "forbidden: %s" % msg
    return ApiError(403, "Forbidden", message, details=details)


# --------------------------------------------------------------------------------------------
# HTTP handlers


class HandlerBase(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fakekube/1.0"
    sys_version = ""
    timeout = 300
    disable_nagle_algorithm = True

    def log_message(self, format, *args):  # noqa: A002 - signature from the base class
        LOG.debug("%s %s", self.address_string(), format % args)

    def log_request(self, code="-", size="-"):
        pass

    def log_error(self, format, *args):  # noqa: A002
        LOG.info("%s %s", self.address_string(), format % args)

    @property
    def store(self) -> Store:
        return self.server.store

    def read_body(self):
        self._body_read = True
        te = self.headers.get("Transfer-Encoding", "")
        if te.lower() == "chunked":
            chunks = []
            while True:
                line = self.rfile.readline(65537)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline(65537)
            return b"".join(chunks)
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def read_json(self):
        body = self.read_body()
        if not body:
            raise ApiError(400, "BadRequest", "request body is empty, expected JSON")
        try:
            return json.loads(body)
        except ValueError as e:
            raise ApiError(400, "BadRequest", "invalid JSON in request body: %s" % e) from None

    def send_bytes(self, code, body: bytes, ctype="application/json", headers=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Cache-Control", "no-cache, private")
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        if code != 204:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if code != 204 and self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, code, obj, headers=None):
        self.send_bytes(code, go_json(obj).encode("utf-8"), headers=headers)

    def send_api_error(self, e: ApiError):
        headers = dict(e.headers)
        if e.plain_text is not None:
            self.send_bytes(e.code, e.plain_text.encode(), "text/plain; charset=utf-8",
                            dict(headers, **{"X-Content-Type-Options": "nosniff"}))
        else:
            ra = (e.details or {}).get("retryAfterSeconds")
            if ra and "Retry-After" not in headers:
                headers["Retry-After"] = str(ra)
            self.send_json(e.code, e.status(), headers)


class TlsHandlerMixin:
    """For a handler of a TlsHttpServer: the TLS handshake in the handler's thread, and a
    connection that ends or breaks is no error (bench/ servers use it too)."""

    tcp_nodelay = False  # set TCP_NODELAY once the handshake is done

    def handle(self):
        if isinstance(self.connection, ssl.SSLSocket):
            try:
                self.connection.do_handshake()
            except (OSError, ssl.SSLError) as e:
                LOG.info("TLS handshake with %s failed: %s", self.client_address, e)
                self.close_connection = True
                return
        if self.tcp_nodelay:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            super().handle()
        except (ConnectionError, ssl.SSLError, socket.timeout, OSError) as e:
            LOG.debug("connection %s ended: %s", self.client_address, e)

    def finish(self):
        try:
            super().finish()
        except (OSError, ssl.SSLError):
            pass


class ApiHandler(TlsHandlerMixin, HandlerBase):
    """The Kubernetes API (TLS unless --no-tls)."""

    def handle(self):
        store = self.store
        if time.monotonic() < store.refuse_until:
            LOG.info("refusing connection from %s (fault)", self.client_address)
            self._abrupt_close()
            self.close_connection = True
            return
        super().handle()

    def _peer_gone(self):
        """True when the client closed or reset its side (an idle watch never reads)."""
        try:
            p = select.poll()
            p.register(self.connection.fileno(),
                       select.POLLRDHUP | select.POLLHUP | select.POLLERR)
            return any(ev & (select.POLLRDHUP | select.POLLHUP | select.POLLERR)
                       for _, ev in p.poll(0))
        except (OSError, ValueError):
            return True

    def _abrupt_close(self):
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       b"\x01\x00\x00\x00\x00\x00\x00\x00")
        except OSError:
            pass
        try:
            socket.socket.shutdown(self.connection, socket.SHUT_RDWR)
        except OSError:
            pass

    def send_response(self, code, message=None):
        super().send_response(code, message)
        self.send_header("Audit-Id", str(uuid.uuid4()))
        if getattr(self, "_recorded", True) is False:
            self._recorded = True
            q = {}
            for k, v in urllib.parse.parse_qsl(self._query, keep_blank_values=True):
                if k in q:
                    q[k] = q[k] + [v] if isinstance(q[k], list) else [q[k], v]
                else:
                    q[k] = v
            self.store.record_request({
                "time": time.time(), "method": self.command, "path": self._path,
                "query": q, "status": code, "user_agent": self.headers.get("User-Agent", ""),
                "accept": self.headers.get("Accept", ""),
                "authorization": bool(self.headers.get("Authorization")),
                "authz": getattr(self, "_authz", None),
            })

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def do_PATCH(self):
        self.dispatch()

    def do_HEAD(self):
        self.dispatch()

    def dispatch(self):
        parsed = urllib.parse.urlsplit(self.path)
        self._path = parsed.path
        self._query = parsed.query
        self._recorded = False
        self._authz = None
        self._body_read = False
        try:
            self.q = dict(urllib.parse.parse_qsl(parsed.query, keep_blank_values=True))
            self.check_auth()
            self.check_http_error_faults()
            self.check_slow_faults()
            self.check_rbac(parsed.path, parsed.query)
            self.route(parsed.path)
        except ApiError as e:
            LOG.info("%s %s -> %d %s", self.command, self.path, e.code, e.message[:200])
            try:
                self._discard_body()
                self.send_api_error(e)
            except (OSError, ssl.SSLError):
                self.close_connection = True
        except AbortConnection:
            self.close_connection = True
        except (ConnectionError, ssl.SSLError, socket.timeout, OSError) as e:
            LOG.info("%s %s: client went away: %s", self.command, self.path, e)
            self.close_connection = True
        except Exception as e:  # noqa: BLE001 - a handler bug must not kill the server
            LOG.error("%s %s: internal error: %s\n%s", self.command, self.path, e,
                      traceback.format_exc())
            try:
                self.send_api_error(ApiError(500, "InternalError",
                                             "Internal error occurred: %s" % e,
                                             details={"causes": [{"message": str(e)}]}))
            except Exception:  # noqa: BLE001
                pass
            self.close_connection = True

    def _discard_body(self):
        """An error answered before the handler read the request body (401, 403, faults):
        read and drop the body, as Go's server does for small bodies, so the next request on
        this keep-alive connection is not parsed from its bytes; close after a large one."""
        if self._body_read:
            return
        chunked = self.headers.get("Transfer-Encoding", "").lower() == "chunked"
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            n = -1
        if n > 256 * 1024 or n < 0:
            self.close_connection = True
        elif n > 0 or chunked:
            self.read_body()

    # ---- auth and faults ----

    def check_auth(self):
        auth = self.headers.get("Authorization", "")
        token = self.store.token
        ok = False
        if auth[:7].lower() == "bearer ":
            given = auth[7:].strip()
            ok = bool(given) and hmac.compare_digest(given.encode(), token.encode())
        if not ok and self.store.client_ca and auth == "":
            # x509 authentication: the handshake verified the certificate against
            # --client-ca; a request without one (and without a token) is 401
            try:
                ok = bool(self.connection.getpeercert())
            except (AttributeError, ValueError):
                ok = False
        if not ok:
            raise ApiError(401, "Unauthorized", "Unauthorized")

    def check_rbac(self, path, query):
        """The authorization filter: with --rbac, the token's user needs a rule for this
        request; 403 Forbidden as the real API server writes it otherwise.  The request's
        attributes (verb, group, resource, ...) go to the request log either way."""
        store = self.store
        rbac = store.rbac
        user = store.config.user
        a = request_attributes(self.command, path,
                               urllib.parse.parse_qsl(query, keep_blank_values=True))
        allowed, reason = rbac.authorize(user, a) if rbac is not None else (True, "")
        self._authz = dict(a.as_dict(), allowed=allowed)
        if store.audit_path:
            line = json.dumps(dict(self._authz, user=user, time=time.time(),
                                   user_agent=self.headers.get("User-Agent", "")))
            with store.audit_lock, open(store.audit_path, "a", encoding="utf-8") as f:
                f.write(line + "\n")
        if not allowed:
            raise forbidden_error(user, a, reason)

    def check_slow_faults(self):
        """slow_requests: the next N matching requests are answered `seconds` late (an API
        server under load); other requests are not held up."""
        store = self.store
        with store.lock:
            for f in store.slow:
                if f["count"] > 0 and f["path_re"].search(self._path):
                    f["count"] -= 1
                    delay = f["seconds"]
                    break
            else:
                return
            store.slow = [f for f in store.slow if f["count"] > 0]
        time.sleep(delay)

    def check_http_error_faults(self):
        store = self.store
        with store.lock:
            for f in store.http_errors:
                if f["count"] <= 0:
                    continue
                if f["path_re"] and not f["path_re"].search(self._path):
                    continue
                if f["query_re"] and not f["query_re"].search(self._query):
                    continue
                if f["method"] and f["method"] != self.command:
                    continue
                f["count"] -= 1
                fault = f
                break
            else:
                return
            store.http_errors = [f for f in store.http_errors if f["count"] > 0]
        st = fault["status"]
        headers = {}
        if fault.get("retry_after") is not None:
            headers["Retry-After"] = str(fault["retry_after"])
        if fault.get("location"):
            headers["Location"] = fault["location"]
        if st == 429:
            headers.setdefault("Retry-After", "1")
            headers["X-Kubernetes-PF-FlowSchema-UID"] = "e4f6a1d2-0000-4000-8000-fakekube0001"
            headers["X-Kubernetes-PF-PriorityLevel-UID"] = "e4f6a1d2-0000-4000-8000-fakekube0002"
            plain = fault.get("plain_text", True)
            if plain:
                raise ApiError(429, "", "", headers=headers,
                               plain_text="Too many requests, please try again later.\n")
            raise ApiError(429, "TooManyRequests",
                           "Too many requests, please try again later.",
                           details={"retryAfterSeconds": int(headers["Retry-After"])},
                           headers=headers)
        msg = fault.get("message")
        if fault.get("plain_text"):
            raise ApiError(st, "", "", headers=headers,
                           plain_text=(msg or "injected fault") + "\n")
        if st == 500:
            err = msg or "injected fault"
            raise ApiError(500, "InternalError", "Internal error occurred: %s" % err,
                           details={"causes": [{"message": err}]}, headers=headers)
        if st == 503:
            raise ApiError(503, "ServiceUnavailable", msg or "the server is currently unable "
                           "to handle the request", headers=headers)
        if st == 504:
            raise ApiError(504, "Timeout", msg or "Timeout: request did not complete within "
                           "the allotted timeout", headers=headers)
        raise ApiError(st, fault.get("reason") or "InternalError", msg or "injected fault",
                       headers=headers)

    def check_forbidden(self, verb, resource, namespace, name=None, subresource=None):
        store = self.store
        res_full = resource + ("/" + subresource if subresource else "")
        with store.lock:
            hit = any(f["verb"] == verb and f["resource"] == res_full and
                      (f.get("namespace") is None or f.get("namespace") == namespace)
                      for f in store.forbids)
        if not hit:
            return
        group = RESOURCES[resource]["group"]
        qual = resource + ("." + group if group else "")
        user = store.config.user
        if namespace:
            why = 'User "%s" cannot %s resource "%s" in API group "%s" in the namespace "%s"' % (
                user, verb, res_full, group, namespace)
        else:
            why = 'User "%s" cannot %s resource "%s" in API group "%s" at the cluster scope' % (
                user, verb, res_full, group)
        details = {"kind": resource}
        if group:
            details = {"group": group, "kind": resource}
        if name:
            msg = '%s "%s" is forbidden: %s' % (qual, name, why)
            details = dict(details, name=name)
        else:
            msg = "%s is forbidden: %s" % (qual, why)
        raise ApiError(403, "Forbidden", msg, details=details)

    # ---- routing ----

    def route(self, path):
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")] if path.strip(
            "/") else []
        m = self.command
        if m == "HEAD":
            m = "GET"
        if parts == ["version"]:
            return self.ensure_get(m) or self.send_json(200, SERVER_VERSION)
        if parts == ["api"]:
            return self.ensure_get(m) or self.send_json(200, {
                "kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                "serverAddress": "127.0.0.1:%d"
                                                % self.server.server_address[1]}]})
        if parts == ["apis"]:
            return self.ensure_get(m) or self.send_json(200, {
                "kind": "APIGroupList", "apiVersion": "v1",
                "groups": [self.group_info(g) for g in API_GROUPS]})
        if parts == ["apis", EVENTS_GROUP]:
            return self.ensure_get(m) or self.send_json(
                200, dict({"kind": "APIGroup", "apiVersion": "v1"},
                          **self.group_info(EVENTS_GROUP)))
        if parts == ["apis", EVENTS_GROUP, "v1"]:
            return self.ensure_get(m) or self.send_json(200, {
                "kind": "APIResourceList", "apiVersion": "v1",
                "groupVersion": EVENTS_GROUP + "/v1",
                "resources": [{"name": "events", "singularName": "event", "namespaced": True,
                               "kind": "Event", "verbs": EVENTS_V1_VERBS,
                               "shortNames": ["ev"]}]})
        if parts[:3] == ["apis", EVENTS_GROUP, "v1"]:
            return self.route_events_v1(m, parts[3:])
        if len(parts) == 2 and parts[0] == "apis" and parts[1] in API_GROUPS:
            return self.ensure_get(m) or self.send_json(
                200, dict({"kind": "APIGroup", "apiVersion": "v1"},
                          **self.group_info(parts[1])))
        if parts == ["api", "v1"]:
            return self.ensure_get(m) or self.send_json(200, self.resource_list("v1"))
        if len(parts) == 3 and parts[0] == "apis" and parts[1] in API_GROUPS and \
                parts[2] == "v1":
            return self.ensure_get(m) or self.send_json(
                200, self.resource_list(parts[1] + "/v1"))
        if parts[:2] == ["api", "v1"]:
            rest, group = parts[2:], ""
        elif len(parts) >= 3 and parts[0] == "apis" and parts[1] in API_GROUPS and \
                parts[1] != EVENTS_GROUP and parts[2] == "v1":
            rest, group = parts[3:], parts[1]
        else:
            raise path_not_found()
        ns = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            ns, rest = rest[1], rest[2:]
        elif len(rest) == 2 and rest[0] == "namespaces":
            return self.serve_object(m, "namespaces", None, rest[1])
        if not rest or rest[0] not in RESOURCES or RESOURCES[rest[0]]["group"] != group:
            raise path_not_found()
        resource = rest[0]
        info = RESOURCES[resource]
        if ns is not None and not info["namespaced"]:
            raise path_not_found()
        if len(rest) == 1:
            if m == "GET":
                return self.serve_collection(resource, ns)
            if m == "POST" and resource == "leases" and ns is not None:
                return self.create_lease(ns)
            raise self.method_not_allowed()
        if info["namespaced"] and ns is None:
            raise path_not_found()
        if len(rest) == 2:
            return self.serve_object(m, resource, ns, rest[1])
        if len(rest) == 3 and resource == "pods" and rest[2] == "log":
            if m != "GET":
                raise self.method_not_allowed()
            return self.serve_log(ns, rest[1])
        raise path_not_found()

    # ---- events.k8s.io/v1: the same objects as core/v1 events, in the new shape ----

    def route_events_v1(self, m, rest):
        if rest == ["events"]:
            if m != "GET":
                raise self.method_not_allowed()
            return self.list_events_v1(None)
        if len(rest) < 3 or rest[0] != "namespaces" or rest[2] != "events" or len(rest) > 4:
            raise path_not_found()
        ns = rest[1]
        if len(rest) == 3:
            if m == "POST":
                return self.create_event_v1(ns)
            if m == "GET":
                return self.list_events_v1(ns)
            raise self.method_not_allowed()
        if m != "GET":
            raise self.method_not_allowed()
        self.check_forbidden("get", "events", ns, rest[3])
        obj = self.store.get("events", "%s/%s" % (ns, rest[3]))
        if obj is None:
            raise ApiError(404, "NotFound", 'events.events.k8s.io "%s" not found' % rest[3],
                           details={"name": rest[3], "group": EVENTS_GROUP, "kind": "events"})
        return self.send_json(200, event_to_v1(obj))

    def list_events_v1(self, ns):
        """LIST (no watch, no selectors other than the namespace: what tests read)."""
        if parse_bool("watch", self.q.get("watch")):
            raise self.method_not_allowed()
        for k in ("fieldSelector", "labelSelector", "continue"):
            if self.q.get(k):
                raise ApiError(400, "BadRequest", "fakekube: %s is not implemented for "
                               "events.k8s.io/v1 LIST" % k)
        self.check_forbidden("list", "events", ns)
        store = self.store
        with store.lock:
            rv = store.rv
            objs = [o for k, o in sorted(store.objects["events"].items())
                    if ns is None or k.startswith(ns + "/")]
            items = [event_to_v1(o, listed=True) for o in objs]
        return self.send_json(200, {"kind": "EventList", "apiVersion": EVENTS_GROUP + "/v1",
                                    "metadata": {"resourceVersion": str(rv)}, "items": items})

    def create_event_v1(self, ns):
        self.check_forbidden("create", "events", ns)
        obj = self.read_json()
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata", {}), dict):
            raise ApiError(400, "BadRequest", "request body must be a JSON object with "
                           "object metadata")
        if obj.get("kind") not in (None, "Event") or obj.get("apiVersion") not in (
                None, EVENTS_GROUP + "/v1"):
            raise ApiError(400, "BadRequest", "the body of the request was in an unknown "
                           "format - accepted media types include: application/json")
        md = dict(obj.get("metadata") or {})
        if md.get("namespace") and md["namespace"] != ns:
            raise ApiError(400, "BadRequest", "the namespace of the provided object does not "
                           "match the namespace sent on the request")
        if not md.get("name") and md.get("generateName"):
            md["name"] = md["generateName"] + "".join(
                random.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
        name = md.get("name") or ""
        errs = validate_event_v1(obj, ns, name)
        if errs:
            raise invalid_error("Event", EVENTS_GROUP, name, errs)
        store = self.store
        with store.cond:
            if ns not in store.objects["namespaces"]:
                raise ApiError(404, "NotFound", 'namespaces "%s" not found' % ns,
                               details={"name": ns, "kind": "namespaces"})
            if "%s/%s" % (ns, name) in store.objects["events"]:
                raise ApiError(409, "AlreadyExists",
                               'events.events.k8s.io "%s" already exists' % name,
                               details={"name": name, "group": EVENTS_GROUP, "kind": "events"})
            core = {"metadata": {k: copy.deepcopy(v) for k, v in md.items()
                                 if k in ("name", "labels", "annotations")},
                    "involvedObject": copy.deepcopy(obj.get("regarding") or {}),
                    "reason": obj.get("reason", ""), "message": obj.get("note", ""),
                    "source": {}, "type": obj.get("type", ""),
                    "eventTime": obj.get("eventTime"),
                    "reportingComponent": obj.get("reportingController", ""),
                    "reportingInstance": obj.get("reportingInstance", "")}
            core["metadata"]["namespace"] = ns
            for k in ("action", "related", "series"):
                if obj.get(k) is not None:
                    core[k] = copy.deepcopy(obj[k])
            _, stored = store.put("events", default_event(core))
        return self.send_json(201, event_to_v1(stored))

    def ensure_get(self, m):
        if m != "GET":
            raise self.method_not_allowed()
        return None

    def method_not_allowed(self):
        return ApiError(405, "MethodNotAllowed",
                        "the server does not allow this method on the requested resource",
                        details={})

    def group_info(self, group):
        gv = {"groupVersion": group + "/v1", "version": "v1"}
        return {"name": group, "versions": [gv], "preferredVersion": gv}

    def resource_list(self, gv):
        res = []
        for name, info in RESOURCES.items():
            if info["apiVersion"] != gv:
                continue
            r = {"name": name, "singularName": info["singular"],
                 "namespaced": info["namespaced"], "kind": info["kind"],
                 "verbs": VERBS[name]}
            if info["short"]:
                r["shortNames"] = info["short"]
            if name == "pods" or info.get("categories"):
                r["categories"] = info.get("categories") or ["all"]
            res.append(r)
            if name == "pods":
                res.append({"name": "pods/log", "singularName": "", "namespaced": True,
                            "kind": "Pod", "verbs": ["get"]})
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                "resources": res}

    # ---- single objects ----

    def serve_object(self, m, resource, ns, name):
        if m == "GET":
            if parse_bool("watch", self.q.get("watch")):
                self.check_forbidden("watch", resource, ns, None)
                return self.serve_watch(resource, ns, name)
            self.check_forbidden("get", resource, ns, name)
            key = "%s/%s" % (ns, name) if RESOURCES[resource]["namespaced"] else name
            obj = self.store.get(resource, key)
            if obj is None:
                raise not_found(resource, name)
            target = self.meta_target()
            if target is None:
                return self.send_json(200, self.full(resource, obj))
            if target[0] != "PartialObjectMetadata":
                raise not_acceptable("you requested PartialObjectMetadataList, but the "
                                     "requested object is not a list (*%s)"
                                     % INTERNAL_TYPES[resource])
            return self.send_json(200, partial_metadata(obj, target[1]))
        if m == "PUT" and resource == "leases":
            return self.update_lease(ns, name)
        raise self.method_not_allowed()

    def meta_target(self):
        """The metadata-only conversion the Accept header asks for: (kind, apiVersion) with
        kind PartialObjectMetadata or PartialObjectMetadataList, or None.  As the API
        server's negotiation, the first acceptable clause wins; this fake serves JSON only,
        so clauses of other media types (protobuf, CBOR, YAML) are skipped, and a JSON clause
        asking for a Table falls back to plain JSON (kubectl accepts that)."""
        accept = self.headers.get("Accept", "") or ""
        for clause in accept.split(","):
            fields = [f.strip() for f in clause.split(";")]
            if fields[0] not in ("application/json", "*/*", "application/*"):
                continue
            params = {}
            for f in fields[1:]:
                if "=" in f:
                    k, v = f.split("=", 1)
                    params[k.strip()] = v.strip().strip('"')
            kind = params.get("as")
            if kind in ("PartialObjectMetadata", "PartialObjectMetadataList") and params.get(
                    "g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1"):
                return kind, "meta.k8s.io/" + params["v"]
            if kind is None or kind == "Table":
                return None
            # any other conversion is not acceptable: the negotiation tries the next clause
        return None

    @staticmethod
    def full(resource, obj):
        info = RESOURCES[resource]
        out = {"kind": info["kind"], "apiVersion": info["apiVersion"]}
        out.update(obj)
        return out

    # ---- leases ----

    def _lease_body(self, ns, name=None):
        obj = self.read_json()
        if not isinstance(obj, dict):
            raise ApiError(400, "BadRequest", "request body must be a JSON object")
        if obj.get("kind") not in (None, "Lease") or obj.get("apiVersion") not in (
                None, "coordination.k8s.io/v1"):
            raise ApiError(400, "BadRequest", "the body of the request was in an unknown "
                           "format - accepted media types include: application/json")
        md = obj.get("metadata") or {}
        if not isinstance(md, dict) or not isinstance(obj.get("spec", {}), dict):
            raise ApiError(400, "BadRequest", "metadata and spec must be JSON objects")
        if md.get("namespace") and md["namespace"] != ns:
            raise ApiError(400, "BadRequest", "the namespace of the provided object does not "
                           "match the namespace sent on the request")
        if name is not None and md.get("name") and md["name"] != name:
            raise ApiError(400, "BadRequest", "the name of the object (%s) does not match the "
                           "name on the URL (%s)" % (md["name"], name))
        lname = name or md.get("name")
        if not lname:
            raise ApiError(422, "Invalid", 'Lease.coordination.k8s.io "" is invalid: '
                           "metadata.name: Required value: name or generateName is required",
                           details={"group": "coordination.k8s.io", "kind": "Lease",
                                    "causes": [{"reason": "FieldValueRequired",
                                                "message": "Required value: name or "
                                                           "generateName is required",
                                                "field": "metadata.name"}]})
        ldur = (obj.get("spec") or {}).get("leaseDurationSeconds")
        if ldur is not None and (not isinstance(ldur, int) or ldur <= 0):
            raise ApiError(422, "Invalid", 'Lease.coordination.k8s.io "%s" is invalid: '
                           "spec.leaseDurationSeconds: Invalid value: %s: must be greater than 0"
                           % (lname, json.dumps(ldur)),
                           details={"name": lname, "group": "coordination.k8s.io",
                                    "kind": "Lease",
                                    "causes": [{"reason": "FieldValueInvalid",
                                                "message": "Invalid value: %s: must be greater "
                                                           "than 0" % json.dumps(ldur),
                                                "field": "spec.leaseDurationSeconds"}]})
        return obj, lname, md

    def _new_lease(self, ns, lname, obj, md):
        lease = {"metadata": {}, "spec": copy.deepcopy(obj.get("spec") or {})}
        newmd = {k: copy.deepcopy(v) for k, v in md.items()
                 if k in ("labels", "annotations", "ownerReferences")}
        lease["metadata"] = dict({"name": lname, "namespace": ns, "uid": str(uuid.uuid4()),
                                  "resourceVersion": "", "creationTimestamp": now_time()},
                                 **newmd)
        return lease

    def create_lease(self, ns):
        self.check_forbidden("create", "leases", ns)
        obj, lname, md = self._lease_body(ns)
        store = self.store
        with store.cond:
            key = "%s/%s" % (ns, lname)
            if key in store.objects["leases"]:
                raise ApiError(409, "AlreadyExists",
                               'leases.coordination.k8s.io "%s" already exists' % lname,
                               details={"name": lname, "group": "coordination.k8s.io",
                                        "kind": "leases"})
            _, stored = store.put("leases", self._new_lease(ns, lname, obj, md))
        return self.send_json(201, self.full("leases", stored))

    def update_lease(self, ns, name):
        self.check_forbidden("update", "leases", ns, name)
        obj, lname, md = self._lease_body(ns, name)
        store = self.store
        rv = md.get("resourceVersion") or ""
        with store.cond:
            key = "%s/%s" % (ns, name)
            cur = store.objects["leases"].get(key)
            if cur is None:
                if rv:
                    raise not_found("leases", name)
                _, stored = store.put("leases", self._new_lease(ns, name, obj, md))
                return self.send_json(201, self.full("leases", stored))
            if not rv:
                raise ApiError(422, "Invalid", 'Lease.coordination.k8s.io "%s" is invalid: '
                               "metadata.resourceVersion: Invalid value: 0x0: must be "
                               "specified for an update" % name,
                               details={"name": name, "group": "coordination.k8s.io",
                                        "kind": "Lease",
                                        "causes": [{"reason": "FieldValueInvalid",
                                                    "message": "Invalid value: 0x0: must be "
                                                               "specified for an update",
                                                    "field": "metadata.resourceVersion"}]})
            if rv != cur["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict",
                               'Operation cannot be fulfilled on leases.coordination.k8s.io '
                               '"%s": the object has been modified; please apply your changes '
                               'to the latest version and try again' % name,
                               details={"name": name, "group": "coordination.k8s.io",
                                        "kind": "leases"})
            new = {"metadata": dict(cur["metadata"]),
                   "spec": copy.deepcopy(obj.get("spec") or {})}
            for k in ("labels", "annotations", "ownerReferences"):
                if k in md:
                    new["metadata"][k] = copy.deepcopy(md[k])
                else:
                    new["metadata"].pop(k, None)
            _, stored = store.put("leases", new)
        return self.send_json(200, self.full("leases", stored))

    # ---- collections: list and watch ----

    def serve_collection(self, resource, ns):
        watch = parse_bool("watch", self.q.get("watch"))
        self.check_forbidden("watch" if watch else "list", resource, ns)
        if watch:
            return self.serve_watch(resource, ns, None)
        return self.serve_list(resource, ns)

    def validate_list_options(self, watch):
        q = self.q
        rv = q.get("resourceVersion", "")
        rvm = q.get("resourceVersionMatch", "")
        cont = q.get("continue", "")
        sie = parse_bool("sendInitialEvents", q.get("sendInitialEvents"))
        errs = []
        if watch:
            if sie is not None:
                if rvm != "NotOlderThan":
                    errs.append(("resourceVersionMatch", "Forbidden",
                                 "sendInitialEvents requires setting resourceVersionMatch to "
                                 "NotOlderThan", None))
                if not self.store.config.streaming_list:
                    errs.append(("sendInitialEvents", "Forbidden",
                                 "sendInitialEvents is forbidden for watch unless the WatchList "
                                 "feature gate is enabled", None))
            if rvm:
                if sie is None:
                    errs.append(("resourceVersionMatch", "Forbidden",
                                 "resourceVersionMatch is forbidden for watch unless "
                                 "sendInitialEvents is provided", None))
                if rvm != "NotOlderThan":
                    errs.append(("resourceVersionMatch", "NotSupported", '"NotOlderThan"', rvm))
                if cont:
                    errs.append(("resourceVersionMatch", "Forbidden",
                                 "resourceVersionMatch is forbidden when continue is provided",
                                 None))
        else:
            if rvm:
                if not rv:
                    errs.append(("resourceVersionMatch", "Forbidden",
                                 "resourceVersionMatch is forbidden unless resourceVersion is "
                                 "provided", None))
                if cont:
                    errs.append(("resourceVersionMatch", "Forbidden",
                                 "resourceVersionMatch is forbidden when continue is provided",
                                 None))
                if rvm not in ("Exact", "NotOlderThan"):
                    errs.append(("resourceVersionMatch", "NotSupported",
                                 '"Exact", "NotOlderThan", ""', rvm))
                if rvm == "Exact" and rv == "0":
                    errs.append(("resourceVersionMatch", "Forbidden",
                                 'resourceVersionMatch "exact" is forbidden for resourceVersion '
                                 '"0"', None))
            if sie is not None:
                errs.append(("sendInitialEvents", "Forbidden",
                             "sendInitialEvents is forbidden for list", None))
        if errs:
            raise invalid_list_options(errs)
        return rv, rvm, cont, sie

    def parse_rv(self, rv):
        try:
            n = int(rv, 10)
            if n < 0:
                raise ValueError
            return n
        except ValueError:
            raise ApiError(400, "BadRequest", 'invalid resource version: "%s"' % rv) from None

    def too_large(self, n):
        return ApiError(504, "Timeout",
                        "Timeout: Too large resource version: %d, current: %d"
                        % (n, self.store.rv),
                        details={"causes": [{"reason": "ResourceVersionTooLarge",
                                             "message": "Too large resource version"}],
                                 "retryAfterSeconds": 1})

    def serve_list(self, resource, ns):
        store = self.store
        info = RESOURCES[resource]
        rv, rvm, cont, _ = self.validate_list_options(False)
        lsel = parse_label_selector(self.q.get("labelSelector"))
        fsel = parse_field_selector(resource, self.q.get("fieldSelector"))
        limit = parse_int("limit", self.q.get("limit"))
        if limit is not None and limit <= 0:
            limit = None
        if limit is not None and store.config.max_page_size > 0:
            limit = min(limit, store.config.max_page_size)
        start = ""
        with store.lock:
            if cont:
                if rv and rv != "0":
                    raise ApiError(400, "BadRequest",
                                   "specifying resource version is not allowed when using "
                                   "continue")
                trv, start = decode_continue(cont)
                if trv == -1:
                    list_rv = store.rv
                elif trv < store.compacted_rv:
                    raise ApiError(410, "Expired", EXPIRED_CONTINUE_LONG,
                                   metadata={"continue": encode_continue(-1, start)})
                else:
                    if trv > store.rv:
                        raise ApiError(400, "BadRequest", "continue key is not valid: resource "
                                       "version %d is in the future" % trv)
                    list_rv = trv
            elif rv == "":
                list_rv = store.rv
            elif rv == "0":
                list_rv = store.rv
                if store.config.rv0_ignores_limit:
                    limit = None
            else:
                n = self.parse_rv(rv)
                if n > store.rv:
                    raise self.too_large(n)
                if rvm == "Exact" or (rvm == "" and limit is not None):
                    if n < store.compacted_rv:
                        raise ApiError(410, "Expired",
                                       "The resourceVersion for the provided list is too old.")
                    list_rv = n
                else:
                    list_rv = store.rv
            keys, state = store.snapshot(resource, list_rv)
        prefix = ns + "/" if (ns is not None and info["namespaced"]) else ""
        lo = max(start, prefix)
        i = bisect.bisect_left(keys, lo)
        items = []
        nkeys = len(keys)
        more = False
        last_key = None
        while i < nkeys:
            k = keys[i]
            if prefix and not k.startswith(prefix):
                break
            if limit is not None and len(items) >= limit:
                more = True
                break
            obj = state[k]
            i += 1
            if (lsel or fsel) and not (label_match(lsel, obj["metadata"].get("labels"))
                                       and field_match(fsel, obj)):
                continue
            items.append(obj)
            last_key = k
        md = {"resourceVersion": str(list_rv)}
        if more and last_key is not None:
            md["continue"] = encode_continue(list_rv, last_key + "\x00")
            if not lsel and not fsel:
                if prefix:
                    end = bisect.bisect_left(keys, prefix[:-1] + "0")  # '/'+1 == '0'
                else:
                    end = nkeys
                md["remainingItemCount"] = end - i
        target = self.meta_target()
        if target is None:
            body = {"kind": info["kind"] + "List", "apiVersion": info["apiVersion"],
                    "metadata": md, "items": items}
        elif target[0] == "PartialObjectMetadata":
            raise not_acceptable("you requested PartialObjectMetadata, but the requested "
                                 "object is a list (*%sList)" % INTERNAL_TYPES[resource])
        else:
            body = {"kind": "PartialObjectMetadataList", "apiVersion": target[1],
                    "metadata": md, "items": [partial_metadata(o, target[1]) for o in items]}
        self.send_json(200, body)

    # ---- watch ----

    def serve_watch(self, resource, ns, name):
        store = self.store
        cfg = store.config
        self._watch_target = self.meta_target()
        rv, rvm, _, sie = self.validate_list_options(True)
        lsel = parse_label_selector(self.q.get("labelSelector"))
        fsel = parse_field_selector(resource, self.q.get("fieldSelector"))
        bookmarks = bool(parse_bool("allowWatchBookmarks", self.q.get("allowWatchBookmarks")))
        tmo = parse_int("timeoutSeconds", self.q.get("timeoutSeconds"))
        if tmo is None or tmo <= 0:
            tmo = cfg.default_watch_timeout
        if rv not in ("", "0"):
            n = self.parse_rv(rv)
        else:
            n = None
        initial = []
        end_marker = False
        expired = None
        w = Watcher(resource, ns if RESOURCES[resource]["namespaced"] else None, lsel, fsel,
                    name, 0)
        with store.lock:
            short = store.short_watches > 0
            if short:
                store.short_watches -= 1
            if n is not None and n > store.rv:
                raise self.too_large(n)
            if sie:
                # streaming list: NotOlderThan n (or consistent read): current state
                keys, state = store.snapshot(resource, store.rv)
                initial = [state[k] for k in keys if w.matches(state[k])]
                w.rv = store.rv
                end_marker = bookmarks
            elif sie is None and n is None:
                keys, state = store.snapshot(resource, store.rv)
                initial = [state[k] for k in keys if w.matches(state[k])]
                w.rv = store.rv
            elif n is None:
                w.rv = store.rv  # sendInitialEvents=false, no RV: from now on
            elif n < store.compacted_rv:
                expired = status_obj(410, "Expired", "too old resource version: %d (%d)"
                                     % (n, store.compacted_rv))
            else:
                w.rv = n
            if expired is None and not short:
                store.watchers.add(w)
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "no-cache, private")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if expired is not None:
                self.write_events([self.event_line("ERROR", expired)])
                self.end_chunked()
                return
            if short:
                self.end_chunked()
                return
            LOG.info("watch start %s (from rv %d, %d initial events, timeout %ss)", self.path,
                     w.rv, len(initial), tmo)
            self.watch_loop(w, resource, initial, end_marker, bookmarks, tmo)
        finally:
            with store.lock:
                store.watchers.discard(w)

    def event_line(self, etype, obj) -> bytes:
        return (go_json({"type": etype, "object": obj}) + "\n").encode("utf-8")

    def bookmark_line(self, resource, rv, end_marker=False):
        info = RESOURCES[resource]
        md = {"resourceVersion": str(rv), "creationTimestamp": None}
        if end_marker:
            md["annotations"] = {"k8s.io/initial-events-end": "true"}
        obj = {"kind": info["kind"], "apiVersion": info["apiVersion"], "metadata": md}
        obj.update(copy.deepcopy(BOOKMARK_BODY[resource]))
        return self.event_line("BOOKMARK", self.watch_object(resource, obj))

    def watch_object(self, resource, obj):
        """A watch event's object as this watch's Accept header asks for it: the full object,
        or with as=PartialObjectMetadata its metadata only (as=PartialObjectMetadataList:
        see watch_loop)."""
        target = getattr(self, "_watch_target", None)
        if target is not None and target[0] == "PartialObjectMetadata":
            return partial_metadata(obj, target[1])
        return obj if "kind" in obj else self.full(resource, obj)

    def write_chunk(self, data: bytes):
        if not data:
            return
        cs = self.store.config.chunk_size
        if cs and cs > 0:
            for i in range(0, len(data), cs):
                piece = data[i:i + cs]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        else:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def write_events(self, lines):
        for line in lines:
            self.write_chunk(line)

    def end_chunked(self):
        self.wfile.write(b"0\r\n\r\n")

    def translate(self, w: Watcher, e: HistoryEntry):
        """History entry -> (type, object) for this watcher, or None."""
        if e.etype == "ADDED":
            return ("ADDED", e.obj) if w.matches(e.obj) else None
        if e.etype == "DELETED":
            return ("DELETED", e.obj) if w.matches(e.old) else None
        old_m = e.old is not None and w.matches(e.old)
        new_m = w.matches(e.obj)
        if old_m and new_m:
            return ("MODIFIED", e.obj)
        if new_m:
            return ("ADDED", e.obj)
        if old_m:
            gone = dict(e.old)
            gone["metadata"] = dict(e.old["metadata"],
                                    resourceVersion=e.obj["metadata"]["resourceVersion"])
            return ("DELETED", gone)
        return None

    def watch_loop(self, w, resource, initial, end_marker, bookmarks, tmo):
        store = self.store
        cfg = store.config
        start = time.monotonic()
        deadline = start + tmo
        pre_bm = deadline - cfg.bookmark_before_timeout if (
            bookmarks and tmo > cfg.bookmark_before_timeout) else None
        next_bm = start + cfg.bookmark_interval if bookmarks and cfg.bookmark_interval > 0 \
            else None
        pending = [("ADDED", o) for o in initial]
        if end_marker:
            pending.append(self.bookmark_line(resource, w.rv, True))
        finish = None  # None: keep going; "error": send pending then end; "timeout": end
        while True:
            with store.cond:
                while True:
                    now = time.monotonic()
                    if w.dropped:
                        LOG.info("dropping watch %s (fault)", self.path)
                        if w.cut:
                            self.write_chunk(w.cut)
                            self.wfile.flush()
                        self._abrupt_close()
                        raise AbortConnection()
                    if store.stall_until > now:
                        # a stall holds back everything, even events already computed
                        store.cond.wait(store.stall_until - now)
                        continue
                    if w.expired is not None:
                        pending = [self.event_line("ERROR", w.expired)]
                        finish = "error"
                        break
                    if now >= deadline:
                        finish = "timeout"
                        break
                    if pending:
                        break
                    idx = bisect.bisect_right(store.history_rvs, w.rv)
                    hist = store.history
                    stop = min(len(hist), idx + 2000)
                    for j in range(idx, stop):
                        e = hist[j]
                        if e.resource == resource:
                            ev = self.translate(w, e)
                            if ev is not None:
                                pending.append(ev)  # serialized outside the lock
                        w.rv = e.rv
                    if stop == len(hist) and w.rv < store.rv:
                        w.rv = store.rv
                    if pending:
                        break
                    if next_bm is not None and now >= next_bm:
                        pending.append(self.bookmark_line(resource, w.rv))
                        next_bm = now + cfg.bookmark_interval
                        break
                    if pre_bm is not None and now >= pre_bm:
                        pending.append(self.bookmark_line(resource, w.rv))
                        pre_bm = None
                        break
                    if self._peer_gone():
                        LOG.info("watch %s: client went away", self.path)
                        self.close_connection = True
                        return
                    wake = deadline
                    if next_bm is not None:
                        wake = min(wake, next_bm)
                    if pre_bm is not None:
                        wake = min(wake, pre_bm)
                    # wake at least once a second to notice clients that hung up
                    store.cond.wait(min(1.0, max(0.001, wake - now)))
                prefixes, w.prefixes = (w.prefixes, []) if pending else ([], w.prefixes)
            if finish == "timeout":
                # server-side timeout: terminating chunk, no event
                LOG.info("watch timeout %s", self.path)
                self.end_chunked()
                return
            for p in prefixes:
                self.write_chunk(p)
            if self._watch_target is not None and \
                    self._watch_target[0] != "PartialObjectMetadata" and any(
                    not isinstance(ln, bytes) or ln.startswith(b'{"type":"BOOKMARK"')
                    for ln in pending):
                # as the API server's watch: the conversion fails, the unconverted object
                # then fails to encode with the meta.k8s.io codec, and the stream ends
                LOG.info("watch %s: unable to encode watch object *%s: you requested "
                         "PartialObjectMetadataList, but the requested object is not a list; "
                         "ending the watch", self.path, INTERNAL_TYPES[resource])
                self.end_chunked()
                return
            self.write_events(ln if isinstance(ln, bytes) else
                              self.event_line(ln[0], self.watch_object(resource, ln[1]))
                              for ln in pending)
            pending = []
            if finish == "error":
                self.end_chunked()
                return

    # ---- logs ----

    def serve_log(self, ns, name):
        self.check_forbidden("get", "pods", ns, name, subresource="log")
        q = self.q
        store = self.store
        container = q.get("container", "")
        previous = bool(parse_bool("previous", q.get("previous")))
        timestamps = bool(parse_bool("timestamps", q.get("timestamps")))
        tail = parse_int("tailLines", q.get("tailLines"))
        limit_bytes = parse_int("limitBytes", q.get("limitBytes"))
        since_s = parse_int("sinceSeconds", q.get("sinceSeconds"))
        since_t = q.get("sinceTime")
        errs = []
        if tail is not None and tail < 0:
            errs.append(("tailLines", tail, "must be greater than or equal to 0"))
        if limit_bytes is not None and limit_bytes < 1:
            errs.append(("limitBytes", limit_bytes, "must be greater than 0"))
        if since_s is not None and since_s < 1:
            errs.append(("sinceSeconds", since_s, "must be greater than 0"))
        if errs or (since_s is not None and since_t):
            causes = [{"reason": "FieldValueInvalid",
                       "message": "Invalid value: %d: %s" % (v, d), "field": f}
                      for f, v, d in errs]
            texts = ["%s: Invalid value: %d: %s" % (f, v, d) for f, v, d in errs]
            if since_s is not None and since_t:
                causes.append({"reason": "FieldValueForbidden",
                               "message": "Forbidden: at most one of sinceTime or "
                                          "sinceSeconds may be specified", "field": ""})
                texts.append("Forbidden: at most one of sinceTime or sinceSeconds may be "
                             "specified")
            agg = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
            raise ApiError(422, "Invalid", 'PodLogOptions "%s" is invalid: %s' % (name, agg),
                           details={"name": name, "kind": "PodLogOptions", "causes": causes})
        with store.lock:
            pod = store.objects["pods"].get("%s/%s" % (ns, name))
            if pod is None:
                raise not_found("pods", name)
            spec = pod.get("spec") or {}
            names = [c["name"] for c in spec.get("containers") or []]
            init_names = [c["name"] for c in spec.get("initContainers") or []]
            eph_names = [c["name"] for c in spec.get("ephemeralContainers") or []]
            if not container:
                if len(names) == 1:
                    container = names[0]
                else:
                    msg = "a container name must be specified for pod %s, choose one of: [%s]" % (
                        name, " ".join(names))
                    if init_names:
                        msg += " or one of the init containers: [%s]" % " ".join(init_names)
                    if eph_names:
                        msg += " or one of the ephemeral containers: [%s]" % " ".join(eph_names)
                    raise ApiError(400, "BadRequest", msg)
            elif container not in names + init_names + eph_names:
                raise ApiError(400, "BadRequest",
                               "container %s is not valid for pod %s" % (container, name))
            if not spec.get("nodeName"):
                # the API server has no kubelet location: 204 No Content, empty body
                self.send_bytes(204, b"", "text/plain")
                return
            st = None
            status = pod.get("status") or {}
            for key in ("containerStatuses", "initContainerStatuses",
                        "ephemeralContainerStatuses"):
                for s in status.get(key) or []:
                    if s.get("name") == container:
                        st = s
            uid = pod["metadata"].get("uid")
            logs = store.logs.get((uid, container), {})
            which = self.kubelet_pick(st, container, name, previous)
            lines = list(logs.get(which) or [])
        if since_s is not None:
            cut = time.time() - since_s
            lines = [ln for ln in lines if ln[0] >= cut]
        elif since_t:
            try:
                cut = datetime.strptime(since_t.replace("Z", "+0000"),
                                        "%Y-%m-%dT%H:%M:%S%z").timestamp()
            except ValueError:
                raise ApiError(400, "BadRequest", "invalid sinceTime %r" % since_t) from None
            lines = [ln for ln in lines if ln[0] >= cut]
        if tail is not None:
            lines = lines[len(lines) - tail:] if tail < len(lines) else lines
            if tail == 0:
                lines = []
        if timestamps:
            body = b"".join(nano_stamp(t).encode() + b" " + ln for t, ln in lines)
        else:
            body = b"".join(ln for _, ln in lines)
        if limit_bytes is not None:
            # as the kubelet's LimitWriter: from the start of the tailLines window, time stamps
            # included (one long early line hides the later ones)
            body = body[:limit_bytes]
        self.send_bytes(200, body, "text/plain")

    @staticmethod
    def kubelet_pick(st, container, pod, previous):
        """The kubelet's validateContainerLogStatus: which instance's log, or a 400."""
        if st is None:
            raise ApiError(400, "BadRequest", 'container "%s" in pod "%s" is waiting to start: '
                           "ContainerCreating" % (container, pod))
        state = st.get("state") or {}
        last = (st.get("lastState") or {}).get("terminated")
        if previous:
            if not last or not last.get("containerID"):
                raise ApiError(400, "BadRequest", 'previous terminated container "%s" in pod '
                               '"%s" not found' % (container, pod))
            return "previous"
        if state.get("running"):
            return "current"
        if state.get("terminated"):
            if not state["terminated"].get("containerID"):
                raise ApiError(400, "BadRequest", 'container "%s" in pod "%s" is terminated'
                               % (container, pod))
            return "current"
        if last and last.get("containerID"):
            return "previous"
        waiting = state.get("waiting") or {}
        reason = waiting.get("reason") or "ContainerCreating"
        if reason in ("ErrImagePull", "ImagePullBackOff"):
            raise ApiError(400, "BadRequest", 'container "%s" in pod "%s" is waiting to start: '
                           "image can't be pulled" % (container, pod))
        raise ApiError(400, "BadRequest", 'container "%s" in pod "%s" is waiting to start: %s'
                       % (container, pod, reason))


# --------------------------------------------------------------------------------------------
# admin API


def summary(obj):
    md = obj["metadata"]
    return {"namespace": md.get("namespace"), "name": md.get("name"), "uid": md.get("uid"),
            "resourceVersion": md.get("resourceVersion")}


class AdminError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


# POST /admin/RESOURCE/NS/NAME/ACTION -> the AdminHandler method that does what the
# resource's controller would
CONTROLLER_ACTIONS = {
    ("deployments", "create"): "deployment_create",
    ("deployments", "rollout"): "deployment_rollout",
    ("statefulsets", "create"): "statefulset_create",
    ("statefulsets", "rollout"): "statefulset_rollout",
    ("daemonsets", "create"): "daemonset_create",
    ("daemonsets", "rollout"): "daemonset_rollout",
    ("jobs", "create"): "job_create",
    ("cronjobs", "create"): "cronjob_create",
    ("cronjobs", "run"): "cronjob_run",
}


class AdminHandler(HandlerBase):
    timeout = 120

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def dispatch(self):
        parsed = urllib.parse.urlsplit(self.path)
        try:
            parts = [urllib.parse.unquote(p) for p in parsed.path.strip("/").split("/")]
            if not parts or parts[0] != "admin":
                raise AdminError(404, "unknown admin path %s" % parsed.path)
            code, out = self.route(parts[1:])
            self.send_json(code, out)
        except AdminError as e:
            LOG.info("admin %s %s -> %d %s", self.command, self.path, e.code, e.message)
            self.send_json(e.code, {"error": e.message})
        except ApiError as e:
            LOG.info("admin %s %s -> %d %s", self.command, self.path, e.code, e.message)
            self.send_json(e.code, {"error": e.message})
        except (ConnectionError, BrokenPipeError, socket.timeout) as e:
            LOG.info("admin client went away: %s", e)
            self.close_connection = True
        except Exception as e:  # noqa: BLE001
            LOG.error("admin %s %s failed: %s\n%s", self.command, self.path, e,
                      traceback.format_exc())
            try:
                self.send_json(500, {"error": "internal error: %s" % e})
            except Exception:  # noqa: BLE001
                pass
            self.close_connection = True

    def body(self):
        raw = self.read_body()
        if not raw:
            return {}
        try:
            return json.loads(raw)
        except ValueError as e:
            raise AdminError(400, "invalid JSON body: %s" % e) from None

    def route(self, p):
        m = self.command
        store = self.store
        if p == ["state"] and m == "GET":
            with store.lock:
                return 200, {"resource_version": store.rv, "compacted_rv": store.compacted_rv,
                             "pods": len(store.objects["pods"]),
                             "events": len(store.objects["events"]),
                             "nodes": len(store.objects["nodes"]),
                             "leases": len(store.objects["leases"]),
                             "resourceclaims": len(store.objects["resourceclaims"]),
                             "namespaces": len(store.objects["namespaces"]),
                             "objects": {r: len(o) for r, o in sorted(store.objects.items())},
                             "open_watches": len(store.watchers),
                             "history": len(store.history)}
        if p == ["requests"]:
            if m == "GET":
                with store.requests_lock:
                    return 200, list(store.requests)
            if m == "DELETE":
                with store.requests_lock:
                    store.requests = []
                return 200, {}
        if p == ["compact"] and m == "POST":
            b = self.body()
            return 200, store.compact(b.get("rv"), b.get("close_watches", True))
        if p == ["faults"] and m == "POST":
            return 200, self.fault(self.body())
        if p == ["config"]:
            if m == "POST":
                return 200, self.set_config(self.body())
            if m == "GET":
                return 200, store.config.as_dict()
        if p == ["logs"] and m == "POST":
            return 200, self.set_logs(self.body())
        if p == ["rbac"]:
            if m == "GET":
                rbac = store.rbac
                return 200, {"enabled": rbac is not None, "user": store.config.user,
                             "objects": rbac.objects if rbac is not None else []}
            if m == "PUT":
                b = self.body()
                objs = b.get("objects") if isinstance(b, dict) else None
                if objs is not None and not isinstance(objs, list):
                    raise AdminError(400, "rbac body: {\"objects\": [...] or null}")
                try:
                    store.rbac = Rbac(objs) if objs is not None else None
                except ValueError as e:
                    raise AdminError(400, "rbac: %s" % e) from None
                if b.get("user"):
                    store.config.user = str(b["user"])
                return 200, {"enabled": store.rbac is not None, "user": store.config.user}
        if p and p[0] in RESOURCES and p[0] != "namespaces":
            return self.objects(m, p[0], p[1:])
        raise AdminError(404, "unknown admin endpoint %s %s" % (m, "/".join(p)))

    # ---- objects ----

    def key_from(self, resource, rest):
        if RESOURCES[resource]["namespaced"]:
            if len(rest) != 2:
                raise AdminError(404, "expected /admin/%s/{namespace}/{name}" % resource)
            return "%s/%s" % (rest[0], rest[1])
        if len(rest) != 1:
            raise AdminError(404, "expected /admin/%s/{name}" % resource)
        return rest[0]

    def objects(self, m, resource, rest):
        store = self.store
        if not rest:
            if m != "POST":
                raise AdminError(405, "use POST /admin/%s" % resource)
            body = self.body()
            manager, subresource, ts = self.write_options()
            many = isinstance(body, list)
            objs = [DEFAULTERS[resource](o, ts) for o in (body if many else [body])]
            with store.lock:
                for o in objs:  # a replaced object keeps its identity
                    cur = store.objects[resource].get(obj_key(resource, o))
                    if cur is not None:
                        for k in ("uid", "creationTimestamp"):
                            o["metadata"][k] = cur["metadata"][k]
                    if manager:
                        record_update(resource, cur, o, manager, subresource, ts)
                store.put_many(resource, objs)
            if many:  # bulk: a summary keeps big creations fast
                return 201, [summary(o) for o in objs]
            if resource == "pods":
                self.reconcile_owner(objs[0])
            return 201, ApiHandler.full(resource, objs[0])
        if rest == ["bulk"] and m == "POST":
            return 201, self.bulk(resource, self.body())
        if resource == "pods" and len(rest) == 3 and rest[2] == "restart" and m == "POST":
            out = self.restart(rest[0], rest[1], self.body())
            self.reconcile_owner(out)
            return 200, out
        if resource == "pods" and len(rest) == 3 and rest[2] == "replace" and m == "POST":
            b = self.body()
            return 201, self.replace_pod(rest[0], rest[1], b if isinstance(b, dict) else {})
        action = CONTROLLER_ACTIONS.get((resource, rest[2])) if len(rest) == 3 else None
        if action is not None and m == "POST":
            b = self.body()
            if not isinstance(b, dict):
                raise AdminError(400, "body must be a JSON object")
            return (201 if rest[2] == "create" else 200), getattr(self, action)(
                rest[0], rest[1], b)
        if resource in ("configmaps", "secrets") and len(rest) == 3 and rest[2] == "write" \
                and m == "POST":
            b = self.body()
            if not isinstance(b, dict):
                raise AdminError(400, "body must be a JSON object")
            return 200, self.config_write(resource, rest[0], rest[1], b)
        key = self.key_from(resource, rest)
        if m == "GET":
            obj = store.get(resource, key)
            if obj is None:
                raise AdminError(404, "%s %s not found" % (resource, key))
            return 200, ApiHandler.full(resource, obj)
        if m == "DELETE":
            gone = store.delete(resource, key)
            if gone is None:
                raise AdminError(404, "%s %s not found" % (resource, key))
            if resource == "pods":
                self.reconcile_owner(gone)
            return 200, ApiHandler.full(resource, gone)
        if m == "PUT":
            patch = self.body()
            if not isinstance(patch, dict):
                raise AdminError(400, "PUT body must be a JSON object (merge patch)")
            manager, subresource, ts = self.write_options()
            with store.cond:
                cur = store.objects[resource].get(key)
                if cur is None:
                    raise AdminError(404, "%s %s not found" % (resource, key))
                new = merge_patch(cur, patch)
                md = new.setdefault("metadata", {})
                for k in ("name", "namespace", "uid", "creationTimestamp"):
                    if k in cur["metadata"]:
                        md[k] = cur["metadata"][k]
                new = copy.deepcopy(new)
                if manager:
                    record_update(resource, cur, new, manager, subresource, ts)
                store.put(resource, new)
            if resource == "pods":
                self.reconcile_owner(new)
            return 200, ApiHandler.full(resource, new)
        raise AdminError(405, "method %s not supported here" % m)

    # ---- writes with field management (?manager=M&subresource=status&time=T) ----

    def write_options(self):
        """manager, subresource and time of an admin write: with a manager, the write is
        recorded in metadata.managedFields as that manager's Update."""
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
        sub = q.get("subresource") or None
        if sub not in (None, "status"):
            raise AdminError(400, "subresource must be \"status\" or absent")
        return q.get("manager") or None, sub, self.time_arg(q.get("time"))

    @staticmethod
    def time_arg(t):
        if t is None:
            return now_time()
        if not isinstance(t, str) or not re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", t):
            raise AdminError(400, "time must be RFC 3339 UTC with second precision, e.g. "
                             "2026-12-06T03:52:00Z (got %r)" % (t,))
        return t

    def write(self, resource, old, new, manager, ts, subresource=None, rename=None):
        """Store `new` (a fresh object, never shared with `old`) as `manager`'s write."""
        record_update(resource, old, new, manager, subresource, ts, rename=rename)
        self.store.put(resource, new)
        return new

    # ---- the deployment controller: what kube-controller-manager writes for a Deployment
    # (pkg/controller/deployment: one ReplicaSet per pod template, named <deployment>-<hash>,
    # the template's pod-template-hash label on it and its pods, the revision annotation on
    # both, a RollingUpdate within maxSurge/maxUnavailable) ----

    def _owned(self, resource, ns, uid):
        return [o for k, o in self.store.objects[resource].items()
                if k.startswith(ns + "/") and any(
                    r.get("controller") and r.get("uid") == uid
                    for r in o["metadata"].get("ownerReferences") or [])]

    @staticmethod
    def _intstr(value, total, round_up):
        if isinstance(value, str) and value.endswith("%"):
            x = total * int(value[:-1]) / 100.0
            return int(-(-x // 1)) if round_up else int(x // 1)
        return int(value or 0)

    def _surge_unavailable(self, dep):
        total = int(dep["spec"].get("replicas", 1))
        ru = (dep["spec"].get("strategy") or {}).get("rollingUpdate") or {}
        surge = self._intstr(ru.get("maxSurge", "25%"), total, True)
        unavail = self._intstr(ru.get("maxUnavailable", "25%"), total, False)
        if surge == 0 and unavail == 0:
            unavail = 1
        return surge, unavail

    @staticmethod
    def _revision(obj):
        try:
            return int((obj["metadata"].get("annotations") or {}).get(
                "deployment.kubernetes.io/revision", "0"))
        except ValueError:
            return 0

    def _apply_annotation(self, obj, manager, applied):
        """kubectl apply (client side) keeps what it applied in an annotation."""
        if manager == "kubectl-client-side-apply":
            obj["metadata"].setdefault("annotations", {})[
                "kubectl.kubernetes.io/last-applied-configuration"] = json.dumps(
                applied, sort_keys=True, separators=(",", ":")) + "\n"

    def _replicaset_for(self, dep, replicas, revision, ts):
        """The ReplicaSet of the Deployment's current template: created, or (a rollback to
        an old template) the old one re-used with the new revision."""
        store = self.store
        md = dep["metadata"]
        ns = md["namespace"]
        tmpl = copy.deepcopy(dep["spec"]["template"])
        h = pod_template_hash(tmpl)
        tmpl["metadata"]["labels"] = dict(tmpl["metadata"].get("labels") or {},
                                          **{"pod-template-hash": h})
        rs_name = "%s-%s" % (md["name"], h)
        total = int(dep["spec"].get("replicas", 1))
        surge, _ = self._surge_unavailable(dep)
        ann = {"deployment.kubernetes.io/desired-replicas": str(total),
               "deployment.kubernetes.io/max-replicas": str(total + surge),
               "deployment.kubernetes.io/revision": str(revision)}
        cur = store.objects["replicasets"].get(ns + "/" + rs_name)
        if cur is not None:
            new = copy.deepcopy(cur)
            old_rev = (cur["metadata"].get("annotations") or {}).get(
                "deployment.kubernetes.io/revision")
            hist = (cur["metadata"].get("annotations") or {}).get(
                "deployment.kubernetes.io/revision-history")
            if old_rev and old_rev != str(revision):
                ann["deployment.kubernetes.io/revision-history"] = (
                    hist + "," + old_rev if hist else old_rev)
            new["metadata"].setdefault("annotations", {}).update(ann)
            if new["spec"].get("replicas") != replicas:
                new["spec"]["replicas"] = replicas
                new["metadata"]["generation"] = int(new["metadata"].get("generation", 1)) + 1
            return self.write("replicasets", cur, new, "kube-controller-manager", ts)
        sel = copy.deepcopy(dep["spec"]["selector"])
        sel.setdefault("matchLabels", {})["pod-template-hash"] = h
        rs = default_workload("replicasets")({
            "metadata": {"name": rs_name, "namespace": ns,
                         "labels": dict(tmpl["metadata"]["labels"]), "annotations": ann,
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                              "name": md["name"], "uid": md["uid"],
                                              "controller": True,
                                              "blockOwnerDeletion": True}]},
            "spec": {"replicas": replicas, "selector": sel, "template": tmpl}}, ts)
        return self.write("replicasets", None, rs, "kube-controller-manager", ts)

    def _random_name(self, ns, prefix):
        while True:
            name = prefix + "".join(random.choice(SAFE_ALPHANUMS) for _ in range(5))
            if ns + "/" + name not in self.store.objects["pods"]:
                return name

    CONTROLLER_COMPONENTS = {"deployments": "deployment-controller",
                             "replicasets": "replicaset-controller",
                             "statefulsets": "statefulset-controller",
                             "daemonsets": "daemonset-controller",
                             "jobs": "job-controller", "cronjobs": "cronjob-controller"}

    def controller_event(self, owner_resource, owner, reason, message, ts):
        """The Event a controller's recorder (core/v1, legacy style) writes about owner."""
        md = owner["metadata"]
        info = RESOURCES[owner_resource]
        ev = default_event({"metadata": {"namespace": md["namespace"]},
                            "involvedObject": {"kind": info["kind"],
                                               "namespace": md["namespace"],
                                               "name": md["name"], "uid": md["uid"],
                                               "apiVersion": info["apiVersion"],
                                               "resourceVersion": md.get("resourceVersion",
                                                                         "")},
                            "reason": reason, "message": message, "type": "Normal",
                            "reportingComponent": self.CONTROLLER_COMPONENTS[owner_resource],
                            "firstTimestamp": ts, "lastTimestamp": ts}, ts)
        self.store.put("events", ev)

    def _pod_event(self, owner_resource, owner, verb, pod_name, ts):
        """SuccessfulCreate/SuccessfulDelete as the pod's controller words it."""
        if owner_resource == "statefulsets":
            msg = "%s Pod %s in StatefulSet %s successful" % (verb.lower(), pod_name,
                                                               owner["metadata"]["name"])
        else:
            msg = "%s pod: %s" % ("Created" if verb == "Create" else "Deleted", pod_name)
        self.controller_event(owner_resource, owner, "Successful" + verb, msg, ts)

    def _controller_delete_pod(self, owner_resource, owner, pod, ts):
        self.store.delete("pods", obj_key("pods", pod))
        self._pod_event(owner_resource, owner, "Delete", pod["metadata"]["name"], ts)

    def _controller_pod(self, owner_resource, owner, tmpl, name, node, ready, ts,
                        generate_name=None, labels=None, spec_extra=None):
        """A pod of owner (a stored ReplicaSet, StatefulSet, DaemonSet or Job) from its
        template, scheduled to node, running (ready or not), stored; managedFields: the
        controller's create (before the binding, the kubelet's status and what admission
        adds), then the kubelet's status."""
        md = owner["metadata"]
        info = RESOURCES[owner_resource]
        manager = "kube-controller-manager"
        base = {"metadata": {"name": name, "namespace": md["namespace"],
                             "labels": dict(tmpl["metadata"].get("labels") or {},
                                            **(labels or {})),
                             "ownerReferences": [{
                                 "apiVersion": info["apiVersion"], "kind": info["kind"],
                                 "name": md["name"], "uid": md["uid"], "controller": True,
                                 "blockOwnerDeletion": True}]},
                "spec": copy.deepcopy(tmpl["spec"])}
        if generate_name:
            base["metadata"]["generateName"] = generate_name
        if tmpl["metadata"].get("annotations"):
            base["metadata"]["annotations"] = dict(tmpl["metadata"]["annotations"])
        base["spec"].update(copy.deepcopy(spec_extra or {}))
        spec = base["spec"]
        spec["nodeName"] = node
        if not ready:  # running, readiness probe failing
            base["status"] = {"containerStatuses": [
                {"name": c["name"], "ready": False, "started": True,
                 "state": {"running": {"startedAt": ts}}} for c in spec["containers"]]}
        pod = default_pod(base, ts)
        created = copy.deepcopy(pod)
        created.pop("status", None)
        for k in ("nodeName", "tolerations", "priority", "preemptionPolicy",
                  "serviceAccount", "serviceAccountName"):
            if k not in tmpl["spec"] and k not in (spec_extra or {}):
                created["spec"].pop(k, None)
        if owner_resource == "daemonsets":  # the DaemonSet controller binds its pods itself
            created["spec"]["nodeName"] = node
        record_update("pods", None, created, manager, None, ts)
        pod["metadata"]["managedFields"] = created["metadata"]["managedFields"]
        record_update("pods", created, pod, "kubelet", "status", ts)
        self.store.put("pods", pod)
        self._pod_event(owner_resource, owner, "Create", name, ts)
        return pod

    def _replicaset_pods(self, rs, count, ready, node, ts):
        """count pods of the ReplicaSet, scheduled to node, running (ready or not)."""
        md = rs["metadata"]
        return [self._controller_pod("replicasets", rs, rs["spec"]["template"],
                                     self._random_name(md["namespace"], md["name"] + "-"),
                                     node, ready, ts, generate_name=md["name"] + "-")
                for _ in range(count)]

    @staticmethod
    def _pod_ready(pod):
        return any(c.get("type") == "Ready" and c.get("status") == "True"
                   for c in (pod.get("status") or {}).get("conditions") or [])

    def _stored(self, resource, obj):
        """The stored version of obj (None once it is deleted)."""
        return self.store.objects[resource].get(obj_key(resource, obj))

    def _write_status(self, resource, cur, st, ts):
        """kube-controller-manager writes status st of cur (not when it is already st)."""
        if cur.get("status") == st:
            return cur
        new = copy.deepcopy(cur)
        new["status"] = st
        return self.write(resource, cur, new, "kube-controller-manager", ts, "status")

    def _replicaset_status(self, rs, ts):
        """status of a ReplicaSet from its pods (minReadySeconds 0: available = ready)."""
        cur = self._stored("replicasets", rs)
        if cur is None:
            return None
        pods = [p for p in self._owned("pods", cur["metadata"]["namespace"],
                                       cur["metadata"]["uid"])
                if not p["metadata"].get("deletionTimestamp")]
        ready = sum(1 for p in pods if self._pod_ready(p))
        st = {"replicas": len(pods)}
        if pods:
            st["fullyLabeledReplicas"] = len(pods)
        if ready:
            st["readyReplicas"] = ready
            st["availableReplicas"] = ready
        st["observedGeneration"] = int(cur["metadata"].get("generation", 1))
        return self._write_status("replicasets", cur, st, ts)

    def _condition(self, old_conds, ctype, status, reason, message, ts):
        prev = next((c for c in old_conds or [] if c.get("type") == ctype), None)
        c = {"type": ctype, "status": status, "lastUpdateTime": ts, "lastTransitionTime": ts,
             "reason": reason, "message": message}
        if prev is not None:
            if prev.get("status") == status:
                c["lastTransitionTime"] = prev.get("lastTransitionTime", ts)
            if (prev.get("status"), prev.get("reason"), prev.get("message")) == (
                    status, reason, message):
                c["lastUpdateTime"] = prev.get("lastUpdateTime", ts)
        return c

    def _deployment_status(self, dep, ts):
        cur = self._stored("deployments", dep)
        if cur is None:
            return None
        md = cur["metadata"]
        rss = self._owned("replicasets", md["namespace"], md["uid"])
        h = pod_template_hash(cur["spec"]["template"])
        new_rs = next((r for r in rss if (r["metadata"].get("labels") or {}).get(
            "pod-template-hash") == h), None)
        total = int(cur["spec"].get("replicas", 1))
        _, unavail = self._surge_unavailable(cur)

        def n(r, k):
            return int((r.get("status") or {}).get(k) or 0)
        # as calculateStatus of pkg/controller/deployment/sync.go: unavailable counts
        # against the ReplicaSets' spec.replicas, replicas and updated against their status
        wanted = sum(int(r["spec"].get("replicas", 0)) for r in rss)
        replicas = sum(n(r, "replicas") for r in rss)
        updated = n(new_rs, "replicas") if new_rs else 0
        ready = sum(n(r, "readyReplicas") for r in rss)
        available = sum(n(r, "availableReplicas") for r in rss)
        st = {"observedGeneration": int(md.get("generation", 1))}
        for k, v in (("replicas", replicas), ("updatedReplicas", updated),
                     ("readyReplicas", ready), ("availableReplicas", available),
                     ("unavailableReplicas", max(0, wanted - available))):
            if v:
                st[k] = v
        old_conds = (cur.get("status") or {}).get("conditions")
        if available >= total - unavail:
            avail = self._condition(old_conds, "Available", "True", "MinimumReplicasAvailable",
                                    "Deployment has minimum availability.", ts)
        else:
            avail = self._condition(old_conds, "Available", "False",
                                    "MinimumReplicasUnavailable",
                                    "Deployment does not have minimum availability.", ts)
        rs_name = new_rs["metadata"]["name"] if new_rs else ""
        if new_rs and updated == total and replicas == total and available == total:
            prog = self._condition(old_conds, "Progressing", "True", "NewReplicaSetAvailable",
                                   'ReplicaSet "%s" has successfully progressed.' % rs_name, ts)
        else:
            prog = self._condition(old_conds, "Progressing", "True", "ReplicaSetUpdated",
                                   'ReplicaSet "%s" is progressing.' % rs_name, ts)
        st["conditions"] = [avail, prog]
        return self._write_status("deployments", cur, st, ts)

    def _set_revision(self, dep, revision, ts):
        cur = self.store.objects["deployments"][obj_key("deployments", dep)]
        new = copy.deepcopy(cur)
        new["metadata"].setdefault("annotations", {})[
            "deployment.kubernetes.io/revision"] = str(revision)
        return self.write("deployments", cur, new, "kube-controller-manager", ts)

    def reconcile_owner(self, pod):
        """After a pod changed (admin restart/update/delete): the ReplicaSet controller
        updates its ReplicaSet's status, the deployment controller its Deployment's, as in a
        cluster.  Pods whose owner is not stored here (create_pod's default) change nothing."""
        store = self.store
        md = pod.get("metadata") or {}
        ref = next((r for r in md.get("ownerReferences") or [] if r.get("controller")), None)
        if ref is None:
            return
        other = {"StatefulSet": ("statefulsets", self._statefulset_status),
                 "DaemonSet": ("daemonsets", self._daemonset_status),
                 "Job": ("jobs", self._job_status)}.get(ref.get("kind"))
        if other is not None:
            with store.cond:
                owner = store.objects[other[0]].get("%s/%s" % (md.get("namespace"),
                                                               ref.get("name")))
                if owner is not None and owner["metadata"].get("uid") == ref.get("uid"):
                    other[1](owner, now_time())
            return
        if ref.get("kind") != "ReplicaSet":
            return
        with store.cond:
            rs = store.objects["replicasets"].get("%s/%s" % (md.get("namespace"), ref["name"]))
            if rs is None or rs["metadata"].get("uid") != ref.get("uid"):
                return
            ts = now_time()
            self._replicaset_status(rs, ts)
            dref = next((r for r in rs["metadata"].get("ownerReferences") or []
                         if r.get("controller") and r.get("kind") == "Deployment"), None)
            if dref is None:
                return
            dep = store.objects["deployments"].get("%s/%s" % (md.get("namespace"),
                                                              dref["name"]))
            if dep is not None and dep["metadata"].get("uid") == dref.get("uid"):
                self._deployment_status(dep, ts)

    def replace_pod(self, ns, name, b):
        """{"node": N?, "ready": true, "time": T?}: the pod is deleted and its controller
        creates a replacement, as after an eviction or a node failure: a ReplicaSet's or a
        Job's a new name and uid, a DaemonSet's on the same node, a StatefulSet's the same
        name (the update revision's template, as with partition 0); restart counts 0; the
        statuses follow.  Only for pods whose owner is stored here."""
        store = self.store
        ts = self.time_arg(b.get("time"))
        ready = b.get("ready", True)
        with store.cond:
            pod = store.objects["pods"].get("%s/%s" % (ns, name))
            if pod is None:
                raise AdminError(404, "pod %s/%s not found" % (ns, name))
            ref = next((r for r in pod["metadata"].get("ownerReferences") or []
                        if r.get("controller")), None) or {}
            resource = {"ReplicaSet": "replicasets", "StatefulSet": "statefulsets",
                        "DaemonSet": "daemonsets", "Job": "jobs"}.get(ref.get("kind"))
            owner = store.objects[resource].get("%s/%s" % (ns, ref.get("name"))) \
                if resource else None
            if owner is None or owner["metadata"].get("uid") != ref.get("uid"):
                raise AdminError(400, "pod %s/%s has no controller stored here to replace it "
                                 "(pods of deployment(), statefulset(), daemonset(), job())"
                                 % (ns, name))
            node = b.get("node") or pod["spec"].get("nodeName") or "fake-node-1"
            store.delete("pods", "%s/%s" % (ns, name))
            omd = owner["metadata"]
            if resource == "replicasets":
                new = self._replicaset_pods(owner, 1, ready, node, ts)[0]
            elif resource == "jobs":
                new = self._controller_pod("jobs", owner, owner["spec"]["template"],
                                           self._random_name(ns, omd["name"] + "-"), node,
                                           ready, ts, generate_name=omd["name"] + "-")
            else:
                cr = max(self._owned("controllerrevisions", ns, omd["uid"]),
                         key=lambda r: int(r.get("revision") or 0))
                if resource == "statefulsets":
                    ordinal = int(pod["metadata"].get("labels", {}).get(
                        "apps.kubernetes.io/pod-index") or name.rsplit("-", 1)[-1])
                    new = self._sts_pod(owner, cr, ordinal, node, ready, ts)
                else:
                    new = self._ds_pod(owner, cr, node, ready, ts)
        self.reconcile_owner(new)
        return ApiHandler.full("pods", new)

    @staticmethod
    def _count_arg(b, key, default, null_ok=False):
        """b[key] (default when absent): a non-negative integer (or null, if null_ok)."""
        v = b.get(key, default)
        if (v is not None or not null_ok) and (
                not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise AdminError(400, "\"%s\" must be a non-negative integer" % key)
        return v

    @staticmethod
    def _containers_patch_arg(b):
        patch = b.get("containers_patch") or {}
        if not isinstance(patch, dict) or any(not isinstance(v, dict) for v in patch.values()):
            raise AdminError(400, "\"containers_patch\" must map container names to merge "
                             "patches")
        return patch

    @staticmethod
    def _containers_arg(containers):
        if not isinstance(containers, list) or not containers or any(
                not isinstance(c, dict) or not c.get("name") for c in containers):
            raise AdminError(400, "\"containers\" must be a non-empty list of container "
                             "objects with a name")
        return copy.deepcopy(containers)

    def deployment_create(self, ns, name, b):
        """{"containers": [...], "replicas": 3, "manager": M, "ready": true, "node": N,
        "labels": {...}, "template_spec": {...}, "time": T}: the Deployment as `manager`
        created it, then what the controllers write: its ReplicaSet (revision 1), `replicas`
        pods, the ReplicaSet's and the Deployment's status."""
        containers = self._containers_arg(b.get("containers"))
        replicas = self._count_arg(b, "replicas", 3)
        node = b.get("node", "fake-node-1")
        store = self.store
        with store.cond:
            dep, ts = self._workload_create("deployments", ns, name, b, containers,
                                            {"replicas": replicas})
            rs = self._replicaset_for(dep, replicas, 1, ts)
            if replicas:
                self.controller_event("deployments", dep, "ScalingReplicaSet",
                                      "Scaled up replica set %s from 0 to %d" % (
                                          rs["metadata"]["name"], replicas), ts)
            dep = self._set_revision(dep, 1, ts)
            pods = self._replicaset_pods(rs, replicas, b.get("ready", True), node, ts)
            rs = self._replicaset_status(rs, ts)
            dep = self._deployment_status(dep, ts)
            return {"deployment": ApiHandler.full("deployments", dep),
                    "replicaset": ApiHandler.full("replicasets", rs),
                    "pods": [ApiHandler.full("pods", p) for p in pods]}

    def deployment_rollout(self, ns, name, b):
        """{"containers_patch": {container: merge patch}, "template_spec": merge patch of the
        pod spec, "manager": M, "new_pods": 1, "old_ready": N or null, "ready": true,
        "node": N, "time": T}: `manager` changes the pod template (generation + 1); the
        controller makes a ReplicaSet for it (revision = the highest + 1; an old template's
        ReplicaSet is re-used, as for a rollback), starts new_pods pods of it and, with
        old_ready, scales the previous ReplicaSet to old_ready pods (deleting the others)."""
        patch = self._containers_patch_arg(b)
        new_pods = self._count_arg(b, "new_pods", 1, null_ok=True)
        old_ready = self._count_arg(b, "old_ready", None, null_ok=True)
        node = b.get("node", "fake-node-1")
        store = self.store
        with store.cond:
            cur, dep, ts = self._workload_template_change("deployments", ns, name, b, patch)
            old_rev = self._revision(cur)
            rss = self._owned("replicasets", ns, cur["metadata"]["uid"])
            old_rs = next((r for r in rss if self._revision(r) == old_rev), None)
            revision = max([self._revision(r) for r in rss] + [0]) + 1
            before = store.objects["replicasets"].get("%s/%s-%s" % (
                ns, name, pod_template_hash(dep["spec"]["template"])))
            rs = self._replicaset_for(dep, new_pods, revision, ts)
            was = int(before["spec"].get("replicas", 0)) if before is not None else 0
            if new_pods != was:
                self.controller_event("deployments", dep, "ScalingReplicaSet",
                                      "Scaled %s replica set %s from %d to %d" % (
                                          "up" if new_pods > was else "down",
                                          rs["metadata"]["name"], was, new_pods), ts)
            dep = self._set_revision(dep, revision, ts)
            pods = self._replicaset_pods(rs, new_pods, b.get("ready", True), node, ts)
            rs = self._replicaset_status(rs, ts)
            if old_rs is not None and old_ready is not None and old_rs is not rs:
                # the ReplicaSet controller deletes not-ready pods first, then the newest
                old_pods = sorted(self._owned("pods", ns, old_rs["metadata"]["uid"]),
                                  key=lambda p: p["metadata"]["creationTimestamp"],
                                  reverse=True)
                old_pods.sort(key=self._pod_ready)
                o = store.objects["replicasets"][obj_key("replicasets", old_rs)]
                self.controller_event("deployments", dep, "ScalingReplicaSet",
                                      "Scaled down replica set %s from %d to %d" % (
                                          o["metadata"]["name"],
                                          int(o["spec"].get("replicas", 0)), old_ready), ts)
                for p in old_pods[:max(0, len(old_pods) - old_ready)]:
                    self._controller_delete_pod("replicasets", o, p, ts)
                scaled = copy.deepcopy(o)
                scaled["spec"]["replicas"] = old_ready
                scaled["metadata"]["generation"] = int(o["metadata"].get("generation", 1)) + 1
                scaled["metadata"].setdefault("annotations", {})[
                    "deployment.kubernetes.io/desired-replicas"] = str(dep["spec"]["replicas"])
                self.write("replicasets", o, scaled, "kube-controller-manager", ts)
                old_rs = self._replicaset_status(scaled, ts)
            dep = self._deployment_status(dep, ts)
            return {"deployment": ApiHandler.full("deployments", dep),
                    "replicaset": ApiHandler.full("replicasets", rs),
                    "old_replicaset": ApiHandler.full("replicasets", old_rs)
                    if old_rs is not None else None,
                    "revision": revision,
                    "pods": [ApiHandler.full("pods", p) for p in pods]}

    # ---- StatefulSet, DaemonSet, Job and CronJob controllers (pkg/controller/statefulset,
    # daemon, job, cronjob; history in ControllerRevisions, pkg/controller/history) ----

    def _controller_revision(self, owner_resource, owner, ts):
        """history.NewControllerRevision for the owner's current template: data
        {"spec": {"template": {..., "$patch": "replace"}}}, name <owner>-<hash of the data>,
        labels the template's + controller.kubernetes.io/hash, ownerReferences to the owner,
        revision = the highest + 1; a revision equal to an older one is re-used with the new
        revision number (a rollback)."""
        store = self.store
        md = owner["metadata"]
        ns = md["namespace"]
        tmpl = copy.deepcopy(owner["spec"]["template"])
        tmpl["$patch"] = "replace"
        data = {"spec": {"template": tmpl}}
        h = safe_encode(str(fnv32a(json.dumps(data, sort_keys=True,
                                              separators=(",", ":")).encode())))
        name = "%s-%s" % (md["name"], h)
        revs = self._owned("controllerrevisions", ns, md["uid"])
        top = max([int(r.get("revision") or 0) for r in revs] + [0])
        cur = store.objects["controllerrevisions"].get(ns + "/" + name)
        if cur is not None:
            if int(cur.get("revision") or 0) == top:
                return cur
            new = copy.deepcopy(cur)
            new["revision"] = top + 1
            return self.write("controllerrevisions", cur, new, "kube-controller-manager", ts)
        info = RESOURCES[owner_resource]
        cr = default_workload("controllerrevisions")({
            "metadata": {"name": name, "namespace": ns,
                         "labels": dict(owner["spec"]["template"]["metadata"].get("labels")
                                        or {}, **{"controller.kubernetes.io/hash": h}),
                         "ownerReferences": [{"apiVersion": info["apiVersion"],
                                              "kind": info["kind"], "name": md["name"],
                                              "uid": md["uid"], "controller": True,
                                              "blockOwnerDeletion": True}]},
            "data": data, "revision": top + 1}, ts)
        return self.write("controllerrevisions", None, cr, "kube-controller-manager", ts)

    @staticmethod
    def _revision_template(cr):
        tmpl = copy.deepcopy(cr["data"]["spec"]["template"])
        tmpl.pop("$patch", None)
        return tmpl

    def _workload_create(self, resource, ns, name, b, containers, spec_extra):
        """The object as `manager` created it (generation 1; client-side apply keeps its
        annotation); returns (it, ts)."""
        manager = b.get("manager") or "kubectl-client-side-apply"
        labels = b.get("labels") or {"app": name}
        ts = self.time_arg(b.get("time"))
        if self.store.objects[resource].get("%s/%s" % (ns, name)) is not None:
            raise AdminError(409, "%s %s/%s exists; use rollout" % (
                RESOURCES[resource]["singular"], ns, name))
        applied = {"apiVersion": RESOURCES[resource]["apiVersion"],
                   "kind": RESOURCES[resource]["kind"],
                   "metadata": {"name": name, "namespace": ns, "labels": dict(labels)},
                   "spec": dict(spec_extra, selector={"matchLabels": dict(labels)},
                                template={"metadata": {"labels": dict(labels)},
                                          "spec": dict(copy.deepcopy(
                                              b.get("template_spec") or {}),
                                              containers=containers)})}
        obj = default_workload(resource)(copy.deepcopy(applied), ts)
        self._apply_annotation(obj, manager, applied)
        return self.write(resource, None, obj, manager, ts), ts

    def _workload_template_change(self, resource, ns, name, b, patch):
        """`manager` changes the pod template of a Deployment, StatefulSet or DaemonSet
        (containers_patch, template_spec); returns (old, new, ts)."""
        manager = b.get("manager") or "kubectl-client-side-apply"
        ts = self.time_arg(b.get("time"))
        cur = self.store.objects[resource].get("%s/%s" % (ns, name))
        if cur is None:
            raise AdminError(404, "%s %s/%s not found" % (RESOURCES[resource]["singular"], ns,
                                                          name))
        new = copy.deepcopy(cur)
        spec = new["spec"]["template"]["spec"]
        names = [c["name"] for c in spec["containers"]]
        for cname, cpatch in patch.items():
            if cname not in names:
                raise AdminError(400, "%s %s/%s has no container %s (has %s)" % (
                    RESOURCES[resource]["singular"], ns, name, cname, ", ".join(names)))
            i = names.index(cname)
            spec["containers"][i] = _default_container_spec(merge_patch(spec["containers"][i],
                                                                        cpatch))
        if b.get("template_spec"):
            new["spec"]["template"]["spec"] = merge_patch(spec, b["template_spec"])
        if new["spec"]["template"] == cur["spec"]["template"]:
            raise AdminError(400, "rollout of %s/%s changes nothing in the pod template"
                             % (ns, name))
        new["metadata"]["generation"] = int(cur["metadata"].get("generation", 1)) + 1
        if manager == "kubectl-client-side-apply":
            self._apply_annotation(new, manager, {
                "apiVersion": RESOURCES[resource]["apiVersion"],
                "kind": RESOURCES[resource]["kind"],
                "metadata": {"name": name, "namespace": ns,
                             "labels": new["metadata"].get("labels") or {}},
                "spec": {k: v for k, v in new["spec"].items()
                         if k in ("replicas", "selector", "serviceName", "template")}})
        return cur, self.write(resource, cur, new, manager, ts), ts

    def _sts_pod(self, sts, cr, ordinal, node, ready, ts):
        md = sts["metadata"]
        pname = "%s-%d" % (md["name"], ordinal)
        return self._controller_pod(
            "statefulsets", sts, self._revision_template(cr), pname, node, ready, ts,
            labels={"controller-revision-hash": cr["metadata"]["name"],
                    "statefulset.kubernetes.io/pod-name": pname,
                    "apps.kubernetes.io/pod-index": str(ordinal)},
            spec_extra={"hostname": pname, "subdomain": sts["spec"].get("serviceName", "")})

    def _statefulset_status(self, sts, ts):
        cur = self._stored("statefulsets", sts)
        if cur is None:
            return None
        md = cur["metadata"]
        pods = [p for p in self._owned("pods", md["namespace"], md["uid"])
                if not p["metadata"].get("deletionTimestamp")]
        revs = sorted(self._owned("controllerrevisions", md["namespace"], md["uid"]),
                      key=lambda r: int(r.get("revision") or 0))
        update = revs[-1]["metadata"]["name"] if revs else ""
        current = (cur.get("status") or {}).get("currentRevision") or update

        def count(rev):
            return sum(1 for p in pods if (p["metadata"].get("labels") or {}).get(
                "controller-revision-hash") == rev)
        if count(update) == len(pods) == int(cur["spec"].get("replicas", 1)):
            current = update  # the rolling update is done
        ready = sum(1 for p in pods if self._pod_ready(p))
        st = {"observedGeneration": int(md.get("generation", 1)), "replicas": len(pods)}
        for k, v in (("readyReplicas", ready), ("currentReplicas", count(current)),
                     ("updatedReplicas", count(update))):
            if v:
                st[k] = v
        st.update(currentRevision=current, updateRevision=update, collisionCount=0,
                  availableReplicas=ready)
        return self._write_status("statefulsets", cur, st, ts)

    def statefulset_create(self, ns, name, b):
        """{"containers", "replicas"?: 1, "service_name"?, "manager"?, "ready"?, "node"?,
        "labels"?, "template_spec"?, "time"?}: the StatefulSet, its ControllerRevision
        (revision 1), pods <name>-0.. (label controller-revision-hash = the revision's name,
        statefulset.kubernetes.io/pod-name, apps.kubernetes.io/pod-index) and its status
        (currentRevision = updateRevision)."""
        replicas = self._count_arg(b, "replicas", 1)
        containers = self._containers_arg(b.get("containers"))
        store = self.store
        with store.cond:
            sts, ts = self._workload_create("statefulsets", ns, name, b, containers, {
                "replicas": replicas, "serviceName": b.get("service_name") or name})
            cr = self._controller_revision("statefulsets", sts, ts)
            pods = [self._sts_pod(sts, cr, i, b.get("node", "fake-node-1"),
                                  b.get("ready", True), ts) for i in range(replicas)]
            sts = self._statefulset_status(sts, ts)
            return {"statefulset": ApiHandler.full("statefulsets", sts),
                    "controllerrevision": ApiHandler.full("controllerrevisions", cr),
                    "pods": [ApiHandler.full("pods", p) for p in pods]}

    def statefulset_rollout(self, ns, name, b):
        """{"containers_patch", "template_spec"?, "manager"?, "new_pods"?: 1, "ready"?,
        "node"?, "time"?}: a new ControllerRevision (updateRevision); the RollingUpdate
        replaces new_pods pods from the highest ordinal down (same name, new uid, the new
        revision's template and label)."""
        new_pods = self._count_arg(b, "new_pods", 1)
        patch = self._containers_patch_arg(b)
        store = self.store
        with store.cond:
            _, sts, ts = self._workload_template_change("statefulsets", ns, name, b, patch)
            cr = self._controller_revision("statefulsets", sts, ts)
            replicas = int(sts["spec"].get("replicas", 1))
            pods = []
            for ordinal in range(replicas - 1, max(-1, replicas - 1 - new_pods), -1):
                old = store.objects["pods"].get("%s/%s-%d" % (ns, name, ordinal))
                node = b.get("node") or (old or {}).get("spec", {}).get("nodeName") or \
                    "fake-node-1"
                if old is not None:
                    self._controller_delete_pod("statefulsets", sts, old, ts)
                pods.append(self._sts_pod(sts, cr, ordinal, node, b.get("ready", True), ts))
            sts = self._statefulset_status(sts, ts)
            return {"statefulset": ApiHandler.full("statefulsets", sts),
                    "controllerrevision": ApiHandler.full("controllerrevisions", cr),
                    "pods": [ApiHandler.full("pods", p) for p in pods]}

    DAEMON_TOLERATIONS = [  # what the DaemonSet controller adds to its pods
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists",
         "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists",
         "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists",
         "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
         "effect": "NoSchedule"}]

    def _ds_pod(self, ds, cr, node, ready, ts):
        md = ds["metadata"]
        tmpl = self._revision_template(cr)
        tolerations = list(tmpl["spec"].get("tolerations") or []) + self.DAEMON_TOLERATIONS
        return self._controller_pod(
            "daemonsets", ds, tmpl, self._random_name(md["namespace"], md["name"] + "-"),
            node, ready, ts, generate_name=md["name"] + "-",
            labels={"controller-revision-hash": cr["metadata"]["labels"][
                "controller.kubernetes.io/hash"],
                "pod-template-generation": str(md.get("generation", 1))},
            spec_extra={"tolerations": tolerations, "affinity": {"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In",
                                      "values": [node]}]}]}}}})

    def _daemonset_status(self, ds, ts):
        cur = self._stored("daemonsets", ds)
        if cur is None:
            return None
        md = cur["metadata"]
        pods = [p for p in self._owned("pods", md["namespace"], md["uid"])
                if not p["metadata"].get("deletionTimestamp")]
        nodes = {p["spec"].get("nodeName") for p in pods}
        desired = max(len(nodes), int((cur.get("status") or {}).get(
            "desiredNumberScheduled") or 0))
        ready = sum(1 for p in pods if self._pod_ready(p))
        updated = sum(1 for p in pods if (p["metadata"].get("labels") or {}).get(
            "pod-template-generation") == str(md.get("generation", 1)))
        st = {"currentNumberScheduled": len(nodes), "numberMisscheduled": 0,
              "desiredNumberScheduled": desired, "numberReady": ready,
              "observedGeneration": int(md.get("generation", 1))}
        for k, v in (("updatedNumberScheduled", updated), ("numberAvailable", ready),
                     ("numberUnavailable", max(0, desired - ready))):
            if v:
                st[k] = v
        return self._write_status("daemonsets", cur, st, ts)

    def daemonset_create(self, ns, name, b):
        """{"containers", "nodes"?: ["fake-node-1"], "manager"?, "ready"?, "labels"?,
        "template_spec"?, "time"?}: the DaemonSet, its ControllerRevision, one pod per node
        (labels controller-revision-hash = the revision's hash, pod-template-generation; the
        node affinity and tolerations the controller adds) and its status."""
        nodes = b.get("nodes") or ["fake-node-1"]
        if not isinstance(nodes, list) or any(not isinstance(n, str) or not n for n in nodes):
            raise AdminError(400, "\"nodes\" must be a list of node names")
        containers = self._containers_arg(b.get("containers"))
        store = self.store
        with store.cond:
            ds, ts = self._workload_create("daemonsets", ns, name, b, containers, {})
            cr = self._controller_revision("daemonsets", ds, ts)
            pods = [self._ds_pod(ds, cr, n, b.get("ready", True), ts) for n in nodes]
            ds = self._daemonset_status(ds, ts)
            return {"daemonset": ApiHandler.full("daemonsets", ds),
                    "controllerrevision": ApiHandler.full("controllerrevisions", cr),
                    "pods": [ApiHandler.full("pods", p) for p in pods]}

    def daemonset_rollout(self, ns, name, b):
        """{"containers_patch", "template_spec"?, "manager"?, "new_pods"?: 1, "ready"?,
        "time"?}: a new ControllerRevision; the RollingUpdate replaces the pods of new_pods
        nodes (the old pod deleted, a new one on the same node)."""
        new_pods = self._count_arg(b, "new_pods", 1)
        patch = self._containers_patch_arg(b)
        store = self.store
        with store.cond:
            _, ds, ts = self._workload_template_change("daemonsets", ns, name, b, patch)
            cr = self._controller_revision("daemonsets", ds, ts)
            olds = sorted(self._owned("pods", ns, ds["metadata"]["uid"]),
                          key=lambda p: p["spec"].get("nodeName") or "")
            pods = []
            for old in olds[:new_pods]:
                self._controller_delete_pod("daemonsets", ds, old, ts)
                pods.append(self._ds_pod(ds, cr, old["spec"].get("nodeName"),
                                         b.get("ready", True), ts))
            ds = self._daemonset_status(ds, ts)
            return {"daemonset": ApiHandler.full("daemonsets", ds),
                    "controllerrevision": ApiHandler.full("controllerrevisions", cr),
                    "pods": [ApiHandler.full("pods", p) for p in pods]}

    def _job_status(self, job, ts):
        cur = self._stored("jobs", job)
        if cur is None:
            return None
        md = cur["metadata"]
        pods = [p for p in self._owned("pods", md["namespace"], md["uid"])
                if (p.get("status") or {}).get("phase") in ("Pending", "Running")]
        ready = sum(1 for p in pods if self._pod_ready(p))
        old = cur.get("status") or {}
        st = {"startTime": old.get("startTime") or ts}
        if pods:
            st["active"] = len(pods)
        for k in ("succeeded", "failed", "conditions", "completionTime"):
            if old.get(k) is not None:
                st[k] = old[k]
        st.update(terminating=0, uncountedTerminatedPods={}, ready=ready)
        return self._write_status("jobs", cur, st, ts)

    def _job_with_pods(self, job, manager, b, ts):
        n = self._count_arg(b, "pods", 1)
        job = self.write("jobs", None, job, manager, ts)
        md = job["metadata"]
        pods = [self._controller_pod("jobs", job, job["spec"]["template"],
                                     self._random_name(md["namespace"], md["name"] + "-"),
                                     b.get("node", "fake-node-1"), b.get("ready", True), ts,
                                     generate_name=md["name"] + "-") for _ in range(n)]
        job = self._job_status(job, ts)
        return job, pods

    def job_create(self, ns, name, b):
        """{"containers", "pods"?: 1, "restart_policy"?: "OnFailure", "manager"?:
        "kubectl-create", "ready"?, "node"?, "labels"?, "time"?}: the Job (selector and pod
        labels batch.kubernetes.io/controller-uid and job-name from its uid), its running
        pods (restartPolicy OnFailure restarts containers in place) and its status."""
        containers = self._containers_arg(b.get("containers"))
        ts = self.time_arg(b.get("time"))
        store = self.store
        with store.cond:
            if store.objects["jobs"].get("%s/%s" % (ns, name)) is not None:
                raise AdminError(409, "job %s/%s exists" % (ns, name))
            job = default_workload("jobs")({
                "metadata": {"name": name, "namespace": ns, "labels": b.get("labels") or {}},
                "spec": {"template": {"metadata": {"labels": b.get("labels") or {}},
                                      "spec": {"containers": containers,
                                               "restartPolicy": b.get("restart_policy",
                                                                      "OnFailure")}}}}, ts)
            job, pods = self._job_with_pods(job, b.get("manager") or "kubectl-create", b, ts)
            return {"job": ApiHandler.full("jobs", job),
                    "pods": [ApiHandler.full("pods", p) for p in pods]}

    def cronjob_create(self, ns, name, b):
        """{"containers", "schedule"?: "*/5 * * * *", "restart_policy"?: "OnFailure",
        "manager"?, "labels"?, "time"?}: the CronJob."""
        containers = self._containers_arg(b.get("containers"))
        manager = b.get("manager") or "kubectl-client-side-apply"
        ts = self.time_arg(b.get("time"))
        labels = b.get("labels") or {"app": name}
        store = self.store
        with store.cond:
            if store.objects["cronjobs"].get("%s/%s" % (ns, name)) is not None:
                raise AdminError(409, "cronjob %s/%s exists" % (ns, name))
            applied = {"apiVersion": "batch/v1", "kind": "CronJob",
                       "metadata": {"name": name, "namespace": ns, "labels": dict(labels)},
                       "spec": {"schedule": b.get("schedule") or "*/5 * * * *",
                                "jobTemplate": {"spec": {"template": {
                                    "metadata": {"labels": dict(labels)},
                                    "spec": {"containers": containers,
                                             "restartPolicy": b.get("restart_policy",
                                                                    "OnFailure")}}}}}}
            cj = default_workload("cronjobs")(copy.deepcopy(applied), ts)
            self._apply_annotation(cj, manager, applied)
            cj = self.write("cronjobs", None, cj, manager, ts)
            return {"cronjob": ApiHandler.full("cronjobs", cj)}

    def cronjob_run(self, ns, name, b):
        """{"pods"?: 1, "ready"?, "node"?, "time"?: the scheduled time}: the CronJob
        controller starts a Job <cronjob>-<scheduled time in minutes since the epoch> from
        its jobTemplate (ownerReferences to the CronJob, annotation
        batch.kubernetes.io/cronjob-scheduled-timestamp), the Job's pods, and the CronJob's
        status (active, lastScheduleTime)."""
        ts = self.time_arg(b.get("time"))
        store = self.store
        with store.cond:
            cj = store.objects["cronjobs"].get("%s/%s" % (ns, name))
            if cj is None:
                raise AdminError(404, "cronjob %s/%s not found" % (ns, name))
            at = int(datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(
                tzinfo=timezone.utc).timestamp())
            jname = "%s-%d" % (name, at // 60)
            if store.objects["jobs"].get("%s/%s" % (ns, jname)) is not None:
                raise AdminError(409, "job %s/%s (the run scheduled at %s) exists"
                                 % (ns, jname, ts))
            jt = copy.deepcopy(cj["spec"]["jobTemplate"])
            jmd = dict(jt.get("metadata") or {})
            jmd.pop("creationTimestamp", None)
            jmd.update(name=jname, namespace=ns, annotations=dict(
                jmd.get("annotations") or {},
                **{"batch.kubernetes.io/cronjob-scheduled-timestamp": ts}),
                ownerReferences=[{"apiVersion": "batch/v1", "kind": "CronJob", "name": name,
                                  "uid": cj["metadata"]["uid"], "controller": True,
                                  "blockOwnerDeletion": True}])
            job = default_workload("jobs")({"metadata": jmd, "spec": jt["spec"]}, ts)
            job, pods = self._job_with_pods(job, "kube-controller-manager", b, ts)
            self.controller_event("cronjobs", cj, "SuccessfulCreate", "Created job %s" % jname,
                                  ts)
            new = copy.deepcopy(cj)
            new["status"] = {"active": [{"kind": "Job", "namespace": ns, "name": jname,
                                         "uid": job["metadata"]["uid"],
                                         "apiVersion": "batch/v1",
                                         "resourceVersion": job["metadata"][
                                             "resourceVersion"]}],
                             "lastScheduleTime": ts}
            cj = self.write("cronjobs", cj, new, "kube-controller-manager", ts, "status")
            return {"cronjob": ApiHandler.full("cronjobs", cj),
                    "job": ApiHandler.full("jobs", job),
                    "pods": [ApiHandler.full("pods", p) for p in pods]}

    # ---- ConfigMaps and Secrets: a write of their data by a manager ----

    def config_write(self, resource, ns, name, b):
        """{"data": {...} (the whole data; Secret values base64), "data_patch": {k: v or
        null}, "binaryData": {...}, "stringData": {...} (Secrets: merged into data as the API
        server does, the managed field is f:stringData), "labels": {...}, "manager": M,
        "time": T}: creates the object or updates it; managedFields record `manager` taking
        the keys it changed, at `time`.  A write that changes nothing is not stored (no new
        resourceVersion), as on a real server."""
        ts = self.time_arg(b.get("time"))
        store = self.store
        key = "%s/%s" % (ns, name)
        with store.cond:
            cur = store.objects[resource].get(key)
            manager = b.get("manager") or ("kubectl-create" if cur is None else "kubectl-edit")
            if cur is None:
                new = DEFAULTERS[resource]({"metadata": {"name": name, "namespace": ns}}, ts)
            else:
                new = copy.deepcopy(cur)
            if b.get("labels") is not None:
                new["metadata"]["labels"] = dict(b["labels"])
            for field in ("data", "binaryData"):
                if field in b:
                    if b[field] is None:
                        new.pop(field, None)
                    elif not isinstance(b[field], dict):
                        raise AdminError(400, "\"%s\" must be an object" % field)
                    else:
                        new[field] = dict(b[field])
            if b.get("data_patch") is not None:
                if not isinstance(b["data_patch"], dict):
                    raise AdminError(400, "\"data_patch\" must be an object")
                merged = merge_patch(new.get("data") or {}, b["data_patch"])
                if merged:
                    new["data"] = merged
                else:
                    new.pop("data", None)
            rename = None
            if b.get("stringData"):
                if resource != "secrets":
                    raise AdminError(400, "stringData is a Secret field")
                data = dict(new.get("data") or {})
                for k, v in b["stringData"].items():
                    data[k] = base64.b64encode(str(v).encode("utf-8")).decode()
                new["data"] = data
                rename = {"f:data": "f:stringData"}
            if cur is not None and {k: v for k, v in new.items() if k != "metadata"} == {
                    k: v for k, v in cur.items() if k != "metadata"} and \
                    new["metadata"].get("labels") == cur["metadata"].get("labels"):
                return dict(ApiHandler.full(resource, cur), changed=False)
            self.write(resource, cur, new, manager, ts, rename=rename)
            return ApiHandler.full(resource, new)

    def bulk(self, resource, b):
        """{"template": obj, "count": N, "prefix": P, "namespace": NS, "start": 0}: N copies
        named P-00000.. (5 digits, or "width")."""
        tmpl = b.get("template")
        count = b.get("count")
        if not isinstance(tmpl, dict) or not isinstance(count, int) or count < 0:
            raise AdminError(400, "bulk needs \"template\" (object) and \"count\" (int)")
        prefix = b.get("prefix", "pod")
        width = int(b.get("width", 5))
        start = int(b.get("start", 0))
        raw = json.dumps(tmpl)
        ts = now_time()
        objs = []
        for i in range(start, start + count):
            o = json.loads(raw)
            md = o.setdefault("metadata", {})
            md["name"] = "%s-%0*d" % (prefix, width, i)
            if b.get("namespace"):
                md["namespace"] = b["namespace"]
            md.pop("uid", None)
            objs.append(DEFAULTERS[resource](o, ts))
        self.store.put_many(resource, objs)
        return {"created": len(objs), "first": summary(objs[0]) if objs else None,
                "last": summary(objs[-1]) if objs else None}

    def restart(self, ns, name, b):
        store = self.store
        container = b.get("container")
        if not container:
            raise AdminError(400, "restart needs \"container\"")
        with store.cond:
            cur = store.objects["pods"].get("%s/%s" % (ns, name))
            if cur is None:
                raise AdminError(404, "pod %s/%s not found" % (ns, name))
            pod = copy.deepcopy(cur)
            status = pod.setdefault("status", {})
            st = None
            for key in ("containerStatuses", "initContainerStatuses"):
                for s in status.get(key) or []:
                    if s.get("name") == container:
                        st = s
            if st is None:
                raise AdminError(404, "pod %s/%s has no status for container %s"
                                 % (ns, name, container))
            ts = now_time()
            state = st.get("state") or {}
            started = b.get("startedAt") or (state.get("running") or {}).get("startedAt") or (
                state.get("terminated") or {}).get("startedAt") or pod["metadata"].get(
                "creationTimestamp")
            term = {"exitCode": int(b.get("exitCode", 1)),
                    "reason": b.get("reason") or "Error"}
            if b.get("signal") is not None:
                term["signal"] = int(b["signal"])
            if b.get("message"):
                term["message"] = b["message"]
            term["startedAt"] = started
            term["finishedAt"] = b.get("finishedAt") or ts
            term["containerID"] = st.get("containerID") or _container_id()
            st["lastState"] = {"terminated": term}
            st["restartCount"] = int(st.get("restartCount", 0)) + 1
            if b.get("waiting"):
                backoff = min(10 * (2 ** (st["restartCount"] - 1)), 300)
                st["state"] = {"waiting": {
                    "reason": "CrashLoopBackOff",
                    "message": "back-off %s restarting failed container=%s pod=%s_%s(%s)"
                               % (go_duration(backoff), container, name, ns,
                                  pod["metadata"]["uid"])}}
                st["ready"] = False
                st["started"] = False
            else:
                st["state"] = {"running": {"startedAt": ts}}
                st["containerID"] = _container_id()
                st["ready"] = True
                st["started"] = True
            self._recompute_ready(pod, ts)
            uid = pod["metadata"]["uid"]
            logs = store.logs.setdefault((uid, container), {"current": [], "previous": []})
            if b.get("logs") is not None:
                logs["previous"] = log_lines(b["logs"])
            else:
                logs["previous"] = logs.get("current") or []
            logs["current"] = []
            store.put("pods", pod)
            return ApiHandler.full("pods", pod)

    @staticmethod
    def _recompute_ready(pod, ts):
        status = pod["status"]
        cs = status.get("containerStatuses") or []
        unready = [s["name"] for s in cs if not s.get("ready")]
        ready = not unready and status.get("phase") == "Running"
        for c in status.get("conditions") or []:
            if c.get("type") in ("Ready", "ContainersReady"):
                want = "True" if ready else "False"
                if c.get("status") != want:
                    c["status"] = want
                    c["lastTransitionTime"] = ts
                if ready:
                    c.pop("reason", None)
                    c.pop("message", None)
                else:
                    c["reason"] = "ContainersNotReady"
                    c["message"] = "containers with unready status: [%s]" % " ".join(unready)

    def set_logs(self, b):
        store = self.store
        for f in ("namespace", "pod", "container", "text"):
            if f not in b:
                raise AdminError(400, "logs body needs \"%s\"" % f)
        with store.lock:
            pod = store.objects["pods"].get("%s/%s" % (b["namespace"], b["pod"]))
            if pod is None:
                raise AdminError(404, "pod %s/%s not found" % (b["namespace"], b["pod"]))
            uid = pod["metadata"]["uid"]
            logs = store.logs.setdefault((uid, b["container"]), {"current": [], "previous": []})
            which = "previous" if b.get("previous") else "current"
            lines = log_lines(b["text"])
            if b.get("append"):
                logs[which] = logs[which] + lines
            else:
                logs[which] = lines
            return {"lines": len(logs[which])}

    # ---- faults and config ----

    def fault(self, b):
        store = self.store
        t = b.get("type")
        now = time.monotonic()
        with store.cond:
            if t == "drop_watches":
                for w in store.watchers:
                    w.dropped = True
                n = len(store.watchers)
                store.cond.notify_all()
                return {"dropped": n}
            if t == "cut_watches":
                # the connection breaks in the middle of a JSON line
                cut = b.get("text", '{"type":"MODIFIED","object":{"kind":"Pod","metadata":{')
                for w in store.watchers:
                    w.cut = cut.encode()
                    w.dropped = True
                n = len(store.watchers)
                store.cond.notify_all()
                return {"cut": n}
            if t == "stall_watches":
                store.stall_until = now + float(b.get("seconds", 5))
                store.cond.notify_all()
                return {"stalled_for": float(b.get("seconds", 5))}
            if t == "http_error":
                st = int(b.get("status", 500))
                try:
                    path_re = re.compile(b["path_regex"]) if b.get("path_regex") else None
                    query_re = re.compile(b["query_regex"]) if b.get("query_regex") else None
                except re.error as e:
                    raise AdminError(400, "bad regex: %s" % e) from None
                store.http_errors.append({
                    "status": st, "count": int(b.get("count", 1)), "path_re": path_re,
                    "query_re": query_re, "method": b.get("method"),
                    "retry_after": b.get("retry_after"), "plain_text": b.get(
                        "plain_text", True if st == 429 else False),
                    "message": b.get("message"), "reason": b.get("reason"),
                    "location": b.get("location")})
                return {"queued": len(store.http_errors)}
            if t == "slow_requests":
                try:
                    path_re = re.compile(b.get("path_regex") or ".")
                except re.error as e:
                    raise AdminError(400, "bad regex: %s" % e) from None
                store.slow.append({"seconds": float(b.get("seconds", 1)),
                                   "count": int(b.get("count", 1)), "path_re": path_re})
                return {"queued": len(store.slow)}
            if t == "malformed_line":
                line = (b.get("text", "{not json") + "\n").encode()
                for w in store.watchers:
                    w.prefixes.append(line)
                return {"watches": len(store.watchers)}
            if t == "oversize_line":
                n = int(b.get("bytes", 1 << 20))
                head = b'{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1",' \
                       b'"metadata":{"name":"'
                line = (head + b"x" * max(0, n - len(head)))[:n] + b"\n"
                for w in store.watchers:
                    w.prefixes.append(line)
                return {"watches": len(store.watchers)}
            if t == "forbid":
                verb, res = b.get("verb"), b.get("resource")
                if verb not in ("get", "list", "watch", "create", "update") or (
                        res not in RESOURCES and res != "pods/log"):
                    raise AdminError(400, "forbid needs verb get|list|watch|create|update and "
                                     "a served resource (%s, pods/log)"
                                     % "|".join(sorted(RESOURCES)))
                store.forbids.append({"verb": verb, "resource": res,
                                      "namespace": b.get("namespace")})
                return {"forbids": len(store.forbids)}
            if t == "refuse_connections":
                store.refuse_until = now + float(b.get("seconds", 5))
                return {"refusing_for": float(b.get("seconds", 5))}
            if t == "short_watches":
                store.short_watches = int(b.get("count", 1))
                return {"short_watches": store.short_watches}
            if t == "clear":
                store.stall_until = 0.0
                store.refuse_until = 0.0
                store.http_errors = []
                store.slow = []
                store.forbids = []
                store.short_watches = 0
                for w in store.watchers:
                    w.prefixes = []
                store.cond.notify_all()
                return {}
        raise AdminError(400, "unknown fault type %r" % t)

    def set_config(self, b):
        store = self.store
        cfg = store.config
        if not isinstance(b, dict):
            raise AdminError(400, "config body must be an object")
        for k, v in b.items():
            if k == "token":
                if not isinstance(v, str) or not v or any(c.isspace() for c in v):
                    raise AdminError(400, "token must be a non-empty string without spaces")
                write_atomic(store.token_path, v.encode())
                store.token = v
            elif k in Config.NUMERIC:
                setattr(cfg, k, float(v))
            elif k in Config.INTS:
                setattr(cfg, k, int(v))
            elif k in Config.BOOLS:
                if not isinstance(v, bool):
                    raise AdminError(400, "config %s must be a boolean" % k)
                setattr(cfg, k, v)
            elif k in Config.STRINGS:
                setattr(cfg, k, str(v))
            else:
                raise AdminError(400, "unknown config key %r" % k)
        with store.cond:
            store.cond.notify_all()
        return cfg.as_dict()


# --------------------------------------------------------------------------------------------
# startup: the server plumbing here (TlsHttpServer, TlsHandlerMixin, server_ssl_context,
# kubeconfig_text, serve_in_threads, wait_for_stop_signal) is shared with the benchmarks'
# servers (bench/benchserver.py, bench/latency_server.py import this module)


class TlsHttpServer(http.server.ThreadingHTTPServer):
    """A threading HTTP server on which the TLS handshake (ssl_ctx; None: plain HTTP) happens
    in the handler thread, never in the accept loop. `state` is what its handlers serve."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, handler, state=None, ssl_ctx=None):
        super().__init__(addr, handler)
        self.state = state
        self.ssl_ctx = ssl_ctx

    def accepted(self):
        """Called for each accepted connection (a subclass may count them)."""

    def get_request(self):
        sock, addr = super().get_request()
        self.accepted()
        if self.ssl_ctx is not None:
            sock = self.ssl_ctx.wrap_socket(sock, server_side=True,
                                            do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request, client_address):
        LOG.info("error on connection %s: %s", client_address, sys.exc_info()[1])


class Server(TlsHttpServer):
    def __init__(self, addr, handler, store, ssl_ctx=None):
        super().__init__(addr, handler, store, ssl_ctx)
        self.store = store


def server_ssl_context(state_dir, minimum_tls12=True):
    """The TLS context of a server whose server.crt and server.key (testtls.make_certs) are in
    state_dir."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    if minimum_tls12:
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(os.path.join(state_dir, "server.crt"),
                        os.path.join(state_dir, "server.key"))
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def kubeconfig_text(server_url, ca_path, token_path, name="fake", namespace="default"):
    q = json.dumps
    lines = ["apiVersion: v1", "kind: Config", "clusters:", "- name: %s" % name, "  cluster:",
             "    server: %s" % q(server_url)]
    if ca_path:
        lines.append("    certificate-authority: %s" % q(ca_path))
    lines += ["users:", "- name: %s" % name, "  user:", "    tokenFile: %s" % q(token_path),
              "contexts:", "- name: %s" % name, "  context:", "    cluster: %s" % name,
              "    user: %s" % name]
    if namespace:
        lines.append("    namespace: %s" % namespace)
    lines += ["current-context: %s" % name, "preferences: {}", ""]
    return "\n".join(lines)


def serve_in_threads(servers, poll_interval=0.2):
    for srv in servers:
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": poll_interval},
                         daemon=True).start()


def wait_for_stop_signal(stop=None):
    """Wait until SIGTERM or SIGINT (or until `stop`, a threading.Event, is set otherwise);
    sets `stop` and returns it."""
    stop = stop if stop is not None else threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    while not stop.wait(0.5):
        pass
    return stop


def main(argv=None):
    ap = argparse.ArgumentParser(description="fake Kubernetes API server for tests")
    ap.add_argument("--state-dir", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--admin-port", type=int, default=0)
    ap.add_argument("--token", default=None)
    ap.add_argument("--no-tls", action="store_true")
    ap.add_argument("--start-rv", type=int, default=None, metavar="N",
                    help="start at resourceVersion N (etcd keeps its revision when the API "
                         "server restarts; tests that restart the fake pass the old one)")
    ap.add_argument("--client-ca", default=None, metavar="FILE",
                    help="accept client certificates signed by the CA in FILE as "
                         "authentication (a request with a verified certificate needs no "
                         "token); a certificate from another CA fails the handshake")
    ap.add_argument("--rbac", default=None, metavar="FILE",
                    help="enforce the Role/ClusterRole/RoleBinding/ClusterRoleBinding objects "
                         "in FILE (JSON, or YAML documents as `kubectl kustomize` renders "
                         "them) for the token's user")
    ap.add_argument("--token-subject", default=None, metavar="USER",
                    help="the user the token authenticates as (default: with --rbac, the only "
                         "ServiceAccount subject of the bindings; if there is none, or "
                         "without --rbac, system:serviceaccount:krc:krc)")
    ap.add_argument("--audit-log", default=os.environ.get("FAKEKUBE_AUDIT_LOG"),
                    metavar="FILE", help="append each request's authorization attributes "
                                         "and decision to FILE (JSON lines)")
    ap.add_argument("--log-level", default=os.environ.get("FAKEKUBE_LOG_LEVEL", "INFO"))
    args = ap.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, args.log_level.upper(),
                                                         logging.INFO),
                        format="%(asctime)s fakekube %(levelname)s %(message)s")
    state_dir = os.path.abspath(args.state_dir)
    os.makedirs(state_dir, exist_ok=True)
    ready_path = os.path.join(state_dir, "ready.json")
    if os.path.exists(ready_path):
        os.unlink(ready_path)
    store = Store()
    if args.rbac:
        try:
            store.rbac = Rbac.load(args.rbac)
        except (OSError, ValueError) as e:
            LOG.error("--rbac %s: %s", args.rbac, e)
            return 2
    subject = args.token_subject
    if subject is None and store.rbac is not None:
        sas = store.rbac.service_accounts()
        if len(sas) == 1:
            subject = sas[0]
        elif len(sas) > 1:
            LOG.error("--rbac %s: the bindings name %d service accounts (%s); say which one "
                      "the token is with --token-subject", args.rbac, len(sas),
                      ", ".join(sas))
            return 2
    if subject:
        store.config.user = subject
    store.audit_path = args.audit_log
    if args.start_rv is not None:
        store.rv = max(store.rv, args.start_rv)
    store.token = args.token or secrets.token_urlsafe(32)
    store.token_path = os.path.join(state_dir, "token")
    ssl_ctx = None
    ca_path = None
    if not args.no_tls:
        ca_path = os.path.join(state_dir, "ca.crt")
        if not all(os.path.exists(os.path.join(state_dir, f))
                   for f in ("ca.crt", "server.crt", "server.key")):
            make_certs(state_dir, 'fakekube-ca')  # a restart in the same dir keeps them
        ssl_ctx = server_ssl_context(state_dir)
        if args.client_ca:
            ssl_ctx.verify_mode = ssl.CERT_OPTIONAL
            ssl_ctx.load_verify_locations(args.client_ca)
            store.client_ca = args.client_ca
    api = Server(("127.0.0.1", args.port), ApiHandler, store, ssl_ctx)
    admin = Server(("127.0.0.1", args.admin_port), AdminHandler, store)
    api_port = api.server_address[1]
    admin_port = admin.server_address[1]
    write_atomic(store.token_path, store.token.encode())
    scheme = "http" if args.no_tls else "https"
    write_atomic(os.path.join(state_dir, "kubeconfig"),
                 kubeconfig_text("%s://127.0.0.1:%d" % (scheme, api_port), ca_path,
                                 store.token_path).encode())
    serve_in_threads((api, admin))
    write_atomic(ready_path, json.dumps({"api_port": api_port, "admin_port": admin_port,
                                         "pid": os.getpid()}).encode(), 0o644)
    LOG.info("ready: api %s://127.0.0.1:%d admin http://127.0.0.1:%d state %s", scheme,
             api_port, admin_port, state_dir)
    if store.rbac is not None:
        LOG.info("RBAC enforced for %s (%d objects from %s)", store.config.user,
                 len(store.rbac.objects), args.rbac)
    wait_for_stop_signal()
    LOG.info("shutting down")
    for srv in (api, admin):
        srv.shutdown()
        srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
