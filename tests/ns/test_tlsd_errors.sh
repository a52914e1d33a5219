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

clean() {	# nothing of tlsd on the interface and in bpffs
	in_ps tc qdisc show dev "$1" | grep -qE "htb|clsact" && fail "qdisc left on $1"
	for d in "/sys/fs/bpf/tlsd/$1" "/sys/fs/bpf/tlsd/$1@"*; do
		[ -d "$d" ] && fail "pins left for $1: $d"
	done
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
start_tlsd -l "$TMPD/first.log" "$TMPD/c.conf"
FIRST=$TLSD_PID
expect 1 "another tlsd is already running on $IF_PS (pid $FIRST" in_ps "$TLSD" -f -c "$TMPD/c.conf"
ours "$FIRST" || fail "the first tlsd died"
in_ps tc qdisc show dev "$IF_PS" | grep -q htb || fail "the second tlsd removed the first one's tree"
stop_tlsd
wait_pid "$FIRST" 10 || fail "first tlsd did not stop"
clean "$IF_PS"
# A rate HTB cannot pace is refused; "0" no longer means "auto" silently.
expect 1 "below the least HTB can pace" in_ps "$TLSD" -f -i "$IF_PS" -r 7
conf "interface = \"$IF_PS\";" 'link_rate = "0";'
expect 1 "link_rate: 0 bit/s is below" in_ps "$TLSD" -f -c "$TMPD/c.conf"
clean "$IF_PS"

# Control characters in what other users write (here a configuration
# value with ESC and CR) reach the log escaped, never raw.
printf 'interface = "%s";\nlink_rate = "1gbit";\npolicy = "\033[2Jevil\rfake";\ncontrol_socket = "%s/tlsd.sock";\n' \
	"$IF_PS" "$TMPD" >"$TMPD/c.conf"
expect 1 "policy: '.x1b\[2Jevil.x0dfake'" in_ps "$TLSD" -f -c "$TMPD/c.conf"
grep -q "$(printf '\033')" "$TMPD/out" && fail "a raw ESC reached the log: $(od -c "$TMPD/out" | head -3)"
grep -q "$(printf '\r')" "$TMPD/out" && fail "a raw CR reached the log"
clean "$IF_PS"

# The lock is never followed through a link: root would write its pid into
# (and truncate) whatever file the link names.
conf "interface = \"$IF_PS\";" 'link_rate = "1gbit";'
echo keep >"$TMPD/victim"
mkdir -p /run/tlsd
rm -f "$LOCK"	# left by the runs above
ln -s "$TMPD/victim" "$LOCK" || fail "cannot make the lock a link"
# (bounded: a tlsd that took the lock would run until stopped)
timeout -k 5 20 nsenter --net="/run/netns/$NS_PS" -- "$TLSD" -f -c "$TMPD/c.conf" >"$TMPD/out" 2>&1
rc=$?
rm -f "$LOCK"
[ $rc -eq 1 ] && grep -q "symbolic link" "$TMPD/out" || fail "a lock that is a link was not refused (rc $rc): $(cat "$TMPD/out")"
[ "$(cat "$TMPD/victim")" = keep ] || fail "the lock's link target was written to"
info "$(head -1 "$TMPD/out")"
clean "$IF_PS"

# Its log going nowhere (the reader of its pipe gone) does not kill tlsd:
# it still reloads, and SIGTERM still restores the interface.
mkfifo "$TMPD/logpipe"
head -n 1 "$TMPD/logpipe" >"$TMPD/first-line" &
READER=$!
PIDS="$PIDS $READER"
bg_ps "$TMPD/logpipe" "$TLSD" -f -v -c "$TMPD/c.conf"
PIPED=$LAST
wait_pid "$READER" 10 || fail "the log reader did not get a line"
i=0
while ! in_ps tc qdisc show dev "$IF_PS" | grep -q htb && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -HUP "$PIPED"	# a reload logs a line or more into the closed pipe
sleep 1
ours "$PIPED" || fail "tlsd died when its log pipe closed (SIGPIPE?)"
stop_tlsd "$PIPED"
[ "$TLSD_RC" -eq 0 ] || fail "tlsd with a closed log exited $TLSD_RC"
clean "$IF_PS"
info "log pipe closed after '$(cat "$TMPD/first-line")': tlsd reloaded and stopped cleanly"

# A takeover of a tree whose pins and state file were removed (the record
# of the root qdisc before the first tlsd with them) says what exit will
# do. (The pins alone removed: the state file still has the record.)
conf "interface = \"$IF_PS\";" 'link_rate = "1gbit";'
start_tlsd -l "$TMPD/t1.log" "$TMPD/c.conf"
stop_tlsd -KILL
rm -rf "$PIN"
start_tlsd -l "$TMPD/t1b.log" "$TMPD/c.conf"
grep -q "record of the root qdisc before it is gone" "$TMPD/t1b.log" &&
	fail "the record in the state file was not used: $(cat "$TMPD/t1b.log")"
stop_tlsd -KILL
rm -rf "$PIN"
rm -f "$STATE"
start_tlsd -l "$TMPD/t2.log" "$TMPD/c.conf"
grep -q "record of the root qdisc before it is gone" "$TMPD/t2.log" ||
	fail "no warning that the previous root qdisc is unknown: $(cat "$TMPD/t2.log")"
info "$(grep "record of the root qdisc" "$TMPD/t2.log")"
stop_tlsd
in_ps tc qdisc show dev "$IF_PS" | grep -q htb && fail "the HTB tree was left after the takeover"
in_ps tc filter show dev "$IF_PS" egress | grep -q tls_classify && fail "the classifier was left"
# The record that the first tlsd made the clsact qdisc was in the pins:
# the second leaves it (it may be another tool's); ours to remove here.
in_ps tc qdisc del dev "$IF_PS" clsact 2>/dev/null
clean "$IF_PS"

echo "PASS: tlsd refuses bad starts with clear errors and leaves nothing behind"
