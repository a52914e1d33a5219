// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>

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

static bool kernel_filters(void)
{
	struct utsname u;
	int maj, min;

	if (uname(&u) || sscanf(u.release, "%d.%d", &maj, &min) != 2)
		return false;
	return maj > 6 || (maj == 6 && min >= 6);
}

static int subscribe(struct tls_pconn *p, bool on)
{
	char buf[NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(struct tls_proc_input))] = {};
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tls_proc_input in = {
		.mcast_op = on ? PROC_CN_MCAST_LISTEN : PROC_CN_MCAST_IGNORE,
		.event_type = PROC_EVENT_EXEC,
	};
	size_t len = kernel_filters() ? sizeof(in) : sizeof(in.mcast_op);
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
		return pconn_create(out);
	err = subscribe(preopened, true);
	if (err)
		return err;
	*out = preopened;
	return 0;
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
	*out = p;
	return 0;
bad:
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
