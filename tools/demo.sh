#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make demo`: tlsd schedules three emulated PS jobs that share a PS host's
# 200 Mbit/s egress with an ordinary sender (network namespaces, veth, TCP).
# tlsd runs with its policy switched live through SIGHUP:
#   fifo        no priorities: the jobs share the link
#   one         TensorLights-One: the first job gets the link
#   roundrobin  TensorLights-RoundRobin, every 2 s: the jobs take turns
# Each job's throughput per second comes from the classifier's counters.
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/tests/ns/lib.sh"

PHASE_SECS=${PHASE_SECS:-6}
TLSD="$BIN/tlsd"

ns_setup
conf() {	# conf POLICY
	cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "200mbit";
policy = "$1";
interval = "2s";
bands = 3;
jobs = (
	{ name = "resnet"; ports = [ 9001 ]; },
	{ name = "bert"; ports = [ 9002 ]; },
	{ name = "vgg"; ports = [ 9003 ]; }
);
EOC
}
conf fifo
bg_ps "$TMPD/tlsd.log" "$TLSD" -f -v -c "$TMPD/tlsd.conf"
TLSD_PID=$LAST
wait_line "$TMPD/tlsd.log" 10 "^ready" || fail "tlsd did not start: $(cat "$TMPD/tlsd.log")"

# Three PSes (one per job), each pushing model updates to two workers that
# pull; and an ordinary sender, paced to 20 Mbit/s.
for j in 1 2 3; do
	bg_ps "$TMPD/ps$j" "$EMU" ps -l $PS4:900$j
	wait_line "$TMPD/ps$j" 5 "ready" || fail "PS $j did not start"
	bg_wk "$TMPD/pull$j" "$EMU" pull -c $PS4:900$j -c $PS4:900$j
done
bg_wk "$TMPD/sink" "$EMU" sink -l $WK4:7000
bg_ps "$TMPD/other" "$EMU" ps -c $WK4:7000 -r 20

snap() { echo "$(job_stat 1 bytes) $(job_stat 2 bytes) $(job_stat 3 bytes) $(job_stat 0 bytes)"; }
bands() { echo "$(job_stat 1 band)/$(job_stat 2 band)/$(job_stat 3 band)"; }
phase() {	# phase POLICY
	conf "$1"
	kill -HUP "$TLSD_PID"
	sleep 0.2
	echo "policy $1"
	s=0
	prev=$(snap)
	while [ $s -lt "$PHASE_SECS" ]; do
		sleep 1
		cur=$(snap)
		echo "$prev $cur" | awk -v t=$((s + 1)) -v b="$(bands)" '{
			printf "  t+%ds  resnet %6.1f  bert %6.1f  vgg %6.1f  other %5.1f Mbit/s   bands %s\n",
				t, ($5 - $1) * 8 / 1e6, ($6 - $2) * 8 / 1e6, ($7 - $3) * 8 / 1e6,
				($8 - $4) * 8 / 1e6, b }'
		prev=$cur
		s=$((s + 1))
	done
}

echo "tlsd demo: 3 PS jobs + ordinary traffic through 200 Mbit/s on $IF_PS"
echo "(bands: resnet/bert/vgg, 0 = highest priority)"
phase fifo
phase one
phase roundrobin
echo
echo "classifier counters (tls-classifier stats):"
cls stats 0 1 2 3
echo
echo "HTB classes built by tlsd (715d:10.. bands, 715d:ff default):"
in_ps tc -s class show dev "$IF_PS" | awk '/^class/ { c = $3 } /Sent/ { printf "  %-8s %12s bytes\n", c, $2 }'
kill -TERM "$TLSD_PID"
wait_pid "$TLSD_PID" 10
echo
echo "tlsd stopped; $IF_PS is back to: $(in_ps tc qdisc show dev "$IF_PS" | head -1)"
