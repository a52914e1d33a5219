// SPDX-License-Identifier: GPL-2.0-only
/* The ingress sampler (stats_ingress.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "job_counters.h"
#include "log.h"
#include "map_batch.h"
#include "stats_ingress.h"

#define BATCH 1024

struct tls_ingress_sampler {
	struct tls_stats *st;
	struct tls_job_counters *jobs;
	uint64_t prev_ns; /* the last flow reading, 0: none */
	bool walk;	  /* no batch lookups on this kernel */
	bool warned;
	struct tls_flow_key keys[BATCH];
	struct tls_flow_in vals[BATCH];
	struct tls_sparam sp[TLS_MAX_JOBS], sp_next[TLS_MAX_JOBS];
};

int tls_ingress_sampler_new(struct tls_stats *st, struct tls_ingress_sampler **out)
{
	struct tls_ingress_sampler *sm = calloc(1, sizeof(*sm));
	int err;

	*out = NULL;
	if (!sm)
		return -ENOMEM;
	err = tls_job_counters_new(TLS_COUNTERS_IN, &sm->jobs);
	if (err) {
		free(sm);
		return err;
	}
	sm->st = st;
	*out = sm;
	return 0;
}

void tls_ingress_sampler_free(struct tls_ingress_sampler *sm)
{
	if (sm)
		tls_job_counters_free(sm->jobs);
	free(sm);
}

static void read_failed(struct tls_ingress_sampler *sm, const char *what, int err)
{
	if (!sm->warned)
		pr_warn("stats: cannot read %s (ingress): %s\n", what, strerror(-err));
	sm->warned = true;
}

static void feed_job(__u32 job, const void *sum, void *ctx)
{
	const struct tls_job_in *in = sum;
	struct tls_ingress_sampler *sm = ctx;

	tls_stats_add_job(sm->st, job, in->bytes);
}

/* One record: to the engine as the egress flows go (bytes: those with
 * payload, active: when payload came), and its bursts to its job's. */
static void feed_flow(struct tls_ingress_sampler *sm, const struct tls_flow_key *k,
		      const struct tls_flow_in *v, uint64_t since)
{
	struct tls_flow f = {
		.first_ns = v->first_ns,
		.last_ns = v->last_ns ? v->last_ns : v->first_ns,
		.bytes = v->data_bytes,
		.packets = v->packets,
		.job = v->job,
	};

	if (v->job == TLS_JOB_NONE || v->job >= TLS_MAX_JOBS)
		return;
	tls_stats_add_flow_since(sm->st, k, &f, since);
	if (v->bursts) {
		sm->sp_next[v->job].bursts += v->bursts;
		sm->sp_next[v->job].bytes += v->done_bytes;
		sm->sp_next[v->job].flows++;
	}
}

struct flow_ctx {
	struct tls_ingress_sampler *sm;
	uint64_t since;
};

static void flow_one(const void *key, const void *val, void *ctx)
{
	struct flow_ctx *c = ctx;

	feed_flow(c->sm, key, val, c->since);
}

static int read_flows(struct tls_ingress_sampler *sm, const struct tls_maps *m, uint64_t since)
{
	struct flow_ctx c = { sm, since };
	return tls_flow_map_read(m, TLS_FLOW_MAP_IN, sm->keys, sm->vals, BATCH, &sm->walk, flow_one,
				 &c);
}

int tls_ingress_tick(struct tls_ingress_sampler *sm, const struct tls_maps *m, const uint32_t *jobs,
		     unsigned int njobs, uint64_t now_ns, bool flows)
{
	uint64_t since = sm->prev_ns ? sm->prev_ns : now_ns;
	int err;

	if (!tls_maps_have_ingress(m))
		return -EBADF;
	err = tls_stats_begin(sm->st, now_ns);
	if (err)
		return err;
	tls_job_counters_want(sm->jobs, TLS_JOB_NONE);
	for (unsigned int i = 0; i < njobs; i++)
		tls_job_counters_want(sm->jobs, jobs[i]);
	err = tls_job_counters_read(sm->jobs, m, feed_job, sm);
	if (err)
		read_failed(sm, "the job counters", err);
	if (flows || !sm->prev_ns) {
		memset(sm->sp_next, 0, sizeof(sm->sp_next));
		tls_stats_flows_read(sm->st);
		err = read_flows(sm, m, since);
		if (err)
			read_failed(sm, "the flow map", err);
		else
			memcpy(sm->sp, sm->sp_next, sizeof(sm->sp));
		sm->prev_ns = now_ns;
	}
	tls_stats_end(sm->st);
	return err;
}

void tls_ingress_sparam(const struct tls_ingress_sampler *sm, uint32_t job, struct tls_sparam *out)
{
	if (job < TLS_MAX_JOBS)
		*out = sm->sp[job];
	else
		memset(out, 0, sizeof(*out));
}

double tls_sparam_bytes(const struct tls_sparam *p)
{
	return p->bursts ? (double)p->bytes / (double)p->bursts : NAN;
}

void tls_ingress_reset_job(const struct tls_maps *m, uint32_t job)
{
	int err = tls_job_counters_zero(m, TLS_COUNTERS_IN, job);

	/* no ingress counter (-EBADF): nothing to reset */
	if (err && err != -EBADF)
		pr_warn("cannot reset job %u's ingress counters: %s\n", job, strerror(-err));
}
