#!/usr/bin/env python3
"""rss_breakdown: where krc's resident pages come from, mapping by mapping.

Starts bench/benchserver.py with N pods and krc exactly as bench/run_bench.py does (streaming
list, --listen 127.0.0.1:0, its own history database), and reads /proc/PID/smaps at the moments
run_bench measures: 1 s after the sync, and 1 s after each phase of events (1 restart per 100,
so every 100th event is collected, diagnosed and recorded). For each moment it prints VmRSS and
a breakdown:

  file pages of each shared object (text, rodata: clean, shareable with other processes)
  anonymous pages inside each shared object's mappings (relocated data, GOT, .data, .bss)
  [heap] (main malloc arena), other malloc arenas (64 MiB-aligned heaps), thread stacks
  (8 MiB-class mappings behind a guard page), other anonymous mappings (large malloc
  blocks, library caches)

  python3 bench/rss_breakdown.py --relist                  # 10000 pods, 2 x 100000 events
  python3 bench/rss_breakdown.py --events 20000 --phases 1 --krc build-rel/krc
  python3 bench/rss_breakdown.py --json out.json --smaps-dir /tmp/smaps   # keep raw smaps
  python3 bench/rss_breakdown.py --krc-arg=--workers=1 --scrape          # krc options, scraping
  python3 bench/rss_breakdown.py --h2       # krc speaks HTTP/2, as to a real API server
  python3 bench/rss_breakdown.py /tmp/smaps/smaps-*.txt                  # saved smaps files

Only the Python 3.11 standard library and the `openssl` CLI (for benchserver) are needed; --h2
also needs the Go toolchain (bench/h2proxy.go, standard library only).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_bench as rb  # noqa: E402  (same directory)

KIB = 1024


def parse_smaps(path):
    """List of mappings in an smaps file: dict(start, end, perms, offset, path, f{name: KiB})."""
    maps = []
    cur = None
    with open(path) as f:
        for line in f:
            head = line.split(None, 5)
            if "-" in head[0] and len(head) >= 5 and ":" not in head[0]:
                lo, hi = head[0].split("-")
                cur = {"start": int(lo, 16), "end": int(hi, 16), "perms": head[1],
                       "offset": int(head[2], 16),
                       "path": head[5].strip() if len(head) > 5 else "", "f": {}}
                maps.append(cur)
            elif cur is not None and line.rstrip().endswith("kB"):
                k, _, v = line.partition(":")
                cur["f"][k] = int(v.split()[0])
    return maps


def classify(maps):
    """{category: KiB resident} with categories as described in the module docstring."""
    out = {}

    def add(cat, kib):
        if kib:
            out[cat] = out.get(cat, 0) + kib

    for i, m in enumerate(maps):
        rss = m["f"].get("Rss", 0)
        anon = m["f"].get("Anonymous", 0)
        size = (m["end"] - m["start"]) // KIB
        path = m["path"]
        if path.startswith("/"):
            name = os.path.basename(path)
            add("file " + name, rss - anon)
            add("anon in " + name, anon)
        elif path == "[heap]":
            add("anon [heap] (main arena)", rss)
        elif path.startswith("["):
            add("anon " + path, rss)
        else:
            prev = maps[i - 1] if i > 0 else None
            nxt = maps[i + 1] if i + 1 < len(maps) else None
            guard_before = prev is not None and prev["perms"].startswith("---") and \
                prev["end"] == m["start"] and (prev["end"] - prev["start"]) <= 64 * KIB
            arena = (m["start"] % (64 * KIB * KIB) == 0) or (
                nxt is not None and nxt["perms"].startswith("---") and
                nxt["start"] == m["end"] and
                (m["start"] & ~(64 * KIB * KIB - 1)) == (nxt["start"] & ~(64 * KIB * KIB - 1)) and
                (nxt["end"] - nxt["start"]) > 64 * KIB)
            if m["perms"].startswith("---"):
                continue
            if guard_before and size >= 64:
                add("anon thread stacks", rss)
            elif arena:
                add("anon malloc arenas (threads)", rss)
            else:
                add("anon other mmap", rss)
    return out


def thread_names(pid):
    names = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                n = f.read().strip()
        except OSError:
            continue
        names[n] = names.get(n, 0) + 1
    return names


def snapshot(pid, label, smaps_dir):
    st = rb.proc_status(pid)
    maps = parse_smaps("/proc/%d/smaps" % pid)
    if smaps_dir:
        with open("/proc/%d/smaps" % pid) as f, \
                open(os.path.join(smaps_dir, "smaps-%s.txt" % label), "w") as g:
            g.write(f.read())
    return {"label": label, "rss_kib": st["VmRSS"], "anon_kib": st.get("RssAnon"),
            "file_kib": st.get("RssFile"), "threads": thread_names(pid),
            "breakdown": classify(maps)}


def print_snapshots(snaps, min_kib):
    cats = {}
    for s in snaps:
        for k, v in s["breakdown"].items():
            cats[k] = max(cats.get(k, 0), v)
    order = sorted(cats, key=lambda k: (-cats[k], k))
    w = max([len(k) for k in order] + [10])
    print("%-*s %s" % (w, "KiB", " ".join("%14s" % s["label"][:14] for s in snaps)))
    small = [0] * len(snaps)
    for k in order:
        vals = [s["breakdown"].get(k, 0) for s in snaps]
        if max(vals) < min_kib:
            small = [a + b for a, b in zip(small, vals)]
            continue
        print("%-*s %s" % (w, k, " ".join("%14d" % v for v in vals)))
    print("%-*s %s" % (w, "(rest, each < %d KiB)" % min_kib, " ".join("%14d" % v for v in small)))
    for key in ("rss_kib", "anon_kib", "file_kib"):
        print("%-*s %s" % (w, "= " + key.replace("_kib", ""),
                           " ".join("%14d" % s[key] for s in snaps)))
    print("%-*s %s" % (w, "  VmRSS MiB", " ".join("%14.2f" % (s["rss_kib"] / 1024) for s in snaps)))
    print("threads: %s" % json.dumps(snaps[-1]["threads"], sort_keys=True))


class H2Front:
    """bench/h2proxy.go in front of benchserver: krc talks HTTP/2 to it, as to a real API
    server, and it talks HTTP/1.1 to benchserver. Needs the Go toolchain (standard library
    only)."""

    def __init__(self, server, workdir):
        exe = os.path.join(workdir, "h2proxy")
        subprocess.run(["go", "build", "-o", exe, os.path.join(HERE, "h2proxy.go")], check=True,
                       cwd=workdir)
        d = server.dir
        self.proc = subprocess.Popen(
            [exe, "127.0.0.1:0", "https://127.0.0.1:%d" % server.info["api_port"],
             os.path.join(d, "server.crt"), os.path.join(d, "server.key"),
             os.path.join(d, "ca.crt")], stdout=subprocess.PIPE, text=True)
        first = self.proc.stdout.readline().split()
        if len(first) != 2 or first[0] != "listening":
            raise rb.BenchError("h2proxy did not start: %r" % first)
        port = int(first[1].rsplit(":", 1)[1])
        self.connections = 0
        self.reader = threading.Thread(target=self._count, daemon=True)
        self.reader.start()
        with open(server.kubeconfig) as f:
            text = f.read()
        old = "https://127.0.0.1:%d" % server.info["api_port"]
        if old not in text:
            raise rb.BenchError("benchserver's kubeconfig does not name %s" % old)
        self.kubeconfig = os.path.join(workdir, "kubeconfig-h2")
        with open(self.kubeconfig, "w") as f:
            f.write(text.replace(old, "https://127.0.0.1:%d" % port))

    def _count(self):
        for line in self.proc.stdout:
            if line.startswith("conn "):
                self.connections += 1

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def start_krc(krc, kubeconfig, outdir, extra):
    """bench/run_bench.py's krc command line plus extra arguments."""
    argv = [krc, "run", "--kubeconfig", kubeconfig, "--log-format", "json",
            "--ignore-restart-count", "1000000000", "--listen", "127.0.0.1:0",
            "--db", os.path.join(outdir, "krc-rss.db")] + list(extra)
    return rb.Consumer(argv, "stderr", os.path.join(outdir, "krc-rss.log"), rb.classify_krc)


class Scraper:
    """One HTTP/1.1 keep-alive connection to krc's /metrics, like a Prometheus scraper."""

    def __init__(self, consumer):
        self.k = consumer
        self.conn = None

    def scrape(self):
        if self.conn is None:
            port = None
            self.k.log.flush()
            with open(self.k.log.name) as f:
                for line in f:
                    if "health and metrics on" in line:
                        port = int(line.split("(port ")[1].split(")")[0])
            if port is None:
                raise rb.BenchError("krc did not log its metrics port")
            self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            self.conn.request("GET", "/metrics")
            r = self.conn.getresponse()
        except (http.client.RemoteDisconnected, ConnectionError):
            # krc closed the idle connection (its connection timeout): reconnect, as a
            # scraper does
            self.conn.close()
            self.conn.request("GET", "/metrics")
            r = self.conn.getresponse()
        r.read()
        if r.status != 200:
            raise rb.BenchError("/metrics answered %d" % r.status)

    def close(self):
        if self.conn is not None:
            self.conn.close()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--krc", default=os.path.join(rb.ROOT, "build-bench", "krc"))
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--events", type=int, default=100000, help="events per phase")
    ap.add_argument("--phases", type=int, default=2, help="phases of events (default 2)")
    ap.add_argument("--relist", action="store_true", help="also an ERROR 410 relist at the end")
    ap.add_argument("--min-kib", type=int, default=100, help="fold rows smaller than this")
    ap.add_argument("--json", help="write the snapshots here")
    ap.add_argument("--smaps-dir", help="keep the raw smaps of every snapshot here")
    ap.add_argument("--krc-arg", action="append", default=[],
                    help="extra argument for krc run (repeat), e.g. --krc-arg=--workers=1")
    ap.add_argument("--scrape", action="store_true",
                    help="GET /metrics over one kept-alive connection before each snapshot, as "
                         "Prometheus does every 15-60 s")
    ap.add_argument("--h2", action="store_true",
                    help="put bench/h2proxy.go in front of benchserver, so krc speaks HTTP/2 as "
                         "with a real API server (needs the Go toolchain)")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("files", nargs="*", help="print saved smaps files instead of running krc")
    a = ap.parse_args(argv)
    if a.files:
        snaps = []
        for p in a.files:
            maps = parse_smaps(p)
            rss = sum(m["f"].get("Rss", 0) for m in maps)
            anon = sum(m["f"].get("Anonymous", 0) for m in maps)
            snaps.append({"label": os.path.basename(p).replace("smaps-", "").replace(".txt", ""),
                          "rss_kib": rss, "anon_kib": anon, "file_kib": rss - anon,
                          "threads": {}, "breakdown": classify(maps)})
        print_snapshots(snaps, a.min_kib)
        return 0
    if a.smaps_dir:
        os.makedirs(a.smaps_dir, exist_ok=True)

    workdir = tempfile.mkdtemp(prefix="krc-rss-")
    srv = rb.Server(a.pods, workdir, 10240, os.path.join(workdir, "server.log"))
    snaps = []
    try:
        srv.call("/reset", "POST")
        srv.call("/config?streaming=1", "POST")
        front = H2Front(srv, workdir) if a.h2 else None
        k = start_krc(a.krc, front.kubeconfig if front else srv.kubeconfig, workdir, a.krc_arg)
        try:
            scraper = Scraper(k) if a.scrape else None

            def take(label):
                if scraper is not None:
                    scraper.scrape()
                time.sleep(1)
                snaps.append(snapshot(k.pid, label, a.smaps_dir))

            rb.krc_sync(k, srv, a.pods, False, a.timeout)
            take("sync")
            for i in range(a.phases):
                rb.krc_events(k, srv, a.events, 100, a.timeout, prerender=(i % 2 == 0))
                take("events%d" % (i + 1))
            if a.relist:
                rb.krc_relist(k, srv, a.pods, a.timeout)
                take("relist")
        finally:
            if scraper is not None:
                scraper.close()
            k.stop()
            if front is not None:
                front.stop()
                print("krc opened %d connection(s) to the HTTP/2 front" % front.connections)
    finally:
        srv.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    print_snapshots(snaps, a.min_kib)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(snaps, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
