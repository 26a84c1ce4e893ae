/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_parse6.c - what an emulated host receives over IPv6, read: ICMPv6
 * (RFC 4443) echo requests and neighbour discovery (RFC 4861: NS, NA,
 * RA) and DHCPv6 (RFC 8415) replies. Pure, as hosts_parse.c, and fuzzed
 * with it by tests/unit/test_hosts_fuzz.c: hframe_read() reads a frame
 * with hframe_parse() and, when it carries IPv6, with hframe_ip6(). The
 * IPv6 payload length bounds what is read; a next header other than
 * ICMPv6 or UDP (extension headers too) is not the hosts'. An ICMPv6 message with a bad checksum, or an ND
 * message failing RFC 4861's validity checks (hop limit 255, code 0, its
 * length, options of non-zero length within it), is HF_BAD; a DHCPv6 message with a bad UDP checksum or
 * length, or options past their end, HF_DHCP6_BAD.
 */
#include <string.h>

#include "csum.h"
#include "hosts_parse.h"

/* the ICMPv6 or UDP checksum over the pseudo-header (RFC 8200 8.1) and
 * the message: 0xffff (ones' complement) when it is right */
static int
sum_ok(const uint8_t *ip, const uint8_t *m, size_t n, uint8_t proto)
{
	return csum6(ip, m, n, proto) == 0xffff;
}

/* ND options from o (n bytes): each of non-zero length within n (RFC 4861
 * 4.6); the link-layer address option of type ll kept (of 8 bytes: an
 * Ethernet address); the first prefix information with the A flag. 0 when
 * they are well formed. */
static int
options(const uint8_t *o, size_t n, uint8_t ll, struct hframe *f)
{
	size_t i = 0;

	while (i < n) {
		if (i + 2 > n || o[i + 1] == 0 || i + (size_t)o[i + 1] * 8 > n)
			return -1;
		size_t l = (size_t)o[i + 1] * 8;

		if (o[i] == ll && l == 8 && f->lladdr == NULL)
			f->lladdr = o + i + 2;
		if (o[i] == 3 && ll == 0) {      /* prefix information (4.6.2): 32 bytes */
			if (l != 32)
				return -1;
			if ((o[i + 3] & 0x40) && f->prefix == NULL) {
				f->prefix_len = o[i + 2];
				f->valid_s = get32(o + i + 4);
				f->pref_s = get32(o + i + 8);
				f->prefix = o + i + 16;
			}
		}
		i += l;
	}
	return 0;
}

/* An IA_NA's or IA_PD's fields and its options (o, n bytes: after IAID,
 * T1, T2): its first address (IAADDR, 24 bytes and options) or prefix
 * (IAPREFIX, 25 bytes and options), its status code. 0, or -1 when an
 * option runs past the IA or is too short for its kind. */
static int
dhcp6_ia(const uint8_t *v, size_t n, int pd, struct hframe_ia *ia)
{
	size_t i = 12;

	if (n < 12)
		return -1;
	ia->present = 1;
	ia->iaid = get32(v);
	ia->t1 = get32(v + 4);
	ia->t2 = get32(v + 8);
	while (i < n) {
		if (i + 4 > n || i + 4 + (size_t)get16(v + i + 2) > n)
			return -1;
		uint16_t code = get16(v + i), l = get16(v + i + 2);
		const uint8_t *w = v + i + 4;

		if (code == 13) {
			if (l < 2)
				return -1;
			ia->status = get16(w);
		} else if (code == (pd ? 26 : 5)) {
			if (l < (pd ? 25 : 24))
				return -1;
			if (ia->addr == NULL) {
				ia->pref = get32(pd ? w : w + 16);
				ia->valid = get32(pd ? w + 4 : w + 20);
				if (pd) {
					ia->plen = w[8];
					ia->addr = w + 9;
				} else {
					ia->addr = w;
				}
			}
		}
		i += 4 + (size_t)l;
	}
	return 0;
}

/* A DHCPv6 message (RFC 8415 8, options 21): type, transaction id, then
 * options (code, length, value), each within the message; the client
 * identifier, server identifier, status code, rapid commit and the first
 * IA_NA and IA_PD read. */
static enum hframe_kind
dhcp6(const uint8_t *b, size_t n, struct hframe *f)
{
	size_t i = 4;

	if (n < 4)
		return HF_DHCP6_BAD;
	f->d6_msg = b[0];
	f->d6_xid = (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	while (i < n) {
		if (i + 4 > n || i + 4 + (size_t)get16(b + i + 2) > n)
			return HF_DHCP6_BAD;
		uint16_t code = get16(b + i), l = get16(b + i + 2);
		const uint8_t *v = b + i + 4;

		switch (code) {
		case 1:                  /* client identifier: an Ethernet DUID-LLT (1) or DUID-LL (3) */
			if (f->d6_mac != NULL)
				break;   /* the first usable one */
			if (l == 14 && get16(v) == 1 && get16(v + 2) == 1)
				f->d6_mac = v + 8;
			else if (l == 10 && get16(v) == 3 && get16(v + 2) == 1)
				f->d6_mac = v + 4;
			break;
		case 2:
			if (l < 1 || l > 130)
				return HF_DHCP6_BAD;
			f->d6_sid = v;
			f->d6_sid_len = (uint8_t)l;
			break;
		case 3: case 25: {
			/* the first of each kind kept; any other checked all the same */
			struct hframe_ia more, *ia = code == 25 ? &f->pd : &f->na;

			if (ia->present) {
				memset(&more, 0, sizeof(more));
				ia = &more;
			}
			if (dhcp6_ia(v, l, code == 25, ia) != 0)
				return HF_DHCP6_BAD;
			break;
		}
		case 13:
			if (l < 2)
				return HF_DHCP6_BAD;
			f->d6_status = get16(v);
			break;
		case 14:
			f->d6_rapid = 1;
			break;
		default:
			break;
		}
		i += 4 + (size_t)l;
	}
	return f->d6_mac != NULL ? HF_DHCP6 : HF_DHCP6_BAD;   /* no client identifier of ours: nobody's */
}

enum hframe_kind
hframe_ip6(const uint8_t *p, size_t len, struct hframe *f)
{
	if (len < 40 || (p[0] >> 4) != 6)
		return HF_BAD;
	size_t plen = get16(p + 4);

	if (plen > len - 40)
		return HF_BAD;
	const uint8_t *m = p + 40;

	if (p[6] == 17 && plen >= 8 && get16(m) == 547 && get16(m + 2) == 546) {
		f->ip6_src = p + 8;
		f->ip6_dst = p + 24;
		/* the UDP length is the payload's; the checksum is mandatory (RFC 8200 8.1) */
		if (get16(m + 4) != plen || get16(m + 6) == 0 || !sum_ok(p, m, plen, 17))
			return HF_DHCP6_BAD;
		return dhcp6(m + 8, plen - 8, f);
	}
	if (p[6] != 58)
		return HF_OTHER;                 /* not ICMPv6 or DHCPv6, or behind extension headers */
	uint8_t hlim = p[7];

	f->ip6_src = p + 8;
	f->ip6_dst = p + 24;
	f->l4len6 = (uint16_t)plen;
	if (plen < 4 || !sum_ok(p, m, plen, 58))
		return HF_BAD;
	uint8_t type = m[0];

	if (type == 128 || type == 129)
		return plen >= 8 && m[1] == 0 ? (type == 128 ? HF_ECHO6 : HF_ECHO6_REPLY) : HF_BAD;
	if (type < 134 || type > 136)
		return HF_OTHER;
	if (hlim != 255 || m[1] != 0)
		return HF_BAD;
	if (type == 134) {                   /* RA from a link-local source (6.1.2) */
		if (plen < 16 || p[8] != 0xfe || (p[9] & 0xc0) != 0x80 || options(m + 16, plen - 16, 0, f) != 0)
			return HF_BAD;
		f->lladdr = NULL;
		return HF_RA;
	}
	if (plen < 24 || m[8] == 0xff)       /* the target is no multicast address (7.1.1, 7.1.2) */
		return HF_BAD;
	f->target = m + 8;
	if (options(m + 24, plen - 24, type == 135 ? 1 : 2, f) != 0)
		return HF_BAD;
	if (type == 135) {
		static const uint8_t any[16];
		/* from ::, to a solicited-node address and without a source
		 * link-layer address option (7.1.1) */
		if (memcmp(p + 8, any, 16) == 0 && (f->lladdr != NULL || p[24] != 0xff))
			return HF_BAD;
		return HF_NS;
	}
	f->na_flags = m[4] & 0xe0;
	if (p[24] == 0xff && (f->na_flags & 0x40))
		return HF_BAD;                   /* solicited, to a multicast address */
	return HF_NA;
}

enum hframe_kind
hframe_read(const uint8_t *p, size_t len, struct hframe *f)
{
	enum hframe_kind k = hframe_parse(p, len, f);

	if (k != HF_OTHER || f->l2 == 0 || get16(p + f->l2 - 2) != 0x86dd)   /* l2 0: shorter than a header */
		return k;
	k = hframe_ip6(p + f->l2, len - f->l2, f);
	f->kind = (uint8_t)k;
	return k;
}
