// SPDX-License-Identifier: GPL-2.0-only
/*
 * The policy engine, exhaustively: every job count from 0 to 64, every band
 * count from 1 to 7, every step of two full cycles (and some huge steps).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "policy.h"
#include "tls_common.h"
#include "tls_rr.h"
#include "unit.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

#define MAX_N	  64
#define MAX_BANDS 7

static const enum tls_policy all[] = { TLS_POLICY_FIFO, TLS_POLICY_ONE, TLS_POLICY_RR,
				       TLS_POLICY_BURSTS };

static void test_parse_and_name(void **state)
{
	static const char *bad[] = { "", "FIFO", "round-robin", "one ", "two", "r", NULL };
	enum tls_policy p;
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		assert_int_equal(tls_policy_parse(tls_policy_name(all[i]), &p), 0);
		assert_int_equal(p, all[i]);
	}
	assert_int_equal(tls_policy_parse("rr", &p), 0);
	assert_int_equal(p, TLS_POLICY_RR);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(tls_policy_parse(bad[i], &p), -EINVAL);
}

/* Groups of consecutive positions: monotonic, every band used, sizes within 1. */
static void test_band_of_position(void **state)
{
	unsigned int n, nb, pos, count[MAX_BANDS];

	(void)state;
	for (n = 1; n <= MAX_N; n++) {
		for (nb = 1; nb <= MAX_BANDS; nb++) {
			unsigned int used = n < nb ? n : nb, lo = n, hi = 0, prev = 0, b;

			memset(count, 0, sizeof(count));
			for (pos = 0; pos < n; pos++) {
				b = tls_policy_band_of_position(pos, n, nb);
				assert_true(b < used);
				assert_true(b >= prev && b <= prev + 1);
				prev = b;
				count[b]++;
			}
			assert_int_equal(tls_policy_band_of_position(0, n, nb), 0);
			assert_int_equal(prev, used - 1);
			for (b = 0; b < used; b++) {
				lo = count[b] < lo ? count[b] : lo;
				hi = count[b] > hi ? count[b] : hi;
				if (b)
					assert_true(count[b] <= count[b - 1]);
			}
			assert_true(hi - lo <= 1);
			if (n <= nb)
				assert_int_equal(hi, 1); /* distinct bands */
		}
	}
}

static void assign(enum tls_policy p, unsigned int n, unsigned int nb, uint64_t step,
		   unsigned int *bands, unsigned int *pos)
{
	unsigned int i;

	tls_policy_assign(p, n, nb, step, bands);
	for (i = 0; i < n; i++)
		pos[i] = tls_policy_position(p, n, step, i);
}

/* Every job exactly one valid band; positions a permutation; fifo all in 0;
 * the band follows the position. */
static void test_every_job_one_band(void **state)
{
	unsigned int bands[MAX_N + 1], pos[MAX_N + 1], seen[MAX_N + 1];
	unsigned int n, nb, i;
	size_t k;
	uint64_t s;

	(void)state;
	for (k = 0; k < 3; k++) {
		for (n = 0; n <= MAX_N; n++) {
			for (nb = 1; nb <= MAX_BANDS; nb++) {
				for (s = 0; s < 2 * (uint64_t)n + 2; s++) {
					/* sentinel: every entry must be written */
					memset(bands, 0xff, sizeof(bands));
					assign(all[k], n, nb, s, bands, pos);
					memset(seen, 0, sizeof(seen));
					for (i = 0; i < n; i++) {
						assert_true(bands[i] < nb);
						assert_true(pos[i] < n);
						seen[pos[i]]++;
						if (all[k] == TLS_POLICY_FIFO)
							assert_int_equal(bands[i], 0);
						else
							assert_int_equal(
								bands[i],
								tls_policy_band_of_position(pos[i],
											    n, nb));
					}
					for (i = 0; i < n; i++)
						assert_int_equal(seen[i], 1);
					assert_int_equal(bands[n], 0xffffffffu); /* no overrun */
				}
			}
		}
	}
}

/* one: arrival order is priority order, whatever the step. */
static void test_one_is_static(void **state)
{
	unsigned int a[MAX_N], b[MAX_N], pos[MAX_N], n, nb, i;

	(void)state;
	for (n = 1; n <= MAX_N; n++) {
		for (nb = 1; nb <= MAX_BANDS; nb++) {
			assign(TLS_POLICY_ONE, n, nb, 0, a, pos);
			assign(TLS_POLICY_ONE, n, nb, 12345678901ULL, b, pos);
			assert_memory_equal(a, b, n * sizeof(a[0]));
			for (i = 0; i < n; i++) {
				assert_int_equal(pos[i], i);
				if (i)
					assert_true(a[i] >= a[i - 1]);
			}
			if (n <= nb)
				for (i = 0; i < n; i++)
					assert_int_equal(a[i], i);
		}
	}
}

/* roundrobin: each job leads exactly once per cycle of n steps (from any
 * starting step), the order moves up by one every step, and a cycle later
 * the assignment repeats. */
static void test_roundrobin_rotates(void **state)
{
	unsigned int bands[MAX_N], pos[MAX_N], next[MAX_N], led[MAX_N], n, i;
	uint64_t starts[] = { 0, 1, 7, UINT64_MAX - 130, (uint64_t)1 << 40 }, s;
	size_t k;

	(void)state;
	for (n = 1; n <= MAX_N; n++) {
		for (k = 0; k < sizeof(starts) / sizeof(starts[0]); k++) {
			memset(led, 0, sizeof(led));
			for (s = starts[k]; s < starts[k] + n; s++) {
				assign(TLS_POLICY_RR, n, MAX_BANDS, s, bands, pos);
				for (i = 0; i < n; i++)
					if (pos[i] == 0)
						led[i]++;
				assign(TLS_POLICY_RR, n, MAX_BANDS, s + 1, bands, next);
				for (i = 0; i < n; i++)
					assert_int_equal(next[i], (pos[i] + n - 1) % n);
				assign(TLS_POLICY_RR, n, MAX_BANDS, s + n, bands, next);
				assert_memory_equal(pos, next, n * sizeof(pos[0]));
			}
			for (i = 0; i < n; i++)
				assert_int_equal(led[i], 1);
		}
	}
}

/*
 * The classifier's roundrobin from the clock (tls_rr.h) against the timer's
 * steps: at any moment of the order, every job's band is the one
 * tls_policy_assign gives at lead + the steps elapsed. Moments before the
 * start, on each boundary, one ns either side of it, and far out.
 */
static void test_rr_clock_matches_steps(void **state)
{
	const uint64_t ival = 10000000, epoch = 5000000000ULL;
	unsigned int n, nb, lead, i, bands[MAX_N];
	uint64_t when[64], nw = 0, w, k;

	(void)state;
	when[nw++] = 0;
	when[nw++] = epoch - 1;
	for (k = 0; k < 20; k++) {
		when[nw++] = epoch + k * ival;
		when[nw++] = epoch + k * ival + ival - 1;
	}
	when[nw++] = epoch + 3600ULL * 1000000000ULL + 7;
	for (n = 1; n <= 24; n++)
		for (nb = 1; nb <= MAX_BANDS; nb++)
			for (lead = 0; lead < n; lead++) {
				struct tls_rr r = { .epoch_ns = epoch,
						    .interval_ns = ival,
						    .lead = lead,
						    .n = n,
						    .nbands = nb };
				__u64 turn;

				tls_rr_fill(&r);
				turn = r.turn;
				/* forwards, then backwards: the classifier's
				 * cache of the step, kept from moment to moment
				 * (stale in both directions), and none */
				for (w = 0; w < 2 * nw; w++) {
					uint64_t t = when[w < nw ? w : 2 * nw - 1 - w];
					uint64_t steps = t <= epoch ? 0 : (t - epoch) / ival;
					uint32_t l = tls_rr_lead(&r, t, &turn);

					tls_policy_assign(TLS_POLICY_RR, n, nb, lead + steps,
							  bands);
					for (i = 0; i < n; i++) {
						assert_int_equal(tls_rr_band_at(&r, i, l, 99),
								 bands[i]);
						assert_int_equal(tls_rr_band(&r, i, t, 99),
								 bands[i]);
					}
				}
			}
	/* the coarse clock is trusted only where a tick later is the same
	 * step: never within a tick of a step's end, nor before its start */
	{
		struct tls_rr r = { .epoch_ns = epoch,
				    .interval_ns = ival,
				    .lead = 2,
				    .n = 5,
				    .nbands = 3,
				    .tick_ns = 4000000 };
		__u64 turn, t;
		unsigned int sure = 0;

		tls_rr_fill(&r);
		turn = r.turn;
		for (t = epoch - ival; t < epoch + 5 * ival; t += 250000) {
			__u64 later = turn;
			uint32_t l = tls_rr_lead(&r, t, &turn);

			if (!tls_rr_sure(&r, turn, t))
				continue;
			sure++;
			assert_true((t - epoch) % ival + r.tick_ns < ival);
			later = turn;
			assert_int_equal(tls_rr_lead(&r, t + r.tick_ns - 1, &later), l);
			assert_int_equal(later, turn);
		}
		/* 6 of the 10 ms of each of the 5 steps, at 0.25 ms */
		assert_int_equal(sure, 5 * 24);
	}
	/* no order: the band written beside the index */
	{
		struct tls_rr none = { .interval_ns = ival };
		struct tls_rr r = { .interval_ns = ival, .n = 3, .nbands = 2 };

		tls_rr_fill(&none);
		tls_rr_fill(&r);

		assert_int_equal(tls_rr_band(&none, 0, epoch, 5), 5);
		assert_int_equal(tls_rr_band(&r, 3, epoch, 6), 6); /* index past n */
	}
}

/* tls_rr_first_of_band inverts the groups; tls_policy_rr_band_changes
 * equals counting the changes step by step. */
static void test_rr_band_changes(void **state)
{
	unsigned int n, nb, pos, b, bands[MAX_N], prev[MAX_N], i;
	uint64_t k, want;

	(void)state;
	for (n = 1; n <= 20; n++)
		for (nb = 1; nb <= MAX_BANDS; nb++) {
			for (b = 0; b < (n < nb ? n : nb); b++) {
				unsigned int f = tls_rr_first_of_band(b, n, nb);

				assert_int_equal(tls_policy_band_of_position(f, n, nb), b);
				if (f)
					assert_int_equal(tls_policy_band_of_position(f - 1, n, nb),
							 b - 1);
			}
			for (pos = 0; pos < n; pos++) {
				/* the job that arrived pos-th is at position pos
				 * at step 0 */
				i = pos;
				want = 0;
				tls_policy_assign(TLS_POLICY_RR, n, nb, 0, prev);
				for (k = 0; k <= 3 * n + 2; k++) {
					assert_int_equal(tls_policy_rr_band_changes(n, nb, pos, k),
							 want);
					tls_policy_assign(TLS_POLICY_RR, n, nb, k + 1, bands);
					want += bands[i] != prev[i];
					prev[i] = bands[i];
				}
			}
		}
	assert_int_equal(tls_policy_rr_band_changes(4, 2, 4, 10), 0); /* pos past n */
}

/* The jobs' order from the leader on, as arrival indexes. */
static void order_from_leader(const unsigned int *pos, unsigned int n, unsigned int *order)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		order[pos[i]] = i;
}

/* Is b (length n) a rotation of a (length n)? */
static int is_rotation(const unsigned int *a, const unsigned int *b, unsigned int n)
{
	unsigned int r, i;

	for (r = 0; r < (n ? n : 1); r++) {
		for (i = 0; i < n && a[(i + r) % n] == b[i]; i++)
			;
		if (i == n)
			return 1;
	}
	return 0;
}

/* A job leaving or arriving keeps the others' (cyclic) order. */
static void test_arrival_departure_keep_order(void **state)
{
	unsigned int pos[MAX_N + 1], bands[MAX_N + 1], before[MAX_N + 1], after[MAX_N + 1];
	unsigned int kept[MAX_N + 1], n, gone, i, j;
	size_t k;
	uint64_t s;

	(void)state;
	for (k = 1; k < 3; k++) {
		for (n = 1; n <= MAX_N; n++) {
			for (s = 0; s < n + 1; s++) {
				assign(all[k], n, MAX_BANDS, s, bands, pos);
				order_from_leader(pos, n, before);
				/* departure of each job in turn */
				for (gone = 0; gone < n; gone++) {
					/* the old order without `gone`, renumbered as the
					 * survivors are after it leaves */
					for (i = 0, j = 0; i < n; i++)
						if (before[i] != gone)
							kept[j++] = before[i] - (before[i] > gone);
					assign(all[k], n - 1, MAX_BANDS, s, bands, pos);
					order_from_leader(pos, n - 1, after);
					if (all[k] == TLS_POLICY_ONE)
						assert_memory_equal(kept, after,
								    (n - 1) * sizeof(kept[0]));
					else
						assert_true(is_rotation(kept, after, n - 1));
				}
				/* arrival: job n joins; the old jobs' order holds */
				assign(all[k], n + 1, MAX_BANDS, s, bands, pos);
				order_from_leader(pos, n + 1, after);
				for (i = 0, j = 0; i < n + 1; i++)
					if (after[i] != n)
						kept[j++] = after[i];
				if (all[k] == TLS_POLICY_ONE)
					assert_memory_equal(before, kept, n * sizeof(kept[0]));
				else
					assert_true(is_rotation(before, kept, n));
			}
		}
	}
}

/* roundrobin, a job leaving mid-turn: with the lead tlsd keeps
 * (tls_policy_lead_after_leave), the same job leads on, or, if the leader
 * left, the one after it; and every other job keeps its place in the
 * order, less one if it was behind the job that left: the order itself,
 * not only a rotation of it (taken mod n - 1 the step handed the lead to
 * another job and moved every place). Arrivals, appended, change neither. */
static void test_roundrobin_lead_survives_departure(void **state)
{
	unsigned int pos[MAX_N + 1], bands[MAX_N + 1], before[MAX_N + 1], after[MAX_N + 1];
	unsigned int n, gone, lead, i, j;
	uint64_t s;

	(void)state;
	assert_int_equal(tls_policy_lead_after_leave(5, 0, 0), 0);
	assert_int_equal(tls_policy_lead_after_leave(5, 1, 0), 0);
	/* the case: 5 jobs, the first leads (step 5), the fourth
	 * leaves: the first leads on, the second, third and fifth follow */
	assert_int_equal(tls_policy_lead_after_leave(5, 5, 3), 0);
	assert_int_equal(tls_policy_lead_after_leave(9, 5, 3), 3);  /* the fifth leads on */
	assert_int_equal(tls_policy_lead_after_leave(8, 5, 3), 3);  /* the fourth led: the fifth */
	assert_int_equal(tls_policy_lead_after_leave(4, 5, 4), 0);  /* the last led: the first */
	assert_int_equal(tls_policy_lead_after_leave(12, 5, 0), 1); /* the third leads on */
	for (n = 2; n <= MAX_N; n++) {
		for (s = 0; s < 2 * (uint64_t)n; s++) {
			assign(TLS_POLICY_RR, n, MAX_BANDS, s, bands, pos);
			order_from_leader(pos, n, before);
			for (gone = 0; gone < n; gone++) {
				lead = tls_policy_lead_after_leave(s, n, gone);
				assert_true(lead < n - 1);
				assign(TLS_POLICY_RR, n - 1, MAX_BANDS, lead, bands, pos);
				order_from_leader(pos, n - 1, after);
				/* the old order from the leader, without `gone`,
				 * renumbered as the jobs are once it left */
				for (i = 0, j = 0; i < n; i++)
					if (before[i] != gone)
						assert_int_equal(after[j++],
								 before[i] - (before[i] > gone));
				/* an arrival then: the same leader, the newcomer
				 * after the last one to arrive */
				assign(TLS_POLICY_RR, n, MAX_BANDS, lead, bands, pos);
				assert_int_equal(pos[lead], 0);
				assert_int_equal(pos[n - 1], n - 1 - lead);
			}
		}
	}
}

/* The top band's headroom: only under `one`, with jobs to pipeline. */
static void test_lead_headroom(void **state)
{
	static const struct {
		enum tls_policy p;
		unsigned int njobs, nbands;
		uint64_t ppm, want;
	} t[] = {
		{ TLS_POLICY_ONE, 4, 4, 50000, 50000 },
		{ TLS_POLICY_ONE, 2, 7, 30000, 30000 },
		{ TLS_POLICY_ONE, 64, 2, 30000, 30000 },
		/* no static pipeline, or nothing to pipeline: none */
		{ TLS_POLICY_RR, 4, 4, 50000, 0 },
		{ TLS_POLICY_FIFO, 4, 4, 50000, 0 },
		{ TLS_POLICY_ONE, 1, 4, 50000, 0 },
		{ TLS_POLICY_ONE, 0, 4, 50000, 0 },
		{ TLS_POLICY_ONE, 4, 1, 50000, 0 }, /* one band: all share it */
		{ TLS_POLICY_ONE, 4, 4, 0, 0 },	    /* switched off */
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		uint64_t got = tls_policy_lead_headroom(t[i].p, t[i].njobs, t[i].nbands, t[i].ppm);

		if (got != t[i].want)
			fail_msg("case %zu: %s, %u jobs, %u bands, %llu ppm: got %llu, want %llu",
				 i, tls_policy_name(t[i].p), t[i].njobs, t[i].nbands,
				 (unsigned long long)t[i].ppm, (unsigned long long)got,
				 (unsigned long long)t[i].want);
	}
}

/* Policy bursts's seed: by hand, then against a plain reference (every
 * active job, a stable selection by rank, cut at max) on random inputs. */
static void test_burst_seed(void **state)
{
	unsigned int rank[MAX_N], out[MAX_N], want[MAX_N], n, max, i, k, cnt, r, seed = 7;
	bool active[MAX_N], taken[MAX_N];

	(void)state;
	/* 5 jobs: the 4th idle; ranks 3 1 3 0 1: jobs 3 (idle), 1, 4, 0, 2 */
	{
		unsigned int rk[5] = { 3, 1, 3, 0, 1 }, o[5];
		bool ac[5] = { true, true, true, false, true };

		assert_int_equal(tls_policy_burst_seed(5, rk, ac, 8, o), 4);
		assert_int_equal(o[0], 1);
		assert_int_equal(o[1], 4);
		assert_int_equal(o[2], 0);
		assert_int_equal(o[3], 2);
		assert_int_equal(tls_policy_burst_seed(5, rk, ac, 2, o), 2); /* the first two */
		assert_int_equal(o[0], 1);
		assert_int_equal(o[1], 4);
		assert_int_equal(tls_policy_burst_seed(5, rk, ac, 0, o), 0);
	}
	for (int t = 0; t < 20000; t++) {
		seed = seed * 1103515245u + 12345u;
		n = (seed >> 8) % (MAX_N + 1);
		seed = seed * 1103515245u + 12345u;
		max = (seed >> 8) % 12;
		for (i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			rank[i] = (seed >> 8) % 6;
			active[i] = (seed >> 20) % 3 != 0;
			taken[i] = false;
		}
		/* reference: repeatedly the first active job of least rank not
		 * taken yet */
		for (cnt = 0; cnt < max; cnt++) {
			int best = -1;

			for (i = 0; i < n; i++)
				if (active[i] && !taken[i] && (best < 0 || rank[i] < rank[best]))
					best = (int)i;
			if (best < 0)
				break;
			taken[best] = true;
			want[cnt] = (unsigned int)best;
		}
		r = tls_policy_burst_seed(n, rank, active, max, out);
		if (r != cnt)
			fail_msg("n %u, max %u: %u seeded, want %u", n, max, r, cnt);
		for (k = 0; k < cnt; k++)
			if (out[k] != want[k])
				fail_msg("n %u, max %u: place %u is job %u, want %u", n, max, k,
					 out[k], want[k]);
	}
}

/* The fair share's weight: the square root of the flows, in 1/16ths,
 * rounded; 1 for none or one; capped at 16 (256 flows and more). */
static void test_burst_weight(void **state)
{
	(void)state;
	assert_int_equal(tls_policy_burst_weight(0), TLS_BURST_W1);
	assert_int_equal(tls_policy_burst_weight(1), TLS_BURST_W1);
	assert_int_equal(tls_policy_burst_weight(2), 23); /* 16 x 1.414 = 22.6 */
	assert_int_equal(tls_policy_burst_weight(4), 2 * TLS_BURST_W1);
	assert_int_equal(tls_policy_burst_weight(8), 45); /* 16 x 2.828 = 45.3 */
	assert_int_equal(tls_policy_burst_weight(16), 4 * TLS_BURST_W1);
	assert_int_equal(tls_policy_burst_weight(255), 255); /* 16 x 15.97 = 255.499 */
	assert_int_equal(tls_policy_burst_weight(256), TLS_BURST_W_MAX);
	assert_int_equal(tls_policy_burst_weight(100000), TLS_BURST_W_MAX);
	assert_int_equal(tls_policy_burst_weight(~0u), TLS_BURST_W_MAX);
	/* never down as flows grow */
	for (unsigned int f = 1; f < 400; f++)
		assert_true(tls_policy_burst_weight(f + 1) >= tls_policy_burst_weight(f));
}

/* The seeded order's bands: kept where the order allows (rising, the
 * leader alone in its band, entries past the last band sharing it), else
 * by place with the leader's old band as the floor. */
static void test_burst_seed_bands(void **state)
{
	static const struct {
		unsigned int n, nbands, cur[4];
		bool keep;
		unsigned int out[4], floor;
	} c[] = {
		{ 2, 2, { 0, 1 }, true, { 0, 1 }, 0 },	      /* roundrobin's two bands */
		{ 2, 4, { 1, 3 }, true, { 1, 3 }, 0 },	      /* rising with gaps: kept */
		{ 3, 2, { 0, 1, 1 }, true, { 0, 1, 1 }, 0 },  /* past the last band */
		{ 2, 2, { 1, 1 }, false, { 0, 1 }, 1 },	      /* leader not alone: raised */
		{ 2, 3, { 1, 0 }, false, { 0, 1 }, 1 },	      /* falling */
		{ 3, 3, { 0, 0, 0 }, false, { 0, 1, 2 }, 0 }, /* fifo: one band */
		{ 2, 2, { 0, 2 }, false, { 0, 1 }, 0 },	      /* out of range */
		{ 1, 3, { 2 }, true, { 2 }, 0 },	      /* one job keeps its band */
		{ 4, 3, { 0, 1, 2, 2 }, true, { 0, 1, 2, 2 }, 0 },
		{ 4, 3, { 1, 2, 2, 2 }, true, { 1, 2, 2, 2 }, 0 }, /* past the last */
		{ 3, 3, { 0, 2, 1 }, false, { 0, 1, 2 }, 0 },	   /* falling after */
	};
	unsigned int out[4], floor;

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		bool keep = tls_policy_burst_seed_bands(c[i].n, c[i].cur, c[i].nbands, out, &floor);

		if (keep != c[i].keep || floor != c[i].floor)
			fail_msg("case %zu: kept %d floor %u, want %d %u", i, keep, floor,
				 c[i].keep, c[i].floor);
		for (unsigned int k = 0; k < c[i].n; k++)
			if (out[k] != c[i].out[k])
				fail_msg("case %zu: place %u in band %u, want %u", i, k, out[k],
					 c[i].out[k]);
	}
	assert_false(tls_policy_burst_seed_bands(0, NULL, 2, out, &floor));
	assert_int_equal(floor, 0);
	/* in place, as tlsd may call it: the floor is the leader's band
	 * before it is raised */
	{
		unsigned int b[2] = { 1, 1 };

		assert_false(tls_policy_burst_seed_bands(2, b, 2, b, &floor));
		assert_int_equal(floor, 1);
		assert_int_equal(b[0], 0);
		assert_int_equal(b[1], 1);
	}
}

int run_policy_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_and_name),
		cmocka_unit_test(test_band_of_position),
		cmocka_unit_test(test_every_job_one_band),
		cmocka_unit_test(test_one_is_static),
		cmocka_unit_test(test_roundrobin_rotates),
		cmocka_unit_test(test_rr_clock_matches_steps),
		cmocka_unit_test(test_rr_band_changes),
		cmocka_unit_test(test_arrival_departure_keep_order),
		cmocka_unit_test(test_roundrobin_lead_survives_departure),
		cmocka_unit_test(test_lead_headroom),
		cmocka_unit_test(test_burst_seed),
		cmocka_unit_test(test_burst_seed_bands),
		cmocka_unit_test(test_burst_weight),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
