#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The harness every namespace test, benchmark and the testbed stand on
# (tests/ns/lib.sh, tests/lib/tlsd.sh), run as those scripts run it: a
# child script sources lib.sh and fails in a chosen way; this test then
# looks at what it said and what it left.
#  a. a configuration tlsd refuses: start_tlsd fails at once (not after its
#     wait), naming the command, the log and tlsd's own error;
#  b. no ready line in time: it fails naming the wait, and the cleanup ends
#     the tlsd that is still running;
#  c. a test that fails with one tlsd killed by -9 and another running in a
#     namespace of its own (ns_add, instance_add): nothing of either is
#     left (processes, namespaces, pins, locks, its temporary directory);
#  d. bad calls of start_tlsd are named.
. "$(dirname "$0")/lib.sh"

[ -x "$TLSD" ] || fail "$TLSD not built"

cat >"$TMPD/child.sh" <<'EOS'
. "$TOP/tests/ns/lib.sh"
echo "tmpd $TMPD"
conf() {	# conf IF SOCKET: a static job on IF, its control socket
	printf 'interface = "%s";\nlink_rate = "100mbit";\ncontrol_socket = "%s";\n%s\n' "$1" "$2" \
		'discovery = { enabled = false; }; jobs = ( { name = "a"; ports = [ 9001 ]; } );'
}
case $1 in
refused)
	ns_setup
	start_tlsd "$TMPD/nonexistent.conf"
	;;
late)
	ns_setup
	conf "$IF_PS" "$TMPD/tlsd.sock" >"$TMPD/tlsd.conf"
	start_tlsd -b -t 3 -r '^no such line' "$TMPD/tlsd.conf"
	echo "pid $TLSD_PID"
	wait_tlsd
	;;
crash)
	ns_setup
	X="${PFX}x"
	ns_add "$X"
	instance_add "${PFX}y" "$X"
	ip -n "$X" link add "${PFX}y" type veth peer name "${PFX}z" &&
		ip -n "$X" link set "${PFX}y" up && ip -n "$X" link set "${PFX}z" up ||
		fail "cannot make the second interface"
	conf "$IF_PS" "$TMPD/a.sock" >"$TMPD/a.conf"
	conf "${PFX}y" "$TMPD/b.sock" >"$TMPD/b.conf"
	start_tlsd -l "$TMPD/a.log" "$TMPD/a.conf"
	echo "pid $TLSD_PID"
	stop_tlsd -KILL
	start_tlsd -n "$X" -l "$TMPD/b.log" "$TMPD/b.conf"
	echo "pid $TLSD_PID"
	[ -d "$PIN" ] || fail "no pins of the killed tlsd at $PIN"
	for p in "$PIN" "/sys/fs/bpf/tlsd/$(inst "${PFX}y" "$X")" "$LOCK" \
		"/run/tlsd/$(inst "${PFX}y" "$X").lock" "/run/netns/$NS_PS" "/run/netns/$NS_WK" \
		"/run/netns/$X"; do
		echo "made $p"
	done
	fail "on purpose, with a tlsd killed and one running"
	;;
usage)
	shift
	start_tlsd "$@"
	;;
esac
echo "not reached"
EOS
# child CASE [ARG...]: the child's output in $TMPD/out, its exit status in RC
child() {
	TOP="$TOP" OUT="$OUT" sh "$TMPD/child.sh" "$@" >"$TMPD/out" 2>&1
	RC=$?
}
said() { grep -q -- "$1" "$TMPD/out" || fail "$2 did not say '$1': $(cat "$TMPD/out")"; }
gone() {	# gone WHAT: the child's temporary directory and what it listed
	ctmp=$(sed -n 's/^tmpd //p' "$TMPD/out")
	[ -n "$ctmp" ] && [ ! -e "$ctmp" ] || fail "$1: the child's $ctmp is left"
	for p in $(sed -n 's/^made //p' "$TMPD/out"); do
		[ ! -e "$p" ] || fail "$1: $p is left"
	done
	for p in $(sed -n 's/^pid //p' "$TMPD/out"); do
		[ ! -e "/proc/$p" ] || fail "$1: tlsd (pid $p) still runs"
	done
}

# a.
t0=$(date +%s)
child refused
t=$(($(date +%s) - t0))
[ "$RC" -eq 1 ] || fail "a. exit $RC, expected 1: $(cat "$TMPD/out")"
said "^FAIL: tlsd exited (status 1) before it was ready: .*tlsd -f -v -c .*/nonexistent.conf (in namespace tl[0-9a-f]*ps); its log .*/tlsd.log ends:" "a."
said "nonexistent.conf" "a. (tlsd's own error)"
[ "$t" -lt 5 ] || fail "a. the failure took $t s: the wait went on after tlsd had exited"
gone "a."
info "a. $(grep '^FAIL' "$TMPD/out" | cut -c 1-150)..."

# b.
child late
[ "$RC" -eq 1 ] || fail "b. exit $RC, expected 1: $(cat "$TMPD/out")"
said "^FAIL: tlsd was not ready within 3 s: " "b."
said "^ready" "b. (tlsd's log, its last lines)"
gone "b."
info "b. $(grep '^FAIL' "$TMPD/out" | cut -c 1-100)..."

# c.
child crash
[ "$RC" -eq 1 ] || fail "c. exit $RC, expected 1: $(cat "$TMPD/out")"
said "^FAIL: on purpose" "c."
[ "$(grep -c '^made ' "$TMPD/out")" -eq 7 ] && [ "$(grep -c '^pid ' "$TMPD/out")" -eq 2 ] ||
	fail "c. the child did not get as far as its failure: $(cat "$TMPD/out")"
gone "c."
info "c. after a failure with a tlsd killed and one running: no process, namespace, pin or lock left"

# d.
child usage -q "$TMPD/x.conf"
said "^FAIL: start_tlsd: -q needs -s SOCKET" "d. -q alone"
child usage -x "$TMPD/x.conf"
said "^FAIL: start_tlsd: unknown option '-x'" "d. an unknown option"
child usage -l
said "^FAIL: start_tlsd: -l needs a value" "d. -l alone"
child usage -t 1s "$TMPD/x.conf"
said "^FAIL: start_tlsd: -t '1s': want whole seconds" "d. -t 1s"
child usage LD_PRELOAD=x
said "^FAIL: start_tlsd: no configuration file given" "d. no file"
info "d. bad calls named: -q alone, -x, -l alone, -t 1s, no file"
echo "PASS: start_tlsd fails at once naming the command and the log; the cleanup leaves nothing after a failure"
