/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading tlsd's replies (JSON objects, ctl_proto.h) without a check at
 * every step: a missing member reads as the protocol's "unknown".
 */
#ifndef TLS_JSON_GET_H
#define TLS_JSON_GET_H

#include <stdint.h>

#include <json-c/json.h>

/* A member, or NULL; a string, or "-"; a number, NaN if
 * null or missing (the protocol's "unknown"); integers, 0 if missing (json-c's). */
struct json_object *tls_json_get(struct json_object *o, const char *k);
const char *tls_json_str(struct json_object *o, const char *k);
int64_t tls_json_int(struct json_object *o, const char *k);
uint64_t tls_json_u64(struct json_object *o, const char *k);
double tls_json_num(struct json_object *o, const char *k);

#endif
