/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_ping.c - echo requests the emulated hosts originate (ICMP, RFC
 * 792; ICMPv6, RFC 4443 4.1), docs/hosts.md "Ping". A range of hosts
 * sends `count` rounds to one target from their own addresses; the next
 * hop's MAC comes from one ARP request or NS (RFC 4861 7.2.2) by the
 * first host that has an address, for the target (on-link) or a gateway
 * (`via`; for a DHCPv4 host and a target off its subnet, the router its
 * ACK named, option 3), or is given. Requests go out in rounds `interval_ms` apart, the
 * hosts of a round paced by the table's rate; each request ends once, in
 * a reply (matched by the host its address names, the identifier, the
 * sequence number: the round) or a timeout.
 *
 * No timer per request: requests are sent in a fixed order (position
 * round x hosts + host), so they time out in that order too. A ring of
 * batches says up to which position each millisecond sent; a sweep times
 * out the positions of the batches older than the timeout whose bit is
 * still set. A host's bits are its last 64 rounds: its round r + 64 waits
 * until round r was swept, so a bit is never reused before its request ended.
 * The first 8 bytes of the echo data carry the TSC at sending: the reply
 * brings it back, the round trip is measured without a table of times.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ip.h>

#include "hosts.h"

#define RESOLVE_TRIES 3          /* ARP requests or NSs for the next hop */
#define RESOLVE_MS 1000          /* apart (RFC 4861 RETRANS_TIMER) */
#define SENDS_PER_POLL 1024      /* most requests one poll writes: the rest at the next */
#define ROUNDS_OPEN 64           /* a host's requests waiting at once (its bits) */

struct pbatch {
	uint64_t end;            /* the positions sent up to this one ... */
	uint32_t ms;             /* ... by this time */
};

struct ping {
	struct surge_hosts_ping p;
	uint64_t *pend;          /* host first + k: bit r % 64 while round r's request waits */
	uint64_t total;          /* positions: count x nhosts */
	uint64_t sent;           /* positions done (sent or skipped), in order */
	uint64_t swept;          /* positions whose timeout was looked at */
	uint64_t wait;           /* requests sent, not answered, not timed out */
	uint64_t batched;        /* the last batch's end */
	struct pbatch *b;
	uint32_t bmask, bhead, btail;
	uint32_t start_ms, resolve_due;
	uint8_t nh[16];          /* the next hop's address */
	uint8_t nh_mac[6];
	uint8_t resolved, tries, active;
	uint8_t via;             /* the next hop was given (via), not chosen at resolving */
	uint16_t ident0;         /* host first + k's identifier: ident0 + k */
	double us_per_cyc;
	uint64_t rtts;           /* round trips measured, this ping and the table's earlier ones */
	uint32_t nw;             /* requests in the tx burst, not flushed yet: */
	uint64_t wrote[SENDS_PER_POLL];   /* their positions, in order */
};

static const uint8_t zero16[16];

/* an address no station answers echo from: unspecified, multicast, broadcast */
static const char *
bad_addr(uint8_t af, const uint8_t *a)
{
	if (af == 4)
		return ht_not_station4(get32(a));
	return memcmp(a, zero16, 16) == 0 ? ":: is no station's address" : a[0] == 0xff ? "a multicast address" : NULL;
}

void
ping_free(struct hosts_table *t)
{
	if (t == NULL || t->ping == NULL)
		return;
	free(t->ping->pend);
	free(t->ping->b);
	free(t->ping);
	t->ping = NULL;
}

int
ping_busy(const struct hosts_table *t)
{
	return t->ping != NULL && t->ping->active;
}

int
ping_start(struct hosts_table *t, const struct surge_hosts_ping *p)
{
	const char *why;
	uint32_t room;

	if (p == NULL)
		return rt_error(-EINVAL, "surge_hosts_ping: no ping");
	room = p->af == 6 ? 1452 : 1472;
	if (ping_busy(t))
		return rt_error(-EBUSY, "surge_hosts_ping: the table's hosts are pinging already");
	if (p->af != 4 && p->af != 6)
		return rt_error(-EINVAL, "surge_hosts_ping: af %u: 4 (ICMP) or 6 (ICMPv6)", p->af);
	if (t->conf.server || (p->af == 4 && !t->conf.dhcp && t->conf.ip4 == 0) || (p->af == 6 && t->h6 == NULL))
		return rt_error(-EINVAL, "surge_hosts_ping: the table's hosts have no IPv%u side", p->af);
	if ((why = bad_addr(p->af, p->target)) != NULL)
		return rt_error(-EINVAL, "surge_hosts_ping: target: %s", why);
	if (memcmp(p->via, zero16, 16) != 0 && (why = bad_addr(p->af, p->via)) != NULL)
		return rt_error(-EINVAL, "surge_hosts_ping: via: %s", why);
	if (p->nhosts == 0 || p->first >= t->conf.count || p->nhosts > t->conf.count - p->first)
		return rt_error(-EINVAL, "surge_hosts_ping: hosts %u (+%u) of a table of %u", p->first, p->nhosts,
				t->conf.count);
	if (p->count == 0 || p->count > 65535 || p->interval_ms == 0 || p->interval_ms > 3600000 ||
	    p->timeout_ms == 0 || p->timeout_ms > 60000 || p->size < 8 || p->size > room)
		return rt_error(-EINVAL, "surge_hosts_ping: count %u (1..65535), interval_ms %u (1..3600000), "
				"timeout_ms %u (1..60000), size %u (8..%u)", p->count, p->interval_ms, p->timeout_ms,
				p->size, room);
	uint64_t rtts = t->ping != NULL ? t->ping->rtts : 0;

	ping_free(t);
	struct ping *g = calloc(1, sizeof(*g));
	uint32_t nb = 1;

	while (nb < p->timeout_ms + 2)
		nb <<= 1;
	if (g == NULL || (g->pend = calloc(p->nhosts, sizeof(*g->pend))) == NULL ||
	    (g->b = calloc(nb, sizeof(*g->b))) == NULL) {
		if (g != NULL)
			free(g->pend);
		free(g);
		return rt_error(-ENOMEM, "surge_hosts_ping: out of memory for %u hosts' requests", p->nhosts);
	}
	g->p = *p;
	g->rtts = rtts;
	g->bmask = nb - 1;
	g->total = (uint64_t)p->count * p->nhosts;
	g->via = memcmp(p->via, zero16, 16) != 0;
	memcpy(g->nh, g->via ? p->via : p->target, 16);
	memcpy(g->nh_mac, p->mac, 6);
	g->resolved = memcmp(p->mac, zero16, 6) != 0;
	g->ident0 = (uint16_t)ht_rand(t);
	g->us_per_cyc = 1e6 / (double)rt_hz();
	g->start_ms = t->now;
	g->resolve_due = t->now;
	g->active = 1;
	t->ping = g;
	return 0;
}

/* host i's source address of the ping's family into a (IPv4: 4 bytes): 0,
 * or -1 when it has none now (IPv6: static, SLAAC, link-local, the first
 * assigned; a link-local target, the link-local one) */
static int
source(const struct hosts_table *t, const struct ping *g, uint32_t i, uint8_t *a)
{
	if (g->p.af == 4) {
		uint8_t s = t->h[i].state;

		if (s != SURGE_HOST_BOUND && s != SURGE_HOST_RENEWING && s != SURGE_HOST_REBINDING)
			return -1;
		put32(a, t->h[i].ip);
		return 0;
	}
	static const int kinds[] = { H6_STATIC, H6_SLAAC, H6_LL };
	int ll = g->p.target[0] == 0xfe && (g->p.target[1] & 0xc0) == 0x80;

	for (int k = ll ? 2 : 0; k < 3; k++)
		if ((t->h6[i].ok & kinds[k]) && nd_addr(t, i, kinds[k], a) == 0)
			return 0;
	return -1;
}

/* the next hop's MAC asked for by host i: an ARP request, or an NS to its
 * solicited-node group with the host's link-layer address */
static int
resolve_send(struct hosts_table *t, struct ping *g, uint32_t i, const uint8_t *src)
{
	if (g->p.af == 4) {
		uint8_t *p = proto_tx(t, 60 + ht_tags_len(t));

		if (p == NULL)
			return -1;
		uint8_t *a = proto_tx_eth(t, p, NULL, i, 0x0806);

		put16(a, 1);
		put16(a + 2, 0x0800);
		a[4] = 6;
		a[5] = 4;
		put16(a + 6, 1);
		ht_mac(t, i, a + 8);
		memcpy(a + 14, src, 4);
		memcpy(a + 24, g->nh, 4);
		return 0;
	}
	uint8_t grp[16], mac[6];

	nd_solicited(g->nh, grp, mac);
	uint8_t *m = nd_frame6(t, i, mac, src, grp, 32, 255, 58);

	if (m == NULL)
		return -1;
	m[0] = 135;
	memcpy(m + 8, g->nh, 16);
	m[24] = 1;               /* source link-layer address */
	m[25] = 1;
	ht_mac(t, i, m + 26);
	nd_sum6(m, 2);
	return 0;
}

/* Without `via`, a DHCPv4 host (the first able to ask, src its address)
 * reaches a target off the subnet its ACK gave through the router the ACK
 * named (RFC 2132 3.3, 3.5; RFC 1122 3.3.1.1); with no router option, or
 * on the subnet, the target is asked for itself. */
static void
next_hop(const struct hosts_table *t, struct ping *g, uint32_t i, const uint8_t *src)
{
	if (g->via || g->p.af != 4 || t->in == NULL)
		return;
	const struct hin *h = &t->in[i];
	uint32_t me = get32(src), target = get32(g->p.target);

	if (h->router != 0 && h->mask != 0 && (me & h->mask) != (target & h->mask))
		put32(g->nh, h->router);
}

/* 1 when the next hop is known; else an ARP request or NS when due, and
 * after the last one's wait the ping ends unresolved */
static int
resolve(struct hosts_table *t, struct ping *g)
{
	uint8_t src[16];
	uint32_t i;

	if (g->resolved)
		return 1;
	if ((int32_t)(t->now - g->resolve_due) < 0)
		return 0;
	for (i = g->p.first; i < g->p.first + g->p.nhosts; i++)
		if (source(t, g, i, src) == 0)
			break;
	if (i == g->p.first + g->p.nhosts || g->tries >= RESOLVE_TRIES) {
		/* no host to ask with, or nobody answered: nothing sent */
		if (i == g->p.first + g->p.nhosts)
			t->st.ping_skipped += g->total;
		else
			t->st.ping_unresolved++;
		g->active = 0;
		return 0;
	}
	if (g->tries == 0)
		next_hop(t, g, i, src);
	if (resolve_send(t, g, i, src) != 0)
		return 0;        /* the pool was empty: the next poll */
	t->st.ping_resolve_tx++;
	g->tries++;
	g->resolve_due = t->now + RESOLVE_MS;
	return 0;
}

static int
echo_send(struct hosts_table *t, struct ping *g, uint32_t i, const uint8_t *src, uint16_t seq)
{
	uint32_t size = g->p.size, l2 = 14 + ht_tags_len(t);
	uint16_t ident = (uint16_t)(g->ident0 + (i - g->p.first));
	uint64_t tsc;
	uint8_t *m;

	if (g->p.af == 4) {
		uint32_t len = l2 + 20 + 8 + size;
		uint8_t *p = proto_tx(t, len < 60 ? 60 : len);

		if (p == NULL)
			return -1;
		uint8_t *ip = proto_tx_eth(t, p, g->nh_mac, i, 0x0800);

		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(20 + 8 + size));
		put16(ip + 6, 0x4000);   /* don't fragment */
		ip[8] = 64;
		ip[9] = 1;
		memcpy(ip + 12, src, 4);
		memcpy(ip + 16, g->p.target, 4);
		csum_put(ip + 10, rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip));
		m = ip + 20;
	} else {
		m = nd_frame6(t, i, g->nh_mac, src, g->p.target, 8 + size, 64, 58);
		if (m == NULL)
			return -1;
	}
	m[0] = g->p.af == 4 ? 8 : 128;
	put16(m + 4, ident);
	put16(m + 6, seq);
	tsc = rte_rdtsc();
	memcpy(m + 8, &tsc, 8);
	for (uint32_t k = 8; k < size; k++)
		m[8 + k] = (uint8_t)k;   /* a pattern, as ping's */
	if (g->p.af == 4)
		csum_put(m + 2, (uint16_t)~rte_raw_cksum(m, 8 + size));
	else
		nd_sum6(m, 2);
	return 0;
}

/* positions sent by now: the last batch's end, or a new batch */
static void
batch(struct hosts_table *t, struct ping *g)
{
	if (g->btail != g->bhead && g->b[(g->btail - 1) & g->bmask].ms == t->now) {
		g->b[(g->btail - 1) & g->bmask].end = g->sent;
		return;
	}
	g->b[g->btail & g->bmask] = (struct pbatch){ .end = g->sent, .ms = t->now };
	g->btail++;
}

/* Sends the tx burst (the ping's requests only): the ring takes the
 * first ones, the rest it refused (tx_full) were never sent: their
 * positions end unsent (ping_skipped), so that ping_tx, and each request's
 * reply or timeout, are of requests on the wire */
static void
flush(struct hosts_table *t, struct ping *g)
{
	uint64_t before = t->st.tx_frames, went;

	tx_writer_flush(&t->tx);
	went = t->st.tx_frames - before;
	if (went > g->nw)
		went = g->nw;
	t->st.ping_tx += went;
	for (uint32_t k = (uint32_t)went; k < g->nw; k++) {
		uint64_t pos = g->wrote[k];

		g->pend[pos % g->p.nhosts] &= ~(1ull << (pos / g->p.nhosts % ROUNDS_OPEN));
		g->wait--;
		t->st.ping_skipped++;
	}
	g->nw = 0;
}

/* the batches older than the timeout: their requests still waiting time out */
static void
sweep(struct hosts_table *t, struct ping *g)
{
	uint32_t n = g->p.nhosts;

	while (g->bhead != g->btail) {
		const struct pbatch *b = &g->b[g->bhead & g->bmask];

		if (t->now - b->ms < g->p.timeout_ms)
			break;
		for (; g->swept < b->end; g->swept++) {
			uint32_t k = (uint32_t)(g->swept % n);
			uint64_t bit = 1ull << (g->swept / n % ROUNDS_OPEN);

			if (g->pend[k] & bit) {
				g->pend[k] &= ~bit;
				g->wait--;
				t->st.ping_timeout++;
			}
		}
		g->bhead++;
	}
}

void
ping_poll(struct hosts_table *t)
{
	struct ping *g = t->ping;
	uint32_t n, k = 0;
	uint64_t gone;

	if (g == NULL || !g->active)
		return;
	uint32_t need = 14 + ht_tags_len(t) + (g->p.af == 4 ? 28 : 48) + g->p.size;

	if (need > t->room) {
		/* never fits: the poll fails (its error), rather than retry for ever */
		t->st.ping_skipped += g->total - g->sent;
		g->active = 0;
		t->tx.err = rt_error(-EMSGSIZE, "surge_hosts_ping: a request of %u bytes and the tx pool's mbufs "
				     "hold %u", need, t->room);
		return;
	}
	sweep(t, g);
	if (!resolve(t, g))
		return;
	n = g->p.nhosts;
	gone = (uint32_t)(t->now - g->start_ms);
	if (t->tx.used > 0)
		tx_writer_flush(&t->tx);   /* the burst holds the requests alone: flush() counts them */
	while (g->sent < g->total && k < SENDS_PER_POLL) {
		uint64_t r = g->sent / n;
		uint32_t h = (uint32_t)(g->sent % n), i = g->p.first + h;
		uint64_t due = r * g->p.interval_ms + (t->conf.rate > 0 ? (uint64_t)((double)h * 1e3 / t->conf.rate) : 0);
		uint8_t src[16];

		if (gone < due)
			break;
		if (r >= ROUNDS_OPEN && g->sent - (uint64_t)ROUNDS_OPEN * n >= g->swept)
			break;   /* round r - 64's request of this host not swept yet: its bit */
		if (source(t, g, i, src) != 0) {
			t->st.ping_skipped++;
		} else {
			if (t->tx.got > 0 && t->tx.used == t->tx.got)
				flush(t, g);   /* the burst is full: sent before the next is written */
			if (echo_send(t, g, i, src, (uint16_t)r) != 0)
				break;   /* the pool was empty: the next poll */
			g->pend[h] |= 1ull << (r % ROUNDS_OPEN);
			g->wait++;
			g->wrote[g->nw++] = g->sent;
			k++;
		}
		g->sent++;
	}
	if (g->nw > 0)
		flush(t, g);
	if (g->sent != g->batched) {
		batch(t, g);
		g->batched = g->sent;
	}
	if (g->sent == g->total && g->wait == 0)
		g->active = 0;
}

/* an echo reply to host i (offset h in the range) with identifier and
 * sequence from the message m: the request it answers ends */
static void
reply(struct hosts_table *t, struct ping *g, uint32_t h, const uint8_t *m)
{
	uint32_t n = g->p.nhosts;
	uint16_t ident = get16(m + 4), seq = get16(m + 6);
	uint64_t rounds = g->sent / n + (h < g->sent % n);   /* host h's requests sent */
	uint64_t bit = 1ull << (seq % ROUNDS_OPEN);
	uint64_t tsc, now = rte_rdtsc();

	if (ident != (uint16_t)(g->ident0 + h) || seq >= rounds || rounds - seq > ROUNDS_OPEN || !(g->pend[h] & bit)) {
		t->st.ping_stray++;
		return;
	}
	g->pend[h] &= ~bit;
	g->wait--;
	t->st.ping_reply++;
	memcpy(&tsc, m + 8, 8);
	/* the time the reply brought back, unless a peer changed it: not in
	 * the future, nor older than a request can wait (twice the timeout:
	 * the sweep runs at the polls) */
	uint64_t us = tsc <= now ? (uint64_t)((double)(now - tsc) * g->us_per_cyc) : UINT64_MAX;

	if (us <= (uint64_t)g->p.timeout_ms * 2000) {
		if (g->rtts++ == 0 || us < t->st.ping_rtt_min_us)
			t->st.ping_rtt_min_us = us;
		if (us > t->st.ping_rtt_max_us)
			t->st.ping_rtt_max_us = us;
		t->st.ping_rtt_sum_us += us;
	}
	if (g->sent == g->total && g->wait == 0)
		g->active = 0;
}

/* the next hop's MAC, from its answer (the first: later ones are taken, not read) */
static int
learn(struct ping *g, const uint8_t *mac)
{
	if (!g->resolved) {
		memcpy(g->nh_mac, mac, 6);
		g->resolved = 1;
	}
	return 1;
}

/* 1 when the frame was the ping's (an answer for the next hop, an echo
 * reply to a host of the range from the target), 0 to leave it */
int
ping_frame(struct hosts_table *t, const struct hframe *f, const uint8_t *in)
{
	struct ping *g = t->ping;
	uint32_t i;
	int kind;

	if (g == NULL)
		return 0;
	switch (f->kind) {
	case HF_ARP:
		if (g->p.af != 4 || f->arp_op != 2 || f->spa != get32(g->nh) || ht_by_ip(t, f->tpa) == HOST_NIL)
			return 0;
		return learn(g, f->sha);
	case HF_NA:
		if (g->p.af != 6 || f->lladdr == NULL || memcmp(f->target, g->nh, 16) != 0)
			return 0;
		return learn(g, f->lladdr);
	case HF_ECHO_REPLY:
		i = ht_by_ip(t, f->ip_dst);
		if (g->p.af != 4 || f->ip_src != get32(g->p.target) || i == HOST_NIL || i < g->p.first ||
		    i - g->p.first >= g->p.nhosts)
			return 0;
		{
			const uint8_t *m = in + f->l2 + f->ihl;
			uint32_t len = (uint32_t)f->ip_len - f->ihl;

			if (rte_raw_cksum(m, len) != 0xffff) {
				t->st.rx_bad++;
				return 1;
			}
			if (len < 16) {
				t->st.ping_stray++;   /* too short to be one of ours */
				return 1;
			}
			reply(t, g, i - g->p.first, m);
		}
		return 1;
	case HF_ECHO6_REPLY:
		i = nd_host(t, f->ip6_dst, &kind);
		if (g->p.af != 6 || memcmp(f->ip6_src, g->p.target, 16) != 0 || i == HOST_NIL || i < g->p.first ||
		    i - g->p.first >= g->p.nhosts)
			return 0;
		if (f->l4len6 < 16) {
			t->st.ping_stray++;
			return 1;
		}
		reply(t, g, i - g->p.first, f->ip6_dst + 16);   /* the ICMPv6 message follows the IPv6 header */
		return 1;
	default:
		return 0;
	}
}
