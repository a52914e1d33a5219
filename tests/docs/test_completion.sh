#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The bash completion (completion/tlsd.bash) in a real bash: it registers
# tlsd, tlsctl and tls-classifier, and what it offers matches the programs:
# every option of each --help, tlsctl's and tls-classifier's commands, the
# policies tlsd accepts (each tried with tlsd --check-config) and tlsctl's
# help lists, calibrate's choices, interfaces and files; with no tlsd to
# ask, no job names and no wait. (Job names from a running tlsd:
# tests/ns/test_completion_jobs.sh.) Needs no root.
# shellcheck disable=SC2046,SC2086 # the lists of words are split on purpose
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-build}
BIN=$TOP/$OUT
for b in tlsd tlsctl tls-classifier; do
	[ -x "$BIN/$b" ] || { echo "FAIL: $BIN/$b not built"; exit 1; }
done
# the completion asks the programs on PATH, as a user's shell would
PATH=$BIN:$PATH
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT

. "$TOP/tests/docs/complete.bash"
. "$TOP/completion/tlsd.bash"

failed=0
check() { "$@" || failed=1; }

for b in tlsd tlsctl tls-classifier; do
	if spec=$(complete -p "$b" 2>/dev/null); then
		echo "ok: $spec"
	else
		echo "FAIL: no completion registered for $b"
		failed=1
	fi
done

# The leading column of a --help's option lines: -x, --long.
help_opts() {
	"$@" --help | sed -nE 's/^ +(-[^ ].*)$/\1/p' | sed -E 's/   *.*//' |
		grep -oE -- '--?[A-Za-z][A-Za-z0-9_-]*' | sort -u
}
# The first word of each line of a --help's Commands block.
help_cmds() {
	"$@" --help | awk '/^Commands/ { on = 1; next } /^$/ { on = 0 }
		on && /^  [a-z]/ { print $1 }' | sort -u
}
# The options a Usage line of `tlsctl CMD --help` gives CMD (not -j, -p).
usage_opts() {
	"$BIN/tlsctl" "$1" --help | sed -n '/^Usage:/,/^[^ U]/p' |
		grep -oE -- '--?[A-Za-z][A-Za-z0-9_-]*' | grep -vx -- '-j\|-p' | sort -u
}

check expect_completion "tlsd -" $(help_opts "$BIN/tlsd")
check expect_completion "tlsctl -" $(help_opts "$BIN/tlsctl")
check expect_completion "tls-classifier -" $(help_opts "$BIN/tls-classifier")
check expect_completion "tlsctl " $(help_cmds "$BIN/tlsctl") help
check expect_completion "tlsctl -j " $(help_cmds "$BIN/tlsctl") help
check expect_completion "tls-classifier -i lo " $(help_cmds "$BIN/tls-classifier")
check expect_completion "tls-classifier -i lo attach --" \
	$(sed -n 's/^  attach //p' <<<"$("$BIN/tls-classifier" --help)" |
		grep -oE -- '--[a-z-]+')
check expect_completion "tlsctl stats --" $(usage_opts stats) --help
check expect_completion "tlsctl calibrate -" $(usage_opts calibrate) --help
check expect_completion "tlsctl metrics -" $(usage_opts metrics) --help
check expect_completion "tlsctl help st" stats status

# The policies: one list in the completion; tlsctl's help lists the same,
# and tlsd accepts each (and refuses a name that is none).
pol=$(sed -n 's/.*policy \[\([a-z|]*\)\].*/\1/p' <<<"$("$BIN/tlsctl" policy --help)" |
	head -1 | tr '|' ' ')
check expect_completion "tlsctl policy " $pol reset interval --help
check expect_completion "tlsd -p " $pol
# tlsd's own --help: "-p, --policy P   fifo, one, roundrobin or bursts (...)"
check expect_completion "tlsd -p " $(sed -n 's/^ *-p, --policy P *\([a-z, ]*[a-z]\) *(.*$/\1/p' \
	<<<"$("$BIN/tlsd" --help)" | sed 's/ or / /; s/,//g')
check expect_completion "tlsd --policy r" roundrobin
printf 'interface = "lo";\n' >"$TMPD/t.conf"
for p in $pol; do
	if "$BIN/tlsd" --check-config -c "$TMPD/t.conf" -p "$p" >/dev/null 2>&1; then
		echo "ok: tlsd --check-config -p $p"
	else
		echo "FAIL: tlsd refuses policy '$p' that the completion offers"
		failed=1
	fi
done
if "$BIN/tlsd" --check-config -c "$TMPD/t.conf" -p nosuch >/dev/null 2>&1; then
	echo "FAIL: tlsd accepts -p nosuch: the policy check above proves nothing"
	failed=1
fi

# calibrate's choices, as its help gives them
src=$(grep -oE -- '--source [a-z|]+' <<<"$("$BIN/tlsctl" calibrate --help)" | cut -d' ' -f2 | tr '|' ' ')
fmt=$(grep -oE -- '--format [a-z|]+' <<<"$("$BIN/tlsctl" calibrate --help)" | cut -d' ' -f2 | tr '|' ' ')
check expect_completion "tlsctl calibrate --source " $src
check expect_completion "tlsctl calibrate --format " $fmt
check expect_completion "tlsctl calibrate --format s" spotdnn

# the host's interfaces and files
check expect_completion "tlsd -i l" $(cd /sys/class/net && printf '%s\n' l*)
: >"$TMPD/alpha.conf"
: >"$TMPD/alps.conf"
check expect_completion "tlsd -c $TMPD/al" "$TMPD/alpha.conf" "$TMPD/alps.conf"
check expect_completion "tlsctl metrics -o $TMPD/alp" "$TMPD/alpha.conf" "$TMPD/alps.conf"

# No tlsd on the socket: no job names, at once.
t0=$(date +%s%N)
check expect_completion "tlsctl -s $TMPD/none.sock stats "
ms=$((($(date +%s%N) - t0) / 1000000))
if [ $ms -lt 1500 ]; then
	echo "ok: no tlsd: answered in $ms ms"
else
	echo "FAIL: no tlsd: the completion took $ms ms"
	failed=1
fi
exit $failed
