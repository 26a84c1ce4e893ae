/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_proto.c - what the emulated hosts say and how they move: ARP
 * replies, RFC 5227 probes, announcements and conflicts; ICMP echo
 * replies; the DHCPv4 client (RFC 2131: DISCOVER, REQUEST, renew at T1,
 * rebind at T2, RELEASE; with the script's ARP check an ACKed address
 * probed first and DECLINEd when answered), with its retransmissions
 * doubled from rto_ms up to 64 s; the script's options are
 * hosts_dhcp_opts.c's. Frames are written into the poll's tx burst (mbufs allocated a
 * burst at a time, the unused ones returned) and sent without waiting for
 * room, as the TCP engine's: what the ring refuses is counted, and a
 * host's timer sends it again.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "hosts.h"

#define BOOTP_MIN 300            /* a BOOTP message's bytes at least (RFC 951), more with the script's options */
#define ARP_FRAME 60             /* the Ethernet minimum, padded */
#define RTO_MAX_MS 64000
#define NOBUF_RETRY_MS 10        /* a frame the empty pool could not take: tried again this soon */

/* The next frame to write, len bytes (zeroed), or NULL (counted) when the
 * pool is empty or the frame does not fit its mbufs. */
static uint8_t *
frame(struct hosts_table *t, uint32_t len)
{
	struct surge_burst *b = t->tx.b;
	int slot = len <= t->room ? tx_writer_next(&t->tx) : -ENOBUFS;

	if (slot < 0) {
		if (slot == -ENOBUFS)
			t->st.tx_nobufs++;
		return NULL;
	}
	((struct rte_mbuf *)b->mbuf[slot])->ol_flags = 0;   /* checksums written here, not offloaded */
	b->len[slot] = (uint16_t)len;
	memset(b->data[slot], 0, len);
	return b->data[slot];
}

/* frame() for hosts_server.c and hosts_mcast.c */
uint8_t *
proto_tx(struct hosts_table *t, uint32_t len)
{
	return frame(t, len);
}

/* Ethernet header from src (with the table's tags), returns where the payload starts */
static uint8_t *
eth_from(struct hosts_table *t, uint8_t *p, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
	if (dst != NULL)
		memcpy(p, dst, 6);
	else
		memset(p, 0xff, 6);
	memcpy(p + 6, src, 6);
	p = ht_tags_put(t, p + 12);
	put16(p, type);
	return p + 2;
}

/* ... from host i */
static uint8_t *
eth(struct hosts_table *t, uint8_t *p, const uint8_t *dst, uint32_t i, uint16_t type)
{
	uint8_t src[6];

	ht_mac(t, i, src);
	return eth_from(t, p, dst, src, type);
}

static uint32_t
l2len(const struct hosts_table *t)
{
	return 14 + ht_tags_len(t);
}

/* op 1 with spa 0: a probe; op 1 with spa = tpa: an announcement; op 2: a reply to tha/tpa; from sha */
static int
arp_from(struct hosts_table *t, const uint8_t *sha, uint16_t op, uint32_t spa, const uint8_t *tha, uint32_t tpa)
{
	uint8_t *p = frame(t, ARP_FRAME + ht_tags_len(t));

	if (p == NULL)
		return -1;
	uint8_t *a = eth_from(t, p, op == 2 ? tha : NULL, sha, 0x0806);

	put16(a, 1);
	put16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, op);
	memcpy(a + 8, sha, 6);
	put32(a + 14, spa);
	if (op == 2)
		memcpy(a + 18, tha, 6);
	put32(a + 24, tpa);
	return 0;
}

/* ... from host i */
static int
arp_send(struct hosts_table *t, uint32_t i, uint16_t op, uint32_t spa, const uint8_t *tha, uint32_t tpa)
{
	uint8_t sha[6];

	ht_mac(t, i, sha);
	return arp_from(t, sha, op, spa, tha, tpa);
}

/* The relay's ARP request for the server (its next hop unless given):
 * at most one a second */
static void
relay_resolve(struct hosts_table *t)
{
	const struct surge_hosts_dhcp4 *d = t->dopt;

	if (t->relay_arped && t->now - t->relay_arp_ms < 1000)
		return;
	if (arp_from(t, d->relay_mac, 1, d->relay4, NULL, d->relay_server4) != 0)
		return;
	if (!t->relay_arped)
		t->relay_arp0_ms = t->now;
	t->relay_arped = 1;
	t->relay_arp_ms = t->now;
}

/* 1 while the hosts wait to start: a relay whose next hop is not known
 * yet holds them back up to rto_ms from its first ARP request (their
 * first messages would be lost); after that they start, and what the
 * relay cannot send is dropped and counted (dhcp_relay_unresolved) */
int
proto_relay_hold(struct hosts_table *t)
{
	if (!ht_relay(t) || t->relay_nh_ok)
		return 0;
	relay_resolve(t);
	return !t->relay_arped || t->now - t->relay_arp0_ms < t->conf.rto_ms;
}

/* The relay's ARP (docs/hosts.md "DHCP relay"): requests for its address
 * answered from its MAC, the server's reply learnt as the next hop.
 * 1 when the frame was the relay's. */
static int
relay_arp(struct hosts_table *t, const struct hframe *f)
{
	const struct surge_hosts_dhcp4 *d = t->dopt;

	if (!ht_relay(t))
		return 0;
	if (f->tpa != d->relay4 || memcmp(f->sha, d->relay_mac, 6) == 0)
		return 0;       /* not for the relay, or its own (looped back: left to the caller) */
	if (f->arp_op == 1 && f->spa != f->tpa) {
		t->st.arp_request_rx++;
		if (arp_from(t, d->relay_mac, 2, d->relay4, f->sha, f->spa) == 0)
			t->st.arp_reply_tx++;
	} else if (f->arp_op == 2 && f->spa == d->relay_server4 && !t->relay_nh_ok) {
		memcpy(t->relay_nh, f->sha, 6);
		t->relay_nh_ok = 1;
	}
	return 1;
}

/* IPv4, UDP and the fixed part of a BOOTP message of blen bytes at ip: op
 * 1, a client's request (port 68 to 67), or 2, a server's reply (67 to 68),
 * with the magic cookie; returns where its options start. The frame is zeroed. */
uint8_t *
proto_bootp(uint8_t *ip, uint32_t src, uint32_t dst, uint8_t op, uint32_t xid, uint32_t blen)
{
	uint8_t *udp = ip + 20, *b = udp + 8;

	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(20 + 8 + blen));
	ip[8] = 64;
	ip[9] = 17;
	put32(ip + 12, src);
	put32(ip + 16, dst);
	csum_put(ip + 10, rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip));
	put16(udp, op == 1 ? 68 : 67);
	put16(udp + 2, op == 1 ? 67 : 68);
	put16(udp + 4, (uint16_t)(8 + blen));   /* checksum 0: none, allowed over IPv4 */
	b[0] = op;                        /* Ethernet, 6-byte addresses */
	b[1] = 1;
	b[2] = 6;
	put32(b + 4, xid);
	put32(b + 236, 0x63825363u);
	return b + 240;
}

static int
dhcp_send(struct hosts_table *t, uint32_t i, uint8_t msg, int unicast)
{
	struct host *h = &t->h[i];
	/* the options first (dopt_set bounds them to RFC 2131's 576-byte
	 * datagram), then a frame of their size */
	uint8_t opt[576 - 28 - 240], *o = opt;
	int ciaddr = msg == DHCP_RELEASE || h->state == SURGE_HOST_RENEWING || h->state == SURGE_HOST_REBINDING;
	int sel = (msg == DHCP_REQUEST && h->state == SURGE_HOST_REQUESTING) || msg == DHCP_DECLINE;

	*o++ = 53; *o++ = 1; *o++ = msg;
	if (t->dopt == NULL || !(t->dopt_own & 1)) {
		*o++ = 61; *o++ = 7; *o++ = 1;    /* client identifier: type 1 (Ethernet) and the MAC */
		ht_mac(t, i, o);
		o += 6;
	}
	if (sel) {      /* the address asked for (declined) and whose it is */
		*o++ = 50; *o++ = 4; put32(o, h->ip); o += 4;
	}
	if (sel || msg == DHCP_RELEASE) {
		*o++ = 54; *o++ = 4; put32(o, h->server); o += 4;
	}
	if (msg != DHCP_RELEASE && msg != DHCP_DECLINE && (t->dopt == NULL || !(t->dopt_own & 2))) {
		static const uint8_t prl[] = { 55, 6, 1, 3, 6, 51, 54, 58 };

		memcpy(o, prl, sizeof(prl));
		o += sizeof(prl);
	}
	if (t->dopt != NULL)
		o = dopt_write(t, i, o, msg);
	*o++ = 255;
	uint32_t blen = 240 + (uint32_t)(o - opt);

	if (blen < BOOTP_MIN)
		blen = BOOTP_MIN;
	const struct surge_hosts_dhcp4 *d = t->dopt;
	int relay = ht_relay(t);

	if (relay && !t->relay_nh_ok) {
		/* a router with no ARP entry drops the packet: the host's
		 * retransmission sends it again */
		relay_resolve(t);
		t->st.dhcp_relay_unresolved++;
		return 0;
	}
	uint8_t *p = frame(t, l2len(t) + 28 + blen);

	if (p == NULL)
		return -1;
	uint8_t *ip, *b;

	if (relay) {
		/* RFC 2131 4.1, RFC 3046: every message as the relay forwards
		 * it, unicast from its address and port 67 to the server's,
		 * giaddr its address, hops 1, option 82 (dopt_write's) last */
		ip = eth_from(t, p, t->relay_nh, d->relay_mac, 0x0800);
		b = proto_bootp(ip, d->relay4, d->relay_server4, 1, h->xid, blen) - 240;
		put16(ip + 20, 67);
		b[3] = 1;
		put32(b + 24, d->relay4);
	} else {
		ip = eth(t, p, unicast ? t->server_mac : NULL, i, 0x0800);
		b = proto_bootp(ip, ciaddr ? h->ip : 0, unicast ? h->server : 0xffffffffu, 1, h->xid, blen) - 240;
	}
	if (ciaddr)
		put32(b + 12, h->ip);
	ht_mac(t, i, b + 28);
	memcpy(b + 240, opt, (size_t)(o - opt));
	return 0;
}

/* the retransmission timeout of a message's try n (1..): rto_ms doubled
 * each time up to 64 s, plus up to an eighth of it at random (RFC 2131
 * 4.1 randomises by a second either way; a storm of hosts started together
 * must not stay in step) */
uint32_t
proto_backoff(struct hosts_table *t, uint32_t tries)
{
	uint32_t ms = t->conf.rto_ms;

	for (uint32_t k = 1; k < tries && ms < RTO_MAX_MS; k++)
		ms *= 2;
	if (ms > RTO_MAX_MS)
		ms = RTO_MAX_MS;
	return ms + ht_rand(t) % (ms / 8 + 1);
}

static void
dhcp_transmit(struct hosts_table *t, uint32_t i, uint8_t msg, int unicast)
{
	struct host *h = &t->h[i];

	if (dhcp_send(t, i, msg, unicast) != 0) {
		ht_timer_set(t, i, HL_SHORT, t->now + NOBUF_RETRY_MS);
		return;
	}
	if (h->tries > 0)
		t->st.dhcp_retransmits++;
	if (msg == DHCP_DISCOVER)
		t->st.dhcp_discover_tx++;
	else
		t->st.dhcp_request_tx++;
	h->tries++;
	ht_timer_set(t, i, HL_SHORT, t->now + proto_backoff(t, h->tries));
}

static void
discover(struct hosts_table *t, uint32_t i)
{
	struct host *h = &t->h[i];

	h->xid = ht_rand(t);
	h->ip = 0;
	/* a fresh start (not a NAK's new DISCOVER): its binding time runs
	 * from here (bound_ms holds it until the ACK) */
	if (h->state != SURGE_HOST_REQUESTING)
		h->bound_ms = t->now;
	ht_state(t, i, SURGE_HOST_SELECTING);
	dhcp_transmit(t, i, DHCP_DISCOVER, 0);
}

/* A DHCP host leaves the transaction phase (open counts SELECTING and REQUESTING) */
static void
close_open(struct hosts_table *t, uint32_t i)
{
	uint8_t s = t->h[i].state;

	if (s == SURGE_HOST_SELECTING || s == SURGE_HOST_REQUESTING)
		t->open--;
}

static void
give_up(struct hosts_table *t, uint32_t i, uint8_t ev)
{
	close_open(t, i);
	ht_ipidx_clear(t, i);
	ht_timer_stop(t, i);
	ht_state(t, i, SURGE_HOST_GAVE_UP);
	t->st.dhcp_gave_up++;
	ht_event(t, i, ev);
}

/* A lease lost (it ended unrenewed, or a NAK while renewing): the address
 * is no longer answered for, the host starts over with a DISCOVER (not
 * held back by the cap on open transactions: it had its turn) */
static void
lose(struct hosts_table *t, uint32_t i)
{
	ht_ipidx_clear(t, i);
	ht_event(t, i, SURGE_HOSTS_EV_LOST);
	t->st.dhcp_lost++;
	t->open++;
	t->h[i].tries = 0;
	discover(t, i);
}

static void
announce(struct hosts_table *t, uint32_t i)
{
	struct host *h = &t->h[i];

	if (arp_send(t, i, 1, h->ip, NULL, h->ip) == 0) {
		t->st.arp_announce_tx++;
		h->tries++;
	}
	if (h->tries < t->conf.announce)
		ht_timer_set(t, i, HL_SHORT, t->now + 2 * t->conf.probe_ms);   /* ANNOUNCE_INTERVAL */
	else
		ht_timer_stop(t, i);
}

static void
bound_static(struct hosts_table *t, uint32_t i)
{
	ht_state(t, i, SURGE_HOST_BOUND);
	t->h[i].bound_ms = t->now;
	t->h[i].tries = 0;
	ht_event(t, i, SURGE_HOSTS_EV_BOUND);
	if (t->conf.announce > 0)
		announce(t, i);
	else
		ht_timer_stop(t, i);
}

void
proto_start(struct hosts_table *t, uint32_t i)
{
	struct host *h = &t->h[i];

	h->tries = 0;
	if (t->conf.dhcp) {
		t->open++;
		discover(t, i);
	} else if (t->conf.dad) {
		/* PROBE_WAIT: the first probe 0..probe_ms from now */
		ht_state(t, i, SURGE_HOST_PROBING);
		ht_timer_set(t, i, HL_SHORT, t->now + ht_rand(t) % (t->conf.probe_ms + 1));
	} else {
		bound_static(t, i);
	}
}

/* T1 and T2 (RFC 2131 4.4.5: half and seven eighths of the lease), in ms
 * since the binding; an infinite lease has none */
static uint32_t
lease_point(const struct host *h, uint32_t num, uint32_t den)
{
	uint64_t ms = (uint64_t)h->lease_s * 1000u * num / den;

	return ms > 0x7fffffffu ? 0x7fffffffu : (uint32_t)ms;
}

/* T1 (which 1), T2 (2) or the lease's end (3) in ms since the binding:
 * the server's T1 and T2 (options 58, 59) when they are in order (T1 <
 * T2 < the lease), else RFC 2131 4.4.5's half and seven eighths */
static uint32_t
lease_edge(const struct hosts_table *t, uint32_t i, int which)
{
	const struct host *h = &t->h[i];
	uint32_t t1 = t->in != NULL ? t->in[i].t1_s : 0, t2 = t->in != NULL ? t->in[i].t2_s : 0;

	if (which == 3)
		return lease_point(h, 1, 1);
	if (t1 == 0 || t1 >= h->lease_s || (t2 != 0 && (t2 <= t1 || t2 >= h->lease_s)))
		t1 = t2 = 0;
	uint32_t s = which == 1 ? t1 : t2;

	if (s == 0)
		return lease_point(h, which == 1 ? 1 : 7, which == 1 ? 2 : 8);
	return s > 0x7fffffffu / 1000u ? 0x7fffffffu : s * 1000u;
}

/* The lease's timer: T1, or the script's leave_after_ms since the first
 * ACK when that is sooner; none for an infinite lease kept forever */
static void
lease_timer(struct hosts_table *t, uint32_t i)
{
	struct host *h = &t->h[i];
	uint32_t leave = t->dopt != NULL ? t->dopt->leave_after_ms : 0;
	uint32_t due = h->bound_ms + lease_edge(t, i, 1);

	if (leave != 0) {
		uint32_t at = t->in[i].since_ms + leave;

		if (h->lease_s == UINT32_MAX || (int32_t)(at - due) < 0)
			due = at;
	} else if (h->lease_s == UINT32_MAX) {
		ht_timer_stop(t, i);
		return;
	}
	ht_timer_set(t, i, HL_LONG, due);
}

static int
leave_due(const struct hosts_table *t, uint32_t i)
{
	return t->dopt != NULL && t->dopt->leave_after_ms != 0 &&
	       t->now - t->in[i].since_ms >= t->dopt->leave_after_ms;
}

/* the script's end for a host holding a lease: RELEASE it, counted in *why */
static void
leave(struct hosts_table *t, uint32_t i, uint64_t *why)
{
	t->h[i].flags |= HF_OWE_RELEASE;
	ht_ipidx_clear(t, i);
	ht_state(t, i, SURGE_HOST_RELEASED);
	ht_event(t, i, SURGE_HOSTS_EV_RELEASED);
	(*why)++;
	proto_timer(t, i);
}

/* The ACKed address is the host's (after the ARP check when asked): bound */
static void
lease_use(struct hosts_table *t, uint32_t i)
{
	struct host *h = &t->h[i];

	h->tries = 0;
	ht_state(t, i, SURGE_HOST_BOUND);
	ht_event(t, i, SURGE_HOSTS_EV_BOUND);
	lease_timer(t, i);
}

void
proto_timer(struct hosts_table *t, uint32_t i)
{
	struct host *h = &t->h[i];
	uint32_t since;

	if (h->flags & HF_OWE_DECLINE) {
		/* RFC 2131 3.1.5: DECLINE the address, wait, start over */
		if (dhcp_send(t, i, DHCP_DECLINE, 0) != 0) {
			ht_timer_set(t, i, HL_SHORT, t->now + NOBUF_RETRY_MS);
			return;
		}
		h->flags &= (uint8_t)~HF_OWE_DECLINE;
		t->st.dhcp_declined++;
		ht_timer_set(t, i, HL_SHORT, t->now + t->dopt->decline_wait_ms);
		return;
	}
	if (h->flags & HF_OWE_RELEASE) {
		if (dhcp_send(t, i, DHCP_RELEASE, t->has_server_mac) != 0) {
			ht_timer_set(t, i, HL_SHORT, t->now + NOBUF_RETRY_MS);
			return;
		}
		h->flags &= (uint8_t)~HF_OWE_RELEASE;
		t->st.dhcp_release_tx++;
		ht_timer_stop(t, i);
		return;
	}
	switch (h->state) {
	case SURGE_HOST_PROBING:
		if (h->tries < 3) {            /* PROBE_NUM probes, PROBE_MIN..PROBE_MAX apart */
			if (arp_send(t, i, 1, 0, NULL, h->ip) != 0) {
				ht_timer_set(t, i, HL_SHORT, t->now + NOBUF_RETRY_MS);
				return;
			}
			t->st.arp_probe_tx++;
			h->tries++;
			ht_timer_set(t, i, HL_SHORT, t->now + (h->tries < 3 ? t->conf.probe_ms +
				  ht_rand(t) % (t->conf.probe_ms + 1) : 2 * t->conf.probe_ms));   /* ANNOUNCE_WAIT */
		} else if (t->conf.dhcp) {
			lease_use(t, i);        /* nobody answered for the ACKed address */
		} else {
			bound_static(t, i);
		}
		return;
	case SURGE_HOST_DECLINED:
		t->open++;              /* the wait after a DECLINE is over: INIT (not held back by the cap) */
		h->tries = 0;
		discover(t, i);
		return;
	case SURGE_HOST_BOUND:
		if (!t->conf.dhcp) {
			announce(t, i);
			return;
		}
		/* the script's end for the host: bound long enough, or renewed enough */
		if (leave_due(t, i)) {
			leave(t, i, &t->st.dhcp_left_after);
			return;
		}
		/* T1: renew, unicast to the server (or let the lease go after the renewals asked for) */
		if (t->conf.renewals != 0 && h->renewals >= t->conf.renewals) {
			leave(t, i, &t->st.dhcp_left_renewals);
			return;
		}
		ht_state(t, i, SURGE_HOST_RENEWING);
		h->tries = 0;
		h->xid = ht_rand(t);
		/* fall through */
	case SURGE_HOST_RENEWING:
	case SURGE_HOST_REBINDING:
		if (h->state != SURGE_HOST_BOUND && leave_due(t, i)) {
			leave(t, i, &t->st.dhcp_left_after);
			return;
		}
		since = t->now - h->bound_ms;
		if (since >= lease_edge(t, i, 3)) {
			lose(t, i);     /* RFC 2131 4.4.5: the lease ended, back to INIT */
			return;
		}
		if (h->state == SURGE_HOST_RENEWING && since >= lease_edge(t, i, 2)) {
			ht_state(t, i, SURGE_HOST_REBINDING);
			h->tries = 0;
		}
		if (dhcp_send(t, i, DHCP_REQUEST, h->state == SURGE_HOST_RENEWING && t->has_server_mac) != 0) {
			ht_timer_set(t, i, HL_SHORT, t->now + NOBUF_RETRY_MS);
			return;
		}
		t->st.dhcp_request_tx++;
		if (h->tries > 0)
			t->st.dhcp_retransmits++;
		h->tries++;
		{
			/* the next try, but not past T2 (renewing) or the lease's end */
			uint32_t next = since + proto_backoff(t, h->tries);
			uint32_t edge = lease_edge(t, i, h->state == SURGE_HOST_RENEWING ? 2 : 3);

			ht_timer_set(t, i, HL_SHORT, h->bound_ms + (next < edge ? next : edge));
		}
		return;
	case SURGE_HOST_SELECTING:
	case SURGE_HOST_REQUESTING:
		if (h->tries >= t->conf.retries) {
			give_up(t, i, SURGE_HOSTS_EV_GAVE_UP);
			return;
		}
		dhcp_transmit(t, i, h->state == SURGE_HOST_SELECTING ? DHCP_DISCOVER : DHCP_REQUEST, 0);
		return;
	default:
		ht_timer_stop(t, i);
		return;
	}
}

/* RFC 5227 2.1.1 and 2.4: another station's ARP naming a host's address */
static void
conflict(struct hosts_table *t, uint32_t i)
{
	struct host *h = &t->h[i];

	/* a host that holds no claim (not started, already in conflict)
	 * has nothing to lose: the other station's ARP is no conflict of
	 * its (the kernel goes on ARPing from the address it defended) */
	if (h->state == SURGE_HOST_PROBING || h->state == SURGE_HOST_BOUND)
		t->st.arp_conflict++;
	if (h->state == SURGE_HOST_PROBING && t->conf.dhcp) {
		/* RFC 2131 3.1.5: the ACKed address is in use: DECLINE it (sent by the timer) */
		ht_ipidx_clear(t, i);
		ht_state(t, i, SURGE_HOST_DECLINED);
		h->flags |= HF_OWE_DECLINE;
		ht_event(t, i, SURGE_HOSTS_EV_DECLINED);
		ht_timer_set(t, i, HL_SHORT, t->now);
	} else if (h->state == SURGE_HOST_PROBING) {
		ht_timer_stop(t, i);
		ht_state(t, i, SURGE_HOST_CONFLICT);
		ht_event(t, i, SURGE_HOSTS_EV_CONFLICT);
	} else if (h->state == SURGE_HOST_BOUND) {
		/* defend once with an announcement (2.4 (b)); the event tells the script */
		ht_event(t, i, SURGE_HOSTS_EV_CONFLICT);
		if (arp_send(t, i, 1, h->ip, NULL, h->ip) == 0)
			t->st.arp_announce_tx++;
	}
}

/* 1 when the frame was the hosts' (freed by the caller), 0 to leave it */
static int
arp_in(struct hosts_table *t, const struct hframe *f)
{
	uint32_t i = f->spa != 0 ? ht_by_ip(t, f->spa) : HOST_NIL;
	int mine = 0;

	if (relay_arp(t, f))
		return 1;

	if (i != HOST_NIL && ht_by_mac(t, f->sha) != i) {
		conflict(t, i);                 /* someone else uses a host's address */
		mine = 1;
	}
	uint32_t j = ht_by_ip(t, f->tpa);

	if (j == HOST_NIL)
		return mine;
	if (f->spa == 0 && j != ht_by_mac(t, f->sha)) {
		if (t->h[j].state == SURGE_HOST_PROBING)
			conflict(t, j);         /* another station probing for the same address */
		return 1;
	}
	if (f->arp_op == 1 && t->h[j].state == SURGE_HOST_BOUND && f->spa != f->tpa) {
		t->st.arp_request_rx++;
		if (arp_send(t, j, 2, f->tpa, f->sha, f->spa) == 0)
			t->st.arp_reply_tx++;
		return 1;
	}
	return mine || ht_by_mac(t, f->sha) == j;   /* our own announcements, looped back */
}

static int
echo_in(struct hosts_table *t, const struct hframe *f, const uint8_t *in)
{
	uint32_t i = ht_by_ip(t, f->ip_dst);

	if (i == HOST_NIL)
		return 0;
	t->st.icmp_echo_rx++;
	if (t->h[i].state != SURGE_HOST_BOUND)
		return 1;
	uint32_t len = l2len(t) + f->ip_len;
	uint8_t *p = frame(t, len < 60 ? 60 : len);

	if (p == NULL)
		return 1;
	uint8_t *ip = eth(t, p, in + 6, i, 0x0800);
	const uint8_t *iip = in + f->l2;

	memcpy(ip, iip, f->ip_len);
	put32(ip + 12, f->ip_dst);
	put32(ip + 16, f->ip_src);
	ip[8] = 64;
	put16(ip + 10, 0);
	csum_put(ip + 10, rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip));
	uint8_t *icmp = ip + f->ihl;

	icmp[0] = 0;                      /* echo reply: the rest as it came */
	put16(icmp + 2, 0);
	csum_put(icmp + 2, (uint16_t)~rte_raw_cksum(icmp, f->ip_len - f->ihl));
	t->st.icmp_reply_tx++;
	return 1;
}

static void
lease_bind(struct hosts_table *t, uint32_t i, const struct hframe *f, const uint8_t *frame_in)
{
	struct host *h = &t->h[i];
	int renewed = h->state == SURGE_HOST_RENEWING || h->state == SURGE_HOST_REBINDING;

	close_open(t, i);
	if (renewed && f->yiaddr != h->ip)
		ht_ipidx_clear(t, i);
	h->ip = f->yiaddr;
	if (f->server_id != 0)
		h->server = f->server_id;
	h->lease_s = f->lease_s;
	if (!renewed) {
		uint32_t ms = t->now - h->bound_ms, k = 0;

		while (k < SURGE_HOSTS_BIND_BUCKETS - 1 && ms >= 1u << k)
			k++;
		t->st.bind_ms[k]++;
		t->st.bind_ms_sum += ms;
	}
	h->bound_ms = t->now;
	h->tries = 0;
	h->naks = 0;
	memcpy(t->server_mac, frame_in + 6, 6);
	t->has_server_mac = 1;
	ht_ipidx_set(t, i, h->ip);
	if (t->in != NULL)
		dopt_record(t, i, f, !renewed);
	if (!renewed && t->dopt != NULL && t->dopt->arp_check) {
		/* RFC 2131 3.1.5, RFC 5227 2.1.1: probe it first (the
		 * PROBING timer); an answer DECLINEs it (conflict()) */
		ht_state(t, i, SURGE_HOST_PROBING);
		ht_timer_set(t, i, HL_SHORT, t->now + ht_rand(t) % (t->conf.probe_ms + 1));
		return;
	}
	if (!renewed) {
		lease_use(t, i);
		return;
	}
	ht_state(t, i, SURGE_HOST_BOUND);
	if (h->renewals < 255)
		h->renewals++;
	t->st.dhcp_renewed++;
	ht_event(t, i, SURGE_HOSTS_EV_RENEWED);
	lease_timer(t, i);
}

/* a reply for this table's clients: relayed (to its relay's address) in
 * relay mode, else to the client port */
static int
relay_mine(const struct hosts_table *t, const struct hframe *f)
{
	if (!ht_relay(t))
		return !f->relayed;
	return f->relayed && f->ip_dst == t->dopt->relay4 && f->giaddr == t->dopt->relay4;
}

static int
dhcp_in(struct hosts_table *t, const struct hframe *f, const uint8_t *in)
{
	uint32_t i = ht_by_mac(t, f->chaddr);

	if (i == HOST_NIL || !t->conf.dhcp || !relay_mine(t, f))
		return 0;
	struct host *h = &t->h[i];
	uint8_t s = h->state;

	if (f->overload != 0)
		t->st.dhcp_overload++;
	if (f->xid != h->xid || (s != SURGE_HOST_SELECTING && s != SURGE_HOST_REQUESTING &&
				 s != SURGE_HOST_RENEWING && s != SURGE_HOST_REBINDING)) {
		t->st.dhcp_stray++;
		return 1;
	}
	/* RFC 3046 2.2: the server echoes the relay's option 82; one that
	 * does not is counted, the reply taken (chaddr and xid are the host's) */
	if (f->relayed && !dopt_agent_echoed(t, i, f))
		t->st.dhcp_relay_mismatch++;
	if (f->msg == DHCP_OFFER)
		t->st.dhcp_offer_rx++;
	else if (f->msg == DHCP_ACK)
		t->st.dhcp_ack_rx++;
	else if (f->msg == DHCP_NAK)
		t->st.dhcp_nak_rx++;
	/* RFC 2131 4.4: an OFFER answers a DISCOVER (SELECTING), an ACK or a
	 * NAK answers a REQUEST (the other states); any other is stray */
	if ((f->msg != DHCP_OFFER && f->msg != DHCP_ACK && f->msg != DHCP_NAK) ||
	    (f->msg == DHCP_OFFER) != (s == SURGE_HOST_SELECTING)) {
		t->st.dhcp_stray++;
		return 1;
	}
	switch (f->msg) {
	case DHCP_OFFER:
		if (f->server_id == 0 || ht_not_station4(f->yiaddr) != NULL) {
			t->st.dhcp_bad++;   /* RFC 2131 4.3.1: an offer names its server; an address */
			return 1;
		}
		h->ip = f->yiaddr;
		h->server = f->server_id;
		h->tries = 0;
		ht_state(t, i, SURGE_HOST_REQUESTING);
		dhcp_transmit(t, i, DHCP_REQUEST, 0);
		return 1;
	case DHCP_ACK:
		if (f->lease_s == 0 || ht_not_station4(f->yiaddr) != NULL) {
			t->st.dhcp_bad++;   /* a lease of 0 s, or no host's address: the host keeps asking */
			return 1;
		}
		lease_bind(t, i, f, in);
		return 1;
	default:   /* DHCP_NAK */
		/* RFC 2131 3.1 step 5 and 4.4.5: back to INIT; a host NAKed
		 * `retries` times since its last binding gives up (a NAK storm
		 * ends; an offer resets the request's tries, not these) */
		if (++h->naks >= t->conf.retries) {
			if (s != SURGE_HOST_REQUESTING)
				ht_event(t, i, SURGE_HOSTS_EV_LOST);
			give_up(t, i, SURGE_HOSTS_EV_GAVE_UP);
			return 1;
		}
		if (s != SURGE_HOST_REQUESTING) {
			lose(t, i);
			return 1;
		}
		h->tries = 0;
		discover(t, i);         /* a fresh transaction */
		return 1;
	}
}

/* the Ethernet header for hosts_mcast.c */
uint8_t *
proto_tx_eth(struct hosts_table *t, uint8_t *p, const uint8_t *dst, uint32_t i, uint16_t type)
{
	return eth(t, p, dst, i, type);
}

/* 1 when the frame was the hosts' (the caller frees it), 0 to leave it */
int
proto_frame(struct hosts_table *t, const struct hframe *f, const uint8_t *in)
{
	switch (f->kind) {
	case HF_ARP:
		return arp_in(t, f);
	case HF_ECHO:
		return echo_in(t, f, in);
	case HF_DHCP:
		return dhcp_in(t, f, in);
	case HF_DHCP_BAD:
		if (!t->conf.dhcp || f->relayed != ht_relay(t))
			return 0;
		t->st.dhcp_bad++;       /* garbage to the client port: counted, dropped */
		return 1;
	default:
		return 0;
	}
}
