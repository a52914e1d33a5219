#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# journald's levels: with JOURNAL_STREAM naming its stderr (what systemd
# sets for a unit whose output goes to the journal), every line tlsd writes
# starts with sd-daemon's priority prefix: <3> for what stops it or refuses
# a configuration, <4> warnings, <6> info, <7> debug (libbpf's lines
# included). With JOURNAL_STREAM unset or naming another file (a caller
# that sent stderr elsewhere), plain text.
. "$(dirname "$0")/lib.sh"

TLSD="$BIN/tlsd"
printf 'interface = "%s";\nbands = 99;\n' "$IF_PS" >"$TMPD/bad.conf"
devino() { stat -c '%d:%i' "$1"; }

# --check-config on a bad file: the refusal, at err.
: >"$TMPD/err"
JOURNAL_STREAM=$(devino "$TMPD/err") "$TLSD" --check-config -c "$TMPD/bad.conf" 2>>"$TMPD/err"
grep -q '^<3>configuration: bands: 99' "$TMPD/err" ||
	fail "no <3> before the refusal with JOURNAL_STREAM set: $(cat "$TMPD/err")"
info "JOURNAL_STREAM=$(devino "$TMPD/err"): $(head -1 "$TMPD/err")"
: >"$TMPD/other"
for js in "" "$(devino "$TMPD/other")" "garbage"; do
	: >"$TMPD/err"
	JOURNAL_STREAM=$js "$TLSD" --check-config -c "$TMPD/bad.conf" 2>>"$TMPD/err"
	grep -q '^configuration: bands: 99' "$TMPD/err" ||
		fail "JOURNAL_STREAM='$js' (not stderr): not plain text: $(cat "$TMPD/err")"
done
info "JOURNAL_STREAM unset, another file's, garbage: $(head -1 "$TMPD/err")"

# A real start at -vv: every line prefixed, each level there.
ns_setup
cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "100mbit";
control_socket = "$TMPD/tlsd.sock";
discovery = { enabled = false; };
EOC
# the log's inode stays: start_tlsd empties it, as the redirection does
: >"$TMPD/log"
start_tlsd -l "$TMPD/log" -r '^<6>ready' JOURNAL_STREAM="$(devino "$TMPD/log")" "$TMPD/tlsd.conf" -v
stop_tlsd
bad=$(grep -v '^<[3467]>' "$TMPD/log" | head -3)
[ -z "$bad" ] || fail "lines without a priority prefix: $bad"
for p in 6 7; do
	grep -q "^<$p>" "$TMPD/log" || fail "no <$p> line at -vv: $(head -5 "$TMPD/log")"
done
grep -q '^<7>libbpf: ' "$TMPD/log" || fail "libbpf's debug lines are not at <7>"
info "tlsd -f -vv, $(wc -l <"$TMPD/log") lines, all prefixed:$(sed -n 's/^\(<[0-9]>\).*/\1/p' \
	"$TMPD/log" | sort | uniq -c | awk '{ printf " %s %s", $2, $1 }')"
echo "PASS"
