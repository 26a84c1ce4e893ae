/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_hosts_fuzz.c - a fuzz target for the emulated hosts' frame parser
 * (core/hosts/hosts_parse.c), the bytes any station on the link sends to
 * surge's hosts: ARP, ICMP echo, DHCP replies (and requests, to a server
 * table); over IPv6 ICMPv6 echo, ND (NS, NA, RA) and DHCPv6 replies;
 * untagged, with an 802.1Q tag or two (QinQ: an 802.1ad S-tag, or 0x8100
 * twice), the tags and VLAN ids checked against a reference too. Each
 * input is checked against a reference written apart from the parser,
 * slowly and literally from RFC 2131 and 2132 (a DHCP reply's message
 * type, lease time and server identifier, option 82 and giaddr, and
 * whether its options are whole; a relayed reply, UDP 67 to 67) and from RFC 4443, 4861 and 8415 (which IPv6 messages are usable,
 * an RA's prefix, a DHCPv6 reply's type, transaction, client MAC, server
 * identifier, status, rapid commit and its IA_NA's and IA_PD's leases), and every pointer
 * the parser hands out must lie inside the input (the sanitizer pass
 * places each input in an allocation of its exact size, so a read past it
 * is a failure).
 *
 * As test_http_fuzz.c: in ctest, a bounded deterministic fuzzer mutating
 * the seeds of tests/fuzz/hosts/ for SURGE_FUZZ_SECONDS (default 3) or
 * 400 000 inputs (SURGE_FUZZ_SEED replays a run); with libFuzzer
 * (fuzz/hosts in a clang build, or by hand):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DSURGE_LIBFUZZER \
 *     -Icore/hosts tests/unit/test_hosts_fuzz.c core/hosts/hosts_parse.c core/hosts/hosts_parse6.c -o hosts_fuzz
 *   ./hosts_fuzz tests/fuzz/hosts
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FUZZ_NAME "test_hosts_fuzz"
#include "fuzz_ref.h"
#include "hosts_parse.h"

/* --- the reference ------------------------------------------------------- */

struct ref {
	int whole;                  /* the options end with 255, each within the input */
	unsigned msg;
	unsigned long lease, server, dns;
	unsigned overload;
	long a82;                   /* option 82's value: its offset in the message (the last one read), -1 none */
	unsigned l82;
};

/* RFC 2132 2: options are pad (0), end (255) or code, length, value. The
 * options in b[i..n) read byte by byte: 1 when they end with 255 within
 * them, 0 when not; a message type, a 4-byte option of another length, a
 * DNS list (6) not of whole addresses, an overload (52) not 1..3 or
 * outside the options field proper (main 0) spoil them. */
static int
ref_opts(const uint8_t *b, size_t i, size_t n, struct ref *r, int main)
{
	while (i < n) {
		if (b[i] == 0) {
			i += 1;
		} else if (b[i] == 255) {
			return 1;
		} else {
			if (i + 1 >= n)
				return 0;
			size_t len = b[i + 1];

			if (i + 2 + len > n)
				return 0;
			if (b[i] == 53) {
				if (len != 1 || b[i + 2] < 1 || b[i + 2] > 7)
					return 0;
				r->msg = b[i + 2];
			}
			if (b[i] == 51 || b[i] == 54 || b[i] == 1 || b[i] == 50 || b[i] == 58 || b[i] == 59) {
				if (len != 4)
					return 0;
				if (b[i] == 51)
					r->lease = be(b + i + 2, 4);
				if (b[i] == 54)
					r->server = be(b + i + 2, 4);
			}
			if (b[i] == 3 && len < 4)
				return 0;
			if (b[i] == 82) {
				r->a82 = (long)i + 2;
				r->l82 = (unsigned)len;
			}
			if (b[i] == 6) {
				if (len == 0 || len % 4 != 0)
					return 0;
				r->dns = be(b + i + 2, 4);
			}
			if (b[i] == 52) {
				if (!main || len != 1 || b[i + 2] == 0 || b[i + 2] > 3)
					return 0;
				r->overload = b[i + 2];
			}
			i += 2 + len;
		}
	}
	return 0;
}

/* The BOOTP message at b (n bytes, the UDP payload): its options, then
 * with an overload (RFC 2131 4.1) those in file (bytes 108..235) and
 * sname (44..107); usable with a message type. */
static void
ref_dhcp(const uint8_t *b, size_t n, struct ref *r, int op)
{
	memset(r, 0, sizeof(*r));
	r->a82 = -1;
	/* a BOOTREPLY (op 2) for an Ethernet client (htype 1, hlen 6: its
	 * chaddr is a MAC) with the magic cookie */
	if (n < 240 || b[0] != op || b[1] != 1 || b[2] != 6 || be(b + 236, 4) != 0x63825363ul)
		return;
	if (!ref_opts(b, 240, n, r, 1))
		return;
	if ((r->overload & 1) && !ref_opts(b, 108, 236, r, 0))
		return;
	if ((r->overload & 2) && !ref_opts(b, 44, 108, r, 0))
		return;
	r->whole = r->msg != 0;
}

/* --- the IPv6 reference ------------------------------------------------- */

/* the Internet checksum of the IPv6 pseudo-header (RFC 8200 8.1) for the
 * upper-layer message of n bytes with next header nh, and the message:
 * built into one buffer and summed as 16-bit big-endian words */
static int
ref_sum_ok(const uint8_t *ip6, const uint8_t *msg, size_t n, int nh)
{
	static uint8_t buf[40 + 70000];
	unsigned long sum = 0;

	memcpy(buf, ip6 + 8, 32);
	buf[32] = (uint8_t)(n >> 24);
	buf[33] = (uint8_t)(n >> 16);
	buf[34] = (uint8_t)(n >> 8);
	buf[35] = (uint8_t)n;
	buf[36] = buf[37] = buf[38] = 0;
	buf[39] = (uint8_t)nh;
	memcpy(buf + 40, msg, n);
	if (n % 2)
		buf[40 + n] = 0;
	for (size_t k = 0; k < 40 + n; k += 2)
		sum += be(buf + k, 2);
	while (sum > 0xffff)
		sum = (sum >> 16) + (sum & 0xffff);
	return sum == 0xffff;
}

/* RFC 4861 4.6: options of 8-byte units, none of length 0, within n */
static int
ref_nd_options_ok(const uint8_t *o, size_t n, int ra)
{
	size_t at = 0;

	while (at != n) {
		if (n - at < 2)
			return 0;
		size_t units = o[at + 1];

		if (units == 0 || units * 8 > n - at)
			return 0;
		if (ra && o[at] == 3 && units != 4)
			return 0;       /* a prefix information option is 32 bytes */
		at += units * 8;
	}
	return 1;
}

struct ref6 {
	int kind;                 /* the hframe_kind the reference expects */
	/* DHCPv6 */
	unsigned msg, rapid, sid_len, status;
	unsigned long xid, na_valid, pd_plen;
	long mac_at, na_at, pd_at; /* offsets into the message, -1 absent */
	/* RA */
	long prefix_at;
	unsigned long valid;
};

/* an IA's options (RFC 8415 21.4, 21.21): status (>= 2 bytes), IAADDR
 * (>= 24) or IAPREFIX (>= 25); the first address or prefix's offset */
static int
ref_ia(const uint8_t *b, size_t start, size_t end, int pd, long *at, unsigned long *valid, unsigned long *plen)
{
	size_t k = start + 12;

	if (end - start < 12)
		return 0;
	while (k < end) {
		if (end - k < 4)
			return 0;
		size_t len = be(b + k + 2, 2);
		unsigned code = (unsigned)be(b + k, 2);

		if (len > end - k - 4)
			return 0;
		if (code == 13 && len < 2)
			return 0;
		if (code == (pd ? 26u : 5u)) {
			if (len < (pd ? 25u : 24u))
				return 0;
			if (*at < 0) {
				*at = (long)(pd ? k + 4 + 9 : k + 4);
				*valid = be(b + k + 4 + (pd ? 4 : 20), 4);
				*plen = pd ? b[k + 4 + 8] : 0;
			}
		}
		k += 4 + len;
	}
	return 1;
}

static void
ref_dhcp6(const uint8_t *b, size_t n, struct ref6 *r)
{
	size_t k = 4;
	int na_seen = 0, pd_seen = 0;
	unsigned long scratch_v, scratch_p;
	long scratch_at;

	r->kind = HF_DHCP6_BAD;
	if (n < 4)
		return;
	r->msg = b[0];
	r->xid = be(b + 1, 3);
	while (k < n) {
		if (n - k < 4)
			return;
		unsigned code = (unsigned)be(b + k, 2);
		size_t len = be(b + k + 2, 2);

		if (len > n - k - 4)
			return;
		const uint8_t *v = b + k + 4;

		/* the first client identifier of Ethernet's DUID-LL or DUID-LLT: the MAC at its end */
		if (code == 1 && len == 10 && be(v, 2) == 3 && be(v + 2, 2) == 1 && r->mac_at < 0)
			r->mac_at = (long)(k + 4 + 4);
		else if (code == 1 && len == 14 && be(v, 2) == 1 && be(v + 2, 2) == 1 && r->mac_at < 0)
			r->mac_at = (long)(k + 4 + 8);
		if (code == 2) {
			if (len < 1 || len > 130)
				return;
			r->sid_len = (unsigned)len;
		}
		if (code == 13) {
			if (len < 2)
				return;
			r->status = (unsigned)be(v, 2);
		}
		if (code == 14)
			r->rapid = 1;
		if (code == 3 || code == 25) {
			int pd = code == 25, *seen = pd ? &pd_seen : &na_seen;

			scratch_at = -1;
			if (!ref_ia(b, k + 4, k + 4 + len, pd, *seen ? &scratch_at : pd ? &r->pd_at : &r->na_at,
				    *seen ? &scratch_v : pd ? &scratch_v : &r->na_valid, *seen ? &scratch_p : pd ?
				    &r->pd_plen : &scratch_p))
				return;
			*seen = 1;
		}
		k += 4 + len;
	}
	if (r->mac_at >= 0)
		r->kind = HF_DHCP6;
}

/* the IPv6 packet at p (n bytes after the Ethernet header) */
static void
ref_ip6(const uint8_t *p, size_t n, struct ref6 *r)
{
	memset(r, 0, sizeof(*r));
	r->mac_at = r->na_at = r->pd_at = r->prefix_at = -1;
	r->kind = HF_BAD;
	if (n < 40 || p[0] / 16 != 6)
		return;
	size_t plen = be(p + 4, 2);

	if (plen + 40 > n)
		return;
	const uint8_t *m = p + 40;

	if (p[6] == 17 && plen >= 8 && be(m, 2) == 547 && be(m + 2, 2) == 546) {
		if (be(m + 4, 2) != plen || be(m + 6, 2) == 0 || !ref_sum_ok(p, m, plen, 17)) {
			r->kind = HF_DHCP6_BAD;
			return;
		}
		ref_dhcp6(m + 8, plen - 8, r);
		return;
	}
	if (p[6] != 58) {
		r->kind = HF_OTHER;
		return;
	}
	if (plen < 4 || !ref_sum_ok(p, m, plen, 58))
		return;                 /* HF_BAD */
	int type = m[0], code = m[1], hop = p[7];
	int from_any = 1, to_mcast = p[24] == 0xff;

	for (int k = 8; k < 24; k++)
		from_any &= p[k] == 0;
	if (type == 128 || type == 129) {
		r->kind = plen >= 8 && code == 0 ? (type == 128 ? HF_ECHO6 : HF_ECHO6_REPLY) : HF_BAD;
		return;
	}
	if (type != 134 && type != 135 && type != 136) {
		r->kind = HF_OTHER;
		return;
	}
	if (hop != 255 || code != 0)
		return;
	if (type == 134) {
		int ll_src = p[8] == 0xfe && (p[9] & 0xc0) == 0x80;

		if (plen < 16 || !ll_src || !ref_nd_options_ok(m + 16, plen - 16, 1))
			return;
		for (size_t at = 16; at < plen; at += (size_t)m[at + 1] * 8)
			if (m[at] == 3 && (m[at + 3] & 0x40)) {
				r->prefix_at = (long)(at + 16);
				r->valid = be(m + at + 4, 4);
				break;
			}
		r->kind = HF_RA;
		return;
	}
	if (plen < 24 || m[8] == 0xff || !ref_nd_options_ok(m + 24, plen - 24, 0))
		return;
	int sllao = 0;

	for (size_t at = 24; at < plen; at += (size_t)m[at + 1] * 8)
		sllao |= m[at] == 1 && m[at + 1] == 1;
	if (type == 135)
		r->kind = from_any && (sllao || !to_mcast) ? HF_BAD : HF_NS;
	else
		r->kind = to_mcast && (m[4] & 0x40) ? HF_BAD : HF_NA;
}

/* IEEE 802.1Q / 802.1ad: the header's length (14, 18, 22; 0 when a tag
 * is cut short), the EtherType after the tags, the VLAN ids: the inner
 * (or only) C-tag's and the outer S-tag's (0x88a8, or 0x8100 followed by
 * another 0x8100) */
static size_t
ref_l2(const uint8_t *p, size_t n, unsigned *type, unsigned *inner, unsigned *outer)
{
	*inner = *outer = 0;
	*type = (unsigned)be(p + 12, 2);
	if (*type != 0x8100 && *type != 0x88a8)
		return 14;
	if (n < 18)
		return 0;
	int stag = *type == 0x88a8 || be(p + 16, 2) == 0x8100;

	if (!stag) {
		*inner = (unsigned)be(p + 14, 2) % 4096;
		*type = (unsigned)be(p + 16, 2);
		return 18;
	}
	*outer = (unsigned)be(p + 14, 2) % 4096;
	*type = (unsigned)be(p + 16, 2);
	if (*type != 0x8100)
		return 18;
	if (n < 22)
		return 0;
	*inner = (unsigned)be(p + 18, 2) % 4096;
	*type = (unsigned)be(p + 20, 2);
	return 22;
}

static int
inside(const uint8_t *q, size_t len, const uint8_t *p, size_t n)
{
	return q >= p && q + len <= p + n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hframe f;
	enum hframe_kind k = hframe_read(data, size, &f);

	if (k != f.kind)
		fail_on("the kind returned and the one stored", k, f.kind, data, size);
	if (size >= 14 && !inside(f.src_mac, 6, data, size))
		fail_on("src_mac outside the input", 0, 1, data, size);
	if (k == HF_ARP && !inside(f.sha, 6, data, size))
		fail_on("ARP sha outside the input", 0, 1, data, size);
	if ((k == HF_DHCP || k == HF_DHCP_REQ) && !inside(f.chaddr, 6, data, size))
		fail_on("chaddr outside the input", 0, 1, data, size);
	unsigned type = 0, inner = 0, outer = 0;
	size_t l2 = size >= 14 ? ref_l2(data, size, &type, &inner, &outer) : 0;

	if (l2 != 0 && (f.l2 != l2 || f.vlan != inner || f.outer != outer))
		fail_on("the tags: header length, inner and outer VLAN", (long)f.l2 << 24 | (long)f.outer << 12 | f.vlan,
			(long)l2 << 24 | (long)outer << 12 | inner, data, size);
	if (l2 == 0 && k != HF_OTHER)
		fail_on("a frame whose tag is cut short", k, HF_OTHER, data, size);
	if (k == HF_ECHO || k == HF_ECHO_REPLY || k == HF_DHCP || k == HF_DHCP_REQ) {
		if ((size_t)f.l2 + f.ip_len > size || f.ihl < 20 || f.ihl > f.ip_len)
			fail_on("the IPv4 lengths past the input", (long)f.l2 + f.ip_len, (long)size, data, size);
	}
	if (k == HF_ECHO_REPLY && (l2 == 0 || type != 0x0800 || data[l2 + 9] != 1 ||
				   data[l2 + (data[l2] & 15) * 4] != 0 || data[l2 + (data[l2] & 15) * 4 + 1] != 0))
		fail_on("an ICMP echo reply: type 0, code 0 over IPv4", k, HF_OTHER, data, size);
	if (l2 != 0 && type == 0x86dd) {
		const uint8_t *ip = data + l2, *m = ip + 40;
		struct ref6 r;

		ref_ip6(ip, size - l2, &r);
		if ((int)k != r.kind)
			fail_on("the IPv6 message's kind", k, r.kind, data, size);
		if (k == HF_RA && (f.prefix != (r.prefix_at < 0 ? NULL : m + r.prefix_at) ||
				   (r.prefix_at >= 0 && f.valid_s != r.valid)))
			fail_on("the RA's prefix", f.prefix == NULL ? -1 : f.prefix - m, r.prefix_at, data, size);
		if ((k == HF_NS || k == HF_NA) && !inside(f.target, 16, data, size))
			fail_on("the ND target outside the input", 0, 1, data, size);
		if ((k == HF_NS || k == HF_NA) && f.lladdr != NULL && !inside(f.lladdr, 6, data, size))
			fail_on("the link-layer address outside the input", 0, 1, data, size);
		if (k == HF_DHCP6) {
			const uint8_t *b = m + 8;

			if (f.d6_msg != r.msg || f.d6_xid != r.xid || f.d6_mac != b + r.mac_at || f.d6_sid_len != r.sid_len ||
			    f.d6_status != r.status || f.d6_rapid != r.rapid)
				fail_on("the DHCPv6 message's type, xid, client MAC, server id, status or rapid commit",
					(long)f.d6_msg << 8 | f.d6_rapid, (long)r.msg << 8 | r.rapid, data, size);
			if (f.na.addr != (r.na_at < 0 ? NULL : b + r.na_at) || (r.na_at >= 0 && f.na.valid != r.na_valid))
				fail_on("the IA_NA's address", f.na.addr == NULL ? -1 : f.na.addr - b, r.na_at, data, size);
			if (f.pd.addr != (r.pd_at < 0 ? NULL : b + r.pd_at) || (r.pd_at >= 0 && f.pd.plen != r.pd_plen))
				fail_on("the IA_PD's prefix", f.pd.addr == NULL ? -1 : f.pd.addr - b, r.pd_at, data, size);
			if (!inside(f.d6_mac, 6, data, size) || (f.d6_sid && !inside(f.d6_sid, f.d6_sid_len, data, size)))
				fail_on("a DHCPv6 pointer outside the input", 0, 1, data, size);
		}
	}
	if (k == HF_DHCP || k == HF_DHCP_BAD || k == HF_DHCP_REQ || k == HF_DHCP_REQ_BAD) {
		/* a reply (port 68, or relayed: 67 to 67) or a request (port 67): op 2 or 1 */
		int req = k == HF_DHCP_REQ || k == HF_DHCP_REQ_BAD;
		enum hframe_kind good = req ? HF_DHCP_REQ : HF_DHCP;
		/* the UDP payload, as the reference finds it */
		const uint8_t *ip = data + f.l2;
		size_t ihl = (size_t)(ip[0] & 15) * 4, ulen = be(ip + ihl + 4, 2);
		struct ref r;

		if (ulen >= 8 && ihl + ulen <= be(ip + 2, 2))
			ref_dhcp(ip + ihl + 8, ulen - 8, &r, req ? 1 : 2);
		else
			memset(&r, 0, sizeof(r));
		if ((k == good) != r.whole)
			fail_on("a usable DHCP reply or request", k == good, r.whole, data, size);
		if (k == good && (f.msg != r.msg || f.lease_s != r.lease || f.server_id != r.server))
			fail_on("message type, lease or server", (long)f.msg * 1000 + (f.lease_s != r.lease) * 10 +
				(f.server_id != r.server), (long)r.msg * 1000, data, size);
		if (k == good && (f.dns[0] != r.dns || f.overload != r.overload))
			fail_on("the first DNS server, the overload", (long)f.overload * 10 + (f.dns[0] != r.dns),
				(long)r.overload * 10, data, size);
		/* RFC 2131 4.1: a reply to a relay agent goes from port 67 to 67 */
		int relayed = be(ip + ihl, 2) == 67 && be(ip + ihl + 2, 2) == 67;

		if (f.relayed != relayed || (relayed && req))
			fail_on("relayed (UDP 67 to 67, a reply)", f.relayed, relayed, data, size);
		if (k == good && !req) {
			const uint8_t *b = ip + ihl + 8;

			if (f.opt82 != (r.a82 < 0 ? NULL : b + r.a82) || (r.a82 >= 0 && f.opt82_len != r.l82))
				fail_on("option 82", f.opt82 == NULL ? -1 : f.opt82 - b, r.a82, data, size);
			if (f.opt82 != NULL && !inside(f.opt82, f.opt82_len, data, size))
				fail_on("option 82 outside the input", 0, 1, data, size);
			if (f.giaddr != be(b + 24, 4))
				fail_on("giaddr", f.giaddr, (long)be(b + 24, 4), data, size);
		}
	}
	/* a BOOTREPLY from 67 to 67 over IPv4 (unfragmented) is the hosts': a
	 * relayed reply, usable or not */
	if (l2 != 0 && type == 0x0800 && size >= l2 + 29) {
		const uint8_t *ip = data + l2;
		size_t ihl = (size_t)(ip[0] & 15) * 4, tot = be(ip + 2, 2);

		if ((ip[0] >> 4) == 4 && ihl >= 20 && tot >= ihl + 9 && tot <= size - l2 && ip[9] == 17 &&
		    (be(ip + 6, 2) & 0x3fff) == 0 && be(ip + ihl, 2) == 67 && be(ip + ihl + 2, 2) == 67 &&
		    ip[ihl + 8] == 2 && k != HF_DHCP && k != HF_DHCP_BAD)
			fail_on("a relayed BOOTREPLY not taken", k, HF_DHCP, data, size);
	}
	return 0;
}

#ifndef SURGE_LIBFUZZER
/* --- the bounded fuzzer ctest runs (fuzz_driver.h) ---------------------- */

#include "fuzz_driver.h"

/* pieces of the grammar: option heads, lengths that run over, the end,
 * a VLAN tag, the ARP and IPv4 types, the DHCP ports */
static const struct fuzz_token tokens[] = {
	FUZZ_TOKEN("\xff"), FUZZ_TOKEN("\0"), FUZZ_TOKEN("\x35\x01\x05"), FUZZ_TOKEN("\x35\x01\x09"),
	FUZZ_TOKEN("\x35\x02\x05"), FUZZ_TOKEN("\x33\x04\0\0"), FUZZ_TOKEN("\x36\x04\x0a\x01"),
	FUZZ_TOKEN("\x33\xff"), FUZZ_TOKEN("\x01\x03\xff"), FUZZ_TOKEN("\x03\0"),
	FUZZ_TOKEN("\x81\0\0\x07"), FUZZ_TOKEN("\x08\x06"), FUZZ_TOKEN("\x45"), FUZZ_TOKEN("\0\x44"),
	FUZZ_TOKEN("\0\x43"), FUZZ_TOKEN("\x32\x04\x0a\x01"), FUZZ_TOKEN("\x01\x01\x06\0"),
	/* option overload (52: file, sname, both) and DNS servers (6) */
	FUZZ_TOKEN("\x34\x01\x01"), FUZZ_TOKEN("\x34\x01\x03"), FUZZ_TOKEN("\x34\x01\x02"),
	FUZZ_TOKEN("\x06\x04\x0a\x01"), FUZZ_TOKEN("\x06\x08"), FUZZ_TOKEN("\x06\x03"),
	/* IPv6: the type, ND and echo types, hop limit 255, the DHCPv6 ports,
	 * options of RFC 8415 (client id DUID-LL, IA_NA, IA_PD, status, rapid
	 * commit) and of RFC 4861 (a link-layer address, a prefix) */
	FUZZ_TOKEN("\x86\xdd"), FUZZ_TOKEN("\x60\0\0\0"), FUZZ_TOKEN("\x87\0"), FUZZ_TOKEN("\x88\0"),
	FUZZ_TOKEN("\x86\0"), FUZZ_TOKEN("\x80\0"), FUZZ_TOKEN("\x3a\xff"), FUZZ_TOKEN("\x02\x23\x02\x22"),
	FUZZ_TOKEN("\0\x01\0\x0a\0\x03\0\x01"), FUZZ_TOKEN("\0\x03\0\x28"), FUZZ_TOKEN("\0\x19\0\x29"),
	FUZZ_TOKEN("\0\x05\0\x18"), FUZZ_TOKEN("\0\x1a\0\x19"), FUZZ_TOKEN("\0\x0d\0\x02\0\x02"),
	FUZZ_TOKEN("\0\x1a\0\x18"), FUZZ_TOKEN("\0\x05\0\x17"),
	FUZZ_TOKEN("\0\x0e\0\0"), FUZZ_TOKEN("\x01\x01"), FUZZ_TOKEN("\x03\x04\x40\xc0"), FUZZ_TOKEN("\x01\0"),
	/* QinQ: an S-tag, two 0x8100 tags; echo replies (ICMP 0, ICMPv6 129) */
	FUZZ_TOKEN("\x88\xa8\0\x64\x81\0\0\xc8"), FUZZ_TOKEN("\x81\0\0\x64\x81\0"), FUZZ_TOKEN("\x88\xa8"),
	FUZZ_TOKEN("\x81\0"),
	/* relay agent information (82: circuit-id, remote-id), a relayed reply's ports */
	FUZZ_TOKEN("\x52\x05\x01\x03"), FUZZ_TOKEN("\0\x43\0\x43"),
};

/* An IPv6 input's ICMPv6 or UDP checksum made right again after a
 * mutation (three inputs in four), so that the fuzzer reaches ND's and
 * DHCPv6's grammar past the checksum; the fourth keeps what the mutation
 * left. */
static void
fix_sum6(uint8_t *p, size_t n, uint64_t r)
{
	unsigned type, inner, outer;
	size_t l2 = n >= 14 ? ref_l2(p, n, &type, &inner, &outer) : 0;

	if ((r & 3) == 0 || l2 == 0 || n < l2 + 40 || type != 0x86dd)
		return;
	uint8_t *ip = p + l2, *m = ip + 40;
	size_t plen = be(ip + 4, 2), at = ip[6] == 58 ? 2 : ip[6] == 17 ? 6 : 0;
	unsigned long sum = 0;

	if (at == 0 || plen > n - l2 - 40 || plen < at + 2)
		return;
	m[at] = m[at + 1] = 0;
	for (int k = 8; k < 40; k += 2)
		sum += be(ip + k, 2);
	sum += plen + ip[6];
	for (size_t k = 0; k < plen; k += 2)
		sum += k + 1 < plen ? be(m + k, 2) : (unsigned long)m[k] << 8;
	while (sum > 0xffff)
		sum = (sum >> 16) + (sum & 0xffff);
	sum = ~sum & 0xffff;
	if (sum == 0 && at == 6)
		sum = 0xffff;
	m[at] = (uint8_t)(sum >> 8);
	m[at + 1] = (uint8_t)sum;
}

int
main(void)
{
	static struct fuzz z;
	uint64_t by_kind[HF_KINDS] = { 0 }, qinq = 0;
	uint8_t *p;
	size_t n;

	if (fuzz_start(&z, "test_hosts_fuzz", "hosts", 0x5eed2026d4c9ULL) != 0)
		return 1;
	while ((p = fuzz_next(&z, tokens, sizeof(tokens) / sizeof(tokens[0]), &n)) != NULL) {
		struct hframe f;

		fix_sum6(p, n, z.rounds * 0x9e3779b97f4a7c15ULL >> 61);
		LLVMFuzzerTestOneInput(p, n);
		by_kind[hframe_read(p, n, &f)]++;
		qinq += f.outer != 0 && f.kind != HF_OTHER && f.kind != HF_BAD;
		free(p);
	}
	fprintf(stderr, "test_hosts_fuzz: %d seeds, %llu inputs: %llu ARP, %llu echo, %llu DHCP, %llu bad DHCP, "
		"%llu DHCP requests, %llu bad requests, %llu NS, %llu NA, %llu RA, %llu echo6, %llu DHCPv6, "
		"%llu bad DHCPv6, %llu echo replies, %llu QinQ usable, %llu bad, %llu other, %.0f s\n", z.nseeds,
		(unsigned long long)z.rounds,
		(unsigned long long)by_kind[HF_ARP], (unsigned long long)by_kind[HF_ECHO],
		(unsigned long long)by_kind[HF_DHCP], (unsigned long long)by_kind[HF_DHCP_BAD],
		(unsigned long long)by_kind[HF_DHCP_REQ], (unsigned long long)by_kind[HF_DHCP_REQ_BAD],
		(unsigned long long)by_kind[HF_NS], (unsigned long long)by_kind[HF_NA],
		(unsigned long long)by_kind[HF_RA], (unsigned long long)by_kind[HF_ECHO6],
		(unsigned long long)by_kind[HF_DHCP6], (unsigned long long)by_kind[HF_DHCP6_BAD],
		(unsigned long long)(by_kind[HF_ECHO_REPLY] + by_kind[HF_ECHO6_REPLY]), (unsigned long long)qinq,
		(unsigned long long)by_kind[HF_BAD], (unsigned long long)by_kind[HF_OTHER], difftime(time(NULL), z.t0));
	/* the campaign reached the grammar: not only refusals */
	if (z.rounds < 1000 || by_kind[HF_DHCP] < z.rounds / 100 || by_kind[HF_DHCP_BAD] < z.rounds / 100 ||
	    by_kind[HF_ARP] < z.rounds / 100 || by_kind[HF_DHCP_REQ] < z.rounds / 100 ||
	    by_kind[HF_DHCP_REQ_BAD] < z.rounds / 100 || by_kind[HF_DHCP6] < z.rounds / 100 ||
	    by_kind[HF_DHCP6_BAD] < z.rounds / 1000 || by_kind[HF_NS] < z.rounds / 1000 || by_kind[HF_RA] < z.rounds / 1000 ||
	    qinq < z.rounds / 1000 || by_kind[HF_ECHO_REPLY] < z.rounds / 1000 || by_kind[HF_ECHO6_REPLY] < z.rounds / 1000) {
		fprintf(stderr, "test_hosts_fuzz: too few inputs of each kind: the mutations miss the grammar\n");
		return 1;
	}
	printf("1 passed, 0 failed\n");
	return 0;
}
#endif
