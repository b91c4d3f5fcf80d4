"""Fault tests (issue 18), with the real krc binary, the fake API server and the fake Slack:
the API server killed and restarted mid-stream, a stream cut in the middle of a JSON line,
responses over the bounds, DNS failure, Slack answering slowly and the history database's
disk full. What each proves is in docs/reliability.md ("Faults")."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

import krc_harness as h
from admin import FakeKube

FAST = ["--watch-idle-timeout", "3s"]
SCRUB = ["SLACK_WEBHOOK_URL", "SLACK_CHANNEL", "SLACK_BOT_TOKEN", "MUTE_SECONDS",
         "WATCHED_NAMESPACES", "IGNORED_NAMESPACES", "KRC_WORKERS"]


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for pid %d" % pid)


def metric(port, name):
    status, body = h.http_get(port, "/metrics")
    if status != 200:
        raise AssertionError("/metrics answered %d" % status)
    total = 0.0
    found = False
    for line in body.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
            found = True
    return total if found else None


class Base(unittest.TestCase):
    def setUp(self):
        h.start_fakes(self)
        self.dir = tempfile.mkdtemp(prefix="krc-faults-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.db = os.path.join(self.dir, "krc.db")
        self.url = self.slack.webhook_url("alerts")
        self.krc = None

    def tearDown(self):
        if self.krc is not None:
            if any(t is self for t, _ in getattr(self._outcome.result, "errors", []) +
                   getattr(self._outcome.result, "failures", [])):
                print("---- krc log tail ----\n" + self.krc.tail(60))
            self.krc.kill()

    def start_krc(self, kubeconfig=None, env=None, args=(), synced=True):
        full = {k: None for k in SCRUB}
        full.update({"SLACK_WEBHOOK_URL": self.url, "KRC_DB": self.db, "MUTE_SECONDS": "0",
                     "CLUSTER_NAME": "faults"})
        full.update(env or {})
        self.krc = h.Krc(kubeconfig or self.kube.kubeconfig, list(FAST) + list(args), full)
        if synced:
            self.krc.wait_synced()
        return self.krc

    def history(self, *args):
        return h.history(self.db, *args)

    def history_keys(self):
        return sorted((r["pod"], r["restart_count"]) for r in self.history())

    def wait_messages(self, n, timeout=40):
        return h.wait_until(lambda: len(self.slack.messages()) >= n and self.slack.messages(),
                            timeout * h.SLOWDOWN, what="%d Slack messages" % n)

    def assert_messages_settle(self, n, settle=2.5):
        self.wait_messages(n)
        time.sleep(settle)  # a window for duplicates; asserted below
        self.assertEqual(len(self.slack.messages()), n, [
            m.get("body", {}).get("text") for m in self.slack.messages()])


class ApiFaultTest(Base):
    def test_api_server_killed_and_restarted_mid_stream(self):
        self.kube.create_pod("shop", "kill-a")
        self.kube.create_pod("shop", "kill-b")
        self.start_krc()
        self.kube.restart("shop", "kill-a", "app")
        self.krc.wait_restarts(1)
        saved = [self.kube.get_pod("shop", p) for p in ("kill-a", "kill-b")]
        port, token, state = self.kube.api_port, self.kube.current_token(), self.kube.state_dir
        last_rv = int(self.kube.state()["resource_version"])
        # SIGKILL with the watch open: the stream ends without a terminating chunk
        self.kube.proc.kill()
        self.kube.proc.wait(10)
        self.krc.wait_log("retrying in", count=1)
        # the server comes back on the same address with the same CA and token, and its
        # storage holds the pods as they were, plus a restart that happened meanwhile
        kube2 = FakeKube(token=token, state_dir=state, port=port, start_rv=last_rv)
        kube2.start()
        self.addCleanup(kube2.stop)
        kube2.config(bookmark_interval=1)
        for pod in saved:
            kube2.call("POST", "/admin/pods", pod)
        kube2.restart("shop", "kill-b", "app")
        self.krc.wait_restarts(2, timeout=40)
        kube2.restart("shop", "kill-a", "app")
        self.krc.wait_restarts(3)
        self.assert_messages_settle(3)
        self.assertEqual(sorted(h.restart_keys(self.krc.restarts())),
                         [("shop", "kill-a", "app", 1), ("shop", "kill-a", "app", 2),
                          ("shop", "kill-b", "app", 1)])
        self.assertEqual(self.history_keys(), [("kill-a", 1), ("kill-a", 2), ("kill-b", 1)])
        self.assertIsNone(self.krc.proc.poll())

    def test_stream_cut_in_the_middle_of_a_json_line(self):
        self.kube.create_pod("shop", "cut-0")
        self.start_krc()
        self.kube.restart("shop", "cut-0", "app")
        self.krc.wait_restarts(1)
        self.kube.wait_for(lambda: self.kube.state()["open_watches"] >= 1, what="a watch")
        lists_before = len([r for r in self.kube.requests()
                            if r["path"] == "/api/v1/pods" and "watch" not in r["query"]])
        self.kube.call("DELETE", "/admin/requests")
        n = self.kube.fault(type="cut_watches",
                            text='{"type":"MODIFIED","object":{"kind":"Pod","metadata":{"na')
        self.assertGreaterEqual(n["cut"], 1)
        self.kube.restart("shop", "cut-0", "app")
        self.kube.restart("shop", "cut-0", "app")
        self.krc.wait_restarts(3)
        self.assert_messages_settle(3)
        self.assertEqual(sorted(h.restart_keys(self.krc.restarts())),
                         [("shop", "cut-0", "app", i) for i in (1, 2, 3)])
        watches = [r for r in self.kube.requests() if r["path"] == "/api/v1/pods"
                   and r["query"].get("watch") in ("true", "1")]
        self.assertTrue(watches, "krc watched again")
        rv = watches[0]["query"].get("resourceVersion")
        self.assertTrue(rv and rv != "0", "the new watch resumes from a resourceVersion: %r"
                        % watches[0]["query"])
        relists = [r for r in self.kube.requests()
                   if r["path"] == "/api/v1/pods" and "watch" not in r["query"]]
        self.assertEqual(relists, [], "a cut stream is resumed, not relisted (%d lists before)"
                         % lists_before)
        self.assertFalse(self.krc.logs(contains="undecodable"),
                         "the partial line is discarded with the connection, not parsed")
        self.assertFalse(self.krc.logs(contains="pod watch (all namespaces): skipped"),
                         "the partial line is not reported as a skipped object")


class BoundsTest(Base):
    def test_responses_over_the_bounds(self):
        self.kube.create_pod("shop", "huge-log-0")
        env = {"KRC_LOG_TRANSFER_LIMIT_BYTES": "1048576"}
        if os.environ.get("ASAN_OPTIONS"):
            # under AddressSanitizer freed memory waits in a 256 MiB quarantine before reuse,
            # which RSS counts; a small one lets the bound below measure what krc keeps
            env["ASAN_OPTIONS"] = os.environ["ASAN_OPTIONS"] + ":quarantine_size_mb=4"
        self.start_krc(env=env)
        port = self.krc.http_port()
        base = rss_kib(self.krc.proc.pid)
        # a 9 MiB watch line (over the 8 MiB limit) before the next event, and a 30 MiB
        # previous log of which only the configured 1 MiB is read
        self.kube.fault(type="oversize_line", bytes=9 * 1024 * 1024)
        self.kube.restart("shop", "huge-log-0", "app", logs=("y" * 199 + "\n") * 150000)
        line = self.krc.wait_log("pod watch (all namespaces): skipped", timeout=30)[0]["msg"]
        self.assertIn("9437184 bytes, larger than the 8388608-byte limit", line)
        self.krc.wait_restarts(1, timeout=30)  # the stream went on after the bad line
        (msg,) = self.wait_messages(1)
        self.assertIn("y" * 50, json.dumps(msg["body"]))
        grown = rss_kib(self.krc.proc.pid) - base
        self.assertLess(grown, 48 * 1024, "RSS grew by %d KiB (from %d KiB)" % (grown, base))
        # an object over the limit that stays in the cluster (a real API server's etcd
        # refuses objects over ~1.5 MiB, so this is a broken or hostile server): skipped
        # once, named, the watch goes on (it used to resume and fail on it again and
        # again), memory bounded, no crash
        self.kube.create_pod("shop", "big-0", annotations={"blob": "x" * (12 * 1024 * 1024)})
        line = self.krc.wait_log("skipped the ADDED event of pod shop/big-0", timeout=30)[0]
        self.assertIn("larger than the 8388608-byte limit", line["msg"])
        self.kube.restart("shop", "huge-log-0", "app")
        self.wait_messages(2)
        # the pod watch's (the fake sends the oversize line on change tracking's watches too)
        self.assertEqual(len([x for x in self.krc.logs(contains="larger than")
                              if x["msg"].startswith("pod ")]), 2)
        grown = rss_kib(self.krc.proc.pid) - base
        self.assertLess(grown, 48 * 1024, "RSS grew by %d KiB (from %d KiB)" % (grown, base))
        self.assertIsNone(self.krc.proc.poll())
        self.assertEqual(metric(port, "krc_watch_objects_skipped_total"), 2)
        self.assertEqual(metric(port, "krc_ready"), 1)


class DnsTest(Base):
    def test_unresolvable_api_server_name(self):
        with open(self.kube.kubeconfig) as f:
            text = f.read()
        cfg = os.path.join(self.dir, "config")
        with open(cfg, "w") as f:
            f.write(re.sub(r"https://127\.0\.0\.1:\d+", "https://krc-api.invalid:6443", text))
        self.start_krc(cfg, synced=False)
        # the pod watch's own retries (change tracking's watches back off on their own)
        lines = self.krc.wait_log("pod list (all namespaces) failed", count=3, timeout=30)
        msg = lines[0]["msg"]
        self.assertIn("retrying in", msg)
        self.assertIn("krc-api.invalid", msg)
        self.assertRegex(msg, r"(?i)resolve")
        delays = [float(re.search(r"retrying in ([0-9.]+)s", l["msg"]).group(1))
                  for l in lines[:3]]
        self.assertLessEqual(delays[0], delays[-1], "backoff does not shrink: %r" % delays)
        status, body = h.http_get(self.krc.http_port(), "/readyz")
        self.assertEqual(status, 503, body)
        self.assertIsNone(self.krc.proc.poll())


    def test_name_that_resolves_later_is_used_without_restart(self):
        # krc runs in a private mount namespace whose /etc/hosts is a file of the test
        # (bind-mounted by unshare: the machine's /etc/hosts is not touched); the name
        # is added to it after krc has failed to resolve it
        if shutil.which("unshare") is None:
            self.skipTest("unshare (util-linux) is not installed")
        hosts = os.path.join(self.dir, "hosts")
        with open(hosts, "w") as f:
            f.write("127.0.0.1 localhost\n")
        wrap = os.path.join(self.dir, "wrap.sh")
        with open(wrap, "w") as f:
            f.write('#!/bin/sh\nmount --bind "$KRC_TEST_HOSTS" /etc/hosts || exit 99\n'
                    'exec "$@"\n')
        os.chmod(wrap, 0o755)
        probe = subprocess.run(["unshare", "--mount", "--propagation", "private", wrap,
                                "true"], env=dict(os.environ, KRC_TEST_HOSTS=hosts),
                               capture_output=True)
        if probe.returncode != 0:
            self.skipTest("cannot bind-mount in a private mount namespace (needs root)")
        self.kube.create_pod("shop", "dns-0")
        with open(self.kube.kubeconfig) as f:
            text = f.read()
        cfg = os.path.join(self.dir, "config")
        with open(cfg, "w") as f:
            f.write(re.sub(r"(\n    server: )\"https://127\.0\.0\.1:(\d+)\"\n",
                           r'\1"https://krc-api.test:\2"\n    tls-server-name: localhost\n',
                           text, count=1))
        old = os.environ.get("KRC_WRAPPER")
        # (before any wrapper of the suite, e.g. valgrind, which then runs krc)
        os.environ["KRC_WRAPPER"] = "unshare --mount --propagation private %s %s" % (
            wrap, old or "")
        try:
            self.start_krc(cfg, env={"KRC_TEST_HOSTS": hosts}, synced=False)
        finally:
            if old is None:
                del os.environ["KRC_WRAPPER"]
            else:
                os.environ["KRC_WRAPPER"] = old
        msg = self.krc.wait_log("retrying in", count=2, timeout=30)[0]["msg"]
        self.assertIn("krc-api.test", msg)
        self.assertRegex(msg, r"(?i)resolve")
        with open(hosts, "a") as f:  # in place: the bind mount shows the same file
            f.write("127.0.0.1 krc-api.test\n")
        self.krc.wait_synced(timeout=40)
        self.kube.restart("shop", "dns-0", "app")
        self.krc.wait_restarts(1)
        self.wait_messages(1)


class SlowSlackTest(Base):
    pods = ["slow-%d" % i for i in range(4)]

    def test_slow_slack_does_not_stall_the_watch(self):
        for p in self.pods:
            self.kube.create_pod("shop", p)
        self.start_krc()
        self.slack.fault(type="hang", seconds=20, count=-1)
        t0 = time.monotonic()
        for p in self.pods:
            self.kube.restart("shop", p, "app")
        self.krc.wait_restarts(4, timeout=15)
        h.wait_until(lambda: len(self.history()) == 4, 15, what="4 recorded restarts")
        elapsed = time.monotonic() - t0
        self.assertLess(elapsed, 20, "detection and history waited for Slack (%.1fs)" % elapsed)
        self.assertEqual(self.history_keys(), [(p, 1) for p in self.pods])
        self.slack.clear_faults()

        def delivered():
            bodies = [json.dumps(m["body"]) for m in self.slack.messages()]
            return all(any(p in b for b in bodies) for p in self.pods)
        # krc gives up on each hung request after its 15 s timeout and retries
        h.wait_until(delivered, 90, interval=0.5,
                     what="all 4 alerts delivered once Slack is fast again")


class DiskFullTest(Base):
    pods = ["disk-%d" % i for i in range(3)]

    def setUp(self):
        super().setUp()
        self.mnt = os.path.join(self.dir, "mnt")
        os.mkdir(self.mnt)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", self.mnt],
                           capture_output=True, text=True)
        if r.returncode != 0:
            self.skipTest("cannot mount a tmpfs (needs root): %s" % r.stderr.strip())
        self.addCleanup(subprocess.run, ["umount", "-l", self.mnt], capture_output=True)
        self.db = os.path.join(self.mnt, "krc.db")

    def fill(self):
        path = os.path.join(self.mnt, "filler")
        with open(path, "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass
        return path

    def test_disk_full_keeps_alerting_and_recovers(self):
        for p in self.pods:
            self.kube.create_pod("shop", p)
        self.start_krc()
        port = self.krc.http_port()
        self.kube.restart("shop", "disk-0", "app")
        self.wait_messages(1)
        h.wait_until(lambda: len(self.history()) == 1, 15, what="first restart recorded")
        filler = self.fill()
        self.kube.restart("shop", "disk-1", "app")
        self.wait_messages(2)  # alerts keep going
        line = self.krc.wait_log("not recorded")[0]["msg"]
        self.assertRegex(line, r"(?i)full|space|disk")
        status, body = h.http_get(port, "/readyz")
        self.assertEqual(status, 503, body)
        self.assertIn("history database unavailable", body)
        self.assertGreaterEqual(metric(port, "krc_store_errors_total") or 0, 1)
        os.unlink(filler)  # space is back: no restart of krc
        self.kube.restart("shop", "disk-2", "app")
        self.wait_messages(3)
        h.wait_until(lambda: h.http_get(port, "/readyz")[0] == 200, 20, what="ready again")
        h.wait_until(lambda: ("disk-1", 1) in self.history_keys(), 20,
                     what="the restart of the full-disk period recorded once space is back")
        self.assertEqual(self.history_keys(), [("disk-0", 1), ("disk-1", 1), ("disk-2", 1)])
        self.assertEqual(len(self.slack.messages()), 3)


if __name__ == "__main__":
    h.main()
