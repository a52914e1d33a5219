#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# tlsctl's bash completion (completion/tlsd.bash) offers the names of the
# jobs a real tlsd runs, asked on the socket given with -s or --socket=,
# names with a colon (as discovered jobs' RULE:KEY) completed after it;
# once tlsd is gone, nothing, at once. (Options and commands:
# tests/docs/test_completion.sh.)
. "$(dirname "$0")/lib.sh"

command -v bash >/dev/null 2>&1 || skip "bash is needed to run the completion"
ns_setup

SOCK="$TMPD/tlsd.sock"
cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "100mbit";
control_socket = "$SOCK";
discovery = { enabled = false; };
jobs = ( { name = "resnet50"; ports = [ 9001 ]; }, { name = "team:bert"; ports = [ 9002 ]; } );
EOC
start_tlsd "$TMPD/tlsd.conf"

# expect_compl LINE WORD...: in bash, with the built tlsctl first on PATH
expect_compl() {
	line=$1
	shift
	PATH="$BIN:$PATH" bash -c '. "$1"; . "$2"; line=$3; shift 3; expect_completion "$line" "$@"' \
		complete "$TOP/tests/docs/complete.bash" "$TOP/completion/tlsd.bash" "$line" "$@" ||
		fail "completion"
}
expect_compl "tlsctl -s $SOCK stats " resnet50 team:bert
expect_compl "tlsctl -s $SOCK stats r" resnet50
# COMP_WORDBREAKS splits at ':' and '=': bash inserts the part after them
expect_compl "tlsctl -s $SOCK stats team:" bert
expect_compl "tlsctl --socket=$SOCK -j calibrate t" team:bert
expect_compl "tlsctl -s $SOCK calibrate --format json " resnet50 team:bert
# stats's long options, as its own --help's Usage lines give them
# shellcheck disable=SC2046
expect_compl "tlsctl -s $SOCK stats --" $("$BIN/tlsctl" stats --help |
	sed -n '/^Usage:/,/^[^ U]/p' | grep -oE -- '--[a-z][a-z-]*' | sort -u) --help

stop_tlsd
expect_compl "tlsctl -s $SOCK stats "
echo "PASS"
