// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness: the configuration file (tcd/config.c), through
 * tls_config_load_string, the parser the file path uses too (both go
 * through the same load() after libconfig has read the text), then the
 * whole-picture checks of tls_config_validate on what it accepted. The
 * discovery rules are compiled on the way (a bad regex is a configuration
 * error).
 *
 * Beyond the sanitizers: a refused file leaves the caller's configuration
 * byte for byte as it was, and says why.
 */
#define _GNU_SOURCE /* strcasestr */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tls_config c, before;
	char err[256];
	char *text;
	int ret;

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* libconfig opens the file an @include names: a fuzzer must not read
	 * /dev/stdin or the host's files. Not kept in the corpus. */
	if (memchr(text, '@', size) && strcasestr(text, "include")) {
		free(text);
		return -1;
	}
	tls_config_defaults(&c);
	memcpy(&before, &c, sizeof(c));
	err[0] = '\0';
	ret = tls_config_load_string(text, &c, err, sizeof(err));
	if (ret) {
		if (memcmp(&before, &c, sizeof(c)) || !err[0])
			abort();
	} else {
		tls_config_validate(&c, err, sizeof(err));
	}
	free(text);
	return 0;
}
