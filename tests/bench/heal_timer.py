#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""How fast tlsd heals its tree, timed by the kernel's own announcements.

Run inside tlsd's network namespace (nsenter --net=...). Listens to rtnetlink
(RTNLGRP_TC, RTNLGRP_LINK) and times, N times, from a change to tlsd's tree
being whole again, which is when tlsd's default class (715d:ff, the last
class a build adds) is announced on that interface:

  heal_timer.py root IF N GAP_S
      `tc qdisc del dev IF root`; from the announcement of 715d: deleted.
  heal_timer.py recreate IF PEER NS NS_PEER N GAP_S
      `ip link del IF`, then the veth pair created again (IF in NS, PEER in
      NS_PEER); from the announcement of the new IF.

Prints one line per round, the milliseconds; a round that is not whole
within 2 s prints "never".
"""
import os
import select
import socket
import struct
import subprocess
import sys
import time

RTMGRP_LINK, RTMGRP_TC = 0x1, 0x8
RTM_NEWLINK, RTM_DELQDISC, RTM_NEWTCLASS = 16, 37, 40
IFLA_IFNAME = 3
ROOT, DEFAULT_CLASS = 0x715D0000, 0x715D00FF
NLMSG, TCMSG, IFINFO = "=LHHLL", "=BxxxiIII", "=BxHiII"


def messages(data):
    off = 0
    while off + 16 <= len(data):
        length, mtype, _, _, _ = struct.unpack_from(NLMSG, data, off)
        if length < 16 or off + length > len(data):
            return
        yield mtype, data[off + 16:off + length]
        off += (length + 3) & ~3


def ifname(payload):
    off = 16  # struct ifinfomsg
    while off + 4 <= len(payload):
        alen, atype = struct.unpack_from("=HH", payload, off)
        if alen < 4:
            return None
        if atype == IFLA_IFNAME:
            return payload[off + 4:off + alen].split(b"\0")[0].decode()
        off += (alen + 3) & ~3
    return None


def wait_for(sock, want, deadline):
    """The monotonic ns at which want(mtype, payload) first holds."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([sock], [], [], left)[0]:
            return None
        data = sock.recv(1 << 20)
        t = time.monotonic_ns()
        for mtype, payload in messages(data):
            if want(mtype, payload):
                return t


def tc_is(mtype, payload, kind, ifindex, handle):
    if mtype != kind or len(payload) < 20:
        return False
    _, idx, h, parent, _ = struct.unpack_from(TCMSG, payload)
    return idx == ifindex and h == handle and (kind != RTM_DELQDISC or parent == 0xFFFFFFFF)


def main():
    mode, dev = sys.argv[1], sys.argv[2]
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    sock.bind((0, RTMGRP_LINK | RTMGRP_TC))
    if mode == "root":
        rounds, gap = int(sys.argv[3]), float(sys.argv[4])
    else:
        peer, ns, ns_peer = sys.argv[3:6]
        rounds, gap = int(sys.argv[6]), float(sys.argv[7])
    for _ in range(rounds):
        time.sleep(gap)
        idx = socket.if_nametoindex(dev)
        if mode == "root":
            subprocess.run(["tc", "qdisc", "del", "dev", dev, "root"], check=True)
            t0 = wait_for(sock, lambda m, p: tc_is(m, p, RTM_DELQDISC, idx, ROOT),
                          time.monotonic() + 2)
        else:
            subprocess.run(["ip", "link", "del", dev], check=True)
            subprocess.run(["ip", "link", "add", dev, "netns", ns, "type", "veth", "peer",
                            "name", peer, "netns", ns_peer], check=True)
            t0 = wait_for(sock, lambda m, p: m == RTM_NEWLINK and ifname(p) == dev and
                          struct.unpack_from(IFINFO, p)[2] != idx, time.monotonic() + 2)
            idx = socket.if_nametoindex(dev)
        t1 = t0 and wait_for(sock, lambda m, p: tc_is(m, p, RTM_NEWTCLASS, idx, DEFAULT_CLASS),
                             time.monotonic() + 2)
        print("never" if not t1 else "%.3f" % ((t1 - t0) / 1e6), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
