"""The last log lines, really (issue 11, item 6): the real `krc run` against the fake API
server (which applies tailLines and limitBytes as the real one does: limitBytes counts from
the start of the tailLines window) and the fake Slack.

A 300 KB line followed by `fatal: boom` must give a message and a stored report that show
`fatal: boom` and say truthfully what was cut; a window longer than the transfer cap says
where reading stopped; Slack shows one time stamp per line. The same through
`krc explain --logs` with a log file larger than what explain keeps.

    python3 tests/integration/test_log_tail.py --krc build/krc
"""

import json
import os
import re
import subprocess
import tempfile

import krc_harness as h
import test_alerts as ta

LONG = 300 * 1024
# the kubelet's time stamp prefix as the fake API server writes it (timestamps=true; nine
# fraction digits, unlike the application stamps below)
KUBELET_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z ")
POD_FIXTURE = os.path.join(h.ROOT, "tests", "fixtures", "corpus", "15-webhook-relay-typeerror",
                           "pod.json")


def log_header(msg):
    """The text of the "*Previous log*" section."""
    b = ta.find_block(msg, "*Previous log*")
    return ta.block_text(b) if b is not None else ""


def history_show(krc, rid, fmt):
    p = subprocess.run([h.krc_binary(), "history", "show", str(rid), "--db",
                        os.path.join(krc.dbdir, "krc.db"), "--format", fmt],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise AssertionError("krc history show: exit %d: %s" % (p.returncode, p.stderr))
    return p.stdout


class LiveLogTail(ta.AlertTestBase):
    def restart_with(self, log, env=None):
        url = self.webhook("alerts")
        self.kube.create_pod("shop", "api-0")
        full = {"SLACK_WEBHOOK_URL": url}
        full.update(env or {})
        self.start_krc(full)
        self.kube.restart("shop", "api-0", "app", exit_code=1, reason="Error", logs=log)
        msg = self.only_message()
        self.wait_log("posted (1 attempt)")
        self.assert_no_rejections()
        return msg

    def stored_report(self):
        out = json.loads(history_show(self.krc, 1, "json"))
        return out.get("report") or out

    def test_long_line_then_fatal_shows_the_fatal_line(self):
        log = "starting worker\n" + "x" * LONG + "\n" + "fatal: boom\n"
        msg = self.restart_with(log)
        code = ta.log_code(msg)
        self.assertIn("fatal: boom", code, "the last line is missing:\n" + ta.full_text(msg))
        head = log_header(msg)
        self.assertNotIn("older lines are lost", ta.full_text(msg))
        self.assertRegex(head, r"first 300 KB of the 300 KB read dropped to keep the last "
                               r"\d+ bytes, from a line start")
        self.assertNotIn("transfer cap", head)
        # the request: the whole window (50 lines), limitBytes only as the transfer cap
        (req,) = [r for r in self.kube.requests() if r["path"].endswith("/log")]
        self.assertEqual((req["query"].get("tailLines"), req["query"].get("limitBytes")),
                         ("50", str(4 * 1024 * 1024 + 1)))
        # the stored report says the same
        rep = self.stored_report()
        log_obj = rep["log"]
        self.assertIn("fatal: boom", log_obj["text"])
        self.assertNotIn("xxxxxxxx", log_obj["text"])
        self.assertTrue(log_obj["truncated"])
        cut = log_obj["cut"]
        self.assertEqual(cut["received_bytes"], len(log.encode()) + 3 * 31)  # + 3 stamps
        self.assertEqual(cut["received_bytes"] - cut["dropped_bytes"], log_obj["bytes"])
        self.assertFalse(cut["head_line_cut"])
        self.assertFalse(cut["transfer_limit_hit"])
        self.assertIn("dropped to keep the last", cut["note"])
        shown = history_show(self.krc, 1, "text")
        self.assertIn("fatal: boom", shown)
        self.assertIn("dropped to keep the last", shown)

    def test_log_retried_after_401_is_streamed_the_same_way(self):
        url = self.webhook("alerts")
        self.kube.create_pod("shop", "api-0")
        self.start_krc({"SLACK_WEBHOOK_URL": url})
        self.kube.fault(type="http_error", status=401, count=1, path_regex="/log$")
        log = "starting worker\n" + "x" * LONG + "\n" + "fatal: boom\n"
        self.kube.restart("shop", "api-0", "app", exit_code=1, reason="Error", logs=log)
        msg = self.only_message()
        self.assertIn("fatal: boom", ta.log_code(msg))
        self.assertIn("dropped to keep the last", log_header(msg))
        statuses = [r["status"] for r in self.kube.requests() if r["path"].endswith("/log")]
        self.assertEqual(statuses, [401, 200])

    def test_only_one_long_line_keeps_its_end(self):
        log = "y" * (200 * 1024) + " the-end-of-the-line\n"
        msg = self.restart_with(log)
        head = log_header(msg)
        self.assertIn("to keep the last 64 KB, the end of one longer line", head)
        # the kept part is the end of the line; Slack shows its start (cut there)
        self.assertIn("\u2026yyyy", ta.log_code(msg))
        rep = self.stored_report()
        self.assertTrue(rep["log"]["text"].endswith("the-end-of-the-line\n"))
        self.assertTrue(rep["log"]["cut"]["head_line_cut"])

    def test_transfer_cap_says_where_reading_stopped(self):
        lines = ["line %05d %s\n" % (i, "z" * 3000) for i in range(40)]
        log = "".join(lines) + "fatal: never fetched\n"
        msg = self.restart_with(log, {"KRC_LOG_TRANSFER_LIMIT_BYTES": "100000"})
        (req,) = [r for r in self.kube.requests() if r["path"].endswith("/log")]
        self.assertEqual(req["query"].get("limitBytes"), "100001")
        head = log_header(msg)
        self.assertIn("reading stopped at the 98 KB transfer cap: anything after byte 100000 "
                      "was not fetched", head)
        self.assertIn("first ", head)
        code = ta.log_code(msg)
        # truthful: what was not fetched is not shown, what was is
        self.assertNotIn("never fetched", ta.full_text(msg))
        self.assertIn("the previous log was read only up to the transfer cap; its last lines "
                      "were not seen", ta.full_text(msg))
        self.assertNotIn("only its end was analysed", ta.full_text(msg))
        # the last line read (a chat message shows the last lines within its budget)
        self.assertIn("line 00032", code)
        cut = self.stored_report()["log"]["cut"]
        self.assertTrue(cut["transfer_limit_hit"])
        self.assertEqual((cut["received_bytes"], cut["transfer_limit_bytes"]), (100000, 100000))

    def test_short_log_no_cut_note(self):
        msg = self.restart_with("hello\nfatal: small\n")
        head = log_header(msg)
        # the checks below are vacuous on a message without the log section
        self.assertTrue(head, ta.full_text(msg))
        self.assertIn("fatal: small", ta.log_code(msg))
        self.assertNotIn("dropped", head)
        self.assertNotIn("cut", head.replace("[line cut]", ""))
        self.assertFalse(self.stored_report()["log"]["truncated"])

    def test_one_timestamp_per_line(self):
        log = ("2026-12-03T09:00:00.123Z INFO app stamp iso\n"
               "I1203 09:00:01.000000       1 main.go:12] klog stamp\n"
               '{"level":"info","ts":1764752402.5,"msg":"zap json"}\n'
               "no stamp of its own\n")
        msg = self.restart_with(log)
        code = ta.log_code(msg)
        rows = {}
        for line in code.split("\n"):
            for key in ("app stamp iso", "klog stamp", "zap json", "no stamp of its own"):
                if key in line:
                    rows[key] = line
        self.assertEqual(len(rows), 4, code)
        for key, line in rows.items():
            self.assertIsNone(KUBELET_STAMP.search(line), "kubelet stamp kept: %r" % line)
        self.assertTrue(rows["app stamp iso"].startswith("2026-12-03T09:00:00.123Z INFO"),
                        rows["app stamp iso"])
        self.assertTrue(rows["klog stamp"].startswith("I1203 09:00:01"), rows["klog stamp"])
        self.assertTrue(rows["zap json"].startswith("{"), rows["zap json"])
        self.assertRegex(rows["no stamp of its own"], r"^\d\d:\d\d:\d\dZ no stamp of its own$")
        # the stored report keeps the log as received (with the kubelet's stamps)
        text = self.stored_report()["log"]["text"]
        self.assertEqual(len(KUBELET_STAMP.findall(text)), 4, text)


class WebApiLogFile(ta.AlertTestBase):
    def test_log_file_keeps_the_end_of_a_long_log(self):
        self.kube.create_pod("shop", "cart-0")
        self.start_krc({"SLACK_BOT_TOKEN": self.slack.token, "SLACK_CHANNEL": "#alerts",
                        "KRC_SLACK_API_URL": self.slack.api_url})
        self.wait_log("Web API")
        # 6 MB of lines, more than the 4 MiB the file keeps, then the fatal line
        full = "".join("request %06d served in 12ms %s\n" % (i, "p" * 100)
                       for i in range(1, 45001))
        full += "fatal: boom at the very end\n"
        self.kube.restart("shop", "cart-0", "app", exit_code=2, reason="Error", logs=full)
        files = self.slack.wait_for(lambda: [f for f in self.slack.files() if f["completed"]],
                                    30, what="a completed file upload")
        text = files[0]["text"]
        # (not assertIn: a failure would print megabytes)
        self.assertTrue("fatal: boom at the very end" in text,
                        "the fatal line is missing; the file ends with %r" % text[-200:])
        self.assertFalse("request 000001 served" in text, "the file holds the log's start")
        self.assertLessEqual(len(text.encode()), 4 * 1024 * 1024)
        # the file starts at a line
        self.assertRegex(text.split("\n", 1)[0], r"^\d{4}-\d\d-\d\dT[\d:.]+Z request \d{6} served")
        (req,) = [r for r in self.kube.requests()
                  if r["path"].endswith("/log") and "tailLines" not in r["query"]]
        self.assertEqual(req["query"].get("limitBytes"), str(16 * 1024 * 1024 + 1))


class ExplainLogTail(h.unittest.TestCase):
    def explain(self, log_bytes, fmt):
        with tempfile.NamedTemporaryFile(prefix="krc-logtail-", suffix=".log") as f:
            f.write(log_bytes)
            f.flush()
            p = subprocess.run([h.krc_binary(), "explain", "--pod", POD_FIXTURE, "--logs",
                                f.name, "--format", fmt], capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        return p.stdout.decode()

    def test_explain_long_line_then_fatal(self):
        log = b"starting\n" + b"x" * LONG + b"\nfatal: boom\n"
        out = json.loads(self.explain(log, "slack"))
        text = "\n".join(ta.texts(out))
        self.assertIn("fatal: boom", text)
        self.assertNotIn("older lines are lost", text)

    def test_explain_file_larger_than_kept(self):
        big = 9 * 1024 * 1024  # explain keeps the last 8 MiB
        log = b"q" * big + b"\nafter the long line\nfatal: boom\n"
        out = json.loads(self.explain(log, "slack"))
        text = "\n".join(ta.texts(out))
        self.assertIn("fatal: boom", text)
        self.assertNotIn("older lines are lost", text)
        self.assertIn("first 9.0 MB of the 9.0 MB read dropped to keep the last 32 bytes, "
                      "from a line start", text)


if __name__ == "__main__":
    h.main()
