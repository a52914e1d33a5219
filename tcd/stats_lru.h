/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One of the LRU flow maps (map_batch.h: tls_flows, tls_flows_in) as the
 * samplers read it. A reading scans all of the map's 65536 buckets, 1 MB,
 * cold, whatever it holds: so while the map is quiet (no record active since
 * the reading before, none moved in or out by the classifier since:
 * tls_flow_map_moves()) it is read every quiet_ns only; and records idle for
 * prune_ns are deleted (in batches), or ended flows would fill it and make
 * every reading read 65536 records. Shared by the egress sampler
 * (stats_sampler.h) and the ingress one (stats_ingress.h).
 */
#ifndef TLS_STATS_LRU_H
#define TLS_STATS_LRU_H

#include <stdbool.h>
#include <stdint.h>

#include "classifier.h"
#include "map_batch.h"

struct tls_lru_reader;

/*
 * A record: fed by the sampler; since is when the reading before this one
 * was (a record first seen now counts from there). Returns when the record
 * was last active, for the map's quiet and its records' pruning.
 */
typedef uint64_t (*tls_lru_record_fn)(const struct tls_flow_key *k, const void *val, uint64_t since,
				      void *ctx);

struct tls_lru_opts {
	uint64_t quiet_ns; /* 0: read at every call */
	uint64_t prune_ns; /* 0: never delete */
	uint64_t slack_ns; /* the packets' clock granularity */
};

int tls_lru_reader_new(enum tls_flow_map which, tls_lru_record_fn record, void *ctx,
		       struct tls_lru_reader **out);
void tls_lru_reader_free(struct tls_lru_reader *r);
/*
 * Read the map at now unless it is quiet and quiet_ns has not passed since
 * the last reading (*read says which). 0 or -errno of the reading (the
 * records read before an error were fed; a failed reading does not count
 * as one: the next reading, a quiet period later, starts from the same
 * since).
 */
int tls_lru_read(struct tls_lru_reader *r, const struct tls_maps *m, const struct tls_lru_opts *o,
		 uint64_t now, bool *read);

struct tls_lru_info {
	uint64_t reads;
	uint64_t pruned;
};
void tls_lru_info(const struct tls_lru_reader *r, struct tls_lru_info *out);

#endif /* TLS_STATS_LRU_H */
