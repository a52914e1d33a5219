// SPDX-License-Identifier: GPL-2.0-only
/*
 * Discovery's trust model (tcd/trust.c, tcd/config_trust.c): the /proc
 * parsers, slice names as paths, the decision table, and the configuration
 * (good files, and bad ones each naming the setting).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "trust.h"
#include "unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char status_user[] = "Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\n"
				   "Tgid:\t4242\nPid:\t4242\nPPid:\t1\n"
				   "Uid:\t1000\t0\t0\t0\n" /* setuid: effective root */
				   "Gid:\t1000\t1000\t1000\t1000\n"
				   "FDSize:\t64\nGroups:\t24 27 1000 \nNStgid:\t4242\n";

static void test_parse_status(void **state)
{
	struct tls_proc_creds c;
	static const char *const bad[] = {
		"Name:\tx\n",		   /* no Uid */
		"Uid:\t\nGid:\t0\n",	   /* empty */
		"Uid:\tx\t0\nGid:\t0\n",   /* not a number */
		"Uid:\t0\n",		   /* no Gid */
		"Uid:\t4294967295\nGid:\t0\n", /* (uid_t)-1 is no uid */
		"Uid:\t99999999999999999999\nGid:\t0\n",
		" Uid:\t0\nGid:\t0\n", /* not at a line's start */
	};
	size_t i;

	(void)state;
	assert_int_equal(tls_parse_proc_status(status_user, strlen(status_user), &c), 0);
	assert_int_equal(c.uid, 1000); /* the real one, not the effective 0 */
	assert_int_equal(c.gid, 1000);
	assert_int_equal(c.ngroups, 3);
	assert_int_equal(c.groups[0], 24);
	assert_int_equal(c.groups[2], 1000);
	/* no Groups line, an empty one, and a buffer cut mid-line */
	assert_int_equal(tls_parse_proc_status("Uid:\t0\t0\nGid:\t5\n", 16, &c), 0);
	assert_int_equal(c.gid, 5);
	assert_int_equal(c.ngroups, 0);
	assert_int_equal(tls_parse_proc_status("Uid:\t7\nGid:\t8\nGroups:\t\n", 23, &c), 0);
	assert_int_equal(c.ngroups, 0);
	assert_int_equal(tls_parse_proc_status("Uid:\t7\nGid:\t81", 13, &c), 0);
	assert_int_equal(c.gid, 8); /* what the length holds, not past it */
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (tls_parse_proc_status(bad[i], strlen(bad[i]), &c) != -EINVAL)
			print_error("accepted: %s\n", bad[i]);
		assert_int_equal(tls_parse_proc_status(bad[i], strlen(bad[i]), &c), -EINVAL);
	}
}

static void test_parse_cgroup(void **state)
{
	char p[64];
	static const char v1v2[] = "12:cpu,cpuacct:/user.slice\n0::/system.slice/ps.service\n";

	(void)state;
	assert_int_equal(tls_parse_proc_cgroup("0::/\n", 5, p, sizeof(p)), 0);
	assert_string_equal(p, "/");
	assert_int_equal(tls_parse_proc_cgroup(v1v2, strlen(v1v2), p, sizeof(p)), 0);
	assert_string_equal(p, "/system.slice/ps.service");
	assert_int_equal(tls_parse_proc_cgroup("3:memory:/x\n", 12, p, sizeof(p)), -ENOENT);
	assert_int_equal(tls_parse_proc_cgroup("0::\n", 4, p, sizeof(p)), -EINVAL);
	assert_int_equal(tls_parse_proc_cgroup("0::x\n", 5, p, sizeof(p)), -EINVAL);
	assert_int_equal(tls_parse_proc_cgroup("0::/abcdef\n", 11, p, 4), -EINVAL); /* long */
	assert_int_equal(tls_parse_proc_cgroup("0::/a\0b\n", 8, p, sizeof(p)), -EINVAL);
}

static void test_cgroup_paths(void **state)
{
	static const struct {
		const char *entry, *path; /* NULL: refused */
	} t[] = {
		{ "/kubepods.slice", "/kubepods.slice" },
		{ "/kubepods.slice//", "/kubepods.slice" },
		{ "/a//b", NULL },
		{ "/a/b/", "/a/b" },
		{ "/", "/" },
		{ "ml.slice", "/ml.slice" },
		{ "ml-team.slice", "/ml.slice/ml-team.slice" },
		{ "a-b-c.slice", "/a.slice/a-b.slice/a-b-c.slice" },
		{ "ml.service", NULL }, /* a bare name would match a user's own cgroup */
		{ "ml", NULL },
		{ ".slice", NULL },
		{ "-a.slice", NULL },
		{ "a-.slice", NULL },
		{ "a--b.slice", NULL },
		{ "a/b.slice", NULL },
		{ "/a/../b", NULL },
		{ "/a/..", NULL },
		{ "/a/./b", NULL },
	};
	char p[TLS_CGROUP_PATH_MAX], err[200];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		int ret = tls_trust_cgroup_path(t[i].entry, p, sizeof(p), err, sizeof(err));

		if ((ret == 0) != (t[i].path != NULL))
			print_error("%s: %d (%s)\n", t[i].entry, ret, ret ? err : p);
		assert_int_equal(ret, t[i].path ? 0 : -EINVAL);
		if (t[i].path)
			assert_string_equal(p, t[i].path);
		else
			assert_non_null(strstr(err, t[i].entry)); /* the message names it */
	}
	assert_true(tls_cgroup_under("/ml.slice", "/ml.slice"));
	assert_true(tls_cgroup_under("/ml.slice/ml-a.slice/x.scope", "/ml.slice"));
	assert_false(tls_cgroup_under("/ml.slicex", "/ml.slice"));
	assert_false(tls_cgroup_under("/user.slice/ml.slice", "/ml.slice"));
	assert_true(tls_cgroup_under("/anything", "/"));
}

static void test_check(void **state)
{
	struct tls_trust_conf t;
	struct tls_proc_creds root = { .uid = 0, .gid = 0 };
	struct tls_proc_creds user = { .uid = 1000, .gid = 1000, .ngroups = 2, .groups = { 24, 500 } };

	(void)state;
	tls_trust_default(&t);
	assert_null(tls_trust_check(&t, &root, NULL, false));
	assert_null(tls_trust_check(&t, &root, NULL, true)); /* containers: any netns */
	assert_non_null(tls_trust_check(&t, &user, NULL, false));
	/* by uid, by real gid, by a supplementary group */
	t.uids[t.nuids++] = 1000;
	assert_null(tls_trust_check(&t, &user, NULL, false));
	t.nuids = 1;
	t.gids[t.ngids++] = 1000;
	assert_null(tls_trust_check(&t, &user, NULL, false));
	t.gids[0] = 500;
	assert_null(tls_trust_check(&t, &user, NULL, false));
	t.gids[0] = 501;
	assert_non_null(tls_trust_check(&t, &user, NULL, false));
	/* the namespace */
	t.netns = TLS_TRUST_NETNS_SAME;
	assert_null(tls_trust_check(&t, &root, NULL, false));
	assert_non_null(strstr(tls_trust_check(&t, &root, NULL, true), "netns"));
	/* cgroups: an unknown one is refused once any is required */
	t.netns = TLS_TRUST_NETNS_ANY;
	snprintf(t.cgroups[t.ncgroups++], TLS_CGROUP_PATH_MAX, "/ml.slice");
	assert_non_null(tls_trust_check(&t, &root, NULL, false));
	assert_non_null(tls_trust_check(&t, &root, "/user.slice/ml.slice", false));
	assert_null(tls_trust_check(&t, &root, "/ml.slice/ml-a.slice/ps.scope", false));
	/* who comes first: a user outside is refused in the right cgroup too */
	assert_non_null(strstr(tls_trust_check(&t, &user, "/ml.slice", false), "user"));
}

static void test_config(void **state)
{
	struct tls_config *c = malloc(sizeof(*c));
	const struct tls_trust_conf *t = &c->discovery.trust;
	char err[512];

	(void)state;
	assert_non_null(c);
	tls_config_defaults(c);
	assert_int_equal(t->nuids, 1);
	assert_int_equal(t->uids[0], 0);
	assert_int_equal(t->ps_per_user, TLS_PS_PER_USER_DEFAULT);
	assert_int_equal(t->endpoints_per_user, TLS_EPS_PER_USER_DEFAULT);
	assert_int_equal(tls_config_load_string("discovery = { trust = { users = [ \"root\", "
						"\"1001\" ]; groups = [ \"root\" ]; cgroups = [ "
						"\"ml-a.slice\", \"/kubepods.slice/\" ]; netns = "
						"\"same\"; }; limits = { ps_per_user = 3; "
						"jobs_per_user = 2; endpoints_per_user = 7; }; };",
						c, err, sizeof(err)),
			 0);
	assert_int_equal(t->nuids, 2);
	assert_int_equal(t->uids[1], 1001);
	assert_int_equal(t->ngids, 1);
	assert_int_equal(t->ncgroups, 2);
	assert_string_equal(t->cgroups[0], "/ml.slice/ml-a.slice");
	assert_string_equal(t->cgroups[1], "/kubepods.slice");
	assert_int_equal(t->netns, TLS_TRUST_NETNS_SAME);
	assert_int_equal(t->ps_per_user, 3);
	assert_int_equal(t->jobs_per_user, 2);
	assert_int_equal(t->endpoints_per_user, 7);
	/* users given without root: root is not trusted */
	assert_int_equal(tls_config_load_string("discovery = { trust = { users = [ 1001 ]; }; };", c,
						err, sizeof(err)),
			 0);
	assert_int_equal(t->nuids, 1);
	assert_int_equal(t->uids[0], 1001);
	free(c);
}

static void test_bad_config(void **state)
{
	static const struct {
		const char *text, *names;
	} bad[] = {
		{ "discovery = { trust = 1; };", "discovery.trust" },
		{ "discovery = { trust = { user = [ 0 ]; }; };", "'user'" },
		{ "discovery = { trust = { users = \"root\"; }; };", "discovery.trust.users" },
		{ "discovery = { trust = { users = [ \"no-such-user-x\" ]; }; };",
		  "no-such-user-x" },
		{ "discovery = { trust = { groups = [ \"no-such-group-x\" ]; }; };",
		  "no-such-group-x" },
		{ "discovery = { trust = { users = [ -1 ]; }; };", "negative" },
		{ "discovery = { trust = { users = [ ]; }; };", "trusts nobody" },
		{ "discovery = { trust = { cgroups = [ \"ml\" ]; }; };", "cgroups[0]" },
		{ "discovery = { trust = { cgroups = [ 5 ]; }; };", "cgroups[0]" },
		{ "discovery = { trust = { netns = \"host\"; }; };", "netns" },
		{ "discovery = { limits = { ps_per_user = 0; }; };", "ps_per_user" },
		{ "discovery = { limits = { jobs_per_user = 100000; }; };", "jobs_per_user" },
		{ "discovery = { limits = { ps_per_user = \"5\"; }; };", "ps_per_user" },
		{ "discovery = { limits = { endpoints_per_user = 32769; }; };",
		  "endpoints_per_user must be a whole number from 1 to 32768" },
		{ "discovery = { limits = { sockets = 5; }; };", "'sockets'" },
	};
	struct tls_config *c = malloc(sizeof(*c)), *copy = malloc(sizeof(*c));
	char err[512];
	size_t i;

	(void)state;
	assert_non_null(c);
	assert_non_null(copy);
	tls_config_defaults(c);
	memcpy(copy, c, sizeof(*c));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		assert_int_equal(tls_config_load_string(bad[i].text, c, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].names))
			print_error("\"%s\": message \"%s\" does not name %s\n", bad[i].text, err,
				    bad[i].names);
		assert_non_null(strstr(err, bad[i].names));
		assert_memory_equal(c, copy, sizeof(*c)); /* nothing applied */
	}
	free(copy);
	free(c);
}

int run_trust_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_status), cmocka_unit_test(test_parse_cgroup),
		cmocka_unit_test(test_cgroup_paths), cmocka_unit_test(test_check),
		cmocka_unit_test(test_config),	     cmocka_unit_test(test_bad_config),
	};

	return cmocka_run_group_tests_name("trust", tests, NULL, NULL);
}
