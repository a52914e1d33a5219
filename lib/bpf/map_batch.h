/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every record of a BPF hash map, read in batches (one syscall for up to
 * `batch` records) where the kernel has batch lookups on the map's type,
 * else walked (two syscalls a record). Shared by the samplers of the
 * statistics, which read their LRU flow maps every tick. And deletes in a
 * batch, else one at a time.
 */
#ifndef TLS_MAP_BATCH_H
#define TLS_MAP_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "classifier.h"

struct tls_map_batch {
	int fd;
	const char *what;  /* the map, for the one log line of a walk */
	void *keys, *vals; /* batch records each, of key_size and value_size */
	size_t key_size, value_size;
	__u32 batch;
	bool walk; /* set once the kernel refused a batch lookup */
	void (*record)(const void *key, const void *val, void *ctx);
	void *ctx;
};

/* Read fd whole into keys and vals (batch records each, at least 2),
 * each record to record(key, val, ctx); *walk as tls_map_batch.walk, kept
 * by the caller across readings. */
int tls_map_read_all(int fd, const char *what, void *keys, size_t key_size, void *vals,
		     size_t value_size, __u32 batch, bool *walk,
		     void (*record)(const void *key, const void *val, void *ctx), void *ctx);

/* 0, or -errno of the first read that failed (the records before it were
 * given to record()). */
int tls_map_batch_read(struct tls_map_batch *b);

/* The LRU flow maps, by kind. */
enum tls_flow_map {
	TLS_FLOW_MAP_OUT, /* tls_flows: struct tls_flow */
	TLS_FLOW_MAP_IN,  /* tls_flows_in: struct tls_flow_in, flows pushed out of their slot */
};

/* tls_map_read_all() on one of the maps' flow maps: keys and vals hold
 * batch records of struct tls_flow_key and of the kind's value. -EBADF if
 * the maps have no such map. */
int tls_flow_map_read(const struct tls_maps *m, enum tls_flow_map which, void *keys, void *vals,
		      __u32 batch, bool *walk,
		      void (*record)(const void *key, const void *val, void *ctx), void *ctx);

/* Delete n keys of fd in one batch, else one at a time (a key gone
 * meanwhile fails a batch, as a kernel without batch operations does).
 * Returns how many were deleted. */
unsigned int tls_map_delete_keys(int fd, const void *keys, size_t key_size, __u32 n);
/* That on one of the LRU flow maps (0 if the maps have no such map). */
unsigned int tls_flow_map_delete(const struct tls_maps *m, enum tls_flow_map which,
				 const struct tls_flow_key *keys, __u32 n);
/* How many records the slots have moved into or out of that LRU map so far
 * (TLS_FLOW_USED_ENTRIES; flow_slots.c): a reader of the map that saw it
 * quiet reads it again when this changed. 0 without the map of used sets. */
__u64 tls_flow_map_moves(const struct tls_maps *m, enum tls_flow_map which);
/* That on the egress one (tls_flows). */
unsigned int tls_delete_flows(const struct tls_maps *m, const struct tls_flow_key *keys, __u32 n);

#endif /* TLS_MAP_BATCH_H */
