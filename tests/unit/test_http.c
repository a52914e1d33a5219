// SPDX-License-Identifier: GPL-2.0-only
/*
 * The metrics endpoint's request parser (tcd/http.c): the status code for
 * every class of request (good, another path, another method, malformed
 * request lines and fields, too long, another HTTP version), that a request
 * arriving in pieces waits (at every cut) and a bad one is answered as soon
 * as it is known, the Accept header's choice of OpenMetrics; and the
 * metrics_listen addresses.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http.h"
#include "unit.h"

static int parse(const char *s, struct tls_http_req *r)
{
	/* an exact-size copy: a read past the request is caught by ASan */
	size_t n = strlen(s);
	char *buf = malloc(n ? n : 1);
	int code;

	memcpy(buf, s, n);
	code = tls_http_parse(buf, n, r);
	free(buf);
	return code;
}

static void is(int want, const char *req)
{
	struct tls_http_req r;
	int got = parse(req, &r);

	if (got != want)
		fail_msg("'%s': %d, expected %d", req, got, want);
}

#define GOOD "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"

/* Whether the connection goes on after the answer (keep-alive), and where
 * the head ends when more follows it (a pipelined request). */
static void keeps(bool want, const char *req)
{
	struct tls_http_req r;
	int got = parse(req, &r);

	if (got != 200 || r.close == want)
		fail_msg("'%s': %d, close %d, expected 200 and close %d", req, got, r.close, !want);
}

static void test_keep(void **state)
{
	struct tls_http_req r;

	(void)state;
	keeps(true, GOOD);
	keeps(true, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n");
	keeps(true, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: closed\r\n\r\n");
	keeps(true, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: upgrade,x-close\r\n\r\n");
	keeps(true, "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
	keeps(false, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	keeps(false, "GET /metrics HTTP/1.1\r\nHost: x\r\nconnection:CLOSE \r\n\r\n");
	keeps(false, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: te , close\r\n\r\n");
	/* HTTP/1.0's keep-alive is not offered */
	keeps(false, "GET /metrics HTTP/1.0\r\n\r\n");
	keeps(false, "GET /metrics HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	/* a body is not read: the connection cannot go on after one */
	keeps(false, "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n");
	keeps(false, "GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
	/* the head's length, with a pipelined request after it */
	assert_int_equal(parse(GOOD, &r), 200);
	assert_int_equal(r.head_len, strlen(GOOD));
	assert_int_equal(parse(GOOD "GET /metrics HTTP/1.1\r\nHo", &r), 200);
	assert_int_equal(r.head_len, strlen(GOOD));
	assert_int_equal(parse("\r\n" GOOD GOOD, &r), 200);
	assert_int_equal(r.head_len, strlen(GOOD) + 2);
	assert_int_equal(parse("GET /metrics HTTP/1.1\nHost: x\n\nX", &r), 200);
	assert_int_equal(r.head_len, strlen("GET /metrics HTTP/1.1\nHost: x\n\n"));
}

static void test_good(void **state)
{
	struct tls_http_req r;

	(void)state;
	assert_int_equal(parse(GOOD, &r), 200);
	assert_int_equal(r.method, TLS_HTTP_GET);
	assert_int_equal(r.minor, 1);
	assert_false(r.openmetrics);
	/* what Prometheus sends */
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9464\r\n"
			       "User-Agent: Prometheus/2.45.0\r\n"
			       "Accept: application/openmetrics-text;version=1.0.0,application/"
			       "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;"
			       "q=0.5,*/*;q=0.1\r\nAccept-Encoding: gzip\r\n"
			       "X-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n",
			       &r),
			 200);
	assert_true(r.openmetrics);
	is(200, "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	is(200, "GET /metrics?name[]=x HTTP/1.1\r\nHost: x\r\n\r\n");
	/* HTTP/1.0 needs no Host; bare LF line ends; empty lines first */
	is(200, "GET /metrics HTTP/1.0\r\n\r\n");
	is(200, "GET /metrics HTTP/1.0\n\n");
	is(200, "\r\n\nGET /metrics HTTP/1.0\r\n\r\n");
	/* HTTP/1.2 is HTTP/1.1 to us (RFC 9110 2.5) */
	is(200, "GET /metrics HTTP/1.2\r\nhOsT: x\r\n\r\n");
	/* white space around a value, an empty value, obs-text */
	is(200, "GET /metrics HTTP/1.1\r\nHost:x\r\nX-A: \t\r\nX-B:  \xe2\x82\xac \r\n\r\n");
	/* a body is not read: the connection closes after the answer */
	is(200, "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
}

static void test_accept(void **state)
{
	struct tls_http_req r;

	(void)state;
	assert_int_equal(
		parse("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: text/plain\r\n\r\n", &r), 200);
	assert_false(r.openmetrics);
	parse("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: Application/OpenMetrics-Text\r\n\r\n",
	      &r);
	assert_true(r.openmetrics);
	parse("GET /metrics HTTP/1.1\r\nHost: x\r\naccept: text/plain, "
	      "application/openmetrics-text ; version=1.0.0 ; q=0.9\r\n\r\n",
	      &r);
	assert_true(r.openmetrics);
	/* q=0: "not this one" */
	parse("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text;q=0, "
	      "text/plain\r\n\r\n",
	      &r);
	assert_false(r.openmetrics);
	parse("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text; "
	      "Q=0.000\r\n\r\n",
	      &r);
	assert_false(r.openmetrics);
	/* another type that starts alike, or a parameter that only ends in q */
	parse("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-textx\r\n\r\n",
	      &r);
	assert_false(r.openmetrics);
	parse("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text;"
	      "xq=0\r\n\r\n",
	      &r);
	assert_true(r.openmetrics);
	/* in a second Accept header */
	parse("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: text/plain\r\nAccept: "
	      "application/openmetrics-text\r\n\r\n",
	      &r);
	assert_true(r.openmetrics);
}

static void test_refused(void **state)
{
	(void)state;
	is(404, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
	is(404, "GET /metricsx HTTP/1.1\r\nHost: x\r\n\r\n");
	is(404, "GET /metrics/ HTTP/1.1\r\nHost: x\r\n\r\n");
	is(404, "GET http://x/metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	is(405, "POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	is(405, "get /metrics HTTP/1.1\r\nHost: x\r\n\r\n"); /* methods are case-sensitive */
	is(405, "DELETE /metrics HTTP/1.0\r\n\r\n");
	is(505, "GET /metrics HTTP/2.0\r\nHost: x\r\n\r\n");
	is(505, "GET /metrics HTTP/0.9\r\n\r\n");
	/* malformed request lines */
	is(400, "GET /metrics\r\n\r\n"); /* HTTP/0.9 */
	is(400, "GET  /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	is(400, " GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	is(400, "GET /metrics HTTP/1.1 \r\nHost: x\r\n\r\n");
	is(400, "GET /metrics http/1.1\r\nHost: x\r\n\r\n");
	is(400, "GET /metrics HTTP/1.10\r\nHost: x\r\n\r\n");
	is(400, "GET /metrics HTTP/1\r\nHost: x\r\n\r\n");
	is(400, "GET /met\x01rics HTTP/1.1\r\nHost: x\r\n\r\n");
	is(400, "G\xc3\x89T /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	is(400, "GET /metrics\tHTTP/1.1\r\nHost: x\r\n\r\n");
	is(400, "GET /metrics HTTP/1.1\r\r\nHost: x\r\n\r\n");	 /* a bare CR */
	is(400, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"); /* TLS to a plain port */
	/* malformed fields */
	is(400, "GET /metrics HTTP/1.1\r\n\r\n"); /* 1.1 without Host */
	is(400, "GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
	is(400, "GET /metrics HTTP/1.1\r\nHost : x\r\n\r\n");
	is(400, "GET /metrics HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n");
	is(400, "GET /metrics HTTP/1.1\r\nHost: x\r\n: empty name\r\n\r\n");
	is(400, "GET /metrics HTTP/1.1\r\nHost: x\r\nX: a\r\n folded\r\n\r\n");
	is(400, "GET /metrics HTTP/1.1\r\nHost: x\r\nX: a\x01b\r\n\r\n");
	is(400, "GET /metrics HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n");
	is(400, "GET /metrics HTTP/1.1\r\nHost: x\x7f\r\n\r\n");
}

/* Every cut of a good request waits; every cut of a bad request line that
 * already shows the fault is answered at once. */
static void test_pieces(void **state)
{
	static const char bad[] = "GET /metrics HTTP/3.0\r\nHost: x\r\n\r\n";
	char buf[sizeof(GOOD)];
	struct tls_http_req r;
	size_t n;

	(void)state;
	for (n = 0; n < sizeof(GOOD) - 1; n++) {
		memcpy(buf, GOOD, n);
		buf[n] = '\0';
		if (parse(buf, &r) != TLS_HTTP_INCOMPLETE)
			fail_msg("%zu bytes of a good request: %d", n, parse(buf, &r));
	}
	/* known to be HTTP/3.0 once its line is whole (more could follow the
	 * version, which would make it a 400: found by fuzz_http) */
	for (n = 0; n < sizeof(bad) - 1; n++) {
		int want = n < 23 ? TLS_HTTP_INCOMPLETE : 505;

		memcpy(buf, bad, n);
		buf[n] = '\0';
		if (parse(buf, &r) != want)
			fail_msg("%zu bytes of '%s': %d, expected %d", n, bad, parse(buf, &r),
				 want);
	}
	/* a wrong path or method is answered before the headers */
	is(404, "GET /x HTTP/1.1\r\n");
	is(405, "PUT /metrics HTTP/1.1\r\nHost:");
	is(TLS_HTTP_INCOMPLETE, "GET");
	is(400, "GET\t");
	is(TLS_HTTP_INCOMPLETE, "GET /metrics HTTP/1.1\r");
}

/* Too long: 414 for a request line, 431 for the head. */
static void test_long(void **state)
{
	struct tls_http_req r;
	char *buf = malloc(TLS_HTTP_MAX_HEAD + 100);
	size_t n;

	(void)state;
	memcpy(buf, "GET /", 5);
	memset(buf + 5, 'a', TLS_HTTP_MAX_HEAD + 95);
	assert_int_equal(tls_http_parse(buf, TLS_HTTP_MAX_HEAD - 1, &r), TLS_HTTP_INCOMPLETE);
	assert_int_equal(tls_http_parse(buf, TLS_HTTP_MAX_HEAD, &r), 414);
	assert_int_equal(tls_http_parse(buf, TLS_HTTP_MAX_HEAD + 100, &r), 414);
	n = strlen(GOOD) - 2; /* without the final empty line */
	memcpy(buf, GOOD, n);
	while (n + 8 < TLS_HTTP_MAX_HEAD + 100) {
		memcpy(buf + n, "X-P: a\r\n", 8);
		n += 8;
	}
	assert_int_equal(tls_http_parse(buf, TLS_HTTP_MAX_HEAD - 1, &r), TLS_HTTP_INCOMPLETE);
	assert_int_equal(tls_http_parse(buf, TLS_HTTP_MAX_HEAD, &r), 431);
	/* empty lines alone fill it: not a request line */
	for (n = 0; n + 2 <= TLS_HTTP_MAX_HEAD; n += 2)
		memcpy(buf + n, "\r\n", 2);
	free(buf);
	assert_int_equal(tls_http_parse("\r\n\r\n\r\n\r\n", 8, &r), TLS_HTTP_INCOMPLETE);
	assert_string_equal(tls_http_reason(431), "Request Header Fields Too Large");
}

static void listen_ok(const char *s, int family, const char *addr, unsigned int port)
{
	struct sockaddr_storage ss;
	char err[256] = "", a[64];
	socklen_t sl;

	if (tls_http_parse_listen(s, &ss, &sl, err, sizeof(err)))
		fail_msg("'%s' refused: %s", s, err);
	assert_int_equal(ss.ss_family, family);
	if (family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;

		assert_int_equal(sl, sizeof(*s4));
		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		assert_int_equal(ntohs(s4->sin_port), port);
	} else {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;

		assert_int_equal(sl, sizeof(*s6));
		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		assert_int_equal(ntohs(s6->sin6_port), port);
	}
	assert_string_equal(a, addr);
}

static void listen_bad(const char *s, const char *why)
{
	struct sockaddr_storage ss;
	char err[256] = "";
	socklen_t sl;

	assert_int_equal(tls_http_parse_listen(s, &ss, &sl, err, sizeof(err)), -22);
	if (!strstr(err, why))
		fail_msg("'%s': '%s' does not say '%s'", s, err, why);
}

static void test_listen(void **state)
{
	struct sockaddr_storage ss;
	socklen_t sl;

	(void)state;
	listen_ok("127.0.0.1:9464", AF_INET, "127.0.0.1", 9464);
	listen_ok("0.0.0.0:1", AF_INET, "0.0.0.0", 1);
	listen_ok("[::1]:9464", AF_INET6, "::1", 9464);
	listen_ok("[fd00::1]:65535", AF_INET6, "fd00::1", 65535);
	listen_bad("localhost:9464", "is not an IPv4 address");
	listen_bad("::1:9464", "is not ADDR:PORT or [ADDR6]:PORT");
	listen_bad("[127.0.0.1]:9464", "is not an IPv6 address");
	listen_bad("[::1]9464", "is not [ADDR]:PORT");
	listen_bad("127.0.0.1", "is not ADDR:PORT");
	listen_bad("127.0.0.1:", "the port must be a number 1..65535");
	listen_bad("127.0.0.1:0", "the port must be a number 1..65535");
	listen_bad("127.0.0.1:65536", "the port must be a number 1..65535");
	listen_bad("127.0.0.1:+80", "the port must be a number 1..65535");
	listen_bad("127.0.0.1:80x", "the port must be a number 1..65535");
	listen_bad(":9464", "no address before the port");
	tls_http_parse_listen("127.0.0.9:1", &ss, &sl, NULL, 0);
	assert_true(tls_http_is_loopback(&ss));
	tls_http_parse_listen("[::1]:1", &ss, &sl, NULL, 0);
	assert_true(tls_http_is_loopback(&ss));
	tls_http_parse_listen("[::ffff:127.0.0.1]:1", &ss, &sl, NULL, 0);
	assert_true(tls_http_is_loopback(&ss));
	tls_http_parse_listen("0.0.0.0:1", &ss, &sl, NULL, 0);
	assert_false(tls_http_is_loopback(&ss));
	tls_http_parse_listen("[::]:1", &ss, &sl, NULL, 0);
	assert_false(tls_http_is_loopback(&ss));
	tls_http_parse_listen("198.18.0.1:1", &ss, &sl, NULL, 0);
	assert_false(tls_http_is_loopback(&ss));
}

int run_http_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),   cmocka_unit_test(test_keep),
		cmocka_unit_test(test_accept), cmocka_unit_test(test_refused),
		cmocka_unit_test(test_pieces), cmocka_unit_test(test_long),
		cmocka_unit_test(test_listen),
	};

	return cmocka_run_group_tests_name("http", tests, NULL, NULL);
}
