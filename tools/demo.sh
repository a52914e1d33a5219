#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make demo`: a short run of the TensorLights testbed (about a minute).
# Four emulated training jobs (psemu: a PS and four workers each) have their
# PSes on one host whose egress (200 Mbit/s) is the bottleneck; each job runs
# ITERS iterations of: the PS sends the model to its workers, they compute,
# they send their gradients back. The same four jobs run under
#   FIFO                  tlsd with no priorities (the jobs' traffic interleaves)
#   tlsd one              TensorLights-One: a fixed priority per job
#   tlsd roundrobin       TensorLights-RoundRobin: the priorities rotate
#   TensorLights tc (rr)  TensorLights' own mechanism: tc u32 filters, tree
#                         rebuilt at every rotation
#   tlsd bursts           tlsd's own: the classifier orders the jobs' current
#                         broadcasts, the one that would finish first under
#                         an equal share of the link first
# and the comparison table follows. `make bench` runs the full benchmark.
TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-build}
export OUT TOP
RESULTS="$TOP/$OUT/demo"
PYTHON=$(command -v /usr/bin/python3 || command -v python3) ||
	{ echo "demo: python3 not installed (tools/install-deps.sh)" >&2; exit 1; }

cat <<EOT
tlsd demo: 4 PS jobs x 4 workers, every PS on one host, 200 Mbit/s egress.
Each job: ${ITERS:-10} iterations of a 1.5 MB model out to each worker, ~0.8 s of
compute, 1.5 MB gradients back. One run per policy, about 15-20 s each:
EOT
OUTDIR="$RESULTS" PLACEMENTS=intense REPS=1 ITERS=${ITERS:-10} \
	POLICIES=${POLICIES:-fifo one roundrobin tensorlights bursts} sh "$TOP/tests/bench/testbed.sh"
rc=$?
[ $rc -eq 77 ] && exit 77
echo
"$PYTHON" "$TOP/tests/bench/analyze.py" "$RESULTS" --brief || exit 1
cat <<EOT
JCT/FIFO        mean job completion time against the same jobs under FIFO
worst job       the job that gained least (or lost most) against FIFO
barrier wait    mean time a worker waits from sending its gradient to
                holding the next model
barrier std     spread of that wait across a job's workers (stragglers)
link util       PS host egress bytes / (link rate x time until the last job
                ended); makespan/bound is its inverse: 1.00 = no schedule
                could have finished sooner
Details of every run: $RESULTS (analyze.py $RESULTS prints the full table).
EOT
exit $rc
