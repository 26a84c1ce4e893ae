/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_poll.c - the emulated hosts' FFI entry points: make a table, poll
 * it (receive a burst, take the hosts' frames, fire the due timers, start
 * what the rate and the cap on open transactions allow, send what that
 * wrote), read its counters, a host and the events, release leases.
 *
 * A table is written by the lcore that made it only; another thread reads
 * its counters with plain loads, as the TCP engine's are read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "hosts.h"

#define STARTS_PER_POLL 256      /* most hosts one poll starts: a late schedule catches up in bursts */
#define TIMERS_PER_POLL 1024     /* most timers one poll fires: the rest at the next */
#define DHCP_FRAME_ROOM 350      /* the largest frame a host writes but an echo: a QinQ-tagged DHCP one */

/* The first address of first .. first + n - 1 that is no host's (a
 * multicast one, 224.0.0.0/4, or the broadcast address), 0 when none is:
 * a host there would answer ARP for a group or send from it */
static uint32_t
not_unicast(uint32_t first, uint32_t n)
{
	uint64_t last = (uint64_t)first + n - 1;

	if (first >= 0xe0000000u && first <= 0xefffffffu)
		return first;
	if (first < 0xe0000000u && last >= 0xe0000000u)
		return 0xe0000000u;
	return last >= 0xffffffffu ? 0xffffffffu : 0;
}

/* not_unicast's refusal: what (the hosts' addresses, the pool, the server) */
static int
unicast_check(uint32_t first, uint32_t n, const char *what)
{
	uint32_t a = not_unicast(first, n);

	if (a == 0)
		return 0;
	return rt_error(-EINVAL, "surge_hosts_new: %s %u.%u.%u.%u..%u.%u.%u.%u hold %u.%u.%u.%u, no host's address "
			"(multicast 224.0.0.0/4 or broadcast)", what, first >> 24, first >> 16 & 255, first >> 8 & 255,
			first & 255, (first + n - 1) >> 24, (first + n - 1) >> 16 & 255, (first + n - 1) >> 8 & 255,
			(first + n - 1) & 255, a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255);
}

static int
conf_check(const struct surge_hosts_conf *c)
{
	int rc;

	if (c->count == 0 || c->count > SURGE_HOSTS_COUNT_MAX)
		return rt_error(-EINVAL, "surge_hosts_new: count %u: 1..%u", c->count, SURGE_HOSTS_COUNT_MAX);
	if (c->vlan > 4094)
		return rt_error(-EINVAL, "surge_hosts_new: vlan %u: 0 (untagged) or 1..4094", c->vlan);
	if (c->outer_vlan > 4094 || (c->outer_vlan != 0 && (c->vlan == 0 || (c->outer_tpid != 0x88a8 &&
							 c->outer_tpid != 0x8100))))
		return rt_error(-EINVAL, "surge_hosts_new: outer_vlan %u (tpid 0x%04x): 1..4094 with an inner vlan, "
				"tpid 0x88a8 or 0x8100", c->outer_vlan, c->outer_tpid);
	if (c->mac[0] & 1)
		return rt_error(-EINVAL, "surge_hosts_new: the MAC %02x:%02x:%02x:%02x:%02x:%02x is multicast",
				c->mac[0], c->mac[1], c->mac[2], c->mac[3], c->mac[4], c->mac[5]);
	uint64_t mac0 = mac_get(c->mac);

	/* the range keeps the first byte: past it, a host's MAC would be a
	 * group address (02:ff:ff:ff:ff:ff + 1 is 03:00:00:00:00:00) */
	if ((mac0 + c->count - 1) >> 40 != mac0 >> 40)
		return rt_error(-EINVAL, "surge_hosts_new: %u MACs from %02x:%02x:%02x:%02x:%02x:%02x run past "
				"%02x:ff:ff:ff:ff:ff", c->count, c->mac[0], c->mac[1], c->mac[2], c->mac[3],
				c->mac[4], c->mac[5], c->mac[0]);
	if (c->server) {
		/* a DHCPv4 server's pool (hosts_server.c): ip4 .. ip4 + count - 1 */
		if (c->dhcp || c->dad || c->ip4 == 0 || c->server4 == 0)
			return rt_error(-EINVAL, "surge_hosts_new: a DHCP server needs its pool (ip4), its address "
					"(server4), and no dhcp or dad");
		if (c->lease_s == 0 || (c->lease_s > 2000000 && c->lease_s != UINT32_MAX))
			return rt_error(-EINVAL, "surge_hosts_new: lease_s %u: 1..2000000 or infinite (%u)",
					c->lease_s, UINT32_MAX);
		if (c->net4_len > 32)
			return rt_error(-EINVAL, "surge_hosts_new: the server's prefix length %u: 0..32", c->net4_len);
		if ((uint64_t)c->ip4 + c->count - 1 > 0xffffffffu)
			return rt_error(-EINVAL, "surge_hosts_new: a pool of %u addresses from %u.%u.%u.%u passes "
					"255.255.255.255", c->count, c->ip4 >> 24, c->ip4 >> 16 & 255, c->ip4 >> 8 & 255,
					c->ip4 & 255);
		if ((rc = unicast_check(c->ip4, c->count, "the pool")) != 0 ||
		    (rc = unicast_check(c->server4, 1, "the server's address")) != 0)
			return rc;
	} else if (c->dhcp) {
		if (c->ip4 != 0 || c->dad)
			return rt_error(-EINVAL, "surge_hosts_new: DHCP hosts take their address from the server "
					"(no ip4, no dad)");
		if (c->net4_len < 12 || c->net4_len > 32)
			return rt_error(-EINVAL, "surge_hosts_new: the DHCP subnet's prefix length %u: 12..32",
					c->net4_len);
		if (c->retries == 0 || c->retries > 16 || c->rto_ms < 10 || c->rto_ms > 64000)
			return rt_error(-EINVAL, "surge_hosts_new: retries %u (1..16), rto_ms %u (10..64000)",
					c->retries, c->rto_ms);
	} else {
		if (c->ip4 == 0 && !c->ip6)
			return rt_error(-EINVAL, "surge_hosts_new: no address (ip4), no dhcp and no ip6");
		if ((uint64_t)c->ip4 + c->count - 1 > 0xffffffffu)
			return rt_error(-EINVAL, "surge_hosts_new: %u addresses from %u.%u.%u.%u pass 255.255.255.255",
					c->count, c->ip4 >> 24, c->ip4 >> 16 & 255, c->ip4 >> 8 & 255, c->ip4 & 255);
		if (c->ip4 != 0 && (rc = unicast_check(c->ip4, c->count, "the hosts' addresses")) != 0)
			return rc;
	}
	if (c->dhcp6 && (!c->ip6 || (c->dhcp6 & 3) == 0 || c->dhcp6 > 7))
		return rt_error(-EINVAL, "surge_hosts_new: dhcp6 %u: with ip6, IA_NA (1) and/or IA_PD (2), rapid commit (4)",
				c->dhcp6);
	if (c->dhcp6 && (c->retries == 0 || c->retries > 16 || c->rto_ms < 10 || c->rto_ms > 64000))
		return rt_error(-EINVAL, "surge_hosts_new: retries %u (1..16), rto_ms %u (10..64000)", c->retries, c->rto_ms);
	if (c->ip6 && (c->dad6 > 16 || c->rs > 16))
		return rt_error(-EINVAL, "surge_hosts_new: dad6 %u, rs %u: 0..16", c->dad6, c->rs);
	if (c->ip6_addr[0] != 0) {
		const uint8_t *a = c->ip6_addr;
		uint32_t low = get32(a + 12);

		if (!c->ip6 || a[0] == 0xff)
			return rt_error(-EINVAL, "surge_hosts_new: ip6_addr: %s", !c->ip6 ? "without ip6" :
					"a multicast address is no host's");
		if ((uint64_t)low + c->count - 1 > 0xffffffffu)
			return rt_error(-EINVAL, "surge_hosts_new: %u IPv6 addresses from ip6_addr carry past its "
					"last 32 bits", c->count);
	}
	if (c->probe_ms < 1 || c->probe_ms > 60000)
		return rt_error(-EINVAL, "surge_hosts_new: probe_ms %u: 1..60000", c->probe_ms);
	if (!(c->rate >= 0) || c->rate > 1e8)
		return rt_error(-EINVAL, "surge_hosts_new: rate %g hosts/s: 0 (unpaced) .. 1e8", c->rate);
	return 0;
}

int
surge_hosts_check(const struct surge_hosts_conf *conf, const struct surge_hosts_dhcp4 *o)
{
	uint32_t total;
	uint8_t own;
	int rc;

	if (conf == NULL)
		return rt_error(-EINVAL, "surge_hosts_new: no configuration");
	if ((rc = conf_check(conf)) != 0)
		return rc;
	return o == NULL ? 0 : dopt_check(conf, o, &total, &own);
}

/* everything a table holds, freed (a table not made, or the run's end) */
static void
table_free(struct hosts_table *t)
{
	dopt_free(t);
	ping_free(t);
	server_free(t);
	ht_free(t);
	free(t);
}

int
surge_hosts_new(const struct surge_hosts_conf *conf)
{
	struct runtime *r = rt();
	struct hosts_table *t;
	int id, rc;

	if (conf == NULL)
		return rt_error(-EINVAL, "surge_hosts_new: no configuration");
	if ((rc = conf_check(conf)) != 0)
		return rc;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return rt_error(-ENOMEM, "out of memory for a table of hosts");
	t->conf = *conf;
	t->tx.sent = &t->st.tx_frames;
	t->tx.refused = &t->st.tx_full;
	if (t->conf.outstanding == 0 || t->conf.outstanding > t->conf.count)
		t->conf.outstanding = t->conf.count;
	t->conf.net4 &= t->conf.net4_len == 0 ? 0 : ~0u << (32 - t->conf.net4_len);
	if (ht_alloc(t) != 0 || (t->conf.server && server_alloc(t) != 0) || dopt_alloc(t) != 0) {
		table_free(t);
		return rt_error(-ENOMEM, "out of memory for a table of %u hosts", conf->count);
	}
	t->tsc0 = rte_rdtsc();
	t->ms_per_cyc = 1e3 / (double)rt_hz();
	t->rng = (uint32_t)(t->tsc0 ^ (t->tsc0 >> 32)) | 1;
	t->owner = (int32_t)lcore_self();
	id = registry_add(&r->nhosts, SURGE_HOSTS_MAX, r->hosts, sizeof(t), &t, "host tables");
	if (id < 0)
		table_free(t);   /* a server's pool too: no table, nothing kept */
	return id;
}

static struct hosts_table *
get(int id)
{
	return registry_holds(RT_REGISTRY_SIZE(nhosts), id) ? rt()->hosts[id] : NULL;
}

static struct hosts_table *
own(int id, int *rc)
{
	struct hosts_table *t = get(id);

	*rc = owner_only(t, t != NULL ? t->owner : -1, "host table", id);
	return *rc == 0 ? t : NULL;
}

int
surge_hosts_dhcp4(int id, const struct surge_hosts_dhcp4 *o)
{
	int rc = 0;
	struct hosts_table *t = own(id, &rc);

	return t == NULL ? rc : dopt_set(t, o);
}

/* the hosts the schedule has due: rate per second since the table was
 * made (all at once unpaced), DHCP ones while fewer than `outstanding`
 * transactions are open */
static void
starts(struct hosts_table *t)
{
	uint64_t due = t->conf.count;
	/* a static host without probes or announcements sends nothing when it
	 * starts: a million are bound in a few polls */
	uint32_t k = 0, max = t->conf.dhcp || t->conf.dad || t->conf.announce || t->h6 != NULL ? STARTS_PER_POLL : 65536;
	int v4 = t->conf.dhcp || t->conf.ip4 != 0;   /* an IPv6-only table has no IPv4 side to start */

	if (proto_relay_hold(t))
		return;

	if (t->conf.rate > 0) {
		double d = t->conf.rate * (double)t->now / 1e3 + 1;

		due = d < (double)t->conf.count ? (uint64_t)d : t->conf.count;
	}
	while (t->started < due && k < max && (!t->conf.dhcp || t->open < t->conf.outstanding) &&
	       (t->d6 == NULL || t->v6.d6_open < t->conf.outstanding)) {
		if (v4)
			proto_start(t, t->started);
		if (t->h6 != NULL)
			nd_start(t, t->started);
		if (t->d6 != NULL)
			d6_start(t, t->started);
		t->started++;
		k++;
	}
}

static void
timers(struct hosts_table *t, int list, uint32_t *budget)
{
	struct hlist *l = &t->lists[list];

	while (l->head != HOST_NIL && *budget > 0) {
		uint32_t i = l->head;

		if ((int32_t)(t->now - ht_tnode(t, list == HL_D6 ? 2 : list == HL6, i)->due) < 0)
			break;
		if (list == HL6 || list == HL_D6) {
			ht_side_timer_stop(t, list == HL6 ? 1 : 2, i);
			if (list == HL6)
				nd_timer(t, i);
			else
				d6_timer(t, i);
		} else {
			ht_timer_stop(t, i);
			if (t->conf.server)
				server_timer(t, i);
			else
				proto_timer(t, i);
		}
		(*budget)--;
	}
}

static int
setup_tx(struct hosts_table *t, uint16_t port, uint16_t txq, struct surge_burst *tx)
{
	struct pool_state *p = pool_at(rt(), tx->pool);

	if (p == NULL)
		return rt_error(-EINVAL, "host table: the tx burst has no pool to allocate from");
	t->room = rte_pktmbuf_data_room_size(p->mp) - RTE_PKTMBUF_HEADROOM;
	/* the script's DHCP options (dopt_set) may make longer messages */
	uint32_t need = t->dopt_room > DHCP_FRAME_ROOM ? t->dopt_room : DHCP_FRAME_ROOM;

	if (t->room < need)
		return rt_error(-EMSGSIZE, "host table: the pool's mbufs hold %u bytes, a host's frames %u",
				t->room, need);
	tx_writer_start(&t->tx, tx, port, txq);
	t->now = (uint32_t)((double)(rte_rdtsc() - t->tsc0) * t->ms_per_cyc);
	return 0;
}

/* A frame is a table's only on the table's tags, both VLAN ids: the one
 * check before any protocol sees it. The outer TPID is not compared: a
 * driver that strips a tag and puts it back (DPDK's af_packet) writes
 * 0x8100 whatever the wire had. */
static int
tags_match(const struct hosts_table *t, const struct hframe *f)
{
	return f->vlan == t->conf.vlan && f->outer == t->conf.outer_vlan;
}

/* One turn of table t: take its frames from rx (received here when recv),
 * leave the rest in rx, fire the due timers, start what is due, send. */
static int
turn(struct hosts_table *t, uint16_t port, uint16_t rxq, uint16_t txq, struct surge_burst *rx,
     struct surge_burst *tx, int recv)
{
	struct rx_split sp = { .keep = 0, .ndone = 0 };
	uint32_t keep, budget = TIMERS_PER_POLL;
	int rc, n;

	if ((rc = burst_check(rx)) != 0 || (rc = burst_check(tx)) != 0)
		return rc;
	if ((rc = setup_tx(t, port, txq, tx)) != 0)
		return rc;
	n = recv ? surge_rx_recv(port, rxq, rx) : (int)rx->n;
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		struct hframe f;
		enum hframe_kind k = hframe_read(rx->data[i], rx->len[i], &f);

		if (k == HF_BAD)
			t->st.rx_bad++;
		int taken = tags_match(t, &f) &&
			    (t->conf.server ? server_frame(t, &f, rx->data[i])
					    : proto_frame(t, &f, rx->data[i]) || mcast_frame(t, &f, rx->data[i], rx->len[i]) ||
					      nd_frame(t, &f, rx->data[i]) || d6_frame(t, &f) ||
					      ping_frame(t, &f, rx->data[i]));

		if (taken)
			t->st.rx_frames++;
		else
			t->st.rx_other++;
		rx_split_one(&sp, rx, i, taken);
	}
	keep = rx_split_end(&sp, rx);
	timers(t, HL_SHORT, &budget);
	timers(t, HL_LONG, &budget);
	timers(t, HL6, &budget);
	timers(t, HL_D6, &budget);
	mcast_timers(t);
	ping_poll(t);
	starts(t);
	tx_writer_flush(&t->tx);
	t->tx.b = NULL;
	return t->tx.err != 0 ? t->tx.err : (int)keep;
}

int
surge_hosts_poll(int id, uint16_t port, uint16_t rxq, uint16_t txq, struct surge_burst *rx,
		 struct surge_burst *tx)
{
	int rc = 0;
	struct hosts_table *t = own(id, &rc);

	return t == NULL ? rc : turn(t, port, rxq, txq, rx, tx, 1);
}

int
surge_hosts_take(int id, uint16_t port, uint16_t txq, struct surge_burst *rx, struct surge_burst *tx)
{
	int rc = 0;
	struct hosts_table *t = own(id, &rc);

	return t == NULL ? rc : turn(t, port, 0, txq, rx, tx, 0);
}

int
surge_hosts_stats(int id, struct surge_hosts_stats *out)
{
	struct hosts_table *t = get(id);

	if (t == NULL)
		return rt_error(-EINVAL, "no host table %d", id);
	memcpy(out, &t->st, sizeof(*out));
	return 0;
}

int
surge_hosts_conf_get(int id, struct surge_hosts_conf *out)
{
	struct hosts_table *t = get(id);

	if (t == NULL)
		return rt_error(-EINVAL, "no host table %d", id);
	*out = t->conf;
	return 0;
}

int
surge_hosts_events(int id, struct surge_hosts_event *out, uint32_t max)
{
	int rc = 0;
	struct hosts_table *t = own(id, &rc);
	uint32_t n = 0;

	if (t == NULL)
		return rc;
	while (n < max && t->ev_head != t->ev_tail)
		out[n++] = t->ev[t->ev_head++ & (t->ev_cap - 1)];
	return (int)n;
}

int
surge_hosts_host(int id, uint32_t i, struct surge_hosts_host *out)
{
	struct hosts_table *t = get(id);

	if (t == NULL)
		return rt_error(-EINVAL, "no host table %d", id);
	if (i >= t->conf.count)
		return rt_error(-EINVAL, "host %u of a table of %u", i, t->conf.count);
	const struct host *h = &t->h[i];

	memset(out, 0, sizeof(*out));
	out->ip4 = h->ip;
	out->server4 = h->server;
	out->lease_s = h->lease_s;
	out->bound_ms = h->bound_ms;
	if (t->conf.server) {
		/* a pool's slot: its client's MAC, this server */
		mac_put(out->mac, h->state != SURGE_HOST_IDLE ? server_client_mac(h) : 0);
		out->server4 = t->conf.server4;
		out->lease_s = t->conf.lease_s;
	} else {
		ht_mac(t, i, out->mac);
	}
	out->state = h->state;
	out->tries = h->tries;
	if (t->in != NULL) {
		out->mask4 = t->in[i].mask;
		out->router4 = t->in[i].router;
		out->dns4[0] = t->in[i].dns[0];
		out->dns4[1] = t->in[i].dns[1];
	}
	return 0;
}

int
surge_hosts_host6(int id, uint32_t i, struct surge_hosts_host6 *out)
{
	struct hosts_table *t = get(id);

	if (t == NULL)
		return rt_error(-EINVAL, "no host table %d", id);
	if (t->h6 == NULL)
		return rt_error(-EINVAL, "host table %d has no IPv6 (ip6)", id);
	if (i >= t->conf.count)
		return rt_error(-EINVAL, "host %u of a table of %u", i, t->conf.count);
	memset(out, 0, sizeof(*out));
	nd_addr(t, i, H6_LL, out->ll);
	nd_addr(t, i, H6_STATIC, out->static6);
	nd_addr(t, i, H6_SLAAC, out->slaac);
	out->tentative = t->h6[i].tent;
	if (t->d6 != NULL) {
		const struct hd6 *d = &t->d6[i];

		out->dhcp6_state = d->state;
		out->pd_len = d->pd_len;
		memcpy(out->dhcp6_addr, d->addr, 16);
		memcpy(out->pd, d->pd, 16);
		/* the IAID: the MAC's last four bytes (hosts_dhcp6.c), in the link-local's interface ID */
		out->iaid = (uint32_t)out->ll[10] << 24 | (uint32_t)out->ll[13] << 16 | (uint32_t)out->ll[14] << 8 |
			    out->ll[15];
		out->t1_s = d->t1_s;
		out->t2_s = d->t2_s;
		out->dhcp6_valid_s = d->valid_s;
	}
	out->assigned = t->h6[i].ok;
	if (t->v6.has_prefix) {
		uint32_t now = (uint32_t)((double)(rte_rdtsc() - t->tsc0) * t->ms_per_cyc), gone = (now - t->v6.ra_ms) / 1000;

		out->valid_s = t->v6.valid_s == UINT32_MAX ? UINT32_MAX : t->v6.valid_s > gone ? t->v6.valid_s - gone : 0;
		out->preferred_s = t->v6.pref_s == UINT32_MAX ? UINT32_MAX : t->v6.pref_s > gone ? t->v6.pref_s - gone : 0;
	}
	return 0;
}

int
surge_hosts_release(int id, uint32_t first, uint32_t n)
{
	int rc = 0;
	struct hosts_table *t = own(id, &rc);
	uint32_t k = 0;

	if (t == NULL)
		return rc;
	if (!t->conf.dhcp && !t->conf.dhcp6)
		return rt_error(-EINVAL, "host table %d: release is for DHCP hosts", id);
	if (first >= t->conf.count || n > t->conf.count - first)
		return rt_error(-EINVAL, "hosts %u..%u of a table of %u", first, first + n - 1, t->conf.count);
	for (uint32_t i = first; i < first + n; i++) {
		uint8_t s = t->h[i].state;

		if (t->d6 != NULL)
			k += (uint32_t)d6_release(t, i);
		if (!t->conf.dhcp)
			continue;

		if (s != SURGE_HOST_BOUND && s != SURGE_HOST_RENEWING && s != SURGE_HOST_REBINDING)
			continue;
		ht_ipidx_clear(t, i);
		ht_state(t, i, SURGE_HOST_RELEASED);
		t->h[i].flags |= HF_OWE_RELEASE;
		ht_event(t, i, SURGE_HOSTS_EV_RELEASED);
		ht_timer_set(t, i, HL_SHORT, t->now);   /* sent at the next poll */
		k++;
	}
	return (int)k;
}

int
surge_hosts_settled(int id)
{
	struct hosts_table *t = get(id);

	if (t == NULL)
		return rt_error(-EINVAL, "no host table %d", id);
	const uint64_t *s = t->st.state;
	int v4 = t->conf.dhcp || t->conf.ip4 != 0;

	/* a server's idle slot is a free address, nothing waiting: it waits on
	 * its offers (selecting) only */
	if (t->conf.server)
		return s[SURGE_HOST_SELECTING] == 0;
	/* IPv6: no address in DAD (router solicitations are not waited for) */
	return t->started == t->conf.count && (!v4 || s[SURGE_HOST_IDLE] + s[SURGE_HOST_PROBING] +
	       s[SURGE_HOST_ANNOUNCING] + s[SURGE_HOST_SELECTING] + s[SURGE_HOST_REQUESTING] +
	       s[SURGE_HOST_DECLINED] == 0) &&
	       t->lists[HL_SHORT].head == HOST_NIL &&   /* releases and announcements sent */
	       t->v6.busy == 0 && t->v6.d6_open == 0 && t->v6.d6_owe == 0 &&
	       !mcast_busy(t) &&                        /* joins' reports and leaves sent */
	       !ping_busy(t);                           /* every echo request answered or timed out */
}

int
surge_hosts_join(int id, const struct surge_hosts_join *j)
{
	int rc = 0;
	struct hosts_table *t = own(id, &rc);

	return t == NULL ? rc : mcast_join(t, j);   /* which checks j */
}

int
surge_hosts_leave(int id, int m, uint32_t first, uint32_t n, int32_t *rest)
{
	int rc = 0;
	struct hosts_table *t = own(id, &rc);

	return t == NULL ? rc : mcast_leave(t, m, first, n, rest);   /* which checks rest */
}

int
surge_hosts_mship(int id, int m, struct surge_hosts_mship *out)
{
	struct hosts_table *t = get(id);

	if (t == NULL)
		return rt_error(-EINVAL, "no host table %d", id);
	return mcast_mship(t, m, out);
}

int
surge_hosts_ping(int id, const struct surge_hosts_ping *p)
{
	int rc = 0;
	struct hosts_table *t = own(id, &rc);

	return t == NULL ? rc : ping_start(t, p);
}

int
surge_hosts_count(void)
{
	return RT_REGISTRY_SIZE(nhosts);
}

static int
drop(void *slot)
{
	table_free(*(struct hosts_table **)slot);
	return 0;
}

void
hosts_free_all(void)
{
	RT_REGISTRY_CLEAR(nhosts, hosts, drop);
}
