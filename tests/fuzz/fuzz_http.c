// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness: the metrics endpoint's request parser (tcd/http.c),
 * fed what a client may send on one connection: tls_http_parse on the
 * bytes as they arrive, whole and cut at every point (every point of the
 * first 512 bytes, 64 spread over the rest), as the server calls it after
 * each read; and the same bytes, up to a NUL, as a metrics_listen address
 * (tls_http_parse_listen).
 *
 * Beyond the sanitizers, the properties the server relies on:
 *  - the answer is one of the codes it can send (200, 400, 404, 405, 414,
 *    431, 505) or "wait", and "wait" only below TLS_HTTP_MAX_HEAD bytes;
 *  - an answer given on part of the bytes is the answer to all of them: a
 *    request does not get another status for arriving in other pieces;
 *  - 200 is for GET or HEAD only, its head's length (head_len, where a
 *    pipelined request would start) within the bytes given, and the same,
 *    with the same close and format, on part of the bytes as on all;
 *  - an address taken is IPv4 or IPv6 with a port 1..65535.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

static int parse_exact(const uint8_t *data, size_t n, struct tls_http_req *rp)
{
	/* an exact-size copy: a read past the client's bytes is caught */
	char *buf = malloc(n ? n : 1);
	struct tls_http_req r;
	int code;

	if (!buf)
		return -1;
	memcpy(buf, data, n);
	code = tls_http_parse(buf, n, &r);
	free(buf);
	switch (code) {
	case TLS_HTTP_INCOMPLETE:
		if (n >= TLS_HTTP_MAX_HEAD)
			abort();
		break;
	case 200:
		if (r.method != TLS_HTTP_GET && r.method != TLS_HTTP_HEAD)
			abort();
		if (!r.head_len || r.head_len > n || r.head_len > TLS_HTTP_MAX_HEAD)
			abort();
		break;
	case 400:
	case 404:
	case 405:
	case 414:
	case 431:
	case 505:
		break;
	default:
		abort();
	}
	*rp = r;
	return code;
}

static void listen_addr(const uint8_t *data, size_t size)
{
	size_t n = strnlen((const char *)data, size < 128 ? size : 128);
	char *s = malloc(n + 1);
	struct sockaddr_storage ss;
	socklen_t sl;

	if (!s)
		return;
	memcpy(s, data, n);
	s[n] = '\0';
	if (!tls_http_parse_listen(s, &ss, &sl, NULL, 0)) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;

		if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)
			abort();
		/* sin_port and sin6_port are at the same offset */
		if (!s4->sin_port || sl > sizeof(ss))
			abort();
		tls_http_is_loopback(&ss);
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len = size > TLS_HTTP_MAX_HEAD + 64 ? TLS_HTTP_MAX_HEAD + 64 : size;
	struct tls_http_req rw, rp;
	int whole = parse_exact(data, len, &rw), part;
	size_t k, step = 1;

	for (k = 0; k < len; k += step) {
		if (k >= 512)
			step = len / 64 + 1;
		part = parse_exact(data, k, &rp);
		if (part != TLS_HTTP_INCOMPLETE && part != whole)
			abort();
		if (part == 200 && (rp.head_len != rw.head_len || rp.close != rw.close ||
				    rp.openmetrics != rw.openmetrics || rp.method != rw.method))
			abort();
	}
	listen_addr(data, size);
	return 0;
}
