// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness: discovery's rules (tcd/rules.c). tls_rules_compile
 * takes fuzzed rules, tls_rules_match a fuzzed process: its command line
 * and environment as /proc gives them, NUL-separated, with the NUL after
 * the last byte that tls_proc_read always adds.
 *
 * Input: one flags byte, then sections separated by 0x01:
 *
 *   [flags] name \1 cmdline-regex \1 env \1 job_key \1 ...  \1 CMDLINE \1 ENVIRON
 *
 * The last two sections are the process's; those before, four per rule,
 * are the rules (a rule's missing fields are empty; at most TLS_MAX_RULES;
 * fields cut to their buffers, as the configuration's limits would). Flags:
 * bit 0 the built-in rules; bit 1 + (i % 7) makes rule i an exclusion.
 * One section only: a command line, no environment, no rules of the user.
 *
 * Beyond the sanitizers: a refused rule set says why; a match names one of
 * the rules and a job of at most joblen - 1 characters of the set
 * make_name promises (the name is a map value and a log word).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"
#include "tls_common.h"

#define SEP 0x01

/* The section at data[*off..): its start and length; *off past its end
 * (size + 1 after the last one). */
static const char *section(const uint8_t *data, size_t size, size_t *off, size_t *len)
{
	const uint8_t *s = data + *off, *e = memchr(s, SEP, size - *off);

	*len = e ? (size_t)(e - s) : size - *off;
	*off += *len + 1;
	return (const char *)s;
}

static void field(char *dst, size_t dstlen, const char *s, size_t len)
{
	snprintf(dst, dstlen, "%.*s", (int)(len < dstlen ? len : dstlen - 1), s);
}

/* A buffer as tls_proc_read leaves it: the bytes, then a NUL. */
static char *proc_buf(const char *s, size_t len)
{
	char *b = malloc(len + 1);

	if (b) {
		memcpy(b, s, len);
		b[len] = '\0';
	}
	return b;
}

static void check_job(const struct tls_discovery_conf *dc, const char *rule, const char *job,
		      size_t joblen)
{
	size_t i, n = strnlen(job, joblen);

	if (!rule || n == 0 || n >= joblen)
		abort();
	for (i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789.:_-,/@[]~",
			    job[i]))
			abort();
	for (i = 0; i < dc->nrules; i++)
		if (!strcmp(rule, dc->rules[i].name))
			return;
	for (i = 0; tls_builtin_rule_names[i]; i++)
		if (dc->builtin_rules && !strcmp(rule, tls_builtin_rule_names[i]))
			return;
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tls_discovery_conf dc;
	const char *sec[4 * TLS_MAX_RULES + 2], *rule = NULL;
	size_t len[4 * TLS_MAX_RULES + 2];
	struct tls_proc_info info = { .pid = 4242, .comm = "fuzz" };
	char job[TLS_JOB_NAME_LEN], err[256] = "";
	struct tls_rules *r = NULL;
	unsigned int nsec = 0, i, nfields;
	size_t off = 1;
	char *cmdline = NULL, *environ = NULL;
	int ret;

	if (size < 1)
		return 0;
	while (off <= size && nsec < sizeof(sec) / sizeof(sec[0])) {
		sec[nsec] = section(data, size, &off, &len[nsec]);
		nsec++;
	}
	if (off <= size)
		return -1; /* more rules than a configuration may hold */
	memset(&dc, 0, sizeof(dc));
	dc.enabled = true;
	dc.builtin_rules = data[0] & 1;
	nfields = nsec >= 2 ? nsec - 2 : 0;
	dc.nrules = (nfields + 3) / 4;
	for (i = 0; i < nfields; i++) {
		struct tls_rule_conf *rc = &dc.rules[i / 4];
		char *const dst[] = { rc->name, rc->cmdline, rc->env, rc->job_key };
		const size_t dlen[] = { sizeof(rc->name), sizeof(rc->cmdline), sizeof(rc->env),
					sizeof(rc->job_key) };

		field(dst[i % 4], dlen[i % 4], sec[i], len[i]);
	}
	for (i = 0; i < dc.nrules; i++)
		dc.rules[i].exclude = data[0] & (2u << (i % 7));

	ret = tls_rules_compile(&dc, &r, err, sizeof(err));
	if (ret) {
		if (ret != -ENOMEM && !err[0])
			abort();
		r = NULL; /* matches nothing: tlsd would not have started */
	}
	cmdline = proc_buf(sec[nfields], len[nfields]);
	environ = nsec >= 2 ? proc_buf(sec[nsec - 1], len[nsec - 1]) : proc_buf("", 0);
	if (cmdline && environ) {
		info.cmdline = cmdline;
		info.cmdline_len = len[nfields];
		info.environ = environ;
		info.environ_len = nsec >= 2 ? len[nsec - 1] : 0;
		if (tls_rules_match(r, &info, &rule, job, sizeof(job)) == 1)
			check_job(&dc, rule, job, sizeof(job));
	}
	free(cmdline);
	free(environ);
	tls_rules_free(r);
	return 0;
}
