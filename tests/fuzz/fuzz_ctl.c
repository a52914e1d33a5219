// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness: the control socket's request path (tcd/ctl.c), fed
 * what a client may send on one connection. The bytes are framed into
 * lines as the server frames them (tls_ctl_next_line), each line goes
 * through tls_ctl_parse_request, and the reply the server would queue is
 * built: the error line for a refused request, the reply skeleton for a
 * good one. The last line may lack its newline, as at a client's EOF.
 *
 * Beyond the sanitizers, one property: every reply line is strict JSON
 * and valid UTF-8, because tlsctl and other clients parse it so (error
 * messages quote the client's own text, cut to a length).
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

/* A reply line the server would send: one strict JSON object and '\n'. */
static void check_reply(const char *line)
{
	struct json_tokener *tok = json_tokener_new();
	size_t len = strlen(line);
	struct json_object *o;

	if (!tok)
		return;
	if (!len || line[len - 1] != '\n')
		abort();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, line, (int)len - 1);
	if (!o || !json_object_is_type(o, json_type_object))
		abort();
	json_object_put(o);
	json_tokener_free(tok);
}

static void one_line(const char *line, size_t len)
{
	struct tls_ctl_req req;
	struct json_object *reply;
	char msg[512] = ""; /* the server's size */
	char *out;
	int err;

	err = tls_ctl_parse_request(line, len, &req, msg, sizeof(msg));
	if (err) {
		out = tls_ctl_error_line(&req, err, msg);
		if (out)
			check_reply(out);
		free(out);
	} else {
		if (req.cmd < 0 || req.cmd >= TLS_CTL_NCMDS)
			abort();
		reply = tls_ctl_reply_new(&req);
		if (reply) {
			const char *s = json_object_to_json_string_ext(
				reply, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
			size_t n = strlen(s);

			out = malloc(n + 2);
			if (out) {
				memcpy(out, s, n);
				strcpy(out + n, "\n");
				check_reply(out);
				free(out);
			}
		}
		json_object_put(reply);
	}
	tls_ctl_req_release(&req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy: a read past the client's bytes is caught. */
	char *buf = malloc(size ? size : 1);
	size_t off = 0, len;
	long n;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	while (off < size) {
		n = tls_ctl_next_line(buf + off, size - off, TLS_CTL_MAX_MSG, &len);
		if (n < 0)
			break; /* too long: the server closes the connection */
		if (n == 0) {
			one_line(buf + off, size - off); /* the last, at EOF */
			break;
		}
		one_line(buf + off, len);
		off += (size_t)n;
	}
	free(buf);
	return 0;
}
