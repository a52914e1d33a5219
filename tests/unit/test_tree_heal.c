// SPDX-License-Identifier: GPL-2.0-only
/*
 * The self-healing tree's decisions: what each state of the interface calls
 * for and how it is named, the bound past which tlsd yields to another tool
 * (and that the bound's window slides), and the rate after a link speed
 * change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tree_heal.h"
#include "unit.h"

#define ROOT 0x715d0000u
#define S(x) ((uint64_t)(x)*1000 * 1000 * 1000)

static const struct tls_tree_target target = {
	.ifname = "eth7",
	.ifindex = 7,
	.root_handle = ROOT,
	.filter_handle = 0x715d,
	.filter_prio = 0x715d,
	.prog_id = 99,
	.bands = 2,
};

/* Everything in place. */
static void intact(struct tls_tree_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->ifindex = 7;
	f->root.present = true;
	f->root.handle = ROOT;
	strcpy(f->root.kind, "htb");
	f->clsact.present = true;
	f->clsact.handle = 0xffff0000;
	strcpy(f->clsact.kind, "clsact");
	f->filter = true;
	strcpy(f->filter_kind, "bpf");
	f->filter_prog_id = 99;
}

static void judged(const struct tls_tree_facts *f, unsigned int want, const char *why)
{
	char got[256];

	assert_int_equal(tls_tree_judge(f, &target, got, sizeof(got)), want);
	assert_string_equal(got, why);
}

static void test_judge(void **state)
{
	struct tls_tree_facts f;

	(void)state;
	intact(&f);
	judged(&f, 0, "");

	/* the root: gone, the kernel's default back, another tool's */
	f.root.present = false;
	judged(&f, TLS_REPAIR_ROOT, "root qdisc deleted");
	intact(&f);
	f.root.handle = 0;
	strcpy(f.root.kind, "noqueue");
	judged(&f, TLS_REPAIR_ROOT, "root qdisc deleted (the kernel's default noqueue is back)");
	intact(&f);
	f.root.handle = 0x10000;
	strcpy(f.root.kind, "pfifo");
	judged(&f, TLS_REPAIR_ROOT, "root qdisc replaced by pfifo (handle 1:)");
	/* under tlsd's handle, of another kind */
	intact(&f);
	strcpy(f.root.kind, "pfifo");
	judged(&f, TLS_REPAIR_ROOT, "root qdisc replaced by pfifo (handle 715d:)");
	/* a new root rebuilds every class: the classes are not judged */
	f.classes_missing = 3;
	f.missing_class = ROOT | 1;
	judged(&f, TLS_REPAIR_ROOT, "root qdisc replaced by pfifo (handle 715d:)");

	/* classes */
	intact(&f);
	f.classes_missing = 1;
	f.missing_class = ROOT | 0x11;
	judged(&f, TLS_REPAIR_CLASSES, "HTB class 715d:11 deleted");
	f.classes_missing = 3;
	f.missing_class = ROOT | 0x10;
	judged(&f, TLS_REPAIR_CLASSES, "HTB classes 715d:10 and 2 more deleted");

	/* clsact and the filter */
	intact(&f);
	f.clsact.present = false;
	f.filter = false;
	judged(&f, TLS_REPAIR_FILTER, "clsact qdisc deleted");
	intact(&f);
	strcpy(f.clsact.kind, "ingress");
	judged(&f, TLS_REPAIR_FILTER, "clsact qdisc replaced by ingress");
	intact(&f);
	f.filter = false;
	judged(&f, TLS_REPAIR_FILTER, "classifier filter deleted");
	intact(&f);
	f.filter_prog_id = 100;
	judged(&f, TLS_REPAIR_FILTER, "classifier filter replaced by bpf (program id 100)");
	intact(&f);
	strcpy(f.filter_kind, "u32");
	f.filter_prog_id = 0;
	judged(&f, TLS_REPAIR_FILTER, "classifier filter replaced by u32 (program id 0)");

	/* both at once, both named */
	intact(&f);
	f.root.present = false;
	f.clsact.present = false;
	judged(&f, TLS_REPAIR_ROOT | TLS_REPAIR_FILTER, "root qdisc deleted; clsact qdisc deleted");
}

/* Observe mode (no root handle): whatever the root qdisc is, it is the
 * user's; only the filter and clsact are tlsd's to heal. */
static void test_judge_observe(void **state)
{
	struct tls_tree_target t = target;
	struct tls_tree_facts f;
	char why[128];

	(void)state;
	t.root_handle = 0;
	intact(&f);
	f.root.handle = 0x10000;
	strcpy(f.root.kind, "fq_codel");
	assert_int_equal(tls_tree_judge(&f, &t, why, sizeof(why)), 0);
	f.root.present = false;
	f.classes_missing = 2;
	assert_int_equal(tls_tree_judge(&f, &t, why, sizeof(why)), 0);
	f.filter = false;
	assert_int_equal(tls_tree_judge(&f, &t, why, sizeof(why)), TLS_REPAIR_FILTER);
	assert_string_equal(why, "classifier filter deleted");
}

/* A message buffer too short is cut, never overrun (ASan). */
static void test_judge_short_buffer(void **state)
{
	struct tls_tree_facts f;
	char why[12];

	(void)state;
	intact(&f);
	f.root.present = false;
	f.filter = false;
	memset(why, 'X', sizeof(why));
	assert_int_equal(tls_tree_judge(&f, &target, why, 8), TLS_REPAIR_ROOT | TLS_REPAIR_FILTER);
	assert_int_equal(strlen(why), 7);
	assert_int_equal(why[8], 'X');
	assert_int_equal(tls_tree_judge(&f, &target, why, 0), TLS_REPAIR_ROOT | TLS_REPAIR_FILTER);
}

/* 5 heals within 60 s, the sixth refused; the window slides. */
static void test_admit(void **state)
{
	struct tls_heal h;
	uint64_t t = S(1000);

	(void)state;
	tls_heal_init(&h, 5, S(60));
	assert_int_equal(h.state, TLS_TREE_INTACT);
	for (int i = 0; i < 5; i++)
		assert_true(tls_heal_admit(&h, t + S(i)));
	assert_int_equal(tls_heal_recent(&h, t + S(5)), 5);
	assert_false(tls_heal_admit(&h, t + S(5)));
	assert_false(tls_heal_admit(&h, t + S(59))); /* the first is 59 s old */
	assert_int_equal(tls_heal_recent(&h, t + S(59)), 5);
	/* the first heal leaves the window at 60 s */
	assert_int_equal(tls_heal_recent(&h, t + S(60)), 4);
	assert_true(tls_heal_admit(&h, t + S(60)));
	assert_false(tls_heal_admit(&h, t + S(60)));
	/* long after, all of them gone */
	assert_int_equal(tls_heal_recent(&h, t + S(1000)), 0);
	for (int i = 0; i < 5; i++)
		assert_true(tls_heal_admit(&h, t + S(1000)));
	assert_false(tls_heal_admit(&h, t + S(1000)));
	/* SIGHUP: a fresh count */
	tls_heal_forget(&h);
	assert_int_equal(tls_heal_recent(&h, t + S(1000)), 0);
	assert_true(tls_heal_admit(&h, t + S(1000)));
}

static void test_limits(void **state)
{
	struct tls_heal h;

	(void)state;
	/* 0: yield at the first change */
	tls_heal_init(&h, 0, S(60));
	assert_false(tls_heal_admit(&h, S(1)));
	/* capped */
	tls_heal_init(&h, TLS_HEAL_LIMIT_MAX + 50, S(60));
	assert_int_equal(h.limit, TLS_HEAL_LIMIT_MAX);
	for (int i = 0; i < TLS_HEAL_LIMIT_MAX; i++)
		assert_true(tls_heal_admit(&h, S(1)));
	assert_false(tls_heal_admit(&h, S(1)));
	/* a smaller limit on reload keeps the newest */
	tls_heal_set_limit(&h, 3, S(60));
	assert_int_equal(h.nrecent, 3);
	assert_false(tls_heal_admit(&h, S(2)));
	/* a shorter window on reload lets the old ones go sooner */
	tls_heal_set_limit(&h, 3, S(10));
	assert_int_equal(tls_heal_recent(&h, S(11)), 0);
	assert_true(tls_heal_admit(&h, S(11)));
}

static void test_new_rate(void **state)
{
	(void)state;
	/* auto: follow the driver */
	assert_int_equal(tls_heal_new_rate(0, 10000000000ULL, 0, 1000000000ULL), 1000000000ULL);
	assert_int_equal(tls_heal_new_rate(0, 100000000ULL, 0, 25000000000ULL), 25000000000ULL);
	/* unchanged */
	assert_int_equal(tls_heal_new_rate(0, 1000000000ULL, 0, 1000000000ULL), 0);
	/* a link that is down reports no speed: keep the one it had */
	assert_int_equal(tls_heal_new_rate(0, 1000000000ULL, -61 /* ENODATA */, 0), 0);
	assert_int_equal(tls_heal_new_rate(0, 1000000000ULL, 0, 0), 0);
	/* link_rate set: never */
	assert_int_equal(tls_heal_new_rate(9500000000ULL, 9500000000ULL, 0, 1000000000ULL), 0);
}

static void test_state_names(void **state)
{
	(void)state;
	assert_string_equal(tls_tree_state_name(TLS_TREE_INTACT), "intact");
	assert_string_equal(tls_tree_state_name(TLS_TREE_ABSENT), "absent");
	assert_string_equal(tls_tree_state_name(TLS_TREE_YIELDED), "yielded");
}

int run_tree_heal_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_judge),	 cmocka_unit_test(test_judge_observe),
		cmocka_unit_test(test_judge_short_buffer),
		cmocka_unit_test(test_admit),	 cmocka_unit_test(test_limits),
		cmocka_unit_test(test_new_rate), cmocka_unit_test(test_state_names),
	};

	return cmocka_run_group_tests_name("tree_heal", tests, NULL, NULL);
}
