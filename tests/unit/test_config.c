// SPDX-License-Identifier: GPL-2.0-only
/*
 * The configuration file (tcd/config.c): the defaults, a file with every
 * setting, a table of bad files (each rejected with -EINVAL, leaving the
 * caller's configuration byte for byte as it was and naming the setting),
 * the whole-picture checks of tls_config_validate, and loading from a path.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "classifier.h"
#include "config.h"
#include "unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define MS(x) ((uint64_t)(x)*1000 * 1000)
#define S(x)  ((uint64_t)(x)*1000 * 1000 * 1000)

/* Every setting, none at its default. */
static const char full_config[] = "interface = \"eth0\";\n"
				  "link_rate = \"10gbit\";\n"
				  "policy = \"one\";\n"
				  "interval = \"500ms\";\n"
				  "bands = 3;\n"
				  "flowlet_gap = \"2ms\";\n"
				  "flowlet_hold = \"50ms\";\n"
				  "lead_headroom = \"2.5%\";\n"
				  "heal_limit = 3;\n"
				  "heal_window = \"10s\";\n"
				  "dscp = true;\n"
				  "replace_qdisc = true;\n"
				  "mode = \"observe\";\n"
				  "control_socket = \"/tmp/tlsd-test.sock\";\n"
				  "jobs = ( { name = \"a\"; ports = [ 9000, 9001 ]; },\n"
				  "         { name = \"b\"; ports = [ 9100 ]; } );\n";

static struct tls_config *new_config(void)
{
	struct tls_config *c = malloc(sizeof(*c));

	assert_non_null(c);
	tls_config_defaults(c);
	return c;
}

/* Is needle in the message? Say what the message was if not. */
static void assert_names(const char *err, const char *needle, const char *input)
{
	if (!strstr(err, needle))
		print_error("message \"%s\" does not name \"%s\" (input: %s)\n", err, needle,
			    input);
	assert_non_null(strstr(err, needle));
}

static void test_defaults(void **state)
{
	struct tls_config *c = malloc(sizeof(*c));
	size_t i;

	(void)state;
	assert_non_null(c);
	memset(c, 0xa5, sizeof(*c)); /* every field must be written */
	tls_config_defaults(c);
	assert_string_equal(c->ifname, "");
	assert_int_equal(c->rate_bps, 0);
	assert_int_equal(c->policy, TLS_POLICY_BURSTS);
	assert_int_equal(c->interval_ns, S(20));
	assert_int_equal(c->interval_ns, TLS_INTERVAL_DEFAULT_NS);
	assert_int_equal(c->bands, 4);
	assert_int_equal(c->flowlet_gap_ns, MS(4));
	assert_int_equal(c->flowlet_hold_ns, MS(100));
	assert_int_equal(c->ctl_idle_ns, TLS_CTL_IDLE_DEFAULT_NS);
	assert_int_equal(c->lead_headroom_ppm, 50000);
	assert_int_equal(c->heal_limit, 5);
	assert_int_equal(c->heal_window_ns, S(60));
	assert_false(c->dscp);
	assert_false(c->replace_qdisc);
	assert_false(c->observe);
	assert_string_equal(c->ctl_path, "/run/tlsd/tlsd.sock");
	assert_string_equal(c->ctl_path, TLS_CTL_DEFAULT);
	assert_int_equal(c->njobs, 0);
	for (i = 0; i < TLS_MAX_STATIC_JOBS; i++)
		assert_int_equal(c->jobs[i].nports, 0);
	free(c);
}

/* An empty file (or only comments) changes nothing. */
static void test_empty(void **state)
{
	struct tls_config *c = new_config(), *d = new_config();
	char err[256] = "";

	(void)state;
	assert_int_equal(tls_config_load_string("", c, err, sizeof(err)), 0);
	assert_memory_equal(c, d, sizeof(*c));
	assert_int_equal(tls_config_load_string("# nothing\n// here\n", c, err, sizeof(err)), 0);
	assert_memory_equal(c, d, sizeof(*c));
	free(c);
	free(d);
}

static void test_full(void **state)
{
	struct tls_config *c = new_config();
	char err[256] = "";
	int ret;

	(void)state;
	ret = tls_config_load_string(full_config, c, err, sizeof(err));
	if (ret)
		print_error("%s\n", err);
	assert_int_equal(ret, 0);
	assert_string_equal(c->ifname, "eth0");
	assert_int_equal(c->rate_bps, 10000000000ULL);
	assert_int_equal(c->policy, TLS_POLICY_ONE);
	assert_int_equal(c->interval_ns, MS(500));
	assert_int_equal(c->bands, 3);
	assert_int_equal(c->flowlet_gap_ns, MS(2));
	assert_int_equal(c->flowlet_hold_ns, MS(50));
	assert_int_equal(c->lead_headroom_ppm, 25000);
	assert_int_equal(c->heal_limit, 3);
	assert_int_equal(c->heal_window_ns, S(10));
	assert_true(c->dscp);
	assert_true(c->replace_qdisc);
	assert_true(c->observe);
	assert_string_equal(c->ctl_path, "/tmp/tlsd-test.sock");
	assert_int_equal(c->njobs, 2);
	assert_string_equal(c->jobs[0].name, "a");
	assert_int_equal(c->jobs[0].nports, 2);
	assert_int_equal(c->jobs[0].ports[0], 9000);
	assert_int_equal(c->jobs[0].ports[1], 9001);
	assert_string_equal(c->jobs[1].name, "b");
	assert_int_equal(c->jobs[1].nports, 1);
	assert_int_equal(c->jobs[1].ports[0], 9100);
	assert_int_equal(tls_config_validate(c, err, sizeof(err)), 0);
	free(c);
}

/* Other spellings that are valid: policy "rr"/"fifo", dscp false, ports as a
 * list, 64-bit port literals, boundary values, the longest names. */
static void test_more_valid(void **state)
{
	struct tls_config *c = new_config();
	char err[256] = "", text[512];
	int ret;

	(void)state;
	snprintf(text, sizeof(text),
		 "interface = \"%s\"; policy = \"rr\"; bands = 7; dscp = false;\n"
		 "interval = \"10ms\"; link_rate = \"100Mbit\";\n"
		 "jobs = ( { name = \"%s\"; ports = ( 1, 65535L ); } );\n",
		 "abcdefghijklmno", /* IF_NAMESIZE - 1 */
		 "123456789012345678901234567890123456789012345678901234567890123"); /* 63 */
	ret = tls_config_load_string(text, c, err, sizeof(err));
	if (ret)
		print_error("%s\n", err);
	assert_int_equal(ret, 0);
	assert_string_equal(c->ifname, "abcdefghijklmno");
	assert_int_equal(c->policy, TLS_POLICY_RR);
	assert_int_equal(c->bands, 7);
	assert_false(c->dscp);
	assert_int_equal(c->interval_ns, MS(10));
	assert_int_equal(c->rate_bps, 100000000ULL);
	assert_int_equal(c->njobs, 1);
	assert_int_equal(strlen(c->jobs[0].name), TLS_JOB_NAME_MAX - 1);
	assert_int_equal(c->jobs[0].nports, 2);
	assert_int_equal(c->jobs[0].ports[0], 1);
	assert_int_equal(c->jobs[0].ports[1], 65535);
	assert_int_equal(tls_config_validate(c, err, sizeof(err)), 0);

	assert_int_equal(
		tls_config_load_string("policy = \"fifo\"; bands = 1;", c, err, sizeof(err)), 0);
	assert_int_equal(c->policy, TLS_POLICY_FIFO);
	assert_int_equal(c->bands, 1);
	/* settings the second string did not mention are kept */
	assert_string_equal(c->ifname, "abcdefghijklmno");
	assert_int_equal(c->interval_ns, MS(10));
	assert_int_equal(c->rate_bps, 100000000ULL);

	/* Bare numbers: seconds and bits/s. */
	assert_int_equal(tls_config_load_string("interval = 20; link_rate = 1000000; "
						"flowlet_gap = 0.004;",
						c, err, sizeof(err)),
			 0);
	assert_int_equal(c->interval_ns, 20ULL * 1000 * 1000 * 1000);
	assert_int_equal(c->rate_bps, 1000000ULL);
	assert_int_equal(c->flowlet_gap_ns, MS(4));

	/* "auto": the interface's speed (0 here); the least rate taken */
	assert_int_equal(tls_config_load_string("link_rate = \"auto\";", c, err, sizeof(err)), 0);
	assert_int_equal(c->rate_bps, 0);
	assert_int_equal(tls_config_load_string("link_rate = \"8kbit\";", c, err, sizeof(err)), 0);
	assert_int_equal(c->rate_bps, 8000ULL);
	free(c);
}

/* Exactly 16 ports is the limit. */
static void test_max_ports(void **state)
{
	struct tls_config *c = new_config();
	char err[256] = "";
	unsigned int i;

	(void)state;
	assert_int_equal(tls_config_load_string("jobs = ( { name = \"x\"; ports = [ 1, 2, 3, 4, 5, "
						"6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 ]; } );",
						c, err, sizeof(err)),
			 0);
	assert_int_equal(c->njobs, 1);
	assert_int_equal(c->jobs[0].nports, TLS_MAX_JOB_PORTS);
	for (i = 0; i < TLS_MAX_JOB_PORTS; i++)
		assert_int_equal(c->jobs[0].ports[i], i + 1);
	free(c);
}

struct bad_config {
	const char *text;
	const char *names[2]; /* what the message must contain (NULL: nothing more) */
};

#define NAME64 "1234567890123456789012345678901234567890123456789012345678901234"

static const struct bad_config bad[] = {
	/* syntax */
	/* (none with the error at a string: libconfig 1.5 leaks the string then) */
	{ "bands 4;\n", { "line 1", NULL } },
	{ "bands = 4;\npolicy = ;\n", { "line 2", NULL } },
	{ "jobs = ( { name = \"a\"; ports = [ 1, \"x\" ]; } );", { "line", NULL } },
	/* unknown settings */
	{ "foo = 1;", { "unknown setting 'foo'", NULL } },
	{ "bands = 4;\nPolicy = \"one\";", { "unknown setting 'Policy'", "line 2" } },
	{ "ports = [ 9000 ];", { "unknown setting 'ports'", NULL } },
	/* policy */
	{ "policy = \"lifo\";", { "policy", "lifo" } },
	{ "policy = \"\";", { "policy", NULL } },
	{ "policy = 1;", { "policy", NULL } },
	/* bands */
	{ "bands = 0;", { "bands", NULL } },
	{ "bands = 8;", { "bands", NULL } },
	{ "bands = -1;", { "bands", NULL } },
	{ "bands = \"4\";", { "bands", NULL } },
	{ "bands = 4.0;", { "bands", NULL } },
	{ "bands = 4294967300L;", { "bands", NULL } },
	/* durations and rates */
	{ "interval = \"fast\";", { "interval", "fast" } },
	{ "interval = \"-20s\";", { "interval", NULL } },
	{ "interval = -1;", { "interval", NULL } },
	{ "jobs = ( { name = \"a\"; ports = [ 1 ]; band = 2; } );",
	  { "unknown setting 'band'", NULL } },
	{ "interval = \"-1s\";", { "interval", NULL } },
	{ "flowlet_gap = \"4msec\";", { "flowlet_gap", "4msec" } },
	{ "flowlet_hold = true;", { "flowlet_hold", NULL } },
	{ "lead_headroom = 3;", { "lead_headroom", "5%" } }, /* the example names the unit */
	{ "lead_headroom = \"60%\";", { "lead_headroom", "60%" } },
	{ "lead_headroom = \"-1%\";", { "lead_headroom", NULL } },
	{ "lead_headroom = \"0.05\";", { "lead_headroom", NULL } },
	{ "heal_limit = -1;", { "heal_limit", "0..100" } },
	{ "heal_limit = 101;", { "heal_limit", "101" } },
	{ "heal_limit = \"5\";", { "heal_limit", NULL } },
	{ "heal_limit = 5.0;", { "heal_limit", NULL } },
	{ "heal_window = \"soon\";", { "heal_window", "soon" } },
	{ "heal_window = true;", { "heal_window", NULL } },
	{ "link_rate = \"fast\";", { "link_rate", "fast" } },
	{ "link_rate = -1000;", { "link_rate", NULL } },
	{ "link_rate = \"10gbps\";", { "link_rate", NULL } },
	/* "0" once meant the interface's speed without saying so */
	{ "link_rate = \"0\";", { "link_rate", "auto" } },
	{ "link_rate = 7;", { "link_rate", "8kbit" } },
	{ "link_rate = \"7999bit\";", { "link_rate", "7999" } },
	{ "link_rate = \"Auto\";", { "link_rate", "Auto" } },
	/* control_idle_timeout */
	{ "control_idle_timeout = \"500ms\";", { "control_idle_timeout", "1s" } },
	{ "control_idle_timeout = \"soon\";", { "control_idle_timeout", "soon" } },
	/* dscp */
	{ "dscp = 1;", { "dscp", NULL } },
	{ "dscp = \"true\";", { "dscp", NULL } },
	/* interface */
	{ "interface = \"\";", { "interface", NULL } },
	{ "interface = \"abcdefghijklmnopqrst\";", { "interface", NULL } },
	{ "interface = \"abcdefghijklmnop\";", { "interface", NULL } }, /* 16 */
	{ "interface = \"eth/0\";", { "interface", NULL } },
	{ "interface = \"eth 0\";", { "interface", NULL } },
	{ "interface = 0;", { "interface", NULL } },
	/* control_socket */
	{ "control_socket = \"run/tlsd.sock\";", { "control_socket", NULL } },
	{ "control_socket = \"\";", { "control_socket", NULL } },
	{ "control_socket = \"/" NAME64 NAME64 "\";", { "control_socket", NULL } },
	{ "control_socket = 5;", { "control_socket", NULL } },
	/* jobs */
	{ "jobs = 5;", { "jobs", NULL } },
	{ "jobs = \"a\";", { "jobs", NULL } },
	{ "jobs = { name = \"a\"; ports = [ 9000 ]; };", { "jobs", NULL } },
	{ "jobs = [ 1, 2 ];", { "jobs", NULL } },
	{ "jobs = ( 5 );", { "jobs", NULL } },
	{ "jobs = ( { ports = [ 9000 ]; } );", { "name", NULL } },
	{ "jobs = ( { name = 5; ports = [ 9000 ]; } );", { "name", NULL } },
	{ "jobs = ( { name = \"\"; ports = [ 9000 ]; } );", { "name", NULL } },
	{ "jobs = ( { name = \"" NAME64 "\"; ports = [ 9000 ]; } );", { "name", NULL } },
	{ "jobs = ( { name = \"a\"; } );", { "ports", "'a'" } },
	{ "jobs = ( { name = \"a\"; ports = 9000; } );", { "ports", "'a'" } },
	{ "jobs = ( { name = \"a\"; ports = [ ]; } );", { "ports", "'a'" } },
	{ "jobs = ( { name = \"a\"; ports = ( ); } );", { "ports", "'a'" } },
	{ "jobs = ( { name = \"a\"; ports = [ 0 ]; } );", { "port 0", "'a'" } },
	{ "jobs = ( { name = \"a\"; ports = [ 70000 ]; } );", { "port 70000", "'a'" } },
	{ "jobs = ( { name = \"a\"; ports = [ 65536 ]; } );", { "port 65536", "'a'" } },
	{ "jobs = ( { name = \"a\"; ports = [ -1 ]; } );", { "port -1", "'a'" } },
	{ "jobs = ( { name = \"a\"; ports = [ 4294976296L ]; } );", { "port 4294976296", "'a'" } },
	{ "jobs = ( { name = \"a\"; ports = [ \"x\" ]; } );", { "ports", "'a'" } },
	{ "jobs = ( { name = \"a\"; ports = [ 9000.0 ]; } );", { "ports", "'a'" } },
	{ "jobs = ( { name = \"a\"; ports = ( 9000, \"x\" ); } );", { "ports[1]", "'a'" } },
	{ "jobs = ( { name = \"a\"; ports = [ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, "
	  "15, 16, 17 ]; } );",
	  { "ports", "17" } },
	{ "replace_qdisc = 1;", { "replace_qdisc", "true or false" } },
	{ "replace_qdisc = \"yes\";", { "replace_qdisc", NULL } },
	{ "mode = \"watch\";", { "mode: 'watch' is not one of schedule, observe", NULL } },
	{ "mode = true;", { "mode must be a string", NULL } },
	/* a good job, then a bad one: nothing applied */
	{ "jobs = ( { name = \"a\"; ports = [ 9000 ]; },\n { name = \"b\"; ports = [ 0 ]; } );",
	  { "'b'", "line 2" } },
	/* good settings, then a bad one: nothing applied */
	{ "interface = \"eth1\"; policy = \"fifo\"; bands = 2; dscp = false;\n"
	  "link_rate = \"1gbit\"; interval = \"1s\"; control_socket = \"/x\";\n"
	  "jobs = ( { name = \"z\"; ports = [ 1 ]; } );\nbands = 9;",
	  { "line", NULL } /* a duplicate setting is a syntax error */ },
	{ "interface = \"eth1\"; policy = \"fifo\"; dscp = false;\n"
	  "link_rate = \"1gbit\"; interval = \"1s\"; control_socket = \"/x\";\n"
	  "jobs = ( { name = \"z\"; ports = [ 1 ]; } );\nbands = 9;",
	  { "bands", NULL } },
};

/* Each bad file: -EINVAL, the configuration untouched, the setting named. */
static void test_bad_configs(void **state)
{
	struct tls_config *c = new_config(), *copy = malloc(sizeof(*copy));
	char err[512];
	size_t i, k;

	(void)state;
	assert_non_null(copy);
	/* start from a configuration that differs from the defaults everywhere */
	assert_int_equal(tls_config_load_string(full_config, c, err, sizeof(err)), 0);
	memcpy(copy, c, sizeof(*c));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret;

		memset(err, 0, sizeof(err));
		ret = tls_config_load_string(bad[i].text, c, err, sizeof(err));
		if (ret != -EINVAL)
			print_error("bad[%zu] \"%s\": returned %d, message \"%s\"\n", i,
				    bad[i].text, ret, err);
		assert_int_equal(ret, -EINVAL);
		if (memcmp(c, copy, sizeof(*c)))
			print_error("bad[%zu] \"%s\" changed the configuration\n", i, bad[i].text);
		assert_memory_equal(c, copy, sizeof(*c));
		assert_true(err[0] != '\0');
		for (k = 0; k < ARRAY_SIZE(bad[i].names) && bad[i].names[k]; k++)
			assert_names(err, bad[i].names[k], bad[i].text);
	}
	free(copy);
	free(c);
}

/* More jobs than the table holds. */
static void test_too_many_jobs(void **state)
{
	struct tls_config *c = new_config(), *copy = malloc(sizeof(*copy));
	size_t len = 64 + (TLS_MAX_STATIC_JOBS + 1) * 64, off;
	char *text = malloc(len), err[256] = "";
	unsigned int i;

	(void)state;
	assert_non_null(copy);
	assert_non_null(text);
	off = (size_t)snprintf(text, len, "jobs = (");
	for (i = 0; i < TLS_MAX_STATIC_JOBS + 1; i++)
		off += (size_t)snprintf(text + off, len - off,
					"%s { name = \"j%u\"; ports = [ %u ]; }", i ? "," : "", i,
					1000 + i);
	snprintf(text + off, len - off, " );");
	memcpy(copy, c, sizeof(*c));
	assert_int_equal(tls_config_load_string(text, c, err, sizeof(err)), -EINVAL);
	assert_memory_equal(c, copy, sizeof(*c));
	assert_names(err, "jobs", "257 jobs");

	/* exactly the maximum is fine */
	off = (size_t)snprintf(text, len, "jobs = (");
	for (i = 0; i < TLS_MAX_STATIC_JOBS; i++)
		off += (size_t)snprintf(text + off, len - off,
					"%s { name = \"j%u\"; ports = [ %u ]; }", i ? "," : "", i,
					1000 + i);
	snprintf(text + off, len - off, " );");
	assert_int_equal(tls_config_load_string(text, c, err, sizeof(err)), 0);
	assert_int_equal(c->njobs, TLS_MAX_STATIC_JOBS);
	assert_string_equal(c->jobs[TLS_MAX_STATIC_JOBS - 1].name, "j255");
	assert_int_equal(c->jobs[TLS_MAX_STATIC_JOBS - 1].ports[0], 1255);
	free(text);
	free(copy);
	free(c);
}

/* The message buffer: none at all, or too short, is handled. */
static void test_error_buffer(void **state)
{
	struct tls_config *c = new_config();
	char err[8];

	(void)state;
	assert_int_equal(tls_config_load_string("bands = 0;", c, NULL, 0), -EINVAL);
	assert_int_equal(tls_config_load_string("bands = ;", c, NULL, 0), -EINVAL);
	memset(err, 'X', sizeof(err));
	assert_int_equal(tls_config_load_string("bands = 0;", c, err, 4), -EINVAL);
	assert_int_equal(strlen(err), 3);
	assert_int_equal(err[4], 'X');
	c->ifname[0] = '\0';
	assert_int_equal(tls_config_validate(c, NULL, 0), -EINVAL);
	free(c);
}

/* A configuration that passes validate, for the validate tests to break. */
static void valid_config(struct tls_config *c)
{
	char err[256] = "";

	tls_config_defaults(c);
	assert_int_equal(tls_config_load_string(full_config, c, err, sizeof(err)), 0);
	assert_int_equal(tls_config_validate(c, err, sizeof(err)), 0);
}

static void expect_invalid(const struct tls_config *c, const char *name1, const char *name2)
{
	char err[256] = "";

	assert_int_equal(tls_config_validate(c, err, sizeof(err)), -EINVAL);
	assert_names(err, name1, "validate");
	if (name2)
		assert_names(err, name2, "validate");
}

static void test_validate(void **state)
{
	struct tls_config *c = new_config();
	char err[256] = "";

	(void)state;
	/* the defaults lack only the interface */
	expect_invalid(c, "interface", NULL);
	snprintf(c->ifname, sizeof(c->ifname), "lo");
	assert_int_equal(tls_config_validate(c, err, sizeof(err)), 0);

	valid_config(c);
	c->ifname[0] = '\0';
	expect_invalid(c, "interface", NULL);

	valid_config(c);
	c->interval_ns = MS(5);
	expect_invalid(c, "interval", NULL);
	c->interval_ns = 0;
	expect_invalid(c, "interval", NULL);
	c->interval_ns = TLS_INTERVAL_MIN_NS - 1;
	expect_invalid(c, "interval", NULL);
	c->interval_ns = TLS_INTERVAL_MIN_NS;
	assert_int_equal(tls_config_validate(c, err, sizeof(err)), 0);

	valid_config(c);
	c->heal_window_ns = MS(999);
	expect_invalid(c, "heal_window", "1s");
	c->heal_window_ns = S(1);
	assert_int_equal(tls_config_validate(c, err, sizeof(err)), 0);
	c->heal_limit = 0; /* yield at the first change: allowed */
	assert_int_equal(tls_config_validate(c, err, sizeof(err)), 0);

	valid_config(c);
	c->bands = 0;
	expect_invalid(c, "bands", NULL);
	c->bands = 8;
	expect_invalid(c, "bands", NULL);

	/* the interval from a file, too */
	valid_config(c);
	assert_int_equal(tls_config_load_string("interval = \"5ms\";", c, err, sizeof(err)), 0);
	expect_invalid(c, "interval", NULL);

	/* duplicate job names */
	valid_config(c);
	snprintf(c->jobs[1].name, sizeof(c->jobs[1].name), "a");
	expect_invalid(c, "name", "'a'");

	/* the same port in two jobs */
	valid_config(c);
	c->jobs[1].ports[0] = 9001;
	expect_invalid(c, "port", "9001");

	/* the same port twice in one job */
	valid_config(c);
	c->jobs[0].ports[1] = 9000;
	expect_invalid(c, "port", "9000");
	valid_config(c);
	c->jobs[1].nports = 3;
	c->jobs[1].ports[1] = 9200;
	c->jobs[1].ports[2] = 9100;
	expect_invalid(c, "port", "9100");

	/* the same from a file */
	valid_config(c);
	assert_int_equal(tls_config_load_string("jobs = ( { name = \"a\"; ports = [ 9000 ]; },"
						"{ name = \"b\"; ports = [ 9001, 9000 ]; } );",
						c, err, sizeof(err)),
			 0);
	expect_invalid(c, "port", "9000");
	assert_int_equal(tls_config_load_string("jobs = ( { name = \"a\"; ports = [ 9000 ]; },"
						"{ name = \"a\"; ports = [ 9001 ]; } );",
						c, err, sizeof(err)),
			 0);
	expect_invalid(c, "name", "'a'");

	/* hold shorter than the gap */
	valid_config(c);
	c->flowlet_gap_ns = MS(10);
	c->flowlet_hold_ns = MS(5);
	expect_invalid(c, "flowlet_hold", NULL);
	c->flowlet_hold_ns = MS(10); /* equal is fine */
	assert_int_equal(tls_config_validate(c, err, sizeof(err)), 0);
	assert_int_equal(tls_config_load_string("flowlet_gap = \"200ms\";", c, err, sizeof(err)),
			 0);
	expect_invalid(c, "flowlet_hold", NULL);

	free(c);
}

static void test_load_file_missing(void **state)
{
	static const char path[] = "/nonexistent/tlsd-test/tlsd.conf";
	struct tls_config *c = new_config(), *copy = new_config();
	char err[256] = "";

	(void)state;
	assert_int_equal(tls_config_load_file(path, c, err, sizeof(err)), -ENOENT);
	assert_names(err, path, path);
	assert_memory_equal(c, copy, sizeof(*c));
	free(copy);
	free(c);
}

/* Write text to a new file under /tmp; the caller unlinks path. */
static void write_temp(char *path, const char *text)
{
	int fd = mkstemp(path);
	size_t len = strlen(text);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

static void test_load_file(void **state)
{
	struct tls_config *c = new_config(), *copy = new_config();
	char good[] = "/tmp/tlsd-test-good-XXXXXX";
	char bad_syntax[] = "/tmp/tlsd-test-syntax-XXXXXX";
	char bad_value[] = "/tmp/tlsd-test-value-XXXXXX";
	char err[512] = "";
	int ret;

	(void)state;
	write_temp(good, full_config);
	write_temp(bad_syntax, "interface = \"eth0\";\n"
			       "# a comment\n"
			       "policy = = \"one\";\n"
			       "bands = 4;\n");
	write_temp(bad_value, "interface = \"eth0\";\n\nbands = 9;\n");

	ret = tls_config_load_file(good, c, err, sizeof(err));
	if (ret)
		print_error("%s\n", err);
	assert_int_equal(ret, 0);
	assert_string_equal(c->ifname, "eth0");
	assert_int_equal(c->njobs, 2);
	assert_int_equal(c->jobs[1].ports[0], 9100);

	memcpy(copy, c, sizeof(*c));
	assert_int_equal(tls_config_load_file(bad_syntax, c, err, sizeof(err)), -EINVAL);
	assert_names(err, "line 3", bad_syntax);
	assert_names(err, bad_syntax, bad_syntax);
	assert_memory_equal(c, copy, sizeof(*c));

	assert_int_equal(tls_config_load_file(bad_value, c, err, sizeof(err)), -EINVAL);
	assert_names(err, "bands", bad_value);
	assert_memory_equal(c, copy, sizeof(*c));

	unlink(good);
	unlink(bad_syntax);
	unlink(bad_value);
	free(copy);
	free(c);
}

/* The sample configuration shipped in config/ stays valid. */
static void test_sample_config(void **state)
{
	struct tls_config *c = new_config();
	char err[256] = "";
	int ret;

	(void)state;
	tls_config_defaults(c);
	ret = tls_config_load_file("config/tlsd.conf", c, err, sizeof(err));
	if (ret)
		print_error("config/tlsd.conf: %s\n", err);
	assert_int_equal(ret, 0);
	assert_string_equal(c->ifname, "eth0");
	assert_int_equal(c->policy, TLS_POLICY_BURSTS);
	assert_int_equal(tls_config_validate(c, err, sizeof(err)), 0);
	free(c);
}

int run_config_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),      cmocka_unit_test(test_empty),
		cmocka_unit_test(test_full),	      cmocka_unit_test(test_more_valid),
		cmocka_unit_test(test_max_ports),     cmocka_unit_test(test_bad_configs),
		cmocka_unit_test(test_too_many_jobs), cmocka_unit_test(test_error_buffer),
		cmocka_unit_test(test_validate),      cmocka_unit_test(test_load_file_missing),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_sample_config),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
