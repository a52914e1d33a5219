/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The per-job per-CPU counters, egress (tls_job_stats) and ingress
 * (tls_job_in), read the one way: the jobs wanted are marked, then read in
 * batch lookups over runs of nearby ids (a run may include a few ids not
 * wanted: reading an entry costs a tenth of a syscall), one lookup a job
 * where the kernel has no batch operations on arrays (before 5.6): 64 jobs
 * cost 8 us instead of 20. The
 * statistics samplers read every tick with one reader each; the CLI and
 * the metrics read once.
 */
#ifndef TLS_JOB_COUNTERS_H
#define TLS_JOB_COUNTERS_H

#include <stdbool.h>
#include <linux/types.h>

#include "classifier.h"

enum tls_counters {
	TLS_COUNTERS_OUT, /* tls_job_stats: what the classifier sent */
	TLS_COUNTERS_IN,  /* tls_job_in: what the ingress counter received */
};

struct tls_job_counters;

/* A job's counters summed over the CPUs: a struct tls_job_stats or a
 * struct tls_job_in, as the reader's kind. */
typedef void (*tls_job_counters_cb)(__u32 job, const void *sum, void *ctx);

int tls_job_counters_new(enum tls_counters which, struct tls_job_counters **out);
void tls_job_counters_free(struct tls_job_counters *r);
/* Mark a job to read (ids >= TLS_MAX_JOBS are ignored, duplicates read once). */
void tls_job_counters_want(struct tls_job_counters *r, __u32 job);
/*
 * Read the jobs marked, in ascending id, each to cb; the marks are cleared.
 * A job whose read fails is left out and the others still read. 0, the
 * first error, or -EBADF if the maps have no counters of this kind (the
 * ingress counter is not loaded).
 */
int tls_job_counters_read(struct tls_job_counters *r, const struct tls_maps *m,
			  tls_job_counters_cb cb, void *ctx);
/* Whether batch lookups still serve (false once the kernel refused one). */
bool tls_job_counters_batched(const struct tls_job_counters *r);
/* Zero a job's counters of this kind: a fresh id must not inherit a
 * previous job's. -EBADF as above. */
int tls_job_counters_zero(const struct tls_maps *m, enum tls_counters which, __u32 job);

#endif /* TLS_JOB_COUNTERS_H */
