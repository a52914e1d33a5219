/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Frame builder for the classifier's fixture tests and benchmark: Ethernet,
 * up to two VLAN tags, IPv4 (options, fragments) or IPv6 (extension headers),
 * TCP, UDP or ICMP, optionally cut short.
 */
#ifndef TLS_TEST_PACKETS_H
#define TLS_TEST_PACKETS_H

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

enum frag_kind { FRAG_NONE = 0, FRAG_FIRST, FRAG_LATER };

struct pkt_spec {
	int vlans;  /* 0..2 tags: 802.1ad outer, 802.1Q inner */
	int family; /* 4, 6, or 0 for an ARP frame */
	int proto;  /* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP */
	const char *src, *dst;
	uint16_t sport, dport;
	int ip_opt_words;    /* IPv4 options, in 32-bit words (0..10) */
	enum frag_kind frag; /* IPv4 flags/offset, or an IPv6 fragment header */
	int v6_ext;	     /* IPv6: 1 hop-by-hop, 2 + dest options, 3 + routing */
	int payload;	     /* L4 payload bytes */
	int cut;	     /* > 0: keep only the first `cut` bytes */
	int v6_ah;	     /* IPv6: an authentication header (24 bytes) after v6_ext */
};

struct pkt_layout {
	size_t len;	/* frame length after the cut */
	size_t l3_off;	/* where the IP header starts */
	size_t hdr_len; /* L2..L4 header length, 0 if not a TCP/UDP first fragment */
};

static inline uint16_t pkt_csum(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t sum = 0;

	for (; len > 1; len -= 2, p += 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (len)
		sum += (uint32_t)p[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

static inline size_t put_l4(const struct pkt_spec *s, uint8_t *p, size_t *hdr)
{
	if (s->proto == IPPROTO_TCP) {
		uint16_t ports[2] = { htons(s->sport), htons(s->dport) };

		memset(p, 0, 20);
		memcpy(p, ports, 4);
		p[12] = 5 << 4; /* data offset */
		p[13] = 0x18;	/* PSH|ACK */
		p[14] = 0xff;
		*hdr = 20;
		return 20;
	}
	if (s->proto == IPPROTO_UDP) {
		uint16_t h[4] = { htons(s->sport), htons(s->dport), htons(8 + s->payload), 0 };

		memcpy(p, h, 8);
		*hdr = 8;
		return 8;
	}
	memset(p, 0, 8); /* ICMP echo request */
	p[0] = 8;
	*hdr = 0;
	return 8;
}

/* Build the frame into buf (at least 512 bytes); returns its layout. */
static inline struct pkt_layout pkt_build(const struct pkt_spec *s, uint8_t *buf)
{
	struct pkt_layout lay = { 0 };
	size_t off = 12, l4, l4hdr = 0, iphl;
	int i;

	memset(buf, 0, 512);
	memcpy(buf, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	for (i = 0; i < s->vlans; i++) {
		uint16_t tpid = htons(i == 0 && s->vlans == 2 ? 0x88a8 : 0x8100);
		uint16_t tci = htons(100 + i);

		memcpy(buf + off, &tpid, 2);
		memcpy(buf + off + 2, &tci, 2);
		off += 4;
	}
	if (s->family == 0) {
		uint16_t et = htons(ETH_P_ARP);

		memcpy(buf + off, &et, 2);
		lay.len = off + 2 + 28;
		goto done;
	}
	{
		uint16_t et = htons(s->family == 4 ? ETH_P_IP : ETH_P_IPV6);

		memcpy(buf + off, &et, 2);
		off += 2;
	}
	lay.l3_off = off;
	if (s->family == 4) {
		/* Built aside and copied: buf + 14 is not 4-byte aligned. */
		struct iphdr iph = { 0 }, *ip = &iph;

		iphl = 20 + 4 * s->ip_opt_words;
		memset(buf + off + 20, 1, iphl - 20); /* NOP options */
		l4 = (s->frag == FRAG_LATER) ? 0 : put_l4(s, buf + off + iphl, &l4hdr);
		ip->version = 4;
		ip->ihl = iphl / 4;
		ip->tos = 0x01; /* ECN bit set: DSCP marking must keep it */
		ip->tot_len = htons(iphl + l4 + s->payload);
		ip->id = htons(1234);
		if (s->frag == FRAG_FIRST)
			ip->frag_off = htons(0x2000);
		else if (s->frag == FRAG_LATER)
			ip->frag_off = htons(185);
		ip->ttl = 64;
		ip->protocol = s->proto;
		inet_pton(AF_INET, s->src, &ip->saddr);
		inet_pton(AF_INET, s->dst, &ip->daddr);
		memcpy(buf + off, ip, sizeof(*ip));
		ip->check = pkt_csum(buf + off, iphl);
		memcpy(buf + off, ip, sizeof(*ip));
		lay.len = off + iphl + l4 + s->payload;
		if (l4hdr)
			lay.hdr_len = off + iphl + l4hdr;
	} else {
		struct ipv6hdr h6 = { 0 }, *ip6 = &h6;
		uint8_t *p = buf + off + 40, *nh = buf + off + 6; /* nexthdr */
		static const uint8_t ext_types[] = { 0, 60, 43 };

		ip6->version = 6;
		ip6->priority = 0;
		ip6->flow_lbl[0] = 0x10; /* ECN bits: must be kept */
		ip6->hop_limit = 64;
		inet_pton(AF_INET6, s->src, &ip6->saddr);
		inet_pton(AF_INET6, s->dst, &ip6->daddr);
		for (i = 0; i < s->v6_ext && i < 3; i++) {
			*nh = ext_types[i];
			memset(p, 0, 8);
			p[1] = 0; /* 8 bytes */
			if (ext_types[i] == 43)
				p[2] = 4; /* routing type 4 (SRH-ish), segments left 0 */
			nh = p;
			p += 8;
		}
		if (s->v6_ah) {
			/* AH: its length counts 32-bit words minus 2: 24 bytes -> 4 */
			*nh = 51;
			memset(p, 0, 24);
			p[1] = 4;
			memcpy(p + 4, "\x00\x00\x10\x01", 4); /* SPI */
			nh = p;
			p += 24;
		}
		if (s->frag != FRAG_NONE) {
			uint16_t fo = htons(s->frag == FRAG_LATER ? (185 << 3) : 1);

			*nh = 44;
			memset(p, 0, 8);
			memcpy(p + 2, &fo, 2);
			nh = p;
			p += 8;
		}
		*nh = s->proto;
		l4 = (s->frag == FRAG_LATER) ? 0 : put_l4(s, p, &l4hdr);
		ip6->payload_len = htons((p - (buf + off + 40)) + l4 + s->payload);
		ip6->nexthdr = buf[off + 6];
		memcpy(buf + off, ip6, sizeof(*ip6));
		lay.len = (p - buf) + l4 + s->payload;
		if (l4hdr)
			lay.hdr_len = (p - buf) + l4hdr;
	}
done:
	if (s->cut > 0 && (size_t)s->cut < lay.len)
		lay.len = s->cut;
	return lay;
}

#endif /* TLS_TEST_PACKETS_H */
