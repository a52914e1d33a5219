// SPDX-License-Identifier: GPL-2.0-only
/*
 * tls_qdisc_not_default(): which qdisc stops tlsd from starting without
 * replace_qdisc. The lists are what the kernel reports (tc qdisc show):
 * its own attachments have handle 0:, anything added has a handle.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <linux/pkt_sched.h>

#include "shaper.h"
#include "unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define H(maj, min)   ((uint32_t)(maj) << 16 | (min))

/* noqueue (veth), pfifo_fast, fq_codel (default_qdisc), mq with its
 * default children, each with clsact beside it: default. */
static void test_kernel_defaults(void **state)
{
	static const struct tls_qdisc_id single[][2] = {
		{ { 0, TC_H_ROOT, "noqueue" }, { H(0xffff, 0), TC_H_INGRESS, "clsact" } },
		{ { 0, TC_H_ROOT, "pfifo_fast" }, { H(0xffff, 0), TC_H_INGRESS, "ingress" } },
		{ { 0, TC_H_ROOT, "fq_codel" }, { H(0xffff, 0), TC_H_INGRESS, "clsact" } },
	};
	static const struct tls_qdisc_id mq[] = {
		{ 0, TC_H_ROOT, "mq" },
		{ 0, H(0, 1), "fq_codel" },
		{ 0, H(0, 2), "fq_codel" },
		{ H(0xffff, 0), TC_H_INGRESS, "clsact" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(single); i++)
		assert_null(tls_qdisc_not_default(single[i], 2));
	assert_null(tls_qdisc_not_default(mq, ARRAY_SIZE(mq)));
	assert_null(tls_qdisc_not_default(NULL, 0)); /* none listed: nothing to keep */
}

/* A user's root qdisc is named, before anything under it. */
static void test_user_root(void **state)
{
	static const struct tls_qdisc_id q[] = {
		{ H(0xffff, 0), TC_H_INGRESS, "clsact" },
		{ H(7, 0), H(5, 1), "fq" },
		{ H(5, 0), TC_H_ROOT, "htb" },
	};
	static const struct tls_qdisc_id auto_handle[] = { { H(0x8001, 0), TC_H_ROOT, "fq" } };

	(void)state;
	assert_ptr_equal(tls_qdisc_not_default(q, ARRAY_SIZE(q)), &q[2]);
	assert_ptr_equal(tls_qdisc_not_default(auto_handle, 1), &auto_handle[0]);
}

/* mq is the kernel's, but a TX queue's child was replaced: not default,
 * the child is named (deleting the root would lose it). */
static void test_mq_user_child(void **state)
{
	static const struct tls_qdisc_id q[] = {
		{ 0, TC_H_ROOT, "mq" },
		{ 0, H(0, 1), "fq_codel" },
		{ H(0x8002, 0), H(0, 2), "fq" },
	};

	(void)state;
	assert_ptr_equal(tls_qdisc_not_default(q, ARRAY_SIZE(q)), &q[2]);
}

/* tlsd's own tree (a crashed run's) is taken over, whatever lies under it. */
static void test_own_tree(void **state)
{
	static const struct tls_qdisc_id q[] = {
		{ H(0x9000, 0), H(TLS_HTB_MAJOR, 0x10), "fq_codel" },
		{ TLS_CLASSID(0), TC_H_ROOT, "htb" },
		{ H(0xffff, 0), TC_H_INGRESS, "clsact" },
	};
	static const struct tls_qdisc_id other_htb[] = { { H(0x715e, 0), TC_H_ROOT, "htb" } };

	(void)state;
	assert_null(tls_qdisc_not_default(q, ARRAY_SIZE(q)));
	assert_ptr_equal(tls_qdisc_not_default(other_htb, 1), &other_htb[0]);
}

int run_qdisc_default_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_defaults),
		cmocka_unit_test(test_user_root),
		cmocka_unit_test(test_mq_user_child),
		cmocka_unit_test(test_own_tree),
	};

	return cmocka_run_group_tests_name("qdisc_default", tests, NULL, NULL);
}
