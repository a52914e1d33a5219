/* SPDX-License-Identifier: GPL-2.0-only */
/* discovery.trust and discovery.limits of the configuration file. */
#ifndef TLS_CONFIG_TRUST_H
#define TLS_CONFIG_TRUST_H

#include <stddef.h>

#include <libconfig.h>

#include "trust.h"

/* From the discovery group: the defaults (tls_trust_default) where unset;
 * -EINVAL with a message naming the setting if one is wrong. */
int tls_parse_trust(config_setting_t *disc, struct tls_trust_conf *t, char *err, size_t errlen);

#endif /* TLS_CONFIG_TRUST_H */
