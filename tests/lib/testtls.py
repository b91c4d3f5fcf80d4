"""Shared by the project's test and benchmark servers (fakekube, fakeslack, benchserver,
latency_server): a throwaway CA and server certificate for 127.0.0.1, made with the openssl
command-line tool, and atomic file writes for the files tests wait on."""

import os
import secrets
import subprocess


def write_atomic(path, data: bytes, mode=0o600):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def run_openssl(args, cwd):
    r = subprocess.run(["openssl"] + args, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("openssl %s failed (%d): %s" % (args[0], r.returncode,
                                                          r.stderr.strip()))


def make_certs(state_dir, ca_name):
    """ca.crt/ca.key and server.crt/server.key for 127.0.0.1 and localhost in state_dir,
    EC P-256 (fast to generate). ca.crt appears last, atomically."""
    ext = os.path.join(state_dir, "server.ext")
    with open(ext, "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\n"
                "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run_openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                 "-nodes", "-keyout", "ca.key", "-out", "ca.crt.tmp", "-days", "3650",
                 "-subj", "/CN=" + ca_name, "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign"], state_dir)
    run_openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                 "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"],
                state_dir)
    run_openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.crt.tmp", "-CAkey", "ca.key",
                 "-set_serial", "0x" + secrets.token_hex(16), "-out", "server.crt",
                 "-days", "825", "-extfile", "server.ext"], state_dir)
    os.replace(os.path.join(state_dir, "ca.crt.tmp"), os.path.join(state_dir, "ca.crt"))
    for f in ("server.csr", "server.ext"):
        os.unlink(os.path.join(state_dir, f))
