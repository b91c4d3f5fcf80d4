#!/usr/bin/env python3
"""Checks tests/fakeslack: that it accepts what Slack accepts and refuses, with Slack's error
strings, what Slack would refuse (Block Kit limits, no_text, bad JSON/UTF-8), rate limits with
Retry-After, scripted faults, Web API threads and the 3-step external file upload, and legacy
vs app webhook channel overrides.

Run by ctest as `python3 test_fakeslack.py --krc /path/to/krc` (--krc is ignored).
"""

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fakeslack"))

from client import FakeSlack, FakeSlackError  # noqa: E402


def strip_krc_arg(argv):
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--krc":
            skip = True
        elif not a.startswith("--krc="):
            out.append(a)
    return out


NO_LIMIT = {"enabled": True, "per_second": 1000.0, "burst": 1000}

# protocols.md §2.6, the composed restart alert
ALERT = {
    "text": "Restart: ml/trainer-0 container trainer (OOMKilled, exit 137, 5 restarts)",
    "blocks": [
        {"type": "header", "text": {"type": "plain_text", "text": "Pod restart: ml/trainer-0"}},
        {"type": "section", "fields": [
            {"type": "mrkdwn", "text": "*Container*\ntrainer"},
            {"type": "mrkdwn", "text": "*Reason*\nOOMKilled (exit 137)"},
            {"type": "mrkdwn", "text": "*Restarts*\n5"},
            {"type": "mrkdwn", "text": "*Node*\ngpu-node-3"}]},
        {"type": "section", "text": {"type": "mrkdwn", "text":
                                     "*Previous logs (tail)*\n```RuntimeError: CUDA out of "
                                     "memory. Tried to allocate 2.00 GiB &amp; failed```"}},
        {"type": "context", "elements": [{"type": "mrkdwn",
                                          "text": "cluster prod-eu \u00b7 uid 0c9e6b55"}]},
    ],
}


def section(text, **kw):
    b = {"type": "section", "text": {"type": "mrkdwn", "text": text}}
    b.update(kw)
    return b


def http_post(url, body, ctype="application/json", headers=None, timeout=10):
    """-> (status, body text, headers dict with lower-case keys)."""
    if isinstance(body, (dict, list)):
        data = json.dumps(body).encode()
    elif isinstance(body, str):
        data = body.encode()
    else:
        data = body
    h = {"Content-Type": ctype} if ctype else {}
    h.update(headers or {})
    req = urllib.request.Request(url, data=data, headers=h, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode(), {k.lower(): v for k, v in r.headers.items()}
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), {k.lower(): v for k, v in e.headers.items()}


class FakeSlackTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fs = FakeSlack().start()

    @classmethod
    def tearDownClass(cls):
        cls.fs.stop()

    def setUp(self):
        fs = self.fs
        fs.clear()
        fs.config(rate_limit=NO_LIMIT, channels=None, unknown_webhooks="accept",
                  tokens=[fs.token])
        self.url = fs.webhook_url("alerts")

    def api(self, method, args, token=True, ctype="application/json; charset=utf-8"):
        hdr = {"Authorization": "Bearer " + self.fs.token} if token is True else (
            {"Authorization": token} if token else {})
        if ctype.startswith("application/x-www-form-urlencoded"):
            body = urllib.parse.urlencode(args)
        else:
            body = args
        status, text, headers = http_post(self.fs.api_url + "/" + method, body, ctype, hdr)
        return status, json.loads(text), headers

    def last_request(self):
        return self.fs.requests()[-1]

    # ---- webhooks ----

    def test_valid_webhook_message_accepted(self):
        status, body, h = http_post(self.url, ALERT)
        self.assertEqual((status, body), (200, "ok"))
        self.assertTrue(h["content-type"].startswith("text/html"))
        (m,) = self.fs.wait_messages(1)
        self.assertEqual(m["body"], ALERT)
        self.assertEqual(m["webhook"], self.fs.webhook_path("alerts"))
        self.assertEqual(m["channel"], "#alerts")
        self.assertIsNone(m["ts"])
        for c in ("json_object", "has_content", "blocks_count", "block_text_lengths",
                  "block_ids_unique", "total_length"):
            self.assertIn(c, m["checks"])
        self.assertEqual(m["counts"]["blocks"], 4)
        st = self.fs.stats()
        self.assertEqual((st["accepted"]["webhook"], st["status_429"], st["rejected"]),
                         (1, 0, {}))

    def test_webhook_limits_enforced(self):
        emoji150 = "\U0001F600" * 150  # 150 code points, 300 UTF-16 units, 600 bytes
        cases = [
            # (name, payload or raw bytes, status, error, detail substring)
            ("51 blocks", {"text": "t", "blocks": [section("x")] * 51}, 400, "invalid_blocks",
             "no more than 50"),
            ("3001-char section", {"blocks": [section("x" * 3001)]}, 400, "invalid_blocks",
             "/blocks/0/text/text"),
            ("151-char header", {"blocks": [{"type": "header", "text": {
                "type": "plain_text", "text": "h" * 151}}]}, 400, "invalid_blocks",
             "less than 151"),
            ("mrkdwn header", {"blocks": [{"type": "header", "text": {
                "type": "mrkdwn", "text": "h"}}]}, 400, "invalid_blocks", "plain_text"),
            ("11 fields", {"blocks": [{"type": "section", "fields": [
                {"type": "mrkdwn", "text": "f"}] * 11}]}, 400, "invalid_blocks",
             "no more than 10"),
            ("2001-char field", {"blocks": [{"type": "section", "fields": [
                {"type": "plain_text", "text": "f" * 2001}]}]}, 400, "invalid_blocks",
             "/blocks/0/fields/0/text"),
            ("11 context elements", {"blocks": [{"type": "context", "elements": [
                {"type": "mrkdwn", "text": "c"}] * 11}]}, 400, "invalid_blocks",
             "/blocks/0/elements"),
            ("duplicate block_id", {"blocks": [section("a", block_id="b1"),
                                               section("b", block_id="b1")]},
             400, "invalid_blocks", "duplicate block_id"),
            ("256-char block_id", {"blocks": [section("a", block_id="i" * 256)]}, 400,
             "invalid_blocks", "/blocks/0/block_id"),
            ("unknown block type", {"blocks": [{"type": "table", "rows": []}]}, 400,
             "invalid_blocks", "unsupported block type"),
            ("unknown field", {"blocks": [section("a", colour="red")]}, 400, "invalid_blocks",
             "colour"),
            ("bad text object type", {"blocks": [{"type": "section", "text": {
                "type": "markdown", "text": "a"}}]}, 400, "invalid_blocks", "plain_text"),
            ("empty section text", {"text": "t", "blocks": [section("")]}, 400,
             "invalid_blocks", "more than 0"),
            ("image without alt_text", {"text": "t", "blocks": [{
                "type": "image", "image_url": "https://x/y.png"}]}, 400, "invalid_blocks",
             "alt_text"),
            ("blocks not an array", {"text": "t", "blocks": {"type": "divider"}}, 400,
             "invalid_blocks_format", "array"),
            ("no text", {}, 400, "no_text", None),
            ("whitespace text, empty blocks", {"text": "  ", "blocks": []}, 400, "no_text",
             None),
            ("101 attachments", {"attachments": [{"text": "a"}] * 101}, 400,
             "too_many_attachments", None),
            ("bad block inside an attachment", {"attachments": [{"color": "#E01E5A",
                                                                 "blocks": [section(
                                                                     "y" * 3001)]}]},
             400, "invalid_blocks", "/attachments/0/blocks/0/text/text"),
            ("block_id duplicated across attachments", {
                "blocks": [section("a", block_id="k")],
                "attachments": [{"blocks": [section("b", block_id="k")]}]},
             400, "invalid_blocks", "duplicate"),
            ("40001-char text", {"text": "x" * 40001}, 400, "msg_too_long", "40000"),
            ("total text over 40000", {"text": "x" * 20000, "blocks": [
                section("y" * 3000)] * 7}, 400, "msg_too_long", "totals"),
            ("invalid JSON", b'{"text": "a",}', 400, "invalid_payload", "invalid JSON"),
            ("invalid UTF-8", b'{"text": "caf\xe9"}', 400, "invalid_payload", "UTF-8"),
            ("lone surrogate", b'{"text": "a\\ud800b"}', 400, "invalid_payload",
             "surrogate"),
            ("JSON array body", b'[{"text": "a"}]', 400, "invalid_payload", "object"),
            ("text not a string", {"text": 5}, 400, "invalid_payload", "/text"),
        ]
        n_before = 0
        for name, payload, status, error, detail in cases:
            with self.subTest(name):
                got = http_post(self.url, payload)
                self.assertEqual(got[:2], (status, error), name)
                req = self.last_request()
                self.assertEqual((req["status"], req["error"]), (status, error))
                if detail:
                    self.assertIn(detail, req["detail"])
                self.assertEqual(len(self.fs.messages()), n_before)
        st = self.fs.stats()
        self.assertEqual(st["rejected"]["invalid_blocks"],
                         sum(1 for c in cases if c[3] == "invalid_blocks"))
        self.assertEqual(st["accepted"]["webhook"], 0)

        # the limits themselves are allowed, counted in code points
        ok = [
            ("50 blocks", {"text": "t", "blocks": [section("x")] * 50}),
            ("3000-char section", {"text": "t", "blocks": [section("\u00e9" * 3000)]}),
            ("150 emoji header", {"text": "t", "blocks": [{"type": "header", "text": {
                "type": "plain_text", "text": emoji150, "emoji": True}}]}),
            ("10 fields of 2000", {"text": "t", "blocks": [{"type": "section", "fields": [
                {"type": "mrkdwn", "text": "f" * 2000}] * 10}]}),
            ("255-char block_id", {"text": "t", "blocks": [section("a", block_id="i" * 255)]}),
            ("100 attachments", {"attachments": [{"text": "a", "color": "good"}] * 100}),
            ("40000-char text", {"text": "x" * 40000}),
            ("every block type", {"text": "t", "blocks": [
                {"type": "divider"},
                {"type": "markdown", "text": "**bold**"},
                {"type": "rich_text", "elements": [{"type": "rich_text_preformatted",
                                                    "elements": [{"type": "text",
                                                                  "text": "log"}]}]},
                {"type": "image", "image_url": "https://x/y.png", "alt_text": "graph"},
                {"type": "actions", "elements": [{"type": "button", "text": {
                    "type": "plain_text", "text": "Open"}, "url": "https://x"}]},
                {"type": "context", "elements": [{"type": "image", "image_url": "https://x/i",
                                                  "alt_text": "i"}]}]}),
        ]
        for name, payload in ok:
            with self.subTest(name):
                self.assertEqual(http_post(self.url, payload)[:2], (200, "ok"), name)
        # legacy form-encoded payload=
        form = urllib.parse.urlencode({"payload": json.dumps({"text": "form \u2713"})})
        self.assertEqual(http_post(self.url, form, "application/x-www-form-urlencoded")[:2],
                         (200, "ok"))
        self.assertEqual(http_post(self.url, json.dumps({"text": "x"}), "text/plain")[:2],
                         (400, "invalid_payload"))
        msgs = self.fs.messages()
        self.assertEqual(len(msgs), len(ok) + 1)
        self.assertEqual(msgs[-1]["text"], "form \u2713")

    def test_revoked_and_unknown_webhooks(self):
        revoked = self.fs.webhook_url("old", revoked=True)
        self.assertEqual(http_post(revoked, {"text": "a"})[:2], (404, "no_service"))
        stranger = self.fs.base_url + "/services/T1/B2/zzz"
        self.assertEqual(http_post(stranger, {"text": "a"})[:2], (200, "ok"))
        self.fs.config(unknown_webhooks="reject")
        self.assertEqual(http_post(stranger, {"text": "a"})[:2], (404, "no_service"))
        self.assertEqual(http_post(self.url, {"text": "a"})[:2], (200, "ok"))

    def test_app_vs_legacy_webhook_overrides(self):
        app = self.fs.webhook_url("app-hook", mode="app", channel="#alerts")
        legacy = self.fs.webhook_url("legacy-hook", mode="legacy", channel="#general")
        body = {"text": "x", "channel": "#elsewhere", "username": "bot", "icon_emoji": ":fire:"}
        self.assertEqual(http_post(app, body)[:2], (200, "ok"))
        self.assertEqual(http_post(legacy, body)[:2], (200, "ok"))
        self.assertEqual(http_post(legacy, {"text": "y"})[:2], (200, "ok"))
        a, b, c = self.fs.wait_messages(3)
        self.assertEqual((a["webhook_mode"], a["channel"], a["ignored_overrides"], a["identity"]),
                         ("app", "#alerts", ["channel", "icon_emoji", "username"], {}))
        self.assertEqual((b["webhook_mode"], b["channel"], b["ignored_overrides"]),
                         ("legacy", "#elsewhere", []))
        self.assertEqual(b["identity"], {"username": "bot", "icon_emoji": ":fire:"})
        self.assertEqual(c["channel"], "#general")

    def test_rate_limit_webhook_and_api(self):
        self.fs.config(rate_limit={"enabled": True, "per_second": 1.0, "burst": 2})
        other = self.fs.webhook_url("other")
        got = [http_post(self.url, {"text": str(i)}) for i in range(3)]
        self.assertEqual([g[:2] for g in got[:2]], [(200, "ok")] * 2)
        status, body, h = got[2]
        self.assertEqual((status, body), (429, "rate_limited"))
        ra = h["retry-after"]
        self.assertTrue(ra.isdigit() and int(ra) >= 1, ra)
        # per webhook: another webhook is not limited
        self.assertEqual(http_post(other, {"text": "o"})[:2], (200, "ok"))
        st = self.fs.stats()
        self.assertEqual((st["rate_limited"], st["status_429"]), (1, 1))
        self.assertTrue(self.last_request()["headers"])
        time.sleep(int(ra))  # what a client is told to do
        self.assertEqual(http_post(self.url, {"text": "after"})[:2], (200, "ok"))
        # Web API: per channel, JSON body
        codes = [self.api("chat.postMessage", {"channel": "C0RATE0001", "text": str(i)})
                 for i in range(3)]
        self.assertEqual([c[1]["ok"] for c in codes], [True, True, False])
        self.assertEqual(codes[2][0], 429)
        self.assertEqual(codes[2][1], {"ok": False, "error": "ratelimited"})
        self.assertTrue(codes[2][2]["retry-after"].isdigit())
        self.assertTrue(self.api("chat.postMessage", {"channel": "C0RATE0002",
                                                      "text": "x"})[1]["ok"])
        self.assertEqual(self.fs.stats()["rate_limited"], 2)

    def test_faults(self):
        fs = self.fs
        fs.fault(type="respond", status=500, error="rollup_error", count=2,
                 path_regex="^/services/")
        self.assertEqual(http_post(self.url, {"text": "a"})[:2], (500, "rollup_error"))
        self.assertEqual(http_post(self.url, {"text": "a"})[:2], (500, "rollup_error"))
        self.assertEqual(http_post(self.url, {"text": "a"})[:2], (200, "ok"))
        # path_regex not matching leaves the request alone
        fs.fault(type="respond", status=503, path_regex="^/api/")
        self.assertEqual(http_post(self.url, {"text": "b"})[:2], (200, "ok"))
        s, j, _ = self.api("chat.postMessage", {"channel": "C0FAULT001", "text": "x"})
        self.assertEqual((s, j["ok"]), (503, False))
        for status, error in ((400, "invalid_payload"), (404, "no_service"),
                              (403, "action_prohibited")):
            fs.fault(type="respond", status=status, error=error)
            self.assertEqual(http_post(self.url, {"text": "c"})[:2], (status, error))
        fs.fault(type="respond", status=429, retry_after=7)
        s, b, h = http_post(self.url, {"text": "d"})
        self.assertEqual((s, b, h["retry-after"]), (429, "rate_limited", "7"))
        self.assertEqual(fs.stats()["status_429"], 1)
        self.assertEqual(fs.stats()["rate_limited"], 1)
        # hang, then answer normally
        fs.fault(type="hang", seconds=0.6)
        t0 = time.monotonic()
        self.assertEqual(http_post(self.url, {"text": "slow"})[:2], (200, "ok"))
        self.assertGreaterEqual(time.monotonic() - t0, 0.55)
        # hang past the client's timeout
        fs.fault(type="hang", seconds=3, status=500)
        with self.assertRaises((socket.timeout, TimeoutError, urllib.error.URLError)):
            http_post(self.url, {"text": "x"}, timeout=0.3)
        fs.clear()  # cuts the hang short
        # close without answering
        fs.fault(type="close")
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionError,
                                urllib.error.URLError)):
            http_post(self.url, {"text": "gone"})
        self.assertEqual(self.last_request()["error"], "connection_closed")
        # down until cleared
        fs.fault(type="down")
        for _ in range(3):
            self.assertEqual(http_post(self.url, {"text": "e"})[:2], (500, "rollup_error"))
        self.assertEqual(self.api("chat.postMessage", {"channel": "C0FAULT001",
                                                       "text": "x"})[0], 500)
        fs.fault(type="up")
        self.assertEqual(http_post(self.url, {"text": "f"})[:2], (200, "ok"))
        accepted = [m["text"] for m in fs.messages()]
        self.assertEqual(accepted, ["f"])
        with self.assertRaises(FakeSlackError):
            fs.fault(type="explode")

    def test_keep_alive(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.fs.port, timeout=5)
        path = self.fs.webhook_path("alerts")
        socks = set()
        for i in range(3):
            conn.request("POST", path, body=json.dumps({"text": str(i)}),
                         headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            self.assertEqual((r.status, r.read()), (200, b"ok"))
            socks.add(id(conn.sock))
        # a rejected request on the same connection does not break it either
        conn.request("POST", path, body=b"{", headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        self.assertEqual((r.status, r.read()), (400, b"invalid_payload"))
        conn.request("POST", path, body=b'{"text":"z"}',
                     headers={"Content-Type": "application/json"})
        self.assertEqual(conn.getresponse().read(), b"ok")
        self.assertEqual(len(socks), 1)
        conn.close()

    # ---- Web API ----

    def test_web_api_auth_and_channels(self):
        s, j, _ = self.api("chat.postMessage", {"channel": "C0123ABCD", "text": "x"}, token=None)
        self.assertEqual((s, j), (200, {"ok": False, "error": "not_authed"}))
        s, j, _ = self.api("chat.postMessage", {"channel": "C0123ABCD", "text": "x"},
                           token="Bearer xoxb-wrong")
        self.assertEqual(j, {"ok": False, "error": "invalid_auth"})
        req = self.last_request()
        self.assertNotIn("Authorization", req["headers"])
        self.assertNotIn("xoxb-wrong", json.dumps(self.fs.requests()))
        self.fs.config(channels=[{"id": "C0123ABCD", "name": "alerts"},
                                 {"id": "C0OLD00001", "name": "old", "archived": True},
                                 {"id": "C0PRIV0001", "name": "priv", "member": False}])
        for ch, err in (("C0NOPE0001", "channel_not_found"), ("", "channel_not_found"),
                        ("C0OLD00001", "is_archived"), ("C0PRIV0001", "not_in_channel")):
            self.assertEqual(self.api("chat.postMessage", {"channel": ch, "text": "x"})[1],
                             {"ok": False, "error": err}, ch)
        s, j, _ = self.api("chat.postMessage", {"channel": "#alerts", "text": "by name"})
        self.assertTrue(j["ok"])
        self.assertEqual(j["channel"], "C0123ABCD")
        # validation errors are HTTP 200 with ok=false
        s, j, _ = self.api("chat.postMessage", {"channel": "C0123ABCD",
                                                "blocks": [section("x")] * 51})
        self.assertEqual((s, j["ok"], j["error"]), (200, False, "invalid_blocks"))
        self.assertIn("no more than 50", j["response_metadata"]["messages"][0])
        for args, err in (({"channel": "C0123ABCD"}, "no_text"),
                          ({"channel": "C0123ABCD", "text": "x" * 40001}, "msg_too_long"),
                          ({"channel": "C0123ABCD", "attachments": [{"text": "a"}] * 101},
                           "too_many_attachments")):
            self.assertEqual(self.api("chat.postMessage", args)[1]["error"], err)
        hdr = {"Authorization": "Bearer " + self.fs.token}
        for body, ctype, err in ((b"{", "application/json", "invalid_json"),
                                 (b"[1]", "application/json", "json_not_object"),
                                 (b'{"channel":"C0123ABCD","text":"caf\xe9"}',
                                  "application/json", "invalid_json"),
                                 (b"x", "text/plain", "invalid_post_type")):
            s, t, _ = http_post(self.fs.api_url + "/chat.postMessage", body, ctype, hdr)
            self.assertEqual(json.loads(t)["error"], err, body)
        # (urllib would add a form Content-Type by itself; http.client does not)
        conn = http.client.HTTPConnection("127.0.0.1", self.fs.port, timeout=5)
        conn.request("POST", "/api/chat.postMessage", body=b"x", headers=hdr)
        self.assertEqual(json.loads(conn.getresponse().read())["error"], "missing_post_type")
        conn.close()
        # missing charset is accepted with a warning
        s, t, _ = http_post(self.fs.api_url + "/chat.postMessage",
                            {"channel": "C0123ABCD", "text": "w"}, "application/json", hdr)
        self.assertEqual(json.loads(t)["warning"], "missing_charset")
        # form encoding with blocks as a JSON string
        s, j, _ = self.api("chat.postMessage",
                           {"channel": "C0123ABCD", "text": "f",
                            "blocks": json.dumps([section("form")])},
                           ctype="application/x-www-form-urlencoded")
        self.assertTrue(j["ok"], j)
        self.assertEqual(j["message"]["blocks"], [section("form")])

    def test_web_api_threads(self):
        self.fs.config(channels=["C0THREAD01", "C0THREAD02"])
        s, parent, _ = self.api("chat.postMessage", {"channel": "C0THREAD01", "text": "parent",
                                                     "blocks": ALERT["blocks"]})
        self.assertTrue(parent["ok"], parent)
        pts = parent["ts"]
        self.assertRegex(pts, r"^\d{10}\.\d{6}$")
        self.assertEqual(parent["message"]["ts"], pts)
        _, r1, _ = self.api("chat.postMessage", {"channel": "C0THREAD01", "text": "reply 1",
                                                 "thread_ts": pts})
        self.assertTrue(r1["ok"])
        self.assertEqual(r1["message"]["thread_ts"], pts)
        # replying to a reply's ts lands in the parent's thread (flagged)
        _, r2, _ = self.api("chat.postMessage", {"channel": "C0THREAD01", "text": "reply 2",
                                                 "thread_ts": r1["ts"]})
        self.assertEqual(r2["message"]["thread_ts"], pts)
        self.assertEqual(self.fs.stats()["reply_to_reply"], 1)
        for ts in ("1000000000.000001", "not-a-ts"):
            self.assertEqual(self.api("chat.postMessage", {"channel": "C0THREAD01",
                                                           "text": "x", "thread_ts": ts})[1],
                             {"ok": False, "error": "thread_not_found"})
        # a parent from another channel is not a parent here
        self.assertEqual(self.api("chat.postMessage", {"channel": "C0THREAD02", "text": "x",
                                                       "thread_ts": pts})[1]["error"],
                         "thread_not_found")
        msgs = self.fs.messages(channel_id="C0THREAD01")
        self.assertEqual([m["text"] for m in msgs], ["parent", "reply 1", "reply 2"])
        self.assertEqual([m["thread_ts"] for m in msgs], [None, pts, pts])
        self.assertEqual([m["reply_to_reply"] for m in msgs], [False, False, True])
        self.assertEqual(msgs[2]["thread_ts_requested"], r1["ts"])
        tss = [m["ts"] for m in msgs]
        self.assertEqual(len(set(tss)), 3)
        self.assertEqual(tss, sorted(tss, key=lambda t: tuple(map(int, t.split(".")))))
        self.assertEqual(len(self.fs.messages(thread_ts=pts)), 2)

    def test_file_upload_three_steps(self):
        self.fs.config(channels=[{"id": "C0FILES001", "name": "alerts"}])
        _, parent, _ = self.api("chat.postMessage", {"channel": "C0FILES001", "text": "p"})
        content = ("line \u2603\n" * 200).encode()
        for bad, err in (({"length": len(content)}, "missing_argument"),
                         ({"filename": "a.txt"}, "missing_argument"),
                         ({"filename": "a.txt", "length": 0}, "missing_argument"),
                         ({"filename": "a.txt", "length": "12x"}, "invalid_arguments"),
                         ({"filename": "a.txt", "length": 5, "alt_txt": "a" * 1001},
                          "alt_txt_too_large")):
            self.assertEqual(self.api("files.getUploadURLExternal", bad,
                                      ctype="application/x-www-form-urlencoded")[1]["error"],
                             err, bad)
        # step 1 (form-encoded, as the docs show)
        _, up, _ = self.api("files.getUploadURLExternal",
                            {"filename": "trainer-0.log", "length": len(content)},
                            ctype="application/x-www-form-urlencoded")
        self.assertTrue(up["ok"], up)
        self.assertRegex(up["file_id"], r"^F[0-9A-F]+$")
        self.assertTrue(up["upload_url"].startswith(self.fs.base_url + "/upload/v1/"))
        # completing before uploading fails
        self.assertEqual(self.api("files.completeUploadExternal",
                                  {"files": [{"id": up["file_id"]}],
                                   "channel_id": "C0FILES001"})[1]["error"],
                         "file_not_uploaded")
        # step 2: wrong length refused, then raw bytes accepted
        self.assertEqual(http_post(up["upload_url"], content[:-1],
                                   "application/octet-stream")[0], 400)
        s, b, _ = http_post(up["upload_url"], content, "application/octet-stream")
        self.assertEqual((s, b), (200, "OK - %d" % len(content)))
        # step 3 into the thread
        bad_thread = {"files": [{"id": up["file_id"]}], "channel_id": "C0FILES001",
                      "thread_ts": "1000000000.000001"}
        self.assertEqual(self.api("files.completeUploadExternal", bad_thread)[1]["error"],
                         "thread_not_found")
        self.assertEqual(self.api("files.completeUploadExternal",
                                  {"files": [{"id": "F0000NOPE"}]})[1]["error"],
                         "file_not_found")
        _, done, _ = self.api("files.completeUploadExternal",
                              {"files": [{"id": up["file_id"], "title": "previous logs"}],
                               "channel_id": "C0FILES001", "thread_ts": parent["ts"],
                               "initial_comment": "logs of the last crash"})
        self.assertTrue(done["ok"], done)
        self.assertEqual(done["files"][0]["id"], up["file_id"])
        self.assertEqual(done["files"][0]["title"], "previous logs")
        # only once
        self.assertEqual(self.api("files.completeUploadExternal",
                                  {"files": [{"id": up["file_id"]}]})[1]["error"],
                         "file_not_found")
        (f,) = self.fs.files()
        self.assertEqual((f["filename"], f["length"], f["received_bytes"], f["text"]),
                         ("trainer-0.log", len(content), len(content), content.decode()))
        self.assertEqual((f["channel_id"], f["thread_ts"], f["initial_comment"]),
                         ("C0FILES001", parent["ts"], "logs of the last crash"))
        share = self.fs.messages(kind="file_share")
        self.assertEqual(len(share), 1)
        self.assertEqual((share[0]["thread_ts"], share[0]["files"]),
                         (parent["ts"], [up["file_id"]]))
        # multipart upload (curl -F style), JSON step 1, no channel -> private
        _, up2, _ = self.api("files.getUploadURLExternal", {"filename": "b.bin", "length": 4})
        boundary = "xYzZY"
        mp = ("--%s\r\nContent-Disposition: form-data; name=\"filename\"; filename=\"b.bin\""
              "\r\nContent-Type: application/octet-stream\r\n\r\n" % boundary).encode() + \
            b"\x00\xff\x01\x02" + ("\r\n--%s--\r\n" % boundary).encode()
        s, b, _ = http_post(up2["upload_url"], mp,
                            "multipart/form-data; boundary=%s" % boundary)
        self.assertEqual((s, b), (200, "OK - 4"))
        self.assertTrue(self.api("files.completeUploadExternal",
                                 {"files": [{"id": up2["file_id"]}]})[1]["ok"])
        f2 = [x for x in self.fs.files() if x["id"] == up2["file_id"]][0]
        self.assertEqual((f2["content_base64"], f2["text"], f2["channel_id"]),
                         ("AP8BAg==", None, None))
        self.assertEqual(self.fs.stats()["accepted"]["files"], 2)

    def test_admin_errors(self):
        with self.assertRaises(FakeSlackError) as cm:
            self.fs.config(bogus=1)
        self.assertEqual(cm.exception.status, 400)
        with self.assertRaises(FakeSlackError):
            self.fs.config(rate_limit={"burst": 0})
        with self.assertRaises(FakeSlackError):
            self.fs.config(limits={"max_blokcs": 3})
        with self.assertRaises(FakeSlackError):
            self.fs.config(channels=["general"])
        self.fs.config(limits={"max_blocks": 2})
        try:
            self.assertEqual(http_post(self.url, {"blocks": [section("a")] * 3})[:2],
                             (400, "invalid_blocks"))
        finally:
            self.fs.config(limits={"max_blocks": None})
        self.assertEqual(self.fs.get_config()["limits"]["max_blocks"], 50)


class FakeSlackTlsCurlTest(unittest.TestCase):
    def test_curl_over_tls(self):
        for tool in ("curl", "openssl"):
            if shutil.which(tool) is None:
                self.fail("%s is not installed: scripts/setup-test installs it" % tool)
        with FakeSlack(tls=True) as fs:
            url = fs.webhook_url("alerts")
            self.assertTrue(url.startswith("https://127.0.0.1:"))
            r = subprocess.run(["curl", "-sS", "--max-time", "10", "--cacert", fs.ca,
                                "-H", "Content-Type: application/json",
                                "-d", json.dumps(ALERT), "-w", "\n%{http_code}", url],
                               capture_output=True, text=True, timeout=20)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "ok\n200")
            r = subprocess.run(["curl", "-sS", "--max-time", "10", "--cacert", fs.ca,
                                "-H", "Content-Type: application/json", "-d",
                                json.dumps({"blocks": [section("x")] * 51}),
                                "-w", "\n%{http_code}", url],
                               capture_output=True, text=True, timeout=20)
            self.assertEqual(r.stdout, "invalid_blocks\n400")
            self.assertEqual(len(fs.messages()), 1)
            log = fs.log_tail()
            self.assertNotIn(fs.webhook_path("alerts").rsplit("/", 1)[1], log)


if __name__ == "__main__":
    unittest.main(argv=strip_krc_arg(sys.argv))
