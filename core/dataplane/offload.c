/* SPDX-License-Identifier: BSD-3-Clause
 *
 * offload.c - IPv4/UDP/TCP checksums computed by the port.
 *
 * Templates and flows keep every checksum valid in software (incremental
 * updates), which works on any port. Where a port offers checksum offload,
 * the send path instead marks each packet for it: the IPv4 header checksum
 * is zeroed and the L4 checksum holds the pseudo-header sum, as DPDK asks,
 * and the port fills in the rest. The layout (header lengths, protocols)
 * comes from the pool's template, so forwarded packets are left alone.
 */
#include <errno.h>

#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "dataplane.h"

#define CSUM_OFFLOADS (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM | \
		       RTE_ETH_TX_OFFLOAD_TCP_CKSUM)

uint64_t
offload_csum_pick(uint64_t capa)
{
	return capa & CSUM_OFFLOADS;
}

void
offload_csum_prepare(struct rte_mbuf *m, struct pool_state *p, uint64_t csum)
{
	uint8_t *l3 = rte_pktmbuf_mtod_offset(m, uint8_t *, p->l2_len);
	void *l4 = l3 + p->l3_len;
	uint64_t flags = 0;
	int l4_off = (p->l4_proto == IPPROTO_UDP && (csum & RTE_ETH_TX_OFFLOAD_UDP_CKSUM)) ||
		     (p->l4_proto == IPPROTO_TCP && (csum & RTE_ETH_TX_OFFLOAD_TCP_CKSUM));

	/* the raw template path clears the flags at alloc only in pools that
	 * ever had them set (send.c) */
	if (unlikely(!p->offloaded))
		p->offloaded = 1;
	if (p->l2_len + p->l3_len + (p->l4_proto == IPPROTO_TCP ? 20 : 8) > m->data_len)
		return;                 /* a frame cut shorter than its template */
	m->l2_len = p->l2_len;
	m->l3_len = p->l3_len;
	if (p->ip_version == 4) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)l3;

		flags = RTE_MBUF_F_TX_IPV4;
		if (csum & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) {
			flags |= RTE_MBUF_F_TX_IP_CKSUM;
			ip->hdr_checksum = 0;
		}
		if (l4_off)
			flags |= p->l4_proto == IPPROTO_UDP ? RTE_MBUF_F_TX_UDP_CKSUM : RTE_MBUF_F_TX_TCP_CKSUM;
		if (l4_off && p->l4_proto == IPPROTO_UDP)
			((struct rte_udp_hdr *)l4)->dgram_cksum = rte_ipv4_phdr_cksum(ip, flags);
		else if (l4_off)
			((struct rte_tcp_hdr *)l4)->cksum = rte_ipv4_phdr_cksum(ip, flags);
	} else if (p->ip_version == 6 && l4_off) {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)l3;

		flags = RTE_MBUF_F_TX_IPV6 |
			(p->l4_proto == IPPROTO_UDP ? RTE_MBUF_F_TX_UDP_CKSUM : RTE_MBUF_F_TX_TCP_CKSUM);
		if (p->l4_proto == IPPROTO_UDP)
			((struct rte_udp_hdr *)l4)->dgram_cksum = rte_ipv6_phdr_cksum(ip, flags);
		else
			((struct rte_tcp_hdr *)l4)->cksum = rte_ipv6_phdr_cksum(ip, flags);
	}
	m->ol_flags |= flags;
}
