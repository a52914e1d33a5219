// SPDX-License-Identifier: GPL-2.0-only
/*
 * Worker addresses to instance types, B_req per type (see stats_types.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "stats_types.h"

static const struct tls_type_map_entry *find(const struct tls_type_map *m, uint8_t family,
					     const uint8_t *addr)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].family == family && !memcmp(m->e[i].addr, addr, 16))
			return &m->e[i];
	return NULL;
}

/* One line: "" (nothing), or ADDRESS TYPE into e. */
static int parse_line(char *line, unsigned int no, struct tls_type_map_entry *e, bool *got,
		      char *err, size_t errlen)
{
	char *hash = strchr(line, '#'), *addr, *type, *extra, *save;

	*got = false;
	if (hash)
		*hash = '\0';
	addr = strtok_r(line, " \t\r", &save);
	if (!addr)
		return 0;
	type = strtok_r(NULL, " \t\r", &save);
	extra = type ? strtok_r(NULL, " \t\r", &save) : NULL;
	memset(e, 0, sizeof(*e));
	if (inet_pton(AF_INET, addr, e->addr) == 1)
		e->family = AF_INET;
	else if (inet_pton(AF_INET6, addr, e->addr) == 1)
		e->family = AF_INET6;
	else
		goto bad_addr;
	if (!type || extra || strlen(type) >= sizeof(e->type)) {
		snprintf(err, errlen,
			 "line %u: not ADDRESS TYPE (one instance type name of at "
			 "most %d characters)",
			 no, TLS_TYPE_NAME_MAX - 1);
		return -EINVAL;
	}
	strcpy(e->type, type);
	*got = true;
	return 0;
bad_addr:
	snprintf(err, errlen, "line %u: '%s' is not an IPv4 or IPv6 address", no, addr);
	return -EINVAL;
}

int tls_type_map_parse(const char *text, struct tls_type_map *m, char *err, size_t errlen)
{
	char *copy = strdup(text), *line, *save = NULL;
	unsigned int no = 0;
	int ret = 0;

	m->e = NULL;
	m->n = 0;
	if (!copy)
		return -ENOMEM;
	for (line = strtok_r(copy, "\n", &save); line && !ret; line = strtok_r(NULL, "\n", &save)) {
		struct tls_type_map_entry e, *grown;
		bool got;

		no++;
		ret = parse_line(line, no, &e, &got, err, errlen);
		if (ret || !got)
			continue;
		if (find(m, e.family, e.addr)) {
			snprintf(err, errlen, "line %u: address given twice", no);
			ret = -EINVAL;
			break;
		}
		grown = realloc(m->e, (m->n + 1) * sizeof(*m->e));
		if (!grown) {
			ret = -ENOMEM;
			break;
		}
		m->e = grown;
		m->e[m->n++] = e;
	}
	free(copy);
	if (ret)
		tls_type_map_free(m);
	return ret;
}

void tls_type_map_free(struct tls_type_map *m)
{
	free(m->e);
	m->e = NULL;
	m->n = 0;
}

const char *tls_type_of(const struct tls_type_map *m, const struct tls_flow_key *k)
{
	const struct tls_type_map_entry *e = find(m, k->family, k->raddr);

	return e ? e->type : NULL;
}

int tls_type_b_req(const struct tls_type_map *m, const struct tls_stats_flow_info *fl, size_t n,
		   struct tls_type_b_req **out, size_t *nout, size_t *unmapped)
{
	/* per map entry (host): its flows' uncontended rates summed */
	double *host = calloc(m->n + 1, sizeof(*host));
	struct tls_type_b_req *t = calloc(m->n + 1, sizeof(*t));
	size_t nt = 0;

	*out = NULL;
	*nout = 0;
	*unmapped = 0;
	if (!host || !t) {
		free(host);
		free(t);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->n; i++)
		host[i] = NAN;
	for (size_t i = 0; i < n; i++) {
		const struct tls_type_map_entry *e = find(m, fl[i].key.family, fl[i].key.raddr);
		size_t h;
		double r;

		if (!e) {
			(*unmapped)++;
			continue;
		}
		h = e - m->e;
		if (!fl[i].acc.unsat_ns)
			continue;
		r = fl[i].acc.unsat_bytes * 1e9 / fl[i].acc.unsat_ns;
		host[h] = isnan(host[h]) ? r : host[h] + r;
	}
	for (size_t i = 0; i < m->n; i++) {
		size_t k;

		for (k = 0; k < nt && strcmp(t[k].type, m->e[i].type); k++)
			;
		if (k == nt) {
			strcpy(t[nt].type, m->e[i].type);
			t[nt++].b_req = NAN;
		}
		if (isnan(host[i]))
			continue;
		t[k].b_req = t[k].hosts ? t[k].b_req + host[i] : host[i];
		t[k].hosts++;
	}
	for (size_t k = 0; k < nt; k++)
		if (t[k].hosts)
			t[k].b_req /= t[k].hosts;
	free(host);
	*out = t;
	*nout = nt;
	return 0;
}
