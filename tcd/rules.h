/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Discovery rules: which processes are parameter servers, and which job each
 * belongs to. Pure (no I/O): the caller reads a process's command line and
 * environment, the rules decide. Built-in rules cover the common launchers:
 *
 *   tensorflow  a command line with --job_name=ps or --job_name ps;
 *               job key: the --ps_hosts value (a TF1 cluster), else the pid
 *   tf_config   a TF_CONFIG environment whose task type is "ps";
 *               job key: the cluster's ps list
 *   dmlc        DMLC_ROLE=server (ps-lite, MXNet, BytePS);
 *               job key: DMLC_PS_ROOT_URI and DMLC_PS_ROOT_PORT
 *
 * User rules match a command-line regex (POSIX ERE over the arguments joined
 * by single spaces) and/or an environment KEY=VALUE (exact; KEY alone: set
 * to anything), and name a job key:
 *
 *   pid             one process, one job (the default)
 *   env:VAR[,VAR]   the variables' values (a process lacking all: its pid)
 *   arg:--OPTION    the option's value (--OPTION=V or --OPTION V)
 *   group:N         capture group N of the rule's cmdline regex
 *
 * Exclusions (same matchers, no key) are checked first: a process they match
 * is never a PS.
 */
#ifndef TLS_RULES_H
#define TLS_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trust.h"

#define TLS_MAX_RULES	     32
#define TLS_RULE_NAME_MAX    32
#define TLS_RULE_PATTERN_MAX 256
#define TLS_RULE_KEY_MAX     128

struct tls_rule_conf {
	char name[TLS_RULE_NAME_MAX];
	bool exclude;
	char cmdline[TLS_RULE_PATTERN_MAX]; /* "": any command line */
	char env[TLS_RULE_PATTERN_MAX];	    /* "KEY=VALUE" or "KEY"; "": any environment */
	char job_key[TLS_RULE_KEY_MAX];	    /* "": pid */
};

struct tls_discovery_conf {
	bool enabled;
	bool builtin_rules;
	uint64_t rescan_ns; /* the /proc rescan, the safety net */
	unsigned int nrules;
	struct tls_rule_conf rules[TLS_MAX_RULES];
	struct tls_trust_conf trust; /* whose processes; bounds per user */
};

#define TLS_RESCAN_DEFAULT_NS (2ULL * 1000 * 1000 * 1000)
#define TLS_RESCAN_MIN_NS     (100ULL * 1000 * 1000)

/* What the rules look at. cmdline and environ are as /proc gives them:
 * NUL-terminated strings one after the other. */
struct tls_proc_info {
	pid_t pid;
	const char *comm;
	const char *cmdline;
	size_t cmdline_len;
	const char *environ;
	size_t environ_len;
};

struct tls_rules;

/* Compile the built-ins (if enabled) and the user rules. A rule that cannot
 * work (a regex that does not compile, an unknown job key, a group beyond the
 * regex's) is -EINVAL with a message naming it. */
int tls_rules_compile(const struct tls_discovery_conf *dc, struct tls_rules **out, char *err,
		      size_t errlen);
void tls_rules_free(struct tls_rules *r);

/*
 * Is the process a PS? 1 if a rule matched: the rule's name in *rule and the
 * job's name in job ("RULE:KEY", printable, at most joblen - 1 characters);
 * 0 if not (or excluded).
 */
int tls_rules_match(const struct tls_rules *r, const struct tls_proc_info *p, const char **rule,
		    char *job, size_t joblen);

/* The names of the built-in rules, NULL-terminated. */
extern const char *const tls_builtin_rule_names[];

#endif /* TLS_RULES_H */
