#!/usr/bin/env python3
"""Issue 17's PostgreSQL benchmark: 1,000,000 recorded restarts, `krc history --since 1h`,
and a restart storm of 1,000 restarts per second. Nothing is asserted: it prints numbers for
docs/performance.md.

    pg_bench.py fill DIR [--bench B] [--api N] [--total M]
        records the newest N restarts (default 10,000) through the store API
        (bench_store_pg --fill: one transaction each, one per 3.6 s back from now), then
        bulk-loads the older M - N (default M 1,000,000) with INSERT ... SELECT
        generate_series on the server, copying the recorded rows' reports, messages and
        alert bodies, continuing the 3.6 s spacing; the alerts of all but the newest 10
        are marked delivered; then VACUUM ANALYZE (what autovacuum does to a settled table)
    pg_bench.py history DIR [--krc K] [--runs R]
        `krc history --db URL --db-password-file F --since 1h`, table and --format json,
        and with --cluster bench: process start to exit, median and worst of R (11) runs;
        EXPLAIN ANALYZE of the list query
    pg_bench.py storm DIR [--bench B] [--count N] [--conns 1,2,4] [--rate 1000]
        bench_store_pg --storm into the database `storm` of the same server (created on
        first use, so the 1,000,000-row history stays as it is): per connection count,
        unpaced (as fast as it goes) and paced at --rate restarts/s
    pg_bench.py incidents DIR [--bench B] [--total M] [--incidents K] [--changes C]
        issue 27: into the database `incidents` of the same server, bulk-loads M restarts
        (default 1,000,000, one per 2.6 s back from now) in K incidents (default 20,000) of
        M / K consecutive restarts each, and C changes (default 50,000), the shape
        bench_store --incidents records through the API; VACUUM ANALYZE; then
        bench_store_pg --incident-queries, and the record rate of 2,000 restarts with and
        without --incident on that store

DIR is a server from tests/tools/pg_server.py (`start DIR` or `start --durable DIR`); run the
long steps at `nice -n 10` on a shared machine.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "tools"))
import pg_server  # noqa: E402

SPACING = 3.6
CLUSTER = "bench"

# The older rows: restart g (N <= g < M) as bench_store_pg's restart g would be (pod g % 5000
# of namespace g % 40, detected g * 3.6 s before the newest), its report, message and alert
# body those of a recorded restart of the same variant (g % 8).
BULK_SQL = """
INSERT INTO restarts (cluster, pod_uid, container, restart_count, namespace, pod,
    workload_kind, workload_name, node, cause, exit_code, signal, reason, started_at,
    finished_at, detected_at, decision, summary, confidence, gpus, identity)
SELECT '{c}', 'bulk-uid-' || (g % 5000), 'app', g / 5000 + 1, 'ns-' || (g % 40),
    'web-' || (g % 5000) || '-' || (g % 3), 'Deployment',
    CASE WHEN g % 4 = 0 THEN 'cart' ELSE 'web' END, 'ip-10-0-12-34', t.cause, t.exit_code,
    t.signal, t.reason, n.now - d - 300, n.now - d - 1, n.now - d, 'alert', t.summary,
    t.confidence, 0,
    't' || (n.now - d - 1) || '/containerd://4f1b2c3d4e5f60718293a4b5c6d7e8f9/' || (g / 5000 + 1)
FROM generate_series({lo}, {hi}) g
CROSS JOIN LATERAL (SELECT floor(g * {s})::bigint + 1 AS d) dd
CROSS JOIN bench_now n
JOIN bench_tpl t ON t.v = g % 8;
INSERT INTO reports (restart_id, message, report_json)
SELECT r.id, t.message, t.report_json FROM restarts r
JOIN bench_tpl t ON t.v = (n_from_uid(r.pod_uid, r.restart_count)) % 8
WHERE r.cluster = '{c}' AND r.pod_uid LIKE 'bulk-%' AND r.id > {maxid};
INSERT INTO outbox (cluster, restart_id, kind, destination, thread_key, body, state, attempts,
    created_at, updated_at, delivered_at, message_ref)
SELECT '{c}', r.id, 'alert', 'webhook:default', r.namespace || '/' || r.pod, t.body,
    'delivered', 1, r.detected_at, r.detected_at + 1, r.detected_at + 1,
    '1796000000.' || lpad((r.id % 1000000)::text, 6, '0')
FROM restarts r JOIN bench_tpl t ON t.v = (n_from_uid(r.pod_uid, r.restart_count)) % 8
WHERE r.cluster = '{c}' AND r.pod_uid LIKE 'bulk-%' AND r.id > {maxid};
"""

SETUP_SQL = """
DROP TABLE IF EXISTS bench_tpl; DROP TABLE IF EXISTS bench_now;
CREATE TABLE bench_now AS SELECT max(detected_at) + 1 AS now FROM restarts
    WHERE cluster = '{c}' AND pod_uid LIKE 'fill-%';
CREATE TABLE bench_tpl AS SELECT DISTINCT ON (v) v, r.cause, r.exit_code, r.signal, r.reason,
    r.summary, r.confidence, p.message, p.report_json, o.body
FROM (SELECT (split_part(pod_uid, '-', 3)::int + (restart_count - 1) * 5000) % 8 AS v, *
      FROM restarts WHERE cluster = '{c}' AND pod_uid LIKE 'fill-%') r
JOIN reports p ON p.restart_id = r.id JOIN outbox o ON o.restart_id = r.id ORDER BY v, r.id;
CREATE OR REPLACE FUNCTION n_from_uid(uid TEXT, cnt INTEGER) RETURNS BIGINT LANGUAGE sql
    IMMUTABLE AS $$ SELECT split_part(uid, '-', 3)::bigint + (cnt - 1) * 5000 $$;
"""

CLEANUP_SQL = """
UPDATE outbox SET state = 'delivered', attempts = 1, delivered_at = created_at + 1,
    updated_at = created_at + 1, message_ref = '1796000000.' || lpad((id % 1000000)::text, 6, '0')
WHERE cluster = '{c}' AND state = 'pending'
    AND id NOT IN (SELECT id FROM outbox WHERE cluster = '{c}' ORDER BY id DESC LIMIT 10);
DROP TABLE bench_tpl; DROP TABLE bench_now; DROP FUNCTION n_from_uid(TEXT, INTEGER);
"""


def bench_env(srv, db_url=None):
    return dict(os.environ, KRC_BENCH_PG_URL=db_url or srv.url)


def run_bench(argv, env):
    print("$ " + " ".join(argv), flush=True)
    p = subprocess.run(argv, env=env, capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit("pg_bench.py: %s failed (exit %d)" % (argv[0], p.returncode))
    return p.stdout


def cmd_fill(srv, a):
    have = int(srv.query("SELECT count(*) FROM pg_tables WHERE tablename = 'restarts';"))
    if have and int(srv.query("SELECT count(*) FROM restarts;")) > 0:
        raise SystemExit("pg_bench.py: %s already holds restarts: fill an empty server" % srv.dir)
    run_bench([a.bench, "--password-file", srv.password_file, "--cluster", CLUSTER,
               "--fill", str(a.api), "--spacing", str(SPACING)], bench_env(srv))
    srv.query(SETUP_SQL.format(c=CLUSTER))
    t0 = time.monotonic()
    chunk = 100000
    for lo in range(a.api, a.total, chunk):
        hi = min(lo + chunk, a.total) - 1
        maxid = int(srv.query("SELECT max(id) FROM restarts;"))
        t1 = time.monotonic()
        srv.query(BULK_SQL.format(c=CLUSTER, lo=lo, hi=hi, s=SPACING, maxid=maxid))
        print("bulk: restarts %d..%d in %.1f s" % (lo, hi, time.monotonic() - t1), flush=True)
    srv.query(CLEANUP_SQL.format(c=CLUSTER))
    print("bulk: %d restarts in %.1f s" % (a.total - a.api, time.monotonic() - t0))
    t1 = time.monotonic()
    srv.query("VACUUM ANALYZE;")
    print("VACUUM ANALYZE: %.1f s" % (time.monotonic() - t1))
    print(srv.query("SELECT count(*) || ' restarts, ' || (SELECT count(*) FROM outbox) || "
                    "' alerts, ' || pg_size_pretty(pg_database_size('krc')) || ', '"
                    " || (SELECT count(*) FROM restarts WHERE detected_at >= "
                    "extract(epoch FROM now())::bigint - 3600) || ' in the last hour' "
                    "FROM restarts;").strip())


def time_cmd(argv, runs):
    times = []
    out = ""
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(argv, capture_output=True, text=True)
        times.append((time.perf_counter() - t0) * 1000.0)
        if p.returncode != 0:
            raise SystemExit("pg_bench.py: %s: exit %d: %s" % (" ".join(argv), p.returncode,
                                                               p.stderr.strip()))
        out = p.stdout
    return statistics.median(times), max(times), out


def cmd_history(srv, a):
    base = [a.krc, "history", "--db", srv.url, "--db-password-file", srv.password_file,
            "--since", "1h"]
    print("load average before: %s" % open("/proc/loadavg").read().split()[:3])
    for extra in ([], ["--format", "json"], ["--cluster", CLUSTER],
                  ["--cluster", CLUSTER, "--format", "json"]):
        med, worst, out = time_cmd(base + extra, a.runs)
        lines = out.count("\n")
        print("krc history --since 1h %s: median %.1f ms, worst %.1f ms of %d runs "
              "(%d bytes, %d lines of output)" % (" ".join(extra), med, worst, a.runs,
                                                  len(out), lines), flush=True)
    print("load average after: %s" % open("/proc/loadavg").read().split()[:3])
    plan = srv.query(
        "EXPLAIN (ANALYZE, BUFFERS) SELECT r.id, r.detected_at FROM restarts r "
        "WHERE r.detected_at >= extract(epoch FROM now())::bigint - 3600 "
        "ORDER BY r.detected_at DESC, r.id DESC LIMIT 50;")
    print("EXPLAIN ANALYZE (every cluster, the filter and order of the list):\n" + plan)


def cmd_storm(srv, a):
    if not srv.query("SELECT 1 FROM pg_database WHERE datname = 'storm';", db="postgres"):
        srv.create_database("storm")
    url = srv.url.rsplit("/", 1)[0] + "/storm"
    settings = srv.query("SELECT name || '=' || setting FROM pg_settings WHERE name IN "
                         "('fsync', 'synchronous_commit', 'wal_sync_method', "
                         "'shared_buffers') ORDER BY name;").split()
    print("server: " + ", ".join(settings))
    print("load average before: %s" % open("/proc/loadavg").read().split()[:3])
    for conns in [int(c) for c in a.conns.split(",")]:
        for rate in (0, a.rate):
            run_bench([a.bench, "--password-file", srv.password_file, "--cluster",
                       "storm-%d" % conns, "--storm", str(a.count), "--conns", str(conns),
                       "--rate", str(rate)], bench_env(srv, url))
            print("load average: %s" % open("/proc/loadavg").read().split()[:3], flush=True)


# Issue 27's store: restarts g = 0..M-1 in incident k = g / P (P = M / K) of workload
# w = k * 7919 % 2000 (web-w in ns-(w % 40) on ip-10-0-(w % 500)), the first of each with a
# report and a delivered alert (the repeats muted, with a short report); the newest 50
# incidents open, the others ended 10 min after their last restart. Changes: object o = c %
# 2500 (workloads 0..1999, then nodes 0..499), revision c / 2500 + 1, spread over 30 days.
INCIDENTS_SQL = """
CREATE TEMP TABLE bn AS SELECT extract(epoch FROM now())::bigint AS now, {m}::bigint AS m,
    {p}::bigint AS p, {k}::bigint AS k;
INSERT INTO restarts (id, cluster, pod_uid, container, restart_count, namespace, pod,
    workload_kind, workload_name, node, cause, exit_code, signal, reason, started_at,
    finished_at, detected_at, decision, summary, confidence, gpus, identity, incident_id)
SELECT g + 1, '{c}', 'uid-' || w || '-' || (g % p / 10), 'app', g % 10 + 1, 'ns-' || (w % 40),
    'web-' || w || '-' || (g % p / 10), 'Deployment', 'web-' || w, 'ip-10-0-' || (w % 500),
    CASE WHEN g / p % 3 = 0 THEN 'app_error' ELSE 'oom_killed' END, 137, 9, 'OOMKilled', 0,
    det - 1, det, CASE WHEN g % p = 0 THEN 'alert' ELSE 'muted' END,
    'container app was OOM-killed (limit 512Mi)', 'high', 0, 't' || (det - 1) || '/c/' || g,
    g / p + 1
FROM bn, generate_series(0, {m} - 1) g,
    LATERAL (SELECT g / bn.p * 7919 % 2000 AS w, bn.now - (bn.m - g) * 26 / 10 AS det) x;
INSERT INTO reports (restart_id, message, report_json)
SELECT r.id, 'OOMKilled: shop/web container app', CASE WHEN r.decision = 'alert'
    THEN repeat('{{"version":1,"log":"x"}}', 280) ELSE '{{"version":1,"diagnosis":{{"cause":'
    || '"oom_killed","confidence":"high"}},"containers":[{{"name":"app","restart_count":7}}]}}'
    END FROM restarts r WHERE r.cluster = '{c}';
INSERT INTO outbox (cluster, restart_id, kind, destination, thread_key, body, state, attempts,
    created_at, updated_at, delivered_at, message_ref)
SELECT '{c}', r.id, 'alert', 'api:#ops', r.namespace || '/' || r.pod, repeat('x', 2000),
    'delivered', 1, r.detected_at, r.detected_at + 1, r.detected_at + 1, '1800000000.000100'
FROM restarts r WHERE r.cluster = '{c}' AND r.decision = 'alert';
INSERT INTO incidents (id, cluster, namespace, workload_kind, workload_name, container, cause,
    restarts, first_restart_id, latest_restart_id, first_at, last_at, ended_at, thread_key)
SELECT i + 1, '{c}', 'ns-' || (w % 40), 'Deployment', 'web-' || w, 'app',
    CASE WHEN i % 3 = 0 THEN 'app_error' ELSE 'oom_killed' END, p, i * p + 1, i * p + p,
    now - (m - i * p) * 26 / 10, now - (m - i * p - p + 1) * 26 / 10,
    CASE WHEN i < k - 50 THEN now - (m - i * p - p + 1) * 26 / 10 + 600 END,
    'ns-' || (w % 40) || '/web-' || w || '-0'
FROM bn, generate_series(0, {k} - 1) i, LATERAL (SELECT i * 7919 % 2000 AS w) x;
INSERT INTO changes (cluster, namespace, kind, name, revision, at, manager, summary,
    detail_json, recorded_at)
SELECT '{c}', CASE WHEN o < 2000 THEN 'ns-' || (o % 40) ELSE '' END,
    CASE WHEN o < 2000 THEN 'Deployment' ELSE 'Node' END,
    CASE WHEN o < 2000 THEN 'web-' || o ELSE 'ip-10-0-' || (o - 2000) END, (v + 1)::text,
    bn.now - 30 * 86400 + v * 30 * 86400 / ({ch} / 2500) + o % 3600,
    'kubectl-client-side-apply', 'image web:1.' || v || '.0 → web:1.' || v || '.1',
    '{{"kind":"Deployment","items":["image"]}}', bn.now
FROM bn, generate_series(0, {ch} - 1) c, LATERAL (SELECT c % 2500 AS o, c / 2500 AS v) x;
SELECT setval(pg_get_serial_sequence('restarts', 'id'), (SELECT max(id) FROM restarts));
SELECT setval(pg_get_serial_sequence('incidents', 'id'), (SELECT max(id) FROM incidents));
"""


def cmd_incidents(srv, a):
    if not srv.query("SELECT 1 FROM pg_database WHERE datname = 'incidents';", db="postgres"):
        srv.create_database("incidents")
    url = srv.url.rsplit("/", 1)[0] + "/incidents"
    env = bench_env(srv, url)
    base = [a.bench, "--password-file", srv.password_file, "--cluster", CLUSTER]
    # the schema, through the store (an empty store answers every query)
    run_bench(base + ["--incident-queries"], env)
    if int(srv.query("SELECT count(*) FROM restarts;", db="incidents")) > 0:
        raise SystemExit("pg_bench.py: the database incidents already holds restarts: drop it")
    t0 = time.monotonic()
    srv.query(INCIDENTS_SQL.format(c=CLUSTER, m=a.total, p=a.total // a.incidents,
                                   k=a.incidents, ch=a.changes), db="incidents")
    print("bulk: %d restarts, %d incidents, %d changes in %.1f s"
          % (a.total, a.incidents, a.changes, time.monotonic() - t0), flush=True)
    t0 = time.monotonic()
    srv.query("VACUUM ANALYZE;", db="incidents")
    print("VACUUM ANALYZE: %.1f s" % (time.monotonic() - t0))
    print(srv.query("SELECT pg_size_pretty(pg_database_size('incidents'));",
                    db="incidents").strip())
    print("load average before: %s" % open("/proc/loadavg").read().split()[:3])
    run_bench(base + ["--incident-queries"], env)
    for extra in ([], ["--incident"]):
        run_bench([a.bench, "--password-file", srv.password_file, "--cluster",
                   "rate" + ("-incident" if extra else ""), "--storm", "2000"] + extra, env)
    print("load average after: %s" % open("/proc/loadavg").read().split()[:3])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.join(here, "..", "build-rel")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=("fill", "history", "storm", "incidents"))
    ap.add_argument("dir")
    ap.add_argument("--bench", default=os.path.join(build, "bench", "bench_store_pg"))
    ap.add_argument("--krc", default=os.path.join(build, "krc"))
    ap.add_argument("--api", type=int, default=10000)
    ap.add_argument("--total", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--conns", default="1,2,4")
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--incidents", type=int, default=20000)
    ap.add_argument("--changes", type=int, default=50000)
    a = ap.parse_args()
    srv = pg_server.PgServer(a.dir)
    if not srv.running():
        raise SystemExit("pg_bench.py: no server running in %s: tests/tools/pg_server.py "
                         "start [--durable] %s" % (a.dir, a.dir))
    {"fill": cmd_fill, "history": cmd_history, "storm": cmd_storm,
     "incidents": cmd_incidents}[a.step](srv, a)


if __name__ == "__main__":
    main()
