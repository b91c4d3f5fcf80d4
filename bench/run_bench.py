#!/usr/bin/env python3
"""run_bench: memory and CPU benchmarks of the krc daemon against bench/benchserver.py.

For each pod count it starts benchserver (synthetic ~10 KB pods, TLS) and measures krc:

  streaming path   krc syncs with a streaming list (watch + sendInitialEvents); then
                   VmHWM (peak RSS during the sync) and VmRSS at steady state; then two phases
                   of M MODIFIED events of which 1 in 100 raises a restartCount (server
                   prerendered, then live); then an in-band ERROR 410 forces a relist and the
                   peak RSS during the relist is read (VmHWM after resetting it through
                   /proc/PID/clear_refs); last a "storm" of S events that EACH raise a
                   restartCount, so krc collects diagnostics (4 GETs) for every event.
                   Every phase reads CPU time (utime+stime) of the whole process
                   (/proc/PID/stat) and per thread name (/proc/PID/task/*/stat: krc-watch
                   parses and detects, krc-worker collects and diagnoses, krc-sender posts),
                   from the first event until the last "restart diagnosed" line.
  list path        the server answers the streaming list with 422, krc falls back to
                   paginated LIST (limit 500) + WATCH; peak RSS during the sync and a relist.
  kubectl          (smallest pod count only) `kubectl get pods -A -w -o name` and the default
                   (server-side Table) output consume the "1 restart per 100, prerendered"
                   stream; their whole-process CPU time per event is compared with krc's
                   whole-process figure on that stream.

No timing is asserted anywhere except in the summary's pass/fail column against the targets of
the "Core daemon" issue. Results go to bench/out/bench-<timestamp>.json and bench/out/latest.json.

  python3 bench/run_bench.py                       # 10000 and 150000 pods (several minutes)
  python3 bench/run_bench.py --quick               # 2000 pods, 20000 events, about a minute
  python3 bench/run_bench.py --pods 50000 --events 200000 --no-kubectl
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLK_TCK = os.sysconf("SC_CLK_TCK")
MIB = 1024 * 1024


class BenchError(Exception):
    pass


# --------------------------------------------------------------------------------------------
# /proc helpers


def proc_status(pid) -> dict:
    """VmRSS, VmHWM, RssAnon, RssFile, VmSize in KiB from /proc/PID/status."""
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem", "VmSize", "Threads"):
                out[k] = int(v.split()[0])
    return out


def proc_cpu_split(pid):
    """(utime, stime) of all threads of pid, in seconds (10 ms resolution)."""
    with open("/proc/%d/stat" % pid) as f:
        data = f.read()
    fields = data[data.rindex(")") + 2:].split()
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK


def proc_cpu(pid) -> float:
    """utime + stime of all threads of pid, in seconds."""
    return sum(proc_cpu_split(pid))


def proc_thread_cpu(pid) -> dict:
    """utime + stime in seconds per thread name (/proc/PID/task/TID/stat, summed over the
    threads of one name: krc names its threads krc-watch, krc-worker, krc-sender)."""
    out = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                data = f.read()
        except OSError:
            continue  # the thread ended between listdir and open
        comm = data[data.index("(") + 1:data.rindex(")")]
        fields = data[data.rindex(")") + 2:].split()
        out[comm] = out.get(comm, 0.0) + (int(fields[11]) + int(fields[12])) / CLK_TCK
    return out


THREAD_GROUPS = ("krc-watch", "krc-worker", "krc-sender", "krc-track")


def thread_cpu_delta(t0, t1, total):
    """CPU seconds per krc thread group between two proc_thread_cpu() samples; 'other' is the
    rest of the process's total (main thread, threads that ended)."""
    out = {}
    for g in THREAD_GROUPS:
        out[g] = round(t1.get(g, 0.0) - t0.get(g, 0.0), 3)
    out["other"] = round(max(0.0, total - sum(out.values())), 3)
    return out


def machine_busy():
    """(busy, total) jiffies of all CPUs from /proc/stat: other work on the machine inflates
    CPU-time figures (shared caches, a VM's expensive system calls), so each phase records it."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v) - idle, sum(v)


def busy_cpus(b0, b1):
    """Average number of busy CPUs between two machine_busy() samples."""
    total = b1[1] - b0[1]
    return round((b1[0] - b0[0]) / total * (os.cpu_count() or 1), 2) if total > 0 else None


def reset_hwm(pid):
    """Reset VmHWM to the current RSS (Linux >= 4.0: write 5 to clear_refs)."""
    with open("/proc/%d/clear_refs" % pid, "w") as f:
        f.write("5")


def wait_for(pred, timeout, what, poll=0.02):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(poll)
    raise BenchError("timed out after %.0fs waiting for %s" % (timeout, what))


# --------------------------------------------------------------------------------------------
# the server


class Server:
    def __init__(self, pods, workdir, pod_size, log_path, replicasets=0):
        self.dir = os.path.join(workdir, "server-%d" % pods)
        os.makedirs(self.dir, exist_ok=True)
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "benchserver.py"), "--state-dir", self.dir,
             "--pods", str(pods), "--pod-size", str(pod_size),
             "--replicasets", str(replicasets)],
            stdout=self.log, stderr=subprocess.STDOUT)
        ready = os.path.join(self.dir, "ready.json")

        def is_ready():
            if self.proc.poll() is not None:
                raise BenchError("benchserver exited with %d (log: %s)"
                                 % (self.proc.returncode, log_path))
            return os.path.exists(ready)
        wait_for(is_ready, 30, "benchserver to start")
        with open(ready) as f:
            self.info = json.load(f)
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        self.admin = "http://127.0.0.1:%d" % self.info["admin_port"]

    def call(self, path, method="GET"):
        req = urllib.request.Request(self.admin + path, method=method,
                                     data=b"" if method == "POST" else None)
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.load(r)

    def stats(self):
        return self.call("/stats")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


# --------------------------------------------------------------------------------------------
# consumers


class Consumer:
    """A child process whose output lines are read by a thread and counted."""

    def __init__(self, argv, stream, log_path, classify):
        self.log = open(log_path, "w")
        self.lock = threading.Condition()
        self.counts = {}
        self.last = {}
        self.details = {}  # kind -> list of details, for the kinds in KEEP_DETAILS
        self.lines = 0
        self.classify = classify
        kw = {"stdout": subprocess.PIPE, "stderr": self.log} if stream == "stdout" else \
            {"stdout": self.log, "stderr": subprocess.PIPE}
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, **kw)
        self.pid = self.proc.pid
        pipe = self.proc.stdout if stream == "stdout" else self.proc.stderr
        self.reader = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self.reader.start()

    def _read(self, pipe):
        keep = 0
        for raw in pipe:
            line = raw.decode("utf-8", "replace")
            kind, detail = self.classify(line)
            with self.lock:
                self.lines += 1
                if kind:
                    self.counts[kind] = self.counts.get(kind, 0) + 1
                    self.last[kind] = detail
                    if kind in KEEP_DETAILS:
                        self.details.setdefault(kind, []).append(detail)
            # keep the log small: everything but the per-event lines, and the first few of those
            if kind not in ("restart", "diagnosed", "event") or keep < 20:
                self.log.write(line)
                if kind in ("restart", "diagnosed", "event"):
                    keep += 1
        self.log.flush()

    def count(self, kind):
        with self.lock:
            return self.counts.get(kind, 0)

    def last_detail(self, kind):
        with self.lock:
            return self.last.get(kind)

    def details_since(self, kind, start):
        with self.lock:
            return list(self.details.get(kind, [])[start:])

    def alive(self):
        return self.proc.poll() is None

    def check_alive(self, what):
        if not self.alive():
            raise BenchError("%s exited with %d while waiting (see %s)"
                             % (what, self.proc.returncode, self.log.name))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(5)
        self.log.close()


KEEP_DETAILS = ("diagnosed",)


def classify_krc(line):
    """Only "restart detected" counts as a restart line: a worker logs it when it takes the
    restart from the queue, so the last one proves the watch thread handled every earlier event.
    "restart diagnosed" follows once the worker has collected and diagnosed it."""
    try:
        o = json.loads(line)
    except ValueError:
        return "other", line.strip()
    msg = o.get("msg", "")
    if msg == "restart detected":
        return "restart", None
    if msg == "restart diagnosed":
        try:
            ms = int(o.get("collect_ms"))
        except (TypeError, ValueError):
            ms = None
        return "diagnosed", (o.get("cause"), ms)
    if msg.startswith("restart queue full"):
        return "queue_full", msg
    if msg.startswith("no Slack destination"):
        return "no_slack", msg
    if msg.startswith("tracking "):
        return "tracking", msg
    if msg.startswith("pod sync complete"):
        return "sync", msg
    if msg.startswith("streaming list not available"):
        return "fallback", msg
    if msg.startswith("change tracking: ") and ") synced" in msg:
        return "track_synced", msg
    if msg.startswith("restart ignored"):
        return "ignored", msg
    if o.get("level") in ("warn", "error"):
        return "problem", msg
    return "info", msg


def classify_kubectl(line):
    if "web-" in line:
        return "event", None
    return "other", line.strip()


def wait_consumer(c, pred, timeout, what):
    def p():
        c.check_alive(what)
        return pred()
    return wait_for(p, timeout, what)


# --------------------------------------------------------------------------------------------
# scenarios


def mem_sample(pid):
    s = proc_status(pid)
    return {"rss_kib": s["VmRSS"], "hwm_kib": s["VmHWM"], "anon_kib": s.get("RssAnon"),
            "file_kib": s.get("RssFile"), "threads": s.get("Threads")}


TRACKED_RESOURCES = 8  # the watches of krc's change tracking (src/track/track.c)


_TRACKS = {}


def knows_tracking(krc):
    """Whether this krc binary has change tracking (a build before issue 27 has no
    --track-changes: it is compared as it is, without tracking)."""
    if krc not in _TRACKS:
        out = subprocess.run([krc, "config", "keys"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout
        _TRACKS[krc] = "`trackChanges`" in out
    return _TRACKS[krc]


def start_krc(krc, server, outdir, tag, track=False):
    """krc without change tracking (the figures of the issues before 27), or with it
    (track: the server must serve the tracked resources, benchserver --replicasets)."""
    argv = [krc, "run", "--kubeconfig", server.kubeconfig, "--log-format", "json",
            "--ignore-restart-count", "1000000000", "--listen", "127.0.0.1:0",
            "--db", os.path.join(outdir, "krc-%s.db" % tag)]
    if knows_tracking(krc):
        argv += ["--track-changes", "true" if track else "false"]
    elif track:
        raise BenchError("%s has no change tracking (--track-changes): a build before issue 27"
                         % krc)
    return Consumer(argv, "stderr", os.path.join(outdir, "krc-%s.log" % tag), classify_krc)


def krc_sync(k, server, pods, expect_fallback, timeout):
    """Wait for the first 'tracking N pods'; return sync figures."""
    t0 = time.monotonic()
    wait_consumer(k, lambda: k.count("tracking") >= 1, timeout, "krc's initial pod sync")
    wall = time.monotonic() - t0
    cpu = proc_cpu(k.pid)
    m = mem_sample(k.pid)
    tracking = k.last_detail("tracking")
    if ("tracking %d pods" % pods) not in tracking:
        raise BenchError("krc synced but says %r, expected %d pods" % (tracking, pods))
    if expect_fallback and k.count("fallback") == 0:
        raise BenchError("krc did not fall back to paginated LIST after the 422")
    if not expect_fallback and k.count("fallback") != 0:
        raise BenchError("krc fell back to LIST although the streaming list was offered")
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "sync_message": k.last_detail("sync"),
            "peak_rss_kib": m["hwm_kib"], "rss_at_sync_kib": m["rss_kib"]}


def settle(pid, seconds=1.0):
    time.sleep(seconds)
    return mem_sample(pid)


def no_watches(server):
    """The previous consumer's watch must be gone before the next one starts."""
    wait_for(lambda: server.stats()["open_watches"] == 0, 30, "old watches to close")


def percentile(values, q):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


def krc_events(k, server, count, restart_every, timeout, prerender=True):
    """Stream events to krc's open watch and measure until every restart is diagnosed.

    The watch thread (krc-watch) parses every event and queues each restart; a worker logs
    "restart detected" when it takes one, collects (4 parallel GETs) and logs "restart
    diagnosed". So the last "restart detected" proves the watch thread handled all events, and
    CPU is read after the last "restart diagnosed" so the whole process's figure includes every
    collection. prerender: the server renders all events before writing (krc is the
    bottleneck); otherwise the Python server renders as it writes and krc often waits."""
    wait_consumer(k, lambda: server.stats()["open_watches"] >= 1, 30, "krc's watch")
    before = k.count("restart")
    before_diag = k.count("diagnosed")
    before_qfull = k.count("queue_full")
    before_problems = k.count("problem")
    reset_hwm(k.pid)
    mb0 = machine_busy()
    th0 = proc_thread_cpu(k.pid)
    u0, s0 = proc_cpu_split(k.pid)
    cpu0 = u0 + s0
    t0 = time.monotonic()
    r = server.call("/events?count=%d&restart_every=%d&prerender=%d"
                    % (count, restart_every, 1 if prerender else 0), "POST")
    if r["watches"] != 1:
        raise BenchError("expected one open watch, server has %d" % r["watches"])
    restarts = r["restart_events"]
    wait_consumer(k, lambda: k.count("restart") >= before + restarts, timeout,
                  "%d 'restart detected' lines from krc" % restarts)
    wall_detect = time.monotonic() - t0
    wait_consumer(k, lambda: k.count("diagnosed") >= before_diag + restarts, timeout,
                  "%d 'restart diagnosed' lines from krc" % restarts)
    wall = time.monotonic() - t0
    u1, s1 = proc_cpu_split(k.pid)
    th1 = proc_thread_cpu(k.pid)
    mb1 = machine_busy()
    cpu = u1 + s1 - cpu0
    threads = thread_cpu_delta(th0, th1, cpu)
    watch = threads["krc-watch"]
    peak = mem_sample(k.pid)["hwm_kib"]
    diag = k.details_since("diagnosed", before_diag)
    ms = [d[1] for d in diag if d[1] is not None]
    causes = {}
    for d in diag:
        causes[d[0]] = causes.get(d[0], 0) + 1
    return {"events": count, "restart_every": restart_every, "restarts": restarts,
            "restart_lines": k.count("restart") - before, "diagnosed_lines": len(diag),
            "producer": "prerendered" if prerender else "live",
            "cpu_s": round(cpu, 3), "user_s": round(u1 - u0, 3), "sys_s": round(s1 - s0, 3),
            "thread_cpu_s": threads,
            "wall_to_last_detected_s": round(wall_detect, 3), "wall_s": round(wall, 3),
            "events_per_cpu_s": round(count / cpu) if cpu > 0 else None,
            "events_per_watch_cpu_s": round(count / watch) if watch > 0 else None,
            "restarts_per_cpu_s": round(restarts / cpu, 1) if cpu > 0 else None,
            "worker_cpu_ms_per_restart": round(1000 * threads["krc-worker"] / restarts, 3)
            if restarts else None,
            "events_per_wall_s": round(count / wall_detect) if wall_detect > 0 else None,
            "peak_rss_kib": peak, "machine_busy_cpus": busy_cpus(mb0, mb1),
            "krc_busy_cpus": round(cpu / wall, 2) if wall > 0 else None,
            "collect_ms": {"median": percentile(ms, 0.5), "p90": percentile(ms, 0.9),
                           "max": max(ms) if ms else None},
            "causes": causes, "queue_full_warnings": k.count("queue_full") - before_qfull,
            "problems": k.count("problem") - before_problems}


def krc_relist(k, server, pods, timeout):
    """ERROR 410 on the open watch; peak RSS while krc relists."""
    wait_consumer(k, lambda: server.stats()["open_watches"] >= 1, 30, "krc's watch")
    n = k.count("tracking")
    restarts = k.count("restart")
    before = mem_sample(k.pid)
    reset_hwm(k.pid)
    t0 = time.monotonic()
    r = server.call("/expire", "POST")
    if r["watches"] != 1:
        raise BenchError("expected one open watch, server has %d" % r["watches"])
    wait_consumer(k, lambda: k.count("tracking") > n, timeout, "krc's relist")
    wall = time.monotonic() - t0
    peak = mem_sample(k.pid)["hwm_kib"]
    after = settle(k.pid)
    if ("tracking %d pods" % pods) not in k.last_detail("tracking"):
        raise BenchError("after the relist krc says %r" % k.last_detail("tracking"))
    return {"wall_s": round(wall, 3), "rss_before_kib": before["rss_kib"], "peak_rss_kib": peak,
            "rss_after_kib": after["rss_kib"],
            "spurious_restarts": k.count("restart") - restarts}


def track_sync(k, server, timeout):
    """With change tracking: wait until each tracked resource has synced (after the pods);
    the peak RSS so far covers both syncs."""
    t0 = time.monotonic()
    wait_consumer(k, lambda: k.count("track_synced") >= TRACKED_RESOURCES, timeout,
                  "krc's change tracking to sync its %d resources" % TRACKED_RESOURCES)
    m = mem_sample(k.pid)
    return {"wall_after_pods_s": round(time.monotonic() - t0, 3),
            "cpu_s": round(proc_cpu(k.pid), 3), "peak_rss_kib": m["hwm_kib"],
            "rss_kib": m["rss_kib"], "threads": m["threads"],
            "replicasets": server.stats()["replicasets"]}


def run_krc_streaming(krc, server, pods, events, storm_events, outdir, timeout, track=False,
                      tag=""):
    """tag: another database and log per run (a second run on the same database would find
    its restarts recorded already, as a restarted krc does, and diagnose none)."""
    server.call("/reset", "POST")
    server.call("/config?streaming=1", "POST")
    no_watches(server)
    k = start_krc(krc, server, outdir, "%d-streaming%s%s" % (pods, "-tracked" if track else "",
                                                             tag), track)
    try:
        res = {"path": "streaming list", "tracking": track}
        res["sync"] = krc_sync(k, server, pods, False, timeout)
        if track:
            res["track_sync"] = track_sync(k, server, timeout)
            res["sync"]["peak_rss_kib"] = res["track_sync"]["peak_rss_kib"]
        res["steady_after_sync"] = settle(k.pid)
        res["events"] = [krc_events(k, server, events, 100, timeout),
                         krc_events(k, server, events, 100, timeout, prerender=False)]
        res["steady_after_events"] = settle(k.pid)
        res["relist"] = krc_relist(k, server, pods, timeout)
        # last, so that memory left behind by a queue of thousands of restarts does not
        # flatter or spoil the steady-state and relist figures above
        res["storm"] = krc_events(k, server, storm_events, 1, timeout)
        res["steady_after_storm"] = settle(k.pid)
        res["problems"] = k.count("problem")
        return res
    finally:
        k.stop()


def run_krc_list(krc, server, pods, outdir, timeout):
    server.call("/reset", "POST")
    server.call("/config?streaming=0", "POST")
    no_watches(server)
    k = start_krc(krc, server, outdir, "%d-list" % pods)
    try:
        res = {"path": "paginated LIST (streaming list answered 422)"}
        res["sync"] = krc_sync(k, server, pods, True, timeout)
        res["steady_after_sync"] = settle(k.pid)
        res["relist"] = krc_relist(k, server, pods, timeout)
        res["problems"] = k.count("problem")
        return res
    finally:
        k.stop()
        server.call("/config?streaming=1", "POST")


def run_kubectl(kubectl, server, pods, events, output, outdir, timeout):
    server.call("/reset", "POST")
    argv = [kubectl, "--kubeconfig", server.kubeconfig, "get", "pods", "-A", "-w"]
    if output == "name":
        argv += ["-o", "name"]
    tag = "name" if output == "name" else "default"
    no_watches(server)
    c = Consumer(argv, "stdout", os.path.join(outdir, "kubectl-%d-%s.log" % (pods, tag)),
                 classify_kubectl)
    try:
        t0 = time.monotonic()
        wait_consumer(c, lambda: c.count("event") >= pods and server.stats()["open_watches"] >= 1,
                      timeout, "kubectl to print the pod list and start watching")
        list_wall = time.monotonic() - t0
        list_cpu = proc_cpu(c.pid)
        time.sleep(0.5)
        u0, s0 = proc_cpu_split(c.pid)
        cpu0 = u0 + s0
        t1 = time.monotonic()
        # the same stream as krc's "1 restart per 100 events, prerendered" phase
        r = server.call("/events?count=%d&restart_every=100&prerender=1" % events, "POST")
        if r["watches"] != 1:
            raise BenchError("expected one open watch, server has %d" % r["watches"])
        wait_consumer(c, lambda: c.count("event") >= pods + events, timeout,
                      "kubectl to print %d events" % events)
        u1, s1 = proc_cpu_split(c.pid)
        cpu = u1 + s1 - cpu0
        wall = time.monotonic() - t1
        m = mem_sample(c.pid)
        return {"argv": " ".join(argv[:1] + argv[3:]), "output": tag, "events": events,
                "list_wall_s": round(list_wall, 3), "list_cpu_s": round(list_cpu, 3),
                "cpu_s": round(cpu, 3), "user_s": round(u1 - u0, 3), "sys_s": round(s1 - s0, 3),
                "wall_s": round(wall, 3),
                "events_per_cpu_s": round(events / cpu) if cpu > 0 else None,
                "peak_rss_kib": m["hwm_kib"]}
    finally:
        c.stop()


# --------------------------------------------------------------------------------------------
# report


def rss_limit_mib(pods):
    if pods <= 10000:
        return 16
    if pods <= 150000:
        return 64
    return None


EVENT_TARGET = 25000


def verdicts(result):
    """(check, measured, target, ok) rows from the issue's acceptance targets; ok is None for
    informational rows (no target)."""
    rows = []
    for run in result["runs"]:
        n = run["pods"]
        lim = rss_limit_mib(n)
        s = run.get("streaming")
        lst = run.get("list")
        if s:
            steady = max(s["steady_after_sync"]["rss_kib"], s["steady_after_events"]["rss_kib"],
                         s["relist"]["rss_after_kib"])
            if lim:
                rows.append(("%d pods: steady RSS (streaming path)" % n, steady / 1024,
                             "<= %d MiB" % lim, steady <= lim * 1024))
                peak = max([s["sync"]["peak_rss_kib"], s["relist"]["peak_rss_kib"]] +
                           [e["peak_rss_kib"] for e in s["events"]])
                rows.append(("%d pods: peak RSS, sync/events/relist" % n, peak / 1024,
                             "<= %d MiB" % lim, peak <= lim * 1024))
            base = s["steady_after_sync"]["rss_kib"]
            rows.append(("%d pods: peak during streaming sync / steady" % n,
                         s["sync"]["peak_rss_kib"] / base, "<= 1.5x",
                         s["sync"]["peak_rss_kib"] <= 1.5 * base))
            rb = s["relist"]["rss_before_kib"]
            rows.append(("%d pods: peak during relist / RSS before" % n,
                         s["relist"]["peak_rss_kib"] / rb, "< 1.5x (no doubling)",
                         s["relist"]["peak_rss_kib"] < 1.5 * rb))
            for e in s["events"]:
                rows.append(("%d pods: events/CPU-s krc-watch, 1 restart/%d, %s" %
                             (n, e["restart_every"], e["producer"]), e["events_per_watch_cpu_s"],
                             ">= %d" % EVENT_TARGET,
                             (e["events_per_watch_cpu_s"] or 0) >= EVENT_TARGET))
            for e in s["events"]:
                rows.append(("%d pods: events/CPU-s whole krc, 1 restart/%d, %s" %
                             (n, e["restart_every"], e["producer"]), e["events_per_cpu_s"],
                             ">= %d" % EVENT_TARGET,
                             (e["events_per_cpu_s"] or 0) >= EVENT_TARGET))
            st = s.get("storm")
            if st:
                rows.append(("%d pods: storm: restarts diagnosed/CPU-s" % n,
                             st["restarts_per_cpu_s"], "(info)", None))
                rows.append(("%d pods: storm: events/CPU-s krc-watch" % n,
                             st["events_per_watch_cpu_s"], "(info)", None))
                if lim:
                    rows.append(("%d pods: storm: peak RSS" % n, st["peak_rss_kib"] / 1024,
                                 "(info; %d MiB budget)" % lim, None))
        if lst:
            base = lst["steady_after_sync"]["rss_kib"]
            if lim:
                rows.append(("%d pods: steady RSS (LIST path)" % n, base / 1024,
                             "<= %d MiB" % lim, base <= lim * 1024))
            rows.append(("%d pods: peak during LIST sync / steady" % n,
                         lst["sync"]["peak_rss_kib"] / base, "<= 1.5x",
                         lst["sync"]["peak_rss_kib"] <= 1.5 * base))
            rb = lst["relist"]["rss_before_kib"]
            rows.append(("%d pods: peak during LIST relist / RSS before" % n,
                         lst["relist"]["peak_rss_kib"] / rb, "< 1.5x (no doubling)",
                         lst["relist"]["peak_rss_kib"] < 1.5 * rb))
        for row in tracked_verdicts(run, lim):
            rows.append(row)
    for kc in result.get("kubectl", []):
        # same stream (1 restart per 100, prerendered); krc's whole process, all threads
        krc_rate = kc.get("krc_events_per_cpu_s")
        if krc_rate and kc["events_per_cpu_s"]:
            ratio = krc_rate / kc["events_per_cpu_s"]
            rows.append(("krc (whole) vs kubectl -w (%s), events/CPU-s" % kc["output"], ratio,
                         ">= 10x", ratio >= 10))
    return rows


def tracked_verdicts(run, lim):
    """Change tracking (issue 27): the tracked run's memory against the same budget, and the
    pod watch's events per CPU-second with tracking against without it, in the same run (the
    means of the pairs; each pair ran on the same server one after the other)."""
    rows = []
    pairs = run.get("pairs") or []
    if not pairs:
        return rows
    n, nrs = run["pods"], run["replicasets"]
    t = run["tracked"]
    peak = max([p["with"]["sync"]["peak_rss_kib"] for p in pairs] +
               [p["with"]["relist"]["peak_rss_kib"] for p in pairs] +
               [e["peak_rss_kib"] for p in pairs for e in p["with"]["events"]])
    steady = max(max(p["with"]["steady_after_sync"]["rss_kib"],
                     p["with"]["steady_after_events"]["rss_kib"]) for p in pairs)
    if lim:
        rows.append(("%d pods + %d RS tracked: peak RSS" % (n, nrs), peak / 1024,
                     "<= %d MiB" % lim, peak <= lim * 1024))
        rows.append(("%d pods + %d RS tracked: steady RSS" % (n, nrs), steady / 1024,
                     "<= %d MiB" % lim, steady <= lim * 1024))
    base_steady = sum(p["without"]["steady_after_sync"]["rss_kib"] for p in pairs) / len(pairs)
    with_steady = sum(p["with"]["steady_after_sync"]["rss_kib"] for p in pairs) / len(pairs)
    rows.append(("%d pods: tracking %d RS costs (steady after sync)" % (n, nrs),
                 (with_steady - base_steady) / 1024, "(info, MiB)", None))
    rows.append(("%d pods: tracking sync after the pods, s" % n,
                 t["track_sync"]["wall_after_pods_s"], "(info)", None))
    for i, producer in enumerate(("prerendered", "live")):
        w = [p["with"]["events"][i]["events_per_watch_cpu_s"] or 0 for p in pairs]
        b = [p["without"]["events"][i]["events_per_watch_cpu_s"] or 0 for p in pairs]
        mw, mb = sum(w) / len(w), sum(b) / len(b)
        rows.append(("%d pods: pod events/CPU-s krc-watch with/without tracking, %s"
                     % (n, producer), mw / mb if mb else None,
                     ">= 1.0 (means of %d pair%s)" % (len(pairs), "s" if len(pairs) > 1 else ""),
                     mb > 0 and mw >= mb))
    return rows


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.2f" % v if v < 100 else "%.0f" % v
    return str(v)


def print_report(result):
    print()
    print("%-8s %-10s %10s %10s %10s %10s %10s" % ("pods", "path", "sync s", "sync CPU",
                                                   "peak MiB", "steady MiB", "relist pk"))
    for run in result["runs"]:
        for key in ("streaming", "list", "tracked"):
            r = run.get(key)
            if not r:
                continue
            print("%-8d %-10s %10.2f %10.2f %10.2f %10.2f %10.2f" % (
                run["pods"], key, r["sync"]["wall_s"], r["sync"]["cpu_s"],
                r["sync"]["peak_rss_kib"] / 1024, r["steady_after_sync"]["rss_kib"] / 1024,
                r["relist"]["peak_rss_kib"] / 1024))
    print()
    print("CPU s: whole process (all threads); watch/worker: krc-watch and krc-worker threads")
    print("busy: CPUs busy machine-wide during the phase (krc + benchserver + anything else)")
    print("%-7s %-26s %7s %6s %7s %6s %7s %9s %9s %9s %8s %7s %5s" % (
        "pods", "consumer", "events", "rstrts", "CPU s", "watch", "worker", "ev/CPU-s",
        "ev/watchs", "rst/CPU-s", "coll ms", "pk MiB", "busy"))
    for run in result["runs"]:
        runs = [("krc", p[w]) for p in run.get("pairs") or [] for w in ("without", "with")] \
            or [("krc", run.get("streaming"))]
        for label, s in runs:
            if s and s.get("tracking"):
                label = "krc+track"
            phases = (s["events"] + ([s["storm"]] if s.get("storm") else [])) if s else []
            for e in phases:
                th = e["thread_cpu_s"]
                print("%-7d %-26s %7d %6d %7.2f %6.2f %7.2f %9s %9s %9s %8s %7.1f %5s" % (
                    run["pods"], "%s 1 rst/%d, %s" % (label, e["restart_every"],
                                                       e["producer"]),
                    e["events"], e["restarts"], e["cpu_s"], th["krc-watch"], th["krc-worker"],
                    fmt(e["events_per_cpu_s"]), fmt(e["events_per_watch_cpu_s"]),
                    fmt(e["restarts_per_cpu_s"]), fmt(e["collect_ms"]["median"]),
                    e["peak_rss_kib"] / 1024, fmt(e["machine_busy_cpus"])))
    for kc in result.get("kubectl", []):
        print("%-7d %-26s %7d %6s %7.2f %6s %7s %9s %9s %9s %8s %7.1f" % (
            kc["pods"], "kubectl -w (%s)" % kc["output"], kc["events"], "-", kc["cpu_s"],
            "-", "-", fmt(kc["events_per_cpu_s"]), "-", "-", "-",
            kc["peak_rss_kib"] / 1024))
    print()
    print("%-58s %12s %-22s %s" % ("target", "measured", "required", "result"))
    for name, val, target, ok in result["verdicts"]:
        print("%-58s %12s %-22s %s" % (name, fmt(val), target,
                                       "info" if ok is None else "PASS" if ok else "FAIL"))


def machine_info():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1])
    return {"nproc": os.cpu_count(), "cpu_model": model, "mem_total_kib": mem,
            "kernel": platform.release(), "python": platform.python_version()}


def find_kubectl(arg):
    if arg:
        return arg if os.access(arg, os.X_OK) else None
    # the gcloud dispatcher (/usr/bin/kubectl) calls /version and then runs kubectl.1.NN;
    # run the binary for the server's version (1.32) directly so its CPU time is measured
    for p in ("/usr/lib/google-cloud-sdk/bin/kubectl.1.32", shutil.which("kubectl") or ""):
        if p and os.access(p, os.X_OK):
            return p
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--krc", default=os.path.join(ROOT, "build-bench", "krc"),
                    help="krc binary, a Release build (default build-bench/krc)")
    ap.add_argument("--pods", type=int, nargs="+", default=[10000, 150000],
                    help="pod counts (default 10000 150000)")
    ap.add_argument("--events", type=int, default=100000,
                    help="watch events per krc phase (default 100000)")
    ap.add_argument("--storm-events", type=int, default=5000,
                    help="events of the phase where every event is a restart and krc collects "
                         "diagnostics for each (default 5000)")
    ap.add_argument("--kubectl-events", type=int, default=20000,
                    help="watch events for each kubectl run (default 20000)")
    ap.add_argument("--kubectl", default=None,
                    help="kubectl binary (default: /usr/lib/google-cloud-sdk/bin/kubectl.1.32)")
    ap.add_argument("--no-kubectl", action="store_true", help="skip the kubectl comparison")
    ap.add_argument("--no-list-path", action="store_true",
                    help="skip the paginated-LIST run (422 for the streaming list)")
    ap.add_argument("--pod-size", type=int, default=10240, help="bytes per pod (default 10240)")
    ap.add_argument("--replicasets", type=int, default=0,
                    help="also serve this many ReplicaSets (Deployments of 10 revisions, the "
                         "nodes) and run the streaming scenario again with change tracking on, "
                         "after the run without it, on the same server (default 0: only "
                         "without tracking)")
    ap.add_argument("--pairs", type=int, default=1,
                    help="with --replicasets: how many times to alternate the runs without "
                         "and with tracking (default 1)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 2000 pods, 20000 events, 1000 storm events, "
                         "2000 kubectl events")
    ap.add_argument("--out", default=os.path.join(HERE, "out"), help="result directory")
    ap.add_argument("--timeout", type=float, default=900, help="seconds allowed per step")
    a = ap.parse_args(argv)
    if a.quick:
        a.pods, a.events, a.storm_events, a.kubectl_events = [2000], 20000, 1000, 2000
    if min(a.pods) < 1 or a.events < 1 or a.storm_events < 1 or a.kubectl_events < 1:
        ap.error("--pods, --events, --storm-events and --kubectl-events must be >= 1")
    if not os.access(a.krc, os.X_OK):
        ap.error("krc binary %s not found: build it with cmake -S . -B build-bench "
                 "-DCMAKE_BUILD_TYPE=Release -DKRC_TESTS=OFF && cmake --build build-bench"
                 % a.krc)
    kubectl = None if a.no_kubectl else find_kubectl(a.kubectl)
    if not a.no_kubectl and kubectl is None:
        print("kubectl not found: skipping the kubectl comparison", file=sys.stderr)

    os.makedirs(a.out, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    workdir = tempfile.mkdtemp(prefix="krc-bench-")
    logdir = os.path.join(a.out, "logs-" + stamp)
    os.makedirs(logdir, exist_ok=True)
    result = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "machine": machine_info(), "krc": os.path.abspath(a.krc),
              "options": {"pods": a.pods, "events": a.events, "storm_events": a.storm_events,
                          "kubectl_events": a.kubectl_events, "pod_size": a.pod_size,
                          "quick": a.quick},
              "runs": [], "kubectl": []}
    rc = 0
    try:
        for i, pods in enumerate(a.pods):
            print("== %d pods" % pods, flush=True)
            srv = Server(pods, workdir, a.pod_size, os.path.join(logdir, "server-%d.log" % pods),
                         a.replicasets)
            try:
                run = {"pods": pods, "pod_bytes": srv.info["pod_bytes"],
                       "event_bytes": srv.info["event_bytes"],
                       "list_bytes": pods * (srv.info["pod_bytes"] + 1)}
                print("   krc, streaming list ...", flush=True)
                run["streaming"] = run_krc_streaming(a.krc, srv, pods, a.events,
                                                     a.storm_events, logdir, a.timeout)
                if a.replicasets > 0:
                    run["replicasets"] = a.replicasets
                    run["pairs"] = []
                    for k in range(a.pairs):
                        if k > 0:
                            print("   krc, streaming list, no tracking (pair %d) ..." % (k + 1),
                                  flush=True)
                            base = run_krc_streaming(a.krc, srv, pods, a.events,
                                                     a.storm_events, logdir, a.timeout,
                                                     tag="-pair%d" % (k + 1))
                        else:
                            base = run["streaming"]
                        print("   krc, streaming list, tracking %d ReplicaSets (pair %d) ..."
                              % (a.replicasets, k + 1), flush=True)
                        tracked = run_krc_streaming(a.krc, srv, pods, a.events,
                                                    a.storm_events, logdir, a.timeout,
                                                    track=True, tag="-pair%d" % (k + 1))
                        run["pairs"].append({"without": base, "with": tracked})
                    run["tracked"] = run["pairs"][-1]["with"]
                if not a.no_list_path:
                    print("   krc, paginated LIST ...", flush=True)
                    run["list"] = run_krc_list(a.krc, srv, pods, logdir, a.timeout)
                result["runs"].append(run)
                if kubectl and i == 0:
                    # whole krc process, "1 restart per 100, prerendered": the stream
                    # kubectl gets
                    krc_rate = run["streaming"]["events"][0]["events_per_cpu_s"]
                    for output in ("name", "default"):
                        print("   kubectl -w (%s output) ..." % output, flush=True)
                        kc = run_kubectl(kubectl, srv, pods, a.kubectl_events, output, logdir,
                                         a.timeout)
                        kc["pods"] = pods
                        kc["krc_events_per_cpu_s"] = krc_rate
                        result["kubectl"].append(kc)
                run["server_stats"] = srv.stats()
            finally:
                srv.stop()
    except BenchError as e:
        print("benchmark failed: %s (logs in %s)" % (e, logdir), file=sys.stderr)
        result["error"] = str(e)
        rc = 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result["verdicts"] = verdicts(result)
    result["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    path = os.path.join(a.out, "bench-%s.json" % stamp)
    for p in (path, os.path.join(a.out, "latest.json")):
        with open(p, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    print_report(result)
    print("\nresults: %s (logs: %s)" % (path, logdir))
    return rc


if __name__ == "__main__":
    sys.exit(main())
