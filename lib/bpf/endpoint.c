// SPDX-License-Identifier: GPL-2.0-only
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "endpoint.h"

static int fail(char *err, size_t errlen, const char *fmt, const char *what)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, what);
	return -EINVAL;
}

static int parse_port(const char *p, __u16 *port)
{
	char *end;
	long v;

	if (*p < '0' || *p > '9') /* strtol would skip blanks and take a sign */
		return -EINVAL;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || *end || v < 1 || v > 65535)
		return -EINVAL;
	*port = htons((__u16)v);
	return 0;
}

int tls_endpoint_parse(const char *s, __u8 proto, struct tls_endpoint_key keys[2], char *err,
		       size_t errlen)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *h = s;
	size_t hlen;
	__u16 port;

	if (!s || !*s)
		return fail(err, errlen, "empty endpoint%s", "");
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return fail(err, errlen, "endpoint %s: protocol must be tcp or udp", s);
	memset(keys, 0, 2 * sizeof(keys[0]));
	if (*s == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':')
			return fail(err, errlen, "endpoint %s: expected [IPV6]:PORT", s);
		h = s + 1;
		hlen = rb - h;
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return fail(err, errlen, "endpoint %s: expected ADDR:PORT", s);
		if (memchr(s, ':', colon - s))
			return fail(err, errlen, "endpoint %s: write IPv6 addresses as [ADDR]:PORT",
				    s);
		hlen = colon - s;
	}
	if (parse_port(colon + 1, &port))
		return fail(err, errlen, "endpoint %s: port must be a number 1..65535", s);
	if (hlen >= sizeof(host))
		return fail(err, errlen, "endpoint %s: address too long", s);
	memcpy(host, h, hlen);
	host[hlen] = '\0';

	keys[0].proto = proto;
	keys[0].port = port;
	if (hlen == 0 || !strcmp(host, "*")) {
		if (*s == '[')
			return fail(err, errlen, "endpoint %s: use [::] for any IPv6 address", s);
		keys[0].family = AF_INET;
		keys[1] = keys[0];
		keys[1].family = AF_INET6;
		return 2;
	}
	if (*s != '[' && inet_pton(AF_INET, host, keys[0].addr) == 1) {
		keys[0].family = AF_INET;
		return 1;
	}
	if (*s == '[' && inet_pton(AF_INET6, host, keys[0].addr) == 1) {
		keys[0].family = AF_INET6;
		return 1;
	}
	return fail(err, errlen, "endpoint %s: not an IP address", s);
}

static bool is_zero(const __u8 *a, size_t n)
{
	while (n--)
		if (*a++)
			return false;
	return true;
}

int tls_addr_format(__u8 family, const __u8 addr[16], __u16 port, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	int n;

	if (family != AF_INET && family != AF_INET6)
		return -EINVAL;
	if (is_zero(addr, 16))
		snprintf(a, sizeof(a), "%s", family == AF_INET ? "*" : "::");
	else if (!inet_ntop(family, addr, a, sizeof(a)))
		return -errno;
	n = snprintf(buf, len, family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, ntohs(port));
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

int tls_endpoint_format(const struct tls_endpoint_key *k, char *buf, size_t len)
{
	return tls_addr_format(k->family, k->addr, k->port, buf, len);
}
