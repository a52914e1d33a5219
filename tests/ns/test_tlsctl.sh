#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# tlsctl against a real tlsd (two PS jobs, 100 Mbit/s): status and jobs as
# tables and JSON; a live policy switch is in the classifier's maps when
# tlsctl returns and in the per-job counters right after, survives a SIGHUP
# and is undone by `policy reset`; bad arguments are named; access is root
# plus control_group (set by a reload), everyone else is refused with exit
# status 3 whether the socket's mode or tlsd's SO_PEERCRED check stops them;
# 10,000 bad requests (tests/ns/ctl_fuzz.py) leave tlsd running with the same
# jobs, bands and policy; a second tlsd on the same socket is refused, a
# stale socket after kill -9 is replaced, and SIGTERM removes the socket.
. "$(dirname "$0")/lib.sh"

TLSD="$BIN/tlsd"
CTL="$BIN/tlsctl"
FUZZ="$(dirname "$0")/ctl_fuzz.py"
[ -x "$CTL" ] || fail "$CTL not built"
command -v python3 >/dev/null 2>&1 || skip "python3 is needed for the JSON checks and the fuzz client"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is needed to run tlsctl unprivileged"
ns_setup
# the second tlsd's lock, on an interface of its own
instance_add "${PFX}d"

SOCK="$TMPD/run/tlsd.sock"	# in a directory tlsd has to create
conf() {	# conf [EXTRA SETTING]
	cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "100mbit";
policy = "one";
interval = "1s";
bands = 2;
# the leader's headroom off: the shares below measure the switch alone
# (test_tlsd_lifecycle.sh checks the headroom)
lead_headroom = "0";
control_socket = "$SOCK";
discovery = { enabled = false; };
jobs = ( { name = "a"; ports = [ 9001 ]; }, { name = "b"; ports = [ 9002 ]; } );
${1:-}
EOC
}
ctl() { "$CTL" -s "$SOCK" "$@"; }
# js 'PYTHON EXPRESSION on r' CMD...: evaluate on a command's JSON output
js() {
	expr=$1
	shift
	"$@" | python3 -c "import json, sys; r = json.load(sys.stdin); print($expr)"
}
nobody() { setpriv --reuid=65534 "$@"; }
mode() { stat -c '%a %G' "$1"; }

conf
start_tlsd "$TMPD/tlsd.conf"
[ -S "$SOCK" ] || fail "no control socket at $SOCK"
[ "$(mode "$SOCK")" = "600 root" ] || fail "socket mode $(mode "$SOCK"), expected 600 root"

# --- status and jobs ---
expect 0 "policy         one" ctl status
grep -q "jobs           2" "$TMPD/out" || fail "status: $(cat "$TMPD/out")"
grep -q "interface      $IF_PS" "$TMPD/out" || fail "status: $(cat "$TMPD/out")"
[ "$(js 'r["policy"], r["jobs"], r["interface"], r["pid"]' ctl -j status)" = "one 2 $IF_PS $TLSD_PID" ] ||
	fail "status -j: $(ctl -j status)"
ctl -p status | grep -q '^  "policy": "one",$' || fail "status -p is not pretty-printed: $(ctl -p status)"
expect 0 "NAME" ctl jobs
awk '$2 == "a" && $3 == 0 && $4 == "static" && $5 == 9001 { a = 1 }
     $2 == "b" && $3 == 1 && $4 == "static" && $5 == 9002 { b = 1 }
     END { exit !(a && b) }' "$TMPD/out" || fail "jobs table: $(cat "$TMPD/out")"
[ "$(js '[(j["name"], j["band"], j["origin"], j["ports"]) for j in r["jobs"]]' ctl -j jobs)" = \
	"[('a', 0, 'static', [9001]), ('b', 1, 'static', [9002])]" ] || fail "jobs -j: $(ctl -j jobs)"
expect 0 "Usage: tlsctl" "$CTL" --help
expect 0 "policy reset" ctl policy --help
expect 0 "tlsctl" "$CTL" -V

# --- bad usage: named, exit 2 ---
expect 2 "'lifo' is not one of" ctl policy lifo
expect 2 "interval '5ms' is not a duration of at least 10ms" ctl policy interval 5ms
expect 2 "unknown command 'frobnicate'" ctl frobnicate
expect 2 "ambiguous command 'st'" ctl st
expect 2 "unexpected argument 'x'" ctl status x
expect 2 "format 'xml' is not one of" ctl calibrate --format xml
# the daemon checks too, for other clients
r=$(printf '{"version":1,"cmd":"policy","policy":"lifo","id":9}\n' |
	python3 -c "import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.stdin.buffer.read())
print(s.makefile().readline().strip())" "$SOCK")
echo "$r" | grep -q '"id":9' && echo "$r" | grep -q "policy: 'lifo' is not one of" ||
	fail "tlsd's reply to an unknown policy: $r"
expect 2 "source 'best' is not one of solved, direct" ctl calibrate --source best

# --- a live policy switch under traffic ---
expect 0 "policy fifo, interval 1s (set by tlsctl; the configuration says one, 1s)" ctl policy fifo
# in the maps when tlsctl returns: the next packet is scheduled by it
[ "$(job_stat 1 band) $(job_stat 2 band)" = "0 0" ] ||
	fail "after 'policy fifo' the bands are $(job_stat 1 band) $(job_stat 2 band), expected 0 0"
bg_ps "$TMPD/ps1" "$EMU" ps -l $PS4:9001 -t 120
bg_ps "$TMPD/ps2" "$EMU" ps -l $PS4:9002 -t 120
wait_line "$TMPD/ps1" 5 "ready" && wait_line "$TMPD/ps2" 5 "ready" || fail "PSes did not start"
bg_wk "$TMPD/pull" "$EMU" pull -c $PS4:9001 -c $PS4:9002 -t 120
sleep 2
share() {	# share SECONDS: job a's share of the two jobs' bytes, in percent
	a0=$(job_stat 1 bytes) b0=$(job_stat 2 bytes)
	sleep "$1"
	a1=$(job_stat 1 bytes) b1=$(job_stat 2 bytes)
	awk -v a=$((a1 - a0)) -v b=$((b1 - b0)) 'BEGIN { printf "%.1f", (a + b) ? 100 * a / (a + b) : 0 }'
}
# fifo: one band, so job b's packets go to band 0's class and none to
# band 1's (how TCP shares that one queue is TCP's business).
c0=$(class_bytes 715d:11) b0=$(job_stat 2 bytes)
s=$(share 1)
c1=$(class_bytes 715d:11) b1=$(job_stat 2 bytes)
info "policy fifo: job a has $s% of the link, job b $(((b1 - b0) / 1000)) kB, all in band 0"
[ $((b1 - b0)) -gt 0 ] || fail "under 'fifo' job b sent nothing"
[ $((c1 - c0)) -lt $(((b1 - b0) / 100 + 3000)) ] ||
	fail "under 'fifo' band 1's class got $((c1 - c0)) B of job b's $((b1 - b0))"
# --- statistics of the traffic running ---
expect 0 "link: B_ps" ctl stats
grep -q "^1 *a " "$TMPD/out" && grep -q "^2 *b " "$TMPD/out" || fail "stats table: $(cat "$TMPD/out")"
[ "$(js '[j["name"] for j in r["jobs"]], sorted(set(f["job"] for f in r["flows"])), r["link"]["samples"] > 10' ctl -j stats a)" = \
	"['a'] [1] True" ] || fail "stats -j a: $(ctl -j stats a | head -c 600)"
expect 1 "no job named 'nosuch'" ctl stats nosuch
timeout --preserve-status -s INT 1.5 "$CTL" -s "$SOCK" stats --csv --follow >"$TMPD/csv"
rc=$?
[ $rc -eq 0 ] || fail "stats --csv --follow ended with $rc after SIGINT"
head -1 "$TMPD/csv" | grep -q "^utc_s,time_s,kind,job," || fail "no CSV header: $(head -2 "$TMPD/csv")"
# utc_s: wall-clock seconds (UTC) of the sample, within 3 s of now
awk -F, -v now="$(date +%s)" 'NR > 1 && ($1 < now - 3 || $1 > now + 1) { bad = 1 }
	END { exit bad }' "$TMPD/csv" || fail "utc_s is not the wall-clock time: $(sed -n 2p "$TMPD/csv")"
n=$(awk -F, 'NR > 1 && $3 == "job" && $4 == 1 { t[$2] = 1 } END { print length(t) }' "$TMPD/csv")
info "stats --csv --follow: $n samples of job a in 1.5 s, $(wc -l <"$TMPD/csv") lines"
[ "$n" -ge 5 ] || fail "stats --follow streamed only $n samples in 1.5 s (period 100 ms)"
[ "$(js 'r["link"]["b_ps_Bps"] > 0, "spotdnn" in r, "observations" in r' ctl calibrate --format json)" = \
	"True True True" ] || fail "calibrate json: $(ctl calibrate --format json | head -c 600)"
expect 0 "B_ps (bps)" ctl calibrate
# spotDNN's module: one job's (two here), whole or not at all (one n: no fit)
expect 2 "tlsd runs 2 jobs (1 a, 2 b): name one" ctl calibrate --format spotdnn --param 1M
expect 1 "no spotDNN module written: " ctl calibrate a --format spotdnn --param 1M

# Back to one while both send: the counters show it in the next tick.
expect 0 "policy one, interval 1s (set by tlsctl" ctl policy one
[ "$(job_stat 1 band) $(job_stat 2 band)" = "0 1" ] ||
	fail "after 'policy one' the bands are $(job_stat 1 band) $(job_stat 2 band), expected 0 1"
sleep 0.1
s=$(share 0.2)
info "policy one again: job a has $s% of the link from 100 to 300 ms after the switch"
awk -v s="$s" 'BEGIN { exit !(s >= 95) }' || fail "from 100 ms after 'policy one' job a had only $s%"

expect 0 "policy roundrobin, interval 100ms" ctl policy roundrobin interval 100ms
prev="" changes=0 i=0
while [ $i -lt 20 ]; do
	cur=$(job_stat 1 band)
	[ -n "$prev" ] && [ "$cur" != "$prev" ] && changes=$((changes + 1))
	prev=$cur
	sleep 0.1
	i=$((i + 1))
done
info "roundrobin every 100ms: job a's band changed $changes times in 2 s"
[ $changes -ge 4 ] || fail "expected rotations every 100 ms, saw $changes changes in 2 s"
# The rotations are the classifier's, from the clock; tlsd counts them when
# asked: two jobs on two bands, so each step moves both (the counts over
# any number of steps, tls_policy_rr_band_changes).
rot() {	# rot: tlsd's steps, job a's and job b's band changes
	ctl metrics | awk '/^tlsd_rotations_total / { s = $2 }
		/^tlsd_job_rotations_total\{.*job="a"/ { a = $2 } /^tlsd_job_rotations_total\{.*job="b"/ { b = $2 }
		END { print s + 0, a + 0, b + 0 }'
}
set -- $(rot)
sleep 1.3
r=$(rot)
d=$(echo "$r" | awk -v s="$1" -v a="$2" -v b="$3" '{ print $1 - s, $2 - a, $3 - b }')
info "roundrobin from the clock over 1.3 s: steps, job a's and job b's band changes: $d"
echo "$d" | awk '{ exit !($1 >= 11 && $1 <= 15 && $2 == $1 && $3 == $1) }' ||
	fail "expected 11-15 steps in 1.3 s, each moving both jobs; saw $d (now $r)"
# A shorter interval begins a turn: no steps counted at the new interval
# over the time since the old turn began (0.7 s: 7 steps of 100 ms).
expect 0 "policy roundrobin, interval 1s" ctl policy roundrobin interval 1s
sleep 0.7
s0=$(js 'r["step"]' ctl -j status)
expect 0 "policy roundrobin, interval 100ms" ctl policy roundrobin interval 100ms
s1=$(js 'r["step"]' ctl -j status)
info "interval 1s -> 100ms, 0.7 s into a turn: steps $s0 -> $s1"
[ $((s1 - s0)) -le 1 ] || fail "the interval change counted $((s1 - s0)) steps at once"
# A job arriving keeps the leader: two turns of 2 s after a leader was seen
# (the same job leads again), a third job by a reload, 0.3 s into the turn.
leader() { if [ "$(job_stat 1 band)" = 0 ]; then echo a; else echo b; fi; }
expect 0 "policy roundrobin, interval 2s" ctl policy roundrobin interval 2s
sleep 0.2
l0=$(leader)
sleep 4
sed -i 's/{ name = "b"; ports = \[ 9002 \]; } );/{ name = "b"; ports = [ 9002 ]; }, { name = "c"; ports = [ 9003 ]; } );/' "$TMPD/tlsd.conf"
reload_tlsd
l1=$(leader)
info "roundrobin every 2 s: $l0 leads, two turns later job c arrives: $l1 leads"
[ "$l1" = "$l0" ] || fail "job c's arrival handed the lead from $l0 to $l1"
conf
reload_tlsd
expect 0 "policy roundrobin, interval 100ms" ctl policy roundrobin interval 100ms
expect 0 "policy         roundrobin (set by tlsctl)" ctl status

# SIGHUP rereads the file, the switch stays; reset goes back to the file
reload_tlsd
[ "$(js 'r["policy"], r["interval_ns"], r["policy_source"], r["config_policy"]' ctl -j policy)" = \
	"roundrobin 100000000 tlsctl one" ] || fail "after SIGHUP: $(ctl -j policy)"
expect 0 "policy one, interval 1s$" ctl policy reset
[ "$(job_stat 1 band) $(job_stat 2 band)" = "0 1" ] || fail "after reset the bands are not 0 1"
[ "$(js 'r["policy_source"]' ctl -j status)" = "config" ] || fail "reset left the source tlsctl"

# --- access ---
expect 3 "tlsd is not running (no socket at $TMPD/nosuch.sock)" "$CTL" -s "$TMPD/nosuch.sock" status
chmod 0711 "$TMPD"	# others may reach the socket's directory; the socket decides
expect 3 "permission denied on $SOCK: tlsctl needs root$" \
	nobody --regid=65534 --clear-groups "$CTL" -s "$SOCK" status
# control_group by a reload: the socket gets the group, its members get in
conf 'control_group = "nogroup"; control_idle_timeout = "3s";'
reload_tlsd
[ "$(mode "$SOCK")" = "660 nogroup" ] || fail "socket mode $(mode "$SOCK"), expected 660 nogroup"
expect 0 "policy         one" nobody --regid=65534 --clear-groups "$CTL" -s "$SOCK" status
expect 0 "policy         one" nobody --regid=12345 --groups=65534 "$CTL" -s "$SOCK" status
# A member holding every connection it may have open does not lock root
# out: the next member is told tlsd is busy, root still gets in.
setpriv --reuid=65534 --regid=12345 --groups=65534 /usr/bin/python3 -c '
import socket, sys, time
held = []
for i in range(64):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    held.append(s)
print("held", len(held), flush=True)
time.sleep(30)
' "$SOCK" >"$TMPD/hold.out" 2>&1 &
HOLDER=$!
PIDS="$PIDS $HOLDER"
wait_line "$TMPD/hold.out" 10 "held 64" || fail "could not hold 64 connections: $(cat "$TMPD/hold.out")"
sleep 0.2	# tlsd accepts them
expect 3 "busy: 64 clients are connected already" \
	nobody --regid=12345 --groups=65534 "$CTL" -s "$SOCK" status
expect 0 "policy         one" ctl status
# The holder's connections stay open, silent: control_idle_timeout (3 s)
# closes them, and the members get in again while it still runs.
i=0
while ! nobody --regid=12345 --groups=65534 "$CTL" -s "$SOCK" status >/dev/null 2>&1 && [ $i -lt 60 ]; do
	sleep 0.1
	i=$((i + 1))
done
ours "$HOLDER" || fail "the holder ended before its connections were closed: $(cat "$TMPD/hold.out")"
expect 0 "policy         one" nobody --regid=12345 --groups=65534 "$CTL" -s "$SOCK" status
n=$(grep -c "closing a connection of uid 65534 .*silent for 3 s" "$TMPD/tlsd.log")
[ "$n" -ge 64 ] || fail "$n of the holder's 64 silent connections were closed"
info "64 silent connections closed after $((i / 10)).$((i % 10)) s more (control_idle_timeout 3 s)"
kill "$HOLDER"
wait_pid "$HOLDER" 5 || fail "the holder did not stop"
expect 3 "permission denied on $SOCK: tlsctl needs root or group nogroup" \
	nobody --regid=12345 --clear-groups "$CTL" -s "$SOCK" status
# past the socket's mode, tlsd's own check (SO_PEERCRED) refuses
chmod 0666 "$SOCK"
expect 3 "neither root nor in group 'nogroup'" \
	nobody --regid=12345 --clear-groups "$CTL" -s "$SOCK" jobs
grep -q "refused uid 65534" "$TMPD/tlsd.log" || fail "tlsd did not log the refusal"
conf
reload_tlsd
[ "$(mode "$SOCK")" = "600 root" ] || fail "socket mode $(mode "$SOCK") after the group was removed"
# a new control_socket by a reload: the new socket opens, the old one goes
old_sock=$SOCK
SOCK="$TMPD/run/other.sock"
conf
reload_tlsd
[ -S "$SOCK" ] && [ ! -e "$old_sock" ] || fail "control_socket moved by a reload: $(ls -l "$TMPD/run")"
expect 0 "policy         one" ctl status
SOCK=$old_sock
conf
reload_tlsd
[ -S "$SOCK" ] || fail "control_socket not moved back"
conf 'control_group = "no-such-group-x";'
kill -HUP "$TLSD_PID"
wait_line "$TMPD/tlsd.log" 5 "control_group: no group 'no-such-group-x'" ||
	fail "a control_group that does not exist was not refused: $(tail -3 "$TMPD/tlsd.log")"
conf

# --- 10,000 bad requests ---
before=$(ctl -j jobs | python3 -c "import json, sys
print([(j['id'], j['name'], j['band']) for j in json.load(sys.stdin)['jobs']])")
python3 "$FUZZ" "$SOCK" 10000 >"$TMPD/fuzz" 2>&1 || fail "$(tail -5 "$TMPD/fuzz")"
info "$(tail -1 "$TMPD/fuzz")"
ours "$TLSD_PID" || fail "tlsd died under the fuzz: $(tail -5 "$TMPD/tlsd.log")"
after=$(ctl -j jobs | python3 -c "import json, sys
print([(j['id'], j['name'], j['band']) for j in json.load(sys.stdin)['jobs']])")
[ "$before" = "$after" ] || fail "jobs changed under the fuzz: $before -> $after"
[ "$(js 'r["policy"], r["interval_ns"], r["jobs"]' ctl -j status)" = "one 1000000000 2" ] ||
	fail "state changed under the fuzz: $(ctl -j status)"
s=$(share 1)
info "after the fuzz: job a has $s% of the link"
awk -v s="$s" 'BEGIN { exit !(s >= 90) }' || fail "after the fuzz job a had only $s%"

# --- one socket, one tlsd; a stale socket is replaced; SIGTERM removes it ---
in_ps ip link add "${PFX}d" type veth peer name "${PFX}e" && in_ps ip link set "${PFX}d" up ||
	fail "cannot add a second interface"
sed "s/interface = \"$IF_PS\"/interface = \"${PFX}d\"/" "$TMPD/tlsd.conf" >"$TMPD/second.conf"
expect 1 "control socket $SOCK is in use" in_ps "$TLSD" -f -c "$TMPD/second.conf"
in_ps tc qdisc show dev "${PFX}d" | grep -q htb && fail "the refused tlsd left HTB on ${PFX}d"
expect 0 "policy         one" ctl status
stop_tlsd -KILL
[ -S "$SOCK" ] || fail "the socket went with kill -9 (expected it left behind)"
expect 3 "tlsd is not running ($SOCK is a stale socket)" ctl status
start_tlsd "$TMPD/tlsd.conf"
grep -q "removed the stale control socket" "$TMPD/tlsd.log" || fail "stale socket not reported"
expect 0 "policy         one" ctl status
stop_tlsd
[ -e "$SOCK" ] && fail "socket left after SIGTERM"
echo "PASS: tlsctl status/jobs/policy, live switch in the maps, access control, 10,000 bad requests survived"
