#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make check`: unit tests (cmocka, ASan+UBSan), BPF tests (BPF_PROG_TEST_RUN,
# root), the documentation against the programs (tests/docs/: man pages
# against --help and the configuration parser, the bash completion),
# namespace integration tests (netns, veth, HTB, TCP; root), the packaging
# tests (tests/pkg/: the Debian packages built from a fresh clone,
# installed, run and purged; root; ~40 s) and a short run of each
# libFuzzer harness (tests/fuzz/, FUZZ_CHECK_SECONDS each, 20 by default).
# Ends with one line: N passed, N failed[, N skipped].
#
# TLS_TIERS (unit docs bpf ns pkg fuzz) and TLS_NS_TESTS (every
# tests/ns/test_*.sh) choose a part: tests/kernels/guest.sh runs the BPF
# tier and one namespace test on each kernel of `make check-kernels` this way.
OUT=${OUT:-build}
TLS_TIERS=${TLS_TIERS:-unit docs bpf ns pkg fuzz}
FUZZ_CHECK_SECONDS=${FUZZ_CHECK_SECONDS:-20}
TLS_NS_TESTS=${TLS_NS_TESTS:-$(ls tests/ns/test_*.sh 2>/dev/null)}
tier() { case " $TLS_TIERS " in *" $1 "*) return 0 ;; esac; return 1; }
cd "$(dirname "$0")/.." || exit 1

pass=0
fail=0
skipped=0
failed_names=""

# cmocka prints per group "[==========] N test(s) run." and "[  PASSED  ] N
# test(s)."; failures are what ran and did not pass (a failed group setup
# prints no FAILED line), and at least one if the binary exited non-zero.
run_cmocka() {
	name=$1
	shift
	log=$(mktemp)
	echo "== $name"
	"$@" >"$log" 2>&1
	rc=$?
	cat "$log"
	if [ $rc -eq 77 ]; then
		skipped=$((skipped + 1))
	else
		p=$(awk '/^\[  PASSED  \] [0-9]+ test/ { s += $4 } END { print s + 0 }' "$log")
		r=$(awk '/^\[==========\] [0-9]+ test\(s\) run/ { s += $2 } END { print s + 0 }' "$log")
		k=$(awk '/^\[  SKIPPED \] [0-9]+ test/ { s += $4 } END { print s + 0 }' "$log")
		f=$((r - p - k))
		skipped=$((skipped + k))
		# A crash (sanitizer, signal) fails the tier even if no group said so.
		[ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
		pass=$((pass + p))
		fail=$((fail + f))
		[ "$f" -gt 0 ] && failed_names="$failed_names $name"
	fi
	rm -f "$log"
}

# count NAME RC: a test's exit code (0 pass, 77 skip, else fail)
count() {
	case $2 in
	0) pass=$((pass + 1)) ;;
	77) skipped=$((skipped + 1)) ;;
	*)
		fail=$((fail + 1))
		failed_names="$failed_names $1"
		;;
	esac
}

run_script() {
	name=$(basename "$1" .sh)
	echo "== $name"
	sh "$1"
	count "$name" $?
}

# Is namespace test $1 among those to run?
ns_test_chosen() {
	case " $(echo $TLS_NS_TESTS) " in *" $1 "*) return 0 ;; esac
	return 1
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# A run killed before its traps ran (SIGKILL) leaves its pins behind, with
# the cgroup hook: remove those whose namespace is gone.
if [ "$(id -u)" -eq 0 ] && [ -d /sys/fs/bpf/tlsd ]; then
	for d in /sys/fs/bpf/tlsd/tl*p /sys/fs/bpf/tlsd/tl*p@*; do
		[ -d "$d" ] || continue
		ifname=$(basename "$d")
		ifname=${ifname%%@*}
		[ -e "/run/netns/${ifname}s" ] && continue
		echo "removing the leftovers of an interrupted run: $d"
		"$OUT/tls-classifier" -P "$d" -i "$ifname" detach >/dev/null 2>&1
	done
fi

if tier unit; then
	echo "### tier 1: unit tests (ASan, UBSan)"
	run_cmocka unit "$OUT/test-unit"
	# Pure logic outside C: the benchmark's analysis.
	for t in tests/unit/test_*.sh; do
		run_script "$t"
	done
fi
if tier docs; then
	echo "### tier 1b: documentation against the programs"
	for t in tests/docs/test_*.sh; do
		run_script "$t"
	done
fi
if tier bpf; then
	echo "### tier 2: BPF tests"
	run_cmocka bpf "$OUT/test-bpf"
	# Again on a kernel without the features the fixtures' paths depend on
	# (tests/fault/kernel_refuse.c): the slots' mirror of socket flows, the
	# clock without the coarse helper, the drained test gated off, maps not
	# mmapable and no batch operations. The ASan runtime must come first in
	# a sanitized binary; the shim only wraps libc calls, so its order does
	# not matter.
	REFUSED="sk_iter,tcp_sock,coarse_clock,mmapable,map_batch"
	run_cmocka "bpf (kernel without $REFUSED)" env LD_PRELOAD="$OUT/libtls-refuse.so" \
		TLS_REFUSE="$REFUSED" ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0" \
		"$OUT/test-bpf"
fi
if tier ns; then
	echo "### tier 3: namespace integration tests"
	for t in $TLS_NS_TESTS; do
		run_script "$t"
	done
	# The metrics endpoint again with tlsd built under ASan and UBSan
	# (netlink replies, sockets, the HTTP server: what the unit tests do
	# not reach); the test fails on a report in tlsd's log.
	if ns_test_chosen tests/ns/test_metrics.sh; then
		echo "== test_metrics (tlsd under ASan and UBSan)"
		case $OUT in /*) san=$OUT/san/tlsd ;; *) san=$PWD/$OUT/san/tlsd ;; esac
		if [ -x "$san" ]; then
			TLSD="$san" sh tests/ns/test_metrics.sh
			count "test_metrics[san]" $?
		else
			echo "FAIL: $san not built"
			count "test_metrics[san]" 1
		fi
	fi
	# The exact per-flow accounting again with the socket flows mirrored
	# into the slots (no socket-storage iterator) and no batch operations.
	if ns_test_chosen tests/ns/test_ps_membership.sh; then
		echo "== test_ps_membership (kernel without sk_iter,map_batch)"
		LD_PRELOAD="$OUT/libtls-refuse.so" TLS_REFUSE=sk_iter,map_batch sh tests/ns/test_ps_membership.sh
		count "test_ps_membership[sk_iter,map_batch]" $?
	fi
fi

if tier pkg; then
	echo "### tier 4: packaging"
	for t in tests/pkg/test_*.sh; do
		run_script "$t"
	done
fi

if tier fuzz; then
	echo "### tier 5: fuzzing (libFuzzer, ${FUZZ_CHECK_SECONDS} s per harness)"
	# Each harness counts as one test; a failure prints its input's path.
	for f in tests/fuzz/fuzz_*.c; do
		h=$(basename "$f" .c)
		echo "== $h"
		if OUT=$OUT sh tests/fuzz/run-fuzz.sh "$FUZZ_CHECK_SECONDS" "${h#fuzz_}"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			failed_names="$failed_names $h"
		fi
	done
fi

[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$pass passed, $fail failed, $skipped skipped"
[ $fail -eq 0 ]
