#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The spotDNN calibration on real traffic (issue 5): one PS job behind
# tlsd's HTB at 100 Mbit/s, n = 1, 2, 4 and 8 workers, each worker's demand
# capped at B_req = 40 Mbit/s on the worker side; tlsd's statistics must
# find B_ps within 5% of the link rate, B_req within 5% of the rate the
# uncontended workers (n = 1, 2) measured themselves (and those within 10%
# of the cap), and each worker's B_wk within 5% of the goodput the worker
# measured itself; the fitted P(n) = min(a*sqrt(n) - b, 1) and the spotDNN
# export are printed.
#
# The hosts: the PS in its own namespace, its egress (tlsd's interface)
# into a bridge in a third namespace, each worker in a namespace of its own
# behind the bridge, with a tbf at the cap on the bridge port toward it
# (so a worker's TCP gets exactly the cap, counted as HTB counts: frames
# with their headers). 40 Mbit/s: two workers (80) leave the link below
# tlsd's saturation threshold (90%), three (120) contend; n * B_req crosses
# the link rate between n = 2 and n = 4. The workers keep their receive
# window small (16 KB of buffer): the bytes in flight stay a few ms of
# their rate, so that what leaves the PS (which tlsd counts) and what
# reaches the worker (its goodput) are the same stretch of time.
#
# The traffic (a pull protocol, as ps-lite's: the worker asks for S bytes,
# the PS sends them): n = 1 and 2 pull back to back (uncontended: B_req);
# n = 4 and 8 alternate a pull of 3 MB (about 0.6 s alone) with 0.3 to
# 0.8 s of "computation", each at its own random phase, so that the link
# is contended only while three or more pull at once: P < 1, growing with
# n, which is what spotDNN's P(n) describes. Pauses stay under tlsd's 1 s
# window for workers active together, so n is the phase's n throughout.
#
# Each worker reports its goodput: payload bytes over the time from the
# first to the last byte of each pull. tlsd counts bytes on the wire, so
# the goodput is converted with the connection's segment size (MSS
# payload in MTU + 14 bytes of frame) before the comparison.
. "$(dirname "$0")/lib.sh"

TLSD="$BIN/tlsd"
CTL="$BIN/tlsctl"
[ -x "$TLSD" ] && [ -x "$CTL" ] || fail "$TLSD or $CTL not built"
command -v python3 >/dev/null 2>&1 || skip "python3 is needed for the workers and the checks"

LINK_MBIT=100
CAP_MBIT=40
NWK=8
PORT=9000
SOCK="$TMPD/tlsd.sock"

# --- the hosts (lib.sh's wk_testbed) ---
wk_testbed $NWK $CAP_MBIT

# --- tlsd: one static PS job on port 9000, the link at 100 Mbit/s ---
cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "${LINK_MBIT}mbit";
policy = "fifo";
bands = 1;
control_socket = "$SOCK";
discovery = { enabled = false; };
jobs = ( { name = "ps"; ports = [ $PORT ]; } );
EOC
start_tlsd "$TMPD/tlsd.conf"
ctl() { "$CTL" -s "$SOCK" "$@"; }

# --- the PS and the workers: pulls of S bytes ---
cat >"$TMPD/pull.py" <<'EOF'
# ps ADDR PORT: serve pulls (8-byte big-endian size, then that many bytes)
# worker ADDR PORT SECONDS SIZE OFF_MIN OFF_MAX SEED: pull SIZE bytes,
# pause OFF_MIN..OFF_MAX s (0 0: back to back), until SECONDS are up; then
# print its endpoint, goodput bytes and time, and the connection's MSS.
import json, random, socket, struct, sys, threading, time

def ps(addr, port):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(64)
    print("ready", flush=True)
    buf = memoryview(bytes(1 << 20))

    def serve(c):
        with c:
            while True:
                h = b""
                while len(h) < 8:
                    d = c.recv(8 - len(h))
                    if not d:
                        return
                    h += d
                (n,) = struct.unpack("!Q", h)
                while n:
                    k = min(n, len(buf))
                    c.sendall(buf[:k])
                    n -= k

    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()

def worker(addr, port, secs, size, off_min, off_max, seed):
    rnd = random.Random(seed)
    end = time.monotonic() + secs
    # a phase of its own (within 0.3 s, so that the workers of a phase are
    # all in before the others have much to report under a smaller n);
    # before connecting, so that the first pull follows the connection's
    # first packets (the PS's SYN-ACK) at once
    if off_max > 0:
        time.sleep(rnd.uniform(0, 0.3))
    s = socket.socket()
    # a small receive window: what is in flight stays a few ms of the rate
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    s.settimeout(20)
    s.connect((addr, port))
    buf = bytearray(1 << 20)
    good = 0
    active = 0.0
    pulls = 0
    while True:
        s.sendall(struct.pack("!Q", size))
        got = 0
        while got < size:
            n = s.recv_into(buf)
            if not n:
                sys.exit("the PS closed the connection")
            t = time.monotonic()
            if not got:
                t1, first = t, n
            got += n
        # the bytes after the first read, over the time since it
        good += got - first
        active += t - t1
        pulls += 1
        # done: close at once, so that the connection's last packets (the
        # PS's FIN) follow its last pull's
        if time.monotonic() >= end:
            break
        if off_max > 0:
            time.sleep(rnd.uniform(off_min, off_max))
    local = "%s:%d" % s.getsockname()
    mss = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
    s.close()
    print(json.dumps({"local": local, "bytes": good, "active_s": active, "pulls": pulls,
                      "mss": mss}))

if sys.argv[1] == "ps":
    ps(sys.argv[2], int(sys.argv[3]))
else:
    a = sys.argv[2:]
    worker(a[0], int(a[1]), float(a[2]), int(a[3]), float(a[4]), float(a[5]), int(a[6]))
EOF
bg_ps "$TMPD/ps.log" python3 "$TMPD/pull.py" ps $PS4 $PORT
wait_line "$TMPD/ps.log" 5 "^ready" || fail "the PS did not start: $(cat "$TMPD/ps.log")"

# phase N SECONDS SIZE OFF_MIN OFF_MAX: N workers at once, until all are done
phase() {
	n=$1
	if [ "$5" = 0 ]; then
		info "n = $n: pulls of $(($3 / 1000000)) MB back to back for $2 s"
	else
		info "n = $n: pulls of $(($3 / 1000000)) MB, $4 to $5 s apart, for $2 s"
	fi
	pids=""
	i=1
	while [ $i -le "$n" ]; do
		nsenter --net="/run/netns/${PFX}w$i" -- python3 "$TMPD/pull.py" worker $PS4 $PORT \
			"$2" "$3" "$4" "$5" "$n$i" >"$TMPD/wk.$n.$i" 2>&1 &
		pids="$pids $!"
		PIDS="$PIDS $!"
		i=$((i + 1))
	done
	for p in $pids; do
		wait "$p" || fail "worker (n = $n) failed: $(cat "$TMPD"/wk.$n.*)"
	done
	# the workers of this phase leave tlsd's 1 s group window before the
	# next phase starts, so that n is the next phase's from its start
	sleep 1.3
}
T0=$(date +%s)
phase 1 4 4000000 0 0
phase 2 4 4000000 0 0
phase 4 12 3000000 0.3 0.8
phase 8 12 3000000 0.3 0.8
# absolute counters of the PS's new namespace; -s: no history file written
info "traffic: $(($(date +%s) - T0)) s; TCP segments the PS retransmitted:" \
	"$(in_ps nstat -asz TcpRetransSegs 2>/dev/null | awk '/TcpRetransSegs/ { print $2 }')"
ours "$TLSD_PID" || fail "tlsd died: $(tail -5 "$TMPD/tlsd.log")"

# --- what tlsd measured ---
ctl -j stats >"$TMPD/stats.json" || fail "tlsctl stats failed"
ctl calibrate --format json >"$TMPD/calib.json" || fail "tlsctl calibrate failed"
ctl calibrate >"$TMPD/calib.txt" 2>&1
sed 's/^/  /' "$TMPD/calib.txt"
# param: a pull (3 MB) on the wire, roughly; test_spotdnn_export.sh checks it
ctl calibrate --format spotdnn --param 3.14M >"$TMPD/spotdnn.py" 2>&1
rc=$?
info "tlsctl calibrate --format spotdnn (exit $rc):"
sed 's/^/    /' "$TMPD/spotdnn.py"
[ $rc -eq 0 ] || fail "the spotDNN export is incomplete (exit $rc)"

python3 - "$TMPD" "$LINK_MBIT" "$CAP_MBIT" "$MTU" <<'EOF' || fail "calibration out of tolerance"
import glob, json, math, sys

d, link_mbit, cap_mbit, mtu = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
TOL = 5.0
st = json.load(open(d + "/stats.json"))
cal = json.load(open(d + "/calib.json"))
bad = []

def check(what, got, want):
    err = 100 * (got / want - 1)
    ok = abs(err) <= TOL
    print("  %-44s %8.3f MB/s, want %8.3f: %+5.2f%% %s" % (what, got / 1e6, want / 1e6, err,
                                                         "ok" if ok else "FAIL"))
    if not ok:
        bad.append(what)

link = cal["link"]
if not link["b_ps_measured"]:
    bad.append("B_ps was not measured (the link never saturated for 1 s)")
check("B_ps (the link while saturated, %.1f s)" % link["sat_s"], link["b_ps_Bps"],
      link_mbit * 1e6 / 8)

flows = {f["remote"]: f for f in st["flows"]}
worst = 0.0
unc_bytes = unc_s = 0.0 # the uncontended workers' (n = 1, 2) own wire bytes and time
for fn in sorted(glob.glob(d + "/wk.*"), key=lambda f: [int(x) for x in f.split(".")[-2:]]):
    n, i = fn.split(".")[-2:]
    w = json.loads(open(fn).read().strip().splitlines()[-1])
    f = flows.get(w["local"])
    if not f:
        bad.append("no flow for worker %s" % w["local"])
        continue
    goodput = w["bytes"] / w["active_s"]
    # payload per segment (MSS) in a frame of MTU + 14 bytes, as HTB counts
    wire = goodput * (mtu + 14) / w["mss"]
    if n in ("1", "2"):
        unc_bytes += wire * w["active_s"]
        unc_s += w["active_s"]
    err = 100 * (f["b_wk_Bps"] / wire - 1)
    worst = max(worst, abs(err))
    ok = abs(err) <= TOL
    print("  n=%s worker %s %-18s goodput %5.2f Mbit/s (%5.2f on the wire) over %5.2f s, "
          "B_wk %5.2f Mbit/s over %5.2f s: %+5.2f%% %s"
          % (n, i, w["local"], goodput * 8e-6, wire * 8e-6, w["active_s"], f["b_wk_Bps"] * 8e-6,
             f["active_s"], err, "ok" if ok else "FAIL"))
    if not ok:
        bad.append("B_wk of worker %s (n=%s)" % (w["local"], n))
print("  B_wk against the workers' goodput: worst %.2f%%" % worst)
# B_req is the workers' rate while nothing contends: what they measured
# themselves alone (n = 1, 2), not the tbf's nominal cap, which TCP
# behind a 16 KB receive buffer reaches to within a few percent depending
# on the run (it ran 4.8% below it in a CI run); that the scenario holds,
# the workers near their cap, is checked apart with a looser bound.
if not unc_s:
    bad.append("no uncontended worker measured its goodput")
else:
    check("B_req (the host's, at the smallest n)", cal["b_req_Bps"], unc_bytes / unc_s)
    near = 100 * (unc_bytes / unc_s / (cap_mbit * 1e6 / 8) - 1)
    print("  the uncontended workers against their %.0f Mbit/s cap: %+5.2f%% (within 10%%)"
          % (cap_mbit, near))
    if abs(near) > 10:
        bad.append("the uncontended workers were not near their cap (%+.1f%%)" % near)

print("  observations: n, active s, B_wk MB/s, unsaturated s and MB/s, P direct, P solved, use")
fmt = lambda v: "   -  " if v is None else "%6.3f" % v
for o in cal["observations"]:
    u = o["unsat_active_s"]
    print("    n=%d %7.2f %s %7.2f %s %s %s  %s"
          % (o["n"], o["active_s"], fmt(o["b_wk_Bps"] and o["b_wk_Bps"] / 1e6), u,
             fmt(o["unsat_bytes"] / u / 1e6 if u else None), fmt(o["p_direct"]),
             fmt(o["p_solved"]), o["use"]))
used = sorted(o["n"] for o in cal["observations"] if o["used"])
fit = cal["fit"]
if not fit["ok"]:
    bad.append("no fit: %s" % fit["error"])
else:
    a, b = fit["a"], fit["b"]
    print("  fit of P solved over n = %s: P(n) = min(%.4f*sqrt(n) - %.4f, 1), rms %.3g" %
          (used, a, b, fit["rms"]))
    print("  " + "  ".join("P(%d)=%.3f" % (n, min(a * math.sqrt(n) - b, 1)) for n in range(1, 9)))
if 4 not in used or 8 not in used:
    bad.append("the contended phases (n = 4, 8) are not both in the fit: %s" % used)
if bad:
    print("FAIL: " + "; ".join(bad))
    sys.exit(1)
EOF
echo "PASS: B_ps, B_req and every worker's B_wk within 5% on real traffic (n = 1, 2, 4, 8), P(n) fitted"
