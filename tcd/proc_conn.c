// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>

#include "kernel_features.h"
#include "log.h"
#include "proc_conn.h"
#include "procfs.h"

struct tls_pconn {
	struct mnl_socket *nl;
	char *buf;
	bool kept; /* preopened: close only unsubscribes */
};

static struct tls_pconn *preopened;

/* The 6.6 subscription with an event filter (struct proc_input, absent from
 * older uapi headers). */
struct tls_proc_input {
	uint32_t mcast_op;
	uint32_t event_type;
};

/* Every event, as 6.6's uapi spells it (older headers lack it). */
#define TLS_PROC_EVENT_ALL 0xe00003c7u
/* The 4-byte form of a subscription, which every kernel takes. */
#define OLD_FORM UINT64_MAX

/* Whether the kernel takes the filtered subscription: -1 not known yet. */
static int filter_ok = -1;

/* One subscription message: the 4-byte form (event OLD_FORM) every kernel
 * takes, or struct tls_proc_input. */
static int send_op(struct tls_pconn *p, uint32_t op, uint64_t event)
{
	char buf[NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(struct tls_proc_input))] = {};
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tls_proc_input in = { .mcast_op = op, .event_type = (uint32_t)event };
	size_t len = event == OLD_FORM ? sizeof(in.mcast_op) : sizeof(in);
	struct cn_msg *cn;

	nlh->nlmsg_type = NLMSG_DONE;
	nlh->nlmsg_pid = mnl_socket_get_portid(p->nl);
	cn = mnl_nlmsg_put_extra_header(nlh, sizeof(*cn) + len);
	cn->id.idx = CN_IDX_PROC;
	cn->id.val = CN_VAL_PROC;
	cn->len = len;
	memcpy(cn->data, &in, len);
	if (mnl_socket_sendto(p->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	return 0;
}

/* The kernel's acknowledgement of a subscription (a PROC_EVENT_NONE), within
 * ms: 0, or -ETIMEDOUT. Other events meanwhile are dropped (the rescan that
 * follows an open finds what they were about). */
static int wait_ack(struct tls_pconn *p, int ms)
{
	struct pollfd pfd = { .fd = mnl_socket_get_fd(p->nl), .events = POLLIN };
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int left, len;
		ssize_t n;
		const struct nlmsghdr *nlh;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = ms -
		       (int)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			return -ETIMEDOUT;
		n = recv(pfd.fd, p->buf, MNL_SOCKET_BUFFER_SIZE, 0);
		if (n <= 0)
			continue;
		len = n;
		for (nlh = (const struct nlmsghdr *)p->buf; mnl_nlmsg_ok(nlh, len);
		     nlh = mnl_nlmsg_next(nlh, &len)) {
			const struct cn_msg *cn = mnl_nlmsg_get_payload(nlh);
			const struct proc_event *ev = (const void *)cn->data;

			if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(*cn) + sizeof(*ev) &&
			    cn->id.idx == CN_IDX_PROC && ev->what == PROC_EVENT_NONE)
				return 0;
		}
	}
}

/*
 * Subscribe to exec events, filtered in the kernel where it can (struct
 * proc_input, 6.6 and vendor backports). Probed, not judged by the version:
 * a kernel that does not know the 8-byte form drops it silently, one that
 * does acknowledges it (with every event, so that the acknowledgement
 * itself passes the filter). Unsubscribing uses the 4-byte form, which
 * every kernel counts: every listen the kernel counts is matched by one.
 */
static int subscribe(struct tls_pconn *p, bool on)
{
	int err;

	if (!on)
		return send_op(p, PROC_CN_MCAST_IGNORE, OLD_FORM);
	if (filter_ok > 0)
		return send_op(p, PROC_CN_MCAST_LISTEN, PROC_EVENT_EXEC);
	if (filter_ok == 0)
		return send_op(p, PROC_CN_MCAST_LISTEN, OLD_FORM);
	err = send_op(p, PROC_CN_MCAST_LISTEN, OLD_FORM);
	if (err)
		return err;
	if (wait_ack(p, 200))
		pr_debug("proc connector: no acknowledgement of the subscription\n");
	err = send_op(p, PROC_CN_MCAST_LISTEN, TLS_PROC_EVENT_ALL);
	filter_ok = !err && !wait_ack(p, 200);
	if (filter_ok)
		tls_feature_set(TLS_FEAT_PROC_CN_FILTER, TLS_FEAT_AVAILABLE);
	else
		tls_feature_fail(TLS_FEAT_PROC_CN_FILTER, "filtered subscription",
				 err ? err : -EOPNOTSUPP);
	return filter_ok ? send_op(p, PROC_CN_MCAST_LISTEN, PROC_EVENT_EXEC) : 0;
}

static int pconn_create(struct tls_pconn **out);

int tls_pconn_preopen(void)
{
	int err;

	if (preopened)
		return 0;
	err = pconn_create(&preopened);
	if (!err) {
		/* subscribed by tls_pconn_open() only: every listen the
		 * kernel counts is matched by an ignore */
		subscribe(preopened, false);
		preopened->kept = true;
	}
	return err;
}

int tls_pconn_open(struct tls_pconn **out)
{
	int err;

	if (!preopened)
		err = pconn_create(out);
	else if (!(err = subscribe(preopened, true)))
		*out = preopened;
	if (!err) {
		tls_feature_set(TLS_FEAT_PROC_CN, TLS_FEAT_IN_USE);
		if (filter_ok > 0)
			tls_feature_set(TLS_FEAT_PROC_CN_FILTER, TLS_FEAT_IN_USE);
	}
	return err;
}

static int pconn_create(struct tls_pconn **out)
{
	struct tls_pconn *p = calloc(1, sizeof(*p));
	int rcvbuf = 4 << 20, err, ns, fd;

	if (!p)
		return -ENOMEM;
	p->buf = malloc(MNL_SOCKET_BUFFER_SIZE);
	if (!p->buf) {
		err = -ENOMEM;
		goto bad;
	}
	/* The kernel sends proc events only to listeners in the initial
	 * network namespace: a tlsd started in another one (a test, a
	 * container sharing the host's pid namespace) listens from there. */
	ns = open("/proc/1/ns/net", O_RDONLY | O_CLOEXEC);
	fd = tls_netns_socket(ns, AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			      NETLINK_CONNECTOR);
	if (ns >= 0)
		close(ns);
	if (fd < 0) {
		err = fd;
		goto bad;
	}
	p->nl = mnl_socket_fdopen(fd);
	if (!p->nl) {
		err = -errno;
		close(fd);
		goto bad;
	}
	/* Room for a burst of execs while the loop is busy; root may exceed
	 * rmem_max. Losing events costs a rescan, not correctness. */
	if (setsockopt(mnl_socket_get_fd(p->nl), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)))
		setsockopt(mnl_socket_get_fd(p->nl), SOL_SOCKET, SO_RCVBUF, &rcvbuf,
			   sizeof(rcvbuf));
	if (mnl_socket_bind(p->nl, CN_IDX_PROC, MNL_SOCKET_AUTOPID)) {
		err = -errno;
		goto bad;
	}
	err = subscribe(p, true);
	if (err)
		goto bad;
	tls_feature_set(TLS_FEAT_PROC_CN, TLS_FEAT_AVAILABLE);
	*out = p;
	return 0;
bad:
	tls_feature_fail(TLS_FEAT_PROC_CN, "netlink connector", err);
	pr_warn("cannot listen to the proc connector: %s\n", strerror(-err));
	if (p->nl)
		mnl_socket_close(p->nl);
	free(p->buf);
	free(p);
	return err;
}

void tls_pconn_close(struct tls_pconn *p)
{
	if (!p)
		return;
	subscribe(p, false);
	if (tls_feature_has(TLS_FEAT_PROC_CN))
		tls_feature_set(TLS_FEAT_PROC_CN, TLS_FEAT_AVAILABLE);
	if (tls_feature_has(TLS_FEAT_PROC_CN_FILTER))
		tls_feature_set(TLS_FEAT_PROC_CN_FILTER, TLS_FEAT_AVAILABLE);
	if (p->kept)
		return;
	mnl_socket_close(p->nl);
	free(p->buf);
	free(p);
}

int tls_pconn_fd(const struct tls_pconn *p)
{
	return mnl_socket_get_fd(p->nl);
}

int tls_pconn_read(struct tls_pconn *p, tls_exec_cb cb, void *ctx)
{
	for (;;) {
		ssize_t n = recv(mnl_socket_get_fd(p->nl), p->buf, MNL_SOCKET_BUFFER_SIZE, 0);
		const struct nlmsghdr *nlh;
		int len;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		len = n;
		for (nlh = (const struct nlmsghdr *)p->buf; mnl_nlmsg_ok(nlh, len);
		     nlh = mnl_nlmsg_next(nlh, &len)) {
			const struct cn_msg *cn = mnl_nlmsg_get_payload(nlh);
			const struct proc_event *ev = (const void *)cn->data;

			if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*cn) + sizeof(*ev) ||
			    cn->id.idx != CN_IDX_PROC)
				continue;
			if (ev->what == PROC_EVENT_EXEC)
				cb(ev->event_data.exec.process_tgid, ctx);
		}
	}
}

void tls_pconn_probe(void)
{
	struct tls_pconn *pc;

	/* tls_pconn_open records both features */
	if (tls_pconn_open(&pc) == 0)
		tls_pconn_close(pc);
}
