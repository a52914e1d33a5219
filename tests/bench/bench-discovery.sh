#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make bench-discovery`: tlsd (started first, as a user would) finding PS
# processes by itself (built-in dmlc rule: DMLC_ROLE=server):
#  - from a PS's listen() and from its own connect() to its first packet
#    classified in its job, median and p99 over N launches of each;
#  - from a PS's exit to its job being removed;
#  - tlsd's CPU share while the host runs RATE fork+exec of non-PS programs
#    a second (/bin/true) for SECS seconds.
# Ends with `name: value unit` lines.
. "$(dirname "$0")/../ns/lib.sh"

N=${N:-100}
RATE=${RATE:-500}
SECS=${SECS:-10}
TLSD="$BIN/tlsd"
BD="$BIN/bench-discovery"

ns_setup
cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "1gbit";
policy = "roundrobin";
control_socket = "$TMPD/tlsd.sock";
EOC
bg_host "$TMPD/tlsd.log" "$TLSD" -N "$NS_PS" -f -v -c "$TMPD/tlsd.conf"
TLSD_PID=$LAST
wait_line "$TMPD/tlsd.log" 10 "^ready" || fail "tlsd did not start: $(cat "$TMPD/tlsd.log")"
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
grep -h ': ' "$TMPD/launch" | grep -v '^launches' >"$TMPD/figures"
cat "$TMPD/cpu" >>"$TMPD/figures"
echo "== figures"
cat "$TMPD/figures"
