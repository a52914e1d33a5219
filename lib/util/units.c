// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

struct unit {
	const char *suffix;
	double mult;
};

/* A number with an optional fraction, then one of the units (exact match). */
static int parse_scaled(const char *s, const struct unit *units, double max, uint64_t *out)
{
	char *end;
	double v;

	if (!s || *s < '0' || *s > '9') /* no sign, blank, "inf" or "nan" */
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) /* strtod would read hex */
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || end == s)
		return -EINVAL;
	for (; units->suffix; units++) {
		if (strcmp(end, units->suffix))
			continue;
		v *= units->mult;
		if (!isfinite(v) || v > max)
			return -ERANGE;
		*out = (uint64_t)llround(v);
		return 0;
	}
	return -EINVAL;
}

int tls_parse_rate(const char *s, uint64_t *bps)
{
	static const struct unit u[] = {
		{ "", 1 },	 { "bit", 1 },	   { "kbit", 1e3 }, { "mbit", 1e6 },
		{ "gbit", 1e9 }, { "tbit", 1e12 }, { "Kbit", 1e3 }, { "Mbit", 1e6 },
		{ "Gbit", 1e9 }, { "Tbit", 1e12 }, { NULL, 0 },
	};

	return parse_scaled(s, u, 1e15, bps);
}

int tls_parse_duration(const char *s, uint64_t *ns)
{
	static const struct unit u[] = {
		{ "", 1e9 }, { "s", 1e9 },    { "ms", 1e6 }, { "us", 1e3 },
		{ "ns", 1 }, { "min", 60e9 }, { NULL, 0 },
	};

	return parse_scaled(s, u, 1e18, ns);
}

int tls_parse_size(const char *s, uint64_t *bytes)
{
	static const struct unit u[] = {
		{ "", 1 },	{ "k", 1e3 },	   { "M", 1e6 },      { "G", 1e9 },
		{ "Ki", 1024 }, { "Mi", 1 << 20 }, { "Gi", 1 << 30 }, { NULL, 0 },
	};

	return parse_scaled(s, u, 1e15, bytes);
}

uint64_t tls_rate_less_ppm(uint64_t rate, uint64_t ppm)
{
	if (ppm >= 1000000)
		return 0;
	/* rate / 1e6 * ppm, then the remainder's share: no overflow */
	return rate - (rate / 1000000 * ppm + rate % 1000000 * ppm / 1000000);
}

int tls_parse_percent(const char *s, uint64_t *ppm)
{
	static const struct unit pct[] = { { "%", 1e4 }, { NULL, 0 } };
	static const struct unit bare[] = { { "", 1 }, { NULL, 0 } };
	uint64_t zero;

	/* a bare zero too ("0", "0.0"): switching a share off needs no unit */
	if (s && strspn(s, "0.") == strlen(s) && !parse_scaled(s, bare, 1, &zero)) {
		*ppm = 0;
		return 0;
	}
	return parse_scaled(s, pct, 50e4, ppm);
}

static void format_scaled(uint64_t v, const struct unit *units, char *buf, unsigned int len)
{
	const struct unit *best = units;

	/* The largest unit the value is at least one of. */
	for (; units->suffix; units++)
		if ((double)v >= units->mult && units->mult >= best->mult)
			best = units;
	snprintf(buf, len, "%g%s", (double)v / best->mult, best->suffix);
}

void tls_format_rate(uint64_t bps, char *buf, unsigned int len)
{
	static const struct unit u[] = {
		{ "bit", 1 },	 { "kbit", 1e3 },  { "mbit", 1e6 },
		{ "gbit", 1e9 }, { "tbit", 1e12 }, { NULL, 0 },
	};

	format_scaled(bps, u, buf, len);
}

void tls_format_duration(uint64_t ns, char *buf, unsigned int len)
{
	static const struct unit u[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { NULL, 0 },
	};

	format_scaled(ns, u, buf, len);
}
