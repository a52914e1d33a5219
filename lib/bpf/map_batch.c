// SPDX-License-Identifier: GPL-2.0-only
/* Reading a BPF hash map whole (map_batch.h). */
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
