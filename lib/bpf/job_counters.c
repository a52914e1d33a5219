// SPDX-License-Identifier: GPL-2.0-only
/* The per-job counters (job_counters.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "job_counters.h"
#include "log.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's own "not supported", which bpf() lets out */
#endif

#define JOB_RUN	   64 /* ids per batch lookup: a bounded buffer whatever the CPUs */
#define JOB_GAP	   4  /* ids this close share a batch */
#define MAX_FIELDS 8  /* __u64 counters in a value */
#define WANT_WORDS (TLS_MAX_JOBS / 64)

/* Both kinds are __u64 counters only: they are summed field by field. */
_Static_assert(sizeof(struct tls_job_stats) % sizeof(__u64) == 0 &&
		       sizeof(struct tls_job_stats) / sizeof(__u64) <= MAX_FIELDS,
	       "struct tls_job_stats: __u64 counters only");
_Static_assert(sizeof(struct tls_job_in) % sizeof(__u64) == 0 &&
		       sizeof(struct tls_job_in) / sizeof(__u64) <= MAX_FIELDS,
	       "struct tls_job_in: __u64 counters only");

struct tls_job_counters {
	enum tls_counters which;
	unsigned int nfields; /* __u64 counters per CPU */
	int ncpu;
	bool batch; /* batch lookups on arrays work */
	__u64 want[WANT_WORDS];
	__u32 max; /* the highest id marked */
	bool any;  /* some id marked */
	__u32 keys[JOB_RUN];
	__u64 *vals; /* JOB_RUN * ncpu * nfields */
};

static size_t value_size(enum tls_counters which)
{
	return which == TLS_COUNTERS_IN ? sizeof(struct tls_job_in) : sizeof(struct tls_job_stats);
}

static int map_fd(const struct tls_maps *m, enum tls_counters which)
{
	return which == TLS_COUNTERS_IN ? m->job_in : m->job_stats;
}

static int num_cpus(void)
{
	int ncpu = libbpf_num_possible_cpus();

	return ncpu > 0 ? ncpu : (ncpu ? ncpu : -EINVAL);
}

int tls_job_counters_new(enum tls_counters which, struct tls_job_counters **out)
{
	struct tls_job_counters *r;
	int ncpu = num_cpus();

	*out = NULL;
	if (ncpu < 0)
		return ncpu;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->which = which;
	r->nfields = value_size(which) / sizeof(__u64);
	r->ncpu = ncpu;
	r->batch = true;
	r->vals = calloc((size_t)JOB_RUN * ncpu * r->nfields, sizeof(__u64));
	if (!r->vals) {
		free(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

void tls_job_counters_free(struct tls_job_counters *r)
{
	if (r)
		free(r->vals);
	free(r);
}

void tls_job_counters_want(struct tls_job_counters *r, __u32 job)
{
	if (job >= TLS_MAX_JOBS)
		return;
	r->want[job / 64] |= 1ULL << (job % 64);
	if (!r->any || job > r->max)
		r->max = job;
	r->any = true;
}

static bool wanted(const struct tls_job_counters *r, __u32 job)
{
	return job < TLS_MAX_JOBS && (r->want[job / 64] >> (job % 64) & 1);
}

bool tls_job_counters_batched(const struct tls_job_counters *r)
{
	return r->batch;
}

/* One job's per-CPU values (ncpu * nfields) summed into sum[nfields]. */
static void sum_cpus(const __u64 *per, int ncpu, unsigned int nfields, __u64 *sum)
{
	memset(sum, 0, nfields * sizeof(*sum));
	for (int c = 0; c < ncpu; c++)
		for (unsigned int f = 0; f < nfields; f++)
			sum[f] += per[(size_t)c * nfields + f];
}

/* One job, one lookup, into buf (ncpu * nfields). */
static int lookup_one(int fd, __u32 job, __u64 *buf, int ncpu, unsigned int nfields, __u64 *sum)
{
	if (bpf_map_lookup_elem(fd, &job, buf))
		return -errno;
	sum_cpus(buf, ncpu, nfields, sum);
	return 0;
}

/* Jobs [a, b] (b - a < JOB_RUN) in one batch lookup; those wanted to cb.
 * -EOPNOTSUPP if the kernel has no batch lookups on arrays. */
static int read_run(struct tls_job_counters *r, int fd, __u32 a, __u32 b, tls_job_counters_cb cb,
		    void *ctx)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 prev = a - 1, out, count = b - a + 1;
	size_t stride = (size_t)r->ncpu * r->nfields;
	__u64 sum[MAX_FIELDS];
	int err;

	err = bpf_map_lookup_batch(fd, a ? &prev : NULL, &out, r->keys, r->vals, &count, &opts);
	if (err < 0)
		err = -errno;
	if (err == -EINVAL || err == -EOPNOTSUPP || err == -ENOTSUPP)
		return -EOPNOTSUPP;
	if (err && err != -ENOENT)
		return err;
	for (__u32 k = 0; k < count; k++) {
		if (!wanted(r, r->keys[k]))
			continue; /* read on the way */
		sum_cpus(r->vals + k * stride, r->ncpu, r->nfields, sum);
		cb(r->keys[k], sum, ctx);
	}
	return 0;
}

/* Jobs [a, b] one lookup each: kernels without batch operations. */
static int read_each(struct tls_job_counters *r, int fd, __u32 a, __u32 b, tls_job_counters_cb cb,
		     void *ctx)
{
	__u64 sum[MAX_FIELDS];
	int first = 0;

	for (__u32 k = a; k <= b; k++) {
		int err;

		if (!wanted(r, k))
			continue;
		err = lookup_one(fd, k, r->vals, r->ncpu, r->nfields, sum);
		if (!err)
			cb(k, sum, ctx);
		else if (!first)
			first = err;
	}
	return first;
}

static int read_range(struct tls_job_counters *r, int fd, __u32 a, __u32 b, tls_job_counters_cb cb,
		      void *ctx)
{
	static bool said; /* once a process: the kernel does not change */
	int err;

	if (r->batch) {
		err = read_run(r, fd, a, b, cb, ctx);
		if (err != -EOPNOTSUPP)
			return err;
		r->batch = false;
		if (!said)
			pr_info("no batch lookups on the job counters: one lookup a job\n");
		said = true;
	}
	return read_each(r, fd, a, b, cb, ctx);
}

int tls_job_counters_read(struct tls_job_counters *r, const struct tls_maps *m,
			  tls_job_counters_cb cb, void *ctx)
{
	int fd = map_fd(m, r->which), first = 0;
	__u32 a = 0, last = 0, max = r->max;
	bool in_run = false;

	if (!r->any)
		return 0;
	if (fd < 0) {
		first = -EBADF;
		goto out;
	}
	for (__u32 j = 0; j <= max + 1; j++) {
		bool want = j <= max && wanted(r, j);

		if (in_run && (j > max || (want && (j - last > JOB_GAP || j - a >= JOB_RUN)))) {
			int err = read_range(r, fd, a, last, cb, ctx);

			if (err && !first)
				first = err;
			in_run = false;
		}
		if (want) {
			if (!in_run)
				a = j;
			in_run = true;
			last = j;
		}
	}
out:
	memset(r->want, 0, (max / 64 + 1) * sizeof(r->want[0]));
	r->any = false;
	r->max = 0;
	return first;
}

int tls_job_counters_zero(const struct tls_maps *m, enum tls_counters which, __u32 job)
{
	int fd = map_fd(m, which), ncpu = num_cpus(), err = 0;
	void *zero;

	if (ncpu < 0)
		return ncpu;
	if (job >= TLS_MAX_JOBS)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	zero = calloc(ncpu, value_size(which));
	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(fd, &job, zero, BPF_ANY))
		err = -errno;
	free(zero);
	return err;
}

/* The classifier API's counters (classifier.h), on the reader. */

int tls_read_job_stats(const struct tls_maps *m, __u32 job, struct tls_job_stats *sum)
{
	const unsigned int nfields = sizeof(*sum) / sizeof(__u64);
	int ncpu = num_cpus(), err;
	__u64 *buf, s[MAX_FIELDS];

	if (ncpu < 0)
		return ncpu;
	if (job >= TLS_MAX_JOBS)
		return -EINVAL;
	buf = calloc((size_t)ncpu * nfields, sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	err = lookup_one(m->job_stats, job, buf, ncpu, nfields, s);
	if (!err)
		memcpy(sum, s, sizeof(*sum));
	free(buf);
	return err;
}

static void store_sum(__u32 job, const void *sum, void *ctx)
{
	struct tls_job_stats *out = ctx;

	memcpy(&out[job], sum, sizeof(*out));
}

int tls_read_jobs_stats(const struct tls_maps *m, __u32 last, struct tls_job_stats *sum)
{
	struct tls_job_counters *r;
	int err;

	if (last >= TLS_MAX_JOBS)
		return -EINVAL;
	err = tls_job_counters_new(TLS_COUNTERS_OUT, &r);
	if (err)
		return err;
	memset(sum, 0, ((size_t)last + 1) * sizeof(*sum));
	for (__u32 j = 0; j <= last; j++)
		tls_job_counters_want(r, j);
	err = tls_job_counters_read(r, m, store_sum, sum);
	tls_job_counters_free(r);
	return err;
}

int tls_reset_job_stats(const struct tls_maps *m, __u32 job)
{
	return tls_job_counters_zero(m, TLS_COUNTERS_OUT, job);
}
