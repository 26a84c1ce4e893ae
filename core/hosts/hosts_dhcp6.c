/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_dhcp6.c - the emulated hosts' DHCPv6 client (RFC 8415,
 * docs/hosts.md "DHCPv6"): SOLICIT to All_DHCP_Relay_Agents_and_Servers
 * from the host's link-local address once DAD assigned it, the first
 * ADVERTISE that grants every IA asked for (IA_NA, IA_PD) taken, REQUEST,
 * bound on the REPLY (or on a REPLY to the SOLICIT with rapid commit, 18.2.1);
 * RENEW at T1, REBIND at T2, the binding lost at the end of its valid
 * lifetime (the host solicits again); RELEASE on request. Retransmissions
 * as DHCPv4's (rto doubled to 64 s, `retries` transmissions an exchange).
 *
 * A host's identifier is a DUID-LL of its MAC (RFC 8415 11.4: type 3,
 * hardware type 1), its IAIDs the last four bytes of its MAC; the server's
 * reply finds its host by the MAC in the client identifier, no hashing.
 * One server per table: the last to advertise is the one requests name.
 */
#include <string.h>

#include "hosts.h"

#define NOBUF_RETRY_MS 10
#define D6_PLEN_MAX 220          /* UDP 8 + message 4 + the options a host sends at most (a 130-byte server id) */


static uint8_t *
opt(uint8_t *o, uint16_t code, uint16_t len)
{
	put16(o, code);
	put16(o + 2, len);
	return o + 4;
}

static uint32_t
iaid(const struct hosts_table *t, uint32_t i)
{
	uint8_t m[6];

	ht_mac(t, i, m);
	return get32(m + 2);
}

static int
has_lease(const struct hd6 *d)
{
	return d->state == D6_BOUND || d->state == D6_RENEW || d->state == D6_REBIND;
}

/* host i's message of type msg: the IAs it asks for, with the address and
 * prefix it holds (or was offered) past a SOLICIT */
static int
d6_send(struct hosts_table *t, uint32_t i, uint8_t msg)
{
	static const uint8_t servers[16] = { 0xff, 0x02, [13] = 1, [15] = 2 };
	static const uint8_t smac[6] = { 0x33, 0x33, 0, 1, 0, 2 };
	struct hd6 *d = &t->d6[i];
	uint8_t ll[16], b[D6_PLEN_MAX], *o = b + 8 + 4;
	uint32_t elapsed = (t->now - d->since_ms) / 10;
	int held = msg != DHCP6_SOLICIT;

	memset(b, 0, sizeof(b));
	b[8] = msg;
	b[9] = (uint8_t)(d->xid >> 16);
	b[10] = (uint8_t)(d->xid >> 8);
	b[11] = (uint8_t)d->xid;
	o = opt(o, 1, 10);               /* client identifier: DUID-LL, Ethernet */
	put16(o, 3);
	put16(o + 2, 1);
	ht_mac(t, i, o + 4);
	o += 10;
	o = opt(o, 8, 2);                /* elapsed time, hundredths (21.9) */
	put16(o, d->tries == 0 ? 0 : elapsed > 0xffff ? 0xffff : (uint16_t)elapsed);
	o += 2;
	if ((msg == DHCP6_REQUEST || msg == DHCP6_RENEW || msg == DHCP6_RELEASE) && t->v6.sid_len > 0) {
		o = opt(o, 2, t->v6.sid_len);
		memcpy(o, t->v6.sid, t->v6.sid_len);
		o += t->v6.sid_len;
	}
	if (t->conf.dhcp6 & 1) {
		o = opt(o, 3, held ? 12 + 28 : 12);
		put32(o, iaid(t, i));
		o += 12;                      /* T1, T2 0: the server's choice */
		if (held) {
			o = opt(o, 5, 24);
			memcpy(o, d->addr, 16);
			o += 24;
		}
	}
	if (t->conf.dhcp6 & 2) {
		o = opt(o, 25, held ? 12 + 29 : 12);
		put32(o, iaid(t, i));
		o += 12;
		if (held) {
			o = opt(o, 26, 25);
			o[8] = d->pd_len;
			memcpy(o + 9, d->pd, 16);
			o += 25;
		}
	}
	if (msg == DHCP6_SOLICIT && (t->conf.dhcp6 & 4))
		o = opt(o, 14, 0);
	uint32_t plen = (uint32_t)(o - b);

	nd_addr(t, i, H6_LL, ll);
	uint8_t *u = nd_frame6(t, i, smac, ll, servers, plen, 1, 17);

	if (u == NULL)
		return -1;
	put16(b, 546);
	put16(b + 2, 547);
	put16(b + 4, (uint16_t)plen);
	memcpy(u, b, plen);
	nd_sum6(u, 6);
	return 0;
}

static void
d6_state(struct hosts_table *t, uint32_t i, uint8_t s)
{
	struct hd6 *d = &t->d6[i];
	int had = has_lease(d);

	if (d->state == D6_SOLICIT || d->state == D6_REQUEST)
		t->v6.d6_open--;
	if (s == D6_SOLICIT || s == D6_REQUEST)
		t->v6.d6_open++;
	d->state = s;
	if (had && !has_lease(d))
		t->st.hosts6_dhcp--;
	else if (!had && has_lease(d))
		t->st.hosts6_dhcp++;
}

static void
exchange(struct hosts_table *t, uint32_t i, uint8_t state)
{
	struct hd6 *d = &t->d6[i];

	d6_state(t, i, state);
	d->xid = ht_rand(t) & 0xffffff;
	d->since_ms = t->now;
	d->tries = 0;
	if (state == D6_SOLICIT) {
		memset(d->addr, 0, 16);     /* nothing held or offered */
		memset(d->pd, 0, 16);
		d->pd_len = 0;
	}
}

/* one transmission of the host's exchange, the next try's timer */
static void
transmit(struct hosts_table *t, uint32_t i, uint8_t msg)
{
	struct hd6 *d = &t->d6[i];

	if (d6_send(t, i, msg) != 0) {
		ht_d6_timer_set(t, i, t->now + NOBUF_RETRY_MS);
		return;
	}
	if (d->tries > 0)
		t->st.dhcp6_retransmits++;
	if (msg == DHCP6_SOLICIT)
		t->st.dhcp6_solicit_tx++;
	else if (msg == DHCP6_RELEASE)
		t->st.dhcp6_release_tx++;
	else
		t->st.dhcp6_request_tx++;
	if (d->tries < 255)
		d->tries++;
	ht_d6_timer_set(t, i, t->now + proto_backoff(t, d->tries));
}

void
d6_start(struct hosts_table *t, uint32_t i)
{
	exchange(t, i, D6_SOLICIT);
	ht_d6_timer_set(t, i, t->now);   /* sent once the link-local address is the host's */
}

static void
give_up(struct hosts_table *t, uint32_t i)
{
	d6_state(t, i, D6_GAVE_UP);
	memset(t->d6[i].addr, 0, 16);       /* what an advertisement offered is not the host's */
	memset(t->d6[i].pd, 0, 16);
	t->d6[i].pd_len = 0;
	ht_d6_timer_stop(t, i);
	t->st.dhcp6_gave_up++;
	ht_event(t, i, SURGE_HOSTS_EV_GAVE_UP);
}

static uint64_t
ms_of(uint32_t s)
{
	return (uint64_t)s * 1000;
}

void
d6_timer(struct hosts_table *t, uint32_t i)
{
	struct hd6 *d = &t->d6[i];
	const struct host6 *h = &t->h6[i];
	uint32_t since = t->now - d->since_ms;

	switch (d->state) {
	case D6_SOLICIT:
	case D6_REQUEST:
		if (!(h->ok & H6_LL)) {
			if (h->tent & H6_LL)
				ht_d6_timer_set(t, i, t->now + t->conf.probe_ms);   /* DAD still going */
			else
				give_up(t, i);   /* no link-local address (a duplicate): no DHCPv6 either */
			return;
		}
		if (d->tries >= t->conf.retries) {
			give_up(t, i);
			return;
		}
		transmit(t, i, d->state == D6_SOLICIT ? DHCP6_SOLICIT : DHCP6_REQUEST);
		return;
	case D6_BOUND:
		{                       /* T1: renew with the server */
			uint32_t bound = d->since_ms;

			exchange(t, i, D6_RENEW);
			d->since_ms = bound;
		}
		/* fall through */
	case D6_RENEW:
	case D6_REBIND:
		if (d->valid_s != UINT32_MAX && since >= ms_of(d->valid_s)) {
			t->st.dhcp6_lost++;
			ht_event(t, i, SURGE_HOSTS_EV_LOST);
			exchange(t, i, D6_SOLICIT);
			d6_timer(t, i);
			return;
		}
		if (d->state == D6_RENEW && since >= ms_of(d->t2_s)) {
			d6_state(t, i, D6_REBIND);
			d->tries = 0;
		}
		if (d6_send(t, i, d->state == D6_RENEW ? DHCP6_RENEW : DHCP6_REBIND) != 0) {
			ht_d6_timer_set(t, i, t->now + NOBUF_RETRY_MS);
			return;
		}
		t->st.dhcp6_request_tx++;
		if (d->tries > 0)
			t->st.dhcp6_retransmits++;
		if (d->tries < 255)
			d->tries++;
		{
			/* the next try, not past T2 (renewing) or the valid lifetime's end */
			uint64_t next = since + proto_backoff(t, d->tries);
			uint64_t edge = d->state == D6_RENEW ? ms_of(d->t2_s) : ms_of(d->valid_s);

			ht_d6_timer_set(t, i, d->since_ms + (uint32_t)(next < edge ? next : edge));
		}
		return;
	case D6_RELEASED:
		if (d6_send(t, i, DHCP6_RELEASE) != 0) {
			ht_d6_timer_set(t, i, t->now + NOBUF_RETRY_MS);
			return;
		}
		t->st.dhcp6_release_tx++;
		t->v6.d6_owe--;
		return;
	default:
		return;
	}
}

/* an IA's address or prefix a host can take: a lease of some lifetime, the
 * preferred one within it (RFC 8415 21.6, 21.22: else discarded), and no
 * multicast, unspecified or loopback address (the host would answer for it) */
static int
usable(const struct hframe_ia *ia)
{
	static const uint8_t zero[15];

	return ia->present && ia->addr != NULL && ia->status == 0 && ia->valid != 0 && ia->pref <= ia->valid &&
	       ia->addr[0] != 0xff && !(memcmp(ia->addr, zero, 15) == 0 && ia->addr[15] <= 1);
}

/* the IAs the table asks for, each granted (usable) */
static int
granted(const struct hosts_table *t, const struct hframe *f)
{
	if ((t->conf.dhcp6 & 1) && !usable(&f->na))
		return 0;
	if ((t->conf.dhcp6 & 2) && (!usable(&f->pd) || f->pd.plen == 0 || f->pd.plen > 128))
		return 0;
	return 1;
}

static void
take(struct hosts_table *t, uint32_t i, const struct hframe *f)
{
	struct hd6 *d = &t->d6[i];

	if (t->conf.dhcp6 & 1)
		memcpy(d->addr, f->na.addr, 16);
	if (t->conf.dhcp6 & 2) {
		memcpy(d->pd, f->pd.addr, 16);
		d->pd_len = f->pd.plen;
	}
}

static uint32_t
min_nz(uint32_t a, uint32_t b)
{
	return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

/* a REPLY that binds: T1 and T2 the IAs' smallest (the server's; when it
 * leaves them to the client, 0.5 and 0.8 of the preferred lifetime, 21.4),
 * the valid lifetime the smallest */
static void
bind(struct hosts_table *t, uint32_t i, const struct hframe *f)
{
	struct hd6 *d = &t->d6[i];
	int renewed = d->state == D6_RENEW || d->state == D6_REBIND;
	const struct hframe_ia *na = (t->conf.dhcp6 & 1) ? &f->na : NULL, *pd = (t->conf.dhcp6 & 2) ? &f->pd : NULL;
	uint32_t t1 = min_nz(na ? na->t1 : 0, pd ? pd->t1 : 0), t2 = min_nz(na ? na->t2 : 0, pd ? pd->t2 : 0);
	uint32_t pref = min_nz(na ? na->pref : 0, pd ? pd->pref : 0);
	uint32_t valid = min_nz(na ? na->valid : 0, pd ? pd->valid : 0);

	take(t, i, f);
	if (t1 == 0 || t1 == UINT32_MAX)
		t1 = pref == UINT32_MAX ? UINT32_MAX : pref / 2;
	if (t2 == 0 || t2 == UINT32_MAX || t2 < t1)
		t2 = pref == UINT32_MAX ? UINT32_MAX : (uint32_t)((uint64_t)pref * 4 / 5);
	if (t2 < t1)
		t2 = t1;
	d->t1_s = t1;
	d->t2_s = t2;
	d->valid_s = valid;
	d->since_ms = t->now;
	d->tries = 0;
	d6_state(t, i, D6_BOUND);
	ht_event(t, i, renewed ? SURGE_HOSTS_EV_RENEWED : SURGE_HOSTS_EV_BOUND);
	if (t1 == UINT32_MAX)
		ht_d6_timer_stop(t, i);
	else
		ht_d6_timer_set(t, i, t->now + (t1 > 0x1fffff ? 0x7fffffffu : t1 * 1000));
}

/* 1 when the frame was the hosts' (the caller frees it), 0 to leave it */
int
d6_frame(struct hosts_table *t, const struct hframe *f)
{
	if (t->d6 == NULL)
		return 0;
	if (f->kind == HF_DHCP6_BAD) {
		t->st.dhcp6_bad++;
		return 1;
	}
	if (f->kind != HF_DHCP6)
		return 0;
	uint32_t i = ht_by_mac(t, f->d6_mac);

	if (i == HOST_NIL)
		return 0;
	struct hd6 *d = &t->d6[i];
	uint8_t s = d->state;

	if (f->d6_xid != d->xid || (s != D6_SOLICIT && s != D6_REQUEST && s != D6_RENEW && s != D6_REBIND) ||
	    (f->d6_msg != DHCP6_ADVERTISE && f->d6_msg != DHCP6_REPLY)) {
		t->st.dhcp6_stray++;
		return 1;
	}
	if (f->d6_msg == DHCP6_ADVERTISE)
		t->st.dhcp6_advertise_rx++;
	else
		t->st.dhcp6_reply_rx++;
	if (f->d6_sid == NULL) {
		t->st.dhcp6_bad++;            /* 16.3, 16.10: a server's message names it */
		return 1;
	}
	if (f->d6_status != 0 || !granted(t, f)) {
		/* NoAddrsAvail, NoPrefixAvail, an IA missing: ignored (18.2.9);
		 * the host keeps asking until its retries run out. NoBinding to a
		 * renewal: the binding is gone, solicit again (18.2.10.1) */
		t->st.dhcp6_noaddr++;
		if ((s == D6_RENEW || s == D6_REBIND) && (f->na.status == 3 || f->pd.status == 3)) {
			t->st.dhcp6_lost++;
			ht_event(t, i, SURGE_HOSTS_EV_LOST);
			exchange(t, i, D6_SOLICIT);
			ht_d6_timer_set(t, i, t->now);
		}
		return 1;
	}
	if (f->d6_msg == DHCP6_ADVERTISE) {
		if (s != D6_SOLICIT) {
			t->st.dhcp6_stray++;
			return 1;
		}
		memcpy(t->v6.sid, f->d6_sid, f->d6_sid_len);
		t->v6.sid_len = f->d6_sid_len;
		take(t, i, f);
		exchange(t, i, D6_REQUEST);
		transmit(t, i, DHCP6_REQUEST);
		return 1;
	}
	if (s == D6_SOLICIT && !f->d6_rapid) {
		t->st.dhcp6_stray++;          /* a REPLY to a SOLICIT without rapid commit */
		return 1;
	}
	if (s == D6_SOLICIT) {
		memcpy(t->v6.sid, f->d6_sid, f->d6_sid_len);
		t->v6.sid_len = f->d6_sid_len;
	}
	bind(t, i, f);
	return 1;
}

/* RELEASE for a host holding a binding, sent at the next poll: 1, else 0 */
int
d6_release(struct hosts_table *t, uint32_t i)
{
	struct hd6 *d = &t->d6[i];

	if (!has_lease(d))
		return 0;
	exchange(t, i, D6_RELEASED);
	t->v6.d6_owe++;
	ht_event(t, i, SURGE_HOSTS_EV_RELEASED);
	ht_d6_timer_set(t, i, t->now);
	return 1;
}
