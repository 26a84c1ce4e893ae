/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_parse.h - the emulated hosts' frame parser (hosts_parse.c): pure,
 * bytes in, a struct hframe out; fuzzed by tests/unit/test_hosts_fuzz.c.
 */
#ifndef HOSTS_PARSE_H
#define HOSTS_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

enum hframe_kind {
	HF_OTHER = 0,    /* not the hosts' (left to the caller) */
	HF_BAD,          /* ARP or IPv4 for the hosts, malformed */
	HF_ARP,
	HF_ECHO,         /* ICMP echo request */
	HF_ECHO_REPLY,   /* ICMP echo reply (an answer to a host's ping, hosts_ping.c) */
	HF_DHCP,         /* a BOOTREPLY to port 68 (or relayed, 67 to 67), its options read */
	HF_DHCP_BAD,     /* one to port 68 that is not a usable DHCP reply */
	HF_DHCP_REQ,     /* a BOOTREQUEST from port 68 to 67 (a DHCP server table's), its options read */
	HF_DHCP_REQ_BAD, /* one from 68 to 67 that is not a usable DHCP request */
	/* IPv6 (hosts_parse6.c): ICMPv6 with a valid checksum, ND's checks passed */
	HF_NS,           /* neighbour solicitation (RFC 4861 4.3) */
	HF_NA,           /* neighbour advertisement (4.4) */
	HF_RA,           /* router advertisement (4.2) */
	HF_ECHO6,        /* ICMPv6 echo request (RFC 4443 4.1) */
	HF_ECHO6_REPLY,  /* ICMPv6 echo reply (4.2) */
	HF_DHCP6,        /* a DHCPv6 message to the client port 546 from 547, its options read (RFC 8415) */
	HF_DHCP6_BAD,    /* one to port 546 that is not a usable DHCPv6 reply */
	HF_KINDS
};

/* DHCP message types (RFC 2132 9.6) */
enum { DHCP_DISCOVER = 1, DHCP_OFFER = 2, DHCP_REQUEST = 3, DHCP_DECLINE = 4, DHCP_ACK = 5, DHCP_NAK = 6,
       DHCP_RELEASE = 7 };

struct hframe {
	uint8_t kind;            /* enum hframe_kind */
	uint8_t l2;              /* Ethernet header's length: 14, 18 with an 802.1Q tag, 22 with two (QinQ) */
	uint16_t vlan;           /* the (inner) 802.1Q tag's VLAN id, 0 untagged */
	uint16_t outer;          /* QinQ: the outer tag's VLAN id (TPID 0x88a8, or 0x8100 before another 0x8100), 0 none */
	uint16_t outer_tpid;
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
	uint32_t dns[2];         /* option 6's first two servers (0: absent) */
	uint8_t overload;        /* option 52: 1 file, 2 sname, 3 both held options too (read) */
	const uint8_t *chaddr;
	uint32_t ciaddr, req_ip;  /* BOOTREQUEST: the client's address, option 50 (0: absent) */
	/* a relayed BOOTREPLY (UDP 67 to 67, to a relay agent: RFC 2131 4.1) */
	uint8_t relayed;         /* 1: it came to port 67 from 67 */
	uint8_t opt82_len;       /* option 82's length */
	const uint8_t *opt82;    /* option 82's value (RFC 3046: the relay's, echoed), NULL absent */
	uint32_t giaddr;
	/* IPv6 (HF_NS .. HF_ECHO6) */
	const uint8_t *ip6_src, *ip6_dst;
	uint16_t l4len6;       /* the IPv6 payload length (the ICMPv6 message's) */
	const uint8_t *target;   /* NS, NA: the target address */
	const uint8_t *lladdr;   /* NS: the source, NA: the target link-layer address option, or NULL */
	uint8_t na_flags;        /* NA: R 0x80, S 0x40, O 0x20 */
	/* RA: its first prefix information option with the A flag, if any */
	const uint8_t *prefix;
	uint8_t prefix_len;
	uint32_t valid_s, pref_s;
	/* DHCPv6 (HF_DHCP6): the server's message; an IA's fields 0 where absent */
	uint8_t d6_msg;          /* 2 ADVERTISE, 7 REPLY, ... */
	uint8_t d6_rapid;        /* a rapid commit option */
	uint8_t d6_sid_len;      /* the server identifier's length (1..130), 0 absent */
	uint32_t d6_xid;         /* 24 bits */
	const uint8_t *d6_mac;   /* the MAC in the client identifier (a DUID-LL or DUID-LLT of Ethernet), or NULL */
	const uint8_t *d6_sid;   /* the server identifier (its DUID) */
	uint16_t d6_status;      /* the message's status code, 0 (Success) when absent */
	struct hframe_ia {
		uint8_t present;
		uint8_t plen;              /* IA_PD: the prefix's length */
		uint16_t status;           /* the IA's status code (0 when absent) */
		uint32_t iaid, t1, t2, pref, valid;
		const uint8_t *addr;       /* IA_NA: the first IA address, IA_PD: the first prefix, or NULL */
	} na, pd;
};

/* Reads one frame of len bytes. Never reads outside them. */
enum { DHCP6_SOLICIT = 1, DHCP6_ADVERTISE = 2, DHCP6_REQUEST = 3, DHCP6_RENEW = 5, DHCP6_REBIND = 6,
       DHCP6_REPLY = 7, DHCP6_RELEASE = 8 };
/* hosts_parse6.c: hframe_parse and, for IPv6, hframe_ip6 on the packet after the Ethernet header */
enum hframe_kind hframe_read(const uint8_t *p, size_t len, struct hframe *f);
enum hframe_kind hframe_ip6(const uint8_t *p, size_t len, struct hframe *f);
enum hframe_kind hframe_parse(const uint8_t *p, size_t len, struct hframe *f);

#endif
