/* SPDX-License-Identifier: BSD-3-Clause
 *
 * pool.c - template mbuf pools.
 *
 * Every mbuf is filled with the template once, when the pool is made; the hot
 * loop then rewrites only the bytes that vary. A pool made inside a task is
 * used by that lcore alone, so it gets the single-producer/single-consumer
 * ring (no atomic compare-and-swap on refill and flush). At the end of a run
 * each pool must be full again: anything else is a leak and fails the run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "dataplane.h"

#define POOL_DEFAULT_SIZE 8191     /* 2^n - 1 suits the backing ring */
#define POOL_DEFAULT_CACHE 256
/* Without hugepages DPDK backs memory with 4 KB pages and keeps an mbuf from
 * straddling two; a data room this size packs two mbufs per page. */
#define NO_HUGE_DATA_ROOM 1664

struct pool_state *
pool_get(int id)
{
	return pool_at(rt(), id);
}

struct fill_arg {
	const uint8_t *bytes;
	uint16_t len;
	uint8_t **data;
	uint32_t max, n;
	intptr_t delta;               /* data pointer - mbuf pointer, the same for all? */
	int varied;
};

static void fill_one(struct rte_mempool *mp, void *arg, void *obj, unsigned idx);

int
surge_pool_create(const struct surge_pool_conf *conf)
{
	struct runtime *r = rt();
	struct rte_mempool *mp;
	char name[RTE_MEMPOOL_NAMESIZE];
	uint32_t size = conf->size ? conf->size : POOL_DEFAULT_SIZE;
	uint32_t cache = conf->cache ? conf->cache : POOL_DEFAULT_CACHE;
	uint16_t room = conf->data_room;
	int socket = conf->socket >= 0 ? conf->socket : (int)rte_socket_id();
	int id;

	if (room == 0)
		room = rte_eal_has_hugepages() ? RTE_MBUF_DEFAULT_DATAROOM : NO_HUGE_DATA_ROOM;
	if (size < 2 || size > (1u << 24))
		return rt_error(-EINVAL, "pool size %u outside 2..16777216", size);
	if (room < 64 || room > 65535 - RTE_PKTMBUF_HEADROOM)
		return rt_error(-EINVAL, "pool data room %u outside 64..%u", room,
				65535 - RTE_PKTMBUF_HEADROOM);
	if (cache > RTE_MEMPOOL_CACHE_MAX_SIZE || cache * 3 / 2 > size)
		cache = RTE_MIN((uint32_t)RTE_MEMPOOL_CACHE_MAX_SIZE, size * 2 / 3);

	registry_lock();
	id = r->npools;
	if (id >= SURGE_POOL_MAX) {
		registry_unlock();
		return rt_error(-ENOSPC, "too many pools (at most %d)", SURGE_POOL_MAX);
	}
	snprintf(name, sizeof(name), "surge_p%d", id);
	mp = rte_pktmbuf_pool_create_by_ops(name, size, cache, 0, room + RTE_PKTMBUF_HEADROOM,
					    socket, conf->single_owner ? "ring_sp_sc" : "ring_mp_mc");
	if (mp != NULL) {
		r->pool[id].mp = mp;
		r->pool[id].single_owner = conf->single_owner;
		r->pool[id].owner_lcore = (int32_t)lcore_self();
		r->pool[id].tmpl_len = 60;
		r->pool[id].resized = 1;     /* its mbufs hold length 0 until a fill */
		registry_publish(&r->npools, id + 1);
	}
	registry_unlock();
	if (mp == NULL)
		return rt_error(-rte_errno, "pool of %u mbufs (%u bytes each) on socket %d: %s",
				size, room, socket, rte_strerror(rte_errno));
	{
		struct fill_arg none = { 0 };

		rte_mempool_obj_iter(mp, fill_one, &none);   /* clears the probe field */
		/* every mbuf's data at the same offset from its header (as a
		 * pktmbuf pool makes them): alloc computes data pointers without
		 * reading the mbufs (see surge_burst_alloc) */
		if (!none.varied && none.delta > 0 && none.delta < UINT16_MAX)
			r->pool[id].data_delta = (uint16_t)none.delta;
	}
	return id;
}

static void
fill_one(struct rte_mempool *mp __rte_unused, void *arg, void *obj, unsigned idx __rte_unused)
{
	struct fill_arg *fa = arg;
	struct rte_mbuf *m = obj;
	uint8_t *data = rte_pktmbuf_mtod(m, uint8_t *);
	intptr_t delta = data - (uint8_t *)m;

	probe_clear(m);   /* not a probe */
	if (fa->n == 0)
		fa->delta = delta;
	else if (delta != fa->delta)
		fa->varied = 1;
	if (fa->bytes != NULL)
		memcpy(data, fa->bytes, fa->len);
	if (fa->len != 0) {          /* a fill (surge_pool_fill), bytes or not */
		m->data_len = fa->len;
		m->pkt_len = fa->len;
	}
	if (fa->data != NULL && fa->n < fa->max)
		fa->data[fa->n] = data;
	fa->n++;
}

static int
pool_idle(int pool, struct pool_state **out)
{
	struct pool_state *p = pool_get(pool);

	if (p == NULL)
		return rt_error(-EINVAL, "no pool %d", pool);
	if (rte_mempool_avail_count(p->mp) != p->mp->size)
		return rt_error(-EBUSY, "pool %d: cannot refill while %u mbufs are in use", pool,
				p->mp->size - rte_mempool_avail_count(p->mp));
	*out = p;
	return 0;
}

int
surge_pool_fill(int pool, const uint8_t *bytes, uint16_t len)
{
	struct fill_arg fa = { .bytes = bytes, .len = len };
	struct pool_state *p = NULL;
	int rc;

	if ((rc = pool_idle(pool, &p)) != 0)
		return rc;
	if (len == 0 || len > rte_pktmbuf_data_room_size(p->mp) - RTE_PKTMBUF_HEADROOM)
		return rt_error(-EINVAL, "template of %u bytes does not fit the pool's %u-byte mbufs",
				len, rte_pktmbuf_data_room_size(p->mp) - RTE_PKTMBUF_HEADROOM);
	rte_mempool_obj_iter(p->mp, fill_one, &fa);
	p->tmpl_len = len;
	p->resized = 0;       /* every mbuf now holds len (the pool is idle) */
	free(p->tmpl);
	p->tmpl = NULL;
	if (bytes != NULL && (p->tmpl = malloc(len)) != NULL)
		memcpy(p->tmpl, bytes, len);   /* to undo probe marks (latency.c) */
	return 0;
}

int
surge_pool_data(int pool, uint8_t **data, uint32_t max)
{
	struct fill_arg fa = { .data = data, .max = max };
	struct pool_state *p = NULL;
	int rc;

	if ((rc = pool_idle(pool, &p)) != 0)
		return rc;
	rte_mempool_obj_iter(p->mp, fill_one, &fa);
	return (int)RTE_MIN(fa.n, max);
}

int
surge_pool_info(int pool, struct surge_pool_info *out)
{
	struct pool_state *p = pool_get(pool);

	if (p == NULL)
		return rt_error(-EINVAL, "no pool %d", pool);
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", p->mp->name);
	out->size = p->mp->size;
	out->avail = rte_mempool_avail_count(p->mp);
	out->alloc_fail = __atomic_load_n(&p->alloc_fail, __ATOMIC_RELAXED);
	out->data_room = rte_pktmbuf_data_room_size(p->mp) - RTE_PKTMBUF_HEADROOM;
	out->tmpl_len = p->tmpl_len;
	out->socket = p->mp->socket_id;
	out->single_owner = p->single_owner;
	out->owner_lcore = p->owner_lcore;
	return 0;
}

int
surge_pool_count(void)
{
	return RT_REGISTRY_SIZE(npools);
}

/* 1 when the pool leaked: a pool not full at exit */
static int
check_and_free(void *slot)
{
	struct pool_state *p = slot;
	struct rte_mempool *mp = p->mp;
	int i = (int)(p - rt()->pool), leaked = 0;
	unsigned avail;

	if (mp == NULL)
		return 0;
	avail = rte_mempool_avail_count(mp);
	if (avail != mp->size) {
		fprintf(stderr, "surge: error: pool %d leaked %u of %u mbufs\n", i, mp->size - avail, mp->size);
		leaked = 1;
	} else {
		rt_info("pool %d: %u of %u mbufs back, no leak", i, avail, mp->size);
	}
	rte_mempool_free(mp);
	free(p->tmpl);
	return leaked;
}

int
pools_check_and_free(void)
{
	return RT_REGISTRY_CLEAR(npools, pool, check_and_free);
}

/* The template's layout (header lengths, protocols), for checksum offload
 * (offload.c). */
int
surge_pool_layout(int pool, uint16_t l2_len, uint16_t l3_len, uint8_t ip_version, uint8_t l4_proto)
{
	struct pool_state *p = pool_get(pool);

	if (p == NULL)
		return rt_error(-EINVAL, "no pool %d", pool);
	if ((ip_version != 0 && ip_version != 4 && ip_version != 6) ||
	    (l4_proto != 0 && l4_proto != IPPROTO_UDP && l4_proto != IPPROTO_TCP) ||
	    (ip_version == 4 && l3_len < sizeof(struct rte_ipv4_hdr)) ||
	    (ip_version == 6 && l3_len < sizeof(struct rte_ipv6_hdr)))
		return rt_error(-EINVAL, "pool %d: layout ip%u/%u with l3_len %u is not one surge offloads",
				pool, ip_version, l4_proto, l3_len);
	p->l2_len = l2_len;
	p->l3_len = l3_len;
	p->ip_version = ip_version;
	p->l4_proto = l4_proto;
	return 0;
}

