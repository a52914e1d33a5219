// SPDX-License-Identifier: GPL-2.0-only
/* Endpoint text: tls_endpoint_parse(), tls_endpoint_format(), tls_addr_format(). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "endpoint.h"
#include "unit.h"

#define ERRLEN 256

/* The key is a BPF map key: compare every byte, not field by field. */
static struct tls_endpoint_key mkkey(__u8 family, __u8 proto, __u16 port, const char *addr)
{
	struct tls_endpoint_key k;

	memset(&k, 0, sizeof(k));
	k.family = family;
	k.proto = proto;
	k.port = htons(port);
	if (addr && inet_pton(family, addr, k.addr) != 1)
		fail_msg("test bug: bad address %s", addr);
	return k;
}

static void assert_key_eq(const char *what, const struct tls_endpoint_key *got,
			  const struct tls_endpoint_key *want)
{
	char g[64] = "?", w[64] = "?";

	if (!memcmp(got, want, sizeof(*got)))
		return;
	tls_endpoint_format(got, g, sizeof(g));
	tls_endpoint_format(want, w, sizeof(w));
	fail_msg("%s: key family=%u proto=%u port=0x%04x (%s), want family=%u proto=%u "
		 "port=0x%04x (%s)",
		 what, got->family, got->proto, got->port, g, want->family, want->proto, want->port,
		 w);
}

/* ---- valid input -------------------------------------------------------- */

struct parse_ok {
	const char *in;
	__u8 proto;
	__u8 family;
	const char *addr; /* NULL: all-zero address */
	__u16 port;	  /* host order */
};

static const struct parse_ok parse_ok_cases[] = {
	{ "198.18.0.1:9000", IPPROTO_TCP, AF_INET, "198.18.0.1", 9000 },
	{ "10.0.0.1:1", IPPROTO_TCP, AF_INET, "10.0.0.1", 1 },
	{ "255.255.255.255:65535", IPPROTO_TCP, AF_INET, "255.255.255.255", 65535 },
	{ "0.0.0.0:80", IPPROTO_TCP, AF_INET, NULL, 80 },
	{ "192.0.2.7:53", IPPROTO_UDP, AF_INET, "192.0.2.7", 53 },
	{ "1.2.3.4:080", IPPROTO_TCP, AF_INET, "1.2.3.4", 80 },
	{ "[fd00::1]:9000", IPPROTO_TCP, AF_INET6, "fd00::1", 9000 },
	{ "[FD00:0:0::1]:9000", IPPROTO_TCP, AF_INET6, "fd00::1", 9000 },
	{ "[::1]:443", IPPROTO_UDP, AF_INET6, "::1", 443 },
	{ "[2001:db8:1:2:3:4:5:6]:65535", IPPROTO_TCP, AF_INET6, "2001:db8:1:2:3:4:5:6", 65535 },
	{ "[::ffff:192.0.2.1]:53", IPPROTO_UDP, AF_INET6, "::ffff:192.0.2.1", 53 },
	/* the longest IPv6 text there is: 45 characters */
	{ "[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:1", IPPROTO_TCP, AF_INET6,
	  "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", 1 },
	/* [::] is the IPv6 wildcard alone: one key */
	{ "[::]:9000", IPPROTO_TCP, AF_INET6, NULL, 9000 },
	{ "[::]:9000", IPPROTO_UDP, AF_INET6, NULL, 9000 },
};

static void test_parse_valid(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(parse_ok_cases) / sizeof(parse_ok_cases[0]); i++) {
		const struct parse_ok *c = &parse_ok_cases[i];
		struct tls_endpoint_key keys[2], want;
		char err[ERRLEN] = "";
		int n;

		memset(keys, 0xaa, sizeof(keys));
		n = tls_endpoint_parse(c->in, c->proto, keys, err, sizeof(err));
		if (n != 1)
			fail_msg("%s: returned %d (%s), want 1 key", c->in, n, err);
		want = mkkey(c->family, c->proto, c->port, c->addr);
		assert_key_eq(c->in, &keys[0], &want);
	}
}

static void check_wildcard(const char *in, __u8 proto, __u16 port)
{
	struct tls_endpoint_key keys[2], want4, want6;
	char err[ERRLEN] = "";
	int n;

	memset(keys, 0xaa, sizeof(keys));
	n = tls_endpoint_parse(in, proto, keys, err, sizeof(err));
	if (n != 2)
		fail_msg("%s: returned %d (%s), want 2 keys", in, n, err);
	want4 = mkkey(AF_INET, proto, port, NULL);
	want6 = mkkey(AF_INET6, proto, port, NULL);
	assert_key_eq(in, &keys[0], &want4);
	assert_key_eq(in, &keys[1], &want6);
}

static void test_parse_wildcard(void **state)
{
	(void)state;
	check_wildcard("*:9000", IPPROTO_TCP, 9000);
	check_wildcard("*:1", IPPROTO_TCP, 1);
	check_wildcard("*:65535", IPPROTO_UDP, 65535);
	check_wildcard(":9000", IPPROTO_TCP, 9000);
	check_wildcard(":53", IPPROTO_UDP, 53);
}

/* The port is stored in network order whatever the host's order is. */
static void test_parse_port_byte_order(void **state)
{
	struct tls_endpoint_key keys[2];
	const __u8 *p = (const __u8 *)&keys[0].port;
	char err[ERRLEN] = "";

	(void)state;
	assert_int_equal(tls_endpoint_parse("1.2.3.4:258", IPPROTO_TCP, keys, err, sizeof(err)), 1);
	assert_int_equal(p[0], 0x01);
	assert_int_equal(p[1], 0x02);
	assert_int_equal(keys[0].port, htons(258));

	assert_int_equal(tls_endpoint_parse("[fd00::1]:65534", IPPROTO_UDP, keys, err, sizeof(err)),
			 1);
	assert_int_equal(p[0], 0xff);
	assert_int_equal(p[1], 0xfe);

	assert_int_equal(tls_endpoint_parse("*:4660", IPPROTO_TCP, keys, err, sizeof(err)), 2);
	assert_int_equal(((const __u8 *)&keys[0].port)[0], 0x12);
	assert_int_equal(((const __u8 *)&keys[0].port)[1], 0x34);
	assert_int_equal(((const __u8 *)&keys[1].port)[0], 0x12);
	assert_int_equal(((const __u8 *)&keys[1].port)[1], 0x34);
}

/* proto is whatever the caller passes, as long as it is TCP (6) or UDP (17). */
static void test_parse_proto(void **state)
{
	struct tls_endpoint_key keys[2];
	char err[ERRLEN] = "";

	(void)state;
	assert_int_equal(tls_endpoint_parse("1.2.3.4:80", 6, keys, err, sizeof(err)), 1);
	assert_int_equal(keys[0].proto, IPPROTO_TCP);
	assert_int_equal(tls_endpoint_parse("1.2.3.4:80", 17, keys, err, sizeof(err)), 1);
	assert_int_equal(keys[0].proto, IPPROTO_UDP);
	assert_int_equal(tls_endpoint_parse("*:80", IPPROTO_UDP, keys, err, sizeof(err)), 2);
	assert_int_equal(keys[0].proto, IPPROTO_UDP);
	assert_int_equal(keys[1].proto, IPPROTO_UDP);
}

/* ---- errors ------------------------------------------------------------- */

struct parse_bad {
	const char *in;
	__u8 proto;
};

#define LONG_HOST "1111111111222222222233333333334444444444555555555566666666667777777777"

static const struct parse_bad parse_bad_cases[] = {
	/* port */
	{ "1.2.3.4", IPPROTO_TCP },
	{ "1.2.3.4:", IPPROTO_TCP },
	{ "1.2.3.4:0", IPPROTO_TCP },
	{ "1.2.3.4:00", IPPROTO_TCP },
	{ "1.2.3.4:65536", IPPROTO_TCP },
	{ "*:65536", IPPROTO_TCP },
	{ "1.2.3.4:99999999999999999999", IPPROTO_TCP },
	{ "1.2.3.4:abc", IPPROTO_TCP },
	{ "1.2.3.4:80abc", IPPROTO_TCP },
	{ "1.2.3.4:0x50", IPPROTO_TCP },
	{ "1.2.3.4:-1", IPPROTO_TCP },
	{ "1.2.3.4:+80", IPPROTO_TCP },
	{ "1.2.3.4: 80", IPPROTO_TCP },
	{ "1.2.3.4:80 ", IPPROTO_TCP },
	{ "*:", IPPROTO_TCP },
	{ ":", IPPROTO_TCP },
	{ "*", IPPROTO_TCP },
	{ "[fd00::1]:", IPPROTO_TCP },
	{ "[fd00::1]:0", IPPROTO_TCP },
	{ "[::]:65536", IPPROTO_TCP },
	/* IPv6 syntax */
	{ "fd00::1:9000", IPPROTO_TCP },
	{ "::1:80", IPPROTO_TCP },
	{ "fd00::1", IPPROTO_TCP },
	{ "[fd00::1]9000", IPPROTO_TCP },
	{ "[fd00::1]", IPPROTO_TCP },
	{ "[fd00::1:9000", IPPROTO_TCP },
	{ "[*]:80", IPPROTO_TCP },
	{ "[]:80", IPPROTO_TCP },
	{ "[1.2.3.4]:80", IPPROTO_TCP },
	{ "[fd00::g]:80", IPPROTO_TCP },
	/* not an address */
	{ "999.1.1.1:80", IPPROTO_TCP },
	{ "1.2.3:80", IPPROTO_TCP },
	{ "1.2.3.4.5:80", IPPROTO_TCP },
	{ "localhost:80", IPPROTO_TCP },
	{ "**:80", IPPROTO_TCP },
	{ " 1.2.3.4:80", IPPROTO_TCP },
	/* longer than any address */
	{ LONG_HOST ":80", IPPROTO_TCP },
	{ "[" LONG_HOST "]:80", IPPROTO_TCP },
	{ "[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.2555]:80", IPPROTO_TCP },
	/* protocol */
	{ "1.2.3.4:80", IPPROTO_ICMP },
	{ "1.2.3.4:80", 0 },
	{ "[fd00::1]:80", IPPROTO_ICMPV6 },
	{ "*:80", IPPROTO_SCTP },
	{ "*:80", 255 },
};

static void test_parse_errors(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(parse_bad_cases) / sizeof(parse_bad_cases[0]); i++) {
		const struct parse_bad *c = &parse_bad_cases[i];
		struct tls_endpoint_key keys[2];
		char err[ERRLEN];
		int n;

		memset(err, 0, sizeof(err));
		n = tls_endpoint_parse(c->in, c->proto, keys, err, sizeof(err));
		if (n != -EINVAL)
			fail_msg("\"%s\" proto %u: returned %d, want -EINVAL", c->in, c->proto, n);
		if (!strstr(err, c->in))
			fail_msg("\"%s\" proto %u: error \"%s\" does not name the input", c->in,
				 c->proto, err);
	}
}

/*
 * Leading white space before the port is refused (" 80" above), whatever the
 * white space: strtol() would skip all of it, not only ' '.
 */
static void test_parse_port_white_space(void **state)
{
	static const char *const bad[] = {
		"1.2.3.4:\t80", "1.2.3.4:\n80",	  "1.2.3.4:\v80", "1.2.3.4:\f80",
		"1.2.3.4:\r80", "[fd00::1]:\t80", "*:\t80",
	};
	struct tls_endpoint_key keys[2];
	char err[ERRLEN];
	size_t i;
	int n;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(err, 0, sizeof(err));
		n = tls_endpoint_parse(bad[i], IPPROTO_TCP, keys, err, sizeof(err));
		if (n != -EINVAL)
			fail_msg("port after white space 0x%02x accepted: \"%s\" returned %d, "
				 "want -EINVAL",
				 (unsigned char)strrchr(bad[i], ':')[1], bad[i], n);
		assert_non_null(strstr(err, bad[i]));
	}
}

static void test_parse_empty(void **state)
{
	struct tls_endpoint_key keys[2];
	char err[ERRLEN];

	(void)state;
	memset(err, 0, sizeof(err));
	assert_int_equal(tls_endpoint_parse("", IPPROTO_TCP, keys, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty"));

	memset(err, 0, sizeof(err));
	assert_int_equal(tls_endpoint_parse(NULL, IPPROTO_TCP, keys, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty"));

	/* an empty string is empty whatever the protocol */
	memset(err, 0, sizeof(err));
	assert_int_equal(tls_endpoint_parse(NULL, IPPROTO_ICMP, keys, err, sizeof(err)), -EINVAL);
	assert_true(err[0] != '\0');
}

/* No error buffer, or one too small for the message: still -EINVAL, no overrun
 * (ASan watches), and a truncated message is terminated. */
static void test_parse_err_buffer(void **state)
{
	struct tls_endpoint_key keys[2];
	char small[9];

	(void)state;
	assert_int_equal(tls_endpoint_parse("1.2.3.4:0", IPPROTO_TCP, keys, NULL, 0), -EINVAL);
	assert_int_equal(tls_endpoint_parse(NULL, IPPROTO_TCP, keys, NULL, 0), -EINVAL);
	assert_int_equal(tls_endpoint_parse("x:1", IPPROTO_TCP, keys, NULL, 100), -EINVAL);
	assert_int_equal(tls_endpoint_parse("1.2.3.4:80", 1, keys, NULL, 0), -EINVAL);

	memset(small, 'x', sizeof(small));
	assert_int_equal(tls_endpoint_parse("1.2.3.4:0", IPPROTO_TCP, keys, small, sizeof(small)),
			 -EINVAL);
	assert_int_equal(strlen(small), sizeof(small) - 1);

	memset(small, 'x', sizeof(small));
	assert_int_equal(tls_endpoint_parse("1.2.3.4:0", IPPROTO_TCP, keys, small, 0), -EINVAL);
	assert_int_equal(small[0], 'x'); /* errlen 0: not written at all */

	/* a successful parse leaves err alone */
	memset(small, 'x', sizeof(small));
	assert_int_equal(tls_endpoint_parse("1.2.3.4:1", IPPROTO_TCP, keys, small, sizeof(small)),
			 1);
	assert_int_equal(small[0], 'x');
}

/* ---- formatting --------------------------------------------------------- */

struct round_trip {
	const char *in;
	__u8 proto;
	int nkeys;
	const char *out[2]; /* tls_endpoint_format() of each key */
};

static const struct round_trip round_trips[] = {
	{ "198.18.0.1:9000", IPPROTO_TCP, 1, { "198.18.0.1:9000" } },
	{ "10.0.0.1:1", IPPROTO_UDP, 1, { "10.0.0.1:1" } },
	{ "255.255.255.255:65535", IPPROTO_TCP, 1, { "255.255.255.255:65535" } },
	{ "1.2.3.4:080", IPPROTO_TCP, 1, { "1.2.3.4:80" } },
	{ "0.0.0.0:80", IPPROTO_TCP, 1, { "*:80" } },
	{ "[fd00::1]:9000", IPPROTO_TCP, 1, { "[fd00::1]:9000" } },
	{ "[FD00:0:0:0::1]:9000", IPPROTO_TCP, 1, { "[fd00::1]:9000" } },
	{ "[::1]:443", IPPROTO_UDP, 1, { "[::1]:443" } },
	{ "[2001:db8:1:2:3:4:5:6]:65535", IPPROTO_TCP, 1, { "[2001:db8:1:2:3:4:5:6]:65535" } },
	{ "[::ffff:192.0.2.1]:53", IPPROTO_UDP, 1, { "[::ffff:192.0.2.1]:53" } },
	{ "[::]:9000", IPPROTO_TCP, 1, { "[::]:9000" } },
	{ "*:9000", IPPROTO_TCP, 2, { "*:9000", "[::]:9000" } },
	{ ":53", IPPROTO_UDP, 2, { "*:53", "[::]:53" } },
};

static void test_round_trip(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(round_trips) / sizeof(round_trips[0]); i++) {
		const struct round_trip *c = &round_trips[i];
		struct tls_endpoint_key keys[2], again[2];
		char err[ERRLEN] = "", buf[64];
		int n, j, rc;

		n = tls_endpoint_parse(c->in, c->proto, keys, err, sizeof(err));
		if (n != c->nkeys)
			fail_msg("%s: parse returned %d (%s), want %d", c->in, n, err, c->nkeys);
		for (j = 0; j < n; j++) {
			memset(buf, 'x', sizeof(buf));
			rc = tls_endpoint_format(&keys[j], buf, sizeof(buf));
			if (rc || strcmp(buf, c->out[j]))
				fail_msg("%s key %d: format returned %d \"%.*s\", want \"%s\"",
					 c->in, j, rc, (int)sizeof(buf) - 1, buf, c->out[j]);
			/* and the text parses back to the same key */
			rc = tls_endpoint_parse(buf, c->proto, again, err, sizeof(err));
			if (rc < 1)
				fail_msg("%s key %d: \"%s\" does not parse back: %s", c->in, j, buf,
					 err);
			assert_key_eq(buf, &again[0], &keys[j]);
		}
	}
}

static void test_addr_format(void **state)
{
	__u8 a[16] = { 0 };
	char buf[64];

	(void)state;
	inet_pton(AF_INET, "10.1.2.3", a);
	assert_int_equal(tls_addr_format(AF_INET, a, htons(9000), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "10.1.2.3:9000");

	memset(a, 0, sizeof(a));
	inet_pton(AF_INET6, "fd00::2:1", a);
	assert_int_equal(tls_addr_format(AF_INET6, a, htons(1), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "[fd00::2:1]:1");

	memset(a, 0, sizeof(a));
	assert_int_equal(tls_addr_format(AF_INET, a, htons(65535), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "*:65535");
	assert_int_equal(tls_addr_format(AF_INET6, a, htons(80), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "[::]:80");

	/* the port argument is network order */
	inet_pton(AF_INET, "127.0.0.1", a);
	assert_int_equal(tls_addr_format(AF_INET, a, htons(258), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "127.0.0.1:258");
}

static void test_format_bad_family(void **state)
{
	static const __u8 families[] = { 0, AF_UNIX, AF_PACKET, AF_NETLINK, 255 };
	struct tls_endpoint_key k;
	__u8 a[16] = { 1, 2, 3, 4 };
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(families); i++) {
		memset(buf, 'x', sizeof(buf));
		assert_int_equal(tls_addr_format(families[i], a, htons(80), buf, sizeof(buf)),
				 -EINVAL);
		k = mkkey(AF_INET, IPPROTO_TCP, 80, "1.2.3.4");
		k.family = families[i];
		assert_int_equal(tls_endpoint_format(&k, buf, sizeof(buf)), -EINVAL);
	}
	/* an all-zero key (unused map slot) is not an endpoint */
	memset(&k, 0, sizeof(k));
	assert_int_equal(tls_endpoint_format(&k, buf, sizeof(buf)), -EINVAL);
}

struct fit_case {
	__u8 family;
	const char *addr; /* NULL: wildcard */
	__u16 port;
	const char *text;
};

static const struct fit_case fit_cases[] = {
	{ AF_INET, "198.18.0.1", 9000, "198.18.0.1:9000" },
	{ AF_INET, NULL, 1, "*:1" },
	{ AF_INET6, "fd00::1", 9000, "[fd00::1]:9000" },
	{ AF_INET6, NULL, 80, "[::]:80" },
	{ AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", 65535,
	  "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535" },
	{ AF_INET6, "::ffff:255.255.255.255", 65535, "[::ffff:255.255.255.255]:65535" },
};

/* The text and its NUL fit exactly, one byte less is -ENOSPC (and the buffer
 * is neither overrun nor left unterminated). */
static void test_format_too_small(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(fit_cases) / sizeof(fit_cases[0]); i++) {
		const struct fit_case *c = &fit_cases[i];
		struct tls_endpoint_key k = mkkey(c->family, IPPROTO_TCP, c->port, c->addr);
		size_t need = strlen(c->text) + 1, len;
		char buf[64];

		memset(buf, 'x', sizeof(buf));
		assert_int_equal(tls_endpoint_format(&k, buf, need), 0);
		assert_string_equal(buf, c->text);

		for (len = need - 1; len > 0; len--) {
			char *heap = malloc(len); /* exact size, so ASan sees overruns */
			int rc;

			assert_non_null(heap);
			memset(heap, 'x', len);
			rc = tls_endpoint_format(&k, heap, len);
			if (rc != -ENOSPC)
				fail_msg("%s in %zu bytes: returned %d, want -ENOSPC", c->text, len,
					 rc);
			assert_int_equal(heap[len - 1], '\0');
			assert_int_equal(strncmp(heap, c->text, len - 1), 0);
			rc = tls_addr_format(k.family, k.addr, k.port, heap, len);
			assert_int_equal(rc, -ENOSPC);
			free(heap);
		}
		/* zero length: nothing written */
		memset(buf, 'x', sizeof(buf));
		assert_int_equal(tls_endpoint_format(&k, buf, 0), -ENOSPC);
		assert_int_equal(buf[0], 'x');
	}
}

int run_endpoint_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_valid),
		cmocka_unit_test(test_parse_wildcard),
		cmocka_unit_test(test_parse_port_byte_order),
		cmocka_unit_test(test_parse_proto),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_port_white_space),
		cmocka_unit_test(test_parse_empty),
		cmocka_unit_test(test_parse_err_buffer),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_addr_format),
		cmocka_unit_test(test_format_bad_family),
		cmocka_unit_test(test_format_too_small),
	};

	return cmocka_run_group_tests_name("endpoint", tests, NULL, NULL);
}
