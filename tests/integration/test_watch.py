"""The real krc binary against the fake Kubernetes API server over TLS:
restart detection through list/watch, bookmarks, 410 relists, dropped and
stalled streams, 5xx bursts and outages, without losing or duplicating a
restart."""

import re
import time
import unittest
from datetime import datetime, timedelta, timezone

import krc_harness as h
from admin import FakeKube

FAST = ["--watch-idle-timeout", "3s"]


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


class WatchTest(unittest.TestCase):
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
        self.kube.create_pod("default", "m-0")
        self.start_krc(["--log-level", "debug"])
        self.kube.fault(type="malformed_line", text='{"type":"MODIFIED","object":{"metadata":')
        self.kube.restart("default", "m-0", "app")
        self.krc.wait_log("malformed watch line")
        self.krc.wait_restarts(1)  # resumed from the last good resourceVersion
        self.kube.wait_for(lambda: self.kube.state()["open_watches"] >= 1, what="a new watch")
        self.kube.fault(type="oversize_line", bytes=9 * 1024 * 1024)
        self.kube.restart("default", "m-0", "app")
        self.krc.wait_log("larger than", timeout=30)
        self.kube.restart("default", "m-0", "app")
        self.assert_exactly([("default", "m-0", "app", 1), ("default", "m-0", "app", 2),
                             ("default", "m-0", "app", 3)])
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


if __name__ == "__main__":
    h.main()
