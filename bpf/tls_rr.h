/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Policy roundrobin's order, as a function of time: the classifier computes
 * a job's band from the clock at each packet, so a rotation costs no write
 * and no wakeup of tlsd. tlsd writes the order's start (struct tls_rr)
 * only when it changes: jobs come or go, a reload, a new policy or
 * interval. Pure, so the same code runs in the BPF program, in tlsd (its
 * view of the order, lib/model/policy.c) and in the unit tests.
 *
 * Why: at a 10 ms interval tlsd woke 100 times a second to store one word
 * per job; on the nested VM of tests/bench a wakeup alone cost about 56 us
 * and the rotation path was a third of tlsd's CPU at 64 jobs (issue 16,
 * tests/bench/RESULTS.md "Roundrobin from the clock"). The clock also puts
 * each rotation at its exact time, where a timer's wakeup is late by the
 * host's load.
 *
 * A packet pays no division (each costs tens of cycles, and the first
 * version, with eight, took 114 ns more per packet than a static band):
 * the step and its leader are cached in the order (turn) and computed
 * again once a step, and the bands' first positions are a table. Nor the
 * precise clock (65 ns a read on the VM of tests/bench) but near a step's
 * end: the coarse one is a tick late at most (tick_ns: two, as tlsd
 * writes it, for a tick that comes late).
 */
#ifndef TLS_RR_H
#define TLS_RR_H

#ifndef TLS_INLINE
#define TLS_INLINE static inline __attribute__((always_inline))
#endif

/* The position (0 = leading) of the job that arrived i-th of n when the
 * job that arrived lead-th leads; the others follow in arrival order,
 * wrapping around. */
TLS_INLINE __u32 tls_rr_position(__u32 n, __u32 lead, __u32 i)
{
	if (n == 0)
		return i;
	return (i + n - lead % n) % n;
}

/* The band of a position among n, on nbands bands (policy.h): with more
 * jobs than bands, consecutive positions share a band in groups as even as
 * they can be, the earlier groups the larger. */
TLS_INLINE __u32 tls_rr_band_of_position(__u32 pos, __u32 n, __u32 nbands)
{
	__u32 size, extra;

	if (nbands == 0)
		return 0;
	if (n <= nbands)
		return pos;
	size = n / nbands;
	extra = n % nbands;
	if (pos < extra * (size + 1))
		return pos / (size + 1);
	return extra + (pos - extra * (size + 1)) / size;
}

/* The first position in band b (b < min(n, nbands)): the inverse of
 * tls_rr_band_of_position's groups. */
TLS_INLINE __u32 tls_rr_first_of_band(__u32 b, __u32 n, __u32 nbands)
{
	__u32 size, extra;

	if (n <= nbands || nbands == 0)
		return b;
	size = n / nbands;
	extra = n % nbands;
	if (b < extra)
		return b * (size + 1);
	return extra * (size + 1) + (b - extra) * size;
}

/* What tlsd fills in before it writes an order: the bands' first
 * positions (0xffff past the bands in use) and the cache of step 0. */
TLS_INLINE void tls_rr_fill(struct tls_rr *r)
{
	__u32 b, used = r->n < r->nbands ? r->n : r->nbands;

	for (b = 0; b < TLS_MAX_BANDS; b++)
		r->first[b] = b < used ? (__u16)tls_rr_first_of_band(b, r->n, r->nbands) : 0xffff;
	r->turn = TLS_RR_TURN(0, r->lead);
}

/* The leader at `now`, from the cached turn when `now` is in its step;
 * *turn is then what the cache should hold. An order not set up (no
 * jobs, no interval) has none: n, which tls_rr_band_at() refuses. */
TLS_INLINE __u32 tls_rr_lead(const struct tls_rr *r, __u64 now, __u64 *turn)
{
	__u64 step = *turn >> TLS_RR_TURN_SHIFT;
	__u64 start = r->epoch_ns + step * r->interval_ns;

	if (!r->n || !r->interval_ns)
		return r->n;
	if (now >= start && now - start < r->interval_ns)
		return (__u32)(*turn & ((1u << TLS_RR_TURN_SHIFT) - 1));
	/* another step: two divisions, once a step (before the start: the
	 * first step) */
	step = now > r->epoch_ns ? (now - r->epoch_ns) / r->interval_ns : 0;
	*turn = TLS_RR_TURN(step, (__u32)((r->lead + step % r->n) % r->n));
	return (__u32)(*turn & ((1u << TLS_RR_TURN_SHIFT) - 1));
}

/* Is the step of the cached turn the step of every moment from `now`, a
 * coarse clock's reading, to tick_ns after it? Then the coarse clock (a
 * tick late at most) is as good as the precise one. */
TLS_INLINE int tls_rr_sure(const struct tls_rr *r, __u64 turn, __u64 now)
{
	__u64 start = r->epoch_ns + (turn >> TLS_RR_TURN_SHIFT) * r->interval_ns;

	return now >= start && now - start + r->tick_ns < r->interval_ns;
}

/* The band of the job that arrived i-th when lead leads; `fallback` (the
 * band tlsd wrote beside the index) for what no order gives. */
TLS_INLINE __u32 tls_rr_band_at(const struct tls_rr *r, __u32 i, __u32 lead, __u32 fallback)
{
	__u32 pos, b, band = 0;

	if (i >= r->n || lead >= r->n)
		return fallback;
	pos = i >= lead ? i - lead : i + r->n - lead;
	for (b = 1; b < TLS_MAX_BANDS; b++)
		if (pos >= r->first[b])
			band = b;
	return band;
}

/* Both, for a reader that keeps no cache (tlsd, the tests). */
TLS_INLINE __u32 tls_rr_band(const struct tls_rr *r, __u32 i, __u64 now, __u32 fallback)
{
	__u64 turn = r->turn;

	return tls_rr_band_at(r, i, tls_rr_lead(r, now, &turn), fallback);
}

#endif
