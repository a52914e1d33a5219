/* SPDX-License-Identifier: GPL-2.0-only */
/* Text form of a PS endpoint: "198.18.0.1:9000", "[fd00::1]:9000", "*:9000". */
#ifndef TLS_ENDPOINT_H
#define TLS_ENDPOINT_H

#include <stddef.h>
#include <linux/types.h>

#include "tls_common.h"

/*
 * Parse `s` for protocol `proto` (IPPROTO_TCP or IPPROTO_UDP) into keys[]:
 * one key, or two for "*:PORT" (any IPv4 and any IPv6 address). Returns the
 * number of keys, or -EINVAL with a message naming what is wrong in err.
 */
int tls_endpoint_parse(const char *s, __u8 proto, struct tls_endpoint_key keys[2], char *err,
		       size_t errlen);
/* "ADDR:PORT" or "[ADDR]:PORT", "*" for the wildcard address. */
int tls_endpoint_format(const struct tls_endpoint_key *k, char *buf, size_t len);
/* Same for a raw address and port (network order), as in struct tls_flow_key. */
int tls_addr_format(__u8 family, const __u8 addr[16], __u16 port, char *buf, size_t len);

#endif /* TLS_ENDPOINT_H */
