#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# tlsd end to end, with two backlogged PS jobs through 100 Mbit/s:
# start (HTB + classifier), `one` gives the first job the link, a bad
# SIGHUP is refused with the daemon still running, a good one switches to
# roundrobin and the leader changes, kill -9 keeps traffic scheduled, a
# restart takes over without losing counters, SIGTERM restores the
# interface (the user's own root qdisc, even across the crash), and
# --cleanup removes what a killed tlsd left, and leaves a running one alone.
. "$(dirname "$0")/lib.sh"

TLSD="$BIN/tlsd"
ns_setup

conf() {	# conf POLICY [RATE BANDS [EXTRA_JOB]]
	cat <<EOC
interface = "$IF_PS";
link_rate = "${2:-100mbit}";
policy = "$1";
interval = "1s";
bands = ${3:-2};
control_socket = "$TMPD/tlsd.sock";	# not the host's default
jobs = ( ${4:-} { name = "a"; ports = [ 9001 ]; }, { name = "b"; ports = [ 9002 ]; } );
discovery = { enabled = false; };	# static jobs only: the ids are checked
replace_qdisc = true;	# over the user's pfifo below (put back at exit)
EOC
}
conf one >"$TMPD/tlsd.conf"
# A root qdisc of the user's own: tlsd must put it back at exit.
in_ps tc qdisc add dev "$IF_PS" root handle 5: pfifo limit 777 || fail "pfifo"

# Readiness through sd_notify: a datagram socket stands in for systemd.
if command -v python3 >/dev/null 2>&1; then
	python3 - "$TMPD/notify" >"$TMPD/notify.out" 2>&1 <<'EOP' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(120)  # a kernel that refuses policy bursts's code first (6.1) takes long under emulation
print(s.recv(4096).decode().replace("\n", " "), flush=True)
EOP
	NOTIFY_PID=$!
	PIDS="$PIDS $NOTIFY_PID"
	i=0
	while [ ! -S "$TMPD/notify" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	export NOTIFY_SOCKET="$TMPD/notify"
fi
start_tlsd "$TMPD/tlsd.conf"
unset NOTIFY_SOCKET
if [ -n "${NOTIFY_PID:-}" ]; then
	wait_pid "$NOTIFY_PID" 5
	grep -q "READY=1" "$TMPD/notify.out" || fail "no READY=1 through sd_notify: $(cat "$TMPD/notify.out")"
	info "sd_notify: $(cat "$TMPD/notify.out")"
fi
in_ps tc class show dev "$IF_PS" | grep -q "715d:10" || fail "no band class 715d:10"
in_ps tc class show dev "$IF_PS" | grep -q "715d:ff" || fail "no default class 715d:ff"
in_ps tc filter show dev "$IF_PS" egress | grep -q tls_classify || fail "classifier not attached"

# Two backlogged PSes, one per job, sending to a worker that pulls: one
# flow from job a's, two from job b's (its weight under bursts is then the
# root of 2).
bg_ps "$TMPD/ps1" "$EMU" ps -l $PS4:9001 -t 60
bg_ps "$TMPD/ps2" "$EMU" ps -l $PS4:9002 -t 60
wait_line "$TMPD/ps1" 5 "ready" && wait_line "$TMPD/ps2" 5 "ready" || fail "PSes did not start"
bg_wk "$TMPD/pull" "$EMU" pull -c $PS4:9001 -c $PS4:9002 -c $PS4:9002 -t 60
sleep 1

share() {	# share SECONDS: job a's share of the two jobs' bytes, in percent
	a0=$(job_stat 1 bytes) b0=$(job_stat 2 bytes)
	sleep "$1"
	a1=$(job_stat 1 bytes) b1=$(job_stat 2 bytes)
	TOTAL_MBIT=$(awk -v t=$((a1 - a0 + b1 - b0)) -v s="$1" 'BEGIN { printf "%.1f", 8 * t / s / 1e6 }')
	awk -v a=$((a1 - a0)) -v b=$((b1 - b0)) 'BEGIN { printf "%.1f", (a + b) ? 100 * a / (a + b) : 0 }'
}
share 2 >"$TMPD/share"
s=$(cat "$TMPD/share")
info "policy one: job a has $s% of the link ($TOTAL_MBIT Mbit/s for both jobs)"
# (the rest is band 0's headroom, 5% by default: job b gets it; 94.8% measured,
# 94.2-94.5% under emulation: 91.7% and 83% with buckets smaller than a GSO skb)
awk -v s="$s" 'BEGIN { exit !(s >= 90) }' || fail "under 'one' job a had only $s%"
# band 0's ceiling: the link less lead_headroom (5%) under `one` with two
# jobs, the full link under roundrobin (checked after the reload below)
band0_ceil() { in_ps tc class show dev "$IF_PS" | awk '$3 == "715d:10" { for (i = 1; i < NF; i++) if ($i == "ceil") print $(i + 1) }'; }
wait_ceil() {	# wait_ceil RATE: band 0's ceiling becomes RATE within 5 s
	i=0
	while [ "$(band0_ceil)" != "$1" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(band0_ceil)" = "$1" ]
}
wait_ceil 95Mbit || fail "under 'one' band 0's ceiling is '$(band0_ceil)', want 95Mbit"
grep -q "top band's ceiling: 95mbit (lead_headroom 5%, policy one, 2 jobs)" "$TMPD/tlsd.log" || fail "tlsd did not log the top band's ceiling"

# A bad configuration is refused; the daemon and its state stay.
conf lifo >"$TMPD/tlsd.conf"
kill -HUP "$TLSD_PID"
wait_line "$TMPD/tlsd.log" 5 "reload refused" || fail "bad reload not refused"
grep "policy" "$TMPD/tlsd.log" | tail -2 | sed 's/^/  tlsd: /'
kill -0 "$TLSD_PID" || fail "tlsd died on a bad configuration"
[ "$(job_stat 1 band)" = 0 ] || fail "job a lost its band after a refused reload"

# roundrobin every second: the leader changes.
conf roundrobin >"$TMPD/tlsd.conf"
kill -HUP "$TLSD_PID"
wait_line "$TMPD/tlsd.log" 5 "policy roundrobin" || fail "reload to roundrobin not applied"
# Counted over the time the samples really took (a slow machine, as a
# kernel under emulation, takes longer per sample): E seconds hold floor(E)
# or ceil(E) rotations, one more or less at the edges.
prev="" changes=0 t0=$(date +%s%N)
while :; do
	cur=$(job_stat 1 band)
	[ -n "$prev" ] && [ "$cur" != "$prev" ] && changes=$((changes + 1))
	prev=$cur
	el=$((($(date +%s%N) - t0) / 1000000))
	[ $el -ge 3500 ] && break
	sleep 0.25
done
info "roundrobin: job a's band changed $changes times in $el ms"
wait_ceil 100Mbit || fail "under roundrobin band 0's ceiling is '$(band0_ceil)', want 100Mbit"
lo=$((el / 1000 - 1)) hi=$((el / 1000 + 2))
[ $lo -lt 2 ] && lo=2
[ $changes -ge $lo ] && [ $changes -le $hi ] ||
	fail "expected $lo-$hi rotations in $el ms, saw $changes; tlsd: $(tail -12 "$TMPD/tlsd.log")"

# policy bursts: the classifier orders the jobs itself. The reload starts
# its order with both jobs, which are sending (tlsd's seed: left empty, the
# order saw the job starved under roundrobin only 0.1-3.3 s later, when its
# queued packets had trickled out at its band's floor), in the bands
# roundrobin gave them. Two backlogged
# jobs never go idle: the leader yields at its limit (2 s), and they take
# turns. Checked here: both in the order at once, one job leads at a time;
# the hand-over itself is tested exactly in the unit and BPF tiers
# (test_burst.c, test_bursts_policy, test_bursts_seeded).
conf bursts >"$TMPD/tlsd.conf"
kill -HUP "$TLSD_PID"
wait_line "$TMPD/tlsd.log" 5 "policy bursts" || fail "reload to bursts not applied: $(tail -3 "$TMPD/tlsd.log")"
# A kernel whose verifier refused the code (6.1): said once, the jobs
# share one band; the rest of the test goes on.
here=1
grep -q "policy bursts is not available on this kernel" "$TMPD/tlsd.log" && here=0
if [ $here = 1 ]; then
	grep -q "policy bursts: the order starts with the 2 jobs sending now" "$TMPD/tlsd.log" ||
		fail "the order was not seeded with both jobs: $(grep bursts "$TMPD/tlsd.log" | tail -3)"
fi
led_windows() {	# led_windows WHEN: one job leads in at least 3 of 6 windows of 0.5 s
	led=0 i=6 shares=" (not available here)"
	[ $here = 1 ] && i=0 shares=""
	[ $here = 1 ] || led=6
	while [ $i -lt 6 ]; do
		s=$(share 0.5)
		shares="$shares $s"
		awk -v s="$s" 'BEGIN { exit !(s >= 80 || s <= 20) }' && led=$((led + 1))
		i=$((i + 1))
	done
	info "bursts$1: job a's share in 0.5 s windows:$shares %"
	[ $led -ge 3 ] || fail "under bursts$1 one job should lead at a time (in $led of 6 windows)"
}
led_windows ""
# tlsctl status shows the order as the classifier has it: the leader, a
# job of the two, in band 0 with its burst's bytes, and the other (both
# seeded, both sending all along); each with its weight in the fair share,
# the root of its flows (written by tlsd from the statistics: a's 1, b's
# 23/16 for 2 flows)
if [ $here = 1 ]; then
	"$BIN/tlsctl" -s "$TMPD/tlsd.sock" -j status >"$TMPD/st.json" || fail "tlsctl status failed"
	python3 - "$TMPD/st.json" <<'EOP' || fail "status: no burst order led by job a or b, weighted 1 and 23/16: $(cat "$TMPD/st.json")"
import json, sys
b = json.load(open(sys.argv[1]))["bursts"]
o = b["order"]
ok = len(o) == 2 and {e["job"] for e in o} == {"a", "b"} and o[0]["band"] == 0
ok = ok and {e["job"]: e["weight"] for e in o} == {"a": 1.0, "b": 23 / 16}
sys.exit(0 if ok and o[0]["sent_bytes"] > 0 and b["resumes"] >= 0 else 1)
EOP
	"$BIN/tlsctl" -s "$TMPD/tlsd.sock" status >"$TMPD/st.txt"
	grep -Eq "^burst order    2 jobs: [ab] \(band 0\)" "$TMPD/st.txt" ||
		fail "tlsctl status: no burst order line: $(cat "$TMPD/st.txt")"
	info "$(grep "^burst" "$TMPD/st.txt" | tr '\n' ' ')"
fi
# A reload that swaps the classifier (a new flowlet gap) under bursts
# carries the order over to the new program (started empty, the job
# behind waited until its queued packets trickled out).
if [ $here = 1 ]; then
	sed 's/^bands = 2;/bands = 2; flowlet_gap = "3ms";/' "$TMPD/tlsd.conf" >"$TMPD/c2" && mv "$TMPD/c2" "$TMPD/tlsd.conf"
	kill -HUP "$TLSD_PID"
	wait_line "$TMPD/tlsd.log" 5 "the order carried over from the program replaced (2 jobs)" ||
		fail "the classifier's swap under bursts did not carry the order over: $(grep -E "bursts|reload" "$TMPD/tlsd.log" | tail -3)"
	led_windows " after the classifier's swap"
fi
# kill -9 under bursts: the classifier goes on ordering the jobs (the
# program's tail-call slot is pinned; unpinned, it emptied with tlsd's last
# descriptor and both jobs shared the last band, as under fifo). Then a
# restart takes over, under bursts again, with the order the killed
# tlsd's program left.
if [ $here = 1 ]; then
	stop_tlsd -KILL
	led_windows " after kill -9"
	start_tlsd "$TMPD/tlsd.conf"
	grep -q "took over" "$TMPD/tlsd.log" || fail "the restart under bursts did not take over"
	grep -q "the order carried over from the program replaced (2 jobs)" "$TMPD/tlsd.log" ||
		fail "the takeover did not carry the order over: $(grep bursts "$TMPD/tlsd.log" | tail -3)"
	led_windows " after the takeover"
fi

# A reload with a new rate and band count changes the tree in place.
conf roundrobin 200mbit 3 >"$TMPD/tlsd.conf"
kill -HUP "$TLSD_PID"
wait_line "$TMPD/tlsd.log" 5 "policy roundrobin, 3 bands" || fail "reload to 3 bands not applied: $(tail -3 "$TMPD/tlsd.log")"
in_ps tc class show dev "$IF_PS" | grep -q "715d:12" || fail "no third band class after the reload"
in_ps tc class show dev "$IF_PS" | grep "715d:1 root" | grep -q "200Mbit" || fail "root class rate not changed"
conf roundrobin 100mbit 2 >"$TMPD/tlsd.conf"
kill -HUP "$TLSD_PID"
i=0
while in_ps tc class show dev "$IF_PS" | grep -q "715d:12" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
in_ps tc class show dev "$IF_PS" | grep -q "715d:12" && fail "third band class left after going back to 2 bands"

# A job whose ports change keeps its id, its counters and its place.
sed 's/ports = \[ 9001 \]/ports = [ 9001, 9011 ]/' "$TMPD/tlsd.conf" >"$TMPD/c2" && mv "$TMPD/c2" "$TMPD/tlsd.conf"
kill -HUP "$TLSD_PID"
wait_line "$TMPD/tlsd.log" 5 "job a (id 1): ports changed" || fail "port change not applied in place: $(tail -3 "$TMPD/tlsd.log")"
grep -q "job a (id 1) removed" "$TMPD/tlsd.log" && fail "job a was removed and re-added for a port change"

# kill -9: the kernel state stays, traffic keeps being classified.
stop_tlsd -KILL
t0=$(($(job_stat 1 bytes) + $(job_stat 2 bytes)))
sleep 1
t1=$(($(job_stat 1 bytes) + $(job_stat 2 bytes)))
info "after kill -9: $((t1 - t0)) B classified in 1 s"
[ $((t1 - t0)) -gt 5000000 ] || fail "traffic not classified after kill -9"
in_ps tc class show dev "$IF_PS" | grep -q "715d:10" || fail "classes gone after kill -9"

# Restart with a job added in front: it takes over, the jobs keep their ids
# and counters, and the new job gets a fresh id.
before=$(job_stat 1 bytes)
conf roundrobin 100mbit 2 '{ name = "z"; ports = [ 9009 ]; },' >"$TMPD/tlsd.conf"
start_tlsd "$TMPD/tlsd.conf"
grep -q "took over" "$TMPD/tlsd.log" || fail "restart did not take over the previous tree"
after=$(job_stat 1 bytes)
[ "$after" -ge "$before" ] || fail "job a's counter went back from $before to $after"
[ "$(job_stat 3 bytes)" -eq 0 ] || fail "the new job z inherited counters"
grep -q "job z (id 3) added" "$TMPD/tlsd.log" || fail "job z did not get the fresh id 3: $(grep added "$TMPD/tlsd.log")"
[ "$(in_ps tc filter show dev "$IF_PS" egress | grep -c tls_classify)" -eq 1 ] ||
	fail "expected exactly one classifier after the restart"

# --cleanup is for what a dead tlsd left: a running one keeps everything.
in_ps "$TLSD" --cleanup -i "$IF_PS" >"$TMPD/cleanup.out" 2>&1 &&
	fail "--cleanup succeeded against a running tlsd"
grep -q "another tlsd is already running on $IF_PS (pid $TLSD_PID," "$TMPD/cleanup.out" ||
	fail "--cleanup did not name the running tlsd: $(cat "$TMPD/cleanup.out")"
kill -0 "$TLSD_PID" || fail "tlsd died under --cleanup"
in_ps tc qdisc show dev "$IF_PS" | grep -q "htb" || fail "--cleanup removed a running tlsd's tree"
[ "$(in_ps tc filter show dev "$IF_PS" egress | grep -c tls_classify)" -eq 1 ] ||
	fail "--cleanup removed a running tlsd's classifier"
[ -d "$PIN" ] || fail "--cleanup removed a running tlsd's pins"

# SIGTERM: the interface as it was.
stop_tlsd
[ "$TLSD_RC" -eq 0 ] || fail "tlsd exited with $TLSD_RC on SIGTERM"
in_ps tc qdisc show dev "$IF_PS" | grep -q "htb" && fail "HTB left after SIGTERM"
in_ps tc qdisc show dev "$IF_PS" | grep -q "pfifo 5: root.*limit 777" ||
	fail "the previous root qdisc was not put back: $(in_ps tc qdisc show dev "$IF_PS")"
in_ps tc qdisc show dev "$IF_PS" | grep -q "clsact" && fail "clsact left after SIGTERM"
[ -d "$PIN" ] && fail "pins left after SIGTERM: $(ls "$PIN")"

# --cleanup after a kill -9.
start_tlsd "$TMPD/tlsd.conf"
stop_tlsd -KILL
in_ps "$TLSD" --cleanup -i "$IF_PS" >/dev/null || fail "--cleanup failed"
in_ps tc qdisc show dev "$IF_PS" | grep -qE "htb|clsact" && fail "--cleanup left qdiscs"
in_ps tc qdisc show dev "$IF_PS" | grep -q "pfifo 5: root.*limit 777" ||
	fail "--cleanup did not put the previous root qdisc back"
[ -d "$PIN" ] && fail "--cleanup left pins"

# The clsact qdisc tlsd made stays while another tool's filter is on it:
# deleting it would delete that filter too.
start_tlsd "$TMPD/tlsd.conf"
in_ps tc filter add dev "$IF_PS" ingress protocol all prio 7 u32 match u32 0 0 ||
	fail "cannot add another tool's filter"
stop_tlsd
in_ps tc filter show dev "$IF_PS" ingress | grep -q "u32" ||
	fail "tlsd's exit took another tool's filter with its clsact qdisc"
in_ps tc filter show dev "$IF_PS" egress | grep -q "tls_classify" && fail "the classifier stayed"
grep -q "the clsact qdisc tlsd made stays: 1 filter of other tools" "$TMPD/tlsd.log" ||
	fail "tlsd did not say why the clsact qdisc stays: $(tail -3 "$TMPD/tlsd.log")"
in_ps tc qdisc del dev "$IF_PS" clsact
echo "PASS: tlsd starts, prioritises, reloads, survives kill -9, restores, cleans up, leaves others' filters"
