/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_parse.h - the emulated hosts' frame parser (hosts_parse.c): pure,
 * bytes in, a struct hframe out; fuzzed by tests/unit/test_hosts_fuzz.c.
 */
#ifndef HOSTS_PARSE_H
#define HOSTS_PARSE_H

#include <stddef.h>
#include <stdint.h>

enum hframe_kind {
	HF_OTHER = 0,    /* not the hosts' (left to the caller) */
	HF_BAD,          /* ARP or IPv4 for the hosts, malformed */
	HF_ARP,
	HF_ECHO,         /* ICMP echo request */
	HF_DHCP,         /* a BOOTREPLY to port 68, its options read */
	HF_DHCP_BAD,     /* one to port 68 that is not a usable DHCP reply */
	HF_DHCP_REQ,     /* a BOOTREQUEST from port 68 to 67 (a DHCP server table's), its options read */
	HF_DHCP_REQ_BAD, /* one from 68 to 67 that is not a usable DHCP request */
	HF_KINDS
};

/* DHCP message types (RFC 2132 9.6) */
enum { DHCP_DISCOVER = 1, DHCP_OFFER = 2, DHCP_REQUEST = 3, DHCP_DECLINE = 4, DHCP_ACK = 5, DHCP_NAK = 6,
       DHCP_RELEASE = 7 };

struct hframe {
	uint8_t kind;            /* enum hframe_kind */
	uint8_t l2;              /* Ethernet header's length: 14, or 18 with an 802.1Q tag */
	uint16_t vlan;           /* the tag's VLAN id, 0 untagged */
	const uint8_t *src_mac;
	/* ARP (HF_ARP) */
	uint16_t arp_op;
	const uint8_t *sha;
	uint32_t spa, tpa;       /* host order */
	/* IPv4 (HF_ECHO, HF_DHCP) */
	uint32_t ip_src, ip_dst;
	uint16_t ihl;            /* the IPv4 header's bytes */
	uint16_t ip_len;         /* the IPv4 total length */
	/* DHCP (HF_DHCP) */
	uint8_t msg;             /* option 53 */
	uint32_t xid;
	uint32_t yiaddr, server_id, lease_s, t1_s, t2_s, mask, router;   /* 0: absent */
	const uint8_t *chaddr;
	uint32_t ciaddr, req_ip;  /* BOOTREQUEST: the client's address, option 50 (0: absent) */
};

/* Reads one frame of len bytes. Never reads outside them. */
enum hframe_kind hframe_parse(const uint8_t *p, size_t len, struct hframe *f);

#endif
