// SPDX-License-Identifier: GPL-2.0-only
/* The ingress sampler (stats_ingress.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "map_batch.h"
#include "stats_ingress.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's own "not supported", which bpf() lets out */
#endif

#define BATCH 1024
/* job ids per batch lookup of the job counters */
#define JOB_RUN 64

struct tls_ingress_sampler {
	struct tls_stats *st;
	int ncpu;
	uint64_t prev_ns; /* the last flow reading, 0: none */
	bool walk;	  /* no batch lookups on this kernel */
	bool job_single;  /* nor on the job counters' array: one lookup a job */
	bool warned;
	struct tls_job_in *percpu;
	bool want[TLS_MAX_JOBS]; /* the jobs of this tick */
	__u32 job_keys[JOB_RUN];
	struct tls_job_in *job_vals; /* JOB_RUN * ncpu */
	struct tls_flow_key keys[BATCH];
	struct tls_flow_in vals[BATCH];
	struct tls_sparam sp[TLS_MAX_JOBS], sp_next[TLS_MAX_JOBS];
};

int tls_ingress_sampler_new(struct tls_stats *st, struct tls_ingress_sampler **out)
{
	int ncpu = libbpf_num_possible_cpus();
	struct tls_ingress_sampler *sm;

	*out = NULL;
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	sm = calloc(1, sizeof(*sm));
	if (sm) {
		sm->percpu = calloc(ncpu, sizeof(*sm->percpu));
		sm->job_vals = calloc((size_t)JOB_RUN * ncpu, sizeof(*sm->job_vals));
	}
	if (!sm || !sm->percpu || !sm->job_vals) {
		if (sm) {
			free(sm->percpu);
			free(sm->job_vals);
		}
		free(sm);
		return -ENOMEM;
	}
	sm->st = st;
	sm->ncpu = ncpu;
	*out = sm;
	return 0;
}

void tls_ingress_sampler_free(struct tls_ingress_sampler *sm)
{
	if (sm) {
		free(sm->percpu);
		free(sm->job_vals);
	}
	free(sm);
}

static void read_failed(struct tls_ingress_sampler *sm, const char *what, int err)
{
	if (!sm->warned)
		pr_warn("stats: cannot read %s (ingress): %s\n", what, strerror(-err));
	sm->warned = true;
}

static void feed_job(struct tls_ingress_sampler *sm, const struct tls_maps *m, uint32_t job)
{
	uint64_t bytes = 0;

	if (bpf_map_lookup_elem(m->job_in, &job, sm->percpu)) {
		read_failed(sm, "the job counters", -errno);
		return;
	}
	for (int i = 0; i < sm->ncpu; i++)
		bytes += sm->percpu[i].bytes;
	tls_stats_add_job(sm->st, job, bytes);
}

/* The counters of ids a.. (up to JOB_RUN) in one batch lookup, those of
 * the jobs wanted to the engine: 0, -EOPNOTSUPP without batch lookups on
 * the map, or the error. */
static int job_run(struct tls_ingress_sampler *sm, const struct tls_maps *m, __u32 a, __u32 count)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 prev = a - 1, out;
	int err;

	err = bpf_map_lookup_batch(m->job_in, a ? &prev : NULL, &out, sm->job_keys, sm->job_vals,
				   &count, &opts);
	if (err < 0)
		err = -errno;
	if (err == -EINVAL || err == -EOPNOTSUPP || err == -ENOTSUPP)
		return -EOPNOTSUPP;
	if (err && err != -ENOENT)
		return err;
	for (__u32 k = 0; k < count; k++) {
		const struct tls_job_in *v = sm->job_vals + (size_t)k * sm->ncpu;
		uint64_t bytes = 0;

		if (sm->job_keys[k] >= TLS_MAX_JOBS || !sm->want[sm->job_keys[k]])
			continue; /* read on the way, not wanted */
		for (int i = 0; i < sm->ncpu; i++)
			bytes += v[i].bytes;
		tls_stats_add_job(sm->st, sm->job_keys[k], bytes);
	}
	return 0;
}

/*
 * Job 0 and the jobs given: their ids' counters in runs of JOB_RUN, one
 * batch lookup each (64 jobs in one or two syscalls, not 65: at a 10 ms
 * tick, one lookup a job was a sixth of tlsd's CPU), else one lookup a job.
 */
static void feed_jobs(struct tls_ingress_sampler *sm, const struct tls_maps *m,
		      const uint32_t *jobs, unsigned int njobs)
{
	uint32_t max = TLS_JOB_NONE;
	int err = -EOPNOTSUPP;

	sm->want[TLS_JOB_NONE] = true;
	for (unsigned int i = 0; i < njobs; i++)
		if (jobs[i] < TLS_MAX_JOBS) {
			sm->want[jobs[i]] = true;
			max = jobs[i] > max ? jobs[i] : max;
		}
	for (uint32_t a = 0; !sm->job_single && a <= max; a += JOB_RUN) {
		err = job_run(sm, m, a, max - a + 1 < JOB_RUN ? max - a + 1 : JOB_RUN);
		if (err == -EOPNOTSUPP)
			sm->job_single = true; /* from here on, and in this tick */
		else if (err)
			read_failed(sm, "the job counters", err);
	}
	for (uint32_t j = 0; j <= max; j++) {
		if (sm->job_single && sm->want[j])
			feed_job(sm, m, j);
		sm->want[j] = false;
	}
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
	int err = tls_map_read_all(m->flows_in, "the ingress flow map", sm->keys, sizeof(*sm->keys),
				   sm->vals, sizeof(*sm->vals), BATCH, &sm->walk, flow_one, &c);
	return err;
}

int tls_ingress_tick(struct tls_ingress_sampler *sm, const struct tls_maps *m, const uint32_t *jobs,
		     unsigned int njobs, uint64_t now_ns, bool flows)
{
	uint64_t since = sm->prev_ns ? sm->prev_ns : now_ns;
	int err;

	if (m->job_in < 0 || m->flows_in < 0)
		return -EBADF;
	err = tls_stats_begin(sm->st, now_ns);
	if (err)
		return err;
	feed_jobs(sm, m, jobs, njobs);
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
	int ncpu = libbpf_num_possible_cpus();
	struct tls_job_in *zero;

	if (m->job_in < 0 || ncpu <= 0 || !(zero = calloc(ncpu, sizeof(*zero))))
		return;
	if (bpf_map_update_elem(m->job_in, &job, zero, BPF_ANY))
		pr_warn("cannot reset job %u's ingress counters: %s\n", job, strerror(errno));
	free(zero);
}
