// SPDX-License-Identifier: GPL-2.0-only
/*
 * tlsctl: talks to a running tlsd through its control socket (the protocol
 * is lib/client/ctl_proto.h). iproute2's habits: subcommands, a table by default,
 * -j for JSON, -p to pretty-print it, unique prefixes of commands.
 *
 * Exit status: 0 ok, 1 tlsd refused or failed the request, 2 bad usage,
 * 3 tlsd cannot be reached (not running, permission denied, no answer).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "ctl_client.h"
#include "ctl_proto.h"
#include "json_get.h"
#include "policy.h"
#include "stats_export.h"
#include "stats_merge.h"
#include "stats_types.h"
#include "units.h"

#define EXIT_DAEMON  TLS_CLIENT_REFUSED
#define EXIT_USAGE   TLS_CLIENT_USAGE
#define EXIT_UNREACH TLS_CLIENT_UNREACH

struct ctx {
	struct tls_client cl;
	bool json, pretty;
};

struct command {
	const char *name;
	int (*run)(struct ctx *c, int argc, char **argv);
	const char *help;
};

static const char usage_text[] =
	"Usage: tlsctl [OPTIONS] COMMAND [ARGS]\n"
	"Talks to tlsd, the traffic scheduler of colocated parameter servers.\n"
	"\n"
	"Options:\n"
	"  -j, --json          JSON output: tlsd's reply as it sent it\n"
	"  -p, --pretty        pretty-print the JSON (implies -j)\n"
	"  -s, --socket PATH   tlsd's control socket (default " TLS_CTL_SOCK_DEFAULT ")\n"
	"  -V, --version       print the version\n"
	"  -h, --help          this text\n"
	"\n"
	"Commands (a unique prefix will do; COMMAND --help for each):\n"
	"  status                          what tlsd runs: interface, policy, jobs, tree\n"
	"  jobs                            the jobs, their bands and counters\n"
	"  policy [fifo|one|roundrobin|bursts] [interval DURATION]\n"
	"  policy reset                    show, switch live, or go back to the configuration's\n"
	"  stats [JOB] [--csv] [--follow] [--direction D]\n"
	"                                  contention statistics (spotDNN's B_wk, P)\n"
	"  calibrate [JOB] [--source S] [--direction D] [--types FILE]\n"
	"            [--format F [--param SIZE] [-o FILE]]\n"
	"                                  spotDNN's bandwidth model, fitted (F: table,\n"
	"                                  json, csv, or spotdnn: its calibration module;\n"
	"                                  D: pull, the default, or push; B_req per\n"
	"                                  instance type with --types)\n"
	"  calibrate --merge FILE... [--format F [--param SIZE] [-o FILE]]\n"
	"                                  several PS hosts' -j exports as one (B_ps summed)\n"
	"  metrics [--openmetrics] [-o FILE]\n"
	"                                  the metrics text (Prometheus; node_exporter's\n"
	"                                  textfile collector)\n"
	"\n"
	"Exit status: 0 ok, 1 tlsd refused the request, 2 bad usage, 3 tlsd cannot\n"
	"be reached (not running, permission denied, no answer).\n";

static void __attribute__((format(printf, 1, 2))) err_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("tlsctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int __attribute__((format(printf, 2, 3))) usage_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("tlsctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'tlsctl %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
	return EXIT_USAGE;
}

/* ---------------------------------------------------------------------- */
/* Talking to tlsd                                                         */

/* One request, its reply: 0 and *reply, or an exit status after saying why. */
static int call(struct ctx *c, const char *cmd, struct json_object *req, struct json_object **reply)
{
	int err = tls_client_call(&c->cl, cmd, req, reply);

	if (err)
		err_msg("%s", c->cl.err);
	return err;
}

/* The next reply of a follow stream; timeout_ms < 0 waits for ever. */
static int next_reply(struct ctx *c, int timeout_ms, struct json_object **out)
{
	int err = tls_client_next(&c->cl, timeout_ms, out);

	if (err)
		err_msg("%s", c->cl.err);
	return err;
}

static int reply_error(struct ctx *c, const char *cmd, struct json_object *r)
{
	int err = tls_client_reply_error(&c->cl, cmd, r);

	err_msg("%s", c->cl.err);
	return err;
}

static void print_json(const struct ctx *c, struct json_object *o)
{
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE;

	flags |= c->pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED :
			     JSON_C_TO_STRING_PLAIN;
	printf("%s\n", json_object_to_json_string_ext(o, flags));
	fflush(stdout);
}

/* ---------------------------------------------------------------------- */
/* Formatting                                                              */

static const char *duration(uint64_t ns, char *buf, size_t len)
{
	tls_format_duration(ns, buf, (unsigned int)len);
	return buf;
}

static const char *uptime(uint64_t ns, char *buf, size_t len)
{
	uint64_t s = ns / 1000000000ULL;

	if (s >= 86400)
		snprintf(buf, len, "%" PRIu64 "d %02" PRIu64 "h%02" PRIu64 "m", s / 86400,
			 s / 3600 % 24, s / 60 % 60);
	else if (s >= 3600)
		snprintf(buf, len, "%" PRIu64 "h%02" PRIu64 "m%02" PRIu64 "s", s / 3600,
			 s / 60 % 60, s % 60);
	else if (s >= 60)
		snprintf(buf, len, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
	else
		snprintf(buf, len, "%.1fs", ns / 1e9);
	return buf;
}

/* v with prec decimals; "-" if unknown (NaN). */
static const char *fixed(double v, int prec, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", prec, v);
	return buf;
}

/* MB/s (10^6 bytes, spotDNN's unit) of a B/s figure. */
static const char *mbps(double bytes_per_s, char *buf, size_t len)
{
	return fixed(bytes_per_s / 1e6, 2, buf, len);
}

static const char *frac(double v, char *buf, size_t len)
{
	return fixed(v, 3, buf, len);
}

/* ---------------------------------------------------------------------- */
/* Commands                                                                */

static bool wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	return false;
}

static int no_args(const char *cmd, int argc, char **argv)
{
	if (argc > 1)
		return usage_err(cmd, "%s: unexpected argument '%s'", cmd, argv[1]);
	return 0;
}

/* The kernel features, one line each: "sk_iter  missing (program load:
 * Operation not permitted): instead ..." (tlsd older than this has none). */
static void print_features(struct json_object *a)
{
	size_t i, n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;

	if (n)
		printf("kernel features\n");
	for (i = 0; i < n; i++) {
		struct json_object *f = json_object_array_get_idx(a, i);

		printf("  %-15s %s", tls_json_str(f, "name"), tls_json_str(f, "state"));
		if (!strcmp(tls_json_str(f, "state"), "missing"))
			printf(" (%s: %s)%s%s", tls_json_str(f, "stage"), tls_json_str(f, "error"),
			       tls_json_get(f, "fallback") ? ": instead " : ", required",
			       tls_json_get(f, "fallback") ? tls_json_str(f, "fallback") : "");
		printf("\n");
	}
}

/* The self-healing tree (tlsd older than this has none): its state, then
 * the heals and the last one's reason. */
static void print_tree(struct json_object *t)
{
	struct json_object *last = tls_json_get(t, "last_heal");
	const char *st = tls_json_str(t, "state");
	char a[64], b[64];

	if (!t)
		return;
	if (!strcmp(st, "absent"))
		printf("tree           interface absent for %s: scheduled again when it comes back\n",
		       uptime(tls_json_u64(t, "since_ns"), a, sizeof(a)));
	else if (!strcmp(st, "yielded"))
		printf("tree           yielded %s ago: %s; SIGHUP or a restart takes it back\n",
		       uptime(tls_json_u64(t, "since_ns"), a, sizeof(a)), tls_json_str(t, "yield_reason"));
	else if (json_object_get_boolean(tls_json_get(t, "watched")))
		printf("tree           %s\n", st);
	else
		printf("tree           not watched (kernel feature rtnl_watch missing): %s when last "
		       "checked (start or SIGHUP), not healed meanwhile\n",
		       st);
	printf("heals          %" PRIu64 " (%" PRId64 " of %" PRId64 " allowed within %s)",
	       tls_json_u64(t, "heals"), tls_json_int(t, "heals_recent"), tls_json_int(t, "heal_limit"),
	       duration(tls_json_u64(t, "heal_window_ns"), a, sizeof(a)));
	if (last)
		printf("; last %s ago: %s (rebuilt in %s ms)",
		       uptime(tls_json_u64(last, "ago_ns"), a, sizeof(a)), tls_json_str(last, "reason"),
		       fixed(tls_json_u64(last, "took_ns") / 1e6, 1, b, sizeof(b)));
	printf("\n");
	if (tls_json_u64(t, "failed_heals"))
		printf("heals failed   %" PRIu64 "\n", tls_json_u64(t, "failed_heals"));
	if (tls_json_u64(t, "interface_returns"))
		printf("interface back %" PRIu64 " time%s\n", tls_json_u64(t, "interface_returns"),
		       tls_json_u64(t, "interface_returns") == 1 ? "" : "s");
	if (tls_json_u64(t, "rate_changes"))
		printf("rate changes   %" PRIu64 " (the link's speed, followed)\n",
		       tls_json_u64(t, "rate_changes"));
}

/* Policy bursts's order, from the status's "bursts" (absent: another
 * policy, or a tlsd older than the field). */
static void print_bursts(struct json_object *b)
{
	struct json_object *a = b ? tls_json_get(b, "order") : NULL;
	size_t n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;

	if (!b)
		return;
	printf("burst order    %zu job%s", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(a, i);

		printf("%s%s (band %" PRIu64 ")", i ? ", " : ": ",
		       tls_json_get(e, "job") ? tls_json_str(e, "job") : "-",
		       tls_json_u64(e, "band"));
	}
	printf("\nburst counts   %" PRIu64 " compactions, %" PRIu64
	       " resumed (since the order was reset)\n",
	       tls_json_u64(b, "compactions"), tls_json_u64(b, "resumes"));
}

static int cmd_status(struct ctx *c, int argc, char **argv)
{
	struct json_object *r;
	char a[64], b[64];
	bool observe;
	int err = no_args("status", argc, argv);

	if (!err)
		err = call(c, "status", tls_client_request(TLS_CTL_C_STATUS), &r);
	if (err)
		return err;
	if (c->json) {
		print_json(c, r);
		json_object_put(r);
		return 0;
	}
	tls_format_rate(tls_json_u64(r, "link_rate_bps"), a, sizeof(a));
	printf("interface      %s\n", tls_json_str(r, "interface"));
	printf("link rate      %s\n", a);
	/* "-" from a tlsd older than the mode setting: it schedules */
	observe = !strcmp(tls_json_str(r, "mode"), "observe");
	printf("mode           %s\n", observe ? "observe (classify and count: no HTB tree, "
						"root qdisc untouched, no packet steered)" :
						"schedule");
	printf("policy         %s%s\n", tls_json_str(r, "policy"),
	       observe ? " (not applied: observe mode)" :
	       strcmp(tls_json_str(r, "policy_source"), "tlsctl") ? "" :
							 " (set by tlsctl)");
	printf("interval       %s\n", duration(tls_json_u64(r, "interval_ns"), a, sizeof(a)));
	printf("bands          %" PRId64 "\n", tls_json_int(r, "bands"));
	printf("jobs           %" PRId64 "\n", tls_json_int(r, "jobs"));
	printf("step           %" PRIu64 "\n", tls_json_u64(r, "step"));
	printf("uptime         %s\n", uptime(tls_json_u64(r, "uptime_ns"), b, sizeof(b)));
	printf("pid            %" PRId64 "\n", tls_json_int(r, "pid"));
	printf("version        %s\n", tls_json_str(r, "tlsd_version"));
	printf("control group  %s\n",
	       tls_json_get(r, "control_group") ? tls_json_str(r, "control_group") : "- (root only)");
	if (tls_json_get(r, "stats_period_ns"))
		printf("statistics     every %s\n",
		       duration(tls_json_u64(r, "stats_period_ns"), a, sizeof(a)));
	else
		printf("statistics     off\n");
	print_tree(tls_json_get(r, "tree"));
	print_bursts(tls_json_get(r, "bursts"));
	print_features(tls_json_get(r, "features"));
	json_object_put(r);
	return 0;
}

/* "9000,9001" or "-". */
static const char *int_list(struct json_object *a, char *buf, size_t len)
{
	size_t i, n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
	size_t off = 0;

	buf[0] = '\0';
	for (i = 0; i < n && off + 1 < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%" PRId64, i ? "," : "",
					json_object_get_int64(json_object_array_get_idx(a, i)));
	if (!n)
		snprintf(buf, len, "-");
	return buf;
}

static int cmd_jobs(struct ctx *c, int argc, char **argv)
{
	struct json_object *r, *jobs;
	char ports[128], pids[128], band[16];
	size_t i, n;
	int err = no_args("jobs", argc, argv);

	if (!err)
		err = call(c, "jobs", tls_client_request(TLS_CTL_C_JOBS), &r);
	if (err)
		return err;
	if (c->json) {
		print_json(c, r);
		json_object_put(r);
		return 0;
	}
	jobs = tls_json_get(r, "jobs");
	n = json_object_is_type(jobs, json_type_array) ? json_object_array_length(jobs) : 0;
	printf("%-5s %-20s %-5s %-10s %-16s %-12s %14s %12s\n", "ID", "NAME", "BAND", "ORIGIN",
	       "PORTS", "PIDS", "BYTES", "PACKETS");
	for (i = 0; i < n; i++) {
		struct json_object *j = json_object_array_get_idx(jobs, i);

		if (tls_json_get(j, "band"))
			snprintf(band, sizeof(band), "%" PRId64, tls_json_int(j, "band"));
		else
			snprintf(band, sizeof(band), "-");
		printf("%-5" PRId64 " %-20s %-5s %-10s %-16s %-12s %14" PRIu64 " %12" PRIu64 "\n",
		       tls_json_int(j, "id"), tls_json_str(j, "name"), band, tls_json_str(j, "origin"),
		       int_list(tls_json_get(j, "ports"), ports, sizeof(ports)),
		       int_list(tls_json_get(j, "pids"), pids, sizeof(pids)), tls_json_u64(j, "bytes"),
		       tls_json_u64(j, "packets"));
	}
	if (!n)
		printf("(no jobs)\n");
	json_object_put(r);
	return 0;
}

static int cmd_policy(struct ctx *c, int argc, char **argv)
{
	struct json_object *req = tls_client_request(TLS_CTL_C_POLICY), *r;
	enum tls_policy p;
	char a[64], b[64];
	uint64_t ns;
	int i, err;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];

		if (!strcmp(arg, "interval")) {
			if (++i == argc) {
				json_object_put(req);
				return usage_err("policy", "policy: interval needs a duration, "
							   "e.g. 500ms or 20s");
			}
			if (tls_parse_duration(argv[i], &ns) || ns < TLS_INTERVAL_MIN_NS) {
				json_object_put(req);
				return usage_err("policy",
						 "policy: interval '%s' is not a duration of at "
						 "least 10ms (e.g. 500ms, 20s)",
						 argv[i]);
			}
			json_object_object_add(req, TLS_CTL_F_INTERVAL,
					       json_object_new_string(argv[i]));
		} else if (!strcmp(arg, "reset") && argc == 2) {
			json_object_object_add(req, TLS_CTL_F_RESET, json_object_new_boolean(1));
		} else if (!tls_policy_parse(arg, &p) && !tls_json_get(req, TLS_CTL_F_POLICY)) {
			json_object_object_add(req, TLS_CTL_F_POLICY,
					       json_object_new_string(tls_policy_name(p)));
		} else {
			json_object_put(req);
			if (!strcmp(arg, "reset"))
				return usage_err("policy", "policy: reset takes no other argument");
			return usage_err("policy",
					 "policy: '%s' is not one of " TLS_POLICY_NAMES ", "
					 "interval DURATION, reset",
					 arg);
		}
	}
	err = call(c, "policy", req, &r);
	if (err)
		return err;
	if (c->json) {
		print_json(c, r);
		json_object_put(r);
		return 0;
	}
	printf("policy %s, interval %s", tls_json_str(r, "policy"),
	       duration(tls_json_u64(r, "interval_ns"), a, sizeof(a)));
	if (!strcmp(tls_json_str(r, "mode"), "observe"))
		printf(" (not applied: tlsd observes only)");
	if (!strcmp(tls_json_str(r, "policy_source"), "tlsctl"))
		printf(" (set by tlsctl; the configuration says %s, %s)",
		       tls_json_str(r, "config_policy"),
		       duration(tls_json_u64(r, "config_interval_ns"), b, sizeof(b)));
	printf("\n");
	json_object_put(r);
	return 0;
}

/* The statistics objects of a reply, read back with stats_export.c's tables
 * (tlsd wrote them with the same). */
static int bad_reply(const char *cmd, const char *err)
{
	err_msg("%s: tlsd's reply does not read: %s (a tlsd of another version?)", cmd, err);
	return EXIT_DAEMON;
}

static const char *rate(double bytes_per_s, char *buf, size_t len)
{
	return mbps(bytes_per_s, buf, len);
}

/* Which direction the table is of, and S_param as measured. */
static void stats_print_direction(struct json_object *r)
{
	struct json_object *sp = tls_json_get(r, "s_param_bytes");
	char s[32];

	printf("direction: %s", tls_json_get(r, TLS_CTL_F_DIRECTION) ? tls_json_str(r, TLS_CTL_F_DIRECTION) :
							      "pull");
	if (json_object_is_type(sp, json_type_double) || json_object_is_type(sp, json_type_int))
		printf("; S_param %s MB, the mean of %" PRId64 " pushes\n",
		       rate(json_object_get_double(sp), s, sizeof(s)), tls_json_int(r, "s_param_bursts"));
	else
		printf("; S_param not measured (no push has ended)\n");
}

static int stats_print(struct ctx *c, struct json_object *r, bool csv, bool header)
{
	struct json_object *ja = tls_json_get(r, "jobs"), *fa = tls_json_get(r, "flows");
	struct tls_stats_link_info link;
	struct tls_stats_job_info j;
	struct tls_stats_flow_info f;
	char err[256], s[6][32], ep[64];
	size_t i, n;
	double utc;

	if (c->json) {
		print_json(c, r);
		return 0;
	}
	if (tls_stats_link_from_json(tls_json_get(r, "link"), &link, err, sizeof(err)) ||
	    !json_object_is_type(ja, json_type_array) || !json_object_is_type(fa, json_type_array))
		return bad_reply("stats", err);
	/* wall-clock time first, for joins with CM-DARE's logs (UTC, seconds
	 * since the epoch), then the monotonic time_s it is taken from */
	utc = link.last_ns / 1e9 + tls_json_num(r, "utc_offset_s");
	if (csv && header) {
		fputs("utc_s,", stdout);
		tls_stats_csv_header(stdout);
	}
	if (!csv) {
		printf("link: B_ps %s MB/s (%s), now %s MB/s%s; %" PRIu64
		       " samples every %.0f ms\n",
		       rate(link.b_ps, s[0], 32),
		       link.b_ps_measured ? "measured while saturated" : "the configured rate",
		       rate(link.rate, s[1], 32), link.saturated ? ", saturated" : "", link.samples,
		       tls_json_num(r, "period_s") * 1e3);
		printf("%-5s %-20s %4s %10s %10s %10s %9s %9s\n", "JOB", "NAME", "N", "RATE",
		       "B_WK", "B_REQ", "P_DIRECT", "P_SOLVED");
	}
	n = json_object_array_length(ja);
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(ja, i);

		if (tls_stats_job_from_json(o, &j, err, sizeof(err)))
			return bad_reply("stats", err);
		if (csv) {
			printf("%.6f,", utc);
			tls_stats_csv_job(stdout, link.last_ns, &j);
			continue;
		}
		printf("%-5u %-20s %4u %10s %10s %10s %9s %9s\n", j.job,
		       tls_json_get(o, "name") ? tls_json_str(o, "name") : "-", j.n, rate(j.rate_avg, s[0], 32),
		       rate(j.est.b_wk, s[1], 32), rate(j.est.b_req, s[2], 32),
		       frac(j.est.p_direct, s[3], 32), frac(j.est.p_solved, s[4], 32));
	}
	n = json_object_array_length(fa);
	if (!csv && n)
		printf("\n%-5s %-28s %4s %10s %10s %10s %9s %9s\n", "JOB", "WORKER", "N", "RATE",
		       "B_WK", "B_REQ", "P_DIRECT", "P_SOLVED");
	for (i = 0; i < n; i++) {
		if (tls_stats_flow_from_json(json_object_array_get_idx(fa, i), &f, err,
					     sizeof(err)))
			return bad_reply("stats", err);
		if (csv) {
			printf("%.6f,", utc);
			tls_stats_csv_flow(stdout, link.last_ns, &f);
			continue;
		}
		tls_flow_endpoint_str(&f.key, true, ep, sizeof(ep));
		printf("%-5u %-28s %4u %10s %10s %10s %9s %9s\n", f.job, ep, f.n,
		       rate(f.rate_avg, s[0], 32), rate(f.est.b_wk, s[1], 32),
		       rate(f.est.b_req, s[2], 32), frac(f.est.p_direct, s[3], 32),
		       frac(f.est.p_solved, s[4], 32));
	}
	if (!csv)
		printf("(rates in MB/s = 10^6 bytes/s, smoothed; B_wk, B_req, P since tlsd "
		       "started)\n");
	if (!csv)
		stats_print_direction(r);
	fflush(stdout);
	return ferror(stdout) ? EXIT_DAEMON : 0;
}

static volatile sig_atomic_t stop_follow;

static void on_signal(int sig)
{
	(void)sig;
	stop_follow = 1;
}

/* JOB on the command line: all digits is an id, anything else a name. */
static void add_job(struct json_object *req, const char *job)
{
	char *end;
	unsigned long id = strtoul(job, &end, 10);

	json_object_object_add(req, TLS_CTL_F_JOB,
			       *job >= '0' && *job <= '9' && !*end && id < 1u << 31 ?
				       json_object_new_int((int)id) :
				       json_object_new_string(job));
}

/* --direction pull|push into the request; 0, or a usage error for cmd. */
static int add_direction(struct json_object *req, const char *cmd, const char *d)
{
	if (strcmp(d, "pull") && strcmp(d, "push"))
		return usage_err(cmd, "%s: direction '%s' is not one of pull, push", cmd, d);
	json_object_object_add(req, TLS_CTL_F_DIRECTION, json_object_new_string(d));
	return 0;
}

static int cmd_stats(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "csv", no_argument, NULL, 'c' },
		{ "follow", no_argument, NULL, 'f' },
		{ "direction", required_argument, NULL, 'd' },
		{},
	};
	struct json_object *req = tls_client_request(TLS_CTL_C_STATS), *r;
	bool csv = false, follow = false, first = true;
	struct sigaction sa = { .sa_handler = on_signal };
	int opt, err;

	optind = 0; /* a fresh scan */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (opt == 'c') {
			csv = true;
		} else if (opt == 'f') {
			follow = true;
		} else if (opt == 'd') {
			err = add_direction(req, "stats", optarg);
			if (err) {
				json_object_put(req);
				return err;
			}
		} else {
			json_object_put(req);
			return usage_err("stats", "stats: unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind > 1) {
		json_object_put(req);
		return usage_err("stats", "stats: unexpected argument '%s'", argv[optind + 1]);
	}
	if (csv && c->json) {
		json_object_put(req);
		return usage_err("stats", "stats: --csv and -j exclude each other");
	}
	if (optind < argc)
		add_job(req, argv[optind]);
	if (follow) {
		json_object_object_add(req, TLS_CTL_F_FOLLOW, json_object_new_boolean(1));
		/* no SA_RESTART: a signal ends the wait for the next sample */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		signal(SIGPIPE, SIG_IGN);
	}
	err = call(c, "stats", req, &r);
	while (!err) {
		if (!csv && !first && !c->json)
			printf("\n");
		err = stats_print(c, r, csv, first);
		json_object_put(r);
		first = false;
		if (err || !follow || stop_follow)
			break;
		err = next_reply(c, -1, &r);
		if (stop_follow) { /* interrupted: done */
			if (!err)
				json_object_put(r);
			return 0;
		}
		if (!err && !json_object_get_boolean(tls_json_get(r, TLS_CTL_F_OK))) {
			err = reply_error(c, "stats", r);
			json_object_put(r);
		}
	}
	return err;
}

static int calibrate_table(struct json_object *r)
{
	struct json_object *oa = tls_json_get(r, "observations"), *fit = tls_json_get(r, "fit");
	struct tls_stats_calib cal;
	struct tls_stats_obs ob;
	char err[256], s[6][32];
	size_t i, n;

	if (tls_stats_calib_from_json(r, &cal, err, sizeof(err)) ||
	    !json_object_is_type(oa, json_type_array))
		return bad_reply("calibrate", err);
	printf("B_ps (bps)                 %s MB/s (%s)\n", rate(cal.link.b_ps, s[0], 32),
	       cal.link.b_ps_measured ? "measured while saturated" : "the configured rate");
	printf("B_req (instance_bandwith)  %s MB/s\n", rate(cal.b_req, s[1], 32));
	if (cal.fit_err)
		printf("fit                        none: %s\n", tls_json_str(fit, "error"));
	else
		printf("fit (P %s)            P(n) = min(%.4f*sqrt(n) - %.4f, 1), rms %.4f, "
		       "%u observations, n = %u..%u\n",
		       cal.source == TLS_FIT_DIRECT ? "direct" : "solved", cal.fit.a, cal.fit.b,
		       cal.fit.rms, cal.fit.nobs, cal.fit.n_min, cal.fit.n_max);
	n = json_object_array_length(oa);
	printf("\n%-5s %4s %10s %10s %10s %9s %9s  %s\n", "JOB", "N", "ACTIVE_S", "B_WK", "B_REQ",
	       "P_DIRECT", "P_SOLVED", "USE");
	for (i = 0; i < n; i++) {
		if (tls_stats_obs_from_json(json_object_array_get_idx(oa, i), &ob, err,
					    sizeof(err)))
			return bad_reply("calibrate", err);
		printf("%-5u %4u %10.1f %10s %10s %9s %9s  %s\n", ob.job, ob.n,
		       ob.acc.active_ns / 1e9, rate(ob.est.b_wk, s[0], 32),
		       rate(ob.est.b_req, s[1], 32), frac(ob.est.p_direct, s[2], 32),
		       frac(ob.est.p_solved, s[3], 32), tls_obs_use_str(ob.use));
	}
	if (!n)
		printf("(no observations yet)\n");
	printf("(MB/s = 10^6 bytes/s)\n");
	stats_print_direction(r);
	return 0;
}

/* FILE whole or not at all: written beside it and renamed, since
 * node_exporter's textfile collector may read it at any moment (and reads
 * only names ending in .prom, which the temporary one does not), and a
 * spotDNN module that could not be made complete leaves the one before. */
static int write_file(const char *cmd, const char *path, const char *text, size_t len)
{
	char tmp[4096];
	size_t off = 0;
	int fd, e = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= sizeof(tmp)) {
		err_msg("%s: output path %s is too long", cmd, path);
		return EXIT_USAGE;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		err_msg("%s: cannot create %s: %s", cmd, tmp, strerror(errno));
		return EXIT_DAEMON;
	}
	while (off < len && !e) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno != EINTR)
			e = errno;
		else if (n > 0)
			off += (size_t)n;
	}
	if (close(fd) && !e)
		e = errno;
	if (!e && rename(tmp, path))
		e = errno;
	if (e) {
		unlink(tmp);
		err_msg("%s: cannot write %s: %s", cmd, path, strerror(e));
		return EXIT_DAEMON;
	}
	return 0;
}

/* The jobs tlsd runs (its `jobs` reply), on a connection of its own. */
static int jobs_list(struct ctx *c, struct json_object **jobs, struct json_object **reply)
{
	int err = call(c, "calibrate", tls_client_request(TLS_CTL_C_JOBS), reply);

	tls_client_disconnect(&c->cl);
	if (err)
		return err;
	*jobs = tls_json_get(*reply, "jobs");
	if (!json_object_is_type(*jobs, json_type_array)) {
		json_object_put(*reply);
		return bad_reply("calibrate", "\"jobs\": missing or not an array");
	}
	return 0;
}

/* "1 ps, 2 other" */
static void jobs_str(struct json_object *jobs, char *buf, size_t len)
{
	size_t i, off = 0, n = json_object_array_length(jobs);

	buf[0] = '\0';
	for (i = 0; i < n && off + 1 < len; i++) {
		struct json_object *j = json_object_array_get_idx(jobs, i);

		off += (size_t)snprintf(buf + off, len - off, "%s%" PRId64 " %s", i ? ", " : "",
					tls_json_int(j, "id"), tls_json_str(j, "name"));
	}
}

static const char *job_name_of(struct json_object *jobs, uint32_t id)
{
	size_t i, n = json_object_array_length(jobs);

	for (i = 0; i < n; i++) {
		struct json_object *j = json_object_array_get_idx(jobs, i);

		if (tls_json_int(j, "id") == (int64_t)id)
			return tls_json_str(j, "name");
	}
	return NULL;
}

static int spotdnn_emit(const struct tls_stats_calib *cal, double param, const char *name,
			const char *out, struct json_object *r);

/* A fresh connection for the next request (tlsd answers one per call). */
static void reconnect(struct ctx *c)
{
	tls_client_disconnect(&c->cl);
}

/* The file at path, NUL-terminated, at most 1 MiB; NULL with errno. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = f ? malloc((1 << 20) + 1) : NULL;
	size_t n = 0;

	if (buf) {
		n = fread(buf, 1, 1 << 20, f);
		if (ferror(f) || !feof(f)) {
			free(buf);
			buf = NULL;
			errno = ferror(f) ? EIO : EFBIG;
		} else {
			buf[n] = '\0';
		}
	}
	if (f)
		fclose(f);
	return buf;
}

/*
 * B_req per instance type (--types FILE: worker addresses to types,
 * stats_types.h) from the job's worker flows, added to the calibration r
 * as "b_req_by_type" and "types_unmapped_flows".
 */
static int types_add(struct ctx *c, const char *job, const char *path, struct json_object *r)
{
	struct json_object *req = tls_client_request(TLS_CTL_C_STATS), *sr = NULL, *fa, *arr;
	struct tls_stats_flow_info *fl = NULL;
	struct tls_type_b_req *t = NULL;
	struct tls_type_map m = {};
	size_t n = 0, nt = 0, unmapped = 0;
	char err[256], *text = slurp(path);
	int ret;

	if (!text) {
		json_object_put(req);
		err_msg("calibrate: --types %s: %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	ret = tls_type_map_parse(text, &m, err, sizeof(err));
	free(text);
	if (ret) {
		json_object_put(req);
		err_msg("calibrate: --types %s: %s", path, ret == -EINVAL ? err : strerror(-ret));
		return ret == -EINVAL ? EXIT_USAGE : EXIT_DAEMON;
	}
	if (job)
		add_job(req, job);
	reconnect(c);
	ret = call(c, "calibrate", req, &sr);
	fa = ret ? NULL : tls_json_get(sr, "flows");
	if (!ret && !json_object_is_type(fa, json_type_array))
		ret = bad_reply("calibrate", "\"flows\": missing or not an array");
	if (!ret) {
		n = json_object_array_length(fa);
		fl = calloc(n + 1, sizeof(*fl));
		for (size_t i = 0; fl && !ret && i < n; i++)
			if (tls_stats_flow_from_json(json_object_array_get_idx(fa, i), &fl[i], err,
						     sizeof(err)))
				ret = bad_reply("calibrate", err);
		if (!ret && (!fl || tls_type_b_req(&m, fl, n, &t, &nt, &unmapped)))
			ret = EXIT_DAEMON;
	}
	arr = ret ? NULL : json_object_new_array();
	for (size_t k = 0; arr && k < nt; k++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "type", json_object_new_string(t[k].type));
		json_object_object_add(o, "hosts", json_object_new_int64(t[k].hosts));
		json_object_object_add(o, "b_req_Bps",
				       isfinite(t[k].b_req) ? json_object_new_double(t[k].b_req) :
							      NULL);
		json_object_array_add(arr, o);
	}
	if (arr) {
		json_object_object_add(r, "b_req_by_type", arr);
		json_object_object_add(r, "types_unmapped_flows", json_object_new_int64(unmapped));
	} else if (!ret) {
		err_msg("calibrate: out of memory");
		ret = EXIT_DAEMON;
	}
	free(t);
	free(fl);
	tls_type_map_free(&m);
	json_object_put(sr);
	return ret;
}

/* B_req per type under the table, if asked for. */
static void types_table(struct json_object *r)
{
	struct json_object *arr = tls_json_get(r, "b_req_by_type");
	char s[32];

	if (!json_object_is_type(arr, json_type_array))
		return;
	printf("\n%-20s %6s %10s\n", "INSTANCE TYPE", "HOSTS", "B_REQ");
	for (size_t k = 0; k < json_object_array_length(arr); k++) {
		struct json_object *o = json_object_array_get_idx(arr, k), *v;

		json_object_object_get_ex(o, "b_req_Bps", &v);
		printf("%-20s %6" PRId64 " %10s\n", tls_json_str(o, "type"), tls_json_int(o, "hosts"),
		       rate(v ? json_object_get_double(v) : NAN, s, sizeof(s)));
	}
	printf("(flows of hosts not in the file: %" PRId64 ")\n",
	       tls_json_int(r, "types_unmapped_flows"));
}

/* B_req per type in the spotDNN module: a dict by spotDNN's instance_type
 * names, in MB/s (spotDNN's own instance_bandwith stays the scalar). */
static void types_spotdnn(FILE *f, struct json_object *r)
{
	struct json_object *arr = tls_json_get(r, "b_req_by_type");

	if (!json_object_is_type(arr, json_type_array))
		return;
	fprintf(f, "\n# B_req per instance type (tlsctl --types), MB/s; None: not seen\n"
		   "# uncontended. spotDNN's predictor takes one instance_bandwith: see\n"
		   "# tlsd's docs/design.md for the change that takes these.\n"
		   "instance_bandwith_by_type = {\n");
	for (size_t k = 0; k < json_object_array_length(arr); k++) {
		struct json_object *o = json_object_array_get_idx(arr, k), *v;

		json_object_object_get_ex(o, "b_req_Bps", &v);
		if (v)
			fprintf(f, "    \"%s\": %.6g,\n", tls_json_str(o, "type"),
				json_object_get_double(v) / TLS_SPOTDNN_MBPS);
		else
			fprintf(f, "    \"%s\": None,\n", tls_json_str(o, "type"));
	}
	fprintf(f, "}\n__all__.append(\"instance_bandwith_by_type\")\n");
}

/*
 * spotDNN's module, whole or not at all: to standard output or FILE only
 * when every value is known. B_req, a and b are one workload's, so a host
 * with several jobs needs JOB.
 */
static int calibrate_spotdnn(struct ctx *c, struct json_object *req, const char *job, double param,
			     const char *out, const char *types)
{
	struct json_object *jr, *jobs, *r = NULL;
	struct tls_stats_calib cal;
	char err[512], list[1024];
	int ret;

	ret = jobs_list(c, &jobs, &jr);
	if (ret) {
		json_object_put(req);
		return ret;
	}
	if (!job && json_object_array_length(jobs) != 1) {
		size_t n = json_object_array_length(jobs);

		jobs_str(jobs, list, sizeof(list));
		json_object_put(req);
		json_object_put(jr);
		if (!n) {
			err_msg("calibrate: tlsd runs no job");
			return EXIT_DAEMON;
		}
		return usage_err("calibrate",
				 "calibrate: tlsd runs %zu jobs (%s): name one, since spotDNN's "
				 "instance_bandwith, a and b are one workload's",
				 n, list);
	}
	if (job)
		add_job(req, job);
	else
		json_object_object_add(
			req, TLS_CTL_F_JOB,
			json_object_new_int64(tls_json_int(json_object_array_get_idx(jobs, 0), "id")));
	ret = call(c, "calibrate", req, &r);
	if (!ret && tls_stats_calib_from_json(r, &cal, err, sizeof(err)))
		ret = bad_reply("calibrate", err);
	if (!ret && types)
		ret = types_add(c, job, types, r);
	if (!ret)
		ret = spotdnn_emit(&cal, param, job_name_of(jobs, cal.job), out, r);
	json_object_put(r);
	json_object_put(jr);
	return ret;
}

/* The module for cal (and r's B_req per type, if any), whole or not at
 * all, to FILE or standard output. */
static int spotdnn_emit(const struct tls_stats_calib *cal, double param, const char *name,
			const char *out, struct json_object *r)
{
	char err[512];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int ret = 0;

	if (!f) {
		err_msg("calibrate: out of memory");
		ret = EXIT_DAEMON;
	}
	if (f) {
		struct tls_spotdnn_src src = {
			.push = !strcmp(tls_json_str(r, TLS_CTL_F_DIRECTION), "push"),
		};

		/* --param overrides; else S_param as tlsd measured it */
		if (isnan(param)) {
			struct json_object *sp = tls_json_get(r, "s_param_bytes");

			src.param_measured = true;
			src.bursts = (uint64_t)tls_json_int(r, "s_param_bursts");
			param = json_object_is_type(sp, json_type_double) ||
						json_object_is_type(sp, json_type_int) ?
					json_object_get_double(sp) :
					NAN;
		}
		ret = tls_stats_print_spotdnn_src(f, cal, param, &src, name, err, sizeof(err));
		if (ret == -ENODATA && isnan(param) && strstr(err, "is not given"))
			snprintf(err, sizeof(err),
				 "param (S_param) is not measured yet (no push of this job into "
				 "the PS has ended: tlsd's ingress counter sees none) and --param "
				 "SIZE is not given");
		if (!ret && r)
			types_spotdnn(f, r);
		fclose(f);
		if (ret == -ENODATA) {
			err_msg("calibrate: no spotDNN module written%s%s: %s", out ? " to " : "",
				out ? out : "", err);
		} else if (ret) {
			err_msg("calibrate: cannot format the module: %s", strerror(-ret));
		} else if (out) {
			ret = write_file("calibrate", out, text, len);
		} else if (fwrite(text, 1, len, stdout) != len || fflush(stdout)) {
			err_msg("calibrate: cannot write the output: %s", strerror(errno));
			ret = EXIT_DAEMON;
		}
		if (ret < 0)
			ret = EXIT_DAEMON;
	}
	free(text);
	return ret;
}

/* The n sweep behind the fit, one CSV row per observation. */
static int calibrate_csv(struct json_object *r)
{
	struct json_object *oa = tls_json_get(r, "observations");
	struct tls_stats_obs ob;
	char err[256];
	size_t i, n;

	if (!json_object_is_type(oa, json_type_array))
		return bad_reply("calibrate", "\"observations\": missing or not an array");
	tls_stats_csv_obs_header(stdout);
	n = json_object_array_length(oa);
	for (i = 0; i < n; i++) {
		if (tls_stats_obs_from_json(json_object_array_get_idx(oa, i), &ob, err,
					    sizeof(err)))
			return bad_reply("calibrate", err);
		tls_stats_csv_obs(stdout, &ob);
	}
	if (fflush(stdout) || ferror(stdout)) {
		err_msg("calibrate: cannot write the output: %s", strerror(errno));
		return EXIT_DAEMON;
	}
	return 0;
}

/* One PS host's export (`tlsctl -j calibrate [JOB]`), parsed into part;
 * its observations in *obs (malloc'ed). A message naming the file and the
 * bad key otherwise. */
static int merge_read(const char *path, struct tls_calib_part *part, struct tls_stats_obs **obs)
{
	struct json_object *o = json_object_from_file(path), *oa;
	char err[256];
	size_t n;

	*obs = NULL;
	if (!o) {
		err_msg("calibrate: --merge: %s: not a JSON file: %s", path,
			json_util_get_last_err());
		return EXIT_USAGE;
	}
	if (tls_stats_calib_from_json(o, &part->calib, err, sizeof(err)) ||
	    !json_object_object_get_ex(o, "observations", &oa) ||
	    !json_object_is_type(oa, json_type_array)) {
		err_msg("calibrate: --merge: %s: not a `tlsctl -j calibrate` export: %s", path,
			json_object_is_type(o, json_type_object) && !err[0] ?
				"\"observations\": missing or not an array" :
				err);
		json_object_put(o);
		return EXIT_USAGE;
	}
	n = json_object_array_length(oa);
	*obs = calloc(n + 1, sizeof(**obs));
	for (size_t i = 0; *obs && i < n; i++)
		if (tls_stats_obs_from_json(json_object_array_get_idx(oa, i), &(*obs)[i], err,
					    sizeof(err))) {
			err_msg("calibrate: --merge: %s: observation %zu: %s", path, i + 1, err);
			json_object_put(o);
			return EXIT_USAGE;
		}
	json_object_put(o);
	if (!*obs) {
		err_msg("calibrate: out of memory");
		return EXIT_DAEMON;
	}
	part->obs = *obs;
	part->nobs = n;
	return 0;
}

/*
 * Several PS hosts' exports as one calibration: B_ps the sum (spotDNN's is
 * the cluster's), in the same JSON as tlsd's reply, with what went in
 * under "merged", so that every format prints it.
 */
static int calibrate_merge(char **files, int nfiles, struct json_object **reply)
{
	struct tls_calib_part *parts = calloc(nfiles, sizeof(*parts));
	struct tls_stats_obs **own = calloc(nfiles, sizeof(*own)), *mobs = NULL;
	struct json_object *r = NULL, *arr;
	struct tls_stats_calib cal;
	size_t nm = 0, dropped = 0;
	char err[512];
	int ret = parts && own ? 0 : EXIT_DAEMON;

	if (ret)
		err_msg("calibrate: out of memory");
	for (int i = 0; !ret && i < nfiles; i++)
		ret = merge_read(files[i], &parts[i], &own[i]);
	if (!ret) {
		int e = tls_calib_merge(parts, nfiles, &cal, &mobs, &nm, &dropped, err,
					sizeof(err));

		if (e == -EINVAL) {
			err_msg("calibrate: --merge: %s", err);
			ret = EXIT_USAGE;
		} else if (e) {
			err_msg("calibrate: out of memory");
			ret = EXIT_DAEMON;
		}
	}
	if (!ret) {
		r = tls_stats_calib_json(&cal, mobs, nm);
		arr = json_object_new_array();
		for (int i = 0; r && arr && i < nfiles; i++) {
			struct json_object *h = json_object_new_object();

			json_object_object_add(h, "file", json_object_new_string(files[i]));
			json_object_object_add(
				h, "b_ps_Bps",
				isfinite(parts[i].calib.link.b_ps) ?
					json_object_new_double(parts[i].calib.link.b_ps) :
					NULL);
			json_object_object_add(
				h, "b_req_Bps",
				isfinite(parts[i].calib.b_req) ?
					json_object_new_double(parts[i].calib.b_req) :
					NULL);
			json_object_array_add(arr, h);
		}
		if (r && arr) {
			json_object_object_add(r, "merged", arr);
			json_object_object_add(r, "observations_dropped",
					       json_object_new_int64(dropped));
		} else {
			json_object_put(arr);
			json_object_put(r);
			r = NULL;
			err_msg("calibrate: out of memory");
			ret = EXIT_DAEMON;
		}
	}
	for (int i = 0; own && i < nfiles; i++)
		free(own[i]);
	free(own);
	free(parts);
	free(mobs);
	*reply = r;
	return ret;
}

static int cmd_calibrate(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "source", required_argument, NULL, 's' },
		{ "param", required_argument, NULL, 'P' },
		{ "output", required_argument, NULL, 'o' },
		{ "direction", required_argument, NULL, 'd' },
		{ "merge", no_argument, NULL, 'M' },
		{ "types", required_argument, NULL, 'T' },
		{},
	};
	const char *types = NULL;
	bool merge = false;
	const char *format = c->json ? "json" : "table", *out = NULL, *job = NULL;
	struct json_object *req = tls_client_request(TLS_CTL_C_CALIBRATE), *r;
	double param = NAN;
	uint64_t bytes;
	int opt, ret;

	optind = 0; /* a fresh scan */
	opterr = 0;
	/* no "+": options may follow JOB, as in `calibrate ps --format spotdnn` */
	while ((opt = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		if (opt == 'f') {
			format = optarg;
		} else if (opt == 's' && (!strcmp(optarg, "solved") || !strcmp(optarg, "direct"))) {
			json_object_object_add(req, TLS_CTL_F_SOURCE,
					       json_object_new_string(optarg));
		} else if (opt == 'P' && !tls_parse_size(optarg, &bytes) && bytes) {
			param = (double)bytes;
		} else if (opt == 'o') {
			out = optarg;
		} else if (opt == 'd') {
			ret = add_direction(req, "calibrate", optarg);
			if (ret) {
				json_object_put(req);
				return ret;
			}
		} else if (opt == 'M') {
			merge = true;
		} else if (opt == 'T') {
			types = optarg;
		} else {
			json_object_put(req);
			if (opt == 's')
				return usage_err("calibrate",
						 "calibrate: source '%s' is not one of solved, "
						 "direct",
						 optarg);
			if (opt == 'P')
				return usage_err("calibrate",
						 "calibrate: --param '%s' is not a size in bytes "
						 "above 0 (e.g. 46800000, 46.8M, 44.6Mi)",
						 optarg);
			return usage_err("calibrate",
					 "calibrate: unknown option or missing value '%s'",
					 argv[optind - 1]);
		}
	}
	if (merge && (optind >= argc || json_object_object_get_ex(req, TLS_CTL_F_SOURCE, NULL))) {
		json_object_put(req);
		return usage_err("calibrate", optind >= argc ?
						      "calibrate: --merge needs the FILEs of "
						      "`tlsctl -j calibrate` on each PS host" :
						      "calibrate: --merge takes the source the "
						      "exports were made with; no --source");
	}
	if (types && (merge || !strcmp(format, "csv"))) {
		json_object_put(req);
		return usage_err("calibrate", "calibrate: --types is for one host's calibration "
					      "as a table, json or spotdnn");
	}
	if (!merge && argc - optind > 1) {
		json_object_put(req);
		return usage_err("calibrate", "calibrate: unexpected argument '%s'",
				 argv[optind + 1]);
	}
	if (optind < argc && !merge)
		job = argv[optind];
	if (strcmp(format, "table") && strcmp(format, "spotdnn") && strcmp(format, "json") &&
	    strcmp(format, "csv")) {
		json_object_put(req);
		return usage_err("calibrate",
				 "calibrate: format '%s' is not one of table, json, csv, spotdnn",
				 format);
	}
	if (strcmp(format, "spotdnn") && (out || !isnan(param))) {
		json_object_put(req);
		return usage_err("calibrate", "calibrate: %s is for --format spotdnn only",
				 out ? "-o" : "--param");
	}
	if (!strcmp(format, "spotdnn")) {
		/* without --param, S_param as tlsd measured it (not in an export) */
		if (merge && isnan(param)) {
			json_object_put(req);
			return usage_err("calibrate", "calibrate: --merge --format spotdnn needs "
						      "--param SIZE: the bytes a worker pulls per "
						      "iteration, headers included");
		}
		if (!merge)
			return calibrate_spotdnn(c, req, job, param, out, types);
	}
	if (merge) {
		json_object_put(req);
		ret = calibrate_merge(argv + optind, argc - optind, &r);
		if (!ret && !strcmp(format, "spotdnn")) {
			struct tls_stats_calib cal;
			char err[256];

			ret = tls_stats_calib_from_json(r, &cal, err, sizeof(err)) ?
				      bad_reply("calibrate", err) :
				      spotdnn_emit(&cal, param, NULL, out, NULL);
			json_object_put(r);
			return ret;
		}
	} else {
		if (job)
			add_job(req, job);
		ret = call(c, "calibrate", req, &r);
		if (!ret && types) {
			ret = types_add(c, job, types, r);
			if (ret) {
				json_object_put(r);
				return ret;
			}
		}
	}
	if (ret)
		return ret;
	if (!strcmp(format, "json"))
		print_json(c, r);
	else if (!strcmp(format, "csv"))
		ret = calibrate_csv(r);
	else if (!(ret = calibrate_table(r)))
		types_table(r);
	json_object_put(r);
	return ret;
}

static int cmd_metrics(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "openmetrics", no_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{},
	};
	struct json_object *req = tls_client_request(TLS_CTL_C_METRICS), *r, *t;
	const char *out = NULL;
	bool om = false;
	int opt, ret;

	optind = 0; /* a fresh scan */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+o:", opts, NULL)) != -1) {
		if (opt == 'm') {
			om = true;
		} else if (opt == 'o') {
			out = optarg;
		} else {
			json_object_put(req);
			return usage_err("metrics", "metrics: unknown option or missing value '%s'",
					 argv[optind - 1]);
		}
	}
	if (optind < argc) {
		json_object_put(req);
		return usage_err("metrics", "metrics: unexpected argument '%s'", argv[optind]);
	}
	json_object_object_add(req, TLS_CTL_F_FORMAT,
			       json_object_new_string(om ? "openmetrics" : "prometheus"));
	ret = call(c, "metrics", req, &r);
	if (ret)
		return ret;
	t = tls_json_get(r, "text");
	if (c->json && !out) {
		print_json(c, r);
	} else if (!t || !json_object_is_type(t, json_type_string)) {
		ret = bad_reply("metrics", "no \"text\"");
	} else if (out) {
		ret = write_file("metrics", out, json_object_get_string(t),
				 (size_t)json_object_get_string_len(t));
	} else {
		fwrite(json_object_get_string(t), 1, (size_t)json_object_get_string_len(t), stdout);
		if (fflush(stdout)) {
			err_msg("metrics: cannot write the output: %s", strerror(errno));
			ret = EXIT_DAEMON;
		}
	}
	json_object_put(r);
	return ret;
}

static const struct command commands[] = {
	{ "status", cmd_status,
	  "Usage: tlsctl [-j] [-p] status\n"
	  "What tlsd runs: interface, link rate, policy (and whether tlsctl set it),\n"
	  "rotation interval, bands, number of jobs, rotation step, uptime, pid, the\n"
	  "tree (intact, interface absent, or yielded to another tool, and why), its\n"
	  "heals (how many, how many of those allowed within the window, the last one's\n"
	  "reason), and the kernel features.\n" },
	{ "jobs", cmd_jobs,
	  "Usage: tlsctl [-j] [-p] jobs\n"
	  "Every job: id, name, band (- = the default class), origin (static from the\n"
	  "configuration, or discovered), PS ports, PS pids, and the bytes and packets\n"
	  "the classifier counted for it.\n" },
	{ "policy", cmd_policy,
	  "Usage: tlsctl [-j] [-p] policy [fifo|one|roundrobin|bursts] [interval DURATION]\n"
	  "       tlsctl [-j] [-p] policy reset\n"
	  "Without arguments, print the policy and the rotation interval. With them,\n"
	  "switch at once (the next packet is scheduled by the new assignment; a new\n"
	  "interval restarts the rotation timer). DURATION: e.g. 500ms, 20s; at least\n"
	  "10ms. The switch is not written to the configuration file: it stays in force\n"
	  "across reloads (SIGHUP) until `tlsctl policy reset` goes back to the file's\n"
	  "(and command line's) policy and interval, or tlsd restarts.\n" },
	{ "stats", cmd_stats,
	  "Usage: tlsctl [-j] [-p] stats [JOB] [--csv] [--follow] [--direction pull|push]\n"
	  "Contention statistics per job and worker flow: rate, measured B_wk (bytes\n"
	  "over active time), B_req (rate while the link was not saturated), and the\n"
	  "contended share P, directly and solved from spotDNN's formula; JOB is a\n"
	  "name or an id. The table's rates are in MB/s (10^6 bytes/s). --csv: one\n"
	  "row per job and per flow (time_s, kind, job, proto, local, remote, n, bytes,\n"
	  "rates in bytes/s, active times in s, b_wk_Bps, b_req_Bps, p_direct,\n"
	  "p_solved); --follow: a new sample every sampling period until interrupted.\n"
	  "--direction: pull, the PS's egress (the model to the workers, the default),\n"
	  "or push, its ingress (the gradients in, tlsd's ingress counter); also\n"
	  "S_param, the mean bytes of a worker's push (a burst between idle gaps).\n" },
	{ "calibrate", cmd_calibrate,
	  "Usage: tlsctl [-j] [-p] calibrate [JOB] [--source solved|direct]\n"
	  "                                  [--direction pull|push] [--format table|json|csv]\n"
	  "                                  [--types FILE]\n"
	  "       tlsctl calibrate [JOB] [--direction pull|push] --format spotdnn\n"
	  "                                  [--param SIZE] [-o FILE]\n"
	  "       tlsctl [-j] calibrate --merge FILE... [--format F [--param SIZE] [-o FILE]]\n"
	  "spotDNN's bandwidth model as measured here: B_ps, B_req (MB/s = 10^6\n"
	  "bytes/s on the wire, headers included) and the fit of\n"
	  "P(n) = min(a*sqrt(n) - b, 1), P a fraction of the time: a and b have no\n"
	  "unit. json and csv: every observation behind the fit, the n sweep (n,\n"
	  "active time, B_wk, B_req, P direct and solved, used or why not). JOB (a\n"
	  "name or an id): one job's observations only. --source: fit P solved from\n"
	  "the measured B_wk (default) or P measured directly. --direction: pull (the\n"
	  "PS's egress, the default) or push (its ingress, the gradients in).\n"
	  "spotdnn: a Python module for spotDNN (bps, instance_bandwith, param, a, b,\n"
	  "instance_comp), to be saved as spotDNN's profiler/tlsd_calib.py (-o FILE:\n"
	  "written whole, beside FILE then renamed) and imported by one line at the end\n"
	  "of its profiler/instanceinfo.py:\n"
	  "  from profiler.tlsd_calib import *\n"
	  "param: S_param as tlsd measured it, the mean of the job's pushes (bursts of\n"
	  "gradients into the PS between idle gaps), in bytes on the wire; --param SIZE\n"
	  "overrides it: what a worker pulls per iteration in bytes on the wire (the\n"
	  "model's payload * (MTU + 14) / MSS), suffixes k, M, G or Ki, Mi, Gi. All or nothing:\n"
	  "a value not known yet, and tlsctl exits 1 and writes nothing. A host with\n"
	  "several jobs needs JOB. Take it under `policy fifo`.\n"
	  "--merge: the `tlsctl -j calibrate JOB` exports of several PS hosts of one\n"
	  "sharded workload as one calibration: B_ps, B_req and per n B_wk summed, P\n"
	  "solved again, the fit made again (no tlsd is asked).\n"
	  "--types FILE: B_req per instance type, FILE one `ADDRESS TYPE` a line\n"
	  "(worker hosts to spotDNN's instance types). See tlsctl(8).\n" },
	{ "metrics", cmd_metrics,
	  "Usage: tlsctl [-j] [-p] metrics [--openmetrics] [-o FILE]\n"
	  "The metrics tlsd serves on metrics_listen, also when that is off: per job\n"
	  "bytes, packets, band, leader, rotations, flowlet demotions and promotions,\n"
	  "B_wk, B_req and P per job and worker, the fitted a and b, HTB's counters per\n"
	  "class, the tree's heals, reloads, kernel features. Prometheus text 0.0.4, or\n"
	  "OpenMetrics 1.0.0 with --openmetrics. -o FILE: written whole (beside FILE,\n"
	  "then renamed), for node_exporter's textfile collector, e.g.\n"
	  "  tlsctl metrics -o /var/lib/prometheus/node-exporter/tlsd.prom\n"
	  "-j: tlsd's reply as JSON (the text in \"text\").\n" },
};

/* By name or unique prefix; *ambiguous when several commands start so. */
static const struct command *find_command(const char *name, bool *ambiguous)
{
	const struct command *found = NULL;
	size_t i, len = strlen(name);

	*ambiguous = false;
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(commands[i].name, name))
			return &commands[i];
		if (len && !strncmp(commands[i].name, name, len)) {
			if (found)
				*ambiguous = true;
			found = &commands[i];
		}
	}
	return *ambiguous ? NULL : found;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },	    { "pretty", no_argument, NULL, 'p' },
		{ "socket", required_argument, NULL, 's' }, { "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },	    {},
	};
	const char *sock = TLS_CTL_SOCK_DEFAULT;
	struct ctx c = {};
	const struct command *cmd;
	bool ambiguous;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "+jps:Vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			c.json = true;
			break;
		case 'p':
			c.json = c.pretty = true;
			break;
		case 's':
			sock = optarg;
			break;
		case 'V':
			printf("tlsctl %s (control protocol %d)\n", TLS_VERSION,
			       TLS_CTL_VERSION);
			return 0;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs("Try 'tlsctl --help'.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind == argc)
		return usage_err(NULL, "a command is needed: " TLS_CTL_COMMANDS);
	if (!strcmp(argv[optind], "help")) {
		if (optind + 1 == argc) {
			fputs(usage_text, stdout);
			return 0;
		}
		cmd = find_command(argv[optind + 1], &ambiguous);
		if (!cmd)
			return usage_err(NULL, "no command '%s'", argv[optind + 1]);
		fputs(cmd->help, stdout);
		return 0;
	}
	cmd = find_command(argv[optind], &ambiguous);
	if (!cmd)
		return usage_err(NULL, "%s command '%s': expected " TLS_CTL_COMMANDS,
				 ambiguous ? "ambiguous" : "unknown", argv[optind]);
	if (wants_help(argc - optind, argv + optind)) {
		fputs(cmd->help, stdout);
		return 0;
	}
	tls_client_init(&c.cl, sock);
	ret = cmd->run(&c, argc - optind, argv + optind);
	tls_client_free(&c.cl);
	return ret;
}
