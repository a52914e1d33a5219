// SPDX-License-Identifier: GPL-2.0-only
/*
 * tls_burst_step(): policy bursts' per-packet decision, shared with the BPF
 * classifier. Sequences of packets with known times: the order of bursts,
 * the leader's end after its gap, a job behind the leader kept while it is
 * starved, a job that never goes idle, a full order; then a property test
 * over a long pseudo-random stream against a plain model.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include <linux/types.h>

#include "tls_common.h"
#include "tls_burst.h"
#include "unit.h"

#define MS  1000000ull
#define T0  (1000ull * 1000 * MS) /* an arbitrary "now" well after boot */
#define GAP (20 * MS)
#define LIM (2000 * MS)

static void order_init(struct tls_burst *o, __u32 nbands, __u64 limit)
{
	memset(o, 0, sizeof(*o));
	o->nbands = nbands;
	o->gap_ns = GAP;
	o->limit_ns = limit;
}

/* step at T0 + ms */
static __u32 at(struct tls_burst *o, __u32 job, __u64 ms)
{
	return tls_burst_step(o, job, T0 + ms * MS, 1);
}

static void test_first_come_first_led(void **state)
{
	struct tls_burst o;

	(void)state;
	order_init(&o, 4, LIM);
	assert_int_equal(at(&o, 7, 0), 0); /* job 7 starts: leads */
	assert_int_equal(at(&o, 3, 1), 1); /* job 3 starts later: behind it */
	assert_int_equal(at(&o, 9, 2), 2);
	assert_int_equal(at(&o, 3, 3), 1); /* a later packet keeps its place */
	assert_int_equal(at(&o, 7, 10), 0);
	assert_int_equal(o.n, 3);
	/* Job 7 idle past its gap: the next packet of anyone ends its burst
	 * and job 3 leads; 7's next packet is a new burst, at the end. */
	assert_int_equal(at(&o, 3, 10 + 21), 0);
	assert_int_equal(at(&o, 9, 32), 1);
	assert_int_equal(at(&o, 7, 33), 2);
}

static void test_starved_job_keeps_its_place(void **state)
{
	struct tls_burst o;

	(void)state;
	order_init(&o, 4, LIM);
	assert_int_equal(at(&o, 1, 0), 0);
	assert_int_equal(at(&o, 2, 1), 1);
	/* Job 1 sends for 500 ms; job 2 is starved and sends nothing. */
	for (__u64 t = 2; t <= 500; t += 5)
		assert_int_equal(at(&o, 1, t), 0);
	/* Job 1 stops; job 3 starts during its gap: behind job 2, which
	 * started its burst before it even though it has been silent. */
	assert_int_equal(at(&o, 3, 505), 2);
	/* Job 1's gap is over: job 2 leads, with a fresh gap from now. */
	assert_int_equal(at(&o, 3, 525), 1);
	assert_int_equal(o.job[0], 2);
	assert_int_equal(at(&o, 3, 540), 1); /* 15 ms later: 2 still leads */
	assert_int_equal(at(&o, 2, 544), 0);
	/* Job 2 done too: 21 ms after its last packet job 3 leads. */
	assert_int_equal(at(&o, 3, 566), 0);
}

static void test_never_idle_yields(void **state)
{
	struct tls_burst o;

	(void)state;
	order_init(&o, 3, LIM);
	assert_int_equal(at(&o, 5, 0), 0);
	assert_int_equal(at(&o, 6, 1), 1);
	for (__u64 t = 2; t <= 2000; t += 10)
		assert_int_equal(at(&o, 5, t), 0);
	/* Past the limit: job 5 goes to the end as a new burst. */
	assert_int_equal(at(&o, 5, 2010), 1);
	assert_int_equal(at(&o, 6, 2011), 0);
	/* Alone, a job never yields to nobody. */
	order_init(&o, 3, LIM);
	for (__u64 t = 0; t <= 5000; t += 10)
		assert_int_equal(at(&o, 5, t), 0);
	/* limit 0: never yields */
	order_init(&o, 3, 0);
	at(&o, 5, 0);
	at(&o, 6, 1);
	for (__u64 t = 2; t <= 9000; t += 10)
		assert_int_equal(at(&o, 5, t), 0);
}

static void test_bands_and_full_order(void **state)
{
	struct tls_burst o;
	__u32 j;

	(void)state;
	order_init(&o, 3, LIM);
	for (j = 1; j <= TLS_BURST_SLOTS; j++)
		assert_int_equal(at(&o, j, j), j - 1 < 2 ? j - 1 : 2); /* past band 2: band 2 */
	assert_int_equal(o.n, TLS_BURST_SLOTS);
	/* The order is full: a new job takes the last band, stays out. */
	assert_int_equal(at(&o, 100, 20), 2);
	assert_int_equal(o.n, TLS_BURST_SLOTS);
	for (j = 0; j < TLS_BURST_SLOTS; j++)
		assert_int_not_equal(o.job[j], 100);
	/* nbands 0 (not set up) or past the maximum: bands stay in range */
	order_init(&o, 0, LIM);
	assert_int_equal(at(&o, 1, 0), 0);
	assert_int_equal(at(&o, 2, 0), 0);
	order_init(&o, 200, LIM);
	for (j = 1; j <= TLS_BURST_SLOTS; j++)
		assert_true(at(&o, j, j) < TLS_MAX_BANDS);
	/* a corrupt count is clamped, not followed */
	order_init(&o, 3, LIM);
	o.n = 1000;
	assert_true(at(&o, 1, 0) <= 2);
	assert_true(o.n <= TLS_BURST_SLOTS);
}

static void test_acks_are_no_burst(void **state)
{
	struct tls_burst o;

	(void)state;
	order_init(&o, 4, LIM);
	/* A pure ACK of a job not in the order: the last band, no entry. */
	assert_int_equal(tls_burst_step(&o, 4, T0, 0), 3);
	assert_int_equal(o.n, 0);
	assert_int_equal(at(&o, 1, 1), 0);
	assert_int_equal(at(&o, 2, 2), 1);
	/* Job 1 sends only ACKs: in its place, but its burst ends on time. */
	assert_int_equal(tls_burst_step(&o, 1, T0 + 10 * MS, 0), 0);
	assert_int_equal(tls_burst_step(&o, 1, T0 + 21 * MS, 0), 0); /* 20 ms: not past */
	/* 21 ms after its last data: ended; 2 leads, 1's ACKs take the last band */
	assert_int_equal(tls_burst_step(&o, 1, T0 + 22 * MS, 0), 3);
	assert_int_equal(o.n, 1);
	assert_int_equal(o.job[0], 2);
}

static void test_clock_behind(void **state)
{
	struct tls_burst o;

	(void)state;
	order_init(&o, 3, LIM);
	assert_int_equal(at(&o, 1, 100), 0);
	/* another CPU stamped the leader after this one read its clock */
	assert_int_equal(tls_burst_step(&o, 2, T0 + 99 * MS, 1), 1);
	assert_int_equal(o.job[0], 1);
}

/* A plain model of the rules, on a list, against the shared code over a
 * long random stream of packets of 6 jobs with bursts and pauses. */
struct model {
	unsigned int n;
	__u32 job[64];
	__u64 start[64], last[64];
};

static __u32 model_step(struct model *m, __u32 job, __u64 now, __u32 nbands)
{
	unsigned int i, idx;

	if (m->n && now > m->last[0] && now - m->last[0] > GAP) {
		memmove(m->job, m->job + 1, (m->n - 1) * sizeof(m->job[0]));
		memmove(m->start, m->start + 1, (m->n - 1) * sizeof(m->start[0]));
		memmove(m->last, m->last + 1, (m->n - 1) * sizeof(m->last[0]));
		m->n--;
		if (m->n)
			m->start[0] = m->last[0] = now;
	} else if (m->n > 1 && now > m->start[0] && now - m->start[0] > LIM) {
		__u32 j = m->job[0];

		memmove(m->job, m->job + 1, (m->n - 1) * sizeof(m->job[0]));
		memmove(m->start, m->start + 1, (m->n - 1) * sizeof(m->start[0]));
		memmove(m->last, m->last + 1, (m->n - 1) * sizeof(m->last[0]));
		m->start[0] = m->last[0] = now;
		m->job[m->n - 1] = j;
		m->start[m->n - 1] = m->last[m->n - 1] = now;
	}
	idx = m->n;
	for (i = 0; i < m->n; i++)
		if (m->job[i] == job)
			idx = i;
	if (idx == m->n) {
		if (m->n >= TLS_BURST_SLOTS)
			return nbands - 1;
		m->job[m->n] = job;
		m->start[m->n++] = now;
	}
	m->last[idx] = now;
	return idx < nbands - 1 ? idx : nbands - 1;
}

static void test_against_model(void **state)
{
	struct tls_burst o;
	struct model m = { 0 };
	__u64 now = T0, seed = 42;
	__u64 until[6] = { 0 };
	unsigned int steps, pops = 0, prev_n = 0;

	(void)state;
	order_init(&o, 4, LIM);
	for (steps = 0; steps < 200000; steps++) {
		__u32 job, want, got;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		job = (seed >> 33) % 6;
		now += ((seed >> 20) % 4000) * 1000; /* 0-4 ms */
		/* each job sends in bursts of up to 300 ms, then pauses */
		if (now > until[job] + 100 * MS)
			until[job] = now + ((seed >> 40) % 300) * MS;
		if (now > until[job])
			continue;
		want = model_step(&m, job + 1, now, 4);
		got = tls_burst_step(&o, job + 1, now, 1);
		assert_int_equal(got, want);
		assert_int_equal(o.n, m.n);
		if (o.n < prev_n)
			pops++;
		prev_n = o.n;
	}
	assert_true(pops > 100); /* the stream did exercise the ends */
}

int run_burst_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_come_first_led),
		cmocka_unit_test(test_starved_job_keeps_its_place),
		cmocka_unit_test(test_never_idle_yields),
		cmocka_unit_test(test_bands_and_full_order),
		cmocka_unit_test(test_acks_are_no_burst),
		cmocka_unit_test(test_clock_behind),
		cmocka_unit_test(test_against_model),
	};

	return cmocka_run_group_tests_name("burst", tests, NULL, NULL);
}
