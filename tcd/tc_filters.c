// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <linux/pkt_sched.h>

#include <netlink/netlink.h>
#include <netlink/route/classifier.h>

#include "tc_filters.h"

static int count_at(struct nl_sock *sk, int ifindex, uint32_t parent)
{
	struct nl_cache *cache;
	int err, n;

	err = rtnl_cls_alloc_cache(sk, ifindex, parent, &cache);
	if (err < 0)
		return err == -NLE_OBJ_NOTFOUND || err == -NLE_NODEV ? 0 : -EIO;
	n = nl_cache_nitems(cache);
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
