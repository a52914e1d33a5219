#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make demo`: two emulated PS jobs and one ordinary sender share a PS host's
# 200 Mbit/s egress (network namespaces, veth, HTB). The classifier puts each
# PS's packets into its job's band, and the bands are re-mapped live:
#   fifo: both jobs in one band; one: job 1 leads; rotate: job 2 leads.
# Per-job throughput comes from the classifier's per-job counters.
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/tests/ns/lib.sh"

PHASE_SECS=${PHASE_SECS:-4}
RATE_MBIT=200

ns_setup
htb_setup ${RATE_MBIT}mbit 3
cls_attach
bg_wk "$TMPD/sink" "$EMU" sink -l $WK4:7001 -l $WK4:7002 -l $WK4:7003

start_ps() {	# start_ps JOB PORT: a PS that dials the worker's PORT, 2 flows
	bg_ps "$TMPD/ps$1" "$EMU" ps -c $WK4:$2 -n 2 -w
	eval "PS$1=\$LAST"
	wait_line "$TMPD/ps$1" 5 "ready pid=" || fail "PS $1 did not start"
	cls process "$(eval echo \$PS$1)" "$1" >/dev/null || fail "cannot add PS $1"
	kill -USR1 "$(eval echo \$PS$1)"
}
start_ps 1 7001
start_ps 2 7002
bg_ps "$TMPD/other" "$EMU" ps -c $WK4:7003 -r 20	# 20 Mbit/s of ordinary traffic

snap() { echo "$(job_stat 1 bytes) $(job_stat 2 bytes) $(job_stat 0 bytes)"; }
phase() {
	name=$1 b1=$2 b2=$3
	cls job 1 "$b1" && cls job 2 "$b2" || fail "cannot set bands"
	printf '%-8s job1=band %s job2=band %s\n' "$name" "$b1" "$b2"
	s=0
	prev=$(snap)
	while [ $s -lt "$PHASE_SECS" ]; do
		sleep 1
		cur=$(snap)
		echo "$prev $cur" | awk '{ printf "   t+%ds  job 1 %6.1f Mbit/s   job 2 %6.1f Mbit/s   other %6.1f Mbit/s\n",
			'"$s"' + 1, ($4 - $1) * 8 / 1e6, ($5 - $2) * 8 / 1e6, ($6 - $3) * 8 / 1e6 }'
		prev=$cur
		s=$((s + 1))
	done
}

echo "tlsd demo: 2 PS jobs + ordinary traffic through ${RATE_MBIT} Mbit/s HTB on $IF_PS"
phase fifo 0 0
phase one 0 1
phase rotate 1 0
echo
echo "classifier counters:"
cls stats 0 1 2
echo
echo "HTB classes (1:10 band 0, 1:11 band 1, 1:ff default):"
in_ps tc -s class show dev "$IF_PS" | awk '/^class/ { c = $3 } /Sent/ { printf "   %-5s %s bytes\n", c, $2 }'
