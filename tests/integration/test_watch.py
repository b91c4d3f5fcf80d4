"""The real krc binary against the fake Kubernetes API server over TLS:
restart detection through list/watch, bookmarks, 410 relists, dropped and
stalled streams, 5xx bursts and outages, without losing or duplicating a
restart; one pod too large for the watch (10,000 containers) skipped without
blinding it, and /readyz following what the watch delivers (issue 24)."""

import json
import re
import time
import unittest
from datetime import datetime, timedelta, timezone

import krc_harness as h
from admin import FakeKube

FAST = ["--watch-idle-timeout", "3s"]


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


class WatchBase(unittest.TestCase):
    def setUp(self):
        self.kube = FakeKube()
        self.kube.start()
        self.kube.config(bookmark_interval=1)
        self.krc = None

    def tearDown(self):
        if self.krc is not None:
            if self._outcome_failed():
                print("---- krc log tail ----\n" + self.krc.tail(80))
            # Every test ends with a clean SIGTERM shutdown (exit 0; under valgrind,
            # --error-exitcode makes any leak or memory error fail here).
            code = self.krc.stop(timeout=60)
            self.kube.stop()
            self.assertEqual(code, 0, "krc did not shut down cleanly:\n" + self.krc.tail(20))
            return
        self.kube.stop()

    def _outcome_failed(self):
        result = getattr(self._outcome, "result", None)
        errors = getattr(result, "errors", []) + getattr(result, "failures", [])
        return any(t is self for t, _ in errors)

    def start_krc(self, args=(), env=None):
        self.krc = h.Krc(self.kube.kubeconfig, list(FAST) + list(args), env)
        self.krc.wait_synced()
        return self.krc

    def assert_exactly(self, expected, settle=2.5):
        """The reports are exactly `expected` (a list of (ns, pod, container, count)),
        and no duplicate arrives during `settle` seconds of further bookmarks."""
        self.krc.wait_restarts(len(expected))
        time.sleep(settle)  # a window for duplicates to show up; the assertion is below
        got = h.restart_keys(self.krc.restarts())
        self.assertEqual(sorted(got), sorted(expected),
                         "restart reports differ; log tail:\n" + self.krc.tail(40))

    def watch_requests(self):
        return [r for r in self.kube.requests() if r["path"] == "/api/v1/pods"
                and r["query"].get("watch") in ("true", ["true"])]


class WatchTest(WatchBase):
    def test_n_restarts_give_n_reports(self):
        for i in range(3):
            self.kube.create_pod("shop", "web-%d" % i, containers=("app", "proxy"))
        self.start_krc()
        expected = []
        plan = [("web-0", "app"), ("web-1", "proxy"), ("web-0", "app"), ("web-2", "app"),
                ("web-1", "app"), ("web-0", "proxy"), ("web-0", "app")]
        counts = {}
        for pod, c in plan:
            self.kube.restart("shop", pod, c, exit_code=137, reason="OOMKilled")
            counts[(pod, c)] = counts.get((pod, c), 0) + 1
            expected.append(("shop", pod, c, counts[(pod, c)]))
        self.assert_exactly(expected)
        r = [x for x in self.krc.restarts() if x["pod"] == "web-2"][0]
        self.assertEqual(r["exit_code"], 137)
        self.assertEqual(r["reason"], "OOMKilled")
        self.assertEqual(r["node"], "fake-node-1")
        self.assertEqual(r["pod_uid"], self.kube.get_pod("shop", "web-2")["metadata"]["uid"])
        self.assertTrue(r["finished_at"].endswith("Z"))
        # GnuTLS (loaded by Debian's libcurl and libmicrohttpd) was not initialised
        # at load: libmicrohttpd's call and GnuTLS's own constructor were skipped.
        self.krc.wait_log("left uninitialised: 2 load-time initialisation(s) skipped", timeout=1)
        self.assertEqual(self.krc.stop(), 0)

    def test_backlog_beyond_the_pod_budget_gets_pods_instead_of_copying_them(self):
        # 40 pods of ~13 KB (a large annotation): queued copies of all of them would pass the
        # queue's 256 KiB pod budget. The previous-log requests are slowed down so that the
        # worker falls behind while the 40 restarts arrive.
        pad = "x" * 12000
        self.kube.create_pods([{"namespace": "batch", "name": "job-%02d" % i,
                                "annotations": {"example.com/pad": pad}} for i in range(40)])
        # no destination at all (the Kubernetes Event is one, whose storm guard would group
        # these restarts, and grouped restarts are not collected): every restart is collected
        self.start_krc(env={"KRC_KUBERNETES_EVENTS": "false"})
        self.kube.fault(type="slow_requests", seconds=0.2, count=1000, path_regex="/log$")
        for i in range(40):
            self.kube.restart("batch", "job-%02d" % i, "app", exit_code=137, reason="OOMKilled")
        diagnosed = self.krc.wait_diagnosed(40, timeout=90)
        self.assertEqual(sorted(d["pod"] for d in diagnosed), ["job-%02d" % i for i in range(40)])
        # queued without a copy once the budget was spent, but not from the start
        without = sorted(x["pod"] for x in self.krc.logs(
            contains="restart queued without a copy of its pod"))
        self.assertGreater(len(without), 0, self.krc.tail(20))
        self.assertLess(len(without), 36)
        # exactly those were fetched with a GET of the pod
        got = sorted(r["path"].rsplit("/", 1)[1] for r in self.kube.requests()
                     if r["method"] == "GET" and
                     re.fullmatch(r"/api/v1/namespaces/batch/pods/job-\d+", r["path"]))
        self.assertEqual(got, without)
        # and every diagnosis still had the pod's spec (the memory limit is in the summary)
        for d in diagnosed:
            self.assertEqual(d["cause"], "oom_killed", d)
            self.assertIn("memory limit", d["summary"], d)
        self.assertEqual(self.krc.stop(), 0)

    def test_410_in_the_middle_relists_without_loss_or_duplicates(self):
        for i in range(4):
            self.kube.create_pod("app", "api-%d" % i)
        self.start_krc()
        self.kube.restart("app", "api-0", "app")
        self.krc.wait_restarts(1)
        self.kube.compact()  # open watches get an in-band ERROR 410
        self.kube.restart("app", "api-1", "app")
        self.kube.restart("app", "api-0", "app")
        self.krc.wait_log("relisting")
        self.krc.wait_synced(count=2)
        self.kube.restart("app", "api-3", "app")
        self.assert_exactly([("app", "api-0", "app", 1), ("app", "api-1", "app", 1),
                             ("app", "api-0", "app", 2), ("app", "api-3", "app", 1)])

    def test_dropped_connection_loses_nothing(self):
        self.kube.create_pod("default", "worker-0")
        self.kube.create_pod("default", "worker-1")
        self.start_krc()
        expected = []
        for n in range(1, 4):
            self.kube.fault(type="drop_watches")
            self.kube.restart("default", "worker-0", "app")
            self.kube.restart("default", "worker-1", "app")
            expected += [("default", "worker-0", "app", n), ("default", "worker-1", "app", n)]
        self.assert_exactly(expected)
        reqs = [r for r in self.kube.requests() if r["query"].get("watch") in ("true", ["true"])]
        self.assertGreaterEqual(len(reqs), 2, "krc should have re-watched after the drops")

    def test_stalled_stream_is_dropped_and_resumed(self):
        self.kube.create_pod("default", "batch-0")
        self.start_krc()
        self.kube.fault(type="stall_watches", seconds=6)
        self.kube.restart("default", "batch-0", "app", exit_code=2)
        # the idle timeout (3 s) drops the silent stream; the new watch resumes
        self.krc.wait_log("reconnecting", timeout=15)
        self.assert_exactly([("default", "batch-0", "app", 1)])
        self.assertGreaterEqual(len(self.krc.logs(contains="no event or bookmark")), 1)

    def test_burst_of_500s_then_recovery(self):
        self.kube.create_pod("default", "svc-0")
        self.start_krc()
        self.kube.fault(type="http_error", status=500, count=3, path_regex="^/api/v1/pods$")
        self.kube.fault(type="drop_watches")
        self.kube.restart("default", "svc-0", "app")
        self.kube.restart("default", "svc-0", "app")
        self.krc.wait_log("500 InternalError", count=3, timeout=30)
        # exponential backoff: 0.8-1.6 s, 1.6-3.2 s, 3.2-6.4 s, 6.4-12.8 s at most
        self.krc.wait_restarts(2, timeout=45)
        self.assert_exactly([("default", "svc-0", "app", 1), ("default", "svc-0", "app", 2)],
                            settle=3)

    def test_restarts_during_outage_are_reported_after_it(self):
        self.kube.create_pod("ops", "a-0")
        self.kube.create_pod("ops", "b-0")
        self.kube.create_pod("ops", "gone-0")
        self.start_krc()
        self.kube.fault(type="refuse_connections", seconds=4)
        self.kube.fault(type="drop_watches")
        self.kube.restart("ops", "a-0", "app")
        self.kube.restart("ops", "b-0", "app")
        self.kube.restart("ops", "b-0", "app")
        self.kube.delete_pod("ops", "gone-0")
        self.kube.compact(close_watches=False)  # the outage outlived the watch history
        self.kube.create_pod("ops", "new-0")
        self.kube.restart("ops", "new-0", "app", exit_code=1)
        self.assert_exactly([("ops", "a-0", "app", 1), ("ops", "b-0", "app", 2),
                             ("ops", "new-0", "app", 1)], settle=3)
        b = [r for r in self.krc.restarts() if r["pod"] == "b-0"][0]
        self.assertEqual(b.get("missed_restarts"), 1)
        self.krc.wait_log("tracking 3 pods", timeout=10)

    def test_old_restarts_at_startup_are_not_reported(self):
        now = datetime.now(timezone.utc)
        self.kube.create_pod("default", "old-0")
        self.kube.restart("default", "old-0", "app", finished_at=iso(now - timedelta(hours=2)),
                          started_at=iso(now - timedelta(hours=3)))
        self.kube.create_pod("default", "recent-0")
        self.kube.restart("default", "recent-0", "app", exit_code=137, reason="OOMKilled",
                          finished_at=iso(now - timedelta(minutes=2)),
                          started_at=iso(now - timedelta(minutes=5)))
        self.start_krc()
        self.kube.restart("default", "old-0", "app")
        self.assert_exactly([("default", "recent-0", "app", 1), ("default", "old-0", "app", 2)])

    def test_startup_window_is_configurable(self):
        now = datetime.now(timezone.utc)
        self.kube.create_pod("default", "p-0")
        self.kube.restart("default", "p-0", "app", finished_at=iso(now - timedelta(minutes=20)),
                          started_at=iso(now - timedelta(minutes=30)))
        self.start_krc(["--startup-window", "1h"])
        self.assert_exactly([("default", "p-0", "app", 1)], settle=1)

    def test_streaming_list_used_when_supported(self):
        self.kube.create_pod("default", "s-0")
        self.start_krc()
        reqs = self.kube.requests()
        self.assertTrue(any(r["query"].get("sendInitialEvents") in ("true", ["true"])
                            for r in reqs))
        self.assertFalse(any(r["path"] == "/api/v1/pods" and "watch" not in r["query"]
                             for r in reqs), "no LIST expected when streaming list works")
        self.kube.restart("default", "s-0", "app")
        self.assert_exactly([("default", "s-0", "app", 1)], settle=1)

    def test_paginated_list_fallback_and_continue(self):
        self.kube.config(streaming_list=False, max_page_size=3)
        for i in range(8):
            self.kube.create_pod("default", "pg-%d" % i)
        self.start_krc(["--list-page-size", "3"])
        self.krc.wait_log("tracking 8 pods")
        lists = [r for r in self.kube.requests()
                 if r["path"] == "/api/v1/pods" and "watch" not in r["query"]]
        self.assertGreaterEqual(len(lists), 3, lists)
        self.assertTrue(any("continue" in r["query"] for r in lists))
        self.kube.restart("default", "pg-7", "app")
        self.assert_exactly([("default", "pg-7", "app", 1)], settle=1)

    def test_byte_by_byte_chunks(self):
        self.kube.config(chunk_size=1)
        self.kube.create_pod("default", "c-0")
        self.start_krc()
        self.kube.restart("default", "c-0", "app")
        self.kube.restart("default", "c-0", "app")
        self.assert_exactly([("default", "c-0", "app", 1), ("default", "c-0", "app", 2)],
                            settle=1)

    def test_malformed_and_oversized_lines(self):
        # a line that is not JSON and a 9 MiB line (over the 8 MiB limit) are each skipped
        # with a warning; the stream goes on (no new watch request), so the restart that
        # follows each arrives on the same stream
        self.kube.create_pod("default", "m-0")
        self.start_krc(["--log-level", "debug"])
        self.kube.wait_for(lambda: self.kube.state()["open_watches"] >= 1, what="a watch")
        watches = len(self.watch_requests())
        self.kube.fault(type="malformed_line", text='{"type":"MODIFIED","object":{"metadata":')
        self.kube.restart("default", "m-0", "app")
        # every open watch gets the bad line (the change-tracking ones too): the pod watch's
        line = self.krc.wait_log("skipped the MODIFIED event of an unknown pod")[0]["msg"]
        self.assertIn("undecodable", line)
        self.assertIn("the stream goes on", line)
        self.krc.wait_restarts(1)
        self.kube.fault(type="oversize_line", bytes=9 * 1024 * 1024)
        self.kube.restart("default", "m-0", "app")
        line = self.krc.wait_log("pod watch (all namespaces): skipped", timeout=30,
                                 count=2)[1]["msg"]
        self.assertIn("9437184 bytes, larger than the 8388608-byte limit", line)
        self.kube.restart("default", "m-0", "app")
        self.assert_exactly([("default", "m-0", "app", 1), ("default", "m-0", "app", 2),
                             ("default", "m-0", "app", 3)])
        self.assertEqual(len(self.watch_requests()), watches,
                         "a bad line must not end the stream: %r" % self.watch_requests())
        self.assertIsNone(self.krc.proc.poll(), "krc must keep running")

    def test_sidecar_and_init_container_restarts(self):
        self.kube.create_pod("default", "side-0", containers=("app",),
                             init_containers=[{"name": "log-shipper", "restartPolicy": "Always"}])
        self.start_krc()
        self.kube.restart("default", "side-0", "log-shipper", exit_code=137, reason="OOMKilled")
        self.assert_exactly([("default", "side-0", "log-shipper", 1)], settle=1)
        r = self.krc.restarts()[0]
        self.assertEqual(r.get("init_container"), "sidecar")

    def test_deleted_pod_leaves_the_table(self):
        self.kube.create_pod("default", "d-0")
        self.kube.create_pod("default", "d-1")
        self.start_krc()
        self.krc.wait_log("tracking 2 pods")
        self.kube.delete_pod("default", "d-0")
        self.kube.compact()  # forces a relist whose summary counts the table
        self.krc.wait_log("tracking 1 pods")

    def test_api_rate_limit_honours_retry_after(self):
        self.kube.create_pod("default", "rl-0")
        self.start_krc()
        self.kube.fault(type="http_error", status=429, count=1, retry_after=2, plain_text=True,
                        path_regex="^/api/v1/pods$")
        self.kube.fault(type="drop_watches")
        self.kube.restart("default", "rl-0", "app")
        # (not just "429": the endpoint's random port may contain it)
        line = self.krc.wait_log("Too many requests")[0]["msg"]
        self.assertIn("429", line)
        self.assertIn("Too many requests, please try again later.", line)
        self.assertIn("retrying in 2.0s", line)
        self.assert_exactly([("default", "rl-0", "app", 1)], settle=1)

    def test_sigterm_exits_cleanly(self):
        self.start_krc()
        self.assertEqual(self.krc.stop(), 0)
        self.assertTrue(self.krc.logs(contains="SIGTERM received"))


GIANT_CONTAINERS = 10000
MIB = 1024 * 1024


def metric_value(port, name, labels=""):
    """The value of one series of /metrics (None when absent)."""
    status, body = h.http_get(port, "/metrics")
    if status != 200:
        raise AssertionError("/metrics answered %d" % status)
    for line in body.splitlines():
        if line.startswith(name + labels + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


class OneBadObjectTest(WatchBase):
    """Issue 24: a pod too large for the watch (10,000 containers, ~19 MB of JSON, over the
    8 MiB line limit) is skipped with a warning naming it, in the sync (streaming list or
    LIST) and as a watch event, while restarts of other pods are alerted on Slack within
    10 s; krc_watch_objects_skipped_total counts it and /readyz tells the truth."""

    def setUp(self):
        super().setUp()
        self.slack = h.fakeslack_client.FakeSlack()
        self.slack.start()
        self.addCleanup(self.slack.stop)

    def start_krc(self, args=(), env=None):
        full = {"SLACK_WEBHOOK_URL": self.slack.webhook_url("alerts"), "MUTE_SECONDS": "0",
                "SLACK_CHANNEL": None, "SLACK_BOT_TOKEN": None, "WATCHED_NAMESPACES": None,
                "IGNORED_NAMESPACES": None, "KRC_KUBERNETES_EVENTS": "false"}
        full.update(env or {})
        # no silent-stream reconnects while the fake server is busy with the giant pod:
        # every new watch request in these tests would be one a bad object caused
        return super().start_krc(["--watch-idle-timeout", "30s"] + list(args), full)

    def create_giant(self):
        self.kube.create_pod("big", "giant-0",
                             containers=["c%05d" % i for i in range(GIANT_CONTAINERS)])
        size = len(json.dumps(self.kube.get_pod("big", "giant-0"), separators=(",", ":")))
        self.assertGreater(size, 8 * MIB, "the giant pod must be over the line limit")

    def restart_alerted_within_10s(self, pod, n):
        """Restart shop/POD; the n-th Slack message names it within 10 s of the restart."""
        t0 = time.time()
        self.kube.restart("shop", pod, "app", exit_code=137, reason="OOMKilled")
        msgs = self.slack.wait_messages(n, timeout=30 * h.SLOWDOWN)
        got = msgs[n - 1]
        self.assertIn(pod, json.dumps(got["body"]), msgs)
        self.assertLess(got["time"] - t0, 10.0 * h.SLOWDOWN,
                        "%s alerted %.1fs after its restart:\n%s"
                        % (pod, got["time"] - t0, self.krc.tail(30)))

    def skipped(self, port):
        return metric_value(port, "krc_watch_objects_skipped_total", '{reason="oversized"}')

    def assert_ready(self, port):
        status, body = h.http_get(port, "/readyz")
        self.assertEqual(status, 200, body)
        self.assertEqual(metric_value(port, "krc_ready"), 1)

    def test_giant_pod_in_the_stream_does_not_blind_the_watch(self):
        self.kube.create_pod("shop", "web-0")
        self.kube.create_pod("shop", "web-1")
        self.create_giant()
        # the streaming list's initial events carry the giant pod: skipped, sync completes
        self.start_krc(["--watch-bookmark-interval", "5s"])
        port = self.krc.http_port()
        line = self.krc.wait_log("skipped the ADDED event of pod big/giant-0")[0]["msg"]
        self.assertIn("larger than the 8388608-byte limit", line)
        self.assertIn("sees none of its restarts", line)
        self.assert_ready(port)
        self.restart_alerted_within_10s("web-0", 1)
        # the giant pod changes (one of its containers restarts): MODIFIED, skipped
        self.kube.restart("big", "giant-0", "c00042", exit_code=1)
        self.krc.wait_log("skipped the MODIFIED event of pod big/giant-0", timeout=30)
        self.restart_alerted_within_10s("web-1", 2)
        self.assertGreaterEqual(self.skipped(port), 2)
        self.assert_ready(port)
        # deleted: DELETED, skipped; the watch still reports the others
        self.kube.delete_pod("big", "giant-0")
        self.krc.wait_log("skipped the DELETED event of pod big/giant-0", timeout=30)
        self.restart_alerted_within_10s("web-0", 3)
        self.assertGreaterEqual(self.skipped(port), 3)
        self.assert_ready(port)
        # one stream throughout: no bad line ended it (a bookmark-fed watch is not renewed
        # within the test's minute: timeoutSeconds is at least 300). A fake stalled past the
        # silence limit (seen once on an overloaded machine) renews it, and says so.
        silent = self.krc.logs(contains="pod watch (all namespaces): ")
        silent = [m for m in silent if "no event or bookmark, reconnecting" in m["msg"]]
        self.assertEqual(len(self.watch_requests()), 1 + len(silent),
                         (self.watch_requests(), silent))
        self.assert_exactly([("shop", "web-0", "app", 1), ("shop", "web-1", "app", 1),
                             ("shop", "web-0", "app", 2)], settle=1)
        self.assertEqual(len(self.slack.messages()), 3)

    def test_giant_pod_in_list_pages_is_skipped(self):
        self.kube.config(streaming_list=False, max_page_size=2)
        for i in range(3):
            self.kube.create_pod("shop", "web-%d" % i)
        self.create_giant()
        self.start_krc(["--list-page-size", "2", "--watch-bookmark-interval", "5s"])
        port = self.krc.http_port()
        line = self.krc.wait_log("pod list (all namespaces): skipped items[")[0]["msg"]
        self.assertIn("pod big/giant-0", line)
        self.assertIn("larger than the 8388608-byte limit", line)
        synced = self.krc.wait_log("pod sync complete (list")[0]["msg"]
        self.assertIn("4 pods in 2 pages, 1 of them skipped", synced)
        self.assertEqual(self.skipped(port), 1)
        self.assert_ready(port)
        self.restart_alerted_within_10s("web-2", 1)
        # a 410 forces a relist: the giant pod is skipped again, the list completes again
        self.kube.compact()
        self.krc.wait_synced(count=2, timeout=30)
        self.assertEqual(len(self.krc.logs(contains="skipped items[")), 2)
        self.restart_alerted_within_10s("web-0", 2)
        self.assertEqual(self.skipped(port), 2)
        self.assert_ready(port)

    def test_readyz_follows_what_the_watch_delivers(self):
        # bookmarks every 0.5 s keep a quiet cluster's watch ready; a watch that delivers
        # nothing (no event, no bookmark) for more than twice watchBookmarkInterval (2 s
        # here) is not, and krc_ready says the same; it is ready again once bookmarks flow
        self.kube.config(bookmark_interval=0.5)
        self.kube.create_pod("shop", "web-0")
        self.start_krc(["--watch-bookmark-interval", "2s", "--watch-idle-timeout", "5s"])
        port = self.krc.http_port()
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:  # longer than the 4 s limit, nothing but bookmarks
            self.assert_ready(port)
            time.sleep(0.25)
        self.kube.fault(type="stall_watches", seconds=12)
        t0 = time.monotonic()
        body = h.wait_until(lambda: (lambda r: r[0] == 503 and r[1])(
            h.http_get(port, "/readyz")), 10 * h.SLOWDOWN, interval=0.1,
            what="/readyz 503 while the watch is silent")
        self.assertGreaterEqual(time.monotonic() - t0, 3.5, "unready too early: %s" % body)
        self.assertIn("pod watch (all namespaces) has delivered no event or bookmark for", body)
        self.assertIn("twice the 2s watchBookmarkInterval", body)
        self.assertEqual(metric_value(port, "krc_ready"), 0)
        # the stall ends: bookmarks again
        h.wait_until(lambda: h.http_get(port, "/readyz")[0] == 200, 30 * h.SLOWDOWN,
                     interval=0.1, what="/readyz 200 once bookmarks flow again")
        self.assertEqual(metric_value(port, "krc_ready"), 1)
        self.kube.restart("shop", "web-0", "app")
        self.slack.wait_messages(1, timeout=30 * h.SLOWDOWN)


if __name__ == "__main__":
    h.main()
