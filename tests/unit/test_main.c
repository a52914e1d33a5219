// SPDX-License-Identifier: GPL-2.0-only
/* Runs every unit test group; the exit status is the number of failed tests. */
#include <stdio.h>

#include "unit.h"

int main(void)
{
	int failed = 0;

	failed += run_flowlet_tests();
	failed += run_endpoint_tests();
	if (failed)
		fprintf(stderr, "test-unit: %d test(s) failed\n", failed);
	return failed > 255 ? 255 : failed;
}
