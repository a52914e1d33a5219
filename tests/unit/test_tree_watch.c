// SPDX-License-Identifier: GPL-2.0-only
/*
 * The rtnetlink notifications, decoded: crafted messages of every kind that
 * concerns tlsd's tree, the same kinds about other interfaces, handles and
 * priorities (nothing), tlsd's own questions (nothing), and broken messages
 * (nothing, and no read past their end: ASan watches).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "tree_watch.h"
#include "unit.h"

#define IFX	 7
#define ROOT	 0x715d0000u
#define FHANDLE	 0x715du
#define FPRIO	 0x715du
#define OWN_PORT 4242u
#define EGRESS	 TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)
#define INFO(p)	 TC_H_MAKE((uint32_t)(p) << 16, 0x0300) /* prio, htons(ETH_P_ALL) */

static const struct tls_tree_target target = {
	.ifname = "eth7",
	.ifindex = IFX,
	.root_handle = ROOT,
	.filter_handle = FHANDLE,
	.filter_prio = FPRIO,
	.prog_id = 99,
	.bands = 2,
	.own_portid = OWN_PORT,
};

static char buf[16384] __attribute__((aligned(8)));

static struct nlmsghdr *tc_msg(void *at, uint16_t type, int ifindex, uint32_t parent,
			       uint32_t handle, uint32_t info, const char *kind)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(at);
	struct tcmsg *tcm;

	nlh->nlmsg_type = type;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = ifindex;
	tcm->tcm_parent = parent;
	tcm->tcm_handle = handle;
	tcm->tcm_info = info;
	if (kind)
		mnl_attr_put_strz(nlh, TCA_KIND, kind);
	return nlh;
}

static struct nlmsghdr *link_msg(void *at, uint16_t type, int ifindex, const char *name,
				 unsigned char family)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(at);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = type;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = family;
	ifi->ifi_index = ifindex;
	mnl_attr_put_u32(nlh, IFLA_MTU, 1500);
	if (name)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	return nlh;
}

static unsigned int tc(uint16_t type, int ifindex, uint32_t parent, uint32_t handle, uint32_t info,
		       const char *kind)
{
	return tls_tw_decode(tc_msg(buf, type, ifindex, parent, handle, info, kind), &target);
}

static unsigned int lnk(uint16_t type, int ifindex, const char *name)
{
	return tls_tw_decode(link_msg(buf, type, ifindex, name, AF_UNSPEC), &target);
}

static void test_root_qdisc(void **state)
{
	(void)state;
	/* `tc qdisc del dev eth7 root` */
	assert_int_equal(tc(RTM_DELQDISC, IFX, TC_H_ROOT, ROOT, 0, "htb"), TLS_TW_ROOT_GONE);
	/* `tc qdisc replace ... root pfifo`: the new root (with the old one's
	 * deletion, above, in the same burst) */
	assert_int_equal(tc(RTM_NEWQDISC, IFX, TC_H_ROOT, 0x10000, 0, "pfifo"), TLS_TW_ROOT_OTHER);
	/* another kind under tlsd's own handle */
	assert_int_equal(tc(RTM_NEWQDISC, IFX, TC_H_ROOT, ROOT, 0, "pfifo"), TLS_TW_ROOT_OTHER);
	assert_int_equal(tc(RTM_NEWQDISC, IFX, TC_H_ROOT, ROOT, 0, NULL), TLS_TW_ROOT_OTHER);
	/* tlsd's own build: nothing new */
	assert_int_equal(tc(RTM_NEWQDISC, IFX, TC_H_ROOT, ROOT, 0, "htb"), 0);
	/* another root deleted (tlsd's build replacing the user's) */
	assert_int_equal(tc(RTM_DELQDISC, IFX, TC_H_ROOT, 0x50000, 0, "pfifo"), 0);
	/* the default qdisc a deletion leaves, announced as deleted by a replace */
	assert_int_equal(tc(RTM_DELQDISC, IFX, TC_H_ROOT, 0, 0, "noqueue"), 0);
	/* a leaf qdisc inside tlsd's tree */
	assert_int_equal(tc(RTM_NEWQDISC, IFX, ROOT | 0x10, 0x80010000, 0, "fq_codel"), 0);
	/* other interfaces */
	assert_int_equal(tc(RTM_DELQDISC, IFX + 1, TC_H_ROOT, ROOT, 0, "htb"), 0);
	assert_int_equal(tc(RTM_NEWQDISC, IFX + 1, TC_H_ROOT, 0x10000, 0, "pfifo"), 0);
	assert_int_equal(tc(RTM_DELQDISC, 0, TC_H_ROOT, ROOT, 0, "htb"), 0);
	/* a shared block's message carries no interface */
	assert_int_equal(tc(RTM_DELTFILTER, (int)TCM_IFINDEX_MAGIC_BLOCK, EGRESS, FHANDLE,
			    INFO(FPRIO), "bpf"),
			 0);
}

static void test_clsact_and_filter(void **state)
{
	(void)state;
	assert_int_equal(tc(RTM_DELQDISC, IFX, TC_H_CLSACT, 0xffff0000, 0, "clsact"),
			 TLS_TW_CLSACT_GONE);
	/* `tc filter del dev eth7 egress prio 29021 handle 0x715d bpf` */
	assert_int_equal(tc(RTM_DELTFILTER, IFX, EGRESS, FHANDLE, INFO(FPRIO), "bpf"),
			 TLS_TW_FILTER_GONE);
	/* the whole priority, and every priority */
	assert_int_equal(tc(RTM_DELTFILTER, IFX, EGRESS, 0, INFO(FPRIO), "bpf"),
			 TLS_TW_FILTER_GONE);
	assert_int_equal(tc(RTM_DELTFILTER, IFX, EGRESS, 0, 0, NULL), TLS_TW_FILTER_GONE);
	/* someone else's filters */
	assert_int_equal(tc(RTM_DELTFILTER, IFX, EGRESS, 1, INFO(1), "u32"), 0);
	assert_int_equal(tc(RTM_DELTFILTER, IFX, EGRESS, FHANDLE + 1, INFO(FPRIO), "bpf"), 0);
	assert_int_equal(tc(RTM_DELTFILTER, IFX, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS), FHANDLE,
			    INFO(FPRIO), "bpf"),
			 0);
	assert_int_equal(tc(RTM_DELTFILTER, IFX, ROOT, FHANDLE, INFO(FPRIO), "u32"), 0);
	/* a filter at tlsd's place: maybe another program */
	assert_int_equal(tc(RTM_NEWTFILTER, IFX, EGRESS, FHANDLE, INFO(FPRIO), "bpf"),
			 TLS_TW_FILTER_NEW);
	assert_int_equal(tc(RTM_NEWTFILTER, IFX, EGRESS, 1, INFO(FPRIO + 1), "bpf"), 0);
}

static void test_classes(void **state)
{
	(void)state;
	assert_int_equal(tc(RTM_DELTCLASS, IFX, ROOT | 1, ROOT | 0x11, 0, "htb"),
			 TLS_TW_CLASS_GONE);
	assert_int_equal(tc(RTM_DELTCLASS, IFX, ROOT, ROOT | 1, 0, "htb"), TLS_TW_CLASS_GONE);
	assert_int_equal(tc(RTM_DELTCLASS, IFX, 0x10001, 0x10011, 0, "htb"), 0);
	assert_int_equal(tc(RTM_DELTCLASS, IFX + 1, ROOT | 1, ROOT | 0x11, 0, "htb"), 0);
	/* classes added or changed (tlsd's own builds): never news */
	assert_int_equal(tc(RTM_NEWTCLASS, IFX, ROOT | 1, ROOT | 0x11, 0, "htb"), 0);
}

/* What tlsd's own questions cause (a kernel before 6.7 announces a get to
 * every listener) carries its port: nothing new. */
static void test_own_questions(void **state)
{
	struct nlmsghdr *nlh;

	(void)state;
	nlh = tc_msg(buf, RTM_NEWTFILTER, IFX, EGRESS, FHANDLE, INFO(FPRIO), "bpf");
	nlh->nlmsg_pid = OWN_PORT;
	assert_int_equal(tls_tw_decode(nlh, &target), 0);
	nlh->nlmsg_pid = OWN_PORT + 1; /* someone else's */
	assert_int_equal(tls_tw_decode(nlh, &target), TLS_TW_FILTER_NEW);
	nlh = tc_msg(buf, RTM_NEWQDISC, IFX, TC_H_ROOT, 0, 0, "noqueue");
	nlh->nlmsg_pid = OWN_PORT;
	assert_int_equal(tls_tw_decode(nlh, &target), 0);
}

static void test_link(void **state)
{
	struct tls_tree_target absent = target;

	(void)state;
	assert_int_equal(lnk(RTM_DELLINK, IFX, "eth7"), TLS_TW_LINK_GONE);
	assert_int_equal(lnk(RTM_DELLINK, IFX, NULL), TLS_TW_LINK_GONE);
	assert_int_equal(lnk(RTM_NEWLINK, IFX, "eth7"), TLS_TW_LINK_CHANGED);
	assert_int_equal(lnk(RTM_NEWLINK, IFX, NULL), TLS_TW_LINK_CHANGED);
	/* renamed: the name tlsd schedules is gone */
	assert_int_equal(lnk(RTM_NEWLINK, IFX, "eth8"), TLS_TW_LINK_GONE);
	/* deleted and created again, faster than tlsd looked */
	assert_int_equal(lnk(RTM_NEWLINK, IFX + 5, "eth7"), TLS_TW_LINK_BACK);
	assert_int_equal(lnk(RTM_DELLINK, IFX + 5, "eth7"), 0);
	/* other interfaces, and names that only begin alike */
	assert_int_equal(lnk(RTM_NEWLINK, IFX + 1, "eth8"), 0);
	assert_int_equal(lnk(RTM_DELLINK, IFX + 1, "eth8"), 0);
	assert_int_equal(lnk(RTM_NEWLINK, IFX + 1, "eth70"), 0);
	assert_int_equal(lnk(RTM_NEWLINK, IFX + 1, "eth"), 0);
	/* a bridge's port messages (AF_BRIDGE) are not the link's life */
	assert_int_equal(tls_tw_decode(link_msg(buf, RTM_DELLINK, IFX, "eth7", AF_BRIDGE), &target),
			 0);
	/* while the interface is absent, only its name coming back counts */
	absent.ifindex = 0;
	assert_int_equal(
		tls_tw_decode(link_msg(buf, RTM_NEWLINK, IFX + 5, "eth7", AF_UNSPEC), &absent),
		TLS_TW_LINK_BACK);
	assert_int_equal(tls_tw_decode(link_msg(buf, RTM_NEWLINK, 0, "eth8", AF_UNSPEC), &absent),
			 0);
	assert_int_equal(
		tls_tw_decode(tc_msg(buf, RTM_DELQDISC, 0, TC_H_ROOT, ROOT, 0, "htb"), &absent), 0);
}

/* Messages cut short, names without their NUL, attributes that lie about
 * their length: nothing, and nothing read past the message (ASan). */
static void test_broken(void **state)
{
	struct nlmsghdr *nlh;
	struct nlattr *a;
	char *m;

	(void)state;
	/* a header alone, in a buffer of exactly that size */
	m = malloc(NLMSG_HDRLEN);
	assert_non_null(m);
	nlh = (struct nlmsghdr *)m;
	nlh->nlmsg_len = NLMSG_HDRLEN;
	for (uint16_t type = RTM_NEWLINK; type <= RTM_DELTFILTER; type++) {
		nlh->nlmsg_type = type;
		assert_int_equal(tls_tw_decode(nlh, &target), 0);
	}
	free(m);
	/* tcmsg cut in half */
	nlh = tc_msg(buf, RTM_DELQDISC, IFX, TC_H_ROOT, ROOT, 0, NULL);
	nlh->nlmsg_len = NLMSG_HDRLEN + sizeof(struct tcmsg) / 2;
	m = malloc(nlh->nlmsg_len);
	assert_non_null(m);
	memcpy(m, nlh, nlh->nlmsg_len);
	assert_int_equal(tls_tw_decode((struct nlmsghdr *)m, &target), 0);
	free(m);
	/* a name that fills its attribute without a NUL */
	nlh = link_msg(buf, RTM_NEWLINK, IFX + 5, NULL, AF_UNSPEC);
	mnl_attr_put(nlh, IFLA_IFNAME, 4, "eth7");
	assert_int_equal(tls_tw_decode(nlh, &target), 0);
	/* a name longer than any interface's */
	nlh = link_msg(buf, RTM_NEWLINK, IFX + 5, "eth7eth7eth7eth7eth7", AF_UNSPEC);
	assert_int_equal(tls_tw_decode(nlh, &target), 0);
	/* an attribute longer than the message: the walk stops */
	nlh = link_msg(buf, RTM_NEWLINK, IFX + 5, "eth7", AF_UNSPEC);
	a = (struct nlattr *)((char *)nlh + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct ifinfomsg)));
	a->nla_len = 0xfff0;
	assert_int_equal(tls_tw_decode(nlh, &target), 0);
	/* TCA_KIND without a NUL: another kind than htb for all tlsd knows */
	nlh = tc_msg(buf, RTM_NEWQDISC, IFX, TC_H_ROOT, ROOT, 0, NULL);
	mnl_attr_put(nlh, TCA_KIND, 3, "htb");
	assert_int_equal(tls_tw_decode(nlh, &target), TLS_TW_ROOT_OTHER);
	/* errors, acknowledgements and the end of a dump */
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NLMSG_ERROR;
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct nlmsgerr));
	assert_int_equal(tls_tw_decode(nlh, &target), 0);
	nlh->nlmsg_type = NLMSG_DONE;
	assert_int_equal(tls_tw_decode(nlh, &target), 0);
}

/* A burst in one datagram: the events OR-ed; a truncated tail ignored. */
static void test_burst(void **state)
{
	size_t len = 0;
	struct nlmsghdr *nlh;
	char what[256];
	unsigned int ev;

	(void)state;
	nlh = tc_msg(buf, RTM_DELQDISC, IFX, TC_H_ROOT, ROOT, 0, "htb");
	len += NLMSG_ALIGN(nlh->nlmsg_len);
	nlh = tc_msg(buf + len, RTM_NEWQDISC, IFX, TC_H_ROOT, 0x10000, 0, "pfifo");
	len += NLMSG_ALIGN(nlh->nlmsg_len);
	nlh = link_msg(buf + len, RTM_NEWLINK, IFX + 1, "eth8", AF_UNSPEC);
	len += NLMSG_ALIGN(nlh->nlmsg_len);
	nlh = tc_msg(buf + len, RTM_DELTFILTER, IFX, EGRESS, FHANDLE, INFO(FPRIO), "bpf");
	ev = tls_tw_decode_buf(buf, len + nlh->nlmsg_len, &target);
	assert_int_equal(ev, TLS_TW_ROOT_GONE | TLS_TW_ROOT_OTHER | TLS_TW_FILTER_GONE);
	/* the last message cut short: not decoded */
	ev = tls_tw_decode_buf(buf, len + nlh->nlmsg_len - 1, &target);
	assert_int_equal(ev, TLS_TW_ROOT_GONE | TLS_TW_ROOT_OTHER);
	assert_int_equal(tls_tw_decode_buf(buf, 0, &target), 0);
	assert_string_equal(
		tls_tw_describe(TLS_TW_ROOT_GONE | TLS_TW_FILTER_GONE, what, sizeof(what)),
		"root qdisc deleted, filter deleted");
	assert_string_equal(tls_tw_describe(0, what, sizeof(what)), "");
	tls_tw_describe(~0u, what, 10); /* cut, terminated */
	assert_int_equal(strlen(what), 9);
}

int run_tree_watch_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_qdisc), cmocka_unit_test(test_clsact_and_filter),
		cmocka_unit_test(test_classes),	   cmocka_unit_test(test_own_questions),
		cmocka_unit_test(test_link),	   cmocka_unit_test(test_broken),
		cmocka_unit_test(test_burst),
	};

	return cmocka_run_group_tests_name("tree_watch", tests, NULL, NULL);
}
