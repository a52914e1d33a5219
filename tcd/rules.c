// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "log.h"
#include "rules.h"

enum key_kind { KEY_PID, KEY_ENV, KEY_ARG, KEY_GROUP, KEY_TF_CLUSTER };
enum match_kind { MATCH_PLAIN, MATCH_TF_CONFIG, MATCH_TF_ARGS };

/* regexec fills this many groups: group:N up to 9 */
#define MAX_GROUPS 10

struct rule {
	struct tls_rule_conf c;
	enum match_kind match;
	bool has_re;
	regex_t re;
	char env_key[TLS_RULE_PATTERN_MAX];
	const char *env_value; /* into env_key, NULL: any value */
	enum key_kind key;
	const char *key_arg; /* into c.job_key: "VAR,VAR", "--option" */
	unsigned int group;
};

struct tls_rules {
	unsigned int n;
	struct rule r[];
};

const char *const tls_builtin_rule_names[] = { "tensorflow", "tf_config", "dmlc", NULL };

static const struct tls_rule_conf builtins[] = {
	{ .name = "tensorflow",
	  .cmdline = "(^| )--?job_name(=| )ps( |$)",
	  .job_key = "arg:--ps_hosts" },
	{ .name = "tf_config", .env = "TF_CONFIG" }, /* plus the JSON check */
	{ .name = "dmlc",
	  .env = "DMLC_ROLE=server",
	  .job_key = "env:DMLC_PS_ROOT_URI,DMLC_PS_ROOT_PORT" },
};

/*
 * glibc's regcomp copies a repeated part of a regex once per repetition
 * ("a{3}" is "aaa", "a+" is "aa*") before it builds the automaton, so
 * nested repetitions multiply: "a" and 15 "+" took 20 MB, 18 took 168 MB,
 * and a pattern of 50 bytes took more memory than the host had. Its
 * epsilon closures then cost exponentially in how deeply repetitions of
 * parts that may be empty nest: "x" with 13 "?" and five "+" after it took
 * 6 s (both found by tests/fuzz/). Rules' patterns expand to a few dozen
 * nodes and nest repetitions one or two deep: a pattern past either bound
 * is refused. Within them, the costliest shapes compile in 20 ms and 14 MB.
 */
#define RE_NODES_MAX 2048
#define RE_DEPTH_MAX 3

static unsigned long sat_add(unsigned long a, unsigned long b)
{
	return a + b > RE_NODES_MAX ? RE_NODES_MAX + 1 : a + b;
}

static unsigned long sat_mul(unsigned long a, unsigned long b)
{
	/* both at most RE_NODES_MAX + 1: no overflow */
	return a * b > RE_NODES_MAX ? RE_NODES_MAX + 1 : a * b;
}

/* A decimal number at *p, saturating; *p past it. */
static unsigned long re_number(const char **p)
{
	unsigned long v = 0;

	for (; **p >= '0' && **p <= '9'; (*p)++)
		v = sat_add(sat_mul(v, 10), **p - '0');
	return v;
}

/* A group being read: its nodes so far, and its last element's. */
struct re_frame {
	unsigned long total, last;
	unsigned int depth, last_depth; /* repetitions nested, deepest and last */
	bool empty;			/* the current alternative matches nothing yet */
	bool empty_alt;			/* an alternative is empty: the group is optional */
};

/*
 * What ERE re costs glibc: *nodes, the nodes of its tree once repetitions
 * are expanded (characters, bracket expressions, groups, the operators;
 * past RE_NODES_MAX, that plus one), and *depth, how deeply repetitions
 * nest ("?", "*", "+", intervals and a group with an empty alternative
 * each one level). A pattern regcomp refuses may be counted anyhow.
 */
static void re_cost(const char *re, unsigned long *nodes, unsigned int *depth)
{
	struct re_frame f[TLS_RULE_PATTERN_MAX + 1] = { { .empty = true } };
	unsigned int d = 0, g;
	const char *p = re;

	while (*p) {
		unsigned long copies = 0;
		const char *q;

		switch (*p) {
		case '(':
			if (d + 1 <= TLS_RULE_PATTERN_MAX)
				f[++d] = (struct re_frame){ .empty = true };
			p++;
			continue;
		case ')':
			if (!d)
				break; /* an atom */
			d--;
			g = f[d + 1].depth + (f[d + 1].empty || f[d + 1].empty_alt);
			f[d].last = sat_add(f[d + 1].total, 1);
			f[d].total = sat_add(f[d].total, f[d].last);
			f[d].last_depth = g;
			f[d].depth = g > f[d].depth ? g : f[d].depth;
			f[d].empty = false;
			p++;
			continue;
		case '|':
			f[d].empty_alt |= f[d].empty;
			f[d].empty = true;
			f[d].total = sat_add(f[d].total, 1);
			f[d].last = 0;
			p++;
			continue;
		case '^':
		case '$':
			/* anchors match no character: a branch of them is empty */
			f[d].total = sat_add(f[d].total, 1);
			f[d].last = 1;
			f[d].last_depth = 0;
			p++;
			continue;
		case '*':
		case '?':
			copies = 1; /* and a node: "a*" is a loop over a */
			p++;
			break;
		case '+':
			copies = 2; /* "aa*" */
			p++;
			break;
		case '{': {
			/* {m}: m copies, {m,n}: n, {m,}: m + 1 (the last looped) */
			const char *b = p + 1, *e;
			unsigned long m = re_number(&b), n = m;

			if (b == p + 1)
				break; /* not an interval: an atom */
			if (*b == ',') {
				e = ++b;
				n = re_number(&b);
				if (b == e)
					n = sat_add(m, 1);
			}
			if (*b != '}')
				break;
			p = b + 1;
			copies = n > m ? n : m ? m : 1;
			break;
		}
		}
		if (copies) {
			/* the last element, copies times, and a node for each */
			f[d].total = sat_add(f[d].total,
					     sat_add(sat_mul(f[d].last, copies - 1), copies));
			f[d].last = sat_add(sat_mul(f[d].last, copies), copies);
			f[d].last_depth++;
			f[d].depth = f[d].last_depth > f[d].depth ? f[d].last_depth : f[d].depth;
			continue;
		}
		/* an atom: a character, an escaped one, a bracket expression */
		if (*p == '\\' && p[1]) {
			p += 2;
		} else if (*p == '[') {
			q = p + 1;
			if (*q == '^')
				q++;
			if (*q == ']')
				q++; /* a ']' first is one of the set */
			while (*q && *q != ']') {
				if (*q == '[' && (q[1] == ':' || q[1] == '.' || q[1] == '=')) {
					const char *e = q + 2;

					while (*e && !(e[0] == q[1] && e[1] == ']'))
						e++;
					q = *e ? e + 2 : e;
				} else {
					q++;
				}
			}
			p = *q ? q + 1 : q;
		} else {
			p++;
		}
		f[d].last = 1;
		f[d].last_depth = 0;
		f[d].total = sat_add(f[d].total, 1);
		f[d].empty = false;
	}
	/* groups left open: regcomp refuses them, count them anyway */
	for (; d; d--) {
		f[d - 1].total = sat_add(f[d - 1].total, f[d].total);
		f[d - 1].depth = f[d].depth > f[d - 1].depth ? f[d].depth : f[d - 1].depth;
	}
	*nodes = f[0].total;
	*depth = f[0].depth;
}

static int compile_one(struct rule *r, const struct tls_rule_conf *c, char *err, size_t errlen)
{
	const char *what = c->exclude ? "exclude" : "rule";
	const char *k = c->job_key;
	char *eq;
	int rc;

	memset(r, 0, sizeof(*r));
	r->c = *c;
	if (!c->cmdline[0] && !c->env[0])
		return tls_errf(err, errlen, "%s '%s': needs a cmdline regex or an env KEY=VALUE",
				what, c->name);
	if (c->cmdline[0]) {
		unsigned long nodes;
		unsigned int depth;

		re_cost(c->cmdline, &nodes, &depth);
		if (nodes > RE_NODES_MAX)
			return tls_errf(
				err, errlen,
				"%s '%s': cmdline regex '%s' is too complex: its repetitions "
				"expand it to more than %d nodes",
				what, c->name, c->cmdline, RE_NODES_MAX);
		if (depth > RE_DEPTH_MAX)
			return tls_errf(err, errlen,
					"%s '%s': cmdline regex '%s' is too complex: repetitions "
					"nest more than %d deep",
					what, c->name, c->cmdline, RE_DEPTH_MAX);
		rc = regcomp(&r->re, c->cmdline, REG_EXTENDED);
		if (rc) {
			char msg[128];

			regerror(rc, &r->re, msg, sizeof(msg));
			return tls_errf(err, errlen,
					"%s '%s': cmdline regex '%s' does not compile: %s", what,
					c->name, c->cmdline, msg);
		}
		r->has_re = true;
	}
	if (c->env[0]) {
		snprintf(r->env_key, sizeof(r->env_key), "%s", c->env);
		eq = strchr(r->env_key, '=');
		if (eq) {
			*eq = '\0';
			r->env_value = eq + 1;
		}
		if (!r->env_key[0] || strchr(r->env_key, ' ')) {
			tls_errf(err, errlen, "%s '%s': env '%s' is not KEY=VALUE or KEY", what,
				 c->name, c->env);
			goto bad;
		}
	}
	if (!k[0] || !strcmp(k, "pid")) {
		r->key = KEY_PID;
	} else if (!strncmp(k, "env:", 4) && k[4]) {
		r->key = KEY_ENV;
		r->key_arg = r->c.job_key + 4;
	} else if (!strncmp(k, "arg:", 4) && k[4] == '-') {
		r->key = KEY_ARG;
		r->key_arg = r->c.job_key + 4;
	} else if (!strncmp(k, "group:", 6)) {
		char *end;
		unsigned long g = strtoul(k + 6, &end, 10);

		if (*end || end == k + 6 || g == 0 || !r->has_re || g > r->re.re_nsub ||
		    g >= MAX_GROUPS) {
			size_t max = r->has_re ? r->re.re_nsub : 0;

			tls_errf(
				err, errlen,
				"rule '%s': job_key '%s': group must be 1..%zu, a capture group of "
				"its cmdline regex",
				c->name, k, max < MAX_GROUPS - 1 ? max : MAX_GROUPS - 1);
			goto bad;
		}
		r->key = KEY_GROUP;
		r->group = g;
	} else {
		tls_errf(
			err, errlen,
			"rule '%s': job_key '%s' is not one of pid, env:VAR[,VAR...], arg:--OPTION, "
			"group:N",
			c->name, k);
		goto bad;
	}
	return 0;
bad:
	if (r->has_re)
		regfree(&r->re);
	r->has_re = false;
	return -EINVAL;
}

void tls_rules_free(struct tls_rules *r)
{
	unsigned int i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		if (r->r[i].has_re)
			regfree(&r->r[i].re);
	free(r);
}

int tls_rules_compile(const struct tls_discovery_conf *dc, struct tls_rules **out, char *err,
		      size_t errlen)
{
	unsigned int nb = dc->builtin_rules ? sizeof(builtins) / sizeof(builtins[0]) : 0, i;
	struct tls_rules *r;
	int ret;

	if (dc->nrules > TLS_MAX_RULES)
		return tls_errf(err, errlen, "discovery: %u rules, at most %d", dc->nrules,
				TLS_MAX_RULES);
	r = calloc(1, sizeof(*r) + (nb + dc->nrules) * sizeof(r->r[0]));
	if (!r)
		return -ENOMEM;
	/* Exclusions first, then the user's rules (more specific, so they
	 * win over a built-in that also matches), then the built-ins. */
	for (i = 0; i < dc->nrules; i++) {
		if (!dc->rules[i].exclude)
			continue;
		ret = compile_one(&r->r[r->n], &dc->rules[i], err, errlen);
		if (ret)
			goto bad;
		r->n++;
	}
	for (i = 0; i < dc->nrules; i++) {
		if (dc->rules[i].exclude)
			continue;
		ret = compile_one(&r->r[r->n], &dc->rules[i], err, errlen);
		if (ret)
			goto bad;
		r->n++;
	}
	for (i = 0; i < nb; i++) {
		ret = compile_one(&r->r[r->n], &builtins[i], err, errlen);
		if (ret)
			goto bad;
		if (!strcmp(builtins[i].name, "tf_config"))
			r->r[r->n].match = MATCH_TF_CONFIG;
		if (!strcmp(builtins[i].name, "tensorflow"))
			r->r[r->n].match = MATCH_TF_ARGS;
		r->n++;
	}
	*out = r;
	return 0;
bad:
	tls_rules_free(r);
	return ret;
}

/* The value of KEY in a /proc environ block, or NULL. */
static const char *env_get(const struct tls_proc_info *p, const char *key, size_t klen)
{
	const char *e = p->environ, *end = p->environ + p->environ_len;

	while (e && e < end) {
		size_t l = strnlen(e, end - e);

		if (l > klen && e[klen] == '=' && !strncmp(e, key, klen))
			return e + klen + 1;
		e += l + 1;
	}
	return NULL;
}

/* The arguments joined by single spaces, as the regexes see them. */
static char *join_cmdline(const struct tls_proc_info *p)
{
	char *s = malloc(p->cmdline_len + 1);
	size_t i;

	if (!s)
		return NULL;
	for (i = 0; i < p->cmdline_len; i++)
		s[i] = p->cmdline[i] ? p->cmdline[i] : ' ';
	/* not the last argument's NUL */
	if (i > 0 && !p->cmdline[i - 1])
		i--;
	s[i] = '\0';
	return s;
}

/* The value of --opt=V or --opt V among the arguments. */
static const char *arg_get(const struct tls_proc_info *p, const char *opt, size_t *len)
{
	const char *a = p->cmdline, *end = p->cmdline + p->cmdline_len;
	size_t ol = strlen(opt);

	while (a < end) {
		size_t l = strnlen(a, end - a);
		const char *next = a + l + 1;

		if (l > ol && a[ol] == '=' && !strncmp(a, opt, ol)) {
			*len = l - ol - 1;
			return a + ol + 1;
		}
		if (l == ol && !strncmp(a, opt, ol) && next < end) {
			*len = strnlen(next, end - next);
			return next;
		}
		a = next;
	}
	return NULL;
}

/* A task of type "ps" in TF_CONFIG, and the cluster's ps list as the key. */
static bool tf_config_ps(const char *v, char *key, size_t keylen)
{
	struct json_object *o = json_tokener_parse(v), *task, *type, *cluster, *ps;
	bool ps_task = false;

	if (!o)
		return false;
	if (json_object_object_get_ex(o, "task", &task) &&
	    json_object_object_get_ex(task, "type", &type) &&
	    json_object_is_type(type, json_type_string))
		ps_task = !strcmp(json_object_get_string(type), "ps");
	key[0] = '\0';
	if (ps_task && json_object_object_get_ex(o, "cluster", &cluster)) {
		if (json_object_object_get_ex(cluster, "ps", &ps) &&
		    json_object_is_type(ps, json_type_array)) {
			/* ["h1:2222","h2:2222"] -> h1:2222,h2:2222 */
			size_t off = 0, i;

			for (i = 0; i < json_object_array_length(ps) && off < keylen; i++) {
				const char *h =
					json_object_get_string(json_object_array_get_idx(ps, i));

				off += snprintf(key + off, keylen - off, "%s%s", i ? "," : "",
						h ? h : "");
			}
		} else if (json_object_object_get_ex(cluster, "ps", &ps))
			snprintf(key, keylen, "%s",
				 json_object_to_json_string_ext(ps, JSON_C_TO_STRING_PLAIN));
		else
			snprintf(key, keylen, "%s",
				 json_object_to_json_string_ext(cluster, JSON_C_TO_STRING_PLAIN));
	}
	json_object_put(o);
	return ps_task;
}

/*
 * The TensorFlow flag as an argument of its own (--job_name=ps, or
 * --job_name then ps), not inside another one (sh -c "... --job_name=ps"),
 * and not on the command line of a launcher that starts the PS elsewhere
 * or as a child (ssh, srun, mpirun, sudo, timeout, ...): the PS itself
 * shows up with its own exec.
 */
static bool tf_args_ps(const struct tls_proc_info *p)
{
	static const char *const launchers[] = { "ssh",	 "pdsh",    "srun",   "mpirun", "mpiexec",
						 "sudo", "timeout", "strace", NULL };
	const char *a = p->cmdline, *end = p->cmdline + p->cmdline_len, *base;
	const char *const *l;
	bool prev_flag = false;

	if (!p->cmdline_len)
		return false;
	base = strrchr(a, '/');
	base = base ? base + 1 : a;
	for (l = launchers; *l; l++)
		if (!strcmp(base, *l))
			return false;
	while (a < end) {
		size_t n = strnlen(a, end - a);

		if (!strcmp(a, "--job_name=ps") || !strcmp(a, "-job_name=ps") ||
		    (prev_flag && !strcmp(a, "ps")))
			return true;
		prev_flag = !strcmp(a, "--job_name") || !strcmp(a, "-job_name");
		a += n + 1;
	}
	return false;
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* "RULE:KEY", printable, shortened with a hash of the whole when too long:
 * the name is a map value and a log word, so it must be short and safe. */
static void make_name(const char *rule, const char *key, char *out, size_t outlen)
{
	char full[TLS_RULE_PATTERN_MAX * 2];
	size_t i, n;

	snprintf(full, sizeof(full), "%s:%s", rule, key);
	for (i = 0; full[i]; i++) {
		unsigned char ch = full[i];

		if (!(ch >= 'a' && ch <= 'z') && !(ch >= 'A' && ch <= 'Z') &&
		    !(ch >= '0' && ch <= '9') && !strchr(".:_-,/@[]", ch))
			full[i] = '_';
	}
	n = strlen(full);
	if (n < outlen) {
		memcpy(out, full, n + 1);
		return;
	}
	/* prefix~hash */
	snprintf(out, outlen, "%.*s~%08x", (int)(outlen - 10), full, fnv1a(full));
}

static int match_one(const struct rule *r, const struct tls_proc_info *p, const char *joined,
		     char *key, size_t keylen)
{
	regmatch_t m[MAX_GROUPS];
	const char *v = NULL;
	size_t len;

	if (r->c.env[0]) {
		v = env_get(p, r->env_key, strlen(r->env_key));
		if (!v || (r->env_value && strcmp(v, r->env_value)))
			return 0;
	}
	if (r->has_re && (!joined || regexec(&r->re, joined, MAX_GROUPS, m, 0)))
		return 0;
	if (r->match == MATCH_TF_ARGS && !tf_args_ps(p))
		return 0;
	if (r->match == MATCH_TF_CONFIG && (!v || !tf_config_ps(v, key, keylen)))
		return 0;
	if (r->c.exclude)
		return 1;
	if (r->match == MATCH_TF_CONFIG) {
		if (!key[0])
			snprintf(key, keylen, "%d", (int)p->pid);
		return 1;
	}
	key[0] = '\0';
	switch (r->key) {
	case KEY_ENV: {
		const char *s = r->key_arg;
		size_t off = 0;

		while (*s) {
			size_t l = strcspn(s, ",");

			v = l ? env_get(p, s, l) : NULL;
			if (v && off < keylen)
				off += snprintf(key + off, keylen - off, "%s%s", off ? ":" : "", v);
			s += l + (s[l] == ',');
		}
		break;
	}
	case KEY_ARG:
		v = arg_get(p, r->key_arg, &len);
		if (v)
			snprintf(key, keylen, "%.*s", (int)len, v);
		break;
	case KEY_GROUP:
		if (m[r->group].rm_so >= 0)
			snprintf(key, keylen, "%.*s", (int)(m[r->group].rm_eo - m[r->group].rm_so),
				 joined + m[r->group].rm_so);
		break;
	default:
		break;
	}
	/* No key (or an empty one): the process is its own job. */
	if (!key[0])
		snprintf(key, keylen, "%d", (int)p->pid);
	return 1;
}

int tls_rules_match(const struct tls_rules *r, const struct tls_proc_info *p, const char **rule,
		    char *job, size_t joblen)
{
	char key[TLS_RULE_PATTERN_MAX];
	char *joined = join_cmdline(p);
	unsigned int i;
	int ret = 0;

	for (i = 0; r && i < r->n; i++) {
		if (!match_one(&r->r[i], p, joined, key, sizeof(key)))
			continue;
		if (r->r[i].c.exclude)
			break;
		*rule = r->r[i].c.name;
		make_name(r->r[i].c.name, key, job, joblen);
		ret = 1;
		break;
	}
	free(joined);
	return ret;
}
