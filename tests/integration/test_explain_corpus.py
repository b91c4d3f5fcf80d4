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

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.normpath(os.path.join(HERE, "..", "fixtures", "corpus"))
CAUSES = {
    "oom_killed", "liveness_probe_failed", "startup_probe_failed", "command_not_found",
    "permission_denied", "segfault", "gpu_out_of_memory", "gpu_error",
    "dependency_unreachable", "app_error", "completed", "killed", "terminated",
    # issue 11
    "start_failed", "exec_format_error", "illegal_instruction", "aborted", "app_out_of_memory",
    "disk_full", "evicted", "node_not_ready", "unknown",
    # issue 26
    "restart_rule",
    "gpu_device_unhealthy",
    "restarted_with_others", "resize_restart", "sandbox_changed",
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


# ---- kubectl describe pod, rendered from a Pod object as kubectl prints it ----

def rfc1123(ts):
    """'2024-10-22T09:02:31Z' -> 'Tue, 22 Oct 2024 09:02:31 +0000' (kubectl's format)."""
    import datetime
    t = datetime.datetime.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S")
    return t.strftime("%a, %d %b %Y %H:%M:%S +0000")


def describe_probe(p):
    if "httpGet" in p:
        h = p["httpGet"]
        s = "http-get %s://:%s%s" % (h.get("scheme", "HTTP").lower(), h.get("port", ""),
                                     h.get("path", ""))
    elif "exec" in p:
        s = "exec [%s]" % " ".join(p["exec"].get("command", []))
    elif "tcpSocket" in p:
        s = "tcp-socket :%s" % p["tcpSocket"].get("port", "")
    elif "grpc" in p:
        s = "grpc <pod>:%s %s" % (p["grpc"].get("port", ""), p["grpc"].get("service", ""))
    else:
        s = "unknown"
    return s + " delay=%ds timeout=%ds period=%ds #success=%d #failure=%d" % (
        p.get("initialDelaySeconds", 0), p.get("timeoutSeconds", 1), p.get("periodSeconds", 10),
        p.get("successThreshold", 1), p.get("failureThreshold", 3))


def describe_state(out, label, st):
    if not st:
        return
    kind, v = next(iter(st.items()))
    out.append("    %-16s%s" % (label + ":", kind.capitalize()))
    for key, name in (("reason", "Reason"), ("message", "Message"), ("exitCode", "Exit Code"),
                      ("signal", "Signal"), ("startedAt", "Started"),
                      ("finishedAt", "Finished")):
        if key in v and v[key] is not None:
            val = v[key]
            if key in ("startedAt", "finishedAt"):
                val = rfc1123(val)
            if key == "message":
                val = str(val).replace("\n", " ")
            out.append("      %-14s%s" % (name + ":", val))


def describe_pod(pod, events=None):
    md, spec, status = pod["metadata"], pod.get("spec", {}), pod.get("status", {})
    out = ["Name:         " + md["name"], "Namespace:    " + md.get("namespace", "default"),
           "Priority:     0"]
    if spec.get("nodeName"):
        out.append("Node:         %s/%s" % (spec["nodeName"], status.get("hostIP", "10.0.0.1")))
    if md.get("labels"):
        items = ["%s=%s" % kv for kv in md["labels"].items()]
        out.append("Labels:       " + items[0])
        out += ["              " + i for i in items[1:]]
    out.append("Status:       " + status.get("phase", "Unknown"))
    if status.get("reason"):
        out.append("Reason:       " + status["reason"])
    refs = [r for r in md.get("ownerReferences", []) if r.get("controller")]
    if refs:
        out.append("Controlled By:  %s/%s" % (refs[0]["kind"], refs[0]["name"]))
    for section, sk, stk in (("Init Containers:", "initContainers", "initContainerStatuses"),
                             ("Containers:", "containers", "containerStatuses")):
        if not spec.get(sk):
            continue
        out.append(section)
        stats = {c["name"]: c for c in status.get(stk, [])}
        for c in spec[sk]:
            st = stats.get(c["name"], {})
            out.append("  %s:" % c["name"])
            if st.get("containerID"):
                out.append("    Container ID:   " + st["containerID"])
            out.append("    Image:          " + c.get("image", ""))
            for key, label in (("command", "Command"), ("args", "Args")):
                if c.get(key):
                    out.append("    %s:" % label)
                    out += ["      " + a for a in c[key]]
            describe_state(out, "State", st.get("state"))
            describe_state(out, "Last State", st.get("lastState"))
            if "ready" in st:
                out.append("    Ready:          " + ("True" if st["ready"] else "False"))
            if "restartCount" in st:
                out.append("    Restart Count:  %d" % st["restartCount"])
            res = c.get("resources", {})
            for key, label in (("limits", "Limits"), ("requests", "Requests")):
                if res.get(key):
                    out.append("    %s:" % label)
                    out += ["      %s:  %s" % kv for kv in res[key].items()]
            for key, label in (("livenessProbe", "Liveness"), ("readinessProbe", "Readiness"),
                               ("startupProbe", "Startup")):
                if c.get(key):
                    out.append("    %-14s%s" % (label + ":", describe_probe(c[key])))
            out.append("    Environment:    <none>")
    out += ["Conditions:", "  Type              Status", "  Ready             False",
            "QoS Class:       Burstable"]
    if events is None:
        out.append("Events:          <none>")
    else:
        rows = [("Type", "Reason", "Age", "From", "Message"),
                ("----", "------", "----", "----", "-------")]
        for e in events:
            n = e.get("count") or 1
            age = "2m (x%d over 10m)" % n if n > 1 else "2m"
            rows.append((e.get("type", ""), e.get("reason", ""), age,
                         (e.get("source") or {}).get("component", ""),
                         e.get("message", "").replace("\n", " ")))
        w = [max(len(r[k]) for r in rows) + 2 for k in range(4)]
        out.append("Events:")
        for r in rows:
            out.append("  " + "".join(r[k].ljust(w[k]) for k in range(4)) + r[4])
    return "\n".join(out) + "\n"


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

    def test_terminal_escapes_in_the_input_are_shown_not_obeyed(self):
        # a pod file and a log with escape sequences (OSC title, CSI clear screen, an OSC 8
        # link, a C1 CSI as UTF-8) in the pod name, the node, the reason and the log: the text
        # report shows them as symbols (U+241B for ESC) on the line they belong to, the JSON
        # report escapes them
        d = os.path.join(CORPUS, "13-notifier-redis-refused")
        with open(os.path.join(d, "pod.json"), encoding="utf-8") as f:
            pod = json.load(f)
        pod["metadata"]["name"] = "notifier\x1b]0;pwned\x07-7gk2w"
        pod["spec"]["nodeName"] = "node\x1b[2J\x1b[H-1"
        st = pod["status"]["containerStatuses"][0]
        st["lastState"]["terminated"]["reason"] = "Error\u009b31m\nCause:      fake"
        with tempfile.TemporaryDirectory() as tmp:
            podf = os.path.join(tmp, "pod.json")
            with open(podf, "w", encoding="utf-8") as f:
                json.dump(pod, f)
            logs = os.path.join(tmp, "logs.txt")
            with open(logs, "wb") as f:
                f.write(b"\x1b]8;;http://evil.test\x1b\\click\x1b]8;;\x1b\\ dial tcp "
                        b"10.0.0.1:6379: connect: connection refused\x1b[8m\n")
            p = run(["--pod", podf, "--events", os.path.join(d, "events.json"), "--logs", logs])
            self.assertEqual(p.returncode, 0, p.stderr)
            out = p.stdout.decode("utf-8")
            for c in ("\x1b", "\x07", "\u009b", "\r"):
                self.assertNotIn(c, out, repr(c))
            self.assertIn("/notifier\u241b]0;pwned\u2407-7gk2w", out)
            self.assertIn(" on node node\u241b[2J\u241b[H-1\n", out)
            self.assertIn("reason Error\ufffd31m Cause:      fake, finished", out)
            self.assertNotIn("\nCause:      fake", out)
            self.assertIn("connection refused", out)
            pj = run(["--pod", podf, "--events", os.path.join(d, "events.json"), "--logs", logs,
                      "--format", "json"])
            self.assertEqual(pj.returncode, 0, pj.stderr)
            self.assertNotIn(b"\x1b", pj.stdout)
            self.assertIn(b"notifier\\u001b]0;pwned\\u0007-7gk2w", pj.stdout)
            self.assertEqual(json.loads(pj.stdout)["pod"], pod["metadata"]["name"])

    def test_yaml_inputs_give_the_same_json(self):
        # every case with its pod, events and node converted to YAML the way
        # kubectl -o yaml writes them: the same report, field for field
        for name, d in case_dirs():
            with self.subTest(case=name), tempfile.TemporaryDirectory() as tmp:
                args = corpus_args(d)
                yargs = list(args)
                for i, a in enumerate(args):
                    if a.endswith(".json"):
                        with open(a, encoding="utf-8") as f:
                            doc = json.load(f)
                        out = os.path.join(tmp, os.path.basename(a)[:-5] + ".txt")
                        with open(out, "w", encoding="utf-8") as f:
                            yaml.safe_dump(doc, f, default_flow_style=False,
                                           allow_unicode=True)
                        yargs[i] = out
                pj = run(args + ["--format", "json"])
                py = run(yargs + ["--format", "json"])
                self.assertEqual(pj.returncode, 0, pj.stderr)
                self.assertEqual(py.returncode, 0, py.stderr)
                self.assertEqual(json.loads(py.stdout), json.loads(pj.stdout))

    def test_yaml_list_and_documents(self):
        d = os.path.join(CORPUS, "01-orders-api-oomkilled")
        with open(os.path.join(d, "pod.json"), encoding="utf-8") as f:
            pod = json.load(f)
        with open(os.path.join(d, "events.json"), encoding="utf-8") as f:
            events = json.load(f)
        ref = run(["--pod", os.path.join(d, "pod.json"), "--events",
                   os.path.join(d, "events.json"), "--format", "json"])
        self.assertEqual(ref.returncode, 0, ref.stderr)
        service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "orders"}}
        items = events["items"]
        variants = {
            # kubectl get pod -o yaml with a selector: a List holding the Pod
            "list": (yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [pod]}),
                     yaml.safe_dump({"apiVersion": "v1", "kind": "EventList",
                                     "items": items})),
            # several documents: the Pod among other manifests, one Event each
            "documents": ("---\n" + yaml.safe_dump(service) + "---\n" + yaml.safe_dump(pod),
                          "".join("---\n" + yaml.safe_dump(dict(e, kind="Event"))
                                  for e in items)),
        }
        for label, (py, ey) in variants.items():
            with self.subTest(variant=label), tempfile.TemporaryDirectory() as tmp:
                pp = os.path.join(tmp, "pod")
                ep = os.path.join(tmp, "events")
                with open(pp, "w", encoding="utf-8") as f:
                    f.write(py)
                with open(ep, "w", encoding="utf-8") as f:
                    f.write(ey)
                p = run(["--pod", pp, "--events", ep, "--format", "json"])
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(json.loads(p.stdout), json.loads(ref.stdout))
        # YAML on stdin
        p = run(["--pod", "-", "--events", os.path.join(d, "events.json"), "--format", "json"],
                stdin=yaml.safe_dump(pod).encode())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout), json.loads(ref.stdout))

    def test_new_fields_in_every_format(self):
        # every case: a confidence, a next step and kubectl commands (the corpus pods have
        # their names), the same in the JSON and the text output
        for name, d in case_dirs():
            with self.subTest(case=name):
                p = run(corpus_args(d) + ["--format", "json"])
                self.assertEqual(p.returncode, 0, p.stderr)
                out = json.loads(p.stdout)
                self.assertIn(out["confidence"], ("low", "medium", "high"))
                self.assertIsInstance(out["next_step"], str)
                self.assertTrue(out["next_step"])
                self.assertTrue(out["commands"])
                for key in ("commands", "unchecked"):
                    self.assertIsInstance(out[key], list)
                    self.assertTrue(all(isinstance(e, str) for e in out[key]))
                p = run(corpus_args(d))
                self.assertEqual(p.returncode, 0, p.stderr)
                text = p.stdout.decode()
                self.assertIn(f"Cause:      {out['cause']} (confidence: {out['confidence']})",
                              text)
                self.assertIn("Next step:  " + out["next_step"], text)
                for c in out["commands"]:
                    self.assertIn("  $ " + c, text)
                for u in out["unchecked"]:
                    self.assertIn("  - " + u, text)

    def test_describe_pod_text(self):
        # every case's Pod as `kubectl describe pod` prints it, with the
        # events given as JSON: the same diagnosis as from the Pod JSON
        for name, d in case_dirs():
            with self.subTest(case=name), tempfile.TemporaryDirectory() as tmp:
                with open(os.path.join(d, "pod.json"), encoding="utf-8") as f:
                    pod = json.load(f)
                text = os.path.join(tmp, "describe.txt")
                with open(text, "w", encoding="utf-8") as f:
                    f.write("$ kubectl describe pod %s\n" % pod["metadata"]["name"])
                    f.write(describe_pod(pod))
                args = corpus_args(d)
                pj = run(args + ["--format", "json"])
                pd = run(["--pod", text] + args[2:] + ["--format", "json"])
                self.assertEqual(pj.returncode, 0, pj.stderr)
                self.assertEqual(pd.returncode, 0, pd.stderr)
                want, got = json.loads(pj.stdout), json.loads(pd.stdout)
                for key in ("namespace", "pod", "node", "container", "init_container",
                            "restart_count", "exit_code", "signal", "reason", "cause",
                            "started_at", "finished_at"):
                    self.assertEqual(got[key], want[key], key)
                self.assertIsNone(got["uid"])  # describe does not show it

    def test_describe_pod_events_table(self):
        # without --events, the Events table of the describe text is used
        d = os.path.join(CORPUS, "13-notifier-redis-refused")
        with open(os.path.join(d, "pod.json"), encoding="utf-8") as f:
            pod = json.load(f)
        with open(os.path.join(d, "events.json"), encoding="utf-8") as f:
            events = [e for e in json.load(f)["items"]
                      if e["involvedObject"].get("name") == pod["metadata"]["name"]]
        self.assertTrue(events)
        with tempfile.TemporaryDirectory() as tmp:
            text = os.path.join(tmp, "describe.txt")
            with open(text, "w", encoding="utf-8") as f:
                f.write(describe_pod(pod, events))
            p = run(["--pod", text, "--logs", os.path.join(d, "logs.txt"), "--format",
                     "slack"])
            self.assertEqual(p.returncode, 0, p.stderr)
            msg = json.loads(p.stdout)
            check_slack(self, msg)
            body = "\n".join(slack_texts(msg))
            # the table's warnings reach the diagnosis (its evidence, in the text format) and
            # the message's events, but the kubelet's back-off boilerplate, which a Slack
            # message leaves out (docs/destinations.md, "The message")
            plain = run(["--pod", text, "--logs", os.path.join(d, "logs.txt")])
            self.assertEqual(plain.returncode, 0, plain.stderr)
            for e in events:
                if e.get("type") == "Warning":
                    self.assertIn(e["reason"], plain.stdout.decode())
                    if e["reason"] == "BackOff":
                        self.assertNotIn(e["message"][:40], body)
                    else:
                        self.assertIn(e["reason"], body)
            ref = run(corpus_args(d) + ["--format", "json"])
            got = run(["--pod", text, "--logs", os.path.join(d, "logs.txt"), "--format", "json"])
            self.assertEqual(json.loads(got.stdout)["cause"], json.loads(ref.stdout)["cause"])

    def test_event_tables_for_events(self):
        # --events also takes describe's Events table alone and `kubectl get
        # events` table output: the same cause as from the JSON events
        for case in ("03-checkout-liveness-503", "13-notifier-redis-refused"):
            d = os.path.join(CORPUS, case)
            with open(os.path.join(d, "pod.json"), encoding="utf-8") as f:
                pod = json.load(f)
            with open(os.path.join(d, "events.json"), encoding="utf-8") as f:
                events = [e for e in json.load(f)["items"]
                          if e["involvedObject"].get("name") == pod["metadata"]["name"]]
            self.assertTrue(events)
            table = describe_pod(pod, events)
            table = table[table.index("Events:"):]
            rows = [("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE")]
            rows += [("2m", e.get("type", ""), e.get("reason", ""),
                      "pod/" + pod["metadata"]["name"], e.get("message", "").replace("\n", " "))
                     for e in events]
            w = [max(len(r[k]) for r in rows) + 3 for k in range(4)]
            get = "\n".join("".join(r[k].ljust(w[k]) for k in range(4)) + r[4]
                            for r in rows) + "\n"
            ref = run(corpus_args(d) + ["--format", "json"])
            self.assertEqual(ref.returncode, 0, ref.stderr)
            want = json.loads(ref.stdout)["cause"]
            for label, text in (("describe", table), ("get", get)):
                with self.subTest(case=case, table=label), tempfile.TemporaryDirectory() as tmp:
                    path = os.path.join(tmp, "events.txt")
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(text)
                    args = corpus_args(d)
                    args[args.index("--events") + 1] = path
                    p = run(args + ["--format", "json"])
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertEqual(json.loads(p.stdout)["cause"], want)

    def test_describe_fragments(self):
        # what people paste: one container's block, the Events table alone,
        # the pod's status lines; CRLF, tabs, a markdown quote
        frags = {
            "block": ("    State:          Waiting\r\n"
                      "      Reason:       CrashLoopBackOff\r\n"
                      "    Last State:     Terminated\r\n"
                      "      Reason:       OOMKilled\r\n"
                      "      Exit Code:    137\r\n"
                      "    Restart Count:  3\r\n", "oom_killed", 3),
            "quoted": ("> ...\n"
                       ">     Last State:\tTerminated\n"
                       ">       Reason:\tError\n"
                       ">       Exit Code:\t139\n", "segfault", None),
            "events": ("Events:\n"
                       "  Type     Reason     Age                From               Message\n"
                       "  ----     ------     ----               ----               -------\n"
                       "  Warning  Unhealthy  11s (x3 over 31s)  kubelet, minikube  Liveness "
                       "probe failed: HTTP probe failed with statuscode: 500\n"
                       "  Normal   Killing    11s                kubelet, minikube  Container "
                       "web failed liveness probe, will be restarted\n",
                       "liveness_probe_failed", None),
            "evicted": ("Status:       Failed\n"
                        "Reason:       Evicted\n"
                        "Message:      The node was low on resource: memory.\n",
                        "evicted", None),
        }
        for label, (text, cause, restarts) in frags.items():
            with self.subTest(fragment=label), tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "describe.txt")
                with open(path, "wb") as f:
                    f.write(text.encode())
                args = ["--pod", path, "--format", "json"]
                if label == "events":
                    args += ["--container", "web"]
                p = run(args)
                self.assertEqual(p.returncode, 0, p.stderr)
                got = json.loads(p.stdout)
                self.assertEqual(got["cause"], cause, got["summary"])
                self.assertEqual(got["restart_count"], restarts)
                self.assertIsNone(got["pod"])

    def test_yaml_with_describe_keys_is_yaml(self):
        # a Pod in YAML whose text has describe's keys (a termination message
        # quoting them) is still read as YAML: it has apiVersion/kind/...
        d = os.path.join(CORPUS, "01-orders-api-oomkilled")
        with open(os.path.join(d, "pod.json"), encoding="utf-8") as f:
            pod = json.load(f)
        for st in pod["status"]["containerStatuses"]:
            for s in (st.get("lastState") or {}).values():
                s["message"] = "State:  Waiting\nExit Code:  1\nRestart Count:  3\n"
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "pod.yaml")
            with open(path, "w", encoding="utf-8") as f:
                f.write(yaml.safe_dump(pod, default_style=None))
            p = run(["--pod", path, "--format", "json"])
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout)["pod"], pod["metadata"]["name"])

    def test_restarted_pod_without_last_state(self):
        # CrashLoopBackOff pasted without lastState: a report (at worst
        # `unknown`), not a refusal; no exit code is made up
        d = os.path.join(CORPUS, "03-checkout-liveness-503")
        with open(os.path.join(d, "pod.json"), encoding="utf-8") as f:
            pod = json.load(f)
        for st in pod["status"]["containerStatuses"]:
            st["lastState"] = {}
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "pod.yaml")
            with open(path, "w", encoding="utf-8") as f:
                yaml.safe_dump(pod, f)
            p = run(["--pod", path, "--events", os.path.join(d, "events.json"), "--container",
                     "checkout", "--format", "json"])
            self.assertEqual(p.returncode, 0, p.stderr)
            out = json.loads(p.stdout)
            self.assertEqual(out["container"], "checkout")
            self.assertEqual(out["restart_count"], 4)
            self.assertIsNone(out["exit_code"])
            self.assertIn(out["cause"], CAUSES)
            p = run(["--pod", path, "--container", "checkout"])
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(b"Last exit:  not in the given files", p.stdout)

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
                              "--format", "json"]), 1, bad,
                         "not JSON or YAML: line 1 is plain text")
        # a table that is not an event table (kubectl get pods): the message
        # says what to run
        table = self.write("events.txt", b"NAME    READY   STATUS             RESTARTS   AGE\n"
                                         b"web-1   0/1     CrashLoopBackOff   5          3m\n")
        self.assertFails(run(["--pod", os.path.join(self.case, "pod.json"), "--events", table]),
                         1, "--events " + table,
                         "expected the output of kubectl get events -o json|yaml")
        self.assertFails(run(["--pod", table]), 1, "--pod " + table,
                         "expected the output of kubectl get pod POD -o json|yaml or kubectl "
                         "describe pod")

    def test_bad_yaml(self):
        pod = os.path.join(self.case, "pod.json")
        # invalid YAML: the line is named
        bad = self.write("pod.yaml", b"apiVersion: v1\nkind: Pod\nmetadata:\n  labels: {a: b\n"
                                     b"spec:\n  containers: []\n")
        self.assertFails(run(["--pod", bad]), 1, "--pod " + bad, "not valid YAML at line 5")
        bad = self.write("events.yaml", b"items:\n- reason: Killing\n  message: a: b\n")
        self.assertFails(run(["--pod", pod, "--events", bad]), 1, "--events " + bad,
                         "not valid YAML at line 3")
        bad = self.write("node.yaml", b"kind: Node\nmetadata: &m {name: n}\nspec: *m\n")
        self.assertFails(run(["--pod", pod, "--node", bad]), 1, "--node " + bad,
                         "aliases (*name) are not supported")

    def test_binary_garbage(self):
        for name, data in (("nul.bin", b"\x7fELF\x02\x01\x01\x00\x00\x00garbage"),
                           ("latin1.bin", b"kind: Pod\nname: caf\xe9\n"),
                           ("gzip.bin", b"\x1f\x8b\x08\x00\xa3\x9e\x01\x02\xff")):
            with self.subTest(name=name):
                bad = self.write(name, data)
                self.assertFails(run(["--pod", bad]), 1, "--pod " + bad, "binary data",
                                 "not JSON or YAML")

    def test_empty_file(self):
        pod = os.path.join(self.case, "pod.json")
        for opt in ("--pod", "--events", "--node"):
            for data in (b"", b" \n\n"):
                with self.subTest(opt=opt, data=data):
                    empty = self.write("empty", data)
                    args = ["--pod", empty] if opt == "--pod" else ["--pod", pod, opt, empty]
                    self.assertFails(run(args), 1, f"{opt} {empty}", "the file is empty")
        only_comment = self.write("comment.yaml", b"# kubectl get pod web -o yaml\n---\n")
        self.assertFails(run(["--pod", only_comment]), 1, only_comment, "no document")

    def test_describe_after_a_prompt_that_looks_like_json(self):
        # "[12:54:41] $ kubectl describe ..." starts like a JSON array: not JSON, describe text
        text = self.write("prompt.txt", b"[12:54:41] $ kubectl describe pod web-1\n"
                                        b"Name:           web-1\nNamespace:      shop\n"
                                        b"Containers:\n  app:\n    Restart Count:  5\n")
        p = run(["--pod", text, "--format", "json"])
        self.assertEqual(p.returncode, 0, p.stderr)
        out = json.loads(p.stdout)
        self.assertEqual((out["pod"], out["container"], out["restart_count"]), ("web-1", "app", 5))
        # a file that is not JSON and has no describe shape keeps the JSON error
        bad = self.write("bad.json", b"[1, 2,\n")
        self.assertFails(run(["--pod", bad]), 1, "--pod " + bad, "not JSON")

    def test_bad_describe(self):
        two = self.write("two.txt", b"Name: a\nNamespace: x\nContainers:\n  app:\n"
                                    b"    Image: i\n\nName: b\nNamespace: x\nContainers:\n"
                                    b"  app:\n    Image: i\n")
        self.assertFails(run(["--pod", two]), 1, two, "2 pods")
        empty = self.write("nocont.txt", b"Name: a\nNamespace: x\nContainers:\nEvents: <none>\n")
        self.assertFails(run(["--pod", empty]), 1, empty, "without containers")
        # describe's shapes without a field it can read: what is expected
        junk = self.write("junk.txt", b"Labels: a\nExit Code:   x\n")
        self.assertFails(run(["--pod", junk]), 1, "--pod " + junk,
                         "no kubectl describe pod fields",
                         "expected the output of kubectl get pod POD -o json|yaml or kubectl "
                         "describe pod")
        # describe text is only understood for --pod
        node = self.write("node.txt", b"Name: a\nContainers:\n  app:\n    Image: i\n")
        self.assertFails(run(["--pod", os.path.join(self.case, "pod.json"), "--node", node]), 1,
                         "--node " + node, "metadata is missing")

    def test_not_a_pod(self):
        deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                      "metadata": {"name": "web", "namespace": "shop"},
                      "spec": {"replicas": 2, "template": {"spec": {"containers": [
                          {"name": "app", "image": "shop/web:1"}]}}}}
        for label, data in (("json", json.dumps(deployment).encode()),
                            ("yaml", yaml.safe_dump(deployment).encode())):
            with self.subTest(format=label):
                bad = self.write("deploy." + label, data)
                self.assertFails(run(["--pod", bad]), 1, bad, 'not a Pod (kind "Deployment")')
        two = self.write("two.yaml", b"kind: Pod\nspec: {}\n---\nkind: Pod\nspec: {}\n")
        self.assertFails(run(["--pod", two]), 1, two, "a List of 2 items")

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
