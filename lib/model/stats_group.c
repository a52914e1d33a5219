// SPDX-License-Identifier: GPL-2.0-only
/*
 * Who counts in a job's n (see stats_group.h).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "stats_group.h"

static int item_cmp(const void *pa, const void *pb)
{
	const struct tls_group_item *a = pa, *b = pb;

	if (a->job != b->job)
		return a->job < b->job ? -1 : 1;
	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	return memcmp(a->addr, b->addr, sizeof(a->addr));
}

static bool in_order(const struct tls_group_item *it, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (item_cmp(&it[i - 1], &it[i]) > 0)
			return false;
	return true;
}

void tls_group_hosts(struct tls_group_item *it, size_t n, uint32_t *hosts)
{
	memset(hosts, 0, TLS_MAX_JOBS * sizeof(*hosts));
	/* callers that keep the last order hand it in sorted: a look, no sort */
	if (!in_order(it, n))
		qsort(it, n, sizeof(*it), item_cmp);
	for (size_t i = 0; i < n;) {
		size_t e = i + 1;
		uint64_t sum = it[i].delta;

		while (e < n && !item_cmp(&it[i], &it[e]))
			sum += it[e++].delta;
		if (it[i].job < TLS_MAX_JOBS)
			hosts[it[i].job]++;
		for (; i < e; i++)
			it[i].share = sum ? (double)it[i].delta / sum : 1.0;
	}
}

void tls_group_burst(uint64_t *iter_ns, uint64_t *last_ns, uint64_t start_ns, uint64_t idle_ns)
{
	if (*last_ns && start_ns > *last_ns && start_ns - *last_ns < idle_ns) {
		uint64_t d = start_ns - *last_ns;

		if (!*iter_ns)
			*iter_ns = d;
		else if (d > *iter_ns)
			*iter_ns += (d - *iter_ns) / 4;
		else
			*iter_ns -= (*iter_ns - d) / 4;
	}
	*last_ns = start_ns;
}

uint64_t tls_group_window(uint64_t window_ns, uint64_t min_ns, uint64_t iter_ns)
{
	if (window_ns)
		return window_ns;
	return 2 * iter_ns > min_ns ? 2 * iter_ns : min_ns;
}
