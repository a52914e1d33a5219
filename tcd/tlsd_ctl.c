// SPDX-License-Identifier: GPL-2.0-only
/* tlsd's control replies: see tlsd_ctl.h and, for the schema, ctl_proto.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "tlsd_ctl.h"

static void add(struct json_object *o, const char *k, struct json_object *v)
{
	json_object_object_add(o, k, v);
}

static struct json_object *str(const char *s)
{
	return json_object_new_string(s);
}

static struct json_object *u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

static const char *policy_source(const struct tlsd_view *v)
{
	return v->policy_live ? "tlsctl" : "config";
}

static int reply_status(const struct tlsd_view *v, struct json_object *r)
{
	add(r, "tlsd_version", str(v->version));
	add(r, "pid", json_object_new_int(getpid()));
	add(r, "interface", str(v->cfg->ifname));
	add(r, "link_rate_bps", u64(v->rate_bps));
	add(r, "policy", str(tls_policy_name(v->cfg->policy)));
	add(r, "policy_source", str(policy_source(v)));
	add(r, "interval_ns", u64(v->cfg->interval_ns));
	add(r, "bands", json_object_new_int((int)v->cfg->bands));
	add(r, "jobs", json_object_new_int((int)v->jobs->n));
	add(r, "uptime_ns", u64(v->uptime_ns));
	add(r, "step", u64(v->step));
	add(r, "control_group", v->cfg->ctl_group[0] ? str(v->cfg->ctl_group) : NULL);
	return TLS_CTL_OK;
}

static struct json_object *job_object(const struct tlsd_view *v, const struct tls_job_entry *j)
{
	struct json_object *o = json_object_new_object(), *ports = json_object_new_array();
	struct tls_job_stats st = {};
	__u32 band = TLS_BAND_NONE;
	unsigned int p;

	add(o, "id", json_object_new_int((int)j->id));
	add(o, "name", str(j->name));
	/* What the classifier has, not what tlsd meant to write. */
	if (tls_get_job_band(v->m, j->id, &band))
		band = TLS_BAND_NONE;
	add(o, "band", band == TLS_BAND_NONE ? NULL : json_object_new_int((int)band));
	add(o, "origin", str(j->discovered ? "discovered" : "static"));
	for (p = 0; p < j->nports; p++)
		json_object_array_add(ports, json_object_new_int(j->ports[p]));
	add(o, "ports", ports);
	add(o, "pids", json_object_new_array()); /* discovery will fill them */
	tls_read_job_stats(v->m, j->id, &st);
	add(o, "bytes", u64(st.bytes));
	add(o, "packets", u64(st.packets));
	add(o, "segs", u64(st.segs));
	return o;
}

static int reply_jobs(const struct tlsd_view *v, struct json_object *r)
{
	struct json_object *a = json_object_new_array_ext((int)v->jobs->n);
	unsigned int i;

	for (i = 0; i < v->jobs->n; i++)
		json_object_array_add(a, job_object(v, &v->jobs->job[i]));
	add(r, "jobs", a);
	return TLS_CTL_OK;
}

static int reply_policy(const struct tlsd_view *v, struct json_object *r)
{
	add(r, "policy", str(tls_policy_name(v->cfg->policy)));
	add(r, "interval_ns", u64(v->cfg->interval_ns));
	add(r, "policy_source", str(policy_source(v)));
	add(r, "config_policy", str(tls_policy_name(v->conf_policy)));
	add(r, "config_interval_ns", u64(v->conf_interval_ns));
	add(r, "changed", json_object_new_boolean(v->changed));
	return TLS_CTL_OK;
}

int tlsd_ctl_reply(const struct tlsd_view *v, const struct tls_ctl_req *req,
		   struct json_object *reply, char *msg, size_t msglen)
{
	switch (req->cmd) {
	case TLS_CTL_STATUS:
		return reply_status(v, reply);
	case TLS_CTL_JOBS:
		return reply_jobs(v, reply);
	case TLS_CTL_POLICY:
		return reply_policy(v, reply);
	case TLS_CTL_STATS:
	case TLS_CTL_CALIBRATE:
		snprintf(msg, msglen, "statistics not available yet (this tlsd has no "
				      "statistics engine)");
		return TLS_CTL_E_UNAVAILABLE;
	case TLS_CTL_NCMDS:
		break;
	}
	snprintf(msg, msglen, "command not handled");
	return TLS_CTL_E_INTERNAL;
}
