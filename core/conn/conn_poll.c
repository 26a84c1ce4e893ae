/* SPDX-License-Identifier: BSD-3-Clause
 *
 * conn_poll.c - the TCP engine's FFI entry points: make an engine, poll it
 * (receive a burst, run its segments through the state machine, fire the
 * due timers, open what the client's schedule allows, send what that
 * wrote), read its counters and histograms, reset what is left at the end.
 *
 * An engine is written by the lcore that made it only; another thread
 * (master, the stats line) reads its counters with plain loads, as the
 * latency receivers' are read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_tcp.h>

#include "conn.h"

#define FRAME_OVERHEAD 54        /* Ethernet 14 + IPv4 20 + TCP 20 (a SYN's MSS option: no payload) */
#define FRAME_OVERHEAD6 74       /* IPv6: 20 more */
#define OPENS_PER_POLL 256       /* most SYNs one poll writes: keeps a late schedule's catch-up in bursts */

static int
conf_check(const struct surge_conn_conf *c)
{
	if (c->role != SURGE_CONN_CLIENT && c->role != SURGE_CONN_SERVER)
		return rt_error(-EINVAL, "surge_conn_new: role %u (0 client, 1 server)", c->role);
	static const uint8_t zero6[16];

	if (c->ip_version != 4 && c->ip_version != 6)
		return rt_error(-EINVAL, "surge_conn_new: ip_version %u: 4 or 6", c->ip_version);
	if (c->data == NULL || c->data_len == 0 || c->data_len > SURGE_CONN_DATA_MAX)
		return rt_error(-EINVAL, "surge_conn_new: the %s is %u bytes: 1..%d",
				c->role == SURGE_CONN_CLIENT ? "request" : "response", c->data_len,
				SURGE_CONN_DATA_MAX);
	if (c->capacity == 0 || c->capacity > (1u << 24))
		return rt_error(-EINVAL, "surge_conn_new: capacity %u: 1..%u", c->capacity, 1u << 24);
	if (c->local_addrs != NULL && (c->local_count == 0 || c->local_count > SURGE_CONN_ADDR_MAX))
		return rt_error(-EINVAL, "surge_conn_new: %u local addresses: 1..%d", c->local_count,
				SURGE_CONN_ADDR_MAX);
	if (c->role == SURGE_CONN_CLIENT) {
		uint32_t naddr = c->local_addrs != NULL ? c->local_count : 1;

		/* the table spread evenly over the addresses: each holds ports
		 * local_port .. local_port + ceil(capacity / naddr) - 1 */
		if (c->local_port == 0 || (c->capacity + naddr - 1) / naddr > 65536u - c->local_port)
			return rt_error(-EINVAL, "surge_conn_new: capacity %u over %u source address%s from port %u: "
					"each address's connections use ports %u and up, so at most %u", c->capacity,
					naddr, naddr == 1 ? "" : "es", c->local_port, c->local_port,
					naddr * (65536u - c->local_port));
		if ((c->ip_version == 4 ? c->peer_ip4 == 0 : memcmp(c->peer_ip6, zero6, 16) == 0) ||
		    c->peer_port == 0)
			return rt_error(-EINVAL, "surge_conn_new: a client needs the server's address and port");
		if (c->requests == 0 || c->requests > 65535)
			return rt_error(-EINVAL, "surge_conn_new: requests %u: 1..65535", c->requests);
		if (c->concurrency > c->capacity)
			return rt_error(-EINVAL, "surge_conn_new: concurrency %u over the capacity %u",
					c->concurrency, c->capacity);
		if (c->rate.value > 0 && c->rate.unit != SURGE_RATE_PPS)
			return rt_error(-EINVAL, "surge_conn_new: the open rate counts connections per second "
					"(a pps value)");
	} else if (c->requests > 65535) {
		return rt_error(-EINVAL, "surge_conn_new: requests %u: 0..65535", c->requests);
	}
	if (c->local_addrs == NULL && (c->ip_version == 4 ? c->local_ip4 == 0 : memcmp(c->local_ip6, zero6, 16) == 0))
		return rt_error(-EINVAL, "surge_conn_new: no local address");
	if (c->expect == SURGE_CONN_EXPECT_LEN ? c->expect_len == 0 : c->expect != SURGE_CONN_EXPECT_HTTP)
		return rt_error(-EINVAL, "surge_conn_new: expect %u with expect_len %u (a length needs 1 or more)",
				c->expect, c->expect_len);
	if (c->mss < 64 || c->mss > 9000 || c->window == 0)
		return rt_error(-EINVAL, "surge_conn_new: mss %u (64..9000), window %u (1..65535)", c->mss,
				c->window);
	if (c->rto_us < 1000 || c->retries == 0)
		return rt_error(-EINVAL, "surge_conn_new: rto_us %u (at least 1000), retries %u (1..255)",
				c->rto_us, c->retries);
	if (c->time_wait_us > 600000000u || c->idle_us > 600000000u || c->think_us > 600000000u)
		return rt_error(-EINVAL, "surge_conn_new: time_wait_us, idle_us and think_us: at most 600 s");
	return 0;
}

static void
engine_free(struct conn_engine *e)
{
	conn_events_free(e);
	table_free(e);
	free(e->data);
	free(e);
}

int
surge_conn_new(const struct surge_conn_conf *conf)
{
	struct runtime *r = rt();
	struct conn_engine *e;
	double hz = (double)rt_hz();
	int id, rc;

	if (conf == NULL)
		return rt_error(-EINVAL, "surge_conn_new: no configuration");
	if ((rc = conf_check(conf)) != 0)
		return rc;
	e = calloc(1, sizeof(*e));
	if (e == NULL || (e->data = malloc(conf->data_len)) == NULL) {
		free(e);
		return rt_error(-ENOMEM, "out of memory for a connection engine");
	}
	e->conf = *conf;
	e->tx.refused = &e->st.tx_full;
	memcpy(e->data, conf->data, conf->data_len);
	e->conf.data = NULL;             /* Lua's copy may go: the engine has its own */
	e->data_len = conf->data_len;
	e->data_sum = rte_be_to_cpu_16(rte_raw_cksum(e->data, e->data_len));
	if (e->conf.concurrency == 0)
		e->conf.concurrency = e->conf.capacity;
	e->mss = conf->mss;
	e->idle_expiries = conf->idle_us / conf->rto_us;
	if (e->idle_expiries == 0)
		e->idle_expiries = 1;
	if (e->idle_expiries > 255)
		e->idle_expiries = 255;
	if ((rc = addrs_init(e)) != 0) {
		engine_free(e);
		return rc;
	}
	e->conf.local_addrs = NULL;      /* copied, as the data */
	if (table_init(e) != 0) {
		engine_free(e);
		return rt_error(-ENOMEM, "out of memory for a table of %u connections (%zu bytes)",
				conf->capacity, (size_t)conf->capacity * sizeof(struct conn));
	}
	hist_init(&e->connect_h);
	hist_init(&e->response_h);
	e->tsc0 = rte_rdtsc();
	e->us_per_cyc = 1e6 / hz;
	e->iss_salt = (uint32_t)(e->tsc0 ^ (e->tsc0 >> 32)) * 2246822519u;
	pacer_start(&e->open_pc, &conf->rate, 0, hz, e->tsc0);
	e->sw_csum = 2;                  /* decided at the first poll, when the port is known */
	e->owner = (int32_t)lcore_self();
	id = registry_add(&r->nconn, SURGE_CONN_MAX, r->conn, sizeof(e), &e, "connection engines");
	if (id < 0)
		engine_free(e);
	return id;
}

static struct conn_engine *
get(int id)
{
	return registry_holds(RT_REGISTRY_SIZE(nconn), id) ? rt()->conn[id] : NULL;
}

struct conn_engine *
conn_engine_get(int id)
{
	return get(id);
}

/* The owner's engine, or NULL with the error set. */
static struct conn_engine *
own(int id, int *rc)
{
	struct conn_engine *e = get(id);

	*rc = owner_only(e, e != NULL ? e->owner : -1, "connection engine", id);
	return *rc == 0 ? e : NULL;
}

/* At the first poll: does the port compute the checksums (the pool's
 * layout being the engine's frames), and do the frames fit? */
static int
first_poll(struct conn_engine *e, uint16_t port, const struct surge_burst *tx)
{
	struct runtime *r = rt();
	struct pool_state *p = pool_at(r, tx->pool);
	int v6 = e->conf.ip_version == 6;
	uint32_t room, need = (v6 ? FRAME_OVERHEAD6 : FRAME_OVERHEAD) + e->conf.mss;
	const uint64_t need_csum = v6 ? RTE_ETH_TX_OFFLOAD_TCP_CKSUM
			       : RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM;

	if (p == NULL)
		return rt_error(-EINVAL, "connection engine: the tx burst has no pool to allocate from");
	room = rte_pktmbuf_data_room_size(p->mp) - RTE_PKTMBUF_HEADROOM;
	if (room < need)
		return rt_error(-EMSGSIZE, "connection engine: mss %u makes frames of %u bytes, the pool's "
				"mbufs hold %u (a smaller mss or a pool with data_room = %u)", e->conf.mss,
				need, room, need + RTE_PKTMBUF_HEADROOM);
	if (port < RTE_MAX_ETHPORTS && r->port[port].started && r->port[port].max_len < need)
		return rt_error(-EMSGSIZE, "connection engine: mss %u makes frames of %u bytes, port %u's "
				"MTU %u allows %u", e->conf.mss, need, port, r->port[port].mtu,
				r->port[port].max_len);
	e->sw_csum = !(port < RTE_MAX_ETHPORTS && (r->port[port].csum & need_csum) == need_csum &&
		       p->ip_version == e->conf.ip_version && p->l4_proto == IPPROTO_TCP && p->l2_len == 14 &&
		       p->l3_len == (v6 ? 40 : 20));
	return 0;
}

/* The client's opens: as many as the schedule has due (all, unpaced), up
 * to the concurrency cap (TIME_WAIT not counted). A due open that finds
 * the table full (every entry in use, TIME_WAIT included) is refused and
 * counted, and the schedule goes on; unpaced, the opens wait for room.
 * While the TX ring is full (tx.full) no open is made: new connections
 * would only add segments the ring drops. */
static void
opens(struct conn_engine *e, uint64_t tsc, uint32_t max)
{
	struct pacer *pc = &e->open_pc;
	double hz = (double)rt_hz();
	uint32_t k = 0;

	while (!e->opened_all && !e->tx.full && k < max && e->st.concurrent - e->tw_now < e->conf.concurrency) {
		if (pc->active) {
			double behind = (double)tsc - pc->next;

			if (behind < 0)
				break;
			if (behind > pc->max_late)      /* forgive what no burst should catch up */
				pc->next = (double)tsc - pc->max_late;
			pc->next += pacer_gap(pc, 0, (double)tsc, 0, hz);
		}
		k++;
		if (fsm_open(e) != 0) {
			if (!pc->active)
				break;
			e->st.refused++;
			continue;
		}
		if (e->conf.connections != 0 && e->st.attempted >= e->conf.connections)
			e->opened_all = 1;
	}
}

static void
timers(struct conn_engine *e, struct conn_list *l)
{
	while (l->head != CONN_NIL) {
		struct conn *c = &e->tab[l->head];

		if (us_diff(e->now, c->t_timer) < 0 || !conn_events_room(e))
			break;      /* not due, or no room for its events: the next poll */
		fsm_timer(e, c);            /* re-arms at the tail, or frees */
	}
}

void
conn_timers(struct conn_engine *e)
{
	timers(e, &e->rto);
	timers(e, &e->tw);
	timers(e, &e->think);
}

enum seg_kind
conn_frame(struct conn_engine *e, uint8_t *frame, uint32_t len, uint64_t ol_flags)
{
	struct seg s;
	enum seg_kind k = seg_parse(e, frame, len, ol_flags, &s);

	if (k == SEG_OTHER) {
		e->st.rx_other++;
	} else if (k == SEG_BAD) {
		e->st.rx_bad++;
	} else {
		struct conn *c = conn_lookup(e, &s);

		e->st.rx_segments++;
		if (c != NULL)
			fsm_input(e, c, &s);
		else
			fsm_listen(e, &s);
	}
	return k;
}

int
surge_conn_poll(int id, uint16_t port, uint16_t rxq, uint16_t txq, struct surge_burst *rx,
		struct surge_burst *tx)
{
	struct rx_split sp = { .keep = 0, .ndone = 0 };
	uint32_t keep;
	int rc = 0, n;
	struct conn_engine *e = own(id, &rc);
	uint64_t tsc;

	if (e == NULL)
		return rc;
	if ((rc = burst_check(rx)) != 0 || (rc = burst_check(tx)) != 0)
		return rc;
	if (unlikely(e->sw_csum == 2) && (rc = first_poll(e, port, tx)) != 0)
		return rc;
	tx_writer_start(&e->tx, tx, port, txq);
	n = surge_rx_recv(port, rxq, rx);
	if (n < 0)
		return n;
	tsc = rte_rdtsc();
	e->now = (uint32_t)((double)(tsc - e->tsc0) * e->us_per_cyc);
	if (unlikely(e->hk != NULL))
		conn_events_apply(e);   /* the hooks' actions on the last poll's events */
	/* the frames' headers and the rest of a short segment (the software
	 * checksum reads it all: the first load of its payload was a quarter
	 * of seg_parse on keep-alive, issue 21), then what each lookup reads,
	 * for the whole burst before any is handled: the misses overlap
	 * (conn_prefetch). Past 256 bytes the sum's own stream of loads does. */
	for (int i = 0; i < n; i++) {
		const uint8_t *d = rx->data[i];
		uint32_t len = rx->len[i] < 256 ? rx->len[i] : 256;

		rte_prefetch0(d);
		for (uint32_t off = 64; off < len; off += 64)
			rte_prefetch0(d + off);
	}
	if (e->conf.ip_version == 4)
		for (int i = 0; i < n; i++)
			conn_prefetch(e, rx->data[i], rx->len[i]);
	for (int i = 0; i < n; i++) {
		const struct rte_mbuf *m = rx->mbuf[i];

		rx_split_one(&sp, rx, i, conn_frame(e, rx->data[i], rx->len[i], m->ol_flags) != SEG_OTHER);
	}
	keep = rx_split_end(&sp, rx);
	conn_timers(e);
	if (e->conf.role == SURGE_CONN_CLIENT)
		opens(e, tsc, OPENS_PER_POLL);
	tx_writer_flush(&e->tx);
	e->tx.b = NULL;
	return e->tx.err != 0 ? e->tx.err : (int)keep;
}

int
surge_conn_hooks(int id, uint32_t kinds, const uint8_t *const *data, const uint32_t *len, uint32_t ntpl,
		 struct surge_conn_hooks **out)
{
	struct conn_engine *e = get(id);

	if (e == NULL)
		return rt_error(-EINVAL, "no connection engine %d", id);
	return conn_events_init(e, id, kinds, data, len, ntpl, out);
}

int
surge_conn_stats(int id, struct surge_conn_stats *out)
{
	struct conn_engine *e = get(id);

	if (e == NULL)
		return rt_error(-EINVAL, "no connection engine %d", id);
	memcpy(out, &e->st, sizeof(*out));
	return 0;
}

int
surge_conn_done(int id)
{
	struct conn_engine *e = get(id);

	if (e == NULL)
		return rt_error(-EINVAL, "no connection engine %d", id);
	return e->opened_all && e->st.concurrent == e->tw_now;   /* TIME_WAIT not waited out */
}

int
surge_conn_abort(int id, uint16_t port, uint16_t txq, struct surge_burst *tx)
{
	int rc = 0;
	struct conn_engine *e = own(id, &rc);
	uint32_t reset = 0;

	if (e == NULL)
		return rc;
	if ((rc = burst_check(tx)) != 0)
		return rc;
	tx_writer_start(&e->tx, tx, port, txq);
	if (e->sw_csum == 2)
		e->sw_csum = 1;
	if (e->hk != NULL)
		e->hk->stopped = 1;     /* the run's end: no hook sees these resets */
	for (uint32_t i = 0; i < e->conf.capacity; i++) {
		struct conn *c = &e->tab[i];

		if (c->state != CS_FREE)
			reset += (uint32_t)fsm_abort(e, c);
	}
	e->opened_all = 1;
	tx_writer_flush(&e->tx);
	e->tx.b = NULL;
	return e->tx.err != 0 ? e->tx.err : (int)reset;
}

static const struct hist *
hist_of(int id, int which)
{
	struct conn_engine *e = get(id);

	if (e == NULL)
		return NULL;
	return which == SURGE_CONN_HIST_CONNECT ? &e->connect_h
	       : which == SURGE_CONN_HIST_RESPONSE ? &e->response_h : NULL;
}

double
surge_conn_percentile(int id, int which, double q)
{
	const struct hist *h = hist_of(id, which);

	return h != NULL && h->count > 0 ? hist_percentile(h, q) : -1;
}

int
surge_conn_buckets(int id, int which, struct surge_hist_bucket *out, uint32_t max)
{
	const struct hist *h = hist_of(id, which);
	uint32_t n = 0;

	if (h == NULL)
		return rt_error(-EINVAL, "no connection engine %d (or histogram %d)", id, which);
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		if (h->bucket[i] == 0)
			continue;
		if (out != NULL && n < max) {
			out[n].low_ns = hist_bucket_low(i);
			out[n].high_ns = hist_bucket_high(i);
			out[n].count = h->bucket[i];
		}
		n++;
	}
	return (int)n;
}

int
surge_conn_count(void)
{
	return RT_REGISTRY_SIZE(nconn);
}

static int
drop(void *slot)
{
	engine_free(*(struct conn_engine **)slot);
	return 0;
}

void
conn_free_all(void)
{
	RT_REGISTRY_CLEAR(nconn, conn, drop);
}
