// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control socket: request parsing (pure, first) and the server (after).
 * See ctl.h for the split and ctl_proto.h for the protocol.
 */
#define _GNU_SOURCE /* accept4, struct ucred */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>

#include "ctl.h"
#include "fs.h"
#include "clock.h"
#include "log.h"
#include "nbio.h"
#include "tls_common.h"
#include "units.h"

static int fail(char *msg, size_t msglen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *msg, size_t msglen, int code, const char *fmt, ...)
{
	va_list ap;

	if (msg && msglen) {
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* A client's text, quoted in a message: at most 40 bytes, cut at a UTF-8
 * character boundary (the input was checked to be UTF-8, the reply must
 * stay so). */
static const char *quote(const char *s, size_t len, char *buf, size_t buflen)
{
	size_t n = len;

	if (n + 1 > buflen || n > 40) {
		n = buflen - 4 < 40 ? buflen - 4 : 40;
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
		snprintf(buf, buflen, "%.*s...", (int)n, s);
	} else {
		memcpy(buf, s, n);
		buf[n] = '\0';
	}
	return buf;
}

static const char *type_name(enum json_type t)
{
	switch (t) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
		return "a number with a fraction";
	case json_type_int:
		return "an integer";
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	}
	return "?";
}

/* A string field's value, refused if it holds a NUL ("\u0000"). */
static int get_str(struct json_object *v, const char *field, const char **out, char *msg,
		   size_t msglen)
{
	if (!json_object_is_type(v, json_type_string))
		return fail(msg, msglen, TLS_CTL_E_REQUEST, "%s must be a string, not %s", field,
			    type_name(json_object_get_type(v)));
	*out = json_object_get_string(v);
	if ((size_t)json_object_get_string_len(v) != strlen(*out))
		return fail(msg, msglen, TLS_CTL_E_VALUE, "%s: contains a NUL character", field);
	return 0;
}

static int get_bool(struct json_object *v, const char *field, bool *out, char *msg, size_t msglen)
{
	if (!json_object_is_type(v, json_type_boolean))
		return fail(msg, msglen, TLS_CTL_E_REQUEST, "%s must be true or false, not %s",
			    field, type_name(json_object_get_type(v)));
	*out = json_object_get_boolean(v);
	return 0;
}

/* A string that is one of two words: *second whether it is the second. */
static int get_either(struct json_object *v, const char *field, const char *first,
		      const char *second, bool *is_second, char *msg, size_t msglen)
{
	const char *s;
	char q[48];
	int err = get_str(v, field, &s, msg, msglen);

	if (err)
		return err;
	if (strcmp(s, first) && strcmp(s, second))
		return fail(msg, msglen, TLS_CTL_E_VALUE, "%s: '%s' is not one of %s, %s", field,
			    quote(s, strlen(s), q, sizeof(q)), first, second);
	*is_second = !strcmp(s, second);
	return 0;
}

static int parse_policy_args(const char *key, struct json_object *v, struct tls_ctl_req *r,
			     char *msg, size_t msglen)
{
	char q[48];
	const char *s;
	int err;

	if (!strcmp(key, TLS_CTL_F_RESET))
		return get_bool(v, key, &r->reset, msg, msglen);
	err = get_str(v, key, &s, msg, msglen);
	if (err)
		return err;
	if (!strcmp(key, TLS_CTL_F_POLICY)) {
		if (tls_policy_parse(s, &r->policy))
			return fail(msg, msglen, TLS_CTL_E_VALUE,
				    "policy: '%s' is not one of " TLS_POLICY_NAMES,
				    quote(s, strlen(s), q, sizeof(q)));
		r->has_policy = true;
		return 0;
	}
	/* interval */
	if (tls_parse_duration(s, &r->interval_ns))
		return fail(msg, msglen, TLS_CTL_E_VALUE,
			    "interval: '%s' is not a duration (examples: 500ms, 20s)",
			    quote(s, strlen(s), q, sizeof(q)));
	if (r->interval_ns < TLS_INTERVAL_MIN_NS)
		return fail(msg, msglen, TLS_CTL_E_VALUE,
			    "interval: '%s' is shorter than the minimum, 10ms", s);
	r->has_interval = true;
	return 0;
}

static int parse_stats_args(const char *key, struct json_object *v, struct tls_ctl_req *r,
			    char *msg, size_t msglen)
{
	const char *s;
	int64_t id;
	char q[48];
	int err;

	if (!strcmp(key, TLS_CTL_F_FOLLOW))
		return get_bool(v, key, &r->follow, msg, msglen);
	if (!strcmp(key, TLS_CTL_F_SOURCE))
		return get_either(v, key, "solved", "direct", &r->source_direct, msg, msglen);
	if (!strcmp(key, TLS_CTL_F_DIRECTION))
		return get_either(v, key, "pull", "push", &r->push, msg, msglen);
	/* job: a name or an id */
	r->has_job = true;
	if (json_object_is_type(v, json_type_int)) {
		errno = 0;
		id = json_object_get_int64(v);
		if (errno || id < 1 || id >= TLS_MAX_JOBS)
			return fail(msg, msglen, TLS_CTL_E_VALUE, "job: %s is not a job id (1..%d)",
				    json_object_to_json_string(v), TLS_MAX_JOBS - 1);
		r->job_id = (uint32_t)id;
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return fail(msg, msglen, TLS_CTL_E_REQUEST,
			    "job must be a name (a string) or an id (an integer), not %s",
			    type_name(json_object_get_type(v)));
	err = get_str(v, key, &s, msg, msglen);
	if (err)
		return err;
	if (!*s || strlen(s) >= sizeof(r->job_name))
		return fail(msg, msglen, TLS_CTL_E_VALUE, "job: '%s' is not a job name",
			    quote(s, strlen(s), q, sizeof(q)));
	strcpy(r->job_name, s);
	return 0;
}

/* The arguments each command takes; everything else is refused. */
static const char *const cmd_args[TLS_CTL_NCMDS][4] = {
	[TLS_CTL_STATUS] = { NULL },
	[TLS_CTL_JOBS] = { NULL },
	[TLS_CTL_POLICY] = { TLS_CTL_F_POLICY, TLS_CTL_F_INTERVAL, TLS_CTL_F_RESET, NULL },
	[TLS_CTL_STATS] = { TLS_CTL_F_JOB, TLS_CTL_F_FOLLOW, TLS_CTL_F_DIRECTION, NULL },
	[TLS_CTL_CALIBRATE] = { TLS_CTL_F_JOB, TLS_CTL_F_SOURCE, TLS_CTL_F_DIRECTION, NULL },
	[TLS_CTL_METRICS] = { TLS_CTL_F_FORMAT, NULL },
};

static int parse_metrics_args(struct json_object *v, struct tls_ctl_req *r, char *msg,
			      size_t msglen)
{
	return get_either(v, TLS_CTL_F_FORMAT, "prometheus", "openmetrics", &r->openmetrics, msg,
			  msglen);
}

static int parse_args(struct json_object *o, struct tls_ctl_req *r, char *msg, size_t msglen)
{
	char q[48];
	int err = 0;

	json_object_object_foreach(o, key, v)
	{
		const char *const *a;

		if (!strcmp(key, TLS_CTL_F_VERSION) || !strcmp(key, TLS_CTL_F_CMD) ||
		    !strcmp(key, TLS_CTL_F_ID))
			continue;
		for (a = cmd_args[r->cmd]; *a && strcmp(*a, key); a++)
			;
		if (!*a)
			return fail(msg, msglen, TLS_CTL_E_REQUEST,
				    "unknown field '%s' for command '%s'",
				    quote(key, strlen(key), q, sizeof(q)),
				    tls_ctl_cmd_name(r->cmd));
		if (r->cmd == TLS_CTL_POLICY)
			err = parse_policy_args(key, v, r, msg, msglen);
		else if (r->cmd == TLS_CTL_METRICS)
			err = parse_metrics_args(v, r, msg, msglen);
		else
			err = parse_stats_args(key, v, r, msg, msglen);
		if (err)
			return err;
	}
	if (r->reset && (r->has_policy || r->has_interval))
		return fail(msg, msglen, TLS_CTL_E_REQUEST,
			    "reset cannot be combined with policy or interval");
	return 0;
}

static int parse_object(struct json_object *o, struct tls_ctl_req *r, char *msg, size_t msglen)
{
	struct json_object *v;
	const char *s;
	char q[48];
	int64_t ver;
	int c;

	/* The id first: from here on, even an error reply echoes it. */
	if (json_object_object_get_ex(o, TLS_CTL_F_ID, &v)) {
		if (!json_object_is_type(v, json_type_int) &&
		    !json_object_is_type(v, json_type_string))
			return fail(msg, msglen, TLS_CTL_E_REQUEST,
				    "id must be an integer or a string, not %s",
				    type_name(json_object_get_type(v)));
		r->id = json_object_get(v);
	}
	if (!json_object_object_get_ex(o, TLS_CTL_F_VERSION, &v))
		return fail(msg, msglen, TLS_CTL_E_REQUEST,
			    "missing field 'version' (this tlsd speaks version %d)",
			    TLS_CTL_VERSION);
	if (!json_object_is_type(v, json_type_int))
		return fail(msg, msglen, TLS_CTL_E_REQUEST, "version must be an integer, not %s",
			    type_name(json_object_get_type(v)));
	errno = 0;
	ver = json_object_get_int64(v);
	if (errno || ver != TLS_CTL_VERSION)
		return fail(msg, msglen, TLS_CTL_E_VERSION,
			    "protocol version %s is not supported: this tlsd speaks version %d",
			    json_object_to_json_string(v), TLS_CTL_VERSION);
	if (!json_object_object_get_ex(o, TLS_CTL_F_CMD, &v))
		return fail(msg, msglen, TLS_CTL_E_REQUEST, "missing field 'cmd'");
	if (!json_object_is_type(v, json_type_string))
		return fail(msg, msglen, TLS_CTL_E_REQUEST, "cmd must be a string, not %s",
			    type_name(json_object_get_type(v)));
	s = json_object_get_string(v);
	for (c = 0; c < TLS_CTL_NCMDS && strcmp(s, tls_ctl_cmd_name(c)); c++)
		;
	if (c == TLS_CTL_NCMDS ||
	    (size_t)json_object_get_string_len(v) != strlen(s)) /* "status\u0000x" */
		return fail(msg, msglen, TLS_CTL_E_COMMAND,
			    "unknown command '%s': expected " TLS_CTL_COMMANDS,
			    quote(s, strlen(s), q, sizeof(q)));
	r->cmd = c;
	return parse_args(o, r, msg, msglen);
}

/* json-c takes 'single-quoted' member names even in strict mode; JSON
 * does not. Outside "strings", a quote is an error: its offset, or -1. */
static long single_quote(const char *s, size_t len)
{
	bool in_str = false;
	size_t i;

	for (i = 0; i < len; i++) {
		if (in_str && s[i] == '\\')
			i++;
		else if (s[i] == '"')
			in_str = !in_str;
		else if (!in_str && s[i] == '\'')
			return (long)i;
	}
	return -1;
}

int tls_ctl_parse_request(const char *line, size_t len, struct tls_ctl_req *req, char *msg,
			  size_t msglen)
{
	struct json_tokener *tok;
	struct json_object *o;
	const char *nul;
	size_t i;
	int err;

	memset(req, 0, sizeof(*req));
	if (len + 1 > TLS_CTL_MAX_MSG)
		return fail(msg, msglen, TLS_CTL_E_TOO_LONG,
			    "request of %zu bytes: the limit is %d bytes with its newline", len + 1,
			    TLS_CTL_MAX_MSG);
	for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'); i++)
		;
	if (i == len)
		return fail(msg, msglen, TLS_CTL_E_PARSE, "empty request: expected a JSON object");
	nul = memchr(line, '\0', len);
	if (nul)
		return fail(msg, msglen, TLS_CTL_E_PARSE, "not JSON: a NUL byte at offset %zu",
			    (size_t)(nul - line));
	if (single_quote(line, len) >= 0)
		return fail(msg, msglen, TLS_CTL_E_PARSE,
			    "not JSON: a single quote at offset %ld (JSON strings take \")",
			    single_quote(line, len));
	tok = json_tokener_new_ex(TLS_CTL_MAX_DEPTH);
	if (!tok)
		return fail(msg, msglen, TLS_CTL_E_INTERNAL, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, line, (int)len);
	/* A number or literal at the very end waits for more: say it ended. */
	if (!o && json_tokener_get_error(tok) == json_tokener_continue)
		o = json_tokener_parse_ex(tok, "", 1);
	if (!o) {
		enum json_tokener_error e = json_tokener_get_error(tok);

		err = fail(msg, msglen, TLS_CTL_E_PARSE,
			   e == json_tokener_success ? "not JSON: null is not a request" :
						       "not JSON: %s at offset %zu",
			   json_tokener_error_desc(e), json_tokener_get_parse_end(tok));
		json_tokener_free(tok);
		return err;
	}
	json_tokener_free(tok);
	if (!json_object_is_type(o, json_type_object))
		err = fail(
			msg, msglen, TLS_CTL_E_REQUEST,
			"a request must be a JSON object {\"version\": %d, \"cmd\": ...}, not %s",
			TLS_CTL_VERSION, type_name(json_object_get_type(o)));
	else
		err = parse_object(o, req, msg, msglen);
	json_object_put(o);
	return err;
}

void tls_ctl_req_release(struct tls_ctl_req *req)
{
	json_object_put(req->id);
	req->id = NULL;
}

long tls_ctl_next_line(const char *buf, size_t len, size_t max, size_t *line_len)
{
	const char *nl = len ? memchr(buf, '\n', len < max ? len : max) : NULL;

	if (nl) {
		*line_len = (size_t)(nl - buf);
		return (long)(*line_len + 1);
	}
	return len >= max ? -E2BIG : 0;
}

struct json_object *tls_ctl_reply_new(const struct tls_ctl_req *req)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, TLS_CTL_F_VERSION, json_object_new_int(TLS_CTL_VERSION));
	json_object_object_add(o, TLS_CTL_F_OK, json_object_new_boolean(1));
	if (req) {
		json_object_object_add(o, TLS_CTL_F_CMD,
				       json_object_new_string(tls_ctl_cmd_name(req->cmd)));
		if (req->id)
			json_object_object_add(o, TLS_CTL_F_ID, json_object_get(req->id));
	}
	return o;
}

/* One line: the object's plain text and a newline, malloc'ed. */
static char *to_line(struct json_object *o, size_t *len)
{
	size_t n;
	const char *s = json_object_to_json_string_length(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	char *line = s ? malloc(n + 2) : NULL;

	if (!line)
		return NULL;
	memcpy(line, s, n);
	line[n] = '\n';
	line[n + 1] = '\0';
	if (len)
		*len = n + 1;
	return line;
}

char *tls_ctl_error_line(const struct tls_ctl_req *req, int code, const char *msg)
{
	struct json_object *o = json_object_new_object(), *e = json_object_new_object();
	char *line = NULL;

	if (o && e) {
		json_object_object_add(o, TLS_CTL_F_VERSION, json_object_new_int(TLS_CTL_VERSION));
		json_object_object_add(o, TLS_CTL_F_OK, json_object_new_boolean(0));
		if (req && req->id)
			json_object_object_add(o, TLS_CTL_F_ID, json_object_get(req->id));
		json_object_object_add(e, TLS_CTL_F_CODE,
				       json_object_new_string(tls_ctl_err_name(code)));
		json_object_object_add(e, TLS_CTL_F_MESSAGE, json_object_new_string(msg));
		json_object_object_add(o, TLS_CTL_F_ERROR, e);
		e = NULL;
		line = to_line(o, NULL);
	}
	json_object_put(e);
	json_object_put(o);
	return line;
}

/* ---------------------------------------------------------------------- */
/* The server                                                              */

/* A client that does not read its replies is dropped past this much. */
#define OUT_MAX (8u * 1024 * 1024)
/* Per wakeup: a few accepts and one read per ready client, so that one
 * busy client cannot hold the daemon's loop. */
#define ACCEPTS_PER_DISPATCH 16
#define EVENTS_PER_DISPATCH  32
#define LINES_PER_DISPATCH   16
/* Requests are answered while less than this waits for the client. */
#define OUT_SOFT (64u * 1024)

struct client {
	int fd;
	struct tls_ctl_peer peer;
	char *in; /* TLS_CTL_MAX_MSG bytes */
	size_t in_len;
	char *out;
	size_t out_len, out_off, out_cap;
	bool eof;		   /* the client sent all it will */
	bool closing;		   /* no more requests: close once the output is out */
	bool dead;		   /* gone: close now */
	bool following;		   /* answered again at each tls_ctl_publish() */
	uint64_t active_ns;	   /* it last sent or took bytes (CLOCK_MONOTONIC) */
	struct tls_ctl_req follow; /* the request it follows */
	uint32_t events;	   /* what epoll watches now */
	struct client *prev, *next;
};

struct tls_ctl {
	int lfd, epfd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char group[64];
	bool has_group;
	gid_t gid;
	tls_ctl_handler handler;
	void *ctx;
	struct client *clients;
	unsigned int nclients;
	int tfd;	  /* the idle sweep's timer */
	uint64_t idle_ns; /* a client silent so long is closed */
	dev_t dev; /* the socket file's identity: removed at close only if */
	ino_t ino; /* it is still ours */
};

int tls_ctl_fd(const struct tls_ctl *c)
{
	return c->epfd;
}

const char *tls_ctl_path(const struct tls_ctl *c)
{
	return c->path;
}

unsigned int tls_ctl_clients(const struct tls_ctl *c)
{
	return c->nclients;
}

static void drop(struct tls_ctl *c, struct client *cl)
{
	epoll_ctl(c->epfd, EPOLL_CTL_DEL, cl->fd, NULL);
	close(cl->fd);
	if (cl->prev)
		cl->prev->next = cl->next;
	else
		c->clients = cl->next;
	if (cl->next)
		cl->next->prev = cl->prev;
	c->nclients--;
	tls_ctl_req_release(&cl->follow);
	free(cl->in);
	free(cl->out);
	free(cl);
}

static int queue(struct client *cl, const char *s, size_t n)
{
	if (cl->out_off && cl->out_off == cl->out_len)
		cl->out_off = cl->out_len = 0;
	if (cl->out_len + n > OUT_MAX)
		return -ENOBUFS;
	if (cl->out_len + n > cl->out_cap) {
		size_t cap = cl->out_cap ? cl->out_cap : 4096;
		char *p;

		while (cap < cl->out_len + n)
			cap *= 2;
		p = realloc(cl->out, cap);
		if (!p)
			return -ENOMEM;
		cl->out = p;
		cl->out_cap = cap;
	}
	memcpy(cl->out + cl->out_len, s, n);
	cl->out_len += n;
	return 0;
}

static int queue_error(struct client *cl, const struct tls_ctl_req *req, int code, const char *msg)
{
	char *line = tls_ctl_error_line(req, code, msg);
	int err = line ? queue(cl, line, strlen(line)) : -ENOMEM;

	free(line);
	return err;
}

/* Send what is queued; -1 if the client is gone. */
static int flush_out(struct client *cl)
{
	size_t before = cl->out_off;
	int ret = tls_send_some(cl->fd, cl->out, cl->out_len, &cl->out_off);

	if (cl->out_off != before)
		cl->active_ns = tls_now_ns();
	if (ret <= 0)
		return ret;
	cl->out_off = cl->out_len = 0;
	/* A big reply's buffer is not kept for the client's lifetime. */
	if (cl->out_cap > 65536) {
		free(cl->out);
		cl->out = NULL;
		cl->out_cap = 0;
	}
	return 0;
}

/* Answer req (parsed fine): its reply, or the handler's error, queued.
 * Returns the handler's code. */
static int answer(struct tls_ctl *c, struct client *cl, const struct tls_ctl_req *req)
{
	struct json_object *reply = tls_ctl_reply_new(req);
	char msg[512] = "";
	char *out = NULL;
	size_t n;
	int err;

	err = reply ? c->handler(c->ctx, req, &cl->peer, reply, msg, sizeof(msg)) :
		      fail(msg, sizeof(msg), TLS_CTL_E_INTERNAL, "out of memory");
	if (err) {
		pr_debug("control: uid %u pid %d: %s: %s\n", cl->peer.uid, cl->peer.pid,
			 tls_ctl_err_name(err), msg);
		if (queue_error(cl, req, err, msg[0] ? msg : tls_ctl_err_name(err)))
			cl->closing = true;
	} else {
		out = to_line(reply, &n);
		if (!out || queue(cl, out, n)) {
			/* too big to queue: say so in a line that fits */
			queue_error(cl, req, TLS_CTL_E_INTERNAL, "reply too large");
			cl->closing = true;
		}
	}
	free(out);
	json_object_put(reply);
	return err;
}

static void handle_line(struct tls_ctl *c, struct client *cl, const char *line, size_t len)
{
	struct tls_ctl_req req;
	char msg[512] = "";
	int err;

	err = tls_ctl_parse_request(line, len, &req, msg, sizeof(msg));
	if (err) {
		pr_debug("control: uid %u pid %d: %s: %s\n", cl->peer.uid, cl->peer.pid,
			 tls_ctl_err_name(err), msg);
		if (queue_error(cl, &req, err, msg))
			cl->closing = true;
	} else if (!answer(c, cl, &req) && req.cmd == TLS_CTL_STATS && req.follow) {
		tls_ctl_req_release(&cl->follow);
		cl->follow = req; /* takes its id */
		cl->following = true;
		return;
	}
	tls_ctl_req_release(&req);
}

/* Is a request waiting in the input buffer (or a too-long line, or the
 * unterminated last one)? */
static bool input_pending(const struct client *cl)
{
	size_t len;

	return !cl->closing && (tls_ctl_next_line(cl->in, cl->in_len, TLS_CTL_MAX_MSG, &len) != 0 ||
				(cl->eof && cl->in_len));
}

/* Answer the requests in the input buffer: a few per wakeup, and only
 * while the client takes its replies (its backpressure). */
static void handle_input(struct tls_ctl *c, struct client *cl)
{
	unsigned int done = 0;
	size_t off = 0, len;
	char msg[128];
	long n;

	if (!cl->in)
		return; /* nothing read yet */
	while (!cl->closing && done < LINES_PER_DISPATCH && cl->out_len - cl->out_off < OUT_SOFT) {
		n = tls_ctl_next_line(cl->in + off, cl->in_len - off, TLS_CTL_MAX_MSG, &len);
		if (n < 0) {
			/* The line's end is unknown: the framing is lost. */
			fail(msg, sizeof(msg), 0,
			     "request longer than %d bytes: closing the connection",
			     TLS_CTL_MAX_MSG);
			queue_error(cl, NULL, TLS_CTL_E_TOO_LONG, msg);
			cl->closing = true;
			break;
		}
		if (n == 0) {
			/* The last request may lack its newline. */
			if (cl->eof) {
				if (cl->in_len > off)
					handle_line(c, cl, cl->in + off, cl->in_len - off);
				off = cl->in_len;
				cl->closing = true;
			}
			break;
		}
		handle_line(c, cl, cl->in + off, len);
		off += (size_t)n;
		done++;
		if (flush_out(cl))
			cl->dead = true;
	}
	memmove(cl->in, cl->in + off, cl->in_len - off);
	cl->in_len -= off;
}

static void read_input(struct client *cl)
{
	ssize_t n;

	if (!cl->in) {
		cl->in = malloc(TLS_CTL_MAX_MSG);
		if (!cl->in) {
			cl->dead = true;
			return;
		}
	}
	do
		n = recv(cl->fd, cl->in + cl->in_len, TLS_CTL_MAX_MSG - cl->in_len, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n < 0)
		cl->dead = true; /* reset: nobody to answer */
	else if (n == 0)
		cl->eof = true;
	else
		cl->in_len += (size_t)n;
	cl->active_ns = tls_now_ns();
}

/*
 * What to wait for next: output while some waits, or while requests wait
 * in the buffer (the socket is writable at once, so the loop comes back
 * for them after the other clients had their turn); input otherwise.
 * Returns false if the client must go.
 */
static bool update(struct tls_ctl *c, struct client *cl)
{
	struct epoll_event ev = { .data.ptr = cl };

	if (cl->dead || flush_out(cl))
		return false;
	if (cl->closing && cl->out_off == cl->out_len)
		return false;
	ev.events = cl->out_off < cl->out_len || input_pending(cl) ? EPOLLOUT : EPOLLIN;
	if (ev.events != cl->events) {
		if (epoll_ctl(c->epfd, EPOLL_CTL_MOD, cl->fd, &ev))
			return false;
		cl->events = ev.events;
	}
	return true;
}

static void service(struct tls_ctl *c, struct client *cl, uint32_t events)
{
	if (flush_out(cl)) {
		cl->dead = true;
		return;
	}
	if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !cl->eof && !cl->closing &&
	    cl->in_len < TLS_CTL_MAX_MSG)
		read_input(cl);
	if (!cl->dead && cl->out_off == cl->out_len)
		handle_input(c, cl);
}

/* The peer's groups: its egid at connect() and its supplementary groups. */
static bool in_group(int fd, gid_t egid, gid_t want)
{
	gid_t stack[64], *g = stack;
	socklen_t len = sizeof(stack);
	bool found = egid == want;
	unsigned int i;

	if (found)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len)) {
		if (errno != ERANGE)
			return false;
		g = malloc(len); /* len is now the size needed */
		if (!g || getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len)) {
			free(g);
			return false;
		}
	}
	for (i = 0; i < len / sizeof(gid_t) && !found; i++)
		found = g[i] == want;
	if (g != stack)
		free(g);
	return found;
}

/* Who may talk to tlsd: root, and the members of control_group. */
static int check_peer(struct tls_ctl *c, struct client *cl, char *msg, size_t msglen)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(cl->fd, SOL_SOCKET, SO_PEERCRED, &cr, &len))
		return fail(msg, msglen, TLS_CTL_E_PERMISSION,
			    "permission denied: cannot tell who you are (SO_PEERCRED: %s)",
			    strerror(errno));
	cl->peer.uid = cr.uid;
	cl->peer.gid = cr.gid;
	cl->peer.pid = cr.pid;
	if (cr.uid == 0)
		return 0;
	if (c->has_group && in_group(cl->fd, cr.gid, c->gid))
		return 0;
	if (c->has_group)
		return fail(msg, msglen, TLS_CTL_E_PERMISSION,
			    "permission denied: uid %u is neither root nor in group '%s'", cr.uid,
			    c->group);
	return fail(msg, msglen, TLS_CTL_E_PERMISSION,
		    "permission denied: uid %u is not root (tlsd has no control_group)", cr.uid);
}

static void accept_one(struct tls_ctl *c)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct client *cl;
	char msg[256];
	int fd, err;

	fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	cl = calloc(1, sizeof(*cl));
	if (!cl) {
		close(fd);
		return;
	}
	cl->fd = fd;
	cl->active_ns = tls_now_ns();
	cl->next = c->clients;
	if (c->clients)
		c->clients->prev = cl;
	c->clients = cl;
	c->nclients++;
	ev.data.ptr = cl;
	cl->events = EPOLLIN;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		cl->events = 0;
		epoll_ctl(c->epfd, EPOLL_CTL_DEL, fd, NULL);
		drop(c, cl);
		return;
	}
	err = check_peer(c, cl, msg, sizeof(msg));
	/* Members of control_group holding connections open must not lock
	 * root out: root has room of its own, up to twice the limit. */
	if (!err &&
	    c->nclients > (cl->peer.uid == 0 ? 2 * TLS_CTL_MAX_CLIENTS : TLS_CTL_MAX_CLIENTS))
		err = fail(msg, sizeof(msg), TLS_CTL_E_BUSY,
			   "busy: %d clients are connected already; try again later",
			   TLS_CTL_MAX_CLIENTS);
	if (err) {
		if (err == TLS_CTL_E_PERMISSION)
			pr_info("control: refused uid %u (pid %d): %s\n", cl->peer.uid,
				cl->peer.pid, msg);
		queue_error(cl, NULL, err, msg);
		cl->closing = true;
	}
	if (!update(c, cl))
		drop(c, cl);
}

/*
 * Clients silent for idle_ns go: each holds a slot of TLS_CTL_MAX_CLIENTS
 * (and 64 KiB), so connections left open must not keep others out. A
 * client following statistics is busy by definition: one that stops
 * reading is dropped by OUT_MAX instead.
 */
static void sweep_idle(struct tls_ctl *c)
{
	uint64_t now = tls_now_ns(), x;
	struct client *cl, *next;

	if (read(c->tfd, &x, sizeof(x)) < 0)
		return;
	for (cl = c->clients; cl; cl = next) {
		next = cl->next;
		if (cl->following || now - cl->active_ns < c->idle_ns)
			continue;
		pr_info("control: closing a connection of uid %u (pid %d): silent for %llu s\n",
			cl->peer.uid, cl->peer.pid, (unsigned long long)(c->idle_ns / 1000000000ULL));
		drop(c, cl);
	}
}

void tls_ctl_set_idle(struct tls_ctl *c, uint64_t idle_ns)
{
	/* swept every quarter of the limit: closed within 1.25 times it */
	uint64_t every = idle_ns / 4;
	struct itimerspec its = {
		.it_interval = { .tv_sec = every / 1000000000ULL,
				 .tv_nsec = every % 1000000000ULL },
	};

	c->idle_ns = idle_ns;
	its.it_value = its.it_interval;
	timerfd_settime(c->tfd, 0, &its, NULL);
}

void tls_ctl_dispatch(struct tls_ctl *c)
{
	struct epoll_event ev[EVENTS_PER_DISPATCH];
	int n, i, k;

	n = epoll_wait(c->epfd, ev, EVENTS_PER_DISPATCH, 0);
	for (i = 0; i < n; i++) {
		struct client *cl = ev[i].data.ptr;

		if (!cl) { /* the listener */
			for (k = 0; k < ACCEPTS_PER_DISPATCH; k++)
				accept_one(c);
			continue;
		}
		if (ev[i].data.ptr == &c->tfd) {
			sweep_idle(c);
			continue;
		}
		service(c, cl, ev[i].events);
		if (!update(c, cl))
			drop(c, cl);
	}
}

void tls_ctl_publish(struct tls_ctl *c)
{
	struct client *cl, *next;

	for (cl = c->clients; cl; cl = next) {
		next = cl->next;
		if (!cl->following || cl->closing || cl->dead)
			continue;
		/* still reading the last ones: this sample is skipped */
		if (cl->out_len - cl->out_off >= OUT_SOFT)
			continue;
		if (answer(c, cl, &cl->follow))
			cl->following = false; /* the error said why */
		if (!update(c, cl))
			drop(c, cl);
	}
}

/* ---------------------------------------------------------------------- */
/* The socket file                                                         */

/* Is someone listening on path? Then it is not ours to remove. */
static int probe(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int ret;

	if (fd < 0)
		return -errno;
	ret = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) ? -errno : 0;
	close(fd);
	/* a full backlog (EAGAIN) is a live listener too */
	return ret == 0 || ret == -EAGAIN ? -EADDRINUSE : ret;
}

static int remove_stale(const struct sockaddr_un *sa)
{
	struct stat st;
	int err;

	if (lstat(sa->sun_path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		pr_warn("control socket %s: the path exists and is not a socket\n", sa->sun_path);
		return -EEXIST;
	}
	err = probe(sa);
	if (err == -EADDRINUSE) {
		pr_warn("control socket %s is in use: another tlsd? (set control_socket to "
			"another path for a second tlsd)\n",
			sa->sun_path);
		return err;
	}
	if (unlink(sa->sun_path) && errno != ENOENT)
		return -errno;
	pr_info("removed the stale control socket %s\n", sa->sun_path);
	return 0;
}

/* The socket's directory, made if missing (0755: the mode of the socket
 * itself decides who may connect). With a group, tlsd's own directory
 * must let the group reach the socket. */
static int make_dir(const char *path, bool group)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)], own[sizeof(dir)];
	char failed[PATH_MAX];
	struct stat st;
	char *p;

	snprintf(dir, sizeof(dir), "%s", path);
	p = strrchr(dir, '/');
	if (!p || p == dir)
		return 0;
	*p = '\0';
	/* said with the directory that failed: a parent, or dir itself */
	if (tls_mkdir_p(dir, 0755, failed)) {
		int err = -errno;

		pr_warn("control socket %s: cannot create %s: %s\n", path, failed,
			strerror(-err));
		return err;
	}
	if (!group || stat(dir, &st))
		return 0;
	snprintf(own, sizeof(own), "%s", TLS_CTL_SOCK_DEFAULT);
	*strrchr(own, '/') = '\0';
	if ((st.st_mode & 0011) != 0011 && !strcmp(dir, own) && st.st_uid == 0) {
		/* search only: the lock files in it stay unlisted and 0600 */
		if (chmod(dir, (st.st_mode & 07777) | 0011))
			goto fail;
		pr_info("control: made %s searchable for the control group\n", dir);
	} else if ((st.st_mode & 0011) != 0011) {
		pr_warn("control socket %s: its directory %s may not let the control group "
			"reach it (mode %04o)\n",
			path, dir, st.st_mode & 07777);
	}
	return 0;
fail:
	pr_warn("control socket %s: cannot create or change %s: %s\n", path, dir, strerror(errno));
	return -errno;
}

static int apply_mode(struct tls_ctl *c)
{
	if (chown(c->path, 0, c->has_group ? c->gid : 0) ||
	    chmod(c->path, c->has_group ? 0660 : 0600)) {
		pr_warn("control socket %s: cannot set its owner and mode: %s\n", c->path,
			strerror(errno));
		return -errno;
	}
	return 0;
}

int tls_ctl_set_group(struct tls_ctl *c, const char *group, gid_t gid)
{
	c->has_group = group && *group;
	snprintf(c->group, sizeof(c->group), "%s", c->has_group ? group : "");
	c->gid = gid;
	if (c->has_group)
		make_dir(c->path, true);
	return apply_mode(c);
}

int tls_ctl_open(const struct tls_ctl_opts *o, struct tls_ctl **out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	struct tls_ctl *c;
	mode_t old;
	int err;

	if (!o->path || o->path[0] != '/' || strlen(o->path) >= sizeof(sa.sun_path)) {
		pr_warn("control socket '%s': not an absolute path of at most %zu characters\n",
			o->path ? o->path : "", sizeof(sa.sun_path) - 1);
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->lfd = c->epfd = c->tfd = -1;
	strcpy(c->path, o->path);
	strcpy(sa.sun_path, o->path);
	c->handler = o->handler;
	c->ctx = o->ctx;
	c->has_group = o->group && *o->group;
	snprintf(c->group, sizeof(c->group), "%s", c->has_group ? o->group : "");
	c->gid = o->gid;
	err = make_dir(c->path, c->has_group);
	if (!err)
		err = remove_stale(&sa);
	if (err)
		goto fail_nofile;
	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->lfd < 0 || c->epfd < 0) {
		err = -errno;
		goto fail_nofile;
	}
	/* Born 0600: never, even for a moment, open to more than root. */
	old = umask(0177);
	err = bind(c->lfd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old);
	if (err) {
		pr_warn("control socket %s: cannot bind: %s\n", c->path, strerror(-err));
		goto fail_nofile;
	}
	err = apply_mode(c);
	if (!err) {
		struct stat st;

		if (lstat(c->path, &st) == 0) {
			c->dev = st.st_dev;
			c->ino = st.st_ino;
		}
	}
	if (!err && listen(c->lfd, 64))
		err = -errno;
	if (!err && epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->lfd, &ev))
		err = -errno;
	if (!err) {
		struct epoll_event tev = { .events = EPOLLIN, .data.ptr = &c->tfd };

		c->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (c->tfd < 0 || epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->tfd, &tev))
			err = -errno;
		else
			tls_ctl_set_idle(c, o->idle_ns ? o->idle_ns : TLS_CTL_IDLE_DEFAULT_NS);
	}
	if (err) {
		pr_warn("control socket %s: %s\n", c->path, strerror(-err));
		unlink(c->path);
		goto fail_nofile;
	}
	/* Replies carry thousands of rates per sample with --follow: json-c's
	 * default "%.17g" made printing them most of tlsd's CPU time. Nine
	 * significant digits keep nanoseconds of a day-long uptime in seconds
	 * and every rate's integer part. */
	json_c_set_serialization_double_format("%.9g", JSON_C_OPTION_GLOBAL);
	pr_info("control socket %s (%s)\n", c->path,
		c->has_group ? "root and the control group" : "root only");
	*out = c;
	return 0;
fail_nofile:
	if (c->tfd >= 0)
		close(c->tfd);
	if (c->lfd >= 0)
		close(c->lfd);
	if (c->epfd >= 0)
		close(c->epfd);
	free(c);
	return err;
}

void tls_ctl_close(struct tls_ctl *c)
{
	struct stat st;

	if (!c)
		return;
	while (c->clients)
		drop(c, c->clients);
	close(c->lfd);
	close(c->tfd);
	close(c->epfd);
	if (lstat(c->path, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino)
		unlink(c->path);
	free(c);
}
