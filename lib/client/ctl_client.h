/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The client side of tlsd's control socket (the protocol: ctl_proto.h):
 * connect, send a request, take its reply, one JSON object a line. What
 * tlsctl and any other client link, with json-c and nothing of the daemon.
 *
 * Every call returns a tls_client_status; on failure c->err says why in a
 * sentence naming the socket, for the caller to print with its own prefix.
 */
#ifndef TLS_CTL_CLIENT_H
#define TLS_CTL_CLIENT_H

#include <stddef.h>

#include <json-c/json.h>

/* tlsctl's exit statuses are these. */
enum tls_client_status {
	TLS_CLIENT_OK = 0,
	TLS_CLIENT_REFUSED = 1, /* tlsd refused or failed the request */
	TLS_CLIENT_USAGE = 2,	/* the caller's mistake (a socket path too long) */
	TLS_CLIENT_UNREACH = 3, /* not running, permission denied, no answer */
};

struct tls_client {
	const char *sock;
	int fd;
	char *buf; /* what was received and not yet returned as a reply */
	size_t len, cap;
	char err[512];
};

void tls_client_init(struct tls_client *c, const char *sock);
/* The connection only (a new call opens another); the buffer is kept. */
void tls_client_disconnect(struct tls_client *c);
void tls_client_free(struct tls_client *c);

/* A new request object for command cmd: version and cmd set. */
struct json_object *tls_client_request(const char *cmd);
/* Connect, send req (freed in every case), take the reply: TLS_CLIENT_OK
 * and *reply (the caller's), or a status with c->err set; an error reply
 * ("ok": false) is a status too, with its message in c->err, prefixed with
 * what (the command's name, as the user typed it). */
int tls_client_call(struct tls_client *c, const char *what, struct json_object *req,
		    struct json_object **reply);
/* The next reply line on the open connection (a follow stream);
 * timeout_ms < 0 waits for ever. */
int tls_client_next(struct tls_client *c, int timeout_ms, struct json_object **out);
/* The status an error reply means, its message in c->err. */
int tls_client_reply_error(struct tls_client *c, const char *what, struct json_object *r);

#endif
