// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>

#include "log.h"
#include "procfs.h"
#include "sockdiag.h"

struct tls_diag {
	struct mnl_socket *nl;
	unsigned int portid;
	unsigned int seq;
	char *buf; /* MNL_SOCKET_BUFFER_SIZE */
};

int tls_diag_open(int netns_fd, struct tls_diag **out)
{
	struct tls_diag *d = calloc(1, sizeof(*d));
	int fd, err = 0;

	if (!d)
		return -ENOMEM;
	d->buf = malloc(MNL_SOCKET_BUFFER_SIZE);
	if (!d->buf) {
		free(d);
		return -ENOMEM;
	}
	fd = tls_netns_socket(netns_fd, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	d->nl = mnl_socket_fdopen(fd);
	if (!d->nl) {
		err = -errno;
		close(fd);
		goto out;
	}
	if (mnl_socket_bind(d->nl, 0, MNL_SOCKET_AUTOPID))
		err = -errno;
out:
	if (err) {
		if (d->nl)
			mnl_socket_close(d->nl);
		free(d->buf);
		free(d);
		return err;
	}
	d->portid = mnl_socket_get_portid(d->nl);
	*out = d;
	return 0;
}

void tls_diag_close(struct tls_diag *d)
{
	if (!d)
		return;
	mnl_socket_close(d->nl);
	free(d->buf);
	free(d);
}

struct dump_ctx {
	tls_sock_cb cb;
	void *ctx;
};

static int on_msg(const struct nlmsghdr *nlh, void *data)
{
	const struct inet_diag_msg *m = mnl_nlmsg_get_payload(nlh);
	struct dump_ctx *dc = data;
	struct tls_sock s = {};

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*m))
		return MNL_CB_OK;
	s.family = m->idiag_family;
	s.state = m->idiag_state;
	s.inode = m->idiag_inode;
	s.cookie = (uint64_t)m->id.idiag_cookie[0] | (uint64_t)m->id.idiag_cookie[1] << 32;
	s.sport = ntohs(m->id.idiag_sport);
	s.dport = ntohs(m->id.idiag_dport);
	memcpy(s.saddr, m->id.idiag_src, s.family == AF_INET6 ? 16 : 4);
	memcpy(s.daddr, m->id.idiag_dst, s.family == AF_INET6 ? 16 : 4);
	dc->cb(&s, dc->ctx);
	return MNL_CB_OK;
}

/*
 * The bytes of buf that hold whole messages. libmnl before 1.0.5 (Debian
 * 12 has 1.0.4) compares a header's nlmsg_len with the bytes left as an
 * int: a length of 2 GiB or more passed its check, and the message was
 * read far past the buffer (found by tests/fuzz/fuzz_sockdiag.c). Its
 * loop stops at the first message that does not fit: so does this.
 */
static size_t whole_messages(const void *buf, size_t len)
{
	size_t off = 0;

	while (off < len && len - off >= sizeof(struct nlmsghdr)) {
		const struct nlmsghdr *nlh = (const void *)((const char *)buf + off);

		if (nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > len - off)
			break;
		off += MNL_ALIGN(nlh->nlmsg_len);
	}
	return off < len ? off : len;
}

int tls_diag_parse(const void *buf, size_t len, unsigned int seq, unsigned int portid,
		   tls_sock_cb cb, void *ctx)
{
	struct dump_ctx dc = { .cb = cb, .ctx = ctx };

	return mnl_cb_run(buf, whole_messages(buf, len), seq, portid, on_msg, &dc);
}

static int dump_family(struct tls_diag *d, int family, bool listen_only, tls_sock_cb cb, void *ctx)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(d->buf);
	struct inet_diag_req_v2 *req;
	unsigned int seq;
	ssize_t n;
	int ret;

	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq = ++d->seq;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->sdiag_family = family;
	req->sdiag_protocol = IPPROTO_TCP;
	req->idiag_states = 1 << TCP_LISTEN;
	if (!listen_only)
		req->idiag_states |= (1 << TCP_ESTABLISHED) | (1 << TCP_SYN_SENT) |
				     (1 << TCP_SYN_RECV) | (1 << TCP_CLOSE_WAIT);
	if (mnl_socket_sendto(d->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		n = mnl_socket_recvfrom(d->nl, d->buf, MNL_SOCKET_BUFFER_SIZE);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		ret = tls_diag_parse(d->buf, n, seq, d->portid, cb, ctx);
		if (ret == MNL_CB_STOP)
			return 0;
		if (ret < 0)
			return -errno;
	}
}

int tls_diag_dump(struct tls_diag *d, bool listen_only, tls_sock_cb cb, void *ctx)
{
	int err = dump_family(d, AF_INET, listen_only, cb, ctx);

	/* no IPv6 in the namespace: not an error */
	if (!err) {
		err = dump_family(d, AF_INET6, listen_only, cb, ctx);
		if (err == -ENOENT || err == -EAFNOSUPPORT)
			err = 0;
	}
	return err;
}
