#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Issue 14, item 1: an unprivileged user cannot take another job's traffic.
# The attack: a user's process in a network namespace of its own
# (`unshare -rn`, as any user may) binds the PS host's address and a static
# job's port, with a built-in rule's environment, and listens. Its exact
# endpoint would win over the static job's wildcard in the classifier.
#  1. Default trust (root only): the user's process is not judged at all.
#  2. The user trusted (discovery.trust.users): it is found, but its
#     endpoint is refused as the static job's, said once; the static job
#     keeps every byte of its own either way.
. "$(dirname "$0")/lib.sh"

NOBODY=$(id -u nobody 2>/dev/null) || skip "no user nobody"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups unshare -rn true 2>/dev/null ||
	skip "unprivileged users cannot make namespaces here (unshare -rn)"
ns_setup
conf() {
	cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "1gbit";
policy = "one";
bands = 3;
control_socket = "$TMPD/tlsd.sock";
jobs = ( { name = "static"; ports = [ 9500 ]; } );
discovery = { rescan = "1s"; $1 };
EOC
}
conf ""
start_tlsd -N "$NS_PS" "$TMPD/tlsd.conf" -v

# The static job's PS (no rule matches it) and its worker.
bg_ps "$TMPD/ps" "$EMU" ps -l $PS4:9500 -t 8 -w
PS_PID=$LAST
wait_line "$TMPD/ps" 5 "ready pid=" || fail "the static job's PS did not start"
bg_wk "$TMPD/pull" "$EMU" pull -c $PS4:9500

# The intruder, as user nobody: setpriv and unshare exec, so its pid is the
# program's. Its own copy of tls-emu: in its user namespace the checkout may
# be out of its reach.
EMU_NOBODY=$(nobody_copy "$EMU") || fail "cannot copy $EMU for user nobody"
bg_host "$TMPD/intruder" setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups \
	unshare -rn sh -c "ip link set lo up && ip addr add $PS4/32 dev lo &&
	exec env DMLC_ROLE=server DMLC_PS_ROOT_URI=$PS4 DMLC_PS_ROOT_PORT=9500 \
	'$EMU_NOBODY' ps -l $PS4:9500 -t 8"
INTRUDER=$LAST
wait_line "$TMPD/intruder" 5 "ready pid=" || fail "the intruder did not start: $(cat "$TMPD/intruder")"

# shares: static job's bytes and the intruder's job's, over 2 s of pulls
S0=0
pull_2s() {
	X0=0
	[ -n "$1" ] && X0=$(job_stat "$1" bytes)
	kill -USR1 "$PS_PID"
	sleep 2
	S=$(($(job_stat 1 bytes) - S0))
	S0=$((S0 + S))
	X=0
	[ -n "$1" ] && X=$(($(job_stat "$1" bytes) - X0))
	info "$2: static job $S B in 2 s; the intruder's job: $X B"
	[ "$S" -gt 5000000 ] || fail "$2: the static job carried only $S B"
	[ "${X:-0}" -eq 0 ] || fail "$2: the intruder's job took $X B of the static job's traffic"
}

# 1. Not trusted: not judged (no command line or environment read).
sleep 1.5 # a rescan
grep -q "PS pid $INTRUDER .*found by rule" "$TMPD/tlsd.log" &&
	fail "an untrusted user's process was scheduled: $(grep "pid $INTRUDER" "$TMPD/tlsd.log")"
grep -q "pid $INTRUDER (uid $NOBODY): not judged: its user and groups are not in discovery.trust" \
	"$TMPD/tlsd.log" || fail "tlsd did not say why the intruder is not judged (-vv)"
pull_2s "" "nobody untrusted"

# 2. Trusted: found, its endpoint refused once.
conf "trust = { users = [ \"root\", \"nobody\" ]; };"
kill -HUP "$TLSD_PID"
wait_line "$TMPD/tlsd.log" 5 "PS pid $INTRUDER (.*uid $NOBODY) found by rule dmlc" ||
	fail "discovery did not find the trusted intruder: $(tail -5 "$TMPD/tlsd.log")"
wait_line "$TMPD/tlsd.log" 5 "endpoint $PS4:9500 is on a port job id 1 holds" ||
	fail "the intruder's endpoint was not refused: $(tail -5 "$TMPD/tlsd.log")"
intruder_id=$(sed -n 's/.*job dmlc:[^ ]* (id \([0-9]*\)) added.*/\1/p' "$TMPD/tlsd.log" | tail -1)
[ -n "$intruder_id" ] && [ "$intruder_id" -ne 1 ] || fail "no job id for the intruder: $(cat "$TMPD/tlsd.log")"
pull_2s "$intruder_id" "nobody trusted"
sleep 1.5 # more polls and a rescan: still said once
n=$(grep -c "is on a port job id 1 holds" "$TMPD/tlsd.log")
[ "$n" -eq 1 ] || fail "the refusal was said $n times, not once"
echo "PASS: a user's endpoint on a static job's port: not judged untrusted, refused trusted; the static job keeps its traffic"
