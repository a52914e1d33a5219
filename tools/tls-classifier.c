// SPDX-License-Identifier: GPL-2.0-only
/*
 * tls-classifier: drive tlsd's classifier by hand, without the daemon. Used by
 * the namespace tests and the demo, and handy to inspect a running tlsd:
 * every command but `attach` works on the maps pinned under the interface's
 * pin directory.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "classifier.h"
#include "endpoint.h"
#include "kernel_features.h"
#include "libbpf_log.h"
#include "log.h"

struct ctx {
	const char *ifname;
	const char *pin_dir;
	bool json;
	struct tls_maps maps;
};

static const char usage_text[] =
	"Usage: tls-classifier [OPTIONS] -i IFACE COMMAND [ARGS]\n"
	"\n"
	"Options:\n"
	"  -i, --interface IFACE  egress interface (names the pin directory)\n"
	"  -P, --pin-dir DIR      pin directory (default " TLS_PIN_ROOT "/IFACE@NETNS)\n"
	"  -j, --json             JSON output for stats and flows\n"
	"  -v, --verbose          more messages (twice: libbpf debug)\n"
	"  -V, --version          print the version\n"
	"  -h, --help             this text\n"
	"\n"
	"Commands:\n"
	"  attach [--gap-us N] [--hold-ms N] [--dscp] [--cgroup DIR | --no-cgroup]\n"
	"                         load, pin and attach to IFACE clsact egress; flowlet\n"
	"                         idle gap (default 4000 us, 0 = off) and hold (100 ms)\n"
	"  detach                 remove the classifier, its hook and its pins\n"
	"  band BAND CLASSID [DSCP]  send band 0..6 to HTB class MAJ:MIN (hex, as tc)\n"
	"  job JOB BAND|none      put job 1..1023 in a band, or in the default class\n"
	"  free JOB               the job is gone: default class, and sockets still\n"
	"                         tagged with it no longer count as the id's next job\n"
	"  process PID JOB        make a running process a member of JOB: its sockets\n"
	"                         now and those it opens or accepts later\n"
	"  pid PID JOB            only the sockets PID opens from now on\n"
	"  unprocess PID          undo `process`: forget PID, untag its sockets\n"
	"  unpid PID              forget PID (its tagged sockets stay tagged)\n"
	"  endpoint ADDR:PORT JOB [tcp|udp]  source endpoint fallback (*:PORT = any)\n"
	"  unendpoint ADDR:PORT [tcp|udp]\n"
	"  stats [JOB...]         per-job counters (job 0: everything unclassified)\n"
	"  flows                  per-flow counters\n"
	"  watch MS SECS JOB...   every MS milliseconds for SECS seconds, one line:\n"
	"                         monotonic ns, then band and bytes of each JOB\n"
	"  clock                  the monotonic clock in ns, as watch stamps it\n";

static int parse_u32(const char *s, const char *what, __u32 max, __u32 *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (!*s || *end || errno || v > max || *s == '-') {
		pr_warn("bad %s '%s': expected a number 0..%u\n", what, s, max);
		return -EINVAL;
	}
	*out = (__u32)v;
	return 0;
}

static int parse_job(const char *s, __u32 *job)
{
	if (parse_u32(s, "job", TLS_MAX_JOBS - 1, job))
		return -EINVAL;
	if (*job == TLS_JOB_NONE) {
		pr_warn("bad job '%s': job ids start at 1\n", s);
		return -EINVAL;
	}
	return 0;
}

/* tc's class id syntax: MAJ:MIN, both hex. */
static int parse_classid(const char *arg, __u32 *out)
{
	const char *s = arg;
	unsigned long maj, min;
	char *end;

	errno = 0;
	maj = strtoul(s, &end, 16);
	if (errno || *end != ':' || maj > 0xffff || end == s)
		goto bad;
	s = end + 1;
	min = strtoul(s, &end, 16);
	if (errno || *end || min > 0xffff || end == s || !min)
		goto bad;
	*out = (__u32)(maj << 16 | min);
	return 0;
bad:
	pr_warn("bad class id '%s': expected MAJOR:MINOR in hex, e.g. 1:10\n", arg);
	return -EINVAL;
}

static int parse_proto(int argc, char **argv, int idx, __u8 *proto)
{
	*proto = IPPROTO_TCP;
	if (argc <= idx)
		return 0;
	if (!strcmp(argv[idx], "udp"))
		*proto = IPPROTO_UDP;
	else if (strcmp(argv[idx], "tcp")) {
		pr_warn("bad protocol '%s': expected tcp or udp\n", argv[idx]);
		return -EINVAL;
	}
	return 0;
}

static int cmd_attach(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "gap-us", required_argument, NULL, 'g' },
		{ "hold-ms", required_argument, NULL, 'H' },
		{ "dscp", no_argument, NULL, 'd' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "no-cgroup", no_argument, NULL, 'n' },
		{},
	};
	struct tls_cls_opts o = {
		.ifname = c->ifname,
		.pin_dir = c->pin_dir,
		.flowlet_gap_ns = TLS_FLOWLET_GAP_NS_DEFAULT,
		.flowlet_hold_ns = TLS_FLOWLET_HOLD_NS_DEFAULT,
	};
	struct tls_cls *cls;
	__u32 v;
	int opt, err;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'g':
			if (parse_u32(optarg, "--gap-us", 10 * 1000 * 1000, &v))
				return 2;
			o.flowlet_gap_ns = (__u64)v * 1000;
			break;
		case 'H':
			if (parse_u32(optarg, "--hold-ms", 60 * 1000, &v))
				return 2;
			o.flowlet_hold_ns = (__u64)v * 1000 * 1000;
			break;
		case 'd':
			o.dscp = true;
			break;
		case 'c':
			o.cgroup = optarg;
			break;
		case 'n':
			o.cgroup = "";
			break;
		default:
			return 2;
		}
	}
	if (optind != argc) {
		pr_warn("attach: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	err = tls_cls_load(&o, &cls);
	if (err)
		return 1;
	err = tls_cls_attach(cls);
	if (err) {
		tls_cls_close(cls);
		return 1;
	}
	tls_cls_release(cls);	     /* stays attached; `detach` removes it */
	tls_features_log_degraded(); /* what this kernel refused, and instead */
	printf("attached to %s egress, maps pinned in %s\n", c->ifname, c->pin_dir);
	return 0;
}

static int cmd_detach(struct ctx *c, int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		pr_warn("detach takes no arguments\n");
		return 2;
	}
	if (tls_cls_remove_pinned(c->pin_dir))
		return 1;
	printf("removed the classifier pinned in %s\n", c->pin_dir);
	return 0;
}

static int cmd_band(struct ctx *c, int argc, char **argv)
{
	__u32 band, classid, dscp = TLS_DSCP_NONE;

	if (argc < 3 || argc > 4) {
		pr_warn("usage: band BAND CLASSID [DSCP]\n");
		return 2;
	}
	if (parse_u32(argv[1], "band", TLS_MAX_BANDS - 1, &band) ||
	    parse_classid(argv[2], &classid) ||
	    (argc == 4 && parse_u32(argv[3], "DSCP", 63, &dscp)))
		return 2;
	return tls_set_band(&c->maps, band, classid, (__u8)dscp) ? 1 : 0;
}

static int cmd_job(struct ctx *c, int argc, char **argv)
{
	__u32 job, band = TLS_BAND_NONE;

	if (argc != 3) {
		pr_warn("usage: job JOB BAND|none\n");
		return 2;
	}
	if (parse_job(argv[1], &job) ||
	    (strcmp(argv[2], "none") && parse_u32(argv[2], "band", TLS_MAX_BANDS - 1, &band)))
		return 2;
	return tls_set_job_band(&c->maps, job, band) ? 1 : 0;
}

static int cmd_free(struct ctx *c, int argc, char **argv)
{
	__u32 job;

	if (argc != 2) {
		pr_warn("usage: free JOB\n");
		return 2;
	}
	if (parse_job(argv[1], &job))
		return 2;
	return tls_free_job_id(&c->maps, job) ? 1 : 0;
}

static int parse_pid(const char *s, pid_t *pid)
{
	__u32 v;

	if (parse_u32(s, "pid", 0x3fffffff, &v) || !v) {
		pr_warn("bad pid '%s'\n", s);
		return -EINVAL;
	}
	*pid = (pid_t)v;
	return 0;
}

static int cmd_pid(struct ctx *c, int argc, char **argv)
{
	bool process = !strcmp(argv[0], "process");
	__u32 job;
	pid_t pid;
	int n;

	if (argc != 3) {
		pr_warn("usage: %s PID JOB\n", argv[0]);
		return 2;
	}
	if (parse_pid(argv[1], &pid) || parse_job(argv[2], &job))
		return 2;
	if (!process)
		return tls_add_pid(&c->maps, pid, job) ? 1 : 0;
	n = tls_add_process(&c->maps, pid, job);
	if (n < 0)
		return 1;
	printf("pid %d joined job %u with %d existing sockets\n", pid, job, n);
	return 0;
}

static int cmd_unpid(struct ctx *c, int argc, char **argv)
{
	bool process = !strcmp(argv[0], "unprocess");
	pid_t pid;
	int err;

	if (argc != 2) {
		pr_warn("usage: %s PID\n", argv[0]);
		return 2;
	}
	if (parse_pid(argv[1], &pid))
		return 2;
	if (process) {
		err = tls_del_process(&c->maps, pid);
		if (err >= 0)
			printf("pid %d left its job, %d sockets untagged\n", pid, err);
		return err < 0 ? 1 : 0;
	}
	err = tls_del_pid(&c->maps, pid);
	if (err)
		pr_warn("pid %d: %s\n", pid, strerror(-err));
	return err ? 1 : 0;
}

static int cmd_endpoint(struct ctx *c, int argc, char **argv)
{
	bool add = !strcmp(argv[0], "endpoint");
	struct tls_endpoint_key keys[2];
	char msg[256];
	__u32 job = 0;
	__u8 proto;
	int n, i;

	if (argc < (add ? 3 : 2) || argc > (add ? 4 : 3)) {
		pr_warn("usage: %s\n", add ? "endpoint ADDR:PORT JOB [tcp|udp]" :
					     "unendpoint ADDR:PORT [tcp|udp]");
		return 2;
	}
	if ((add && parse_job(argv[2], &job)) || parse_proto(argc, argv, add ? 3 : 2, &proto))
		return 2;
	n = tls_endpoint_parse(argv[1], proto, keys, msg, sizeof(msg));
	if (n < 0) {
		pr_warn("%s\n", msg);
		return 2;
	}
	for (i = 0; i < n; i++) {
		int err = add ? tls_add_endpoint(&c->maps, &keys[i], job) :
				tls_del_endpoint(&c->maps, &keys[i]);

		if (err) {
			if (!add)
				pr_warn("endpoint %s: %s\n", argv[1], strerror(-err));
			return 1;
		}
	}
	return 0;
}

static int cmd_stats(struct ctx *c, int argc, char **argv)
{
	json_object *arr = c->json ? json_object_new_array() : NULL;
	__u32 job, first = 0, last = TLS_MAX_JOBS - 1;
	int i, ret = 0;

	if (!c->json)
		printf("%-5s %-5s %14s %10s %10s %8s %8s %8s\n", "job", "band", "bytes", "packets",
		       "segs", "demoted", "promoted", "held");
	for (i = argc > 1 ? 1 : 0; i < (argc > 1 ? argc : 1); i++) {
		if (argc > 1) {
			if (parse_u32(argv[i], "job", TLS_MAX_JOBS - 1, &first)) {
				ret = 2;
				break;
			}
			last = first;
		}
		for (job = first; job <= last; job++) {
			struct tls_job_stats s;
			__u32 band = TLS_BAND_NONE;
			char bandstr[16] = "-";

			int e = tls_read_job_stats(&c->maps, job, &s);

			if (e) {
				pr_warn("cannot read the counters of job %u: %s\n", job,
					strerror(-e));
				ret = 1;
				break;
			}
			if (job != TLS_JOB_NONE)
				tls_get_job_band(&c->maps, job, &band);
			/* Listing all jobs: skip the ones that never saw a packet. */
			if (argc == 1 && job != TLS_JOB_NONE && !s.packets && band == TLS_BAND_NONE)
				continue;
			if (band != TLS_BAND_NONE)
				snprintf(bandstr, sizeof(bandstr), "%u", band);
			if (c->json) {
				json_object *o = json_object_new_object();

				json_object_object_add(o, "job", json_object_new_int64(job));
				json_object_object_add(
					o, "band",
					band == TLS_BAND_NONE ? NULL : json_object_new_int64(band));
				json_object_object_add(o, "bytes", json_object_new_uint64(s.bytes));
				json_object_object_add(o, "packets",
						       json_object_new_uint64(s.packets));
				json_object_object_add(o, "segs", json_object_new_uint64(s.segs));
				json_object_object_add(o, "demotions",
						       json_object_new_uint64(s.demotions));
				json_object_object_add(o, "promotions",
						       json_object_new_uint64(s.promotions));
				json_object_object_add(o, "held", json_object_new_uint64(s.held));
				json_object_array_add(arr, o);
			} else {
				printf("%-5u %-5s %14" PRIu64 " %10" PRIu64 " %10" PRIu64
				       " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 "\n",
				       job, bandstr, (uint64_t)s.bytes, (uint64_t)s.packets,
				       (uint64_t)s.segs, (uint64_t)s.demotions,
				       (uint64_t)s.promotions, (uint64_t)s.held);
			}
		}
	}
	if (arr) {
		if (!ret)
			printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN));
		json_object_put(arr);
	}
	return ret;
}

static int print_flow(const struct tls_flow_key *k, const struct tls_flow *f, void *ctx)
{
	json_object *arr = ctx;
	char l[64], r[64];

	tls_addr_format(k->family, k->laddr, k->lport, l, sizeof(l));
	tls_addr_format(k->family, k->raddr, k->rport, r, sizeof(r));
	if (arr) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "job", json_object_new_int64(f->job));
		json_object_object_add(o, "proto", json_object_new_int(k->proto));
		json_object_object_add(o, "local", json_object_new_string(l));
		json_object_object_add(o, "worker", json_object_new_string(r));
		json_object_object_add(o, "band", json_object_new_int64(f->band));
		json_object_object_add(o, "bytes", json_object_new_uint64(f->bytes));
		json_object_object_add(o, "packets", json_object_new_uint64(f->packets));
		json_object_object_add(o, "first_ns", json_object_new_uint64(f->first_ns));
		json_object_object_add(o, "last_ns", json_object_new_uint64(f->last_ns));
		json_object_array_add(arr, o);
	} else {
		printf("%-5u %-3s %-46s %-46s %-4d %14" PRIu64 " %10" PRIu64 "\n", f->job,
		       k->proto == IPPROTO_TCP ? "tcp" : "udp", l, r,
		       f->band == TLS_BAND_NONE ? -1 : (int)f->band, (uint64_t)f->bytes,
		       (uint64_t)f->packets);
	}
	return 0;
}

static int cmd_flows(struct ctx *c, int argc, char **argv)
{
	json_object *arr = c->json ? json_object_new_array() : NULL;
	int err;

	(void)argv;
	if (argc != 1) {
		pr_warn("flows takes no arguments\n");
		json_object_put(arr);
		return 2;
	}
	if (!arr)
		printf("%-5s %-3s %-46s %-46s %-4s %14s %10s\n", "job", "pro", "local", "worker",
		       "band", "bytes", "packets");
	err = tls_for_each_flow(&c->maps, print_flow, arr);
	if (arr) {
		printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN));
		json_object_put(arr);
	}
	return err ? 1 : 0;
}

/* For benchmarks: CLOCK_MONOTONIC in ns, the clock `watch` stamps with. */
static int cmd_clock(struct ctx *c, int argc, char **argv)
{
	struct timespec now;

	(void)c;
	(void)argc;
	(void)argv;
	clock_gettime(CLOCK_MONOTONIC, &now);
	printf("%lld\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
	return 0;
}

/* For benchmarks: the counters over time, one line per sample. */
static int cmd_watch(struct ctx *c, int argc, char **argv)
{
	__u32 ms, secs, jobs[64];
	struct timespec start, now, next;
	int i, n = argc - 3;

	if (argc < 4 || n > 64) {
		pr_warn("usage: watch MS SECS JOB... (at most 64 jobs)\n");
		return 2;
	}
	if (parse_u32(argv[1], "interval (ms)", 60000, &ms) || !ms ||
	    parse_u32(argv[2], "duration (s)", 86400, &secs))
		return 2;
	for (i = 0; i < n; i++)
		if (parse_u32(argv[3 + i], "job", TLS_MAX_JOBS - 1, &jobs[i]))
			return 2;
	clock_gettime(CLOCK_MONOTONIC, &start);
	next = start;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= (time_t)secs)
			break;
		printf("%lld", (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
		for (i = 0; i < n; i++) {
			struct tls_job_stats s = { 0 };
			__u32 band = TLS_BAND_NONE;

			tls_read_job_stats(&c->maps, jobs[i], &s);
			if (jobs[i] != TLS_JOB_NONE)
				tls_get_job_band(&c->maps, jobs[i], &band);
			printf(" %d %llu", band == TLS_BAND_NONE ? -1 : (int)band,
			       (unsigned long long)s.bytes);
		}
		putchar('\n');
		/* absolute deadlines: no drift from the time a sample takes */
		next.tv_nsec += (long)ms * 1000000;
		next.tv_sec += next.tv_nsec / 1000000000;
		next.tv_nsec %= 1000000000;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return fflush(stdout) ? 1 : 0;
}

static const struct command {
	const char *name;
	int (*fn)(struct ctx *c, int argc, char **argv);
	bool needs_maps;
} commands[] = {
	{ "attach", cmd_attach, false },    { "detach", cmd_detach, false },
	{ "band", cmd_band, true },	    { "job", cmd_job, true },
	{ "free", cmd_free, true },
	{ "process", cmd_pid, true },	    { "pid", cmd_pid, true },
	{ "unprocess", cmd_unpid, true },   { "unpid", cmd_unpid, true },
	{ "endpoint", cmd_endpoint, true }, { "unendpoint", cmd_endpoint, true },
	{ "stats", cmd_stats, true },	    { "flows", cmd_flows, true },
	{ "watch", cmd_watch, true },	    { "clock", cmd_clock, false },
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interface", required_argument, NULL, 'i' },
		{ "pin-dir", required_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct ctx c = { 0 };
	char pin_dir[4096];
	int opt, verbose = 0, ret;
	size_t i;

	tls_maps_init(&c.maps);
	/* Stop at the command: its own options follow it. */
	while ((opt = getopt_long(argc, argv, "+i:P:jvVh", opts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			c.ifname = optarg;
			break;
		case 'P':
			c.pin_dir = optarg;
			break;
		case 'j':
			c.json = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'V':
			printf("tls-classifier %s\n", TLS_VERSION);
			return 0;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	tls_log_set_ident("tls-classifier");
	tls_log_set_level(verbose > 1 ? TLS_LOG_DEBUG : verbose ? TLS_LOG_INFO : TLS_LOG_WARN);
	tls_log_libbpf();
	if (optind >= argc) {
		pr_warn("no command given (try --help)\n");
		return 2;
	}
	if (!c.ifname) {
		pr_warn("no interface given: -i IFACE is required\n");
		return 2;
	}
	if (!c.pin_dir) {
		if (tls_pin_dir_for(c.ifname, pin_dir, sizeof(pin_dir))) {
			pr_warn("interface name '%s' too long\n", c.ifname);
			return 2;
		}
		c.pin_dir = pin_dir;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[optind], commands[i].name))
			continue;
		if (commands[i].needs_maps && tls_maps_open_pinned(c.pin_dir, &c.maps))
			return 1;
		ret = commands[i].fn(&c, argc - optind, argv + optind);
		tls_maps_close(&c.maps);
		return ret;
	}
	pr_warn("unknown command '%s' (try --help)\n", argv[optind]);
	return 2;
}
