/* SPDX-License-Identifier: BSD-3-Clause
 *
 * conn_seg.c - TCP segments: a received frame parsed into a struct seg
 * (checked: lengths, checksums, flags that cannot go together), and a
 * segment written into the next mbuf of the poll's tx burst.
 *
 * Frames are Ethernet II + IPv4 (no VLAN tag, no IP options written, those
 * received skipped) or IPv6 (no extension headers) + TCP with at most the
 * MSS option. Checksums are
 * computed in software unless the port offloads them (the pool's layout is
 * the engine's template, so send.c's offload step fills them in).
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "conn.h"
#include "csum.h"

#define ETH_LEN 14
#define IP4_LEN 20
#define IP6_LEN 40
#define TCP_LEN 20
#define MIN_FRAME 60      /* Ethernet's minimum without FCS: shorter frames are padded */

/* A received segment's checksum: pseudo header + segment sum to 0xffff
 * (rte_ipv4_udptcp_cksum_verify is not in DPDK's stable ABI). */
static int
l4_sum_ok(uint32_t phdr, const uint8_t *l4, uint32_t len)
{
	uint32_t sum = phdr + conn_raw_sum(l4, len);

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

static int
l4_verdict_ok(uint64_t ol_flags, uint32_t phdr, const uint8_t *tcp, uint32_t len)
{
	if ((ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_BAD)
		return 0;
	return (ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_GOOD || l4_sum_ok(phdr, tcp, len);
}

/* IPv4: the TCP segment's start and length, SEG_OTHER/SEG_BAD, or SEG_TCP */
static enum seg_kind
parse_ip4(const struct conn_engine *e, const uint8_t *ip, uint32_t len, uint64_t ol_flags, struct seg *s,
	  const uint8_t **tcp, uint32_t *tcp_len)
{
	uint32_t ihl, tot;
	int32_t a;

	if (len < ETH_LEN + IP4_LEN || (ip[0] >> 4) != 4 || ip[9] != IPPROTO_TCP ||
	    (a = addr_index(e, get32(ip + 16), NULL)) < 0)
		return SEG_OTHER;
	s->addr = (uint32_t)a;
	ihl = (ip[0] & 15u) * 4;
	tot = get16(ip + 2);
	/* from here it is TCP for our address: what is wrong with it is counted */
	if (ihl < IP4_LEN || tot < ihl + TCP_LEN || tot > len - ETH_LEN)
		return SEG_BAD;
	if ((get16(ip + 6) & 0x3fff) != 0)
		return SEG_BAD;           /* a fragment: not reassembled (docs/connections.md) */
	/* the port's verdict where it checked, else software (a valid
	 * header, options included, sums to 0xffff) */
	if ((ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_BAD ||
	    ((ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) != RTE_MBUF_F_RX_IP_CKSUM_GOOD &&
	     conn_raw_sum(ip, ihl) != 0xffff))
		return SEG_BAD;
	*tcp = ip + ihl;
	*tcp_len = tot - ihl;
	/* the pseudo header's sum from the addresses in place and the
	 * values known (rte_ipv4_phdr_cksum copies it out and sums 2 bytes a
	 * step), in the same order of bytes as the segment's sum */
	if (!l4_verdict_ok(ol_flags, (uint32_t)conn_raw_sum(ip + 12, 8) + rte_cpu_to_be_16(IPPROTO_TCP) +
				     rte_cpu_to_be_16((uint16_t)*tcp_len), *tcp, *tcp_len))
		return SEG_BAD;
	s->src6 = NULL;
	s->src_ip = get32(ip + 12);
	s->dst_ip = get32(ip + 16);
	return SEG_TCP;
}

/* IPv6 without extension headers (TCP right after the fixed header; an
 * extension header makes it SEG_OTHER, docs/connections.md) */
static enum seg_kind
parse_ip6(const struct conn_engine *e, const uint8_t *ip, uint32_t len, uint64_t ol_flags, struct seg *s,
	  const uint8_t **tcp, uint32_t *tcp_len)
{
	uint32_t plen;
	int32_t a;

	if (len < ETH_LEN + IP6_LEN || (ip[0] >> 4) != 6 || ip[6] != IPPROTO_TCP ||
	    (a = addr_index(e, 0, ip + 24)) < 0)
		return SEG_OTHER;
	s->addr = (uint32_t)a;
	plen = get16(ip + 4);
	if (plen < TCP_LEN || plen > len - ETH_LEN - IP6_LEN)
		return SEG_BAD;
	*tcp = ip + IP6_LEN;
	*tcp_len = plen;
	if (!l4_verdict_ok(ol_flags, rte_ipv6_phdr_cksum((const struct rte_ipv6_hdr *)ip, 0), *tcp, plen))
		return SEG_BAD;
	s->src6 = ip + 8;
	s->src_ip = ip6_fold(ip + 8);
	s->dst_ip = 0;
	return SEG_TCP;
}

enum seg_kind
seg_parse(const struct conn_engine *e, uint8_t *frame, uint32_t len, uint64_t ol_flags, struct seg *s)
{
	const uint8_t *tcp = NULL;
	uint32_t doff, tcp_len = 0;
	uint16_t et;
	enum seg_kind k;

	if (len < ETH_LEN + IP4_LEN)
		return SEG_OTHER;
	memset(s, 0, sizeof(*s));
	et = get16(frame + 12);
	if (et == RTE_ETHER_TYPE_IPV4 && e->conf.ip_version == 4)
		k = parse_ip4(e, frame + ETH_LEN, len, ol_flags, s, &tcp, &tcp_len);
	else if (et == RTE_ETHER_TYPE_IPV6 && e->conf.ip_version == 6)
		k = parse_ip6(e, frame + ETH_LEN, len, ol_flags, s, &tcp, &tcp_len);
	else
		return SEG_OTHER;
	if (k != SEG_TCP)
		return k;
	doff = (uint32_t)(tcp[12] >> 4) * 4;
	if (doff < TCP_LEN || doff > tcp_len)
		return SEG_BAD;
	s->frame = frame;
	s->sport = get16(tcp);
	s->dport = get16(tcp + 2);
	s->seq = get32(tcp + 4);
	s->ack = get32(tcp + 8);
	s->flags = tcp[13] & 0x3f;
	s->wnd = get16(tcp + 14);
	s->payload = tcp + doff;
	s->len = tcp_len - doff;
	/* options: only MSS is read, the rest skipped (docs/connections.md) */
	for (uint32_t o = TCP_LEN; o < doff;) {
		uint8_t kind = tcp[o];

		if (kind == 0)
			break;
		if (kind == 1) {
			o++;
			continue;
		}
		if (o + 1 >= doff || tcp[o + 1] < 2 || o + tcp[o + 1] > doff)
			return SEG_BAD;
		if (kind == 2 && tcp[o + 1] == 4) {
			s->mss_opt = 1;
			s->mss = get16(tcp + o + 2);
		}
		o += tcp[o + 1];
	}
	/* flags that never go together */
	if ((s->flags & TF_SYN) && (s->flags & (TF_FIN | TF_RST)))
		return SEG_BAD;
	return SEG_TCP;
}

/* IPv4's header words that are the same in every segment: version and
 * header length 0x45, TOS 0; flags DF 0x4000; TTL 64, protocol TCP */
#define IP4_CONST_SUM (0x4500u + 0x4000u + (64u << 8 | IPPROTO_TCP))

/* Writes the IP header for a segment of l4_len bytes from the engine's
 * address `addr` (its index); returns the TCP header. */
static uint8_t *
write_ip(const struct conn_engine *e, uint8_t *ip, uint32_t addr, uint32_t peer_ip, const uint8_t *peer6,
	 uint32_t l4_len)
{
	if (e->conf.ip_version == 6) {
		put32(ip, 6u << 28);
		put16(ip + 4, (uint16_t)l4_len);
		ip[6] = IPPROTO_TCP;
		ip[7] = 64;
		memcpy(ip + 8, e->addr6[addr], 16);
		memcpy(ip + 24, peer6, 16);
		return ip + IP6_LEN;
	}
	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, (uint16_t)(IP4_LEN + l4_len));
	put16(ip + 4, 0);
	put16(ip + 6, 0x4000);             /* DF */
	ip[8] = 64;
	ip[9] = IPPROTO_TCP;
	put16(ip + 10, 0);
	put32(ip + 12, e->addr4[addr]);
	put32(ip + 16, peer_ip);
	return ip + IP4_LEN;
}

static int
emit(struct conn_engine *e, uint32_t addr, uint32_t peer_ip, const uint8_t *peer6, uint16_t peer_port,
     uint16_t local_port, uint8_t flags, uint32_t seq, uint32_t ack, const uint8_t *data, uint32_t len)
{
	uint32_t hlen = TCP_LEN + ((flags & TF_SYN) ? 4 : 0), frame_len;
	int slot = tx_writer_next(&e->tx);   /* what the ring refuses the RTO sends again */
	uint8_t *p, *ip, *tcp;

	if (slot < 0) {
		e->st.tx_nobufs++;
		return -ENOBUFS;
	}
	p = e->tx.b->data[slot];
	memcpy(p, e->conf.peer_mac, 6);
	memcpy(p + 6, e->conf.local_mac, 6);
	put16(p + 12, e->conf.ip_version == 6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	ip = p + ETH_LEN;
	tcp = write_ip(e, ip, addr, peer_ip, peer6, hlen + len);
	put16(tcp, local_port);
	put16(tcp + 2, peer_port);
	put32(tcp + 4, seq);
	put32(tcp + 8, (flags & TF_ACK) ? ack : 0);
	tcp[12] = (uint8_t)((hlen / 4) << 4);
	tcp[13] = flags;
	put16(tcp + 14, e->conf.window);
	put16(tcp + 16, 0);
	put16(tcp + 18, 0);
	if (flags & TF_SYN) {
		tcp[20] = 2;
		tcp[21] = 4;
		put16(tcp + 22, e->conf.mss);
	}
	if (len > 0)
		memcpy(tcp + hlen, data, len);
	frame_len = (uint32_t)(tcp - p) + hlen + len;
	if (frame_len < MIN_FRAME) {
		memset(p + frame_len, 0, MIN_FRAME - frame_len);
		frame_len = MIN_FRAME;
	}
	if (e->sw_csum && e->conf.ip_version == 6) {
		((struct rte_tcp_hdr *)tcp)->cksum = rte_ipv6_udptcp_cksum((struct rte_ipv6_hdr *)ip, tcp);
	} else if (e->sw_csum) {
		/* summed from the values just written, not read back over the
		 * headers (issue 21: 40 % of emit was the two sums): the words
		 * that never change (version, DF, TTL and protocol) are one
		 * constant, the template's payload sum is taken once
		 * (RFC 1071's sum does not care where a word sits) */
		uint32_t src = e->addr4[addr], l4 = hlen + len, ackv = (flags & TF_ACK) ? ack : 0;
		uint32_t addrs = (src >> 16) + (src & 0xffff) + (peer_ip >> 16) + (peer_ip & 0xffff);
		uint32_t tsum = addrs + IPPROTO_TCP + l4 + local_port + peer_port + (seq >> 16) + (seq & 0xffff) +
				(ackv >> 16) + (ackv & 0xffff) + ((hlen / 4) << 12 | flags) + e->conf.window +
				((flags & TF_SYN) ? 0x0204u + e->conf.mss : 0);

		if (len > 0)
			tsum += data == e->data && len == e->data_len ? e->data_sum
				: rte_be_to_cpu_16(conn_raw_sum(data, len));
		put16(ip + 10, (uint16_t)~csum_fold(IP4_CONST_SUM + IP4_LEN + l4 + addrs));
		put16(tcp + 16, (uint16_t)~csum_fold(tsum));
	}
	e->tx.b->len[slot] = (uint16_t)frame_len;
	e->st.tx_segments++;
	if (flags & TF_RST)
		e->st.rst_sent++;
	return 0;
}

int
seg_emit(struct conn_engine *e, const struct conn *c, uint8_t flags, uint32_t seq, const uint8_t *data,
	 uint32_t len)
{
	const uint8_t *peer6 = e->conf.ip_version != 6 ? NULL
			       : e->conf.role == SURGE_CONN_CLIENT ? e->conf.peer_ip6 : e->peer6[conn_idx(e, c)];

	/* a client's connection i is on address i / ports; a server's answers
	 * from the address it was opened to */
	uint32_t addr = e->naddr == 1 ? 0 : e->conf.role == SURGE_CONN_SERVER ? c->addr : conn_idx(e, c) / e->ports;

	return emit(e, addr, c->peer_ip, peer6, c->peer_port, c->local_port, flags, seq, c->rcv_nxt, data, len);
}

int
seg_emit_reset(struct conn_engine *e, const struct seg *s)
{
	uint32_t ack = s->seq + s->len + ((s->flags & TF_SYN) ? 1 : 0) + ((s->flags & TF_FIN) ? 1 : 0);

	if (s->flags & TF_RST)
		return 0;                  /* never answer a reset */
	if (s->flags & TF_ACK)
		return emit(e, s->addr, s->src_ip, s->src6, s->sport, s->dport, TF_RST, s->ack, 0, NULL, 0);
	return emit(e, s->addr, s->src_ip, s->src6, s->sport, s->dport, TF_RST | TF_ACK, 0, ack, NULL, 0);
}
