/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests: every .c file in tests/unit is linked into one binary (build/test-unit).
 * test_main.c holds main(); each other file exposes one group runner that
 * returns its number of failed tests.
 */
#ifndef TLS_UNIT_H
#define TLS_UNIT_H

int run_flowlet_tests(void);
int run_burst_tests(void);
int run_endpoint_tests(void);
int run_policy_tests(void);
int run_units_tests(void);
int run_config_tests(void);
int run_rules_tests(void);
int run_ctl_tests(void);
int run_stats_tests(void);
int run_stats_merge_tests(void);
int run_stats_group_tests(void);
int run_stats_cmdare_tests(void);
int run_stats_types_tests(void);
int run_log_tests(void);
int run_loop_tests(void);
int run_trust_tests(void);
int run_tree_watch_tests(void);
int run_tree_heal_tests(void);
int run_proc_reader_tests(void);
int run_metrics_tests(void);
int run_http_tests(void);
int run_nbio_tests(void);
int run_tlsd_metrics_tests(void);
int run_qdisc_default_tests(void);
int run_members_tests(void);
int run_state_file_tests(void);
int run_pin_layout_tests(void);
int run_btf_layout_tests(void);

#endif /* TLS_UNIT_H */
