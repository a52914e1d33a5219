// SPDX-License-Identifier: GPL-2.0-only
/*
 * discovery.trust and discovery.limits of the configuration file (trust.h
 * says what they mean). Names of users and groups are resolved when the
 * file is read: a name that does not exist is an error now, not a process
 * silently left unscheduled later.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config_trust.h"
#include "log.h"

/* An id given as a name or a number ("alice", 1001, "1001"). */
static int resolve_id(config_setting_t *e, bool user, uint32_t *id, char *err, size_t errlen)
{
	const char *what = user ? "users" : "groups";
	int line = config_setting_source_line(e);
	const char *v;
	char *end;
	unsigned long n;

	if (config_setting_type(e) == CONFIG_TYPE_INT) {
		int i = config_setting_get_int(e);

		if (i < 0)
			return tls_errf(err, errlen, "line %d: discovery.trust.%s: %d is negative",
					line, what, i);
		*id = (uint32_t)i;
		return 0;
	}
	if (config_setting_type(e) != CONFIG_TYPE_STRING)
		return tls_errf(err, errlen,
				"line %d: discovery.trust.%s: each entry is a name or a number", line,
				what);
	v = config_setting_get_string(e);
	errno = 0;
	n = strtoul(v, &end, 10);
	if (*v >= '0' && *v <= '9' && !*end && !errno && n < UINT32_MAX) {
		*id = (uint32_t)n;
		return 0;
	}
	if (user) {
		struct passwd *pw = getpwnam(v);

		if (!pw)
			return tls_errf(err, errlen,
					"line %d: discovery.trust.users: no user '%s' on this system",
					line, v);
		*id = pw->pw_uid;
	} else {
		struct group *g = getgrnam(v);

		if (!g)
			return tls_errf(err, errlen,
					"line %d: discovery.trust.groups: no group '%s' on this system",
					line, v);
		*id = g->gr_gid;
	}
	return 0;
}

/* users or groups: a list or an array of names and numbers. */
static int parse_ids(config_setting_t *trust, const char *what, uint32_t *ids, unsigned int *n,
		     char *err, size_t errlen)
{
	config_setting_t *s = config_setting_get_member(trust, what);
	int i;

	if (!s)
		return 0;
	if (!config_setting_is_aggregate(s) || config_setting_is_group(s))
		return tls_errf(err, errlen,
				"line %d: discovery.trust.%s must be a list: [ \"name\", 1001 ]",
				config_setting_source_line(s), what);
	if (config_setting_length(s) > TLS_TRUST_MAX_IDS)
		return tls_errf(err, errlen, "line %d: discovery.trust.%s: more than %d entries",
				config_setting_source_line(s), what, TLS_TRUST_MAX_IDS);
	*n = 0;
	for (i = 0; i < config_setting_length(s); i++)
		if (resolve_id(config_setting_get_elem(s, i), !strcmp(what, "users"), &ids[(*n)++],
			       err, errlen))
			return -EINVAL;
	return 0;
}

static int parse_cgroups(config_setting_t *trust, struct tls_trust_conf *t, char *err,
			 size_t errlen)
{
	config_setting_t *s = config_setting_get_member(trust, "cgroups");
	int i, line;

	if (!s)
		return 0;
	line = config_setting_source_line(s);
	if (!config_setting_is_aggregate(s) || config_setting_is_group(s))
		return tls_errf(err, errlen,
				"line %d: discovery.trust.cgroups must be a list: "
				"[ \"/kubepods.slice\", \"ml.slice\" ]",
				line);
	if (config_setting_length(s) > TLS_TRUST_MAX_CGROUPS)
		return tls_errf(err, errlen, "line %d: discovery.trust.cgroups: more than %d entries",
				line, TLS_TRUST_MAX_CGROUPS);
	t->ncgroups = 0;
	for (i = 0; i < config_setting_length(s); i++) {
		config_setting_t *e = config_setting_get_elem(s, i);
		char why[200];

		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return tls_errf(err, errlen,
					"line %d: discovery.trust.cgroups[%d] must be a string", line,
					i);
		if (tls_trust_cgroup_path(config_setting_get_string(e), t->cgroups[t->ncgroups],
					  TLS_CGROUP_PATH_MAX, why, sizeof(why)))
			return tls_errf(err, errlen, "line %d: discovery.trust.cgroups[%d]: %s",
					line, i, why);
		t->ncgroups++;
	}
	return 0;
}

/* A count from 1 to max, if present. */
static int parse_count(config_setting_t *g, const char *name, unsigned int max, unsigned int *out,
		       char *err, size_t errlen)
{
	config_setting_t *s = config_setting_get_member(g, name);
	int v;

	if (!s)
		return 0;
	v = config_setting_type(s) == CONFIG_TYPE_INT ? config_setting_get_int(s) : -1;
	if (v < 1 || (unsigned int)v > max)
		return tls_errf(err, errlen,
				"line %d: discovery.limits.%s must be a whole number from 1 to %u",
				config_setting_source_line(s), name, max);
	*out = (unsigned int)v;
	return 0;
}

/* Only the members named: anything else is a mistake worth naming. */
static int check_members(config_setting_t *g, const char *what, const char *const *members,
			 char *err, size_t errlen)
{
	int k;

	if (!config_setting_is_group(g))
		return tls_errf(err, errlen, "line %d: discovery.%s must be a group { ... }",
				config_setting_source_line(g), what);
	for (k = 0; k < config_setting_length(g); k++) {
		config_setting_t *m = config_setting_get_elem(g, k);
		const char *const *known;

		for (known = members; *known && strcmp(*known, config_setting_name(m)); known++)
			;
		if (!*known)
			return tls_errf(err, errlen, "line %d: discovery.%s: unknown setting '%s'",
					config_setting_source_line(m), what,
					config_setting_name(m));
	}
	return 0;
}

int tls_parse_trust(config_setting_t *disc, struct tls_trust_conf *t, char *err, size_t errlen)
{
	static const char *const trust_m[] = { "users", "groups", "cgroups", "netns", NULL };
	static const char *const limits_m[] = { "ps_per_user", "jobs_per_user",
						 "endpoints_per_user", NULL };
	config_setting_t *trust = config_setting_get_member(disc, "trust");
	config_setting_t *limits = config_setting_get_member(disc, "limits"), *s;

	tls_trust_default(t);
	if (trust) {
		if (check_members(trust, "trust", trust_m, err, errlen))
			return -EINVAL;
		/* users given: exactly those (root too only if listed) */
		if (config_setting_get_member(trust, "users"))
			t->nuids = 0;
		if (parse_ids(trust, "users", t->uids, &t->nuids, err, errlen) ||
		    parse_ids(trust, "groups", t->gids, &t->ngids, err, errlen) ||
		    parse_cgroups(trust, t, err, errlen))
			return -EINVAL;
		s = config_setting_get_member(trust, "netns");
		if (s) {
			const char *v = config_setting_type(s) == CONFIG_TYPE_STRING ?
						config_setting_get_string(s) :
						"";

			if (!strcmp(v, "any"))
				t->netns = TLS_TRUST_NETNS_ANY;
			else if (!strcmp(v, "same"))
				t->netns = TLS_TRUST_NETNS_SAME;
			else
				return tls_errf(err, errlen,
						"line %d: discovery.trust.netns must be \"any\" or "
						"\"same\"",
						config_setting_source_line(s));
		}
		if (!t->nuids && !t->ngids)
			return tls_errf(err, errlen,
					"line %d: discovery.trust trusts nobody (no users, no "
					"groups): set discovery.enabled = false instead",
					config_setting_source_line(trust));
	}
	if (limits) {
		if (check_members(limits, "limits", limits_m, err, errlen) ||
		    parse_count(limits, "ps_per_user", TLS_PS_PER_USER_MAX, &t->ps_per_user, err,
				errlen) ||
		    parse_count(limits, "jobs_per_user", TLS_JOBS_PER_USER_MAX, &t->jobs_per_user,
				err, errlen) ||
		    parse_count(limits, "endpoints_per_user", TLS_EPS_PER_USER_MAX,
				&t->endpoints_per_user, err, errlen))
			return -EINVAL;
	}
	return 0;
}
