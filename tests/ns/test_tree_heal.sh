#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# tlsd heals its tree (issue 14, item 3), with two backlogged PS jobs through
# 100 Mbit/s and tlsd started as a service would be, with -N:
#  a. the root qdisc deleted (`tc qdisc del dev X root`): tree and filter back
#     within 1 s, and job a's bytes are counted in its class again;
#  b. the classifier filter deleted, the ingress counter's filter deleted,
#     then the clsact qdisc under both: back;
#  c. `tc qdisc replace dev X root pfifo`: back;
#  d. a fight: a tool replacing the root again and again: tlsd heals 5 times
#     (heal_limit, within heal_window) and yields at the sixth: it says so
#     once, in its log and its status, leaves the other tool's qdisc in place
#     and removes its own filter; SIGHUP takes the interface back;
#  e. the interface deleted and created again (same name, addresses): tlsd
#     says once that it is gone, rotates without complaint meanwhile, says
#     it is absent in its status, and schedules the new one (tree, filter,
#     traffic counted);
#  f. SIGTERM: the user's root qdisc from before tlsd comes back (its record
#     outlived every heal and the new interface), nothing of tlsd's is left;
#  g. link_rate auto follows the link: a tap whose speed ethtool changes, then
#     flapped as a renegotiation would: the tree's rate follows;
#  o. other traffic (a flow of no job) beside the two backlogged jobs has the
#     default class's guaranteed 1/20 of the link, not a band's 1/1000 (at
#     that floor a job's packets left there while the filter was away held
#     its socket silent for seconds: TCP's small-queue limit).
# TREE_HEAL_PARTS chooses parts (default all: "o a b c d e g"; f always runs);
# TREE_HEAL_TOL the class-against-counter tolerance in percent (default 5;
# a kernel under emulation reads the two far apart in time).
. "$(dirname "$0")/lib.sh"

CTL="$BIN/tlsctl"
SOCK="$TMPD/tlsd.sock"
PARTS=${TREE_HEAL_PARTS:-"o a b c d e g"}
TOL=${TREE_HEAL_TOL:-5}
command -v python3 >/dev/null 2>&1 || skip "python3 is needed for the JSON checks"
ns_setup
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# No setting of this change in the file: the same test runs against a tlsd
# from before it (and fails there, as it should).
cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "100mbit";
policy = "one";
interval = "100ms";
bands = 2;
control_socket = "$SOCK";
jobs = ( { name = "a"; ports = [ 9001 ]; }, { name = "b"; ports = [ 9002 ]; } );
discovery = { enabled = false; };
EOC
ctl() { "$CTL" -s "$SOCK" "$@"; }
# tree EXPR: a Python expression on status's tree object (t) and reply (r)
tree() {
	ctl -j status | python3 -c 'import json, sys
r = json.load(sys.stdin); t = r.get("tree") or {}
print(eval(sys.argv[1]))' "$1"
}
log_count() { grep -c "$1" "$TMPD/tlsd.log"; }

# The user's own root qdisc: exit must put it back, after everything.
in_ps tc qdisc add dev "$IF_PS" root handle 5: pfifo limit 777 || fail "pfifo"
start_tlsd -N "$NS_PS" "$TMPD/tlsd.conf" --replace-qdisc

# The whole tree: root 715d:, root class, both bands, default class, the
# classifier's filter and the ingress counter's.
tree_ok() {
	in_ps tc qdisc show dev "$IF_PS" 2>/dev/null | grep -q "^qdisc htb 715d: root" || return 1
	c=$(in_ps tc class show dev "$IF_PS")
	for k in 715d:1 715d:10 715d:11 715d:ff; do
		echo "$c" | grep -q "^class htb $k " || return 1
	done
	in_ps tc filter show dev "$IF_PS" egress | grep -q "tls_classify" &&
		in_ps tc filter show dev "$IF_PS" ingress | grep -q "tls_ingress"
}
# wait_tree T0_MS WHAT: the tree whole again within 1 s of T0; sets TOOK (ms)
wait_tree() {
	while :; do
		if tree_ok; then
			TOOK=$(($(now_ms) - $1))
			info "$2: tree and filter back after $TOOK ms"
			# (a machine so slow that one look takes a second fails too)
			[ $TOOK -le 1000 ] || fail "$2: the tree was back only after $TOOK ms"
			return 0
		fi
		[ $(($(now_ms) - $1)) -gt 1000 ] &&
			fail "$2: the tree is not back within 1 s: $(in_ps tc qdisc show dev "$IF_PS"; in_ps tc filter show dev "$IF_PS" egress; tail -3 "$TMPD/tlsd.log")"
		sleep 0.01
	done
}
tree_ok || fail "no tree after start: $(in_ps tc qdisc show dev "$IF_PS")"

# counted CLASSES JOBS WHAT: over 1 s the classes took in what the jobs'
# counters counted (within TOL%). Taken in: sent, and what waits in the class
# (a flow that ramps up again fills its queue, one that settles drains it).
# A flow that lost packets while the tree was gone may sit in TCP's backoff
# for a while first (RTO doubling from 200 ms): up to 5 s.
sum() { s=0; for x in "$@"; do s=$((s + x)); done; echo $s; }
class_in() {
	in_ps tc -s class show dev "$IF_PS" classid "$1" | awk '
		/Sent/ { s = $2 }
		/backlog/ { b = $2; m = 1; if (b ~ /Mb$/) m = 1048576; else if (b ~ /Kb$/) m = 1024
			sub(/[KM]?b$/, "", b); q = b * m }
		END { printf "%.0f\n", s + q }'
}
counted() {
	t=$(now_ms)
	while :; do
		j0=$(sum $(for j in $2; do job_stat "$j" bytes; done))
		sleep 0.2
		j1=$(sum $(for j in $2; do job_stat "$j" bytes; done))
		[ $((j1 - j0)) -gt 200000 ] && break
		[ $(($(now_ms) - t)) -gt 5000 ] && fail "$3: jobs $2 sent nothing for 5 s"
	done
	[ $(($(now_ms) - t)) -gt 500 ] && info "$3: jobs $2 sending again after $(($(now_ms) - t)) ms"
	# A second of steady traffic to compare: TCP may stall again in RTO
	# backoff after the first packets (the replaced roots dropped its
	# queue several times), which is TCP's time, not tlsd's; up to 4 tries.
	# The jobs' counters are read before and after each class reading and
	# taken at the midpoint: on a loaded machine the tlsctl and tc runs
	# between two readings take tens of ms, several % of a second's bytes.
	k=0
	while :; do
		ja=$(sum $(for j in $2; do job_stat "$j" bytes; done))
		c0=$(sum $(for k2 in $1; do class_in "$k2"; done))
		jb=$(sum $(for j in $2; do job_stat "$j" bytes; done))
		sleep 1
		jc=$(sum $(for j in $2; do job_stat "$j" bytes; done))
		c1=$(sum $(for k2 in $1; do class_in "$k2"; done))
		jd=$(sum $(for j in $2; do job_stat "$j" bytes; done))
		j0=$(((ja + jb) / 2))
		j1=$(((jc + jd) / 2))
		k=$((k + 1))
		[ $((j1 - j0)) -gt 1000000 ] || [ $k -ge 4 ] && break
		info "$3: jobs $2 sent only $((j1 - j0)) B in 1 s (TCP backing off?): again"
	done
	info "$3: classes $1 counted $((c1 - c0)) B in 1 s, jobs $2 $((j1 - j0)) B"
	[ $((j1 - j0)) -gt 1000000 ] || fail "$3: jobs $2 sent only $((j1 - j0)) B in 1 s, 4 times"
	within $((c1 - c0)) $((j1 - j0)) "$TOL" ||
		fail "$3: classes $1 counted $((c1 - c0)) B, the jobs' counters $((j1 - j0)) B"
}
start_traffic() {
	bg_wk "$TMPD/pull" "$EMU" pull -c $PS4:9001 -c $PS4:9002 -t 120
	PULL_PID=$LAST
	sleep 1
}
# New connections: the old ones may be deep in RTO backoff after the
# replaced roots dropped their queues (seconds of silence that are TCP's,
# not tlsd's)
restart_traffic() {
	kill "$PULL_PID" 2>/dev/null
	wait "$PULL_PID" 2>/dev/null
	start_traffic
}
bg_ps "$TMPD/ps1" "$EMU" ps -l $PS4:9001 -t 120
bg_ps "$TMPD/ps2" "$EMU" ps -l $PS4:9002 -t 120
wait_line "$TMPD/ps1" 5 "ready" && wait_line "$TMPD/ps2" 5 "ready" || fail "PSes did not start"
start_traffic
counted 715d:10 1 "at start"

if part o; then
	bg_ps "$TMPD/ps3" "$EMU" ps -l $PS4:9003 -t 120
	wait_line "$TMPD/ps3" 5 "ready" || fail "o. the third PS did not start"
	bg_wk "$TMPD/pull3" "$EMU" pull -c $PS4:9003 -t 120
	PULL3_PID=$LAST
	sleep 1
	o0=$(class_in 715d:ff)
	sleep 1
	o1=$(class_in 715d:ff)
	kill "$PULL3_PID" 2>/dev/null
	wait "$PULL3_PID" 2>/dev/null
	# 1/20 of 100 Mbit/s is 625,000 B/s; a band's floor would give 12,500
	info "o. other traffic beside two backlogged jobs: $((o1 - o0)) B/s in the default class"
	[ $((o1 - o0)) -ge 500000 ] ||
		fail "o. other traffic had only $((o1 - o0)) B/s, under 1/20 of the link: $(in_ps tc class show dev "$IF_PS" classid 715d:ff)"
fi

HEALS=0
# heal WHAT REASON CMD...: the command undoes part of the tree; tlsd heals it
heal() {
	what=$1 reason=$2
	shift 2
	t0=$(now_ms)
	in_ps "$@" || fail "$what: $* failed"
	wait_tree "$t0" "$what"
	HEALS=$((HEALS + 1))
	i=0
	while [ "$(tree 't.get("heals")')" != $HEALS ] && [ $i -lt 20 ]; do sleep 0.05; i=$((i + 1)); done
	[ "$(tree 't.get("heals")')" = $HEALS ] || fail "$what: status counts $(tree 't.get("heals")') heals, expected $HEALS"
	got=$(tree '(t.get("last_heal") or {}).get("reason")')
	case "$got" in
	*"$reason"*) ;;
	*) fail "$what: status's last heal says '$got', not '$reason'" ;;
	esac
	grep -q "$IF_PS: $reason.*rebuilt in" "$TMPD/tlsd.log" || fail "$what: no log line '$reason'"
}

if part a; then
	heal "a. root deleted" "root qdisc deleted" tc qdisc del dev "$IF_PS" root
	[ "$(tree 't.get("state")'), $(tree 't.get("watched")')" = "intact, True" ] ||
		fail "a. status: $(tree 't')"
	counted 715d:10 1 "a. after the heal"
fi
if part b; then
	heal "b. filter deleted" "classifier filter deleted" \
		tc filter del dev "$IF_PS" egress pref 29021
	[ "$(in_ps tc filter show dev "$IF_PS" egress | grep -c tls_classify)" -eq 1 ] ||
		fail "b. expected one classifier filter"
	counted 715d:10 1 "b. after the heal"
	heal "b. ingress filter deleted" "ingress counter filter deleted" \
		tc filter del dev "$IF_PS" ingress pref 29021
	[ "$(in_ps tc filter show dev "$IF_PS" ingress | grep -c tls_ingress)" -eq 1 ] ||
		fail "b. expected one ingress counter filter"
	heal "b. clsact deleted" "clsact qdisc deleted" tc qdisc del dev "$IF_PS" clsact
	counted 715d:10 1 "b. after the clsact heal"
fi
if part c; then
	heal "c. root replaced" "root qdisc replaced by pfifo (handle 1:)" \
		tc qdisc replace dev "$IF_PS" root handle 1: pfifo limit 100
	counted 715d:10 1 "c. after the heal"
fi

if part d; then
	# a fresh count (SIGHUP: the heals of a-c no longer count, so the
	# yield comes at the sixth replace), then a tool that replaces the
	# root for good
	n=$(log_count "configuration reloaded")
	kill -HUP "$TLSD_PID"
	i=0
	while [ "$(log_count "configuration reloaded")" -eq "$n" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	n=1
	while [ $n -le 5 ]; do
		heal "d. replace $n" "root qdisc replaced by pfifo (handle 1:)" \
			tc qdisc replace dev "$IF_PS" root handle 1: pfifo limit 100
		n=$((n + 1))
	done
	in_ps tc qdisc replace dev "$IF_PS" root handle 1: pfifo limit 100
	wait_line "$TMPD/tlsd.log" 2 "$IF_PS: root qdisc replaced by pfifo (handle 1:) again after 5 heals within 60s" ||
		fail "d. tlsd did not yield at the sixth replace: $(tail -3 "$TMPD/tlsd.log")"
	grep "again after 5 heals" "$TMPD/tlsd.log" | sed 's/^/  tlsd: /'
	grep -q "SIGHUP (or a restart) takes $IF_PS back" "$TMPD/tlsd.log" ||
		fail "d. the yield does not say how to take the interface back"
	[ "$(tree 't.get("state")')" = yielded ] || fail "d. status: $(tree 't')"
	[ "$(tree 't.get("heals_recent")')" = 5 ] || fail "d. status: $(tree 't')"
	case "$(tree 't.get("yield_reason")')" in
	*"replaced by pfifo"*"after 5 heals"*) ;;
	*) fail "d. status's yield reason: $(tree 't.get("yield_reason")')" ;;
	esac
	ctl status | grep -q "^tree           yielded .*SIGHUP or a restart takes it back" ||
		fail "d. tlsctl status: $(ctl status)"
	# the other tool's qdisc stays, tlsd's own filter is gone, and more
	# changes meanwhile are not fought, nor said again
	i=0
	while [ $i -lt 5 ]; do
		in_ps tc qdisc show dev "$IF_PS" | grep -q "^qdisc pfifo 1: root.*limit 100p" ||
			fail "d. the other tool's root qdisc was not left in place: $(in_ps tc qdisc show dev "$IF_PS")"
		sleep 0.2
		i=$((i + 1))
	done
	in_ps tc filter show dev "$IF_PS" egress | grep -q tls_classify &&
		fail "d. tlsd's filter stayed after it yielded"
	in_ps tc filter show dev "$IF_PS" ingress | grep -q tls_ingress &&
		fail "d. tlsd's ingress counter stayed after it yielded"
	in_ps tc qdisc replace dev "$IF_PS" root handle 2: pfifo limit 200
	sleep 0.3
	in_ps tc qdisc show dev "$IF_PS" | grep -q "^qdisc pfifo 2: root" || fail "d. tlsd fought on after yielding"
	[ "$(log_count "again after")" -eq 1 ] || fail "d. the yield was said $(log_count "again after") times"
	[ "$(tree 't.get("heals")')" = $HEALS ] || fail "d. heals counted while yielded"
	# SIGHUP takes it back (not a heal: nothing counted)
	t0=$(now_ms)
	kill -HUP "$TLSD_PID"
	wait_tree "$t0" "d. SIGHUP"
	grep -q "$IF_PS: taking the interface back (SIGHUP)" "$TMPD/tlsd.log" || fail "d. no log line for the resume"
	[ "$(tree 't.get("state")')" = intact ] || fail "d. status after SIGHUP: $(tree 't')"
	[ "$(tree 't.get("heals")')" = $HEALS ] || fail "d. the resume was counted as a heal"
	restart_traffic
	counted 715d:10 1 "d. after SIGHUP"
fi

if part e; then
	# rotations every 100 ms while the interface is away
	ctl policy roundrobin interval 100ms >/dev/null || fail "e. tlsctl policy"
	kill "$PULL_PID"
	wait_pid "$PULL_PID" 5
	mark=$(wc -l <"$TMPD/tlsd.log")
	ip -n "$NS_PS" link del "$IF_PS" || fail "e. cannot delete $IF_PS"
	t0=$(now_ms)
	while [ "$(tree 't.get("state")')" != absent ]; do
		[ $(($(now_ms) - t0)) -gt 1000 ] && fail "e. status does not say the interface is absent: $(tree 't')"
		sleep 0.02
	done
	ctl status | grep -q "^tree           interface absent for" || fail "e. tlsctl status: $(ctl status)"
	sleep 1.5
	s0=$(tree 'r["step"]')
	sleep 0.5
	[ "$(tree 'r["step"]')" -gt "$s0" ] || fail "e. no rotations while the interface was absent"
	tail -n +$((mark + 1)) "$TMPD/tlsd.log" >"$TMPD/absent.log"
	[ "$(grep -c "is gone" "$TMPD/absent.log")" -eq 1 ] || fail "e. 'is gone' said $(grep -c "is gone" "$TMPD/absent.log") times"
	grep -v "is gone\|top band's ceiling\|policy roundrobin" "$TMPD/absent.log" | grep . &&
		fail "e. tlsd said more while the interface was absent (above)"
	info "e. while absent, one line: $(cat "$TMPD/absent.log" | grep "is gone")"
	# the same interface again, as a management tool would make it
	t0=$(now_ms)
	ip link add "$IF_PS" netns "$NS_PS" type veth peer name "$IF_WK" netns "$NS_WK" ||
		fail "e. cannot create the veth pair again"
	wait_tree "$t0" "e. re-created"
	REBORN_MS=$TOOK
	in_ps ip addr add $PS4/24 dev "$IF_PS" &&
		in_wk ip addr add $WK4/24 dev "$IF_WK" &&
		in_ps ip -6 addr add $PS6/64 dev "$IF_PS" nodad &&
		in_wk ip -6 addr add $WK6/64 dev "$IF_WK" nodad &&
		in_ps ip link set "$IF_PS" up &&
		in_wk ip link set "$IF_WK" up || fail "e. cannot configure the new veth pair"
	grep -q "$IF_PS is back (index [0-9]*): scheduling it again" "$TMPD/tlsd.log" ||
		fail "e. no log line for the interface coming back"
	[ "$(tree 't.get("state")')" = intact ] || fail "e. status: $(tree 't')"
	[ "$(tree 't.get("interface_returns")')" = 1 ] || fail "e. status: $(tree 't')"
	tree_ok || fail "e. the tree went again once the interface was up"
	start_traffic
	counted "715d:10 715d:11" "1 2" "e. on the new interface"
	info "e. the re-created interface was scheduled $REBORN_MS ms after it was created"
fi

# f. exit: the user's pfifo from before tlsd, whatever happened since
stop_tlsd
[ "$TLSD_RC" -eq 0 ] || fail "f. tlsd exited with $TLSD_RC"
q=$(in_ps tc qdisc show dev "$IF_PS")
echo "$q" | grep -q "htb" && fail "f. HTB left after SIGTERM: $q"
echo "$q" | grep -q "clsact" && fail "f. clsact left after SIGTERM: $q"
echo "$q" | grep -q "^qdisc pfifo 5: root.*limit 777" || fail "f. the user's root qdisc was not put back: $q"
[ -d "$PIN" ] && fail "f. pins left after SIGTERM: $(ls "$PIN")"

if part g; then
	TAP="${PFX}t"
	instance_add "$TAP"
	if ! command -v ethtool >/dev/null 2>&1 || ! in_ps ip tuntap add dev "$TAP" mode tap 2>/dev/null ||
		! in_ps ethtool -s "$TAP" speed 1000 duplex full 2>/dev/null; then
		info "g. SKIPPED: no tap device whose speed ethtool can set here"
	else
		in_ps ip link set "$TAP" up
		cat >"$TMPD/tap.conf" <<EOC
interface = "$TAP";
policy = "one";
bands = 2;
control_socket = "$TMPD/tap.sock";
jobs = ( { name = "a"; ports = [ 9001 ]; } );
discovery = { enabled = false; };
EOC
		start_tlsd -N "$NS_PS" "$TMPD/tap.conf"
		root_rate() { in_ps tc class show dev "$TAP" | awk '$3 == "715d:1" { for (i = 1; i < NF; i++) if ($i == "rate") print $(i + 1) }'; }
		[ "$(root_rate)" = 1Gbit ] || fail "g. the tree's rate is $(root_rate), the tap's speed 1000Mb/s"
		# a new speed, announced as a renegotiation is: the link flaps
		t0=$(now_ms)
		in_ps ethtool -s "$TAP" speed 100 duplex full || fail "g. ethtool -s"
		in_ps ip link set "$TAP" down && in_ps ip link set "$TAP" up || fail "g. link flap"
		while [ "$(root_rate)" != 100Mbit ]; do
			[ $(($(now_ms) - t0)) -gt 1000 ] && fail "g. the tree's rate stayed $(root_rate) after the speed went to 100Mb/s: $(tail -3 "$TMPD/tlsd.log")"
			sleep 0.02
		done
		grep -q "$TAP: link speed now 100mbit (was 1gbit): the HTB tree follows" "$TMPD/tlsd.log" ||
			fail "g. no log line for the speed change: $(tail -3 "$TMPD/tlsd.log")"
		[ "$("$CTL" -s "$TMPD/tap.sock" -j status | python3 -c 'import json, sys; r = json.load(sys.stdin); print(r["link_rate_bps"], r["tree"]["rate_changes"])')" = "100000000 1" ] ||
			fail "g. status: $("$CTL" -s "$TMPD/tap.sock" -j status)"
		info "g. the tree followed the tap from 1gbit to 100mbit in $(($(now_ms) - t0)) ms"
		stop_tlsd
		in_ps tc qdisc show dev "$TAP" | grep -q htb && fail "g. HTB left on the tap"
	fi
fi
echo "PASS: tlsd heals its tree (deleted, replaced, filter, clsact), yields to a tool that fights it and is taken back by SIGHUP, schedules a re-created interface, follows the link's speed, and restores the interface at exit"
