#!/usr/bin/env python3
"""The container image's build, checked without a Docker engine.

This test executes the Dockerfile itself: a small interpreter for the instructions the
Dockerfile uses (anything else fails the test) runs the build stage's RUN lines with
chroot in a debootstrapped Debian root prepared like debian:<suite>-slim, copies the
build context through .dockerignore as `docker build` would, assembles the final
stage's root file system from its COPY --from lines, and then starts the image's
ENTRYPOINT/CMD in that root as the image's USER, on a read-only root file system with
only the VOLUME writable (as a container runtime would):

  * `krc version`, `krc config check` (a good and a bad file), `krc config keys`;
  * `krc run` exactly as the image's ENTRYPOINT + CMD, in-cluster (service-account
    token and CA mounted at /var/run/secrets/kubernetes.io/serviceaccount) against
    tests/fakekube: /readyz, a restart detected and diagnosed, /metrics, exit 0 on
    SIGTERM, the history written to the volume and nothing else written;
  * `krc run --config ... --kubeconfig ...` reaching the API server by a host name
    from /etc/hosts (name service in the image) with TLS verified;
  * static checks that the Dockerfile and scripts/image-build stay in step (every RUN
    calls the script; the final COPY takes what the rootfs step made; USER, VOLUME,
    ENV KRC_DB, WORKDIR, EXPOSE, LABEL version agree with the binary and the build).

Needs root and HTTP access to deb.debian.org (or KRC_DEBIAN_MIRROR); without them it
fails, unless KRC_SKIP_IMAGE_TEST=1, which runs only the static checks.

    python3 tests/image/test_image.py [--keep]

Environment: KRC_IMAGE_ROOT_CACHE=DIR reuses (or creates) a pristine debootstrapped
root in DIR (for development; CI starts from nothing). KRC_IMAGE_WORKDIR=DIR puts the
scratch space there (default: a new directory under /tmp). --keep leaves the scratch
space (build root, image root, logs) in place.
"""

import ctypes
import errno
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "fakekube"))

SCRIPT_IN_REPO = "scripts/image-build"
DOCKER_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MIRROR = os.environ.get("KRC_DEBIAN_MIRROR", "http://deb.debian.org/debian")
T0 = time.monotonic()

# Warnings krc may log in the image runs (none: both runs have a Slack destination);
# any other warn or error line fails the test.
ALLOWED_WARNINGS = []


class TestFailure(Exception):
    pass


def log(msg):
    print("[%4.0fs] %s" % (time.monotonic() - T0, msg), flush=True)


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


# --------------------------------------------------------------------------------------
# Dockerfile and .dockerignore


class Instruction:
    def __init__(self, lineno, keyword, rest):
        self.lineno = lineno
        self.keyword = keyword
        self.rest = rest
        self.flags = {}
        self.args = None  # list for JSON (exec) form or split words

    def __repr__(self):
        return "line %d: %s %s" % (self.lineno, self.keyword, self.rest)


def parse_dockerfile(text):
    """Instructions with continuation lines joined and comments dropped."""
    out = []
    buf, start = "", None
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("#") or (not stripped and not buf):
            continue
        if start is None:
            start = n
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        buf += line
        words = buf.strip().split(None, 1)
        out.append(Instruction(start, words[0].upper(), words[1].strip() if len(words) > 1 else ""))
        buf, start = "", None
    check(not buf, "Dockerfile ends inside a continued line")
    for ins in out:
        rest = ins.rest
        while rest.startswith("--"):
            flag, _, rest = rest.partition(" ")
            name, _, value = flag[2:].partition("=")
            ins.flags[name] = value
            rest = rest.strip()
        ins.rest = rest
        if rest.startswith("["):
            try:
                ins.args = json.loads(rest)
            except ValueError as e:
                raise TestFailure("%r: bad JSON form: %s" % (ins, e))
            check(isinstance(ins.args, list) and all(isinstance(a, str) for a in ins.args),
                  "%r: JSON form must be a list of strings" % ins)
        else:
            ins.args = None
    return out


def substitute(text, variables):
    def rep(m):
        name = m.group(1) or m.group(2)
        check(name in variables, "Dockerfile uses undefined variable %s" % name)
        return variables[name]
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", rep, text)


def ignore_regex(pattern):
    """A .dockerignore pattern (Go filepath.Match plus **) as a regular expression."""
    out, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**", i):
            i += 2
            if pattern.startswith("/", i):
                out += "(?:.*/)?"
                i += 1
            else:
                out += ".*"
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[":
            j = pattern.index("]", i)
            out += pattern[i:j + 1]
            i = j
        elif c == "\\":
            i += 1
            out += re.escape(pattern[i])
        else:
            out += re.escape(c)
        i += 1
    return re.compile("^" + out + "$")


class DockerIgnore:
    """The matching of moby/patternmatcher: the last matching pattern wins; a pattern also
    matches a path whose leading directories (as many as the pattern has) match it."""

    def __init__(self, text):
        self.patterns = []
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            neg = line.startswith("!")
            p = os.path.normpath(line[1:].strip() if neg else line).lstrip("/")
            self.patterns.append((neg, p, ignore_regex(p), len(p.split("/"))))

    def excluded(self, rel):
        parts = rel.split("/")
        result = False
        for neg, _, rx, depth in self.patterns:
            hit = bool(rx.match(rel))
            if not hit and len(parts) > 1 and depth <= len(parts) - 1:
                hit = bool(rx.match("/".join(parts[:depth])))
            if hit:
                result = not neg
        return result

    def may_reinclude_under(self, rel):
        """Could an exception pattern re-include something below directory rel?"""
        for neg, p, _, _ in self.patterns:
            if not neg:
                continue
            lit = re.split(r"[*?\[\\]", p, 1)[0]
            if lit.startswith(rel + "/") or rel.startswith(lit.rstrip("/")) or lit == "":
                return True
        return False


def build_context(src, dest, ignore):
    """Copy the files of src that .dockerignore lets through into dest."""
    count = 0
    for dirpath, dirnames, filenames in os.walk(src):
        reldir = os.path.relpath(dirpath, src)
        reldir = "" if reldir == "." else reldir
        keep = []
        for d in dirnames:
            rel = os.path.join(reldir, d) if reldir else d
            full = os.path.join(dirpath, d)
            if os.path.islink(full):
                filenames.append(d)
                continue
            if ignore.excluded(rel) and not ignore.may_reinclude_under(rel):
                continue
            keep.append(d)
            if not ignore.excluded(rel):
                os.makedirs(os.path.join(dest, rel), exist_ok=True)
                shutil.copystat(full, os.path.join(dest, rel))
        dirnames[:] = keep
        for f in filenames:
            rel = os.path.join(reldir, f) if reldir else f
            if ignore.excluded(rel):
                continue
            target = os.path.join(dest, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            full = os.path.join(dirpath, f)
            if os.path.islink(full):
                os.symlink(os.readlink(full), target)
            else:
                shutil.copy2(full, target)
            count += 1
    return count


# --------------------------------------------------------------------------------------
# Static checks: the Dockerfile and the script stay in step


class Stage:
    def __init__(self, base, name):
        self.base = base
        self.name = name
        self.instructions = []


def stages_of(instructions):
    stages = []
    for ins in instructions:
        if ins.keyword == "FROM":
            words = ins.rest.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            check(len(words) in (1, 3), "%r: expected FROM IMAGE [AS NAME]" % ins)
            stages.append(Stage(words[0], name))
        else:
            check(stages or ins.keyword == "ARG", "%r: instruction before FROM" % ins)
            if stages:
                stages[-1].instructions.append(ins)
    return stages


def cmake_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        m = re.search(r"project\(krc\s+VERSION\s+([0-9.]+)", f.read())
    check(m, "no project(krc VERSION x) in CMakeLists.txt")
    return m.group(1)


def script_subcommands():
    with open(os.path.join(ROOT, SCRIPT_IN_REPO)) as f:
        text = f.read()
    return set(re.findall(r"^  ([a-z]+)\)", text, re.M))


def static_checks():
    """Returns a description of the plan the dynamic part executes."""
    with open(os.path.join(ROOT, "Dockerfile")) as f:
        instructions = parse_dockerfile(f.read())
    check(os.path.isfile(os.path.join(ROOT, ".dockerignore")), ".dockerignore is missing")
    stages = stages_of(instructions)
    check(len(stages) == 2, "expected two stages (build, runtime), found %d" % len(stages))
    build, final = stages
    # Every image a stage starts from is pinned by digest: a tag can be moved by whoever
    # controls it, a digest names the bytes (docs/image.md: how to update it).
    for st in stages:
        check(st.base == "scratch" or re.search(r"@sha256:[0-9a-f]{64}$", st.base),
              "FROM %s: pin the image by digest (IMAGE:TAG@sha256:<64 hex digits>, "
              "see docs/image.md)" % st.base)
    m = re.match(r"^debian:([a-z]+)-slim@sha256:[0-9a-f]{64}$", build.base)
    check(m, "build stage must be FROM debian:<suite>-slim@sha256:<digest>, not %s" % build.base)
    suite = m.group(1)
    check(build.name, "the build stage needs a name (FROM ... AS build)")
    check(final.base == "scratch", "the runtime stage must be FROM scratch, not %s" % final.base)

    allowed_build = {"COPY", "RUN", "ARG", "ENV", "WORKDIR"}
    script_path = None
    runs = {}
    for ins in build.instructions:
        check(ins.keyword in allowed_build,
              "%r: instruction not understood by this test (teach tests/image/test_image.py)" % ins)
        if ins.keyword == "COPY":
            check(set(ins.flags) <= {"chmod", "link"}, "%r: unsupported COPY flags" % ins)
            words = ins.args if ins.args is not None else ins.rest.split()
            if words[:-1] == [SCRIPT_IN_REPO]:
                script_path = words[-1]
        if ins.keyword == "RUN":
            check(ins.args is not None, "%r: RUN must use the exec form [\"%s\", ...]"
                  % (ins, "/path/to/image-build"))
            check(script_path is not None and ins.args[0] == script_path,
                  "%r: every RUN must call %s (COPY it first); it calls %s"
                  % (ins, SCRIPT_IN_REPO, ins.args[0]))
            sub = ins.args[1] if len(ins.args) > 1 else ""
            check(sub in script_subcommands(), "%r: %s has no subcommand %r"
                  % (ins, SCRIPT_IN_REPO, sub))
            check(sub not in runs, "%r: %s runs twice" % (ins, sub))
            runs[sub] = ins.args
    for sub in ("deps", "build", "rootfs"):
        check(sub in runs, "the build stage never runs `image-build %s`" % sub)
    check(len(runs["rootfs"]) == 5, "RUN image-build rootfs SRC OUT DEST expected")
    check(runs["rootfs"][3] == runs["build"][3],
          "rootfs must take the build's output directory %s, not %s"
          % (runs["build"][3], runs["rootfs"][3]))
    rootfs_dir = runs["rootfs"][4]

    allowed_final = {"COPY", "ARG", "ENV", "LABEL", "USER", "WORKDIR", "VOLUME", "EXPOSE",
                     "ENTRYPOINT", "CMD"}
    copies = []
    meta = {"env": {}, "labels": {}, "args": {}, "user": None, "workdir": "/", "volumes": [],
            "expose": [], "entrypoint": None, "cmd": None}
    for ins in final.instructions:
        check(ins.keyword in allowed_final,
              "%r: instruction not understood by this test (teach tests/image/test_image.py)" % ins)
        variables = dict(meta["args"], **meta["env"])
        if ins.keyword == "COPY":
            check(ins.flags.get("from") == build.name and set(ins.flags) == {"from"},
                  "%r: the runtime stage copies only from stage %s, without --chown"
                  % (ins, build.name))
            words = ins.args if ins.args is not None else ins.rest.split()
            check(len(words) == 2, "%r: COPY SRC DEST expected" % ins)
            copies.append((words[0], words[1]))
        elif ins.keyword == "ARG":
            name, _, default = ins.rest.partition("=")
            meta["args"][name] = default.strip('"')
        elif ins.keyword == "ENV":
            for item in shlex.split(substitute(ins.rest, variables)):
                k, eq, v = item.partition("=")
                check(eq, "%r: use ENV KEY=VALUE" % ins)
                meta["env"][k] = v
        elif ins.keyword == "LABEL":
            for item in shlex.split(substitute(ins.rest, variables)):
                k, eq, v = item.partition("=")
                check(eq, "%r: use LABEL key=value" % ins)
                meta["labels"][k] = v
        elif ins.keyword == "USER":
            meta["user"] = substitute(ins.rest, variables)
        elif ins.keyword == "WORKDIR":
            meta["workdir"] = substitute(ins.rest, variables)
        elif ins.keyword == "VOLUME":
            meta["volumes"] += ins.args if ins.args is not None else ins.rest.split()
        elif ins.keyword == "EXPOSE":
            meta["expose"] += ins.rest.split()
        elif ins.keyword in ("ENTRYPOINT", "CMD"):
            check(ins.args is not None, "%r: use the exec (JSON) form" % ins)
            meta[ins.keyword.lower()] = ins.args
    check(copies, "the runtime stage copies nothing from %s" % build.name)
    check(copies[0][0].rstrip("/") == rootfs_dir.rstrip("/") and copies[0][1] == "/",
          "the runtime stage must COPY --from=%s %s/ / (what `image-build rootfs` made), "
          "not %s %s" % (build.name, rootfs_dir, copies[0][0], copies[0][1]))
    check(len(copies) == 1, "the runtime stage must take only the rootfs step's output")
    user = meta["user"] or ""
    check(re.match(r"^[1-9][0-9]*:[1-9][0-9]*$", user),
          "USER must be a numeric non-root uid:gid, not %r" % user)
    check(meta["entrypoint"] and meta["entrypoint"][0].startswith("/"),
          "ENTRYPOINT must be an absolute exec form")
    check(meta["cmd"] == ["run"], "CMD must be [\"run\"], not %r" % meta["cmd"])
    check(len(meta["volumes"]) == 1, "exactly one VOLUME (the history database) expected")
    db = meta["env"].get("KRC_DB", "")
    check(os.path.dirname(db) == meta["volumes"][0],
          "ENV KRC_DB (%s) must lie in the VOLUME %s" % (db, meta["volumes"][0]))
    check(meta["workdir"] == meta["volumes"][0],
          "WORKDIR must be the volume (SQLite's last-resort temporary directory is the "
          "working directory on a read-only root), not %s" % meta["workdir"])
    version = cmake_version()
    check(meta["labels"].get("org.opencontainers.image.version") == version,
          "LABEL org.opencontainers.image.version is %r, CMakeLists.txt says %s"
          % (meta["labels"].get("org.opencontainers.image.version"), version))
    for key in ("org.opencontainers.image.title", "org.opencontainers.image.licenses"):
        check(key in meta["labels"], "LABEL %s missing" % key)
    check(len(meta["expose"]) == 1, "one EXPOSE (the health and metrics port) expected")
    if os.environ.get("KRC_IMAGE_TEST_NS") != "1":  # said once, not again after unshare
        log("static: Dockerfile %d instructions, stages %s (%s) and scratch; RUN %s; "
            "runtime %s USER %s VOLUME %s"
            % (len(instructions), build.name, build.base, ", ".join(runs),
               " ".join(meta["entrypoint"] + meta["cmd"]), user, meta["volumes"][0]))
    return {"suite": suite, "build": build, "final": final, "meta": meta, "version": version,
            "rootfs_dir": rootfs_dir}


# --------------------------------------------------------------------------------------
# Mounts, chroot, processes


class Mounts:
    def __init__(self):
        self.stack = []

    def mount(self, *args, target):
        subprocess.run(["mount"] + list(args) + [target], check=True)
        self.stack.append(target)

    def bind(self, src, target, readonly=False):
        self.mount("--bind", src, target=target)
        if readonly:
            subprocess.run(["mount", "-o", "remount,bind,ro", target], check=True)

    def devices(self, dev):
        """A /dev as container runtimes make it: tmpfs with the usual nodes."""
        self.mount("-t", "tmpfs", "-o", "nosuid,mode=0755,size=64k", "tmpfs", target=dev)
        for name, major, minor in (("null", 1, 3), ("zero", 1, 5), ("full", 1, 7),
                                   ("random", 1, 8), ("urandom", 1, 9), ("tty", 5, 0)):
            path = os.path.join(dev, name)
            os.mknod(path, 0o666 | 0o020000, os.makedev(major, minor))
            os.chmod(path, 0o666)
        for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                             ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
            os.symlink(target, os.path.join(dev, name))
        os.mkdir(os.path.join(dev, "shm"), 0o1777)

    def umount_all(self):
        errors = []
        while self.stack:
            target = self.stack.pop()
            r = subprocess.run(["umount", target], capture_output=True, text=True)
            if r.returncode != 0:
                r = subprocess.run(["umount", "-l", target], capture_output=True, text=True)
                if r.returncode != 0:
                    errors.append("%s: %s" % (target, r.stderr.strip()))
        return errors


def mounts_under(path):
    path = os.path.realpath(path)
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = line.split()[4].replace("\\040", " ")
            if mp == path or mp.startswith(path + "/"):
                out.append(mp)
    return out


def enter(root, cwd, uid=0, gid=0, no_new_privs=False):
    """preexec_fn: chroot, chdir, and drop to uid:gid without supplementary groups (all
    capabilities go with uid 0), optionally with no_new_privs as Kubernetes'
    allowPrivilegeEscalation: false sets it. Nothing is imported after the chroot."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl if no_new_privs else None

    def fn():
        os.chroot(root)
        os.chdir(cwd)
        if prctl is not None and prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if uid or gid:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
    return fn


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_get(url, timeout=2.0):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except (OSError, urllib.error.URLError):
        return None, ""


def wait_until(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise TestFailure("timed out after %.0fs waiting for %s" % (timeout, what))
        time.sleep(0.1)


class Process:
    """A process in the image; its output lines collected."""

    def __init__(self, argv, env, preexec):
        self.lines = []
        self.proc = subprocess.Popen(argv, env=env, preexec_fn=preexec, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for raw in iter(self.proc.stdout.readline, b""):
            self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def json_lines(self):
        out = []
        for l in list(self.lines):
            try:
                obj = json.loads(l)
            except ValueError:
                continue
            if isinstance(obj, dict):
                out.append(obj)
        return out

    def tail(self, n=40):
        return "\n".join(self.lines[-n:])

    def stop(self, timeout=20):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            raise TestFailure("krc did not exit within %ds of SIGTERM; output:\n%s"
                              % (timeout, self.tail()))
        self.thread.join(5)
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)


# --------------------------------------------------------------------------------------
# The build stage


SLIM_SOURCES = """Types: deb
URIs: {mirror}
Suites: {suite} {suite}-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: {security}
Suites: {suite}-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""

# debuerreotype's slimify rules (what makes debian:<suite>-slim), as dpkg path filters.
SLIM_DPKG = """path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/man/*
"""


def debootstrap(suite, target, logf):
    log("debootstrap --variant=minbase %s (%s)" % (suite, MIRROR))
    r = subprocess.run(["debootstrap", "--variant=minbase", suite, target, MIRROR],
                       stdout=logf, stderr=subprocess.STDOUT, timeout=900)
    check(r.returncode == 0, "debootstrap failed (exit %d); see %s" % (r.returncode, logf.name))
    # What turns a debootstrap into debian:<suite>-slim: the image's apt sources, the
    # slimify dpkg filters (and their effect on what is installed), no services.
    security = MIRROR.rstrip("/") + "-security"
    os.makedirs(os.path.join(target, "etc/apt/sources.list.d"), exist_ok=True)
    with open(os.path.join(target, "etc/apt/sources.list.d/debian.sources"), "w") as f:
        f.write(SLIM_SOURCES.format(mirror=MIRROR, security=security, suite=suite))
    os.remove(os.path.join(target, "etc/apt/sources.list"))
    with open(os.path.join(target, "etc/dpkg/dpkg.cfg.d/docker"), "w") as f:
        f.write(SLIM_DPKG)
    with open(os.path.join(target, "usr/sbin/policy-rc.d"), "w") as f:
        f.write("#!/bin/sh\nexit 101\n")
    os.chmod(os.path.join(target, "usr/sbin/policy-rc.d"), 0o755)
    doc = os.path.join(target, "usr/share/doc")
    for pkg in os.listdir(doc):
        d = os.path.join(doc, pkg)
        if os.path.isdir(d) and not os.path.islink(d):
            for name in os.listdir(d):
                if name != "copyright":
                    p = os.path.join(d, name)
                    shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
    for sub in ("usr/share/man", "usr/share/info", "usr/share/groff"):
        p = os.path.join(target, sub)
        if os.path.isdir(p):
            shutil.rmtree(p)
            os.mkdir(p)


def base_root(suite, work, logf):
    """A pristine debootstrapped root (from KRC_IMAGE_ROOT_CACHE when set), copied to work."""
    dest = os.path.join(work, "build-root")
    cache = os.environ.get("KRC_IMAGE_ROOT_CACHE")
    if not cache:
        debootstrap(suite, dest, logf)
        return dest
    cache = os.path.abspath(cache)
    marker = os.path.join(cache, ".krc-image-root-" + suite)
    if not os.path.exists(marker):
        if os.path.exists(cache):
            check(not mounts_under(cache), "%s has mounts; refusing to remove it" % cache)
            shutil.rmtree(cache)
        debootstrap(suite, os.path.join(cache, "root"), logf)
        open(marker, "w").close()
    else:
        log("reusing the debootstrapped root in %s (KRC_IMAGE_ROOT_CACHE)" % cache)
    subprocess.run(["cp", "-a", os.path.join(cache, "root"), dest], check=True)
    return dest


def copy_into(src, root, dest_spec, preserve_owner):
    """Docker's COPY: a directory's contents, or a file (into dest/ or as dest)."""
    dest = os.path.join(root, dest_spec.lstrip("/"))
    cp = ["cp", "-a"] if preserve_owner else ["cp", "-R", "--no-dereference",
                                               "--preserve=mode,timestamps,links"]
    if os.path.isdir(src) and not os.path.islink(src):
        os.makedirs(dest, exist_ok=True)
        subprocess.run(cp + [src.rstrip("/") + "/.", dest + "/"], check=True)
    else:
        if dest_spec.endswith("/") or os.path.isdir(dest):
            dest = os.path.join(dest, os.path.basename(src))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        subprocess.run(cp + [src, dest], check=True)
    if not preserve_owner:
        subprocess.run(["chown", "-hR", "0:0", dest], check=True)


def run_build_stage(plan, work, mounts):
    logf = open(os.path.join(work, "build.log"), "w")
    root = base_root(plan["suite"], work, logf)
    context = os.path.join(work, "context")
    os.mkdir(context)
    with open(os.path.join(ROOT, ".dockerignore")) as f:
        ignore = DockerIgnore(f.read())
    n = build_context(ROOT, context, ignore)
    log("build context through .dockerignore: %d files" % n)

    # What a RUN gets from the engine: /proc, a small /dev, resolv.conf, root, default PATH.
    mounts.mount("-t", "proc", "proc", target=os.path.join(root, "proc"))
    mounts.devices(os.path.join(root, "dev"))
    shutil.copy("/etc/resolv.conf", os.path.join(root, "etc/resolv.conf"))
    env = {"PATH": DOCKER_DEFAULT_PATH, "HOME": "/root", "HOSTNAME": "krc-image-build"}
    workdir = "/"
    for ins in plan["build"].instructions:
        if ins.keyword == "COPY":
            words = ins.args if ins.args is not None else ins.rest.split()
            for src in words[:-1]:
                check("*" not in src and "?" not in src, "%r: wildcards not supported" % ins)
                full = os.path.normpath(os.path.join(context, src))
                check(os.path.exists(full) or os.path.islink(full),
                      "%r: %s is not in the build context (.dockerignore?)" % (ins, src))
                copy_into(full, root, words[-1], preserve_owner=False)
        elif ins.keyword == "ENV":
            for item in shlex.split(substitute(ins.rest, env)):
                k, _, v = item.partition("=")
                env[k] = v
        elif ins.keyword == "ARG":
            name, _, default = ins.rest.partition("=")
            env[name] = default
        elif ins.keyword == "WORKDIR":
            workdir = substitute(ins.rest, env)
            os.makedirs(os.path.join(root, workdir.lstrip("/")), exist_ok=True)
        elif ins.keyword == "RUN":
            t = time.monotonic()
            log("RUN %s" % " ".join(ins.args))
            logf.write("\n==== RUN %s\n" % " ".join(ins.args))
            logf.flush()
            try:
                r = subprocess.run(ins.args, env=env, preexec_fn=enter(root, workdir),
                                   stdin=subprocess.DEVNULL, stdout=logf,
                                   stderr=subprocess.STDOUT, timeout=900)
            except subprocess.TimeoutExpired:
                raise TestFailure("%r timed out; log %s" % (ins, logf.name))
            if r.returncode != 0:
                logf.flush()
                with open(logf.name) as f:
                    tail = "".join(f.readlines()[-60:])
                raise TestFailure("%r failed with exit %d; last lines of %s:\n%s"
                                  % (ins, r.returncode, logf.name, tail))
            log("  ok in %.0fs" % (time.monotonic() - t))
    umount_errors = mounts.umount_all()
    check(not umount_errors, "cannot unmount: %s" % umount_errors)
    logf.close()
    return root


def assemble_image(plan, build_root, work):
    image = os.path.join(work, "image")
    os.mkdir(image)
    os.chmod(image, 0o755)
    for ins in plan["final"].instructions:
        if ins.keyword == "COPY":
            words = ins.args if ins.args is not None else ins.rest.split()
            src = os.path.join(build_root, words[0].lstrip("/"))
            check(os.path.isdir(src), "%r: %s does not exist in the build stage" % (ins, words[0]))
            copy_into(src, image, words[1], preserve_owner=True)
    return image


# --------------------------------------------------------------------------------------
# The image's contents


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def inspect_image(plan, image):
    meta = plan["meta"]
    uid, gid = (int(x) for x in meta["user"].split(":"))
    files, total = [], 0
    for dirpath, dirnames, filenames in os.walk(image):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            rel = "/" + os.path.relpath(p, image)
            check(not (st.st_mode & 0o6000), "%s is setuid/setgid" % rel)
            if rel == meta["volumes"][0]:
                check((st.st_uid, st.st_gid) == (uid, gid),
                      "the volume %s belongs to %d:%d, not the USER %d:%d"
                      % (rel, st.st_uid, st.st_gid, uid, gid))
            else:
                check(st.st_uid == 0 and st.st_gid == 0,
                      "%s belongs to %d:%d; everything but the volume belongs to root"
                      % (rel, st.st_uid, st.st_gid))
                check(os.path.islink(p) or rel == "/tmp" or not (st.st_mode & 0o022),
                      "%s is writable by group or others" % rel)
            if os.path.isfile(p) and not os.path.islink(p):
                files.append((rel, st.st_size))
                total += st.st_size
    names = {f for f, _ in files}
    # No shell, no tools: the only executables are krc and the dynamic loader.
    execs = sorted(f for f in names if os.stat(image + f).st_mode & 0o111)
    check(len(execs) == 2 and meta["entrypoint"][0] in execs and
          any(re.search(r"/ld-linux[^/]*\.so\.[0-9]+$|/ld-[^/]*\.so[^/]*$", e) for e in execs),
          "the image's executables must be krc and the dynamic loader only, not %s" % execs)
    for shell in ("/bin/sh", "/bin/bash", "/usr/bin/sh", "/bin/busybox"):
        check(not os.path.lexists(image + shell), "%s exists in the image" % shell)
    for f in names:
        if is_elf(image + f):
            check(f in execs or re.search(r"\.so(\.[0-9]+)*$", f),
                  "unexpected binary in the image: %s" % f)
    # Required files.
    for req in ("/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
                "/etc/ssl/certs/ca-certificates.crt"):
        check(req in names, "%s missing from the image" % req)
    with open(image + "/etc/ssl/certs/ca-certificates.crt") as f:
        check(f.read().count("BEGIN CERTIFICATE") > 50, "the CA bundle holds too few certificates")
    with open(image + "/etc/passwd") as f:
        users = [l.split(":") for l in f.read().splitlines()]
    check(any(u[2] == str(uid) and u[3] == str(gid) and u[0] == "krc" for u in users),
          "/etc/passwd has no user krc with uid %d" % uid)
    check(os.path.isdir(image + "/tmp") and (os.stat(image + "/tmp").st_mode & 0o7777) == 0o1777,
          "/tmp must exist with mode 1777")
    vol = image + meta["volumes"][0]
    check(os.path.isdir(vol) and not os.listdir(vol), "the volume %s must be empty" % vol)
    libs = sorted(f for f in names if re.search(r"\.so(\.[0-9]+)*$", f))
    log("image root: %d files, %.1f MiB (%d shared libraries %.1f MiB, krc %.0f KiB)"
        % (len(files), total / 1048576.0, len(libs),
           sum(s for f, s in files if f in libs) / 1048576.0,
           dict(files)[meta["entrypoint"][0]] / 1024.0))
    return {"files": files, "total": total, "uid": uid, "gid": gid}


def compressed_size(image):
    r = subprocess.run("tar -C %s -cf - . | gzip -6 | wc -c" % shlex.quote(image), shell=True,
                       capture_output=True, text=True, check=True)
    return int(r.stdout.strip())


# --------------------------------------------------------------------------------------
# Running the image


class Container:
    """The image root as a container runtime presents it: an overlay whose mount points
    are made first, then remounted read-only; /proc, a tmpfs /dev, the mounts given."""

    def __init__(self, plan, image, work, mounts):
        self.plan = plan
        self.meta = plan["meta"]
        self.image = image
        self.mounts = mounts
        self.upper = os.path.join(work, "overlay-upper")
        self.ovwork = os.path.join(work, "overlay-work")
        self.root = os.path.join(work, "container")
        for d in (self.upper, self.ovwork, self.root):
            os.mkdir(d)
        self.created = set()
        self.uid, self.gid = (int(x) for x in self.meta["user"].split(":"))

    def start(self, binds):
        """binds: [(host_path, path_in_container, readonly)]"""
        self.mounts.mount("-t", "overlay", "-o", "lowerdir=%s,upperdir=%s,workdir=%s"
                          % (self.image, self.upper, self.ovwork), "overlay", target=self.root)
        points = [("/proc", True), ("/dev", True)] + \
            [(dst, os.path.isdir(src)) for src, dst, _ in binds]
        for path, is_dir in points:
            full = self.root + path
            if os.path.lexists(full):
                continue
            parts = path.strip("/").split("/")
            for i in range(1, len(parts) + (1 if is_dir else 0)):
                sub = "/" + "/".join(parts[:i])
                if not os.path.lexists(self.root + sub):
                    os.mkdir(self.root + sub, 0o755)
                    self.created.add(sub)
            if not is_dir:
                open(full, "w").close()
            self.created.add(path)
        subprocess.run(["mount", "-o", "remount,ro", self.root], check=True)
        try:
            open(os.path.join(self.root, ".write-probe"), "w").close()
            raise TestFailure("the container root is writable after remounting read-only")
        except OSError as e:
            check(e.errno == errno.EROFS, "unexpected error probing the read-only root: %s" % e)
        self.mounts.mount("-t", "proc", "-o", "nosuid,nodev,noexec", "proc",
                          target=self.root + "/proc")
        self.mounts.devices(self.root + "/dev")
        for src, dst, ro in binds:
            self.mounts.bind(src, self.root + dst, readonly=ro)

    def env(self, extra=None):
        home = "/"
        with open(self.image + "/etc/passwd") as f:
            for l in f.read().splitlines():
                u = l.split(":")
                if u[2] == str(self.uid):
                    home = u[5]
        env = {"PATH": DOCKER_DEFAULT_PATH, "HOSTNAME": "krc-image-test", "HOME": home}
        env.update(self.meta["env"])
        env.update(extra or {})
        return env

    def preexec(self):
        return enter(self.root, self.meta["workdir"], self.uid, self.gid, no_new_privs=True)

    def run(self, args, extra_env=None, timeout=30):
        argv = self.meta["entrypoint"] + list(args)
        r = subprocess.run(argv, env=self.env(extra_env), preexec_fn=self.preexec(),
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=timeout)
        return r

    def start_process(self, args, extra_env=None):
        argv = self.meta["entrypoint"] + list(args)
        return Process(argv, self.env(extra_env), self.preexec())

    def written(self):
        """What was written into the root file system besides the mount points made
        before it became read-only (directories of the image that overlayfs copied up
        to hold those mount points do not count)."""
        out = set()
        for dirpath, dirnames, filenames in os.walk(self.upper):
            for name in dirnames + filenames:
                rel = "/" + os.path.relpath(os.path.join(dirpath, name), self.upper)
                full = os.path.join(dirpath, name)
                if rel in self.created or (os.path.isdir(full) and not os.path.islink(full)
                                           and os.path.isdir(self.image + rel)):
                    continue
                out.add(rel)
        return out


def check_log_levels(proc, what):
    bad = []
    for l in proc.json_lines():
        if l.get("level") in ("warn", "error") and \
                not any(rx.search(l.get("msg", "")) for rx in ALLOWED_WARNINGS):
            bad.append(l)
    check(not bad, "%s logged unexpected warnings or errors (a file missing from the "
          "image?):\n%s" % (what, "\n".join(json.dumps(b) for b in bad)))


def check_process_identity(pid, container):
    status = {}
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            k, _, v = l.partition(":")
            status[k] = v.split()
    check(status["Uid"] == [str(container.uid)] * 4, "krc runs with uids %s" % status["Uid"])
    check(status["Gid"] == [str(container.gid)] * 4, "krc runs with gids %s" % status["Gid"])
    check(status.get("Groups", []) == [], "krc has supplementary groups %s" % status.get("Groups"))
    check(int(status["CapEff"][0], 16) == 0 and int(status["CapPrm"][0], 16) == 0,
          "krc has capabilities %s" % status["CapEff"])
    check(os.readlink("/proc/%d/root" % pid) == container.root, "krc is not in the container root")


SAMPLE_CONFIG = """# krc --config file (the image test)
clusterName: image-test
muteSeconds: 600
logFormat: json
silences:
  - namespace: batch
    daily: "01:00-03:00"
    reason: nightly maintenance
redactPatterns:
  - "customer_id=[0-9]+"
"""

KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: https://127.0.0.1:{port}
    certificate-authority: /etc/krc/ca.crt
users:
- name: krc
  user:
    tokenFile: /etc/krc/token
contexts:
- name: fake
  context: {{cluster: fake, user: krc, namespace: default}}
current-context: fake
"""


def start_krc(c, args, env, what):
    """krc run in the container, waited for until /readyz answers 200."""
    port = free_port()
    krc = c.start_process(args, dict(env, KRC_LISTEN="127.0.0.1:%d" % port))
    krc.port = port

    def ready():
        check(krc.proc.poll() is None, "%s exited with %s before /readyz:\n%s"
              % (what, krc.proc.returncode, krc.tail()))
        return http_get("http://127.0.0.1:%d/readyz" % port)[0] == 200
    try:
        wait_until(ready, 30, "/readyz of %s" % what)
    except BaseException:
        krc.kill()
        raise
    return krc


def restart_and_wait(fk, fs, krc, pod, what):
    """A pod restarts (OOM); krc diagnoses it and its Slack message arrives."""
    fk.create_pod("default", pod)
    fk.restart("default", pod, "app", exit_code=137, reason="OOMKilled",
               logs="allocating 4GiB\n")

    def diagnosed():
        check(krc.proc.poll() is None, "%s exited:\n%s" % (what, krc.tail()))
        return [l for l in krc.json_lines() if l.get("msg") == "restart diagnosed"
                and l.get("pod") == pod and l.get("cause") == "oom_killed"]
    wait_until(diagnosed, 30, "%s to diagnose the restart of %s" % (what, pod))
    try:
        msgs = fs.wait_messages(1, timeout=30)
    except TimeoutError:
        raise TestFailure("%s posted no Slack message for %s:\n%s\nfakeslack:\n%s"
                          % (what, pod, krc.tail(), fs.log_tail()))
    check(any(pod in json.dumps(m) for m in msgs), "the Slack message does not name %s" % pod)


def stop_krc(krc, what):
    try:
        rc = krc.stop()
    finally:
        krc.kill()
    check(rc == 0, "%s exited %d on SIGTERM:\n%s" % (what, rc, krc.tail()))
    check_log_levels(krc, what)


def run_image(plan, image, work, mounts):
    sys.path.insert(0, os.path.join(ROOT, "tests", "fakeslack"))
    from admin import FakeKube
    from client import FakeSlack

    meta = plan["meta"]
    c = Container(plan, image, work, mounts)
    vol_host = os.path.join(work, "volume")
    os.mkdir(vol_host)
    st = os.stat(image + meta["volumes"][0])  # a new volume starts as the image's directory
    os.chown(vol_host, st.st_uid, st.st_gid)
    os.chmod(vol_host, st.st_mode & 0o7777)
    sa = os.path.join(work, "serviceaccount")
    etc_krc = os.path.join(work, "etc-krc")
    os.mkdir(sa)
    os.mkdir(etc_krc)
    hosts = os.path.join(work, "hosts")
    with open(hosts, "w") as f:
        f.write("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n"
                "127.0.0.1\tslack.krc.test\n")
    bundle = os.path.join(work, "ca-bundle.crt")

    with FakeKube() as fk, FakeSlack(tls=True) as fs_tls, FakeSlack() as fs_plain:
        for d in (sa, etc_krc):
            shutil.copy(fk.ca, os.path.join(d, "ca.crt"))
            shutil.copy(fk.token_path, os.path.join(d, "token"))
        with open(os.path.join(sa, "namespace"), "w") as f:
            f.write("krc")
        with open(os.path.join(etc_krc, "krc.yaml"), "w") as f:
            f.write(SAMPLE_CONFIG)
        with open(os.path.join(etc_krc, "kubeconfig"), "w") as f:
            f.write(KUBECONFIG.format(port=fk.api_port))
        for name in ("full.yaml", "mistakes.yaml"):
            shutil.copy(os.path.join(ROOT, "tests/fixtures/config", name), etc_krc)
        shutil.copy(fs_tls.ca, bundle)
        for path in (sa, etc_krc, bundle, hosts):
            os.chmod(path, 0o755 if os.path.isdir(path) else 0o644)
            if os.path.isdir(path):
                for name in os.listdir(path):
                    os.chmod(os.path.join(path, name), 0o644)

        # The test's own CA goes over the image's bundle: it proves that libcurl in the
        # image trusts exactly that file by default (the real bundle is checked above).
        c.start([(hosts, "/etc/hosts", True),
                 (bundle, "/etc/ssl/certs/ca-certificates.crt", True),
                 (sa, "/var/run/secrets/kubernetes.io/serviceaccount", True),
                 (etc_krc, "/etc/krc", True),
                 (vol_host, meta["volumes"][0], False)])
        log("container root: overlay of the image, read-only; volume %s writable; "
            "running as %s" % (meta["volumes"][0], meta["user"]))

        # krc version / config keys / config check
        r = c.run(["version"])
        check(r.returncode == 0 and r.stdout.strip() == "krc " + plan["version"],
              "`krc version` in the image: exit %d, %r %r" % (r.returncode, r.stdout, r.stderr))
        r = c.run(["config", "keys"])
        check(r.returncode == 0, "`krc config keys` failed: %s" % r.stderr)
        m = re.search(r"^\| `listen` \|[^|]*\|[^|]*\|[^|]*\| `[^`]*:([0-9]+)` \|", r.stdout, re.M)
        check(m, "no default for `listen` in `krc config keys`")
        check(meta["expose"] == [m.group(1)],
              "EXPOSE %s but krc listens on port %s by default" % (meta["expose"], m.group(1)))
        for name in ("krc.yaml", "full.yaml"):
            r = c.run(["config", "check", "/etc/krc/" + name])
            check(r.returncode == 0, "`krc config check %s` in the image: exit %d: %s%s"
                  % (name, r.returncode, r.stdout, r.stderr))
        r = c.run(["config", "check", "/etc/krc/mistakes.yaml"])
        check(r.returncode != 0 and "unknown key" in r.stdout + r.stderr,
              "`krc config check mistakes.yaml` should fail: exit %d %s%s"
              % (r.returncode, r.stdout, r.stderr))
        log("krc version, config keys, config check (good and bad files): ok")

        # 1. krc run exactly as ENTRYPOINT + CMD, in-cluster; Slack over HTTPS.
        what = "krc run (in-cluster)"
        webhook = fs_tls.webhook_url("alerts").replace("//127.0.0.1:", "//localhost:")
        check(webhook.startswith("https://localhost:"), "unexpected fakeslack URL %s" % webhook)
        krc = start_krc(c, meta["cmd"], {
            "KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(fk.api_port),
            "KRC_LOG_FORMAT": "json", "SLACK_WEBHOOK_URL": webhook}, what)
        try:
            check_process_identity(krc.proc.pid, c)
            restart_and_wait(fk, fs_tls, krc, "web-1", what)
            status, body = http_get("http://127.0.0.1:%d/metrics" % krc.port)
            check(status == 200 and re.search(
                r'^krc_restarts_detected_total\{namespace="default",cause="oom_killed"\} 1$',
                body, re.M), "/metrics lacks the restart: %s" % body[:2000])
            check(re.search(r"^process_resident_memory_bytes [1-9]", body, re.M),
                  "/metrics has no process metrics (/proc readable?)")
            check(http_get("http://127.0.0.1:%d/healthz" % krc.port)[0] == 200,
                  "/healthz is not 200")
        finally:
            stop_krc(krc, what)
        db = meta["env"]["KRC_DB"]
        check(any(l.get("msg") in ("history database %s" % db, "history database %s (sqlite)" % db)
                  for l in krc.json_lines()),
              "krc did not use the history database %s:\n%s" % (db, krc.tail()))
        log("%s, as ENTRYPOINT+CMD: /readyz, restart diagnosed, Slack message over HTTPS "
            "(CA bundle path), /metrics, SIGTERM -> exit 0: ok" % what)

        written = sorted(os.listdir(vol_host))
        check(written and all(n.startswith(os.path.basename(db)) for n in written),
              "krc wrote %s into the volume; expected only its database" % written)
        st = os.stat(os.path.join(vol_host, os.path.basename(db)))
        check((st.st_uid, st.st_gid, st.st_mode & 0o777) == (c.uid, c.gid, 0o600),
              "the database is %d:%d mode %o" % (st.st_uid, st.st_gid, st.st_mode & 0o777))
        r = c.run(["history", "--format", "json"])
        check(r.returncode == 0 and "web-1" in r.stdout and "oom_killed" in r.stdout,
              "`krc history` in the image: exit %d %s%s" % (r.returncode, r.stdout[:500], r.stderr))
        log("history in the volume (%s), read back by `krc history`: ok" % ", ".join(written))

        # 2. krc run with a config file and a kubeconfig; Slack by a host name from /etc/hosts.
        what = "krc run (--config, --kubeconfig)"
        webhook = fs_plain.webhook_url("alerts").replace("//127.0.0.1:", "//slack.krc.test:")
        check(webhook.startswith("http://slack.krc.test:"), "unexpected fakeslack URL %s" % webhook)
        # (plain http to a name that is not loopback: refused unless opted in, issue 25)
        krc = start_krc(c, ["run", "--config", "/etc/krc/krc.yaml",
                            "--kubeconfig", "/etc/krc/kubeconfig"],
                        {"SLACK_WEBHOOK_URL": webhook, "KRC_SLACK_ALLOW_INSECURE_HTTP": "true"},
                        what)
        try:
            check(any("kubeconfig /etc/krc/kubeconfig" in l.get("msg", "")
                      for l in krc.json_lines()),
                  "krc did not use the kubeconfig:\n%s" % krc.tail())
            # another workload: web-1 above opened an incident whose repeats are paced
            restart_and_wait(fk, fs_plain, krc, "api-2", what)
        finally:
            stop_krc(krc, what)
        log("%s: restart diagnosed, Slack reached by a host name (nsswitch.conf, "
            "/etc/hosts), SIGTERM -> exit 0: ok" % what)

    written = c.written()
    check(not written, "files appeared in the container root: %s" % sorted(written))
    return c


# --------------------------------------------------------------------------------------


def preconditions(suite):
    problems = []
    if os.geteuid() != 0:
        problems.append("it must run as root (debootstrap, chroot, mount)")
    for tool in ("debootstrap", "unshare", "mount", "chroot"):
        if shutil.which(tool) is None:
            problems.append("`%s` is not installed (apt-get install debootstrap)" % tool)
    url = MIRROR.rstrip("/") + "/dists/%s/Release" % suite
    try:
        urllib.request.urlopen(url, timeout=15).close()
    except Exception as e:  # noqa: BLE001 - any failure means no mirror
        problems.append("%s is not reachable: %s" % (url, e))
    return problems


def main():
    keep = "--keep" in sys.argv[1:]
    plan = static_checks()
    if os.environ.get("KRC_SKIP_IMAGE_TEST") == "1":
        log("SKIPPED the image build and run (KRC_SKIP_IMAGE_TEST=1); static checks passed")
        return 0
    problems = preconditions(plan["suite"])
    if problems:
        raise TestFailure("cannot check the image build: " + "; ".join(problems) +
                          ". Set KRC_SKIP_IMAGE_TEST=1 to skip this test explicitly.")
    if os.environ.get("KRC_IMAGE_TEST_NS") != "1":
        # A private mount namespace: every mount of this test disappears with it, even
        # if the test is killed; the explicit unmounts below are the tidy path.
        env = dict(os.environ, KRC_IMAGE_TEST_NS="1")
        child = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "--",
                                  sys.executable, os.path.abspath(__file__)] + sys.argv[1:],
                                 env=env)
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, lambda signum, _f: child.send_signal(signum))
        return child.wait()

    base = os.environ.get("KRC_IMAGE_WORKDIR")
    if base:
        os.makedirs(base, exist_ok=True)
    work = tempfile.mkdtemp(prefix="krc-image-test-", dir=base or "/tmp")
    check(not os.path.realpath(work).startswith(os.path.realpath(ROOT) + "/"),
          "the scratch space must be outside the repository")
    os.chmod(work, 0o755)
    mounts = Mounts()
    ok = False
    try:
        log("scratch space %s" % work)
        build_root = run_build_stage(plan, work, mounts)
        image = assemble_image(plan, build_root, work)
        inspect_image(plan, image)
        log("image root compressed (tar.gz, as a registry layer): %.1f MiB"
            % (compressed_size(image) / 1048576.0))
        run_image(plan, image, work, mounts)
        ok = True
    finally:
        errors = mounts.umount_all()
        left = mounts_under(work)
        if errors or left:
            print("test_image: could not unmount %s %s; leaving %s" % (errors, left, work),
                  file=sys.stderr)
        elif keep:
            print("test_image: scratch space kept in %s" % work, file=sys.stderr)
        else:
            shutil.rmtree(work)
            if not ok:
                print("test_image: scratch space removed (--keep keeps it)", file=sys.stderr)
    log("PASS: the Dockerfile's steps build an image whose krc runs read-only as %s"
        % plan["meta"]["user"])
    return 0


def _terminate(signum, _frame):
    raise SystemExit("test_image: signal %d" % signum)


if __name__ == "__main__":
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _terminate)
    try:
        sys.exit(main())
    except TestFailure as e:
        print("test_image: FAIL: %s" % e, file=sys.stderr)
        sys.exit(1)
