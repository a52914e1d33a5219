// SPDX-License-Identifier: GPL-2.0-only
/*
 * Discovery rules (tcd/rules.c) and the configuration's discovery section:
 * a table of processes (command line and environment as /proc gives them)
 * with the job each must land in, or none; bad rules with the error that
 * must name them.
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
#include "rules.h"
#include "unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct proc_case {
	const char *what;
	/* '|' separates arguments / variables (turned into NULs) */
	const char *cmdline;
	const char *environ;
	int pid;
	const char *job; /* NULL: not a PS */
};

/* cmdline/environ with '|' as the separator -> a /proc style block */
static size_t block(const char *s, char *out, size_t len)
{
	size_t n = 0;

	if (!s || !*s)
		return 0;
	for (; *s && n + 1 < len; s++)
		out[n++] = *s == '|' ? '\0' : *s;
	out[n++] = '\0';
	return n;
}

static int match(const struct tls_rules *r, const struct proc_case *c, const char **rule, char *job,
		 size_t joblen)
{
	static char cmd[1024], env[2048];
	struct tls_proc_info p = { .pid = c->pid, .comm = "x" };

	p.cmdline_len = block(c->cmdline, cmd, sizeof(cmd));
	p.cmdline = cmd;
	p.environ_len = block(c->environ, env, sizeof(env));
	p.environ = env;
	return tls_rules_match(r, &p, rule, job, joblen);
}

static const struct proc_case builtin_cases[] = {
	{ "tf --job_name=ps", "python3|train.py|--job_name=ps|--task_index=0", "PATH=/bin", 11,
	  "tensorflow:11" },
	{ "tf --job_name ps", "python3|train.py|--job_name|ps", "", 12, "tensorflow:12" },
	{ "tf -job_name=ps (absl single dash)", "python3|t.py|-job_name=ps", "", 13,
	  "tensorflow:13" },
	{ "tf ps_hosts groups the job", "python|t.py|--ps_hosts=h1:2222,h2:2222|--job_name=ps", "",
	  14, "tensorflow:h1:2222,h2:2222" },
	{ "tf ps_hosts as next argument", "python|t.py|--job_name=ps|--ps_hosts|h1:2222", "", 15,
	  "tensorflow:h1:2222" },
	{ "tf worker is not a PS", "python3|train.py|--job_name=worker", "", 16, NULL },
	{ "tf flag inside sh -c", "/bin/sh|-c|python t.py --job_name=ps", "", 18, NULL },
	{ "tf PS started over ssh", "/usr/bin/ssh|host1|python|t.py|--job_name=ps", "", 19, NULL },
	{ "tf PS under sudo (the child is the PS)", "sudo|python|t.py|--job_name=ps", "", 20,
	  NULL },
	{ "tf PS through env (exec: the PS itself)", "python3|t.py|--job_name|ps", "A=1", 24,
	  "tensorflow:24" },
	{ "TF_CONFIG with a null host", "python3",
	  "TF_CONFIG={\"cluster\":{\"ps\":[null,\"h2:1\"]},\"task\":{\"type\":\"ps\"}}", 25,
	  "tf_config:,h2:1" },
	{ "tf job_name=psx is not ps", "python3|train.py|--job_name=psx", "", 17, NULL },
	{ "TF_CONFIG ps", "python3|train.py",
	  "A=1|TF_CONFIG={\"cluster\":{\"ps\":[\"h1:2222\"],\"worker\":[\"w:1\"]},"
	  "\"task\":{\"type\":\"ps\",\"index\":0}}",
	  21, "tf_config:h1:2222" },
	{ "TF_CONFIG worker", "python3|train.py",
	  "TF_CONFIG={\"cluster\":{\"ps\":[\"h1:2222\"]},\"task\":{\"type\":\"worker\"}}", 22,
	  NULL },
	{ "TF_CONFIG not JSON", "python3|train.py", "TF_CONFIG={bad", 23, NULL },
	{ "dmlc server", "python|-m|mxnet",
	  "DMLC_ROLE=server|DMLC_PS_ROOT_URI=198.18.0.1|DMLC_PS_ROOT_PORT=9000", 31,
	  "dmlc:198.18.0.1:9000" },
	{ "dmlc server without root env", "bpslaunch", "DMLC_ROLE=server", 32, "dmlc:32" },
	{ "dmlc worker", "python", "DMLC_ROLE=worker|DMLC_PS_ROOT_PORT=9000", 33, NULL },
	{ "dmlc scheduler", "python", "DMLC_ROLE=scheduler", 34, NULL },
	{ "DMLC_ROLE prefix is not the key", "python", "XDMLC_ROLE=server", 35, NULL },
	{ "empty process (kernel thread)", "", "", 36, NULL },
	{ "plain shell", "/bin/sh|-c|ls", "HOME=/root", 37, NULL },
};

static struct tls_rules *compile(const char *conf_text)
{
	struct tls_config *c = malloc(sizeof(*c));
	struct tls_rules *r = NULL;
	char err[256] = "";
	int ret;

	assert_non_null(c);
	tls_config_defaults(c);
	ret = tls_config_load_string(conf_text, c, err, sizeof(err));
	if (ret)
		fail_msg("config: %s", err);
	ret = tls_rules_compile(&c->discovery, &r, err, sizeof(err));
	free(c);
	if (ret)
		fail_msg("compile: %s", err);
	return r;
}

static void run_cases(const struct tls_rules *r, const struct proc_case *cases, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *rule = NULL;
		char job[64] = "";
		int m = match(r, &cases[i], &rule, job, sizeof(job));

		if (m != (cases[i].job != NULL))
			fail_msg("%s: matched %d (rule %s, job %s), expected %s", cases[i].what, m,
				 rule ? rule : "-", job, cases[i].job ? cases[i].job : "none");
		if (m && strcmp(job, cases[i].job))
			fail_msg("%s: job '%s', expected '%s'", cases[i].what, job, cases[i].job);
	}
}

static void test_builtins(void **state)
{
	struct tls_rules *r = compile("");

	(void)state;
	run_cases(r, builtin_cases, ARRAY_SIZE(builtin_cases));
	tls_rules_free(r);
}

static void test_builtins_off(void **state)
{
	struct tls_rules *r = compile("discovery = { builtin_rules = false; };");
	const char *rule;
	char job[64];

	(void)state;
	assert_int_equal(match(r, &builtin_cases[0], &rule, job, sizeof(job)), 0);
	assert_int_equal(match(r, &builtin_cases[10], &rule, job, sizeof(job)), 0);
	tls_rules_free(r);
}

static const char user_conf[] =
	"discovery = {\n"
	"  rescan = \"500ms\";\n"
	"  exclude = ( { cmdline = \"(^| )--dry-run( |$)\"; } );\n"
	"  rules = (\n"
	"    { name = \"trainer\"; cmdline = \"^python3? .*ps_main\\\\.py --job=([a-z0-9]+)\";\n"
	"      job_key = \"group:1\"; },\n"
	"    { name = \"horovod\"; env = \"ROLE=server\"; job_key = \"env:JOB_ID\"; },\n"
	"    { name = \"anyps\"; env = \"IS_PS\"; },\n"
	"    { name = \"byarg\"; cmdline = \"myps\"; job_key = \"arg:--cluster\"; }\n"
	"  );\n"
	"};\n";

static const struct proc_case user_cases[] = {
	{ "regex + capture group", "python3|/opt/ps_main.py|--job=bert1", "", 41, "trainer:bert1" },
	{ "regex, other job", "python|/opt/ps_main.py|--job=resnet", "", 42, "trainer:resnet" },
	{ "regex no match", "python3|/opt/worker_main.py|--job=bert1", "", 43, NULL },
	{ "env rule with key", "srv", "ROLE=server|JOB_ID=j77", 44, "horovod:j77" },
	{ "env rule, key var missing: pid", "srv", "ROLE=server", 45, "horovod:45" },
	{ "env value must be exact", "srv", "ROLE=servers|JOB_ID=1", 46, NULL },
	{ "env presence rule", "x", "IS_PS=", 47, "anyps:47" },
	{ "arg key", "myps|--cluster=c9", "", 48, "byarg:c9" },
	{ "exclusion wins over a rule", "python3|/opt/ps_main.py|--job=x|--dry-run", "", 49, NULL },
	{ "exclusion wins over a built-in", "python3|t.py|--job_name=ps|--dry-run", "", 50, NULL },
	{ "user rule before built-in", "python3|/opt/ps_main.py|--job=a", "DMLC_ROLE=server", 51,
	  "trainer:a" },
	{ "built-ins still on", "x", "DMLC_ROLE=server|DMLC_PS_ROOT_PORT=7", 52, "dmlc:7" },
	{ "odd characters are made safe", "srv", "ROLE=server|JOB_ID=a b;c", 53, "horovod:a_b_c" },
	{ "a long key is shortened with a hash", "srv",
	  "ROLE=server|JOB_ID=0123456789012345678901234567890123456789012345678901234567890123456789",
	  54, "horovod:0123456789012345678901234567890123456789012345~41abc825" },
};

static void test_user_rules(void **state)
{
	struct tls_rules *r = compile(user_conf);
	struct tls_config *c = malloc(sizeof(*c));
	char err[256];

	(void)state;
	run_cases(r, user_cases, ARRAY_SIZE(user_cases));
	tls_rules_free(r);
	tls_config_defaults(c);
	assert_int_equal(tls_config_load_string(user_conf, c, err, sizeof(err)), 0);
	assert_int_equal(c->discovery.nrules, 5);
	assert_true(c->discovery.rules[0].exclude);
	assert_int_equal(c->discovery.rescan_ns, 500ULL * 1000 * 1000);
	free(c);
}

struct bad_case {
	const char *text;
	const char *needle; /* the error must contain it */
};

static const struct bad_case bad[] = {
	{ "discovery = { rules = ( { name = \"r\"; cmdline = \"(unclosed\"; } ); };",
	  "cmdline regex '(unclosed' does not compile" },
	{ "discovery = { rules = ( { name = \"r\"; cmdline = \"x\"; job_key = \"uid\"; } ); };",
	  "job_key 'uid' is not one of" },
	{ "discovery = { rules = ( { name = \"r\"; cmdline = \"x(y)\"; job_key = \"group:2\"; } ); };",
	  "group must be 1..1" },
	{ "discovery = { rules = ( { name = \"r\"; env = \"A=1\"; job_key = \"group:1\"; } ); };",
	  "group must be 1..0" },
	{ "discovery = { rules = ( { name = \"r\"; cmdline = \"(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\"; "
	  "job_key = \"group:10\"; } ); };",
	  "group must be 1..9" },
	{ "discovery = { rules = ( { name = \"r\"; cmdline = \"a\"; }, { name = \"r\"; "
	  "cmdline = \"b\"; } ); };",
	  "two rules named 'r'" },
	{ "discovery = { rules = ( { name = \"dmlc\"; cmdline = \"a\"; } ); };",
	  "is a built-in rule's" },
	/* repetitions that glibc's regcomp expands to gigabytes (fuzz_config) */
	{ "discovery = { rules = ( { name = \"r\"; cmdline = \"eol++++++++++++++++++++++++++++++\"; "
	  "} ); };",
	  "rule 'r': cmdline regex 'eol+++" },
	{ "discovery = { rules = ( { name = \"r\"; cmdline = \"((a{0,10}){0,10}){0,10}\"; } ); };",
	  "is too complex" },
	{ "discovery = { exclude = ( { cmdline = \"--x=(y|z){1000}\"; } ); };", "is too complex" },
	/* and one that took seconds: repetitions of empty-matching parts nested */
	{ "discovery = { rules = ( { name = \"r\"; cmdline = \"x?????????????+++++\"; } ); };",
	  "nest more than 3 deep" },
	{ "discovery = { rules = ( { name = \"r\"; cmdline = \"(((x|)|)|)+\"; } ); };",
	  "nest more than 3 deep" },
	{ "discovery = { rules = ( { name = \"r\"; } ); };", "needs a cmdline regex or an env" },
	{ "discovery = { rules = ( { name = \"r\"; env = \"=x\"; } ); };", "is not KEY=VALUE" },
	{ "discovery = { rules = ( { name = \"r\"; cmdline = \"x\"; user = \"a\"; } ); };",
	  "unknown setting 'user'" },
	{ "discovery = { exclude = ( { cmdline = \"x\"; job_key = \"pid\"; } ); };",
	  "unknown setting 'job_key'" },
	{ "discovery = { rules = ( { name = \"a:b\"; cmdline = \"x\"; } ); };", "may not hold" },
	{ "discovery = { rules = ( { name = 5; cmdline = \"x\"; } ); };", "must be a string" },
	{ "discovery = { rules = \"x\"; };", "must be a list" },
	{ "discovery = { rules = ( \"x\" ); };", "must be a group" },
	{ "discovery = { rescan = \"10ms\"; };", "at least 100ms" },
	{ "discovery = { rescan = \"soon\"; };", "discovery.rescan" },
	{ "discovery = { enabled = 1; };", "discovery.enabled must be true or false" },
	{ "discovery = { colour = 1; };", "unknown setting 'colour'" },
	{ "discovery = 3;", "discovery must be a group" },
};

static void test_bad_rules(void **state)
{
	struct tls_config *c = malloc(sizeof(*c)), *before = malloc(sizeof(*c));
	size_t i;

	(void)state;
	tls_config_defaults(c);
	*before = *c;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char err[512] = "";
		int ret = tls_config_load_string(bad[i].text, c, err, sizeof(err));

		if (ret != -EINVAL || !strstr(err, bad[i].needle))
			fail_msg("'%s': ret %d, error '%s', expected one naming '%s'", bad[i].text,
				 ret, err, bad[i].needle);
		assert_memory_equal(c, before, sizeof(*c));
	}
	free(c);
	free(before);
}

/* Repetitions within the bound still compile: the limit is on what glibc
 * expands, not on what a rule may reasonably say. */
static void test_regex_bound(void **state)
{
	static const char *const ok[] = {
		"--id=[0-9]{1,1000}",
		"(^| )--job=(a|b){0,300}( |$)",
		"x{0}y{5,}z*(((((w)))))+",
		"[]a-z[:digit:]]{1,500}",
		"((x?y?)+a?)+",
	};
	char text[512];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		snprintf(text, sizeof(text),
			 "discovery = { rules = ( { name = \"r\"; cmdline = \"%s\"; } ); };",
			 ok[i]);
		tls_rules_free(compile(text));
	}
}

static void test_too_many_rules(void **state)
{
	struct tls_config *c = malloc(sizeof(*c));
	char text[8192], err[256];
	size_t n = 0;
	int i;

	(void)state;
	tls_config_defaults(c);
	n += snprintf(text + n, sizeof(text) - n, "discovery = { rules = (");
	for (i = 0; i <= TLS_MAX_RULES; i++)
		n += snprintf(text + n, sizeof(text) - n, "%s{ cmdline = \"a%d\"; }", i ? "," : "",
			      i);
	snprintf(text + n, sizeof(text) - n, "); };");
	assert_int_equal(tls_config_load_string(text, c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "more than"));
	free(c);
}

int run_rules_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtins),       cmocka_unit_test(test_builtins_off),
		cmocka_unit_test(test_user_rules),     cmocka_unit_test(test_bad_rules),
		cmocka_unit_test(test_too_many_rules), cmocka_unit_test(test_regex_bound),
	};

	return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
