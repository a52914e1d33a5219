// SPDX-License-Identifier: GPL-2.0-only
/* Reading an LRU flow map when it is due, and pruning it (stats_lru.h). */
#include <errno.h>
#include <stdlib.h>

#include "stats_lru.h"

#define BATCH 1024

struct tls_lru_reader {
	enum tls_flow_map which;
	tls_lru_record_fn record;
	void *ctx;
	const struct tls_maps *m; /* during a reading */
	const struct tls_lru_opts *o;
	uint64_t now;
	uint64_t read_ns; /* the last reading, 0: none */
	uint64_t since;	  /* the reading before this one */
	bool busy;	  /* the last reading showed a record active since the one before */
	bool seen_busy;	  /* this reading so far */
	bool walk;	  /* no batch lookups on this kernel */
	uint64_t moves;	  /* tls_flow_map_moves() at the last reading */
	uint64_t fail_ns; /* the last failed reading, 0: the last one did not fail */
	unsigned int nstale;
	struct tls_lru_info info;
	struct tls_flow_key keys[BATCH];
	struct tls_flow_key stale[BATCH];
	/* BATCH values of the larger kind */
	union {
		struct tls_flow out[BATCH];
		struct tls_flow_in in[BATCH];
	} vals;
};

int tls_lru_reader_new(enum tls_flow_map which, tls_lru_record_fn record, void *ctx,
		       struct tls_lru_reader **out)
{
	struct tls_lru_reader *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->which = which;
	r->record = record;
	r->ctx = ctx;
	*out = r;
	return 0;
}

void tls_lru_reader_free(struct tls_lru_reader *r)
{
	free(r);
}

/* Delete the stale records collected so far. */
static void prune(struct tls_lru_reader *r)
{
	r->info.pruned += tls_flow_map_delete(r->m, r->which, r->stale, r->nstale);
	r->nstale = 0;
}

static void one(const void *key, const void *val, void *ctx)
{
	struct tls_lru_reader *r = ctx;
	uint64_t last = r->record(key, val, r->since, r->ctx);

	if (last + r->o->slack_ns >= r->since)
		r->seen_busy = true;
	if (r->o->prune_ns && last + r->o->prune_ns < r->now) {
		r->stale[r->nstale++] = *(const struct tls_flow_key *)key;
		if (r->nstale == BATCH)
			prune(r);
	}
}

int tls_lru_read(struct tls_lru_reader *r, const struct tls_maps *m, const struct tls_lru_opts *o,
		 uint64_t now, bool *read)
{
	uint64_t moves = tls_flow_map_moves(m, r->which);
	int err;

	*read = false;
	if (r->read_ns && !r->busy && moves == r->moves && o->quiet_ns &&
	    now - r->read_ns < o->quiet_ns)
		return 0; /* quiet, nothing moved: not yet */
	/* A reading that failed (its records after the error not read) is
	 * tried again at the quiet cadence, not at every call: a map that
	 * keeps failing costs a 1 MB scan a quiet period, not a tick. */
	if (r->fail_ns && o->quiet_ns && now - r->fail_ns < o->quiet_ns)
		return 0;
	r->m = m;
	r->o = o;
	r->now = now;
	r->since = r->read_ns ? r->read_ns : now;
	r->seen_busy = false;
	r->nstale = 0;
	err = tls_flow_map_read(m, r->which, r->keys, &r->vals, BATCH, &r->walk, one, r);
	prune(r);
	*read = true;
	if (err) {
		r->fail_ns = now ? now : 1; /* the records not read: again, from the same since */
		return err;
	}
	r->fail_ns = 0;
	r->busy = r->seen_busy;
	r->read_ns = now;
	r->moves = moves;
	r->info.reads++;
	return 0;
}

void tls_lru_info(const struct tls_lru_reader *r, struct tls_lru_info *out)
{
	*out = r->info;
}
