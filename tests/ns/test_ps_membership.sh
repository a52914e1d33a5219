#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A stand-in PS that both accepts connections from workers and opens its own
# connections to the workers' listeners from ephemeral ports: all its
# model-update bytes land in its job's class and counters; a non-PS process
# on the same host lands in the default class.
. "$(dirname "$0")/lib.sh"

BYTES=8000000	# per connection
ns_setup
htb_setup 1gbit 2
cls_attach
cls job 1 0 || fail "job 1 band 0"

bg_wk "$TMPD/sink" "$EMU" sink -l $WK4:7001 -l "[$WK6]:7001" -l $WK4:7002
# The PS listens, then waits: it joins job 1 with its listener already open.
bg_ps "$TMPD/ps" "$EMU" ps -l $PS4:9000 -c $WK4:7001 -c "[$WK6]:7001" -n 2 -b $BYTES -w
PS_PID=$LAST
wait_line "$TMPD/ps" 5 "ready pid=" || fail "PS did not start: $(cat "$TMPD/ps")"
cls process "$PS_PID" 1 >"$TMPD/join" || fail "cannot add the PS to job 1"
info "$(cat "$TMPD/join")"
grep -q "with 1 existing sockets" "$TMPD/join" || fail "expected the PS's listener to be adopted"

# A worker connects to the PS (accepted socket: inherits the listener's job).
bg_wk "$TMPD/pull" "$EMU" pull -c $PS4:9000
PULL_PID=$LAST
sleep 0.3
kill -USR1 "$PS_PID"	# go: dial 4 connections (v4 and v6), send on all 5
# A process that is no PS sends to the same worker host meanwhile.
bg_ps "$TMPD/other" "$EMU" ps -c $WK4:7002 -b $BYTES
OTHER_PID=$LAST

wait_pid "$PULL_PID" 60 || fail "worker pull did not finish"
wait_pid "$OTHER_PID" 60 || fail "non-PS sender did not finish"
i=0
while [ "$(grep -c 'bytes=' "$TMPD/ps" 2>/dev/null)" -lt 1 ] && [ $i -lt 600 ]; do
	# the PS serves its listener until told to stop; stop once all is sent
	[ "$(cls -j flows | grep -o '"job":1' | wc -l)" -ge 5 ] &&
		[ "$(job_stat 1 bytes)" -ge $((5 * BYTES)) ] && break
	sleep 0.1
	i=$((i + 1))
done
sleep 0.5
kill "$PS_PID"
wait_pid "$PS_PID" 10 || fail "PS did not exit"
sleep 0.3

ps_total=$(awk -F'bytes=' '/ps total/ { print $2 }' "$TMPD/ps")
other_total=$(awk -F'bytes=' '/ps total/ { print $2 }' "$TMPD/other")
[ "$ps_total" = $((5 * BYTES)) ] || fail "PS sent $ps_total bytes, expected $((5 * BYTES))"
[ "$other_total" = $BYTES ] || fail "non-PS sent $other_total bytes, expected $BYTES"

job1=$(job_stat 1 bytes)
job0=$(job_stat 0 bytes)
c10=$(class_bytes 1:10)
cff=$(class_bytes 1:ff)
flows=$(cls -j flows | grep -o '"job":1' | wc -l)
info "PS payload $ps_total B: job 1 counted $job1 B, class 1:10 $c10 B, $flows flows"
info "non-PS payload $other_total B: job 0 counted $job0 B, default class 1:ff $cff B"

# Headers add ~4.6% to payload (66 B per 1448 B segment) and a few ACKs.
[ "$job1" -ge "$ps_total" ] || fail "job 1 counted $job1 < PS payload $ps_total"
[ "$job1" -le $((ps_total * 106 / 100 + 100000)) ] ||
	fail "job 1 counted $job1: more than the PS sent ($ps_total) plus headers"
[ "$c10" -ge "$ps_total" ] || fail "class 1:10 got $c10 < PS payload $ps_total"
[ "$c10" -le $((ps_total * 106 / 100 + 100000)) ] ||
	fail "class 1:10 got $c10: non-PS traffic landed in the job's class"
[ "$cff" -ge "$other_total" ] || fail "default class got $cff < non-PS payload $other_total"
[ "$job0" -ge "$other_total" ] || fail "job 0 counted $job0 < non-PS payload $other_total"
[ "$flows" -eq 5 ] || fail "expected 5 flows of job 1 (1 accepted, 4 dialled), saw $flows"
# Per-flow counters: by worker endpoint, and adding up to the job's.
cls -j flows | tr '{' '\n' | grep '"job":1,' >"$TMPD/flows"
v4=$(grep -c "\"worker\":\"$WK4:7001\"" "$TMPD/flows")
v6=$(grep -c "\"worker\":\"\[$WK6\]:7001\"" "$TMPD/flows")
sum=$(sed 's/.*"bytes":\([0-9]*\).*/\1/' "$TMPD/flows" | awk '{ s += $1 } END { print s + 0 }')
info "flows to $WK4:7001: $v4, to [$WK6]:7001: $v6; flow bytes add up to $sum"
[ "$v4" -eq 2 ] && [ "$v6" -eq 2 ] || fail "expected 2 flows to each worker listener"
[ "$sum" -eq "$job1" ] || fail "job 1's flows add up to $sum B, its counter says $job1 B"
echo "PASS: accepted and self-opened PS connections in class 1:10, non-PS in default"
