/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The flows of live PS sockets, from the classifier's socket-storage
 * iterator (tls_dump_sk_flows): the one reader of it. Its link is made
 * once and kept across readings (the sampler reads every tick), and it is
 * read 64 KB at a time, a few hundred records a read(), not one.
 */
#ifndef TLS_SK_FLOWS_H
#define TLS_SK_FLOWS_H

#include "classifier.h"

struct tls_sk_flows;

int tls_sk_flows_new(struct tls_sk_flows **out);
/* Closes the link too. */
void tls_sk_flows_free(struct tls_sk_flows *r);
/*
 * Every record to cb; a non-zero return from cb stops and is returned.
 * 0 with no record when the maps have no iterator (the kernel refused it:
 * the classifier then mirrors these flows into the slots). A new link
 * when the maps are not those of the last reading. -errno if a step
 * failed, which tls_sk_flows_failed() names.
 */
int tls_sk_flows_read(struct tls_sk_flows *r, const struct tls_maps *m, tls_flow_cb cb, void *ctx);
/* The step of the last failure: "iterator link", "iterator" or "read". */
const char *tls_sk_flows_failed(const struct tls_sk_flows *r);

#endif /* TLS_SK_FLOWS_H */
