#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make check`: unit tests (cmocka, ASan+UBSan), BPF tests (BPF_PROG_TEST_RUN,
# root) and namespace integration tests (netns, veth, HTB, TCP; root). Ends
# with one line: N passed, N failed[, N skipped].
OUT=${OUT:-build}
cd "$(dirname "$0")/.." || exit 1

pass=0
fail=0
skipped=0
failed_names=""

# cmocka prints "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s)..." per group.
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
		f=$(awk '/^\[  FAILED  \] [0-9]+ test/ { s += $4 } END { print s + 0 }' "$log")
		# A crash (sanitizer, signal) fails the tier even if no group said so.
		[ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
		pass=$((pass + p))
		fail=$((fail + f))
		[ "$f" -gt 0 ] && failed_names="$failed_names $name"
	fi
	rm -f "$log"
}

run_script() {
	name=$(basename "$1" .sh)
	echo "== $name"
	sh "$1"
	rc=$?
	case $rc in
	0) pass=$((pass + 1)) ;;
	77) skipped=$((skipped + 1)) ;;
	*)
		fail=$((fail + 1))
		failed_names="$failed_names $name"
		;;
	esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

echo "### tier 1: unit tests (ASan, UBSan)"
run_cmocka unit "$OUT/test-unit"
echo "### tier 2: BPF tests"
run_cmocka bpf "$OUT/test-bpf"
echo "### tier 3: namespace integration tests"
for t in tests/ns/test_*.sh; do
	run_script "$t"
done

[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$pass passed, $fail failed, $skipped skipped"
[ $fail -eq 0 ]
