/* SPDX-License-Identifier: GPL-2.0-only */
/* A socket address with its text, shared by the traffic emulators
 * (tls-emu, psemu): both print "[ip]:port" or "ip:port". */
#ifndef TLS_EMU_ADDR_H
#define TLS_EMU_ADDR_H

#include <arpa/inet.h>
#include <stdio.h>
#include <sys/socket.h>

#define ADDR_LEN (INET6_ADDRSTRLEN + 8) /* "[ip]:port" */

struct addr {
	struct sockaddr_storage ss;
	socklen_t len;
	char str[ADDR_LEN];
};

static inline void fmt_addr(const struct sockaddr_storage *ss, char *out, size_t len)
{
	const struct sockaddr_in6 *s6 = (const void *)ss;
	const struct sockaddr_in *s4 = (const void *)ss;
	char ip[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET6 && inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip)))
		snprintf(out, len, "[%s]:%u", ip, ntohs(s6->sin6_port));
	else if (ss->ss_family == AF_INET && inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip)))
		snprintf(out, len, "%s:%u", ip, ntohs(s4->sin_port));
	else
		snprintf(out, len, "?");
}

#endif /* TLS_EMU_ADDR_H */
