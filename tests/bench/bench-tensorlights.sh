#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make bench`: the TensorLights benchmark. JOBS emulated PS training jobs
# (psemu) share PS hosts whose egress is the bottleneck; each placement
# (intense: every PS on one host; medium: two hosts; mild: one PS per host)
# runs under FIFO, tlsd one, tlsd roundrobin, TensorLights' own tc
# mechanism and tlsd bursts, REPS times, interleaved (tests/bench/testbed.sh).
# Then
# tests/bench/analyze.py: normalized JCT, barrier waits and their spread
# across workers, link utilization, makespan against the link's bound, as a
# markdown table and a plot (tests/bench/tensorlights.md, .svg), and
# `name: value unit` lines at the end.
#
# Then two heterogeneous mixes at the intense placement (WORKLOAD=hetero,
# hetero_light; HETERO_REPS repetitions): five jobs whose models span 6x
# (500k to 3000k), compute 3x (400 to 1200 ms), 2 to 8 workers; one starts
# 2 s late, one 6 s late, one leaves after its few iterations while the
# others run; the first oversubscribes the link, the second does not.
# Tables: tests/bench/hetero.md, hetero_light.md; lines ending in _hetero,
# _hetero_light, beside _homog for the first workload (intense).
#
# Then real PyTorch jobs over gloo (FRAMEWORK=gloo, python3-torch installed
# when missing; GLOO=0 to leave them out): 4 jobs x 4 workers at one PS host
# of 100 Mbit/s, GLOO_REPS repetitions. Table tests/bench/gloo.md, lines
# ending in _gloo.
#
# The workload and why: see tests/bench/RESULTS.md. Every testbed setting
# can be overridden from the environment (e.g. REPS=5, PLACEMENTS=intense;
# HETERO_SPECS, LIGHT_SPECS for the mixes, HETERO=0 to leave them out).
# About 37 minutes with the defaults.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-build}
export OUT TOP
export REPS=${REPS:-3}
export POLICIES=${POLICIES:-fifo one roundrobin tensorlights bursts}
RESULTS=${RESULTS:-$TOP/$OUT/bench-tensorlights}
TABLE_DIR=${TABLE_DIR:-$TOP/tests/bench}
PYTHON=$(command -v /usr/bin/python3 || command -v python3) ||
	{ echo "bench-tensorlights: python3 not installed (tools/install-deps.sh)" >&2; exit 1; }

# SIZE:COMPUTE_MS:WORKERS:ITERS:START_S per job (tests/bench/testbed.sh).
# hetero: the link oversubscribed (the jobs alone would need 1.3x it while
# all five run); hetero_light: at most 0.8x it, where FIFO's collisions
# cost less and the ideal is nearer.
HETERO_SPECS=${HETERO_SPECS:-"500k:400:4:30:0 3000k:1200:8:8:0 1500k:800:2:20:2 1000k:600:6:6:0 2000k:1000:4:10:6"}
LIGHT_SPECS=${LIGHT_SPECS:-"500k:400:4:30:0 3000k:1200:2:10:0 1000k:1200:8:10:2 1500k:600:2:8:0 2000k:1000:4:10:6"}

t0=$(date +%s)
WORKLOAD=homog OUTDIR="$RESULTS" sh "$TOP/tests/bench/testbed.sh"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -ne 0 ] && echo "bench-tensorlights: some runs failed; analysing the others" >&2
if [ "${HETERO:-1}" != 0 ]; then
	WORKLOAD=hetero JOB_SPECS="$HETERO_SPECS" PLACEMENTS=intense OUTDIR="$RESULTS-hetero" \
		REPS=${HETERO_REPS:-2} sh "$TOP/tests/bench/testbed.sh" ||
		{ echo "bench-tensorlights: some heterogeneous runs failed; analysing the others" >&2; rc=1; }
	WORKLOAD=hetero_light JOB_SPECS="$LIGHT_SPECS" PLACEMENTS=intense OUTDIR="$RESULTS-light" \
		REPS=${HETERO_REPS:-2} sh "$TOP/tests/bench/testbed.sh" ||
		{ echo "bench-tensorlights: some heterogeneous runs failed; analysing the others" >&2; rc=1; }
fi
if [ "${GLOO:-1}" != 0 ]; then
	FRAMEWORK=gloo WORKLOAD=gloo JOBS=4 WORKERS=4 SIZE=2000k COMPUTE_MS=2000 ITERS=8 \
		RATE_MBIT=100 REPS=${GLOO_REPS:-2} PLACEMENTS=intense OUTDIR="$RESULTS-gloo" \
		sh "$TOP/tests/bench/testbed.sh" ||
		{ echo "bench-tensorlights: some PyTorch runs failed; analysing the others" >&2; rc=1; }
fi
t1=$(date +%s)

"$PYTHON" "$TOP/tests/bench/analyze.py" "$RESULTS" --md "$RESULTS/tensorlights.md" \
	--svg "$RESULTS/tensorlights.svg" --metrics >"$RESULTS/summary.txt"
arc=$?
if [ "${HETERO:-1}" != 0 ]; then
	"$PYTHON" "$TOP/tests/bench/analyze.py" "$RESULTS-hetero" --md "$RESULTS/hetero.md" \
		--metrics >"$RESULTS/summary-hetero.txt" || arc=1
	"$PYTHON" "$TOP/tests/bench/analyze.py" "$RESULTS-light" --md "$RESULTS/hetero_light.md" \
		--metrics >"$RESULTS/summary-light.txt" || arc=1
fi
if [ "${GLOO:-1}" != 0 ]; then
	"$PYTHON" "$TOP/tests/bench/analyze.py" "$RESULTS-gloo" --md "$RESULTS/gloo.md" \
		--metrics >"$RESULTS/summary-gloo.txt" || arc=1
fi
[ $arc -eq 0 ] || { echo "bench-tensorlights: the analysis reported problems (above)" >&2; rc=1; }
# the table and the plot beside RESULTS.md, where the lead keeps them
if [ -d "$TABLE_DIR" ] && [ -s "$RESULTS/tensorlights.md" ]; then
	cp "$RESULTS/tensorlights.md" "$TABLE_DIR/tensorlights.md"
	[ -s "$RESULTS/tensorlights.svg" ] && cp "$RESULTS/tensorlights.svg" "$TABLE_DIR/tensorlights.svg"
	[ -s "$RESULTS/hetero.md" ] && cp "$RESULTS/hetero.md" "$TABLE_DIR/hetero.md"
	[ -s "$RESULTS/hetero_light.md" ] && cp "$RESULTS/hetero_light.md" "$TABLE_DIR/hetero_light.md"
	[ -s "$RESULTS/gloo.md" ] && cp "$RESULTS/gloo.md" "$TABLE_DIR/gloo.md"
	echo "table and plot copied to $TABLE_DIR/tensorlights.md and .svg"
fi
echo "== results ($RESULTS)"
cat "$RESULTS/summary.txt"
# the heterogeneous mix's lines, without its table (in hetero.md)
[ -s "$RESULTS/summary-hetero.txt" ] && grep -E '^[a-z_]+: ' "$RESULTS/summary-hetero.txt"
[ -s "$RESULTS/summary-light.txt" ] && grep -E '^[a-z_]+: ' "$RESULTS/summary-light.txt"
[ -s "$RESULTS/summary-gloo.txt" ] && grep -E '^[a-z_]+: ' "$RESULTS/summary-gloo.txt"
echo "bench_wall_time: $((t1 - t0)) s"
exit $rc
