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
#
# Layout 2 -> 3: layout 2 kept the daemon's own state in two pinned maps
# (tls_saved_qdisc: the root qdisc to put back; tls_job_names), layout 3 in
# the state file /run/tlsd/IF@NETNS.state. Pins of layout 2 are made the
# way that tlsd made them (the two maps in their format, filled from what
# this tlsd wrote, the layout marked 2, no state file), or by a real tlsd
# of layout 2 if TLSD_OLD names its binary (a build of tlsd 0.2); then
# this tlsd takes them over: the maps' content moves to the state file, the
# maps are unpinned, every job keeps its id, and at SIGTERM the user's root
# qdisc is back byte for byte (tc -j). --cleanup puts it back from the
# state file after kill -9, and from the maps of layout-2 pins. A state
# file that is cut short is set aside and named (the kernel's default comes
# back, and the way to put the user's own back by hand is said); one of a
# newer version is a downgrade, refused and left untouched.
. "$(dirname "$0")/lib.sh"

TLSD="$BIN/tlsd"
# this build's pin layout
L=$(sed -n 's/^#define TLS_PIN_LAYOUT \([0-9]*\)$/\1/p' "$TOP/lib/bpf/pin_layout.h")
[ "$L" -ge 3 ] 2>/dev/null || fail "cannot read TLS_PIN_LAYOUT from lib/bpf/pin_layout.h"
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
[ -e "$STATE" ] && fail "state file $STATE left after SIGTERM"

layout() { bpftool -j map dump pinned "$PIN/tls_layout" | sed 's/.*"value":\([0-9]*\).*/\1/'; }
# pins of tlsd 0.1: no layout map; the same maps otherwise
start "$TMPD/3.log"
[ "$(layout)" = "$L" ] || fail "tls_layout holds $(layout), expected $L"
stop_tlsd -KILL
rm "$PIN/tls_layout"
start "$TMPD/4.log"
grep -q "took over" "$TMPD/4.log" || fail "the unversioned pins were not taken over: $(cat "$TMPD/4.log")"
[ "$(layout)" = "$L" ] || fail "the taken-over pins are not marked layout $L: $(layout)"
info "pins without tls_layout (tlsd 0.1): taken over, marked layout $(layout)"

# a newer tlsd's pins: refused, untouched, also by --cleanup
stop_tlsd -KILL
N=$((L + 1))
bpftool map update pinned "$PIN/tls_layout" key 0 0 0 0 value $N 0 0 0 || fail "cannot mark layout $N"
PINS=$(ls "$PIN")
expect 1 "holds the classifier of a newer tlsd (pin layout $N, this tlsd's $L): left untouched, not started" \
	in_ps timeout 10 "$TLSD" --replace-qdisc -f -c "$TMPD/tlsd.conf"
in_ps tc qdisc show dev "$IF_PS" | grep -q "htb 715d: root" ||
	fail "the newer tlsd's tree was touched: $(in_ps tc qdisc show dev "$IF_PS")"
in_ps tc filter show dev "$IF_PS" egress | grep -q "bpf" || fail "the newer tlsd's filter was removed"
[ "$(ls "$PIN")" = "$PINS" ] && [ "$(layout)" = $N ] || fail "the newer tlsd's pins were changed"
expect 1 "made by a newer tlsd (pin layout $N, this tlsd's $L): left untouched" \
	in_ps "$TLSD" --cleanup -i "$IF_PS"
in_ps tc qdisc show dev "$IF_PS" | grep -q "htb 715d: root" || fail "--cleanup removed the newer tlsd's tree"
[ "$(ls "$PIN")" = "$PINS" ] || fail "--cleanup removed the newer tlsd's pins"
# what the newer tlsd would do at its exit, here by this one: this layout again
bpftool map update pinned "$PIN/tls_layout" key 0 0 0 0 value $L 0 0 0 || fail "cannot mark layout $L"
start "$TMPD/5.log"
stop_tlsd
in_ps tc qdisc show dev "$IF_PS" | grep -q "pfifo 5: root .*limit 777p" ||
	fail "the user's root qdisc is not back at the end: $(in_ps tc qdisc show dev "$IF_PS")"
[ -d "$PIN" ] && fail "pins left at the end"
[ -e "$STATE" ] && fail "state file left at the end"

# --- layout 2 -> 3: the daemon's state out of the maps, into the file ---
cat >"$TMPD/two.conf" <<EOC
interface = "$IF_PS";
link_rate = "100mbit";
policy = "one";
control_socket = "$TMPD/tlsd.sock";
discovery = { enabled = false; };
jobs = ( { name = "a"; ports = [ 9001 ]; }, { name = "b"; ports = [ 9002 ]; } );
EOC
start2() { start_tlsd -l "$1" "$TMPD/two.conf" --replace-qdisc; }
root_json() { in_ps tc -j qdisc show dev "$IF_PS" root; }
set_root() {	# set_root QDISC...: the user's root qdisc, as tc -j shows it in ORIG
	in_ps tc qdisc del dev "$IF_PS" root 2>/dev/null
	in_ps tc qdisc add dev "$IF_PS" root handle 7: "$@" || fail "tc qdisc add ... $*"
	ORIG=$(root_json)
}
same_root() {	# same_root WHEN: the user's root qdisc as it was, by tc -j
	[ "$(root_json)" = "$ORIG" ] || fail "$1: the root qdisc is not the user's as it was:
  before: $ORIG
  now:    $(root_json)"
}
# Layout 2 kept at most 2 kB of request: a bfifo's fits (a tbf's, with its
# rate table, did not; the state file takes it, below).
set_root bfifo limit 12345
# hexbytes: stdin as hex bytes "2c 00 ..."; zeros N: N zero bytes
hexbytes() { od -An -v -tx1 | tr -s ' \n' '  '; }
zeros() { [ "$1" -gt 0 ] && yes 00 | head -n "$1" | tr '\n' ' '; }
le32() { printf '%02x %02x %02x %02x' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24)); }
# Pins as tlsd of layout 2 left them at kill -9, with job a as id $1 and b
# as id $2: a real one (TLSD_OLD), or this one's pins made so by hand: its
# state file's content into the two maps in layout 2's format (an array of
# one {__u32 len; __u8 msg[2048]}; an array of 1024 names of 64 bytes),
# the layout marked 2, the state file gone.
make_layout2() {
	if [ -n "${TLSD_OLD:-}" ]; then
		TLSD=$TLSD_OLD start_tlsd -l "$TMPD/old.log" "$TMPD/two.conf" --replace-qdisc
		stop_tlsd -KILL
		[ "$(layout)" = 2 ] || fail "TLSD_OLD made pins of layout $(layout), not 2"
		return
	fi
	start_tlsd -l "$TMPD/mk.log" "$TMPD/two.conf" --replace-qdisc
	stop_tlsd -KILL
	[ -f "$STATE" ] || fail "no state file $STATE after kill -9"
	q=$(sed 's/.*"saved_qdisc":"\([0-9a-f]*\)".*/\1/' "$STATE")
	n=$((${#q} / 2))
	[ "$n" -gt 0 ] || fail "the state file holds no root qdisc: $(cat "$STATE")"
	bpftool map create "$PIN/tls_saved_qdisc" type array key 4 value 2052 entries 1 \
		name tls_saved_qdisc || fail "cannot pin tls_saved_qdisc"
	# shellcheck disable=SC2046
	bpftool map update pinned "$PIN/tls_saved_qdisc" key 0 0 0 0 value hex $(le32 $n) \
		$(echo "$q" | sed 's/../& /g') $(zeros $((2048 - n))) || fail "cannot fill tls_saved_qdisc"
	bpftool map create "$PIN/tls_job_names" type array key 4 value 64 entries 1024 \
		name tls_job_names || fail "cannot pin tls_job_names"
	for jn in "$1 a" "$2 b"; do
		id=${jn% *} nm=${jn#* }
		# shellcheck disable=SC2046
		bpftool map update pinned "$PIN/tls_job_names" key hex $(le32 "$id") value hex \
			$(printf %s "$nm" | hexbytes) $(zeros $((64 - ${#nm}))) ||
			fail "cannot name job $nm"
	done
	bpftool map update pinned "$PIN/tls_layout" key 0 0 0 0 value 2 0 0 0 || fail "cannot mark layout 2"
	rm "$STATE"
}
if [ -n "${TLSD_OLD:-}" ]; then A=1 B=2; else A=5 B=9; fi

make_layout2 $A $B
start2 "$TMPD/6.log"
grep -q "what an earlier tlsd kept in pinned maps (the root qdisc before it, 2 job names) is in $STATE now" \
	"$TMPD/6.log" || fail "the layout-2 state was not moved to the state file: $(cat "$TMPD/6.log")"
grep -q "took over" "$TMPD/6.log" || fail "the layout-2 pins were not taken over: $(cat "$TMPD/6.log")"
info "$(grep "earlier tlsd kept in pinned maps" "$TMPD/6.log")"
[ "$(layout)" = "$L" ] || fail "the taken-over pins are not marked layout $L: $(layout)"
for m in tls_saved_qdisc tls_job_names; do
	[ -e "$PIN/$m" ] && fail "$m still pinned after the takeover: $(ls "$PIN")"
done
grep -q "{\"id\":$A,\"name\":\"a\"},{\"id\":$B,\"name\":\"b\"}" "$STATE" ||
	fail "the jobs did not keep their ids ($A, $B): $(cat "$STATE")"
# the file: root's, 0600, one line of JSON
[ "$(stat -c '%a %u' "$STATE")" = "600 0" ] || fail "$STATE is $(stat -c '%a %u' "$STATE"), not 600 0"
info "state file: $(cat "$STATE")"
stop_tlsd
same_root "SIGTERM after the takeover of layout-2 pins"
[ -d "$PIN" ] && fail "pins left after SIGTERM: $(ls "$PIN")"
[ -e "$STATE" ] && fail "state file left after SIGTERM"
info "layout 2 -> $L: taken over, state moved to the file, jobs a=$A b=$B kept, root qdisc back byte for byte: $ORIG"

# a real tlsd of layout 2 over these pins (a downgrade): refused, untouched
if [ -n "${TLSD_OLD:-}" ]; then
	start2 "$TMPD/6b.log"
	stop_tlsd -KILL
	cp "$STATE" "$TMPD/kept.state"
	expect 1 "holds the classifier of a newer tlsd (pin layout $L, this tlsd's 2): left untouched" \
		in_ps timeout 10 "$TLSD_OLD" --replace-qdisc -f -c "$TMPD/two.conf"
	cmp -s "$STATE" "$TMPD/kept.state" && [ "$(layout)" = "$L" ] ||
		fail "the older tlsd changed the pins or the state file"
	in_ps "$TLSD" --cleanup -i "$IF_PS" >"$TMPD/cleanup.out" 2>&1 ||
		fail "--cleanup failed: $(cat "$TMPD/cleanup.out")"
	same_root "--cleanup after the refused downgrade"
fi

# kill -9, then --cleanup: the root qdisc from the state file, a tbf (a
# request of over 2 kB: the map of layouts 1 and 2 could not keep it)
set_root tbf rate 10mbit burst 32kb latency 50ms
start2 "$TMPD/7.log"
stop_tlsd -KILL
[ -f "$STATE" ] || fail "no state file after kill -9"
in_ps "$TLSD" --cleanup -i "$IF_PS" >"$TMPD/cleanup.out" 2>&1 || fail "--cleanup failed: $(cat "$TMPD/cleanup.out")"
same_root "--cleanup after kill -9"
[ -d "$PIN" ] && fail "pins left after --cleanup"
[ -e "$STATE" ] && fail "state file left after --cleanup"
info "--cleanup after kill -9: root qdisc back from the state file"
# the pins removed by hand, the tree and the state file left: the same
start2 "$TMPD/7b.log"
stop_tlsd -KILL
in_ps "$CLS" -i "$IF_PS" -P "$PIN" detach >/dev/null 2>&1 || fail "tls-classifier detach"
[ -d "$PIN" ] && fail "tls-classifier left the pins"
[ -f "$STATE" ] || fail "tls-classifier removed the state file (not its own)"
in_ps "$TLSD" --cleanup -i "$IF_PS" >"$TMPD/cleanup.out" 2>&1 || fail "--cleanup failed: $(cat "$TMPD/cleanup.out")"
same_root "--cleanup of a tree whose pins were removed"
[ -e "$STATE" ] && fail "state file left after --cleanup of a tree without pins"
info "--cleanup of a tree without pins: root qdisc back from the state file"

# --cleanup over layout-2 pins: the root qdisc from their map
set_root bfifo limit 12345
make_layout2 $A $B
in_ps "$TLSD" --cleanup -i "$IF_PS" >"$TMPD/cleanup.out" 2>&1 || fail "--cleanup failed: $(cat "$TMPD/cleanup.out")"
same_root "--cleanup over layout-2 pins"
[ -d "$PIN" ] && fail "pins left after --cleanup of layout-2 pins: $(ls "$PIN")"
[ -e "$STATE" ] && fail "state file made by --cleanup"
info "--cleanup over layout-2 pins: root qdisc back from tls_saved_qdisc"

# a state file cut short: named, set aside, not guessed from
start2 "$TMPD/8.log"
stop_tlsd -KILL
head -c 40 "$STATE" >"$TMPD/cut" && cat "$TMPD/cut" >"$STATE"
start2 "$TMPD/9.log"
grep -q "state file $STATE: not JSON: truncated at byte 40; not used, kept as $STATE.bad" "$TMPD/9.log" ||
	fail "the cut state file was not named: $(cat "$TMPD/9.log")"
grep -q "put it back by hand (tc qdisc replace dev $IF_PS root ...)" "$TMPD/9.log" ||
	fail "no word on putting the root qdisc back by hand: $(cat "$TMPD/9.log")"
info "$(grep "state file $STATE" "$TMPD/9.log" | cut -c1-160)..."
[ -f "$STATE.bad" ] && [ -f "$STATE" ] || fail "the cut file not set aside, or no new one written"
stop_tlsd
in_ps tc qdisc show dev "$IF_PS" | grep -q "bfifo 7: root" &&
	fail "a root qdisc was guessed from a cut state file: $(in_ps tc qdisc show dev "$IF_PS")"
in_ps tc qdisc show dev "$IF_PS" root | grep -q "htb" && fail "tlsd's tree left"
rm -f "$STATE.bad"
set_root tbf rate 10mbit burst 32kb latency 50ms

# a newer version of the state file: a downgrade, refused and untouched
start2 "$TMPD/10.log"
stop_tlsd -KILL
sed -i 's/"version":1,/"version":2,/' "$STATE"
cp "$STATE" "$TMPD/newer.state"
expect 1 "$STATE: version: 2, this tlsd reads 1: a newer tlsd's state file, left untouched" \
	in_ps timeout 10 "$TLSD" --replace-qdisc -f -c "$TMPD/two.conf"
cmp -s "$STATE" "$TMPD/newer.state" || fail "the newer state file was changed"
in_ps tc qdisc show dev "$IF_PS" | grep -q "htb 715d: root" || fail "the tree was touched"
expect 1 "a newer tlsd's state file, left untouched" in_ps "$TLSD" --cleanup -i "$IF_PS"
[ -d "$PIN" ] && cmp -s "$STATE" "$TMPD/newer.state" || fail "--cleanup touched the newer tlsd's state"
# ... also with its pins removed by hand and its tree left: not written over
rm -rf "$PIN"
expect 1 "a newer tlsd's state file, left untouched" \
	in_ps timeout 10 "$TLSD" --replace-qdisc -f -c "$TMPD/two.conf"
cmp -s "$STATE" "$TMPD/newer.state" || fail "the newer state file was written over (its pins gone)"
in_ps tc qdisc show dev "$IF_PS" | grep -q "htb 715d: root" || fail "the tree was touched (pins gone)"
sed -i 's/"version":2,/"version":1,/' "$STATE"
in_ps "$TLSD" --cleanup -i "$IF_PS" >"$TMPD/cleanup.out" 2>&1 || fail "--cleanup failed: $(cat "$TMPD/cleanup.out")"
same_root "--cleanup after the newer state file"

# a state file that cannot be read (EIO, from the shim): it may be good,
# the only record of the root qdisc: a takeover and --cleanup leave it, the
# tree and the pins as they are
start2 "$TMPD/11.log"
stop_tlsd -KILL
cp "$STATE" "$TMPD/eio.state"
expect 1 "cannot be read; tlsd leaves it, the pins and $IF_PS as they are" \
	in_ps env LD_PRELOAD="$BIN/libtls-refuse.so" TLS_REFUSE=state_eio \
	timeout 10 "$TLSD" --replace-qdisc -f -c "$TMPD/two.conf"
cmp -s "$STATE" "$TMPD/eio.state" || fail "an unreadable state file was written over at a takeover"
in_ps tc qdisc show dev "$IF_PS" | grep -q "htb 715d: root" || fail "the tree was touched (state unreadable)"
expect 1 "cannot be read" in_ps env LD_PRELOAD="$BIN/libtls-refuse.so" TLS_REFUSE=state_eio \
	"$TLSD" --cleanup -i "$IF_PS"
cmp -s "$STATE" "$TMPD/eio.state" && [ -d "$PIN" ] ||
	fail "--cleanup removed an unreadable state file or the pins"
in_ps tc qdisc show dev "$IF_PS" | grep -q "htb 715d: root" || fail "--cleanup removed the tree (state unreadable)"
in_ps "$TLSD" --cleanup -i "$IF_PS" >"$TMPD/cleanup.out" 2>&1 || fail "--cleanup failed: $(cat "$TMPD/cleanup.out")"
same_root "--cleanup at the end"
[ -d "$PIN" ] || [ -e "$STATE" ] && fail "pins or state left at the end"
echo "PASS: pins of another layout named, the interface restored, a fresh start, the user's qdisc back at exit; 0.1's unversioned pins taken over, a newer layout refused and left untouched; layout 2 -> $L: state moved to the file, ids kept, the root qdisc back byte for byte at exit and by --cleanup (state file, layout-2 maps); a cut state file set aside, a newer one refused (its pins gone too), an unreadable one left with the tree"
