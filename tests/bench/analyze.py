#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn a testbed directory (tests/bench/testbed.sh) into the comparison
table, a plot and `name: value unit` lines.

Per run (one placement, one policy, one repetition):
  JCT          per job, from the PS's results (first model out to every worker
               holding the last one)
  barrier std  the paper's straggler measure: for each barrier, the standard
               deviation of the wait across that job's workers, averaged over
               the barriers, then over the jobs
  barrier wait the mean wait at the barriers, over all workers and iterations
  link util    bytes the PS host's interface sent / (link rate x makespan)
  ideal        per job, its own critical path: its broadcasts alone on the
               link (the bytes it sent, with the headers and ACKs its host's
               interface sent in proportion, retransmissions left out)
               plus its compute between them
  bound        the least makespan the link allows: the bytes the PS host's
               interface sent, less its TCP retransmissions (a full frame
               each), / link rate, or the latest a job could end on
               its own critical path from its start, whichever is longer;
               makespan / bound >= 1
  JCT bound    the least mean JCT the link allows (sum_jct_bound below): no
               schedule, however clairvoyant, has a lower mean JCT; the
               mean of the critical paths ("ideal") ignores that the jobs
               share the link, and may be out of any scheduler's reach
Per placement and policy: the mean and the standard deviation over the
repetitions. JCT is normalized per job by the same job's mean FIFO JCT at
the same placement.

Several OUTDIRs are read as one (their repetitions pooled; the first one's
settings name the workload). One given as LABEL=DIR is another build's:
its policies are named POLICY_LABEL (bursts_old), beside the same policy
of the unlabelled directories, and its FIFO runs count as FIFO. So two
builds are compared side by side, each job against FIFO.

Python 3 standard library only; the plot needs gnuplot (gnuplot-nox).
"""
import argparse
import glob
import json
import math
import os
import shutil
import statistics
import subprocess
import sys

WIRE_SEGMENT = 1514  # bytes of one full TCP frame on the wire: MTU 1500 + Ethernet

POLICY_ORDER = ["fifo", "one", "roundrobin", "tensorlights", "bursts"]
SHORT = {"fifo": "fifo", "one": "one", "roundrobin": "rr", "tensorlights": "tensorlights",
         "bursts": "bursts"}
LABEL = {"fifo": "FIFO", "one": "tlsd one", "roundrobin": "tlsd roundrobin",
         "tensorlights": "TensorLights tc (rr)", "bursts": "tlsd bursts"}
# TensorLights (Huang, Chen, Ng, HPBDC 2019), most intense placement
PAPER = {"one": {"jct_norm": 0.73, "bvar_change": -26.0},
         "roundrobin": {"jct_norm": 0.81, "bvar_change": -15.0},
         # TensorLights' own mechanism, rotating: the paper's RoundRobin
         "tensorlights": {"jct_norm": 0.81, "bvar_change": -15.0}}


def load(path):
    with open(path) as f:
        return json.load(f)


def mean(v):
    return statistics.fmean(v) if v else float("nan")


def sd(v):
    # nan (no baseline to compare with) has no spread; stdev() fails on it
    return statistics.stdev(v) if len(v) > 1 and all(math.isfinite(x) for x in v) else 0.0


def job_spec(meta, j):
    """compute (s) and iterations of job j: its JOB_SPECS entry, or the common ones."""
    for js in meta.get("job_specs") or []:
        if js.get("job") == j:
            return js["compute_ms"] / 1e3, js["iterations"]
    return meta["compute_ms"] / 1e3, meta["iterations"]


MAX_BOUND_JOBS = 16  # the bound's search is over the subsets of a host's jobs


def sum_jct_bound(jobs):
    """The least sum of JCTs any schedule of one link allows.

    jobs: (start, critical path, link time) per job, in seconds; the link
    time is the job's bytes at the link's rate, part of its critical path.
    Order the jobs of any schedule by the moment each sends its last byte.
    The k-th of them finished no earlier than its set S of the first k
    needed the link: for every start t in S, t plus the link time of the
    jobs of S that start at or after t (L(S)). Its JCT is at least that
    moment less its start, and at least its own critical path. So the sum
    is at least the least, over the orders, of those maxima summed: found
    by a walk over the subsets (f(S) = min over its last job j of
    f(S - j) + max(cp_j, L(S) - start_j)). None for too many jobs.
    """
    n = len(jobs)
    if n > MAX_BOUND_JOBS:
        return None
    f = [0.0] * (1 << n)
    for s in range(1, 1 << n):
        members = [i for i in range(n) if s >> i & 1]
        link_end = max(t + sum(jobs[i][2] for i in members if jobs[i][0] >= t)
                       for t in {jobs[i][0] for i in members})
        f[s] = min(f[s & ~(1 << j)] + max(jobs[j][1], link_end - jobs[j][0]) for j in members)
    return f[-1]


def analyze_run(d, meta):
    ncpus = meta.get("cpus", 1)
    run = load(os.path.join(d, "run.json"))
    cpu_s = 0.0
    rate = run["rate_bps"]
    jobs = {}
    for ps_path in sorted(glob.glob(os.path.join(d, "ps-*.json"))):
        j = int(os.path.basename(ps_path)[3:-5])
        ps = load(ps_path)
        cpu_s += ps.get("cpu_s", 0.0)
        if not ps.get("complete"):
            raise ValueError(f"{ps_path}: job did not complete: {ps.get('error')}")
        waits = []
        for wk_path in sorted(glob.glob(os.path.join(d, f"wk-{j}-*.json"))):
            wk = load(wk_path)
            cpu_s += wk.get("cpu_s", 0.0)
            if not wk.get("complete"):
                raise ValueError(f"{wk_path}: worker did not complete: {wk.get('error')}")
            waits.append(wk["barrier_wait_s"])
        if len(waits) != ps["workers"]:
            raise ValueError(f"{d}: job {j} has {len(waits)} worker results, "
                             f"expected {ps['workers']}")
        iters = min(len(w) for w in waits)
        if iters < 1:
            raise ValueError(f"{d}: job {j} recorded no barrier")
        per_barrier = [[w[i] for w in waits] for i in range(iters)]
        jobs[j] = {
            "jct": ps["jct_s"],
            "start": ps["start_unix"],
            "end": ps["end_unix"],
            "bytes": ps["bytes_sent"],
            "bstd": mean([statistics.pstdev(b) for b in per_barrier]),
            "bvar": mean([statistics.pvariance(b) for b in per_barrier]),
            "bwait": mean([x for b in per_barrier for x in b]),
        }
    if not jobs:
        raise ValueError(f"{d}: no PS results")
    span = max(x["end"] for x in jobs.values()) - min(x["start"] for x in jobs.values())
    run["emu_cpu_pct"] = 100 * cpu_s / (ncpus * span) if span > 0 else float("nan")
    hosts = []
    for h in run["hosts"]:
        hj = [jobs[j] for j in h["jobs"] if j in jobs]
        t0 = min(x["start"] for x in hj)
        makespan = max(x["end"] for x in hj) - t0
        payload = sum(x["bytes"] for x in hj)
        tcp = h.get("tcp_timeouts_retrans_spurious") or [0, 0, 0]
        # Retransmitted segments are bytes no schedule needs: counted in,
        # they would flatter the scheduler that causes them. At most a
        # full frame each (the testbed turns TSO/GSO off; MTU 1500).
        needed = max(h["tx_bytes"] - tcp[1] * WIRE_SEGMENT, payload)
        wire = needed / payload if payload else 1.0
        for j in h["jobs"]:
            if j not in jobs:
                continue
            compute_s, iters = job_spec(meta, j)
            x = jobs[j]
            x["ideal"] = x["bytes"] * wire * 8 / rate + (iters - 1) * compute_s
            x["ideal_end"] = x["start"] - t0 + x["ideal"]
            x["link_s"] = x["bytes"] * wire * 8 / rate
        bound = max([needed * 8 / rate] + [x["ideal_end"] for x in hj])
        jct_bound = sum_jct_bound([(x["start"] - t0, x["ideal"], x["link_s"]) for x in hj])
        hosts.append({"makespan": makespan, "bound": bound, "rto": tcp[0], "retrans": tcp[1],
                      "jct_bound_sum": jct_bound, "njobs": len(hj),
                      "reorder": h.get("tcp_reorder", 0),
                      "ratio": makespan / bound if bound else float("nan"),
                      "util": bound / makespan if makespan else float("nan")})
    return run, jobs, hosts


def parse_outdir(arg):
    """OUTDIR or LABEL=OUTDIR -> (label or "", directory)."""
    label, eq, d = arg.partition("=")
    if not eq:
        return "", arg
    if not label.isalnum() or not label.isascii():
        raise ValueError(f"{arg}: the label before '=' wants letters and digits only")
    return label, d


def label_of(p):
    """A policy's name in tables; another build's with its label."""
    base, _, label = p.partition("_")
    return LABEL.get(p) or (f"{LABEL.get(base, base)} ({label})" if label else p)


def short_of(p):
    base, _, label = p.partition("_")
    return SHORT.get(p) or (f"{SHORT.get(base, base)}_{label}" if label else p)


def policy_key(p):
    """Policies in POLICY_ORDER's order, each build's (POLICY_LABEL) after
    its own policy."""
    base, _, label = p.partition("_")
    return (POLICY_ORDER.index(base) if base in POLICY_ORDER else len(POLICY_ORDER), label, p)


def summarize(outdirs):
    if isinstance(outdirs, str):
        outdirs = [("", outdirs)]
    meta = load(os.path.join(outdirs[0][1], "meta.json"))
    runs = {}
    skipped = []
    for label, outdir in outdirs:
        for d in sorted(glob.glob(os.path.join(outdir, "runs", "*"))):
            if not os.path.exists(os.path.join(d, "run.json")):
                continue
            try:
                run, jobs, hosts = analyze_run(d, meta)
            except (ValueError, KeyError, OSError, json.JSONDecodeError) as e:
                skipped.append(f"{os.path.basename(d)}: {e}")
                continue
            if not run.get("ok", False):
                skipped.append(f"{os.path.basename(d)}: the testbed marked it failed")
                continue
            pol = run["policy"] if not label or run["policy"] == "fifo" else f"{run['policy']}_{label}"
            runs.setdefault((run["placement"], pol), []).append(
                {"rep": run["rep"], "jobs": jobs, "hosts": hosts, "cpu": run["cpu_busy_pct"],
                 "emu_cpu": run["emu_cpu_pct"]})

    placements = [p for p in meta["placements"].split() if any(k[0] == p for k in runs)]
    policies = sorted({k[1] for k in runs}, key=policy_key)
    rows = []
    for pl in placements:
        fifo = runs.get((pl, "fifo"), [])
        fifo_jct = {}
        for r in fifo:
            for j, x in r["jobs"].items():
                fifo_jct.setdefault(j, []).append(x["jct"])
        fifo_jct = {j: mean(v) for j, v in fifo_jct.items()}
        fifo_bstd = mean([mean([x["bstd"] for x in r["jobs"].values()]) for r in fifo])
        fifo_bvar = mean([mean([x["bvar"] for x in r["jobs"].values()]) for r in fifo])
        for pol in policies:
            rs = runs.get((pl, pol))
            if not rs:
                continue
            per_rep = {k: [] for k in ("jct_norm", "jct", "jct_ideal", "jct_bound", "bound_ideal", "bstd", "bvar", "bwait", "util",
                                       "ratio", "makespan", "bound", "cpu", "emu_cpu", "rto",
                                       "retrans", "reorder")}
            per_job = {}
            per_job_ideal = {}
            for r in rs:
                js = r["jobs"]
                if fifo_jct:
                    norms = {j: x["jct"] / fifo_jct[j] for j, x in js.items() if j in fifo_jct}
                    per_rep["jct_norm"].append(mean(list(norms.values())))
                    for j, v in norms.items():
                        per_job.setdefault(j, []).append(v)
                per_rep["jct"].append(mean([x["jct"] for x in js.values()]))
                # the mean JCT against the mean of the jobs' critical paths
                per_rep["jct_ideal"].append(mean([x["jct"] for x in js.values()]) /
                                            mean([x["ideal"] for x in js.values()]))
                for j, x in js.items():
                    per_job_ideal.setdefault(j, []).append(x["jct"] / x["ideal"])
                # ... and against the least mean JCT the link allows
                bsum = [h["jct_bound_sum"] for h in r["hosts"]]
                if bsum and None not in bsum:
                    least = sum(bsum) / sum(h["njobs"] for h in r["hosts"])
                    per_rep["jct_bound"].append(mean([x["jct"] for x in js.values()]) / least)
                    per_rep["bound_ideal"].append(least / mean([x["ideal"] for x in js.values()]))
                per_rep["bstd"].append(mean([x["bstd"] for x in js.values()]))
                per_rep["bvar"].append(mean([x["bvar"] for x in js.values()]))
                per_rep["bwait"].append(mean([x["bwait"] for x in js.values()]))
                per_rep["util"].append(mean([h["util"] for h in r["hosts"]]))
                per_rep["ratio"].append(mean([h["ratio"] for h in r["hosts"]]))
                per_rep["makespan"].append(mean([h["makespan"] for h in r["hosts"]]))
                per_rep["bound"].append(mean([h["bound"] for h in r["hosts"]]))
                per_rep["cpu"].append(r["cpu"])
                per_rep["emu_cpu"].append(r["emu_cpu"])
                per_rep["rto"].append(sum(h["rto"] for h in r["hosts"]))
                per_rep["retrans"].append(sum(h["retrans"] for h in r["hosts"]))
                per_rep["reorder"].append(sum(h["reorder"] for h in r["hosts"]))
            row = {"placement": pl, "policy": pol, "reps": len(rs),
                   "per_job": {j: mean(v) for j, v in sorted(per_job.items())},
                   "per_job_ideal": {j: mean(v) for j, v in sorted(per_job_ideal.items())}}
            # the job that lost most against FIFO (its mean over repetitions)
            row["worst_vs_fifo"] = max(row["per_job"].values(), default=float("nan"))
            for k, v in per_rep.items():
                row[k] = mean(v)
                row[k + "_sd"] = sd(v)
            # changes against FIFO's mean, per repetition, so that they have a spread too
            bc = [100 * (b / fifo_bstd - 1) for b in per_rep["bstd"]] if fifo_bstd else []
            vc = [100 * (b / fifo_bvar - 1) for b in per_rep["bvar"]] if fifo_bvar else []
            row["bstd_change"], row["bstd_change_sd"] = mean(bc), sd(bc)
            row["bvar_change"], row["bvar_change_sd"] = mean(vc), sd(vc)
            rows.append(row)
    return meta, rows, skipped


def pm(v, s, fmt, sfmt=None):
    if v != v:  # NaN
        return "n/a"
    return f"{fmt.format(v)} ± {(sfmt or fmt).format(s)}"


def change(r, key):
    """A change against FIFO, with its spread; nothing for FIFO itself."""
    if r["policy"] == "fifo":
        return "(baseline)"
    return pm(r[key], r[key + "_sd"], "{:+.0f}", "{:.0f}") + " %"


def markdown(meta, rows):
    out = []
    reps = max((r['reps'] for r in rows), default=0)
    if meta.get("job_specs") and meta.get("workload", "homog") != "homog":
        jobs = "; ".join(f"job {x['job']}: {x['size']} B x {x['workers']} workers, "
                         f"{x['iterations']} iterations of {x['compute_ms']} ms, "
                         f"from {x['start_s']} s" for x in meta["job_specs"])
        out.append(f"Workload {meta['workload']}: {jobs}. Compute sd {meta['jitter_ms']} ms, "
                   f"PS egress {meta['rate_bps'] / 1e6:g} Mbit/s, rotation every "
                   f"{meta['interval']}; mean ± sd over {reps} repetitions.")
    else:
        out.append(f"{meta['jobs']} jobs x {meta['workers']} workers, model {meta['size']} B, "
                   f"{meta['iterations']} iterations, compute {meta['compute_ms']} ms "
                   f"(sd {meta['jitter_ms']} ms), PS egress {meta['rate_bps'] / 1e6:g} Mbit/s, "
                   f"rotation every {meta['interval']}; mean ± sd over {reps} repetitions.")
    out.append("")
    out.append("| placement | policy | JCT / FIFO | per job | worst job vs FIFO | JCT (s) "
               "| JCT / ideal | per job vs ideal | JCT / least the link allows "
               "(that least / ideal) | barrier wait (ms) "
               "| barrier std (ms) | std vs FIFO | variance vs FIFO | link util | "
               "makespan / bound | TCP RTOs, retrans., reorderings | CPU: machine, psemu |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        per_job = " ".join(f"{v:.2f}" for v in r["per_job"].values())
        per_ideal = " ".join(f"{v:.2f}" for v in r["per_job_ideal"].values())
        out.append(
            f"| {r['placement']} | {label_of(r['policy'])} | {pm(r['jct_norm'], r['jct_norm_sd'], '{:.2f}')} "
            f"| {per_job} | {r['worst_vs_fifo']:.2f} | {pm(r['jct'], r['jct_sd'], '{:.1f}')} "
            f"| {pm(r['jct_ideal'], r['jct_ideal_sd'], '{:.2f}')} | {per_ideal} "
            f"| {pm(r['jct_bound'], r['jct_bound_sd'], '{:.2f}')} ({r['bound_ideal']:.2f}) "
            f"| {pm(1e3 * r['bwait'], 1e3 * r['bwait_sd'], '{:.0f}')} "
            f"| {pm(1e3 * r['bstd'], 1e3 * r['bstd_sd'], '{:.1f}')} "
            f"| {change(r, 'bstd_change')} | {change(r, 'bvar_change')} "
            f"| {pm(100 * r['util'], 100 * r['util_sd'], '{:.0f}')} % "
            f"| {pm(r['ratio'], r['ratio_sd'], '{:.2f}')} "
            f"| {r['rto']:.0f}, {r['retrans']:.0f}, {r['reorder']:.0f} "
            f"| {r['cpu']:.0f} %, {r['emu_cpu']:.0f} % |")
    if meta.get("workload", "homog") != "homog":
        return "\n".join(out) + "\n"  # the paper ran identical jobs only
    out.append("")
    out.append("TensorLights' published figures (most intense placement, normalized JCT; "
               "barrier wait variance against FIFO):")
    out.append("")
    out.append("| policy | paper JCT / FIFO | ours (intense) | paper variance | ours: variance | ours: std |")
    out.append("|---|---|---|---|---|---|")
    first = rows[0]["placement"] if rows else None
    for pol, ref in PAPER.items():
        ours = [r for r in rows if r["policy"] == pol and r["placement"] == first]
        o = ours[0] if ours else None
        out.append(f"| {LABEL[pol]} | {ref['jct_norm']:.2f} | "
                   f"{o['jct_norm']:.2f} | {ref['bvar_change']:+.0f} % | "
                   f"{o['bvar_change']:+.0f} % | {o['bstd_change']:+.0f} % |" if o else
                   f"| {LABEL[pol]} | {ref['jct_norm']:.2f} | n/a | {ref['bvar_change']:+.0f} % | n/a | n/a |")
    return "\n".join(out) + "\n"


def brief(meta, rows):
    """A narrow table for a terminal: the demo's."""
    out = [f"{'placement':<9} {'policy':<21} {'JCT/FIFO':>8} {'worst job':>9} {'barrier wait':>12} "
           f"{'barrier std':>11} {'vs FIFO':>7} {'link util':>9} {'makespan/bound':>14}"]
    for r in rows:
        out.append(f"{r['placement']:<9} {label_of(r['policy']):<21} {r['jct_norm']:>8.2f} "
                   f"{r['worst_vs_fifo']:>9.2f} "
                   f"{1e3 * r['bwait']:>9.0f} ms {1e3 * r['bstd']:>8.1f} ms "
                   f"{r['bstd_change']:>+6.0f}% {100 * r['util']:>8.0f}% {r['ratio']:>14.2f}")
    return "\n".join(out) + "\n"


def metrics(meta, rows):
    lines = []
    # Per workload, at the intense placement (or the first one run): named
    # by the policy's own name, comparable across workloads.
    wl = meta.get("workload", "homog")
    pls = [r["placement"] for r in rows]
    main_pl = "intense" if "intense" in pls else (pls[0] if pls else None)
    for r in rows:
        if r["placement"] != main_pl:
            continue
        tag = f"{r['policy']}_{wl}"
        if r["policy"] != "fifo":
            lines.append(f"jct_norm_{tag}: {r['jct_norm']:.3f} ratio")
            lines.append(f"worst_job_vs_fifo_{tag}: {r['worst_vs_fifo']:.3f} ratio")
        lines.append(f"jct_over_ideal_{tag}: {r['jct_ideal']:.3f} ratio")
        lines.append(f"jct_over_link_bound_{tag}: {r['jct_bound']:.3f} ratio")
        lines.append(f"link_bound_over_ideal_{tag}: {r['bound_ideal']:.3f} ratio")
        lines.append(f"makespan_over_bound_{tag}: {r['ratio']:.3f} ratio")
    if wl != "homog":
        return lines
    for r in rows:
        tag = f"{short_of(r['policy'])}_{r['placement']}"
        if r["policy"] != "fifo":
            lines.append(f"jct_norm_{tag}: {r['jct_norm']:.3f} ratio")
            lines.append(f"jct_norm_sd_{tag}: {r['jct_norm_sd']:.3f} ratio")
            lines.append(f"barrier_std_change_{tag}: {r['bstd_change']:.1f} %")
            lines.append(f"barrier_var_change_{tag}: {r['bvar_change']:.1f} %")
        lines.append(f"jct_mean_{tag}: {r['jct']:.2f} s")
        lines.append(f"barrier_wait_mean_{tag}: {1e3 * r['bwait']:.1f} ms")
        lines.append(f"barrier_std_{tag}: {1e3 * r['bstd']:.1f} ms")
        lines.append(f"link_util_{tag}: {100 * r['util']:.1f} %")
        lines.append(f"makespan_over_bound_{tag}: {r['ratio']:.3f} ratio")
        lines.append(f"tcp_rtos_{tag}: {r['rto']:.0f} timeouts")
        lines.append(f"tcp_retrans_{tag}: {r['retrans']:.0f} segments")
        lines.append(f"tcp_reorder_{tag}: {r['reorder']:.0f} events")
    if rows:
        lines.append(f"cpu_busy_machine_max: {max(r['cpu'] for r in rows):.1f} %")
        lines.append(f"cpu_busy_psemu_max: {max(r['emu_cpu'] for r in rows):.1f} %")
    return lines


def plot(rows, svg):
    """Grouped bars with error bars; PNG if the name ends in .png, else SVG."""
    if not shutil.which("gnuplot"):
        print("analyze: gnuplot not found (apt install gnuplot-nox): no plot", file=sys.stderr)
        return False
    placements = list(dict.fromkeys(r["placement"] for r in rows))
    policies = sorted({r["policy"] for r in rows}, key=policy_key)
    dat = svg + ".dat"
    with open(dat, "w") as f:
        f.write("# placement " + " ".join(f"{p} {p}_sd {p}_b {p}_bsd" for p in policies) + "\n")
        for pl in placements:
            cells = []
            for pol in policies:
                r = next((r for r in rows if r["placement"] == pl and r["policy"] == pol), None)
                if r is None:
                    cells.append("NaN NaN NaN NaN")
                else:
                    cells.append(f"{r['jct_norm']:.4f} {r['jct_norm_sd']:.4f} "
                                 f"{1e3 * r['bstd']:.2f} {1e3 * r['bstd_sd']:.2f}")
            f.write(f"{pl} " + " ".join(cells) + "\n")
    term = ("pngcairo size 1100,480 font 'sans,10'" if svg.endswith(".png") else
            "svg size 960,420 dynamic font 'sans,11'")
    script = f"""
set terminal {term}
set output '{svg}'
set multiplot layout 1,2
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key outside bottom center horizontal font ',9'
set grid ytics
set title 'Job completion time, normalized to FIFO'
set ylabel 'JCT / FIFO'
set yrange [0:1.3]
plot {', '.join(f"'{dat}' using {2 + 4 * i}:{3 + 4 * i}:xtic(1) title '{label_of(p)}'" for i, p in enumerate(policies))}, \\
     0.73 with lines dt 2 lc rgb 'gray40' title 'paper: one 0.73', \\
     0.81 with lines dt 3 lw 1.5 lc rgb 'gray20' title 'paper: rr 0.81'
set title 'Barrier wait std across a job''s workers'
set ylabel 'ms'
set yrange [0:*]
plot {', '.join(f"'{dat}' using {4 + 4 * i}:{5 + 4 * i}:xtic(1) title '{label_of(p)}'" for i, p in enumerate(policies))}
unset multiplot
"""
    res = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    os.unlink(dat)
    if res.returncode:
        print(f"analyze: gnuplot failed: {res.stderr.strip()}", file=sys.stderr)
        return False
    return True


# psemu's --size suffixes (tests/emu/psemu.c)
SIZE_SUFFIX = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "Ki": 1024, "Mi": 1 << 20,
               "Gi": 1 << 30}


def parse_specs(specs):
    """A JOB_SPECS string (SIZE:COMPUTE_MS:WORKERS:ITERS:START_S per job, as
    testbed.sh takes it; SIZE in k = 1000 B) -> (size in bytes, compute in
    s, workers, iterations, start in s) per job. ValueError or KeyError."""
    jobs = []
    for spec in specs.split():
        size, compute_ms, workers, iters, start = spec.split(":")
        num = size.rstrip("kKMGi")
        jobs.append((float(num) * SIZE_SUFFIX[size[len(num):]], int(compute_ms) / 1e3,
                     int(workers), int(iters), float(start)))
    return jobs


def spec_bound(specs, rate_mbit):
    """The least mean JCT over the mean critical path of a JOB_SPECS string
    (SIZE:COMPUTE_MS:WORKERS:ITERS:START_S per job, as testbed.sh takes
    it; SIZE in k = 1000 B), the payload alone at the link's rate."""
    jobs = []
    for size_b, compute_s, workers, iters, start in parse_specs(specs):
        link = size_b * workers * iters * 8 / (rate_mbit * 1e6)
        jobs.append((start, link + (iters - 1) * compute_s, link))
    least = sum_jct_bound(jobs)
    if least is None:
        raise ValueError(f"more than {MAX_BOUND_JOBS} jobs")
    return least / sum(cp for _, cp, _ in jobs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", nargs="*",
                    help="the testbed's OUTDIR; several are pooled, LABEL=OUTDIR another build's")
    ap.add_argument("--specs", help="print the least mean JCT the link allows over the mean "
                    "critical path for these JOB_SPECS (no OUTDIR), then exit")
    ap.add_argument("--rate-mbit", type=float, default=200, help="the link's rate for --specs")
    ap.add_argument("--md", help="write the markdown table here")
    ap.add_argument("--svg", help="write the plot here (gnuplot; SVG, or PNG for *.png)")
    ap.add_argument("--metrics", action="store_true", help="print `name: value unit` lines")
    ap.add_argument("--brief", action="store_true",
                    help="print a narrow table instead of the markdown one")
    args = ap.parse_args()
    if args.specs:
        try:
            print(f"link_bound_over_ideal: {spec_bound(args.specs, args.rate_mbit):.3f} ratio")
        except (ValueError, KeyError) as e:
            ap.error(f"--specs: want SIZE:COMPUTE_MS:WORKERS:ITERS:START_S per job ({e})")
        return 0
    if not args.outdir:
        ap.error("an OUTDIR, or --specs")
    try:
        outdirs = [parse_outdir(a) for a in args.outdir]
    except ValueError as e:
        ap.error(str(e))
    for _, d in outdirs:
        if not os.path.exists(os.path.join(d, "meta.json")):
            ap.error(f"{d}: no meta.json (not a testbed directory?)")
    meta, rows, skipped = summarize(outdirs)
    for s in skipped:
        print(f"analyze: skipped {s}", file=sys.stderr)
    if not rows:
        print("analyze: no complete run to analyze", file=sys.stderr)
        return 1
    md = markdown(meta, rows)
    print(brief(meta, rows) if args.brief else md)
    if args.md:
        with open(args.md, "w") as f:
            f.write(md)
    if args.svg:
        plot(rows, args.svg)
    if args.metrics:
        for line in metrics(meta, rows):
            print(line)
    return 1 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
