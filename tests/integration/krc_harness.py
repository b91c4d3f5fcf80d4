"""Helpers for integration tests that run the real krc binary.

Tests are plain unittest modules run by ctest as
    python3 test_x.py --krc /path/to/build/krc
Nothing here sleeps for a fixed time to "let things settle": every wait is
for a condition, with a deadline.

Every FakeKube a test starts enforces the RBAC rendered from deploy/manifests
(`kubectl kustomize`, once per process) for krc's token, so the whole suite
proves the shipped rules sufficient; tests/integration/test_rbac.py proves them
minimal.
"""

import atexit
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "fakekube"))
sys.path.insert(0, os.path.join(ROOT, "tests", "fakeslack"))
import admin  # noqa: E402
import client as fakeslack_client  # noqa: E402

KRC = None
# Deadlines stretch when krc runs under a slow wrapper such as valgrind.
SLOWDOWN = float(os.environ.get("KRC_SLOWDOWN", "3" if os.environ.get("KRC_WRAPPER") else "1"))


def start_fakes(case):
    """Start a FakeKube (a bookmark every second) and a FakeSlack as case.kube and case.slack.
    Both are stopped by the test case's cleanups, which run after its tearDown (so krc is
    stopped first) and also when setUp fails half-way."""
    case.kube = admin.FakeKube()
    case.kube.start()
    case.addCleanup(case.kube.stop)
    case.kube.config(bookmark_interval=1)
    case.slack = fakeslack_client.FakeSlack()
    case.slack.start()
    case.addCleanup(case.slack.stop)


def krc_binary():
    global KRC
    if KRC is None:
        KRC = os.environ.get("KRC_BINARY") or os.path.join(ROOT, "build", "krc")
    return KRC


MANIFESTS = os.path.join(ROOT, "deploy", "manifests")
RBAC_KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
_rendered = {}
_render_lock = threading.Lock()


def render_manifests(path=MANIFESTS):
    """The objects `kubectl kustomize PATH` renders (kubectl and PyYAML are needed)."""
    import yaml  # noqa: PLC0415 - Debian python3-yaml; only tests that render need it
    r = subprocess.run(["kubectl", "kustomize", path], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("kubectl kustomize %s failed (%d): %s" % (path, r.returncode,
                                                                     r.stderr.strip()))
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def shipped_rbac_objects(path=MANIFESTS):
    """The Role/ClusterRole/RoleBinding/ClusterRoleBinding objects of deploy/manifests."""
    with _render_lock:
        if path not in _rendered:
            _rendered[path] = [o for o in render_manifests(path)
                               if o.get("kind") in RBAC_KINDS]
        return _rendered[path]


def shipped_rbac():
    """A JSON file with the shipped RBAC, rendered once per test process; every FakeKube a
    test starts enforces it for krc's token unless the test says otherwise (rbac=False or
    its own objects).  KRC_TEST_RBAC=off turns this off, KRC_TEST_RBAC=DIR renders DIR."""
    objects = shipped_rbac_objects(os.environ.get("KRC_TEST_RBAC") or MANIFESTS)
    with _render_lock:
        if "file" not in _rendered:
            fd, name = tempfile.mkstemp(prefix="krc-test-rbac-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump(objects, f)
            atexit.register(os.unlink, name)
            _rendered["file"] = name
        return _rendered["file"]


if os.environ.get("KRC_TEST_RBAC", "") != "off":
    admin.DEFAULT_RBAC = shipped_rbac


def _flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _flatten(t)
        else:
            yield t


def run_shard(spec, module="__main__"):
    """Run shard K of N (spec "K/N", 1 <= K <= N) of a test file: its tests in the order
    unittest runs them, dealt out in turn, so that the N shards together run every test
    exactly once (CMakeLists.txt registers the long files as N ctest entries so that
    ctest -j spreads them). Module and class fixtures still run around the shard's tests.
    A shard with no test is an error (more shards than tests), not a pass."""
    try:
        k, n = (int(x) for x in spec.split("/"))
        if not 1 <= k <= n:
            raise ValueError
    except ValueError:
        sys.exit("--shard %r: expected K/N with 1 <= K <= N" % spec)
    tests = list(_flatten(unittest.defaultTestLoader.loadTestsFromModule(sys.modules[module])))
    mine = tests[k - 1::n]
    if not mine:
        sys.exit("--shard %s: no test for this shard (the file has %d)" % (spec, len(tests)))
    print("shard %s: %d of the file's %d tests" % (spec, len(mine), len(tests)), flush=True)
    result = unittest.TextTestRunner(verbosity=2).run(unittest.TestSuite(mine))
    sys.exit(0 if result.wasSuccessful() else 1)


def main():
    """unittest.main() that understands --krc PATH and --shard K/N (run_shard)."""
    global KRC
    argv = list(sys.argv)
    if "--krc" in argv:
        i = argv.index("--krc")
        KRC = os.path.abspath(argv[i + 1])
        del argv[i:i + 2]
    if "--shard" in argv:
        i = argv.index("--shard")
        spec = argv[i + 1]
        del argv[i:i + 2]
        if len(argv) > 1:
            sys.exit("--shard runs a fixed part of the file: no other arguments (%s)"
                     % " ".join(argv[1:]))
        run_shard(spec)
    unittest.main(argv=argv, verbosity=2)


def wait_until(predicate, timeout=20.0, interval=0.05, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.1fs waiting for %s" % (timeout, what))
        time.sleep(interval)


def message_texts(obj):
    """Every human-visible string of a message body (text objects, fields, attachments)."""
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, str) and k in ("text", "fallback", "pretext", "title", "value",
                                            "footer", "alt_text"):
                out.append(v)
            elif isinstance(v, (dict, list)):
                out += message_texts(v)
    elif isinstance(obj, list):
        for x in obj:
            out += message_texts(x)
    return out


def message_text(msg):
    """A posted message's texts (message_texts of its body), one a line."""
    return "\n".join(message_texts(msg["body"]))


def http_get(port, path, timeout=5):
    """(status, body) of GET http://127.0.0.1:PORT/PATH; 4xx/5xx are answers, not errors."""
    import urllib.error  # noqa: PLC0415
    import urllib.request  # noqa: PLC0415
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path),
                                    timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def history(db, *args):
    """The rows of `krc history --db DB --format json ARGS`; a failure raises with its stderr."""
    p = subprocess.run([krc_binary(), "history", "--db", db, "--format", "json"] + list(args),
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise AssertionError("krc history --db %s failed (%d): %s" % (db, p.returncode, p.stderr))
    return json.loads(p.stdout)


class Krc:
    """A running `krc run` with JSON logs captured line by line."""

    def __init__(self, kubeconfig=None, args=(), env=None, log_level="debug"):
        self.lines = []
        self.raw = []
        self._lock = threading.Lock()
        # KRC_WRAPPER runs krc under a tool, e.g. "valgrind --error-exitcode=99 --leak-check=full"
        wrapper = os.environ.get("KRC_WRAPPER", "").split()
        cmd = wrapper + [krc_binary(), "run", "--log-format", "json", "--log-level", log_level]
        if kubeconfig is not None:
            cmd += ["--kubeconfig", kubeconfig]
        cmd += list(args)
        full_env = {k: v for k, v in os.environ.items()
                    if not k.startswith("KUBERNETES_SERVICE")
                    and k not in ("KUBECONFIG",)}
        # A value of None removes the variable (e.g. a SLACK_WEBHOOK_URL of the outer shell).
        for key, value in (env or {}).items():
            if value is None:
                full_env.pop(key, None)
            else:
                full_env[key] = value
        if "KRC_LISTEN" not in full_env and not any(a.startswith("--listen") for a in args):
            full_env["KRC_LISTEN"] = "127.0.0.1:0"  # tests run in parallel: any free port
        if "KRC_DB" not in full_env and not any(a == "--db" or a.startswith("--db=")
                                                for a in args):
            # every krc gets its own history database, never the user's
            self.dbdir = tempfile.mkdtemp(prefix="krc-test-db-")
            full_env["KRC_DB"] = os.path.join(self.dbdir, "krc.db")
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=full_env)
        self._threads = [threading.Thread(target=self._read, args=(self.proc.stderr,), daemon=True),
                         threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True)]
        for t in self._threads:
            t.start()

    def _read(self, stream):
        for raw in iter(stream.readline, b""):
            text = raw.decode("utf-8", "replace").rstrip("\n")
            with self._lock:
                self.raw.append(text)
                try:
                    obj = json.loads(text)
                    if isinstance(obj, dict):
                        self.lines.append(obj)
                except ValueError:
                    pass

    def logs(self, msg=None, contains=None):
        with self._lock:
            out = list(self.lines)
        if msg is not None:
            out = [l for l in out if l.get("msg") == msg]
        if contains is not None:
            out = [l for l in out if contains in l.get("msg", "")]
        return out

    def text(self):
        with self._lock:
            return "\n".join(self.raw)

    def restarts(self):
        return self.logs(msg="restart detected")

    def diagnosed(self, **fields):
        """The "restart diagnosed" lines whose fields equal the given ones."""
        return [l for l in self.logs(msg="restart diagnosed")
                if all(l.get(k) == v for k, v in fields.items())]

    def wait_diagnosed(self, n, timeout=30.0, **fields):
        """Wait for at least n "restart diagnosed" lines matching fields; returns them."""
        timeout *= SLOWDOWN
        try:
            return wait_until(lambda: len(self.diagnosed(**fields)) >= n and
                              self.diagnosed(**fields), timeout,
                              what="%d diagnosed restarts %r" % (n, fields))
        except AssertionError:
            raise AssertionError("expected %d 'restart diagnosed' lines matching %r, got %d; "
                                 "log tail:\n%s" % (n, fields, len(self.diagnosed(**fields)),
                                                    self.tail(60)))

    def wait_log(self, contains, timeout=20.0, count=1):
        timeout *= SLOWDOWN
        return wait_until(lambda: len(self.logs(contains=contains)) >= count and
                          self.logs(contains=contains), timeout,
                          what="log line containing %r (have:\n%s)" % (contains, self.tail()))

    def wait_restarts(self, n, timeout=30.0):
        timeout *= SLOWDOWN
        def enough():
            r = self.restarts()
            return r if len(r) >= n else None
        try:
            return wait_until(enough, timeout, what="%d restart reports" % n)
        except AssertionError:
            raise AssertionError("expected %d restart reports, got %d; log tail:\n%s"
                                 % (n, len(self.restarts()), self.tail(60)))

    def http_port(self, timeout=20.0):
        """The port of the health/metrics endpoint, from krc's start-up line."""
        import re  # noqa: PLC0415
        line = self.wait_log("health and metrics on", timeout)[0]["msg"]
        return int(re.search(r"\(port (\d+)\)", line).group(1))

    def wait_synced(self, count=1, timeout=20.0):
        # the pod watches' ("pod sync complete"), not change tracking's watches'
        return self.wait_log("pod sync complete", timeout, count)

    def tail(self, n=30):
        with self._lock:
            return "\n".join(self.raw[-n:])

    def exited(self):
        return self.proc.poll() is not None

    def wait_exit(self, timeout=20.0):
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError("krc did not exit; log tail:\n%s" % self.tail())
        self._close()
        return self.proc.returncode

    def _close(self):
        for t in self._threads:
            t.join(2)
        for stream in (self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass

    def stop(self, timeout=20.0):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.wait_exit(timeout)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self._close()


def restart_keys(reports):
    """(namespace, pod, container, restart_count) of each report."""
    return [(r["namespace"], r["pod"], r["container"], r["restart_count"]) for r in reports]
