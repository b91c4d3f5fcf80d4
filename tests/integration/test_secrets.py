"""Secrets never leave krc (issue 24): the corpus of secret forms (tests/fixtures/secrets/corpus.txt)
is put into pods' annotations, labels, events, termination messages and previous logs on the fake
API server (tests/fakekube); the real `krc run` diagnoses their restarts and sends them to Slack
(tests/fakeslack), a signed webhook, PagerDuty, Teams and Google Chat (tests/fakedest) and as
Kubernetes Events. No corpus secret may then appear in:

  - any Slack message, any other destination's body, the Kubernetes Events the API server got;
  - the SQLite history (every column of every table), `krc history show ID` (text and JSON);
  - `krc mcp` (get_restart_report, list_restarts, explain_pod on the live pod);
  - krc's own log (the "restart diagnosed ... summary=" line included);
  - `krc explain` (text, JSON and Slack) on the same pod's saved objects.

A `redactPatterns` entry matches a customer number in the log line the summary quotes: it is gone
from the summary everywhere too. Non-secrets of the corpus ("keep" lines) come through unchanged,
and the non-secret part of a key=value stays readable (`DB_PASS=[REDACTED]`).

    python3 tests/integration/test_secrets.py --krc build/krc
"""

import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

import krc_harness as h
import test_destinations as td
from test_alerts import AlertTestBase

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakedest"))
import fakedest  # noqa: E402

CORPUS = os.path.join(h.ROOT, "tests", "fixtures", "secrets", "corpus.txt")
NS = "vault-ns"
PODS = 6
CUSTOMER = "cust-42424%d"  # matched by the configured redactPatterns entry
PATTERN = "cust-[0-9]{6}"
LAST = "fatal: login failed for " + CUSTOMER + " DB_PASS=dbC0rpLast%d"
EVENTS = "/apis/events.k8s.io/v1/namespaces/%s/events" % NS
WINDOW = 12  # a leak of any 12 consecutive characters of a secret counts


def read_corpus(path=CORPUS):
    """(texts, annotations, labels, keeps, secrets): texts are (text, [secret]) pairs."""
    texts, annotations, labels, keeps, secrets = [], {}, {}, [], []
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            kind = "text"
            for k in ("annotation ", "label ", "keep "):
                if line.startswith(k):
                    kind, line = k.strip(), line[len(k):]
            key = None
            if kind in ("annotation", "label"):
                key, line = line.split(" ", 1)
            found = re.findall(r"\{\{(.*?)\}\}", line)
            text = re.sub(r"\{\{(.*?)\}\}", r"\1", line).replace("\\n", "\n")
            secrets += found
            if kind == "text":
                texts.append((text, found))
            elif kind == "annotation":
                annotations[key] = text
            elif kind == "label":
                labels[key] = text
            else:
                keeps.append(text)
    return texts, annotations, labels, keeps, secrets


def leaks(text, secrets):
    """The secrets of which some WINDOW characters are in text."""
    out = []
    for s in secrets:
        n = min(WINDOW, len(s))
        if any(s[i:i + n] in text for i in range(len(s) - n + 1)):
            out.append(s)
    return out


class SecretCorpusTest(AlertTestBase):
    def setUp(self):
        super().setUp()
        # the test reads what krc wrote (events.k8s.io Events) with krc's token: no RBAC here
        # (the shipped RBAC is proven by every other test and by test_rbac)
        self.kube.set_rbac(None)
        self.dest = fakedest.FakeDest().start()
        self.addCleanup(self.dest.stop)
        self.tmp = tempfile.mkdtemp(prefix="krc-it-secrets-")
        self.tmpdirs.append(self.tmp)
        self.texts, self.annotations, self.labels, self.keeps, corpus = read_corpus()
        self.corpus = corpus + ["dbC0rpLast%d" % i for i in range(PODS)] + \
            [CUSTOMER % i for i in range(PODS)]
        # the destinations' own secrets, and the corpus, must not reach krc's log either
        self.secrets += [td.SIGNING_SECRET, td.ROUTING_KEY, td.HEADER_TOKEN] + self.corpus

    # the destination helpers of test_destinations (not inherited: its tests would run here)
    secret_file = td.DestinationTest.secret_file
    webhook_dest = td.DestinationTest.webhook_dest
    pd_dest = td.DestinationTest.pd_dest
    teams_dest = td.DestinationTest.teams_dest
    gchat_dest = td.DestinationTest.gchat_dest

    def kube_get(self, path):
        import ssl  # noqa: PLC0415
        import urllib.request  # noqa: PLC0415
        ctx = ssl.create_default_context(cafile=self.kube.ca)
        req = urllib.request.Request(self.kube.api_url + path, headers={
            "Authorization": "Bearer " + self.kube.current_token(), "Accept": "application/json"})
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            return json.loads(r.read())

    def krc_events(self):
        """The events.k8s.io Events krc wrote (not the pods' own, which hold the corpus)."""
        return [e for e in self.kube_get(EVENTS)["items"]
                if e.get("reportingController") == "krc.io/kube-restart-collector"]

    def assert_clean(self, where, text):
        found = leaks(text, self.corpus)
        self.assertEqual(found, [], "corpus secret(s) in %s: %r" % (where, found))

    def groups(self):
        """The corpus texts spread over the pods (each form lands in one pod)."""
        g = [[] for _ in range(PODS)]
        for i, (text, _) in enumerate(self.texts):
            g[i % PODS].append(text)
        return g

    def run_krc(self, db, slack):
        chat, chat_url = self.gchat_dest()
        config = ("destinations:\n" + self.webhook_dest() + self.pd_dest() + self.teams_dest() +
                  chat + "redactPatterns:\n  - '%s'\n" % PATTERN)
        self.start_krc({"KRC_IT_PD_KEY": td.ROUTING_KEY, "MUTE_SECONDS": "0", "KRC_DB": db,
                        "SLACK_WEBHOOK_URL": slack, "KRC_IT_GCHAT_URL": chat_url,
                        "KRC_STORM_THRESHOLD": "1000", "POD_NAME": "krc-secrets-0"},
                       ["--config", self.config_file(config)])

    def make_restarts(self):
        logs = {}
        for i, group in enumerate(self.groups()):
            name = "sec-%d" % i
            pod = self.kube.create_pod(NS, name, labels=dict(self.labels),
                                       annotations=dict(self.annotations))
            for text in group:
                self.kube.add_pod_event(pod, "AppWarning", text, container="app")
            lines = group + (self.keeps if i == 0 else []) + [LAST % (i, i)]
            logs[name] = "\n".join(lines) + "\n"
            self.kube.restart(NS, name, "app", exit_code=1, reason="Error", message=group[0],
                              logs=logs[name])
        return logs

    def test_no_corpus_secret_in_any_output(self):
        db = os.path.join(self.tmp, "krc.db")
        slack = self.webhook("alerts")
        self.run_krc(db, slack)
        logs = self.make_restarts()

        # ---- every destination got every restart ----
        msgs = self.slack.wait_messages(PODS, timeout=60)
        sent = {p: self.dest.wait(PODS, p, timeout=60)
                for p in ("/webhook/", "/pagerduty/", "/teams/", "/chat/")}
        diagnosed = self.krc.wait_diagnosed(PODS, timeout=60)
        h.wait_until(lambda: len(self.krc_events()) >= PODS, 30 * h.SLOWDOWN,
                     what="%d Kubernetes Events" % PODS)
        self.assertGreaterEqual(len(msgs), PODS)
        for m in msgs:
            self.assert_clean("a Slack message", json.dumps(m))
        for path, reqs in sent.items():
            for r in reqs:
                self.assertEqual(r["errors"], [], "%s broke its format's rules" % r["path"])
                self.assert_clean("a request to %s" % path, r["raw"].decode("utf-8", "replace"))
        # the forms were in what was sent, redacted, with their keys readable
        slack_text = json.dumps(msgs)
        self.assertIn("DB_PASS=[REDACTED]", slack_text)
        hook = [r["json"]["report"] for r in sent["/webhook/"]]
        self.assertEqual({r["pod"]["annotations"]["example.com/db-password"] for r in hook},
                         {"[REDACTED]"})
        self.assertEqual({r["pod"]["labels"]["api-token"] for r in hook}, {"[REDACTED]"})

        # ---- the Kubernetes Events: cause and summary, no log text ----
        events = self.krc_events()
        self.assertEqual(len(events), PODS)
        for ev in events:
            note = ev["note"]
            self.assert_clean("a Kubernetes Event", json.dumps(ev))
            self.assertNotIn("ends with", note)
            self.assertNotIn("fatal: login failed", note)
            self.assertRegex(note, r"^[a-z_]+ \((high|medium|low) confidence\): Container app ")

        # ---- krc's log: the "restart diagnosed" summaries quote the redacted line ----
        for d in diagnosed:
            self.assertIn("[REDACTED]", d["summary"], d)
            self.assertNotIn("cust-", d["summary"])
        self.assert_clean("krc's log", self.krc.text())

        # ---- the history: every column of every table, and krc history show ----
        self.krc.stop(timeout=60)
        rows = h.history(db)
        self.assertEqual(len(rows), PODS)
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        try:
            tables = [t for (t,) in con.execute("SELECT name FROM sqlite_master "
                                                "WHERE type='table'")]
            dump = []
            for t in tables:
                for row in con.execute('SELECT * FROM "%s"' % t):
                    dump.append(" ".join(x.decode("utf-8", "replace") if isinstance(x, bytes)
                                         else str(x) for x in row))
        finally:
            con.close()
        self.assert_clean("the SQLite history", "\n".join(dump))
        with open(db, "rb") as f:  # the file itself too (no free page keeps a copy)
            self.assert_clean("the SQLite file", f.read().decode("latin-1"))
        shown = []
        for r in rows:
            for fmt in ("json", "text"):
                p = subprocess.run([h.krc_binary(), "history", "show", str(r["id"]), "--db", db,
                                    "--format", fmt], capture_output=True, text=True, timeout=30)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assert_clean("krc history show --format " + fmt, p.stdout + p.stderr)
                shown.append(p.stdout)
        all_shown = "\n".join(shown)
        for keep in self.keeps:  # not secrets: unchanged
            self.assertIn(keep, all_shown)
        self.assertIn("DB_PASS=[REDACTED]", all_shown)

        # ---- MCP over stdio: the history and the live explain_pod ----
        calls = [("list_restarts", {"namespace": NS})]
        calls += [("get_restart_report", {"id": r["id"]}) for r in rows]
        calls += [("explain_pod", {"namespace": NS, "pod": "sec-%d" % i}) for i in range(PODS)]
        out, err = self.mcp(db, calls)
        self.assertEqual(len(out), len(calls) + 1, err)
        for resp in out[1:]:
            self.assertFalse(resp["result"]["isError"], resp)
        self.assert_clean("krc mcp", json.dumps(out) + err)
        live = [resp["result"]["structuredContent"] for resp in out[-PODS:]]
        self.assertEqual({x["report"]["pod"]["annotations"]["example.com/db-password"]
                          for x in live}, {"[REDACTED]"})

        # ---- krc explain on the same pods' objects ----
        for i in range(PODS):
            name = "sec-%d" % i
            files = self.saved_objects(name, logs[name])
            for fmt in ("text", "json", "slack"):
                p = subprocess.run([h.krc_binary(), "explain", "--pod", files[0], "--events",
                                    files[1], "--logs", files[2], "--format", fmt],
                                   capture_output=True, text=True, timeout=30,
                                   env=dict(os.environ, KRC_REDACT_PATTERNS=PATTERN))
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assert_clean("krc explain --format %s (%s)" % (fmt, name),
                                  p.stdout + p.stderr)
                self.assertIn("[REDACTED]", p.stdout)

    def mcp(self, db, calls):
        """Answers of one `krc mcp` over stdio to initialize and each call (the input ends
        after the last, so krc mcp exits), and its stderr."""
        msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "test_secrets", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"}]
        for i, (name, args) in enumerate(calls, 1):
            msgs.append({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                         "params": {"name": name, "arguments": args}})
        env = dict(os.environ, KRC_REDACT_PATTERNS=PATTERN)  # as `krc run` has them
        p = subprocess.run([h.krc_binary(), "mcp", "--db", db, "--kubeconfig",
                            self.kube.kubeconfig],
                           input="".join(json.dumps(m) + "\n" for m in msgs),
                           capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = sorted((json.loads(l) for l in p.stdout.splitlines() if l.strip()),
                     key=lambda r: r.get("id", -1))
        return out, p.stderr

    def saved_objects(self, name, log):
        """The pod, its events and its previous log in files, as `kubectl get -o json` and
        `kubectl logs --previous` would save them."""
        pod = self.kube_get("/api/v1/namespaces/%s/pods/%s" % (NS, name))
        events = self.kube_get("/api/v1/namespaces/%s/events?fieldSelector=involvedObject.name%%3D%s"
                               % (NS, name))
        paths = []
        for suffix, text in (("pod.json", json.dumps(pod)), ("events.json", json.dumps(events)),
                             ("logs.txt", log)):
            path = os.path.join(self.tmp, "%s-%s" % (name, suffix))
            with open(path, "w") as f:
                f.write(text)
            paths.append(path)
        return paths


if __name__ == "__main__":
    h.main()
