// SPDX-License-Identifier: GPL-2.0-only
/* libbpf's messages through the logger: see libbpf_log.h. */
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "libbpf_log.h"
#include "log.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* bpf_tc_hook_create() on a clsact that exists already (a takeover,
	 * another tool's) is expected; libbpf still prints the kernel's text. */
	if (level == LIBBPF_WARN && strstr(fmt, "Kernel error message") &&
	    tls_log_get_level() < TLS_LOG_DEBUG) {
		va_list aq;
		char msg[256];

		va_copy(aq, ap);
		vsnprintf(msg, sizeof(msg), fmt, aq);
		va_end(aq);
		if (strstr(msg, "Exclusivity flag on"))
			return 0;
	}
	return tls_log_vraw(level == LIBBPF_WARN ? TLS_LOG_WARN :
			    level == LIBBPF_INFO ? TLS_LOG_INFO :
						   TLS_LOG_DEBUG,
			    fmt, ap);
}

void tls_log_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
