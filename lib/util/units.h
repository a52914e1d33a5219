/* SPDX-License-Identifier: GPL-2.0-only */
/* Rates, durations and sizes as people write them: "100mbit", "20s", "10ms", "46M". */
#ifndef TLS_UNITS_H
#define TLS_UNITS_H

#include <stdint.h>

/* bits/s from "N", "Nbit", "Nkbit", "Nmbit", "Ngbit", "Ntbit" (decimal, as tc);
 * 0 or -EINVAL. N may have a fraction ("2.5gbit"). */
int tls_parse_rate(const char *s, uint64_t *bps);
/* ns from "Nns", "Nus", "Nms", "Ns", "Nmin"; a bare number is seconds. */
int tls_parse_duration(const char *s, uint64_t *ns);
/* bytes from "N", "Nk", "NM", "NG" (powers of 1000) or "NKi", "NMi", "NGi"
 * (powers of 1024); a fraction allowed ("11.5M"). 0, -EINVAL or -ERANGE. */
int tls_parse_size(const char *s, uint64_t *bytes);
/* rate less ppm parts per million of it, rounded up (never above rate, no
 * overflow at any rate); ppm >= 1000000 gives 0. */
uint64_t tls_rate_less_ppm(uint64_t rate, uint64_t ppm);
/* Parts per million from "N%" (a fraction allowed: "2.5%"), 0..50%; a bare
 * number only if it is zero ("0", "0.0"). */
int tls_parse_percent(const char *s, uint64_t *ppm);
/* Back to text, for messages: "2.5gbit", "100ms". */
void tls_format_rate(uint64_t bps, char *buf, unsigned int len);
void tls_format_duration(uint64_t ns, char *buf, unsigned int len);

#endif /* TLS_UNITS_H */
