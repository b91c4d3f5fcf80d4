#!/usr/bin/env python3
"""Run the real `krc explain` on every case of tests/fixtures/corpus exactly
as the corpus interface prescribes, and on bad input.

    python3 test_explain_corpus.py --krc /path/to/krc [unittest options]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.normpath(os.path.join(HERE, "..", "fixtures", "corpus"))
CAUSES = {
    "oom_killed", "liveness_probe_failed", "startup_probe_failed", "command_not_found",
    "permission_denied", "segfault", "gpu_out_of_memory", "gpu_error",
    "dependency_unreachable", "app_error", "completed", "killed", "terminated",
    # issue 11
    "start_failed", "exec_format_error", "illegal_instruction", "aborted", "app_out_of_memory",
    "disk_full", "evicted", "unknown",
}
KRC = None
TIMEOUT = 10


def slack_texts(msg):
    """Every text of a Block Kit message (blocks at the top or in attachments)."""
    blocks = msg.get("blocks") or msg["attachments"][0]["blocks"]
    for b in blocks:
        if "text" in b:
            yield b["text"]["text"]
        for f in b.get("fields", []):
            yield f["text"]
        for e in b.get("elements", []):
            yield e["text"]


def units(s):
    return len(s.encode("utf-16-le")) // 2


def check_slack(test, msg):
    """Slack's limits and our escaping rules."""
    test.assertLessEqual(units(msg["text"]), 4000)
    blocks = msg.get("blocks") or msg["attachments"][0]["blocks"]
    test.assertLessEqual(len(blocks), 50)
    for b in blocks:
        if b["type"] == "header":
            test.assertEqual(b["text"]["type"], "plain_text")
            test.assertLessEqual(units(b["text"]["text"]), 150)
        elif b["type"] == "section":
            if "text" in b:
                test.assertEqual(b["text"]["type"], "mrkdwn")
                test.assertLessEqual(units(b["text"]["text"]), 3000)
            test.assertLessEqual(len(b.get("fields", [])), 10)
            for f in b.get("fields", []):
                test.assertLessEqual(units(f["text"]), 2000)
        else:
            test.assertEqual(b["type"], "context")
            test.assertLessEqual(len(b["elements"]), 10)
    for t in slack_texts(msg):
        test.assertNotIn("<", t)
        test.assertNotIn(">", t)
        test.assertEqual(t.count("```") % 2, 0, t)


def run(args, stdin=None):
    return subprocess.run([KRC, "explain"] + args, input=stdin, capture_output=True,
                          timeout=TIMEOUT)


def case_dirs():
    for name in sorted(os.listdir(CORPUS)):
        d = os.path.join(CORPUS, name)
        if os.path.isfile(os.path.join(d, "pod.json")):
            yield name, d


def corpus_args(d):
    args = ["--pod", os.path.join(d, "pod.json"), "--events", os.path.join(d, "events.json")]
    for opt, f in (("--node", "node.json"), ("--logs", "logs.txt")):
        if os.path.exists(os.path.join(d, f)):
            args += [opt, os.path.join(d, f)]
    return args


class CorpusTest(unittest.TestCase):
    def test_every_case(self):
        cases = list(case_dirs())
        self.assertGreaterEqual(len(cases), 20)
        correct = 0
        for name, d in cases:
            with self.subTest(case=name):
                with open(os.path.join(d, "expected.json"), encoding="utf-8") as f:
                    expected = json.load(f)
                p = run(corpus_args(d) + ["--format", "json"])
                self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
                out = json.loads(p.stdout)  # exactly one JSON value
                self.assertIsInstance(out, dict)
                for key in ("namespace", "pod", "container", "restart_count", "exit_code",
                            "signal", "reason", "cause", "summary", "evidence"):
                    self.assertIn(key, out)
                self.assertIn(out["cause"], CAUSES)
                self.assertIsInstance(out["evidence"], list)
                self.assertTrue(all(isinstance(e, str) for e in out["evidence"]))
                self.assertEqual(out["cause"], expected["cause"])
                self.assertEqual(out["container"], expected["container"])
                self.assertEqual(out["restart_count"], expected["restart_count"])
                self.assertEqual(out["exit_code"], expected["exit_code"])
                if out["exit_code"] > 128 and out["exit_code"] - 128 in (6, 9, 11, 15):
                    self.assertTrue(out["signal"].startswith("SIG"))
                correct += 1
        print(f"corpus: {correct}/{len(cases)} correct", file=sys.stderr)

    def test_text_and_slack_formats(self):
        name, d = next(iter(case_dirs()))
        p = run(corpus_args(d))
        self.assertEqual(p.returncode, 0, p.stderr)
        text = p.stdout.decode()
        self.assertIn("Cause:", text)
        self.assertIn("Summary:", text)

        for name, d in case_dirs():
            with self.subTest(case=name):
                p = run(corpus_args(d) + ["--format", "slack"])
                self.assertEqual(p.returncode, 0, p.stderr)
                msg = json.loads(p.stdout)
                check_slack(self, msg)
                self.assertEqual(msg["blocks"][0]["type"], "header")
                self.assertIn(":", msg["text"])

    def test_slack_cluster_name(self):
        name, d = next(iter(case_dirs()))
        env = dict(os.environ, CLUSTER_NAME="prod-eu")
        p = subprocess.run([KRC, "explain"] + corpus_args(d) + ["--format", "slack"],
                           capture_output=True, timeout=TIMEOUT, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        msg = json.loads(p.stdout)
        self.assertTrue(msg["blocks"][0]["text"]["text"].startswith("[prod-eu] "))
        self.assertIn("[prod-eu]", msg["text"])

    def test_slack_escapes_mrkdwn(self):
        # a log line with & < > and a mention ends up in the log tail, escaped;
        # a secret in it is redacted and the message says so
        d = os.path.join(CORPUS, "13-notifier-redis-refused")
        with tempfile.TemporaryDirectory() as tmp:
            logs = os.path.join(tmp, "logs.txt")
            with open(logs, "wb") as f:
                f.write(b"fatal: <redis> & co <!channel> ```x``` password=hunter2: dial tcp "
                        b"10.0.0.1:6379: connect: connection refused\n")
            p = run(["--pod", os.path.join(d, "pod.json"), "--events",
                     os.path.join(d, "events.json"), "--logs", logs, "--format", "slack"])
            self.assertEqual(p.returncode, 0, p.stderr)
            msg = json.loads(p.stdout)
            check_slack(self, msg)
            body = "\n".join(slack_texts(msg))
            self.assertIn("&lt;redis&gt; &amp; co &lt;!channel&gt;", body)
            self.assertNotIn("<redis>", body)
            self.assertNotIn("hunter2", body)
            self.assertIn("secret redacted", body)

    def test_pod_from_stdin(self):
        name, d = next(iter(case_dirs()))
        with open(os.path.join(d, "pod.json"), "rb") as f:
            pod = f.read()
        p = run(["--pod", "-", "--events", os.path.join(d, "events.json"), "--format", "json"],
                stdin=pod)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(json.loads(p.stdout)["cause"], CAUSES)


class BadInputTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.case = os.path.join(CORPUS, "01-orders-api-oomkilled")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, data):
        path = os.path.join(self.tmp.name, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def assertFails(self, p, status, *fragments):
        err = p.stderr.decode(errors="replace")
        self.assertEqual(p.returncode, status, err)
        self.assertEqual(p.stdout, b"")
        for frag in fragments:
            self.assertIn(frag, err)

    def test_missing_file(self):
        missing = os.path.join(self.tmp.name, "nope.json")
        self.assertFails(run(["--pod", missing, "--format", "json"]), 1, missing,
                         "No such file")
        self.assertFails(run(["--pod", os.path.join(self.case, "pod.json"), "--events", missing,
                              "--format", "json"]), 1, "--events", missing)

    def test_not_json(self):
        bad = self.write("pod.json", b'{\n  "kind": "Pod",\n  "metadata": [\n')
        self.assertFails(run(["--pod", bad, "--format", "json"]), 1, bad, "not JSON at line")
        bad = self.write("events.json", b"<html>502 Bad Gateway</html>")
        self.assertFails(run(["--pod", os.path.join(self.case, "pod.json"), "--events", bad,
                              "--format", "json"]), 1, bad, "not JSON at line 1")

    def test_node_given_as_pod(self):
        node = os.path.join(self.case, "node.json")
        self.assertFails(run(["--pod", node, "--format", "json"]), 1, node,
                         'not a Pod (kind "Node")')

    def test_pod_given_as_node(self):
        pod = os.path.join(self.case, "pod.json")
        self.assertFails(run(["--pod", pod, "--node", pod, "--format", "json"]), 1,
                         'not a Node (kind "Pod")')

    def test_unknown_container(self):
        p = run(corpus_args(self.case) + ["--container", "bogus", "--format", "json"])
        self.assertFails(p, 1, "--container", '"bogus" not found', "orders-api")

    def test_nothing_to_explain(self):
        with open(os.path.join(self.case, "pod.json"), encoding="utf-8") as f:
            pod = json.load(f)
        for st in pod["status"]["containerStatuses"]:
            st["lastState"] = {}
            st["restartCount"] = 0
        path = self.write("healthy.json", json.dumps(pod).encode())
        self.assertFails(run(["--pod", path, "--format", "json"]), 1, "nothing to explain")

    def test_usage_errors(self):
        pod = os.path.join(self.case, "pod.json")
        self.assertFails(run(["--format", "json"]), 2, "--pod")
        self.assertFails(run(["--pod", pod, "--format", "yaml"]), 2, "--format")
        self.assertFails(run(["--pod", pod, "--bogus"]), 2, "--bogus")
        self.assertFails(run(["--pod"]), 2, "--pod needs a value")


def main():
    global KRC
    ap = argparse.ArgumentParser()
    ap.add_argument("--krc", required=True, help="path to the krc binary")
    args, rest = ap.parse_known_args()
    KRC = os.path.abspath(args.krc)
    if not os.access(KRC, os.X_OK):
        print(f"not an executable: {KRC}", file=sys.stderr)
        return 2
    prog = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
