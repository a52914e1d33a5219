#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make bench-discovery`: tlsd (started first, as a user would) finding PS
# processes by itself (built-in dmlc rule: DMLC_ROLE=server):
#  - from a PS's listen() and from its own connect() to its first packet
#    classified in its job, median and p99 over N launches of each;
#  - from a PS's exit to its job being removed;
#  - tlsd's CPU share while the host runs RATE fork+exec of non-PS programs
#    a second (/bin/true) for SECS seconds;
#  - HOSTILE (2000) processes of user nobody that a rule matches
#    (DMLC_ROLE=server), under the default trust (root only): tlsd's CPU
#    share while they start and for SECS seconds after, and the time from
#    the start of a root PS to its being scheduled (issue 14).
# Ends with `name: value unit` lines.
. "$(dirname "$0")/../ns/lib.sh"

N=${N:-100}
RATE=${RATE:-500}
SECS=${SECS:-10}
HOSTILE=${HOSTILE:-2000}
BD="$BIN/bench-discovery"

ns_setup
cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "1gbit";
policy = "roundrobin";
control_socket = "$TMPD/tlsd.sock";
EOC
start_tlsd -N "$NS_PS" "$TMPD/tlsd.conf"
bg_wk "$TMPD/sink" "$EMU" sink -l $WK4:7001

echo "== $N PS launches of each kind"
in_ps "$BD" launch "$PIN" "/run/netns/$NS_WK" $PS4 $WK4:7001 "$N" >"$TMPD/launch" ||
	{ cat "$TMPD/launch"; fail "launches failed"; }
cat "$TMPD/launch"
kill -0 "$TLSD_PID" || fail "tlsd died"

cpu() {	# utime + stime of tlsd, in clock ticks
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$TLSD_PID/stat"
}
echo "== tlsd's CPU at $RATE exec/s of non-PS programs, $SECS s"
c0=$(cpu) t0=$(date +%s%N)
"$BD" churn "$RATE" "$SECS" >"$TMPD/churn" || fail "churn failed"
c1=$(cpu) t1=$(date +%s%N)
cat "$TMPD/churn"
hz=$(getconf CLK_TCK)
idle_c0=$(cpu)
sleep "$SECS"
idle_c1=$(cpu)
kill -0 "$TLSD_PID" || fail "tlsd died"
awk -v c=$((c1 - c0)) -v hz="$hz" -v t=$((t1 - t0)) -v i=$((idle_c1 - idle_c0)) -v s="$SECS" 'BEGIN {
	printf "tlsd_cpu_pct_idle: %.2f %%\n", 100 * i / hz / s
	printf "tlsd_cpu_pct_exec_churn: %.2f %%\n", 100 * c / hz / (t / 1e9)
}' | tee "$TMPD/cpu"

echo "== $HOSTILE processes of nobody's that a rule matches, default trust"
NOBODY=$(id -u nobody) || fail "no user nobody"
c0=$(cpu) t0=$(date +%s%N)
bg_nobody_flood "$HOSTILE" 198.18.9.9 120
sleep "$SECS"
c1=$(cpu) t1=$(date +%s%N)
# a root PS now: from its start to the log line that it is scheduled
r0=$(date +%s%N)
bg_ps "$TMPD/rootps" env DMLC_ROLE=server DMLC_PS_ROOT_URI=$PS4 DMLC_PS_ROOT_PORT=9900 \
	"$EMU" ps -l $PS4:9900 -t 30
ROOTPS=$LAST
until grep -q "PS pid $ROOTPS .*found by rule dmlc" "$TMPD/tlsd.log"; do
	[ $(($(date +%s%N) - r0)) -lt 10000000000 ] || fail "root's PS not scheduled in 10 s"
	sleep 0.005
done
r1=$(date +%s%N)
found=$(grep -c "uid $NOBODY) found by rule" "$TMPD/tlsd.log")
kill "$FLOOD" "$ROOTPS"
wait_pid "$FLOOD" 30 || fail "the flood did not end"
kill -0 "$TLSD_PID" || fail "tlsd died"
[ "$found" -eq 0 ] || fail "$found of nobody's processes were scheduled"
awk -v c=$((c1 - c0)) -v hz="$hz" -v t=$((t1 - t0)) -v r=$((r1 - r0)) -v n="$HOSTILE" 'BEGIN {
	printf "tlsd_cpu_pct_hostile_%d: %.2f %%\n", n, 100 * c / hz / (t / 1e9)
	printf "discovery_root_ps_under_flood_ms: %.1f ms\n", r / 1e6
}' | tee -a "$TMPD/cpu"
grep -h ': ' "$TMPD/launch" | grep -v '^launches' >"$TMPD/figures"
cat "$TMPD/cpu" >>"$TMPD/figures"
echo "== figures"
cat "$TMPD/figures"
