#!/usr/bin/env python3
"""Seed corpora of the fuzz targets, made from tests/fixtures (README.md).

  seeds.py OUTDIR [TARGET...]        write OUTDIR/TARGET/* (all targets by default)
  seeds.py --replay [EMULATOR...] BINARY TARGET
                                     seeds into a temporary folder, then run
                                     BINARY (a *_replay build) on
                                     tests/fuzz/regressions/TARGET and the seeds:
                                     the ctest fuzz_replay_TARGET (a cross build
                                     puts its emulator, qemu, before BINARY)
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "fixtures")
SEP = b"\n#--krc-fuzz--\n"
MAX = 64 * 1024  # seeds bigger than this slow libFuzzer down for nothing


def read(path):
    with open(path, "rb") as f:
        return f.read()


def fixtures(pattern):
    return sorted(glob.glob(os.path.join(FIX, pattern)))


def compact(path):
    """A JSON fixture as one line (as the API streams it)."""
    return json.dumps(json.load(open(path, "rb")), separators=(",", ":")).encode()


def corpus_cases():
    return sorted(d for d in glob.glob(os.path.join(FIX, "corpus", "*")) if os.path.isdir(d))


def part(case, name):
    p = os.path.join(case, name)
    return read(p) if os.path.exists(p) else None


KUBECONFIG = b"""apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev
  cluster:
    server: https://127.0.0.1:6443
    %s
contexts:
- name: dev
  context: {cluster: dev, user: %s, namespace: shop}
users:
- name: alice
  user:
    token: abcdef0123456789
- name: bob
  user:
    tokenFile: token
- name: carol
  user:
    client-certificate: cert.pem
    client-key: key.pem
- name: dave
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: /bin/true
      args: [--region, eu]
      env: [{name: A, value: b}]
      interactiveMode: Never
      provideClusterInfo: true
"""

PEM = (b"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ3JjZnV6ejAKBggqhkjOPQQDAjAPMQ0wCwYDVQQDDARr\n"
       b"cmMtMB4XDTI2MDEwMTAwMDAwMFoXDTM2MDEwMTAwMDAwMFowDzENMAsGA1UEAwwE\n"
       b"-----END CERTIFICATE-----\n")


def seeds_for(target):
    """A list of (name, bytes)."""
    out = []
    pods = fixtures("pods/*.json")
    if target == "jscan":
        for p in pods + fixtures("corpus/*/events.json")[:6] + fixtures("corpus/*/node.json")[:3]:
            out.append((os.path.basename(os.path.dirname(p)) + "-" + os.path.basename(p), read(p)))
        out += [("numbers", b'[0,-1,1.5e10,9223372036854775807,-9223372036854775808,1e400]'),
                ("escapes", b'{"a\\u00e9\\ud83d\\ude00\\ud800":"\\n\\t\\"\\\\\\/"}'),
                ("literals", b'[true,false,null,{},[]]')]
    elif target == "linebuf":
        for c in corpus_cases()[:8]:
            log = part(c, "logs.txt")
            if log:
                out.append((os.path.basename(c), b"\x40\x07" + log))
        out.append(("stream", b"\x3f\x03" + b"\n".join(compact(p) for p in pods[:4]) + b"\r\n\n"))
    elif target == "list_framer":
        items = [json.load(open(p, "rb")).get("object") for p in pods]
        items = [i for i in items if i and i.get("kind") == "Pod"]
        body = {"kind": "PodList", "apiVersion": "v1",
                "metadata": {"resourceVersion": "42", "continue": "abc"}, "items": items}
        out.append(("podlist", b"\xff\x05" + json.dumps(body).encode()))
        for p in fixtures("corpus/*/events.json")[:4]:
            out.append((os.path.basename(os.path.dirname(p)), b"\x40\x11" + read(p)))
        out.append(("status", b"\x10\x01" + compact(pods[4]).split(b'"object":', 1)[1][:-1]))
    elif target == "kube_pod":
        for p in pods:
            out.append(("event-" + os.path.basename(p), b"\x00" + compact(p)))
        for p in fixtures("corpus/*/pod.json")[:8]:
            out.append(("pod-" + os.path.basename(os.path.dirname(p)), b"\x01" + read(p)))
        # the generic watch (bit 1): another resource's event lines and objects
        rs = {"kind": "ReplicaSet", "apiVersion": "apps/v1",
              "metadata": {"name": "api-6d4b9c7f5", "namespace": "shop", "uid": "u-1",
                           "resourceVersion": "77",
                           "annotations": {"deployment.kubernetes.io/revision": "12"}},
              "spec": {"template": {"spec": {"containers": [{"name": "api",
                                                              "image": "api:1.4.3"}]}}},
              "status": {"readyReplicas": 3}}
        meta = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                "metadata": {"name": "api-config", "namespace": "shop", "resourceVersion": "9"}}
        for name, obj in (("rs", rs), ("meta", meta)):
            out.append(("object-" + name, b"\x03" + json.dumps(obj).encode()))
            out.append(("object-event-" + name,
                        b"\x02" + json.dumps({"type": "MODIFIED", "object": obj}).encode()))
        out.append(("object-bookmark", b"\x02" + json.dumps(
            {"type": "BOOKMARK", "object": {"kind": "ReplicaSet", "apiVersion": "apps/v1",
                                            "metadata": {"resourceVersion": "80"}}}).encode()))
        for p in pods[:2]:
            out.append(("object-pod-event-" + os.path.basename(p), b"\x02" + compact(p)))
    elif target == "kube_parse":
        for c in corpus_cases()[:10]:
            for i, n in enumerate(("pod.json", "events.json", "node.json")):
                d = part(c, n)
                if d:
                    out.append((os.path.basename(c) + "-" + n, bytes([i]) + d))
        # Kubernetes 1.35-shaped pods: the fields kube_parse_fields.c reads
        for p in fixtures("k8s-1.35/*.json"):
            out.append(("k8s-1.35-" + os.path.basename(p), b"\x00" + read(p)))
    elif target == "pod_diff":
        for p in fixtures("corpus/*/pod.json"):
            out.append((os.path.basename(os.path.dirname(p)), read(p)))
        for p in fixtures("k8s-1.35/*.json"):
            out.append(("k8s-1.35-" + os.path.basename(p), read(p)))
        for p in pods:
            obj = json.load(open(p, "rb")).get("object")
            if obj and obj.get("kind") == "Pod" and "uid" in obj.get("metadata", {}):
                out.append(("watch-" + os.path.basename(p), json.dumps(obj).encode()))
    elif target == "kube_auth":
        ca = b"certificate-authority: ca.crt"
        for user, cluster in ((b"alice", ca), (b"bob", b"insecure-skip-tls-verify: true"),
                              (b"carol", b"certificate-authority-data: " +
                               __import__("base64").b64encode(PEM)),
                              (b"dave", ca)):
            out.append(("kubeconfig-" + user.decode(),
                        b"\x00" + SEP.join([KUBECONFIG % (cluster, user), PEM,
                                            b"tok-0123456789abcdef\n", PEM, PEM])))
        out.append(("in-cluster", b"\x01" + SEP.join([b"10.0.0.1", b"443",
                                                      b"eyJhbGciOi.payload.sig\n", PEM,
                                                      b"kube-system\n"])))
    elif target == "config":
        for p in fixtures("config/*.yaml") + fixtures("helm/*.yaml"):
            out.append((os.path.basename(p), read(p)))
    elif target == "base64":
        out += [("text", b"\x00TUlJQnN6Q0NBVm1n\nQXdJQkFnSVVRM0pq=="), ("pad", b"\x00YQ=="),
                ("round", b"\x1f" + PEM), ("bad", b"\x00a===")]
    elif target == "rfc3339":
        for i, t in enumerate((b"2026-07-30T08:14:05Z", b"2026-07-30t08:14:05.123456789+02:00",
                               b"2024-02-29 23:59:60-00:30", b"2026-07-30T08:14:05.000000001Z app")):
            for flags in range(4):
                out.append(("t%d-%d" % (i, flags), bytes([flags]) + t))
    elif target == "redact":
        for c in corpus_cases()[:6]:
            log = part(c, "logs.txt")
            if log:
                out.append((os.path.basename(c), log))
        out.append(("secrets", b"Authorization: Bearer abcdefghijklmnop0123\n"
                    b"password=hunter2 token: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl\n"
                    b"postgres://user:secret@db:5432/x AKIAIOSFODNN7EXAMPLE pin:12345 secret-abcd\n"
                    b"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n"))
        # each secret form of tests/fixtures/secrets/corpus.txt written each way (fuzz_redact.c:
        # byte 0 the form, byte 1 the way, byte 2 the blanks, then the text around it)
        forms = [l for l in read(os.path.join(FIX, "secrets", "corpus.txt")).splitlines()
                 if l and not l.startswith(b"#") and not l.startswith(b"keep ")]
        for i in range(len(forms)):
            for way in range(8):
                out.append(("secret-%02d-%d" % (i, way),
                            bytes([i, way, (i + way) % 6]) + b"2025-01-01T00:00:00Z INFO before" +
                            SEP + b"after {ok} [1/2]"))
    elif target == "slack_format":
        for c in corpus_cases()[:10]:
            parts = [part(c, "logs.txt") or b"", part(c, "pod.json"), part(c, "events.json")]
            if parts[1]:
                out.append((os.path.basename(c), b"\x00" + SEP.join(p or b"" for p in parts)))
        out.append(("log-only", b"\x05" + "<@U123> ```x``` &amp; \x1b[31mred\u00e9\n".encode() * 20))
    elif target == "explain":
        for c in corpus_cases()[:8]:
            parts = [part(c, n) for n in ("pod.json", "events.json", "node.json", "logs.txt")]
            while parts and parts[-1] is None:
                parts.pop()
            out.append((os.path.basename(c), bytes([len(out) % 3]) +
                        SEP.join(p or b"" for p in parts)))
        for d in sorted(glob.glob(os.path.join(FIX, "realworld", "*")))[:10]:
            pod = part(d, "describe.txt") or part(d, "pod.yaml")
            if pod:
                parts = [pod] + ([part(d, "events.yaml")] if part(d, "events.yaml") else [])
                out.append((os.path.basename(d), bytes([len(out) % 3]) + SEP.join(parts)))
    elif target == "mcp":
        meta = ('"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
                '"io.modelcontextprotocol/clientCapabilities":{}}')
        msgs = [
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
            '"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}',
            '{"jsonrpc":"2.0","method":"notifications/initialized"}',
            '{"jsonrpc":"2.0","id":"p","method":"ping"}',
            '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{%s}}' % meta,
            '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo",'
            '"arguments":{"word":"hi","n":2,"mode":"a"},%s}}' % meta,
            '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo",'
            '"arguments":{"word":"fail"}}}',
            '{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{%s}}' % meta,
            '[{"jsonrpc":"2.0","id":6,"method":"ping"}]',
        ]
        for i, m in enumerate(msgs):
            out.append(("msg%d" % i, bytes([i % 4]) + m.encode()))
    else:
        raise SystemExit("seeds.py: unknown target %s" % target)
    return [(n, d) for n, d in out if len(d) <= MAX]


TARGETS = ["jscan", "linebuf", "list_framer", "kube_pod", "kube_parse", "pod_diff", "kube_auth",
           "config", "base64", "rfc3339", "redact", "slack_format", "explain", "mcp"]


def write(outdir, target):
    d = os.path.join(outdir, target)
    os.makedirs(d, exist_ok=True)
    seeds = seeds_for(target)
    for name, data in seeds:
        with open(os.path.join(d, "seed-" + name), "wb") as f:
            f.write(data)
    return d, len(seeds)


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--replay":
        command, target = sys.argv[2:-1], sys.argv[-1]
        with tempfile.TemporaryDirectory() as tmp:
            d, n = write(tmp, target)
            if n == 0:
                raise SystemExit("seeds.py: no seeds for %s (fixtures missing?)" % target)
            return subprocess.call(command + [os.path.join(HERE, "regressions", target), d])
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        raise SystemExit(__doc__)
    for t in sys.argv[2:] or TARGETS:
        _, n = write(sys.argv[1], t)
        print("%s: %d seeds" % (t, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
