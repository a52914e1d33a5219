// SPDX-License-Identifier: GPL-2.0-only
/*
 * tls_flowlet_step(): the per-packet flowlet decision shared with the BPF
 * classifier. Table-driven single steps, then packet sequences, then a
 * property test over a long pseudo-random packet stream.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <linux/types.h>

#include "tls_common.h"
#include "tls_flowlet.h"
#include "unit.h"

#define NONE TLS_BAND_NONE
#define T0   1000000000ull /* an arbitrary "now" well after boot */

static const char *verdict_name(enum tls_flowlet_verdict v)
{
	switch (v) {
	case TLS_FLOWLET_SAME:
		return "SAME";
	case TLS_FLOWLET_DEMOTE:
		return "DEMOTE";
	case TLS_FLOWLET_PROMOTE:
		return "PROMOTE";
	case TLS_FLOWLET_HOLD:
		return "HOLD";
	}
	return "?";
}

struct flow {
	__u32 band;
	__u64 pending_ns;
	__u64 last_ns;
};

/* One packet of flow f at `now`: the classifier's order, step then last_ns. */
static enum tls_flowlet_verdict pkt(struct flow *f, __u32 target, __u64 now, __u64 gap_ns,
				    __u64 hold_ns)
{
	enum tls_flowlet_verdict v;

	v = tls_flowlet_step(&f->band, &f->pending_ns, f->last_ns, target, now, gap_ns, hold_ns);
	f->last_ns = now;
	return v;
}

#define expect_pkt(f, target, now, gap, hold, exp_v, exp_band, exp_pending)                        \
	do {                                                                                       \
		enum tls_flowlet_verdict _v = pkt((f), (target), (now), (gap), (hold));            \
		if (_v != (exp_v) || (f)->band != (__u32)(exp_band) ||                             \
		    (f)->pending_ns != (__u64)(exp_pending))                                       \
			fail_msg("packet at now=%llu target=%u: got %s band=%u pending=%llu, "     \
				 "want %s band=%u pending=%llu",                                   \
				 (unsigned long long)(now), (unsigned)(target), verdict_name(_v),  \
				 (unsigned)(f)->band, (unsigned long long)(f)->pending_ns,         \
				 verdict_name(exp_v), (unsigned)(exp_band),                        \
				 (unsigned long long)(exp_pending));                               \
	} while (0)

/* Busy packets every 10 ns over [from, to), each expected to be held. */
#define expect_held(f, target, from, to, gap, hold, exp_band, exp_pending)                         \
	do {                                                                                       \
		__u64 _t;                                                                          \
		for (_t = (from); _t < (to); _t += 10)                                             \
			expect_pkt(f, target, _t, gap, hold, TLS_FLOWLET_HOLD, exp_band,           \
				   exp_pending);                                                   \
	} while (0)

/* ---- single steps, table-driven ---------------------------------------- */

struct step_case {
	const char *name;
	/* input */
	__u32 band;
	__u64 pending_ns;
	__u64 last_ns;
	__u32 target;
	__u64 now;
	__u64 gap_ns;
	__u64 hold_ns;
	/* expected */
	enum tls_flowlet_verdict verdict;
	__u32 exp_band;
	__u64 exp_pending;
};

static const struct step_case step_cases[] = {
	/* same band: nothing moves, a pending promotion is dropped */
	{ "same band, nothing pending", 2, 0, T0 - 1, 2, T0, 100, 1000, TLS_FLOWLET_SAME, 2, 0 },
	{ "same band clears pending", 2, T0 - 50, T0 - 1, 2, T0, 100, 1000, TLS_FLOWLET_SAME, 2,
	  0 },
	{ "same band 0, idle", 0, 0, T0 - 5000, 0, T0, 100, 1000, TLS_FLOWLET_SAME, 0, 0 },
	{ "same band NONE", NONE, 0, T0 - 1, NONE, T0, 100, 1000, TLS_FLOWLET_SAME, NONE, 0 },
	{ "same band, gap 0", 3, 7, T0, 3, T0, 0, 0, TLS_FLOWLET_SAME, 3, 0 },

	/* demotion: immediate, busy or not, clears pending */
	{ "demote 0->1 busy", 0, 0, T0 - 1, 1, T0, 100, 1000, TLS_FLOWLET_DEMOTE, 1, 0 },
	{ "demote 0->1 same ns as last", 0, 0, T0, 1, T0, 100, 1000, TLS_FLOWLET_DEMOTE, 1, 0 },
	{ "demote 2->6 clears pending", 2, T0 - 10, T0 - 1, 6, T0, 100, 1000, TLS_FLOWLET_DEMOTE, 6,
	  0 },
	{ "demote 3->NONE", 3, 0, T0 - 1, NONE, T0, 100, 1000, TLS_FLOWLET_DEMOTE, NONE, 0 },
	{ "demote 0->NONE, gap 0", 0, 0, T0, NONE, T0, 0, 0, TLS_FLOWLET_DEMOTE, NONE, 0 },
	{ "demote 6->NONE idle", 6, 0, T0 - 100000, NONE, T0, 100, 1000, TLS_FLOWLET_DEMOTE, NONE,
	  0 },

	/* promotion with flowlets off: immediate */
	{ "promote NONE->0 gap 0 busy", NONE, 0, T0, 0, T0, 0, 1000, TLS_FLOWLET_PROMOTE, 0, 0 },
	{ "promote 3->1 gap 0 clears pending", 3, T0 - 5, T0 - 1, 1, T0, 0, 1000,
	  TLS_FLOWLET_PROMOTE, 1, 0 },
	{ "promote 1->0 gap 0 hold 0", 1, 0, T0 - 1, 0, T0, 0, 0, TLS_FLOWLET_PROMOTE, 0, 0 },
	{ "promote gap 0, last packet after now", 4, 0, T0 + 10, 2, T0, 0, 1000,
	  TLS_FLOWLET_PROMOTE, 2, 0 },

	/* promotion after an idle gap */
	{ "promote idle == gap", 2, 0, T0 - 100, 1, T0, 100, 1000, TLS_FLOWLET_PROMOTE, 1, 0 },
	{ "promote idle > gap", 2, 0, T0 - 5000, 0, T0, 100, 1000, TLS_FLOWLET_PROMOTE, 0, 0 },
	{ "promote NONE->6 idle", NONE, 0, T0 - 100, 6, T0, 100, 1000, TLS_FLOWLET_PROMOTE, 6, 0 },
	{ "promote idle while pending clears it", 2, T0 - 300, T0 - 200, 1, T0, 100, 1000,
	  TLS_FLOWLET_PROMOTE, 1, 0 },

	/* promotion while busy: hold */
	{ "hold idle == gap-1", 2, 0, T0 - 99, 1, T0, 100, 1000, TLS_FLOWLET_HOLD, 2, T0 },
	{ "hold same ns as last", 1, 0, T0, 0, T0, 100, 1000, TLS_FLOWLET_HOLD, 1, T0 },
	/* from the default class (no band yet): at once, busy or not */
	{ "NONE->2 at once", NONE, 0, T0 - 1, 2, T0, 100, 1000, TLS_FLOWLET_PROMOTE, 2, 0 },
	{ "hold keeps pending start", 2, T0 - 999, T0 - 1, 1, T0, 100, 1000, TLS_FLOWLET_HOLD, 2,
	  T0 - 999 },
	{ "hold expired exactly", 2, T0 - 1000, T0 - 1, 1, T0, 100, 1000, TLS_FLOWLET_PROMOTE, 1,
	  0 },
	{ "hold expired long ago", 2, T0 - 50000, T0 - 1, 0, T0, 100, 1000, TLS_FLOWLET_PROMOTE, 0,
	  0 },
	{ "hold 0: busy promotion at once", 2, 0, T0 - 1, 1, T0, 100, 0, TLS_FLOWLET_PROMOTE, 1,
	  0 },
	{ "hold shorter than gap expires first", 2, T0 - 10, T0 - 1, 1, T0, 1000, 10,
	  TLS_FLOWLET_PROMOTE, 1, 0 },
};

static void test_step_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(step_cases) / sizeof(step_cases[0]); i++) {
		const struct step_case *c = &step_cases[i];
		__u32 band = c->band;
		__u64 pending = c->pending_ns;
		enum tls_flowlet_verdict v;

		v = tls_flowlet_step(&band, &pending, c->last_ns, c->target, c->now, c->gap_ns,
				     c->hold_ns);
		if (v != c->verdict || band != c->exp_band || pending != c->exp_pending)
			fail_msg("case \"%s\": got %s band=%u pending=%llu, want %s band=%u "
				 "pending=%llu",
				 c->name, verdict_name(v), band, (unsigned long long)pending,
				 verdict_name(c->verdict), c->exp_band,
				 (unsigned long long)c->exp_pending);
	}
}

/* Every (band, target) pair of real bands: the direction alone decides
 * SAME / DEMOTE, and a busy promotion holds. */
static void test_step_all_band_pairs(void **state)
{
	static const __u32 bands[] = { 0, 1, 2, 3, 4, 5, 6, NONE };
	const size_t n = sizeof(bands) / sizeof(bands[0]);
	size_t i, j;

	(void)state;
	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++) {
			__u32 band = bands[i];
			__u64 pending = 0;
			enum tls_flowlet_verdict v, want;
			__u32 want_band;

			v = tls_flowlet_step(&band, &pending, T0 - 1, bands[j], T0, 100, 1000);
			if (bands[j] == bands[i]) {
				want = TLS_FLOWLET_SAME;
				want_band = bands[i];
			} else if (bands[i] == NONE) {
				want = TLS_FLOWLET_PROMOTE; /* out of the default class */
				want_band = bands[j];
			} else if (bands[j] > bands[i]) {
				want = TLS_FLOWLET_DEMOTE;
				want_band = bands[j];
			} else {
				want = TLS_FLOWLET_HOLD;
				want_band = bands[i];
			}
			if (v != want || band != want_band ||
			    pending != (want == TLS_FLOWLET_HOLD ? T0 : 0))
				fail_msg("band %u -> target %u: got %s band=%u pending=%llu",
					 bands[i], bands[j], verdict_name(v), band,
					 (unsigned long long)pending);
		}
	}
}

/* ---- sequences ---------------------------------------------------------- */

/* A busy flow holds from the first packet after the change until hold_ns has
 * passed since then, then promotes. */
static void test_hold_until_expiry(void **state)
{
	struct flow f = { .band = 2, .last_ns = T0 - 10 };
	__u64 t;

	(void)state;
	expect_pkt(&f, 1, T0, 100, 1000, TLS_FLOWLET_HOLD, 2, T0);
	for (t = T0 + 10; t < T0 + 1000; t += 10)
		expect_pkt(&f, 1, t, 100, 1000, TLS_FLOWLET_HOLD, 2, T0);
	expect_pkt(&f, 1, T0 + 1000, 100, 1000, TLS_FLOWLET_PROMOTE, 1, 0);
	/* and stays there */
	expect_pkt(&f, 1, T0 + 1010, 100, 1000, TLS_FLOWLET_SAME, 1, 0);
}

/* An idle gap during the hold promotes before the hold expires. */
static void test_hold_then_idle_gap(void **state)
{
	struct flow f = { .band = 5, .last_ns = T0 - 1 };

	(void)state;
	expect_pkt(&f, 3, T0, 100, 1000, TLS_FLOWLET_HOLD, 5, T0);
	expect_pkt(&f, 3, T0 + 50, 100, 1000, TLS_FLOWLET_HOLD, 5, T0);
	expect_pkt(&f, 3, T0 + 149, 100, 1000, TLS_FLOWLET_HOLD, 5, T0);
	/* 100 ns since the last packet: its queue has drained */
	expect_pkt(&f, 3, T0 + 249, 100, 1000, TLS_FLOWLET_PROMOTE, 3, 0);
}

/* The job goes back to the flow's band before the promotion happened: the
 * pending start is dropped, and a later promotion starts a new hold. */
static void test_pending_cleared_on_revert(void **state)
{
	struct flow f = { .band = 2, .last_ns = T0 - 1 };

	(void)state;
	expect_held(&f, 1, T0, T0 + 20, 100, 1000, 2, T0);
	expect_pkt(&f, 2, T0 + 20, 100, 1000, TLS_FLOWLET_SAME, 2, 0);
	expect_held(&f, 1, T0 + 30, T0 + 1030, 100, 1000, 2, T0 + 30);
	/* (the old start, T0, expired within the loop above) */
	expect_pkt(&f, 1, T0 + 1030, 100, 1000, TLS_FLOWLET_PROMOTE, 1, 0);
}

/* A demotion while a promotion is pending applies at once and drops it. */
static void test_pending_cleared_on_demote(void **state)
{
	struct flow f = { .band = 2, .last_ns = T0 - 1 };

	(void)state;
	expect_pkt(&f, 0, T0, 100, 1000, TLS_FLOWLET_HOLD, 2, T0);
	expect_pkt(&f, 5, T0 + 10, 100, 1000, TLS_FLOWLET_DEMOTE, 5, 0);
	expect_pkt(&f, 0, T0 + 20, 100, 1000, TLS_FLOWLET_HOLD, 5, T0 + 20);
}

/*
 * Observed and asserted: a promotion pending to band 1 that becomes a
 * promotion to band 0 (the flow still in band 2) keeps its original pending
 * start. The hold bounds how long the flow waits for any promotion, not per
 * target, so the flow moves straight to band 0 when the first hold expires.
 */
static void test_retarget_keeps_pending_start(void **state)
{
	struct flow f = { .band = 2, .last_ns = T0 - 1 };

	(void)state;
	expect_held(&f, 1, T0, T0 + 500, 100, 1000, 2, T0);
	expect_held(&f, 0, T0 + 500, T0 + 1000, 100, 1000, 2, T0);
	expect_pkt(&f, 0, T0 + 1000, 100, 1000, TLS_FLOWLET_PROMOTE, 0, 0);
}

/* Same the other way: pending to 0, then to 1 (still a promotion from 2). */
static void test_retarget_lower_keeps_pending_start(void **state)
{
	struct flow f = { .band = 2, .last_ns = T0 - 1 };

	(void)state;
	expect_held(&f, 0, T0, T0 + 600, 100, 1000, 2, T0);
	expect_held(&f, 1, T0 + 600, T0 + 1000, 100, 1000, 2, T0);
	expect_pkt(&f, 1, T0 + 1000, 100, 1000, TLS_FLOWLET_PROMOTE, 1, 0);
}

/*
 * 0 means "no promotion pending", so one that becomes pending at now == 0 is
 * recorded as 1 ns (tls_flowlet.h). The flow is busy (its last packet was at
 * 0 too), so the packet must be held, not promoted: now - pending_ns must not
 * wrap around to "hold expired long ago".
 */
static void test_pending_start_at_zero(void **state)
{
	struct flow f = { .band = 1, .last_ns = 0 };

	(void)state;
	expect_pkt(&f, 0, 0, 100, 1000, TLS_FLOWLET_HOLD, 1, 1);
	expect_held(&f, 0, 10, 1001, 100, 1000, 1, 1);
	expect_pkt(&f, 0, 1001, 100, 1000, TLS_FLOWLET_PROMOTE, 0, 0);
}

/* Same at now == 1: the recorded start is the real one, no special case. */
static void test_pending_start_at_one(void **state)
{
	struct flow f = { .band = 1, .last_ns = 0 };

	(void)state;
	expect_held(&f, 0, 1, 1001, 100, 1000, 1, 1);
	expect_pkt(&f, 0, 1001, 100, 1000, TLS_FLOWLET_PROMOTE, 0, 0);
}

/*
 * The classifier reads `now` before it looks the flow up, and tls_flow is
 * shared by all CPUs, so another CPU sending the same flow can store a later
 * last_ns (or pending_ns) in between: the step sees now < last_ns. That flow
 * is as busy as a flow can be; it must not look idle because now - last_ns
 * wrapped around.
 */
static void test_last_packet_after_now(void **state)
{
	struct flow f = { .band = 2, .last_ns = T0 + 5 };

	(void)state;
	expect_pkt(&f, 1, T0, 100, 1000, TLS_FLOWLET_HOLD, 2, T0);
}

/* Same race on pending_ns: a hold that started "after" now has not expired. */
static void test_pending_start_after_now(void **state)
{
	__u32 band = 2;
	__u64 pending = T0 + 5;
	enum tls_flowlet_verdict v;

	(void)state;
	v = tls_flowlet_step(&band, &pending, T0 - 1, 1, T0, 100, 1000);
	if (v != TLS_FLOWLET_HOLD || band != 2)
		fail_msg("pending start after now: got %s band=%u pending=%llu, want HOLD band=2",
			 verdict_name(v), band, (unsigned long long)pending);
}

/* gap_ns == 0 switches flowlets off: every change applies at once. */
static void test_gap_zero_sequence(void **state)
{
	static const __u32 targets[] = { 3, 0, NONE, 6, 1, 1, 0, NONE, NONE, 2 };
	struct flow f = { .band = 4, .last_ns = T0 - 1 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		__u32 before = f.band;
		enum tls_flowlet_verdict want = targets[i] == before ? TLS_FLOWLET_SAME :
						targets[i] > before  ? TLS_FLOWLET_DEMOTE :
								       TLS_FLOWLET_PROMOTE;

		expect_pkt(&f, targets[i], T0 + i, 0, 1000000, want, targets[i], 0);
	}
}

/* ---- property test ------------------------------------------------------ */

struct lcg {
	__u64 s;
};

static __u32 lcg_next(struct lcg *r)
{
	/* Knuth's MMIX constants; the high bits are the good ones */
	r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
	return (__u32)(r->s >> 33);
}

static __u32 lcg_below(struct lcg *r, __u32 n)
{
	return n ? lcg_next(r) % n : 0;
}

struct prop_cfg {
	__u64 gap_ns;
	__u64 hold_ns;
	__u64 seed;
};

static const struct prop_cfg prop_cfgs[] = {
	{ 100, 1000, 1 },      { 100, 1000, 0xdeadbeef },
	{ 50000, 200000, 42 }, { 1000, 50, 7 }, /* hold shorter than gap */
	{ 100, 100, 12345 },   { 100, 0, 99 },	/* no hold: busy promotions apply at once */
	{ 0, 1000, 2024 },			/* flowlets off */
	{ 0, 0, 3 },
};

#define PROP_STEPS 20000

static void prop_run(const struct prop_cfg *c)
{
	static const __u32 bands[] = { 0, 1, 2, 3, 4, 5, 6, NONE };
	struct lcg r = { .s = c->seed };
	struct flow f = { .band = NONE, .last_ns = T0 };
	__u64 unit = c->gap_ns ? c->gap_ns : 100;
	__u64 now = T0, model_pending = 0;
	unsigned long counts[4] = { 0 };
	__u32 target = lcg_below(&r, TLS_MAX_BANDS);
	int i;

	for (i = 0; i < PROP_STEPS; i++) {
		__u32 old_band = f.band;
		__u64 old_pending = f.pending_ns, last = f.last_ns, since_last, start;
		enum tls_flowlet_verdict v;
		bool hold_expired;

		/* mostly back-to-back packets, sometimes an idle gap */
		if (lcg_below(&r, 8) == 0)
			now += lcg_below(&r, (__u32)(3 * unit));
		else
			now += lcg_below(&r, (__u32)(unit / 4 + 1));
		/* rotations: the job's band changes now and then */
		if (lcg_below(&r, 40) == 0)
			target = bands[lcg_below(&r, sizeof(bands) / sizeof(bands[0]))];

		v = pkt(&f, target, now, c->gap_ns, c->hold_ns);
		if ((unsigned)v > TLS_FLOWLET_HOLD)
			fail_msg("step %d: verdict %d out of range", i, (int)v);
		counts[v]++;
		since_last = now - last;
		start = old_pending ? old_pending : now;
		hold_expired = now - start >= c->hold_ns;

		/* the band only ever becomes the target or stays */
		if (f.band != old_band && f.band != target)
			fail_msg("step %d: band %u -> %u, target %u", i, old_band, f.band, target);
		/* verdict and band movement agree */
		if ((v == TLS_FLOWLET_SAME) != (old_band == target) ||
		    (v == TLS_FLOWLET_DEMOTE) != (target > old_band && old_band != NONE) ||
		    (v == TLS_FLOWLET_PROMOTE) != (f.band < old_band) ||
		    (v == TLS_FLOWLET_HOLD) != (target < old_band && f.band == old_band))
			fail_msg("step %d: %s for band %u -> %u, target %u", i, verdict_name(v),
				 old_band, f.band, target);
		/* never a promotion into a busy flow, unless the hold expired */
		if (f.band < old_band && old_band != NONE && c->gap_ns && since_last < c->gap_ns &&
		    !hold_expired)
			fail_msg("step %d: promoted %u -> %u %llu ns after the last packet "
				 "(gap %llu), pending since %llu (now %llu, hold %llu)",
				 i, old_band, f.band, (unsigned long long)since_last,
				 (unsigned long long)c->gap_ns, (unsigned long long)old_pending,
				 (unsigned long long)now, (unsigned long long)c->hold_ns);
		/* a held packet: flow busy, hold running since the first held one */
		if (v == TLS_FLOWLET_HOLD) {
			if (!model_pending)
				model_pending = now;
			if (!c->gap_ns || since_last >= c->gap_ns)
				fail_msg("step %d: held an idle flow (%llu ns since last)", i,
					 (unsigned long long)since_last);
			if (f.pending_ns != model_pending)
				fail_msg("step %d: pending %llu, hold started at %llu", i,
					 (unsigned long long)f.pending_ns,
					 (unsigned long long)model_pending);
			if (now - f.pending_ns >= c->hold_ns)
				fail_msg("step %d: still held %llu ns after start (hold %llu)", i,
					 (unsigned long long)(now - f.pending_ns),
					 (unsigned long long)c->hold_ns);
		} else {
			model_pending = 0;
			if (f.pending_ns)
				fail_msg("step %d: %s left pending %llu", i, verdict_name(v),
					 (unsigned long long)f.pending_ns);
		}
	}

	/* the stream exercised every path it can reach */
	assert_true(counts[TLS_FLOWLET_SAME] > 0);
	assert_true(counts[TLS_FLOWLET_DEMOTE] > 0);
	assert_true(counts[TLS_FLOWLET_PROMOTE] > 0);
	if (c->gap_ns && c->hold_ns)
		assert_true(counts[TLS_FLOWLET_HOLD] > 0);
	else
		assert_int_equal(counts[TLS_FLOWLET_HOLD], 0);
}

static void test_property_stream(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(prop_cfgs) / sizeof(prop_cfgs[0]); i++)
		prop_run(&prop_cfgs[i]);
}

/* The same stream twice gives the same decisions: the step has no state of
 * its own beyond what it is passed. */
static void test_property_deterministic(void **state)
{
	struct lcg r1 = { .s = 77 }, r2 = { .s = 77 };
	struct flow a = { .band = 3, .last_ns = T0 }, b = a;
	__u64 now = T0;
	int i;

	(void)state;
	for (i = 0; i < 2000; i++) {
		__u32 t1 = lcg_below(&r1, TLS_MAX_BANDS), t2 = lcg_below(&r2, TLS_MAX_BANDS);
		enum tls_flowlet_verdict v1, v2;

		now += lcg_below(&r1, 150);
		lcg_below(&r2, 150);
		v1 = pkt(&a, t1, now, 100, 500);
		v2 = pkt(&b, t2, now, 100, 500);
		assert_int_equal(v1, v2);
		assert_int_equal(a.band, b.band);
		assert_int_equal(a.pending_ns, b.pending_ns);
	}
}

/* ---- flows of a local TCP socket: drained or not, not the clock ----------- */

struct drained_case {
	const char *name;
	__u32 band, target;
	__u64 pending, now;
	int drained;
	__u64 gap, hold;
	enum tls_flowlet_verdict v;
	__u32 band_after;
	__u64 pending_after;
};

static const struct drained_case drained_cases[] = {
	{ "same band", 2, 2, 0, T0, 0, 4, 100, TLS_FLOWLET_SAME, 2, 0 },
	{ "same band clears pending", 2, 2, T0 - 5, T0, 0, 4, 100, TLS_FLOWLET_SAME, 2, 0 },
	{ "promote drained", 3, 1, 0, T0, 1, 4, 100, TLS_FLOWLET_PROMOTE, 1, 0 },
	{ "demote drained", 1, 3, 0, T0, 1, 4, 100, TLS_FLOWLET_DEMOTE, 3, 0 },
	/* a starved flow: long unseen, but its packets are queued */
	{ "promote queued: held", 3, 1, 0, T0, 0, 4, 100, TLS_FLOWLET_HOLD, 3, T0 },
	/* unlike a time-gap flow, a queued demotion waits too */
	{ "demote queued: held", 1, 3, 0, T0, 0, 4, 100, TLS_FLOWLET_HOLD, 1, T0 },
	{ "held until hold", 1, 3, T0 - 99, T0, 0, 4, 100, TLS_FLOWLET_HOLD, 1, T0 - 99 },
	{ "hold expires: demote", 1, 3, T0 - 100, T0, 0, 4, 100, TLS_FLOWLET_DEMOTE, 3, 0 },
	{ "hold expires: promote", 3, 1, T0 - 100, T0, 0, 4, 100, TLS_FLOWLET_PROMOTE, 1, 0 },
	{ "drained while pending", 3, 1, T0 - 50, T0, 1, 4, 100, TLS_FLOWLET_PROMOTE, 1, 0 },
	{ "from the default class at once", NONE, 4, 0, T0, 0, 4, 100, TLS_FLOWLET_PROMOTE, 4, 0 },
	{ "flowlets off: at once", 3, 1, 0, T0, 0, 0, 100, TLS_FLOWLET_PROMOTE, 1, 0 },
	{ "pending since boot time 0 is 1", 3, 1, 0, 0, 0, 4, 100, TLS_FLOWLET_HOLD, 3, 1 },
	{ "pending start after now: held", 3, 1, T0 + 7, T0, 0, 4, 100, TLS_FLOWLET_HOLD, 3,
	  T0 + 7 },
};

static void test_drained_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(drained_cases) / sizeof(drained_cases[0]); i++) {
		const struct drained_case *c = &drained_cases[i];
		__u32 band = c->band;
		__u64 pending = c->pending;
		enum tls_flowlet_verdict v = tls_flowlet_step_drained(
			&band, &pending, c->target, c->now, c->drained, c->gap, c->hold);

		if (v != c->v || band != c->band_after || pending != c->pending_after)
			fail_msg("%s: got %s band=%u pending=%llu, want %s band=%u pending=%llu",
				 c->name, verdict_name(v), band, (unsigned long long)pending,
				 verdict_name(c->v), c->band_after,
				 (unsigned long long)c->pending_after);
	}
}

/* A busy flow never drained: every packet stays in the old band until the
 * hold runs out, then the change applies and the flow stays there. */
static void test_drained_busy_sequence(void **state)
{
	__u32 band = 0;
	__u64 pending = 0, t;

	(void)state;
	for (t = T0; t < T0 + 1000; t += 10)
		assert_int_equal(tls_flowlet_step_drained(&band, &pending, 1, t, 0, 4, 1000),
				 TLS_FLOWLET_HOLD);
	assert_int_equal(band, 0);
	assert_int_equal(tls_flowlet_step_drained(&band, &pending, 1, T0 + 1000, 0, 4, 1000),
			 TLS_FLOWLET_DEMOTE);
	assert_int_equal(band, 1);
	assert_int_equal(tls_flowlet_step_drained(&band, &pending, 1, T0 + 1010, 0, 4, 1000),
			 TLS_FLOWLET_SAME);
	assert_int_equal(pending, 0);
}

int run_flowlet_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_table),
		cmocka_unit_test(test_step_all_band_pairs),
		cmocka_unit_test(test_hold_until_expiry),
		cmocka_unit_test(test_hold_then_idle_gap),
		cmocka_unit_test(test_pending_cleared_on_revert),
		cmocka_unit_test(test_pending_cleared_on_demote),
		cmocka_unit_test(test_retarget_keeps_pending_start),
		cmocka_unit_test(test_retarget_lower_keeps_pending_start),
		cmocka_unit_test(test_pending_start_at_zero),
		cmocka_unit_test(test_pending_start_at_one),
		cmocka_unit_test(test_last_packet_after_now),
		cmocka_unit_test(test_pending_start_after_now),
		cmocka_unit_test(test_gap_zero_sequence),
		cmocka_unit_test(test_property_stream),
		cmocka_unit_test(test_property_deterministic),
		cmocka_unit_test(test_drained_table),
		cmocka_unit_test(test_drained_busy_sequence),
	};

	return cmocka_run_group_tests_name("flowlet", tests, NULL, NULL);
}
