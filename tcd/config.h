/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tlsd's configuration: the file (libconfig syntax, see config/tlsd.conf),
 * then command-line overrides. Loading never half-applies: a bad file leaves
 * the caller's configuration as it was and says which setting is wrong.
 */
#ifndef TLS_CONFIG_H
#define TLS_CONFIG_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl_proto.h"
#include "tls_common.h"
#include "policy.h"
#include "rules.h"

#define TLS_CONF_DEFAULT	"/etc/tlsd/tlsd.conf"
#define TLS_CTL_DEFAULT		TLS_CTL_SOCK_DEFAULT /* one definition, for tlsctl too */
#define TLS_MAX_STATIC_JOBS	256
#define TLS_MAX_JOB_PORTS	16
#define TLS_JOB_NAME_MAX	TLS_JOB_NAME_LEN /* the name map's, with its NUL */
#define TLS_INTERVAL_DEFAULT_NS (20ULL * 1000 * 1000 * 1000) /* TensorLights' 20 s */
#define TLS_BANDS_DEFAULT	4
#define TLS_LEAD_HEADROOM_DEFAULT_PPM 50000 /* 5% */

struct tls_job_conf {
	char name[TLS_JOB_NAME_MAX];
	unsigned int nports;
	uint16_t ports[TLS_MAX_JOB_PORTS]; /* the PS's local ports, host order */
};

/* The least link_rate taken: 1 kB/s (HTB's rates are bytes per second). */
#define TLS_LINK_RATE_MIN_BPS 8000ULL

struct tls_config {
	char ifname[IF_NAMESIZE];
	uint64_t rate_bps; /* 0 ("auto"): read /sys/class/net/IF/speed */
	enum tls_policy policy;
	uint64_t interval_ns;
	unsigned int bands; /* job bands, 1..7 */
	uint64_t flowlet_gap_ns;
	uint64_t flowlet_hold_ns;
	uint64_t lead_headroom_ppm; /* the top band's ceiling below the link (policy.h) */
	bool dscp;
	/* replace_qdisc: a root qdisc that is not the kernel's default may be
	 * replaced at start (it is put back at exit); otherwise start refuses */
	bool replace_qdisc;
	/* mode = "observe": classify and count only; the root qdisc is never
	 * touched, no HTB tree, no packet steered or marked (tlsd(8)) */
	bool observe;
	char ctl_path[108]; /* sun_path */
	char ctl_group[64]; /* control_group: who may use the socket besides root; "" = none */
	gid_t ctl_gid;	    /* its gid, resolved when the file is read */
	uint64_t stats_period_ns; /* the statistics' sampling period */
	uint64_t ctl_idle_ns;	  /* control_idle_timeout: silent clients closed */
	/* stats_window: workers active within it count together in n; 0 ("auto"):
	 * twice the job's iteration measured from its bursts, at least 1 s */
	uint64_t stats_window_ns;
	bool stats_n_flows; /* stats_n = "flows": n counts flows, not worker hosts */
	/* heals of the tree allowed within heal_window_ns; one more and tlsd
	 * yields the interface (tree_heal.h) */
	unsigned int heal_limit;
	uint64_t heal_window_ns;
	/* metrics_listen: "ADDR:PORT" of the HTTP metrics endpoint; "": off */
	char metrics_listen[64];
	/* metrics_workers: the per-worker-flow families are served too (a
	 * series per flow, ephemeral ports in the labels: off by default) */
	bool metrics_workers;
	unsigned int njobs;
	struct tls_job_conf jobs[TLS_MAX_STATIC_JOBS];
	struct tls_discovery_conf discovery;
};

/* The defaults, before any file. */
void tls_config_defaults(struct tls_config *c);
/* Parse a file / a string over a copy of *c; on success copy back. On error
 * return -EINVAL (or -errno) with a message naming the setting in err. */
int tls_config_load_file(const char *path, struct tls_config *c, char *err, size_t errlen);
int tls_config_load_string(const char *text, struct tls_config *c, char *err, size_t errlen);
/* Checks that need the whole picture (interface set, ports unique, ...). */
int tls_config_validate(const struct tls_config *c, char *err, size_t errlen);

#endif /* TLS_CONFIG_H */
