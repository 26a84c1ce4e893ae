/* SPDX-License-Identifier: BSD-3-Clause
 *
 * conn_table.c - the connection table of one engine, allocated when the
 * engine is made and never grown.
 *
 * A client's connection i always uses address i / ports (of its
 * local_count, ascending) and local port conf.local_port + i % ports, so a
 * segment finds its connection by its destination address and port alone
 * (the address's index: a subtraction when the addresses are consecutive,
 * a binary search when not; then a multiply and an add, no hashing). A server's connections are keyed by the
 * peer's address and port and the index of the engine's address they were
 * opened to (found as a client's is; one listening port per engine) in an
 * open-addressing index of twice the table's size: linear probing, and
 * deletion by backward shift, so no tombstones build up.
 *
 * Free entries wait in a FIFO queue: a client reuses the port that has been
 * free the longest, which keeps a port out of use while the peer may still
 * hold it in TIME_WAIT. Timers are three FIFO lists (every timer on a list
 * has the same length: the RTO, TIME_WAIT's, a client's think time), so each stays ordered by
 * deadline with O(1) arm and stop, and the poll only looks at their heads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_prefetch.h>

#include "conn.h"

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int
cmp_a6(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

int
addrs_init(struct conn_engine *e)
{
	const struct surge_conn_conf *c = &e->conf;
	uint32_t n = c->local_addrs != NULL && c->local_count > 0 ? c->local_count : 1;
	int v6 = c->ip_version == 6;

	e->naddr = n;
	if (v6 ? (e->addr6 = calloc(n, 16)) == NULL : (e->addr4 = calloc(n, 4)) == NULL)
		return rt_error(-ENOMEM, "out of memory for %u addresses", n);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *a = c->local_addrs != NULL && c->local_count > 0 ? c->local_addrs + (size_t)i * (v6 ? 16 : 4)
				   : NULL;

		if (v6)
			memcpy(e->addr6[i], a != NULL ? a : c->local_ip6, 16);
		else
			e->addr4[i] = a != NULL ? get32(a) : c->local_ip4;
	}
	if (v6)
		qsort(e->addr6, n, 16, cmp_a6);
	else
		qsort(e->addr4, n, 4, cmp_u32);
	e->addr_run = 1;
	for (uint32_t i = 1; i < n; i++) {
		int same = v6 ? memcmp(e->addr6[i - 1], e->addr6[i], 16) == 0 : e->addr4[i - 1] == e->addr4[i];

		if (same)
			return rt_error(-EINVAL, "surge_conn_new: address %u of %u is given twice", i, n);
		if (v6 ? memcmp(e->addr6[i - 1], e->addr6[i], 12) != 0 ||
			 get32(e->addr6[i] + 12) - get32(e->addr6[i - 1] + 12) != 1
		       : e->addr4[i] - e->addr4[i - 1] != 1)
			e->addr_run = 0;
	}
	/* a client's ports per address: the table spread evenly over them (a
	 * server's connections are on any address: one run of the table) */
	e->ports = c->role == SURGE_CONN_CLIENT ? (c->capacity + n - 1) / n : c->capacity;
	return 0;
}

int32_t
addr_index(const struct conn_engine *e, uint32_t ip, const uint8_t *a6)
{
	uint32_t lo = 0, hi = e->naddr;

	if (a6 == NULL) {
		if (e->addr_run) {
			uint32_t d = ip - e->addr4[0];

			return d < e->naddr ? (int32_t)d : -1;
		}
		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;

			if (e->addr4[mid] == ip)
				return (int32_t)mid;
			if (e->addr4[mid] < ip)
				lo = mid + 1;
			else
				hi = mid;
		}
		return -1;
	}
	if (e->addr_run) {
		uint32_t d = get32(a6 + 12) - get32(e->addr6[0] + 12);

		return d < e->naddr && memcmp(a6, e->addr6[0], 12) == 0 ? (int32_t)d : -1;
	}
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		int r = memcmp(e->addr6[mid], a6, 16);

		if (r == 0)
			return (int32_t)mid;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static struct conn_list *
list_of(struct conn_engine *e, int list)
{
	return list == CL_RTO ? &e->rto : list == CL_TW ? &e->tw : list == CL_THINK ? &e->think : &e->free_q;
}

static void
unlink_conn(struct conn_engine *e, struct conn *c)
{
	struct conn_list *l;

	if (c->list == CL_NONE)
		return;
	l = list_of(e, c->list);
	if (c->prev != CONN_NIL)
		e->tab[c->prev].next = c->next;
	else
		l->head = c->next;
	if (c->next != CONN_NIL)
		e->tab[c->next].prev = c->prev;
	else
		l->tail = c->prev;
	c->next = c->prev = CONN_NIL;
	c->list = CL_NONE;
}

static void
append(struct conn_engine *e, struct conn *c, int list)
{
	struct conn_list *l = list_of(e, list);
	uint32_t i = conn_idx(e, c);

	c->prev = l->tail;
	c->next = CONN_NIL;
	if (l->tail != CONN_NIL)
		e->tab[l->tail].next = i;
	else
		l->head = i;
	l->tail = i;
	c->list = (uint8_t)list;
}

/* A server's free entries are a stack: the entry freed last (still in
 * the cache) is taken next, so the table's working set is the
 * connections open, not the whole table (a client's stay a FIFO: its
 * ports must rest). */
static void
prepend_free(struct conn_engine *e, struct conn *c)
{
	uint32_t i = conn_idx(e, c);

	c->prev = CONN_NIL;
	c->next = e->free_q.head;
	if (e->free_q.head != CONN_NIL)
		e->tab[e->free_q.head].prev = i;
	else
		e->free_q.tail = i;
	e->free_q.head = i;
	c->list = CL_FREE;
}

void
timer_arm(struct conn_engine *e, struct conn *c, int list, uint32_t after_us)
{
	unlink_conn(e, c);
	c->t_timer = e->now + after_us;
	append(e, c, list);
}

void
timer_stop(struct conn_engine *e, struct conn *c)
{
	unlink_conn(e, c);
}

/* A server's index slot for a peer's address and port to the engine's
 * address addr (0 for a server of one address: its slots as before) */
static inline uint32_t
home(const struct conn_engine *e, uint32_t ip, uint16_t port, uint32_t addr)
{
	uint32_t h = (ip ^ addr * 0xc2b2ae35u) * 0x9e3779b1u ^ ((uint32_t)port * 0x85ebca6bu);

	h ^= h >> 15;
	return h & e->index_mask;
}

int
table_init(struct conn_engine *e)
{
	uint32_t cap = e->conf.capacity, size = 2;

	e->tab = calloc(cap, sizeof(*e->tab));
	if (e->tab == NULL)
		return -ENOMEM;
	if (e->conf.role == SURGE_CONN_SERVER) {
		while (size < 2 * cap)
			size <<= 1;
		e->index = calloc(size, sizeof(*e->index));
		if (e->index == NULL)
			return -ENOMEM;
		e->index_mask = size - 1;
		if (e->conf.ip_version == 6 && (e->peer6 = calloc(cap, 16)) == NULL)
			return -ENOMEM;
	}
	e->free_q.head = e->free_q.tail = CONN_NIL;
	e->rto = e->tw = e->think = e->free_q;
	for (uint32_t i = 0; i < cap; i++)
		e->tab[i].next = e->tab[i].prev = CONN_NIL;
	/* the free queue's first order takes the addresses in turn (entry k
	 * of the order: address k % naddr, its port k / naddr), so opens
	 * spread evenly over a client's addresses from the first on; a
	 * server's (taken as one address, ports = capacity) is the table's order */
	uint32_t na = e->conf.role == SURGE_CONN_CLIENT ? e->naddr : 1;

	for (uint64_t k = 0; k < (uint64_t)na * e->ports; k++) {
		uint64_t i = k % na * e->ports + k / na;

		if (i < cap)
			append(e, &e->tab[i], CL_FREE);
	}
	return 0;
}

void
table_free(struct conn_engine *e)
{
	free(e->tab);
	free(e->index);
	free(e->peer6);
	free(e->addr4);
	free(e->addr6);
}

struct conn *
conn_alloc(struct conn_engine *e, uint32_t peer_ip, const uint8_t *peer6, uint16_t peer_port, uint32_t addr)
{
	uint32_t i = e->free_q.head;
	struct conn *c;

	if (i == CONN_NIL)
		return NULL;
	c = &e->tab[i];
	unlink_conn(e, c);
	memset(c, 0, sizeof(*c));
	c->next = c->prev = CONN_NIL;
	c->peer_ip = peer_ip;
	c->peer_port = peer_port;
	if (e->conf.role == SURGE_CONN_CLIENT) {
		c->local_port = (uint16_t)(e->conf.local_port + i % e->ports);
	} else {
		uint32_t h = home(e, peer_ip, peer_port, addr);

		c->local_port = e->conf.local_port;
		c->addr = addr;
		if (e->peer6 != NULL)
			memcpy(e->peer6[i], peer6, 16);
		while (e->index[h] != 0)
			h = (h + 1) & e->index_mask;
		e->index[h] = i + 1;
	}
	if (++e->st.concurrent > e->st.concurrent_max)
		e->st.concurrent_max = e->st.concurrent;
	return c;
}

static void
index_remove(struct conn_engine *e, uint32_t i)
{
	uint32_t mask = e->index_mask, h = home(e, e->tab[i].peer_ip, e->tab[i].peer_port, e->tab[i].addr), j;

	while (e->index[h] != i + 1)
		h = (h + 1) & mask;
	/* backward shift: pull up each later entry of the run that may sit
	 * at the hole (its home is not cyclically in (hole, j]) */
	for (j = (h + 1) & mask; e->index[j] != 0; j = (j + 1) & mask) {
		const struct conn *o = &e->tab[e->index[j] - 1];
		uint32_t k = home(e, o->peer_ip, o->peer_port, o->addr);
		int stays = h <= j ? (h < k && k <= j) : (h < k || k <= j);

		if (!stays) {
			e->index[h] = e->index[j];
			h = j;
		}
	}
	e->index[h] = 0;
}

void
conn_release(struct conn_engine *e, struct conn *c)
{
	uint32_t i = conn_idx(e, c);

	if (c->state == CS_FREE)
		return;
	conn_hook(e, c, SURGE_CONN_EV_CLOSED, 0);
	if (e->conf.role == SURGE_CONN_SERVER)
		index_remove(e, i);
	if (c->state == CS_TIME_WAIT)
		e->tw_now--;
	c->state = CS_FREE;
	unlink_conn(e, c);
	if (e->conf.role == SURGE_CONN_SERVER)
		prepend_free(e, c);
	else
		append(e, c, CL_FREE);
	e->st.concurrent--;
}

struct conn *
conn_lookup(struct conn_engine *e, const struct seg *s)
{
	struct conn *c;

	if (e->conf.role == SURGE_CONN_CLIENT) {
		uint32_t p = (uint32_t)(uint16_t)(s->dport - e->conf.local_port), i = s->addr * e->ports + p;

		if (p >= e->ports || i >= e->conf.capacity)
			return NULL;
		c = &e->tab[i];
		if (c->state == CS_FREE || c->peer_ip != s->src_ip || c->peer_port != s->sport)
			return NULL;
		if (s->src6 != NULL && memcmp(s->src6, e->conf.peer_ip6, 16) != 0)
			return NULL;
		return c;
	}
	if (s->dport != e->conf.local_port)
		return NULL;
	for (uint32_t h = home(e, s->src_ip, s->sport, s->addr); e->index[h] != 0; h = (h + 1) & e->index_mask) {
		c = &e->tab[e->index[h] - 1];
		if (c->peer_ip == s->src_ip && c->peer_port == s->sport && c->addr == s->addr &&
		    (e->peer6 == NULL || memcmp(e->peer6[e->index[h] - 1], s->src6, 16) == 0))
			return c;
	}
	return NULL;
}

/* Prefetches where conn_lookup will look for the IPv4 segment in frame
 * (a server's index slot, a client's table entry), read from the raw
 * headers before the burst is parsed: the poll issues these for a whole
 * burst first, so the cache misses of the lookups overlap instead of
 * each stalling its segment (issue 21: the server's lookup was 15-30 %
 * of its cycles, nearly all the miss on its index slot). A frame that is
 * not IPv4 without options is skipped; a wrong guess costs one prefetch. */
void
conn_prefetch(const struct conn_engine *e, const uint8_t *frame, uint32_t len)
{
	const uint8_t *ip = frame + 14;

	if (len < 54 || frame[12] != 0x08 || frame[13] != 0x00 || ip[0] != 0x45)
		return;
	if (e->conf.role == SURGE_CONN_SERVER) {
		uint32_t src = get32(ip + 12);
		uint16_t sport = get16(ip + 20);
		int32_t a = e->naddr > 1 ? addr_index(e, get32(ip + 16), NULL) : 0;

		if (a >= 0)
			rte_prefetch0(&e->index[home(e, src, sport, (uint32_t)a)]);
	} else {
		int32_t a = addr_index(e, get32(ip + 16), NULL);
		uint32_t p = (uint32_t)(uint16_t)(get16(ip + 22) - e->conf.local_port);

		if (a >= 0 && p < e->ports && (uint32_t)a * e->ports + p < e->conf.capacity)
			rte_prefetch0(&e->tab[(uint32_t)a * e->ports + p]);
	}
}
