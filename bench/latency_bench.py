#!/usr/bin/env python3
"""latency_bench: alert latency of krc under background watch churn, and the alert-storm check.

Targets (issue "Diagnostics collection, probable-cause analysis and Slack alerts"):
  latency  from a restart event written on the watch to the Slack POST arriving, with the pod's
           events, the node, the node's events and the previous log collected from a local API
           server streaming ~5,000 MODIFIED events/s of background churn: p99 <= 50 ms.
  storm    200 pods restarting within 10 s: at most 3 Slack messages in the first 60 s, no 429
           from Slack, every restart counted and recorded, at most 10 log fetches.

It starts bench/latency_server.py twice (an `api` process: TLS API server with the churn and
the restart injector; a `slack` process: webhook sink that timestamps every POST on arrival),
then `krc run --kubeconfig K --config C --log-format json`, waits for krc's sync, lets the
churn run, and schedules the measured restarts. Latency = CLOCK_MONOTONIC when the sink had
read the POST's body - CLOCK_MONOTONIC just after the server wrote the restart event's bytes to
the watch socket (both processes on this machine, one clock).

Latency run: each measured restart gets its own pod (restartCount 0 -> 1), pods are routed to
--webhooks webhooks round-robin (config routes), restarts are --interval seconds apart with
+-40 % jitter, so every webhook sees one message per webhooks*interval seconds (krc paces one
message per second per webhook: that pacing must not be measured), MUTE_SECONDS=0 and
stormThreshold=100000 (the storm guard must not group them). The first --warmup restarts open
krc's connections and are reported apart.

Storm run: one webhook, krc's default noise settings (muteSeconds 600, stormThreshold 5 in 30 s,
first summary after 10 s), 200 pods restarting evenly within 10 s; Slack messages, 429s and log
fetches are counted for 60 s after the first restart.

  python3 bench/latency_bench.py --quick             # smoke: 20 restarts, ~30 s
  python3 bench/latency_bench.py                     # 220 restarts under 5k events/s, ~2 min
  python3 bench/latency_bench.py --storm             # latency run, then the storm run
  python3 bench/latency_bench.py --storm-only

Results: a table on stdout, bench/out/latency-<time>.json; logs in bench/out/latency-<time>/.
Exit code 1 only when a step fails (a process dies, krc never syncs, alerts never arrive); a
missed target is printed as FAIL and does not change the exit code.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLK_TCK = os.sysconf("SC_CLK_TCK")
SERVER = os.path.join(HERE, "latency_server.py")


class BenchError(Exception):
    pass


def cpu_seconds(pid) -> float:
    """utime + stime of all threads of a process, from /proc/PID/stat."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine_busy_seconds() -> float:
    """CPU seconds all processes of the machine spent busy (all cores), from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / CLK_TCK  # user..steal minus idle and iowait


def pct(sorted_vals, p):
    """Nearest-rank percentile of an ascending list."""
    if not sorted_vals:
        return float("nan")
    k = max(0, min(len(sorted_vals) - 1, int(-(-p * len(sorted_vals) // 100)) - 1))
    return sorted_vals[k]


def http_json(url, data=None, timeout=10):
    req = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def wait_file(path, proc, what, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
        if proc.poll() is not None:
            raise BenchError("%s exited with %d before it was ready" % (what, proc.returncode))
        time.sleep(0.1)
    raise BenchError("%s not ready after %ds" % (what, timeout))


class KrcLog:
    """krc's JSON log lines, read incrementally."""

    def __init__(self, path):
        self.path = path
        self.pos = 0
        self.lines = []

    def poll(self):
        with open(self.path, "rb") as f:
            f.seek(self.pos)
            data = f.read()
        end = data.rfind(b"\n") + 1
        self.pos += end
        for raw in data[:end].splitlines():
            try:
                self.lines.append(json.loads(raw))
            except ValueError:
                self.lines.append({"msg": raw.decode("utf-8", "replace")})
        return self.lines

    def find(self, pred):
        return [x for x in self.poll() if pred(x)]


def msg_of(x):
    return x.get("msg") or x.get("message") or ""


def ts_ns(x):
    """The wall-clock time of a krc JSON log line (ms resolution) in ns, or None."""
    t = x.get("ts") or x.get("time")
    if not t:
        return None
    # 2026-12-02T17:30:38.321Z
    try:
        base = time.strptime(t[:19], "%Y-%m-%dT%H:%M:%S")
        import calendar
        ms = int(t[20:23]) if len(t) > 20 and t[19] == "." else 0
        return (calendar.timegm(base) * 1000 + ms) * 1000000
    except (ValueError, IndexError):
        return None


class Run:
    """One set of processes: api server, slack sink, krc."""

    def __init__(self, a, name, api_args, config_yaml, env_extra):
        self.a = a
        self.dir = os.path.join(a.out_dir, name)
        os.makedirs(self.dir, exist_ok=True)
        self.procs = []
        self.slack = self.start([sys.executable, SERVER, "slack", "--state-dir",
                                 os.path.join(self.dir, "slack")], "slack.log")
        self.api = self.start([sys.executable, SERVER, "api", "--state-dir",
                               os.path.join(self.dir, "api")] + api_args, "api.log")
        sready = wait_file(os.path.join(self.dir, "slack", "ready.json"), self.slack,
                           "slack sink", 30)
        aready = wait_file(os.path.join(self.dir, "api", "ready.json"), self.api,
                           "api server", 120)
        self.slack_url = "http://127.0.0.1:%d" % sready["port"]
        self.admin = "http://127.0.0.1:%d" % aready["admin_port"]
        cfg = os.path.join(self.dir, "krc.yaml")
        with open(cfg, "w") as f:
            f.write(config_yaml.replace("@SLACK@", self.slack_url))
        env = dict(os.environ)
        for k in list(env):
            if k.startswith(("SLACK_", "KRC_", "MUTE_", "IGNORE", "WATCHED_", "IGNORED_")):
                del env[k]
        env.update({k: v.replace("@SLACK@", self.slack_url) for k, v in env_extra.items()})
        self.krc_log_path = os.path.join(self.dir, "krc.log")
        self.krc = self.start([a.krc, "run", "--kubeconfig",
                               os.path.join(self.dir, "api", "kubeconfig"), "--config", cfg,
                               "--log-format", "json", "--listen", "127.0.0.1:0",
                               "--db", os.path.join(self.dir, "krc.db")],
                              "krc.log", env=env, stderr_same=True)
        self.log = KrcLog(self.krc_log_path)

    def start(self, argv, logname, env=None, stderr_same=False):
        f = open(os.path.join(self.dir, logname), "wb")
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT if stderr_same else f,
                             env=env, stdin=subprocess.DEVNULL)
        self.procs.append(p)
        return p

    def check_alive(self):
        for p in self.procs:
            if p.poll() is not None:
                raise BenchError("%s exited with %d (logs in %s)" % (p.args[2] if p.args[0] ==
                                 sys.executable else p.args[0], p.returncode, self.dir))

    def wait_sync(self, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            if self.log.find(lambda x: "sync complete" in msg_of(x)):
                return
            time.sleep(0.2)
        raise BenchError("krc did not sync within %ds (log %s)" % (timeout, self.krc_log_path))

    def stats(self):
        return http_json(self.admin + "/stats")

    def posts(self):
        return http_json(self.slack_url + "/_posts")

    def schedule(self, restarts):
        return http_json(self.admin + "/schedule",
                         json.dumps({"restarts": restarts}).encode())

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


# --------------------------------------------------------------------------------------------
# latency


def latency_config(webhooks):
    lines = ["muteSeconds: 0", "stormThreshold: 100000", "routes:"]
    for k in range(webhooks):
        lines += ["  - namespace: bench-lat", "    pod: lat%d-" % k,
                  "    webhookUrl: \"@SLACK@/services/T0BENCH/B0LAT%d/benchsecret%d\"" % (k, k)]
    return "\n".join(lines) + "\n"


def run_latency(a):
    n_total = a.warmup + a.restarts
    r = Run(a, "latency", ["--rate", str(a.rate), "--churn-pods", str(a.churn_pods),
                           "--measured-pods", str(n_total), "--webhooks", str(a.webhooks),
                           "--pod-size", str(a.pod_size)],
            latency_config(a.webhooks), {})
    try:
        r.wait_sync()
        print("krc synced; churn at %d events/s for %.0f s before the first restart"
              % (a.rate, a.settle), flush=True)
        time.sleep(a.settle)
        rng = random.Random(a.seed)
        names = ["lat%d-%04d" % (j % a.webhooks, j) for j in range(n_total)]
        # warm-up restarts: open krc's connections
        r.schedule([{"pod": names[j], "delay_s": 0.05 + j * a.interval}
                    for j in range(a.warmup)])
        wait_posts(r, set(names[:a.warmup]), a.warmup * a.interval + 15)
        time.sleep(1.2)  # let every webhook's pacing slot expire
        st0 = r.stats()
        cpu0, srv0, t0 = cpu_seconds(r.krc.pid), cpu_seconds(r.api.pid), time.monotonic()
        snk0, all0 = cpu_seconds(r.slack.pid), machine_busy_seconds()
        delays = []
        for j in range(a.restarts):
            jitter = rng.uniform(-0.4, 0.4) * a.interval
            delays.append(0.1 + j * a.interval + jitter)
        measured = names[a.warmup:]
        r.schedule([{"pod": n, "delay_s": d} for n, d in zip(measured, delays)])
        posts = wait_posts(r, set(measured), max(delays) + 20)
        cpu1, srv1, t1 = cpu_seconds(r.krc.pid), cpu_seconds(r.api.pid), time.monotonic()
        snk1, all1 = cpu_seconds(r.slack.pid), machine_busy_seconds()
        st1 = r.stats()
        inj = {x["pod"]: x for x in http_json(r.admin + "/injections")}
        r.check_alive()
        return analyse_latency(a, r, inj, posts, names, st0, st1,
                               {"krc_cpu_s": cpu1 - cpu0, "server_cpu_s": srv1 - srv0,
                                "wall_s": t1 - t0, "t0": t0, "t1": t1,
                                "other_cpu_s": (all1 - all0) - (cpu1 - cpu0) - (srv1 - srv0)
                                - (snk1 - snk0)})
    finally:
        r.stop()


def wait_posts(r, want, timeout):
    deadline = time.monotonic() + timeout
    while True:
        posts = r.posts()
        got = {p["pods"][0] for p in posts if p["pods"] and p["status"] == 200}
        if want <= got:
            return posts
        if time.monotonic() > deadline:
            missing = sorted(want - got)
            raise BenchError("%d alerts never arrived (e.g. %s); logs in %s"
                             % (len(missing), ", ".join(missing[:5]), r.dir))
        r.check_alive()
        time.sleep(0.25)


def analyse_latency(a, r, inj, posts, names, st0, st1, cpu):
    by_pod = {}
    for p in posts:
        if p["pods"] and p["status"] == 200:
            by_pod.setdefault(p["pods"][0], p)
    lines = r.log.poll()
    detected = {x.get("pod"): x for x in lines if msg_of(x) == "restart detected"}
    diagnosed = {x.get("pod"): x for x in lines if msg_of(x) == "restart diagnosed"}

    def series(pods):
        lat, det, coll, post = [], [], [], []
        for n in pods:
            i, p = inj[n], by_pod[n]
            lat.append((p["mono_ns"] - i["write_mono_ns"]) / 1e6)
            d, g = detected.get(n), diagnosed.get(n)
            if d is not None and ts_ns(d) is not None:
                det.append((ts_ns(d) - i["write_wall_ns"]) / 1e6)
            if g is not None:
                coll.append(float(g.get("collect_ms", "nan")))
                if ts_ns(g) is not None:
                    post.append((p["wall_ns"] - ts_ns(g)) / 1e6)
        return lat, det, coll, post

    warm = names[:a.warmup]
    measured = names[a.warmup:]
    lat, det, coll, post = series(measured)
    wlat = series(warm)[0]
    s = sorted(lat)
    # the churn achieved while the measured restarts ran (whole seconds only)
    sec0, sec1 = int(cpu["t0"]) + 1, int(cpu["t1"]) - 1
    per_sec = [c for sec, c in st1["per_second"] if sec0 <= sec <= sec1]
    churn = st1["churn_events"] - st0["churn_events"]
    hooks = {}
    gaps = []
    for p in sorted(posts, key=lambda x: x["mono_ns"]):
        if p["path"] in hooks:
            gaps.append((p["mono_ns"] - hooks[p["path"]]) / 1e6)
        hooks[p["path"]] = p["mono_ns"]
    res = {
        "restarts": len(lat), "warmup": len(wlat),
        "latency_ms": {"p50": pct(s, 50), "p90": pct(s, 90), "p99": pct(s, 99), "max": s[-1],
                       "min": s[0], "mean": sum(s) / len(s)},
        "warmup_latency_ms": sorted(wlat),
        "breakdown_ms": {
            "write_to_detected": summary(det), "collect_ms": summary(coll),
            "diagnosed_to_post": summary(post)},
        "slowest": sorted(({"pod": n, "ms": round(v, 2)} for n, v in zip(measured, lat)),
                          key=lambda x: -x["ms"])[:10],
        "churn": {"target": a.rate, "events": churn, "wall_s": cpu["wall_s"],
                  "avg_per_s": churn / cpu["wall_s"], "min_per_s": min(per_sec or [0]),
                  "max_per_s": max(per_sec or [0]), "whole_seconds": len(per_sec),
                  "mb_per_s": (st1["bytes_sent"] - st0["bytes_sent"]) / cpu["wall_s"] / 1e6,
                  "behind_schedule_skips": st1["behind_schedule_skips"],
                  "watch_requests": st1["watch_requests"]},
        "krc_cpu_pct_of_one_core": 100 * cpu["krc_cpu_s"] / cpu["wall_s"],
        "server_cpu_pct_of_one_core": 100 * cpu["server_cpu_s"] / cpu["wall_s"],
        "other_processes_cpu_pct_of_one_core": 100 * cpu["other_cpu_s"] / cpu["wall_s"],
        "server_serve_ms": st1["serve_ms"],
        "fetches": st1["fetches"],
        "min_gap_same_webhook_ms": min(gaps) if gaps else None,
        "slack_429": sum(1 for p in posts if p["status"] == 429),
        "target_p99_ms": 50.0,
    }
    res["pass"] = res["latency_ms"]["p99"] <= 50.0
    res["churn_ok"] = (res["churn"]["avg_per_s"] >= 0.95 * a.rate and
                       res["churn"]["behind_schedule_skips"] == 0)
    return res


def summary(vals):
    s = sorted(v for v in vals if v == v)
    if not s:
        return {}
    return {"p50": pct(s, 50), "p90": pct(s, 90), "p99": pct(s, 99), "max": s[-1], "n": len(s)}


# --------------------------------------------------------------------------------------------
# storm


def run_storm(a):
    n = a.storm_pods
    r = Run(a, "storm", ["--rate", str(a.storm_rate), "--churn-pods", str(a.churn_pods),
                         "--measured-pods", str(n), "--measured-prefix", "storm",
                         "--webhooks", "1", "--pod-size", str(a.pod_size)],
            "{}\n", {"SLACK_WEBHOOK_URL": "@SLACK@/services/T0BENCH/B0STORM/benchsecret"})
    try:
        r.wait_sync()
        time.sleep(2.0)
        names = ["storm0-%04d" % j for j in range(n)]
        spread = a.storm_spread
        r.schedule([{"pod": nm, "delay_s": 0.1 + spread * j / n} for j, nm in enumerate(names)])
        time.sleep(0.1)
        t_first = None
        deadline = time.monotonic() + a.storm_window + spread + 10
        while time.monotonic() < deadline:
            r.check_alive()
            inj = http_json(r.admin + "/injections")
            if inj and t_first is None:
                t_first = min(x["write_mono_ns"] for x in inj)
            if t_first is not None and time.monotonic_ns() > t_first + a.storm_window * 1e9:
                break
            time.sleep(0.5)
        posts = r.posts()
        req = http_json(r.admin + "/requests")
        lines = r.log.poll()
        in_window = [p for p in posts if p["mono_ns"] - t_first <= a.storm_window * 1e9]
        detected = [x for x in lines if msg_of(x) == "restart detected"]
        diagnosed = [x for x in lines if msg_of(x) == "restart diagnosed"]
        decisions = {}
        for x in diagnosed:
            decisions[x.get("decision")] = decisions.get(x.get("decision"), 0) + 1
        summaries = [x for x in lines if "storm summary of" in msg_of(x)]
        summarized = 0
        for x in summaries:
            try:
                summarized += int(msg_of(x).split("storm summary of ")[1].split()[0])
            except (IndexError, ValueError):
                pass
        alerts = [x for x in lines if msg_of(x).startswith("alert for ") and "posted" in msg_of(x)]
        log_fetches = sum(v.get("log", 0) for k, v in req["by_pod"].items()
                          if k.startswith("storm"))
        res = {
            "pods": n, "spread_s": spread, "window_s": a.storm_window,
            "churn_rate": a.storm_rate,
            "slack_messages_in_window": len([p for p in in_window if p["status"] == 200]),
            "slack_429": sum(1 for p in posts if p["status"] == 429),
            "messages": [{"t_s": round((p["mono_ns"] - t_first) / 1e9, 2), "status": p["status"],
                          "text": p["text"][:120]} for p in posts],
            "restarts_detected": len({x.get("pod") for x in detected}),
            "restarts_diagnosed": len({x.get("pod") for x in diagnosed}),
            "decisions": decisions,
            "alerts_posted": len(alerts), "restarts_in_summaries": summarized,
            "log_fetches": log_fetches,
            "fetches": req["fetches"],
        }
        res["pass"] = (res["slack_messages_in_window"] <= 3 and res["slack_429"] == 0 and
                       res["restarts_detected"] == n and res["restarts_diagnosed"] == n and
                       res["log_fetches"] <= 10 and
                       res["alerts_posted"] + res["restarts_in_summaries"] == n)
        return res
    finally:
        r.stop()


# --------------------------------------------------------------------------------------------


def machine_info(krc):
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem = int(line.split()[1]) // 1024
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no",
                            "src", "include"], capture_output=True, text=True).stdout.strip()
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_mib": mem, "kernel": platform.release(),
            "python": platform.python_version(), "krc": krc,
            "git": rev + (" (with uncommitted changes in src/ or include/)" if dirty else "")}


def print_latency(res):
    L = res["latency_ms"]
    c = res["churn"]
    print("\nAlert latency (restart event written -> Slack POST received), %d restarts"
          % res["restarts"])
    print("  p50 %.1f ms  p90 %.1f ms  p99 %.1f ms  max %.1f ms  (min %.1f, mean %.1f)"
          % (L["p50"], L["p90"], L["p99"], L["max"], L["min"], L["mean"]))
    print("  target p99 <= 50 ms: %s" % ("PASS" if res["pass"] else "FAIL"))
    for k, v in res["breakdown_ms"].items():
        if v:
            print("  %-18s p50 %.1f  p90 %.1f  p99 %.1f  max %.1f ms (n=%d)"
                  % (k, v["p50"], v["p90"], v["p99"], v["max"], v["n"]))
    print("  warm-up restarts (not counted): %s ms"
          % ", ".join("%.1f" % x for x in res["warmup_latency_ms"]))
    print("  churn: target %d/s, achieved avg %.0f/s (whole seconds: min %d, max %d; %.1f MB/s)"
          " %s" % (c["target"], c["avg_per_s"], c["min_per_s"], c["max_per_s"], c["mb_per_s"],
                   "OK" if res["churn_ok"] else "BELOW TARGET"))
    print("  krc CPU %.0f%% of one core, server CPU %.0f%% (2 cores in all)"
          % (res["krc_cpu_pct_of_one_core"], res["server_cpu_pct_of_one_core"]))
    other = res["other_processes_cpu_pct_of_one_core"]
    print("  other processes on the machine: %.0f%% of one core%s" % (
        other, "  <-- WARNING: the machine was not idle; latencies include that interference"
        if other > 15 else ""))
    print("  server time per request (ms): %s" % ", ".join(
        "%s avg %.2f max %.2f" % (k, v["avg"], v["max"]) for k, v in res["server_serve_ms"].items()
        if k in ("pod_events", "node", "node_events", "log")))
    print("  Slack 429s: %d; smallest gap between POSTs to one webhook: %.0f ms"
          % (res["slack_429"], res["min_gap_same_webhook_ms"] or 0))


def print_storm(res):
    print("\nAlert storm: %d pods restarting within %.0f s (churn %d/s)"
          % (res["pods"], res["spread_s"], res["churn_rate"]))
    print("  Slack messages in the first %.0f s: %d (target <= 3); 429s: %d (target 0)"
          % (res["window_s"], res["slack_messages_in_window"], res["slack_429"]))
    for m in res["messages"]:
        print("    +%6.2f s  %d  %s" % (m["t_s"], m["status"], m["text"]))
    print("  restarts detected %d, diagnosed %d (%s); alerts posted %d + restarts in summaries %d"
          % (res["restarts_detected"], res["restarts_diagnosed"],
             ", ".join("%s %d" % kv for kv in sorted(res["decisions"].items())),
             res["alerts_posted"], res["restarts_in_summaries"]))
    print("  log fetches %d (target <= 10)" % res["log_fetches"])
    print("  storm target: %s" % ("PASS" if res["pass"] else "FAIL"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--krc", default=os.path.join(ROOT, "build-lat", "krc"),
                    help="krc binary (default build-lat/krc, a Release build)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke mode: 20 restarts, 300 churn pods, short settle")
    ap.add_argument("--restarts", type=int, default=220, help="measured restarts (default 220)")
    ap.add_argument("--warmup", type=int, default=10, help="unmeasured first restarts")
    ap.add_argument("--interval", type=float, default=0.3,
                    help="seconds between measured restarts (+-40%% jitter; default 0.3)")
    ap.add_argument("--webhooks", type=int, default=10, help="webhooks, round-robin (1..10)")
    ap.add_argument("--rate", type=int, default=5000, help="churn events/s (default 5000)")
    ap.add_argument("--churn-pods", type=int, default=1000)
    ap.add_argument("--pod-size", type=int, default=10240)
    ap.add_argument("--settle", type=float, default=5.0,
                    help="seconds of churn before the first restart")
    ap.add_argument("--storm", action="store_true", help="also run the storm benchmark")
    ap.add_argument("--storm-only", action="store_true")
    ap.add_argument("--storm-pods", type=int, default=200)
    ap.add_argument("--storm-spread", type=float, default=10.0)
    ap.add_argument("--storm-window", type=float, default=60.0)
    ap.add_argument("--storm-rate", type=int, default=5000, help="churn during the storm run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    a = ap.parse_args(argv)
    if a.quick:
        a.restarts, a.warmup, a.churn_pods, a.settle = 20, 3, 300, 2.0
        a.storm_window = 30.0
    if not (1 <= a.webhooks <= 10) or a.restarts < 1 or a.interval <= 0:
        ap.error("--webhooks 1..10, --restarts >= 1, --interval > 0")
    if not os.access(a.krc, os.X_OK):
        ap.error("%s is not an executable; build it: cmake -S . -B build-lat "
                 "-DCMAKE_BUILD_TYPE=Release -DKRC_TESTS=OFF && cmake --build build-lat -j2"
                 % a.krc)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    a.out_dir = os.path.join(a.out, "latency-" + stamp)
    os.makedirs(a.out_dir, exist_ok=True)
    result = {"machine": machine_info(a.krc), "args": {k: v for k, v in vars(a).items()},
              "started": stamp}
    print("machine: %(cpu)s, %(cores)d cores, %(mem_mib)d MiB, kernel %(kernel)s, "
          "Python %(python)s; krc %(krc)s at %(git)s" % result["machine"], flush=True)
    try:
        if not a.storm_only:
            result["latency"] = run_latency(a)
            print_latency(result["latency"])
        if a.storm or a.storm_only:
            result["storm"] = run_storm(a)
            print_storm(result["storm"])
    except BenchError as e:
        print("latency_bench: %s" % e, file=sys.stderr)
        result["error"] = str(e)
        return 1
    finally:
        path = os.path.join(a.out, "latency-%s.json" % stamp)
        with open(path, "w") as f:
            json.dump(result, f, indent=1)
        print("\nresults: %s; logs: %s" % (os.path.relpath(path), os.path.relpath(a.out_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
