#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A PS that leaves its job mid-transfer (`unprocess`): its live connections
# leave the job's class at once, even when an endpoint of another job shares
# its port (so the classifier consults its flow cache for that port), and
# they are counted as unclassified from then on.
. "$(dirname "$0")/lib.sh"

ns_setup
htb_setup 100mbit 2
cls_attach
cls job 1 0 || fail "job 1"
cls job 2 1 || fail "job 2"
# Another PS's endpoint on the same port, at an address nobody sends from.
cls endpoint 198.18.0.99:9000 2 || fail "endpoint"

bg_ps "$TMPD/ps" "$EMU" ps -l $PS4:9000 -t 6 -w
PS_PID=$LAST
wait_line "$TMPD/ps" 5 "ready pid=" || fail "PS did not start"
cls process "$PS_PID" 1 >/dev/null || fail "cannot add the PS"
bg_wk "$TMPD/pull" "$EMU" pull -c $PS4:9000
sleep 0.3
kill -USR1 "$PS_PID"
sleep 1.5
a1=$(job_stat 1 bytes)
[ "$a1" -gt 1000000 ] || fail "job 1 carried only $a1 B while the PS was a member"
cls unprocess "$PS_PID" >"$TMPD/leave" || fail "unprocess failed"
info "$(cat "$TMPD/leave")"
grep -q "2 sockets untagged" "$TMPD/leave" || fail "expected the listener and the accepted socket untagged"
sleep 0.3	# packets classified before the change may still be queued
b1=$(job_stat 1 bytes)
b0=$(job_stat 0 bytes)
sleep 1.5
c1=$(job_stat 1 bytes)
c0=$(job_stat 0 bytes)
info "job 1: $a1 B as member, +$((c1 - b1)) B in 1.5 s after leaving; unclassified +$((c0 - b0)) B"
[ "$c1" -eq "$b1" ] || fail "job 1 still counts the PS's traffic after it left"
[ $((c0 - b0)) -gt 1000000 ] || fail "the PS's traffic after leaving was not seen as unclassified"
echo "PASS: a PS that leaves its job leaves its class at once"
