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
# Then a heterogeneous mix at the intense placement (WORKLOAD=hetero): five
# jobs whose models span 6x (500k to 3000k), compute 3x (400 to 1200 ms),
# 2 to 8 workers; one starts 2 s late, one 6 s late, one leaves after 6
# iterations while the others run. Its table: tests/bench/hetero.md; its
# lines end in _hetero, beside _homog for the first workload (intense).
#
# The workload and why: see tests/bench/RESULTS.md. Every testbed setting
# can be overridden from the environment (e.g. REPS=5, PLACEMENTS=intense;
# HETERO_SPECS for the mix, HETERO=0 to leave it out). About 21 minutes
# with the defaults.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-build}
export OUT TOP
export REPS=${REPS:-3}
RESULTS=${RESULTS:-$TOP/$OUT/bench-tensorlights}
TABLE_DIR=${TABLE_DIR:-$TOP/tests/bench}
PYTHON=$(command -v /usr/bin/python3 || command -v python3) ||
	{ echo "bench-tensorlights: python3 not installed (tools/install-deps.sh)" >&2; exit 1; }

# SIZE:COMPUTE_MS:WORKERS:ITERS:START_S per job (tests/bench/testbed.sh)
HETERO_SPECS=${HETERO_SPECS:-"500k:400:4:30:0 3000k:1200:8:8:0 1500k:800:2:20:2 1000k:600:6:6:0 2000k:1000:4:10:6"}

t0=$(date +%s)
WORKLOAD=homog OUTDIR="$RESULTS" sh "$TOP/tests/bench/testbed.sh"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -ne 0 ] && echo "bench-tensorlights: some runs failed; analysing the others" >&2
if [ "${HETERO:-1}" != 0 ]; then
	WORKLOAD=hetero JOB_SPECS="$HETERO_SPECS" PLACEMENTS=intense OUTDIR="$RESULTS-hetero" \
		sh "$TOP/tests/bench/testbed.sh" ||
		{ echo "bench-tensorlights: some heterogeneous runs failed; analysing the others" >&2; rc=1; }
fi
t1=$(date +%s)

"$PYTHON" "$TOP/tests/bench/analyze.py" "$RESULTS" --md "$RESULTS/tensorlights.md" \
	--svg "$RESULTS/tensorlights.svg" --metrics >"$RESULTS/summary.txt"
arc=$?
if [ "${HETERO:-1}" != 0 ]; then
	"$PYTHON" "$TOP/tests/bench/analyze.py" "$RESULTS-hetero" --md "$RESULTS/hetero.md" \
		--metrics >"$RESULTS/summary-hetero.txt" || arc=1
fi
[ $arc -eq 0 ] || { echo "bench-tensorlights: the analysis reported problems (above)" >&2; rc=1; }
# the table and the plot beside RESULTS.md, where the lead keeps them
if [ -d "$TABLE_DIR" ] && [ -s "$RESULTS/tensorlights.md" ]; then
	cp "$RESULTS/tensorlights.md" "$TABLE_DIR/tensorlights.md"
	[ -s "$RESULTS/tensorlights.svg" ] && cp "$RESULTS/tensorlights.svg" "$TABLE_DIR/tensorlights.svg"
	[ -s "$RESULTS/hetero.md" ] && cp "$RESULTS/hetero.md" "$TABLE_DIR/hetero.md"
	echo "table and plot copied to $TABLE_DIR/tensorlights.md and .svg"
fi
echo "== results ($RESULTS)"
cat "$RESULTS/summary.txt"
# the heterogeneous mix's lines, without its table (in hetero.md)
[ -s "$RESULTS/summary-hetero.txt" ] && grep -E '^[a-z_]+: ' "$RESULTS/summary-hetero.txt"
echo "bench_wall_time: $((t1 - t0)) s"
exit $rc
