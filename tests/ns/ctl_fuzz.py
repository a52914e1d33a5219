#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Bad clients for tlsd's control socket (used by tests/ns/test_tlsctl.sh).

ctl_fuzz.py SOCKET COUNT

Sends COUNT (at least) malformed, truncated, oversized and random requests
over many connections, and checks that every one of them gets exactly one
error reply that is valid JSON, has a known code and, where the request
class is known, names the problem; that oversized lines and requests cut by
EOF are answered before the connection closes; that clients beyond the
limit are told tlsd is busy; that a client flooding requests without
reading its replies does not stall tlsd for the others. Exit status 0 if
all held, 1 with the first violation otherwise. Never sends a valid request
that would change tlsd's state.
"""
import json
import random
import socket
import sys
import time

CODES = {"parse", "request", "version", "command", "value", "too_long",
         "permission", "busy", "unavailable", "not_found", "internal"}
MAX_MSG = 65536
MAX_CLIENTS = 64
# this fuzzer runs as root, who has room of its own (tcd/ctl.c, accept_one)
ROOT_MAX_CLIENTS = 2 * MAX_CLIENTS

path = sys.argv[1]
total = int(sys.argv[2])
rnd = random.Random(20240611)
sent = 0


def die(msg):
    print("FUZZ FAIL: " + msg)
    sys.exit(1)


def connect(timeout=10.0):
    t_end = time.time() + timeout
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect(path)
            return s
        except BlockingIOError:
            # a full listen backlog (a timeout makes connect non-blocking)
            s.close()
            if time.time() > t_end:
                die("tlsd did not accept a connection within %.0f s" % timeout)
            time.sleep(0.01)


def read_lines(s, n):
    """Up to n lines, fewer if the connection ends."""
    buf, out = b"", []
    while len(out) < n:
        try:
            d = s.recv(1 << 20)
        except ConnectionResetError:
            break
        if not d:
            break
        buf += d
        while b"\n" in buf and len(out) < n:
            line, buf = buf.split(b"\n", 1)
            out.append(line)
    return out


def check_error(line, what, needle=None, code=None):
    try:
        r = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        die("reply to %s is not JSON (%s): %r" % (what, e, line[:200]))
    if not isinstance(r, dict) or r.get("version") != 1 or r.get("ok") is not False:
        die("reply to %s is not an error reply: %r" % (what, r))
    err = r.get("error")
    if not isinstance(err, dict) or err.get("code") not in CODES:
        die("reply to %s has no known error code: %r" % (what, r))
    msg = err.get("message")
    if not isinstance(msg, str) or not msg:
        die("reply to %s has no message: %r" % (what, r))
    if code and err["code"] != code:
        die("reply to %s: code %s, expected %s (%s)" % (what, err["code"], code, msg))
    if needle and needle not in msg:
        die("reply to %s does not name %r: %s" % (what, needle, msg))
    return r


GOOD = [b'{"version":1,"cmd":"status"}', b'{"version":1,"cmd":"jobs"}',
        b'{"version":1,"cmd":"policy"}']
# (request, error code, what the message must name)
TEMPLATES = [
    (b'{"version":"1","cmd":"status"}', "request", "version must be an integer"),
    (b'{"version":1,"cmd":5}', "request", "cmd must be a string"),
    (b'{"version":1,"cmd":"policy","policy":7}', "request", "policy must be a string"),
    (b'{"version":1,"cmd":"policy","interval":500}', "request", "interval must be a string"),
    (b'{"version":1,"cmd":"stats","follow":"yes"}', "request", "follow must be true or false"),
    (b'{"version":1,"cmd":"status","id":{"a":1}}', "request", "id must be"),
    (b'{"version":1,"cmd":"status","extra":1}', "request", "unknown field 'extra'"),
    (b'{"version":1}', "request", "missing field 'cmd'"),
    (b'{"cmd":"status"}', "request", "missing field 'version'"),
    (b'{"version":2,"cmd":"status"}', "version", "version 2"),
    (b'{"version":1,"cmd":"shutdown"}', "command", "unknown command 'shutdown'"),
    (b'{"version":1,"cmd":"policy","policy":"lifo"}', "value", "'lifo'"),
    (b'{"version":1,"cmd":"policy","policy":"one","interval":"1ms"}', "value", "'1ms'"),
    (b'{"version":1,"cmd":"policy","interval":"soon"}', "value", "'soon'"),
    (b'{"version":1,"cmd":"policy","reset":true,"policy":"fifo"}', "request", "reset"),
    (b'[{"version":1,"cmd":"status"}]', "request", "must be a JSON object"),
    (b'17', "request", "must be a JSON object"),
    (b'"status"', "request", "must be a JSON object"),
    (b'null', "parse", None),
    (b'{"a":[[[[[[[[[[[[1]]]]]]]]]]]]}', "parse", "nesting"),
    (b'{"version":1,"cmd":"st\xc3\x28"}', "parse", "utf-8"),
    (b'{"version":1,\x00"cmd":"status"}', "parse", "NUL"),
    (b"{'version':1,'cmd':'status'}", "parse", "not JSON"),
    (b'', "parse", "empty request"),
]


def valid(line):
    """Would tlsd accept this line? (then it must only read, never change)"""
    try:
        r = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return False
    return (isinstance(r, dict) and r.get("version") == 1 and
            r.get("cmd") in ("status", "jobs", "policy") and set(r) <= {"version", "cmd"})


def one_bad():
    """A bad line: (bytes without newline, code or None, needle or None)."""
    k = rnd.randrange(4)
    if k == 0:  # random bytes
        b = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 300)))
        return b.replace(b"\n", b" "), None, None
    if k == 1:  # truncated
        g = rnd.choice(GOOD)
        return g[:rnd.randrange(len(g))], None, None
    if k == 2:  # flipped bytes
        g = bytearray(rnd.choice(GOOD))
        for _ in range(rnd.randrange(1, 4)):
            g[rnd.randrange(len(g))] = rnd.choice(b'x"{}[]:,\\ 0\x00\xff')
        g = bytes(g)
        return g, None, None
    return rnd.choice(TEMPLATES)


# 1. Batches of bad lines on persistent connections, pipelined.
def batches(n):
    global sent
    while n > 0:
        k = min(n, rnd.randrange(1, 200))
        lines = [one_bad() for _ in range(k)]
        s = connect()
        s.sendall(b"".join(l + b"\n" for l, _, _ in lines))
        replies = read_lines(s, k)
        s.close()
        if len(replies) != k:
            die("%d requests on one connection, %d replies" % (k, len(replies)))
        for (l, code, needle), r in zip(lines, replies):
            if valid(l):
                continue  # only a read-only command can come out valid
            check_error(r, repr(l[:80]), needle, code)
        sent += k
        n -= k


# 2. Oversized lines: one error, then the connection is closed.
def oversized(n):
    global sent
    for i in range(n):
        s = connect()
        size = MAX_MSG + rnd.randrange(1, 200000)
        try:
            s.sendall(b"x" * size + (b"\n" if i % 2 else b""))
        except (BrokenPipeError, ConnectionResetError):
            pass  # tlsd stopped reading at the limit: expected
        replies = read_lines(s, 2)
        s.close()
        if len(replies) != 1:
            die("oversized line of %d bytes: %d replies, expected 1 and a close" %
                (size, len(replies)))
        check_error(replies[0], "an oversized line", "65536", "too_long")
        sent += 1


# 3. A request cut by the end of the connection: still answered.
def cut_by_eof(n):
    global sent
    for _ in range(n):
        g = rnd.choice(GOOD)
        part = g[:rnd.randrange(1, len(g))]
        s = connect()
        s.sendall(part)
        s.shutdown(socket.SHUT_WR)
        replies = read_lines(s, 2)
        s.close()
        if len(replies) != 1:
            die("request cut by EOF (%r): %d replies, expected 1" % (part, len(replies)))
        check_error(replies[0], repr(part), None, "parse")
        sent += 1


# 4. Connections dropped at once, or in the middle of a line, or before
# reading their replies.
def rude(n):
    global sent
    for i in range(n):
        s = connect()
        if i % 3 == 1:
            s.sendall(rnd.choice(GOOD)[:10])
        elif i % 3 == 2:
            s.sendall(b'{"version":1,"cmd":"jobs"}\n' * 50)
        s.close()
        sent += 1


# 5. More clients than allowed (root's limit): the extra ones are told tlsd
# is busy; the others are served.
def crowd():
    global sent
    conns = [connect() for _ in range(ROOT_MAX_CLIENTS + 6)]
    time.sleep(0.3)
    busy = 0
    for s in conns:
        s.setblocking(False)
        try:
            d = s.recv(4096)
        except BlockingIOError:
            d = None
        if d:
            check_error(d.split(b"\n")[0], "a client over the limit", None, "busy")
            busy += 1
        s.setblocking(True)
    if busy < 6:
        die("%d clients over a limit of %d: only %d told busy" %
            (len(conns), ROOT_MAX_CLIENTS, busy))
    served = 0
    for s in conns:
        try:
            s.sendall(b'{"version":1,"cmd":"status","id":1}\n')
            r = read_lines(s, 1)
        except (BrokenPipeError, ConnectionResetError):
            r = []
        if r and json.loads(r[0]).get("ok") is True:
            served += 1
        sent += 1
    for s in conns:
        s.close()
    if served < ROOT_MAX_CLIENTS - 2:
        die("only %d of %d clients within the limit were served" % (served, ROOT_MAX_CLIENTS))


# 6. A client flooding requests and reading nothing, and a follower of the
# statistics that never reads, must not stall tlsd for the others.
def flood():
    global sent
    lazy = connect()
    lazy.sendall(b'{"version":1,"cmd":"stats","follow":true}\n')
    f = connect()
    f.setblocking(False)
    req = b'{"version":1,"cmd":"jobs"}\n' * 1000
    n = 0
    t_end = time.time() + 2
    while time.time() < t_end:
        try:
            n += f.send(req)
        except BlockingIOError:
            break
    s = connect(timeout=2)
    t0 = time.time()
    s.sendall(b'{"version":1,"cmd":"status"}\n')
    r = read_lines(s, 1)
    dt = time.time() - t0
    s.close()
    f.close()
    lazy.close()
    if not r or json.loads(r[0]).get("ok") is not True:
        die("tlsd did not answer a status while another client flooded it")
    return n, dt


oversized(200)
cut_by_eof(200)
rude(150)
crowd()
nflood, dt = flood()
nbatch = max(total - sent, 1000)
batches(nbatch)
print("fuzz: %d requests: %d bad ones pipelined, each answered with an error naming it; "
      "200 oversized, 200 cut by EOF, 150 connections dropped, %d clients at once; a flood "
      "of %d KB and a follower never read did not stall a status (%.0f ms)" %
      (sent, nbatch, MAX_CLIENTS + 6, nflood // 1024, dt * 1000))
