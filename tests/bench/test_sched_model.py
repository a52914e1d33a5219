#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of tests/bench/sched_model.py, the idealized model of the
testbed's jobs: schedules worked out by hand, and on random instances
every scheduler's JCTs against each job's ideal and against analyze.py's
least mean JCT the link allows (two pieces of code written apart, which
must agree that no schedule beats the bound).
"""
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze  # noqa: E402
import sched_model as sm  # noqa: E402


class TestModel(unittest.TestCase):
    def test_alone_is_ideal(self):
        job = (3, 5, 4, 2, 4)  # B, C, iterations, start, workers
        for name, end in sm.evaluate([job], search_steps=50).items():
            self.assertEqual(end, [sm.ideal(job)], name)

    def test_two_broadcasts_by_hand(self):
        # Two jobs of one broadcast of 2 slots each, together. Shared
        # (fifo, equal): both end at 4. One first: 2 and 4.
        jobs = [(2, 0, 1, 0, 1), (2, 0, 1, 0, 1)]
        res = sm.evaluate(jobs)
        self.assertEqual(res["fifo"], [4, 4])
        self.assertEqual(res["equal"], [4, 4])
        self.assertEqual(sorted(res["static"]), [2, 4])
        self.assertEqual(sorted(res["fsp"]), [2, 4])

    def test_fifo_shares_by_flow(self):
        # 3 workers against 1: the first gets 3/4 of the link. 6 slots of
        # link each: the first ends at 8 (6 at 3/4), the second at 12.
        jobs = [(6, 0, 1, 0, 3), (6, 0, 1, 0, 1)]
        self.assertEqual(sm.evaluate(jobs)["fifo"], [8, 12])

    def test_fsp_knows_sizes_after_the_first(self):
        # A big job (8 slots a broadcast) and a small one (1), both every
        # 2 slots of compute, started together. After the first bursts
        # the small one's broadcasts pass the big one's.
        # The small one (ideal 16) waits for the big one's first burst
        # (8 slots: no sizes known yet, the order is the jobs'), then goes
        # first at every burst but one (slot 20: the big one has a slot
        # left, which finishes first under the equal share): 16 + 8 + 1.
        jobs = [(8, 2, 3, 0, 1), (1, 2, 6, 0, 1)]
        self.assertEqual(sm.evaluate(jobs)["fsp"], [32, 25])

    def test_random_instances_against_the_bound(self):
        rng = random.Random(7)
        for _ in range(40):
            jobs = [(rng.randint(1, 6), rng.randint(0, 8), rng.randint(1, 4), rng.choice([0, 0, 3, 7]),
                     rng.randint(1, 4)) for _ in range(rng.randint(1, 4))]
            bound = analyze.sum_jct_bound([(s, sm.ideal((b, c, n, s, w)), n * b)
                                           for b, c, n, s, w in jobs])
            res = sm.evaluate(jobs, search_steps=30, seed=rng.randint(0, 99))
            for name, end in res.items():
                for e, j in zip(end, jobs):
                    self.assertGreaterEqual(e, sm.ideal(j), (name, jobs))
                self.assertGreaterEqual(sum(end) + 1e-9, bound, (name, jobs))
            # the best static order is at least as good as every static
            # order, e.g. job index order
            place = {j: j for j in range(len(jobs))}
            by_index = sm.run(jobs, sm.strict(lambda j, left, k: place[j]))
            self.assertLessEqual(sum(res["static"]), sum(by_index))

    def test_search_never_worse_than_its_start(self):
        jobs = sm.parse_specs("500k:400:4:6:0 3000k:1200:8:2:0 1000k:600:6:3:0", 200, 0.01)
        start = sm.run(jobs, sm.strict(lambda j, left, k: jobs[j][0]))
        found = sm.search(jobs, 200, 3)
        self.assertLessEqual(sum(found), sum(start))

    def test_capped_search_keeps_every_job(self):
        # Here the best mean the search finds makes jobs 2 and 3 end
        # later than under fifo; held to 1.0 x fifo, no job does.
        jobs = [(3, 0, 2, 0, 1), (5, 5, 3, 0, 1), (3, 2, 2, 0, 3)]
        res = sm.evaluate(jobs, search_steps=300, seed=1, cap=1.0)
        self.assertTrue(any(s > f for s, f in zip(res["search"], res["fifo"])))
        self.assertTrue(sm.within_cap(res["search_capped"], res["fifo"], 1.0))
        for c, f in zip(res["search_capped"], res["fifo"]):
            self.assertLessEqual(c, f)
        self.assertLess(sum(res["search_capped"]), sum(res["fifo"]))

    def test_fsp_weighted_by_flows(self):
        # A burst of 1 slot first (the size first bursts are then guessed
        # at), then two of 6 slots together, one job of 1 flow, one of 3.
        # Equal share: a tie, the one listed first goes first (6, 12). By
        # flows the 3-flow job's virtual finish is a third of the other's.
        jobs = [(1, 0, 1, 0, 1), (6, 0, 1, 2, 1), (6, 0, 1, 2, 3)]
        self.assertEqual(sm.run(jobs, sm.fsp(jobs)), [1, 6, 12])
        self.assertEqual(sm.run(jobs, sm.fsp(jobs, [1, 1, 3])), [1, 12, 6])

    def test_fsp_weighted_by_root_flows(self):
        # Policy bursts' order: the same two bursts of 6 slots, one job of
        # 1 flow (weight 1), one of 4 (weight 2): the 4-flow job's virtual
        # finish is half the other's, so it goes first; one of 2 flows
        # (weight 1.41) too. With equal flows it is the equal share's.
        jobs = [(1, 0, 1, 0, 1), (6, 0, 1, 2, 1), (6, 0, 1, 2, 4)]
        self.assertEqual(sm.root_flows(jobs), [1, 1, 2])
        self.assertEqual(sm.evaluate(jobs)["fsp"], [1, 12, 6])
        self.assertEqual(sm.evaluate(jobs)["fsp_equal"], [1, 6, 12])
        two = [(1, 0, 1, 0, 1), (6, 0, 1, 2, 1), (6, 0, 1, 2, 2)]
        self.assertEqual(sm.evaluate(two)["fsp"], [1, 12, 6])
        same = [(1, 0, 1, 0, 3), (6, 0, 1, 2, 3), (6, 0, 1, 2, 3)]
        self.assertEqual(sm.evaluate(same)["fsp"], sm.evaluate(same)["fsp_equal"])

    def test_trials_unperturbed_are_the_mix(self):
        # No jitter, no offset: every trial is the mix itself, as
        # evaluate() has it; with equal flows fsp_flows is fsp.
        jobs = sm.parse_specs("500k:400:4:6:0 3000k:1200:8:2:0 1000k:600:6:3:1", 200, 0.01)
        res = sm.evaluate(jobs)
        per, means = sm.trials(jobs, 3, 5, 0.0, 0)
        want = [e / f for e, f in zip(res["fsp"], res["fifo"])]
        for row in per["fsp"]:
            self.assertEqual(row, want)
        self.assertEqual(per["fifo"], [[1.0] * 3] * 3)
        self.assertAlmostEqual(means["fsp"][0], sum(res["fsp"]) / sum(res["fifo"]))
        same = [(b, c, n, s, 4) for b, c, n, s, _ in jobs]
        per, _ = sm.trials(same, 2, 5, 0.0, 0)
        self.assertEqual(per["fsp"], per["fsp_flows"])
        self.assertEqual(per["fsp"], per["fsp_equal"])

    def test_perturbed_within_bounds(self):
        rng = random.Random(3)
        jobs = [(5, 100, 4, 7, 2), (9, 40, 2, 0, 8)]
        moved = set()
        for _ in range(200):
            for (b, c, n, s, w), (b2, c2, n2, s2, w2) in zip(jobs, sm.perturbed(jobs, rng, 0.05, 15)):
                self.assertEqual((b, n, w), (b2, n2, w2))
                self.assertTrue(round(c * 0.95) <= c2 <= round(c * 1.05), c2)
                self.assertTrue(s <= s2 <= s + 15, s2)
                moved.add((c2, s2))
        self.assertGreater(len(moved), 100)  # it does move them

    def test_pairs_by_hand(self):
        # Two broadcasts of 2 slots together: one waits, 2 + 4.
        self.assertEqual(sm.pair_sum((2, 0, 1, 0, 1), (2, 0, 1, 0, 1)), 6)
        # Broadcast 1, compute 1, twice each: they interleave (ideal 3 each,
        # one starts a slot late) with no loss.
        self.assertEqual(sm.pair_sum((1, 1, 2, 0, 1), (1, 1, 2, 0, 1)), 7)
        self.assertEqual(sm.pair_sum((1, 1, 2, 0, 1), (1, 1, 2, 1, 1)), 6)
        # The later job starts when the first is done: each its ideal.
        self.assertEqual(sm.pair_sum((2, 0, 1, 0, 1), (3, 0, 1, 5, 1)), 5)

    def test_pair_bound_below_every_schedule(self):
        rng = random.Random(11)
        for _ in range(30):
            jobs = [(rng.randint(1, 4), rng.randint(0, 5), rng.randint(1, 3), rng.choice([0, 0, 2, 5]),
                     rng.randint(1, 3)) for _ in range(rng.randint(2, 4))]
            bound = sm.pair_bound(jobs)
            self.assertGreaterEqual(bound, sum(sm.ideal(j) for j in jobs))
            for name, end in sm.evaluate(jobs, search_steps=30).items():
                self.assertLessEqual(bound, sum(end), (name, jobs))
            # for two jobs the bound is the optimum: the search reaches it
            # or stays above
            if len(jobs) == 2:
                self.assertEqual(bound, sm.pair_sum(*jobs))

    def test_specs(self):
        jobs = sm.parse_specs("500k:400:4:30:0 3000k:1200:8:8:2", 200, 0.01)
        self.assertEqual(jobs, [(8, 40, 30, 0, 4), (96, 120, 8, 200, 8)])
        with self.assertRaises(ValueError):
            sm.parse_specs("500x:400:4:30:0", 200, 0.01)


if __name__ == "__main__":
    unittest.main()
