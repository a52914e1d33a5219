#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of tests/bench/analyze.py's least mean JCT (sum_jct_bound).

The bound must never exceed what a real schedule achieves: checked against
an event-driven simulation of jobs that alternate a broadcast on one shared
link with their compute, under random strict priorities and under fair
sharing, on random instances. It must also be reached where the optimum is
known (one link, no compute: shortest remaining work first).
"""
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze  # noqa: E402


def simulate(specs, share):
    """Sum of JCTs of jobs (start, iterations, link s per broadcast, compute s)
    on a link of rate 1. share(active) -> {job: rate}, rates summing to <= 1.
    A job broadcasts, computes, broadcasts, ...; it ends with its last
    broadcast (as the testbed's JCT does: the last model held)."""
    n = len(specs)
    left = [s[1] for s in specs]           # broadcasts still to send
    comm = [0.0] * n                       # link time left of the current one
    busy_until = [s[0] for s in specs]     # released / computing until
    end = [None] * n
    t = 0.0
    while None in end:
        active = [j for j in range(n) if end[j] is None and busy_until[j] <= t + 1e-12]
        for j in active:
            if comm[j] <= 0:
                comm[j] = specs[j][2]
        rates = share(active) if active else {}
        nxt = [busy_until[j] for j in range(n) if end[j] is None and busy_until[j] > t + 1e-12]
        nxt += [t + comm[j] / r for j, r in rates.items() if r > 0]
        dt = min(nxt) - t
        t += dt
        for j, r in rates.items():
            comm[j] -= r * dt
            if comm[j] <= 1e-9:
                comm[j] = 0.0
                left[j] -= 1
                if left[j] == 0:
                    end[j] = t
                else:
                    busy_until[j] = t + specs[j][3]
    return sum(end[j] - specs[j][0] for j in range(n))


def bound_of(specs):
    return analyze.sum_jct_bound([(s, it * c + (it - 1) * p, it * c) for s, it, c, p in specs])


class TestJctBound(unittest.TestCase):
    def test_one_job_is_its_critical_path(self):
        self.assertAlmostEqual(bound_of([(0, 5, 0.2, 1.0)]), 5 * 0.2 + 4 * 1.0)

    def test_no_compute_is_shortest_work_first(self):
        # three jobs of 1, 2 and 3 s of link time from 0: 1 + 3 + 6
        self.assertAlmostEqual(bound_of([(0, 1, 1, 0), (0, 1, 2, 0), (0, 1, 3, 0)]), 10.0)
        prio = lambda active: {min(active, key=lambda j: j): 1.0}  # noqa: E731
        self.assertAlmostEqual(simulate([(0, 1, 1, 0), (0, 1, 2, 0), (0, 1, 3, 0)], prio), 10.0)

    def test_release_dates(self):
        # 2 s of link from 0, 1 s from 1: whichever goes last ends at 3
        self.assertAlmostEqual(bound_of([(0, 1, 2, 0), (1, 1, 1, 0)]), 4.0)

    def test_light_jobs_reach_their_critical_paths(self):
        # the link is idle most of the time: nothing but the jobs' own paths
        specs = [(0, 4, 0.1, 2.0), (0.5, 3, 0.1, 3.0)]
        self.assertAlmostEqual(bound_of(specs), sum(it * c + (it - 1) * p for _, it, c, p in specs))

    def test_never_above_a_real_schedule(self):
        rng = random.Random(13)
        worst = 0.0
        for _ in range(300):
            n = rng.randint(1, 5)
            specs = [(rng.choice([0, 0, rng.uniform(0, 3)]), rng.randint(1, 6),
                      rng.uniform(0.05, 1.0), rng.uniform(0, 1.5)) for _ in range(n)]
            b = bound_of(specs)
            order = list(range(n))
            rng.shuffle(order)
            strict = lambda active: {min(active, key=order.index): 1.0}  # noqa: E731
            fair = lambda active: {j: 1.0 / len(active) for j in active}  # noqa: E731
            for share in (strict, fair):
                got = simulate(specs, share)
                self.assertLessEqual(b, got + 1e-6, f"bound {b} above a schedule's {got}: {specs}")
                worst = max(worst, b / got)
        # and not trivially low: some schedule comes close to it
        self.assertGreater(worst, 0.99)

    def test_too_many_jobs(self):
        self.assertIsNone(analyze.sum_jct_bound([(0, 1, 1)] * (analyze.MAX_BOUND_JOBS + 1)))


class TestBuildsSideBySide(unittest.TestCase):
    """Several OUTDIRs, LABEL=OUTDIR another build's: its policies are
    named POLICY_LABEL and sorted after the policy's own runs."""

    def test_outdir_labels(self):
        self.assertEqual(analyze.parse_outdir("runs/a"), ("", "runs/a"))
        self.assertEqual(analyze.parse_outdir("old=runs/b"), ("old", "runs/b"))
        self.assertEqual(analyze.parse_outdir("cdf86db=x=y"), ("cdf86db", "x=y"))
        for bad in ("=runs/b", "o_ld=runs/b", "ö=x", "a b=x"):
            with self.assertRaises(ValueError, msg=bad):
                analyze.parse_outdir(bad)

    def test_policy_order_and_names(self):
        got = sorted(["bursts_old", "fifo", "bursts", "roundrobin", "one_old", "bursts_a"],
                     key=analyze.policy_key)
        self.assertEqual(got, ["fifo", "one_old", "roundrobin", "bursts", "bursts_a",
                               "bursts_old"])
        self.assertEqual(analyze.label_of("bursts"), "tlsd bursts")
        self.assertEqual(analyze.label_of("bursts_old"), "tlsd bursts (old)")
        self.assertEqual(analyze.short_of("roundrobin_old"), "rr_old")


if __name__ == "__main__":
    unittest.main()
