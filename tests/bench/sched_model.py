#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""What a perfect mechanism could reach on a JOB_SPECS mix: the testbed's
jobs in an idealized model, with schedulers that know what the real ones
cannot, so every measured table can be read against what is reachable.

The model: one link (the PS host's egress) in slots of SLOT seconds. Job
j broadcasts B_j = size x workers bytes per iteration (it needs the link
for B_j / rate), then computes C_j, ITERS times, from its start; its JCT
ends with its last broadcast (the ideal, as analyze.py has it: ITERS
broadcasts alone on the link plus ITERS - 1 computes). No TCP, no RTT, no
gradients: a broadcast gets exactly the share the scheduler gives it, and
a preemption costs nothing. The schedulers:

  fifo     the link shared by flow, as TCP does under FIFO (a job's share
           is its workers' over all broadcasting workers')
  equal    the link shared equally by the broadcasting jobs
  fsp      strict priority to the burst that would finish first under a
           fair share weighted by the square root of each job's flows
           (policy bursts' order), its size known from the job's history;
           first bursts taken as the largest size seen so far (0 before any
           burst ended), as tlsd guesses them
  fsp_equal  the same under an equal share (policy bursts' order before
           the weights)
  static   the best fixed priority order of the jobs (all orders tried)
  search   the best schedule a local search finds (--search N steps):
           a priority per burst, strict, improved by random changes with
           simulated annealing. An upper bound on the best schedule's mean
           JCT, not the optimum itself
  search_capped  the same search held to schedules where no job ends
           later than --cap R times its JCT under fifo (issue 13 asks
           1.02): what the best mean costs when no job may lose

With --trials N, the mix N times with its phases moved (each compute
time scaled by up to +-jitter, each start delayed by up to offset-ms):
fsp, fsp_equal and fsp_flows (the fair share weighted by each job's
flows, FIFO's share), each job's median and worst JCT over its JCT under fifo in the
same copy, and in how many copies some job ends above --cap (1.02) x
fifo.

And with --pairs a lower bound: the exact least sum of JCTs of every pair
of jobs alone (a walk over both jobs' positions, in whole slots: exact
when every duration is a whole number of slots), summed over the best
partition of the jobs into pairs. No schedule of the model does better.

Prints the mean JCT over the mean ideal per scheduler, and each job's JCT
over its ideal. Python 3 standard library only.
"""
import argparse
import itertools
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze  # noqa: E402

def parse_specs(specs, rate_mbit, slot):
    """SIZE:COMPUTE_MS:WORKERS:ITERS:START_S per job -> (B, C, n, start,
    workers), times in slots (rounded up: a slower job never flatters)."""
    jobs = []
    for size_b, compute_s, workers, iters, start in analyze.parse_specs(specs):
        b = size_b * workers * 8 / (rate_mbit * 1e6)
        jobs.append((max(1, math.ceil(b / slot - 1e-9)), math.ceil(compute_s / slot - 1e-9),
                     iters, math.ceil(start / slot - 1e-9), workers))
    return jobs


def ideal(job):
    b, c, n, _, _ = job
    return n * b + (n - 1) * c


def run(jobs, share):
    """Simulate: share(t, broadcasting, left, k) -> {job: fraction of the
    slot}. Returns each job's JCT in slots."""
    n_jobs = len(jobs)
    k = [0] * n_jobs       # broadcasts done
    phase = [0] * n_jobs   # 0 not started, 1 broadcast, 2 compute, 3 done
    left = [0.0] * n_jobs  # of the phase, in slots
    end = [0] * n_jobs
    t = 0
    while any(p != 3 for p in phase):
        for j, (b, _, _, start, _) in enumerate(jobs):
            if phase[j] == 0 and t >= start:
                phase[j], left[j] = 1, float(b)
        active = [j for j in range(n_jobs) if phase[j] == 1]
        # every slot, idle ones too: a scheduler with state (fsp) sees
        # each burst end even when no job is broadcasting after it
        got = share(t, active, left, k)
        for j, (b, c, n, start, _) in enumerate(jobs):
            if phase[j] == 1:
                left[j] -= got.get(j, 0.0)
                if left[j] <= 1e-9:
                    k[j] += 1
                    if k[j] == n:
                        phase[j], end[j] = 3, t + 1 - start
                    else:
                        phase[j], left[j] = 2, float(c)
            elif phase[j] == 2:
                left[j] -= 1
                if left[j] <= 1e-9:
                    phase[j], left[j] = 1, float(b)
        t += 1
        if t > 10 ** 7:
            raise RuntimeError("the model does not end (a job never served)")
    return end


def weighted(jobs, weights):
    def share(t, active, left, k):
        total = sum(weights[j] for j in active)
        return {j: weights[j] / total for j in active}
    return share


def strict(key):
    def share(t, active, left, k):
        if not active:
            return {}
        return {min(active, key=lambda j: key(j, left, k)): 1.0}
    return share


def root_flows(jobs):
    """Policy bursts' weights: the square root of each job's flows."""
    return [math.sqrt(w) for *_, w in jobs]


def fsp(jobs, weights=None):
    """The virtual finish under an equal share, or with weights under the
    share they give (root_flows: policy bursts' order; by flows: FIFO's)."""
    st = {"v": 0.0, "prev": (), "vf": {}, "most": 0.0}
    w = weights or [1] * len(jobs)

    def share(t, active, left, k):
        if st["prev"]:
            st["v"] += 1.0 / sum(w[j] for j in st["prev"])
        for j in active:
            if j not in st["prev"]:  # a burst starts
                est = jobs[j][0] if k[j] > 0 else st["most"]
                st["vf"][j] = st["v"] + est / w[j]
        for j in st["prev"]:
            if j not in active and k[j] > 0:  # a burst ended
                st["most"] = max(st["most"], float(jobs[j][0]))
        st["prev"] = tuple(active)
        if not active:
            return {}
        return {min(active, key=lambda j: (st["vf"][j], j)): 1.0}
    return share


def per_burst(prio):
    return strict(lambda j, left, k: prio[j][k[j]])


def search(jobs, steps, seed, cap=None):
    """Simulated annealing over one priority per burst, from smallest
    broadcast first. With cap = (limit per job, in slots), a job over its
    limit costs its excess 100 times over: the search looks for the best
    mean among the schedules that keep every job under its limit."""
    rng = random.Random(seed)
    prio = [[float(b)] * n for b, _, n, _, _ in jobs]

    def cost(end):
        if cap is None:
            return sum(end)
        return sum(end) + 100 * sum(max(0, e - c) for e, c in zip(end, cap))

    cur = cost(run(jobs, per_burst(prio)))
    best, best_prio = cur, [p[:] for p in prio]
    for step in range(steps):
        temp = 0.02 * cur * (1 - step / steps) + 1e-9
        j = rng.randrange(len(jobs))
        i = rng.randrange(jobs[j][2])
        old = prio[j][i]
        prio[j][i] = rng.uniform(0, 2 * max(b for b, *_ in jobs))
        val = cost(run(jobs, per_burst(prio)))
        if val <= cur or rng.random() < math.exp((cur - val) / temp):
            cur = val
            if val < best:
                best, best_prio = val, [p[:] for p in prio]
        else:
            prio[j][i] = old
    return run(jobs, per_burst(best_prio))


def pair_sum(a, b):
    """The least sum of JCTs of jobs a and b alone on the link, exactly,
    in whole slots: a walk back over both jobs' positions along their
    own critical paths (a slot of the link goes to one broadcasting job;
    the link may idle). Before the later start the earlier job runs
    alone, as far along as it likes up to its full speed."""
    if a[3] > b[3]:
        a, b = b, a
    bc = []
    for b_, c, n, _, _ in (a, b):
        bc.append([1] * b_ + ([0] * c + [1] * b_) * (n - 1))
    la, lb = len(bc[0]), len(bc[1])
    inf = float("inf")
    # v[i][j]: least sum of the remaining time of both from positions i, j
    nxt = [lb - j for j in range(lb + 1)]  # row i = la: a is done
    rows = {la: nxt}
    for i in range(la - 1, -1, -1):
        row = [0] * (lb + 1)
        row[lb] = la - i
        ba = bc[0][i]
        for j in range(lb - 1, -1, -1):
            bb = bc[1][j]
            if ba and bb:
                best = min(nxt[j], row[j + 1])
            elif ba:  # b computes: a is served, or waits
                best = min(nxt[j + 1], row[j + 1])
            elif bb:
                best = min(nxt[j + 1], nxt[j])
            else:
                best = nxt[j + 1]
            row[j] = 2 + best
        rows[i] = row
        nxt = row
    d = b[3] - a[3]
    if d >= la:
        return la + lb
    best = inf
    for x0 in range(d + 1):
        best = min(best, d + rows[x0][0])
    return best


def pair_bound(jobs):
    """A lower bound on the least sum of JCTs: any schedule of all the
    jobs, seen for two of them only, is a schedule of that pair, so the
    sum is at least each disjoint pair's least sum plus the others'
    ideals. The best partition into pairs (and one alone)."""
    n = len(jobs)
    extra = {}
    for i, j in itertools.combinations(range(n), 2):
        extra[(i, j)] = pair_sum(jobs[i], jobs[j]) - ideal(jobs[i]) - ideal(jobs[j])

    def best(rest):
        if len(rest) < 2:
            return 0
        first, others = rest[0], rest[1:]
        top = best(others)  # first alone
        for k, j in enumerate(others):
            top = max(top, extra[(first, j)] + best(others[:k] + others[k + 1:]))
        return top
    return sum(ideal(j) for j in jobs) + best(tuple(range(n)))


def evaluate(jobs, search_steps=0, seed=1, cap=None):
    """{scheduler: per-job JCTs in slots}; with cap (a ratio) also the
    search held to every job within cap x its JCT under fifo"""
    res = {
        "fifo": run(jobs, weighted(jobs, [w for *_, w in jobs])),
        "equal": run(jobs, weighted(jobs, [1] * len(jobs))),
        "fsp": run(jobs, fsp(jobs, root_flows(jobs))),
        "fsp_equal": run(jobs, fsp(jobs)),
    }
    best = None
    for order in itertools.permutations(range(len(jobs))):
        place = {j: p for p, j in enumerate(order)}
        end = run(jobs, strict(lambda j, left, k, place=place: place[j]))
        if best is None or sum(end) < sum(best):
            best = end
    res["static"] = best
    if search_steps:
        res["search"] = search(jobs, search_steps, seed)
    if search_steps and cap:
        res["search_capped"] = search(jobs, search_steps, seed, [cap * e for e in res["fifo"]])
    return res


def perturbed(jobs, rng, jitter, offset):
    """The jobs with each compute time scaled by a factor drawn from
    [1 - jitter, 1 + jitter] and each start delayed by 0 to `offset`
    slots: the testbed's jobs never run exactly to their settings (a
    worker's compute jitters, processes start apart)."""
    return [(b, max(1, round(c * rng.uniform(1 - jitter, 1 + jitter))), n,
             start + rng.randint(0, offset), w) for b, c, n, start, w in jobs]


def trials(jobs, count, seed, jitter, offset):
    """{scheduler: [per-job JCTs over fifo's, one list per trial]} and
    {scheduler: [mean JCT over fifo's]} over `count` perturbed copies of
    the jobs (fifo; fsp, policy bursts' order; fsp_equal under an equal
    share; fsp_flows under FIFO's share by flows)."""
    rng = random.Random(seed)
    per, means = {}, {}
    for _ in range(count):
        inst = perturbed(jobs, rng, jitter, offset)
        flows = [w for *_, w in inst]
        fifo = run(inst, weighted(inst, flows))
        for name, share in (("fifo", None), ("fsp", fsp(inst, root_flows(inst))),
                            ("fsp_equal", fsp(inst)), ("fsp_flows", fsp(inst, flows))):
            end = fifo if share is None else run(inst, share)
            per.setdefault(name, []).append([e / f for e, f in zip(end, fifo)])
            means.setdefault(name, []).append(sum(end) / sum(fifo))
    return per, means


def within_cap(end, fifo, cap):
    """No job of `end` later than cap x its JCT under fifo."""
    return all(e <= cap * f + 1e-9 for e, f in zip(end, fifo))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--specs", required=True, help="JOB_SPECS as testbed.sh takes them")
    ap.add_argument("--rate-mbit", type=float, default=200, help="the link's rate")
    ap.add_argument("--slot-ms", type=float, default=10, help="the model's time step")
    ap.add_argument("--search", type=int, default=0, metavar="N",
                    help="also a local search of N steps (20000: about a minute)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cap", type=float, metavar="R",
                    help="with --search, also a search held to no job above R x its "
                         "JCT under fifo (issue 13: 1.02)")
    ap.add_argument("--pairs", action="store_true",
                    help="also the pairs' lower bound (exact per pair: about 5 s a pair)")
    ap.add_argument("--trials", type=int, default=0, metavar="N",
                    help="also N copies of the mix, each with its compute times and "
                         "starts perturbed (--jitter, --offset-ms): how each job "
                         "fares against fifo when the phases move")
    ap.add_argument("--jitter", type=float, default=0.05, metavar="F",
                    help="with --trials, compute times scaled by 1 +- up to F")
    ap.add_argument("--offset-ms", type=float, default=150, metavar="MS",
                    help="with --trials, each start delayed by up to MS")
    args = ap.parse_args()
    try:
        jobs = parse_specs(args.specs, args.rate_mbit, args.slot_ms / 1e3)
    except (ValueError, KeyError) as e:
        ap.error(f"--specs: want SIZE:COMPUTE_MS:WORKERS:ITERS:START_S per job ({e})")
    if len(jobs) > 7:
        ap.error("at most 7 jobs (every static order is tried)")
    ideals = [ideal(j) for j in jobs]
    if args.cap is not None and (not (args.search or args.trials) or args.cap < 1):
        ap.error("--cap: wants --search or --trials, and a ratio of at least 1")
    res = evaluate(jobs, args.search, args.seed, args.cap)
    for name, end in res.items():
        ratio = sum(end) / sum(ideals)
        per = " ".join(f"{e / i:.2f}" for e, i in zip(end, ideals))
        vs = " ".join(f"{e / f:.2f}" for e, f in zip(end, res["fifo"]))
        print(f"model_jct_over_ideal_{name}: {ratio:.3f} ratio  (per job: {per}; vs fifo: {vs})")
    if "search_capped" in res:
        ok = within_cap(res["search_capped"], res["fifo"], args.cap)
        print(f"model_search_capped_within_cap: {'yes' if ok else 'no'}")
    if args.trials > 0:
        if not 0 <= args.jitter < 1 or args.offset_ms < 0:
            ap.error("--jitter: want 0 to below 1; --offset-ms: want 0 or more")
        cap = args.cap or 1.02
        per, means = trials(jobs, args.trials, args.seed, args.jitter,
                            round(args.offset_ms / args.slot_ms))
        for name in ("fsp", "fsp_equal", "fsp_flows"):
            cols = list(zip(*per[name]))
            med = " ".join(f"{sorted(c)[len(c) // 2]:.2f}" for c in cols)
            top = " ".join(f"{max(c):.2f}" for c in cols)
            over = sum(max(r) > cap for r in per[name])
            print(f"model_trials_{name}: mean vs fifo {sum(means[name]) / len(means[name]):.3f}; "
                  f"per job vs fifo, median {med}, worst {top}; "
                  f"trials with a job above {cap:g} x fifo: {over} of {args.trials}")
    if args.pairs:
        print(f"model_pair_bound_over_ideal: {pair_bound(jobs) / sum(ideals):.3f} ratio  "
              "(no schedule's mean JCT is below this)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
