/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Who counts in a job's n (issue 17, Deliver 2): spotDNN's n is the
 * provisioned worker instances, so tlsd counts worker hosts (remote
 * addresses), not flows (a g-GPU instance runs g workers, g flows), and
 * over a window longer than the job's iteration, so that a worker that
 * computes for longer than the fixed window does not drop out of n
 * between its pulls. Pure helpers for lib/model/stats.c.
 */
#ifndef TLS_STATS_GROUP_H
#define TLS_STATS_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "tls_common.h"

/* One flow active within its job's window. */
struct tls_group_item {
	uint32_t job;
	uint32_t idx; /* the caller's flow index */
	uint8_t family;
	uint8_t addr[16]; /* the worker's (remote) address */
	uint64_t delta;	  /* its bytes in this period */
	double share;	  /* out: delta over its host's bytes in this period (1 if none) */
};

/*
 * Sort items by (job, host) (a pass that finds them in that order already
 * sorts nothing: a caller that hands them in the order of its last call
 * skips the sort while its flows stay); count each job's distinct hosts into
 * hosts[TLS_MAX_JOBS] (zeroed first) and set each item's share of its
 * host's bytes of the period.
 */
void tls_group_hosts(struct tls_group_item *it, size_t n, uint32_t *hosts);

/*
 * A flow's iteration, from the spacing of its bursts' starts: *iter_ns
 * (0: not known) follows each spacing below idle_ns (a longer one is a
 * pause, not an iteration) with weight 1/4, so that one late burst moves
 * it a quarter of the way. *last_ns is the previous burst's start.
 */
void tls_group_burst(uint64_t *iter_ns, uint64_t *last_ns, uint64_t start_ns, uint64_t idle_ns);

/*
 * The window of a job whose iteration is iter_ns (0: not known): window_ns
 * when configured (not 0), else twice the iteration, at least min_ns. Twice:
 * the time between two bursts' ends is an iteration plus the difference of
 * their lengths; doubling absorbs jitter up to a whole iteration, and a
 * worker gone (revoked) leaves n after two iterations.
 */
uint64_t tls_group_window(uint64_t window_ns, uint64_t min_ns, uint64_t iter_ns);

#endif /* TLS_STATS_GROUP_H */
