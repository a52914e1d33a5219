// SPDX-License-Identifier: GPL-2.0-only
/* The socket-storage flow iterator's reader (sk_flows.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sk_flows.h"

#define ITER_BUF (64 * 1024)

struct tls_sk_flows {
	/* the iterator link, and the program and map it was made for */
	int link, link_prog, link_map;
	const char *failed;
	char *buf; /* ITER_BUF */
};

int tls_sk_flows_new(struct tls_sk_flows **out)
{
	struct tls_sk_flows *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (r)
		r->buf = malloc(ITER_BUF);
	if (!r || !r->buf) {
		free(r);
		return -ENOMEM;
	}
	r->link = -1;
	r->failed = "";
	*out = r;
	return 0;
}

void tls_sk_flows_free(struct tls_sk_flows *r)
{
	if (!r)
		return;
	if (r->link >= 0)
		close(r->link);
	free(r->buf);
	free(r);
}

const char *tls_sk_flows_failed(const struct tls_sk_flows *r)
{
	return r->failed;
}

static int fail(struct tls_sk_flows *r, const char *step)
{
	int err = -errno;

	r->failed = step;
	return err;
}

/* The link for these maps, made again if they are not the last ones. */
static int link_for(struct tls_sk_flows *r, const struct tls_maps *m)
{
	union bpf_iter_link_info li = { .map = { .map_fd = m->sk_jobs } };
	DECLARE_LIBBPF_OPTS(bpf_link_create_opts, lo, .iter_info = &li,
			    .iter_info_len = sizeof(li));

	if (r->link >= 0 && r->link_prog == m->sk_iter && r->link_map == m->sk_jobs)
		return 0;
	if (r->link >= 0)
		close(r->link);
	r->link = bpf_link_create(m->sk_iter, 0, BPF_TRACE_ITER, &lo);
	if (r->link < 0) {
		int err = fail(r, "iterator link");

		r->link = -1;
		return err;
	}
	r->link_prog = m->sk_iter;
	r->link_map = m->sk_jobs;
	return 0;
}

int tls_sk_flows_read(struct tls_sk_flows *r, const struct tls_maps *m, tls_flow_cb cb, void *ctx)
{
	size_t have = 0;
	ssize_t n;
	int it, ret;

	if (m->sk_iter < 0)
		return 0; /* maps opened without the iterator: none here */
	ret = link_for(r, m);
	if (ret)
		return ret;
	it = bpf_iter_create(r->link);
	if (it < 0)
		return fail(r, "iterator");
	/* whole records, however the reads cut them */
	while (!ret && (n = read(it, r->buf + have, ITER_BUF - have)) > 0) {
		size_t off = 0;

		have += n;
		for (; !ret && have - off >= sizeof(struct tls_flow_rec);
		     off += sizeof(struct tls_flow_rec)) {
			struct tls_flow_rec rec;

			memcpy(&rec, r->buf + off, sizeof(rec));
			ret = cb(&rec.key, &rec.flow, ctx);
		}
		memmove(r->buf, r->buf + off, have - off);
		have -= off;
	}
	if (!ret && n < 0)
		ret = fail(r, "read");
	close(it);
	return ret;
}
