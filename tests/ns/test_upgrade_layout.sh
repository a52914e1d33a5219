#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# An upgrade over pins of another map layout: a tlsd killed with -9 leaves
# its tree and pins; one of its maps is then replaced by one of another
# layout (as an older or newer tlsd would have made it). The next tlsd must
# not fail (under Restart=on-failure that is a crash loop): it names the map
# and the difference, puts the interface back as the earlier tlsd would have
# at exit (the user's own root qdisc), starts afresh, and at SIGTERM puts
# the user's qdisc back again.
. "$(dirname "$0")/lib.sh"

TLSD="$BIN/tlsd"
command -v bpftool >/dev/null 2>&1 || skip "bpftool is needed to pin a map of another layout"
ns_setup
cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "100mbit";
policy = "one";
control_socket = "$TMPD/tlsd.sock";
discovery = { enabled = false; };
jobs = ( { name = "a"; ports = [ 9001 ]; } );
EOC
in_ps tc qdisc add dev "$IF_PS" root handle 5: pfifo limit 777 || fail "pfifo"

start() {	# start LOG: tlsd in the foreground, ready
	bg_ps "$1" "$TLSD" --replace-qdisc -f -v -c "$TMPD/tlsd.conf"
	TLSD_PID=$LAST
	wait_line "$1" 10 "^ready" || fail "tlsd did not start: $(cat "$1")"
}
start "$TMPD/1.log"
kill -KILL "$TLSD_PID"
wait_pid "$TLSD_PID" 5 || fail "tlsd did not die"
[ -e "$PIN/tls_flows" ] || fail "no pins left by the killed tlsd"
# tls_flows as another version laid it out: a smaller value
want=$(bpftool -j map show pinned "$PIN/tls_flows" | sed 's/.*"bytes_value":\([0-9]*\).*/\1/')
rm "$PIN/tls_flows"
bpftool map create "$PIN/tls_flows" type lru_hash key 40 value 64 entries 16 name tls_flows ||
	fail "cannot pin a map of another layout"

start "$TMPD/2.log"
grep -q "another map layout (map tls_flows: value size 64, this tlsd's $want)" "$TMPD/2.log" ||
	fail "the layout difference was not named: $(cat "$TMPD/2.log")"
info "$(grep "another map layout" "$TMPD/2.log")"
grep -q "took over" "$TMPD/2.log" && fail "tlsd took over maps of another layout"
got=$(bpftool -j map show pinned "$PIN/tls_flows" | sed 's/.*"bytes_value":\([0-9]*\).*/\1/')
[ "$got" = "$want" ] || fail "tls_flows pinned with value size $got, expected $want"
kill -TERM "$TLSD_PID"
wait_pid "$TLSD_PID" 10 || fail "tlsd did not exit"
in_ps tc qdisc show dev "$IF_PS" | grep -q "pfifo 5: root .*limit 777p" ||
	fail "the user's root qdisc is not back: $(in_ps tc qdisc show dev "$IF_PS")"
[ -d "$PIN" ] && fail "pins left after SIGTERM"
echo "PASS: pins of another layout named, the interface restored, a fresh start, the user's qdisc back at exit"
