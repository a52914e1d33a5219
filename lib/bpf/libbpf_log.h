/* SPDX-License-Identifier: GPL-2.0-only */
/* libbpf's own messages through tlsd's logger (lib/util/log.h). */
#ifndef TLS_LIBBPF_LOG_H
#define TLS_LIBBPF_LOG_H

/* From now on: libbpf's warnings always (they carry the verifier's log and
 * the kernel's error text), its info at -v, its debug at -vv. */
void tls_log_libbpf(void);

#endif
