// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness: the daemon's state file (tcd/state_file.c), the bytes
 * a takeover and `tlsd --cleanup` read back from /run/tlsd: decoded as
 * they are (not NUL-terminated), once for any instance and once for the
 * instance the first bytes name.
 *
 * Beyond the sanitizers: what decodes is within the format's bounds (ids
 * 1..1023, none twice, names 1..63 bytes without NUL, a request tlsd would
 * send), encodes again, and decodes from that to the same state (the root
 * qdisc's request byte for byte); what is refused keeps nothing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "state_file.h"

static void check(const struct tls_state_file *s)
{
	if (s->njobs > TLS_MAX_JOBS - 1 || s->qdisc_len > sizeof(s->qdisc) || !s->instance[0])
		abort();
	for (unsigned int i = 0; i < s->njobs; i++) {
		size_t n = strnlen(s->jobs[i].name, sizeof(s->jobs[i].name));

		if (!s->jobs[i].id || s->jobs[i].id >= TLS_MAX_JOBS || !n ||
		    n >= sizeof(s->jobs[i].name))
			abort();
		for (unsigned int k = 0; k < i; k++)
			if (s->jobs[k].id == s->jobs[i].id ||
			    !strcmp(s->jobs[k].name, s->jobs[i].name))
				abort();
	}
}

static void same(const struct tls_state_file *a, const struct tls_state_file *b)
{
	if (strcmp(a->instance, b->instance) || a->qdisc_len != b->qdisc_len ||
	    memcmp(a->qdisc, b->qdisc, a->qdisc_len) || a->njobs != b->njobs)
		abort();
	for (unsigned int i = 0; i < a->njobs; i++)
		if (a->jobs[i].id != b->jobs[i].id || strcmp(a->jobs[i].name, b->jobs[i].name))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tls_state_file *s = malloc(sizeof(*s)), *t = malloc(sizeof(*t));
	char *buf = malloc(size ? size : 1), *text = NULL, err[256], inst[24];
	size_t len;

	if (!s || !t || !buf)
		goto out;
	memcpy(buf, data, size);
	/* an instance of the input's first bytes (up to a NUL) */
	memcpy(inst, data, size < sizeof(inst) - 1 ? size : sizeof(inst) - 1);
	inst[size < sizeof(inst) - 1 ? size : sizeof(inst) - 1] = '\0';
	if (tls_state_file_decode(buf, size, inst, s, err, sizeof(err)) == 0)
		check(s);
	else if (s->njobs || s->qdisc_len || !err[0])
		abort(); /* refused: nothing kept, and the reason said */
	if (tls_state_file_decode(buf, size, NULL, s, err, sizeof(err)))
		goto out;
	check(s);
	if (tls_state_file_encode(s, &text, &len) ||
	    tls_state_file_decode(text, len, s->instance, t, err, sizeof(err)))
		abort();
	same(s, t);
out:
	free(text);
	free(buf);
	free(s);
	free(t);
	return 0;
}
