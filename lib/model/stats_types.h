/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Worker addresses to instance types, and B_req per type (issue 17,
 * Deliver 4): spotDNN's instance_bandwith is per instance type in its
 * model (a p2.8xlarge's 8 workers pull more than a p2.xlarge's one).
 *
 * The mapping is tlsd's own format, one worker host a line:
 *
 *     # ADDRESS TYPE
 *     198.18.0.2 p2.xlarge
 *     fd00::3    g4dn.4xlarge
 *
 * blank lines and #-comments ignored; TYPE as spotDNN's instance_type
 * names it (no spaces). An address given twice is an error.
 */
#ifndef TLS_STATS_TYPES_H
#define TLS_STATS_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "stats.h"

#define TLS_TYPE_NAME_MAX 64

struct tls_type_map_entry {
	uint8_t family;
	uint8_t addr[16];
	char type[TLS_TYPE_NAME_MAX];
};

struct tls_type_map {
	struct tls_type_map_entry *e;
	size_t n;
};

/* Parse text; 0, or -EINVAL with "line N: ..." in err, or -ENOMEM. */
int tls_type_map_parse(const char *text, struct tls_type_map *m, char *err, size_t errlen);
void tls_type_map_free(struct tls_type_map *m);
/* The type of a flow's worker (its remote address); NULL if not mapped. */
const char *tls_type_of(const struct tls_type_map *m, const struct tls_flow_key *k);

struct tls_type_b_req {
	char type[TLS_TYPE_NAME_MAX];
	unsigned int hosts; /* worker hosts of the type with a known uncontended rate */
	double b_req;	    /* B/s, their mean; NaN if none */
};

/*
 * B_req per type from the worker flows fl[0..n): a host's uncontended rate
 * is the sum of its flows' (each flow's bytes over its time while the link
 * was not saturated: its flows run together, as its workers do), a type's
 * the mean over its hosts. One entry per type of the map, in the map's
 * order of first appearance, in *out (malloc'ed, *nout). Flows of hosts
 * not in the map count in *unmapped. 0 or -ENOMEM.
 */
int tls_type_b_req(const struct tls_type_map *m, const struct tls_stats_flow_info *fl, size_t n,
		   struct tls_type_b_req **out, size_t *nout, size_t *unmapped);

#endif /* TLS_STATS_TYPES_H */
