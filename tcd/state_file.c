// SPDX-License-Identifier: GPL-2.0-only
/* The daemon's state file: encode, decode and check, write atomically, read
 * with a bound (state_file.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "state_file.h"

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

void tls_state_file_init(struct tls_state_file *s, const char *instance)
{
	s->njobs = 0;
	s->qdisc_len = 0;
	snprintf(s->instance, sizeof(s->instance), "%s", instance ? instance : "");
}

const char *tls_state_file_job_name(const struct tls_state_file *s, uint32_t id)
{
	for (unsigned int i = 0; i < s->njobs; i++)
		if (s->jobs[i].id == id)
			return s->jobs[i].name;
	return NULL;
}

/* Where job id or name already is in s: its index, or -1. */
static int job_clash(const struct tls_state_file *s, uint32_t id, const char *name, bool *same_id)
{
	for (unsigned int i = 0; i < s->njobs; i++) {
		*same_id = s->jobs[i].id == id;
		if (*same_id || !strcmp(s->jobs[i].name, name))
			return (int)i;
	}
	return -1;
}

/* Well-formed UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF): what decode() asks of the file (JSON_TOKENER_VALIDATE_UTF8),
 * which json-c writes as it is given. */
static bool utf8_ok(const unsigned char *p)
{
	while (*p) {
		unsigned int n, cp;

		if (*p < 0x80) {
			p++;
			continue;
		}
		if ((*p & 0xe0) == 0xc0)
			n = 1, cp = *p & 0x1f;
		else if ((*p & 0xf0) == 0xe0)
			n = 2, cp = *p & 0x0f;
		else if ((*p & 0xf8) == 0xf0)
			n = 3, cp = *p & 0x07;
		else
			return false;
		for (unsigned int i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		p += n + 1;
	}
	return true;
}

int tls_state_file_add_job(struct tls_state_file *s, uint32_t id, const char *name)
{
	bool same_id = false;

	if (!id || id >= TLS_MAX_JOBS || !name || !*name || strlen(name) >= TLS_JOB_NAME_LEN)
		return -EINVAL;
	/* one name the decoder would refuse would void the whole file */
	if (!utf8_ok((const unsigned char *)name))
		return -EILSEQ;
	if (job_clash(s, id, name, &same_id) >= 0)
		return -EEXIST;
	if (s->njobs >= TLS_MAX_JOBS - 1)
		return -ENOSPC;
	s->jobs[s->njobs].id = id;
	snprintf(s->jobs[s->njobs].name, sizeof(s->jobs[0].name), "%s", name);
	s->njobs++;
	return 0;
}

/* What replay() in tcd/shaper.c sends: one RTM_NEWQDISC for the root,
 * whose length is the whole request. NULL if so, else what is wrong. */
static const char *bad_request(const uint8_t *req, size_t len)
{
	struct nlmsghdr h;
	struct tcmsg t;

	if (!len)
		return NULL;
	if (len < NLMSG_HDRLEN + sizeof(t))
		return "shorter than a netlink qdisc request";
	memcpy(&h, req, sizeof(h));
	memcpy(&t, req + NLMSG_HDRLEN, sizeof(t));
	if (h.nlmsg_len != len)
		return "its netlink length is not its own";
	if (h.nlmsg_type != RTM_NEWQDISC)
		return "not a request to add a qdisc";
	if (t.tcm_parent != TC_H_ROOT)
		return "not a root qdisc";
	return NULL;
}

int tls_state_file_set_qdisc(struct tls_state_file *s, const void *req, size_t len, char *err,
			     size_t errlen)
{
	const char *why;

	if (len > sizeof(s->qdisc))
		return fail(err, errlen, -EINVAL, "saved_qdisc: %zu bytes, more than %zu", len,
			    sizeof(s->qdisc));
	why = bad_request(req, len);
	if (why)
		return fail(err, errlen, -EINVAL, "saved_qdisc: %s", why);
	if (len)
		memcpy(s->qdisc, req, len);
	s->qdisc_len = len;
	return 0;
}

int tls_state_file_encode(const struct tls_state_file *s, char **out, size_t *len)
{
	static const char hex[] = "0123456789abcdef";
	struct json_object *o = json_object_new_object(), *jobs = json_object_new_array();
	char *q = malloc(2 * s->qdisc_len + 1);
	const char *text;
	int err = -ENOMEM;

	*out = NULL;
	if (s->qdisc_len > sizeof(s->qdisc) || bad_request(s->qdisc, s->qdisc_len) ||
	    s->njobs > TLS_MAX_JOBS - 1) {
		err = -EINVAL;
		goto out;
	}
	if (!o || !jobs || !q)
		goto out;
	for (size_t i = 0; i < s->qdisc_len; i++) {
		q[2 * i] = hex[s->qdisc[i] >> 4];
		q[2 * i + 1] = hex[s->qdisc[i] & 15];
	}
	q[2 * s->qdisc_len] = '\0';
	json_object_object_add(o, "format", json_object_new_string(TLS_STATE_FILE_FORMAT));
	json_object_object_add(o, "version", json_object_new_int(TLS_STATE_FILE_VERSION));
	json_object_object_add(o, "instance", json_object_new_string(s->instance));
	json_object_object_add(o, "saved_qdisc", json_object_new_string(q));
	for (unsigned int i = 0; i < s->njobs; i++) {
		struct json_object *j = json_object_new_object();

		if (!j)
			goto out;
		json_object_object_add(j, "id", json_object_new_int64(s->jobs[i].id));
		json_object_object_add(j, "name", json_object_new_string(s->jobs[i].name));
		json_object_array_add(jobs, j);
	}
	json_object_object_add(o, "jobs", jobs);
	jobs = NULL;
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							 JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text && asprintf(out, "%s\n", text) >= 0) {
		*len = strlen(*out);
		err = 0;
	} else {
		*out = NULL;
	}
out:
	json_object_put(jobs);
	json_object_put(o);
	free(q);
	return err;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A member that must be a string: it, its length in *n, or NULL (err set). */
static const char *get_string(struct json_object *o, const char *field, size_t max, size_t *n,
			      char *err, size_t errlen)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, field, &v))
		return fail(err, errlen, 0, "%s: missing", field), NULL;
	if (!json_object_is_type(v, json_type_string))
		return fail(err, errlen, 0, "%s: not a string", field), NULL;
	*n = (size_t)json_object_get_string_len(v);
	if (*n > max)
		return fail(err, errlen, 0, "%s: longer than %zu bytes", field, max), NULL;
	if (memchr(json_object_get_string(v), '\0', *n))
		return fail(err, errlen, 0, "%s: holds a NUL character", field), NULL;
	return json_object_get_string(v);
}

static int decode_qdisc(struct json_object *o, struct tls_state_file *s, char *err, size_t errlen)
{
	size_t n;
	const char *h = get_string(o, "saved_qdisc", 2 * sizeof(s->qdisc), &n, err, errlen);
	const char *why;

	if (!h)
		return -EINVAL;
	if (n % 2)
		return fail(err, errlen, -EINVAL, "saved_qdisc: an odd number of hex digits (%zu)",
			    n);
	for (size_t i = 0; i < n; i += 2) {
		int hi = hexval(h[i]), lo = hexval(h[i + 1]);

		if (hi < 0 || lo < 0)
			return fail(err, errlen, -EINVAL,
				    "saved_qdisc: not a hex digit at offset %zu",
				    hi < 0 ? i : i + 1);
		s->qdisc[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	s->qdisc_len = n / 2;
	why = bad_request(s->qdisc, s->qdisc_len);
	if (why)
		return fail(err, errlen, -EINVAL, "saved_qdisc: %s", why);
	return 0;
}

static int decode_job(struct json_object *j, unsigned int i, struct tls_state_file *s, char *err,
		      size_t errlen)
{
	char field[32];
	struct json_object *v;
	const char *name;
	int64_t id;
	size_t n;
	bool same_id = false;
	int k;

	if (!json_object_is_type(j, json_type_object))
		return fail(err, errlen, -EINVAL, "jobs[%u]: not an object", i);
	json_object_object_foreach(j, key, val)
	{
		(void)val;
		if (strcmp(key, "id") && strcmp(key, "name"))
			return fail(err, errlen, -EINVAL, "jobs[%u]: unknown field '%.32s'", i,
				    key);
	}
	if (!json_object_object_get_ex(j, "id", &v))
		return fail(err, errlen, -EINVAL, "jobs[%u].id: missing", i);
	if (!json_object_is_type(v, json_type_int))
		return fail(err, errlen, -EINVAL, "jobs[%u].id: not an integer", i);
	errno = 0;
	id = json_object_get_int64(v);
	if (errno || id < 1 || id >= TLS_MAX_JOBS)
		return fail(err, errlen, -EINVAL, "jobs[%u].id: out of range 1..%d", i,
			    TLS_MAX_JOBS - 1);
	snprintf(field, sizeof(field), "jobs[%u].name", i);
	name = get_string(j, "name", TLS_JOB_NAME_LEN - 1, &n, err, errlen);
	if (!name) {
		/* get_string named the member alone: the index first */
		char why[160];

		snprintf(why, sizeof(why), "%s", err);
		return fail(err, errlen, -EINVAL, "jobs[%u].%s", i, why);
	}
	if (!n)
		return fail(err, errlen, -EINVAL, "%s: empty", field);
	k = job_clash(s, (uint32_t)id, name, &same_id);
	if (k >= 0)
		return same_id ? fail(err, errlen, -EINVAL, "jobs[%u].id: %lld, also jobs[%d]'s", i,
				      (long long)id, k) :
				 fail(err, errlen, -EINVAL, "%s: '%s', also jobs[%d]'s", field,
				      name, k);
	return tls_state_file_add_job(s, (uint32_t)id, name) ?
		       fail(err, errlen, -EINVAL, "jobs[%u]: cannot be kept", i) :
		       0;
}

static int decode_object(struct json_object *o, const char *expect_instance,
			 struct tls_state_file *s, char *err, size_t errlen)
{
	static const char *const fields[] = { "format", "version", "instance", "saved_qdisc",
					      "jobs" };
	struct json_object *v;
	const char *str;
	size_t n, i;
	int64_t version;
	int ret;

	if (!json_object_is_type(o, json_type_object))
		return fail(err, errlen, -EINVAL, "not a JSON object");
	str = get_string(o, "format", 64, &n, err, errlen);
	if (!str)
		return -EINVAL;
	if (strcmp(str, TLS_STATE_FILE_FORMAT))
		return fail(err, errlen, -EINVAL, "format: '%s', not '" TLS_STATE_FILE_FORMAT "'",
			    str);
	/* the version before anything else: another version's fields are
	 * its own business */
	if (!json_object_object_get_ex(o, "version", &v))
		return fail(err, errlen, -EINVAL, "version: missing");
	if (!json_object_is_type(v, json_type_int))
		return fail(err, errlen, -EINVAL, "version: not an integer");
	version = json_object_get_int64(v);
	/* a newer one: -EPROTO, for the caller to leave it to that tlsd */
	if (version != TLS_STATE_FILE_VERSION)
		return fail(err, errlen, version > TLS_STATE_FILE_VERSION ? -EPROTO : -EINVAL,
			    "version: %lld, this tlsd reads %d", (long long)version,
			    TLS_STATE_FILE_VERSION);
	json_object_object_foreach(o, key, val)
	{
		(void)val;
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]) && strcmp(key, fields[i]); i++)
			;
		if (i == sizeof(fields) / sizeof(fields[0]))
			return fail(err, errlen, -EINVAL, "unknown field '%.32s'", key);
	}
	str = get_string(o, "instance", sizeof(s->instance) - 1, &n, err, errlen);
	if (!str)
		return -EINVAL;
	if (!n)
		return fail(err, errlen, -EINVAL, "instance: empty");
	if (expect_instance && strcmp(str, expect_instance))
		return fail(err, errlen, -EINVAL, "instance: '%s', not this instance's '%s'", str,
			    expect_instance);
	tls_state_file_init(s, str);
	ret = decode_qdisc(o, s, err, errlen);
	if (ret)
		return ret;
	if (!json_object_object_get_ex(o, "jobs", &v))
		return fail(err, errlen, -EINVAL, "jobs: missing");
	if (!json_object_is_type(v, json_type_array))
		return fail(err, errlen, -EINVAL, "jobs: not an array");
	n = json_object_array_length(v);
	if (n > TLS_MAX_JOBS - 1)
		return fail(err, errlen, -EINVAL, "jobs: %zu, more than %d", n, TLS_MAX_JOBS - 1);
	for (i = 0; i < n; i++) {
		ret = decode_job(json_object_array_get_idx(v, i), (unsigned int)i, s, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

int tls_state_file_decode(const char *buf, size_t len, const char *expect_instance,
			  struct tls_state_file *s, char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error jerr;
	size_t end;
	int ret;

	if (errlen)
		err[0] = '\0';
	tls_state_file_init(s, NULL);
	if (!len)
		return fail(err, errlen, -EINVAL, "empty");
	if (len > TLS_STATE_FILE_MAX)
		return fail(err, errlen, -EINVAL, "larger than %d bytes", TLS_STATE_FILE_MAX);
	if (memchr(buf, '\0', len))
		return fail(err, errlen, -EINVAL, "holds a NUL byte (not text)");
	/* the format nests three deep: the object, jobs, a job */
	tok = json_tokener_new_ex(4);
	if (!tok)
		return fail(err, errlen, -ENOMEM, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!o) {
		/* json_tokener_continue: the text ended inside the value */
		ret = fail(err, errlen, -EINVAL, "not JSON: %s at byte %zu",
			   jerr == json_tokener_continue ? "truncated" :
							   json_tokener_error_desc(jerr),
			   end);
		return ret;
	}
	while (end < len && strchr(" \t\r\n", buf[end]))
		end++;
	if (end < len) {
		json_object_put(o);
		return fail(err, errlen, -EINVAL, "text after the JSON object at byte %zu", end);
	}
	ret = decode_object(o, expect_instance, s, err, errlen);
	json_object_put(o);
	if (ret)
		tls_state_file_init(s, NULL);
	return ret;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int tls_state_file_write(const char *path, const struct tls_state_file *s, char *err, size_t errlen)
{
	char tmp[4096], dir[4096], *text, *slash;
	size_t len;
	int fd, ret;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return fail(err, errlen, -ENAMETOOLONG, "%s: name too long", path);
	ret = tls_state_file_encode(s, &text, &len);
	if (ret)
		return fail(err, errlen, ret, "cannot encode the state: %s", strerror(-ret));
	/* O_EXCL | O_NOFOLLOW: never through a link someone left there */
	if (unlink(tmp) && errno != ENOENT) {
		ret = fail(err, errlen, -errno, "cannot remove %s: %s", tmp, strerror(errno));
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = fail(err, errlen, -errno, "cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	ret = fchmod(fd, 0600) ? -errno : 0; /* whatever the umask */
	if (!ret)
		ret = write_all(fd, text, len);
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		ret = fail(err, errlen, ret, "cannot write %s: %s", path, strerror(-ret));
		goto out;
	}
	/* the rename itself made durable */
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash) {
		*(slash == dir ? slash + 1 : slash) = '\0';
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			fsync(fd);
			close(fd);
		}
	}
out:
	free(text);
	return ret;
}

int tls_state_file_read(const char *path, const char *expect_instance, struct tls_state_file *s,
			char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, ret;

	tls_state_file_init(s, NULL);
	/* O_NONBLOCK: a FIFO put in its place must not hang the start */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT)
			return fail(err, errlen, -ENOENT, "%s: none", path);
		return fail(err, errlen, errno == ELOOP ? -EINVAL : -errno, "%s: %s", path,
			    errno == ELOOP ? "a symbolic link" : strerror(errno));
	}
	if (fstat(fd, &st)) {
		ret = fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != geteuid()) {
		ret = fail(err, errlen, -EINVAL, "%s: not a plain file of uid %u with one name",
			   path, (unsigned int)geteuid());
		goto out;
	}
	if (st.st_size > TLS_STATE_FILE_MAX) {
		ret = fail(err, errlen, -EINVAL, "%s: %lld bytes, more than %d", path,
			   (long long)st.st_size, TLS_STATE_FILE_MAX);
		goto out;
	}
	buf = malloc(TLS_STATE_FILE_MAX + 1);
	if (!buf) {
		ret = fail(err, errlen, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	/* to the bound and one byte more: a file that grew meanwhile is too
	 * large, not cut */
	while (len <= TLS_STATE_FILE_MAX) {
		ssize_t r = read(fd, buf + len, TLS_STATE_FILE_MAX + 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (!r)
			break;
		len += (size_t)r;
	}
	ret = tls_state_file_decode(buf, len, expect_instance, s, err, errlen);
	if (ret) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		fail(err, errlen, ret, "%s: %s", path, why);
	}
out:
	free(buf);
	close(fd);
	return ret;
}
