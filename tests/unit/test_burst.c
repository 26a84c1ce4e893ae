/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_burst.c - ports, template pools and the hot path (control/port.c,
 * dataplane/pool.c, burst.c, send.c, recv.c) on a real EAL with two virtual ports: net_ring0, its own loopback
 * (what it sends, it receives), and net_null0 (a sink that frees).
 *
 * Proves: ports open once with the asked queues and clone mode; every mbuf
 * of a pool carries the template; an empty pool gives short bursts that are
 * counted; a clone send puts each mbuf on the wire N times with refcount N
 * and every reference comes back; refused sends (clones on a fast-free
 * queue, a single-owner pool on a handover port, bad lengths) send nothing
 * and leave the burst whole; a send cut short by surge_stop() counts its
 * drops; a queue belongs to the first lcore that uses it; and no test leaks
 * an mbuf. EAL starts once per process, so these tests form one group and
 * run in order (the first opens the ports).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "run.h"
#include "check.h"

static struct surge_opts opts;
static uint16_t RING, NUL;

static int
group_setup(void **state)
{
	static const char *const vdevs[] = { "net_ring0", "net_null0,no-rx=1" };

	(void)state;
	return test_eal_start(&opts, "test_burst", vdevs, 2);
}

static int
group_teardown(void **state)
{
	(void)state;
	return test_eal_stop();
}

static int
make_pool(uint32_t size, uint8_t single_owner)
{
	struct surge_pool_conf c = { .size = size, .single_owner = single_owner, .socket = -1 };
	int id = surge_pool_create(&c);

	if (id < 0)
		fail_msg("pool of %u: %s", size, surge_last_error());
	return id;
}

static struct surge_pool_info
pool_info(int pool)
{
	struct surge_pool_info pi;

	assert_int_equal(surge_pool_info(pool, &pi), 0);
	return pi;
}

static void
assert_pool_full(int pool)
{
	struct surge_pool_info pi = pool_info(pool);

	assert_int_equal(pi.avail, pi.size);
}

static struct surge_queue_stats
txq(uint16_t port)
{
	struct surge_queue_stats s;

	ok(surge_txq_stats(port, 0, &s));
	return s;
}

/* Allocates exactly n packets from pool into a new burst. */
static struct surge_burst *
burst_of(int pool, uint32_t n)
{
	struct surge_burst *b = surge_burst_new(pool, SURGE_BURST_MAX);

	assert_non_null(b);
	assert_int_equal(surge_burst_alloc(b, n), n);
	return b;
}

static void
test_ports_open(void **state)
{
	struct surge_port_conf ring = { .rxq = 1, .txq = 1, .clones = 1 };
	struct surge_port_conf null = { .rxq = 1, .txq = 1, .clones = 0, .mtu = 9000 };
	struct surge_port_conf bad;
	struct surge_port_info pi;
	int id;

	(void)state;
	assert_int_equal(surge_port_count(), 2);
	ok(id = surge_port_find("net_ring0"));
	RING = (uint16_t)id;
	ok(id = surge_port_find("net_null0"));
	NUL = (uint16_t)id;
	assert_int_equal(RING, 0);
	assert_int_equal(NUL, 1);
	assert_int_equal(surge_port_find("net_nope9"), -ENODEV);
	assert_error_mentions("net_nope9");

	ok(surge_port_info(RING, &pi));
	assert_string_equal(pi.name, "net_ring0");
	assert_string_equal(pi.driver, "net_ring");
	assert_int_equal(pi.started, 0);
	assert_int_equal(pi.txq, 0);

	/* refused before anything is set up: the ports stay closed */
	bad = (struct surge_port_conf){ .rxq = 0, .txq = 0 };
	assert_int_equal(surge_port_open(RING, &bad), -EINVAL);
	bad = (struct surge_port_conf){ .rxq = 1, .txq = (uint16_t)(pi.max_txq + 1) };
	assert_int_equal(surge_port_open(RING, &bad), -EINVAL);
	assert_error_mentions("tx queues");
	bad = (struct surge_port_conf){ .rxq = (uint16_t)(pi.max_rxq + 1), .txq = 1 };
	assert_int_equal(surge_port_open(RING, &bad), -EINVAL);
	assert_int_equal(surge_port_open(99, &ring), -ENODEV);
	assert_error_mentions("port 99");
	ok(surge_port_info(RING, &pi));
	assert_int_equal(pi.started, 0);

	ok(surge_port_open(RING, &ring));
	ok(surge_port_open(NUL, &null));
	assert_int_equal(surge_port_open(RING, &ring), -EBUSY);
	assert_error_mentions("port 0");
	assert_int_equal(surge_port_open(NUL, &null), -EBUSY);

	ok(surge_port_info(RING, &pi));
	assert_string_equal(pi.driver, "net_ring");
	assert_int_equal(pi.started, 1);
	assert_int_equal(pi.rxq, 1);
	assert_int_equal(pi.txq, 1);
	assert_int_equal(pi.clones, 1);
	assert_int_equal(pi.fast_free, 0);        /* never with clones */
	ok(surge_port_info(NUL, &pi));
	assert_string_equal(pi.name, "net_null0");
	assert_string_equal(pi.driver, "net_null");
	assert_int_equal(pi.started, 1);
	assert_int_equal(pi.rxq, 1);
	assert_int_equal(pi.txq, 1);
	assert_int_equal(pi.clones, 0);
	assert_int_equal(pi.fast_free, (pi.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE) != 0);
}

static void
test_pool_template(void **state)
{
	uint8_t tmpl[60], big[4096];
	struct surge_burst *b;
	struct surge_pool_info pi;
	int pool;

	(void)state;
	for (size_t i = 0; i < sizeof(tmpl); i++)
		tmpl[i] = (uint8_t)(i * 7 + 1);
	pool = make_pool(127, 0);
	ok(surge_pool_fill(pool, tmpl, sizeof(tmpl)));
	pi = pool_info(pool);
	assert_int_equal(pi.size, 127);
	assert_int_equal(pi.avail, 127);
	assert_int_equal(pi.tmpl_len, 60);
	assert_int_equal(pi.single_owner, 0);
	assert_int_equal(pi.alloc_fail, 0);

	b = burst_of(pool, 100);        /* most of the pool: every mbuf was filled */
	assert_int_equal(b->n, 100);
	assert_int_equal(pool_info(pool).avail, 127 - 100);
	for (uint32_t i = 0; i < b->n; i++) {
		assert_int_equal(b->len[i], 60);
		assert_memory_equal(b->data[i], tmpl, sizeof(tmpl));
	}
	/* a pool in use cannot be refilled */
	assert_int_equal(surge_pool_fill(pool, tmpl, sizeof(tmpl)), -EBUSY);
	surge_burst_free(b);
	assert_int_equal(b->n, 0);
	assert_pool_full(pool);

	/* a template larger than the mbufs is refused, the old one stays */
	memset(big, 0xee, sizeof(big));
	assert_int_equal(surge_pool_fill(pool, big, (uint16_t)(pi.data_room + 1)), -EINVAL);
	assert_int_equal(surge_pool_fill(pool, big, 0), -EINVAL);
	assert_int_equal(pool_info(pool).tmpl_len, 60);

	/* alloc into a burst that still holds packets frees those first */
	assert_int_equal(surge_burst_alloc(b, 3), 3);
	assert_int_equal(surge_burst_alloc(b, 3), 3);
	assert_int_equal(pool_info(pool).avail, 127 - 3);
	surge_burst_destroy(b);
	assert_pool_full(pool);
}

/* Receives n frames from the ring into r: each mbuf's lengths and len[]
 * are want, but frame `odd` (n: none), which is odd_len. Frees r. */
static void
recv_lengths(struct surge_burst *r, uint32_t n, uint16_t want, uint32_t odd, uint16_t odd_len)
{
	assert_int_equal(surge_rx_recv(RING, 0, r), n);
	for (uint32_t i = 0; i < n; i++) {
		const struct rte_mbuf *m = r->mbuf[i];
		uint16_t len = i == odd ? odd_len : want;

		assert_int_equal(r->len[i], len);
		assert_int_equal(m->data_len, len);
		assert_int_equal(m->pkt_len, len);
	}
	surge_burst_free(r);
}

/* Every mbuf of the 63-mbuf pool (the one a send made longer among them)
 * allocated through b, sent and received into r at the template's 60
 * bytes; the pool full again after */
static void
whole_pool_at_template_length(struct surge_burst *b, struct surge_burst *r, int pool)
{
	assert_int_equal(surge_burst_alloc(b, 63), 63);
	assert_int_equal(surge_tx_send(RING, 0, b, 1), 63);
	recv_lengths(r, 63, 60, 63, 0);
	assert_pool_full(pool);
}

/* Issue 20 (round 3): alloc leaves the mbuf lengths of a template pool
 * alone while every mbuf holds the template's (a filled pool no send gave
 * another length: the pool is not "resized"), and writes them again once
 * one was sent longer, from its own burst or as a received frame sent on
 * (the net_ring loopback hands the template pool's mbufs to the
 * receiver). Either way the next template burst must go out at the
 * template's length, every mbuf of the pool taken. */
static void
test_template_lengths_after_resize(void **state)
{
	uint8_t tmpl[60];
	struct surge_burst *b, *r;
	int pool;

	(void)state;
	memset(tmpl, 0x5a, sizeof(tmpl));
	pool = make_pool(63, 0);
	ok(surge_pool_fill(pool, tmpl, sizeof(tmpl)));
	r = surge_burst_new(-1, 64);
	assert_non_null(r);

	/* a burst of the pool with one frame made longer */
	b = burst_of(pool, 8);
	b->len[3] = 100;
	assert_int_equal(surge_tx_send(RING, 0, b, 1), 8);
	recv_lengths(r, 8, 60, 3, 100);
	whole_pool_at_template_length(b, r, pool);

	/* a fresh fill holds the template's length again; then a received
	 * frame of the pool sent on longer (another burst's mbuf) */
	ok(surge_pool_fill(pool, tmpl, sizeof(tmpl)));
	assert_int_equal(surge_burst_alloc(b, 4), 4);
	assert_int_equal(surge_tx_send(RING, 0, b, 1), 4);
	assert_int_equal(surge_rx_recv(RING, 0, r), 4);
	r->len[0] = 90;
	assert_int_equal(surge_tx_send(RING, 0, r, 1), 4);
	recv_lengths(r, 4, 60, 0, 90);
	whole_pool_at_template_length(b, r, pool);
	surge_burst_destroy(r);
	surge_burst_destroy(b);
}

/* Filling through surge_pool_data (a template function in Lua): each mbuf
 * keeps its own bytes, and surge_pool_fill(NULL) sets only the length. */
static void
test_pool_data(void **state)
{
	uint8_t *ptr[64];
	struct surge_burst *b;
	int pool, n;

	(void)state;
	assert_int_equal(surge_pool_create(&(struct surge_pool_conf){ .size = 1, .socket = -1 }), -EINVAL);
	assert_int_equal(surge_pool_create(&(struct surge_pool_conf){ .size = 31, .data_room = 63,
								       .socket = -1 }), -EINVAL);
	assert_error_mentions("data room 63");
	pool = make_pool(31, 0);
	n = surge_pool_data(pool, ptr, 64);
	assert_int_equal(n, 31);
	for (int i = 0; i < n; i++)
		memset(ptr[i], i + 1, 80);
	ok(surge_pool_fill(pool, NULL, 80));
	assert_int_equal(pool_info(pool).tmpl_len, 80);
	b = burst_of(pool, 31);
	for (uint32_t i = 0; i < b->n; i++) {
		int k = 0;

		while (k < n && ptr[k] != b->data[i])
			k++;
		assert_true(k < n);                   /* one of the filled mbufs */
		assert_int_equal(b->len[i], 80);
		assert_int_equal(b->data[i][0], k + 1);
		assert_int_equal(b->data[i][79], k + 1);
	}
	surge_burst_destroy(b);
	assert_pool_full(pool);
}

static void
test_pool_exhaustion(void **state)
{
	struct surge_burst *b[3];
	int pool;

	(void)state;
	pool = make_pool(40, 0);
	for (int i = 0; i < 3; i++) {
		b[i] = surge_burst_new(pool, 32);
		assert_non_null(b[i]);
	}
	assert_int_equal(surge_burst_alloc(b[0], 64), 32);   /* capped by cap */
	assert_int_equal(pool_info(pool).alloc_fail, 0);
	assert_int_equal(surge_burst_alloc(b[1], 32), 8);    /* what is left */
	assert_int_equal(b[1]->n, 8);
	for (uint32_t i = 0; i < 8; i++)
		assert_non_null(b[1]->data[i]);
	assert_int_equal(surge_burst_alloc(b[2], 32), 0);
	assert_int_equal(b[2]->n, 0);
	assert_int_equal(pool_info(pool).avail, 0);
	assert_int_equal(pool_info(pool).alloc_fail, 2);      /* both short ones */
	for (int i = 0; i < 3; i++)
		surge_burst_destroy(b[i]);
	assert_pool_full(pool);
}

static void
test_clone_send_ring(void **state)
{
	struct surge_queue_stats tx, rx;
	struct surge_port_stats before, after;
	struct surge_burst *b, *r;
	void *src[4];
	uint64_t bytes = 0;
	int pool;

	(void)state;
	pool = make_pool(63, 0);
	b = burst_of(pool, 4);
	for (uint32_t i = 0; i < 4; i++) {
		src[i] = b->mbuf[i];
		b->len[i] = (uint16_t)(60 + 4 * i);
		memset(b->data[i], 0xa0 + (int)i, b->len[i]);
		bytes += 3 * b->len[i];
	}
	assert_int_equal(surge_tx_send(RING, 0, b, 1025), -EINVAL);   /* too many */
	assert_int_equal(b->n, 4);
	ok(surge_port_stats(RING, &before));
	assert_int_equal(surge_tx_send(RING, 0, b, 3), 12);
	assert_int_equal(b->n, 0);                 /* the driver owns them now */

	r = surge_burst_new(-1, 64);
	assert_non_null(r);
	assert_int_equal(surge_rx_recv(RING, 0, r), 12);
	for (uint32_t k = 0; k < 12; k++) {
		uint32_t i = k / 3;
		uint8_t want[72];

		memset(want, 0xa0 + (int)i, sizeof(want));
		assert_ptr_equal(r->mbuf[k], src[i]);
		assert_int_equal(r->len[k], 60 + 4 * i);
		assert_memory_equal(r->data[k], want, r->len[k]);
		assert_int_equal(surge_burst_refcnt(r, k), 3);
	}
	assert_int_equal(surge_burst_refcnt(r, 12), -EINVAL);
	assert_int_equal(pool_info(pool).avail, 63 - 4);
	surge_burst_free(r);
	assert_pool_full(pool);
	assert_int_equal(surge_rx_recv(RING, 0, r), 0);    /* nothing more queued */
	assert_int_equal(surge_burst_alloc(b, 63), 63);     /* all back at refcnt 1 */
	for (uint32_t i = 0; i < 63; i++)
		assert_int_equal(surge_burst_refcnt(b, i), 1);
	surge_burst_free(b);

	tx = txq(RING);
	ok(surge_rxq_stats(RING, 0, &rx));
	assert_int_equal(tx.packets, 12);
	assert_int_equal(tx.bytes, bytes);
	assert_int_equal(tx.drops, 0);
	assert_int_equal(tx.bursts, 1);
	assert_int_equal(tx.lcore, (int32_t)rte_lcore_id());
	assert_int_equal(rx.packets, 12);
	assert_int_equal(rx.bytes, bytes);
	assert_int_equal(rx.bursts, 1);
	ok(surge_port_stats(RING, &after));
	assert_int_equal(after.opackets - before.opackets, 12);
	assert_int_equal(after.ipackets - before.ipackets, 12);
	surge_burst_destroy(r);
	surge_burst_destroy(b);
}

/* Issue 20: a burst's free skips its pass over the mbufs when whoever
 * filled it (recv, alloc) found every mbuf plain (refcnt 1, one segment,
 * direct, one pool). recv must say so only when it is true: a received
 * mbuf another holder still references (refcnt 2) makes the burst not
 * plain, and its free drops that reference instead of putting the mbuf
 * back into the pool under the other holder. */
static void
test_recv_plain_flag(void **state)
{
	struct surge_burst *b, *r;
	struct rte_mbuf *held;
	int pool;

	(void)state;
	pool = make_pool(63, 0);
	b = burst_of(pool, 4);
	r = surge_burst_new(-1, 64);
	assert_non_null(r);
	assert_int_equal(b->plain, 1);               /* alloc: as the pool's free left them */
	assert_int_equal(surge_tx_send(RING, 0, b, 1), 4);
	assert_int_equal(b->plain, 0);
	assert_int_equal(surge_rx_recv(RING, 0, r), 4);
	assert_int_equal(r->plain, 1);
	surge_burst_free(r);
	assert_int_equal(r->plain, 0);
	assert_pool_full(pool);

	/* one mbuf of four held elsewhere too */
	assert_int_equal(surge_burst_alloc(b, 4), 4);
	held = b->mbuf[2];
	rte_mbuf_refcnt_update(held, 1);
	assert_int_equal(surge_tx_send(RING, 0, b, 1), 4);
	assert_int_equal(surge_rx_recv(RING, 0, r), 4);
	assert_int_equal(r->plain, 0);
	surge_burst_free(r);
	assert_int_equal(pool_info(pool).avail, 63 - 1);   /* the other holder's, intact */
	assert_int_equal(rte_mbuf_refcnt_read(held), 1);
	rte_pktmbuf_free(held);
	assert_pool_full(pool);

	/* a received burst sent as clones: refcounts changed, the burst emptied */
	assert_int_equal(surge_burst_alloc(b, 2), 2);
	assert_int_equal(surge_tx_send(RING, 0, b, 1), 2);
	assert_int_equal(surge_rx_recv(RING, 0, r), 2);
	assert_int_equal(surge_tx_send(RING, 0, r, 2), 4);
	assert_int_equal(r->n, 0);
	assert_int_equal(r->plain, 0);
	assert_int_equal(surge_rx_recv(RING, 0, r), 4);
	assert_int_equal(r->plain, 0);               /* each mbuf twice: refcnt 2 */
	surge_burst_free(r);
	assert_pool_full(pool);
	surge_burst_destroy(r);
	surge_burst_destroy(b);
}

/* Issue 20: a poll with packets orders its receive time after the
 * poll's loads (RDTSCP or LFENCE) only once the run has a latency receiver,
 * which times probes by it; before, and after the receivers are freed, it
 * reads the plain TSC. Either way burst.tsc is a time between the call and
 * its return. */
static void
test_receive_time_ordered_with_latency(void **state)
{
	struct surge_burst *b, *r;
	uint64_t t0, t1;
	int pool;

	(void)state;
	assert_int_equal(surge_latency_count(), 0);
	assert_int_equal(rt()->rx_tsc_ordered, 0);
	pool = make_pool(63, 0);
	b = burst_of(pool, 4);
	r = surge_burst_new(-1, 64);
	assert_non_null(r);
	for (int ordered = 0; ordered <= 1; ordered++) {
		if (ordered) {
			assert_true(surge_latency_new() >= 0);
			assert_int_equal(rt()->rx_tsc_ordered, 1);
			assert_int_equal(surge_burst_alloc(b, 4), 4);
		}
		assert_int_equal(surge_tx_send(RING, 0, b, 1), 4);
		t0 = rte_rdtsc();
		assert_int_equal(surge_rx_recv(RING, 0, r), 4);
		t1 = rte_rdtsc();
		assert_true(r->tsc >= t0 && r->tsc <= t1);
		surge_burst_free(r);
	}
	latency_free_all();
	assert_int_equal(rt()->rx_tsc_ordered, 0);
	assert_pool_full(pool);
	surge_burst_destroy(r);
	surge_burst_destroy(b);
}

static void
test_ring_refuses_single_owner_pool(void **state)
{
	struct surge_queue_stats before = txq(RING);
	struct surge_burst *b;
	int pool;

	(void)state;
	pool = make_pool(31, 1);
	assert_int_equal(pool_info(pool).single_owner, 1);
	b = burst_of(pool, 2);
	assert_int_equal(surge_tx_send(RING, 0, b, 1), -EINVAL);
	assert_error_mentions("shared");
	assert_int_equal(b->n, 2);
	assert_int_equal(txq(RING).packets, before.packets);
	surge_burst_destroy(b);
	assert_pool_full(pool);
}

static void
test_clone_refused_without_clones(void **state)
{
	struct surge_queue_stats before = txq(NUL);
	struct surge_burst *b;
	int pool;

	(void)state;
	pool = make_pool(31, 0);
	b = burst_of(pool, 4);
	assert_int_equal(surge_tx_send(NUL, 0, b, 2), -EINVAL);
	assert_error_mentions("clones");
	assert_int_equal(b->n, 4);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(surge_burst_refcnt(b, i), 1);
	assert_int_equal(txq(NUL).packets, before.packets);
	assert_int_equal(txq(NUL).bursts, before.bursts);
	surge_burst_destroy(b);
	assert_pool_full(pool);
}

static void
test_length_validation(void **state)
{
	struct surge_queue_stats before = txq(NUL), after;
	struct surge_burst *b;
	uint16_t room;
	int pool;

	(void)state;
	pool = make_pool(31, 0);
	room = pool_info(pool).data_room;
	b = burst_of(pool, 4);
	b->len[2] = 5;
	assert_int_equal(surge_tx_send(NUL, 0, b, 1), -EINVAL);
	assert_error_mentions("length 5");
	b->len[2] = 13;                              /* one short of a header */
	assert_int_equal(surge_tx_send(NUL, 0, b, 1), -EINVAL);
	b->len[2] = 60;
	b->len[3] = (uint16_t)(room + 1);
	assert_int_equal(surge_tx_send(NUL, 0, b, 1), -EINVAL);
	assert_int_equal(b->n, 4);
	assert_int_equal(txq(NUL).packets, before.packets);
	assert_int_equal(pool_info(pool).avail, 31 - 4);

	/* the bounds themselves are fine */
	b->len[2] = 14;
	b->len[3] = room;
	assert_int_equal(surge_tx_send(NUL, 0, b, 1), 4);
	after = txq(NUL);
	assert_int_equal(after.packets - before.packets, 4);
	assert_int_equal(after.bytes - before.bytes, 60 + 60 + 14 + room);
	surge_burst_destroy(b);
	assert_pool_full(pool);
}

/* Issue 20: the fused send + alloc sends what the burst held and refills it
 * with n (clamped to the capacity; 0: none) from its pool, counting as a
 * send and an alloc would; send_due on an unpaced queue sends it all. */
static void
test_send_alloc_null(void **state)
{
	struct surge_queue_stats before = txq(NUL), after;
	struct surge_burst *b;
	int pool;

	(void)state;
	pool = make_pool(255, 0);
	b = surge_burst_new(pool, 32);
	assert_non_null(b);
	assert_int_equal(surge_burst_alloc(b, 32), 32);
	assert_int_equal(surge_tx_send_alloc(NUL, 0, b, 1, 7), 32);
	assert_int_equal(b->n, 7);
	assert_int_equal(b->from_alloc, 1);
	assert_int_equal(b->len[6], 60);
	assert_ptr_equal(b->data[0], rte_pktmbuf_mtod((struct rte_mbuf *)b->mbuf[0], uint8_t *));
	assert_int_equal(surge_tx_send_alloc(NUL, 0, b, 1, 500), 7);   /* at most the capacity */
	assert_int_equal(b->n, 32);
	assert_int_equal(surge_tx_send_due(NUL, 0, b), 32);           /* unpaced: all of it */
	assert_int_equal(b->n, 0);
	assert_int_equal(surge_tx_send_alloc(NUL, 0, b, 1, 3), 0);    /* empty: refilled only */
	assert_int_equal(b->n, 3);
	assert_int_equal(surge_tx_send_alloc(NUL, 0, b, 1, 0), 3);    /* the last send */
	assert_int_equal(b->n, 0);
	assert_int_equal(surge_tx_send_alloc(NUL, 1, b, 1, 4), -EINVAL);  /* no queue 1: no alloc */
	assert_int_equal(b->n, 0);
	after = txq(NUL);
	assert_int_equal(after.packets - before.packets, 32 + 7 + 32 + 3);
	assert_int_equal(after.bytes - before.bytes, (32 + 7 + 32 + 3) * 60);
	assert_int_equal(after.drops, before.drops);
	surge_burst_destroy(b);
	assert_pool_full(pool);
}

/* Issue 20: send_due on a paced queue sends what is due (the first packet
 * leaves at once, the next 1 ms later at 1000 pps) and keeps the rest at the
 * burst's front, in order, for the next call; none is a drop. */
static void
test_send_due_keeps_the_rest(void **state)
{
	struct surge_queue_stats before = txq(NUL), after;
	struct surge_rate r;
	struct surge_burst *b;
	void *second;
	int pool;

	(void)state;
	pool = make_pool(255, 0);
	b = surge_burst_new(pool, 8);
	assert_non_null(b);
	memset(&r, 0, sizeof(r));
	r.value = 1000;
	r.unit = SURGE_RATE_PPS;
	ok(surge_txq_set_rate(NUL, 0, &r));
	assert_int_equal(surge_burst_alloc(b, 8), 8);
	second = b->mbuf[1];
	b->len[1] = 59;
	assert_int_equal(surge_tx_send_due(NUL, 0, b), 1);
	assert_int_equal(b->n, 7);
	assert_ptr_equal(b->mbuf[0], second);
	assert_int_equal(b->len[0], 59);
	assert_ptr_equal(b->data[0], rte_pktmbuf_mtod((struct rte_mbuf *)second, uint8_t *));
	r.value = 0;                         /* unpaced again: the rest at once */
	ok(surge_txq_set_rate(NUL, 0, &r));
	assert_int_equal(surge_tx_send_due(NUL, 0, b), 7);
	assert_int_equal(b->n, 0);
	after = txq(NUL);
	assert_int_equal(after.packets - before.packets, 8);
	assert_int_equal(after.bytes - before.bytes, 7 * 60 + 59);
	assert_int_equal(after.drops, before.drops);
	assert_int_equal(after.unsent, before.unsent);
	surge_burst_destroy(b);
	assert_pool_full(pool);
}

static void
test_plain_send_null(void **state)
{
	struct surge_queue_stats before = txq(NUL), after;
	struct surge_burst *b;
	int pool;

	(void)state;
	pool = make_pool(255, 0);
	b = surge_burst_new(pool, 64);
	assert_non_null(b);
	for (int round = 0; round < 10; round++) {
		assert_int_equal(surge_burst_alloc(b, 64), 64);
		assert_int_equal(surge_tx_send(NUL, 0, b, round % 2), 64);  /* 0 means 1 */
		assert_int_equal(b->n, 0);
	}
	after = txq(NUL);
	assert_int_equal(after.packets - before.packets, 640);
	assert_int_equal(after.bytes - before.bytes, 640 * 60);
	assert_int_equal(after.bursts - before.bursts, 10);
	assert_int_equal(after.drops, before.drops);
	assert_int_equal(surge_tx_send(NUL, 0, b, 1), 0);    /* empty burst */
	assert_int_equal(surge_tx_send(NUL, 1, b, 1), -EINVAL);  /* no queue 1 */
	assert_int_equal(surge_rx_recv(NUL, 0, b), 0);      /* no-rx=1 */
	surge_burst_destroy(b);
	assert_pool_full(pool);
}

/* A clone send bigger than the ring, with the run stopped: what the ring
 * cannot take is freed and counted as drops, and every reference is
 * accounted for. */
static void
test_stopped_send_counts_drops(void **state)
{
	struct surge_queue_stats before = txq(RING), after;
	struct surge_burst *b, *r;
	uint64_t bytes = 0;
	uint32_t got = 0, n;
	int sent, pool;

	(void)state;
	pool = make_pool(63, 0);
	b = burst_of(pool, 4);
	for (uint32_t i = 0; i < 4; i++)
		b->len[i] = (uint16_t)(100 + i);
	surge_stop();
	sent = surge_tx_send(RING, 0, b, 1000);
	rt()->stop = 0;
	assert_true(sent > 0 && sent < 4000);       /* the ring holds ~1k */
	for (int k = 0; k < sent; k++)
		bytes += 100 + k / 1000;
	r = surge_burst_new(-1, SURGE_BURST_MAX);
	assert_non_null(r);
	while ((n = (uint32_t)surge_rx_recv(RING, 0, r)) > 0) {
		got += n;
		surge_burst_free(r);
	}
	assert_int_equal(got, sent);
	after = txq(RING);
	assert_int_equal(after.packets - before.packets, sent);
	assert_int_equal(after.drops - before.drops, 4000 - sent);
	assert_int_equal(after.bytes - before.bytes, bytes);
	surge_burst_destroy(r);
	surge_burst_destroy(b);
	assert_pool_full(pool);
}

/* What a worker lcore saw when it tried to send on a queue. */
struct worker_try {
	uint16_t port;
	int rc;
	char err[SURGE_ERR_MAX];
};

static int
worker_send(void *arg)
{
	struct worker_try *w = arg;
	struct surge_burst *b = surge_burst_new(-1, 1);

	w->rc = b != NULL ? surge_tx_send(w->port, 0, b, 1) : -ENOMEM;
	snprintf(w->err, sizeof(w->err), "%s", surge_last_error());
	surge_burst_destroy(b);
	return 0;
}

/* Runs worker_send on a worker lcore; skips the test when there is none. */
static void
try_from_worker(struct worker_try *w)
{
	unsigned worker = rte_get_next_lcore(-1, 1, 0);

	if (worker >= RTE_MAX_LCORE)
		skip();
	assert_int_equal(rte_eal_remote_launch(worker_send, w, worker), 0);
	assert_int_equal(rte_eal_wait_lcore(worker), 0);
}

/* Regression: `bursts` is documented (surge.h) as "calls that moved at
 * least one packet", as surge_rx_recv counts it; a send that moved nothing
 * (ring full, run stopping) used to be counted too. */
static void
test_tx_bursts_count_only_moving_calls(void **state)
{
	struct surge_queue_stats before, after;
	struct surge_burst *b, *extra, *r;
	int pool, filled, rc, left;

	(void)state;
	pool = make_pool(63, 0);
	b = burst_of(pool, 4);
	extra = burst_of(pool, 2);
	r = surge_burst_new(-1, SURGE_BURST_MAX);
	assert_non_null(r);
	surge_stop();
	filled = surge_tx_send(RING, 0, b, 1000);      /* fills the ring */
	before = txq(RING);
	rc = surge_tx_send(RING, 0, extra, 1);          /* nowhere to go */
	left = (int)extra->n;
	after = txq(RING);
	rt()->stop = 0;
	while (surge_rx_recv(RING, 0, r) > 0)
		surge_burst_free(r);
	surge_burst_destroy(r);
	surge_burst_destroy(b);
	surge_burst_destroy(extra);
	assert_pool_full(pool);
	assert_true(filled > 0 && filled < 4000);
	assert_int_equal(rc, 0);
	assert_int_equal(left, 0);                      /* freed, not kept */
	assert_int_equal(after.drops - before.drops, 2);
	assert_int_equal(after.packets, before.packets);
	assert_int_equal(after.bytes, before.bytes);
	assert_int_equal(after.bursts, before.bursts);
}

static void
test_queue_belongs_to_first_lcore(void **state)
{
	struct surge_queue_stats before = txq(NUL);
	struct worker_try w = { .port = NUL };
	char owner[32];

	(void)state;
	assert_int_equal(before.lcore, (int32_t)rte_lcore_id());
	assert_int_equal(surge_pool_info(4242, &(struct surge_pool_info){ 0 }), -EINVAL);
	try_from_worker(&w);
	assert_true(w.rc < 0);
	snprintf(owner, sizeof(owner), "used by lcore %u", rte_lcore_id());
	if (strstr(w.err, owner) == NULL)
		fail_msg("worker's error '%s' does not say '%s'", w.err, owner);
	assert_int_equal(txq(NUL).lcore, before.lcore);
	assert_int_equal(txq(NUL).bursts, before.bursts);
	/* errors are per lcore: the worker's did not replace the main one */
	assert_error_mentions("no pool 4242");
}

/* Regression: surge_tx_send() and surge_rx_recv() used to return -EINVAL
 * whenever claim() failed, dropping the -ENODEV ("port is not open") or
 * -EBUSY ("queue already used by lcore N") that claim() reported. */
static void
test_send_errors_keep_their_errno(void **state)
{
	struct surge_burst *b = surge_burst_new(-1, 4);
	struct worker_try w = { .port = NUL };
	int tx, rx;

	(void)state;
	assert_non_null(b);
	tx = surge_tx_send(7, 0, b, 1);
	assert_error_mentions("port 7 is not open");
	rx = surge_rx_recv(7, 0, b);
	surge_burst_destroy(b);
	assert_int_equal(tx, -ENODEV);
	assert_int_equal(rx, -ENODEV);
	try_from_worker(&w);
	assert_int_equal(w.rc, -EBUSY);
}

/* A burst whose counts or pool id were overwritten (from Lua through the
 * FFI, or a NULL) is refused by every entry point before any mbuf is touched:
 * burst_check() guards n <= cap <= SURGE_BURST_MAX and the pool id. */
static void
test_corrupt_burst_refused(void **state)
{
	int pool = make_pool(63, 0);
	struct surge_burst *b = burst_of(pool, 4);
	struct surge_burst saved = *b;
	uint32_t caps[] = { 0, SURGE_BURST_MAX + 1, 0xffffffffu };

	(void)state;
	assert_int_equal(surge_tx_send(NUL, 0, NULL, 1), -EINVAL);
	assert_error_mentions("no burst");
	assert_int_equal(surge_rx_recv(NUL, 0, NULL), -EINVAL);
	assert_int_equal(surge_burst_alloc(NULL, 4), 0);
	surge_burst_free(NULL);
	for (unsigned k = 0; k < sizeof(caps) / sizeof(caps[0]); k++) {
		b->cap = caps[k];
		assert_int_equal(surge_tx_send(NUL, 0, b, 1), -EINVAL);
		assert_error_mentions("corrupt burst");
		assert_int_equal(surge_rx_recv(NUL, 0, b), -EINVAL);
		assert_int_equal(surge_burst_alloc(b, 4), 0);
		assert_int_equal(surge_burst_refcnt(b, 0), -EINVAL);
		assert_int_equal(surge_pcap_write(0, b), -EINVAL);
		assert_int_equal(surge_pcap_fill(0, b, 0), -EINVAL);
		assert_int_equal(surge_probe_mark(b, 0, 42, 1), -EINVAL);
		assert_int_equal(surge_latency_scan(0, b, 42), -EINVAL);
	}
	b->cap = saved.cap;
	b->n = saved.cap + 1;                      /* more held than it can hold */
	assert_int_equal(surge_tx_send(NUL, 0, b, 1), -EINVAL);
	b->n = saved.n;
	b->pool = 9999;                            /* no such pool */
	assert_int_equal(surge_burst_alloc(b, 4), 0);
	assert_error_mentions("no pool 9999");
	assert_int_equal(surge_tx_send(NUL, 0, b, 1), -EINVAL);
	*b = saved;                                /* intact again: its packets go home */
	surge_burst_destroy(b);
	assert_pool_full(pool);
}

static void
test_no_leaks(void **state)
{
	(void)state;
	assert_true(surge_pool_count() > 0);
	assert_int_equal(pools_check_and_free(), 0);
}

static void
test_leak_is_reported(void **state)
{
	struct surge_burst *b;

	(void)state;
	b = burst_of(make_pool(31, 0), 1);
	assert_int_equal(pools_check_and_free(), 1);
	b->n = 0;                   /* its pool is gone: don't free into it */
	surge_burst_destroy(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
			cmocka_unit_test(test_ports_open),
		cmocka_unit_test(test_pool_template),
		cmocka_unit_test(test_pool_data),
		cmocka_unit_test(test_pool_exhaustion),
		cmocka_unit_test(test_clone_send_ring),
		cmocka_unit_test(test_recv_plain_flag),
		cmocka_unit_test(test_receive_time_ordered_with_latency),
		cmocka_unit_test(test_ring_refuses_single_owner_pool),
		cmocka_unit_test(test_clone_refused_without_clones),
		cmocka_unit_test(test_length_validation),
		cmocka_unit_test(test_plain_send_null),
		cmocka_unit_test(test_send_alloc_null),
		cmocka_unit_test(test_send_due_keeps_the_rest),
		cmocka_unit_test(test_stopped_send_counts_drops),
		cmocka_unit_test(test_tx_bursts_count_only_moving_calls),
		cmocka_unit_test(test_queue_belongs_to_first_lcore),
		cmocka_unit_test(test_send_errors_keep_their_errno),
		cmocka_unit_test(test_corrupt_burst_refused),
		cmocka_unit_test(test_template_lengths_after_resize),
		cmocka_unit_test(test_no_leaks),
		cmocka_unit_test(test_leak_is_reported),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
