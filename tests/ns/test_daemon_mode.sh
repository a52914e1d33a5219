#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# tlsd without -f detaches (daemon()): the detached process must still
# answer SIGHUP and SIGTERM in its loop, restore the interface's root qdisc
# and leave no lock or pins behind. (Its signalfd was made before the fork;
# the child's signals never woke the loop, so SIGTERM did nothing.)
. "$(dirname "$0")/lib.sh"

TLSD="$BIN/tlsd"
ns_setup

# The detached tlsd is no child of ours (`ours` cannot vouch for it): it is
# known by its pid and its start time, read once; the cleanup ends it only
# while both still match, by SIGKILL if SIGTERM did not do it.
DPID="" DSTART=""
start_time() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $20 }'; }
daemon_alive() { [ -n "$DPID" ] && [ "$(start_time "$DPID")" = "$DSTART" ]; }
daemon_cleanup() {
	daemon_alive || return 0
	kill -TERM "$DPID"
	sleep 1
	daemon_alive && kill -KILL "$DPID"
}
trap 'daemon_cleanup; ns_cleanup' EXIT
cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "100mbit";
policy = "one";
control_socket = "$TMPD/tlsd.sock";
jobs = ( { name = "a"; ports = [ 9001 ]; } );
discovery = { enabled = false; };
EOC
in_ps tc qdisc add dev "$IF_PS" root handle 5: pfifo limit 777 || fail "pfifo"

# The parent returns once the child runs; the child's pid from status.
in_ps "$TLSD" --replace-qdisc -c "$TMPD/tlsd.conf" >"$TMPD/start" 2>&1 || fail "tlsd did not start: $(cat "$TMPD/start")"
pid=$("$BIN/tlsctl" -s "$TMPD/tlsd.sock" -j status | tr ',{}' '\n\n\n' | awk -F: '$1 == "\"pid\"" { print $2 }')
[ -n "$pid" ] && [ -d "/proc/$pid" ] || fail "no detached tlsd found (status said pid '$pid')"
DPID=$pid DSTART=$(start_time "$pid")
info "detached tlsd: pid $pid"
in_ps tc qdisc show dev "$IF_PS" | grep -q "qdisc htb" || fail "no HTB tree"

kill -HUP "$pid"
i=0
while [ $i -lt 50 ] && ! "$BIN/tlsctl" -s "$TMPD/tlsd.sock" -j status >/dev/null 2>&1; do
	sleep 0.1; i=$((i + 1))
done
daemon_alive || fail "the detached tlsd died on SIGHUP"

kill -TERM "$pid"
i=0
while daemon_alive && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
daemon_alive && fail "the detached tlsd ignored SIGTERM (still running after 10 s)"
q=$(in_ps tc qdisc show dev "$IF_PS" | head -1)
info "after SIGTERM: $q"
echo "$q" | grep -q "pfifo 5: root" || fail "the user's root qdisc was not restored: $q"
[ ! -e "$PIN" ] || fail "pins left at $PIN"
echo "PASS: a detached tlsd answers SIGHUP and SIGTERM and restores the interface"
