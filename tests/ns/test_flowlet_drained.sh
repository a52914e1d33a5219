#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A PS socket's flow changes bands when its socket has nothing queued, not
# when the clock says it was idle. The flowlet gap and hold are both set far
# longer than the run (10 s), so the clock alone would never move the flow
# up; a bursty PS (psemu: one model per iteration, then the worker computes)
# still follows its job's band at the first packet of the burst after each
# change, up (promotion) and down (demotion), because its socket's write
# memory then holds that packet alone; a change that lands mid-burst waits
# (packets held back). Its TCP sees no reordering.
. "$(dirname "$0")/lib.sh"

PSEMU="$BIN/psemu"
[ -x "$PSEMU" ] || fail "no psemu at $PSEMU"
command -v nstat >/dev/null 2>&1 || skip "nstat (iproute2) not installed"

ns_setup
htb_setup 100mbit 2
cls_attach --gap-us 10000000 --hold-ms 10000
cls job 1 1 || fail "job 1"

reorders() {
	in_ps nstat -az TcpExtTCPSACKReorder TcpExtTCPTSReorder TcpExtTCPRenoReorder \
		TcpExtTCPSACKReneging 2>/dev/null | awk '/^TcpExt/ { s += $2 } END { print s + 0 }'
}

bg_ps "$TMPD/ps.log" "$PSEMU" ps -b $PS4 -p 9000 -w 1 -s 1M -n 40 -t 20 -o "$TMPD/ps.json"
PS_PID=$LAST
wait_line "$TMPD/ps.log" 5 "listening" || fail "psemu ps did not start: $(cat "$TMPD/ps.log")"
cls process "$PS_PID" 1 >/dev/null || fail "cannot add the PS to job 1"
r0=$(reorders)
bg_wk "$TMPD/wk.log" "$PSEMU" worker -c $PS4:9000 -C 40 -o "$TMPD/wk.json"
WK_PID=$LAST
# 40 iterations of ~125 ms (~85 ms of model at 100 Mbit/s, 40 ms of
# compute); the job's band flips every 0.3 s meanwhile, so most changes land
# in a burst (held: the socket has packets queued) and the flow follows at
# the next burst's first packet (drained).
i=0
while [ $i -lt 12 ]; do
	sleep 0.3
	cls job 1 $((i % 2)) || fail "band change"
	i=$((i + 1))
done
wait_pid "$WK_PID" 30 || fail "the worker did not finish"
wait_pid "$PS_PID" 10 || fail "the PS did not finish"
grep -q '"complete": *true' "$TMPD/ps.json" || fail "the job failed: $(cat "$TMPD/ps.log")"

p=$(job_stat 1 promotions) d=$(job_stat 1 demotions) h=$(job_stat 1 held)
r=$(($(reorders) - r0))
info "12 band changes: $p promotions, $d demotions, $h packets held; TCP reordering events: $r"
[ "${p:-0}" -ge 3 ] || fail "the flow moved up $p times: promotions waited for the clock"
[ "${d:-0}" -ge 3 ] || fail "the flow moved down only $d times"
[ "${h:-0}" -gt 0 ] || fail "no packet held back: a busy socket counted as drained"
[ "$r" -eq 0 ] || fail "TCP saw $r reordering events"
echo "PASS: a PS flow changes bands when its socket has nothing queued, without reordering"
