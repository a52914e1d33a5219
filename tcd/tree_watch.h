/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Notice tlsd's interface, tree and filter changing: a NETLINK_ROUTE socket
 * subscribed to RTNLGRP_LINK and RTNLGRP_TC in tlsd's network namespace, and
 * the pure decoding of each notification into what it may mean for tlsd
 * (tls_tw_decode, driven by the unit tests with crafted messages).
 *
 * The events are hints, never the truth: tlsd's own changes cause the same
 * notifications, and one change (a `tc qdisc replace`) causes several. tlsd
 * waits for a burst to settle and then looks at the actual state
 * (tc_state.h), which alone decides whether anything is healed.
 */
#ifndef TLS_TREE_WATCH_H
#define TLS_TREE_WATCH_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

struct nlmsghdr;

/* What tlsd's tree is, where: what the notifications and the state are
 * judged against. */
struct tls_tree_target {
	char ifname[IF_NAMESIZE];
	int ifindex;		/* 0 while the interface is absent */
	uint32_t root_handle;	/* the HTB root qdisc's handle, MAJ:0; 0: none (observe) */
	uint32_t filter_handle; /* the classifier's filter on clsact egress */
	uint32_t filter_prio;
	uint32_t prog_id;   /* the classifier's BPF program */
	/* the ingress counter's, at the same handle and priority on clsact
	 * ingress; 0: none attached (not checked) */
	uint32_t in_prog_id;
	unsigned int bands; /* classes expected: MAJ:1, MAJ:10.., MAJ:ff */
	/* tlsd's own questions about the state (tc_state.h): what they cause
	 * is no news; 0: none */
	uint32_t own_portid;
};

/* Events, OR-ed over the messages of a burst. */
enum tls_tw_event {
	TLS_TW_ROOT_GONE = 1 << 0,    /* tlsd's root qdisc deleted (or replaced) */
	TLS_TW_ROOT_OTHER = 1 << 1,   /* another root qdisc on tlsd's interface */
	TLS_TW_CLASS_GONE = 1 << 2,   /* a class of tlsd's tree deleted */
	TLS_TW_CLSACT_GONE = 1 << 3,  /* the clsact (ingress) qdisc deleted */
	TLS_TW_FILTER_GONE = 1 << 4,  /* filters at tlsd's egress priority deleted */
	TLS_TW_FILTER_NEW = 1 << 5,   /* a filter added at tlsd's handle and priority */
	TLS_TW_LINK_GONE = 1 << 6,    /* tlsd's interface deleted or renamed */
	TLS_TW_LINK_BACK = 1 << 7,    /* an interface of tlsd's name at another index */
	TLS_TW_LINK_CHANGED = 1 << 8, /* tlsd's interface changed (state, speed, ...) */
	TLS_TW_OVERRUN = 1 << 9,      /* notifications were lost: check everything */
};

/* One message: the events it means for t (0: nothing of tlsd's). Never reads
 * past nlh->nlmsg_len, which the caller has checked against what it holds. */
unsigned int tls_tw_decode(const struct nlmsghdr *nlh, const struct tls_tree_target *t);
/* Every message in buf (one recv), OR-ed; a truncated tail is ignored. */
unsigned int tls_tw_decode_buf(const void *buf, size_t len, const struct tls_tree_target *t);
/* "root qdisc deleted, filter deleted" for a log line; returns buf. */
const char *tls_tw_describe(unsigned int events, char *buf, size_t len);

struct tls_tw;

/* The socket, in the calling thread's network namespace, non-blocking.
 * Records kernel feature rtnl_watch (available, or missing with the stage
 * and errno); -errno on failure, without a log line (the caller says what
 * it costs). */
int tls_tw_open(struct tls_tw **out);
int tls_tw_fd(const struct tls_tw *w);
/* Read what is pending (a bounded amount: the fd stays readable if there is
 * more): the events for t, OR-ed, with TLS_TW_OVERRUN if the kernel dropped
 * notifications for want of room. */
unsigned int tls_tw_read(struct tls_tw *w, const struct tls_tree_target *t);
void tls_tw_close(struct tls_tw *w);
/* Open and close it once, recording the rtnetlink subscription in the
 * kernel features (--probe; tlsd records its own at start). */
void tls_tw_probe(void);

#endif /* TLS_TREE_WATCH_H */
