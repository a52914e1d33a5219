// SPDX-License-Identifier: GPL-2.0-only
/* Notifications of changes to tlsd's interface and tc objects: tree_watch.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "kernel_features.h"
#include "tree_watch.h"

/* Room for bursts: a host where containers come and go sends many link
 * notifications, and a full buffer loses ours with the rest. */
#define RCVBUF_BYTES (1 << 20)
/* recv()s per tls_tw_read: the loop has other work; epoll calls again. */
#define MAX_RECVS 16

struct tls_tw {
	struct mnl_socket *nl;
	char *buf;
};

/* The string attribute of type `type` at the top level of nlh's payload
 * after `hdrlen`, if it is NUL-terminated within `max` bytes; else NULL. */
static const char *string_attr(const struct nlmsghdr *nlh, size_t hdrlen, uint16_t type, size_t max)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, hdrlen)
	{
		const char *s;
		uint16_t len;

		if (mnl_attr_get_type(a) != type)
			continue;
		len = mnl_attr_get_payload_len(a);
		s = mnl_attr_get_payload(a);
		if (!len || len > max || !memchr(s, '\0', len))
			return NULL;
		return s;
	}
	return NULL;
}

static unsigned int decode_link(const struct nlmsghdr *nlh, const struct tls_tree_target *t)
{
	const struct ifinfomsg *ifi;
	const char *name;
	bool ours_by_name;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return 0;
	ifi = mnl_nlmsg_get_payload(nlh);
	/* A bridge's port messages (AF_BRIDGE) share the group: not the link's
	 * life. */
	if (ifi->ifi_family != AF_UNSPEC)
		return 0;
	name = string_attr(nlh, sizeof(*ifi), IFLA_IFNAME, IF_NAMESIZE);
	ours_by_name = name && !strcmp(name, t->ifname);
	if (t->ifindex && ifi->ifi_index == t->ifindex) {
		if (nlh->nlmsg_type == RTM_DELLINK)
			return TLS_TW_LINK_GONE;
		/* renamed: tlsd is configured by name, and that name is gone */
		return name && !ours_by_name ? TLS_TW_LINK_GONE : TLS_TW_LINK_CHANGED;
	}
	if (nlh->nlmsg_type == RTM_NEWLINK && ours_by_name)
		return TLS_TW_LINK_BACK;
	return 0;
}

static unsigned int decode_tc(const struct nlmsghdr *nlh, const struct tls_tree_target *t)
{
	const uint32_t egress = TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS);
	/* the ingress counter's filter, if tlsd has one, is judged alike */
	const uint32_t ingress = t->in_prog_id ? TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS) : egress;
	const struct tcmsg *tcm;
	const char *kind;
	uint32_t prio;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*tcm)))
		return 0;
	tcm = mnl_nlmsg_get_payload(nlh);
	/* A shared block's messages carry TCM_IFINDEX_MAGIC_BLOCK, never an
	 * interface's index: tlsd attaches none. */
	if (!t->ifindex || tcm->tcm_ifindex != t->ifindex)
		return 0;
	if (t->own_portid && nlh->nlmsg_pid == t->own_portid)
		return 0;
	kind = string_attr(nlh, sizeof(*tcm), TCA_KIND, IFNAMSIZ);
	prio = TC_H_MAJ(tcm->tcm_info) >> 16;
	switch (nlh->nlmsg_type) {
	case RTM_DELQDISC:
		if (tcm->tcm_parent == TC_H_ROOT && tcm->tcm_handle == t->root_handle)
			return TLS_TW_ROOT_GONE;
		if (tcm->tcm_parent == TC_H_CLSACT)
			return TLS_TW_CLSACT_GONE;
		return 0;
	case RTM_NEWQDISC:
		/* tlsd's own build announces its own HTB: nothing to see */
		if (tcm->tcm_parent == TC_H_ROOT &&
		    (tcm->tcm_handle != t->root_handle || !kind || strcmp(kind, "htb")))
			return TLS_TW_ROOT_OTHER;
		return 0;
	case RTM_DELTCLASS:
		return TC_H_MAJ(tcm->tcm_handle) == t->root_handle ? TLS_TW_CLASS_GONE : 0;
	case RTM_DELTFILTER:
		/* prio 0: every priority (`tc filter del dev X egress`);
		 * handle 0: the whole priority */
		if ((tcm->tcm_parent == egress || tcm->tcm_parent == ingress) &&
		    (!prio || prio == t->filter_prio) &&
		    (!tcm->tcm_handle || tcm->tcm_handle == t->filter_handle))
			return TLS_TW_FILTER_GONE;
		return 0;
	case RTM_NEWTFILTER:
		if ((tcm->tcm_parent == egress || tcm->tcm_parent == ingress) &&
		    prio == t->filter_prio && tcm->tcm_handle == t->filter_handle)
			return TLS_TW_FILTER_NEW;
		return 0;
	}
	return 0;
}

unsigned int tls_tw_decode(const struct nlmsghdr *nlh, const struct tls_tree_target *t)
{
	switch (nlh->nlmsg_type) {
	case RTM_NEWLINK:
	case RTM_DELLINK:
		return decode_link(nlh, t);
	case RTM_NEWQDISC:
	case RTM_DELQDISC:
	case RTM_DELTCLASS:
	case RTM_NEWTFILTER:
	case RTM_DELTFILTER:
		return decode_tc(nlh, t);
	}
	return 0; /* classes added or changed, chains, errors, ... */
}

unsigned int tls_tw_decode_buf(const void *buf, size_t len, const struct tls_tree_target *t)
{
	const struct nlmsghdr *nlh = buf;
	int left = len > (size_t)INT32_MAX ? INT32_MAX : (int)len;
	unsigned int ev = 0;

	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left))
		ev |= tls_tw_decode(nlh, t);
	return ev;
}

const char *tls_tw_describe(unsigned int ev, char *buf, size_t len)
{
	static const char *const names[] = {
		"root qdisc deleted", "another root qdisc", "class deleted", "clsact deleted",
		"filter deleted",     "filter added",	    "link gone",     "link back",
		"link changed",	      "notifications lost",
	};
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && off < len; i++)
		if (ev & (1U << i))
			off += snprintf(buf + off, len - off, "%s%s", off ? ", " : "", names[i]);
	return buf;
}

int tls_tw_open(struct tls_tw **out)
{
	static unsigned int groups[] = { RTNLGRP_LINK, RTNLGRP_TC };
	struct tls_tw *w = calloc(1, sizeof(*w));
	const char *stage = "socket";
	int err = 0, sz = RCVBUF_BYTES;

	if (!w)
		return -ENOMEM;
	w->buf = malloc(MNL_SOCKET_BUFFER_SIZE);
	w->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!w->buf || !w->nl) {
		err = w->buf ? -errno : -ENOMEM;
		goto fail;
	}
	stage = "bind";
	if (mnl_socket_bind(w->nl, 0, MNL_SOCKET_AUTOPID)) {
		err = -errno;
		goto fail;
	}
	stage = "subscription";
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (mnl_socket_setsockopt(w->nl, NETLINK_ADD_MEMBERSHIP, &groups[i],
					  sizeof(groups[i]))) {
			err = -errno;
			goto fail;
		}
	/* Past rmem_max as root (FORCE); the default otherwise: not fatal. */
	if (setsockopt(mnl_socket_get_fd(w->nl), SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(mnl_socket_get_fd(w->nl), SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	tls_feature_set(TLS_FEAT_RTNL_WATCH, TLS_FEAT_AVAILABLE);
	*out = w;
	return 0;
fail:
	tls_feature_fail(TLS_FEAT_RTNL_WATCH, stage, err ? err : -EIO);
	tls_tw_close(w);
	return err ? err : -EIO;
}

int tls_tw_fd(const struct tls_tw *w)
{
	return mnl_socket_get_fd(w->nl);
}

unsigned int tls_tw_read(struct tls_tw *w, const struct tls_tree_target *t)
{
	unsigned int ev = 0;

	for (int i = 0; i < MAX_RECVS; i++) {
		ssize_t n = recv(mnl_socket_get_fd(w->nl), w->buf, MNL_SOCKET_BUFFER_SIZE, 0);

		if (n < 0 && errno == ENOBUFS) {
			ev |= TLS_TW_OVERRUN; /* the socket goes on after it */
			continue;
		}
		if (n <= 0)
			break; /* EAGAIN: all read */
		ev |= tls_tw_decode_buf(w->buf, (size_t)n, t);
	}
	return ev;
}

void tls_tw_close(struct tls_tw *w)
{
	if (!w)
		return;
	if (w->nl)
		mnl_socket_close(w->nl);
	free(w->buf);
	free(w);
}

void tls_tw_probe(void)
{
	struct tls_tw *w;

	/* tls_tw_open records the feature */
	if (tls_tw_open(&w) == 0)
		tls_tw_close(w);
}
