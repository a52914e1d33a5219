// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#include "classifier.h"
#include "config.h"
#include "config_trust.h"
#include "http.h"
#include "log.h"
#include "stats.h"
#include "tree_heal.h"
#include "units.h"

void tls_config_defaults(struct tls_config *c)
{
	memset(c, 0, sizeof(*c));
	c->policy = TLS_POLICY_BURSTS;
	c->interval_ns = TLS_INTERVAL_DEFAULT_NS;
	c->bands = TLS_BANDS_DEFAULT;
	c->flowlet_gap_ns = TLS_FLOWLET_GAP_NS_DEFAULT;
	c->flowlet_hold_ns = TLS_FLOWLET_HOLD_NS_DEFAULT;
	c->lead_headroom_ppm = TLS_LEAD_HEADROOM_DEFAULT_PPM;
	snprintf(c->ctl_path, sizeof(c->ctl_path), "%s", TLS_CTL_DEFAULT);
	c->stats_period_ns = TLS_STATS_PERIOD_DEFAULT_NS;
	c->ctl_idle_ns = TLS_CTL_IDLE_DEFAULT_NS;
	c->heal_limit = TLS_HEAL_LIMIT_DEFAULT;
	c->heal_window_ns = TLS_HEAL_WINDOW_DEFAULT_NS;
	c->discovery.enabled = true;
	c->discovery.builtin_rules = true;
	c->discovery.rescan_ns = TLS_RESCAN_DEFAULT_NS;
	tls_trust_default(&c->discovery.trust);
}

/* A setting that must be a string, if present. */
static int get_string(const config_t *cf, const char *name, const char **out, char *err,
		      size_t errlen)
{
	config_setting_t *s = config_lookup(cf, name);

	*out = NULL;
	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return tls_errf(err, errlen, "line %d: %s must be a string",
				config_setting_source_line(s), name);
	*out = config_setting_get_string(s);
	return 0;
}

/* A whole number from lo to hi, if present. */
static int get_int_range(const config_t *cf, const char *name, int lo, int hi, unsigned int *out,
			 char *err, size_t errlen)
{
	config_setting_t *s = config_lookup(cf, name);
	int v;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_INT)
		return tls_errf(err, errlen, "line %d: %s must be a number %d..%d",
				config_setting_source_line(s), name, lo, hi);
	v = config_setting_get_int(s);
	if (v < lo || v > hi)
		return tls_errf(err, errlen, "%s: %d out of range %d..%d", name, v, lo, hi);
	*out = (unsigned int)v;
	return 0;
}

/* A rate or duration: a string with a unit ("100mbit", "20s"), or a bare
 * number (bits/s, seconds). */
static int get_scaled(const config_t *cf, const char *name, int (*parse)(const char *, uint64_t *),
		      const char *example, uint64_t *out, char *err, size_t errlen)
{
	config_setting_t *s = config_lookup(cf, name);
	char num[64];
	const char *v;
	int line;

	if (!s)
		return 0;
	line = config_setting_source_line(s);
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		snprintf(num, sizeof(num), "%lld", config_setting_get_int64(s));
		v = num;
		break;
	case CONFIG_TYPE_FLOAT:
		snprintf(num, sizeof(num), "%.9f", config_setting_get_float(s));
		v = num;
		break;
	default:
		if (get_string(cf, name, &v, err, errlen))
			return -EINVAL;
	}
	if (parse(v, out))
		return tls_errf(err, errlen, "line %d: %s: '%s' is not valid (example: \"%s\")",
				line, name, v, example);
	return 0;
}

/* "auto" (or no setting): the interface's speed, read at start. A rate
 * under TLS_LINK_RATE_MIN_BPS is refused: "0" used to mean "auto" without
 * saying so, and HTB cannot pace a few bits per second (its rates are in
 * bytes). */
static int parse_link_rate(const config_t *cf, struct tls_config *c, char *err, size_t errlen)
{
	const char *v;

	if (config_lookup_string(cf, "link_rate", &v) == CONFIG_TRUE && !strcmp(v, "auto")) {
		c->rate_bps = 0;
		return 0;
	}
	if (get_scaled(cf, "link_rate", tls_parse_rate, "10gbit", &c->rate_bps, err, errlen))
		return -EINVAL;
	if (config_lookup(cf, "link_rate") && c->rate_bps < TLS_LINK_RATE_MIN_BPS)
		return tls_errf(err, errlen,
				"link_rate: %llu bit/s is below the least HTB can pace (8kbit); "
				"\"auto\" (or no link_rate) takes the interface's speed",
				(unsigned long long)c->rate_bps);
	return 0;
}

static int parse_jobs(const config_t *cf, struct tls_config *c, char *err, size_t errlen)
{
	/* a table, as for the other groups: tests/docs/ checks tlsd.conf(5) by it */
	static const char *const members[] = { "name", "ports", NULL };
	config_setting_t *jobs = config_lookup(cf, "jobs");
	int i, n;

	c->njobs = 0;
	if (!jobs)
		return 0;
	if (!config_setting_is_list(jobs) && !config_setting_is_array(jobs))
		return tls_errf(
			err, errlen,
			"line %d: jobs must be a list: ( { name = ...; ports = [ ... ]; }, ... )",
			config_setting_source_line(jobs));
	n = config_setting_length(jobs);
	if (n > TLS_MAX_STATIC_JOBS)
		return tls_errf(err, errlen, "jobs: %d jobs, at most %d", n, TLS_MAX_STATIC_JOBS);
	for (i = 0; i < n; i++) {
		config_setting_t *j = config_setting_get_elem(jobs, i), *ports;
		struct tls_job_conf *jc = &c->jobs[i];
		const char *name;
		int k, np, line = config_setting_source_line(j);

		memset(jc, 0, sizeof(*jc));
		if (!config_setting_is_group(j))
			return tls_errf(
				err, errlen,
				"line %d: jobs[%d] must be a group { name = ...; ports = [...]; }",
				line, i);
		if (!config_setting_lookup_string(j, "name", &name) || !*name)
			return tls_errf(err, errlen,
					"line %d: jobs[%d]: name missing or not a string", line, i);
		if (strlen(name) >= sizeof(jc->name))
			return tls_errf(err, errlen,
					"line %d: jobs[%d]: name '%s' longer than %zu characters",
					line, i, name, sizeof(jc->name) - 1);
		strcpy(jc->name, name);
		for (k = 0; k < config_setting_length(j); k++) {
			const char *m = config_setting_name(config_setting_get_elem(j, k));
			const char *const *known_m;

			for (known_m = members; *known_m && strcmp(*known_m, m); known_m++)
				;
			if (!*known_m)
				return tls_errf(err, errlen,
						"line %d: job '%s': unknown setting '%s'", line,
						name, m);
		}
		ports = config_setting_get_member(j, "ports");
		if (!ports || !(config_setting_is_array(ports) || config_setting_is_list(ports)))
			return tls_errf(
				err, errlen,
				"line %d: job '%s': ports must be a list of port numbers, e.g. [ 9000 ]",
				line, name);
		np = config_setting_length(ports);
		if (np < 1 || np > TLS_MAX_JOB_PORTS)
			return tls_errf(err, errlen,
					"line %d: job '%s': %d ports, expected 1 to %d", line, name,
					np, TLS_MAX_JOB_PORTS);
		for (k = 0; k < np; k++) {
			config_setting_t *p = config_setting_get_elem(ports, k);
			long long v;

			if (config_setting_type(p) != CONFIG_TYPE_INT &&
			    config_setting_type(p) != CONFIG_TYPE_INT64)
				return tls_errf(err, errlen,
						"line %d: job '%s': ports[%d] is not a number",
						line, name, k);
			v = config_setting_get_int64(p);
			if (config_setting_type(p) == CONFIG_TYPE_INT)
				v = config_setting_get_int(p);
			if (v < 1 || v > 65535)
				return tls_errf(
					err, errlen,
					"line %d: job '%s': port %lld out of range 1..65535", line,
					name, v);
			jc->ports[k] = (uint16_t)v;
		}
		jc->nports = np;
	}
	c->njobs = n;
	return 0;
}

/* A rule's string member into a fixed buffer, naming it when it is wrong. */
static int rule_string(config_setting_t *r, const char *what, int i, const char *member, char *buf,
		       size_t len, char *err, size_t errlen)
{
	config_setting_t *s = config_setting_get_member(r, member);
	int line = config_setting_source_line(r);
	const char *v;

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return tls_errf(err, errlen, "line %d: discovery.%s[%d].%s must be a string", line,
				what, i, member);
	v = config_setting_get_string(s);
	if (strlen(v) >= len)
		return tls_errf(err, errlen,
				"line %d: discovery.%s[%d].%s longer than %zu characters", line,
				what, i, member, len - 1);
	snprintf(buf, len, "%s", v);
	return 0;
}

/* discovery.rules or discovery.exclude: a list of groups. */
static int parse_rule_list(config_setting_t *disc, const char *what, bool exclude,
			   struct tls_discovery_conf *d, char *err, size_t errlen)
{
	static const char *const members[] = { "name", "cmdline", "env", "job_key", NULL };
	config_setting_t *list = config_setting_get_member(disc, what);
	int i, k;

	if (!list)
		return 0;
	if (!config_setting_is_list(list))
		return tls_errf(
			err, errlen,
			"line %d: discovery.%s must be a list: ( { cmdline = \"...\"; }, ... )",
			config_setting_source_line(list), what);
	for (i = 0; i < config_setting_length(list); i++) {
		config_setting_t *r = config_setting_get_elem(list, i);
		struct tls_rule_conf *rc;
		int line = config_setting_source_line(r);

		if (!config_setting_is_group(r))
			return tls_errf(err, errlen,
					"line %d: discovery.%s[%d] must be a group { ... }", line,
					what, i);
		if (d->nrules >= TLS_MAX_RULES)
			return tls_errf(err, errlen, "line %d: discovery: more than %d rules", line,
					TLS_MAX_RULES);
		for (k = 0; k < config_setting_length(r); k++) {
			const char *m = config_setting_name(config_setting_get_elem(r, k));
			const char *const *known_m;

			for (known_m = members; *known_m && strcmp(*known_m, m); known_m++)
				;
			if (!*known_m || (exclude && !strcmp(m, "job_key")))
				return tls_errf(err, errlen,
						"line %d: discovery.%s[%d]: unknown setting '%s'",
						line, what, i, m);
		}
		rc = &d->rules[d->nrules];
		memset(rc, 0, sizeof(*rc));
		rc->exclude = exclude;
		if (rule_string(r, what, i, "name", rc->name, sizeof(rc->name), err, errlen) ||
		    rule_string(r, what, i, "cmdline", rc->cmdline, sizeof(rc->cmdline), err,
				errlen) ||
		    rule_string(r, what, i, "env", rc->env, sizeof(rc->env), err, errlen) ||
		    rule_string(r, what, i, "job_key", rc->job_key, sizeof(rc->job_key), err,
				errlen))
			return -EINVAL;
		if (!rc->name[0])
			snprintf(rc->name, sizeof(rc->name), "%s%d", exclude ? "exclude" : "rule",
				 i);
		else if (!exclude && (strchr(rc->name, ':') || strchr(rc->name, ' ')))
			return tls_errf(err, errlen,
					"line %d: discovery.%s[%d]: name '%s' may not "
					"hold ':' or spaces",
					line, what, i, rc->name);
		d->nrules++;
	}
	return 0;
}

static int parse_discovery(const config_t *cf, struct tls_config *c, char *err, size_t errlen)
{
	static const char *const members[] = { "enabled", "builtin_rules", "rescan", "rules",
					       "exclude", "trust",	   "limits", NULL };
	config_setting_t *disc = config_lookup(cf, "discovery"), *s;
	struct tls_discovery_conf *d = &c->discovery;
	struct tls_rules *compiled;
	int k, ret;

	d->nrules = 0;
	tls_trust_default(&d->trust);
	if (!disc)
		return 0;
	if (!config_setting_is_group(disc))
		return tls_errf(err, errlen, "line %d: discovery must be a group { ... }",
				config_setting_source_line(disc));
	for (k = 0; k < config_setting_length(disc); k++) {
		const char *m = config_setting_name(config_setting_get_elem(disc, k));
		const char *const *known_m;

		for (known_m = members; *known_m && strcmp(*known_m, m); known_m++)
			;
		if (!*known_m)
			return tls_errf(
				err, errlen, "line %d: discovery: unknown setting '%s'",
				config_setting_source_line(config_setting_get_elem(disc, k)), m);
	}
	s = config_setting_get_member(disc, "enabled");
	if (s && config_setting_type(s) != CONFIG_TYPE_BOOL)
		return tls_errf(err, errlen, "line %d: discovery.enabled must be true or false",
				config_setting_source_line(s));
	if (s)
		d->enabled = config_setting_get_bool(s);
	s = config_setting_get_member(disc, "builtin_rules");
	if (s && config_setting_type(s) != CONFIG_TYPE_BOOL)
		return tls_errf(err, errlen,
				"line %d: discovery.builtin_rules must be true or false",
				config_setting_source_line(s));
	if (s)
		d->builtin_rules = config_setting_get_bool(s);
	if (get_scaled(cf, "discovery.rescan", tls_parse_duration, "2s", &d->rescan_ns, err,
		       errlen))
		return -EINVAL;
	if (d->rescan_ns < TLS_RESCAN_MIN_NS)
		return tls_errf(err, errlen, "discovery.rescan: must be at least 100ms");
	ret = tls_parse_trust(disc, &d->trust, err, errlen);
	if (!ret)
		ret = parse_rule_list(disc, "exclude", true, d, err, errlen);
	if (!ret)
		ret = parse_rule_list(disc, "rules", false, d, err, errlen);
	if (ret)
		return ret;
	/* Two rules of one name would merge their jobs (RULE:KEY). */
	for (k = 0; k < (int)d->nrules; k++) {
		const char *const *b;
		int j;

		if (d->rules[k].exclude)
			continue;
		for (j = 0; j < k; j++)
			if (!d->rules[j].exclude && !strcmp(d->rules[j].name, d->rules[k].name))
				return tls_errf(err, errlen, "discovery: two rules named '%s'",
						d->rules[k].name);
		for (b = tls_builtin_rule_names; d->builtin_rules && *b; b++)
			if (!strcmp(*b, d->rules[k].name))
				return tls_errf(err, errlen,
						"discovery: rule name '%s' is a built-in rule's",
						*b);
	}
	/* Compile once here, so that a bad regex is a configuration error. */
	ret = tls_rules_compile(d, &compiled, err, errlen);
	if (ret)
		return ret;
	tls_rules_free(compiled);
	return 0;
}

/* control_group: a group that exists now ("" = root only). */
static int parse_group(const char *name, struct tls_config *c, char *err, size_t errlen)
{
	struct group *g;

	c->ctl_group[0] = '\0';
	c->ctl_gid = 0;
	if (!*name)
		return 0;
	if (strlen(name) >= sizeof(c->ctl_group))
		return tls_errf(err, errlen, "control_group: '%s' is longer than %zu characters",
				name, sizeof(c->ctl_group) - 1);
	g = getgrnam(name);
	if (!g)
		return tls_errf(err, errlen, "control_group: no group '%s' on this system", name);
	snprintf(c->ctl_group, sizeof(c->ctl_group), "%s", name);
	c->ctl_gid = g->gr_gid;
	return 0;
}

/* metrics_listen: the HTTP endpoint's address; absent or "": off. */
static int parse_metrics_listen(const config_t *cf, struct tls_config *c, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	char why[192];
	const char *v;
	socklen_t sl;

	c->metrics_listen[0] = '\0';
	if (get_string(cf, "metrics_listen", &v, err, errlen))
		return -EINVAL;
	if (!v || !*v)
		return 0;
	if (strlen(v) >= sizeof(c->metrics_listen) ||
	    tls_http_parse_listen(v, &ss, &sl, why, sizeof(why)))
		return tls_errf(
			err, errlen, "metrics_listen: %s",
			strlen(v) >= sizeof(c->metrics_listen) ? "longer than 63 characters" : why);
	snprintf(c->metrics_listen, sizeof(c->metrics_listen), "%s", v);
	return 0;
}

/* A setting that must be true or false, if present. */
static int get_bool(const config_t *cf, const char *name, bool *out, char *err, size_t errlen)
{
	config_setting_t *s = config_lookup(cf, name);

	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return tls_errf(err, errlen, "line %d: %s must be true or false",
				config_setting_source_line(s), name);
	*out = config_setting_get_bool(s);
	return 0;
}

/* Every setting the file may hold: anything else is a mistake worth naming. */
static const char *const known[] = {
	"interface",
	"link_rate",
	"policy",
	"interval",
	"bands",
	"flowlet_gap",
	"flowlet_hold",
	"dscp",
	"control_socket",
	"jobs",
	"discovery",
	"control_group",
	"stats_period",
	"lead_headroom",
	"control_idle_timeout",
	"heal_limit",
	"heal_window",
	"metrics_listen",
	"metrics_workers",
	"replace_qdisc",
	"mode",
	"stats_window",
	"stats_n",
	NULL,
};

/* stats_window = "auto" | DURATION, stats_n = "hosts" | "flows" (stats.h:
 * who counts in n, over what window) */
static int parse_stats_n(config_t *cf, struct tls_config *c, char *err, size_t errlen)
{
	const char *v;

	if (get_string(cf, "stats_window", &v, err, errlen))
		return -EINVAL;
	c->stats_window_ns = 0;
	if (v && strcmp(v, "auto") &&
	    (tls_parse_duration(v, &c->stats_window_ns) || !c->stats_window_ns))
		return tls_errf(err, errlen,
				"stats_window: '%s' is not \"auto\" or a duration above 0 (e.g. "
				"\"5s\")",
				v);
	if (get_string(cf, "stats_n", &v, err, errlen))
		return -EINVAL;
	if (v && strcmp(v, "hosts") && strcmp(v, "flows"))
		return tls_errf(err, errlen, "stats_n: '%s' is not \"hosts\" or \"flows\"", v);
	c->stats_n_flows = v && !strcmp(v, "flows");
	return 0;
}

static int parse(config_t *cf, struct tls_config *c, char *err, size_t errlen)
{
	config_setting_t *root = config_root_setting(cf);
	const char *v;
	int i;

	for (i = 0; i < config_setting_length(root); i++) {
		const char *name = config_setting_name(config_setting_get_elem(root, i));
		const char *const *k;

		for (k = known; *k && strcmp(*k, name); k++)
			;
		if (!*k)
			return tls_errf(
				err, errlen, "line %d: unknown setting '%s'",
				config_setting_source_line(config_setting_get_elem(root, i)), name);
	}
	if (parse_stats_n(cf, c, err, errlen))
		return -EINVAL;
	if (get_string(cf, "interface", &v, err, errlen))
		return -EINVAL;
	if (v) {
		if (!*v || strlen(v) >= sizeof(c->ifname) || strchr(v, '/') || strchr(v, ' '))
			return tls_errf(err, errlen,
					"interface: '%s' is not a valid interface name", v);
		strcpy(c->ifname, v);
	}
	if (parse_link_rate(cf, c, err, errlen) ||
	    get_scaled(cf, "interval", tls_parse_duration, "20s", &c->interval_ns, err, errlen) ||
	    get_scaled(cf, "flowlet_gap", tls_parse_duration, "4ms", &c->flowlet_gap_ns, err,
		       errlen) ||
	    get_scaled(cf, "flowlet_hold", tls_parse_duration, "100ms", &c->flowlet_hold_ns, err,
		       errlen) ||
	    get_scaled(cf, "stats_period", tls_parse_duration, "100ms", &c->stats_period_ns, err,
		       errlen) ||
	    get_scaled(cf, "lead_headroom", tls_parse_percent, "5%", &c->lead_headroom_ppm, err,
		       errlen) ||
	    get_scaled(cf, "control_idle_timeout", tls_parse_duration, "60s", &c->ctl_idle_ns,
		       err, errlen) ||
	    get_scaled(cf, "heal_window", tls_parse_duration, "60s", &c->heal_window_ns, err,
		       errlen))
		return -EINVAL;
	if (c->ctl_idle_ns < TLS_CTL_IDLE_MIN_NS)
		return tls_errf(err, errlen, "control_idle_timeout: must be at least 1s");
	if (get_int_range(cf, "heal_limit", 0, TLS_HEAL_LIMIT_MAX, &c->heal_limit, err, errlen))
		return -EINVAL;
	if (get_string(cf, "policy", &v, err, errlen))
		return -EINVAL;
	if (v && tls_policy_parse(v, &c->policy))
		return tls_errf(err, errlen, "policy: '%s' is not one of " TLS_POLICY_NAMES, v);
	if (get_string(cf, "mode", &v, err, errlen))
		return -EINVAL;
	if (v && strcmp(v, "schedule") && strcmp(v, "observe"))
		return tls_errf(err, errlen, "mode: '%s' is not one of schedule, observe", v);
	c->observe = v && !strcmp(v, "observe");
	if (get_int_range(cf, "bands", 1, TLS_MAX_BANDS, &c->bands, err, errlen))
		return -EINVAL;
	if (get_bool(cf, "dscp", &c->dscp, err, errlen) ||
	    get_bool(cf, "replace_qdisc", &c->replace_qdisc, err, errlen) ||
	    get_bool(cf, "metrics_workers", &c->metrics_workers, err, errlen))
		return -EINVAL;
	if (get_string(cf, "control_socket", &v, err, errlen))
		return -EINVAL;
	if (v) {
		if (v[0] != '/' || strlen(v) >= sizeof(c->ctl_path))
			return tls_errf(
				err, errlen,
				"control_socket: '%s' must be an absolute path of at most %zu characters",
				v, sizeof(c->ctl_path) - 1);
		strcpy(c->ctl_path, v);
	}
	if (get_string(cf, "control_group", &v, err, errlen))
		return -EINVAL;
	if (v && parse_group(v, c, err, errlen))
		return -EINVAL;
	if (parse_metrics_listen(cf, c, err, errlen) || parse_jobs(cf, c, err, errlen))
		return -EINVAL;
	return parse_discovery(cf, c, err, errlen);
}

int tls_config_validate(const struct tls_config *c, char *err, size_t errlen)
{
	unsigned int i, j, k, l;

	if (!c->ifname[0])
		return tls_errf(err, errlen, "interface: not set (in the file or with -i)");
	if (c->stats_period_ns < TLS_STATS_PERIOD_MIN_NS)
		return tls_errf(err, errlen, "stats_period: must be at least 10ms");
	if (c->interval_ns < TLS_INTERVAL_MIN_NS)
		return tls_errf(err, errlen, "interval: must be at least 10ms");
	if (c->heal_window_ns < TLS_HEAL_WINDOW_MIN_NS)
		return tls_errf(err, errlen, "heal_window: must be at least 1s");
	if (c->bands < 1 || c->bands > TLS_MAX_BANDS)
		return tls_errf(err, errlen, "bands: %u out of range 1..%d", c->bands,
				TLS_MAX_BANDS);
	if (c->flowlet_gap_ns && c->flowlet_hold_ns < c->flowlet_gap_ns)
		return tls_errf(err, errlen, "flowlet_hold: must be at least flowlet_gap");
	for (i = 0; i < c->njobs; i++) {
		for (j = 0; j < i; j++)
			if (!strcmp(c->jobs[i].name, c->jobs[j].name))
				return tls_errf(err, errlen, "jobs: the name '%s' is used twice",
						c->jobs[i].name);
		for (k = 0; k < c->jobs[i].nports; k++)
			for (j = 0; j <= i; j++)
				for (l = 0; l < (j == i ? k : c->jobs[j].nports); l++)
					if (c->jobs[j].ports[l] == c->jobs[i].ports[k])
						return tls_errf(
							err, errlen,
							"jobs: port %u belongs to both '%s' and '%s'",
							c->jobs[i].ports[k], c->jobs[j].name,
							c->jobs[i].name);
	}
	return 0;
}

static int load(config_t *cf, int read_ok, struct tls_config *c, char *err, size_t errlen)
{
	struct tls_config *tmp;
	int ret;

	if (!read_ok) {
		ret = tls_errf(err, errlen, "%s%sline %d: %s",
			       config_error_file(cf) ? config_error_file(cf) : "",
			       config_error_file(cf) ? ": " : "", config_error_line(cf),
			       config_error_text(cf));
		config_destroy(cf);
		return ret;
	}
	tmp = malloc(sizeof(*tmp));
	if (!tmp) {
		config_destroy(cf);
		return -ENOMEM;
	}
	*tmp = *c;
	ret = parse(cf, tmp, err, errlen);
	if (!ret)
		*c = *tmp;
	free(tmp);
	config_destroy(cf);
	return ret;
}

int tls_config_load_file(const char *path, struct tls_config *c, char *err, size_t errlen)
{
	config_t cf;
	FILE *f = fopen(path, "r");
	int ok;

	if (!f) {
		int e = errno;

		tls_errf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	config_init(&cf);
	ok = config_read(&cf, f) == CONFIG_TRUE;
	fclose(f);
	if (!ok && !config_error_file(&cf)) {
		int ret = tls_errf(err, errlen, "%s: line %d: %s", path, config_error_line(&cf),
				   config_error_text(&cf));

		config_destroy(&cf);
		return ret;
	}
	return load(&cf, ok, c, err, errlen);
}

int tls_config_load_string(const char *text, struct tls_config *c, char *err, size_t errlen)
{
	config_t cf;

	config_init(&cf);
	return load(&cf, config_read_string(&cf, text) == CONFIG_TRUE, c, err, errlen);
}
