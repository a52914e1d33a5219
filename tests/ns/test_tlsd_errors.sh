#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# tlsd refuses to start, with a message naming the problem and nothing left
# behind, when: not root, the interface is missing, the link reports no
# speed and none is configured, the configuration or the command line is bad,
# another tlsd already runs on the interface.
. "$(dirname "$0")/lib.sh"

TLSD="$BIN/tlsd"
ns_setup
# (A veth reports 10000 Mb/s through ethtool, up or down; lo reports none.)

expect() {	# expect RC PATTERN CMD...: exit status and a message matching PATTERN
	rc=$1 pat=$2
	shift 2
	"$@" >"$TMPD/out" 2>&1
	got=$?
	[ $got -eq "$rc" ] || fail "'$*' exited $got, expected $rc: $(cat "$TMPD/out")"
	grep -q -- "$pat" "$TMPD/out" || fail "'$*' did not say '$pat': $(cat "$TMPD/out")"
	info "$(head -1 "$TMPD/out")"
}
clean() {	# nothing of tlsd on the interface and in bpffs
	in_ps tc qdisc show dev "$1" | grep -qE "htb|clsact" && fail "qdisc left on $1"
	[ -d "/sys/fs/bpf/tlsd/$1" ] && fail "pins left for $1"
	true
}
# (each run its own control socket, not the host's default)
conf() { printf '%s\n' "$@" "control_socket = \"$TMPD/tlsd.sock\";" >"$TMPD/c.conf"; }

if command -v setpriv >/dev/null 2>&1; then
	expect 1 "must run as root" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$TLSD" -f -i "$IF_PS" -r 100mbit
fi
conf 'interface = "nosuchif0";' 'link_rate = "1gbit";'
expect 1 "interface nosuchif0 not found" in_ps "$TLSD" -f -c "$TMPD/c.conf"
conf 'interface = "lo";'
expect 1 "reports no link speed" in_ps "$TLSD" -f -c "$TMPD/c.conf"
clean lo
conf "interface = \"$IF_PS\";" 'link_rate = "1gbit";' 'policy = "lifo";'
expect 1 "policy: 'lifo'" in_ps "$TLSD" -f -c "$TMPD/c.conf"
conf "interface = \"$IF_PS\";" 'link_rate = "1gbit";' 'jobs = ( { name = "a"; ports = [ 70000 ]; } );'
expect 1 "port 70000" in_ps "$TLSD" -f -c "$TMPD/c.conf"
conf "interface = \"$IF_PS\";" 'link_rate = "1gbit";'
expect 1 "interval: must be at least 10ms" in_ps "$TLSD" -f -c "$TMPD/c.conf" -t 5ms
expect 1 "-r: 'fast'" in_ps "$TLSD" -f -c "$TMPD/c.conf" -r fast
expect 2 "unrecognized option" in_ps "$TLSD" --frobnicate
expect 1 "nonexistent.conf" in_ps "$TLSD" -f -c "$TMPD/nonexistent.conf"
clean "$IF_PS"
expect 0 "Usage: tlsd" "$TLSD" --help
# A kernel without a feature tlsd needs (tests/fault/kernel_refuse.c): the
# feature, the kernel's errno and what to check, and nothing changed.
conf "interface = \"$IF_PS\";" 'link_rate = "1gbit";'
expect 1 "needs kernel feature sk_storage .*Invalid argument.*check CONFIG_BPF_SYSCALL" \
	in_ps env LD_PRELOAD="$BIN/libtls-refuse.so" TLS_REFUSE=sk_storage "$TLSD" -f -c "$TMPD/c.conf"
clean "$IF_PS"
expect 1 "needs kernel feature sched_cls .*Operation not permitted.*check CONFIG_NET_CLS_BPF" \
	in_ps env LD_PRELOAD="$BIN/libtls-refuse.so" TLS_REFUSE=sched_cls "$TLSD" -f -c "$TMPD/c.conf"
clean "$IF_PS"
expect 2 "goes with --probe" "$TLSD" --summary

# One tlsd per interface: a second is refused and leaves the first alone.
conf "interface = \"$IF_PS\";" 'link_rate = "1gbit";' 'jobs = ( { name = "a"; ports = [ 9001 ]; } );'
bg_ps "$TMPD/first.log" "$TLSD" -f -v -c "$TMPD/c.conf"
FIRST=$LAST
wait_line "$TMPD/first.log" 10 "^ready" || fail "first tlsd did not start: $(cat "$TMPD/first.log")"
expect 1 "another tlsd is already running on $IF_PS (pid $FIRST" in_ps "$TLSD" -f -c "$TMPD/c.conf"
ours "$FIRST" || fail "the first tlsd died"
in_ps tc qdisc show dev "$IF_PS" | grep -q htb || fail "the second tlsd removed the first one's tree"
kill -TERM "$FIRST"
wait_pid "$FIRST" 10 || fail "first tlsd did not stop"
clean "$IF_PS"
echo "PASS: tlsd refuses bad starts with clear errors and leaves nothing behind"
