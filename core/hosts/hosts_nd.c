/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_nd.c - the emulated hosts' IPv6 (docs/hosts.md, "IPv6"): each
 * host's link-local address fe80::EUI-64(MAC) (RFC 4291 2.5.1, appendix
 * A), an optional static one, and the SLAAC one a router's prefix gives
 * (RFC 4862 5.5.3: the /64 with the A flag, plus the same interface ID);
 * duplicate address detection for each (RFC 4862 5.4: NSs from :: to the
 * solicited-node group, DupAddrDetectTransmits of them, RetransTimer
 * apart; an NA for the address, or another station's DAD NS, is a
 * conflict); NAs answering NSs for assigned addresses (RFC 4861 7.2.4:
 * solicited and override set, the target's link-layer address); DAD NSs
 * for an assigned address defended with an NA to all-nodes (RFC 4862
 * 5.4.3); router solicitations until an RA comes (RFC 4861 6.3.7); ICMPv6
 * echo replies (RFC 4443 4.2).
 *
 * A host's addresses are derived from its MAC, the table's static base
 * and the table's prefix: nothing but two bytes of flags and a timer per
 * host (struct host6), and an address is found by reversing EUI-64.
 */
#include <string.h>

#include <rte_ip.h>

#include "hosts.h"

#define RS_INTERVAL_MS 4000      /* RFC 4861 10: RTR_SOLICITATION_INTERVAL */
#define ND_FRAME_NS 86           /* Ethernet 14 + IPv6 40 + NS 24 + a link-layer option 8 */

static const uint8_t any6[16];


/* the interface ID of host i: its link-local address's (hosts_table.c) */
static void
eui64(const struct hosts_table *t, uint32_t i, uint8_t *out)
{
	uint8_t a[16];

	ht_link_local(t, i, a);
	memcpy(out, a + 8, 8);
}

/* host i's address of one kind (H6_*) into out: 0, or -1 when it has none */
int
nd_addr(const struct hosts_table *t, uint32_t i, int kind, uint8_t *out)
{
	if (kind == H6_LL) {
		memset(out, 0, 8);
		out[0] = 0xfe;
		out[1] = 0x80;
	} else if (kind == H6_SLAAC) {
		if (!t->v6.has_prefix)
			return -1;
		memcpy(out, t->v6.prefix, 8);
	} else {
		if (memcmp(t->v6.static6, any6, 16) == 0)
			return -1;
		const uint8_t *b = t->v6.static6;
		uint32_t low = get32(b + 12) + i;

		memcpy(out, b, 12);
		put32(out + 12, low);
		return 0;
	}
	eui64(t, i, out + 8);
	return 0;
}

/* the prefix's valid lifetime not over */
static int
prefix_valid(const struct hosts_table *t)
{
	return t->v6.has_prefix && (t->v6.valid_s == UINT32_MAX ||
				   (uint64_t)(t->now - t->v6.ra_ms) < (uint64_t)t->v6.valid_s * 1000);
}

/* The host whose address a is, and its kind; HOST_NIL when none: a static
 * address by its offset from the base, the others by the MAC in their
 * interface ID */
static uint32_t
lookup(const struct hosts_table *t, const uint8_t *a, int *kind)
{
	static const uint8_t ll[8] = { 0xfe, 0x80 };
	const uint8_t *b = t->v6.static6;

	if (b[0] != 0 && memcmp(a, b, 12) == 0) {
		uint32_t d = get32(a + 12) - get32(b + 12);

		if (d < t->conf.count) {
			*kind = H6_STATIC;
			return d;
		}
	}
	if (memcmp(a, ll, 8) == 0)
		*kind = H6_LL;
	else if (prefix_valid(t) && memcmp(a, t->v6.prefix, 8) == 0)
		*kind = H6_SLAAC;
	else
		return HOST_NIL;
	if (a[11] != 0xff || a[12] != 0xfe)
		return HOST_NIL;
	uint8_t m[6] = { a[8] ^ 2, a[9], a[10], a[13], a[14], a[15] };

	return ht_by_mac(t, m);
}

/* An IPv6 frame of plen payload bytes of protocol proto from host i: its
 * payload's start, the checksum filled by nd_sum6() */
uint8_t *
nd_frame6(struct hosts_table *t, uint32_t i, const uint8_t *dmac, const uint8_t *src, const uint8_t *dst,
	  uint32_t plen, uint8_t hlim, uint8_t proto)
{
	uint32_t len = 14 + ht_tags_len(t) + 40 + plen;
	uint8_t *p = proto_tx(t, len < 60 ? 60 : len);

	if (p == NULL)
		return NULL;
	uint8_t *ip = proto_tx_eth(t, p, dmac, i, 0x86dd);

	ip[0] = 0x60;
	put16(ip + 4, (uint16_t)plen);
	ip[6] = proto;
	ip[7] = hlim;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	return ip + 40;
}

/* the checksum of the ICMPv6 (at 2) or UDP (at 6) message at l4 */
void
nd_sum6(uint8_t *l4, uint32_t at)
{
	const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)(l4 - 40);
	uint16_t s = rte_ipv6_udptcp_cksum(ip, l4);

	memcpy(l4 + at, &s, 2);   /* DPDK's sum is of native words: stored as it is, it reads big-endian */
}

static uint8_t *
ip6_frame(struct hosts_table *t, uint32_t i, const uint8_t *dmac, const uint8_t *src, const uint8_t *dst,
	  uint32_t plen, uint8_t hlim)
{
	return nd_frame6(t, i, dmac, src, dst, plen, hlim, 58);
}

static void
done6(uint8_t *m)
{
	nd_sum6(m, 2);
}

/* the solicited-node group of a (RFC 4291 2.7.1) and its MAC (RFC 2464 7) */
static void
solicited(const uint8_t *a, uint8_t *group, uint8_t *mac)
{
	static const uint8_t g[13] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff };

	memcpy(group, g, 13);
	memcpy(group + 13, a + 13, 3);
	mac[0] = 0x33;
	mac[1] = 0x33;
	memcpy(mac + 2, group + 12, 4);
}

/* DAD's probe for host i's address of kind k: from ::, no source
 * link-layer option (RFC 4862 5.4.2) */
static int
dad_send(struct hosts_table *t, uint32_t i, int k)
{
	uint8_t a[16], g[16], mac[6];

	nd_addr(t, i, k, a);
	solicited(a, g, mac);
	uint8_t *m = ip6_frame(t, i, mac, any6, g, 24, 255);

	if (m == NULL)
		return -1;
	m[0] = 135;
	memcpy(m + 8, a, 16);
	done6(m);
	t->st.nd_dad_tx++;
	return 0;
}

/* An NA from host i for its address a (kind k) to dst (MAC dmac), flags
 * (S 0x40, O 0x20), with the target link-layer address option */
static void
na_send(struct hosts_table *t, uint32_t i, const uint8_t *a, const uint8_t *dst, const uint8_t *dmac, uint8_t flags)
{
	uint8_t *m = ip6_frame(t, i, dmac, a, dst, 32, 255);

	if (m == NULL)
		return;
	m[0] = 136;
	m[4] = flags;
	memcpy(m + 8, a, 16);
	m[24] = 2;
	m[25] = 1;
	ht_mac(t, i, m + 26);
	done6(m);
	t->st.nd_na_tx++;
}

static int
rs_send(struct hosts_table *t, uint32_t i)
{
	static const uint8_t routers[16] = { 0xff, 0x02, [15] = 2 };
	static const uint8_t rmac[6] = { 0x33, 0x33, 0, 0, 0, 2 };
	uint8_t a[16];

	nd_addr(t, i, H6_LL, a);
	uint8_t *m = ip6_frame(t, i, rmac, a, routers, 16, 255);

	if (m == NULL)
		return -1;
	m[0] = 133;
	m[8] = 1;                 /* source link-layer address */
	m[9] = 1;
	ht_mac(t, i, m + 10);
	done6(m);
	t->st.nd_rs_tx++;
	return 0;
}

static uint64_t *
gauge(struct hosts_table *t, int k)
{
	return k == H6_LL ? &t->st.hosts6_ll : k == H6_STATIC ? &t->st.hosts6_static : &t->st.hosts6_slaac;
}

/* an event about host i's address of kind k (its kind in the ip4 field) */
static void
event6(struct hosts_table *t, uint32_t i, uint8_t kind, int k)
{
	uint32_t tail = t->ev_tail;

	ht_event(t, i, kind);
	if (t->ev_tail != tail)
		t->ev[tail & (t->ev_cap - 1)].ip4 = (uint32_t)k;
}

/* host i's tentative addresses in `bits` leave DAD (the last: busy--) */
static void
untent(struct hosts_table *t, uint32_t i, uint8_t bits)
{
	struct host6 *h = &t->h6[i];

	if (h->tent == 0 || (h->tent & bits) == 0)
		return;
	h->tent &= (uint8_t)~bits;
	if (h->tent == 0)
		t->v6.busy--;
}

/* addresses of kinds `bits` into DAD (or assigned at once without DAD) */
static void
tentative(struct hosts_table *t, uint32_t i, uint8_t bits)
{
	struct host6 *h = &t->h6[i];

	if (h->tent == 0)
		t->v6.busy++;
	h->tent |= bits;
	h->tries = 0;
}

static void
assign(struct hosts_table *t, uint32_t i)
{
	struct host6 *h = &t->h6[i];
	uint8_t bits = h->tent;

	untent(t, i, bits);
	for (int k = H6_LL; k <= H6_SLAAC; k <<= 1) {
		if (!(bits & k))
			continue;
		if (!(h->ok & k))
			(*gauge(t, k))++;
		h->ok |= (uint8_t)k;
		event6(t, i, SURGE_HOSTS_EV_ADDR6, k);
	}
	h->tries = 0;
}

void
nd_start(struct hosts_table *t, uint32_t i)
{
	uint8_t bits = H6_LL | (t->v6.static6[0] != 0 ? H6_STATIC : 0);

	tentative(t, i, bits);
	/* RFC 4862 5.4.2: the first probe after a random delay (here 0..probe_ms) */
	ht6_timer_set(t, i, t->now + (t->conf.dad6 > 0 ? ht_rand(t) % (t->conf.probe_ms + 1) : 0));
}

void
nd_timer(struct hosts_table *t, uint32_t i)
{
	struct host6 *h = &t->h6[i];

	if (h->tent != 0) {
		if (h->tries < t->conf.dad6) {
			for (int k = H6_LL; k <= H6_SLAAC; k <<= 1) {
				if ((h->tent & k) && dad_send(t, i, k) != 0) {
					ht6_timer_set(t, i, t->now + 10);   /* the pool was empty: again soon */
					return;
				}
			}
			h->tries++;
			ht6_timer_set(t, i, t->now + t->conf.probe_ms);   /* RetransTimer */
			return;
		}
		assign(t, i);
	}
	if (!(h->ok & H6_LL))
		return;                 /* its link-local address is another's: IPv6 stays off (RFC 4862 5.4.5) */
	if (t->v6.has_prefix && !((h->ok | h->tent) & H6_SLAAC)) {
		tentative(t, i, H6_SLAAC);
		ht6_timer_set(t, i, t->now);
		return;
	}
	if (!t->v6.ra_seen && h->tries < t->conf.rs) {
		if (rs_send(t, i) == 0)
			h->tries++;
		ht6_timer_set(t, i, t->now + RS_INTERVAL_MS);
	}
}

/* DAD found host i's address of kind k taken (RFC 4862 5.4.5) */
static void
conflict(struct hosts_table *t, uint32_t i, int k)
{
	struct host6 *h = &t->h6[i];

	t->st.nd_conflict++;
	event6(t, i, SURGE_HOSTS_EV_CONFLICT6, k);
	if (!(h->tent & k))
		return;                 /* an assigned address: counted, kept (the other station is told by our NAs) */
	untent(t, i, (uint8_t)k);
	if (k == H6_LL) {
		untent(t, i, h->tent);
		ht6_timer_stop(t, i);
	}
}

/* An RA's prefix (RFC 4862 5.5.3): a /64 with the A flag, preferred <=
 * valid, valid > 0. A new one replaces the last: every started host's
 * SLAAC address goes through DAD again; the same one refreshes the
 * lifetimes (the two-hour rule of 5.5.3 e). */
static void
ra_in(struct hosts_table *t, const struct hframe *f)
{
	struct hosts6 *v = &t->v6;

	t->st.nd_ra_rx++;
	v->ra_seen = 1;
	if (f->prefix == NULL || f->prefix_len != 64 || f->pref_s > f->valid_s || f->valid_s == 0 ||
	    f->prefix[0] == 0xff || (f->prefix[0] == 0xfe && (f->prefix[1] & 0xc0) == 0x80))
		return;
	if (v->has_prefix && memcmp(v->prefix, f->prefix, 8) == 0) {
		uint64_t left = v->valid_s == UINT32_MAX ? UINT64_MAX :
			(uint64_t)v->valid_s * 1000 - (uint32_t)(t->now - v->ra_ms);
		uint32_t valid = f->valid_s;

		if (valid != UINT32_MAX && (uint64_t)valid * 1000 <= left && valid <= 7200)
			valid = left <= 7200000 ? (uint32_t)(left / 1000) : 7200;
		v->valid_s = valid;
		v->pref_s = f->pref_s;
		v->ra_ms = t->now;
		t->st.nd_prefix++;
		return;
	}
	memcpy(v->prefix, f->prefix, 8);
	v->has_prefix = 1;
	v->valid_s = f->valid_s;
	v->pref_s = f->pref_s;
	v->ra_ms = t->now;
	t->st.nd_prefix++;
	for (uint32_t i = 0; i < t->started; i++) {
		struct host6 *h = &t->h6[i];

		if (h->ok & H6_SLAAC) {
			h->ok &= (uint8_t)~H6_SLAAC;
			t->st.hosts6_slaac--;
		}
		if ((h->ok & H6_LL) && h->tent == 0) {
			tentative(t, i, H6_SLAAC);
			ht6_timer_set(t, i, t->now);
		}
	}
}

static int
ns_in(struct hosts_table *t, const struct hframe *f, uint32_t j, int k)
{
	struct host6 *h = &t->h6[j];

	if (memcmp(f->ip6_src, any6, 16) == 0) {
		/* another station's DAD: a duplicate while ours is tentative, defended when assigned */
		if (h->tent & k) {
			conflict(t, j, k);
		} else if (h->ok & k) {
			static const uint8_t all[16] = { 0xff, 0x02, [15] = 1 };
			static const uint8_t allmac[6] = { 0x33, 0x33, 0, 0, 0, 1 };

			na_send(t, j, f->target, all, allmac, 0x20);
		}
		return 1;
	}
	if (!((h->ok | h->tent) & k))
		return 0;
	t->st.nd_ns_rx++;
	if (h->ok & k)
		na_send(t, j, f->target, f->ip6_src, f->lladdr != NULL ? f->lladdr : f->src_mac, 0x60);
	return 1;
}

static int
na_in(struct hosts_table *t, uint32_t j, int k)
{
	if ((t->h6[j].tent | t->h6[j].ok) & k)
		conflict(t, j, k);
	return 1;
}

static int
echo6_in(struct hosts_table *t, const struct hframe *f, uint32_t j, int k)
{
	t->st.icmp6_echo_rx++;
	if (!(t->h6[j].ok & k))
		return 1;
	uint8_t *m = ip6_frame(t, j, f->src_mac, f->ip6_dst, f->ip6_src, f->l4len6, 64);

	if (m == NULL)
		return 1;
	memcpy(m, f->ip6_dst + 16 /* the ICMPv6 message follows the IPv6 header */, f->l4len6);
	m[0] = 129;
	m[2] = m[3] = 0;
	done6(m);
	t->st.icmp6_reply_tx++;
	return 1;
}

/* 1 when the frame was the hosts' (the caller frees it), 0 to leave it */
int
nd_frame(struct hosts_table *t, const struct hframe *f, const uint8_t *in)
{
	uint32_t j;
	int k;

	(void)in;
	if (t->h6 == NULL)
		return 0;
	if (f->kind == HF_RA) {
		ra_in(t, f);
		return 1;
	}
	if (f->kind != HF_NS && f->kind != HF_NA && f->kind != HF_ECHO6)
		return 0;
	/* the host it is for: NS and NA name it as their target, an echo
	 * request as its destination */
	j = lookup(t, f->kind == HF_ECHO6 ? f->ip6_dst : f->target, &k);
	if (j == HOST_NIL)
		return 0;
	if (f->kind == HF_ECHO6)
		return echo6_in(t, f, j, k);
	if (ht_by_mac(t, f->src_mac) == j)
		return 0;               /* our own NS or NA, looped back: not for the hosts */
	return f->kind == HF_NS ? ns_in(t, f, j, k) : na_in(t, j, k);
}

/* lookup() and solicited() for hosts_ping.c (a host's address; the next
 * hop's solicited-node group) */
uint32_t
nd_host(const struct hosts_table *t, const uint8_t *a, int *kind)
{
	return t->h6 != NULL ? lookup(t, a, kind) : HOST_NIL;
}

void
nd_solicited(const uint8_t *a, uint8_t *group, uint8_t *mac)
{
	solicited(a, group, mac);
}
