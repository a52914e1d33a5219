// SPDX-License-Identifier: GPL-2.0-only
/*
 * Worker addresses to instance types and B_req per type (issue 17,
 * Deliver 4): the file's format with its errors named, and the per-type
 * means of the hosts' uncontended rates.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stats_export.h"
#include "stats_types.h"
#include "unit.h"

static void test_type_map_parse(void **state)
{
	struct tls_type_map m;
	char err[256];

	(void)state;
	assert_int_equal(tls_type_map_parse("# workers\n198.18.0.2 p2.8xlarge\n\n"
					    "  fd00::3\tp2.xlarge  # one GPU\n",
					    &m, err, sizeof(err)),
			 0);
	assert_int_equal(m.n, 2);
	assert_string_equal(m.e[1].type, "p2.xlarge");
	tls_type_map_free(&m);
	assert_int_equal(tls_type_map_parse("198.18.0.2 a\n198.18.0.300 b\n", &m, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "line 2: '198.18.0.300' is not an IPv4 or IPv6 address");
	assert_int_equal(tls_type_map_parse("198.18.0.2\n", &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 1: not ADDRESS TYPE"));
	assert_int_equal(tls_type_map_parse("198.18.0.2 a b\n", &m, err, sizeof(err)), -EINVAL);
	assert_int_equal(tls_type_map_parse("198.18.0.2 a\n198.18.0.2 b\n", &m, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "line 2: address given twice");
	assert_null(m.e);
}

/* A worker flow from ra, uncontended rate r B/s over 2 s. */
static void flow(struct tls_stats_flow_info *f, const char *ra, double r)
{
	memset(f, 0, sizeof(*f));
	assert_int_equal(tls_flow_endpoint_parse("198.18.0.1:9000", &f->key, false), 0);
	assert_int_equal(tls_flow_endpoint_parse(ra, &f->key, true), 0);
	f->acc.unsat_ns = 2000000000ULL;
	f->acc.unsat_bytes = (uint64_t)(r * 2);
}

static void test_type_b_req(void **state)
{
	struct tls_stats_flow_info f[6];
	struct tls_type_b_req *t;
	struct tls_type_map m;
	size_t nt, unmapped;
	char err[256];

	(void)state;
	/* two 2-worker hosts of one type, one 1-worker host, one type unseen */
	assert_int_equal(tls_type_map_parse("198.18.0.2 g3.8xlarge\n198.18.0.3 p2.xlarge\n"
					    "198.18.0.4 g3.8xlarge\n198.18.0.5 p2.8xlarge\n",
					    &m, err, sizeof(err)),
			 0);
	flow(&f[0], "198.18.0.2:40000", 10e6);
	flow(&f[1], "198.18.0.2:40001", 12e6);
	flow(&f[2], "198.18.0.4:40000", 9e6);
	flow(&f[3], "198.18.0.4:40001", 9e6);
	flow(&f[4], "198.18.0.3:40000", 7e6);
	flow(&f[5], "198.18.0.9:40000", 1e6); /* not in the map */
	assert_int_equal(tls_type_b_req(&m, f, 6, &t, &nt, &unmapped), 0);
	assert_int_equal(nt, 3);
	assert_int_equal(unmapped, 1);
	assert_string_equal(t[0].type, "g3.8xlarge");
	assert_int_equal(t[0].hosts, 2);
	assert_true(fabs(t[0].b_req - 20e6) < 1); /* (22 + 18) / 2 */
	assert_string_equal(t[1].type, "p2.xlarge");
	assert_true(fabs(t[1].b_req - 7e6) < 1);
	assert_string_equal(t[2].type, "p2.8xlarge");
	assert_int_equal(t[2].hosts, 0);
	assert_true(isnan(t[2].b_req));
	free(t);
	tls_type_map_free(&m);
}

int run_stats_types_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_type_map_parse),
		cmocka_unit_test(test_type_b_req),
	};

	return cmocka_run_group_tests_name("stats_types", tests, NULL, NULL);
}
