# SPDX-License-Identifier: GPL-2.0-only
# Shared by the namespace tests: a PS host and a worker host in their own
# network namespaces, joined by a veth pair, all named with a per-run prefix
# and removed on exit, whatever happens. Addresses from 198.18.0.0/15 and
# fd00::/8 only. Source it; then call ns_setup.
#
# Exit codes: 0 pass, 1 fail, 77 skip (with the reason on stdout).

OUT=${OUT:-build}
# Callers outside tests/*/ set TOP to the source tree first.
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN="$TOP/$OUT"
CLS="$BIN/tls-classifier"
EMU="$BIN/tls-emu"

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
info() { echo "  $*"; }

[ "$(id -u)" -eq 0 ] || skip "namespace tests need root (netns, veth, tc, BPF)"
for t in ip tc nsenter; do
	command -v $t >/dev/null 2>&1 || skip "$t not installed"
done

PFX="tl$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
NS_PS="${PFX}ps"
NS_WK="${PFX}wk"
IF_PS="${PFX}p"	# the PS host's egress interface: HTB and the classifier
IF_WK="${PFX}w"
PS4=198.18.0.1
WK4=198.18.0.2
PS6=fd00::1
WK6=fd00::2
# tlsd's pins, lock and state file are its instance's: IF@NETNS_INODE
# (ns_setup sets them once the namespace exists)
PIN="/sys/fs/bpf/tlsd/$IF_PS"
LOCK="/run/tlsd/$IF_PS.lock"
STATE="/run/tlsd/$IF_PS.state"
TMPD=$(mktemp -d "/tmp/$PFX.XXXXXX")
PIDS=""
# More namespaces of this run's than NS_PS and NS_WK (ns_add), and tlsd
# instances other than IF_PS's (instance_add IF [NS]): the cleanup removes
# them too.
NETNS=""
INSTANCES=""

# Only our own children, and only while they run: a PID whose parent is
# not this shell is gone (or reused by someone else) and is never signalled.
# (A zombie, exited but not yet reaped, is not running.)
ours() {
	# A child of this shell or of the subshell running this (a function
	# called in $(...) starts its processes from the subshell, and $$ stays
	# the main shell's). `read` is a builtin: /proc/self is this process.
	read -r _me _ </proc/self/stat
	set -- $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null)
	{ [ "${2:-}" = "$$" ] || [ "${2:-}" = "$_me" ]; } && [ "${1:-Z}" != Z ]
}
# ns_add NAME: a namespace of this run's, removed at exit
ns_add() {
	ip netns add "$1" || fail "cannot create netns $1"
	NETNS="$NETNS $1"
}
# instance_add IF [NS]: tlsd may run on interface IF of namespace NS (the
# PS host's by default): what a killed one left goes at exit
instance_add() { INSTANCES="$INSTANCES $1@${2:-$NS_PS}"; }
# What tlsd on IF in namespace NS left (classifier, pins, lock), while the
# namespace exists: its instance is named after the namespace's inode.
drop_instance() {	# drop_instance IF NS
	[ -e "/run/netns/$2" ] || return 0
	_e=$(inst "$1" "$2" 2>/dev/null) || return 0
	# in its namespace, so that the tc filter is found and removed too
	[ -d "/sys/fs/bpf/tlsd/$_e" ] &&
		in_ns "$2" "$CLS" -i "$1" -P "/sys/fs/bpf/tlsd/$_e" detach >/dev/null 2>&1
	rm -rf "/sys/fs/bpf/tlsd/$_e"
	rm -f "/run/tlsd/$_e.lock" "/run/tlsd/$_e.state" "/run/tlsd/$_e.state.tmp" \
		"/run/tlsd/$_e.state.bad"
}
# Our processes end first (tlsd detaches itself then); what a killed tlsd
# left (classifier, pins, lock) and the namespaces go after.
ns_cleanup() {
	for p in $PIDS; do
		ours "$p" && kill "$p" 2>/dev/null
	done
	for p in $PIDS; do
		ours "$p" || continue
		wait_pid "$p" 5 || kill -KILL "$p" 2>/dev/null
	done
	# IF_PS's by PIN: a test may have moved it (test_two_namespaces)
	[ -d "$PIN" ] && in_ps "$CLS" -i "$IF_PS" -P "$PIN" detach >/dev/null 2>&1
	for i in $INSTANCES; do
		drop_instance "${i%@*}" "${i##*@}"
	done
	for n in $NETNS; do
		ip netns del "$n" 2>/dev/null
	done
	ip netns del "$NS_PS" 2>/dev/null
	ip netns del "$NS_WK" 2>/dev/null
	rm -f "$LOCK"	# tlsd leaves its lock file (flock) behind
	rm -f "$STATE" "$STATE.tmp" "$STATE.bad"	# and a killed one its state
	rm -rf "$PIN" "$TMPD"
}
trap ns_cleanup EXIT
trap 'exit 1' INT TERM HUP

# Run a command in a namespace; only the network namespace changes, so
# bpffs pins stay visible (ip netns exec would remount /sys).
in_ns() {	# in_ns NS CMD...
	_n=$1
	shift
	nsenter --net="/run/netns/$_n" -- "$@"
}
in_ps() { in_ns "$NS_PS" "$@"; }
in_wk() { in_ns "$NS_WK" "$@"; }

# Start a command in the background, remember its PID for the cleanup.
# nsenter directly, not through a function: then $! is nsenter, which execs
# the command, so the PID is the command's own.
bg_ns() {	# bg_ns NS LOGFILE CMD...
	_n=$1 out=$2
	shift 2
	nsenter --net="/run/netns/$_n" -- "$@" >"$out" 2>&1 &
	LAST=$!; PIDS="$PIDS $LAST"
}
bg_ps() { bg_ns "$NS_PS" "$@"; }
# In this (the host's) namespace: tlsd -N NS_PS, which must listen for
# process events here, the only namespace the kernel sends them to.
bg_host() {
	out=$1; shift
	"$@" >"$out" 2>&1 &
	LAST=$!; PIDS="$PIDS $LAST"
}
# bg_nobody_flood COUNT URI WAIT_S: COUNT processes of user nobody that the
# built-in dmlc rule matches, each its own job (DMLC_PS_ROOT_URI=URI, ports
# from 10000), sleeping, started by a spawner of nobody's that ends them
# (by their pids) on SIGTERM. FLOOD is the spawner's pid, in PIDS; returns
# once all are started, or fails after WAIT_S seconds.
bg_nobody_flood() {
	bg_host "$TMPD/flood" setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" \
		--clear-groups sh -c 'trap "kill \$pids; exit 0" TERM
	i=0; pids=""
	while [ $i -lt '"$1"' ]; do
		DMLC_ROLE=server DMLC_PS_ROOT_URI='"$2"' DMLC_PS_ROOT_PORT=$((10000 + i)) sleep 600 &
		pids="$pids $!"; i=$((i + 1))
	done
	echo spawned; wait'
	FLOOD=$LAST
	wait_line "$TMPD/flood" "$3" spawned || fail "the flood did not start: $(cat "$TMPD/flood")"
}
bg_wk() { bg_ns "$NS_WK" "$@"; }

# inst IF [NS]: tlsd's instance name of interface IF in namespace NS (the
# PS host's by default), as tlsd names its pins and lock
inst() { echo "$1@$(stat -L -c %i "/run/netns/${2:-$NS_PS}")"; }

# PIN and LOCK of tlsd on IF_PS, once NS_PS exists (a test that makes its
# namespaces itself calls this after)
ns_instance() {
	PIN="/sys/fs/bpf/tlsd/$(inst "$IF_PS")"
	LOCK="/run/tlsd/$(inst "$IF_PS").lock"
	STATE="/run/tlsd/$(inst "$IF_PS").state"
}

ns_setup() {
	ip netns add "$NS_PS" || fail "cannot create netns $NS_PS"
	ns_instance
	ip netns add "$NS_WK" || fail "cannot create netns $NS_WK"
	ip link add "$IF_PS" netns "$NS_PS" type veth peer name "$IF_WK" netns "$NS_WK" ||
		fail "cannot create veth pair"
	in_ps ip addr add $PS4/24 dev "$IF_PS" &&
		in_wk ip addr add $WK4/24 dev "$IF_WK" &&
		in_ps ip -6 addr add $PS6/64 dev "$IF_PS" nodad &&
		in_wk ip -6 addr add $WK6/64 dev "$IF_WK" nodad &&
		in_ps ip link set lo up &&
		in_wk ip link set lo up &&
		in_ps ip link set "$IF_PS" up &&
		in_wk ip link set "$IF_WK" up || fail "cannot configure the veth pair"
}

# HTB on the PS egress: root 1:1 at RATE, bands 1:10.. (prio = band), default
# class 1:ff at the lowest priority. What tlsd's shaper builds, by hand.
htb_setup() {
	rate=$1 nbands=$2
	in_ps tc qdisc add dev "$IF_PS" root handle 1: htb default ff ||
		fail "cannot add HTB (kernel without sch_htb?)"
	in_ps tc class add dev "$IF_PS" parent 1: classid 1:1 htb rate "$rate" ceil "$rate" \
		quantum 60000 || fail "cannot add HTB class 1:1"
	b=0
	while [ $b -lt "$nbands" ]; do
		in_ps tc class add dev "$IF_PS" parent 1:1 classid 1:1$b htb \
			rate 1mbit ceil "$rate" prio $b quantum 60000 || fail "HTB class 1:1$b"
		b=$((b + 1))
	done
	in_ps tc class add dev "$IF_PS" parent 1:1 classid 1:ff htb rate 1mbit ceil "$rate" \
		prio 7 quantum 60000 || fail "cannot add HTB class 1:ff"
}

cls_attach() {
	in_ps "$CLS" -i "$IF_PS" -P "$PIN" attach "$@" >/dev/null || fail "classifier attach failed"
	b=0
	while [ $b -lt 7 ]; do
		in_ps "$CLS" -i "$IF_PS" -P "$PIN" band $b 1:1$b || fail "band $b"
		b=$((b + 1))
	done
}

cls() { in_ps "$CLS" -i "$IF_PS" -P "$PIN" "$@"; }

# Bytes HTB counted in class $1 (e.g. 1:10).
class_bytes() {
	in_ps tc -s class show dev "$IF_PS" classid "$1" |
		awk '/Sent/ { print $2; exit }'
}

# A field of a job's counters: job_stat JOB FIELD
job_stat() {
	cls -j stats "$1" | tr '{,}' '\n\n\n' | awk -F: -v f="\"$2\"" '$1 == f { print $2 }'
}

# A PS on $PS4:9000 made a member of job $1 (`cls process`), one worker
# pulling from it for about $2 s (tls-emu's timeout), then 1.5 s of its
# traffic: sets PS_PID, and A to the job's bytes by then (> 1 MB, or fail).
member_transfer() {
	bg_ps "$TMPD/ps" "$EMU" ps -l $PS4:9000 -t "$2" -w
	PS_PID=$LAST
	wait_line "$TMPD/ps" 5 "ready pid=" || fail "PS did not start"
	cls process "$PS_PID" "$1" >/dev/null || fail "cannot add the PS"
	bg_wk "$TMPD/pull" "$EMU" pull -c $PS4:9000
	sleep 0.3
	kill -USR1 "$PS_PID"
	sleep 1.5
	A=$(job_stat "$1" bytes)
	[ "$A" -gt 1000000 ] || fail "job $1 carried only $A B while the PS was a member"
}

# After the PS's traffic left job $1: over 1.5 s the job gains nothing and
# the unclassified counter (job 0) over 1 MB; $2 describes the change.
left_job() {
	sleep 0.3	# packets classified before the change may still be queued
	b1=$(job_stat "$1" bytes)
	b0=$(job_stat 0 bytes)
	sleep 1.5
	c1=$(job_stat "$1" bytes)
	c0=$(job_stat 0 bytes)
	info "job $1: $A B before; $2: +$((c1 - b1)) B in 1.5 s; unclassified +$((c0 - b0)) B"
	[ "$c1" -eq "$b1" ] || fail "job $1 still counts the PS's traffic ($2)"
	[ $((c0 - b0)) -gt 1000000 ] || fail "the PS's traffic was not seen as unclassified ($2)"
}

# A copy of program $1 that user nobody can run even inside a user
# namespace of its own, whatever the checkout's permissions (a clone in a
# 0700 directory is out of its reach there): prints the copy's path.
nobody_copy() {
	chmod 711 "$TMPD" && mkdir -p "$TMPD/pub" && chmod 755 "$TMPD/pub" &&
		cp "$1" "$TMPD/pub/" && chmod 755 "$TMPD/pub/${1##*/}" && echo "$TMPD/pub/${1##*/}"
}

# Wait up to $2 seconds for a line matching $3 in file $1.
wait_line() {
	i=0
	while [ $i -lt $(($2 * 10)) ]; do
		grep -q "$3" "$1" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# expect RC PATTERN CMD...: exit status RC and output matching PATTERN (grep)
expect() {
	rc=$1 pat=$2
	shift 2
	"$@" >"$TMPD/out" 2>&1
	got=$?
	[ $got -eq "$rc" ] || fail "'$*' exited $got, expected $rc: $(cat "$TMPD/out")"
	grep -q -- "$pat" "$TMPD/out" || fail "'$*' did not say '$pat': $(cat "$TMPD/out")"
	info "$(head -1 "$TMPD/out")"
}

# Wait for a PID of ours to exit, at most $2 seconds.
wait_pid() {
	i=0
	while [ $i -lt $(($2 * 10)) ]; do
		ours "$1" || return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# within A B PERCENT: |A - B| <= PERCENT% of B
within() {
	awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d * 100 <= p * b) }'
}

# The calibration testbed (test_calibrate.sh, test_spotdnn_export.sh):
# wk_testbed NWK CAP_MBIT [RMEM]: the PS host (NS_PS, PS4 on IF_PS) whose
# egress goes into a bridge in NS_WK, and NWK workers, each in a namespace
# of its own (${PFX}w1.., 198.18.0.11..) behind the bridge, with a tbf at
# CAP_MBIT on the bridge port toward it (a worker's TCP gets exactly the
# cap, counted as HTB counts: frames with their headers); RMEM: the
# workers' tcp_rmem. Sets MTU (IF_PS's); the worker namespaces go with the
# cleanup (ns_add). in_br, in_w N: run in the bridge's, worker N's.
# PUSH_LINK_MBIT (optional): the push shaped too (see below).
in_br() { in_ns "$NS_WK" "$@"; }
in_w() {
	w=$1
	shift
	in_ns "${PFX}w$w" "$@"
}
wk_testbed() {
	ip netns add "$NS_PS" && ip netns add "$NS_WK" || fail "cannot create namespaces"
	ns_instance
	in_br ip link add "${PFX}br" type bridge && in_br ip link set "${PFX}br" up &&
		ip link add "$IF_PS" netns "$NS_PS" type veth peer name "${PFX}b0" netns "$NS_WK" &&
		in_br ip link set "${PFX}b0" master "${PFX}br" && in_br ip link set "${PFX}b0" up &&
		in_ps ip addr add $PS4/24 dev "$IF_PS" && in_ps ip link set lo up &&
		in_ps ip link set "$IF_PS" up || fail "cannot build the PS host and the bridge"
	j=1
	while [ $j -le "$1" ]; do
		ns_add "${PFX}w$j"
		ip link add "${PFX}v$j" netns "${PFX}w$j" type veth peer name "${PFX}b$j" \
			netns "$NS_WK" &&
			in_w $j ip addr add 198.18.0.$((10 + j))/24 dev "${PFX}v$j" &&
			in_w $j ip link set lo up && in_w $j ip link set "${PFX}v$j" up &&
			in_br ip link set "${PFX}b$j" master "${PFX}br" &&
			in_br ip link set "${PFX}b$j" up &&
			in_br tc qdisc add dev "${PFX}b$j" root tbf rate "$2"mbit burst 16kb \
				latency 200ms || fail "cannot build worker host $j"
		if [ -n "${3:-}" ]; then
			in_w $j sysctl -qw net.ipv4.tcp_rmem="$3" ||
				fail "cannot set tcp_rmem of worker host $j"
		fi
		j=$((j + 1))
	done
	# Push shaped as the pull (PUSH_LINK_MBIT set): each worker's own
	# egress at CAP_MBIT, and the bridge port toward the PS at
	# PUSH_LINK_MBIT, the PS's ingress link. The PS keeps the kernel's
	# receive buffers: a worker's tbf paces its push at the source, so a
	# large window sends no burst into the link's tbf, and with RMEM (128 KB)
	# a PS waiting 25 ms for a CPU on a loaded machine stalled the push (B_wk
	# at n = 2 9% low).
	if [ -n "${PUSH_LINK_MBIT:-}" ]; then
		j=1
		while [ $j -le "$1" ]; do
			in_w $j tc qdisc add dev "${PFX}v$j" root tbf rate "$2"mbit burst 16kb \
				latency 200ms || fail "cannot shape worker host $j's egress"
			j=$((j + 1))
		done
		in_br tc qdisc add dev "${PFX}b0" root tbf rate "$PUSH_LINK_MBIT"mbit burst 16kb \
			latency 200ms || fail "cannot shape the PS host's ingress link"
	fi
	MTU=$(in_ps ip -o link show dev "$IF_PS" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p')
	[ -n "$MTU" ] || fail "cannot read the MTU of $IF_PS"
}

# tlsd's lifecycle: start_tlsd, wait_tlsd, stop_tlsd, reload_tlsd
. "$TOP/tests/lib/tlsd.sh"
