#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Issue 14, "/proc reads that cannot stall the loop". Discovery reads a
# trusted process's command line and environment through its memory map,
# which can block for seconds (memory backed by a FUSE file whose server
# does not answer, mmap lock contention). Here the stall shim
# (tests/fault/kernel_refuse.c, TLS_STALL_PROC) makes every read of
# /proc/PID/environ of a process named $COMM sleep until 5 s after the
# first one. tlsd must stay responsive and catch up:
#  1. one PS whose environment stalls: `tlsctl status` answers within
#     300 ms each time it is asked during the stall (it waited out the
#     whole stall while the read ran in the loop), one warning names the
#     late read, and the PS is scheduled soon after the stall ends;
#  2. five such PSes at once: four readers stuck is the bound, the next
#     read is refused and discovery pauses with one warning naming the
#     stuck pids; a PS that does not stall, started during the pause, is
#     scheduled only after it; `tlsctl status` still answers at once; all
#     six are scheduled in the end.
. "$(dirname "$0")/lib.sh"

CTL="$BIN/tlsctl"
SHIM="$BIN/libtls-refuse.so"
[ -f "$SHIM" ] || fail "$SHIM not built"
STALL_MS=5000
FAST_MS=300	# what a `tlsctl status` may take while a read is stalled
COMM="st$PFX"	# the stalled processes' name: no other process stalls
SOCK="$TMPD/tlsd.sock"
LOG="$TMPD/tlsd.log"
ns_setup
# The stand-in PS under a name of its own: /proc/PID/comm is the name it
# was executed by.
ln -s "$EMU" "$TMPD/$COMM" || fail "cannot link $TMPD/$COMM"
cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "1gbit";
policy = "one";
bands = 7;
control_socket = "$SOCK";
discovery = { rescan = "1s"; };
EOC
# ASan's runtime must come first in a sanitized binary; tlsd is not one
start_tlsd -N "$NS_PS" -l "$LOG" LD_PRELOAD="$SHIM" TLS_STALL_PROC="environ:$STALL_MS:$COMM" \
	"$TMPD/tlsd.conf"

now_ms() { date +%s%3N; }
# ctl_ms: how long one `tlsctl status` takes, in ms
ctl_ms() {
	a=$(now_ms)
	"$CTL" -s "$SOCK" status >/dev/null || fail "tlsctl status failed: $(tail -5 "$LOG")"
	echo $(($(now_ms) - a))
}
# ctl_worst N: the longest of N asks, 0.5 s apart
ctl_worst() {
	w=0
	k=0
	while [ $k -lt "$1" ]; do
		sleep 0.5
		m=$(ctl_ms)
		[ "$m" -gt "$w" ] && w=$m
		k=$((k + 1))
	done
	echo "$w"
}
# start_ps OUT PORT PROGRAM: a PS the built-in dmlc rule matches, its own job
start_ps() {
	bg_ps "$TMPD/$1" env DMLC_ROLE=server DMLC_PS_ROOT_URI=$PS4 DMLC_PS_ROOT_PORT="$2" \
		"$3" ps -l "$PS4:$2" -t 120
}
found() { grep -q "PS pid $1 .*found by rule dmlc" "$LOG"; }

info "tlsctl status before any stall: $(ctl_ms) ms"

# 1. one stalled PS
t0=$(now_ms)
start_ps ps1 9500 "$TMPD/$COMM"
PS1=$LAST
wait_line "$LOG" 5 "kernel_refuse: pid $PS1: .* stalled for" ||
	fail "the stall did not begin (tlsd did not read pid $PS1's environment): $(tail -5 "$LOG")"
worst=$(ctl_worst 6)
info "tlsctl status while pid $PS1's environment is stalled: at most $worst ms (6 asks over 3 s)"
[ "$worst" -lt $FAST_MS ] ||
	fail "tlsctl status took $worst ms while a read of /proc/$PS1/environ was stalled (the loop waited for it)"
wait_line "$LOG" 10 "kernel_refuse: pid $PS1: stall over" || fail "the stall did not end"
t1=$(now_ms)
wait_line "$LOG" 5 "PS pid $PS1 .*found by rule dmlc" ||
	fail "pid $PS1 not scheduled after its stall ended: $(tail -5 "$LOG")"
t2=$(now_ms)
info "pid $PS1 scheduled $((t2 - t1)) ms after its stall ended ($((t2 - t0)) ms after it started; log polled every 100 ms)"
n=$(grep -c "pid $PS1 (uid 0): its command line and environment were not read within" "$LOG")
[ "$n" -eq 1 ] || fail "the late read was said $n times, not once: $(grep -v kernel_refuse "$LOG" | tail -5)"

# 2. five stalled at once: the bound of four stuck readers
S=""
port=9510
for i in 1 2 3 4 5; do
	start_ps "s$i" $port "$TMPD/$COMM"
	S="$S $LAST"
	port=$((port + 1))
done
wait_line "$LOG" 5 "discovery paused: 4 reads" ||
	fail "no pause with five reads stalled: $(grep -v kernel_refuse "$LOG" | tail -5)"
line=$(grep "discovery paused" "$LOG" | head -1)
info "${line#*: }"
stuck=$(echo "$line" | sed -n 's/.*(pids \([0-9 ]*\)).*/\1/p')
[ "$(echo $stuck | wc -w)" -eq 4 ] || fail "the pause names '$stuck', not four pids"
for p in $stuck; do
	case " $S " in *" $p "*) ;; *) fail "the pause names pid $p, not one of$S" ;; esac
done
start_ps plain 9600 "$EMU"
PLAIN=$LAST
worst=$(ctl_worst 4)
info "tlsctl status while discovery is paused: at most $worst ms (4 asks over 2 s)"
[ "$worst" -lt $FAST_MS ] || fail "tlsctl status took $worst ms while discovery was paused"
# the pause holds until the first stuck read returns, 5 s after it began
if found "$PLAIN"; then
	fail "pid $PLAIN was judged while four reads were stuck (no pause)"
fi
for p in $S $PLAIN; do
	wait_line "$LOG" 15 "PS pid $p .*found by rule dmlc" ||
		fail "pid $p not scheduled after the stalls ended: $(grep -v kernel_refuse "$LOG" | tail -8)"
done
info "all six scheduled $(($(now_ms) - t2)) ms after the five started"
n=$(grep -c "discovery paused" "$LOG")
[ "$n" -eq 1 ] || fail "the pause was said $n times, not once"
grep -q "discovery resumed" "$LOG" || fail "the end of the pause was not said"
"$CTL" -s "$SOCK" status >/dev/null || fail "tlsctl status failed at the end"
echo "PASS: a stalled /proc read costs the loop at most its deadline: tlsctl answered within $FAST_MS ms during a $STALL_MS ms stall, the PS was scheduled after it, four stuck readers paused discovery with one warning"
