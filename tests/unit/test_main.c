// SPDX-License-Identifier: GPL-2.0-only
/* Runs every unit test group; exit status 1 if any test failed (not the
 * count: 77 would read as "skipped"). */
#include <stdio.h>

#include "unit.h"

int main(void)
{
	int failed = 0;

	failed += run_flowlet_tests();
	failed += run_burst_tests();
	failed += run_endpoint_tests();
	failed += run_policy_tests();
	failed += run_units_tests();
	failed += run_config_tests();
	failed += run_rules_tests();
	failed += run_ctl_tests();
	failed += run_stats_tests();
	failed += run_stats_merge_tests();
	failed += run_stats_group_tests();
	failed += run_stats_cmdare_tests();
	failed += run_stats_types_tests();
	failed += run_log_tests();
	failed += run_loop_tests();
	failed += run_trust_tests();
	failed += run_tree_watch_tests();
	failed += run_tree_heal_tests();
	failed += run_pin_layout_tests();
	failed += run_btf_layout_tests();
	failed += run_state_file_tests();
	failed += run_proc_reader_tests();
	failed += run_metrics_tests();
	failed += run_http_tests();
	failed += run_nbio_tests();
	failed += run_tlsd_metrics_tests();
	failed += run_qdisc_default_tests();
	failed += run_members_tests();
	if (failed)
		fprintf(stderr, "test-unit: %d test(s) failed\n", failed);
	return failed ? 1 : 0;
}
