// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/pkt_sched.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/route/class.h>
#include <netlink/route/link.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/htb.h>
#include <netlink/route/tc.h>

#include "log.h"
#include "shaper.h"
#include "units.h"

/* Each band keeps this share of the link as its guaranteed rate: small, so
 * that priorities decide nearly everything, but never zero (HTB needs one). */
#define FLOOR_DIV     1000
#define MIN_FLOOR_BPS 8000ULL /* 1 kB/s */
/* The default class (all other traffic, and a job's packets before its
 * flow is known or while the classifier is away) is guaranteed 1/20 of the
 * link. At a band's floor a packet there waits behind every backlogged band:
 * at 100 Mbit/s one 27 kB GSO skb took 2-5 s, and TCP's small-queue limit
 * held its socket silent all that time (a job's flow after a heal of the
 * filter, measured). 1/20 drains a 64 kB skb in 100 ms at 100 Mbit/s. */
#define OTHER_DIV 20

struct tls_shaper {
	struct nl_sock *sk;
	char ifname[IF_NAMESIZE];
	int ifindex;
	struct rtnl_qdisc *saved; /* the root qdisc found at start, or NULL */
	void *saved_req;	  /* or a previous run's, as a netlink request */
	size_t saved_len;
	bool took_over;
	/* The root qdisc is ours (built, or taken over): builds change only
	 * the classes. Cleared when the tree is lost (tls_shaper_lost). */
	bool root_ours;
	bool touched; /* tlsd's tree was the root at some time: exit has work */
	uint64_t rate_bps;  /* of the last build; 0 before */
	uint64_t lead_ppm;  /* band 0's headroom below the link (policy.h) */
	uint32_t min_burst; /* bytes: the largest skb HTB may be handed */
};

int tls_link_speed(const char *ifname, uint64_t *bps)
{
	struct {
		struct ethtool_link_settings req;
		__u32 masks[3 * 127];
	} ecmd;
	struct ifreq ifr = {};
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	memset(&ecmd, 0, sizeof(ecmd));
	ecmd.req.cmd = ETHTOOL_GLINKSETTINGS;
	ifr.ifr_data = (void *)&ecmd;
	/* First call: the kernel answers with the mask size it wants. */
	if (ioctl(fd, SIOCETHTOOL, &ifr)) {
		err = -errno;
	} else if (ecmd.req.link_mode_masks_nwords < 0) {
		ecmd.req.link_mode_masks_nwords = -ecmd.req.link_mode_masks_nwords;
		ecmd.req.cmd = ETHTOOL_GLINKSETTINGS;
		if (ioctl(fd, SIOCETHTOOL, &ifr))
			err = -errno;
	}
	close(fd);
	if (!err && (ecmd.req.speed == 0 || ecmd.req.speed == (__u32)SPEED_UNKNOWN))
		err = -ENODATA;
	if (!err)
		*bps = (uint64_t)ecmd.req.speed * 1000 * 1000;
	return err;
}

int tls_link_rate(const char *ifname, uint64_t *bps)
{
	int err = tls_link_speed(ifname, bps);

	if (err) {
		pr_warn("%s reports no link speed (%s): set link_rate in the configuration\n",
			ifname, strerror(-err));
		return -ENODATA;
	}
	return 0;
}

static int nl_fail(const char *what, const char *ifname, int nlerr)
{
	pr_warn("%s on %s: %s\n", what, ifname, nl_geterror(nlerr));
	switch (-nlerr) {
	case NLE_PERM:
		return -EPERM;
	case NLE_OBJ_NOTFOUND:
	case NLE_NODEV:
		return -ENODEV;
	case NLE_OPNOTSUPP:
		return -EOPNOTSUPP;
	default:
		return -EIO;
	}
}

static struct rtnl_qdisc *root_qdisc(struct tls_shaper *s)
{
	struct nl_cache *cache;
	struct rtnl_qdisc *q;

	if (rtnl_qdisc_alloc_cache(s->sk, &cache) < 0)
		return NULL;
	q = rtnl_qdisc_get_by_parent(cache, s->ifindex, TC_H_ROOT);
	nl_cache_free(cache);
	return q; /* a reference of our own */
}

/* The interface's largest GSO skb as HTB counts it (qdisc_pkt_len adds the
 * headers of every segment after the first, 1/16 is more than TCP's 66 of
 * 1448), and an Ethernet header. A bucket smaller than that puts a class in
 * deficit for every such skb: while the top band waits for its tokens a
 * lower one borrows, and job a got 83% under `one` instead of 95% on a
 * slower clock (a kernel under emulation; 91.7% on this machine). 64 KB
 * unless the kernel says otherwise (BIG TCP raises it). */
static uint32_t min_burst(struct tls_shaper *s)
{
	struct rtnl_link *link = NULL;
	uint32_t gso = 65536;

	if (rtnl_link_get_kernel(s->sk, s->ifindex, NULL, &link) == 0) {
		uint32_t v;

		if (rtnl_link_get_gso_max_size(link, &v) == 0 && v >= 1500 && v <= 16U << 20)
			gso = v;
		rtnl_link_put(link);
	}
	return gso + gso / 16 + 1514;
}

static bool egress_default(const struct tls_qdisc_id *q)
{
	return q->parent == TC_H_INGRESS || TC_H_MAJ(q->handle) == 0;
}

const struct tls_qdisc_id *tls_qdisc_not_default(const struct tls_qdisc_id *q, size_t n)
{
	const struct tls_qdisc_id *other = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		if (q[i].parent == TC_H_ROOT && q[i].handle == TC_HANDLE(TLS_HTB_MAJOR, 0))
			return NULL; /* ours: whatever is under it is ours too */
		if (egress_default(&q[i]))
			continue;
		if (q[i].parent == TC_H_ROOT || !other)
			other = &q[i];
	}
	return other;
}

#define TLS_QDISCS_MAX 256 /* mq: one per TX queue, and the root */

struct qdisc_list {
	int ifindex;
	size_t n;
	struct tls_qdisc_id q[TLS_QDISCS_MAX];
};

static void add_qdisc(struct nl_object *o, void *arg)
{
	struct rtnl_tc *tc = (struct rtnl_tc *)o;
	struct qdisc_list *l = arg;
	struct tls_qdisc_id *q;

	if (rtnl_tc_get_ifindex(tc) != l->ifindex || l->n == TLS_QDISCS_MAX)
		return;
	q = &l->q[l->n++];
	q->handle = rtnl_tc_get_handle(tc);
	q->parent = rtnl_tc_get_parent(tc);
	snprintf(q->kind, sizeof(q->kind), "%s", rtnl_tc_get_kind(tc) ?: "?");
}

static void describe(const struct tls_qdisc_id *q, char *desc, size_t len)
{
	if (q->parent == TC_H_ROOT)
		snprintf(desc, len, "%s %x: root", q->kind, TC_H_MAJ(q->handle) >> 16);
	else
		snprintf(desc, len, "%s %x: parent %x:%x", q->kind, TC_H_MAJ(q->handle) >> 16,
			 TC_H_MAJ(q->parent) >> 16, TC_H_MIN(q->parent));
}

int tls_root_qdisc_foreign(const char *ifname, char *desc, size_t len)
{
	struct qdisc_list *l = calloc(1, sizeof(*l));
	struct nl_sock *sk = nl_socket_alloc();
	const struct tls_qdisc_id *q;
	struct nl_cache *cache = NULL;
	int err = -ENOMEM;

	if (!l || !sk)
		goto out;
	l->ifindex = (int)if_nametoindex(ifname);
	err = !l->ifindex ? -ENODEV : nl_connect(sk, NETLINK_ROUTE);
	if (!err)
		err = rtnl_qdisc_alloc_cache(sk, &cache);
	if (err < 0) {
		err = l->ifindex ? nl_fail("cannot list the qdiscs", ifname, err) : err;
		goto out;
	}
	nl_cache_foreach(cache, add_qdisc, l);
	nl_cache_free(cache);
	q = tls_qdisc_not_default(l->q, l->n);
	if (q)
		describe(q, desc, len);
	err = q ? 1 : 0;
out:
	nl_socket_free(sk);
	free(l);
	return err;
}

/* HTB is one qdisc with one lock: every TX queue's packets go through it,
 * on whichever CPU sends them. Said once, as a hint when CPU time in the
 * qdisc lock grows (docs/design.md, "One root on a multi-queue NIC"). */
static void note_tx_queues(struct tls_shaper *s)
{
	struct rtnl_link *link = NULL;
	uint32_t n;

	if (rtnl_link_get_kernel(s->sk, s->ifindex, NULL, &link))
		return;
	n = rtnl_link_get_num_tx_queues(link);
	rtnl_link_put(link);
	if (n > 1)
		pr_info("%s has %u TX queues: tlsd's HTB root puts them all behind one qdisc "
			"lock\n",
			s->ifname, n);
}

int tls_shaper_open(const char *ifname, struct tls_shaper **out)
{
	struct tls_shaper *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	snprintf(s->ifname, sizeof(s->ifname), "%s", ifname);
	s->ifindex = if_nametoindex(ifname);
	if (!s->ifindex) {
		pr_warn("interface %s not found\n", ifname);
		free(s);
		return -ENODEV;
	}
	s->sk = nl_socket_alloc();
	if (!s->sk) {
		free(s);
		return -ENOMEM;
	}
	err = nl_connect(s->sk, NETLINK_ROUTE);
	if (err < 0) {
		err = nl_fail("cannot open a netlink socket", ifname, err);
		tls_shaper_close(s);
		return err;
	}
	s->min_burst = min_burst(s);
	note_tx_queues(s);
	s->saved = root_qdisc(s);
	if (s->saved && rtnl_tc_get_handle(TC_CAST(s->saved)) == TC_HANDLE(TLS_HTB_MAJOR, 0)) {
		/* Our own tree, left by a previous run: take it over. What was
		 * there before that run is unknown: restore the default. */
		s->took_over = true;
		s->root_ours = true;
		s->touched = true;
		rtnl_qdisc_put(s->saved);
		s->saved = NULL;
	}
	*out = s;
	return 0;
}

bool tls_shaper_took_over(const struct tls_shaper *s)
{
	return s->took_over;
}

/* 1 ms at the rate, as tc would pick, and at least `least` bytes. */
static uint32_t burst(uint64_t bps, uint32_t least)
{
	uint64_t b = bps / 8 / 1000;

	if (b < least)
		b = least;
	return b > 0xffffff ? 0xffffff : (uint32_t)b;
}

static int add_class(struct tls_shaper *s, uint32_t parent, uint32_t classid, uint64_t rate,
		     uint64_t ceil, int prio, int flags)
{
	struct rtnl_class *cl = rtnl_class_alloc();
	char what[64];
	int err;

	if (!cl)
		return -ENOMEM;
	rtnl_tc_set_ifindex(TC_CAST(cl), s->ifindex);
	rtnl_tc_set_parent(TC_CAST(cl), parent);
	rtnl_tc_set_handle(TC_CAST(cl), classid);
	err = rtnl_tc_set_kind(TC_CAST(cl), "htb");
	if (!err)
		err = rtnl_htb_set_rate64(cl, rate / 8);
	if (!err)
		err = rtnl_htb_set_ceil64(cl, ceil / 8);
	if (!err && prio >= 0)
		err = rtnl_htb_set_prio(cl, prio);
	/* An explicit quantum: the rate-derived one is out of range at high
	 * rates (and the kernel complains). Bursts of burst() above:
	 * libnl's default of one MTU caps fast links. */
	if (!err)
		err = rtnl_htb_set_quantum(cl, 60000);
	if (!err)
		/* The bucket a class sends from at its own rate, ahead of
		 * every borrowing class whatever their prio: for a band's
		 * floor it stays small (16 kB), or a waiting band would jump
		 * its leader by a GSO skb each time it had been idle (job a
		 * had 94.9% instead of 95+% under `one` 100 ms after a switch).
		 * The root (rate = ceil) lends: its bucket holds a GSO skb. */
		err = rtnl_htb_set_rbuffer(cl, burst(rate, rate == ceil ? s->min_burst : 16000));
	if (!err)
		err = rtnl_htb_set_cbuffer(cl, burst(ceil, s->min_burst));
	if (!err)
		err = rtnl_class_add(s->sk, cl, flags);
	rtnl_class_put(cl);
	if (err < 0) {
		snprintf(what, sizeof(what), "cannot add HTB class %x:%x", classid >> 16,
			 classid & 0xffff);
		return nl_fail(what, s->ifname, err);
	}
	return 0;
}

/* 1/div of the link, never under MIN_FLOOR_BPS (HTB needs a rate). */
static uint64_t link_share(uint64_t rate_bps, uint64_t div)
{
	uint64_t r = rate_bps / div;

	return r < MIN_FLOOR_BPS ? MIN_FLOOR_BPS : r;
}

/* At most 50% (the configuration's limit): band 0 never gets less. */
static uint64_t lead_ceil(uint64_t rate_bps, uint64_t ppm)
{
	return tls_rate_less_ppm(rate_bps, ppm > 500000 ? 500000 : ppm);
}

int tls_shaper_build(struct tls_shaper *s, uint64_t rate_bps, unsigned int bands)
{
	uint64_t floor = link_share(rate_bps, FLOOR_DIV);
	int flags = NLM_F_CREATE | NLM_F_REPLACE;
	unsigned int b;
	int err;

	/* HTB has no qdisc change operation: the root is created once, after
	 * that (and on a tree taken over) only the classes change. */
	if (!s->root_ours) {
		struct rtnl_qdisc *q = rtnl_qdisc_alloc();

		if (!q)
			return -ENOMEM;
		rtnl_tc_set_ifindex(TC_CAST(q), s->ifindex);
		rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
		rtnl_tc_set_handle(TC_CAST(q), TC_HANDLE(TLS_HTB_MAJOR, 0));
		err = rtnl_tc_set_kind(TC_CAST(q), "htb");
		if (!err)
			err = rtnl_htb_set_defcls(q, TLS_CLASSID(TLS_HTB_DEFAULT_MINOR));
		if (!err)
			err = rtnl_qdisc_add(s->sk, q, NLM_F_CREATE | NLM_F_REPLACE);
		rtnl_qdisc_put(q);
		if (err < 0)
			return nl_fail("cannot add the HTB root qdisc (kernel without sch_htb?)",
				       s->ifname, err);
		s->root_ours = true;
		s->touched = true;
	}
	/* Taking over, the same calls change the existing classes in place. */
	err = add_class(s, TC_HANDLE(TLS_HTB_MAJOR, 0), TLS_CLASSID(1), rate_bps, rate_bps, -1,
			flags);
	for (b = 0; !err && b < bands; b++)
		err = add_class(s, TLS_CLASSID(1), TLS_CLASSID(TLS_HTB_BAND_MINOR(b)), floor,
				b ? rate_bps : lead_ceil(rate_bps, s->lead_ppm), b, flags);
	if (!err)
		err = add_class(s, TLS_CLASSID(1), TLS_CLASSID(TLS_HTB_DEFAULT_MINOR),
				link_share(rate_bps, OTHER_DIV), rate_bps, 7, flags);
	if (!err)
		s->rate_bps = rate_bps; /* the tree is whole at this rate */
	/* Fewer bands than before: the classes above go (empty by now: the
	 * classifier maps no band beyond the count). */
	for (b = bands; !err && b < 7; b++) {
		struct rtnl_class *cl = rtnl_class_alloc();

		if (!cl)
			return -ENOMEM;
		rtnl_tc_set_ifindex(TC_CAST(cl), s->ifindex);
		rtnl_tc_set_parent(TC_CAST(cl), TLS_CLASSID(1));
		rtnl_tc_set_handle(TC_CAST(cl), TLS_CLASSID(TLS_HTB_BAND_MINOR(b)));
		rtnl_class_delete(s->sk, cl); /* absent is fine */
		rtnl_class_put(cl);
	}
	return err;
}

int tls_shaper_set_lead_headroom(struct tls_shaper *s, uint64_t ppm)
{
	int err;

	if (ppm == s->lead_ppm)
		return 0;
	if (s->rate_bps && s->root_ours) { /* built: change band 0 in place */
		err = add_class(s, TLS_CLASSID(1), TLS_CLASSID(TLS_HTB_BAND_MINOR(0)),
				link_share(s->rate_bps, FLOOR_DIV), lead_ceil(s->rate_bps, ppm), 0,
				NLM_F_CREATE | NLM_F_REPLACE);
		if (err)
			return err;
	}
	s->lead_ppm = ppm;
	return 1;
}

static int delete_ours(struct tls_shaper *s)
{
	struct rtnl_qdisc *q = rtnl_qdisc_alloc();
	int err;

	if (!q)
		return -ENOMEM;
	rtnl_tc_set_ifindex(TC_CAST(q), s->ifindex);
	rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
	rtnl_tc_set_handle(TC_CAST(q), TC_HANDLE(TLS_HTB_MAJOR, 0));
	err = rtnl_qdisc_delete(s->sk, q);
	rtnl_qdisc_put(q);
	if (err < 0 && err != -NLE_OBJ_NOTFOUND && err != -NLE_INVAL)
		return nl_fail("cannot delete the HTB root qdisc", s->ifname, err);
	return 0;
}

int tls_shaper_saved_request(const struct tls_shaper *s, void *buf, size_t *len)
{
	struct nl_msg *msg;
	struct nlmsghdr *h;
	int err;

	if (s->took_over) { /* what the previous run saved, unchanged */
		if (s->saved_len > *len)
			return -E2BIG;
		if (s->saved_len)
			memcpy(buf, s->saved_req, s->saved_len);
		*len = s->saved_len;
		return 0;
	}
	if (!s->saved || TC_H_MAJ(rtnl_tc_get_handle(TC_CAST(s->saved))) == 0) {
		*len = 0; /* the kernel's default comes back by itself */
		return 0;
	}
	err = rtnl_qdisc_build_add_request(s->saved, NLM_F_CREATE | NLM_F_REPLACE, &msg);
	if (err < 0)
		return -ENOMEM;
	h = nlmsg_hdr(msg);
	if (h->nlmsg_len > *len) {
		err = -E2BIG;
	} else {
		memcpy(buf, h, h->nlmsg_len);
		*len = h->nlmsg_len;
		err = 0;
	}
	nlmsg_free(msg);
	return err;
}

void tls_shaper_set_saved_request(struct tls_shaper *s, const void *buf, size_t len)
{
	free(s->saved_req);
	s->saved_req = NULL;
	s->saved_len = 0;
	if (!len || len < NLMSG_HDRLEN + sizeof(struct tcmsg))
		return;
	s->saved_req = malloc(len);
	if (!s->saved_req)
		return;
	memcpy(s->saved_req, buf, len);
	s->saved_len = len;
}

/* Replay a saved request, on this interface (its index may have changed). */
static int replay(struct tls_shaper *s)
{
	struct nlmsghdr *h = s->saved_req;
	struct nl_msg *msg;
	int err;

	if (h->nlmsg_len != s->saved_len || h->nlmsg_type != RTM_NEWQDISC ||
	    ((struct tcmsg *)NLMSG_DATA(h))->tcm_parent != TC_H_ROOT)
		return -EINVAL; /* not what tlsd saved: do not send it */
	((struct tcmsg *)NLMSG_DATA(h))->tcm_ifindex = s->ifindex;
	msg = nlmsg_convert(h);
	if (!msg)
		return -ENOMEM;
	err = nl_send_auto(s->sk, msg);
	if (err >= 0)
		err = nl_wait_for_ack(s->sk);
	nlmsg_free(msg);
	return err < 0 ? nl_fail("cannot put the previous root qdisc back", s->ifname, err) : 0;
}

/* A root qdisc with handle 0 is the one the kernel attaches by itself
 * (noqueue, mq, pfifo_fast, fq_codel...): deleting ours brings it back. */
static bool is_default(struct rtnl_qdisc *q)
{
	return !q || TC_H_MAJ(rtnl_tc_get_handle(TC_CAST(q))) == 0;
}

/* Put the saved root qdisc back in place of ours, as at exit. Only over
 * tlsd's own tree, or the kernel's default once that tree was deleted: a
 * root qdisc of another tool's stays, and so does everything on an
 * interface that is gone or was re-created behind tlsd's back. */
/* The handle of the root qdisc from before tlsd; 0: the kernel's default. */
static uint32_t saved_handle(const struct tls_shaper *s)
{
	if (s->saved_req)
		return ((struct tcmsg *)NLMSG_DATA((struct nlmsghdr *)s->saved_req))->tcm_handle;
	return is_default(s->saved) ? 0 : rtnl_tc_get_handle(TC_CAST(s->saved));
}

static int give_back(struct tls_shaper *s)
{
	struct rtnl_qdisc *now;
	uint32_t h;
	int err;

	if (!s->touched) /* a start that failed before the tree: as it was */
		return 0;
	if ((int)if_nametoindex(s->ifname) != s->ifindex) {
		pr_info("%s is not the interface tlsd set up any more (gone, or re-created): "
			"no root qdisc to put back\n",
			s->ifname);
		return 0;
	}
	now = root_qdisc(s);
	h = now ? rtnl_tc_get_handle(TC_CAST(now)) : 0;
	if (TC_H_MAJ(h) && h == saved_handle(s)) {
		/* put back already (tlsd yielded), or by someone else */
		rtnl_qdisc_put(now);
		return 0;
	}
	if (TC_H_MAJ(h) && h != TC_HANDLE(TLS_HTB_MAJOR, 0)) {
		pr_warn("%s: the root qdisc is another tool's now (%s, handle %x:): left in place, "
			"and the one from before tlsd is not put back\n",
			s->ifname, rtnl_tc_get_kind(TC_CAST(now)),
			TC_H_MAJ(rtnl_tc_get_handle(TC_CAST(now))) >> 16);
		rtnl_qdisc_put(now);
		return 0;
	}
	if (now)
		rtnl_qdisc_put(now);
	if (s->saved_req) {
		err = replay(s);
		if (err)
			err = delete_ours(s);
	} else if (is_default(s->saved)) {
		err = delete_ours(s);
	} else {
		/* Put the saved qdisc back over ours (its own options; classes
		 * and filters it had are not restored). */
		rtnl_tc_set_ifindex(TC_CAST(s->saved), s->ifindex);
		err = rtnl_qdisc_add(s->sk, s->saved, NLM_F_CREATE | NLM_F_REPLACE);
		if (err < 0) {
			nl_fail("cannot put the previous root qdisc back", s->ifname, err);
			err = delete_ours(s);
		}
	}
	return err;
}

int tls_shaper_restore(struct tls_shaper *s)
{
	int err;

	if (!s)
		return 0;
	err = give_back(s);
	tls_shaper_close(s);
	return err;
}

int tls_shaper_yield(struct tls_shaper *s)
{
	int err = give_back(s);

	tls_shaper_lost(s);
	return err;
}

void tls_shaper_lost(struct tls_shaper *s)
{
	s->root_ours = false;
	s->rate_bps = 0; /* a new headroom is only remembered until the next build */
}

int tls_shaper_set_ifindex(struct tls_shaper *s, int ifindex)
{
	if (ifindex <= 0)
		return -ENODEV;
	s->ifindex = ifindex;
	tls_shaper_lost(s);
	/* another device, perhaps another GSO size */
	s->min_burst = min_burst(s);
	return 0;
}

void tls_shaper_close(struct tls_shaper *s)
{
	if (!s)
		return;
	if (s->saved)
		rtnl_qdisc_put(s->saved);
	free(s->saved_req);
	nl_socket_free(s->sk);
	free(s);
}

int tls_shaper_remove(const char *ifname, const void *saved, size_t len)
{
	struct tls_shaper *s;
	int err = tls_shaper_open(ifname, &s);

	if (err)
		return err;
	if (!s->took_over) { /* not ours: leave it */
		tls_shaper_close(s);
		return 0;
	}
	tls_shaper_set_saved_request(s, saved, len);
	return tls_shaper_restore(s);
}
