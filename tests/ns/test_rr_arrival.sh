#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Roundrobin from the clock (bpf/tls_rr.h): a discovered job arriving keeps
# the turn in progress. Two static jobs on three bands, a turn of 3 s; the
# leader is read from the classifier's maps mid-turn, then, two turns later
# (the same job leads again) and without anything asking tlsd meanwhile, a
# PS found by discovery's dmlc rule arrives: the leader must be the turn's
# (the same job, or the other if discovery took past the turn's end). tlsd counts the steps since its last reading when it writes the new
# order; counted among three jobs instead of the two they were taken
# among, they handed the lead to another job (helper-19's review).
. "$(dirname "$0")/lib.sh"

ns_setup
cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "100mbit";
policy = "roundrobin";
interval = "3s";
bands = 3;
control_socket = "$TMPD/tlsd.sock";
jobs = ( { name = "a"; ports = [ 9001 ]; }, { name = "b"; ports = [ 9002 ]; } );
discovery = { rescan = "1s"; };
EOC
start_tlsd -N "$NS_PS" "$TMPD/tlsd.conf"
leader() {	# the id of the job in band 0 (ids 1..3), or none
	for j in 1 2 3; do
		[ "$(job_stat $j band)" = 0 ] && { echo $j; return; }
	done
	echo none
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# a turn's start: the leader changes (at most one 3 s turn away)
l=$(leader) i=0
while [ "$(leader)" = "$l" ]; do
	[ $i -lt 90 ] || fail "no rotation in 4.5 s"
	sleep 0.05
	i=$((i + 1))
done
t0=$(now_ms)
sleep 0.2
l0=$(leader)
[ "$l0" = 1 ] || [ "$l0" = 2 ] || fail "the leader is $l0, not job a or b"
sleep 6	# two turns: the same job leads again
bg_ps "$TMPD/ps" env DMLC_ROLE=server DMLC_PS_ROOT_URI=$PS4 DMLC_PS_ROOT_PORT=9600 \
	"$EMU" ps -l $PS4:9600 -t 30
wait_line "$TMPD/tlsd.log" 3 "PS pid $LAST .*found by rule dmlc" ||
	fail "the PS was not found within 3 s: $(tail -3 "$TMPD/tlsd.log")"
l1=$(leader)
el=$(($(now_ms) - t0))
# the leader of the turn the arrival came in: job l0 two turns on, the
# other static job three turns on (the arrival keeps it either way); an
# arrival within 0.3 s of a turn's end or start proves nothing
in=$((el % 3000))
[ $in -ge 300 ] && [ $in -le 2700 ] || skip "the arrival came $in ms into a turn: too near its edge to tell"
want=$l0
[ $((el / 3000 % 2)) -eq 1 ] && want=$((3 - l0))
info "job $l0 leads; $el ms later a discovered job arrives, $in ms into a turn: job $l1 leads (job $want should)"
[ "$l1" = "$want" ] || fail "the arrival handed the lead from job $want to job $l1"
echo "PASS: a discovered job's arrival keeps roundrobin's turn in progress"
