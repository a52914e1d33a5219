// SPDX-License-Identifier: GPL-2.0-only
/* The tc state of tlsd's interface, asked of the kernel: tc_state.h. */
#include <errno.h>
#include <stddef.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/gen_stats.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "tc_state.h"

struct tls_tc_state {
	struct mnl_socket *nl;
	char *buf;
	unsigned int seq, portid;
};

int tls_tc_state_open(struct tls_tc_state **out)
{
	struct tls_tc_state *s = calloc(1, sizeof(*s));
	/* The loop waits for these answers: never for long. */
	struct timeval tv = { .tv_sec = 1 };
	int err;

	if (!s)
		return -ENOMEM;
	s->buf = malloc(MNL_SOCKET_BUFFER_SIZE);
	s->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!s->buf || !s->nl || mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) ||
	    setsockopt(mnl_socket_get_fd(s->nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		err = s->buf ? -errno : -ENOMEM;
		tls_tc_state_close(s);
		return err ? err : -EIO;
	}
	s->portid = mnl_socket_get_portid(s->nl);
	*out = s;
	return 0;
}

void tls_tc_state_close(struct tls_tc_state *s)
{
	if (!s)
		return;
	if (s->nl)
		mnl_socket_close(s->nl);
	free(s->buf);
	free(s);
}

/*
 * Send nlh, run cb on every answer: 0, or the kernel's -errno. A get asks for
 * an acknowledgement, which ends the answer: a kernel sends no message for
 * an object it never dumps (noop), and before 6.7 or so a get's answer is a
 * notification to RTNLGRP_TC that reaches the asker only with NLM_F_ECHO
 * (tlsd's watch sees it too, and ignores it: tls_tree_target.own_portid).
 */
static int request(struct tls_tc_state *s, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	if (!(nlh->nlmsg_flags & NLM_F_DUMP))
		nlh->nlmsg_flags |= NLM_F_ECHO | NLM_F_ACK;
	nlh->nlmsg_seq = ++s->seq;
	if (mnl_socket_sendto(s->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(s->nl, s->buf, MNL_SOCKET_BUFFER_SIZE);
		int ret;

		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		ret = mnl_cb_run(s->buf, (size_t)n, s->seq, s->portid, cb, data);
		if (ret == MNL_CB_ERROR)
			return errno ? -errno : -EIO;
		/* the acknowledgement, or a dump's NLMSG_DONE */
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

static struct nlmsghdr *tc_request(char *buf, uint16_t type, uint16_t flags, int ifindex,
				   uint32_t parent, uint32_t handle, uint32_t info)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tcm;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = ifindex;
	tcm->tcm_parent = parent;
	tcm->tcm_handle = handle;
	tcm->tcm_info = info;
	return nlh;
}

static void copy_kind(const struct nlattr *a, char *kind)
{
	if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
		snprintf(kind, TLS_TC_KIND_LEN, "%s", mnl_attr_get_str(a));
}

static int qdisc_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tls_tc_qdisc *q = data;
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWQDISC || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*tcm)))
		return MNL_CB_OK;
	q->present = true;
	q->handle = tcm->tcm_handle;
	mnl_attr_for_each(a, nlh, sizeof(*tcm)) if (mnl_attr_get_type(a) == TCA_KIND)
		copy_kind(a, q->kind);
	return MNL_CB_OK;
}

/* The qdisc at parent (TC_H_ROOT, or TC_H_CLSACT) of ifindex. */
static int get_qdisc(struct tls_tc_state *s, int ifindex, uint32_t parent, struct tls_tc_qdisc *q)
{
	char buf[256];
	int err;

	memset(q, 0, sizeof(*q));
	err = request(s, tc_request(buf, RTM_GETQDISC, 0, ifindex, parent, 0, 0), qdisc_cb, q);
	/* nothing at that parent (no ingress queue, or a handle that does
	 * not match): absent, not an error */
	return err == -ENOENT || err == -EINVAL ? 0 : err;
}

uint32_t tls_tc_state_portid(const struct tls_tc_state *s)
{
	return s->portid;
}

int tls_tc_state_root(struct tls_tc_state *s, int ifindex, struct tls_tc_qdisc *q)
{
	return get_qdisc(s, ifindex, TC_H_ROOT, q);
}

/* Where a filter's facts go: the egress filter's or the ingress one's. */
struct filter_seen {
	bool *present;
	char *kind;
	uint32_t *prog_id;
};

static int bpf_opt_cb(const struct nlattr *a, void *data)
{
	struct filter_seen *f = data;

	if (mnl_attr_get_type(a) == TCA_BPF_ID && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
		*f->prog_id = mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

static int filter_cb(const struct nlmsghdr *nlh, void *data)
{
	struct filter_seen *f = data;
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWTFILTER || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*tcm)))
		return MNL_CB_OK;
	*f->present = true;
	mnl_attr_for_each(a, nlh, sizeof(*tcm))
	{
		if (mnl_attr_get_type(a) == TCA_KIND)
			copy_kind(a, f->kind);
		else if (mnl_attr_get_type(a) == TCA_OPTIONS)
			mnl_attr_parse_nested(a, bpf_opt_cb, f);
	}
	return MNL_CB_OK;
}

/* The filter at tlsd's handle and priority on clsact egress (and, if tlsd
 * has one, ingress), of whatever kind (no TCA_KIND in the request: another
 * tool's filter there is seen). */
static int get_filter_at(struct tls_tc_state *s, const struct tls_tree_target *t, int ifindex,
			 uint32_t parent, struct filter_seen *seen)
{
	char buf[256];
	int err;

	err = request(s,
		      tc_request(buf, RTM_GETTFILTER, 0, ifindex, parent, t->filter_handle,
				 TC_H_MAKE(t->filter_prio << 16, htons(ETH_P_ALL))),
		      filter_cb, seen);
	return err == -ENOENT || err == -EINVAL ? 0 : err;
}

static int get_filter(struct tls_tc_state *s, const struct tls_tree_target *t,
		      struct tls_tree_facts *f)
{
	struct filter_seen eg = { &f->filter, f->filter_kind, &f->filter_prog_id },
			   in = { &f->in_filter, f->in_filter_kind, &f->in_filter_prog_id };
	int err;

	err = get_filter_at(s, t, f->ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS), &eg);
	if (!err && t->in_prog_id)
		err = get_filter_at(s, t, f->ifindex, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS),
				    &in);
	return err;
}

struct class_seen {
	uint32_t major;
	uint8_t seen[256 / 8]; /* by minor: tlsd's are below 0x100 */
};

static int class_cb(const struct nlmsghdr *nlh, void *data)
{
	struct class_seen *cs = data;
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	uint32_t minor;

	if (nlh->nlmsg_type != RTM_NEWTCLASS || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*tcm)))
		return MNL_CB_OK;
	minor = TC_H_MIN(tcm->tcm_handle);
	if (TC_H_MAJ(tcm->tcm_handle) == cs->major && minor < 256)
		cs->seen[minor / 8] |= 1 << (minor % 8);
	return MNL_CB_OK;
}

static int check_classes(struct tls_tc_state *s, const struct tls_tree_target *t,
			 struct tls_tree_facts *f)
{
	struct class_seen cs = { .major = TC_H_MAJ(t->root_handle) };
	uint32_t want[2 + 8], n = 0;
	char buf[256];
	int err;

	/* the dump of this interface's classes under tlsd's root only */
	err = request(s,
		      tc_request(buf, RTM_GETTCLASS, NLM_F_DUMP, f->ifindex, t->root_handle, 0, 0),
		      class_cb, &cs);
	if (err)
		return err;
	want[n++] = 1;
	for (unsigned int b = 0; b < t->bands && b < 8; b++)
		want[n++] = 0x10 + b;
	want[n++] = 0xff;
	for (uint32_t i = 0; i < n; i++) {
		if (cs.seen[want[i] / 8] & (1 << (want[i] % 8)))
			continue;
		if (!f->classes_missing++)
			f->missing_class = cs.major | want[i];
	}
	return 0;
}

struct class_list {
	struct tls_tc_class_stats *out;
	size_t max, n;
};

/* TCA_STATS2's members: the basic counters (a packet count past 2^32 in
 * TCA_STATS_PKT64) and the queue's. */
static int stats2_cb(const struct nlattr *a, void *data)
{
	struct tls_tc_class_stats *c = data;
	struct gnet_stats_basic b = { 0 };
	const struct gnet_stats_queue *q;

	switch (mnl_attr_get_type(a)) {
	case TCA_STATS_BASIC:
		/* the kernel sends the struct with its padding (16 bytes) */
		if (mnl_attr_get_payload_len(a) <
		    offsetof(struct gnet_stats_basic, packets) + sizeof(b.packets))
			break;
		/* copied: an attribute is 4-byte aligned, its __u64 wants 8
		 * (UBSan: misaligned access) */
		memcpy(&b, mnl_attr_get_payload(a),
		       offsetof(struct gnet_stats_basic, packets) + sizeof(b.packets));
		c->bytes = b.bytes;
		if (!c->packets) /* not set by TCA_STATS_PKT64 first */
			c->packets = b.packets;
		break;
	case TCA_STATS_PKT64:
		if (mnl_attr_validate(a, MNL_TYPE_U64) == 0)
			c->packets = mnl_attr_get_u64(a);
		break;
	case TCA_STATS_QUEUE:
		if (mnl_attr_get_payload_len(a) < sizeof(*q))
			break;
		q = mnl_attr_get_payload(a);
		c->drops = q->drops;
		c->overlimits = q->overlimits;
		c->requeues = q->requeues;
		c->qlen = q->qlen;
		c->backlog = q->backlog;
		break;
	}
	return MNL_CB_OK;
}

static int class_stats_cb(const struct nlmsghdr *nlh, void *data)
{
	struct class_list *l = data;
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	struct tls_tc_class_stats c = { 0 };
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWTCLASS || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*tcm)))
		return MNL_CB_OK;
	c.handle = tcm->tcm_handle;
	mnl_attr_for_each(a, nlh, sizeof(*tcm)) if (mnl_attr_get_type(a) == TCA_STATS2)
		mnl_attr_parse_nested(a, stats2_cb, &c);
	if (l->n < l->max)
		l->out[l->n] = c;
	l->n++;
	return MNL_CB_OK;
}

int tls_tc_state_classes(struct tls_tc_state *s, int ifindex, uint32_t root,
			 struct tls_tc_class_stats *out, size_t max, size_t *n)
{
	struct class_list l = { .out = out, .max = max };
	char buf[256];
	int err;

	err = request(s, tc_request(buf, RTM_GETTCLASS, NLM_F_DUMP, ifindex, root, 0, 0),
		      class_stats_cb, &l);
	*n = l.n;
	return err;
}

int tls_tc_state_read(struct tls_tc_state *s, const struct tls_tree_target *t,
		      struct tls_tree_facts *f)
{
	int err;

	memset(f, 0, sizeof(*f));
	f->ifindex = (int)if_nametoindex(t->ifname);
	if (!f->ifindex)
		return 0;
	err = get_qdisc(s, f->ifindex, TC_H_ROOT, &f->root);
	if (!err)
		err = get_qdisc(s, f->ifindex, TC_H_CLSACT, &f->clsact);
	if (!err && t->root_handle && f->root.present && f->root.handle == t->root_handle)
		err = check_classes(s, t, f);
	if (!err && f->clsact.present && !strcmp(f->clsact.kind, "clsact"))
		err = get_filter(s, t, f);
	/* gone between two questions: as good as absent */
	if (err == -ENODEV) {
		memset(f, 0, sizeof(*f));
		return 0;
	}
	return err;
}
