#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Safe rollout:
#  a. --check-config needs no root: a good file gives exit 0 and a summary,
#     a bad one exit 1 and the very message a reload logs; bad usage 2; as
#     root it touches nothing (no qdisc, no lock, no pins);
#  b. a root qdisc of the user's is not replaced unasked: start refuses,
#     naming it and the override, and leaves the interface as it was;
#  c. with replace_qdisc = true; (the file) tlsd starts; after kill -9 its
#     tree is taken over without the override; at exit the user's qdisc is
#     back; the same with --replace-qdisc;
#  d. an interface with several TX queues is said at start.
. "$(dirname "$0")/lib.sh"

TLSD="$BIN/tlsd"
command -v setpriv >/dev/null 2>&1 || skip "setpriv is needed to run as nobody"
ns_setup

conf() {	# conf POLICY [EXTRA_LINE]: the file, readable by nobody
	cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "100mbit";
policy = "$1";
control_socket = "$TMPD/tlsd.sock";
jobs = ( { name = "a"; ports = [ 9001 ]; } );
discovery = { enabled = false; };
${2:-}
EOC
	chmod 0644 "$TMPD/tlsd.conf"
}
chmod o+x "$TMPD"	# nobody may reach the file, not list the directory
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
qdiscs() { in_ps tc qdisc show dev "$IF_PS"; }
untouched() {	# untouched WHAT: the interface and bpffs as before WHAT
	[ "$(qdiscs)" = "$BEFORE" ] || fail "$1 changed the qdiscs: $(qdiscs)"
	[ -d "$PIN" ] && fail "$1 left pins: $PIN"
	[ -e "$LOCK" ] && fail "$1 took the lock $LOCK"
	true
}
stop_restored() {	# stop_restored WHAT: SIGTERM; the user's pfifo back
	stop_tlsd
	qdiscs | grep -q "pfifo 5: root.*limit 777" ||
		fail "$1: the user's root qdisc was not put back: $(qdiscs)"
	qdiscs | grep -qE "htb|clsact" && fail "$1: tlsd's qdiscs left: $(qdiscs)"
	true
}

# a. --check-config
in_ps tc qdisc add dev "$IF_PS" root handle 5: pfifo limit 777 || fail "pfifo"
BEFORE=$(qdiscs)
conf one
expect 0 "^configuration OK: 1 jobs, policy one, .*interface $IF_PS, link rate 100mbit" \
	nobody "$TLSD" --check-config -c "$TMPD/tlsd.conf"
expect 0 "policy fifo" nobody "$TLSD" --check-config -c "$TMPD/tlsd.conf" -p fifo
expect 2 "goes alone" nobody "$TLSD" --check-config --probe
expect 1 "nonexistent.conf" nobody "$TLSD" --check-config -c "$TMPD/nonexistent.conf"
# as root, inside the namespace: still nothing touched
expect 0 "^configuration OK" in_ps "$TLSD" --check-config -c "$TMPD/tlsd.conf"
untouched "--check-config"
conf lifo
expect 1 "^configuration: policy: 'lifo' is not one of" \
	nobody "$TLSD" --check-config -c "$TMPD/tlsd.conf"
BAD=$(cat "$TMPD/out")

# b. the user's pfifo: refused without the override
conf one
expect 1 "$IF_PS has a qdisc that is not the kernel's default (pfifo 5: root).*replace_qdisc = true;.*--replace-qdisc" \
	in_ps timeout 10 "$TLSD" -f -c "$TMPD/tlsd.conf"	# (a start not refused: stopped, rc 0)
untouched "a refused start"

# c. allowed by the file; a crashed run's tree taken over without it
conf one "replace_qdisc = true;"
start_tlsd "$TMPD/tlsd.conf"
qdiscs | grep -q "htb 715d: root" || fail "no tree with replace_qdisc: $(qdiscs)"
# the reload refused for the bad file says what --check-config said
conf lifo
kill -HUP "$TLSD_PID"
wait_line "$TMPD/tlsd.log" 5 "reload refused" || fail "the bad file was not refused"
grep -qxF "$BAD" "$TMPD/tlsd.log" ||
	fail "--check-config said '$BAD', the reload: $(grep -B1 'reload refused' "$TMPD/tlsd.log")"
stop_tlsd -KILL
conf one	# without replace_qdisc
start_tlsd "$TMPD/tlsd.conf"
grep -q "took over" "$TMPD/tlsd.log" || fail "the crashed run's tree was not taken over: $(cat "$TMPD/tlsd.log")"
stop_restored "after a takeover"
# the option
start_tlsd "$TMPD/tlsd.conf" --replace-qdisc
stop_restored "--replace-qdisc"

# d. several TX queues: one line at start
MQ="${PFX}m"
instance_add "$MQ"
in_ps ip link add "$MQ" numtxqueues 4 type veth peer name "${PFX}n" numtxqueues 4 &&
	in_ps ip link set "$MQ" up || fail "cannot create a veth with 4 TX queues"
start_tlsd -l "$TMPD/mq.log" "$TMPD/tlsd.conf" -i "$MQ" -r 100mbit
grep -q "$MQ has 4 TX queues: tlsd's HTB root puts them all behind one qdisc lock" "$TMPD/mq.log" ||
	fail "no word of the 4 TX queues: $(cat "$TMPD/mq.log")"
# the veth of ns_setup: one queue per possible CPU (said only if several)
NQ=$(in_ps ip -d link show dev "$IF_PS" | sed -n 's/.* numtxqueues \([0-9]*\).*/\1/p')
if [ "${NQ:-1}" -gt 1 ]; then
	grep -q "$IF_PS has $NQ TX queues" "$TMPD/tlsd.log" || fail "$IF_PS's $NQ TX queues not said"
else
	grep -q "TX queues" "$TMPD/tlsd.log" && fail "a single-queue interface was said to have several"
fi
stop_tlsd
echo "PASS: --check-config without root, a user's root qdisc kept unless replace_qdisc, takeover, TX queues said"
