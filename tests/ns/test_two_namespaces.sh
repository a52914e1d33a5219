#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Issue 14, item 5: an interface of the same name in two network namespaces
# is two instances, each with its own lock and pins (IF@NETNS_INODE): both
# tlsds run, a kill -9 and restart of one takes over its own tree and leaves
# the other's alone, --cleanup leaves a running one alone, and pins of the
# earlier naming (the interface's name alone) move to the instance whose
# interface runs their program, never to the other namespace's.
. "$(dirname "$0")/lib.sh"

TLSD="$BIN/tlsd"
NS2="${PFX}n2"
# the earlier naming's pins, made below, go after the rest
trap 'ns_cleanup; rm -rf "/sys/fs/bpf/tlsd/$IF_PS"' EXIT
ns_setup
ns_add "$NS2"
instance_add "$IF_PS" "$NS2"
ip -n "$NS2" link add "$IF_PS" type veth peer name "${PFX}q" &&
	ip -n "$NS2" link set "$IF_PS" up && ip -n "$NS2" link set "${PFX}q" up ||
	fail "cannot make a second $IF_PS in $NS2"
PIN2="/sys/fs/bpf/tlsd/$(inst "$IF_PS" "$NS2")"
LEGACY="/sys/fs/bpf/tlsd/$IF_PS"
for n in a b; do
	cat >"$TMPD/$n.conf" <<EOC
interface = "$IF_PS";
link_rate = "100mbit";
policy = "one";
control_socket = "$TMPD/$n.sock";
discovery = { enabled = false; };
jobs = ( { name = "j"; ports = [ 9001 ]; } );
EOC
done
start() {	# start a|b: tlsd in the PS namespace or in NS2
	ns=$NS_PS
	[ "$1" = b ] && ns=$NS2
	start_tlsd -N "$ns" -l "$TMPD/$1.log" "$TMPD/$1.conf"
	eval "PID_$1=\$TLSD_PID"
}
has_tree() { ip netns exec "$1" tc qdisc show dev "$IF_PS" | grep -q htb; }
filter_of() { ip netns exec "$1" tc filter show dev "$IF_PS" egress 2>/dev/null | grep -o "id [0-9]*" | head -1; }

start a
start b
[ -d "$PIN" ] && [ -d "$PIN2" ] || fail "not two pin directories: $(ls /sys/fs/bpf/tlsd)"
has_tree "$NS_PS" && has_tree "$NS2" || fail "not a tree on each $IF_PS"
info "two instances: $(basename "$PIN") and $(basename "$PIN2")"
fb=$(filter_of "$NS2")

# kill -9 of a, restart: a takes over its own; b's untouched
stop_tlsd -KILL "$PID_a"
start a
grep -q "took over a previous run's tree" "$TMPD/a.log" || fail "a did not take over its tree"
[ "$(filter_of "$NS2")" = "$fb" ] && [ -e "$PIN2/tls_classify" ] ||
	fail "b's filter or pins changed: $(filter_of "$NS2"), $(ls "$PIN2")"
# --cleanup in b's namespace leaves the running b alone
ip netns exec "$NS2" "$TLSD" --cleanup -i "$IF_PS" >"$TMPD/cleanup" 2>&1 &&
	fail "--cleanup did not say it left a running tlsd alone"
grep -q "leaves $IF_PS alone" "$TMPD/cleanup" || fail "--cleanup: $(cat "$TMPD/cleanup")"
has_tree "$NS2" && [ -e "$PIN2/tls_classify" ] || fail "--cleanup took b's tree or pins"

# pins of the earlier naming: a killed, its directory renamed as an older
# tlsd named it; b (restarted) must not take them, a does
stop_tlsd -KILL "$PID_a"
mv "$PIN" "$LEGACY" || fail "cannot rename $PIN"
stop_tlsd "$PID_b"
has_tree "$NS2" && fail "b left its tree"
start b
grep -q "moved from $LEGACY" "$TMPD/b.log" && fail "b took a's pins of the earlier naming"
[ -d "$LEGACY" ] || fail "the pins of the earlier naming went"
start a
grep -q "moved from $LEGACY to $PIN" "$TMPD/a.log" || fail "a did not take its pins back: $(head -5 "$TMPD/a.log")"
grep -q "took over a previous run's tree" "$TMPD/a.log" || fail "a did not take over its tree"
[ -d "$LEGACY" ] && fail "the earlier naming's directory is still there"
stop_tlsd "$PID_a"
stop_tlsd "$PID_b"
has_tree "$NS_PS" || has_tree "$NS2" && fail "a tree left after SIGTERM"
[ -d "$PIN" ] || [ -d "$PIN2" ] && fail "pins left after SIGTERM"
echo "PASS: an interface of one name in two namespaces: two instances, each its own lock and pins"
