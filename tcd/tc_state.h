/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What tlsd's interface holds now, asked of the kernel (libmnl, one request
 * each, only about that interface): its root qdisc, its clsact qdisc, the
 * filter at tlsd's egress handle and priority and its BPF program, and which
 * classes of tlsd's tree are there. tree_heal.h judges the answer.
 */
#ifndef TLS_TC_STATE_H
#define TLS_TC_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tree_watch.h"

#define TLS_TC_KIND_LEN 16 /* IFNAMSIZ: the kernel's bound on TCA_KIND */

struct tls_tc_qdisc {
	bool present;
	uint32_t handle;
	char kind[TLS_TC_KIND_LEN];
};

struct tls_tree_facts {
	int ifindex;		    /* the index of the interface of tlsd's name now; 0: none */
	struct tls_tc_qdisc root;   /* the root qdisc (the kernel's default has handle 0:) */
	struct tls_tc_qdisc clsact; /* what sits at the ingress/clsact parent, if anything */
	bool filter;		    /* a filter at tlsd's egress handle and priority */
	char filter_kind[TLS_TC_KIND_LEN];
	uint32_t filter_prog_id; /* its BPF program's id; 0 if none */
	/* the same at tlsd's ingress handle and priority (the ingress counter);
	 * asked only when the target has one (in_prog_id) */
	bool in_filter;
	char in_filter_kind[TLS_TC_KIND_LEN];
	uint32_t in_filter_prog_id;
	uint32_t missing_class;	 /* the first class of tlsd's tree not there; 0: none */
	unsigned int classes_missing;
};

struct tls_tc_state;

int tls_tc_state_open(struct tls_tc_state **out);
void tls_tc_state_close(struct tls_tc_state *s);
/* The facts about t's interface by its name (t->ifindex is not used: the
 * name may have a new index). Classes and filter are only asked about while
 * the root and clsact are there. 0, or -errno if the kernel could not be
 * asked (the facts are then unknown, not absent). */
int tls_tc_state_read(struct tls_tc_state *s, const struct tls_tree_target *t,
		      struct tls_tree_facts *f);
/* The socket's netlink port id: the notifications its questions cause (a
 * kernel may announce a get to every listener) carry it. */
uint32_t tls_tc_state_portid(const struct tls_tc_state *s);
/* Just the root qdisc of ifindex: 0, -ENODEV (no such interface) or -errno. */
int tls_tc_state_root(struct tls_tc_state *s, int ifindex, struct tls_tc_qdisc *q);

/* A class's counters as the kernel keeps them (TCA_STATS2): bytes and
 * packets it sent (HTB counts at dequeue), packets dropped on enqueue to
 * it, times it was over its rate and ceiling (HTB's overlimits), and what
 * it holds now. */
struct tls_tc_class_stats {
	uint32_t handle;
	uint64_t bytes, packets;
	uint32_t drops, overlimits, requeues;
	uint32_t qlen, backlog; /* packets, bytes queued now */
};

/* The classes of ifindex under the root qdisc `root` (a handle M:0), in
 * the kernel's order: up to max in out, their number in *n (it may exceed
 * max: the rest are not copied). 0, -ENODEV, or -errno. */
int tls_tc_state_classes(struct tls_tc_state *s, int ifindex, uint32_t root,
			 struct tls_tc_class_stats *out, size_t max, size_t *n);

#endif /* TLS_TC_STATE_H */
