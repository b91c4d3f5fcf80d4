"""`krc explain FILE...` (issue 25): positional files told apart by their content, piped
standard input when no pod is given, refusals that name the file, JSON indented with two
spaces. The options (--pod, --events, --node, --logs) give the same answers as before.

    python3 test_explain_inputs.py --krc /path/to/krc
"""
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import unittest

import krc_harness as h

FIXTURES = os.path.join(h.ROOT, "tests", "fixtures")
EXPLAIN = os.path.join(FIXTURES, "explain")
CORPUS = os.path.join(FIXTURES, "corpus")
REALWORLD = os.path.join(FIXTURES, "realworld")


def krc(*args, stdin=subprocess.DEVNULL, input=None):
    """krc explain ARGS; standard input is /dev/null (not a terminal: read when no pod is
    given) unless `input` is piped."""
    return subprocess.run([h.krc_binary(), "explain"] + list(args), capture_output=True,
                          text=True, timeout=60, input=input,
                          stdin=None if input is not None else stdin)


def first(d, *names):
    for n in names:
        if os.path.isfile(os.path.join(d, n)):
            return os.path.join(d, n)
    return None


def cases():
    """(name, dir, {role: path}, container) of every corpus and real-world case."""
    for root in (CORPUS, REALWORLD):
        for name in sorted(os.listdir(root)):
            d = os.path.join(root, name)
            if not os.path.isdir(d):
                continue
            container = None
            if os.path.isfile(os.path.join(d, "case.json")):
                with open(os.path.join(d, "case.json"), encoding="utf-8") as f:
                    container = json.load(f).get("container")
            files = {"pod": first(d, "pod.json", "pod.yaml"),
                     "events": first(d, "events.json", "events.yaml"),
                     "node": first(d, "node.json", "node.yaml"),
                     "logs": first(d, "logs.txt"),
                     "describe": first(d, "describe.txt")}
            yield name, d, files, container


class ExplainInputsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, name, data):
        path = os.path.join(self.tmp, name)
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return path

    def ok(self, p):
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        return p.stdout

    def test_describe_file_positional(self):
        """The issue's first case: `krc explain describe.txt` (was "unknown argument")."""
        path = os.path.join(EXPLAIN, "describe-pod.txt")
        out = json.loads(self.ok(krc(path, "--format", "json")))
        self.assertEqual(out["pod"], "orders-api-7c9d8b6f5-x2k4p")
        self.assertEqual(out["cause"], "oom_killed")
        self.assertEqual(self.ok(krc(path, "--format", "json")),
                         self.ok(krc("--pod", path, "--format", "json")))
        text = self.ok(krc(path))
        self.assertIn("Cause:      oom_killed", text)

    def test_describe_piped(self):
        """The issue's second case: `kubectl describe pod X | krc explain` (was "--pod FILE is
        required"), also with the log as a positional file and as --logs."""
        with open(os.path.join(EXPLAIN, "describe-pod.txt"), encoding="utf-8") as f:
            describe = f.read()
        logs = os.path.join(EXPLAIN, "logs.txt")
        want = self.ok(krc("--pod", os.path.join(EXPLAIN, "describe-pod.txt"), "--format",
                           "json"))
        self.assertEqual(self.ok(krc("--format", "json", input=describe)), want)
        self.assertEqual(self.ok(krc("-", "--format", "json", input=describe)), want)
        # the log reaches the report: the Slack message quotes its end
        line = "heap usage 94% after GC"
        self.assertNotIn(line, self.ok(krc("--format", "slack", input=describe)))
        for args in (("--pod", "-", "--logs", logs), (logs,), ("--logs", logs)):
            with self.subTest(args=args):
                self.assertIn(line, self.ok(krc(*args, "--format", "slack", input=describe)))
                self.assertEqual(self.ok(krc(*args, "--format", "json", input=describe)), want)
        # YAML of the pod piped in, as `kubectl get pod -o yaml | krc explain`
        pod = os.path.join(REALWORLD, "024-goat-internal-api-oomkilled", "pod.yaml")
        with open(pod, encoding="utf-8") as f:
            self.assertEqual(self.ok(krc("--format", "json", input=f.read())),
                             self.ok(krc("--pod", pod, "--format", "json")))
        # a pod given: stdin is not read (a pipe nobody closes would hang it otherwise)
        self.assertEqual(self.ok(krc(os.path.join(EXPLAIN, "describe-pod.txt"), "--format",
                                     "json", input="garbage\0")), want)

    def test_every_case_positional_equals_options(self):
        """Every corpus and real-world case: its files in any order, unnamed, give exactly
        the answer of --pod/--events/--node/--logs; describe.txt alone as --pod does."""
        rng = random.Random(25)
        n = 0
        for name, d, files, container in cases():
            extra = ["--container", container] if container else []
            if files["pod"] is not None:
                opts, pos = [], []
                for role in ("pod", "events", "node", "logs"):
                    if files[role] is not None:
                        opts += ["--" + role, files[role]]
                        pos.append(files[role])
                rng.shuffle(pos)
                with self.subTest(case=name, files=[os.path.basename(p) for p in pos]):
                    want = krc(*opts, *extra, "--format", "json")
                    got = krc(*pos, *extra, "--format", "json")
                    self.assertEqual((got.returncode, got.stdout, got.stderr),
                                     (want.returncode, want.stdout, want.stderr))
                    n += 1
            if files["describe"] is not None:
                logs = [files["logs"]] if files["logs"] else []
                with self.subTest(case=name, files="describe.txt"):
                    want = krc("--pod", files["describe"], *["--logs=" + p for p in logs],
                               *extra, "--format", "json")
                    got = krc(*logs, files["describe"], *extra, "--format", "json")
                    self.assertEqual(got.returncode, 0, got.stderr)
                    self.assertEqual((got.returncode, got.stdout, got.stderr),
                                     (want.returncode, want.stdout, want.stderr))
                    n += 1
        self.assertGreater(n, 150)

    def test_text_tables_and_describe_node(self):
        """kubectl get events (table text) and kubectl describe node as positional files."""
        describe = os.path.join(EXPLAIN, "describe-pod.txt")
        events = os.path.join(EXPLAIN, "get-events.txt")
        node = os.path.join(EXPLAIN, "describe-node.txt")
        logs = os.path.join(EXPLAIN, "logs.txt")
        got = self.ok(krc(node, events, logs, describe, "--format", "json"))
        self.assertEqual(got, self.ok(krc("--pod", describe, "--events", events, "--node", node,
                                          "--logs", logs, "--format", "json")))
        out = json.loads(got)
        self.assertIn("node node-3: condition MemoryPressure=True (KubeletHasInsufficientMemory): "
                      "kubelet has insufficient memory available", out["evidence"])
        # --node takes describe node too
        self.assertIn("MemoryPressure", self.ok(krc("--pod", describe, "--node", node)))

    def test_unclassifiable_files_are_named(self):
        pod = os.path.join(EXPLAIN, "describe-pod.txt")
        binary = self.write("core.bin", b"\x7fELF\x02\x01\x01\x00\x00\x00")
        p = krc(pod, binary)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stdout, "")
        self.assertIn("krc explain: %s: cannot tell what it is: binary data (a NUL byte); "
                      "expected a pod (kubectl get pod -o json|yaml, or kubectl describe pod), "
                      "events (kubectl get events [-o json|yaml]), a node" % binary, p.stderr)
        deploy = self.write("deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\n"
                                           "metadata:\n  name: web\nspec:\n  replicas: 2\n")
        p = krc(deploy, pod)
        self.assertEqual(p.returncode, 1)
        self.assertIn("%s: cannot tell what it is: a Deployment (a Kubernetes object of "
                      "another kind); expected a pod" % deploy, p.stderr)
        pods = self.write("pods.json", json.dumps(
            {"apiVersion": "v1", "kind": "List",
             "items": [{"kind": "Pod", "metadata": {"name": "a"}},
                       {"kind": "Pod", "metadata": {"name": "b"}}]}))
        p = krc(pods)
        self.assertEqual(p.returncode, 1)
        self.assertIn("%s: cannot tell what it is: a List of 2 Pods" % pods, p.stderr)
        # kubectl -o json cut short: refused, not taken for a log
        with open(os.path.join(CORPUS, "01-orders-api-oomkilled", "pod.json")) as f:
            cut = self.write("cut.json", f.read()[:300])
        p = krc(cut, pod)
        self.assertEqual(p.returncode, 1)
        self.assertRegex(p.stderr, r"%s: cannot tell what it is: a JSON document \(its first "
                         r"line is \"\{\"\) that is not valid JSON \(cut short or malformed "
                         r"near line \d+\); expected a pod" % re.escape(cut))
        missing = os.path.join(self.tmp, "nope.txt")
        p = krc(pod, missing)
        self.assertEqual(p.returncode, 1)
        self.assertIn("krc explain: %s: cannot open: No such file or directory" % missing,
                      p.stderr)

    def test_two_inputs_of_one_kind_name_both(self):
        describe = os.path.join(EXPLAIN, "describe-pod.txt")
        pod = os.path.join(CORPUS, "01-orders-api-oomkilled", "pod.json")
        p = krc(pod, describe)
        self.assertEqual(p.returncode, 1)
        self.assertIn("krc explain: two pod inputs: %s (pod) and %s (describe pod); give one"
                      % (pod, describe), p.stderr)
        p = krc("--pod", pod, describe)
        self.assertIn("two pod inputs: --pod %s and %s (describe pod)" % (pod, describe),
                      p.stderr)
        logs = os.path.join(EXPLAIN, "logs.txt")
        p = krc(describe, logs, "--logs", logs)
        self.assertEqual(p.returncode, 1)
        self.assertIn("two logs (one container's previous log is read): --logs %s and %s (log)"
                      % (logs, logs), p.stderr)
        p = krc("-", "--pod", "-")
        self.assertEqual(p.returncode, 2)
        self.assertIn('only one input can be read from stdin ("-")', p.stderr)

    def test_no_pod(self):
        logs = os.path.join(EXPLAIN, "logs.txt")
        for args in ((logs,), ()):
            with self.subTest(args=args):
                p = krc(*args)  # stdin: /dev/null, empty
                self.assertEqual(p.returncode, 2)
                self.assertIn("krc explain: no pod given: name a file holding kubectl get pod "
                              "POD -o yaml or kubectl describe pod POD output, pipe it in, or "
                              "use --pod FILE", p.stderr)
                self.assertEqual("(none of the files is a pod)" in p.stderr, bool(args))
        # a piped log is not a pod either
        p = krc(input="panic: runtime error\n")
        self.assertEqual(p.returncode, 2)
        self.assertIn("no pod given", p.stderr)

    def test_empty_log_and_big_log(self):
        describe = os.path.join(EXPLAIN, "describe-pod.txt")
        empty = self.write("empty.log", "")
        self.ok(krc(describe, empty))
        # a file larger than any kubectl object krc reads (64 MiB) is a log: its end is kept
        big = os.path.join(self.tmp, "big.log")
        with open(big, "wb") as f:
            f.truncate(64 * 1024 * 1024 + 1)  # sparse
            f.seek(0, 2)
            f.write(b"\nFATAL: out of disk\n")
        via_opt = json.loads(self.ok(krc("--pod", describe, "--logs", big, "--format", "json")))
        positional = json.loads(self.ok(krc(describe, big, "--format", "json")))
        self.assertEqual(positional, via_opt)

    def test_json_indented_two_spaces(self):
        """--format json: two spaces a level, byte for byte what json.dumps(indent=2) prints
        (no tabs), for every corpus case."""
        n = 0
        for name, d, files, container in cases():
            if files["pod"] is None or not d.startswith(CORPUS):
                continue
            args = [files["pod"]] + [files[k] for k in ("events", "node", "logs") if files[k]]
            with self.subTest(case=name):
                out = self.ok(krc(*args, "--format", "json"))
                self.assertNotIn("\t", out)
                self.assertEqual(out, json.dumps(json.loads(out), indent=2,
                                                 ensure_ascii=False) + "\n")
                n += 1
        self.assertGreaterEqual(n, 20)
        # quotes, backslashes, brackets and control characters inside strings stay as they are
        pod = self.write("pod.json", json.dumps({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "w[1]", "namespace": "a,b"},
            "status": {"containerStatuses": [{
                "name": "app", "restartCount": 1,
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                                             "message": "bad \"quote\" {x}: [y] \\ \u00e9"}}}]}}))
        out = self.ok(krc(pod, "--format", "json"))
        self.assertEqual(out, json.dumps(json.loads(out), indent=2, ensure_ascii=False) + "\n")
        self.assertEqual(json.loads(out)["pod"], "w[1]")

    def test_help_names_the_positional_form(self):
        p = krc("--help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("usage: krc explain [FILE...] [--pod FILE]", p.stdout)
        self.assertIn("kubectl describe pod POD | krc explain", p.stdout)


if __name__ == "__main__":
    h.main()
