#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The spotDNN export, end to end (issue 17): a job runs at n = 1, 2, 4 and
# 8 workers behind tlsd; `tlsctl calibrate ps --format spotdnn -o FILE`
# writes spotDNN's calibration module; Python imports it as spotDNN would
# (the one documented line at the end of a stand-in profiler/instanceinfo.py)
# next to a re-implementation of spotDNN's prediction formulas, and the
# predicted per-worker bandwidth must match the B_wk tlsd measured within 5%
# at each n, in both directions: pull (the model out, the PS's egress, the
# classifier's counters) and push (the gradients in, its ingress, the
# ingress counter's), each from its own module (--direction). And S_param,
# measured per push (a burst of gradients between idle gaps), within 2% of
# what psemu sends per iteration: the pull module is written without
# --param (tlsd's measurement), the push one with it (the override). Also:
# all or nothing (no fit: exit non-zero, no file written, an existing one
# left as it was) and a host with two jobs refused without JOB.
#
# The testbed is test_calibrate.sh's: the PS in its own namespace, its
# egress (tlsd's interface, HTB at 100 Mbit/s) into a bridge, each worker
# in a namespace of its own behind it with a tbf at 40 Mbit/s toward it,
# so that n = 1 and 2 are uncontended (80 Mbit/s is under tlsd's 90%
# saturation threshold) and n = 4 and 8 contend. The push is shaped the
# same way (PUSH_LINK_MBIT): each worker's egress at 40 Mbit/s, the bridge
# port toward the PS (the PS's ingress) at 100. The workers' receive
# buffer is 128 KB (tcp_rmem of their namespaces; the PS's is the
# kernel's, lib.sh says why): 6 MB (the default's
# autotuning) let a pull start with a burst into the tbf's queue at the
# link's rate, which made the link look saturated at n = 1; 16 KB
# (test_calibrate.sh's) stalled a flow whenever its worker waited for a
# CPU on a loaded machine, and put B_wk at n = 1 9% under B_req.
#
# The job is psemu's: as in spotDNN's asynchronous training (ASP), each
# worker pulls the model (6 MB, 1.25 s alone), computes (0.5 s +- 0.1 s),
# pushes its gradient and pulls again at its own pace, so each worker has
# its own psemu PS (one worker each, ports 9001..9008, all tlsd's job
# "ps"); the same at every n. The link is contended part of the time, more
# with more workers (P(4) near 0.8, P(8) near 0.93). With two contended n
# the fit of spotDNN's two-parameter P(n) passes through both, so there
# the check is of the module (names, units, spotDNN's formulas as it
# imports them), and at n = 1 and 2 of B_req against B_wk. (A third, n = 6,
# with 4 MB pulls, measured 2.9% and 3.4% off the fit in two runs, 6.4% on
# a loaded machine whose P(4) came out above P(6): too noisy in a minute's
# test.) A phase ends by the test stopping its processes (by their PIDs) at
# once, so that n does not step down. The push's n climbs at each phase's
# start (the workers' first pushes begin as their first pulls end, all
# together): those n held for less than the window are transitional, in
# no observation (docs/design.md, "n as spotDNN counts it"); the test
# prints each direction's transitional time and wants the push's.
#
# At n = 1 and 2 spotDNN predicts instance_bandwith (B_req): tlsd measures
# it only in the periods whose start it knows, while B_wk counts the first
# period of each pull too, whose start it places (TCP restarting after the
# pause, at about 3 MB/s), so the prediction is a little above B_wk there:
# 1 to 4.9% with 4 MB pulls, 1.5 and 2.5% with 6 MB (fewer pulls per second).
. "$(dirname "$0")/lib.sh"

TLSD="$BIN/tlsd"
CTL="$BIN/tlsctl"
PSEMU="$BIN/psemu"
[ -x "$TLSD" ] && [ -x "$CTL" ] && [ -x "$PSEMU" ] || fail "tlsd, tlsctl or psemu not built"
# Debian's python3 with python3-numpy (tools/install-deps.sh), also where
# another python3 comes first in PATH
PY=python3
$PY -c "import numpy" 2>/dev/null || PY=/usr/bin/python3
$PY -c "import numpy" 2>/dev/null || skip "python3-numpy is needed (spotDNN's formulas use it)"

LINK_MBIT=100
CAP_MBIT=40
NWK=8
SIZE=6000000
# n: the worker hosts active within stats_window (fixed here, not "auto":
# each phase's n from its start), over the longest a worker
# is idle in one direction (compute and the other direction's transfer:
# 0.5 + 1.25 s alone, 0.6 + 3.7 s at n = 8: 5 s was too short at n = 8,
# whose push came out at n = 6 for 9.5 s), so that n is the workers
GROUP_S=6
SOCK="$TMPD/tlsd.sock"

# --- the hosts (lib.sh's wk_testbed, test_calibrate.sh's) ---
PUSH_LINK_MBIT=$LINK_MBIT
wk_testbed $NWK $CAP_MBIT "4096 131072 131072"

# --- tlsd: job "ps" on the workers' PS ports, and a second job ---
cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "${LINK_MBIT}mbit";
policy = "fifo";
bands = 2;
stats_window = "${GROUP_S}s";
control_socket = "$SOCK";
discovery = { enabled = false; };
jobs = ( { name = "ps"; ports = [ 9001, 9002, 9003, 9004, 9005, 9006, 9007, 9008 ]; },
	 { name = "other"; ports = [ 9100 ]; } );
EOC
start_tlsd "$TMPD/tlsd.conf"
ctl() { "$CTL" -s "$SOCK" "$@"; }

# S_param as tlsd counts it: psemu's model (SIZE and its 24-byte header) in
# segments of MSS bytes (MTU less 40 of IPv4 and TCP, less 12 of TCP's
# timestamps), each a frame of MTU + 14 bytes
PARAM=$($PY -c "m = $MTU - 52; print(round(($SIZE + 24) * ($MTU + 14) / m))")
SPOT="$TMPD/spotdnn"
MOD="$SPOT/profiler/tlsd_calib.py"
mkdir -p "$SPOT/profiler" || fail "cannot make $SPOT/profiler"

# --- refusals before any traffic ---
expect 2 "tlsd runs 2 jobs (1 ps, 2 other): name one" ctl calibrate --format spotdnn \
	--param "$PARAM"
expect 2 "calibrate: direction 'sideways' is not one of pull, push" ctl calibrate ps \
	--direction sideways
# --param is optional now (S_param measured); without a fit, still nothing
expect 1 "no spotDNN module written: " ctl calibrate ps --format spotdnn --direction push
# no fit yet: nothing written, no file made, an existing one left as it was
expect 1 "no spotDNN module written to $MOD: " ctl calibrate ps --format spotdnn \
	--param "$PARAM" -o "$MOD"
[ ! -e "$MOD" ] || fail "calibrate without a fit created $MOD: $(cat "$MOD")"
echo "bps = 1200  # the user's own" >"$MOD"
cp "$MOD" "$TMPD/mod.before"
expect 1 "no spotDNN module written" ctl calibrate ps --format spotdnn --param "$PARAM" -o "$MOD"
cmp -s "$MOD" "$TMPD/mod.before" || fail "calibrate without a fit changed $MOD: $(cat "$MOD")"
ctl calibrate ps --format spotdnn --param "$PARAM" >"$TMPD/stdout" 2>/dev/null
rc=$?
[ $rc -eq 1 ] && [ ! -s "$TMPD/stdout" ] ||
	fail "calibrate without a fit to stdout: exit $rc, printed: $(cat "$TMPD/stdout")"
[ "$(ls "$SPOT/profiler")" = "tlsd_calib.py" ] ||
	fail "calibrate left files behind: $(ls "$SPOT/profiler")"

# --- the job at n = 1, 2, 4, 8 ---
# phase N SECONDS COMPUTE_MS JITTER_MS: N workers, each with its own psemu
# PS, for SECONDS; then all stopped at once
phase() {
	n=$1
	info "n = $n: psemu, ${3} ms (+- ${4} ms) of compute per iteration, $2 s"
	pids=""
	i=1
	while [ $i -le "$n" ]; do
		bg_ps "$TMPD/ps.$n.$i" "$PSEMU" ps -b $PS4 -p $((9000 + i)) -w 1 -s $SIZE \
			-n 100000 -t 30
		pids="$pids $LAST"
		i=$((i + 1))
	done
	# every PS listening before its worker dials: a refused dial's RST
	# leaves from the PS's port, a flow of the job that would count in n
	# (k: wait_line counts with i)
	k=1
	while [ $k -le "$n" ]; do
		wait_line "$TMPD/ps.$n.$k" 5 "listening on" ||
			fail "psemu ps $k did not listen: $(cat "$TMPD/ps.$n.$k")"
		k=$((k + 1))
	done
	i=1
	while [ $i -le "$n" ]; do
		nsenter --net="/run/netns/${PFX}w$i" -- "$PSEMU" worker -q -c $PS4:$((9000 + i)) \
			-C "$3" -j "$4" --seed "$n$i" -t 30 >"$TMPD/wk.$n.$i" 2>&1 &
		pids="$pids $!"
		PIDS="$PIDS $!"
		i=$((i + 1))
	done
	sleep "$2"
	for p in $pids; do
		ours "$p" || fail "psemu (pid $p, n = $n) ended early: $(cat "$TMPD"/*."$n".*)"
	done
	# a psemu whose peer was stopped just before may have ended on its own
	for p in $pids; do
		kill "$p" 2>/dev/null || ! ours "$p" || fail "cannot stop psemu (pid $p)"
	done
	for p in $pids; do
		wait_pid "$p" 5 || fail "psemu (pid $p) did not stop"
	done
	# the workers of this phase leave tlsd's window before the
	# next phase starts, so that n is the next phase's from its start
	sleep "$GROUP_S.3"
}
T0=$(date +%s)
# n = 4 and 8 longer: a worker's first push comes after its first pull and
# compute (2 to 3 s), and until then the push's n is short of the workers
phase 1 12 500 100
phase 2 12 500 100
phase 4 16 500 100
phase 8 14 500 100
info "traffic: $(($(date +%s) - T0)) s"
ours "$TLSD_PID" || fail "tlsd died: $(tail -5 "$TMPD/tlsd.log")"

# --- the export, both directions ---
# the transitional time: active time at an n that changed before it held
# for the window, in no observation; the push's ramps make some
for d in pull push; do
	ctl -j stats --direction $d >"$TMPD/stats.$d.json" ||
		fail "tlsctl -j stats --direction $d failed"
	t=$($PY -c "import json, sys
j = [j for j in json.load(open(sys.argv[1]))['jobs'] if j['name'] == 'ps'][0]
print('%.2f' % j['transitional_active_s'])" "$TMPD/stats.$d.json") ||
		fail "no transitional time in tlsctl -j stats --direction $d: $(cat "$TMPD/stats.$d.json")"
	info "$d: transitional (at an n held less than ${GROUP_S} s): $t active s"
	[ $d = pull ] || [ "$t" != 0.00 ] ||
		fail "the push's n climbed at each phase's start, but no transitional time"
done
for d in pull push; do
	ctl calibrate ps --direction $d --format json >"$TMPD/calib.$d.json" ||
		fail "tlsctl calibrate ps --direction $d -j failed"
	ctl calibrate ps --direction $d --format csv >"$TMPD/calib.$d.csv" ||
		fail "tlsctl calibrate ps --direction $d --format csv failed"
	mkdir -p "$TMPD/$d/profiler" || fail "cannot make $TMPD/$d/profiler"
done
# pull: param as tlsd measured it (no --param); push: --param overrides
ctl calibrate ps --format spotdnn -o "$TMPD/pull/profiler/tlsd_calib.py" ||
	fail "calibrate ps --format spotdnn (S_param measured) failed: $(ctl calibrate ps)"
ctl calibrate ps --direction push --format spotdnn --param "$PARAM" \
	-o "$TMPD/push/profiler/tlsd_calib.py" ||
	fail "calibrate ps --direction push --format spotdnn failed: $(ctl calibrate ps --direction push)"
cp "$TMPD/pull/profiler/tlsd_calib.py" "$MOD"
for d in pull push; do
	info "$d: $TMPD/$d/profiler/tlsd_calib.py:"
	sed 's/^/    /' "$TMPD/$d/profiler/tlsd_calib.py"
done

# A stand-in for spotDNN's profiler/instanceinfo.py: its variables that the
# prediction uses, with values of a profile (one instance type of one GPU,
# profiled at 2.5 s per iteration with param = 11.5 and
# instance_bandwith = 142, spotDNN's shipped ones), then the one line.
cat >"$SPOT/profiler/instanceinfo.py" <<'EOF2'
import numpy as np
instance_gpus = [1]
instance_time = np.array([2.5])
bps = 1200
param = 11.5
instance_bandwith = 142
instance_comp = instance_time - (2 * param / instance_bandwith - 2 * np.array(instance_gpus) * param / 10000)
a = 0.8
b = 1.92
from profiler.tlsd_calib import *
EOF2

# check.py CALIB_JSON CSV DIRECTION PARAM_WANT (bytes, or "measured": the
# JSON's s_param_bytes) S_PARAM_TRUE (bytes psemu sends per iteration)
cat >"$TMPD/check.py" <<'EOF2'
import csv, json, sys
import numpy as np
from profiler import instanceinfo

# spotDNN's prediction, re-implemented from github.com/spotDNN/spotDNN at
# commit 7c8d1d4 (spotDNN/predictor.py; spotDNN/profiler/instanceinfo.py)
def p(n):  # predictor.py lines 20-21
    return min(instanceinfo.a * np.sqrt(n) - instanceinfo.b, 1)

def band_real(n):  # predictor.py lines 25-28 (n = len(cluster), line 24)
    bps, bw = instanceinfo.bps, instanceinfo.instance_bandwith
    if n * bw > bps:
        return (p(n) * bps / n) + (1 - p(n)) * bw
    return bw

def comp(time, gpus, param, bw):  # instanceinfo.py line 41
    return time - (2 * param / bw - 2 * np.array(gpus) * param / 10000)

cal = json.load(open(sys.argv[1]))
direction = sys.argv[3]
s_true = float(sys.argv[5])
# Both directions within 5% at every n. The push's n between two phases
# (its first pushes overlap while n climbs, P near 1) are transitional and
# not in the fit: with them, its P(8) came out 6.4% off in one CI run.
TOL = 5.0
S_TOL = 2.0
bad = []
ii = instanceinfo
print("  [%s] imported: bps %.4f, instance_bandwith %.4f, param %.4f, a %.4f, b %.4f, "
      "instance_comp %s" % (direction, ii.bps, ii.instance_bandwith, ii.param, ii.a, ii.b,
                            ii.instance_comp))
if cal.get("direction") != direction:
    bad.append("the reply's direction is %r, not %r" % (cal.get("direction"), direction))
# S_param per push, as tlsd measured it, against what psemu sends
sp = cal.get("s_param_bytes")
if sp is None:
    bad.append("no S_param measured")
else:
    err = 100 * (sp / s_true - 1)
    ok = abs(err) <= S_TOL
    print("  [%s] S_param measured %.0f bytes over %d pushes of %d flows, psemu sends %.0f: "
          "%+.2f%% %s" % (direction, sp, cal["s_param_bursts"], cal["s_param_flows"], s_true,
                          err, "ok" if ok else "FAIL"))
    if not ok:
        bad.append("S_param %.0f is not %.0f within %g%%" % (sp, s_true, S_TOL))
param = sp if sys.argv[4] == "measured" else float(sys.argv[4])
# the values are tlsd's, in MB (10^6 bytes) on the wire
if abs(ii.bps - cal["link"]["b_ps_Bps"] / 1e6) > 1e-4 * ii.bps:
    bad.append("bps %g is not B_ps %g" % (ii.bps, cal["link"]["b_ps_Bps"] / 1e6))
if abs(ii.instance_bandwith - cal["b_req_Bps"] / 1e6) > 1e-4 * ii.instance_bandwith:
    bad.append("instance_bandwith %g is not B_req" % ii.instance_bandwith)
if param is None or abs(ii.param - param / 1e6) > 1e-4 * ii.param:
    bad.append("param %g is not %s MB" % (ii.param, param and param / 1e6))
for k in ("a", "b"):  # printed with 6 digits
    if abs(getattr(ii, k) - cal["fit"][k]) > 1e-5 * max(1, abs(cal["fit"][k])):
        bad.append("%s = %g is not the fit's %g" % (k, getattr(ii, k), cal["fit"][k]))
# instance_comp: at the profile's bandwidth, not tlsd's
want = comp(np.array([2.5]), [1], 11.5, 142)
if not np.allclose(ii.instance_comp, want, rtol=1e-12):
    bad.append("instance_comp %s, want %s (the profile's)" % (ii.instance_comp, want))

print("  [%s] observations: n, active s, B_wk MB/s, unsaturated s and MB/s, P solved, use"
      % direction)
for o in cal["observations"]:
    u = o["unsat_active_s"]
    print("    n=%d %7.2f %7.3f %7.2f %7s %7s  %s"
          % (o["n"], o["active_s"], (o["b_wk_Bps"] or 0) / 1e6, u,
             "%.3f" % (o["unsat_bytes"] / u / 1e6) if u else "-",
             "-" if o["p_solved"] is None else "%.3f" % o["p_solved"], o["use"]))
obs = {o["n"]: o for o in cal["observations"]}
# the n sweep as CSV: the same observations
rows = list(csv.DictReader(open(sys.argv[2])))
if sorted(int(r["n"]) for r in rows) != sorted(obs) or any(
        abs(float(r["b_wk_Bps"]) - obs[int(r["n"])]["b_wk_Bps"]) > 1e-5 * float(r["b_wk_Bps"])
        or r["use"] != obs[int(r["n"])]["use"] for r in rows if r["b_wk_Bps"]):
    bad.append("calibrate --format csv is not the JSON's observations: %s" % rows)
else:
    print("  [%s] calibrate --format csv: %d observations, as the JSON" % (direction, len(rows)))
for n in (1, 2, 4, 8):
    o = obs.get(n)
    if not o or o["b_wk_Bps"] is None:
        bad.append("no observation at n = %d" % n)
        continue
    meas = o["b_wk_Bps"] / 1e6
    pred = band_real(n)
    err = 100 * (pred / meas - 1)
    ok = abs(err) <= TOL
    print("  [%s] n = %d: P(n) %6.3f, predicted %6.3f MB/s, measured B_wk %6.3f MB/s over "
          "%5.1f s (P solved %s, %s): %+5.2f%% %s"
          % (direction, n, p(n), pred, meas, o["active_s"],
             "-" if o["p_solved"] is None else "%.3f" % o["p_solved"], o["use"], err,
             "ok" if ok else "FAIL"))
    if not ok:
        bad.append("n = %d: predicted %.3f, measured %.3f MB/s" % (n, pred, meas))
if bad:
    print("FAIL [%s]: %s" % (direction, "; ".join(bad)))
    sys.exit(1)
EOF2
rc=0
for d in pull push; do
	cp "$SPOT/profiler/instanceinfo.py" "$TMPD/$d/profiler/" || fail "cannot copy the stand-in"
	want=measured
	[ $d = push ] && want=$PARAM
	# from stdin: the stand-in's directory is then first on sys.path
	(cd "$TMPD/$d" && $PY - "$TMPD/calib.$d.json" "$TMPD/calib.$d.csv" $d "$want" \
		"$PARAM" <"$TMPD/check.py") || rc=1
done
[ $rc -eq 0 ] || fail "the spotDNN prediction or S_param is out of tolerance"
# A profile whose iteration time is shorter than its own transfer: the
# module refuses to import rather than give spotDNN negative compute times
mkdir -p "$TMPD/bad/profiler" && cp "$MOD" "$TMPD/bad/profiler/" &&
	sed 's/^instance_time = .*/instance_time = np.array([0.1])/' \
		"$SPOT/profiler/instanceinfo.py" >"$TMPD/bad/profiler/instanceinfo.py" ||
	fail "cannot make the second stand-in"
(cd "$TMPD/bad" && $PY -c "from profiler import instanceinfo") >"$TMPD/bad.out" 2>&1 &&
	fail "a negative instance_comp was imported: $(cat "$TMPD/bad.out")"
grep -q "ValueError: tlsd_calib: instance_comp .* is not positive" "$TMPD/bad.out" ||
	fail "no clear error for a negative instance_comp: $(cat "$TMPD/bad.out")"
info "$(tail -1 "$TMPD/bad.out")"
echo "PASS: spotDNN's prediction from tlsd's modules matches the measured B_wk at n = 1, 2, 4, 8 within 5% in both directions; S_param measured within 2%"
