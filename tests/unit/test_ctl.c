// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control protocol's pure half (tcd/ctl.c): every class of malformed
 * request gets its error code and a message naming the problem (and echoes
 * the client's id once it was read), good requests come out as checked
 * structs, line framing keeps to the size limit, error replies are valid
 * JSON even when they quote the client's bytes, and random input never
 * crashes the parser (ASan and UBSan watch). Then the daemon's replies
 * (tcd/tlsd_ctl.c) on a state built by hand.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "ctl.h"
#include "stats_export.h"
#include "tlsd_ctl.h"
#include "unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct bad_case {
	const char *req;
	int code;
	const char *needle; /* in the message */
};

#define V "\"version\":1,"

static const struct bad_case bad_cases[] = {
	/* not JSON */
	{ "", TLS_CTL_E_PARSE, "empty request" },
	{ "   \t", TLS_CTL_E_PARSE, "empty request" },
	{ "hello", TLS_CTL_E_PARSE, "not JSON" },
	{ "{version:1}", TLS_CTL_E_PARSE, "not JSON" },
	{ "{'version':1}", TLS_CTL_E_PARSE, "not JSON" },
	{ "{" V "\"cmd\":\"status\"", TLS_CTL_E_PARSE, "not JSON" },	/* truncated */
	{ "{" V "\"cmd\":\"sta", TLS_CTL_E_PARSE, "not JSON" },		/* truncated */
	{ "{" V "\"cmd\":\"status\"} x", TLS_CTL_E_PARSE, "offset" },	/* trailing */
	{ "{" V "\"cmd\":\"status\"}{}", TLS_CTL_E_PARSE, "not JSON" }, /* two */
	{ "{" V "\"cmd\":\"status\",}", TLS_CTL_E_PARSE, "not JSON" },	/* comma */
	{ "{" V "\"cmd\":\"st\xff\"}", TLS_CTL_E_PARSE, "utf-8" },	/* not UTF-8 */
	{ "{\"a\":[[[[[[1]]]]]]}", TLS_CTL_E_PARSE, "nesting too deep" },
	{ "nul", TLS_CTL_E_PARSE, "not JSON" },
	{ "null", TLS_CTL_E_PARSE, "null" },
	/* not an object */
	{ "[1,2]", TLS_CTL_E_REQUEST, "must be a JSON object" },
	{ "42", TLS_CTL_E_REQUEST, "not an integer" },
	{ "\"status\"", TLS_CTL_E_REQUEST, "not a string" },
	{ "true", TLS_CTL_E_REQUEST, "not a boolean" },
	/* version */
	{ "{\"cmd\":\"status\"}", TLS_CTL_E_REQUEST, "missing field 'version'" },
	{ "{\"version\":\"1\",\"cmd\":\"status\"}", TLS_CTL_E_REQUEST,
	  "version must be an integer, not a string" },
	{ "{\"version\":1.0,\"cmd\":\"status\"}", TLS_CTL_E_REQUEST, "version must be an integer" },
	{ "{\"version\":2,\"cmd\":\"status\"}", TLS_CTL_E_VERSION, "version 2 is not supported" },
	{ "{\"version\":0,\"cmd\":\"status\"}", TLS_CTL_E_VERSION, "speaks version 1" },
	{ "{\"version\":-1,\"cmd\":\"status\"}", TLS_CTL_E_VERSION, "version -1" },
	{ "{\"version\":18446744073709551617,\"cmd\":\"status\"}", TLS_CTL_E_VERSION,
	  "not supported" },
	/* command */
	{ "{" V "\"command\":\"status\"}", TLS_CTL_E_REQUEST, "missing field 'cmd'" },
	{ "{\"version\":1}", TLS_CTL_E_REQUEST, "missing field 'cmd'" },
	{ "{" V "\"cmd\":1}", TLS_CTL_E_REQUEST, "cmd must be a string, not an integer" },
	{ "{" V "\"cmd\":[\"status\"]}", TLS_CTL_E_REQUEST, "cmd must be a string, not an array" },
	{ "{" V "\"cmd\":\"reboot\"}", TLS_CTL_E_COMMAND, "unknown command 'reboot'" },
	{ "{" V "\"cmd\":\"STATUS\"}", TLS_CTL_E_COMMAND, "unknown command 'STATUS'" },
	{ "{" V "\"cmd\":\"\"}", TLS_CTL_E_COMMAND, "unknown command ''" },
	{ "{" V "\"cmd\":\"status\\u0000x\"}", TLS_CTL_E_COMMAND, "unknown command" },
	/* unknown fields */
	{ "{" V "\"cmd\":\"status\",\"verbose\":true}", TLS_CTL_E_REQUEST,
	  "unknown field 'verbose' for command 'status'" },
	{ "{" V "\"cmd\":\"jobs\",\"policy\":\"fifo\"}", TLS_CTL_E_REQUEST,
	  "unknown field 'policy' for command 'jobs'" },
	{ "{" V "\"cmd\":\"policy\",\"polcy\":\"fifo\"}", TLS_CTL_E_REQUEST,
	  "unknown field 'polcy'" },
	{ "{" V "\"cmd\":\"calibrate\",\"format\":\"json\"}", TLS_CTL_E_REQUEST,
	  "unknown field 'format' for command 'calibrate'" },
	/* wrong field types */
	{ "{" V "\"cmd\":\"status\",\"id\":{}}", TLS_CTL_E_REQUEST,
	  "id must be an integer or a string, not an object" },
	{ "{" V "\"cmd\":\"status\",\"id\":1.5}", TLS_CTL_E_REQUEST, "id must be" },
	{ "{" V "\"cmd\":\"policy\",\"policy\":1}", TLS_CTL_E_REQUEST,
	  "policy must be a string, not an integer" },
	{ "{" V "\"cmd\":\"policy\",\"policy\":null}", TLS_CTL_E_REQUEST,
	  "policy must be a string, not null" },
	{ "{" V "\"cmd\":\"policy\",\"interval\":500}", TLS_CTL_E_REQUEST,
	  "interval must be a string" },
	{ "{" V "\"cmd\":\"policy\",\"reset\":\"yes\"}", TLS_CTL_E_REQUEST,
	  "reset must be true or false" },
	{ "{" V "\"cmd\":\"stats\",\"follow\":1}", TLS_CTL_E_REQUEST,
	  "follow must be true or false" },
	{ "{" V "\"cmd\":\"stats\",\"job\":[1]}", TLS_CTL_E_REQUEST,
	  "job must be a name (a string) or an id (an integer), not an array" },
	/* bad values */
	{ "{" V "\"cmd\":\"policy\",\"policy\":\"lifo\"}", TLS_CTL_E_VALUE,
	  "policy: 'lifo' is not one of fifo, one, roundrobin, bursts" },
	{ "{" V "\"cmd\":\"policy\",\"policy\":\"\"}", TLS_CTL_E_VALUE, "policy: ''" },
	{ "{" V "\"cmd\":\"policy\",\"policy\":\"fifo\\u0000\"}", TLS_CTL_E_VALUE,
	  "policy: contains a NUL" },
	{ "{" V "\"cmd\":\"policy\",\"interval\":\"fast\"}", TLS_CTL_E_VALUE,
	  "interval: 'fast' is not a duration" },
	{ "{" V "\"cmd\":\"policy\",\"interval\":\"-1s\"}", TLS_CTL_E_VALUE,
	  "interval: '-1s' is not a duration" },
	{ "{" V "\"cmd\":\"policy\",\"interval\":\"5ms\"}", TLS_CTL_E_VALUE,
	  "interval: '5ms' is shorter than the minimum, 10ms" },
	{ "{" V "\"cmd\":\"policy\",\"interval\":\"0\"}", TLS_CTL_E_VALUE, "shorter than" },
	{ "{" V "\"cmd\":\"policy\",\"reset\":true,\"policy\":\"one\"}", TLS_CTL_E_REQUEST,
	  "reset cannot be combined" },
	{ "{" V "\"cmd\":\"stats\",\"job\":0}", TLS_CTL_E_VALUE, "job: 0 is not a job id" },
	{ "{" V "\"cmd\":\"stats\",\"job\":1024}", TLS_CTL_E_VALUE, "job: 1024 is not a job id" },
	{ "{" V "\"cmd\":\"stats\",\"job\":\"\"}", TLS_CTL_E_VALUE, "job: '' is not a job name" },
	{ "{" V "\"cmd\":\"calibrate\",\"source\":\"best\"}", TLS_CTL_E_VALUE,
	  "source: 'best' is not one of solved, direct" },
	{ "{" V "\"cmd\":\"calibrate\",\"source\":1}", TLS_CTL_E_REQUEST,
	  "source must be a string" },
	{ "{" V "\"cmd\":\"calibrate\",\"follow\":true}", TLS_CTL_E_REQUEST,
	  "unknown field 'follow' for command 'calibrate'" },
	{ "{" V "\"cmd\":\"stats\",\"source\":\"direct\"}", TLS_CTL_E_REQUEST,
	  "unknown field 'source' for command 'stats'" },
};

static void assert_names(const char *msg, const char *needle, const char *req)
{
	if (!strstr(msg, needle))
		print_error("message \"%s\" does not name \"%s\" (request: %s)\n", msg, needle,
			    req);
	assert_non_null(strstr(msg, needle));
}

/* The error line for a request: valid JSON, ok false, the code, the id. */
static void check_error_line(const struct tls_ctl_req *req, int code, const char *msg)
{
	char *line = tls_ctl_error_line(req, code, msg);
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o, *e, *v;
	size_t len;

	assert_non_null(line);
	len = strlen(line);
	assert_true(len > 1);
	assert_int_equal(line[len - 1], '\n');
	assert_null(memchr(line, '\n', len - 1)); /* one line */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, line, (int)len - 1);
	json_tokener_free(tok);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "ok", &v));
	assert_false(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(o, "version", &v));
	assert_int_equal(json_object_get_int(v), TLS_CTL_VERSION);
	assert_true(json_object_object_get_ex(o, "error", &e));
	assert_true(json_object_object_get_ex(e, "code", &v));
	assert_string_equal(json_object_get_string(v), tls_ctl_err_name(code));
	assert_true(json_object_object_get_ex(e, "message", &v));
	assert_string_equal(json_object_get_string(v), msg);
	assert_int_equal(json_object_object_get_ex(o, "id", &v), req && req->id);
	json_object_put(o);
	free(line);
}

static void test_malformed(void **state)
{
	struct tls_ctl_req req;
	char msg[512];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *b = &bad_cases[i];
		int code;

		msg[0] = '\0';
		code = tls_ctl_parse_request(b->req, strlen(b->req), &req, msg, sizeof(msg));
		if (code != b->code)
			print_error("request %s: code %s, expected %s (%s)\n", b->req,
				    tls_ctl_err_name(code), tls_ctl_err_name(b->code), msg);
		assert_int_equal(code, b->code);
		assert_names(msg, b->needle, b->req);
		check_error_line(&req, code, msg);
		tls_ctl_req_release(&req);
	}
}

/* A NUL byte inside the line (strlen would stop there). */
static void test_nul_byte(void **state)
{
	static const char line[] = "{\"version\":1,\0\"cmd\":\"status\"}";
	struct tls_ctl_req req;
	char msg[256];

	(void)state;
	assert_int_equal(tls_ctl_parse_request(line, sizeof(line) - 1, &req, msg, sizeof(msg)),
			 TLS_CTL_E_PARSE);
	assert_names(msg, "NUL byte at offset 13", "NUL");
	tls_ctl_req_release(&req);
}

/* Over the limit: refused before any parsing; at the limit: parsed. */
static void test_oversized(void **state)
{
	static const char head[] = "{\"version\":1,\"cmd\":\"status\",\"id\":\"";
	size_t max_line = TLS_CTL_MAX_MSG - 1; /* without the newline */
	char *line = malloc(TLS_CTL_MAX_MSG + 16);
	struct tls_ctl_req req;
	char msg[256];

	(void)state;
	assert_non_null(line);
	memcpy(line, head, sizeof(head) - 1);
	memset(line + sizeof(head) - 1, 'x', max_line - (sizeof(head) - 1) - 2);
	memcpy(line + max_line - 2, "\"}", 2);
	assert_int_equal(tls_ctl_parse_request(line, max_line, &req, msg, sizeof(msg)), TLS_CTL_OK);
	assert_int_equal(req.cmd, TLS_CTL_STATUS);
	tls_ctl_req_release(&req);
	memset(line + sizeof(head) - 1, 'x', max_line + 1 - (sizeof(head) - 1) - 2);
	memcpy(line + max_line - 1, "\"}", 2);
	assert_int_equal(tls_ctl_parse_request(line, max_line + 1, &req, msg, sizeof(msg)),
			 TLS_CTL_E_TOO_LONG);
	assert_names(msg, "the limit is 65536 bytes", "oversized");
	check_error_line(&req, TLS_CTL_E_TOO_LONG, msg);
	tls_ctl_req_release(&req);
	free(line);
}

/* A long field name of multibyte characters: the message quotes it cut at
 * a character boundary, so that the reply stays valid UTF-8. */
static void test_quote_utf8(void **state)
{
	char line[512] = "{\"version\":1,\"cmd\":\"status\",\"";
	struct tls_ctl_req req;
	char msg[256];
	int i;

	(void)state;
	for (i = 0; i < 30; i++)
		strcat(line, "\xc3\xa9"); /* é */
	strcat(line, "\":1}");
	assert_int_equal(tls_ctl_parse_request(line, strlen(line), &req, msg, sizeof(msg)),
			 TLS_CTL_E_REQUEST);
	assert_names(msg, "unknown field '\xc3\xa9", line);
	assert_names(msg, "...' for command 'status'", line);
	check_error_line(&req, TLS_CTL_E_REQUEST, msg);
	tls_ctl_req_release(&req);
}

/* The id comes back even when what follows it is wrong. */
static void test_id_echoed(void **state)
{
	static const char *const reqs[] = {
		"{\"id\":7,\"version\":3,\"cmd\":\"status\"}",
		"{\"id\":\"abc\",\"version\":1,\"cmd\":\"nope\"}",
		"{\"version\":1,\"cmd\":\"policy\",\"policy\":\"lifo\",\"id\":-5}",
	};
	struct tls_ctl_req req;
	char msg[256];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(reqs); i++) {
		assert_int_not_equal(
			tls_ctl_parse_request(reqs[i], strlen(reqs[i]), &req, msg, sizeof(msg)),
			TLS_CTL_OK);
		assert_non_null(req.id);
		check_error_line(&req, TLS_CTL_E_VALUE, msg);
		tls_ctl_req_release(&req);
	}
}

static void test_good(void **state)
{
	struct tls_ctl_req r;
	char msg[256];

#define PARSE(s) tls_ctl_parse_request(s, strlen(s), &r, msg, sizeof(msg))
	(void)state;
	assert_int_equal(PARSE("{\"version\":1,\"cmd\":\"status\"}"), TLS_CTL_OK);
	assert_int_equal(r.cmd, TLS_CTL_STATUS);
	assert_null(r.id);
	tls_ctl_req_release(&r);

	assert_int_equal(PARSE("  {\"cmd\":\"jobs\", \"version\": 1, \"id\": 42}\r"), TLS_CTL_OK);
	assert_int_equal(r.cmd, TLS_CTL_JOBS);
	assert_int_equal(json_object_get_int(r.id), 42);
	tls_ctl_req_release(&r);

	assert_int_equal(PARSE("{\"version\":1,\"cmd\":\"policy\"}"), TLS_CTL_OK);
	assert_int_equal(r.cmd, TLS_CTL_POLICY);
	assert_false(r.has_policy || r.has_interval || r.reset);
	tls_ctl_req_release(&r);

	assert_int_equal(PARSE("{\"version\":1,\"cmd\":\"policy\",\"policy\":\"rr\","
			       "\"interval\":\"250ms\"}"),
			 TLS_CTL_OK);
	assert_true(r.has_policy && r.has_interval);
	assert_int_equal(r.policy, TLS_POLICY_RR);
	assert_int_equal(r.interval_ns, 250ULL * 1000 * 1000);
	tls_ctl_req_release(&r);

	assert_int_equal(PARSE("{\"version\":1,\"cmd\":\"policy\",\"interval\":\"10ms\"}"),
			 TLS_CTL_OK);
	assert_true(!r.has_policy && r.has_interval);
	assert_int_equal(r.interval_ns, TLS_INTERVAL_MIN_NS);
	tls_ctl_req_release(&r);

	assert_int_equal(PARSE("{\"version\":1,\"cmd\":\"policy\",\"reset\":true}"), TLS_CTL_OK);
	assert_true(r.reset);
	tls_ctl_req_release(&r);

	assert_int_equal(PARSE("{\"version\":1,\"cmd\":\"stats\",\"job\":\"bert\","
			       "\"follow\":true}"),
			 TLS_CTL_OK);
	assert_true(r.has_job && r.follow);
	assert_string_equal(r.job_name, "bert");
	tls_ctl_req_release(&r);

	assert_int_equal(PARSE("{\"version\":1,\"cmd\":\"stats\",\"job\":1023}"), TLS_CTL_OK);
	assert_true(r.has_job);
	assert_int_equal(r.job_id, 1023);
	assert_string_equal(r.job_name, "");
	tls_ctl_req_release(&r);

	assert_int_equal(PARSE("{\"version\":1,\"cmd\":\"calibrate\"}"), TLS_CTL_OK);
	assert_int_equal(r.cmd, TLS_CTL_CALIBRATE);
	assert_false(r.has_job || r.source_direct);
	tls_ctl_req_release(&r);

	assert_int_equal(PARSE("{\"version\":1,\"cmd\":\"calibrate\",\"job\":\"a\","
			       "\"source\":\"direct\"}"),
			 TLS_CTL_OK);
	assert_true(r.has_job && r.source_direct);
	assert_string_equal(r.job_name, "a");
	tls_ctl_req_release(&r);
#undef PARSE
}

static void test_framing(void **state)
{
	char buf[64];
	size_t len = 99;

	(void)state;
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(tls_ctl_next_line(buf, 0, 16, &len), 0);
	assert_int_equal(tls_ctl_next_line(buf, 10, 16, &len), 0); /* room left */
	assert_int_equal(tls_ctl_next_line(buf, 16, 16, &len), -E2BIG);
	assert_int_equal(tls_ctl_next_line(buf, 40, 16, &len), -E2BIG);
	buf[15] = '\n'; /* 16 bytes with the newline: the most there may be */
	assert_int_equal(tls_ctl_next_line(buf, 40, 16, &len), 16);
	assert_int_equal(len, 15);
	buf[15] = 'x';
	buf[16] = '\n'; /* 17: one too many */
	assert_int_equal(tls_ctl_next_line(buf, 40, 16, &len), -E2BIG);
	buf[0] = '\n';
	assert_int_equal(tls_ctl_next_line(buf, 40, 16, &len), 1);
	assert_int_equal(len, 0);
	buf[0] = 'x';
	buf[3] = '\n';
	assert_int_equal(tls_ctl_next_line(buf, 3, 16, &len), 0); /* not yet received */
	assert_int_equal(tls_ctl_next_line(buf, 4, 16, &len), 4);
	assert_int_equal(len, 3);
}

/* Random bytes, and good requests cut or flipped at random: always a
 * definite answer with a message, never a crash or a leak. */
static void test_fuzz(void **state)
{
	static const char good[] = "{\"version\":1,\"cmd\":\"policy\",\"policy\":\"one\","
				   "\"interval\":\"500ms\",\"id\":\"x\"}";
	struct tls_ctl_req req;
	char line[256], msg[512];
	unsigned int seed = 12345, i;
	size_t len, k;
	int code;

	(void)state;
	for (i = 0; i < 20000; i++) {
		switch (i % 3) {
		case 0: /* random bytes */
			len = (size_t)rand_r(&seed) % sizeof(line);
			for (k = 0; k < len; k++)
				line[k] = (char)rand_r(&seed);
			break;
		case 1: /* truncated */
			len = (size_t)rand_r(&seed) % sizeof(good);
			memcpy(line, good, len);
			break;
		default: /* a few bytes flipped */
			len = sizeof(good) - 1;
			memcpy(line, good, len);
			for (k = 0; k < 3; k++)
				line[rand_r(&seed) % len] = (char)rand_r(&seed);
		}
		msg[0] = '\0';
		code = tls_ctl_parse_request(line, len, &req, msg, sizeof(msg));
		assert_true(code >= 0 && code < TLS_CTL_NERRS);
		if (code)
			assert_true(msg[0] != '\0');
		tls_ctl_req_release(&req);
	}
}

/* --- the daemon's replies, on a state built by hand --- */

static struct json_object *reply_for(const struct tlsd_view *v, const char *reqline, int *code,
				     char *msg, size_t msglen)
{
	struct tls_ctl_req req;
	struct json_object *r;

	assert_int_equal(tls_ctl_parse_request(reqline, strlen(reqline), &req, msg, msglen),
			 TLS_CTL_OK);
	r = tls_ctl_reply_new(&req);
	*code = tlsd_ctl_reply(v, &req, r, msg, msglen);
	tls_ctl_req_release(&req);
	return r;
}

static const char *str_of(struct json_object *o, const char *k)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, k, &v));
	return json_object_get_string(v);
}

static int64_t int_of(struct json_object *o, const char *k)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, k, &v));
	return json_object_get_int64(v);
}

/* stats and calibrate from a statistics engine fed by hand: the objects
 * come back through stats_export's readers, as tlsctl reads them. */
static void test_stats_replies(struct tlsd_view *v)
{
	struct tls_stats_conf sc;
	struct tls_stats_link_info link;
	struct tls_stats_job_info ji;
	struct tls_stats_calib cal;
	struct tls_stats *st;
	struct json_object *r, *a, *j;
	uint64_t t, bytes = 0;
	char msg[256];
	int code;

	tls_stats_conf_defaults(&sc);
	sc.link_bps = 100000000;
	assert_int_equal(tls_stats_new(&sc, &st), 0);
	for (t = 0; t <= 20; t++) { /* job 1 at 5 MB/s for 2 s */
		assert_int_equal(tls_stats_begin(st, 1000000000ULL + t * 100000000ULL), 0);
		assert_int_equal(tls_stats_add_job(st, 0, 0), 0);
		assert_int_equal(tls_stats_add_job(st, 1, bytes), 0);
		assert_int_equal(tls_stats_end(st), 0);
		bytes += 500000;
	}
	v->stats = st;
	v->stats_period_ns = 100000000;

	r = reply_for(v, "{\"version\":1,\"cmd\":\"stats\",\"job\":\"resnet\"}", &code, msg,
		      sizeof(msg));
	assert_int_equal(code, TLS_CTL_OK);
	assert_int_equal(tls_stats_link_from_json(json_object_object_get(r, "link"), &link, msg,
						  sizeof(msg)),
			 0);
	assert_int_equal(link.samples, 20);
	assert_true(json_object_object_get_ex(r, "jobs", &a));
	assert_int_equal(json_object_array_length(a), 1); /* only the job asked for */
	j = json_object_array_get_idx(a, 0);
	assert_string_equal(str_of(j, "name"), "resnet");
	assert_int_equal(tls_stats_job_from_json(j, &ji, msg, sizeof(msg)), 0);
	assert_int_equal(ji.job, 1);
	assert_int_equal(ji.bytes, bytes - 500000);
	assert_true(ji.rate > 4.9e6 && ji.rate < 5.1e6);
	assert_true(json_object_object_get_ex(r, "flows", &a));
	assert_int_equal(json_object_array_length(a), 0);
	json_object_put(r);

	r = reply_for(v, "{\"version\":1,\"cmd\":\"stats\"}", &code, msg, sizeof(msg));
	assert_int_equal(code, TLS_CTL_OK);
	assert_true(json_object_object_get_ex(r, "jobs", &a));
	assert_int_equal(json_object_array_length(a), 2); /* the default class and job 1 */
	assert_string_equal(str_of(json_object_array_get_idx(a, 0), "name"), "(default class)");
	json_object_put(r);

	r = reply_for(v, "{\"version\":1,\"cmd\":\"stats\",\"job\":\"gpt\"}", &code, msg,
		      sizeof(msg));
	assert_int_equal(code, TLS_CTL_E_NOT_FOUND);
	assert_names(msg, "no job named 'gpt'", "stats gpt");
	json_object_put(r);

	r = reply_for(v, "{\"version\":1,\"cmd\":\"calibrate\",\"source\":\"direct\"}", &code, msg,
		      sizeof(msg));
	assert_int_equal(code, TLS_CTL_OK);
	assert_int_equal(tls_stats_calib_from_json(r, &cal, msg, sizeof(msg)), 0);
	assert_int_equal(cal.source, TLS_FIT_DIRECT);
	assert_int_equal(cal.job, TLS_STATS_ALL_JOBS);
	assert_true(json_object_object_get_ex(r, "spotdnn", &j));
	assert_true(json_object_object_get_ex(j, "instance_bandwith", NULL));
	assert_true(json_object_object_get_ex(r, "observations", &a));
	json_object_put(r);

	v->stats = NULL;
	tls_stats_free(st);
}

/* The tree's state in status: intact with its heals, yielded with why,
 * absent since when. */
static void test_tree_status(struct tlsd_view *v)
{
	struct tls_heal h;
	struct json_object *r, *t, *x;
	char msg[256];
	int code;

	tls_heal_init(&h, 5, 60000000000ULL);
	h.watched = true;
	assert_true(tls_heal_admit(&h, 1000));
	h.heals = 1;
	h.last_ns = 1000;
	h.last_took_ns = 4000000;
	strcpy(h.last_reason, "root qdisc deleted");
	v->heal = &h;
	v->now_ns = 3000;
	r = reply_for(v, "{\"version\":1,\"cmd\":\"status\"}", &code, msg, sizeof(msg));
	assert_int_equal(code, TLS_CTL_OK);
	assert_true(json_object_object_get_ex(r, "tree", &t));
	assert_string_equal(str_of(t, "state"), "intact");
	assert_true(json_object_get_boolean(json_object_object_get(t, "watched")));
	assert_int_equal(int_of(t, "heals"), 1);
	assert_int_equal(int_of(t, "heals_recent"), 1);
	assert_int_equal(int_of(t, "heal_limit"), 5);
	assert_int_equal(int_of(t, "heal_window_ns"), 60000000000LL);
	assert_true(json_object_object_get_ex(t, "last_heal", &x));
	assert_string_equal(str_of(x, "reason"), "root qdisc deleted");
	assert_int_equal(int_of(x, "ago_ns"), 2000);
	assert_int_equal(int_of(x, "took_ns"), 4000000);
	assert_true(json_object_object_get_ex(t, "yield_reason", &x));
	assert_null(x);
	assert_true(json_object_object_get_ex(t, "since_ns", &x));
	assert_null(x);
	json_object_put(r);

	h.state = TLS_TREE_YIELDED;
	h.since_ns = 2500;
	strcpy(h.yield_reason,
	       "root qdisc replaced by pfifo (handle 1:), after 5 heals within 60s");
	r = reply_for(v, "{\"version\":1,\"cmd\":\"status\"}", &code, msg, sizeof(msg));
	assert_true(json_object_object_get_ex(r, "tree", &t));
	assert_string_equal(str_of(t, "state"), "yielded");
	assert_string_equal(str_of(t, "yield_reason"), h.yield_reason);
	assert_int_equal(int_of(t, "since_ns"), 500);
	json_object_put(r);

	h.state = TLS_TREE_ABSENT;
	h.returns = 2;
	h.watched = false;
	r = reply_for(v, "{\"version\":1,\"cmd\":\"status\"}", &code, msg, sizeof(msg));
	assert_true(json_object_object_get_ex(r, "tree", &t));
	assert_string_equal(str_of(t, "state"), "absent");
	assert_false(json_object_get_boolean(json_object_object_get(t, "watched")));
	assert_int_equal(int_of(t, "interface_returns"), 2);
	assert_true(json_object_object_get_ex(t, "yield_reason", &x));
	assert_null(x);
	json_object_put(r);
	v->heal = NULL;
}

static void test_replies(void **state)
{
	static const uint16_t ports[] = { 9000, 9001 };
	struct tls_config *cfg = calloc(1, sizeof(*cfg));
	struct tls_jobs *jobs = calloc(1, sizeof(*jobs));
	struct tls_maps m;
	struct tlsd_view v = { .version = "9.9" };
	struct json_object *r, *a, *j, *x;
	char msg[256];
	uint32_t id;
	int code;

	(void)state;
	assert_non_null(cfg);
	assert_non_null(jobs);
	tls_config_defaults(cfg);
	strcpy(cfg->ifname, "eth7");
	cfg->policy = TLS_POLICY_ONE;
	cfg->bands = 3;
	tls_jobs_init(jobs);
	assert_int_equal(tls_jobs_add(jobs, "resnet", ports, 2, &id), 0);
	assert_int_equal(tls_jobs_add(jobs, "bert", NULL, 0, &id), 0);
	jobs->job[1].discovered = true;
	tls_maps_init(&m); /* no maps: bands and counters unknown */
	v.cfg = cfg;
	v.jobs = jobs;
	v.m = &m;
	v.rate_bps = 10000000000ULL;
	v.step = 5;
	v.uptime_ns = 1234;
	v.policy_live = true;
	v.conf_policy = TLS_POLICY_RR;
	v.conf_interval_ns = 20000000000ULL;

	r = reply_for(&v, "{\"version\":1,\"cmd\":\"status\",\"id\":3}", &code, msg, sizeof(msg));
	assert_int_equal(code, TLS_CTL_OK);
	assert_string_equal(str_of(r, "cmd"), "status");
	assert_int_equal(int_of(r, "id"), 3);
	assert_string_equal(str_of(r, "interface"), "eth7");
	assert_string_equal(str_of(r, "policy"), "one");
	assert_string_equal(str_of(r, "policy_source"), "tlsctl");
	assert_string_equal(str_of(r, "tlsd_version"), "9.9");
	assert_int_equal(int_of(r, "link_rate_bps"), 10000000000LL);
	assert_int_equal(int_of(r, "bands"), 3);
	assert_int_equal(int_of(r, "jobs"), 2);
	assert_int_equal(int_of(r, "step"), 5);
	assert_int_equal(int_of(r, "uptime_ns"), 1234);
	assert_int_equal(int_of(r, "interval_ns"), TLS_INTERVAL_DEFAULT_NS);
	assert_true(json_object_object_get_ex(r, "tree", &x));
	assert_null(x); /* no tree state given: null */
	json_object_put(r);

	test_tree_status(&v);

	r = reply_for(&v, "{\"version\":1,\"cmd\":\"jobs\"}", &code, msg, sizeof(msg));
	assert_int_equal(code, TLS_CTL_OK);
	assert_true(json_object_object_get_ex(r, "jobs", &a));
	assert_int_equal(json_object_array_length(a), 2);
	j = json_object_array_get_idx(a, 0);
	assert_int_equal(int_of(j, "id"), 1);
	assert_string_equal(str_of(j, "name"), "resnet");
	assert_string_equal(str_of(j, "origin"), "static");
	assert_true(json_object_object_get_ex(j, "band", &x));
	assert_null(x); /* unknown without maps: null, not a made-up band */
	assert_true(json_object_object_get_ex(j, "ports", &x));
	assert_int_equal(json_object_array_length(x), 2);
	assert_int_equal(json_object_get_int(json_object_array_get_idx(x, 1)), 9001);
	assert_true(json_object_object_get_ex(j, "pids", &x));
	assert_int_equal(json_object_array_length(x), 0);
	assert_int_equal(int_of(j, "bytes"), 0);
	j = json_object_array_get_idx(a, 1);
	assert_string_equal(str_of(j, "origin"), "discovered");
	json_object_put(r);

	v.changed = true;
	r = reply_for(&v, "{\"version\":1,\"cmd\":\"policy\",\"policy\":\"one\"}", &code, msg,
		      sizeof(msg));
	assert_int_equal(code, TLS_CTL_OK);
	assert_string_equal(str_of(r, "policy"), "one");
	assert_string_equal(str_of(r, "config_policy"), "roundrobin");
	assert_int_equal(int_of(r, "config_interval_ns"), 20000000000LL);
	assert_true(json_object_get_boolean(json_object_object_get(r, "changed")));
	json_object_put(r);

	r = reply_for(&v, "{\"version\":1,\"cmd\":\"calibrate\"}", &code, msg, sizeof(msg));
	assert_int_equal(code, TLS_CTL_E_UNAVAILABLE);
	assert_names(msg, "statistics not available", "calibrate");
	json_object_put(r);

	test_stats_replies(&v);

	free(cfg);
	free(jobs);
}

int run_ctl_tests(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed), cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_oversized), cmocka_unit_test(test_quote_utf8),
		cmocka_unit_test(test_id_echoed), cmocka_unit_test(test_good),
		cmocka_unit_test(test_framing),	  cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_replies),
	};

	return cmocka_run_group_tests_name("ctl", tests, NULL, NULL);
}
