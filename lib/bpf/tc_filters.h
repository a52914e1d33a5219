/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The filters on an interface's clsact qdisc, whoever put them there: tlsd
 * removes a clsact it created only once no filter of another tool is left
 * on it (deleting the qdisc deletes every filter on it).
 */
#ifndef TLS_TC_FILTERS_H
#define TLS_TC_FILTERS_H

/* Filters on the clsact qdisc of ifindex, ingress and egress together; 0
 * if it has none or there is no clsact; -errno if the kernel cannot say. */
int tls_clsact_filters(int ifindex);

#endif /* TLS_TC_FILTERS_H */
