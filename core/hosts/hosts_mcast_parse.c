/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_mcast_parse.c - membership queries read: IGMP (RFC 2236 2, RFC
 * 3376 4.1: the version from the message's length and max response code)
 * over IPv4, MLD (RFC 2710 3, RFC 3810 5.1) as ICMPv6 after the IPv6
 * header and its hop-by-hop header. Checksums are checked (IGMP over the
 * message, ICMPv6 over the pseudo header too): a query with a bad one is
 * MQ_BAD, as a router drops it. Pure: nothing else linked, so
 * tests/unit/test_hosts_mcast_fuzz.c fuzzes it alone; every read is
 * checked against the lengths first.
 */
#include <string.h>

#include "hosts_mcast_parse.h"
#include "wire.h"

/* RFC 3376 4.1.1 / RFC 3810 5.1.3: a code at or past 1 << bits is a
 * floating point number, mantissa (mbits) and exponent (3 bits) */
static uint32_t
resp_code(uint32_t code, int bits, int mbits)
{
	if (code < (1u << (bits - 1)))
		return code;
	uint32_t mant = code & ((1u << mbits) - 1), exp = (code >> mbits) & 7;

	return (mant | 1u << mbits) << (exp + 3);
}

/* IGMPv3 (RFC 3376 4.1) and MLDv2 (RFC 3810 5.1) queries end alike: at
 * s the robustness variable (the low 3 bits), QQIC, the number of sources
 * and that many addresses of alen bytes, all within n */
static enum mquery_kind
v3_query(struct mquery *q, const uint8_t *m, size_t n, size_t s, size_t alen, uint32_t max_resp_ms)
{
	q->nsrc = get16(m + s + 2);
	if (s + 4 + (size_t)q->nsrc * alen > n)
		return MQ_BAD;
	q->version = q->af == 4 ? 3 : 2;
	q->qrv = m[s] & 7;
	q->max_resp_ms = max_resp_ms;
	return MQ_QUERY;
}

static enum mquery_kind
igmp(const uint8_t *p, size_t len, struct mquery *q)
{
	if (len < 20 || (p[0] >> 4) != 4 || p[9] != 2)
		return MQ_NONE;
	size_t ihl = (size_t)(p[0] & 15) * 4, tot = get16(p + 2);

	if (ihl < 20 || tot < ihl || tot > len || (get16(p + 6) & 0x3fff) != 0)
		return MQ_NONE;
	const uint8_t *m = p + ihl;
	size_t n = tot - ihl;

	if (n < 1 || m[0] != 0x11)
		return MQ_NONE;             /* reports and leaves: another station's, not the hosts' */
	q->af = 4;
	if (n < 8 || (n > 8 && n < 12) || csum_add(m, n, 0) != 0xffff)
		return MQ_BAD;
	memcpy(q->group, m + 4, 4);
	if (n == 8) {
		/* RFC 3376 7.1: an 8-byte query with code 0 is IGMPv1's (10 s) */
		q->version = m[1] == 0 ? 1 : 2;
		q->max_resp_ms = m[1] == 0 ? 10000 : m[1] * 100u;
		return MQ_QUERY;
	}
	return v3_query(q, m, n, 8, 4, resp_code(m[1], 8, 4) * 100u);
}

static enum mquery_kind
mld(const uint8_t *p, size_t len, struct mquery *q)
{
	if (len < 40 || (p[0] >> 4) != 6)
		return MQ_NONE;
	size_t plen = get16(p + 4), off = 40;
	uint8_t nh = p[6];

	if (40 + plen > len)
		return MQ_NONE;
	len = 40 + plen;
	if (nh == 0) {                  /* hop-by-hop options (RFC 3810 5: the router alert is there) */
		if (off + 8 > len)
			return MQ_NONE;
		nh = p[off];
		off += 8 + (size_t)p[off + 1] * 8;
		if (off > len)
			return MQ_NONE;
	}
	if (nh != 58 || off + 4 > len)
		return MQ_NONE;
	const uint8_t *m = p + off;
	size_t n = len - off;

	if (m[0] != 130)
		return MQ_NONE;
	q->af = 6;
	if (n < 24 || (n > 24 && n < 28))
		return MQ_BAD;
	if (csum6(p, m, n, 58) != 0xffff)
		return MQ_BAD;
	memcpy(q->group, m + 8, 16);
	if (n == 24) {
		q->version = 1;
		q->max_resp_ms = get16(m + 4);
		return MQ_QUERY;
	}
	return v3_query(q, m, n, 24, 16, resp_code(get16(m + 4), 16, 12));
}

enum mquery_kind
mquery_parse(uint16_t ethertype, const uint8_t *l3, size_t n, struct mquery *q)
{
	enum mquery_kind k = MQ_NONE;

	memset(q, 0, sizeof(*q));
	if (ethertype == 0x0800)
		k = igmp(l3, n, q);
	else if (ethertype == 0x86dd)
		k = mld(l3, n, q);
	q->kind = (uint8_t)k;
	return k;
}
