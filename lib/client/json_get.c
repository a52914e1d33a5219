// SPDX-License-Identifier: GPL-2.0-only
/* Reading tlsd's replies: see json_get.h. */
#include <math.h>

#include "json_get.h"

struct json_object *tls_json_get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(o, k, &v);
	return v;
}

const char *tls_json_str(struct json_object *o, const char *k)
{
	struct json_object *v = tls_json_get(o, k);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "-";
}

int64_t tls_json_int(struct json_object *o, const char *k)
{
	return json_object_get_int64(tls_json_get(o, k));
}

uint64_t tls_json_u64(struct json_object *o, const char *k)
{
	return json_object_get_uint64(tls_json_get(o, k));
}

double tls_json_num(struct json_object *o, const char *k)
{
	struct json_object *v = tls_json_get(o, k);

	if (!v ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return NAN;
	return json_object_get_double(v);
}
