/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tlsd's control socket (the protocol is in ctl_proto.h).
 *
 * Two halves. The pure half frames lines and turns a request line into a
 * checked struct tls_ctl_req, or into an error naming what was wrong; it
 * does no I/O and is unit-tested. The server half owns a listening Unix
 * socket and its clients behind one epoll fd that the daemon's loop watches:
 * it never blocks (non-blocking sockets, per-client buffers), checks each
 * peer with SO_PEERCRED, and hands every good request to the daemon's
 * handler.
 */
#ifndef TLS_CTL_H
#define TLS_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "ctl_proto.h"
#include "policy.h"

struct json_object;

/* A request, checked: every field present is of the right type and value. */
struct tls_ctl_req {
	enum tls_ctl_cmd cmd;
	struct json_object *id; /* the client's id, echoed; NULL if none */
	/* policy */
	bool has_policy, has_interval, reset;
	enum tls_policy policy;
	uint64_t interval_ns;
	/* stats and calibrate */
	bool has_job, follow;
	bool source_direct;		 /* calibrate: fit P measured directly, not solved */
	bool push;			 /* stats, calibrate: the ingress engine's */
	uint32_t job_id;		 /* has_job and no job_name: by id */
	char job_name[TLS_JOB_NAME_MAX]; /* "" if by id */
	/* metrics */
	bool openmetrics; /* format "openmetrics" */
};

/*
 * Parse one request line (without its newline). Returns TLS_CTL_OK, or an
 * enum tls_ctl_err with a message naming the problem in msg. req->id is set
 * as soon as it is known, so that even an error reply can echo it; release
 * it with tls_ctl_req_release() whatever the result.
 */
int tls_ctl_parse_request(const char *line, size_t len, struct tls_ctl_req *req, char *msg,
			  size_t msglen);
void tls_ctl_req_release(struct tls_ctl_req *req);

/*
 * Framing: the first line in buf[0..len). Returns the bytes it takes with
 * its newline (> 0) and its length without in *line_len; 0 if no newline
 * yet and still room for one; -E2BIG if a line (newline included) is over
 * max bytes.
 */
long tls_ctl_next_line(const char *buf, size_t len, size_t max, size_t *line_len);

/* The reply skeleton: {"version", "ok": true, "cmd", "id"}. */
struct json_object *tls_ctl_reply_new(const struct tls_ctl_req *req);
/* An error reply line (with its '\n'), malloc'ed; req may be NULL. */
char *tls_ctl_error_line(const struct tls_ctl_req *req, int code, const char *msg);

/* --- the server --- */

/* Who asked: for the daemon's log. */
struct tls_ctl_peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
};

/*
 * The daemon's answer to a good request: add the results to reply (which
 * has version, ok, cmd and id already) and return TLS_CTL_OK, or return an
 * error code with a message in msg.
 */
typedef int (*tls_ctl_handler)(void *ctx, const struct tls_ctl_req *req,
			       const struct tls_ctl_peer *peer, struct json_object *reply,
			       char *msg, size_t msglen);

struct tls_ctl_opts {
	const char *path;  /* socket path */
	const char *group; /* control_group: NULL or "" for root only */
	gid_t gid;	   /* its gid */
	tls_ctl_handler handler;
	void *ctx;
	uint64_t idle_ns; /* a client silent so long is closed; 0: the default */
};

struct tls_ctl;

/*
 * Create the socket's directory if needed, remove a stale socket (one
 * nobody listens on), bind (mode 0600, or 0660 with the group as owner)
 * and listen. -EADDRINUSE if a live process listens on the path.
 */
int tls_ctl_open(const struct tls_ctl_opts *o, struct tls_ctl **out);
/* The fd to watch for input (an epoll fd); then call tls_ctl_dispatch(). */
int tls_ctl_fd(const struct tls_ctl *c);
/* Accept, read, answer and write whatever is ready, without blocking. */
void tls_ctl_dispatch(struct tls_ctl *c);
/*
 * A `stats` request with "follow" subscribes its client: after the first
 * reply, each call of this (once per sampling period) answers the same
 * request again, until the client goes. A client that has not read its
 * last replies misses samples rather than making tlsd buffer them.
 */
void tls_ctl_publish(struct tls_ctl *c);
/* A client silent (nothing sent, nothing taken) for idle_ns is closed,
 * unless it follows statistics. */
void tls_ctl_set_idle(struct tls_ctl *c, uint64_t idle_ns);
/* A new control_group (NULL or "": root only), for a reload. */
int tls_ctl_set_group(struct tls_ctl *c, const char *group, gid_t gid);
const char *tls_ctl_path(const struct tls_ctl *c);
/* Clients connected now. */
unsigned int tls_ctl_clients(const struct tls_ctl *c);
/* Close every client and the socket, and remove the socket file. */
void tls_ctl_close(struct tls_ctl *c);

#endif /* TLS_CTL_H */
