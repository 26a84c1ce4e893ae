/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_server.c - a host table in server mode: a DHCPv4 server (RFC 2131
 * 4.3) whose pool is the table. Slot i is the address ip4 + i; its host
 * holds the client's MAC (server: the low 32 bits, xid: the high 16), its
 * state (IDLE free, SELECTING offered, BOUND leased) and one timer (an
 * offer held OFFER_HOLD_MS, a lease to its end). A client's slot is found
 * by its MAC through an open-addressing index allocated with the table;
 * addresses given back are reused from a free list. It exists as the
 * counterpart a speed bench needs (docs/hosts.md, docs/performance.md): it
 * answers DISCOVER, REQUEST (select, renew, rebind) and RELEASE, and
 * nothing else (no options beyond 1, 51, 54; no DECLINE, no ARP check of
 * an address before offering it).
 */
#include <errno.h>
#include <stdlib.h>

#include "hosts.h"

#define OFFER_HOLD_MS 10000      /* an offer not requested in this time goes back to the pool */
#define DHCPS_FRAME 342          /* Ethernet 14 + IPv4 20 + UDP 8 + a 300-byte BOOTP message */

uint64_t
server_client_mac(const struct host *h)
{
	return (uint64_t)(h->xid & 0xffff) << 32 | h->server;
}

static uint32_t
mac_hash(const struct hosts_table *t, uint64_t mac)
{
	return (uint32_t)((mac * 0x9e3779b97f4a7c15ull) >> 32) & t->midx_mask;
}

int
server_alloc(struct hosts_table *t)
{
	uint32_t cap = 1;

	while (cap < 2 * t->conf.count)
		cap <<= 1;
	t->midx = calloc(cap, sizeof(*t->midx));
	if (t->midx == NULL)
		return -ENOMEM;
	t->midx_mask = cap - 1;
	t->free_head = HOST_NIL;
	t->started = t->conf.count;   /* nothing to start: a server answers */
	t->bytes += (size_t)cap * sizeof(*t->midx);
	t->st.bytes_per_host = (t->bytes + t->conf.count - 1) / t->conf.count;
	return 0;
}

void
server_free(struct hosts_table *t)
{
	free(t->midx);
	t->midx = NULL;
}

/* the slot holding the client's MAC, or HOST_NIL; *at: its index cell */
static uint32_t
lookup(const struct hosts_table *t, uint64_t mac, uint32_t *at)
{
	uint32_t k = mac_hash(t, mac);

	for (; t->midx[k] != 0; k = (k + 1) & t->midx_mask)
		if (server_client_mac(&t->h[t->midx[k] - 1]) == mac) {
			*at = k;
			return t->midx[k] - 1;
		}
	*at = k;
	return HOST_NIL;
}

/* Linear probing's deletion: the cells after the hole that hash at or
 * before it move back into it, so no lookup stops early. */
static void
unindex(struct hosts_table *t, uint32_t i)
{
	uint32_t hole, k;

	if (lookup(t, server_client_mac(&t->h[i]), &hole) != i)
		return;
	t->midx[hole] = 0;
	for (k = (hole + 1) & t->midx_mask; t->midx[k] != 0; k = (k + 1) & t->midx_mask) {
		uint32_t home = mac_hash(t, server_client_mac(&t->h[t->midx[k] - 1]));

		/* the entry may move to the hole when its home is not in (hole, k] */
		if (((k - home) & t->midx_mask) >= ((k - hole) & t->midx_mask)) {
			t->midx[hole] = t->midx[k];
			t->midx[k] = 0;
			hole = k;
		}
	}
}

static void
slot_free(struct hosts_table *t, uint32_t i)
{
	unindex(t, i);
	ht_timer_stop(t, i);
	ht_state(t, i, SURGE_HOST_IDLE);
	t->h[i].lease_s = t->free_head;
	t->free_head = i;
}

/* A new slot for a client: a given-back address first, then one never used */
static uint32_t
slot_take(struct hosts_table *t, uint64_t mac, uint32_t at)
{
	uint32_t i;

	if (t->free_head != HOST_NIL) {
		i = t->free_head;
		t->free_head = t->h[i].lease_s;
	} else if (t->handed < t->conf.count) {
		i = t->handed++;
	} else {
		return HOST_NIL;
	}
	t->h[i].server = (uint32_t)mac;
	t->h[i].xid = (uint32_t)(mac >> 32);
	t->midx[at] = i + 1;
	return i;
}

/* A BOOTREPLY of type msg for the request f (to its chaddr; a NAK broadcast) */
static void
reply(struct hosts_table *t, const struct hframe *f, uint8_t msg, uint32_t yiaddr)
{
	uint8_t *p = proto_tx(t, DHCPS_FRAME + ht_tags_len(t));

	if (p == NULL)
		return;       /* counted (tx_nobufs): the client retransmits */
	memcpy(p, msg == DHCP_NAK ? (const uint8_t *)"\xff\xff\xff\xff\xff\xff" : f->chaddr, 6);
	memcpy(p + 6, t->conf.mac, 6);
	uint8_t *ip = ht_tags_put(t, p + 12);

	put16(ip, 0x0800);
	ip += 2;
	uint8_t *o = proto_bootp(ip, t->conf.server4, msg == DHCP_NAK ? 0xffffffffu : yiaddr, 2, f->xid, 300);
	uint8_t *b = o - 240;

	if (msg != DHCP_NAK)
		put32(b + 16, yiaddr);
	memcpy(b + 28, f->chaddr, 6);
	*o++ = 53; *o++ = 1; *o++ = msg;
	*o++ = 54; *o++ = 4; put32(o, t->conf.server4); o += 4;
	if (msg != DHCP_NAK) {
		*o++ = 51; *o++ = 4; put32(o, t->conf.lease_s); o += 4;
		if (t->conf.net4_len != 0) {
			*o++ = 1; *o++ = 4; put32(o, ~0u << (32 - t->conf.net4_len)); o += 4;
		}
	}
	*o = 255;
	if (msg == DHCP_OFFER)
		t->st.dhcps_offer_tx++;
	else if (msg == DHCP_ACK)
		t->st.dhcps_ack_tx++;
	else
		t->st.dhcps_nak_tx++;
}

static void
request(struct hosts_table *t, const struct hframe *f, uint32_t i)
{
	uint32_t want = f->req_ip != 0 ? f->req_ip : f->ciaddr;

	t->st.dhcps_request_rx++;
	if (f->server_id != 0 && f->server_id != t->conf.server4) {
		/* the client chose another server (RFC 2131 4.3.2): its offer here goes back */
		if (i != HOST_NIL && t->h[i].state == SURGE_HOST_SELECTING)
			slot_free(t, i);
		return;
	}
	if (i == HOST_NIL || want != t->conf.ip4 + i) {
		/* no binding of this client's for that address: NAK it when
		 * the client asked us, or the address is in our pool (4.3.2) */
		if (f->server_id != 0 || (want - t->conf.ip4) < t->conf.count)
			reply(t, f, DHCP_NAK, 0);
		return;
	}
	ht_state(t, i, SURGE_HOST_BOUND);
	t->h[i].bound_ms = t->now;
	if (t->conf.lease_s == UINT32_MAX)
		ht_timer_stop(t, i);
	else
		ht_timer_set(t, i, HL_LONG, t->now + t->conf.lease_s * 1000u);
	reply(t, f, DHCP_ACK, want);
}

/* 1 when the frame was the server's (the caller frees it), 0 to leave it */
int
server_frame(struct hosts_table *t, const struct hframe *f, const uint8_t *in)
{
	(void)in;
	if (f->kind == HF_DHCP_REQ_BAD) {
		t->st.dhcp_bad++;
		return 1;
	}
	if (f->kind != HF_DHCP_REQ)
		return 0;
	uint32_t at, i = lookup(t, mac_get(f->chaddr), &at);

	switch (f->msg) {
	case DHCP_DISCOVER:
		t->st.dhcps_discover_rx++;
		if (i == HOST_NIL) {
			i = slot_take(t, mac_get(f->chaddr), at);
			if (i == HOST_NIL) {
				t->st.dhcps_no_address++;   /* RFC 2131 4.3.1: no address, no answer */
				return 1;
			}
		}
		if (t->h[i].state != SURGE_HOST_BOUND) {
			ht_state(t, i, SURGE_HOST_SELECTING);
			ht_timer_set(t, i, HL_SHORT, t->now + OFFER_HOLD_MS);
		}
		reply(t, f, DHCP_OFFER, t->conf.ip4 + i);
		return 1;
	case DHCP_REQUEST:
		request(t, f, i);
		return 1;
	case DHCP_RELEASE:
		t->st.dhcps_release_rx++;
		if (i != HOST_NIL && t->h[i].state == SURGE_HOST_BOUND && f->ciaddr == t->conf.ip4 + i)
			slot_free(t, i);
		return 1;
	default:
		t->st.dhcp_stray++;          /* DECLINE, INFORM, or a server's message type */
		return 1;
	}
}

/* an offer not taken, or a lease that ended: the address is the pool's again */
void
server_timer(struct hosts_table *t, uint32_t i)
{
	slot_free(t, i);
}
