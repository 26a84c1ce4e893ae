/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_parse.c - what an emulated host receives, read: ARP (RFC 826),
 * IPv4 with ICMP echo requests and replies (RFC 792), DHCP replies to the client port
 * and relayed ones to a relay agent's (RFC 2131, options RFC 2132). Pure: bytes in, struct hframe out, nothing
 * else linked, so tests/unit/test_hosts_fuzz.c fuzzes it alone. Every read
 * is checked against the frame's length first; the IPv4 total length
 * bounds what follows it (padding after it is ignored).
 */
#include <string.h>

#include "hosts_parse.h"

#define BOOTP_FIXED 236          /* op .. file, before the magic cookie */
#define DHCP_MAGIC 0x63825363u

/* The options in o (n bytes: after the cookie, or sname / file overloaded,
 * `main` 0). A length running past the end, a message type or an address
 * option of the wrong length, or no end option: the reply is bad (-1), else 0. */
static int
dhcp_options(const uint8_t *o, size_t n, struct hframe *f, int main)
{
	size_t i = 0;

	while (i < n) {
		uint8_t code = o[i];

		if (code == 0) {             /* pad */
			i++;
			continue;
		}
		if (code == 255)
			return 0;
		if (i + 1 >= n || i + 2 + (size_t)o[i + 1] > n)
			return -1;
		uint8_t l = o[i + 1];
		const uint8_t *v = o + i + 2;

		switch (code) {
		case 53:
			if (l != 1 || v[0] < DHCP_DISCOVER || v[0] > DHCP_RELEASE)
				return -1;
			f->msg = v[0];
			break;
		case 52:        /* RFC 2132 9.3: only in the options field proper */
			if (l != 1 || v[0] < 1 || v[0] > 3 || !main)
				return -1;
			f->overload = v[0];
			break;
		case 82:        /* relay agent information (RFC 3046): kept whole, compared by the relay */
			f->opt82 = v;
			f->opt82_len = l;
			break;
		case 6:         /* DNS servers: a list of addresses, the first two kept */
			if (l < 4 || l % 4 != 0)
				return -1;
			f->dns[0] = get32(v);
			f->dns[1] = l >= 8 ? get32(v + 4) : 0;
			break;
		case 1: case 3: case 50: case 51: case 54: case 58: case 59:
			if (l < 4 || (code != 3 && l != 4))
				return -1;   /* option 3 is a list: the first router */
			if (code == 1)
				f->mask = get32(v);
			else if (code == 3)
				f->router = get32(v);
			else if (code == 50)
				f->req_ip = get32(v);
			else if (code == 51)
				f->lease_s = get32(v);
			else if (code == 54)
				f->server_id = get32(v);
			else if (code == 58)
				f->t1_s = get32(v);
			else
				f->t2_s = get32(v);
			break;
		default:
			break;
		}
		i += 2 + (size_t)l;
	}
	return -1;                       /* no end option */
}

/* op 2 (BOOTREPLY, to a client) or 1 (BOOTREQUEST, to a server table):
 * the same grammar, its own kinds */
static enum hframe_kind
dhcp(const uint8_t *b, size_t n, struct hframe *f, uint8_t op)
{
	enum hframe_kind good = op == 2 ? HF_DHCP : HF_DHCP_REQ, bad = op == 2 ? HF_DHCP_BAD : HF_DHCP_REQ_BAD;

	if (n < BOOTP_FIXED + 4 || b[0] != op || b[1] != 1 || b[2] != 6 || get32(b + BOOTP_FIXED) != DHCP_MAGIC)
		return bad;
	f->xid = get32(b + 4);
	f->ciaddr = get32(b + 12);
	f->yiaddr = get32(b + 16);
	f->giaddr = get32(b + 24);
	f->chaddr = b + 28;
	if (dhcp_options(b + BOOTP_FIXED + 4, n - BOOTP_FIXED - 4, f, 1) != 0)
		return bad;
	/* RFC 2131 4.1: overloaded, file (bit 1) then sname (bit 2) hold options too */
	if (((f->overload & 1) && dhcp_options(b + 108, 128, f, 0) != 0) ||
	    ((f->overload & 2) && dhcp_options(b + 44, 64, f, 0) != 0))
		return bad;
	return f->msg != 0 ? good : bad;
}

static enum hframe_kind
ipv4(const uint8_t *p, size_t len, struct hframe *f)
{
	if (len < 20 || (p[0] >> 4) != 4)
		return HF_BAD;
	uint16_t ihl = (uint16_t)((p[0] & 15) * 4), tot = get16(p + 2);

	if (ihl < 20 || tot < ihl || tot > len)
		return HF_BAD;
	if ((get16(p + 6) & 0x3fff) != 0)
		return HF_OTHER;             /* a fragment: not answered */
	f->ihl = ihl;
	f->ip_len = tot;
	f->ip_src = get32(p + 12);
	f->ip_dst = get32(p + 16);
	const uint8_t *l4 = p + ihl;
	size_t l4len = (size_t)tot - ihl;

	if (p[9] == 1) {                 /* ICMP */
		if (l4len < 8)
			return HF_BAD;
		if (l4[1] != 0)
			return HF_OTHER;
		return l4[0] == 8 ? HF_ECHO : l4[0] == 0 ? HF_ECHO_REPLY : HF_OTHER;
	}
	if (p[9] == 17 && l4len >= 8 && ((get16(l4 + 2) == 68 && get16(l4) == 67) ||
					 (get16(l4 + 2) == 67 && get16(l4) == 68))) {
		size_t ulen = get16(l4 + 4);
		uint8_t op = get16(l4 + 2) == 68 ? 2 : 1;

		if (ulen < 8 || ulen > l4len)
			return op == 2 ? HF_DHCP_BAD : HF_DHCP_REQ_BAD;
		return dhcp(l4 + 8, ulen - 8, f, op);
	}
	/* RFC 2131 4.1: a server's reply to a relay agent, 67 to 67 (a
	 * BOOTREQUEST between relays is not the hosts') */
	if (p[9] == 17 && l4len >= 8 && get16(l4) == 67 && get16(l4 + 2) == 67 && l4len >= 9 && l4[8] == 2) {
		size_t ulen = get16(l4 + 4);

		f->relayed = 1;
		if (ulen < 9 || ulen > l4len)
			return HF_DHCP_BAD;
		return dhcp(l4 + 8, ulen - 8, f, 2);
	}
	return HF_OTHER;
}

enum hframe_kind
hframe_parse(const uint8_t *p, size_t len, struct hframe *f)
{
	memset(f, 0, sizeof(*f));
	if (len < 14)
		return (enum hframe_kind)(f->kind = HF_OTHER);
	uint16_t type = get16(p + 12);

	f->l2 = 14;
	f->src_mac = p + 6;
	if (type == 0x8100 || type == 0x88a8) {
		if (len < 18)
			return (enum hframe_kind)(f->kind = HF_OTHER);
		uint16_t id = get16(p + 14) & 0x0fff, next = get16(p + 16);

		f->l2 = 18;
		if (type == 0x88a8 || next == 0x8100) {
			/* QinQ: an S-tag (802.1ad), or an 0x8100 before another */
			f->outer = id;
			f->outer_tpid = type;
			type = next;
			if (type == 0x8100) {
				if (len < 22)
					return (enum hframe_kind)(f->kind = HF_OTHER);
				f->vlan = get16(p + 18) & 0x0fff;
				type = get16(p + 20);
				f->l2 = 22;
			}
		} else {
			f->vlan = id;
			type = next;
		}
	}
	const uint8_t *l3 = p + f->l2;
	size_t n = len - f->l2;
	enum hframe_kind k = HF_OTHER;

	if (type == 0x0806) {
		/* Ethernet/IPv4 ARP only: hardware 1, protocol 0x0800, lengths 6 and 4 */
		if (n < 28 || get16(l3) != 1 || get16(l3 + 2) != 0x0800 || l3[4] != 6 || l3[5] != 4)
			k = HF_BAD;
		else {
			f->arp_op = get16(l3 + 6);
			f->sha = l3 + 8;
			f->spa = get32(l3 + 14);
			f->tpa = get32(l3 + 24);
			k = HF_ARP;
		}
	} else if (type == 0x0800) {
		k = ipv4(l3, n, f);
	}
	f->kind = (uint8_t)k;
	return k;
}
