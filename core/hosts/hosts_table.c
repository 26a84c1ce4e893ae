/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_table.c - the emulated hosts' table: allocated once, when it is
 * made; lookups by address and by MAC without hashing (an index from the
 * range's base: static addresses are base + i, MACs base + i, a DHCP
 * host's address is found through a direct index over its subnet); the
 * two ordered timer lists; the event ring Lua pulls.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hosts.h"

/* n entries of `size` bytes, zeroed, each with its timer (the struct
 * htimer at tm_at) on no list: a host's IPv4, IPv6 and DHCPv6 state */
static void *
calloc_timed(uint32_t n, size_t size, size_t tm_at)
{
	uint8_t *p = calloc(n, size);

	for (uint32_t i = 0; p != NULL && i < n; i++) {
		struct htimer *tm = (struct htimer *)(void *)(p + (size_t)i * size + tm_at);

		tm->next = tm->prev = HOST_NIL;
	}
	return p;
}

int
ht_alloc(struct hosts_table *t)
{
	uint32_t n = t->conf.count;

	t->h = calloc_timed(n, sizeof(*t->h), offsetof(struct host, tm));
	if (t->h == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		t->h[i].ip = t->conf.dhcp ? 0 : t->conf.ip4 + i;
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
	if (t->conf.ip6) {
		t->h6 = calloc_timed(n, sizeof(*t->h6), offsetof(struct host6, tm));
		if (t->h6 == NULL)
			return -ENOMEM;
		memcpy(t->v6.static6, t->conf.ip6_addr, 16);
	}
	if (t->conf.dhcp6 && (t->d6 = calloc_timed(n, sizeof(*t->d6), offsetof(struct hd6, tm))) == NULL)
		return -ENOMEM;
	for (int l = 0; l < HL_LISTS; l++)
		t->lists[l].head = t->lists[l].tail = HOST_NIL;
	t->st.state[SURGE_HOST_IDLE] = n;
	t->mac0 = mac_get(t->conf.mac);
	t->bytes = sizeof(*t) + (size_t)n * sizeof(*t->h) + (t->h6 != NULL ? (size_t)n * sizeof(*t->h6) : 0) +
		   (t->d6 != NULL ? (size_t)n * sizeof(*t->d6) : 0) + (size_t)t->ipidx_n * sizeof(*t->ipidx) +
		   (size_t)t->ev_cap * sizeof(*t->ev);
	t->st.bytes_per_host = (t->bytes + n - 1) / n;
	return 0;
}

void
ht_free(struct hosts_table *t)
{
	free(t->h);
	free(t->h6);
	free(t->d6);
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

/* which: 0 a host's IPv4 timer, 1 its IPv6 one, 2 its DHCPv6 client's */
struct htimer *
ht_tnode(struct hosts_table *t, int which, uint32_t i)
{
	return which == 2 ? &t->d6[i].tm : which == 1 ? &t->h6[i].tm : &t->h[i].tm;
}

/* one timer list's operations, for a host's IPv4 timer (v6 0: its list
 * byte in struct host) or its IPv6 one (struct host6) */
static void
timer_stop(struct hosts_table *t, int v6, uint32_t i, uint8_t *list)
{
	struct htimer *h = ht_tnode(t, v6, i);
	struct hlist *l = &t->lists[*list];

	if (*list == HL_NONE)
		return;
	if (h->prev != HOST_NIL)
		ht_tnode(t, v6, h->prev)->next = h->next;
	else
		l->head = h->next;
	if (h->next != HOST_NIL)
		ht_tnode(t, v6, h->next)->prev = h->prev;
	else
		l->tail = h->prev;
	h->next = h->prev = HOST_NIL;
	*list = HL_NONE;
}

static void
timer_set(struct hosts_table *t, int v6, uint32_t i, uint8_t *list, int to, uint32_t due)
{
	struct htimer *h = ht_tnode(t, v6, i);
	struct hlist *l = &t->lists[to];
	uint32_t at;

	timer_stop(t, v6, i, list);
	h->due = due;
	*list = (uint8_t)to;
	/* walk back from the tail past the timers due later */
	for (at = l->tail; at != HOST_NIL && ms_diff(ht_tnode(t, v6, at)->due, due) > 0; at = ht_tnode(t, v6, at)->prev)
		;
	h->prev = at;
	if (at == HOST_NIL) {
		h->next = l->head;
		l->head = i;
	} else {
		h->next = ht_tnode(t, v6, at)->next;
		ht_tnode(t, v6, at)->next = i;
	}
	if (h->next != HOST_NIL)
		ht_tnode(t, v6, h->next)->prev = i;
	else
		l->tail = i;
}

void
ht_timer_stop(struct hosts_table *t, uint32_t i)
{
	timer_stop(t, 0, i, &t->h[i].list);
}

void
ht_timer_set(struct hosts_table *t, uint32_t i, int list, uint32_t due)
{
	timer_set(t, 0, i, &t->h[i].list, list, due);
}

/* a host's IPv6 (which 1, list HL6) or DHCPv6 (which 2, list HL_D6) timer */
static uint8_t *
side_list(struct hosts_table *t, int which, uint32_t i)
{
	return which == 2 ? &t->d6[i].list : &t->h6[i].list;
}

void
ht_side_timer_stop(struct hosts_table *t, int which, uint32_t i)
{
	timer_stop(t, which, i, side_list(t, which, i));
}

void
ht_side_timer_set(struct hosts_table *t, int which, uint32_t i, uint32_t due)
{
	timer_set(t, which, i, side_list(t, which, i), which == 2 ? HL_D6 : HL6, due);
}

uint32_t
ht_by_ip(const struct hosts_table *t, uint32_t ip)
{
	if (!t->conf.dhcp && t->conf.ip4 == 0)
		return HOST_NIL;        /* an IPv6-only table */
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

/* the modified EUI-64 link-local address of host i's MAC (RFC 4291 2.5.1,
 * appendix A: ff:fe in the middle, the universal/local bit inverted) */
void
ht_link_local(const struct hosts_table *t, uint32_t i, uint8_t *a)
{
	uint8_t mac[6];

	ht_mac(t, i, mac);
	memset(a, 0, 16);
	a[0] = 0xfe;
	a[1] = 0x80;
	a[8] = mac[0] ^ 2;
	a[9] = mac[1];
	a[10] = mac[2];
	a[11] = 0xff;
	a[12] = 0xfe;
	a[13] = mac[3];
	a[14] = mac[4];
	a[15] = mac[5];
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
