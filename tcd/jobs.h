/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The job table: jobs in arrival order, each with the id the classifier
 * knows it by. Pure bookkeeping (no I/O), so that static jobs now and
 * discovered jobs later share one add/remove API.
 */
#ifndef TLS_JOBS_H
#define TLS_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "tls_common.h"

struct tls_job_entry {
	uint32_t id; /* 1..TLS_MAX_JOBS-1 */
	char name[TLS_JOB_NAME_MAX];
	unsigned int nports;
	uint16_t ports[TLS_MAX_JOB_PORTS];
	bool discovered; /* by tcd/discover (set by the daemon), not from the file */
	/* Its band as tlsd last wrote it (TLS_BAND_NONE before the first
	 * write) and how often a write moved it (the metrics' rotations). */
	uint32_t band;
	uint64_t band_changes;
	/* policy bursts: its weight in the order's fair share as tlsd last
	 * wrote it for the running program (0: not yet; tlsd_bursts.c) */
	uint32_t weight;
};

struct tls_jobs {
	unsigned int n;
	struct tls_job_entry job[TLS_MAX_JOBS - 1]; /* arrival order */
	uint32_t next_id;			    /* ids are handed out round-robin: a freed id is
						     * reused as late as possible, after its counters
						     * have long been read */
	/* jobs added or removed so far (the state file is written again
	 * when it moves) */
	unsigned long changes;
};

void tls_jobs_init(struct tls_jobs *t);
/* Append a job; its id in *id. -EEXIST if the name is taken, -ENOSPC if full. */
int tls_jobs_add(struct tls_jobs *t, const char *name, const uint16_t *ports, unsigned int nports,
		 uint32_t *id);
/* Append a job with a given id (a takeover keeps a job's id); -EBUSY if the
 * id is in use. */
int tls_jobs_add_id(struct tls_jobs *t, const char *name, const uint16_t *ports,
		    unsigned int nports, uint32_t id);
/* Remove by name, keeping the others' order; its id in *id. -ENOENT if none. */
int tls_jobs_remove(struct tls_jobs *t, const char *name, uint32_t *id);
/* Index in arrival order of a job name, or -1. */
int tls_jobs_find(const struct tls_jobs *t, const char *name);
/* Index in arrival order of a job id, or -1. */
int tls_jobs_find_id(const struct tls_jobs *t, uint32_t id);
/* The bands just written for the jobs in arrival order (bands[i] for
 * t->job[i]): a job moved to another band counts a band change. */
void tls_jobs_note_bands(struct tls_jobs *t, const unsigned int *bands);

#endif /* TLS_JOBS_H */
