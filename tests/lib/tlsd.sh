# SPDX-License-Identifier: GPL-2.0-only
# tlsd's lifecycle for the namespace tests, the benchmarks and the testbed:
# start one where the test wants it, wait until it is ready, reload it,
# stop it. Sourced by tests/ns/lib.sh, whose process discipline it uses
# (bg_*: PIDs in PIDS, which the cleanup ends; ours, wait_pid, fail), so
# that every tlsd a test starts goes with the test, also on failure.
# A failure names the command, the log and the log's last lines.

TLSD=${TLSD:-$BIN/tlsd}
TLSD_PID=""
TLSD_LOG=""
TLSD_CMD=""
TLSD_RC=""

# start_tlsd [-n NS | -N NS] [-l LOG] [-t SECONDS] [-r PATTERN] [-s SOCKET]
#            [-q] [-b] [NAME=VALUE...] CONF [OPTION...]
# `tlsd -f -v -c CONF OPTION...` in the background, with NAME=VALUE... in
# its environment and its output in LOG ($TMPD/tlsd.log, emptied first).
# Sets TLSD_PID, TLSD_LOG and TLSD_CMD; returns once tlsd is ready: a line
# of its log matches PATTERN (^ready), or with -s, `tlsctl -s SOCKET
# status` answers. Fails if tlsd exits first or is not ready within SECONDS
# (TLSD_START_S, else 10: emulated kernels start slowly).
#   -n NS  inside namespace NS (default: the PS host's, NS_PS)
#   -N NS  from this (the host's) namespace as `tlsd -N NS`: the kernel
#          sends process events (discovery) to the initial namespace only
#   -q     without -v: no info lines, so no ready line either (-s needed);
#          for benchmarks that measure tlsd's own cost
#   -b     return once started; wait_tlsd waits (a caller timing the start)
start_tlsd() {
	_tl_ns=$NS_PS _tl_host="" _tl_v=-v _tl_bg=""
	TLSD_LOG="$TMPD/tlsd.log" _TL_WAIT=${TLSD_START_S:-10} _TL_READY='^ready' _TL_SOCK=""
	while :; do
		case ${1:-} in
		-q | -b)
			[ "$1" = -q ] && _tl_v="" || _tl_bg=1
			shift
			continue
			;;
		-n | -N | -l | -t | -r | -s)
			[ $# -ge 2 ] || fail "start_tlsd: $1 needs a value"
			;;
		-*) fail "start_tlsd: unknown option '$1' (-n NS, -N NS, -l LOG, -t S, -r PATTERN, -s SOCKET, -q, -b)" ;;
		*) break ;;
		esac
		case $1 in
		-n) _tl_ns=$2 ;;
		-N) _tl_host=$2 ;;
		-l) TLSD_LOG=$2 ;;
		-t) _TL_WAIT=$2 ;;
		-r) _TL_READY=$2 ;;
		-s) _TL_SOCK=$2 ;;
		esac
		shift 2
	done
	case $_TL_WAIT in '' | *[!0-9]*) fail "start_tlsd: -t '$_TL_WAIT': want whole seconds" ;; esac
	[ -n "$_tl_v" ] || [ -n "$_TL_SOCK" ] ||
		fail "start_tlsd: -q needs -s SOCKET (a quiet tlsd logs no ready line)"
	# Now NAME=VALUE... CONF OPTION...: rebuilt behind the arguments as
	# [env NAME=VALUE...] tlsd [-N NS] -f [-v] -c CONF OPTION..., then the
	# originals shifted off (sh has no arrays; `for` reads the list once).
	_tl_n=$# _tl_conf=""
	for _tl_a; do
		if [ -z "$_tl_conf" ]; then
			case $_tl_a in
			[A-Za-z_]*=*)
				[ $# -gt "$_tl_n" ] || set -- "$@" env
				set -- "$@" "$_tl_a"
				continue
				;;
			esac
			_tl_conf=$_tl_a
			set -- "$@" "$TLSD"
			[ -n "$_tl_host" ] && set -- "$@" -N "$_tl_host"
			set -- "$@" -f $_tl_v -c "$_tl_a"
			continue
		fi
		set -- "$@" "$_tl_a"
	done
	[ -n "$_tl_conf" ] || fail "start_tlsd: no configuration file given"
	shift "$_tl_n"
	TLSD_CMD="$*"
	[ -n "$_tl_host" ] && TLSD_CMD="$TLSD_CMD (from the host's namespace)" ||
		TLSD_CMD="$TLSD_CMD (in namespace $_tl_ns)"
	: >"$TLSD_LOG"
	if [ -n "$_tl_host" ]; then
		bg_host "$TLSD_LOG" "$@"
	else
		bg_ns "$_tl_ns" "$TLSD_LOG" "$@"
	fi
	TLSD_PID=$LAST
	[ -n "$_tl_bg" ] || wait_tlsd
}

# tlsd_fail WHAT: fail, naming the command and the log, with its last lines
tlsd_fail() {
	fail "tlsd $1: $TLSD_CMD; its log $TLSD_LOG ends:
$(tail -n 20 "$TLSD_LOG" 2>/dev/null)"
}

# wait_tlsd: the waiting half of start_tlsd (after start_tlsd -b)
wait_tlsd() {
	_tl_i=0
	while :; do
		if [ -n "$_TL_SOCK" ]; then
			"$BIN/tlsctl" -s "$_TL_SOCK" status >/dev/null 2>&1 && return 0
		else
			grep -q -- "$_TL_READY" "$TLSD_LOG" 2>/dev/null && return 0
		fi
		if ! ours "$TLSD_PID"; then
			wait "$TLSD_PID" 2>/dev/null
			tlsd_fail "exited (status $?) before it was ready"
		fi
		[ $_tl_i -lt $((_TL_WAIT * 10)) ] || tlsd_fail "was not ready within $_TL_WAIT s"
		sleep 0.1
		_tl_i=$((_tl_i + 1))
	done
}

# stop_tlsd [-KILL] [-t SECONDS] [PID]: SIGTERM (or SIGKILL) to tlsd
# (TLSD_PID), then wait for it to exit, SECONDS (10; 5 after SIGKILL);
# fails if it does not. Sets TLSD_RC to its exit status.
stop_tlsd() {
	_tl_sig=TERM _tl_s=10
	if [ "${1:-}" = -KILL ]; then
		_tl_sig=KILL _tl_s=5
		shift
	fi
	if [ "${1:-}" = -t ]; then
		case ${2:-} in '' | *[!0-9]*) fail "stop_tlsd: -t '${2:-}': want whole seconds" ;; esac
		_tl_s=$2
		shift 2
	fi
	_tl_pid=${1:-$TLSD_PID}
	[ -n "$_tl_pid" ] || fail "stop_tlsd: no tlsd started"
	# only our own child: a PID that is gone may be someone else's by now
	ours "$_tl_pid" && kill -"$_tl_sig" "$_tl_pid"
	wait_pid "$_tl_pid" "$_tl_s" ||
		fail "tlsd (pid $_tl_pid) did not exit within $_tl_s s of SIG$_tl_sig"
	wait "$_tl_pid" 2>/dev/null
	# shellcheck disable=SC2034 # for the caller
	TLSD_RC=$?
}

# reload_tlsd [PATTERN]: SIGHUP, then wait (5 s) for one more line matching
# PATTERN ("configuration reloaded") in the log
reload_tlsd() {
	_tl_pat=${1:-configuration reloaded}
	_tl_n=$(grep -c -- "$_tl_pat" "$TLSD_LOG")
	kill -HUP "$TLSD_PID"
	_tl_i=0
	while [ "$(grep -c -- "$_tl_pat" "$TLSD_LOG")" -le "$_tl_n" ]; do
		[ $_tl_i -lt 50 ] || fail "reload not done: $(tail -3 "$TLSD_LOG")"
		sleep 0.1
		_tl_i=$((_tl_i + 1))
	done
}
