/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IPV4:PORT from the command line, for the benchmarks' plain HTTP client and
 * server (bench-scrape, bench-serve), which link no library of tlsd's.
 */
#ifndef TLS_BENCH_IPV4_PORT_H
#define TLS_BENCH_IPV4_PORT_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* arg into *sa (family, address, port); false with the reason on stderr,
 * prog first. arg is left as it was. */
static inline bool ipv4_port(const char *prog, char *arg, struct sockaddr_in *sa)
{
	char *colon = strrchr(arg, ':'), *end = NULL;
	long port = colon ? strtol(colon + 1, &end, 10) : 0;
	int ok;

	if (!colon || *end || port < 1 || port > 65535) {
		fprintf(stderr, "%s: '%s' is not IPV4:PORT\n", prog, arg);
		return false;
	}
	*colon = '\0';
	ok = inet_pton(AF_INET, arg, &sa->sin_addr) == 1;
	if (!ok)
		fprintf(stderr, "%s: '%s' is not an IPv4 address\n", prog, arg);
	*colon = ':';
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return ok;
}

#endif /* TLS_BENCH_IPV4_PORT_H */
