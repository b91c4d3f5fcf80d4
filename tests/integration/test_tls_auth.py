"""TLS and authentication of the API connection (issue 18), with the real krc binary:
a certificate from another CA or for another host name is refused (krc keeps retrying and is
not ready), insecure-skip-tls-verify connects with its warning, the bearer token never
follows a redirect, a rotated token file is picked up, client certificates authenticate."""

import base64
import http.server
import json
import os
import shutil
import ssl
import sys
import tempfile
import threading
import unittest

import krc_harness as h
from admin import FakeKube

sys.path.insert(0, os.path.join(h.ROOT, "tests", "lib"))
from testtls import make_certs, run_openssl  # noqa: E402

FAST = ["--watch-idle-timeout", "3s"]


def kubeconfig(path, server, ca=None, token_file=None, insecure=False, cert=None, key=None):
    """A kubeconfig (JSON is YAML) for one cluster and user."""
    cluster = {"server": server}
    if ca:
        cluster["certificate-authority"] = ca
    if insecure:
        cluster["insecure-skip-tls-verify"] = True
    user = {}
    if token_file:
        user["tokenFile"] = token_file
    for name, f in (("client-certificate-data", cert), ("client-key-data", key)):
        if f:
            with open(f, "rb") as fh:
                user[name] = base64.b64encode(fh.read()).decode()
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "c",
                   "clusters": [{"name": "c", "cluster": cluster}],
                   "users": [{"name": "u", "user": user}],
                   "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}, f)
    return path


def make_leaf(d, ca_dir, name, ext):
    """name.crt/name.key in d, signed by the CA in ca_dir, with the given extensions."""
    with open(os.path.join(d, name + ".ext"), "w") as f:
        f.write(ext)
    run_openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                 "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + name], d)
    run_openssl(["x509", "-req", "-in", name + ".csr", "-CA", os.path.join(ca_dir, "ca.crt"),
                 "-CAkey", os.path.join(ca_dir, "ca.key"), "-set_serial", "0x1234",
                 "-out", name + ".crt", "-days", "30", "-extfile", name + ".ext"], d)
    return os.path.join(d, name + ".crt"), os.path.join(d, name + ".key")


CLIENT_EXT = ("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
              "extendedKeyUsage=clientAuth\n")


class Recorder:
    """An HTTP(S) server on 127.0.0.1 that records every request's headers and answers
    200 {}: the "other host" of the redirect tests, and a server whose certificate names
    another host."""

    def __init__(self, cert=None, key=None):
        self.seen = []
        rec = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                rec.seen.append({"path": self.path, "headers": dict(self.headers)})
                body = b"{}"
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.scheme = "http"
        if cert:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(cert, key)
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
            self.scheme = "https"
        self.url = "%s://127.0.0.1:%d" % (self.scheme, self.httpd.server_address[1])
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class TlsAuthTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="krc-tls-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.krc = None

    def tearDown(self):
        if self.krc is not None:
            self.krc.kill()

    def fake(self, **kw):
        kube = FakeKube(**kw)
        kube.start()
        self.addCleanup(kube.stop)
        kube.config(bookmark_interval=1)
        return kube

    def start_krc(self, cfg, args=()):
        self.krc = h.Krc(cfg, list(FAST) + list(args))
        return self.krc

    def assert_not_ready(self):
        port = self.krc.http_port()
        status, _ = h.http_get(port, "/readyz")
        self.assertEqual(status, 503, "krc must not be ready without the API server")
        self.assertIsNone(self.krc.proc.poll(), "krc keeps retrying")

    def test_certificate_from_another_ca_is_refused(self):
        kube = self.fake()
        other = self.fake()  # a second fake: its own CA, named like the first one's
        cfg = kubeconfig(os.path.join(self.dir, "config"), kube.api_url, ca=other.ca,
                         token_file=kube.token_path)
        self.start_krc(cfg)
        lines = self.krc.wait_log("retrying in", count=2)
        msg = lines[0]["msg"]
        self.assertIn(kube.api_url, msg)
        self.assertRegex(msg, r"(?i)certificate")
        self.assertIn(other.ca, msg, "the error names the CA file it checked against")
        self.assert_not_ready()
        self.assertFalse(self.krc.logs(contains="sync complete"))
        self.assertNotIn(kube.current_token(), self.krc.text())

    def test_certificate_for_another_host_name_is_refused(self):
        ca_dir = os.path.join(self.dir, "ca")
        os.mkdir(ca_dir)
        make_certs(ca_dir, "other-host-ca")
        cert, key = make_leaf(self.dir, ca_dir, "other.example",
                              "basicConstraints=critical,CA:FALSE\n"
                              "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:other.example\n")
        rec = Recorder(cert, key)
        self.addCleanup(rec.stop)
        token = os.path.join(self.dir, "token")
        with open(token, "w") as f:
            f.write("tok-" + "9" * 30)
        cfg = kubeconfig(os.path.join(self.dir, "config"), rec.url,
                         ca=os.path.join(ca_dir, "ca.crt"), token_file=token)
        self.start_krc(cfg)
        msg = self.krc.wait_log("retrying in", count=2)[0]["msg"]
        self.assertIn(rec.url, msg)
        self.assertRegex(msg, r"(?i)certificate|subject|name")
        self.assertIn("127.0.0.1", msg)
        self.assertEqual(rec.seen, [], "no request may reach a server with the wrong name")
        self.assert_not_ready()

    def test_insecure_skip_tls_verify_connects_with_a_warning(self):
        kube = self.fake()
        kube.create_pod("default", "ins-0")
        cfg = kubeconfig(os.path.join(self.dir, "config"), kube.api_url,
                         token_file=kube.token_path, insecure=True)
        self.start_krc(cfg)
        self.krc.wait_synced()
        warn = self.krc.logs(contains="insecure-skip-tls-verify")
        self.assertTrue(warn, "the warning is logged:\n" + self.krc.tail())
        self.assertIn("WARNING", warn[0]["msg"])
        self.assertEqual(warn[0].get("level"), "warn")
        kube.restart("default", "ins-0", "app")
        self.krc.wait_restarts(1)

    def redirect_case(self, status, location):
        kube = self.fake()
        kube.create_pod("default", "redir-0")
        kube.fault(type="http_error", status=status, count=3, location=location,
                   path_regex="^/api/v1/pods$", message="moved")
        self.start_krc(kube.kubeconfig)
        msg = self.krc.wait_log("retrying in")[0]["msg"]
        self.assertIn(str(status), msg)
        self.krc.wait_synced(timeout=30)  # the fault is used up: it recovers
        kube.restart("default", "redir-0", "app")
        self.krc.wait_restarts(1)
        statuses = [r["status"] for r in kube.requests() if r["path"] == "/api/v1/pods"]
        self.assertEqual(statuses.count(status), 3)
        return kube

    def test_token_never_follows_a_redirect_to_another_host(self):
        for status in (302, 307):
            with self.subTest(status=status):
                rec = Recorder()
                self.addCleanup(rec.stop)
                self.redirect_case(status, rec.url + "/api/v1/pods")
                self.assertEqual(rec.seen, [], "krc followed a redirect to another host")
                self.krc.kill()
                self.krc = None

    def test_same_host_redirect_is_not_followed(self):
        # client-go's transport would follow a same-host redirect; krc follows none, so the
        # Location is never requested (here it would be /api/v1/pods-moved, a 404)
        kube = self.redirect_case(307, "/api/v1/pods-moved")
        self.assertNotIn("/api/v1/pods-moved", [r["path"] for r in kube.requests()])

    def test_rotated_token_file_is_picked_up_twice_without_restart(self):
        kube = self.fake()
        kube.create_pod("default", "rot-0")
        self.start_krc(kube.kubeconfig)
        self.krc.wait_synced()
        pid = self.krc.proc.pid
        for i, tok in enumerate(("rotated-one-0123456789abcdef", "rotated-two-0123456789abcd")):
            kube.config(token=tok)  # new file content; the old token is rejected at once
            kube.fault(type="drop_watches")
            kube.restart("default", "rot-0", "app")
            self.krc.wait_restarts(i + 1)
        self.assertEqual(self.krc.proc.pid, pid)
        self.assertIsNone(self.krc.proc.poll())
        text = self.krc.text()
        self.assertNotIn("rotated-one-0123456789abcdef", text)
        self.assertNotIn("rotated-two-0123456789abcd", text)

    def test_unusable_token_file_is_fatal_at_start(self):
        """Issue 25: a tokenFile that is a directory used to start and retry forever while a
        missing one stopped krc. Both (and an empty one) now stop the start with the kubeconfig,
        the path and the reason."""
        kube = self.fake()
        codes = {}
        os.mkdir(os.path.join(self.dir, "tokdir"))
        with open(os.path.join(self.dir, "tokempty"), "w") as f:
            f.write("\n")
        for name, why in (("tokabsent", "No such file or directory"),
                          ("tokdir", "Is a directory"), ("tokempty", "the file is empty")):
            with self.subTest(name):
                tok = os.path.join(self.dir, name)
                cfg = kubeconfig(os.path.join(self.dir, "kc-" + name), kube.api_url,
                                 ca=kube.ca, token_file=tok)
                self.start_krc(cfg)
                codes[name] = self.krc.wait_exit(timeout=30)
                self.assertNotEqual(codes[name], 0, self.krc.tail())
                line = self.krc.wait_log("cannot configure Kubernetes access")[0]
                self.assertEqual(line["level"], "error")
                self.assertIn("kubeconfig %s" % cfg, line["msg"])
                self.assertIn('user "u": tokenFile %s: %s' % (tok, why), line["msg"])
                self.assertEqual(self.krc.logs(contains="retrying"), [])
                self.krc = None
        self.assertEqual(len(set(codes.values())), 1, codes)  # one way, the same exit status
        self.assertEqual([r for r in kube.requests() if r["path"].startswith("/api")], [])

    def test_token_file_unreadable_after_start_warns_and_keeps_running(self):
        """A token file that cannot be read after the start (a projected token being replaced,
        here a directory in its place): krc warns once, goes on with the token it read before,
        and says so when the file is back."""
        kube = self.fake()
        kube.create_pod("default", "tok-0")
        tok = os.path.join(self.dir, "token")
        shutil.copy(kube.token_path, tok)
        cfg = kubeconfig(os.path.join(self.dir, "kc"), kube.api_url, ca=kube.ca, token_file=tok)
        self.start_krc(cfg)
        self.krc.wait_synced()
        saved = os.path.join(self.dir, "token.saved")
        os.rename(tok, saved)
        os.mkdir(tok)
        for _ in range(2):  # a 401 makes krc read the file again (twice: one warning)
            kube.fault(type="http_error", status=401, count=1, reason="Unauthorized",
                       message="Unauthorized", path_regex="^/api/v1/pods$")
            kube.fault(type="drop_watches")
            kube.restart("default", "tok-0", "app")
        self.krc.wait_restarts(2)
        warns = self.krc.logs(contains="token file %s: Is a directory" % tok)
        self.assertEqual(len(warns), 1, warns)
        self.assertEqual(warns[0]["level"], "warn")
        self.assertIn("the token read before stays in use", warns[0]["msg"])
        self.assertIsNone(self.krc.proc.poll())
        os.rmdir(tok)
        os.rename(saved, tok)
        kube.fault(type="http_error", status=401, count=1, reason="Unauthorized",
                   message="Unauthorized", path_regex="^/api/v1/pods$")
        kube.fault(type="drop_watches")
        self.krc.wait_log("token file %s read again" % tok)
        self.assertEqual(self.krc.stop(), 0)
        self.krc = None

    def test_rejected_token_says_why_and_stops_cleanly(self):
        """Issue 25: a rejected token stopped the watch with an empty reason ("pod watch (all
        namespaces) stopped: "). The 401 says what the API server answered and what to check;
        a stop while krc waits to retry is a clean stop."""
        kube = self.fake()
        tok = os.path.join(self.dir, "token")
        with open(tok, "w") as f:
            f.write("revoked-token-0123456789\n")
        cfg = kubeconfig(os.path.join(self.dir, "kc"), kube.api_url, ca=kube.ca, token_file=tok)
        self.start_krc(cfg)
        # the pod watch's line (change tracking's watches are refused too, at warn level)
        line = self.krc.wait_log("GET /api/v1/pods: 401 Unauthorized")[0]
        self.assertEqual(line["level"], "error")
        self.assertIn("GET /api/v1/pods: 401 Unauthorized: Unauthorized", line["msg"])
        self.assertIn("the API server rejected the bearer token from %s: expired or revoked, or "
                      "for another cluster than %s" % (tok, kube.api_url), line["msg"])
        self.assertIn("retrying in", line["msg"])
        self.assertEqual(self.krc.stop(), 0)
        stopped = self.krc.logs(contains="stopped")
        self.assertEqual([l for l in stopped if l["msg"].rstrip().endswith(":")], [], stopped)
        self.assertEqual(self.krc.logs(contains="pod watch (all namespaces) stopped"), [])
        self.assertNotIn("revoked-token-0123456789", self.krc.text())
        self.krc = None

    def client_ca(self):
        ca_dir = os.path.join(self.dir, "client-ca")
        os.mkdir(ca_dir)
        make_certs(ca_dir, "client-ca")
        return ca_dir

    def test_client_certificate_authenticates(self):
        ca_dir = self.client_ca()
        cert, key = make_leaf(self.dir, ca_dir, "krc-client", CLIENT_EXT)
        kube = self.fake(client_ca=os.path.join(ca_dir, "ca.crt"))
        kube.create_pod("default", "cc-0")
        cfg = kubeconfig(os.path.join(self.dir, "config"), kube.api_url, ca=kube.ca,
                         cert=cert, key=key)  # no token at all
        self.start_krc(cfg)
        self.krc.wait_synced()
        kube.restart("default", "cc-0", "app")
        self.krc.wait_restarts(1)
        reqs = kube.requests()
        self.assertTrue(reqs)
        self.assertFalse(any(r["authorization"] for r in reqs), "no bearer token was sent")
        with open(key) as f:
            key_text = f.read().strip().splitlines()[1]
        self.assertNotIn(key_text, self.krc.text())

    def test_client_certificate_from_another_ca_is_refused(self):
        self.client_ca()
        other = os.path.join(self.dir, "other-ca")
        os.mkdir(other)
        make_certs(other, "other-ca")
        cert, key = make_leaf(self.dir, other, "krc-client", CLIENT_EXT)
        kube = self.fake(client_ca=os.path.join(self.dir, "client-ca", "ca.crt"))
        cfg = kubeconfig(os.path.join(self.dir, "config"), kube.api_url, ca=kube.ca,
                         cert=cert, key=key)
        self.start_krc(cfg)
        msg = self.krc.wait_log("retrying in", count=2)[0]["msg"]
        self.assertIn(kube.api_url, msg)
        self.assert_not_ready()


if __name__ == "__main__":
    h.main()
