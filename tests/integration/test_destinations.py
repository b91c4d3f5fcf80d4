"""Destinations besides Slack (issue 16): the signed webhook and PagerDuty, against a local
endpoint that checks every body against its format's rules (tests/fakedest), with the same
429 / 5xx / outbox behaviour as Slack; several destinations for one restart (one outbox row
each); `krc config check` and start-up errors for a bad `destinations:` list.

    python3 tests/integration/test_destinations.py --krc build/krc
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

import krc_harness as h
from test_alerts import AlertTestBase, write_file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakedest"))
import fakedest  # noqa: E402

SIGNING_SECRET = "whsec-test-5f1c0f0e8a2b4c6d"
ROUTING_KEY = "R0UT1NGKEY0123456789abcdefABCDEF"  # 32 characters, as PagerDuty's
HEADER_TOKEN = "hdr-token-91f2c3d4e5"


class DestinationTest(AlertTestBase):
    def setUp(self):
        super().setUp()
        self.dest = fakedest.FakeDest().start()
        self.addCleanup(self.dest.stop)
        self.secrets += [SIGNING_SECRET, ROUTING_KEY, HEADER_TOKEN]
        self.tmp = tempfile.mkdtemp(prefix="krc-it-dest-")
        self.tmpdirs.append(self.tmp)

    def secret_file(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def webhook_dest(self, name="hook", default=True):
        url = self.dest.webhook_url(name, SIGNING_SECRET)
        sec = self.secret_file("secret-" + name, SIGNING_SECRET + "\n")
        hdr = self.secret_file("headers-" + name,
                               "X-Team: payments\nAuthorization: Bearer %s\n" % HEADER_TOKEN)
        return ("  - name: %s\n    type: webhook\n    url: %s\n    secretFile: %s\n"
                "    headersFile: %s\n%s" % (name, url, sec, hdr,
                                             "    default: true\n" if default else ""))

    def pd_dest(self, name="pd", default=True):
        return ("  - name: %s\n    type: pagerduty\n    url: %s\n    routingKeyEnv: KRC_IT_PD_KEY\n"
                "%s" % (name, self.dest.pagerduty_url, "    default: true\n" if default else ""))

    def teams_dest(self, name="teams", default=True):
        url = self.dest.teams_url(name)
        self.secrets.append(url)
        return ("  - name: %s\n    type: teams\n    urlFile: %s\n%s"
                % (name, self.secret_file("url-" + name, url + "\n"),
                   "    default: true\n" if default else ""))

    def gchat_dest(self, name="chat", default=True):
        url = self.dest.gchat_url("SPACE1")
        self.secrets += [url, "fake-SPACE1-token"]
        return ("  - name: %s\n    type: google-chat\n    urlEnv: KRC_IT_GCHAT_URL\n%s"
                % (name, "    default: true\n" if default else "")), url

    def start(self, config, env=None):
        full = {"KRC_IT_PD_KEY": ROUTING_KEY, "MUTE_SECONDS": "0"}
        full.update(env or {})
        args = ["--config", self.config_file(config)]
        if "POD_NAME" in full:  # leader election on the Lease krc/krc
            args += ["--leader-elect", "--lease-namespace", "krc", "--lease-name", "krc",
                     "--lease-duration", "3s", "--lease-renew-deadline", "2s",
                     "--lease-retry-period", "1s"]
        return self.start_krc(full, args)

    def assert_valid(self, reqs):
        for r in reqs:
            self.assertEqual(r["errors"], [], "%s broke its format's rules" % r["path"])

    # ---- signed webhook ----

    def test_webhook_report_is_signed_and_valid(self):
        self.kube.create_pod("shop", "api-0")
        self.start("destinations:\n" + self.webhook_dest())
        self.kube.restart("shop", "api-0", "app", exit_code=137, reason="OOMKilled",
                          logs="allocating\n" * 50)
        (r,) = self.dest.wait(1, "/webhook/hook", timeout=30)
        # fakedest verified X-Krc-Signature with Python's hmac and the body against
        # docs/report-schema.json (Draft 2020-12): nothing broken
        self.assert_valid([r])
        body = r["json"]
        self.assertEqual(body["kind"], "restart")
        self.assertEqual(body["schema_version"], 1)
        self.assertEqual(body["report"]["pod"]["name"], "api-0")
        self.assertEqual(body["report"]["diagnosis"]["cause"], "oom_killed")
        self.assertIn("allocating", body["report"]["log"]["text"])
        # the extra headers of headersFile are sent; a tampered body would not verify
        self.assertEqual(r["headers"].get("X-Team"), "payments")
        self.assertEqual(r["headers"].get("Authorization"), "Bearer " + HEADER_TOKEN)
        self.assertTrue(fakedest.signature_errors(r["headers"], r["raw"] + b" ", SIGNING_SECRET))
        self.assertTrue(fakedest.signature_errors(r["headers"], r["raw"], "another-secret"))
        self.wait_log("alert for shop/api-0 container app (oom_killed) to hook posted")

    def test_webhook_report_carries_kubernetes_135_fields(self):
        # issue 26: a 1.35-shaped pod (tests/fixtures/k8s-1.35, built from the API reference)
        # served as given by the fake API server; its restart's report, through the watch,
        # the collector and the signed webhook, carries the fields under their report names
        # and stays valid against docs/report-schema.json (fakedest checks it)
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                            "k8s-1.35", "pod-restart-fields.json")
        with open(path) as f:
            pod = json.load(f)
        self.kube.call("POST", "/admin/pods", pod)
        self.start("destinations:\n" + self.webhook_dest())
        self.kube.restart("ml", "trainer-0", "trainer", exit_code=42, reason="Error")
        (r,) = self.dest.wait(1, "/webhook/hook", timeout=30)
        self.assert_valid([r])
        rep = r["json"]["report"]
        self.assertEqual(rep["pod"]["generation"], 4)
        self.assertEqual(rep["pod"]["resources"]["limits"]["memory"], "32Gi")
        self.assertEqual([c["type"] for c in rep["pod"]["conditions"]],
                         ["PodReadyToStartContainers", "AllContainersRestarting",
                          "PodResizePending"])
        self.assertEqual(rep["pod"]["resource_claim_statuses"][0]["resource_claim_name"],
                         "trainer-0-gpu-x7k2p")
        (c,) = [c for c in rep["containers"] if c["name"] == "trainer"]
        self.assertEqual(c["restart_policy_rules"][1],
                         {"action": "RestartAllContainers",
                          "exit_codes": {"operator": "In", "values": [88]}})
        self.assertEqual(c["stop_signal"], "SIGUSR1")
        self.assertEqual(c["status_resources"]["limits"]["memory"], "12Gi")
        self.assertEqual(c["allocated_resources_status"][0]["resources"][0]["health"],
                         "Unhealthy")
        # exit 42 is the retry its rule Restart In [42, 43] declares, but the kubelet reports
        # the GPU it holds Unhealthy: the device fault is named (it ranks above the rule: a
        # platform fault, whatever the retry rule says), in a body the schema accepts
        self.assertEqual(rep["diagnosis"]["cause"], "gpu_device_unhealthy")
        self.assertNotIn("intentional", rep["diagnosis"])
        self.assertIn("GPU-5a1e0b7c-2f3d-4e8a-9b6c-0d1e2f3a4b5c (nvidia.com/gpu) Unhealthy",
                      rep["diagnosis"]["summary"])

    def test_webhook_429_and_5xx_are_retried(self):
        self.kube.create_pod("shop", "api-1")
        self.dest.fault("^/webhook/", 429, count=1, retry_after=1)
        self.dest.fault("^/webhook/", 503, count=2)
        self.start("destinations:\n" + self.webhook_dest())
        self.kube.restart("shop", "api-1", "app", exit_code=1, logs="boom\n")
        (r,) = self.dest.wait(1, "/webhook/hook", timeout=40)
        self.assert_valid([r])
        self.assertEqual(len(self.dest.requests("/webhook/hook")), 4)  # 429, 503, 503, 200
        self.wait_log("rate limited (429), retrying in 1.0s")
        self.wait_log("to hook posted (4 attempts)")

    # ---- PagerDuty ----

    def test_pagerduty_trigger_then_resolve_after_recovered_after(self):
        self.kube.create_pod("shop", "pay-0")
        self.start("destinations:\n" + self.pd_dest(), {"KRC_RECOVERED_AFTER": "2s"})
        self.kube.restart("shop", "pay-0", "app", exit_code=137, reason="OOMKilled",
                          logs="x" * 300000 + "\nlast line\n")
        (t,) = self.dest.wait(1, "/pagerduty/", timeout=30)
        self.assert_valid([t])  # Events v2 rules and lengths, checked by fakedest
        ev = t["json"]
        self.assertEqual(ev["event_action"], "trigger")
        self.assertEqual(ev["routing_key"], ROUTING_KEY)
        self.assertEqual(ev["payload"]["severity"], "critical")
        self.assertIn("shop/pay-0", ev["payload"]["summary"])
        self.assertEqual(ev["payload"]["custom_details"]["cause"], "oom_killed")
        self.assertLessEqual(len(t["raw"]), 512 * 1024)
        # the container runs ready from the restart on: resolved after recoveredAfter
        res = self.dest.wait(2, "/pagerduty/", timeout=30)[1]
        self.assert_valid([res])
        self.assertEqual(res["json"]["event_action"], "resolve")
        self.assertEqual(res["json"]["dedup_key"], ev["dedup_key"])
        # issue 27: the incident's resolved message (the resolve) replaces the recovered one
        self.wait_log("resolved message of incident #1 (Deployment shop/pay, pod pay-0) posted")

    def test_pagerduty_400_is_final_and_429_waits(self):
        self.kube.create_pod("shop", "pay-1")
        self.kube.create_pod("shop", "pay-2")
        self.dest.fault("^/pagerduty/", 400, count=1,
                        body=b'{"status":"invalid event","message":"Event object is invalid"}')
        self.start("destinations:\n" + self.pd_dest())
        self.kube.restart("shop", "pay-1", "app", exit_code=1, logs="a\n")
        self.wait_log("not delivered")
        self.dest.fault("^/pagerduty/", 429, count=1, retry_after=1)
        self.kube.restart("shop", "pay-2", "app", exit_code=1, logs="b\n")
        (ok,) = self.dest.wait(1, "/pagerduty/", timeout=30)
        self.assertIn("pay-2", ok["json"]["payload"]["summary"])
        # the 400 was not retried: pay-1 was sent once
        self.assertEqual(len([r for r in self.dest.requests("/pagerduty/")
                              if b"pay-1" in r["raw"]]), 1)

    # ---- Microsoft Teams ----

    def test_teams_adaptive_card_within_28kb_and_429(self):
        self.kube.create_pod("shop", "ui-0")
        self.dest.fault("^/teams/", 429, count=1, retry_after=1)
        self.start("destinations:\n" + self.teams_dest())
        huge = "".join("line %05d \u00e9\u20ac <b>*bold*</b> [x](http://evil) @channel\n" % i
                       for i in range(20000))
        self.kube.restart("shop", "ui-0", "app", exit_code=137, reason="OOMKilled", logs=huge)
        (r,) = self.dest.wait(1, "/teams/", timeout=30)
        # type message, one Adaptive Card 1.5, known elements, <= 28 KB: checked by fakedest
        self.assert_valid([r])
        self.assertLessEqual(len(r["raw"]), 28 * 1024)
        card = r["json"]["attachments"][0]["content"]
        texts = json.dumps(card)
        self.assertIn("ui-0", texts)
        self.assertIn("line 19999", texts, "the end of the log is shown")
        self.assertEqual(len(self.dest.requests("/teams/")), 2)  # the 429, then the card
        self.wait_log("rate limited (429), retrying in 1.0s")

    # ---- Google Chat ----

    def test_google_chat_thread_per_pod_replies_and_recovered(self):
        text, url = self.gchat_dest()
        self.kube.create_pod("shop", "q-0")
        self.kube.create_pod("shop", "q-1")
        self.dest.fault("^/chat/", 503, count=1)
        self.dest.fault("^/chat/", 429, count=1, retry_after=1)
        self.start("destinations:\n" + text,
                   {"KRC_IT_GCHAT_URL": url, "KRC_RECOVERED_AFTER": "2s"})
        self.kube.restart("shop", "q-0", "app", exit_code=1, logs="first <b>&amp;</b>\n")
        (first,) = self.dest.wait(1, "/chat/", timeout=30)
        self.assert_valid([first])
        self.assertFalse(first["thread_reply"])
        self.assertEqual(first["json"]["thread"]["threadKey"], "krc/-/shop/q-0")
        self.assertIn("first &lt;b&gt;&amp;amp;&lt;/b&gt;", json.dumps(first["json"]))
        # the same pod again: a reply in its thread; another pod: a thread of its own
        self.kube.restart("shop", "q-0", "app", exit_code=1, logs="second\n")
        self.kube.restart("shop", "q-1", "app", exit_code=1, logs="other\n")
        # (the incident's resolved message may come as early as 2 s later: not one of these)
        got = self.dest.wait(3, "/chat/", timeout=30,
                             pred=lambda r: "Resolved" not in json.dumps(r["json"]))
        self.assert_valid(got)
        by_pod = {}
        for r in got:
            by_pod.setdefault(r["json"]["thread"]["threadKey"], []).append(r)
        self.assertEqual(len(by_pod["krc/-/shop/q-0"]), 2)
        self.assertTrue(by_pod["krc/-/shop/q-0"][1]["thread_reply"])
        self.assertEqual(by_pod["krc/-/shop/q-0"][0]["thread"], by_pod["krc/-/shop/q-0"][1]["thread"])
        self.assertFalse(by_pod["krc/-/shop/q-1"][0]["thread_reply"])
        # ready for recoveredAfter: issue 27 replaces each pod's "recovered" message by one
        # "resolved" message per incident; q-0 and q-1 are pods of one workload (the fake's
        # ReplicaSet q-...), the same container and cause: one incident, resolved once, in
        # the thread of its first alert (q-0's)
        rec = self.dest.wait(1, "/chat/", timeout=30,
                             pred=lambda r: "Resolved" in json.dumps(r["json"]))
        self.assert_valid(rec)
        self.assertTrue(all(r["thread_reply"] for r in rec))
        self.assertEqual(rec[0]["json"]["thread"]["threadKey"], "krc/-/shop/q-0")
        time.sleep(3 * h.SLOWDOWN)
        resolved = [r for r in self.dest.requests("/chat/", accepted=True)
                    if "Resolved" in json.dumps(r["json"])]
        self.assertEqual(len(resolved), 1)

    # ---- the storm guard: a summary to each destination, in its format ----

    def test_storm_summary_goes_to_each_destination_in_its_format(self):
        text, url = self.gchat_dest()
        for i in range(20):  # bare pods: one incident each (issue 27: the storm counts incidents)
            self.kube.create_pod("batch", "w-%02d" % i, owner=False)
        self.start("destinations:\n" + self.webhook_dest() + self.pd_dest() + self.teams_dest() +
                   text,
                   {"KRC_IT_GCHAT_URL": url, "KRC_STORM_THRESHOLD": "3",
                    "KRC_STORM_WINDOW": "30s", "KRC_STORM_SUMMARY_DELAY": "2s"})
        for i in range(20):
            self.kube.restart("batch", "w-%02d" % i, "app", exit_code=1, logs="db down\n")
        self.krc.wait_diagnosed(20, timeout=60)
        self.wait_log("alert storm:")
        summary = {
            "/webhook/": lambda r: r["json"]["kind"] == "storm_summary",
            "/pagerduty/": lambda r: r["json"]["dedup_key"] == "krc/-/storm",
            "/teams/": lambda r: "Restart storm" in json.dumps(r["json"]),
            "/chat/": lambda r: r["json"]["thread"]["threadKey"] == "krc/-/storm",
        }
        for prefix, is_summary in summary.items():
            with self.subTest(prefix):
                (s,) = self.dest.wait(1, prefix, timeout=30, pred=is_summary)[:1]
                self.assert_valid(self.dest.requests(prefix))
                alerts = [r for r in self.dest.requests(prefix, accepted=True)
                          if not is_summary(r)]
                self.assertLess(len(alerts), 20, "the storm was not grouped for " + prefix)
        (w,) = self.dest.wait(1, "/webhook/", pred=summary["/webhook/"])[:1]
        self.assertIn("batch", json.dumps(w["json"]["summary"]["by_workload"]))

    # ---- several destinations ----

    def test_route_names_several_destinations_one_outbox_row_each(self):
        slack = self.webhook("shop")
        db = os.path.join(self.tmp, "krc.db")
        self.kube.create_pod("shop", "web-0")
        self.kube.create_pod("other", "web-9")
        chat, chat_url = self.gchat_dest(default=False)
        self.start("destinations:\n" + self.webhook_dest(default=False) +
                   self.pd_dest(default=False) + self.teams_dest(default=False) + chat +
                   "routes:\n  - namespace: shop\n    webhookUrl: %s\n"
                   "    destinations: [hook, pd, teams, chat]\n" % slack,
                   {"KRC_DB": db, "KRC_IT_GCHAT_URL": chat_url})
        self.kube.restart("shop", "web-0", "app", exit_code=1, logs="crash\n")
        self.slack.wait_messages(1, timeout=30, webhook=self.slack.webhook_path("shop"))
        self.assert_valid(self.dest.wait(1, "/webhook/hook", timeout=30))
        self.assert_valid(self.dest.wait(1, "/pagerduty/", timeout=30))
        self.assert_valid(self.dest.wait(1, "/teams/", timeout=30))
        self.assert_valid(self.dest.wait(1, "/chat/", timeout=30))
        # a restart no route matches goes nowhere (no default destination, no Slack default)
        self.kube.restart("other", "web-9", "app", exit_code=1, logs="x\n")
        self.krc.wait_diagnosed(2, timeout=30)
        h.wait_until(lambda: len(self.outbox(db, "delivered")) == 5, 20,
                     what="five delivered outbox rows")
        rows = self.outbox(db)
        self.assertEqual(sorted(r[1] for r in rows),
                         ["dest:chat", "dest:hook", "dest:pd", "dest:teams", "route:0"])
        self.assertEqual(len({r[0] for r in rows}), 1, "all five belong to one restart")
        # the implicit Kubernetes Event goes to every restart whatever the routes: one row
        # each, the first under the same restart as the five
        def event_rows():
            return [r for r in self.outbox(db, "delivered", events=True)
                    if r[1] == "dest:kubernetes-event"]
        events = h.wait_until(lambda: event_rows() if len(event_rows()) == 2 else None, 20,
                              what="two delivered Kubernetes Event rows")
        self.assertIn(rows[0][0], {r[0] for r in events})
        for r in rows:
            self.assertNotIn(ROUTING_KEY, r[2], "the routing key was written to the outbox")
        self.assertEqual(len(self.dest.requests()), 4)

    def test_restart_is_handed_over_only_once_every_destination_settled(self):
        """With leader election, a restart is published as handled (the Lease's hand-over
        list) once all its destinations have it, not when the first (Slack) does: a new
        leader must still post what PagerDuty had not accepted."""
        slack = self.webhook("alerts")
        self.kube.create_pod("shop", "ha-0")
        self.dest.fault("^/pagerduty/", 503, count=3)
        self.start("destinations:\n" + self.pd_dest(),
                   {"SLACK_WEBHOOK_URL": slack, "POD_NAME": "krc-a"})
        uid = self.kube.get_pod("shop", "ha-0")["metadata"]["uid"]

        def handled():
            lease = self.kube.get_lease("krc", "krc")
            return ((lease.get("metadata") or {}).get("annotations") or {}).get(
                "krc.io/handled-restarts", "")

        h.wait_until(lambda: self.kube.get_lease("krc", "krc"), 20, what="the Lease")
        self.kube.restart("shop", "ha-0", "app", exit_code=1, logs="x\n")
        self.slack.wait_messages(1, timeout=30)
        self.wait_log("retrying in")  # PagerDuty answered 503
        time.sleep(2.5)  # two renewals (retry period 1 s) after Slack accepted it
        self.assertNotIn(uid, handled(), "published before PagerDuty accepted it")
        self.assertEqual(self.dest.requests("/pagerduty/", accepted=True), [])
        self.dest.wait(1, "/pagerduty/", timeout=40)
        h.wait_until(lambda: uid in handled(), 10, what="the restart in the hand-over list")

    def test_reload_changes_routes_not_destinations(self):
        self.kube.create_pod("shop", "rl-0")
        self.kube.create_pod("shop", "rl-1")
        dests = self.webhook_dest(default=False) + self.pd_dest(default=False)
        path = self.config_file("destinations:\n" + self.webhook_dest(default=False) +
                                "routes:\n  - namespace: shop\n    destinations: [hook]\n")
        self.start_krc({"KRC_IT_PD_KEY": ROUTING_KEY, "MUTE_SECONDS": "0"}, ["--config", path])
        self.kube.restart("shop", "rl-0", "app", exit_code=1, logs="a\n")
        self.dest.wait(1, "/webhook/hook", timeout=30)
        # the reload adds pd and routes shop to it: the route applies, the new destination
        # waits for a restart of krc (the warning says so)
        with open(path, "w") as f:
            f.write("destinations:\n" + dests +
                    "routes:\n  - namespace: shop\n    destinations: [hook, pd]\n")
        self.krc.proc.send_signal(signal.SIGHUP)
        self.wait_log("configuration reload: destinations changed")
        self.wait_log("configuration reloaded")
        self.kube.restart("shop", "rl-1", "app", exit_code=1, logs="b\n")
        self.dest.wait(2, "/webhook/hook", timeout=30)
        time.sleep(1.5)  # a message to PagerDuty would arrive here; asserted below
        self.assertEqual(self.dest.requests("/pagerduty/"), [])

    def outbox(self, db, state=None, events=False):
        """The outbox rows; the implicit Kubernetes Event's (kubernetesEvents is on by default)
        only with events=True."""
        with sqlite3.connect(db) as c:
            q = "SELECT restart_id, destination, body, state FROM outbox"
            rows = c.execute(q).fetchall()
        return [r for r in rows if (state is None or r[3] == state)
                and (events or r[1] != "dest:kubernetes-event")]

    def test_outbox_keeps_a_failing_destination_and_sends_it_once_after_restart(self):
        """For each kind of destination: 5xx is retried, the message stays pending in the
        outbox over a restart of krc and is delivered once afterwards."""
        chat, chat_url = self.gchat_dest()
        kinds = [("/webhook/hook", self.webhook_dest()), ("/pagerduty/", self.pd_dest()),
                 ("/teams/", self.teams_dest()), ("/chat/", chat)]
        for i, (prefix, dest) in enumerate(kinds):
            with self.subTest(prefix):
                db = os.path.join(self.tmp, "krc-%d.db" % i)
                ns, pod = "ob-%d" % i, "db-%d" % i  # each krc sees only its own restart
                env = {"KRC_DB": db, "KRC_IT_GCHAT_URL": chat_url, "WATCHED_NAMESPACES": ns}
                self.kube.create_pod(ns, pod)
                self.dest.fault("^" + prefix, 500, count=-1)
                self.start("destinations:\n" + dest, env)
                self.kube.restart(ns, pod, "app", exit_code=1, logs="down\n")
                self.wait_log("retrying in", timeout=30)
                # the implicit Kubernetes Event goes through; its row must be done before the
                # stop so that exactly one row (this destination's) is resumed below
                h.wait_until(lambda: self.outbox(db, "delivered", events=True), 20,
                             what="the Kubernetes Event's row delivered")
                self.assertEqual(self.krc.stop(timeout=40), 0, self.crash_report())
                self.assertEqual([r[3] for r in self.outbox(db)], ["pending"])
                self.dest.clear_faults()
                self.start("destinations:\n" + dest, env)
                self.assert_valid(self.dest.wait(1, prefix, timeout=30))
                h.wait_until(lambda: self.outbox(db, "delivered"), 20, what="the row delivered")
                self.krc.wait_log("outbox: resuming 1 undelivered notification(s)")
                self.assertEqual(len(self.dest.requests(prefix, accepted=True)), 1)
                self.assertEqual(self.krc.stop(timeout=40), 0, self.crash_report())
                self.krc = None


class DestinationConfig(AlertTestBase):
    BAD = ("destinations:\n"
           "  - name: pd\n"
           "    type: pagerduty\n"
           "  - name: hook\n"
           "    type: webhok\n"
           "    url: https://hooks.example.com/x\n"
           "  - name: chat\n"
           "    type: teams\n"
           "    url: http://teams.example.com/x\n"
           "routes:\n"
           "  - namespace: prod\n"
           "    destinations: [pd, pdd]\n")

    def test_config_check_and_start_up_name_line_and_column(self):
        path = write_file(self.BAD)
        self.tmpfiles.append(path)
        p = subprocess.run([h.krc_binary(), "config", "check", path], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        out = p.stdout + p.stderr
        self.assertIn("%s:2:5: destinations[0] (pd): a pagerduty destination needs routingKeyEnv "
                      "or routingKeyFile" % path, out)
        self.assertIn('%s:5:11: destinations[1] (hook).type: unknown destination type "webhok" '
                      '(did you mean "webhook"?' % path, out)
        self.assertIn("%s:9:10: destinations[2] (chat).url: the URL " % path, out)
        self.assertIn('%s:12:24: routes[0].destinations: no destination is named "pdd" '
                      '(did you mean "pd"?)' % path, out)
        self.assertNotIn("teams.example.com", out, "the url of a Teams webhook is a secret")
        # the same errors stop krc run at start-up
        p = subprocess.run([h.krc_binary(), "run", "--config", path,
                            "--kubeconfig", self.kube.kubeconfig], capture_output=True,
                           text=True, timeout=30)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("%s:12:24: routes[0].destinations" % path, p.stdout + p.stderr)

    def test_config_print_shows_where_secrets_come_from_never_them(self):
        tmp = tempfile.mkdtemp(prefix="krc-it-destcfg-")
        self.tmpdirs.append(tmp)
        secret = os.path.join(tmp, "secret")
        with open(secret, "w") as f:
            f.write(SIGNING_SECRET)
        path = write_file("destinations:\n"
                          "  - name: pd\n    type: pagerduty\n    routingKeyEnv: KRC_IT_PD_KEY\n"
                          "  - name: hook\n    type: webhook\n    url: https://h.example/x\n"
                          "    secretFile: %s\n"
                          "  - name: chat\n    type: google-chat\n    urlEnv: KRC_IT_GCHAT_URL\n"
                          % secret)
        self.tmpfiles.append(path)
        env = dict(os.environ, KRC_IT_PD_KEY=ROUTING_KEY,
                   KRC_IT_GCHAT_URL="https://chat.googleapis.com/v1/spaces/S/messages?key=k&"
                                    "token=tok-secret-77")
        p = subprocess.run([h.krc_binary(), "config", "print", "--config", path],
                           capture_output=True, text=True, timeout=30, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        for s in (ROUTING_KEY, SIGNING_SECRET, "tok-secret-77"):
            self.assertNotIn(s, p.stdout + p.stderr)
        self.assertIn('routingKeyEnv: "KRC_IT_PD_KEY"', p.stdout)
        self.assertIn('secretFile: "%s"' % secret, p.stdout)
        self.assertIn('urlEnv: "KRC_IT_GCHAT_URL"', p.stdout)
        self.assertIn('url: "https://events.pagerduty.com/v2/enqueue"', p.stdout)
        # the printed configuration is itself a valid file
        again = write_file(p.stdout)
        self.tmpfiles.append(again)
        p = subprocess.run([h.krc_binary(), "config", "check", again], capture_output=True,
                           text=True, timeout=30, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_unset_secret_is_a_note_for_config_check_and_an_error_for_run(self):
        path = write_file("destinations:\n  - name: pd\n    type: pagerduty\n"
                          "    routingKeyEnv: KRC_IT_UNSET_KEY\n    default: true\n")
        self.tmpfiles.append(path)
        env = dict(os.environ)
        env.pop("KRC_IT_UNSET_KEY", None)
        p = subprocess.run([h.krc_binary(), "config", "check", path], capture_output=True,
                           text=True, timeout=30, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("%s:4:20: destinations[0] (pd).routingKeyEnv: environment variable "
                      "KRC_IT_UNSET_KEY is not set here" % path, p.stdout + p.stderr)
        p = subprocess.run([h.krc_binary(), "run", "--config", path,
                            "--kubeconfig", self.kube.kubeconfig], capture_output=True,
                           text=True, timeout=30, env=env)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("%s:4:20: destinations[0] (pd).routingKeyEnv: environment variable "
                      "KRC_IT_UNSET_KEY is not set" % path, p.stdout + p.stderr)


class FakeDestRefuses(unittest.TestCase):
    """fakedest's rules can fail: each breaks on a body that breaks it, and passes the
    smallest valid one (otherwise assert_valid above would prove nothing)."""

    def mutated(self, check, valid, mutations):
        self.assertEqual(check(json.dumps(valid).encode()), [], "the valid body")
        for name, mutate in mutations:
            with self.subTest(name):
                body = json.loads(json.dumps(valid))
                mutate(body)
                self.assertNotEqual(check(json.dumps(body).encode()), [], name)

    def test_pagerduty(self):
        valid = {"routing_key": ROUTING_KEY, "event_action": "trigger", "dedup_key": "k",
                 "payload": {"summary": "s", "source": "krc", "severity": "error",
                             "timestamp": "2026-12-03T10:00:00Z"}}
        self.mutated(lambda raw: fakedest.pagerduty_errors(raw, None), valid, [
            ("short routing_key", lambda b: b.update(routing_key="x")),
            ("unknown action", lambda b: b.update(event_action="fire")),
            ("resolve without dedup_key", lambda b: (b.pop("dedup_key"),
                                                     b.update(event_action="resolve"))),
            ("unknown top-level key", lambda b: b.update(extra=1)),
            ("summary too long", lambda b: b["payload"].update(summary="x" * 1025)),
            ("no source", lambda b: b["payload"].pop("source")),
            ("bad severity", lambda b: b["payload"].update(severity="high")),
            ("bad timestamp", lambda b: b["payload"].update(timestamp="yesterday")),
        ])
        self.assertNotEqual(fakedest.pagerduty_errors(json.dumps(valid).encode(),
                                                      {"another-key"}), [])

    def test_teams(self):
        valid = {"type": "message", "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive",
            "content": {"type": "AdaptiveCard", "version": "1.5", "body": [
                {"type": "TextBlock", "text": "t"},
                {"type": "FactSet", "facts": [{"title": "a", "value": "b"}]}]}}]}
        card = lambda b: b["attachments"][0]["content"]  # noqa: E731
        self.mutated(fakedest.teams_errors, valid, [
            ("type", lambda b: b.update(type="card")),
            ("contentType", lambda b: b["attachments"][0].update(contentType="text/html")),
            ("version", lambda b: card(b).update(version="1.6")),
            ("unknown element", lambda b: card(b)["body"].append({"type": "Marquee"})),
            ("TextBlock without text", lambda b: card(b)["body"][0].pop("text")),
            ("fact without value", lambda b: card(b)["body"][1]["facts"][0].pop("value")),
            ("over 28 KB", lambda b: card(b)["body"][0].update(text="x" * 28 * 1024)),
        ])

    def test_google_chat(self):
        query = "key=k&token=t&messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD"
        valid = {"text": "t", "thread": {"threadKey": "shop/api-0"}, "cardsV2": [{
            "cardId": "c", "card": {"header": {"title": "h"}, "sections": [
                {"widgets": [{"textParagraph": {"text": "p"}}, {"divider": {}}]}]}}]}
        sec = lambda b: b["cardsV2"][0]["card"]["sections"][0]  # noqa: E731
        self.mutated(lambda raw: fakedest.gchat_errors(query, raw), valid, [
            ("no threadKey", lambda b: b.pop("thread")),
            ("no cardId", lambda b: b["cardsV2"][0].pop("cardId")),
            ("no header title", lambda b: b["cardsV2"][0]["card"]["header"].pop("title")),
            ("unknown widget", lambda b: sec(b)["widgets"].append({"marquee": {}})),
            ("two kinds in a widget", lambda b: sec(b)["widgets"][0].update(divider={})),
            ("paragraph without text", lambda b: sec(b)["widgets"][0]["textParagraph"].pop("text")),
            ("over 32,000 bytes", lambda b: b.update(text="x" * 32000)),
        ])
        self.assertNotEqual(fakedest.gchat_errors("key=k", json.dumps(valid).encode()), [])

    def test_webhook_schema_requires_the_report(self):
        dest = fakedest.FakeDest()
        self.assertNotEqual(list(dest.validator.iter_errors({})), [])
        self.assertNotEqual(list(dest.validator.iter_errors({"kind": "restart"})), [])


if __name__ == "__main__":
    h.main()
