// SPDX-License-Identifier: GPL-2.0-only
/*
 * Rates, durations and sizes as people write them (lib/util/units.c): exact values for
 * every documented unit, every malformed spelling rejected with the right
 * error, format -> parse round trips and safe truncation.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "units.h"
#include "unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct good {
	const char *in;
	uint64_t want;
};

struct bad {
	const char *in; /* may be NULL */
	int want;	/* -EINVAL or -ERANGE */
};

typedef int (*parse_fn)(const char *, uint64_t *);

static void check_good(parse_fn parse, const char *what, const struct good *t, size_t n)
{
	size_t i, failed = 0;

	/* every row is tried, every wrong one reported, before failing */
	for (i = 0; i < n; i++) {
		uint64_t v = 0xdeadbeef;
		int ret = parse(t[i].in, &v);

		if (ret != 0 || v != t[i].want) {
			print_error("%s(\"%s\"): ret %d value %llu, want 0 and %llu\n", what,
				    t[i].in, ret, (unsigned long long)v,
				    (unsigned long long)t[i].want);
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

static void check_bad(parse_fn parse, const char *what, const struct bad *t, size_t n)
{
	size_t i, failed = 0;

	for (i = 0; i < n; i++) {
		uint64_t v = 0;
		int ret = parse(t[i].in, &v);

		if (ret != t[i].want) {
			print_error("%s(%s%s%s): ret %d (value %llu), want %d\n", what,
				    t[i].in ? "\"" : "", t[i].in ? t[i].in : "NULL",
				    t[i].in ? "\"" : "", ret, (unsigned long long)v, t[i].want);
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

static void test_parse_rate(void **state)
{
	static const struct good t[] = {
		{ "1000", 1000ULL },
		{ "0", 0ULL }, /* 0: take the link's speed */
		{ "100bit", 100ULL },
		{ "10kbit", 10000ULL },
		{ "100mbit", 100000000ULL },
		{ "10gbit", 10000000000ULL },
		{ "2.5gbit", 2500000000ULL },
		{ "1tbit", 1000000000000ULL },
		{ "100Mbit", 100000000ULL },
		{ "10Kbit", 10000ULL },
		{ "40Gbit", 40000000000ULL },
		{ "2Tbit", 2000000000000ULL },
		{ "1.5mbit", 1500000ULL },
		{ "0.5kbit", 500ULL },
		{ "1000tbit", 1000000000000000ULL }, /* the ceiling, 1e15 */
	};

	(void)state;
	check_good(tls_parse_rate, "tls_parse_rate", t, ARRAY_SIZE(t));
}

static void test_parse_rate_errors(void **state)
{
	static const struct bad t[] = {
		{ "", -EINVAL },
		{ NULL, -EINVAL },
		{ "mbit", -EINVAL },
		{ "-1mbit", -EINVAL },
		{ "+5mbit", -EINVAL },
		{ " 5mbit", -EINVAL },
		{ "5 mbit", -EINVAL },
		{ "5mbit ", -EINVAL },
		{ "5mbits", -EINVAL },
		{ "5MBIT", -EINVAL },
		{ "5mb", -EINVAL },
		{ "5m", -EINVAL },
		{ "5bps", -EINVAL },
		{ ".5mbit", -EINVAL },
		{ "inf", -EINVAL },
		{ "infgbit", -EINVAL },
		{ "nan", -EINVAL },
		{ "nanmbit", -EINVAL },
		{ "1e99gbit", -ERANGE },
		{ "1001tbit", -ERANGE },
		{ "99999999999999999999", -ERANGE },
		/* Hexadecimal is not a documented spelling (strtod would take it). */
		{ "0x10mbit", -EINVAL },
		{ "0x10", -EINVAL },
		{ "0x1p4kbit", -EINVAL },
	};

	(void)state;
	check_bad(tls_parse_rate, "tls_parse_rate", t, ARRAY_SIZE(t));
}

static void test_parse_duration(void **state)
{
	static const struct good t[] = {
		{ "20s", 20000000000ULL },   { "20", 20000000000ULL }, /* a bare number is seconds
									*/
		{ "10ms", 10000000ULL },     { "500us", 500000ULL },	{ "7ns", 7ULL },
		{ "2min", 120000000000ULL }, { "1.5s", 1500000000ULL }, { "0", 0ULL },
		{ "0.5ms", 500000ULL },	     { "4ms", 4000000ULL },	{ "100ms", 100000000ULL },
		{ "1.5", 1500000000ULL },
	};

	(void)state;
	check_good(tls_parse_duration, "tls_parse_duration", t, ARRAY_SIZE(t));
}

static void test_parse_duration_errors(void **state)
{
	static const struct bad t[] = {
		{ "", -EINVAL },
		{ NULL, -EINVAL },
		{ "s", -EINVAL },
		{ "ms", -EINVAL },
		{ "-1s", -EINVAL },
		{ "+5s", -EINVAL },
		{ " 5s", -EINVAL },
		{ "5 s", -EINVAL },
		{ "5s ", -EINVAL },
		{ "5sec", -EINVAL },
		{ "5secs", -EINVAL },
		{ "5S", -EINVAL },
		{ "5MS", -EINVAL },
		{ "5m", -EINVAL },
		{ "5h", -EINVAL },
		{ "5mins", -EINVAL },
		{ ".5s", -EINVAL },
		{ "inf", -EINVAL },
		{ "infs", -EINVAL },
		{ "nan", -EINVAL },
		{ "nans", -EINVAL },
		{ "1e99s", -ERANGE },
		{ "1e99", -ERANGE },
		{ "99999999999min", -ERANGE },
		/* Hexadecimal is not a documented spelling (strtod would take it). */
		{ "0x10s", -EINVAL },
		{ "0x10ms", -EINVAL },
	};

	(void)state;
	check_bad(tls_parse_duration, "tls_parse_duration", t, ARRAY_SIZE(t));
}

/* Sizes (tlsctl calibrate --param): decimal and binary multiples. */
static void test_parse_size(void **state)
{
	static const struct good good[] = {
		{ "3136765", 3136765ULL }, { "46.8M", 46800000ULL },
		{ "1k", 1000ULL },	   { "2G", 2000000000ULL },
		{ "1Ki", 1024ULL },	   { "11.5Mi", 12058624ULL },
		{ "1Gi", 1073741824ULL },  { "0", 0ULL },
	};
	static const struct bad bad[] = {
		{ "", -EINVAL },     { NULL, -EINVAL },	  { "M", -EINVAL },   { "-1M", -EINVAL },
		{ "1m", -EINVAL },   { "1MB", -EINVAL },  { "1 M", -EINVAL }, { "1K", -EINVAL },
		{ "1e99", -ERANGE }, { "0x10", -EINVAL }, { "nan", -EINVAL },
	};

	(void)state;
	check_good(tls_parse_size, "tls_parse_size", good, ARRAY_SIZE(good));
	check_bad(tls_parse_size, "tls_parse_size", bad, ARRAY_SIZE(bad));
}

static void test_parse_percent(void **state)
{
	static const struct good t[] = {
		{ "3%", 30000ULL },   { "0%", 0ULL },	   { "0", 0ULL },
		{ "2.5%", 25000ULL }, { "0.0", 0ULL },	   { "00", 0ULL },
		{ "50%", 500000ULL }, { "0.0001%", 1ULL }, { "10%", 100000ULL },
	};
	static const struct bad b[] = {
		{ "", -EINVAL },     { NULL, -EINVAL },	   { "3", -EINVAL },	/* a unit, please */
		{ "%", -EINVAL },    { "-3%", -EINVAL },   { "3 %", -EINVAL },	{ "3%%", -EINVAL },
		{ "51%", -ERANGE },  { "100%", -ERANGE },  { "inf%", -EINVAL }, { "nan%", -EINVAL },
		{ "0x3%", -EINVAL }, { "1e9%", -ERANGE },  { "0.03", -EINVAL }, { "1", -EINVAL },
		{ "0e5", -EINVAL },  /* a bare zero is only digits and a point */
	};

	(void)state;
	check_good(tls_parse_percent, "tls_parse_percent", t, ARRAY_SIZE(t));
	check_bad(tls_parse_percent, "tls_parse_percent", b, ARRAY_SIZE(b));
}

/* Band 0's ceiling arithmetic: exact floor of the cut, at any rate. */
static void test_rate_less_ppm(void **state)
{
	static const struct {
		uint64_t rate, ppm, want;
	} t[] = {
		{ 200000000, 50000, 190000000 },
		{ 200000000, 30000, 194000000 },
		{ 10000000000ULL, 30000, 9700000000ULL },
		{ 100000000, 0, 100000000 },
		{ UINT64_MAX, 500000, UINT64_MAX - UINT64_MAX / 2 },
		{ UINT64_MAX, 999999, UINT64_MAX - (UINT64_MAX / 1000000 * 999999 +
						    UINT64_MAX % 1000000 * 999999 / 1000000) },
		{ 999999, 500000, 500000 }, /* the cut rounds down: the ceiling up */
		{ 8000, 1, 8000 },
		{ 1000000, 1000000, 0 },
		{ 5, 2000000, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(t); i++)
		if (tls_rate_less_ppm(t[i].rate, t[i].ppm) != t[i].want)
			fail_msg("case %zu: %llu less %llu ppm: got %llu, want %llu", i,
				 (unsigned long long)t[i].rate, (unsigned long long)t[i].ppm,
				 (unsigned long long)tls_rate_less_ppm(t[i].rate, t[i].ppm),
				 (unsigned long long)t[i].want);
}

/* The exact text for a few values, as the header promises ("2.5gbit", "100ms"). */
static void test_format_text(void **state)
{
	static const struct {
		uint64_t v;
		const char *rate, *duration;
	} t[] = {
		{ 0ULL, "0bit", "0ns" },
		{ 7ULL, "7bit", "7ns" },
		{ 1000ULL, "1kbit", "1us" },
		{ 1500ULL, "1.5kbit", "1.5us" },
		{ 100000000ULL, "100mbit", "100ms" },
		{ 2500000000ULL, "2.5gbit", "2.5s" },
		{ 20000000000ULL, "20gbit", "20s" },
		{ 1000000000000ULL, "1tbit", "1000s" },
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		tls_format_rate(t[i].v, buf, sizeof(buf));
		assert_string_equal(buf, t[i].rate);
		tls_format_duration(t[i].v, buf, sizeof(buf));
		assert_string_equal(buf, t[i].duration);
	}
}

/* Round numbers survive format -> parse unchanged. */
static void test_round_trip(void **state)
{
	static const uint64_t rates[] = {
		0,
		1,
		999,
		1000,
		1500,
		64000,
		10000000,
		100000000,
		1000000000,
		2500000000ULL,
		10000000000ULL,
		25000000000ULL,
		40000000000ULL,
		100000000000ULL,
		400000000000ULL,
		1000000000000ULL,
		1000000000000000ULL,
	};
	static const uint64_t durations[] = {
		0,
		1,
		7,
		999,
		500000,
		4000000,
		10000000,
		100000000,
		250000000,
		1500000000ULL,
		20000000000ULL,
		120000000000ULL,
		3600000000000ULL,
		86400000000000ULL,
		1000000000000000000ULL, /* the ceiling, 1e18 */
	};
	char buf[64];
	uint64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rates); i++) {
		tls_format_rate(rates[i], buf, sizeof(buf));
		v = ~0ULL;
		if (tls_parse_rate(buf, &v) || v != rates[i])
			print_error("rate %llu -> \"%s\" -> %llu\n", (unsigned long long)rates[i],
				    buf, (unsigned long long)v);
		assert_int_equal(tls_parse_rate(buf, &v), 0);
		assert_int_equal(v, rates[i]);
	}
	for (i = 0; i < ARRAY_SIZE(durations); i++) {
		tls_format_duration(durations[i], buf, sizeof(buf));
		v = ~0ULL;
		if (tls_parse_duration(buf, &v) || v != durations[i])
			print_error("duration %llu -> \"%s\" -> %llu\n",
				    (unsigned long long)durations[i], buf, (unsigned long long)v);
		assert_int_equal(tls_parse_duration(buf, &v), 0);
		assert_int_equal(v, durations[i]);
	}
}

typedef void (*format_fn)(uint64_t, char *, unsigned int);

/* A short buffer gets a terminated prefix of the full text, and nothing past
 * len is written (len 0: nothing at all). */
static void check_truncation(format_fn format, uint64_t v)
{
	char full[64], buf[32];
	size_t flen, len, i, want;

	format(v, full, sizeof(full));
	flen = strlen(full);
	assert_true(flen > 0 && flen < sizeof(buf) - 1);
	for (len = 0; len <= flen + 2; len++) {
		memset(buf, 'X', sizeof(buf));
		format(v, buf, (unsigned int)len);
		for (i = len; i < sizeof(buf); i++)
			assert_int_equal(buf[i], 'X');
		if (!len)
			continue;
		want = len - 1 < flen ? len - 1 : flen;
		assert_int_equal(strlen(buf), want);
		assert_memory_equal(buf, full, want);
	}
}

static void test_format_truncation(void **state)
{
	static const uint64_t values[] = {
		0, 7, 1500, 2500000000ULL, 123456789ULL, 1000000000000000ULL, UINT64_MAX
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(values); i++) {
		check_truncation(tls_format_rate, values[i]);
		check_truncation(tls_format_duration, values[i]);
	}
}

int run_units_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_rate),
		cmocka_unit_test(test_parse_rate_errors),
		cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_parse_duration_errors),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_parse_percent),
		cmocka_unit_test(test_rate_less_ppm),
		cmocka_unit_test(test_format_text),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_format_truncation),
	};

	return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}
