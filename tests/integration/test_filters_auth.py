"""Filters (compatible with the Go tool), the label selector and the per-pod
opt-out, and the messages for credentials and permissions that do not work."""

import os
import re
import tempfile
import time
import unittest

import krc_harness as h
from admin import FakeKube

FAST = ["--watch-idle-timeout", "3s"]


class Base(unittest.TestCase):
    def setUp(self):
        self.kube = FakeKube()
        self.kube.start()
        self.kube.config(bookmark_interval=1)
        self.krc = None

    def tearDown(self):
        if self.krc is not None:
            self.krc.kill()
        self.kube.stop()

    def start_krc(self, args=(), env=None, synced=True):
        self.krc = h.Krc(self.kube.kubeconfig, list(FAST) + list(args), env)
        if synced:
            self.krc.wait_synced()
        return self.krc

    def restart_all(self, pods, **kw):
        for ns, name in pods:
            self.kube.restart(ns, name, "app", **kw)

    def reported_pods(self, expected_n, settle=2.0):
        self.krc.wait_restarts(expected_n)
        time.sleep(settle)  # window for unexpected extra reports; asserted by the caller
        return sorted((r["namespace"], r["pod"]) for r in self.krc.restarts())


class FilterTest(Base):
    PODS = [("team-a", "web-1"), ("team-a", "worker-1"), ("team-b", "web-2"),
            ("kube-system", "coredns-1"), ("prod", "api-1"), ("preprod", "api-2")]

    def setUp(self):
        super().setUp()
        for ns, name in self.PODS:
            self.kube.create_pod(ns, name)

    def test_watched_plain_namespaces_use_namespaced_watches(self):
        self.start_krc(env={"WATCHED_NAMESPACES": "prod,team-b"}, synced=False)
        self.krc.wait_synced(count=2)
        self.restart_all(self.PODS)
        self.assertEqual(self.reported_pods(2), [("prod", "api-1"), ("team-b", "web-2")])
        paths = {r["path"] for r in self.kube.requests()}
        self.assertIn("/api/v1/namespaces/prod/pods", paths)
        self.assertIn("/api/v1/namespaces/team-b/pods", paths)
        self.assertNotIn("/api/v1/pods", paths, "plain namespaces must not need cluster scope")

    def test_watched_namespace_regex_like_go_tool(self):
        self.start_krc(env={"WATCHED_NAMESPACES": "^team-.*"})
        self.restart_all(self.PODS)
        self.assertEqual(self.reported_pods(3),
                         [("team-a", "web-1"), ("team-a", "worker-1"), ("team-b", "web-2")])

    def test_ignored_namespaces_and_pod_prefixes(self):
        self.start_krc(env={"IGNORED_NAMESPACES": "kube-system,preprod",
                            "IGNORED_POD_NAME_PREFIXES": "worker,web-\\d"})
        self.restart_all(self.PODS)
        self.assertEqual(self.reported_pods(1), [("prod", "api-1")])

    def test_watched_pod_prefixes(self):
        self.start_krc(env={"WATCHED_POD_NAME_PREFIXES": "web,api"})
        self.restart_all(self.PODS)
        self.assertEqual(self.reported_pods(4), [("preprod", "api-2"), ("prod", "api-1"),
                                                 ("team-a", "web-1"), ("team-b", "web-2")])

    def test_ignore_restart_count_like_go_tool(self):
        # Go tool: skip pods whose total restart count exceeds IGNORE_RESTART_COUNT.
        self.start_krc(env={"IGNORE_RESTART_COUNT": "2", "WATCHED_NAMESPACES": "prod"})
        for _ in range(4):
            self.kube.restart("prod", "api-1", "app")
        self.krc.wait_restarts(2)
        self.krc.wait_log("exceeds IGNORE_RESTART_COUNT", count=2)
        time.sleep(1.5)
        # two workers log "restart detected" in parallel: the order of the lines is not fixed
        self.assertEqual(sorted(r["restart_count"] for r in self.krc.restarts()), [1, 2])

    def test_default_ignore_restart_count_is_30(self):
        self.kube.set_container_status("prod", "api-1", "app", {"restartCount": 30})
        self.start_krc(env={"WATCHED_NAMESPACES": "prod"})
        self.kube.restart("prod", "api-1", "app")  # 31 > 30: ignored
        self.krc.wait_log("exceeds IGNORE_RESTART_COUNT")
        self.assertEqual(self.krc.restarts(), [])

    def test_ignore_restarts_with_exit_code_zero(self):
        self.start_krc(env={"IGNORE_RESTARTS_WITH_EXIT_CODE_ZERO": "true",
                            "WATCHED_NAMESPACES": "prod,team-b"}, synced=False)
        self.krc.wait_synced(count=2)
        self.kube.restart("prod", "api-1", "app", exit_code=0, reason="Completed")
        self.kube.restart("team-b", "web-2", "app", exit_code=1)
        self.assertEqual(self.reported_pods(1), [("team-b", "web-2")])
        self.assertTrue(self.krc.logs(contains="IGNORE_RESTARTS_WITH_EXIT_CODE_ZERO"))

    def test_opt_out_annotation(self):
        self.kube.create_pod("team-c", "noisy-1", annotations={"krc.io/ignore": "true"})
        self.kube.create_pod("team-c", "quiet-1")
        self.start_krc(env={"WATCHED_NAMESPACES": "team-c"})
        self.restart_all([("team-c", "noisy-1"), ("team-c", "quiet-1")])
        self.assertEqual(self.reported_pods(1), [("team-c", "quiet-1")])

    def test_label_selector_is_sent_to_the_server(self):
        self.kube.create_pod("team-d", "sel-1", labels={"tier": "gold"})
        self.kube.create_pod("team-d", "sel-2", labels={"tier": "bronze"})
        self.start_krc(["--label-selector", "tier=gold"])
        self.restart_all([("team-d", "sel-1"), ("team-d", "sel-2")])
        self.assertEqual(self.reported_pods(1), [("team-d", "sel-1")])
        self.assertTrue(all(r["query"].get("labelSelector") in ("tier=gold", ["tier=gold"])
                            for r in self.kube.requests() if r["path"] == "/api/v1/pods"))

    def test_invalid_regex_is_a_startup_error(self):
        self.krc = h.Krc(self.kube.kubeconfig, FAST, {"WATCHED_POD_NAME_PREFIXES": "web,(api"})
        self.assertNotEqual(self.krc.wait_exit(), 0)
        msg = self.krc.logs(contains="invalid filter")[0]["msg"]
        self.assertIn('WATCHED_POD_NAME_PREFIXES: invalid regular expression "(api"', msg)


class AuthTest(Base):
    def test_exec_plugin_that_is_not_installed_is_named(self):
        # exec plugins are supported (tests/integration/test_exec_plugin.py); one that is not
        # installed is named with its kubeconfig user at the first request
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "config")
            with open(path, "w") as f:
                f.write("""apiVersion: v1
kind: Config
current-context: eks
clusters:
- name: eks
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: eks-admin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: aws
      args: [eks, get-token, --cluster-name, prod]
contexts:
- name: eks
  context: {cluster: eks, user: eks-admin}
""")
            self.krc = h.Krc(path, FAST, {"PATH": "/usr/bin:/bin"})
            msg = self.krc.wait_log('exec credential plugin "aws" not found')[0]["msg"]
        self.assertIn('user "eks-admin"', msg)
        self.assertIn("install it, or fix exec.command in the kubeconfig", msg)

    def test_bad_token_gives_401_message(self):
        with tempfile.TemporaryDirectory() as d:
            token = os.path.join(d, "token")
            with open(token, "w") as f:
                f.write("not-the-right-token\n")
            cfg = os.path.join(d, "config")
            with open(self.kube.kubeconfig) as f:
                text = f.read()
            with open(cfg, "w") as f:
                f.write(text.replace(self.kube.token_path, token))
            self.krc = h.Krc(cfg, FAST)
            line = self.krc.wait_log("401 Unauthorized")[0]["msg"]
        self.assertIn("rejected the bearer token from", line)
        self.assertNotIn("not-the-right-token", self.krc.text())
        self.assertIsNone(self.krc.proc.poll(), "krc keeps retrying (credentials may be fixed)")

    def test_rotated_token_is_picked_up_after_401(self):
        self.kube.create_pod("default", "rot-0")
        self.start_krc()
        self.kube.config(token="rotated-token-0123456789")  # rewrites the token file
        self.kube.fault(type="drop_watches")
        self.kube.restart("default", "rot-0", "app")
        self.krc.wait_restarts(1)
        self.assertNotIn("rotated-token-0123456789", self.krc.text())

    def test_missing_permission_gives_403_message(self):
        self.kube.fault(type="forbid", verb="watch", resource="pods")
        self.kube.fault(type="forbid", verb="list", resource="pods")
        self.krc = h.Krc(self.kube.kubeconfig, FAST)
        line = self.krc.wait_log("403 Forbidden")[0]["msg"]
        self.assertTrue("forbidden: cannot watch pods at cluster scope" in line or
                        "forbidden: cannot list pods at cluster scope" in line, line)
        self.assertIn('User "system:serviceaccount:', line)
        self.assertIsNone(self.krc.proc.poll())

    def test_namespaced_403_names_the_namespace(self):
        self.kube.fault(type="forbid", verb="watch", resource="pods", namespace="secret-ns")
        self.kube.fault(type="forbid", verb="list", resource="pods", namespace="secret-ns")
        self.krc = h.Krc(self.kube.kubeconfig, FAST, {"WATCHED_NAMESPACES": "secret-ns"})
        line = self.krc.wait_log("403 Forbidden")[0]["msg"]
        self.assertIn('pods in namespace "secret-ns"', line)

    def test_unreachable_api_server(self):
        with tempfile.TemporaryDirectory() as d:
            # keep the kubeconfig, CA and token; then take the server away
            for name in ("kubeconfig", "ca.crt", "token"):
                src = os.path.join(os.path.dirname(self.kube.kubeconfig), name)
                with open(src) as f, open(os.path.join(d, name), "w") as g:
                    g.write(f.read().replace(os.path.dirname(self.kube.kubeconfig), d))
            self.kube.stop()
            self.krc = h.Krc(os.path.join(d, "kubeconfig"), FAST)
            line = self.krc.wait_log("retrying in")[0]["msg"]
            self.assertIn("https://127.0.0.1:", line)
            self.assertIn("Failed to connect to 127.0.0.1", line)
            self.assertIsNone(self.krc.proc.poll())

    def kubeconfig_with_server_name(self, d, name):
        with open(self.kube.kubeconfig) as f:
            text = f.read()
        cfg = os.path.join(d, "config")
        with open(cfg, "w") as f:
            f.write(re.sub(r"(\n    server: [^\n]*\n)", r"\1    tls-server-name: %s\n" % name,
                           text, count=1))
        return cfg

    def test_tls_server_name_is_used_for_the_certificate_check(self):
        # the fake's certificate names localhost (and 127.0.0.1); the kubeconfig connects to
        # 127.0.0.1 and asks for the name given in tls-server-name
        self.kube.create_pod("default", "tls-0")
        with tempfile.TemporaryDirectory() as d:
            self.krc = h.Krc(self.kubeconfig_with_server_name(d, "localhost"), FAST)
            self.krc.wait_synced()
            self.assertEqual(self.krc.stop(), 0)
            self.krc = h.Krc(self.kubeconfig_with_server_name(d, "wrong.example"), FAST)
            line = self.krc.wait_log("retrying in")[0]["msg"]
        self.assertRegex(line, r"(?i)certificate|SSL|subject")
        self.assertIn("wrong.example", line)

    def test_unknown_option_and_bad_values(self):
        self.krc = h.Krc(self.kube.kubeconfig, ["--no-such-option", "1"])
        self.assertEqual(self.krc.wait_exit(), 2)
        self.assertIn("unknown option --no-such-option", self.krc.text())
        self.krc = h.Krc(self.kube.kubeconfig, [], {"IGNORE_RESTART_COUNT": "many"})
        self.assertEqual(self.krc.wait_exit(), 2)
        self.assertIn("IGNORE_RESTART_COUNT", self.krc.text())


if __name__ == "__main__":
    h.main()
