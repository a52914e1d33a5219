#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Issue 17, Deliver 4: a cluster of two PS hosts, each behind its own link
# and its own tlsd (40 and 60 Mbit/s), one worker host pulling from both
# (the parameters sharded over the two, as ps-lite's servers hold key
# ranges). Each tlsd measures its own B_ps; `tlsctl calibrate --merge` of
# their two `tlsctl -j calibrate` exports must give the cluster's B_ps:
# the sum of the two within 2%, each near its link rate (within 10%: the
# accuracy of one host's B_ps is test_calibrate's), the merged observations
# those at the n both saw with B_wk the sum, and bad input refused with a
# message naming it.
. "$(dirname "$0")/lib.sh"

TLSD="$BIN/tlsd"
CTL="$BIN/tlsctl"
[ -x "$TLSD" ] && [ -x "$CTL" ] || fail "$TLSD or $CTL not built"
command -v python3 >/dev/null 2>&1 || skip "python3 is needed for the traffic and the checks"

NS2="${PFX}q2"
IF2="${PFX}p2"
PS2_4=198.18.1.1
WK2_4=198.18.1.2
PORT=9000
ns_setup
ns_add "$NS2"
instance_add "$IF2" "$NS2"
ip link add "$IF2" netns "$NS2" type veth peer name "${PFX}w2" netns "$NS_WK" &&
	ip -n "$NS2" addr add $PS2_4/24 dev "$IF2" && ip -n "$NS2" link set lo up &&
	ip -n "$NS2" link set "$IF2" up &&
	in_wk ip addr add $WK2_4/24 dev "${PFX}w2" && in_wk ip link set "${PFX}w2" up ||
	fail "cannot build the second PS host"

# --- two tlsd, one per PS host, each with its link rate ---
for h in 1 2; do
	rate=40
	ifc=$IF_PS
	[ $h = 2 ] && rate=60 && ifc=$IF2
	cat >"$TMPD/tlsd$h.conf" <<EOC
interface = "$ifc";
link_rate = "${rate}mbit";
policy = "fifo";
bands = 1;
control_socket = "$TMPD/tlsd$h.sock";
discovery = { enabled = false; };
jobs = ( { name = "ps"; ports = [ $PORT ]; } );
EOC
done
start_tlsd -l "$TMPD/tlsd1.log" "$TMPD/tlsd1.conf"
start_tlsd -n "$NS2" -l "$TMPD/tlsd2.log" "$TMPD/tlsd2.conf"

# --- each PS serves its shard without end; the worker pulls from both ---
cat >"$TMPD/shard.py" <<'PYEOF'
# ps ADDR PORT: send to each connection until it closes
# wk SECONDS ADDR... : 3 connections to each PS ADDR:9000, read for SECONDS
import socket, sys, threading, time
if sys.argv[1] == "ps":
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((sys.argv[2], int(sys.argv[3])))
    ls.listen(16)
    print("ready", flush=True)
    buf = bytes(1 << 16)
    def serve(c):
        try:
            while True:
                c.sendall(buf)
        except OSError:
            pass
    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
else:
    end = time.monotonic() + float(sys.argv[2])
    def pull(a):
        s = socket.create_connection((a, 9000), timeout=10)
        while time.monotonic() < end:
            if not s.recv(1 << 16):
                break
        s.close()
    ts = [threading.Thread(target=pull, args=(a,)) for a in sys.argv[3:] for _ in range(3)]
    for t in ts: t.start()
    for t in ts: t.join()
    print("done", flush=True)
PYEOF
bg_ps "$TMPD/ps1.log" python3 "$TMPD/shard.py" ps $PS4 $PORT
nsenter --net="/run/netns/$NS2" -- python3 "$TMPD/shard.py" ps $PS2_4 $PORT >"$TMPD/ps2.log" 2>&1 &
PIDS="$PIDS $!"
wait_line "$TMPD/ps1.log" 10 ready && wait_line "$TMPD/ps2.log" 10 ready ||
	fail "the PS servers did not start: $(cat "$TMPD/ps1.log" "$TMPD/ps2.log")"
bg_wk "$TMPD/wk.log" python3 "$TMPD/shard.py" wk 4 $PS4 $PS2_4
wait_line "$TMPD/wk.log" 20 done || fail "the worker did not finish: $(cat "$TMPD/wk.log")"

for h in 1 2; do
	"$CTL" -s "$TMPD/tlsd$h.sock" -j calibrate ps >"$TMPD/c$h.json" ||
		fail "calibrate on PS host $h: $(cat "$TMPD/c$h.json")"
done
"$CTL" -j calibrate --merge "$TMPD/c1.json" "$TMPD/c2.json" >"$TMPD/m.json" 2>"$TMPD/m.err" ||
	fail "--merge: $(cat "$TMPD/m.err")"
"$CTL" calibrate --merge "$TMPD/c1.json" "$TMPD/c2.json" | sed 's/^/  /'

python3 - "$TMPD/c1.json" "$TMPD/c2.json" "$TMPD/m.json" <<'PYEOF' || fail "the merged B_ps"
import json, sys
c1, c2, m = (json.load(open(p)) for p in sys.argv[1:])
links = [40e6 / 8, 60e6 / 8]
ok = True
for c, l, h in ((c1, links[0], 1), (c2, links[1], 2)):
    b = c["link"]["b_ps_Bps"]
    print("  PS host %d: B_ps %.4f MB/s (%s), link %.4f MB/s" %
          (h, b / 1e6, "measured" if c["link"]["b_ps_measured"] else "configured", l / 1e6))
    if not c["link"]["b_ps_measured"] or abs(b - l) > 0.10 * l:
        print("  FAIL: host %d's B_ps not measured within 10%% of its link" % h); ok = False
s = c1["link"]["b_ps_Bps"] + c2["link"]["b_ps_Bps"]
b = m["link"]["b_ps_Bps"]
print("  merged: B_ps %.4f MB/s, sum of the two %.4f MB/s (%.3f%%), spotdnn bps %.4f" %
      (b / 1e6, s / 1e6, 100 * (b - s) / s, m["spotdnn"]["bps"]))
if abs(b - s) > 0.02 * s or not m["link"]["b_ps_measured"]:
    print("  FAIL: merged B_ps is not the sum within 2%"); ok = False
if [h["file"] for h in m["merged"]] != sys.argv[1:3]:
    print("  FAIL: \"merged\" does not list the two exports"); ok = False
n1 = {o["n"] for o in c1["observations"] if o["use"] != "another job"}
n2 = {o["n"] for o in c2["observations"] if o["use"] != "another job"}
nm = [o["n"] for o in m["observations"]]
print("  observations: host 1 n %s, host 2 n %s, merged n %s" % (sorted(n1), sorted(n2), nm))
if sorted(n1 & n2) != nm:
    print("  FAIL: merged observations are not those at the n both hosts saw"); ok = False
for o in m["observations"]:
    w = sum(x["b_wk_Bps"] for c in (c1, c2) for x in c["observations"] if x["n"] == o["n"])
    if abs(o["b_wk_Bps"] - w) > 1e-6 * w:
        print("  FAIL: merged B_wk at n = %d is not the sum" % o["n"]); ok = False
sys.exit(0 if ok else 1)
PYEOF

# --- bad input: named ---
echo '{"job": 0}' >"$TMPD/bad.json"
expect 2 '"source": missing' "$CTL" calibrate --merge "$TMPD/c1.json" "$TMPD/bad.json"
expect 2 'not a JSON file' "$CTL" calibrate --merge "$TMPD/nonexistent.json"
expect 2 'needs the FILEs' "$CTL" calibrate --merge
sed 's/"source":"solved"/"source":"direct"/; s/"source": "solved"/"source": "direct"/' \
	"$TMPD/c2.json" >"$TMPD/c2d.json"
expect 2 'calibrate all with one --source' "$CTL" calibrate --merge "$TMPD/c1.json" "$TMPD/c2d.json"
echo "PASS"
