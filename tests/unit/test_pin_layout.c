// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pin layout's verdicts: nothing pinned, pins taken over (this layout
 * and the compatible older ones, the unversioned 0.1 pins included), pins
 * of a layout too old (put back and replaced), pins of a newer tlsd or of
 * an unknown tls_layout (refused), with the two layouts named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pin_layout.h"
#include "unit.h"

static void test_judge(void **state)
{
	char why[128];

	(void)state;
	assert_int_equal(tls_pin_layout_judge(0, 2, 1, why, sizeof(why)), TLS_LAYOUT_NONE);
	assert_string_equal(why, "");
	assert_int_equal(tls_pin_layout_judge(2, 2, 1, why, sizeof(why)), TLS_LAYOUT_OURS);
	assert_int_equal(tls_pin_layout_judge(TLS_PIN_LAYOUT_UNVERSIONED, 2, 1, why, sizeof(why)),
			 TLS_LAYOUT_OURS);
	assert_int_equal(tls_pin_layout_judge(1, 3, 2, why, sizeof(why)), TLS_LAYOUT_OLDER);
	assert_string_equal(why, "pin layout 1, this tlsd's 3");
	assert_int_equal(tls_pin_layout_judge(3, 2, 1, why, sizeof(why)), TLS_LAYOUT_NEWER);
	assert_string_equal(why, "pin layout 3, this tlsd's 2");
	assert_int_equal(tls_pin_layout_judge(UINT32_MAX, 2, 1, why, sizeof(why)),
			 TLS_LAYOUT_NEWER);
	assert_string_equal(why,
			    "pin layout unknown (map tls_layout of another format), this tlsd's 2");
	/* this build's own constants: its layout is its own, 0.1's pins fit */
	assert_int_equal(
		tls_pin_layout_judge(TLS_PIN_LAYOUT, TLS_PIN_LAYOUT, TLS_PIN_LAYOUT_COMPAT, why, 0),
		TLS_LAYOUT_OURS);
	assert_int_equal(tls_pin_layout_judge(TLS_PIN_LAYOUT + 1, TLS_PIN_LAYOUT,
					      TLS_PIN_LAYOUT_COMPAT, why, 0),
			 TLS_LAYOUT_NEWER);
}

int run_pin_layout_tests(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_judge) };

	return cmocka_run_group_tests_name("pin_layout", tests, NULL, NULL);
}
