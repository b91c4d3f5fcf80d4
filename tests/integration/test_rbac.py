"""Least-privilege RBAC, proven against the enforcing fake API server.

deploy/manifests/rbac.yaml is rendered with `kubectl kustomize deploy/manifests` (as every
integration test does: krc_harness makes each FakeKube enforce it for krc's token).

1. The rendered grants are exactly the minimal set EXPECTED below, bound to the service
   account krc/krc and nothing else.
2. Each grant is needed: for every verb of every rule, and for every whole rule and binding,
   the real `krc run` is started against a fake API server that enforces the rendered RBAC
   minus that one thing, and something the daemon does fails in a way an operator sees (a 403
   in the log and /readyz not ready, a "Collection notes" line in the Slack alert, no
   leadership). The same scenario under the full RBAC (the positive
   control) succeeds, so each case can fail. The cases run in parallel threads, each with its
   own fake API server; one fake Slack serves them all.
3. The fake's authorizer itself: request attributes (verb, subresource, resourceNames from a
   metadata.name field selector), RoleBinding-to-ClusterRole scoping, the exact 403 texts the
   real kube-apiserver writes, and what the real kubectl prints for them.
4. The chart's namespaced variant (plain watchedNamespaces: a Role per namespace) runs the
   real krc against the enforcing fake: both namespaces alerted with logs, events and node,
   no 403, and every pod permission check namespaced.

The minimal set and why each grant is there:

    ClusterRole krc (bound cluster-wide by ClusterRoleBinding krc to ServiceAccount krc/krc)
      ""  pods      watch   the pod watch (streaming list, then WATCH)
      ""  pods      list    paginated LIST when the server refuses the streaming list, relists
      ""  pods      get     the collector GETs the pod when its restart was queued without
                            a copy of it (a pod over the queue's 256 KiB budget) or the copy
                            did not parse; the "recovered" replies need no GET (the watch
                            shows the container run ready)
      ""  pods/log  get     the previous container's log (and the whole log as a file)
      ""  events    list    the pod's events and the node's warning events (in "default")
      ""  nodes     get     the pod's node
      resource.k8s.io resourceclaims get  the restarted pod's DRA ResourceClaims (named in
                            status.resourceClaimStatuses): the devices its containers held;
                            without it the alert's collection notes name the claim
      events.k8s.io events create  the RestartDiagnosed Event on the restarted pod
                            (kubernetesEvents, on by default); without it krc warns once per
                            run, marks the Event failed (no retries) and still alerts Slack
      ""  nodes     list, watch    change tracking (trackChanges, on by default): every node's
                            versions, taints, conditions and driver labels
      apps deployments, replicasets, statefulsets, daemonsets, controllerrevisions
                    list, watch    change tracking: the pod template of every revision and
                            who changed it; without one krc logs which resource it cannot
                            list or watch, says nothing about those changes, stays ready
      batch jobs, cronjobs  list, watch    the same for Jobs and CronJobs
    Role krc-leader-election in namespace krc (RoleBinding krc-leader-election)
      coordination.k8s.io leases create                    the first replica creates the Lease
      coordination.k8s.io leases get, update  (name krc)   read, acquire, renew, release it

    python3 tests/integration/test_rbac.py --krc build/krc [-k Needed]
"""

import concurrent.futures
import copy
import json
import os
import re
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.request

import krc_harness as h
from admin import FakeKube

sys.path.insert(0, os.path.join(h.ROOT, "tests", "fakeslack"))
sys.path.insert(0, os.path.join(h.ROOT, "tests", "fakekube"))
from client import FakeSlack  # noqa: E402
import fakekube  # noqa: E402

SA = "system:serviceaccount:krc:krc"
LEASE_NS = LEASE_NAME = "krc"

# (kind of role, its namespace, apiGroup, resource, verb, resourceNames)
EXPECTED = {
    ("ClusterRole", "", "", "pods", "watch", ()),
    ("ClusterRole", "", "", "pods", "list", ()),
    ("ClusterRole", "", "", "pods", "get", ()),
    ("ClusterRole", "", "", "pods/log", "get", ()),
    ("ClusterRole", "", "", "events", "list", ()),
    ("ClusterRole", "", "", "nodes", "get", ()),
    ("ClusterRole", "", "resource.k8s.io", "resourceclaims", "get", ()),
    ("ClusterRole", "", "events.k8s.io", "events", "create", ()),
    ("ClusterRole", "", "", "nodes", "list", ()),
    ("ClusterRole", "", "", "nodes", "watch", ()),
    ("Role", "krc", "coordination.k8s.io", "leases", "create", ()),
    ("Role", "krc", "coordination.k8s.io", "leases", "get", ("krc",)),
    ("Role", "krc", "coordination.k8s.io", "leases", "update", ("krc",)),
}

# change tracking: (apiGroup, resource) of the watches krc runs with trackChanges
TRACKED = [("apps", r) for r in ("deployments", "replicasets", "statefulsets", "daemonsets",
                                 "controllerrevisions")] + [
    ("batch", "jobs"), ("batch", "cronjobs"), ("", "nodes")]
EXPECTED |= {("ClusterRole", "", g, r, v, ()) for g, r in TRACKED if g
             for v in ("list", "watch")}

SCRUB = {k: None for k in (
    "SLACK_WEBHOOK_URL", "SLACK_CHANNEL", "SLACK_USERNAME", "SLACK_BOT_TOKEN", "SLACK_ICON",
    "CLUSTER_NAME", "MUTE_SECONDS", "KRC_SLACK_API_URL", "KRC_STORM_THRESHOLD",
    "KRC_RECOVERED_AFTER", "WATCHED_NAMESPACES", "IGNORED_NAMESPACES",
    "WATCHED_POD_NAME_PREFIXES", "IGNORED_POD_NAME_PREFIXES", "POD_NAME", "POD_NAMESPACE",
    "KRC_STREAMING_LIST", "KRC_LABEL_SELECTOR", "KRC_LEADER_ELECT", "KRC_LEASE_NAMESPACE",
    "KRC_LEASE_NAME", "KRC_LEASE_DURATION", "KRC_LEASE_RENEW_DEADLINE",
    "KRC_LEASE_RETRY_PERIOD", "KRC_TRACK_CHANGES", "KRC_TRACK_CONFIG_CHANGES")}


def grants(objects):
    """Every (kind, namespace, apiGroup, resource, verb, resourceNames) the roles grant."""
    out = set()
    for o in objects:
        if o["kind"] not in ("Role", "ClusterRole"):
            continue
        ns = o["metadata"].get("namespace", "") if o["kind"] == "Role" else ""
        for r in o.get("rules") or []:
            for g in r.get("apiGroups") or [None]:
                for res in r.get("resources") or [None]:
                    for v in r["verbs"]:
                        out.add((o["kind"], ns, g, res, v, tuple(r.get("resourceNames") or ())))
    return out


def without_verb(objects, grant):
    """A copy of the RBAC objects with one verb of one resource removed (the rule is split
    when it names several resources; dropped when nothing is left)."""
    kind, ns, group, res, verb, names = grant
    out = copy.deepcopy(objects)
    for o in out:
        if o["kind"] != kind or (kind == "Role" and o["metadata"].get("namespace") != ns):
            continue
        rules = []
        for r in o["rules"]:
            if (group in r.get("apiGroups", []) and res in r.get("resources", []) and
                    verb in r["verbs"] and tuple(r.get("resourceNames") or ()) == names):
                rest = [x for x in r["resources"] if x != res]
                if rest:
                    rules.append(dict(r, resources=rest))
                if len(r["verbs"]) > 1:
                    rules.append(dict(r, resources=[res],
                                      verbs=[x for x in r["verbs"] if x != verb]))
            else:
                rules.append(r)
        o["rules"] = rules
    assert grants(out) == grants(objects) - {grant}, "removing %s went wrong" % (grant,)
    return out


def without_rule(objects, kind, index):
    out = copy.deepcopy(objects)
    for o in out:
        if o["kind"] == kind:
            del o["rules"][index]
    return out


def without_object(objects, kind):
    return [o for o in copy.deepcopy(objects) if o["kind"] != kind]


def http_get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return 0, str(e)


# --------------------------------------------------------------------------------------------
# scenarios: each runs krc against a fake that enforces `objects` and returns what it saw


class Run:
    """One fake API server enforcing `objects`, one krc; collects observations."""

    def __init__(self, case, objects, slack):
        self.case = case
        self.objects = objects
        self.slack = slack
        self.kube = None
        self.krc = None
        self.port = None
        self.obs = {"case": case}

    def __enter__(self):
        self.kube = FakeKube(rbac=self.objects)
        self.kube.start()
        self.kube.config(bookmark_interval=1)
        return self

    def __exit__(self, *exc):
        try:
            if self.krc is not None:
                self.obs["log"] = self.krc.tail(40)
                self.krc.kill()
            self.obs["used"] = [r["authz"] for r in self.kube.requests()
                                if r.get("authz") and r["authz"]["allowed"] and
                                "resource" in r["authz"]]
        finally:
            self.kube.stop()
        return False

    def start_krc(self, env, args=()):
        full = dict(SCRUB)
        full.update(env)
        self.krc = h.Krc(self.kube.kubeconfig, ["--watch-idle-timeout", "3s"] + list(args),
                         full)
        line = self.krc.wait_log("health and metrics on")[0]["msg"]
        self.port = int(re.search(r"\(port (\d+)\)", line).group(1))

    def wait_synced_or_forbidden(self, timeout=15.0):
        """True once the pod watch synced, False once krc logged a 403 for it instead."""
        def pods_refused():  # the pod watch's, not change tracking's
            return [x["msg"] for x in self.krc.logs(contains="403 Forbidden")
                    if 'resource "pods"' in x["msg"]]

        def done():
            if self.krc.logs(contains="pod sync complete"):
                return "synced"
            if pods_refused():
                return "forbidden"
            return None
        state = h.wait_until(done, timeout * h.SLOWDOWN, what="sync or a 403 (log:\n%s)"
                             % self.krc.tail())
        if state == "forbidden":
            self.obs["forbidden_log"] = pods_refused()
            # readiness reflects the failing watch: wait for the probe to say so
            try:
                h.wait_until(lambda: http_get(self.port, "/readyz")[0] == 503, 5 * h.SLOWDOWN,
                             what="/readyz 503")
            except AssertionError:
                pass
        self.obs["readyz"] = http_get(self.port, "/readyz")
        self.obs["synced"] = state == "synced"
        return state == "synced"

    def wait_kube_event(self, ns):
        """The answers to krc's POSTs of the RestartDiagnosed Event (events.k8s.io/v1) in ns,
        once there is one, and krc's warnings about them."""
        path = "/apis/events.k8s.io/v1/namespaces/%s/events" % ns

        def posts():
            return [r["status"] for r in self.kube.requests()
                    if r["method"] == "POST" and r["path"] == path]
        h.wait_until(posts, 30 * h.SLOWDOWN, what="a POST of the Kubernetes Event (log:\n%s)"
                     % self.krc.tail())
        # a refused one is not retried: give a retry the time it would take (backoff 1 s)
        if posts() != [201]:
            time.sleep(2 * h.SLOWDOWN)
        self.obs["event_posts"] = posts()
        self.obs["event_warnings"] = [x["msg"] for x in self.krc.logs(
            contains="Kubernetes Events: krc may not create events")]

    def forbidden_requests(self):
        return [r["authz"] for r in self.kube.requests()
                if r["status"] == 403 and r.get("authz") and not r["authz"]["allowed"]]


def add_claimed_gpu(kube, ns, pod):
    """The pod holds a DRA claim: spec.resourceClaims + status.resourceClaimStatuses naming
    the ResourceClaim <pod>-gpu-0, which the API serves (resource.k8s.io/v1)."""
    claim = pod + "-gpu-0"
    kube.update_pod(ns, pod, {
        "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]},
        "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": claim}]}})
    kube.add_resource_claim({
        "metadata": {"name": claim, "namespace": ns},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.example.com"}}]}},
        "status": {"allocation": {"devices": {"results": [{
            "request": "gpu", "driver": "gpu.example.com", "pool": "fake-node-1",
            "device": "gpu-0"}]}}}})
    return claim


def scenario_collect(case, objects, slack, streaming_list=True):
    """A restart with pod events, a node, a node warning event, a previous log and a DRA
    ResourceClaim, alerted through a webhook: the message shows every part (or a note saying
    why not)."""
    with Run(case, objects, slack) as run:
        kube = run.kube
        if not streaming_list:
            kube.config(streaming_list=False)
        kube.add_node("fake-node-1")
        kube.add_event(namespace="default", involvedObject={
            "kind": "Node", "name": "fake-node-1", "uid": "fake-node-1"},
            reason="NodeHasDiskPressure", message="disk pressure on fake-node-1",
            type="Warning", source={"component": "kubelet", "host": "fake-node-1"})
        pod = kube.create_pod("shop", "web-1")
        kube.add_pod_event(pod, "BackOff", "Back-off restarting failed container app",
                           container="app")
        add_claimed_gpu(kube, "shop", "web-1")
        webhook = slack.webhook_url("rbac-" + case)
        run.start_krc({"SLACK_WEBHOOK_URL": webhook, "MUTE_SECONDS": "0"})
        if not run.wait_synced_or_forbidden():
            run.obs["forbidden"] = run.forbidden_requests()
            return run.obs
        kube.restart("shop", "web-1", "app", exit_code=137, reason="OOMKilled",
                     logs="allocating buffer\nboom: out of memory\n")
        path = slack.webhook_path("rbac-" + case)
        msgs = slack.wait_messages(1, timeout=30 * h.SLOWDOWN, webhook=path)
        run.obs["message"] = json.dumps(msgs[0]["body"], ensure_ascii=False)
        run.wait_kube_event("shop")
        run.obs["forbidden"] = run.forbidden_requests()
        return run.obs


def scenario_list(case, objects, slack):
    """A server without the streaming list (WatchList off, as before 1.32): krc syncs with a
    paginated LIST."""
    return scenario_collect(case, objects, slack, streaming_list=False)


def scenario_pod_get(case, objects, slack):
    """A pod whose JSON is larger than the 256 KiB of pod copies krc's queue holds: its restart
    is queued without a copy and the worker GETs the pod; the alert shows the pod's details."""
    with Run(case, objects, slack) as run:
        kube = run.kube
        kube.add_node("fake-node-1")
        kube.create_pod("shop", "big-0", annotations={"example.com/blob": "x" * 300000})
        webhook = slack.webhook_url("rbac-" + case)
        run.start_krc({"SLACK_WEBHOOK_URL": webhook, "MUTE_SECONDS": "0"})
        if not run.wait_synced_or_forbidden():
            run.obs["forbidden"] = run.forbidden_requests()
            return run.obs
        kube.restart("shop", "big-0", "app", exit_code=1, logs="oops\n")
        path = slack.webhook_path("rbac-" + case)
        msgs = slack.wait_messages(1, timeout=30 * h.SLOWDOWN, webhook=path)
        run.obs["message"] = json.dumps(msgs[0]["body"], ensure_ascii=False)
        run.obs["pod_gets"] = len([r for r in kube.requests()
                                   if r["path"] == "/api/v1/namespaces/shop/pods/big-0"])
        run.obs["forbidden"] = run.forbidden_requests()
        return run.obs


def scenario_recovered(case, objects, slack):
    """Web API mode: after the alert, the watch shows the container running ready for
    recoveredAfter (1 s) and krc replies "recovered" in the thread, without a GET of the pod."""
    with Run(case, objects, slack) as run:
        kube = run.kube
        kube.add_node("fake-node-1")
        kube.create_pod("shop", "api-0")
        channel = "rbac-" + case
        run.start_krc({"SLACK_BOT_TOKEN": slack.token, "SLACK_CHANNEL": "#" + channel,
                       "KRC_SLACK_API_URL": slack.api_url, "KRC_RECOVERED_AFTER": "1s",
                       "MUTE_SECONDS": "600"})
        if not run.wait_synced_or_forbidden():
            return run.obs
        kube.restart("shop", "api-0", "app", exit_code=1, logs="oops\n")  # runs ready again
        parent = slack.wait_for(
            lambda: [m for m in slack.messages(kind="chat.postMessage")
                     if (m.get("channel") or "").lstrip("#") == channel],
            30 * h.SLOWDOWN, what="the alert in #" + channel)[0]

        def posts():  # the alert and the replies in its thread (addressed by channel id)
            return [m for m in slack.messages(kind="chat.postMessage")
                    if m.get("channel_id") == parent["channel_id"]]
        h.wait_until(lambda: len(posts()) >= 2, 30 * h.SLOWDOWN, what="a recovered reply")
        run.obs["recovered"] = "recovered"
        run.obs["replies"] = len(posts()) - 1
        run.obs["pod_gets"] = len([r for r in kube.requests()
                                   if r["path"] == "/api/v1/namespaces/shop/pods/api-0"])
        run.obs["forbidden"] = run.forbidden_requests()
        return run.obs


def scenario_leader(case, objects, slack):
    """krc run --leader-elect with the Lease krc/krc: it creates the Lease, becomes the
    leader, watches, and keeps renewing."""
    with Run(case, objects, slack) as run:
        kube = run.kube
        kube.create_pod("shop", "web-1")
        run.start_krc({"POD_NAME": "krc-0", "POD_NAMESPACE": LEASE_NS},
                      ["--leader-elect", "--lease-duration", "3s", "--lease-renew-deadline",
                       "2s", "--lease-retry-period", "1s"])
        lease_reqs = "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % LEASE_NS

        def outcome():
            reqs = [r for r in kube.requests() if r["path"].startswith(lease_reqs)]
            renewals = [r for r in reqs if r["method"] == "PUT" and r["status"] == 200]
            if (run.krc.logs(contains="became the leader") and len(renewals) >= 2 and
                    run.krc.logs(contains="pod sync complete")):
                return "leading"
            refused = [x for x in run.krc.logs(contains="leader election")
                       if "forbidden" in x["msg"]]
            if [r for r in reqs if r["status"] == 403] and (run.krc.exited() or refused):
                # refused; a refused renewal must end the leadership within the deadline
                if not run.krc.logs(contains="became the leader") or run.krc.exited() or \
                        run.krc.logs(contains="stopping"):
                    return "refused"
            return None
        run.obs["leader"] = h.wait_until(outcome, 20 * h.SLOWDOWN,
                                         what="leadership or a refused Lease request (log:\n"
                                              "%s)" % run.krc.tail())
        run.obs["leader_log"] = [x["msg"] for x in run.krc.logs(contains="leader election")]
        run.obs["exited"] = run.krc.exited()
        run.obs["forbidden"] = run.forbidden_requests()
        try:
            run.obs["holder"] = kube.get_lease(LEASE_NS, LEASE_NAME)["spec"].get(
                "holderIdentity")
        except Exception:  # noqa: BLE001 - no Lease at all
            run.obs["holder"] = None
        return run.obs


def scenario_track(case, objects, slack):
    """Change tracking: a Deployment, a StatefulSet, a DaemonSet, a CronJob and a node; krc
    lists and watches each tracked resource (its log says when each has synced), and a
    resource it may not list or watch is named in its log while the pod watch, and /readyz,
    are unaffected."""
    with Run(case, objects, slack) as run:
        kube = run.kube
        # without the streaming list (a WATCH), so that both list and watch are needed
        kube.config(streaming_list=False)
        kube.add_node("fake-node-1")
        kube.deployment("shop", "api", ["app"], replicas=1)
        kube.statefulset("shop", "db", ["pg"])
        kube.daemonset("shop", "agent", ["agent"])
        kube.cronjob("shop", "report", ["r"])
        run.start_krc({})
        names = [r for _, r in TRACKED]

        def state():
            synced = {r for r in names
                      if run.krc.logs(contains="change tracking: %s (all namespaces) synced" % r)}
            # what an operator sees (the retries after the first are logged at debug level)
            refused = [x["msg"] for x in run.krc.logs(contains="forbidden")
                       if x.get("level") != "debug" and
                       any('resource "%s"' % r in x["msg"] for r in names)]
            pods = bool(run.krc.logs(contains="pod sync complete"))
            if not pods or not (len(synced) == len(names) or refused):
                return None
            # a WATCH refused after its LIST synced shows a moment later: give it the time
            if run.t_done is None:
                run.t_done = time.time() + 3 * h.SLOWDOWN
            return (synced, refused) if time.time() >= run.t_done else None
        run.t_done = None
        synced, refused = h.wait_until(state, 30 * h.SLOWDOWN,
                                       what="the tracked resources synced or refused (log:\n%s)"
                                       % run.krc.tail())
        run.obs["track_synced"] = sorted(synced)
        run.obs["track_refused"] = refused
        run.obs["readyz"] = http_get(run.port, "/readyz")
        run.obs["forbidden"] = run.forbidden_requests()
        return run.obs


# --------------------------------------------------------------------------------------------
# what each run must show

def text_of(obs):
    return obs.get("message", "")


def expect_collect_ok(t, obs):
    t.assertTrue(obs["synced"], "krc did not sync under the full RBAC: %s" % obs)
    msg = text_of(obs)
    # pod events and the node were read: no collection note says otherwise (below); the
    # pod's BackOff event is the kubelet's boilerplate, which the message leaves out
    t.assertNotIn("Back-off restarting failed container app", msg)
    t.assertIn("disk pressure on fake-node-1", msg)                    # node events
    t.assertIn("*Node* fake-node-1", msg)                              # the node
    t.assertIn("boom: out of memory", msg)                             # the previous log
    t.assertNotIn("Collection notes", msg)
    t.assertEqual(obs["forbidden"], [])
    t.assertEqual(obs["event_posts"], [201], "the Kubernetes Event was not created")
    t.assertEqual(obs["event_warnings"], [])


def expect_no_kube_event(t, obs):
    """Without create on events.k8s.io events: one clear warning, one refused POST (no retry
    storm), and the Slack alert is complete all the same."""
    t.assertTrue(obs["synced"], obs)
    t.assertNotIn("Collection notes", text_of(obs))
    t.assertIn("boom: out of memory", text_of(obs))
    t.assertEqual(obs["event_posts"], [403])
    t.assertEqual(len(obs["event_warnings"]), 1, obs["event_warnings"])
    w = obs["event_warnings"][0]
    for needle in ('namespace "shop"', '"create"', '"events"', '"events.k8s.io"',
                   "kubernetesEvents: false"):
        t.assertIn(needle, w)
    t.assertEqual(obs["forbidden"], [{"verb": "create", "apiGroup": "events.k8s.io",
                                      "resource": "events", "subresource": "",
                                      "namespace": "shop", "name": "", "allowed": False}])


def expect_not_synced(verb, t, obs, resource="pods"):
    t.assertFalse(obs["synced"], "krc synced without %s %s: %s" % (verb, resource, obs))
    lines = "\n".join(obs["forbidden_log"])
    t.assertIn("forbidden: cannot %s %s at cluster scope" % (verb, resource), lines)
    t.assertIn('User "%s" cannot %s resource "%s" in API group "" at the cluster scope'
               % (SA, verb, resource), lines)
    t.assertEqual(obs["readyz"][0], 503, "/readyz while the watch is refused: %s"
                  % (obs["readyz"],))


def expect_note(t, obs, *needles):
    t.assertTrue(obs["synced"], obs)
    msg = text_of(obs)
    t.assertIn("Collection notes", msg)
    for n in needles:
        t.assertIn(n.replace('"', '\\"'), msg)


def expect_no_logs(t, obs):
    expect_note(t, obs, 'previous log unavailable: pods "web-1" is forbidden: User "%s" cannot '
                'get resource "pods/log" in API group "" in the namespace "shop"' % SA)
    t.assertNotIn("boom: out of memory", text_of(obs))


def expect_no_events(t, obs):
    expect_note(t, obs, 'pod events unavailable: events is forbidden: User "%s" cannot list '
                'resource "events" in API group "" in the namespace "shop"' % SA,
                'node events unavailable: events is forbidden: User "%s" cannot list '
                'resource "events" in API group "" in the namespace "default"' % SA)
    t.assertNotIn("Back-off restarting", text_of(obs))


def expect_no_node(t, obs):
    expect_note(t, obs, 'node fake-node-1 unavailable: nodes "fake-node-1" is forbidden: User '
                '"%s" cannot get resource "nodes" in API group "" at the cluster scope' % SA)


def expect_list_ok(t, obs):
    expect_collect_ok(t, obs)


def expect_recovered(t, obs):
    t.assertEqual(obs.get("recovered"), "recovered", obs)
    t.assertEqual(obs["replies"], 1, obs)
    t.assertEqual(obs["pod_gets"], 0, "the recovered reply needs no GET of the pod")
    t.assertEqual(obs["forbidden"], [])


def expect_pod_got(t, obs):
    t.assertTrue(obs["synced"], obs)
    t.assertGreaterEqual(obs["pod_gets"], 1, "the pod was not fetched: %s" % obs)
    msg = text_of(obs)
    t.assertIn("shop/big-0", msg)
    t.assertNotIn("Collection notes", msg)
    t.assertEqual(obs["forbidden"], [])


def expect_no_pod(t, obs):
    expect_note(t, obs, "pod details unavailable: GET /api/v1/namespaces/shop/pods/big-0: 403",
                'pods "big-0" is forbidden: User "%s" cannot get resource "pods" in API group "" '
                'in the namespace "shop"' % SA)
    t.assertIn({"verb": "get", "apiGroup": "", "resource": "pods", "subresource": "",
                "namespace": "shop", "name": "big-0", "allowed": False}, obs["forbidden"])


def expect_no_claim(t, obs):
    expect_note(t, obs, "ResourceClaim web-1-gpu-0 not readable (403: krc needs get on "
                "resourceclaims.resource.k8s.io): resourceclaims.resource.k8s.io \"web-1-gpu-0\" "
                "is forbidden: User \"%s\" cannot get resource \"resourceclaims\" in API group "
                "\"resource.k8s.io\" in the namespace \"shop\"" % SA)
    t.assertIn("boom: out of memory", text_of(obs))  # the rest is all there
    t.assertEqual(obs["forbidden"], [{"verb": "get", "apiGroup": "resource.k8s.io",
                                      "resource": "resourceclaims", "subresource": "",
                                      "namespace": "shop", "name": "web-1-gpu-0",
                                      "allowed": False}])


def expect_tracking(t, obs):
    t.assertEqual(obs["track_synced"], sorted(r for _, r in TRACKED), obs)
    t.assertEqual(obs["track_refused"], [])
    t.assertEqual(obs["readyz"][0], 200, obs["readyz"])
    t.assertEqual(obs["forbidden"], [])


def expect_not_tracked(verb, group, resource, t, obs):
    """krc names what it may not do (once: the retries are quiet); the rest of change
    tracking, the pod watch and /readyz carry on."""
    needle = 'cannot %s resource "%s" in API group "%s" at the cluster scope' % (
        verb, resource, group)
    t.assertEqual(len([x for x in obs["track_refused"] if needle in x]), 1, obs["track_refused"])
    if verb == "list":
        t.assertNotIn(resource, obs["track_synced"])
    others = {r for _, r in TRACKED} - {resource}
    t.assertLessEqual(others, set(obs["track_synced"]))
    t.assertEqual(obs["readyz"][0], 200, "change tracking must not make /readyz fail: %s"
                  % (obs["readyz"],))
    t.assertTrue(all(f["resource"] == resource and f["verb"] == verb
                     for f in obs["forbidden"]), obs["forbidden"])


def expect_leading(t, obs):
    t.assertEqual(obs["leader"], "leading", obs)
    t.assertEqual(obs["holder"], "krc-0")
    t.assertEqual(obs["forbidden"], [])


def expect_no_lead(verb, t, obs):
    t.assertEqual(obs["leader"], "refused", obs)
    t.assertTrue([f for f in obs["forbidden"] if f.get("resource") == "leases" and
                  f["verb"] == verb], obs["forbidden"])
    log = "\n".join(obs["leader_log"])
    t.assertIn("cannot %s leases" % verb, log)
    t.assertIn('in namespace "%s"' % LEASE_NS, log)
    if verb == "update":
        # it created the Lease and led, but could not renew: it must give up leading
        t.assertTrue(obs["exited"] or "stopping" in log or "lost" in log, obs)


SCENARIOS = {"collect": scenario_collect, "list": scenario_list, "podget": scenario_pod_get,
             "recovered": scenario_recovered, "leader": scenario_leader, "track": scenario_track}

# each grant -> (the scenario that needs it, what its absence must look like)
NEEDED_BY = {
    ("ClusterRole", "", "", "pods", "watch", ()): (
        "collect", lambda t, o: expect_not_synced("watch", t, o)),
    ("ClusterRole", "", "", "pods", "list", ()): (
        "list", lambda t, o: expect_not_synced("list", t, o)),
    ("ClusterRole", "", "", "pods", "get", ()): ("podget", expect_no_pod),
    ("ClusterRole", "", "", "pods/log", "get", ()): ("collect", expect_no_logs),
    ("ClusterRole", "", "", "events", "list", ()): ("collect", expect_no_events),
    ("ClusterRole", "", "", "nodes", "get", ()): ("collect", expect_no_node),
    ("ClusterRole", "", "resource.k8s.io", "resourceclaims", "get", ()): (
        "collect", expect_no_claim),
    ("ClusterRole", "", "events.k8s.io", "events", "create", ()): (
        "collect", expect_no_kube_event),
    ("Role", "krc", "coordination.k8s.io", "leases", "create", ()): (
        "leader", lambda t, o: expect_no_lead("create", t, o)),
    ("Role", "krc", "coordination.k8s.io", "leases", "get", ("krc",)): (
        "leader", lambda t, o: expect_no_lead("get", t, o)),
    ("Role", "krc", "coordination.k8s.io", "leases", "update", ("krc",)): (
        "leader", lambda t, o: expect_no_lead("update", t, o)),
}
for _g, _r in TRACKED:
    for _v in ("list", "watch"):
        NEEDED_BY[("ClusterRole", "", _g, _r, _v, ())] = (
            "track", lambda t, o, v=_v, g=_g, r=_r: expect_not_tracked(v, g, r, t, o))
POSITIVE = {"collect": expect_collect_ok, "list": expect_list_ok, "podget": expect_pod_got,
            "recovered": expect_recovered, "leader": expect_leading, "track": expect_tracking}


def case_name(grant):
    kind, _, _, res, verb, _ = grant
    return "%s-%s-%s" % (kind.lower(), verb, res.replace("/", "-"))


class RenderedRules(unittest.TestCase):
    """The shipped RBAC is exactly the minimal set, bound to krc's service account only."""

    @classmethod
    def setUpClass(cls):
        cls.objects = h.shipped_rbac_objects()

    def test_grants_are_exactly_the_minimal_set(self):
        got = grants(self.objects)
        self.assertEqual(got - EXPECTED, set(), "granted but not needed")
        self.assertEqual(EXPECTED - got, set(), "needed but not granted")

    def test_no_wildcards_secrets_or_non_resource_urls(self):
        for o in self.objects:
            for r in o.get("rules") or []:
                self.assertNotIn("nonResourceURLs", r)
                for key in ("apiGroups", "resources", "verbs", "resourceNames"):
                    self.assertNotIn("*", r.get(key) or [], "%s in %s" % (key, o["kind"]))
                self.assertNotIn("secrets", r["resources"])
                self.assertNotIn("configmaps", r["resources"])

    def test_bindings_name_only_krc(self):
        kinds = sorted(o["kind"] for o in self.objects)
        self.assertEqual(kinds, ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"])
        by_kind = {o["kind"]: o for o in self.objects}
        subj = [{"kind": "ServiceAccount", "name": "krc", "namespace": "krc"}]
        crb, rb = by_kind["ClusterRoleBinding"], by_kind["RoleBinding"]
        self.assertEqual(crb["subjects"], subj)
        self.assertEqual(rb["subjects"], subj)
        self.assertEqual(crb["roleRef"], {"apiGroup": "rbac.authorization.k8s.io",
                                          "kind": "ClusterRole",
                                          "name": by_kind["ClusterRole"]["metadata"]["name"]})
        self.assertEqual(rb["roleRef"], {"apiGroup": "rbac.authorization.k8s.io",
                                         "kind": "Role",
                                         "name": by_kind["Role"]["metadata"]["name"]})
        self.assertEqual(rb["metadata"]["namespace"], "krc")
        self.assertEqual(by_kind["Role"]["metadata"]["namespace"], "krc")

    def test_the_deployment_runs_as_that_service_account_in_the_lease_namespace(self):
        objs = h.render_manifests()
        (dep,) = [o for o in objs if o["kind"] == "Deployment"]
        self.assertEqual(dep["metadata"]["namespace"], LEASE_NS)
        spec = dep["spec"]["template"]["spec"]
        self.assertEqual(spec["serviceAccountName"], "krc")
        self.assertIs(spec["automountServiceAccountToken"], True)
        env = {e["name"]: e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
               for e in spec["containers"][0]["env"]}
        self.assertEqual(env.get("POD_NAMESPACE"), "metadata.namespace")
        self.assertEqual(env.get("POD_NAME"), "metadata.name")
        (sa,) = [o for o in objs if o["kind"] == "ServiceAccount"]
        self.assertEqual((sa["metadata"]["name"], sa["metadata"]["namespace"]), ("krc", "krc"))

    def test_every_grant_has_a_removal_case(self):
        self.assertEqual(set(NEEDED_BY), grants(self.objects))


class EachGrantIsNeeded(unittest.TestCase):
    """Every case runs once, in parallel, in setUpClass; each test checks one outcome."""

    @classmethod
    def setUpClass(cls):
        cls.objects = h.shipped_rbac_objects()
        cls.slack = FakeSlack()
        cls.slack.start()
        cases = {}
        for name in SCENARIOS:
            cases["full-" + name] = (name, cls.objects)
        for grant, (scen, _) in NEEDED_BY.items():
            cases["without-" + case_name(grant)] = (scen, without_verb(cls.objects, grant))
        # whole rules with several verbs, and the bindings
        pods_rule = [i for o in cls.objects if o["kind"] == "ClusterRole"
                     for i, r in enumerate(o["rules"]) if "pods" in r["resources"]]
        lease_rule = [i for o in cls.objects if o["kind"] == "Role"
                      for i, r in enumerate(o["rules"]) if r.get("resourceNames")]
        cases["without-rule-pods"] = ("collect", without_rule(cls.objects, "ClusterRole",
                                                              pods_rule[0]))
        cases["without-rule-lease-krc"] = ("leader", without_rule(cls.objects, "Role",
                                                                  lease_rule[0]))
        cases["without-clusterrolebinding"] = ("collect", without_object(
            cls.objects, "ClusterRoleBinding"))
        cases["without-rolebinding"] = ("leader", without_object(cls.objects, "RoleBinding"))
        cls.results = {}

        def run(item):
            name, (scen, objs) = item
            try:
                return name, SCENARIOS[scen](name, objs, cls.slack)
            except Exception as e:  # noqa: BLE001 - reported by the test of that case
                return name, e
        workers = 4 if h.SLOWDOWN == 1 else 2
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            for name, res in pool.map(run, sorted(cases.items())):
                cls.results[name] = res

    @classmethod
    def tearDownClass(cls):
        cls.slack.stop()

    def outcome(self, name):
        res = self.results[name]
        if isinstance(res, Exception):
            raise AssertionError("case %s failed to run: %s" % (name, res)) from res
        return res

    def check(self, name, expect):
        obs = self.outcome(name)
        try:
            expect(self, obs)
        except AssertionError as e:
            raise AssertionError("%s\n---- krc log tail of %s ----\n%s"
                                 % (e, name, obs.get("log", ""))) from None

    # positive controls: the scenarios work under the full RBAC
    def test_full_collect(self):
        self.check("full-collect", POSITIVE["collect"])

    def test_full_list(self):
        self.check("full-list", POSITIVE["list"])
        # ... and that run really synced with the paginated LIST
        self.assertIn(("list", "pods"), [(u["verb"], u["resource"])
                                         for u in self.outcome("full-list")["used"]])

    def test_the_positive_runs_use_every_grant(self):
        """Every grant was exercised by krc itself (allowed requests of the full-* runs)."""
        used = [u for name, res in self.results.items() if name.startswith("full-") and
                not isinstance(res, Exception) for u in res.get("used", [])]
        for kind, ns, group, res, verb, names in sorted(EXPECTED):
            with self.subTest(grant=(kind, ns, group, res, verb, names)):
                self.assertTrue([u for u in used if (
                    u["verb"] == verb and u["apiGroup"] == group and
                    u["resource"] + ("/" + u["subresource"] if u["subresource"] else "") == res
                    and (not names or u["name"] in names) and
                    (kind == "ClusterRole" or u["namespace"] == ns))],
                    "krc never used %s %s" % (verb, res))

    def test_full_recovered(self):
        self.check("full-recovered", POSITIVE["recovered"])

    def test_full_podget(self):
        self.check("full-podget", POSITIVE["podget"])

    def test_full_leader(self):
        self.check("full-leader", POSITIVE["leader"])

    def test_full_track(self):
        self.check("full-track", POSITIVE["track"])

    # one grant removed: the daemon visibly fails at what needs it
    def test_without_each_grant(self):
        for grant, (_, expect) in sorted(NEEDED_BY.items()):
            with self.subTest(grant=grant):
                self.check("without-" + case_name(grant), expect)

    def test_without_the_pods_rule(self):
        self.check("without-rule-pods", lambda t, o: expect_not_synced("watch", t, o))

    def test_without_the_named_lease_rule(self):
        self.check("without-rule-lease-krc", lambda t, o: expect_no_lead("get", t, o))

    def test_without_the_cluster_role_binding(self):
        self.check("without-clusterrolebinding",
                   lambda t, o: expect_not_synced("watch", t, o))

    def test_without_the_role_binding(self):
        self.check("without-rolebinding", lambda t, o: expect_no_lead("get", t, o))


class FakeAuthorizer(unittest.TestCase):
    """fakekube's RBAC evaluation follows the real authorizer."""

    def attrs(self, method, url):
        path, _, query = url.partition("?")
        import urllib.parse
        return fakekube.request_attributes(method, path, urllib.parse.parse_qsl(query))

    def test_request_attributes(self):
        cases = [
            ("GET", "/api/v1/pods?watch=true", ("watch", "", "pods", "", "", "")),
            ("GET", "/api/v1/pods?watch=1&sendInitialEvents=true", ("watch", "", "pods", "",
                                                                    "", "")),
            ("GET", "/api/v1/pods?limit=500", ("list", "", "pods", "", "", "")),
            ("GET", "/api/v1/namespaces/a/pods/p", ("get", "", "pods", "", "a", "p")),
            ("HEAD", "/api/v1/namespaces/a/pods/p", ("get", "", "pods", "", "a", "p")),
            ("GET", "/api/v1/namespaces/a/pods/p/log?previous=true",
             ("get", "", "pods", "log", "a", "p")),
            ("GET", "/api/v1/namespaces/a/events?fieldSelector=involvedObject.uid%3Dx",
             ("list", "", "events", "", "a", "")),
            ("GET", "/api/v1/namespaces/a/pods?fieldSelector=metadata.name%3Dp&watch=true",
             ("watch", "", "pods", "", "a", "p")),
            ("GET", "/api/v1/nodes/n1", ("get", "", "nodes", "", "", "n1")),
            ("GET", "/api/v1/namespaces/a", ("get", "", "namespaces", "", "a", "a")),
            ("POST", "/apis/coordination.k8s.io/v1/namespaces/krc/leases",
             ("create", "coordination.k8s.io", "leases", "", "krc", "")),
            ("PUT", "/apis/coordination.k8s.io/v1/namespaces/krc/leases/krc",
             ("update", "coordination.k8s.io", "leases", "", "krc", "krc")),
            ("DELETE", "/api/v1/namespaces/a/pods", ("deletecollection", "", "pods", "", "a",
                                                     "")),
            ("GET", "/api/v1/watch/namespaces/a/pods", ("watch", "", "pods", "", "a", "")),
            ("GET", "/apis/resource.k8s.io/v1/namespaces/a/resourceclaims/c",
             ("get", "resource.k8s.io", "resourceclaims", "", "a", "c")),
        ]
        for method, url, want in cases:
            a = self.attrs(method, url)
            self.assertTrue(a.resource_request, url)
            self.assertEqual((a.verb, a.api_group, a.resource, a.subresource, a.namespace,
                              a.name), want, url)
        for url in ("/version", "/api", "/api/v1", "/apis/coordination.k8s.io/v1", "/foo"):
            self.assertFalse(self.attrs("GET", url).resource_request, url)

    def authorize(self, objects, method, url, user=SA):
        return fakekube.Rbac(objects).authorize(user, self.attrs(method, url))

    def test_rules_bindings_and_scopes(self):
        objs = copy.deepcopy(h.shipped_rbac_objects())
        ok = lambda m, u: self.authorize(objs, m, u)[0]  # noqa: E731
        self.assertTrue(ok("GET", "/api/v1/pods?watch=true"))
        self.assertTrue(ok("GET", "/api/v1/namespaces/x/pods?watch=true"))
        self.assertTrue(ok("GET", "/api/v1/namespaces/x/pods/p/log"))
        self.assertFalse(ok("GET", "/api/v1/namespaces/x/pods/p/exec"))
        self.assertFalse(ok("GET", "/api/v1/namespaces/x/events?watch=true"))
        self.assertTrue(ok("GET", "/api/v1/nodes?watch=true"))  # change tracking
        self.assertFalse(ok("GET", "/api/v1/namespaces"))
        self.assertTrue(ok("GET", "/apis/apps/v1/replicasets?watch=true"))
        self.assertFalse(ok("GET", "/apis/apps/v1/namespaces/x/replicasets/r"))
        self.assertFalse(ok("GET", "/api/v1/namespaces/x/secrets"))
        self.assertFalse(ok("GET", "/api/v1/namespaces/x/configmaps/c"))
        self.assertTrue(ok("GET", "/apis/resource.k8s.io/v1/namespaces/x/resourceclaims/c"))
        self.assertFalse(ok("GET", "/apis/resource.k8s.io/v1/namespaces/x/resourceclaims"))
        self.assertFalse(ok("GET", "/apis/resource.k8s.io/v1/devicetaintrules"))
        self.assertTrue(ok("GET", "/apis/coordination.k8s.io/v1/namespaces/krc/leases/krc"))
        self.assertFalse(ok("GET", "/apis/coordination.k8s.io/v1/namespaces/krc/leases/x"))
        self.assertFalse(ok("GET", "/apis/coordination.k8s.io/v1/namespaces/y/leases/krc"))
        self.assertTrue(ok("POST", "/apis/coordination.k8s.io/v1/namespaces/krc/leases"))
        self.assertFalse(ok("POST", "/apis/coordination.k8s.io/v1/namespaces/y/leases"))
        self.assertFalse(ok("GET", "/apis/coordination.k8s.io/v1/namespaces/krc/leases"))
        self.assertTrue(ok("GET", "/version"))  # discovery: bootstrap policy
        self.assertFalse(ok("GET", "/foo"))
        # another user has nothing
        self.assertFalse(self.authorize(objs, "GET", "/api/v1/pods", "system:serviceaccount:"
                                        "krc:other")[0])
        # a RoleBinding to a ClusterRole grants it in that namespace only
        objs.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                     "metadata": {"name": "cm"}, "rules": [
                         {"apiGroups": [""], "resources": ["configmaps", "*/status"],
                          "verbs": ["get"]}]})
        objs.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                     "metadata": {"name": "cm", "namespace": "a"},
                     "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                 "kind": "ClusterRole", "name": "cm"},
                     "subjects": [{"kind": "Group", "name": "system:serviceaccounts:krc"}]})
        self.assertTrue(ok("GET", "/api/v1/namespaces/a/configmaps/c"))
        self.assertTrue(ok("GET", "/api/v1/namespaces/a/pods/p/status"))
        self.assertFalse(ok("GET", "/api/v1/namespaces/b/configmaps/c"))
        self.assertFalse(ok("GET", "/api/v1/namespaces/a/configmaps"))
        # a binding to a role that does not exist is named in the reason
        objs.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                     "metadata": {"name": "gone", "namespace": "a"},
                     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                 "name": "gone"},
                     "subjects": [{"kind": "User", "name": SA}]})
        self.assertEqual(self.authorize(objs, "GET", "/api/v1/namespaces/a/secrets"),
                         (False, 'RBAC: role.rbac.authorization.k8s.io "gone" not found'))

    def test_403_bodies_and_kubectl(self):
        """The Status bodies are the real ones, and kubectl prints them as for a cluster."""
        with FakeKube() as fk:  # the shipped RBAC (krc_harness default)
            self.assertTrue(fk.rbac_state()["enabled"])
            self.assertEqual(fk.rbac_state()["user"], SA)
            fk.create_pod("shop", "web-1")
            env = dict(os.environ, KUBECONFIG=fk.kubeconfig)

            def kubectl(*args):
                r = subprocess.run(["kubectl"] + list(args), env=env, capture_output=True,
                                   text=True, timeout=60, stdin=subprocess.DEVNULL)
                return r.returncode, r.stdout + r.stderr
            code, out = kubectl("get", "pods", "-A")
            self.assertEqual(code, 0, out)
            self.assertIn("web-1", out)
            code, out = kubectl("logs", "web-1", "-n", "shop")
            self.assertEqual(code, 0, out)
            code, out = kubectl("get", "secrets", "-n", "shop")
            self.assertNotEqual(code, 0)
            self.assertIn('Error from server (Forbidden): secrets is forbidden: User "%s" cannot '
                          'list resource "secrets" in API group "" in the namespace "shop"' % SA,
                          out)
            code, out = kubectl("get", "lease", "other", "-n", "krc")
            self.assertIn('Error from server (Forbidden): leases.coordination.k8s.io "other" '
                          'is forbidden: User "%s" cannot get resource "leases" in API group '
                          '"coordination.k8s.io" in the namespace "krc"' % SA, out)
            code, out = kubectl("get", "lease", "krc", "-n", "krc")
            self.assertIn('Error from server (NotFound): leases.coordination.k8s.io "krc" not '
                          'found', out)
            reqs_before = len(fk.requests())
            code, out = kubectl("get", "events", "-n", "shop", "--watch-only",
                                "--request-timeout=5s")
            # A refused watch: kubectl 1.32 prints the Status message, kubectl 1.20 (Debian
            # bookworm's kubernetes-client) only "Error from server (Forbidden): unknown (get
            # events)". Both name Forbidden and the resource; the message, when printed, is
            # the real one; the request is refused as a watch of events either way.
            self.assertNotEqual(code, 0, out)
            self.assertIn("Error from server (Forbidden): ", out)
            self.assertIn("events", out)
            if "is forbidden" in out:
                self.assertIn('Error from server (Forbidden): events is forbidden: User "%s" '
                              'cannot watch resource "events" in API group "" in the namespace '
                              '"shop"' % SA, out)
            denied = [r for r in fk.requests()[reqs_before:] if r["status"] == 403]
            self.assertTrue(denied, out)
            self.assertEqual(denied[-1]["authz"], {
                "verb": "watch", "apiGroup": "", "resource": "events", "subresource": "",
                "namespace": "shop", "name": "", "allowed": False})
            # the raw body of a named subresource request
            reqs_before = len(fk.requests())
            fk.set_rbac([o for o in h.shipped_rbac_objects() if o["kind"] != "ClusterRole"] +
                        [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                          "metadata": {"name": "krc"}, "rules": [
                              {"apiGroups": [""], "resources": ["pods"],
                               "verbs": ["get", "list"]}]}])
            code, out = kubectl("logs", "web-1", "-n", "shop")
            self.assertIn('Error from server (Forbidden): pods "web-1" is forbidden: User "%s" '
                          'cannot get resource "pods/log" in API group "" in the namespace '
                          '"shop"' % SA, out)
            denied = [r for r in fk.requests()[reqs_before:] if r["status"] == 403]
            self.assertEqual(denied[-1]["authz"], {
                "verb": "get", "apiGroup": "", "resource": "pods", "subresource": "log",
                "namespace": "shop", "name": "web-1", "allowed": False})
            # no RBAC at all: everything is allowed again, as before --rbac existed
            fk.set_rbac(None)
            code, out = kubectl("get", "nodes")
            self.assertEqual(code, 0, out)

    def test_refused_write_keeps_the_connection_usable(self):
        """A PUT refused before its body was read: the body is discarded, so the next request
        on the same keep-alive connection (as krc's renewals are) is answered properly."""
        import http.client
        import ssl
        with FakeKube() as fk:
            fk.set_rbac([o for o in h.shipped_rbac_objects() if o["kind"] != "Role"])
            ctx = ssl.create_default_context(cafile=fk.ca)
            conn = http.client.HTTPSConnection("127.0.0.1", fk.api_port, context=ctx,
                                               timeout=10)
            hdr = {"Authorization": "Bearer " + fk.current_token(),
                   "Content-Type": "application/json"}
            body = json.dumps({"metadata": {"name": "krc", "resourceVersion": "1"},
                               "spec": {"holderIdentity": "x" * 2000}})
            try:
                for _ in range(2):
                    conn.request("PUT", "/apis/coordination.k8s.io/v1/namespaces/krc/leases/krc",
                                 body=body, headers=hdr)
                    r = conn.getresponse()
                    self.assertEqual(r.status, 403)
                    self.assertEqual(json.loads(r.read())["reason"], "Forbidden")
                conn.request("GET", "/version", headers=hdr)
                r = conn.getresponse()
                data = r.read()
                self.assertEqual(r.status, 200, data[:200])
                self.assertEqual(json.loads(data)["major"], "1")
            finally:
                conn.close()

    def test_no_rules_allow_only_discovery_and_bad_rules_stop_the_server(self):
        import http.client
        import ssl
        with FakeKube(rbac=[]) as fk:
            self.assertEqual(fk.rbac_state()["user"], SA)
            ctx = ssl.create_default_context(cafile=fk.ca)
            hdr = {"Authorization": "Bearer " + fk.current_token()}
            got = {}
            for path in ("/version", "/api/v1", "/api/v1/pods", "/api/v1/namespaces/krc/pods"):
                conn = http.client.HTTPSConnection("127.0.0.1", fk.api_port, context=ctx,
                                                   timeout=10)
                conn.request("GET", path, headers=hdr)
                r = conn.getresponse()
                got[path] = (r.status, r.read())
                conn.close()
            self.assertEqual([got[p][0] for p in sorted(got)], [200, 403, 403, 200])
            self.assertEqual(json.loads(got["/api/v1/pods"][1])["message"],
                             'pods is forbidden: User "%s" cannot list resource "pods" in API '
                             'group "" at the cluster scope' % SA)
        bad = [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "x"}, "roleRef": {}, "subjects": []}]
        with self.assertRaisesRegex(RuntimeError, "RoleBinding x without metadata.namespace"):
            FakeKube(rbac=bad).start()

    def test_status_body(self):
        e = fakekube.forbidden_error(SA, self.attrs("GET", "/api/v1/namespaces/x/pods/p/log"))
        self.assertEqual(e.status(), {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": 'pods "p" is forbidden: User "%s" cannot get resource "pods/log" in API '
                       'group "" in the namespace "x"' % SA,
            "reason": "Forbidden", "details": {"name": "p", "kind": "pods"}, "code": 403})
        e = fakekube.forbidden_error(SA, self.attrs(
            "POST", "/apis/coordination.k8s.io/v1/namespaces/krc/leases"))
        self.assertEqual(e.status()["details"], {"group": "coordination.k8s.io",
                                                 "kind": "leases"})
        self.assertEqual(e.status()["message"],
                         'leases.coordination.k8s.io is forbidden: User "%s" cannot create '
                         'resource "leases" in API group "coordination.k8s.io" in the '
                         'namespace "krc"' % SA)
        e = fakekube.forbidden_error(SA, self.attrs("GET", "/logs"))
        self.assertEqual(e.status()["message"], 'forbidden: User "%s" cannot get path "/logs"'
                         % SA)


class ChartNamespacedRoles(unittest.TestCase):
    """The chart's namespaced variant is enough for the real krc: with plain
    watchedNamespaces the chart grants pods/log/events, resourceclaims get (and create on
    events.k8s.io events) in a Role per namespace, events in "default" (node warnings) and only nodes get in a ClusterRole. krc watches each namespace
    on its own, collects everything and never needs a cluster-scoped pod permission."""

    def test_plain_namespaces_chart_rbac_runs_krc(self):
        import test_deploy_yaml as dy  # renders the chart with tests/tools/helmrender
        docs = dy.render_set("plain-namespaces")
        objects = [d for d in docs if d["kind"] in h.RBAC_KINDS]
        self.assertEqual(sorted(o["kind"] for o in objects),
                         ["ClusterRole", "ClusterRoleBinding", "Role", "Role", "Role",
                          "RoleBinding", "RoleBinding", "RoleBinding"])
        slack = FakeSlack()
        slack.start()
        self.addCleanup(slack.stop)
        with Run("chart-namespaced", objects, slack) as run:
            kube = run.kube
            kube.add_node("fake-node-1")
            kube.add_event(namespace="default", involvedObject={
                "kind": "Node", "name": "fake-node-1", "uid": "fake-node-1"},
                reason="NodeHasDiskPressure", message="disk pressure on fake-node-1",
                type="Warning", source={"component": "kubelet", "host": "fake-node-1"})
            pods = {ns: kube.create_pod(ns, "web-1") for ns in ("shop", "payments", "other")}
            for ns, pod in pods.items():
                kube.add_pod_event(pod, "BackOff", "Back-off restarting failed container app",
                                   container="app")
                add_claimed_gpu(kube, ns, "web-1")
            webhook = slack.webhook_url("rbac-chart-namespaced")
            run.start_krc({"SLACK_WEBHOOK_URL": webhook, "MUTE_SECONDS": "0",
                           "WATCHED_NAMESPACES": dy.env_of(docs)["WATCHED_NAMESPACES"]["value"]})
            h.wait_until(lambda: len(run.krc.logs(contains="pod sync complete")) >= 2,
                         15 * h.SLOWDOWN, what="both namespaces synced (log:\n%s)"
                         % run.krc.tail())
            for ns in ("other", "shop", "payments"):
                kube.restart(ns, "web-1", "app", exit_code=137, reason="OOMKilled",
                             logs="allocating buffer\nboom: out of memory in %s\n" % ns)
            msgs = slack.wait_messages(2, timeout=30 * h.SLOWDOWN,
                                       webhook=slack.webhook_path("rbac-chart-namespaced"))
            texts = [json.dumps(m["body"], ensure_ascii=False) for m in msgs]
            for ns in ("shop", "payments"):
                text = [t for t in texts if "boom: out of memory in %s" % ns in t]
                self.assertEqual(len(text), 1, "no alert with the log of %s: %s" % (ns, texts))
                # the RestartDiagnosed Event, created under the namespace's Role
                run.wait_kube_event(ns)
                obs = {"synced": True, "message": text[0],
                       "forbidden": run.forbidden_requests(),
                       "event_posts": run.obs["event_posts"],
                       "event_warnings": run.obs["event_warnings"]}
                expect_collect_ok(self, obs)
            time.sleep(1.5)  # "other" is not watched: no alert may follow
            self.assertEqual(len(slack.messages(webhook=slack.webhook_path(
                "rbac-chart-namespaced"))), 2)
            self.assertEqual(run.forbidden_requests(), [])
            # every pod permission used was a namespaced one, in a watched namespace
            pod_checks = [r["authz"] for r in run.kube.requests()
                          if r.get("authz") and r["authz"].get("resource") == "pods"]
            self.assertTrue(pod_checks)
            self.assertEqual({a.get("namespace") for a in pod_checks}, {"shop", "payments"})


if __name__ == "__main__":
    h.main()
