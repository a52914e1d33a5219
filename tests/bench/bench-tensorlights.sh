#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make bench`: the TensorLights benchmark. JOBS emulated PS training jobs
# (psemu) share PS hosts whose egress is the bottleneck; each placement
# (intense: every PS on one host; medium: two hosts; mild: one PS per host)
# runs under FIFO, tlsd one, tlsd roundrobin and TensorLights' own tc
# mechanism, REPS times, interleaved (tests/bench/testbed.sh). Then
# tests/bench/analyze.py: normalized JCT, barrier waits and their spread
# across workers, link utilization, makespan against the link's bound, as a
# markdown table and a plot (tests/bench/tensorlights.md, .svg), and
# `name: value unit` lines at the end.
#
# The workload and why: see tests/bench/RESULTS.md. Every testbed setting
# can be overridden from the environment (e.g. REPS=5, PLACEMENTS=intense).
# About 15 minutes with the defaults.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-build}
export OUT TOP
export REPS=${REPS:-3}
RESULTS=${RESULTS:-$TOP/$OUT/bench-tensorlights}
TABLE_DIR=${TABLE_DIR:-$TOP/tests/bench}
PYTHON=$(command -v /usr/bin/python3 || command -v python3) ||
	{ echo "bench-tensorlights: python3 not installed (tools/install-deps.sh)" >&2; exit 1; }

t0=$(date +%s)
OUTDIR="$RESULTS" sh "$TOP/tests/bench/testbed.sh"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -ne 0 ] && echo "bench-tensorlights: some runs failed; analysing the others" >&2
t1=$(date +%s)

"$PYTHON" "$TOP/tests/bench/analyze.py" "$RESULTS" --md "$RESULTS/tensorlights.md" \
	--svg "$RESULTS/tensorlights.svg" --metrics >"$RESULTS/summary.txt"
arc=$?
[ $arc -eq 0 ] || { echo "bench-tensorlights: the analysis reported problems (above)" >&2; rc=1; }
# the table and the plot beside RESULTS.md, where the lead keeps them
if [ -d "$TABLE_DIR" ] && [ -s "$RESULTS/tensorlights.md" ]; then
	cp "$RESULTS/tensorlights.md" "$TABLE_DIR/tensorlights.md"
	[ -s "$RESULTS/tensorlights.svg" ] && cp "$RESULTS/tensorlights.svg" "$TABLE_DIR/tensorlights.svg"
	echo "table and plot copied to $TABLE_DIR/tensorlights.md and .svg"
fi
echo "== results ($RESULTS)"
cat "$RESULTS/summary.txt"
echo "bench_wall_time: $((t1 - t0)) s"
exit $rc
