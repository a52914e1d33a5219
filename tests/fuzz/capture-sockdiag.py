#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Capture real sock_diag replies as seeds for tests/fuzz/fuzz_sockdiag.c.

Run as root; it moves itself into a network namespace of its own (only
loopback, so that no socket of the host's ends up in a seed), opens TCP
listeners and connections on 127.0.0.1 and ::1, and sends the requests
tlsd's tls_diag_dump sends (IPv4 and IPv6, listeners only and all the
states it asks for), plus one the kernel refuses (family 255). Every
datagram the kernel answers with is written to DIR as one file:

    sudo python3 tests/fuzz/capture-sockdiag.py tests/fuzz/corpus/sockdiag
"""
import ctypes
import os
import socket
import struct
import subprocess
import sys

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
TCP_ESTABLISHED, TCP_SYN_SENT, TCP_SYN_RECV, TCP_LISTEN, TCP_CLOSE_WAIT = 1, 2, 3, 10, 8
CLONE_NEWNET = 0x40000000


def request(seq, family, listen_only):
    """tcd/sockdiag.c's dump_family: nlmsghdr + inet_diag_req_v2."""
    states = 1 << TCP_LISTEN
    if not listen_only:
        states |= (1 << TCP_ESTABLISHED | 1 << TCP_SYN_SENT | 1 << TCP_SYN_RECV |
                   1 << TCP_CLOSE_WAIT)
    req = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, 0, 0, states) + bytes(48)
    return struct.pack("=IHHII", 16 + len(req), SOCK_DIAG_BY_FAMILY,
                       NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + req


def replies(nl, seq, family, listen_only):
    """The datagrams answering one request, up to NLMSG_DONE or an error."""
    nl.send(request(seq, family, listen_only))
    while True:
        d = nl.recv(65536)
        yield d
        off, last = 0, False
        while off + 16 <= len(d):
            length, kind = struct.unpack_from("=IH", d, off)
            last = last or kind in (NLMSG_DONE, NLMSG_ERROR)
            off += (length + 3) & ~3 if length >= 16 else len(d)
        if last:
            return


def main():
    out = sys.argv[1]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET):
        sys.exit("unshare(CLONE_NEWNET): %s (run as root)" % os.strerror(ctypes.get_errno()))
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    keep = []
    for fam, addr, port in ((socket.AF_INET, "127.0.0.1", 9000),
                            (socket.AF_INET6, "::1", 9001)):
        lst = socket.socket(fam, socket.SOCK_STREAM)
        lst.bind((addr, port))
        lst.listen(8)
        cli = socket.socket(fam, socket.SOCK_STREAM)
        cli.connect((addr, port))
        srv, _ = lst.accept()
        keep += [lst, cli, srv]
    # a peer gone: its side in CLOSE_WAIT
    cli = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    cli.connect(("127.0.0.1", 9000))
    srv, _ = keep[0].accept()
    cli.close()
    keep.append(srv)

    os.makedirs(out, exist_ok=True)
    nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG)
    nl.bind((0, 0))
    seq = 1
    for name, fam, listen_only in (("v4-listen", socket.AF_INET, True),
                                   ("v4-all", socket.AF_INET, False),
                                   ("v6-listen", socket.AF_INET6, True),
                                   ("v6-all", socket.AF_INET6, False),
                                   ("refused-family", 255, False)):
        for i, d in enumerate(replies(nl, seq, fam, listen_only)):
            path = os.path.join(out, "%s-%d" % (name, i))
            with open(path, "wb") as f:
                f.write(d)
            print("%s: %d bytes" % (path, len(d)))
        seq += 1


if __name__ == "__main__":
    main()
