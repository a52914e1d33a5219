/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control protocol between tlsd and tlsctl (or any client): one header
 * for both sides, so that names, limits and codes cannot drift apart.
 *
 * Transport: a Unix stream socket (default TLS_CTL_SOCK_DEFAULT). Each way,
 * one JSON object per line ('\n'); a client may send several requests on
 * one connection and gets the replies in order.
 *
 * Request:  {"version": 1, "cmd": "status", "id": 7, ...arguments}
 *   version  required, an integer: TLS_CTL_VERSION
 *   cmd      required, a string: one of the commands below
 *   id       optional, an integer or a string, echoed in the reply
 *   Any other field must be an argument of that command: unknown fields are
 *   refused, so that a typo is never silently ignored.
 *
 * Reply:    {"version": 1, "ok": true, "cmd": "status", "id": 7, ...results}
 *   or      {"version": 1, "ok": false, "id": 7,
 *            "error": {"code": "value", "message": "policy: 'lifo' is not ..."}}
 *
 * Commands, their arguments and results (status, jobs, policy: rates in
 * bits/s as _bps, times in ns as _ns):
 *
 *  status     -
 *             tlsd_version, pid, interface, link_rate_bps, policy,
 *             policy_source ("config" | "tlsctl"), interval_ns, bands, jobs
 *             (count), uptime_ns, step, control_group (or null),
 *             stats_period_ns (null: no statistics), tree: {state ("intact" |
 *             "absent" | "yielded"), watched, heals, heals_recent,
 *             heal_limit, heal_window_ns, last_heal ({reason, ago_ns,
 *             took_ns} or null), failed_heals, since_ns (absent or yielded
 *             for so long; null when intact), yield_reason (or null),
 *             interface_returns, rate_changes}, features: [...]
 *  jobs       -
 *             jobs: [{id, name, band (null: default class), origin
 *             ("static" | "discovered"), ports: [..], pids: [..], bytes,
 *             packets, segs}]
 *  policy     policy: "fifo" | "one" | "roundrobin"   (optional)
 *             interval: a duration string, "500ms" (optional, >= 10ms)
 *             reset: true (optional, alone: back to the configuration's)
 *             With no argument it only reads. Results: policy, interval_ns,
 *             policy_source, config_policy, config_interval_ns, changed.
 *  stats      job: a name (string) or an id (integer) (optional)
 *             follow: true (optional): after this reply, one more per
 *             sampling period (same schema) until the client disconnects
 *             period_s, link: {...}, jobs: [{job, name, n, bytes, rate_Bps,
 *             b_wk_Bps, b_req_Bps, p_direct, p_solved, ...}],
 *             flows: [{job, local, remote, proto, n, bytes, rate_Bps, ...}]
 *  calibrate  job: a name or an id (optional: all jobs)
 *             source: "solved" (default) | "direct": which P the fit uses
 *             job, source, link, b_req_Bps, fit: {ok, error, a, b, rms,
 *             observations, distinct_n, n_min, n_max}, spotdnn: {bps,
 *             instance_bandwith (spotDNN's spelling), a, b, unit: "MB/s"
 *             (bps's and instance_bandwith's; a and b have none)},
 *             observations: [{job, n, used, use, b_wk_Bps, ...}]
 *  metrics    format: "prometheus" (default) | "openmetrics" (optional)
 *             text (the metrics as the HTTP endpoint serves them: Prometheus
 *             text 0.0.4, or OpenMetrics 1.0.0 ending in "# EOF"; see
 *             tcd/metrics.h), content_type
 *  The statistics objects are lib/model/stats_export.c's, which tlsctl reads back
 *  with the same tables: rates in bytes/s (keys ending in _Bps), times in
 *  seconds (_s), unknown values null.
 *
 * A tlsd without the statistics engine answers stats and calibrate with the
 * error code "unavailable".
 */
#ifndef TLS_CTL_PROTO_H
#define TLS_CTL_PROTO_H

#define TLS_CTL_VERSION	     1
#define TLS_CTL_SOCK_DEFAULT "/run/tlsd/tlsd.sock"
/* The shortest rotation interval, from the file or the policy command. */
#define TLS_INTERVAL_MIN_NS (10ULL * 1000 * 1000) /* 10 ms */

/* A request line, newline included: longer ones are refused with
 * "too_long" and the connection is closed (its framing is lost). */
#define TLS_CTL_MAX_MSG (64 * 1024)
/* Replies may be longer (the job list of 1023 jobs); a client needs room
 * for this much per reply. */
#define TLS_CTL_MAX_REPLY (16 * 1024 * 1024)
/* Clients connected at once; one more gets a "busy" error and is closed.
 * Root has room of its own, up to twice as many, so that members of
 * control_group holding connections open cannot lock it out. */
#define TLS_CTL_MAX_CLIENTS 64
/* A client silent so long is closed (control_idle_timeout), so that
 * connections left open do not keep the others out. */
#define TLS_CTL_IDLE_DEFAULT_NS (60ULL * 1000 * 1000 * 1000)
#define TLS_CTL_IDLE_MIN_NS	(1000ULL * 1000 * 1000)
/* JSON nesting a request may have: requests are flat. */
#define TLS_CTL_MAX_DEPTH 4

/* Field names. */
#define TLS_CTL_F_VERSION  "version"
#define TLS_CTL_F_CMD	   "cmd"
#define TLS_CTL_F_ID	   "id"
#define TLS_CTL_F_OK	   "ok"
#define TLS_CTL_F_ERROR	   "error"
#define TLS_CTL_F_CODE	   "code"
#define TLS_CTL_F_MESSAGE  "message"
#define TLS_CTL_F_POLICY   "policy"
#define TLS_CTL_F_INTERVAL "interval"
#define TLS_CTL_F_RESET	   "reset"
#define TLS_CTL_F_JOB	   "job"
#define TLS_CTL_F_FOLLOW   "follow"
#define TLS_CTL_F_SOURCE   "source"
/* stats, calibrate: "pull" (the PS's egress, the default) or "push" (its
 * ingress, the gradients in) */
#define TLS_CTL_F_DIRECTION "direction"
#define TLS_CTL_F_FORMAT    "format"

/* Commands. */
#define TLS_CTL_C_STATUS    "status"
#define TLS_CTL_C_JOBS	    "jobs"
#define TLS_CTL_C_POLICY    "policy"
#define TLS_CTL_C_STATS	    "stats"
#define TLS_CTL_C_CALIBRATE "calibrate"
#define TLS_CTL_C_METRICS   "metrics"
/* For messages: every command, as a list. */
#define TLS_CTL_COMMANDS "status, jobs, policy, stats, calibrate or metrics"

enum tls_ctl_cmd {
	TLS_CTL_STATUS,
	TLS_CTL_JOBS,
	TLS_CTL_POLICY,
	TLS_CTL_STATS,
	TLS_CTL_CALIBRATE,
	TLS_CTL_METRICS,
	TLS_CTL_NCMDS,
};

/* Error codes: the "code" string of an error reply. */
enum tls_ctl_err {
	TLS_CTL_OK = 0,
	TLS_CTL_E_PARSE,       /* "parse": not JSON (or not UTF-8, or NUL bytes) */
	TLS_CTL_E_REQUEST,     /* "request": not an object, a field missing,
				* unknown or of the wrong type */
	TLS_CTL_E_VERSION,     /* "version": a protocol version tlsd does not speak */
	TLS_CTL_E_COMMAND,     /* "command": no such command */
	TLS_CTL_E_VALUE,       /* "value": a field's value is not valid */
	TLS_CTL_E_TOO_LONG,    /* "too_long": a line over TLS_CTL_MAX_MSG */
	TLS_CTL_E_PERMISSION,  /* "permission": not root, not in control_group */
	TLS_CTL_E_BUSY,	       /* "busy": TLS_CTL_MAX_CLIENTS connected */
	TLS_CTL_E_UNAVAILABLE, /* "unavailable": not (yet) provided by this tlsd */
	TLS_CTL_E_NOT_FOUND,   /* "not_found": no such job */
	TLS_CTL_E_INTERNAL,    /* "internal": tlsd could not do it (see its log) */
	TLS_CTL_NERRS,
};

static inline const char *tls_ctl_err_name(int e)
{
	static const char *const names[TLS_CTL_NERRS] = {
		[TLS_CTL_OK] = "ok",
		[TLS_CTL_E_PARSE] = "parse",
		[TLS_CTL_E_REQUEST] = "request",
		[TLS_CTL_E_VERSION] = "version",
		[TLS_CTL_E_COMMAND] = "command",
		[TLS_CTL_E_VALUE] = "value",
		[TLS_CTL_E_TOO_LONG] = "too_long",
		[TLS_CTL_E_PERMISSION] = "permission",
		[TLS_CTL_E_BUSY] = "busy",
		[TLS_CTL_E_UNAVAILABLE] = "unavailable",
		[TLS_CTL_E_NOT_FOUND] = "not_found",
		[TLS_CTL_E_INTERNAL] = "internal",
	};

	return e >= 0 && e < TLS_CTL_NERRS ? names[e] : "internal";
}

static inline const char *tls_ctl_cmd_name(int c)
{
	static const char *const names[TLS_CTL_NCMDS] = {
		[TLS_CTL_STATUS] = TLS_CTL_C_STATUS,	   [TLS_CTL_JOBS] = TLS_CTL_C_JOBS,
		[TLS_CTL_POLICY] = TLS_CTL_C_POLICY,	   [TLS_CTL_STATS] = TLS_CTL_C_STATS,
		[TLS_CTL_CALIBRATE] = TLS_CTL_C_CALIBRATE, [TLS_CTL_METRICS] = TLS_CTL_C_METRICS,
	};

	return c >= 0 && c < TLS_CTL_NCMDS ? names[c] : "?";
}

#endif /* TLS_CTL_PROTO_H */
