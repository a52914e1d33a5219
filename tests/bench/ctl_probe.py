#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""How long tlsd's loop keeps a control client waiting (tests/bench/bench-loop.sh).

ctl_probe.py SOCKET SECS [GAP_MS]
    Asks `status` over SOCKET every GAP_MS (default 2) for SECS seconds, one
    request at a time on one connection (reconnecting if tlsd closes it), and
    prints `replies N max_ms X p99_ms Y`: a reply late by X ms means the loop
    was busy with something else for about that long.
ctl_probe.py wait FILE PATTERN T0_NS TIMEOUT_S
    Prints the ms from T0_NS (wall clock, `date +%s%N`) until a line of FILE
    contains PATTERN; exits 1 on timeout. Polls every millisecond.
"""
import json
import socket
import sys
import time

REQ = (json.dumps({"version": 1, "cmd": "status"}) + "\n").encode()


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(path)
    return s, s.makefile("rb")


def probe(path, secs, gap_ms):
    s, f = connect(path)
    lat = []
    end = time.monotonic() + secs
    while time.monotonic() < end:
        t = time.monotonic()
        try:
            s.sendall(REQ)
            line = f.readline()
        except OSError:
            line = b""
        if not line:  # closed (idle timeout): once more on a new one
            s.close()
            s, f = connect(path)
            continue
        if not json.loads(line).get("ok"):
            sys.exit("status refused: " + line.decode().strip())
        lat.append((time.monotonic() - t) * 1000)
        time.sleep(gap_ms / 1000)
    lat.sort()
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else 0
    print("replies %d max_ms %.1f p99_ms %.1f" % (len(lat), lat[-1] if lat else 0, p99))


def wait(path, pattern, t0_ns, timeout_s):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            with open(path, errors="replace") as fh:
                if any(pattern in line for line in fh):
                    print("%.1f" % ((time.time_ns() - t0_ns) / 1e6))
                    return
        except FileNotFoundError:
            pass
        time.sleep(0.001)
    sys.exit(1)


if sys.argv[1] == "wait":
    wait(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
else:
    probe(sys.argv[1], float(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 2)
