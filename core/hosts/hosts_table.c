/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_table.c - the emulated hosts' table: allocated once, when it is
 * made; lookups by address and by MAC without hashing (an index from the
 * range's base: static addresses are base + i, MACs base + i, a DHCP
 * host's address is found through a direct index over its subnet); the
 * two ordered timer lists; the event ring Lua pulls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hosts.h"

int
ht_alloc(struct hosts_table *t)
{
	uint32_t n = t->conf.count;

	t->h = calloc(n, sizeof(*t->h));
	if (t->h == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		t->h[i].next = t->h[i].prev = HOST_NIL;
		t->h[i].ip = t->conf.dhcp ? 0 : t->conf.ip4 + i;
	}
	if (t->conf.dhcp) {
		t->ipidx_n = t->conf.net4_len >= 32 ? 1 : 1u << (32 - t->conf.net4_len);
		t->ipidx = calloc(t->ipidx_n, sizeof(*t->ipidx));
		if (t->ipidx == NULL)
			return -ENOMEM;
	}
	/* room for an event per host twice over (bound, then renewed or
	 * released), at least 1024, at most 2^20: a poll records few */
	t->ev_cap = 1024;
	while (t->ev_cap < 2 * n && t->ev_cap < (1u << 20))
		t->ev_cap <<= 1;
	t->ev = calloc(t->ev_cap, sizeof(*t->ev));
	if (t->ev == NULL)
		return -ENOMEM;
	for (int l = 0; l < 3; l++)
		t->lists[l].head = t->lists[l].tail = HOST_NIL;
	t->st.state[SURGE_HOST_IDLE] = n;
	t->mac0 = mac_get(t->conf.mac);
	t->bytes = sizeof(*t) + (size_t)n * sizeof(*t->h) + (size_t)t->ipidx_n * sizeof(*t->ipidx) +
		   (size_t)t->ev_cap * sizeof(*t->ev);
	t->st.bytes_per_host = (t->bytes + n - 1) / n;
	return 0;
}

void
ht_free(struct hosts_table *t)
{
	free(t->h);
	free(t->ipidx);
	free(t->ev);
	free(t->mc);
}

/* a - b on the 32-bit millisecond clock, signed (wraps after 49 days) */
static inline int32_t
ms_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

void
ht_timer_stop(struct hosts_table *t, uint32_t i)
{
	struct host *h = &t->h[i];
	struct hlist *l = &t->lists[h->list];

	if (h->list == HL_NONE)
		return;
	if (h->prev != HOST_NIL)
		t->h[h->prev].next = h->next;
	else
		l->head = h->next;
	if (h->next != HOST_NIL)
		t->h[h->next].prev = h->prev;
	else
		l->tail = h->prev;
	h->next = h->prev = HOST_NIL;
	h->list = HL_NONE;
}

void
ht_timer_set(struct hosts_table *t, uint32_t i, int list, uint32_t due)
{
	struct host *h = &t->h[i];
	struct hlist *l = &t->lists[list];
	uint32_t at;

	ht_timer_stop(t, i);
	h->due = due;
	h->list = (uint8_t)list;
	/* walk back from the tail past the timers due later */
	for (at = l->tail; at != HOST_NIL && ms_diff(t->h[at].due, due) > 0; at = t->h[at].prev)
		;
	h->prev = at;
	if (at == HOST_NIL) {
		h->next = l->head;
		l->head = i;
	} else {
		h->next = t->h[at].next;
		t->h[at].next = i;
	}
	if (h->next != HOST_NIL)
		t->h[h->next].prev = i;
	else
		l->tail = i;
}

uint32_t
ht_by_ip(const struct hosts_table *t, uint32_t ip)
{
	if (!t->conf.dhcp) {
		uint32_t i = ip - t->conf.ip4;

		return i < t->conf.count ? i : HOST_NIL;
	}
	uint32_t k = ip - t->conf.net4;

	return k < t->ipidx_n && t->ipidx[k] != 0 ? t->ipidx[k] - 1 : HOST_NIL;
}

uint32_t
ht_by_mac(const struct hosts_table *t, const uint8_t *mac)
{
	uint64_t d = mac_get(mac) - t->mac0;

	return (d & 0xffffffffffffull) < t->conf.count ? (uint32_t)(d & 0xffffffffffffull) : HOST_NIL;
}

void
ht_mac(const struct hosts_table *t, uint32_t i, uint8_t *out)
{
	mac_put(out, (t->mac0 + i) & 0xffffffffffffull);
}

/* A DHCP host's address into the index (outside its subnet: not
 * answered for, docs/hosts.md) */
void
ht_ipidx_set(struct hosts_table *t, uint32_t i, uint32_t ip)
{
	uint32_t k = ip - t->conf.net4;

	if (k < t->ipidx_n)
		t->ipidx[k] = i + 1;
}

void
ht_ipidx_clear(struct hosts_table *t, uint32_t i)
{
	uint32_t k = t->h[i].ip - t->conf.net4;

	if (t->conf.dhcp && k < t->ipidx_n && t->ipidx[k] == i + 1)
		t->ipidx[k] = 0;
}

void
ht_state(struct hosts_table *t, uint32_t i, uint8_t state)
{
	struct host *h = &t->h[i];

	t->st.state[h->state]--;
	t->st.state[state]++;
	h->state = state;
}

void
ht_event(struct hosts_table *t, uint32_t i, uint8_t kind)
{
	if (t->ev_tail - t->ev_head >= t->ev_cap) {
		t->st.events_lost++;
		return;
	}
	struct surge_hosts_event *e = &t->ev[t->ev_tail++ & (t->ev_cap - 1)];

	e->host = i;
	e->ip4 = t->h[i].ip;
	e->ms = t->now;
	e->kind = kind;
}

uint32_t
ht_rand(struct hosts_table *t)
{
	uint32_t x = t->rng;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return t->rng = x;
}
