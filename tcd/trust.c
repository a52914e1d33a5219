// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "trust.h"

void tls_trust_default(struct tls_trust_conf *t)
{
	memset(t, 0, sizeof(*t));
	t->nuids = 1;
	t->uids[0] = 0;
	t->netns = TLS_TRUST_NETNS_ANY;
	t->ps_per_user = TLS_PS_PER_USER_DEFAULT;
	t->jobs_per_user = TLS_JOBS_PER_USER_DEFAULT;
	t->endpoints_per_user = TLS_EPS_PER_USER_DEFAULT;
}

/* The line of buf[0..len) that starts with key, up to (not with) its end. */
static const char *find_line(const char *buf, size_t len, const char *key, size_t *linelen)
{
	size_t klen = strlen(key), i = 0;

	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (buf + i)) : len - i;

		if (l >= klen && !memcmp(buf + i, key, klen)) {
			*linelen = l - klen;
			return buf + i + klen;
		}
		i += l + 1;
	}
	return NULL;
}

/* A decimal id at *s (after blanks), below (uid_t)-1; advances *s. */
static int next_id(const char **s, const char *end, uint32_t *id)
{
	const char *p = *s;
	uint64_t v = 0;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || *p < '0' || *p > '9')
		return -EINVAL;
	while (p < end && *p >= '0' && *p <= '9') {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v >= UINT32_MAX)
			return -EINVAL;
		p++;
	}
	*id = (uint32_t)v;
	*s = p;
	return 0;
}

int tls_parse_proc_status(const char *buf, size_t len, struct tls_proc_creds *c)
{
	const char *l, *end;
	size_t ll;
	uint32_t id;

	memset(c, 0, sizeof(*c));
	/* "Uid:\treal\teffective\tsaved\tfs": the first */
	l = find_line(buf, len, "Uid:", &ll);
	if (!l || next_id(&l, l + ll, &id))
		return -EINVAL;
	c->uid = id;
	l = find_line(buf, len, "Gid:", &ll);
	if (!l || next_id(&l, l + ll, &id))
		return -EINVAL;
	c->gid = id;
	/* "Groups:\t4 24 27 " (empty: none); missing in very old kernels */
	l = find_line(buf, len, "Groups:", &ll);
	if (!l)
		return 0;
	end = l + ll;
	while (c->ngroups < TLS_PROC_GROUPS_MAX && next_id(&l, end, &id) == 0)
		c->groups[c->ngroups++] = id;
	return 0;
}

int tls_parse_proc_cgroup(const char *buf, size_t len, char *path, size_t pathlen)
{
	const char *l;
	size_t ll;

	/* cgroup v2's line is "0::/path"; v1 hierarchies have ids above 0 */
	l = find_line(buf, len, "0::", &ll);
	if (!l)
		return -ENOENT;
	if (!ll || l[0] != '/' || ll >= pathlen || memchr(l, '\0', ll))
		return -EINVAL;
	memcpy(path, l, ll);
	path[ll] = '\0';
	return 0;
}

int tls_trust_cgroup_path(const char *entry, char *path, size_t len, char *err, size_t errlen)
{
	size_t n = strlen(entry), off = 0, i;
	static const char sfx[] = ".slice";
	const size_t slen = sizeof(sfx) - 1;

	if (entry[0] == '/') {
		if (n >= len)
			return tls_errf(err, errlen, "'%s' is longer than %zu characters", entry,
					len - 1);
		memcpy(path, entry, n + 1);
		while (n > 1 && path[n - 1] == '/')
			path[--n] = '\0';
		if (strstr(path, "//") || strstr(path, "/../") || strstr(path, "/./") ||
		    (n >= 3 && !strcmp(path + n - 3, "/..")) ||
		    (n >= 2 && !strcmp(path + n - 2, "/.")))
			return tls_errf(err, errlen, "'%s' is not a plain cgroup path", entry);
		return 0;
	}
	/* "a-b-c.slice" is /a.slice/a-b.slice/a-b-c.slice (systemd.slice(5)) */
	if (n <= slen || strcmp(entry + n - slen, sfx) || strchr(entry, '/') || entry[0] == '-' ||
	    strstr(entry, "--") || entry[n - slen - 1] == '-')
		return tls_errf(err, errlen,
				"'%s' is neither a cgroup path (\"/...\") nor a systemd slice "
				"(\"name.slice\")",
				entry);
	for (i = 0; i <= n - slen; i++) {
		if (i < n - slen && entry[i] != '-')
			continue;
		/* a prefix of the name up to a dash (or all of it) is a slice */
		if (off + 1 + i + slen >= len)
			return tls_errf(err, errlen, "'%s' makes too long a path", entry);
		path[off++] = '/';
		memcpy(path + off, entry, i);
		memcpy(path + off + i, sfx, slen);
		off += i + slen;
	}
	path[off] = '\0';
	return 0;
}

bool tls_cgroup_under(const char *p, const char *allowed)
{
	size_t n = strlen(allowed);

	if (n == 1 && allowed[0] == '/')
		return p[0] == '/';
	return !strncmp(p, allowed, n) && (p[n] == '\0' || p[n] == '/');
}

static bool has_id(const uint32_t *ids, unsigned int n, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

const char *tls_trust_check(const struct tls_trust_conf *t, const struct tls_proc_creds *c,
			    const char *cgroup, bool other_netns)
{
	bool who = has_id(t->uids, t->nuids, c->uid) || has_id(t->gids, t->ngids, c->gid);
	unsigned int i;

	for (i = 0; i < c->ngroups && !who; i++)
		who = has_id(t->gids, t->ngids, c->groups[i]);
	if (!who)
		return "its user and groups are not in discovery.trust";
	if (t->netns == TLS_TRUST_NETNS_SAME && other_netns)
		return "it is in another network namespace (discovery.trust.netns = \"same\")";
	if (!t->ncgroups)
		return NULL;
	if (!cgroup)
		return "its cgroup (v2) is unknown, and discovery.trust.cgroups is set";
	for (i = 0; i < t->ncgroups; i++)
		if (tls_cgroup_under(cgroup, t->cgroups[i]))
			return NULL;
	return "its cgroup is not under discovery.trust.cgroups";
}
