#!/usr/bin/env python3
"""A slow HTTP client that tries to hold many connections (the "slowloris" of issue 24).

    python3 slow_clients.py --port PORT [--host 127.0.0.1] [--source 127.0.0.1]
                            [--connections 64] [--every 5] [--seconds 60]

From the source address it keeps `connections` connections open to HOST:PORT, each sending one
byte of an endless request head every `every` seconds (staggered over the period, so a byte
goes out every every/connections seconds). A connection the server closes, at accept or later,
is opened again at its next turn: the client never stops trying to hold them all. At the end it
prints one JSON line: connects (connections opened), closed (closed by the server), bytes (sent)
and most_open (the most it held at once, as far as it could tell).

It runs as its own process so that the tests' probes never wait for it (Python's GIL).
"""
import argparse
import json
import select
import socket
import sys
import time

HEAD = b"GET /healthz HTTP/1.1\r\nHost: krc\r\nX-Slow: " + b"a" * 100000


def server_closed(sock):
    """True when the server has closed the connection (EOF or reset)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(4096, socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def run(host, port, source, connections, every, seconds):
    start = time.monotonic()
    end = start + seconds
    socks = [None] * connections
    pos = [0] * connections
    due = [start + every * i / connections for i in range(connections)]
    stats = {"connects": 0, "closed": 0, "bytes": 0, "most_open": 0}
    while True:
        i = min(range(connections), key=lambda k: due[k])
        if due[i] >= end:
            break
        wait = due[i] - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        due[i] += every
        s = socks[i]
        if s is not None and server_closed(s):
            s.close()
            s = socks[i] = None
            stats["closed"] += 1
        if s is None:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind((source, 0))
                s.settimeout(5)
                s.connect((host, port))
            except OSError:
                s.close()
                continue
            socks[i] = s
            pos[i] = 0
            stats["connects"] += 1
        try:
            s.send(HEAD[pos[i]:pos[i] + 1])
            pos[i] = (pos[i] + 1) % len(HEAD)
            stats["bytes"] += 1
        except OSError:
            s.close()
            socks[i] = None
            stats["closed"] += 1
        stats["most_open"] = max(stats["most_open"],
                                 sum(1 for x in socks if x is not None and not server_closed(x)))
    for s in socks:
        if s is not None:
            s.close()
    return stats


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--source", default="127.0.0.1")
    p.add_argument("--connections", type=int, default=64)
    p.add_argument("--every", type=float, default=5.0)
    p.add_argument("--seconds", type=float, default=60.0)
    a = p.parse_args()
    stats = run(a.host, a.port, a.source, a.connections, a.every, a.seconds)
    json.dump(stats, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
