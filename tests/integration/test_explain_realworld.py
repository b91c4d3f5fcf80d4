#!/usr/bin/env python3
"""Run the real `krc explain` on every case of the real-world corpus
(tests/fixtures/realworld, see its README.md) and score the answers.

    python3 test_explain_realworld.py --krc /path/to/krc [--dir DIR] [unittest options]

For every case directory (one holding case.json) the test runs

    krc explain --pod pod.yaml|pod.json [--events events.yaml|events.json]
                [--node node.yaml|node.json] [--logs logs.txt] [--container C]

once with --format json and once with the default text format. A second
pass, scored apart, does the same for every case that has describe.txt (the
`kubectl describe pod` text as posted, often a fragment) with
--pod describe.txt and no --events (the text carries its Events table). A case is
acceptable when both runs exit 0, the JSON is one object whose "cause" is in
the case's "accept" list, and no "forbidden" phrase appears (case-insensitive)
in the text or the JSON output. The test prints the score and every
unacceptable answer, and fails when fewer than 90% of the cases are acceptable
or when any forbidden phrase appears. --dir points it at another corpus with
the same layout (e.g. a held-out set).
"""
import argparse
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DIR = os.path.normpath(os.path.join(HERE, "..", "fixtures", "realworld"))
CAUSES = {
    "oom_killed", "liveness_probe_failed", "startup_probe_failed", "command_not_found",
    "permission_denied", "segfault", "gpu_out_of_memory", "gpu_error",
    "dependency_unreachable", "app_error", "completed", "killed", "terminated",
    "start_failed", "exec_format_error", "illegal_instruction", "aborted",
    "app_out_of_memory", "disk_full", "evicted", "node_not_ready", "unknown",
    # issue 26
    "restart_rule",
    "gpu_device_unhealthy",
    "restarted_with_others", "resize_restart", "sandbox_changed",
}
REQUIRED_BAR = 0.90
KRC = None
CORPUS = DEFAULT_DIR
TIMEOUT = 10


def first_existing(d, *names):
    for n in names:
        p = os.path.join(d, n)
        if os.path.isfile(p):
            return p
    return None


def case_dirs(root):
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if os.path.isfile(os.path.join(d, "case.json")):
            yield name, d


def load_case(d):
    with open(os.path.join(d, "case.json"), encoding="utf-8") as f:
        case = json.load(f)
    for key in ("source", "title", "conclusion", "accept", "forbidden", "notes"):
        if key not in case:
            raise ValueError(f"{d}/case.json: missing \"{key}\"")
    if not case["accept"] or not set(case["accept"]) <= CAUSES:
        raise ValueError(f"{d}/case.json: \"accept\" must list known cause codes, "
                         f"got {case['accept']!r}")
    inputs = ""
    for name in sorted(os.listdir(d)):
        if name != "case.json":
            with open(os.path.join(d, name), "rb") as f:
                inputs += f.read().decode("utf-8", errors="replace").lower()
    for phrase in case["forbidden"]:
        if phrase != phrase.lower() or not phrase.strip():
            raise ValueError(f"{d}/case.json: forbidden phrase {phrase!r} must be "
                             f"non-empty lowercase")
        # krc may quote the inputs (log tail, messages): a phrase that is in them
        # cannot mark a false claim
        if phrase in inputs:
            raise ValueError(f"{d}/case.json: forbidden phrase {phrase!r} occurs in the "
                             f"case's own files")
    return case


def explain_args(d, case):
    pod = first_existing(d, "pod.yaml", "pod.json")
    if pod is None:
        raise ValueError(f"{d}: no pod.yaml or pod.json")
    args = ["--pod", pod]
    for opt, names in (("--events", ("events.yaml", "events.json")),
                       ("--node", ("node.yaml", "node.json")),
                       ("--logs", ("logs.txt",))):
        p = first_existing(d, *names)
        if p is not None:
            args += [opt, p]
    if case.get("container"):
        args += ["--container", case["container"]]
    return args


def describe_args(d, case):
    """The describe pass: describe.txt instead of pod.yaml and events.yaml
    (its Events table, when it has one, is the events), with the same logs,
    node and container."""
    args = ["--pod", os.path.join(d, "describe.txt")]
    for opt, names in (("--node", ("node.yaml", "node.json")), ("--logs", ("logs.txt",))):
        p = first_existing(d, *names)
        if p is not None:
            args += [opt, p]
    if case.get("container"):
        args += ["--container", case["container"]]
    return args


def run(args):
    return subprocess.run([KRC, "explain"] + args, capture_output=True, timeout=TIMEOUT)


def judge(d, case, args=None):
    """Return (acceptable, forbidden_hits, cause, summary, problem)."""
    args = args if args is not None else explain_args(d, case)
    problem = None
    cause = summary = None
    pj = run(args + ["--format", "json"])
    pt = run(args)
    outputs = []
    if pj.returncode != 0:
        problem = f"json exit {pj.returncode}: {pj.stderr.decode(errors='replace').strip()}"
    else:
        try:
            out = json.loads(pj.stdout)
        except ValueError as e:
            out = None
            problem = f"json output is not JSON: {e}"
        if isinstance(out, dict):
            cause = out.get("cause")
            summary = out.get("summary")
            outputs.append(pj.stdout.decode(errors="replace"))
        elif problem is None:
            problem = "json output is not one object"
    if pt.returncode != 0:
        problem = problem or (f"text exit {pt.returncode}: "
                              f"{pt.stderr.decode(errors='replace').strip()}")
    else:
        outputs.append(pt.stdout.decode(errors="replace"))
    blob = "\n".join(outputs).lower()
    hits = [ph for ph in case["forbidden"] if ph in blob]
    ok = problem is None and cause in case["accept"] and not hits
    return ok, hits, cause, summary, problem


class RealWorldTest(unittest.TestCase):
    def test_score(self):
        self.score("pod.yaml", list(case_dirs(CORPUS)), None)

    def test_score_describe(self):
        # the same cases read from the `kubectl describe pod` text as posted
        # (often a fragment), for the cases that have one
        cases = [(n, d) for n, d in case_dirs(CORPUS)
                 if os.path.isfile(os.path.join(d, "describe.txt"))]
        if not cases:
            self.skipTest(f"no case with describe.txt in {CORPUS}")
        self.score("describe.txt", cases, describe_args)

    def score(self, label, cases, make_args):
        self.assertGreater(len(cases), 0, f"no cases in {CORPUS}")
        good = 0
        failures = []
        forbidden = []
        for name, d in cases:
            case = load_case(d)
            args = make_args(d, case) if make_args else None
            ok, hits, cause, summary, problem = judge(d, case, args)
            if ok:
                good += 1
            else:
                failures.append((name, case["accept"], cause, summary, problem, hits))
            if hits:
                forbidden.append((name, hits))
        total = len(cases)
        print(f"\nreal-world corpus {CORPUS} ({label}): {good} of {total} acceptable "
              f"({100.0 * good / total:.0f}%, bar {100 * REQUIRED_BAR:.0f}%)", file=sys.stderr)
        for name, accept, cause, summary, problem, hits in failures:
            line = f"  FAIL {name}: cause={cause} accept={','.join(accept)}"
            if problem:
                line += f" problem={problem}"
            if hits:
                line += f" forbidden={hits}"
            if summary:
                line += f"\n       summary: {summary}"
            print(line, file=sys.stderr)
        self.assertEqual(forbidden, [], "forbidden phrases in the output")
        self.assertGreaterEqual(good, REQUIRED_BAR * total,
                                f"only {good} of {total} cases acceptable")


def main():
    global KRC, CORPUS
    ap = argparse.ArgumentParser()
    ap.add_argument("--krc", required=True, help="path to the krc binary")
    ap.add_argument("--dir", default=DEFAULT_DIR, help="corpus directory (default: %(default)s)")
    args, rest = ap.parse_known_args()
    KRC = os.path.abspath(args.krc)
    CORPUS = os.path.abspath(args.dir)
    if not os.access(KRC, os.X_OK):
        print(f"not an executable: {KRC}", file=sys.stderr)
        return 2
    if not os.path.isdir(CORPUS):
        print(f"not a directory: {CORPUS}", file=sys.stderr)
        return 2
    prog = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
