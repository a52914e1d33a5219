// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <linux/pkt_sched.h>

#include <netlink/netlink.h>
#include <netlink/route/classifier.h>

#include "tc_filters.h"

/*
 * A filter is what `tc filter add` made: one (protocol, priority) at the
 * parent. A dump lists more than that (u32 reports its hash table and each
 * key apart), so its entries are counted by their (protocol, priority).
 */
static int count_at(struct nl_sock *sk, int ifindex, uint32_t parent)
{
	uint32_t seen[64];
	struct nl_cache *cache;
	struct nl_object *o;
	int err, n = 0, i;

	err = rtnl_cls_alloc_cache(sk, ifindex, parent, &cache);
	if (err < 0)
		return err == -NLE_OBJ_NOTFOUND || err == -NLE_NODEV ? 0 : -EIO;
	for (o = nl_cache_get_first(cache); o; o = nl_cache_get_next(o)) {
		struct rtnl_cls *f = (struct rtnl_cls *)o;
		uint32_t id = (uint32_t)rtnl_cls_get_prio(f) << 16 | rtnl_cls_get_protocol(f);

		for (i = 0; i < n && seen[i] != id; i++)
			;
		if (i == n && n < (int)(sizeof(seen) / sizeof(seen[0])))
			seen[n++] = id;
	}
	nl_cache_free(cache);
	return n;
}

int tls_clsact_filters(int ifindex)
{
	struct nl_sock *sk = nl_socket_alloc();
	int in, eg;

	if (!sk)
		return -ENOMEM;
	if (nl_connect(sk, NETLINK_ROUTE)) {
		nl_socket_free(sk);
		return -EIO;
	}
	in = count_at(sk, ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS));
	eg = count_at(sk, ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS));
	nl_socket_free(sk);
	if (in < 0)
		return in;
	return eg < 0 ? eg : in + eg;
}
