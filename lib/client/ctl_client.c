// SPDX-License-Identifier: GPL-2.0-only
/*
 * The client side of the control socket: see ctl_client.h. Messages are
 * the ones tlsctl printed before the library existed; the tests grep them.
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_client.h"
#include "ctl_proto.h"
#include "json_get.h"

/* How long to wait for a reply to a call. */
#define REPLY_TIMEOUT_MS 10000

static int __attribute__((format(printf, 3, 4)))
fail(struct tls_client *c, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return status;
}

void tls_client_init(struct tls_client *c, const char *sock)
{
	memset(c, 0, sizeof(*c));
	c->sock = sock;
	c->fd = -1;
}

void tls_client_disconnect(struct tls_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->len = 0;
}

void tls_client_free(struct tls_client *c)
{
	tls_client_disconnect(c);
	free(c->buf);
	c->buf = NULL;
	c->cap = 0;
}

/* Who may use the socket, from its file: for the permission message. */
static void who_may(const char *path, char *buf, size_t len)
{
	struct group *g;
	struct stat st;

	if (stat(path, &st) || !(st.st_mode & 0060) || st.st_gid == 0) {
		snprintf(buf, len, "root");
		return;
	}
	g = getgrgid(st.st_gid);
	if (g)
		snprintf(buf, len, "root or group %s", g->gr_name);
	else
		snprintf(buf, len, "root or group %u", (unsigned int)st.st_gid);
}

static int connect_socket(struct tls_client *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char who[128];
	int e;

	tls_client_disconnect(c);
	if (strlen(c->sock) >= sizeof(sa.sun_path))
		return fail(c, TLS_CLIENT_USAGE, "socket path %s: longer than %zu characters",
			    c->sock, sizeof(sa.sun_path) - 1);
	strcpy(sa.sun_path, c->sock);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return fail(c, TLS_CLIENT_UNREACH, "cannot create a socket: %s", strerror(errno));
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return TLS_CLIENT_OK;
	e = errno;
	tls_client_disconnect(c);
	switch (e) {
	case ENOENT:
		return fail(c, TLS_CLIENT_UNREACH, "tlsd is not running (no socket at %s)",
			    c->sock);
	case ECONNREFUSED:
		return fail(c, TLS_CLIENT_UNREACH, "tlsd is not running (%s is a stale socket)",
			    c->sock);
	case EACCES:
	case EPERM:
		who_may(c->sock, who, sizeof(who));
		return fail(c, TLS_CLIENT_UNREACH, "permission denied on %s: tlsctl needs %s",
			    c->sock, who);
	}
	return fail(c, TLS_CLIENT_UNREACH, "cannot reach tlsd at %s: %s", c->sock, strerror(e));
}

struct json_object *tls_client_request(const char *cmd)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, TLS_CTL_F_VERSION, json_object_new_int(TLS_CTL_VERSION));
	json_object_object_add(o, TLS_CTL_F_CMD, json_object_new_string(cmd));
	return o;
}

/* Send a request (freed). A send that fails is not fatal yet: tlsd may
 * have said why before it closed (a permission error). */
static int send_request(struct tls_client *c, struct json_object *req)
{
	size_t n;
	const char *s = json_object_to_json_string_length(req, JSON_C_TO_STRING_PLAIN, &n);
	char *line = malloc(n + 1);
	size_t off = 0;

	if (!line) {
		json_object_put(req);
		return fail(c, TLS_CLIENT_UNREACH, "out of memory");
	}
	memcpy(line, s, n);
	line[n++] = '\n';
	json_object_put(req);
	while (off < n) {
		ssize_t k = send(c->fd, line + off, n - off, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		off += (size_t)k;
	}
	free(line);
	return TLS_CLIENT_OK;
}

/* Room for more of the reply in c->buf. */
static int grow(struct tls_client *c)
{
	size_t cap = c->cap ? c->cap * 2 : 65536;
	char *b;

	if (cap > TLS_CTL_MAX_REPLY)
		return fail(c, TLS_CLIENT_UNREACH, "tlsd's reply is over %d bytes",
			    TLS_CTL_MAX_REPLY);
	b = realloc(c->buf, cap);
	if (!b)
		return fail(c, TLS_CLIENT_UNREACH, "out of memory");
	c->buf = b;
	c->cap = cap;
	return TLS_CLIENT_OK;
}

/* The end of the next whole line in c->buf, reading until there is one. */
static int read_line(struct tls_client *c, int timeout_ms, char **nl)
{
	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		ssize_t n;
		int r;

		*nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		if (*nl)
			return TLS_CLIENT_OK;
		if (c->len == c->cap && (r = grow(c)))
			return r;
		r = poll(&p, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			return fail(c, TLS_CLIENT_UNREACH, "tlsd did not answer within %d s (%s)",
				    timeout_ms / 1000, c->sock);
		n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != ECONNRESET)
			return fail(c, TLS_CLIENT_UNREACH, "lost tlsd (%s): %s", c->sock,
				    strerror(errno));
		if (n <= 0)
			return fail(c, TLS_CLIENT_UNREACH,
				    "tlsd closed the connection without an answer (%s)", c->sock);
		c->len += (size_t)n;
	}
}

int tls_client_next(struct tls_client *c, int timeout_ms, struct json_object **out)
{
	struct json_tokener *tok;
	char *nl;
	int err = read_line(c, timeout_ms, &nl);

	*out = NULL;
	if (err)
		return err;
	tok = json_tokener_new();
	if (!tok)
		return fail(c, TLS_CLIENT_UNREACH, "out of memory");
	*out = json_tokener_parse_ex(tok, c->buf, (int)(nl - c->buf));
	if (!*out && json_tokener_get_error(tok) == json_tokener_continue)
		*out = json_tokener_parse_ex(tok, "", 1);
	json_tokener_free(tok);
	c->len -= (size_t)(nl + 1 - c->buf);
	memmove(c->buf, nl + 1, c->len);
	if (!*out || !json_object_is_type(*out, json_type_object)) {
		json_object_put(*out);
		*out = NULL;
		return fail(c, TLS_CLIENT_UNREACH,
			    "tlsd's reply is not a JSON object (a tlsd of another version?)");
	}
	return TLS_CLIENT_OK;
}

int tls_client_reply_error(struct tls_client *c, const char *what, struct json_object *r)
{
	struct json_object *e = tls_json_get(r, TLS_CTL_F_ERROR);
	const char *code = tls_json_str(e, TLS_CTL_F_CODE),
		   *msg = tls_json_str(e, TLS_CTL_F_MESSAGE);
	char who[128];

	if (!strcmp(code, "permission")) {
		who_may(c->sock, who, sizeof(who));
		return fail(c, TLS_CLIENT_UNREACH,
			    "permission denied on %s: tlsctl needs %s (tlsd says: %s)", c->sock,
			    who, msg);
	}
	if (!strcmp(code, "busy"))
		return fail(c, TLS_CLIENT_UNREACH, "%s", msg);
	return fail(c, TLS_CLIENT_REFUSED, "%s: %s", what, msg);
}

int tls_client_call(struct tls_client *c, const char *what, struct json_object *req,
		    struct json_object **reply)
{
	struct json_object *ok;
	int err;

	*reply = NULL;
	err = connect_socket(c);
	if (!err)
		err = send_request(c, req);
	else
		json_object_put(req);
	if (!err)
		err = tls_client_next(c, REPLY_TIMEOUT_MS, reply);
	if (err)
		return err;
	ok = tls_json_get(*reply, TLS_CTL_F_OK);
	if (!ok || !json_object_get_boolean(ok)) {
		err = tls_client_reply_error(c, what, *reply);
		json_object_put(*reply);
		*reply = NULL;
	}
	return err;
}
