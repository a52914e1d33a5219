#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Observe mode (mode = "observe"; or --observe): tlsd classifies and counts
# but never touches the root qdisc, builds no HTB tree and steers no packet.
#
# The user's root qdisc is a pfifo of its own limit. DSCP marking is on in
# the file: a scheduling classifier would mark the jobs' packets (AF41,
# AF31); a sniffer on the worker's side counts the marks that arrive. (That
# skb->priority stays as the socket set it is the BPF tier's
# test_observe: no qdisc here looks at it.)
#
#  a. --check-config names the mode; a bad mode is named;
#  b. start in observe mode: the root qdisc exactly as before, clsact with
#     the filter only, no HTB; a deleted clsact is rebuilt, the root left;
#  c. each job's bytes as the classifier counts them (frames with headers)
#     within 3% of the payload sent plus 66 bytes per segment (retransmits
#     count too), and jobs plus the unclassified counter within 1% of what
#     the root qdisc sent;
#     no job packet arrives with a DSCP mark;
#  d. tlsctl status and policy say observe; switching the policy live is
#     refused with the reason; a reload into schedule mode is refused;
#     the statistics (B_wk per worker), calibrate and metrics answer;
#  e. after kill -9 a new start takes the counters over; SIGTERM: the
#     root qdisc as before, no clsact, no filter, no pins;
#  f. over the HTB tree of a scheduling tlsd killed with -9, observe mode
#     puts the user's qdisc back first;
#  g. over the pins of an observing tlsd killed with -9, a scheduling start
#     takes the counters over; at exit the user's qdisc is back.
. "$(dirname "$0")/lib.sh"

TLSD="$BIN/tlsd"
CTL="$BIN/tlsctl"
SOCK="$TMPD/tlsd.sock"
BYTES=30000000	# per job: 30 MB, about a second on a veth
ns_setup
qdiscs() { in_ps tc qdisc show dev "$IF_PS"; }
ctl() { "$CTL" -s "$SOCK" "$@"; }
conf() {	# conf MODE [EXTRA_LINE]
	cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "1gbit";
mode = "$1";
policy = "one";
bands = 2;
dscp = true;
stats_period = "50ms";
control_socket = "$SOCK";
discovery = { enabled = false; };
jobs = ( { name = "a"; ports = [ 9001 ]; }, { name = "b"; ports = [ 9002 ]; } );
${2:-}
EOC
}
root_sent() { in_ps tc -s qdisc show dev "$IF_PS" | awk '/^qdisc pfifo 5:/ { r = 1 } r && /Sent/ { print $2; exit }'; }
job_field() {	# job_field NAME FIELD, from tlsctl -j jobs
	ctl -j jobs | python3 -c 'import json, sys
for j in json.load(sys.stdin)["jobs"]:
    if j["name"] == sys.argv[1]: print(j[sys.argv[2]])' "$1" "$2"
}

in_ps tc qdisc add dev "$IF_PS" root handle 5: pfifo limit 777 || fail "cannot add the user's pfifo"
BEFORE=$(qdiscs)
# sniff.py IF SECONDS: the IPv4 TCP frames from ports 9001 and 9002 that
# arrive on IF, and how many carry a DSCP mark
cat >"$TMPD/sniff.py" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
s.bind((sys.argv[1], 0))
s.settimeout(0.2)
print("listening", flush=True)
end, frames, marked = time.time() + float(sys.argv[2]), 0, 0
while time.time() < end:
    try:
        f = s.recv(128)
    except socket.timeout:
        continue
    ihl = (f[14] & 0x0f) * 4
    if f[23] != 6 or int.from_bytes(f[14 + ihl:16 + ihl], "big") not in (9001, 9002):
        continue
    frames += 1
    marked += (f[15] >> 2) != 0
print("frames=%d marked=%d" % (frames, marked), flush=True)
EOF

# a. the mode in --check-config
conf observe
expect 0 "^configuration OK: .*, mode observe$" "$TLSD" --check-config -c "$TMPD/tlsd.conf"
conf watch
expect 1 "mode: 'watch' is not one of schedule, observe" \
	"$TLSD" --check-config -c "$TMPD/tlsd.conf"
conf schedule
expect 0 "^configuration OK: .*, mode observe$" "$TLSD" --check-config --observe -c "$TMPD/tlsd.conf"

# b. observe mode, from the file: nothing replaced (no --replace-qdisc needed)
conf observe
start_tlsd "$TMPD/tlsd.conf"
grep -q "observing $IF_PS" "$TMPD/tlsd.log" || fail "no word of observing: $(cat "$TMPD/tlsd.log")"
NOW=$(qdiscs)
[ "$(echo "$NOW" | grep -v clsact)" = "$BEFORE" ] ||
	fail "the root qdisc changed: before '$BEFORE', now '$NOW'"
echo "$NOW" | grep -q htb && fail "an HTB qdisc in observe mode: $NOW"
in_ps tc filter show dev "$IF_PS" egress | grep -q "bpf.*tls_classify" ||
	fail "the classifier is not attached: $(in_ps tc filter show dev "$IF_PS" egress)"
info "root qdisc untouched: $(echo "$NOW" | grep root)"
# no class id for the classifier to write into skb->priority (the BPF
# tier's test_observe: with none, the program leaves it as it was)
if command -v bpftool >/dev/null 2>&1; then
	ids=$(bpftool -j map dump pinned "$PIN/tls_bands" | grep -o '"classid":[0-9]*' | sort -u)
	[ "$ids" = '"classid":0' ] || fail "class ids in tls_bands in observe mode: $ids"
	info "tls_bands: no class id ($ids)"
fi
# the filter heals as when scheduling; the root qdisc is not tlsd's to heal
in_ps tc qdisc del dev "$IF_PS" clsact || fail "cannot delete clsact"
wait_line "$TMPD/tlsd.log" 5 "clsact qdisc deleted: rebuilt" ||
	fail "the filter was not rebuilt: $(cat "$TMPD/tlsd.log")"
in_ps tc filter show dev "$IF_PS" egress | grep -q "bpf.*tls_classify" || fail "no filter after the heal"
[ "$(qdiscs | grep -v clsact)" = "$BEFORE" ] || fail "the heal changed the root qdisc: $(qdiscs)"
info "$(grep "clsact qdisc deleted: rebuilt" "$TMPD/tlsd.log")"

# c. traffic of both jobs, and some of no job
bg_wk "$TMPD/sink" "$EMU" sink -l $WK4:7003
bg_ps "$TMPD/psa" "$EMU" ps -l $PS4:9001 -b $BYTES
PA=$LAST
bg_ps "$TMPD/psb" "$EMU" ps -l $PS4:9002 -b $BYTES
PB=$LAST
wait_line "$TMPD/psa" 5 "ready pid=" && wait_line "$TMPD/psb" 5 "ready pid=" ||
	fail "the PSes did not start"
R0=$(root_sent)
bg_wk "$TMPD/sniff" python3 "$TMPD/sniff.py" "$IF_WK" 4
SN=$LAST
wait_line "$TMPD/sniff" 5 listening || fail "the sniffer did not start: $(cat "$TMPD/sniff")"
bg_wk "$TMPD/pulla" "$EMU" pull -c $PS4:9001 -t 20
WA=$LAST
bg_wk "$TMPD/pullb" "$EMU" pull -c $PS4:9002 -t 20
WB=$LAST
bg_ps "$TMPD/other" "$EMU" ps -c $WK4:7003 -b 2000000
PO=$LAST
for p in $WA $WB $PO; do
	wait_pid "$p" 30 || fail "a transfer did not finish"
done
sleep 0.3	# the statistics' last period
rc=0
for j in a b; do
	got=$(job_field $j bytes)
	segs=$(job_field $j segs)
	want=$((BYTES + segs * 66))	# Ethernet 14, IPv4 20, TCP 20 + timestamps 12
	d=$(awk -v a="$got" -v b="$want" 'BEGIN { printf "%.3f", (a - b) * 100 / b }')
	info "job $j: counted $got B in $segs segments; $BYTES B payload + headers = $want B ($d%)"
	# 3%: TCP's retransmissions are on the wire too (a loaded host: 1.1%)
	within "$got" "$want" 3 || { echo "FAIL: job $j counted $got B, expected $want B (3%)"; rc=1; }
done
o=$(ctl -j jobs >/dev/null && "$CLS" -i "$IF_PS" -P "$PIN" -j stats 0 | sed 's/.*"bytes":\([0-9]*\).*/\1/')
sum=$(($(job_field a bytes) + $(job_field b bytes) + o))
sent=$(($(root_sent) - R0))
info "jobs + unclassified: $sum B; the root qdisc sent $sent B"
within "$sum" "$sent" 1 || { echo "FAIL: the classifier counted $sum B, the root qdisc sent $sent B"; rc=1; }
wait_pid "$SN" 10 || fail "the sniffer did not finish"
info "at the worker: $(tail -1 "$TMPD/sniff") (job frames, and those with a DSCP mark)"
grep -q "frames=[1-9][0-9]* marked=0$" "$TMPD/sniff" ||
	{ echo "FAIL: job packets marked, or none seen: $(tail -1 "$TMPD/sniff")"; rc=1; }
[ $rc -eq 0 ] || exit 1
kill "$PA" "$PB" 2>/dev/null

# d. tlsctl: the mode, no policy switch, the statistics
ctl status >"$TMPD/status" || fail "tlsctl status failed"
grep -q "^mode  *observe" "$TMPD/status" || fail "status does not say observe: $(cat "$TMPD/status")"
grep -q "^policy .*not applied: observe mode" "$TMPD/status" ||
	fail "status does not say the policy is not applied: $(cat "$TMPD/status")"
[ "$(ctl -j status | python3 -c 'import json, sys; print(json.load(sys.stdin)["mode"])')" = observe ] ||
	fail "tlsctl -j status: no mode observe"
expect 1 "observe mode: no HTB tree, no policy to set" ctl policy roundrobin
expect 0 "not applied: tlsd observes only" ctl policy
ctl -j stats >"$TMPD/stats.json" || fail "tlsctl stats failed"
python3 - "$TMPD/stats.json" <<'EOF' || fail "no B_wk in the statistics: $(cat "$TMPD/stats.json")"
import json, sys
s = json.load(open(sys.argv[1]))
wk = [f for f in s["flows"] if f["job"] in (1, 2)]
assert len(wk) >= 2, "fewer than 2 worker flows of jobs a and b"
assert min(f["bytes"] for f in wk) > 0, "a worker flow without bytes"
assert max(f["b_wk_Bps"] or 0 for f in wk) > 0, "B_wk all zero"
print("  statistics: %d worker flows, B_wk up to %.0f Mbit/s" %
      (len(wk), max(f["b_wk_Bps"] or 0 for f in wk) * 8 / 1e6))
EOF
ctl calibrate >/dev/null || fail "tlsctl calibrate failed in observe mode"
ctl metrics >"$TMPD/metrics" || fail "tlsctl metrics failed in observe mode"
grep -q '^tlsd_info{.*mode="observe"} 1$' "$TMPD/metrics" ||
	fail "tlsd_info has no mode=\"observe\": $(grep tlsd_info "$TMPD/metrics")"
grep -q "^tlsd_job_bytes_total{job=\"a\"" "$TMPD/metrics" ||
	fail "no job bytes in the metrics: $(head -50 "$TMPD/metrics")"
conf schedule
kill -HUP "$TLSD_PID"
wait_line "$TMPD/tlsd.log" 5 "reload refused: the mode cannot change (observe -> schedule)" ||
	fail "a reload into schedule mode was not refused: $(cat "$TMPD/tlsd.log")"
[ "$(qdiscs | grep -v clsact)" = "$BEFORE" ] || fail "the refused reload changed the qdiscs: $(qdiscs)"

# e. killed with -9, the next observing start takes the counters over;
# SIGTERM then leaves nothing behind
A1=$(job_field a bytes)
stop_tlsd -KILL
conf observe
start_tlsd "$TMPD/tlsd.conf"
A2=$(job_field a bytes)
[ "$A2" -ge "$A1" ] && [ "$A1" -gt "$BYTES" ] ||
	fail "job a's counter not taken over: $A1 B before kill -9, $A2 B after"
[ "$(qdiscs | grep -v clsact)" = "$BEFORE" ] || fail "the takeover changed the qdiscs: $(qdiscs)"
info "after kill -9 and a new start: job a $A2 B (was $A1 B)"
stop_tlsd
[ "$(qdiscs)" = "$BEFORE" ] || fail "after SIGTERM: '$(qdiscs)', before: '$BEFORE'"
[ -z "$(in_ps tc filter show dev "$IF_PS" egress)" ] || fail "a filter left on egress"
[ -d "$PIN" ] && fail "pins left after SIGTERM: $(ls "$PIN")"
info "after SIGTERM: $(qdiscs)"

# f. a scheduling tlsd killed with -9, then observe mode
conf schedule
start_tlsd "$TMPD/tlsd.conf" --replace-qdisc
qdiscs | grep -q "htb 715d: root" || fail "no HTB tree when scheduling: $(qdiscs)"
stop_tlsd -KILL
start_tlsd "$TMPD/tlsd.conf" --observe
grep -q "holds the HTB tree of a tlsd that scheduled it: observe mode restores" "$TMPD/tlsd.log" ||
	fail "the scheduling run's tree was not named: $(cat "$TMPD/tlsd.log")"
[ "$(qdiscs | grep -v clsact)" = "$BEFORE" ] || fail "the user's qdisc is not back: $(qdiscs)"
stop_tlsd
[ "$(qdiscs)" = "$BEFORE" ] || fail "after the second SIGTERM: $(qdiscs)"
[ -d "$PIN" ] && fail "pins left after the second SIGTERM"

# g. an observing tlsd killed with -9, then scheduling: the counters go on
start_tlsd "$TMPD/tlsd.conf" --observe
bg_ps "$TMPD/psg" "$EMU" ps -l $PS4:9001 -b 5000000
wait_line "$TMPD/psg" 5 "ready pid=" || fail "the PS did not start"
bg_wk "$TMPD/pullg" "$EMU" pull -c $PS4:9001 -t 20
wait_pid "$LAST" 30 || fail "the transfer did not finish"
G1=$(job_field a bytes)
stop_tlsd -KILL
start_tlsd "$TMPD/tlsd.conf" --replace-qdisc
G2=$(job_field a bytes)
[ "$G1" -gt 5000000 ] && [ "$G2" -ge "$G1" ] ||
	fail "job a's counter not taken over by the scheduling start: $G1 B, then $G2 B"
qdiscs | grep -q "htb 715d: root" || fail "no HTB tree when scheduling: $(qdiscs)"
info "observing run killed, scheduling start: job a $G2 B (was $G1 B), HTB tree built"
stop_tlsd
[ "$(qdiscs)" = "$BEFORE" ] || fail "after the scheduling run: $(qdiscs), before: $BEFORE"
[ -d "$PIN" ] && fail "pins left after the scheduling run"
echo "PASS: observe mode counts as the root qdisc does, steers nothing, leaves the user's root qdisc, refuses a live policy"
