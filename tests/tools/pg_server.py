#!/usr/bin/env python3
"""A throw-away PostgreSQL server for the tests (issue 17).

    pg_server.py start DIR        initdb into DIR/data (first time), start, print the URL
    pg_server.py start --durable DIR
                                  the same with fsync=on and synchronous_commit=on (a
                                  production server's settings; the default fsync=off is
                                  faster for the tests and loses data on a host crash;
                                  a running server keeps its settings: stop it first)
    pg_server.py stop DIR         stop it (the data stays: start DIR again resumes it)
    pg_server.py exec DIR -- CMD  run CMD with KRC_TEST_PG_URL=<DIR/url> and PGPASSWORD set
                                  from DIR/password (the password never goes into the URL)

or from Python: PgServer(dir).start() / .stop() / .url / .password_file.

The server listens on 127.0.0.1 on a free port (kept in DIR/port, so a restart comes back on
the same one) and on a unix socket in DIR. The role `krc` logs in over TCP with
scram-sha-256 and a random password (DIR/password, mode 0600); its database is `krc`.
DIR/url is postgres://krc@127.0.0.1:PORT/krc. initdb and pg_ctl refuse to run as root: as
root they run as the `postgres` system user (Debian's postgresql-common creates it), which
then owns DIR.
"""
import glob
import os
import pwd
import secrets
import socket
import subprocess
import sys

SUPERUSER = "postgres"


class PgError(Exception):
    pass


def _bindir():
    """The newest /usr/lib/postgresql/*/bin that has initdb and pg_ctl."""
    cands = []
    for d in glob.glob("/usr/lib/postgresql/*/bin"):
        ver = os.path.basename(os.path.dirname(d))
        if os.access(os.path.join(d, "initdb"), os.X_OK) and \
                os.access(os.path.join(d, "pg_ctl"), os.X_OK):
            try:
                cands.append((float(ver), d))
            except ValueError:
                continue
    if not cands:
        raise PgError("initdb not found under /usr/lib/postgresql/*/bin: install postgresql-15 "
                      "(scripts/setup-test does)")
    return sorted(cands)[-1][1]


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    def __init__(self, directory):
        self.dir = os.path.abspath(directory)
        self.data = os.path.join(self.dir, "data")
        self.password_file = os.path.join(self.dir, "password")
        self.url_file = os.path.join(self.dir, "url")
        self.port_file = os.path.join(self.dir, "port")
        self.log = os.path.join(self.dir, "server.log")
        self.bin = _bindir()
        self.as_postgres = os.geteuid() == 0

    # -- helpers --------------------------------------------------------------------
    def _run(self, argv, what, stdin=None):
        if self.as_postgres:
            argv = ["runuser", "-u", SUPERUSER, "--"] + argv
        p = subprocess.run(argv, input=stdin, capture_output=True, text=True)
        if p.returncode != 0:
            raise PgError("%s failed (exit %d): %s%s" % (what, p.returncode, p.stderr.strip(),
                                                         self._log_tail()))
        return p.stdout

    def _log_tail(self):
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()[-10:]
            return "\n--- %s ---\n%s" % (self.log, "\n".join(lines)) if lines else ""
        except OSError:
            return ""

    def _own(self, path):
        if self.as_postgres:
            pw = pwd.getpwnam(SUPERUSER)
            os.chown(path, pw.pw_uid, pw.pw_gid)

    @property
    def port(self):
        with open(self.port_file, encoding="ascii") as f:
            return int(f.read().strip())

    @property
    def url(self):
        with open(self.url_file, encoding="ascii") as f:
            return f.read().strip()

    def password(self):
        with open(self.password_file, encoding="ascii") as f:
            return f.readline().strip()

    def _psql(self, sql, db="postgres"):
        return self._run([os.path.join(self.bin, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
                          "-h", self.dir, "-p", str(self.port), "-U", SUPERUSER, "-d", db],
                         "psql", stdin=sql)

    def query(self, sql, db="krc"):
        """Run SQL as the superuser over the unix socket (tests: set-up and inspection);
        the rows as psql prints them unaligned, without headers."""
        return self._run([os.path.join(self.bin, "psql"), "-X", "-q", "-t", "-A", "-v",
                          "ON_ERROR_STOP=1", "-h", self.dir, "-p", str(self.port), "-U",
                          SUPERUSER, "-d", db], "psql", stdin=sql)

    def create_database(self, name, owner="krc"):
        """A new empty database owned by `owner`; its URL (no password in it)."""
        self.query('CREATE DATABASE "%s" OWNER %s;\n' % (name, owner), db="postgres")
        return self.url.rsplit("/", 1)[0] + "/" + name

    # -- life cycle -------------------------------------------------------------------
    def _init(self):
        if self.as_postgres:
            try:
                pwd.getpwnam(SUPERUSER)
            except KeyError:
                raise PgError("running as root and there is no `postgres` system user to run "
                              "initdb as: install postgresql-15 (scripts/setup-test does)")
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        os.chmod(self.dir, 0o700)
        self._own(self.dir)
        self._run([os.path.join(self.bin, "initdb"), "-D", self.data, "-U", SUPERUSER,
                   "-E", "UTF8", "--locale=C", "--auth-local=trust",
                   "--auth-host=scram-sha-256", "--no-sync"], "initdb")
        port = _free_port()
        with open(self.port_file, "w", encoding="ascii") as f:
            f.write("%d\n" % port)
        fd = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(secrets.token_hex(16) + "\n")
        with open(self.url_file, "w", encoding="ascii") as f:
            f.write("postgres://krc@127.0.0.1:%d/krc\n" % port)

    def initialized(self):
        return os.path.exists(os.path.join(self.data, "PG_VERSION"))

    def running(self):
        """pg_ctl status: a stale postmaster.pid (a killed server) is not running."""
        argv = [os.path.join(self.bin, "pg_ctl"), "-D", self.data, "status"]
        if self.as_postgres:
            argv = ["runuser", "-u", SUPERUSER, "--"] + argv
        return subprocess.run(argv, capture_output=True).returncode == 0

    def start(self, durable=False):
        fresh = not self.initialized()
        if fresh:
            self._init()
        sync = "fsync=on -c synchronous_commit=on" if durable else "fsync=off"
        if not self.running():
            self._run([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l", self.log, "-w",
                       "-t", "60", "-o",
                       "-p %d -k %s -c listen_addresses=127.0.0.1 -c %s "
                       "-c max_connections=60" % (self.port, self.dir, sync), "start"],
                      "pg_ctl start")
        if fresh:
            # the password goes to psql on stdin, never on a command line
            pw = self.password().replace("'", "''")
            self._psql("CREATE ROLE krc LOGIN PASSWORD '%s';\nCREATE DATABASE krc OWNER krc;\n"
                       % pw)
        return self

    def stop(self):
        if self.initialized() and self.running():
            self._run([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", "fast", "-w",
                       "stop"], "pg_ctl stop")


def main(argv):
    durable = len(argv) > 2 and argv[1] == "start" and argv[2] == "--durable"
    if durable:
        argv = argv[:2] + argv[3:]
    if len(argv) < 3 or argv[1] not in ("start", "stop", "exec"):
        sys.stderr.write("usage: pg_server.py start [--durable] DIR | stop DIR | "
                         "exec DIR -- CMD...\n")
        return 2
    try:
        srv = PgServer(argv[2])
        if argv[1] == "start":
            srv.start(durable=durable)
            print(srv.url)
        elif argv[1] == "stop":
            srv.stop()
        else:
            cmd = argv[3:]
            if cmd and cmd[0] == "--":
                cmd = cmd[1:]
            if not cmd:
                raise PgError("exec: no command given")
            if not os.path.exists(srv.url_file):
                raise PgError("%s: no url: run `pg_server.py start %s` first"
                              % (srv.url_file, argv[2]))
            env = dict(os.environ, KRC_TEST_PG_URL=srv.url, PGPASSWORD=srv.password(),
                       KRC_TEST_PG_DIR=srv.dir)
            os.execvpe(cmd[0], cmd, env)
    except (PgError, OSError) as e:
        sys.stderr.write("pg_server.py: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
