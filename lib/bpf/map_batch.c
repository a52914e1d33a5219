// SPDX-License-Identifier: GPL-2.0-only
/* Reading a BPF hash map whole, deleting in batches (map_batch.h). */
#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>

#include "log.h"
#include "map_batch.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's own "not supported", which bpf() lets out */
#endif

/* The slow way: two syscalls per record, the first record's slot as the
 * buffer of both. */
static int walk(struct tls_map_batch *b)
{
	char *key = b->keys, *next = (char *)b->keys + b->key_size;
	void *prev = NULL;

	while (bpf_map_get_next_key(b->fd, prev, next) == 0) {
		if (bpf_map_lookup_elem(b->fd, next, b->vals) == 0)
			b->record(next, b->vals, b->ctx);
		memcpy(key, next, b->key_size);
		prev = key;
	}
	return errno == ENOENT ? 0 : -errno;
}

int tls_map_batch_read(struct tls_map_batch *b)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 token = 0;
	bool more = true, first = true;

	if (b->walk)
		return walk(b);
	while (more) {
		__u32 count = b->batch;
		int err = bpf_map_lookup_batch(b->fd, first ? NULL : &token, &token, b->keys,
					       b->vals, &count, &opts);

		if (err < 0)
			err = -errno;
		if (err == -ENOENT) {
			more = false; /* the last batch (count may be > 0) */
		} else if (err) {
			if (first && (err == -EINVAL || err == -EOPNOTSUPP || err == -ENOTSUPP)) {
				pr_info("stats: no batch lookups on %s (%s): walking it\n", b->what,
					strerror(-err));
				b->walk = true;
				return walk(b);
			}
			return err;
		}
		for (__u32 i = 0; i < count; i++)
			b->record((char *)b->keys + i * b->key_size,
				  (char *)b->vals + i * b->value_size, b->ctx);
		first = false;
	}
	return 0;
}

int tls_map_read_all(int fd, const char *what, void *keys, size_t key_size, void *vals,
		     size_t value_size, __u32 batch, bool *walk,
		     void (*record)(const void *key, const void *val, void *ctx), void *ctx)
{
	struct tls_map_batch b = {
		.fd = fd,
		.what = what,
		.keys = keys,
		.vals = vals,
		.key_size = key_size,
		.value_size = value_size,
		.batch = batch,
		.walk = *walk,
		.record = record,
		.ctx = ctx,
	};
	int err = tls_map_batch_read(&b);

	*walk = b.walk;
	return err;
}

int tls_flow_map_read(const struct tls_maps *m, enum tls_flow_map which, void *keys, void *vals,
		      __u32 batch, bool *walk,
		      void (*record)(const void *key, const void *val, void *ctx), void *ctx)
{
	bool in = which == TLS_FLOW_MAP_IN;
	int fd = in ? m->flows_in : m->flows;

	if (fd < 0)
		return -EBADF;
	return tls_map_read_all(fd, in ? "the ingress flow map" : "the flow map", keys,
				sizeof(struct tls_flow_key), vals,
				in ? sizeof(struct tls_flow_in) : sizeof(struct tls_flow), batch,
				walk, record, ctx);
}

unsigned int tls_map_delete_keys(int fd, const void *keys, size_t key_size, __u32 n)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	unsigned int gone = 0;
	__u32 count = n;

	if (!n)
		return 0;
	if (bpf_map_delete_batch(fd, keys, &count, &opts) == 0)
		return count;
	/* One went in between (LRU eviction, the classifier), or no batch
	 * operations: each one. The count a failed batch leaves is not
	 * trusted: a kernel without the command never wrote it. */
	for (__u32 i = 0; i < n; i++)
		if (!bpf_map_delete_elem(fd, (const char *)keys + i * key_size))
			gone++;
	return gone;
}

unsigned int tls_flow_map_delete(const struct tls_maps *m, enum tls_flow_map which,
				 const struct tls_flow_key *keys, __u32 n)
{
	int fd = which == TLS_FLOW_MAP_IN ? m->flows_in : m->flows;

	return fd < 0 ? 0 : tls_map_delete_keys(fd, keys, sizeof(*keys), n);
}

unsigned int tls_delete_flows(const struct tls_maps *m, const struct tls_flow_key *keys, __u32 n)
{
	return tls_flow_map_delete(m, TLS_FLOW_MAP_OUT, keys, n);
}
