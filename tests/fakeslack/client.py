"""Client for fakeslack (tests/fakeslack/fakeslack.py), used by integration tests.

    with FakeSlack() as fs:
        url = fs.webhook_url("alerts")             # registers an app webhook -> #alerts
        run_krc(slack_webhook_url=url)
        msgs = fs.wait_messages(1, timeout=10)
        assert fs.stats()["status_429"] == 0

Standard library only.  See README.md in this directory for the admin API and the limits.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Started as an imported module, not as a script, as fakekube is (tests/fakekube/admin.py):
# an imported module's bytecode comes from the cache instead of a compilation at every start.
LAUNCH = ("import sys; sys.path.insert(0, %r); import fakeslack; sys.exit(fakeslack.main())" % HERE)


class FakeSlackError(RuntimeError):
    """An admin call failed (non-2xx); .status and .body carry the details."""

    def __init__(self, method, path, status, body):
        super().__init__("fakeslack admin %s %s -> %d: %s" % (method, path, status, body))
        self.status = status
        self.body = body


class FakeSlack:
    """Starts fakeslack.py in a temporary state dir; stops it (and removes the dir) on exit.

    tls=True serves HTTPS with a fresh test CA (.ca is its path).  config={...} is applied
    with config() right after start."""

    def __init__(self, tls=False, token=None, state_dir=None, config=None, start_timeout=20.0,
                 keep_state=False, log_path=None):
        self._owns_dir = state_dir is None
        self.state_dir = state_dir or tempfile.mkdtemp(prefix="fakeslack-")
        self.tls = tls
        self._token = token
        self.initial_config = config
        self.start_timeout = start_timeout
        self.keep_state = keep_state
        self.log_path = log_path or os.path.join(self.state_dir, "fakeslack.log")
        self.proc = None
        self._log = None
        self.port = None
        self.admin_port = None
        self.base_url = None

    # ---- lifecycle ----

    @property
    def ca(self):
        """Path of the test CA certificate (tls=True only)."""
        return os.path.join(self.state_dir, "ca.crt") if self.tls else None

    @property
    def token(self):
        """The accepted bot token (the first one; config(tokens=[...]) can replace it)."""
        with open(os.path.join(self.state_dir, "token")) as f:
            return f.read().strip()

    @property
    def api_url(self):
        """Base of the Web API: api_url + "/chat.postMessage"."""
        return self.base_url + "/api"

    def start(self):
        cmd = [sys.executable, "-c", LAUNCH, "--state-dir", self.state_dir]
        if self.tls:
            cmd.append("--tls")
        if self._token:
            cmd.append("--token=" + self._token)  # a token may begin with "-"
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        ready = os.path.join(self.state_dir, "ready.json")
        deadline = time.monotonic() + self.start_timeout
        delay = 0.01
        while True:
            if self.proc.poll() is not None:
                rc = self.proc.returncode
                tail = self.log_tail()
                self.stop()
                raise RuntimeError("fakeslack exited with %s during startup:\n%s" % (rc, tail))
            try:
                with open(ready) as f:
                    info = json.load(f)
                if info.get("pid") == self.proc.pid:
                    break
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                tail = self.log_tail()
                self.stop()
                raise RuntimeError("fakeslack not ready within %.0f s:\n%s"
                                   % (self.start_timeout, tail))
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
        self.port = info["port"]
        self.admin_port = info["admin_port"]
        self.base_url = info["base_url"]
        if self.initial_config:
            self.config(**self.initial_config)
        return self

    def log_tail(self, n=4000):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._owns_dir and not self.keep_state:
            shutil.rmtree(self.state_dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # ---- raw admin calls ----

    def call(self, method, path, body=None, timeout=30):
        conn = http.client.HTTPConnection("127.0.0.1", self.admin_port, timeout=timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            headers = {"Content-Type": "application/json"} if data is not None else {}
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
        finally:
            conn.close()
        out = json.loads(raw) if raw else None
        if resp.status >= 300:
            raise FakeSlackError(method, path, resp.status, out)
        return out

    # ---- webhooks ----

    @staticmethod
    def webhook_path(name="alerts"):
        """/services/T.../B.../SECRET, stable for a name."""
        h = hashlib.sha256(name.encode()).hexdigest()
        return "/services/T0FAKE0001/B%s/%s" % (h[:9].upper(), h[9:33])

    def webhook_url(self, name="alerts", mode="app", channel=None, revoked=False,
                    register=True):
        """Full URL of a webhook.  With register=True (default) the webhook is configured on
        the server: mode "app" (channel fixed; channel/username/icon overrides ignored) or
        "legacy" (overrides honoured), posting to channel (default "#" + name)."""
        path = self.webhook_path(name)
        if register:
            self.config(webhooks={path: {"mode": mode, "channel": channel or "#" + name,
                                         "revoked": revoked}})
        return self.base_url + path

    # ---- state ----

    def messages(self, **filters):
        """Accepted messages; filters: kind, webhook (path), channel, channel_id, thread_ts."""
        q = "&".join("%s=%s" % (k, v) for k, v in filters.items())
        return self.call("GET", "/admin/messages" + ("?" + q if q else ""))

    def requests(self):
        return self.call("GET", "/admin/requests")

    def files(self):
        return self.call("GET", "/admin/files")

    def stats(self):
        return self.call("GET", "/admin/stats")

    def fault(self, **kw):
        """fault(type="respond", status=500, error="rollup_error", count=2, path_regex=R),
        fault(type="hang", seconds=3), fault(type="close"), fault(type="down"),
        fault(type="up"), fault(type="clear") -- see README."""
        return self.call("POST", "/admin/faults", kw)

    def clear_faults(self):
        return self.fault(type="clear")

    def config(self, **kw):
        """rate_limit={"enabled", "per_second", "burst"}, tokens=[...], channels=[...],
        webhooks={path: {...}}, unknown_webhooks="accept"|"reject", limits={...}."""
        return self.call("POST", "/admin/config", kw)

    def get_config(self):
        return self.call("GET", "/admin/config")

    def clear(self):
        """Forget messages, requests, files, stats, rate buckets and faults (not config)."""
        return self.call("POST", "/admin/reset")

    def wait_for(self, predicate, timeout=10.0, interval=0.02, what="condition"):
        """Poll predicate() until truthy (returns its value) or raise TimeoutError."""
        deadline = time.monotonic() + timeout
        while True:
            v = predicate()
            if v:
                return v
            if time.monotonic() > deadline:
                raise TimeoutError("timed out after %.1f s waiting for %s" % (timeout, what))
            time.sleep(interval)

    def wait_messages(self, n, timeout=10.0, **filters):
        """Wait until at least n messages (matching filters) were accepted; returns them."""
        return self.wait_for(lambda: (lambda m: m if len(m) >= n else None)(
            self.messages(**filters)), timeout, what="%d slack messages" % n)
