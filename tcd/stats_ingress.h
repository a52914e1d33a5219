/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ingress sampler: the ingress counter's maps (bpf/tls_ingress.h) ->
 * one sample of a statistics engine of its own, so that every figure the
 * engine derives for the egress (pull: the model out of the PS), B_wk, n,
 * P and the fit, it derives the same way for the ingress (push: the
 * gradients into the PS). The engine is stats.c unchanged; only what feeds
 * it differs. And per job, S_param: the mean size of its flows' bursts of
 * payload (one push each), from the bursts that ended.
 */
#ifndef TLS_STATS_INGRESS_H
#define TLS_STATS_INGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "classifier.h"
#include "stats.h"

struct tls_ingress_sampler;

/* Per job, its ingress bursts (pushes) that ended, over the flows the
 * ingress map holds. */
struct tls_sparam {
	uint64_t bursts;
	uint64_t bytes;	    /* wire bytes, as the job counters count */
	unsigned int flows; /* flows with at least one burst ended */
};

int tls_ingress_sampler_new(struct tls_stats *st, struct tls_ingress_sampler **out);
void tls_ingress_sampler_free(struct tls_ingress_sampler *sm);
/* Read every way of the used sets at each reading, idle flows too (what
 * the sampler did before it knew the ways: slot_ways.h), to compare with. */
void tls_ingress_sampler_every_way(struct tls_ingress_sampler *sm, bool every_way);
/* The slots the last flow reading read (0 with every_way: not counted). */
unsigned int tls_ingress_sampler_visits(const struct tls_ingress_sampler *sm);
/*
 * One sample: job 0 and the jobs given, and if flows (or at the first) every
 * flow of the ingress map. tlsd reads the flows in the ticks where the
 * egress sampler reads its own (every 100 ms at a 10 ms period), for the
 * same reasons: a reading of 1024 flows costs some 300 us, and the engine
 * splits a flow's interval between readings by the verdicts of the ticks
 * it spans; and so that both engines' flow readings, and with them the
 * metrics' kept blocks (tlsd_metrics.h), change in the same tick. -EBADF if
 * the maps have no ingress counter (nothing fed then).
 */
int tls_ingress_tick(struct tls_ingress_sampler *sm, const struct tls_maps *m, const uint32_t *jobs,
		     unsigned int njobs, uint64_t now_ns, bool flows);
/* The job's bursts as of the last tick; all zero if none ended. */
void tls_ingress_sparam(const struct tls_ingress_sampler *sm, uint32_t job, struct tls_sparam *out);
/* A new job on a used id: its ingress counters from zero. */
void tls_ingress_reset_job(const struct tls_maps *m, uint32_t job);
/* S_param in bytes: bytes per burst; NaN if no burst ended. */
double tls_sparam_bytes(const struct tls_sparam *p);

#endif /* TLS_STATS_INGRESS_H */
