/* SPDX-License-Identifier: GPL-2.0-only */
/* The daemon's one clock: CLOCK_MONOTONIC in ns (the BPF side's
 * bpf_ktime_get_ns() reads the same clock, so the two compare). */
#ifndef TLS_CLOCK_H
#define TLS_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t tls_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* The coarse clock's step (one tick, as bpf_ktime_get_coarse_ns() moves):
 * its resolution, 0 if unknown. */
static inline uint64_t tls_coarse_tick_ns(void)
{
	struct timespec res;

	if (!clock_getres(CLOCK_MONOTONIC_COARSE, &res) && !res.tv_sec && res.tv_nsec > 0)
		return (uint64_t)res.tv_nsec;
	return 0;
}

#endif
