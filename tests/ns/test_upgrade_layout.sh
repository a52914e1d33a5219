#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# An upgrade over pins of another map layout: a tlsd killed with -9 leaves
# its tree and pins; one of its maps is then replaced by one of another
# layout (as an older or newer tlsd would have made it). The next tlsd must
# not fail (under Restart=on-failure that is a crash loop): it names the map
# and the difference, puts the interface back as the earlier tlsd would have
# at exit (the user's own root qdisc), starts afresh, and at SIGTERM puts
# the user's qdisc back again.
#
# The pin layout's version (map tls_layout, lib/bpf/pin_layout.h): pins of
# tlsd 0.1 (no tls_layout) are taken over in place and marked with this
# layout; pins marked with a newer layout are a downgrade: the start is
# refused, naming both layouts, and neither it nor --cleanup touches the
# tree or the pins.
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
	start_tlsd -l "$1" "$TMPD/tlsd.conf" --replace-qdisc
}
start "$TMPD/1.log"
stop_tlsd -KILL
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
stop_tlsd
in_ps tc qdisc show dev "$IF_PS" | grep -q "pfifo 5: root .*limit 777p" ||
	fail "the user's root qdisc is not back: $(in_ps tc qdisc show dev "$IF_PS")"
[ -d "$PIN" ] && fail "pins left after SIGTERM"

layout() { bpftool -j map dump pinned "$PIN/tls_layout" | sed 's/.*"value":\([0-9]*\).*/\1/'; }
# pins of tlsd 0.1: no layout map; the same maps otherwise
start "$TMPD/3.log"
[ "$(layout)" = 2 ] || fail "tls_layout holds $(layout), expected 2"
stop_tlsd -KILL
rm "$PIN/tls_layout"
start "$TMPD/4.log"
grep -q "took over" "$TMPD/4.log" || fail "the unversioned pins were not taken over: $(cat "$TMPD/4.log")"
[ "$(layout)" = 2 ] || fail "the taken-over pins are not marked layout 2: $(layout)"
info "pins without tls_layout (tlsd 0.1): taken over, marked layout $(layout)"

# a newer tlsd's pins: refused, untouched, also by --cleanup
stop_tlsd -KILL
bpftool map update pinned "$PIN/tls_layout" key 0 0 0 0 value 3 0 0 0 || fail "cannot mark layout 3"
PINS=$(ls "$PIN")
expect 1 "holds the classifier of a newer tlsd (pin layout 3, this tlsd's 2): left untouched, not started" \
	in_ps timeout 10 "$TLSD" --replace-qdisc -f -c "$TMPD/tlsd.conf"
in_ps tc qdisc show dev "$IF_PS" | grep -q "htb 715d: root" ||
	fail "the newer tlsd's tree was touched: $(in_ps tc qdisc show dev "$IF_PS")"
in_ps tc filter show dev "$IF_PS" egress | grep -q "bpf" || fail "the newer tlsd's filter was removed"
[ "$(ls "$PIN")" = "$PINS" ] && [ "$(layout)" = 3 ] || fail "the newer tlsd's pins were changed"
expect 1 "made by a newer tlsd (pin layout 3, this tlsd's 2): left untouched" \
	in_ps "$TLSD" --cleanup -i "$IF_PS"
in_ps tc qdisc show dev "$IF_PS" | grep -q "htb 715d: root" || fail "--cleanup removed the newer tlsd's tree"
[ "$(ls "$PIN")" = "$PINS" ] || fail "--cleanup removed the newer tlsd's pins"
# what the newer tlsd would do at its exit, here by this one: layout 2 again
bpftool map update pinned "$PIN/tls_layout" key 0 0 0 0 value 2 0 0 0 || fail "cannot mark layout 2"
start "$TMPD/5.log"
stop_tlsd
in_ps tc qdisc show dev "$IF_PS" | grep -q "pfifo 5: root .*limit 777p" ||
	fail "the user's root qdisc is not back at the end: $(in_ps tc qdisc show dev "$IF_PS")"
[ -d "$PIN" ] && fail "pins left at the end"
echo "PASS: pins of another layout named, the interface restored, a fresh start, the user's qdisc back at exit; 0.1's unversioned pins taken over, a newer layout refused and left untouched"
