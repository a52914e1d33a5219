// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statistics as JSON, spotDNN text and CSV (see stats_export.h).
 *
 * Each struct is described once, by a table of (JSON key, type, offset):
 * the same table writes and reads it, so the two directions cannot drift
 * apart, and tlsctl can print what tlsd sent with this file's formatters.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "stats_export.h"

#define NS_PER_S 1e9

enum ftype {
	F_U32,	/* uint32_t */
	F_UINT, /* unsigned int */
	F_U64,	/* uint64_t */
	F_NS,	/* uint64_t ns, as seconds */
	F_DNS,	/* double ns, as seconds */
	F_DBL,	/* double, NaN as null */
	F_BOOL, /* bool */
};

struct field {
	const char *key;
	enum ftype type;
	size_t off;
};

/* One field per line: the tables read as the lists they are. */
/* clang-format off */
#define FLD(k, t, st, m) { k, t, offsetof(st, m) }

#define ACC_FIELDS(st, m, pfx)                                  \
	FLD(pfx "bytes", F_U64, st, m.bytes),                   \
	FLD(pfx "active_s", F_NS, st, m.active_ns),             \
	FLD(pfx "sat_active_s", F_NS, st, m.sat_active_ns),     \
	FLD(pfx "unsat_bytes", F_U64, st, m.unsat_bytes),       \
	FLD(pfx "unsat_active_s", F_NS, st, m.unsat_ns),        \
	FLD(pfx "n_active_s", F_DNS, st, m.n_ns)

#define EST_FIELDS(st, m)                                       \
	FLD("b_wk_Bps", F_DBL, st, m.b_wk),                     \
	FLD("b_req_Bps", F_DBL, st, m.b_req),                   \
	FLD("p_direct", F_DBL, st, m.p_direct),                 \
	FLD("p_solved", F_DBL, st, m.p_solved),                 \
	FLD("n_mean", F_DBL, st, m.n_mean)
/* clang-format on */

#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

static const struct field link_fields[] = {
	FLD("link_rate_Bps", F_DBL, struct tls_stats_link_info, link_rate),
	FLD("b_ps_Bps", F_DBL, struct tls_stats_link_info, b_ps),
	FLD("b_ps_measured", F_BOOL, struct tls_stats_link_info, b_ps_measured),
	FLD("sat_rate_Bps", F_DBL, struct tls_stats_link_info, sat_rate),
	FLD("rate_Bps", F_DBL, struct tls_stats_link_info, rate),
	FLD("rate_avg_Bps", F_DBL, struct tls_stats_link_info, rate_avg),
	FLD("saturated", F_BOOL, struct tls_stats_link_info, saturated),
	FLD("time_s", F_NS, struct tls_stats_link_info, time_ns),
	FLD("sat_s", F_NS, struct tls_stats_link_info, sat_ns),
	FLD("last_sample_s", F_NS, struct tls_stats_link_info, last_ns),
	FLD("samples", F_U64, struct tls_stats_link_info, samples),
	FLD("skipped", F_U64, struct tls_stats_link_info, skipped),
	FLD("rejected", F_U64, struct tls_stats_link_info, rejected),
	FLD("resets", F_U64, struct tls_stats_link_info, resets),
	FLD("flows", F_UINT, struct tls_stats_link_info, flows),
	FLD("max_flows", F_UINT, struct tls_stats_link_info, max_flows),
	FLD("flows_expired", F_U64, struct tls_stats_link_info, flows_expired),
	FLD("flows_evicted", F_U64, struct tls_stats_link_info, flows_evicted),
	FLD("flows_dropped", F_U64, struct tls_stats_link_info, flows_dropped),
	FLD("observations", F_UINT, struct tls_stats_link_info, obs),
	FLD("max_observations", F_UINT, struct tls_stats_link_info, max_obs),
	FLD("observations_evicted", F_U64, struct tls_stats_link_info, obs_evicted),
};

static const struct field job_fields[] = {
	FLD("job", F_U32, struct tls_stats_job_info, job),
	FLD("n", F_UINT, struct tls_stats_job_info, n),
	FLD("flows", F_UINT, struct tls_stats_job_info, nflows),
	FLD("bytes", F_U64, struct tls_stats_job_info, bytes),
	FLD("rate_Bps", F_DBL, struct tls_stats_job_info, rate),
	FLD("rate_avg_Bps", F_DBL, struct tls_stats_job_info, rate_avg),
	FLD("active_s", F_NS, struct tls_stats_job_info, active_ns),
	FLD("sat_active_s", F_NS, struct tls_stats_job_info, sat_active_ns),
	ACC_FIELDS(struct tls_stats_job_info, flows, "workers_"),
	EST_FIELDS(struct tls_stats_job_info, est),
	FLD("n_hosts", F_UINT, struct tls_stats_job_info, n_hosts),
	FLD("n_flows", F_UINT, struct tls_stats_job_info, n_flows),
	FLD("iteration_s", F_NS, struct tls_stats_job_info, iter_ns),
	FLD("window_s", F_NS, struct tls_stats_job_info, window_ns),
	FLD("n_settled", F_BOOL, struct tls_stats_job_info, n_settled),
	ACC_FIELDS(struct tls_stats_job_info, transitional, "transitional_"),
};

static const struct field flow_fields[] = {
	FLD("job", F_U32, struct tls_stats_flow_info, job),
	FLD("n", F_UINT, struct tls_stats_flow_info, n),
	FLD("first_s", F_NS, struct tls_stats_flow_info, first_ns),
	FLD("last_active_s", F_NS, struct tls_stats_flow_info, last_active_ns),
	FLD("rate_Bps", F_DBL, struct tls_stats_flow_info, rate),
	FLD("rate_avg_Bps", F_DBL, struct tls_stats_flow_info, rate_avg),
	ACC_FIELDS(struct tls_stats_flow_info, acc, ""),
	EST_FIELDS(struct tls_stats_flow_info, est),
};

static const struct field obs_fields[] = {
	FLD("job", F_U32, struct tls_stats_obs, job),
	FLD("n", F_UINT, struct tls_stats_obs, n),
	FLD("retired", F_BOOL, struct tls_stats_obs, retired),
	FLD("first_s", F_NS, struct tls_stats_obs, first_ns),
	FLD("last_s", F_NS, struct tls_stats_obs, last_ns),
	ACC_FIELDS(struct tls_stats_obs, acc, ""),
	EST_FIELDS(struct tls_stats_obs, est),
};

static const struct field fit_fields[] = {
	FLD("a", F_DBL, struct tls_stats_fit, a),
	FLD("b", F_DBL, struct tls_stats_fit, b),
	FLD("rms", F_DBL, struct tls_stats_fit, rms),
	FLD("observations", F_UINT, struct tls_stats_fit, nobs),
	FLD("distinct_n", F_UINT, struct tls_stats_fit, ndistinct),
	FLD("n_min", F_UINT, struct tls_stats_fit, n_min),
	FLD("n_max", F_UINT, struct tls_stats_fit, n_max),
};

static struct json_object *dbl_json(double v)
{
	/* JSON has no NaN or infinity: an unknown value is null */
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

static int put(struct json_object *o, const char *key, struct json_object *v, bool may_be_null)
{
	if (!v && !may_be_null)
		return -ENOMEM;
	if (json_object_object_add(o, key, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int to_json(struct json_object *o, const struct field *t, size_t n, const void *st)
{
	const char *base = st;

	for (size_t i = 0; i < n; i++) {
		const void *p = base + t[i].off;
		struct json_object *v = NULL;
		bool null_ok = false;

		switch (t[i].type) {
		case F_U32:
			v = json_object_new_int64(*(const uint32_t *)p);
			break;
		case F_UINT:
			v = json_object_new_int64(*(const unsigned int *)p);
			break;
		case F_U64:
			v = json_object_new_uint64(*(const uint64_t *)p);
			break;
		case F_NS:
			v = json_object_new_double(*(const uint64_t *)p / NS_PER_S);
			break;
		case F_DNS:
			v = dbl_json(*(const double *)p / NS_PER_S);
			null_ok = true;
			break;
		case F_DBL:
			v = dbl_json(*(const double *)p);
			null_ok = true;
			break;
		case F_BOOL:
			v = json_object_new_boolean(*(const bool *)p);
			break;
		}
		if (put(o, t[i].key, v, null_ok))
			return -ENOMEM;
	}
	return 0;
}

static int bad(char *err, size_t errlen, const char *key, const char *why)
{
	if (err && errlen)
		snprintf(err, errlen, "\"%s\": %s", key, why);
	return -EINVAL;
}

/* Read every key of table t from o; a missing key is an error, as is a
 * value of the wrong type or out of range. */
static int from_json(struct json_object *o, const struct field *t, size_t n, void *st, char *err,
		     size_t errlen)
{
	char *base = st;

	if (!json_object_is_type(o, json_type_object))
		return bad(err, errlen, "(statistics)", "not a JSON object");
	for (size_t i = 0; i < n; i++) {
		struct json_object *v;
		void *p = base + t[i].off;
		enum json_type jt;
		double d;

		if (!json_object_object_get_ex(o, t[i].key, &v))
			return bad(err, errlen, t[i].key, "missing");
		jt = json_object_get_type(v);
		if (t[i].type == F_BOOL) {
			if (jt != json_type_boolean)
				return bad(err, errlen, t[i].key, "not a boolean");
			*(bool *)p = json_object_get_boolean(v);
			continue;
		}
		if (jt == json_type_null && (t[i].type == F_DBL || t[i].type == F_DNS)) {
			*(double *)p = NAN;
			continue;
		}
		if (jt != json_type_int && jt != json_type_double)
			return bad(err, errlen, t[i].key, "not a number");
		d = json_object_get_double(v);
		switch (t[i].type) {
		case F_U32:
		case F_UINT:
			if (jt != json_type_int || d < 0 || d > UINT32_MAX)
				return bad(err, errlen, t[i].key,
					   "not an integer in 0..4294967295");
			if (t[i].type == F_U32)
				*(uint32_t *)p = json_object_get_int64(v);
			else
				*(unsigned int *)p = json_object_get_int64(v);
			break;
		case F_U64:
			if (jt != json_type_int || d < 0)
				return bad(err, errlen, t[i].key, "not a non-negative integer");
			*(uint64_t *)p = json_object_get_uint64(v);
			break;
		case F_NS:
			if (!(d >= 0 && d < 1.8e10))
				return bad(err, errlen, t[i].key, "not a time in seconds");
			*(uint64_t *)p = llround(d * NS_PER_S);
			break;
		case F_DNS:
			*(double *)p = d * NS_PER_S;
			break;
		case F_DBL:
			*(double *)p = d;
			break;
		case F_BOOL:
			break;
		}
	}
	return 0;
}

static struct json_object *obj_of(const struct field *t, size_t n, const void *st)
{
	struct json_object *o = json_object_new_object();

	if (o && to_json(o, t, n, st)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* ---- flow endpoints ---- */

static const char *proto_name(uint8_t proto)
{
	return proto == IPPROTO_TCP ? "tcp" : proto == IPPROTO_UDP ? "udp" : NULL;
}

void tls_flow_endpoint_str(const struct tls_flow_key *k, bool remote, char *buf, size_t len)
{
	const uint8_t *addr = remote ? k->raddr : k->laddr;
	uint16_t port = ntohs(remote ? k->rport : k->lport);
	char a[INET6_ADDRSTRLEN];

	if ((k->family != AF_INET && k->family != AF_INET6) ||
	    !inet_ntop(k->family, addr, a, sizeof(a))) {
		snprintf(buf, len, "?");
		return;
	}
	if (k->family == AF_INET6)
		snprintf(buf, len, "[%s]:%u", a, port);
	else
		snprintf(buf, len, "%s:%u", a, port);
}

int tls_flow_endpoint_parse(const char *s, struct tls_flow_key *k, bool remote)
{
	char a[INET6_ADDRSTRLEN + 2];
	const char *colon;
	int family = AF_INET;
	size_t alen;
	char *end;
	unsigned long port;
	uint8_t addr[16] = {};

	if (!s)
		return -EINVAL;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		family = AF_INET6;
		alen = close - s - 1;
		s++;
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		alen = colon - s;
	}
	if (alen == 0 || alen >= sizeof(a))
		return -EINVAL;
	memcpy(a, s, alen);
	a[alen] = '\0';
	if (inet_pton(family, a, addr) != 1)
		return -EINVAL;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || port > 65535)
		return -EINVAL;
	if (k->family && k->family != family)
		return -EINVAL; /* the other side is of another family */
	k->family = family;
	memcpy(remote ? k->raddr : k->laddr, addr, 16);
	if (remote)
		k->rport = htons(port);
	else
		k->lport = htons(port);
	return 0;
}

/* ---- JSON ---- */

struct json_object *tls_json_seconds_us(double v)
{
	char b[32];

	if (!isfinite(v))
		return NULL;
	snprintf(b, sizeof(b), "%.6f", v);
	return json_object_new_double_s(v, b);
}

struct json_object *tls_stats_link_json(const struct tls_stats_link_info *l)
{
	return obj_of(link_fields, NFIELDS(link_fields), l);
}

int tls_stats_link_from_json(struct json_object *o, struct tls_stats_link_info *l, char *err,
			     size_t errlen)
{
	memset(l, 0, sizeof(*l));
	return from_json(o, link_fields, NFIELDS(link_fields), l, err, errlen);
}

struct json_object *tls_stats_job_json(const struct tls_stats_job_info *j)
{
	return obj_of(job_fields, NFIELDS(job_fields), j);
}

int tls_stats_job_from_json(struct json_object *o, struct tls_stats_job_info *j, char *err,
			    size_t errlen)
{
	memset(j, 0, sizeof(*j));
	return from_json(o, job_fields, NFIELDS(job_fields), j, err, errlen);
}

struct json_object *tls_stats_flow_json(const struct tls_stats_flow_info *f)
{
	struct json_object *o = obj_of(flow_fields, NFIELDS(flow_fields), f);
	const char *pn = proto_name(f->key.proto);
	char ep[INET6_ADDRSTRLEN + 8];

	if (!o)
		return NULL;
	tls_flow_endpoint_str(&f->key, false, ep, sizeof(ep));
	if (put(o, "local", json_object_new_string(ep), false))
		goto fail;
	tls_flow_endpoint_str(&f->key, true, ep, sizeof(ep));
	if (put(o, "remote", json_object_new_string(ep), false))
		goto fail;
	if (put(o, "proto", pn ? json_object_new_string(pn) : json_object_new_int(f->key.proto),
		false))
		goto fail;
	return o;
fail:
	json_object_put(o);
	return NULL;
}

int tls_stats_flow_from_json(struct json_object *o, struct tls_stats_flow_info *f, char *err,
			     size_t errlen)
{
	struct json_object *v;
	int ret;

	memset(f, 0, sizeof(*f));
	ret = from_json(o, flow_fields, NFIELDS(flow_fields), f, err, errlen);
	if (ret)
		return ret;
	if (!json_object_object_get_ex(o, "proto", &v))
		return bad(err, errlen, "proto", "missing");
	if (json_object_is_type(v, json_type_string)) {
		const char *p = json_object_get_string(v);

		if (!strcmp(p, "tcp"))
			f->key.proto = IPPROTO_TCP;
		else if (!strcmp(p, "udp"))
			f->key.proto = IPPROTO_UDP;
		else
			return bad(err, errlen, "proto", "not tcp, udp or a protocol number");
	} else if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0 &&
		   json_object_get_int64(v) <= 255) {
		f->key.proto = json_object_get_int64(v);
	} else {
		return bad(err, errlen, "proto", "not tcp, udp or a protocol number");
	}
	if (!json_object_object_get_ex(o, "local", &v) ||
	    tls_flow_endpoint_parse(json_object_get_string(v), &f->key, false))
		return bad(err, errlen, "local", "not ADDR:PORT or [ADDR6]:PORT");
	if (!json_object_object_get_ex(o, "remote", &v) ||
	    tls_flow_endpoint_parse(json_object_get_string(v), &f->key, true))
		return bad(err, errlen, "remote",
			   "not ADDR:PORT or [ADDR6]:PORT of the local side's family");
	return 0;
}

struct json_object *tls_stats_obs_json(const struct tls_stats_obs *ob)
{
	struct json_object *o = obj_of(obs_fields, NFIELDS(obs_fields), ob);

	if (o && (put(o, "used", json_object_new_boolean(ob->use == TLS_OBS_USED), false) ||
		  put(o, "use", json_object_new_string(tls_obs_use_str(ob->use)), false))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int tls_stats_obs_from_json(struct json_object *o, struct tls_stats_obs *ob, char *err,
			    size_t errlen)
{
	struct json_object *v;
	const char *s;
	int ret, u;

	memset(ob, 0, sizeof(*ob));
	ret = from_json(o, obs_fields, NFIELDS(obs_fields), ob, err, errlen);
	if (ret)
		return ret;
	if (!json_object_object_get_ex(o, "use", &v) || !json_object_is_type(v, json_type_string))
		return bad(err, errlen, "use", "missing or not a string");
	s = json_object_get_string(v);
	for (u = TLS_OBS_USED; u <= TLS_OBS_OTHER_JOB; u++)
		if (!strcmp(s, tls_obs_use_str(u))) {
			ob->use = u;
			return 0;
		}
	return bad(err, errlen, "use", "not a known reason");
}

static const char *source_name(enum tls_fit_source s)
{
	return s == TLS_FIT_DIRECT ? "direct" : "solved";
}

static const char *fit_err_str(int err)
{
	switch (err) {
	case 0:
		return NULL;
	case -ENODATA:
		return "no usable observation: need observations in the contended regime "
		       "(B_req > B_ps/n) with enough active time";
	case -EDOM:
		return "observations with P < 1 at fewer than two distinct n: a and b are "
		       "not determined";
	default:
		return strerror(-err);
	}
}

static int spotdnn_json(struct json_object *o, const struct tls_stats_calib *c)
{
	struct json_object *s = json_object_new_object();
	bool fit = !c->fit_err;

	if (!s)
		return -ENOMEM;
	if (put(s, "bps", dbl_json(c->link.b_ps / TLS_SPOTDNN_MBPS), true) ||
	    put(s, "instance_bandwith", dbl_json(c->b_req / TLS_SPOTDNN_MBPS), true) ||
	    put(s, "a", fit ? dbl_json(c->fit.a) : NULL, true) ||
	    put(s, "b", fit ? dbl_json(c->fit.b) : NULL, true) ||
	    /* the bandwidths' unit: a and b have none (P is a fraction) */
	    put(s, "unit", json_object_new_string("MB/s"), false)) {
		json_object_put(s);
		return -ENOMEM;
	}
	return put(o, "spotdnn", s, false);
}

struct json_object *tls_stats_calib_json(const struct tls_stats_calib *c,
					 const struct tls_stats_obs *obs, size_t nobs)
{
	struct json_object *o = json_object_new_object(), *fit, *arr;
	const char *why = fit_err_str(c->fit_err);

	if (!o)
		return NULL;
	if (put(o, "job", c->job == TLS_STATS_ALL_JOBS ? NULL : json_object_new_int64(c->job),
		true) ||
	    put(o, "source", json_object_new_string(source_name(c->source)), false) ||
	    put(o, "link", tls_stats_link_json(&c->link), false) ||
	    put(o, "b_req_Bps", dbl_json(c->b_req), true))
		goto fail;
	fit = obj_of(fit_fields, NFIELDS(fit_fields), &c->fit);
	if (put(o, "fit", fit, false))
		goto fail;
	if (put(fit, "ok", json_object_new_boolean(!c->fit_err), false) ||
	    put(fit, "error", why ? json_object_new_string(why) : NULL, true))
		goto fail;
	if (c->fit_err) { /* not numbers: a and b are what was not found */
		json_object_object_add(fit, "a", NULL);
		json_object_object_add(fit, "b", NULL);
		json_object_object_add(fit, "rms", NULL);
	}
	if (spotdnn_json(o, c))
		goto fail;
	arr = json_object_new_array();
	if (put(o, "observations", arr, false))
		goto fail;
	for (size_t i = 0; i < nobs; i++) {
		struct json_object *v = tls_stats_obs_json(&obs[i]);

		if (!v || json_object_array_add(arr, v)) {
			json_object_put(v);
			goto fail;
		}
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

int tls_stats_calib_from_json(struct json_object *o, struct tls_stats_calib *c, char *err,
			      size_t errlen)
{
	struct json_object *v, *fit;
	int ret;

	memset(c, 0, sizeof(*c));
	if (!json_object_is_type(o, json_type_object))
		return bad(err, errlen, "(calibration)", "not a JSON object");
	if (!json_object_object_get_ex(o, "job", &v))
		return bad(err, errlen, "job", "missing");
	if (json_object_is_type(v, json_type_null))
		c->job = TLS_STATS_ALL_JOBS;
	else if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0 &&
		 json_object_get_int64(v) < TLS_MAX_JOBS)
		c->job = json_object_get_int64(v);
	else
		return bad(err, errlen, "job", "not null or a job id");
	if (!json_object_object_get_ex(o, "source", &v) ||
	    !json_object_is_type(v, json_type_string))
		return bad(err, errlen, "source", "missing or not a string");
	if (!strcmp(json_object_get_string(v), "direct"))
		c->source = TLS_FIT_DIRECT;
	else if (!strcmp(json_object_get_string(v), "solved"))
		c->source = TLS_FIT_SOLVED;
	else
		return bad(err, errlen, "source", "not \"solved\" or \"direct\"");
	if (!json_object_object_get_ex(o, "link", &v))
		return bad(err, errlen, "link", "missing");
	ret = tls_stats_link_from_json(v, &c->link, err, errlen);
	if (ret)
		return ret;
	if (!json_object_object_get_ex(o, "b_req_Bps", &v))
		return bad(err, errlen, "b_req_Bps", "missing");
	if (json_object_is_type(v, json_type_null))
		c->b_req = NAN;
	else if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
		c->b_req = json_object_get_double(v);
	else
		return bad(err, errlen, "b_req_Bps", "not a number or null");
	if (!json_object_object_get_ex(o, "fit", &fit) ||
	    !json_object_is_type(fit, json_type_object))
		return bad(err, errlen, "fit", "missing or not an object");
	if (!json_object_object_get_ex(fit, "ok", &v) || !json_object_is_type(v, json_type_boolean))
		return bad(err, errlen, "fit.ok", "missing or not a boolean");
	ret = from_json(fit, fit_fields, NFIELDS(fit_fields), &c->fit, err, errlen);
	if (ret)
		return ret;
	if (json_object_get_boolean(v)) {
		if (!isfinite(c->fit.a) || !isfinite(c->fit.b))
			return bad(err, errlen, "fit", "ok but a or b is not a number");
	} else {
		/* the reason travels as text; the code only says "no fit" */
		c->fit_err = c->fit.nobs ? -EDOM : -ENODATA;
	}
	return 0;
}

/* ---- spotDNN ---- */

static int check_io(FILE *f)
{
	return ferror(f) ? -EIO : 0;
}

/* What is missing for spotDNN, or NULL when every value is known. */
static const char *spotdnn_missing(const struct tls_stats_calib *c, double param_bytes)
{
	if (!isfinite(c->link.b_ps))
		return "bps (B_ps) is unknown: no link rate configured and the link never "
		       "saturated";
	if (!isfinite(c->b_req))
		return "instance_bandwith (B_req) is unknown: no worker traffic seen while the "
		       "link was not saturated";
	if (c->fit_err)
		return fit_err_str(c->fit_err);
	if (!(param_bytes > 0) || !isfinite(param_bytes))
		return "param (S_param) is not given";
	return NULL;
}

/*
 * The module's text, written only when complete. The lines of spotDNN it
 * stands in for are those of commit 7c8d1d4 (github.com/spotDNN/spotDNN):
 * profiler/instanceinfo.py line 14 (bps), 39 to 41 (param,
 * instance_bandwith, instance_comp), 43 and 44 (a, b); predictor.py reads
 * them at lines 8 to 14.
 */
int tls_stats_print_spotdnn(FILE *f, const struct tls_stats_calib *c, double param_bytes,
			    const char *job_name, char *err, size_t errlen)
{
	const struct tls_spotdnn_src src = { .push = false, .param_measured = false };

	return tls_stats_print_spotdnn_src(f, c, param_bytes, &src, job_name, err, errlen);
}

int tls_stats_print_spotdnn_src(FILE *f, const struct tls_stats_calib *c, double param_bytes,
				const struct tls_spotdnn_src *src, const char *job_name, char *err,
				size_t errlen)
{
	const char *why = spotdnn_missing(c, param_bytes);

	if (why) {
		if (err && errlen)
			snprintf(err, errlen, "%s", why);
		return -ENODATA;
	}
	fprintf(f, "# spotDNN's bandwidth model as tlsd measured it (tlsctl calibrate --format "
		   "spotdnn).\n");
	if (c->job == TLS_STATS_ALL_JOBS)
		fprintf(f, "# Every job's observations together.\n");
	else if (job_name)
		fprintf(f, "# Job %u (%s).\n", c->job, job_name);
	else
		fprintf(f, "# Job %u.\n", c->job);
	fprintf(f, "#\n"
		   "# Save as spotDNN/profiler/tlsd_calib.py and add this one line at the end of\n"
		   "# spotDNN/profiler/instanceinfo.py, leaving its own lines as they are:\n"
		   "#     from profiler.tlsd_calib import *\n"
		   "# Its names then stand for instanceinfo.py's own in predictor.py and\n"
		   "# provisioner.py.\n"
		   "#\n"
		   "# Units: bandwidths in MB/s and param in MB, 1 MB = 10^6 bytes as they\n"
		   "# leave the PS host, headers included (HTB's count: each segment with its\n"
		   "# Ethernet, IP and TCP headers). spotDNN's shipped values (bps = 1200,\n"
		   "# instance_bandwith = 142, param = 11.5) are nethogs' MB of 2^20 bytes of\n"
		   "# another cluster: this module replaces all three together, so that the\n"
		   "# model's ratios (2 * param / bandwidth, bps / n against instance_bandwith)\n"
		   "# are of one unit. a and b have no unit: P is a fraction of the time.\n");
	if (src->push)
		fprintf(f,
			"# Direction: push, the gradients into the PS (its ingress, counted as\n"
			"# they arrive, headers included); spotDNN's 2 * param / bandwidth\n"
			"# assumes the pull at that rate too (tlsctl calibrate --direction pull).\n");
	else
		fprintf(f, "# Direction: pull, the model out to the workers (the PS's egress);\n"
			   "# spotDNN's 2 * param / bandwidth assumes the push at that rate too\n"
			   "# (tlsctl calibrate --direction push measures it).\n");
	fprintf(f, "import numpy as _np\n"
		   "from profiler import instanceinfo as _profile\n"
		   "\n"
		   "__all__ = [\"bps\", \"instance_bandwith\", \"param\", \"a\", \"b\", "
		   "\"instance_comp\"]\n"
		   "\n");
	if (c->link.b_ps_measured)
		fprintf(f, "# bps = B_ps: the PS link's aggregate rate while saturated (%.1f s)\n",
			c->link.sat_ns / NS_PER_S);
	else
		fprintf(f, "# bps = B_ps: the configured link rate (the link was not saturated "
			   "long enough to measure it)\n");
	fprintf(f, "bps = %.6g\n", c->link.b_ps / TLS_SPOTDNN_MBPS);
	fprintf(f,
		"# instance_bandwith = B_req: a worker's rate while the link was not "
		"saturated\n"
		"instance_bandwith = %.6g\n",
		c->b_req / TLS_SPOTDNN_MBPS);
	if (src->param_measured)
		fprintf(f,
			"# param = S_param: what a worker sends per iteration, measured: the mean\n"
			"# of its %" PRIu64
			" pushes (bursts of gradients into the PS) that ended, in\n"
			"# bytes on the wire (payload and headers); the pull is the model, as big\n",
			src->bursts);
	else
		fprintf(f,
			"# param = S_param: what a worker pulls per iteration (tlsctl --param), in\n"
			"# bytes as they leave the PS (the model's payload and its headers)\n");
	fprintf(f, "param = %.6g\n", param_bytes / TLS_SPOTDNN_MBPS);
	fprintf(f,
		"# a, b: least squares of P(n) = min(a * sqrt(n) - b, 1), P %s, n the worker\n"
		"# flows active together; %u observations, n = %u..%u, rms residual of P "
		"%.4g\n"
		"a = %.6g\n"
		"b = %.6g\n",
		c->source == TLS_FIT_DIRECT ? "measured directly" : "solved from B_wk", c->fit.nobs,
		c->fit.n_min, c->fit.n_max, c->fit.rms, c->fit.a, c->fit.b);
	fprintf(f,
		"\n"
		"# instance_comp: the compute time per iteration, by spotDNN's own formula\n"
		"# (instanceinfo.py line 41), but with the param and instance_bandwith the\n"
		"# profile was taken at: instanceinfo.py's own, read here before this\n"
		"# module's replace them (spotDNN ships 11.5 and 142). instance_time is the\n"
		"# profile's iteration time, whose transfer ran at the profile's bandwidth;\n"
		"# computed at tlsd's, the compute times come out wrong, or negative.\n"
		"_profile_param = _profile.param\n"
		"_profile_bandwith = _profile.instance_bandwith\n"
		"instance_comp = _profile.instance_time - (\n"
		"    2 * _profile_param / _profile_bandwith\n"
		"    - 2 * _np.array(_profile.instance_gpus) * _profile_param / 10000)\n"
		"if not _np.all(instance_comp > 0):\n"
		"    raise ValueError(\n"
		"        \"tlsd_calib: instance_comp %%s is not positive: instance_time is \"\n"
		"        \"shorter than its transfer at the profile's bandwidth (param = %%g, \"\n"
		"        \"instance_bandwith = %%g in instanceinfo.py): set those two to the \"\n"
		"        \"profile run's\" %% (instance_comp, _profile_param, _profile_bandwith))\n");
	if (fflush(f) || check_io(f))
		return -EIO;
	return 0;
}

/* ---- CSV ---- */

int tls_stats_csv_header(FILE *f)
{
	fprintf(f, "time_s,kind,job,proto,local,remote,n,bytes,rate_Bps,rate_avg_Bps,active_s,"
		   "sat_active_s,b_wk_Bps,b_req_Bps,p_direct,p_solved\n");
	return check_io(f);
}

static void csv_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, ",%.6g", v);
	else
		fputs(",", f); /* unknown: empty */
}

static void csv_tail(FILE *f, unsigned int n, uint64_t bytes, double rate, double avg,
		     uint64_t active, uint64_t sat, const struct tls_stats_est *e)
{
	fprintf(f, ",%u,%llu", n, (unsigned long long)bytes);
	csv_num(f, rate);
	csv_num(f, avg);
	fprintf(f, ",%.6f,%.6f", active / NS_PER_S, sat / NS_PER_S);
	csv_num(f, e->b_wk);
	csv_num(f, e->b_req);
	csv_num(f, e->p_direct);
	csv_num(f, e->p_solved);
	fputc('\n', f);
}

int tls_stats_csv_job(FILE *f, uint64_t t_ns, const struct tls_stats_job_info *j)
{
	fprintf(f, "%.6f,job,%u,,,", t_ns / NS_PER_S, j->job);
	csv_tail(f, j->n, j->bytes, j->rate, j->rate_avg, j->active_ns, j->sat_active_ns, &j->est);
	return check_io(f);
}

int tls_stats_csv_flow(FILE *f, uint64_t t_ns, const struct tls_stats_flow_info *fl)
{
	char l[INET6_ADDRSTRLEN + 8], r[INET6_ADDRSTRLEN + 8];
	const char *pn = proto_name(fl->key.proto);

	tls_flow_endpoint_str(&fl->key, false, l, sizeof(l));
	tls_flow_endpoint_str(&fl->key, true, r, sizeof(r));
	fprintf(f, "%.6f,flow,%u,", t_ns / NS_PER_S, fl->job);
	if (pn)
		fputs(pn, f);
	else
		fprintf(f, "%u", fl->key.proto);
	fprintf(f, ",%s,%s", l, r);
	csv_tail(f, fl->n, fl->acc.bytes, fl->rate, fl->rate_avg, fl->acc.active_ns,
		 fl->acc.sat_active_ns, &fl->est);
	return check_io(f);
}

/* The n sweep behind the fit: the observations as `tlsctl calibrate --format
 * csv` prints them. */
int tls_stats_csv_obs_header(FILE *f)
{
	fprintf(f, "job,n,retired,used,active_s,unsat_active_s,bytes,b_wk_Bps,b_req_Bps,"
		   "p_direct,p_solved,use\n");
	return check_io(f);
}

int tls_stats_csv_obs(FILE *f, const struct tls_stats_obs *o)
{
	fprintf(f, "%u,%u,%d,%d,%.6f,%.6f,%llu", o->job, o->n, o->retired, o->use == TLS_OBS_USED,
		o->acc.active_ns / NS_PER_S, o->acc.unsat_ns / NS_PER_S,
		(unsigned long long)o->acc.bytes);
	csv_num(f, o->est.b_wk);
	csv_num(f, o->est.b_req);
	csv_num(f, o->est.p_direct);
	csv_num(f, o->est.p_solved);
	/* the reasons have no comma or quote: no quoting needed */
	fprintf(f, ",%s\n", tls_obs_use_str(o->use));
	return check_io(f);
}
