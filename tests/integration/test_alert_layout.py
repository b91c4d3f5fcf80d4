#!/usr/bin/env python3
"""The alert message design on the demo's messages (issue 25, "alerts with nothing to skip";
docs/destinations.md, "The message"):

    python3 test_alert_layout.py --krc /path/to/krc [unittest options]

One `krc demo` run (about 20 s) serves every test:

- height: headless Chromium (Debian's `chromium`, a test dependency: its absence FAILS the test)
  loads a copy of alerts.html in a 1280x800 window and measures every message's rendered
  height (the copy differs from the page only by a script that writes each message's height
  into the DOM, and by the Content-Security-Policy that would forbid it); each must be at most
  800 px, one screen.
- notification: the `text` of every message the webhook received (what a phone shows),
  as displayed (an emoji code is one character, entities are one), is at most 150 characters
  and holds the headline: the cause's title and the pod, or the storm and what it shares.
- each field once: in the visible text of every restart alert (the Block Kit texts; code
  blocks, i.e. the kubectl commands and the log tail, are not counted) each field value of the
  restart's report appears once: the restart count, the exit code, the termination reason,
  the cause (its title only in the header, its code only in the header's block_id, never as
  a code in the text), the node
  name, the container name (as a named container: "(app)", "container app", "Container
  app", its own events' words not counted), each event message, the pod age; and nothing the
  issue calls noise: no pod UID, no back-off boilerplate (CrashLoopBackOff, "Back-off
  restarting failed container"), no Normal event that is not evidence, no "N seconds ago".
- the node failure leads: the NotReady node's alerts are headed "Node NAME NotReady" and
  the storm summary says the grouped restarts ran on that node, "which is NotReady".
"""
import argparse
import html
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

KRC = None
SCREEN_W, SCREEN_H = 1280, 800
NOTIFY_MAX = 150
STORM_NODE = "small-1gb-3"
RUN = {}

MEASURE = """<script>
for (const m of document.querySelectorAll('.msg')) {
  m.setAttribute('data-height', String(Math.ceil(m.getBoundingClientRect().height)));
}
</script>"""


def setUpModule():
    RUN["tmp"] = tempfile.TemporaryDirectory(prefix="krc-alert-layout-")
    out = os.path.join(RUN["tmp"].name, "out")
    p = subprocess.run([KRC, "demo", "--out", out], capture_output=True, text=True, timeout=240)
    RUN.update(out=out, proc=p, page=os.path.join(out, "alerts.html"),
               db=os.path.join(out, "history.db"))


def tearDownModule():
    RUN["tmp"].cleanup()


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def message_heights(page_html, workdir):
    """{message id: rendered height in px} of every .msg of the page in a 1280x800 window."""
    exe = chromium()
    if exe is None:
        raise AssertionError("chromium is not installed: scripts/setup-test installs Debian's "
                             "chromium as a test dependency")
    csp = re.compile(r'<meta http-equiv="Content-Security-Policy"[^>]*>')
    assert csp.search(page_html), "the page's Content-Security-Policy moved: update the test"
    copy = csp.sub("", page_html).replace("</body>", MEASURE + "</body>")
    path = os.path.join(workdir, "measure.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(copy)
    with tempfile.TemporaryDirectory(prefix="krc-chromium-", dir=workdir) as profile:
        cmd = [exe, "--headless", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               "--disable-extensions", f"--user-data-dir={profile}",
               f"--window-size={SCREEN_W},{SCREEN_H}", "--dump-dom", "file://" + path]
        if os.geteuid() == 0:
            cmd.insert(1, "--no-sandbox")
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    if p.returncode != 0:
        raise AssertionError("chromium failed: " + p.stderr[-2000:])
    found = re.findall(r'<div class="msg[^"]*" id="(m\d+)" data-height="(\d+)"', p.stdout)
    return {k: int(v) for k, v in found}


def blocks_of(body):
    m = json.loads(body)
    blocks = m.get("blocks")
    if blocks is None and m.get("attachments"):
        blocks = m["attachments"][0].get("blocks")
    return m, blocks or []


def block_texts(blocks):
    for b in blocks:
        if isinstance(b.get("text"), dict):
            yield b["type"], b["text"]["text"]
        for e in b.get("fields", []) + b.get("elements", []):
            yield b["type"], e["text"]


def visible(mrkdwn):
    """What a reader sees of a mrkdwn text, without its code blocks (commands, log)."""
    t = re.sub(r"```.*?```", " ", mrkdwn, flags=re.S)
    t = t.replace("\u200b", "").replace("`", "")
    t = re.sub(r"(?<![\w])[*_]|[*_](?![\w])", "", t)
    return html.unescape(t)


def shown_length(text):
    """The length a phone shows: an emoji code is one character, an entity one."""
    return len(html.unescape(re.sub(r":[a-z0-9_+-]+:", "e", text)))


def name_count(text, name):
    return len(re.findall(r"(?<![\w.-])%s(?![\w-]|\.\w)" % re.escape(name), text))


def restart_count_mentions(text, n):
    pats = [r"\b(\d+) restarts?\b", r"\bRestarts (\d+)\b"]
    return sum(1 for p in pats for m in re.finditer(p, text) if int(m.group(1)) == n)


def exit_mentions(text, code):
    pat = r"\b(?:exit(?:ed)?(?: with)?(?: code)?|exitCode=|Exit)\s*(\d+)\b"
    return sum(1 for m in re.finditer(pat, text) if int(m.group(1)) == code)


class AlertLayoutTest(unittest.TestCase):
    def setUp(self):
        self.assertEqual(RUN["proc"].returncode, 0, RUN["proc"].stderr[-3000:])

    def messages(self):
        """(kind, body, report or None) of every message the demo's webhooks received."""
        with sqlite3.connect("file:%s?mode=ro" % RUN["db"], uri=True) as db:
            rows = db.execute(
                "SELECT o.kind, o.body, r.report_json FROM outbox o LEFT JOIN reports r"
                " ON r.restart_id = o.restart_id WHERE o.state = 'delivered'"
                " AND o.destination != 'dest:kubernetes-event' ORDER BY o.id").fetchall()
        self.assertGreater(len(rows), 5)
        return [(k, b, json.loads(r) if r else None) for k, b, r in rows]

    def test_every_message_fits_one_screen(self):
        with open(RUN["page"], encoding="utf-8") as f:
            page = f.read()
        heights = message_heights(page, RUN["tmp"].name)
        n = len(re.findall(r'<div class="msg[^"]*" id="m\d+"', page))
        self.assertEqual(len(heights), n, "every message measured")
        self.assertGreater(n, 5)
        for mid, h in sorted(heights.items(), key=lambda kv: int(kv[0][1:])):
            print("  %s: %d px" % (mid, h), file=sys.stderr)
            self.assertGreater(h, 40, mid)  # measured, not an empty box
            self.assertLessEqual(h, SCREEN_H, "message %s is %d px tall: more than one %dx%d "
                                 "screen" % (mid, h, SCREEN_W, SCREEN_H))

    def test_notification_fits_a_phone(self):
        for kind, body, rep in self.messages():
            text = json.loads(body)["text"]
            self.assertLessEqual(shown_length(text), NOTIFY_MAX, text)
            if kind == "alert":
                pod = rep["pod"]
                self.assertIn("%s/%s" % (pod["namespace"], pod["name"]), text)
                self.assertIn(" \u2014 ", text)  # a summary follows the headline
            else:
                self.assertIn("Restart storm", text)

    def test_each_field_once(self):
        checked = 0
        for kind, body, rep in self.messages():
            if kind != "alert":
                continue
            checked += 1
            m, blocks = blocks_of(body)
            texts = list(block_texts(blocks))
            raw = "\n".join(t for _, t in texts)
            seen = visible(raw)
            d, pod = rep["diagnosis"], rep["pod"]
            where = "%s/%s: %s" % (pod["namespace"], pod["name"], seen)
            # the cause: its title once (the header), its code only in the header's block_id
            header = blocks[0]
            self.assertEqual(header["type"], "header")
            self.assertEqual(header.get("block_id"), "cause:" + d["cause"])
            # (a code that is an English word, "killed", may be said in prose: not as a code)
            self.assertNotIn("`%s`" % d["cause"], raw, where)
            self.assertNotIn("`%s`" % d["cause"], m["text"])
            if "_" in d["cause"]:
                self.assertNotIn(d["cause"], seen, where)
                self.assertNotIn(d["cause"], m["text"])
            title = header["text"]["text"].split(": ")[0].split(" \u00b7 ")[-1].split("] ")[-1]
            self.assertNotIn("*%s*" % title, raw, where)  # no second, bold cause label
            self.assertEqual(header["text"]["text"].count(title), 1, where)
            # the restart count and the exit code
            self.assertEqual(restart_count_mentions(seen, d["restart_count"]), 1, where)
            if d["has_termination"]:
                self.assertEqual(exit_mentions(seen, d["exit_code"]), 1, where)
            # the termination reason (said by the title when they are the same word)
            if d["reason"]:
                n = len(re.findall(r"\b(?:reason[ =]|Reason )%s\b" % re.escape(d["reason"]),
                                   seen))
                if d["reason"] == title:
                    self.assertLessEqual(n, 1, where)
                else:
                    self.assertEqual(n, 1, where)
            # the node and the container, each named once (a change of the node before the
            # crash names it again in "What changed": that line is the change's, not a field)
            if pod["node"]:
                fields = seen
                if rep.get("what_changed"):
                    fields = fields.replace(visible(rep["what_changed"]["summary"]), " ")
                self.assertEqual(name_count(fields, pod["node"]), 1, where)
            own = seen
            for ev in rep["events"]:
                own = own.replace(ev["message"] or "\0", " ")
            named = len(re.findall(r"(?:\(|[Cc]ontainer )%s(?![\w-])" % re.escape(d["container"]),
                                   own))
            self.assertEqual(named, 1, where)
            # each event message once; Normal events only when they are evidence; no
            # back-off boilerplate
            for ev in rep["events"]:
                msg = (ev["message"] or "")[:60]
                if not msg:
                    continue
                self.assertLessEqual(seen.count(msg), 1, where)
                quoted = any(e.startswith("event %s" % ev["reason"]) for e in d["evidence"])
                if ev["type"] == "Normal" and not quoted:
                    self.assertNotIn(msg, seen, where)
            self.assertNotIn("CrashLoopBackOff", seen, where)
            self.assertNotIn("Back-off restarting failed container", seen, where)
            # the pod's age once, no "N seconds ago", no pod UID in the chat text
            self.assertLessEqual(seen.count("Pod age"), 1, where)
            self.assertIsNone(re.search(r"\b\d+s ago\b", seen), where)
            self.assertNotIn(pod["uid"], body)
            # the log's absence said at most once
            absent = r"no previous log|previous log[^.\n]*not (?:available|included)"
            self.assertLessEqual(len(re.findall(absent, seen, re.I)), 1, where)
        self.assertGreater(checked, 5)

    def test_node_failure_leads(self):
        storm_alerts = 0
        for kind, body, rep in self.messages():
            m, blocks = blocks_of(body)
            head = blocks[0]["text"]["text"]
            if kind == "alert" and rep["pod"]["node"] == STORM_NODE:
                storm_alerts += 1
                # "Node n NotReady: ns/pod" for node_not_ready (its title would say it
                # again), else "Node n NotReady · <cause>: ns/pod"
                self.assertRegex(head, r"\] Node %s NotReady(?:: | \u00b7 )" % re.escape(STORM_NODE))
                self.assertTrue(m["text"].split("] ", 1)[1].startswith(
                    "Node %s NotReady" % STORM_NODE), m["text"])
                seen = visible("\n".join(t for _, t in block_texts(blocks)))
                # each node condition once (the demo's node has four, all Unknown)
                self.assertEqual(seen.count("Kubelet stopped posting node status."), 1, seen)
                self.assertNotIn("Node is not ready", seen)  # the pod's echo of the node line
            elif kind == "alert":
                self.assertNotIn("NotReady", head)
            else:
                self.assertIn("on node %s, which is NotReady" % STORM_NODE, m["text"])
                seen = visible("\n".join(t for _, t in block_texts(blocks)))
                self.assertIn("on node %s, which is NotReady" % STORM_NODE, seen)
                self.assertEqual(name_count(seen, STORM_NODE), 1, seen)
        self.assertGreater(storm_alerts, 0)


def main():
    global KRC
    ap = argparse.ArgumentParser()
    ap.add_argument("--krc", required=True)
    args, rest = ap.parse_known_args()
    KRC = os.path.abspath(args.krc)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
