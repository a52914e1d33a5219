#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Runs libFuzzer harnesses ($OUT/fuzz/fuzz_NAME, from tests/fuzz/fuzz_NAME.c)
# for SECONDS each: `make fuzz` (FUZZ_SECONDS) and the fuzz tier of
# `make check` (FUZZ_CHECK_SECONDS, one harness per call).
#
# Usage: run-fuzz.sh SECONDS [NAME...]   (no NAME: every harness)
#
# Each starts from a temporary copy of its seed corpus (tests/fuzz/corpus/
# NAME), removed afterwards: a run never grows the committed corpus. Its
# dictionary (tests/fuzz/NAME.dict) is used if there is one. A crash, a
# sanitizer report, a leak, an input slower than FUZZ_TIMEOUT seconds (25)
# or out of memory fails the harness: the input is kept in
# $OUT/fuzz/crashes/NAME/ and its path printed, with the report. Replay it
# with `$OUT/fuzz/fuzz_NAME PATH`. Exit status: 0 if every harness passed.
OUT=${OUT:-build}
cd "$(dirname "$0")/../.." || exit 1
root=$(pwd)
secs=${1:?usage: run-fuzz.sh SECONDS [NAME...]}
shift
names=$*
[ -n "$names" ] || names=$(ls tests/fuzz/fuzz_*.c | sed 's|.*/fuzz_||; s|\.c$||')
timeout=${FUZZ_TIMEOUT:-25}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Leaks of the libraries' own that no harness can avoid: see the file.
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# The value of libFuzzer's final "stat::NAME: V" line in a log.
stat() {
	sed -n "s/^stat::$1: *//p" "$2" | tail -n 1
}

failed=""
summary=""
for h in $names; do
	bin=$OUT/fuzz/fuzz_$h
	if [ ! -x "$bin" ]; then
		echo "fuzz_$h: $bin is not built (make $bin)"
		failed="$failed $h"
		continue
	fi
	work=$(mktemp -d "${TMPDIR:-/tmp}/tlsd-fuzz-$h.XXXXXX") || exit 1
	mkdir -p "$work/corpus" "$OUT/fuzz/crashes/$h"
	[ -d "tests/fuzz/corpus/$h" ] && cp -R "tests/fuzz/corpus/$h/." "$work/corpus/"
	seeds=$(ls "$work/corpus" | wc -l)
	dict=""
	[ -f "tests/fuzz/$h.dict" ] && dict="-dict=$root/tests/fuzz/$h.dict"
	art=$(cd "$OUT/fuzz/crashes/$h" && pwd)/
	start=$(date +%s)
	# libFuzzer's own exit codes for errors are 77 and 70 (77 is "skipped"
	# to tests/run-tests.sh): 1 for every failure.
	(cd "$work" && "$root/$bin" -max_total_time="$secs" -timeout="$timeout" \
		-print_final_stats=1 -artifact_prefix="$art" -error_exitcode=1 \
		-timeout_exitcode=1 $dict corpus) >"$work/log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	runs=$(stat number_of_executed_units "$work/log")
	rate=$(stat average_exec_per_sec "$work/log")
	cov=$(sed -n 's/.*\(cov: [0-9]*\) \(ft: [0-9]*\) .*/\1 \2/p' "$work/log" | tail -n 1)
	corpus=$(ls "$work/corpus" | wc -l)
	line="fuzz_$h: ${runs:-?} runs in ${took} s (${rate:-?}/s), $cov, corpus $seeds -> $corpus"
	if [ $rc -ne 0 ]; then
		# the report: from the sanitizer's or libFuzzer's first word to
		# its summary
		sed -n '/^==[0-9]*== *ERROR\|runtime error:\|^ALARM/,/^SUMMARY/p' "$work/log" |
			head -n 60
		for a in $(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$work/log"); do
			echo "fuzz_$h: failing input: $a"
		done
		line="$line: FAILED (exit $rc)"
		failed="$failed $h"
	fi
	echo "$line"
	summary="$summary$line
"
	rm -rf "$work"
done
if [ "$(echo $names | wc -w)" -gt 1 ]; then
	echo
	printf '%s' "$summary"
fi
if [ -n "$failed" ]; then
	echo "fuzzing failed:$failed"
	exit 1
fi
exit 0
