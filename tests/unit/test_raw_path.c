/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_raw_path.c - the raw template path (burst.c: allocation without
 * rte_pktmbuf_reset) keeps every mbuf's invariants however it travels.
 *
 * A template pool is cycled through everything a send can do to an mbuf:
 * plain sends into net_null, clone sends (refcount N), latency probes and the
 * net_ring hand-over (the receiver frees what the sender allocated),
 * refused sends, sends cut short by a stop, checksum offload on net_tap
 * (where the kernel gives it one) and frames cut shorter than the template.
 * After every allocation each mbuf must look exactly as a reset would leave
 * it for a send (refcount 1, one segment, no next, the default headroom, no
 * offload flags) and still carry the template; at the end every mbuf of the
 * pools, free again, must satisfy the same. The debug build also checks the
 * invariants inside burst.c itself on every allocation (RTE_VERIFY).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "run.h"
#include "check.h"

static struct surge_opts opts;
static uint16_t RING, NUL, TAP;
static int have_tap;
static char tap_vdev[64];

#define FRAME 60
#define ROUNDS 400

/* Ethernet / IPv4 / UDP, checksums filled: the template every mbuf holds. */
static uint8_t frame[FRAME];

static void
make_frame(void)
{
	static const uint8_t head[] = {
		0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00,
		0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
		0x04, 0x00, 0x13, 0x88, 0, 26, 0, 0,
	};

	memcpy(frame, head, sizeof(head));
	for (size_t i = sizeof(head); i < FRAME; i++)
		frame[i] = (uint8_t)i;
}

static int
group_setup(void **state)
{
	const char *vdevs[] = { "net_ring0", "net_null0,no-rx=1", tap_vdev };

	(void)state;
	make_frame();
	/* net_tap offers checksum offload; it needs root and /dev/net/tun */
	if (geteuid() == 0 && access("/dev/net/tun", R_OK | W_OK) == 0) {
		snprintf(tap_vdev, sizeof(tap_vdev), "net_tap0,iface=srawtap%d", (int)getpid() % 10000);
		have_tap = 1;
	}
	return test_eal_start(&opts, "test_raw_path", vdevs, have_tap ? 3 : 2);
}

static int
group_teardown(void **state)
{
	(void)state;
	return test_eal_stop();
}

static int
template_pool(void)
{
	struct surge_pool_conf c = { .size = 1023, .single_owner = 0, .socket = -1 };
	int id = surge_pool_create(&c);

	if (id < 0)
		fail_msg("pool: %s", surge_last_error());
	ok(surge_pool_fill(id, frame, FRAME));
	ok(surge_pool_layout(id, 14, 20, 4, 17));
	return id;
}

/* What a reset would have left, and the template still in place. */
static void
assert_fresh(const struct rte_mbuf *m, int check_bytes)
{
	assert_int_equal(rte_mbuf_refcnt_read(m), 1);
	assert_int_equal(m->nb_segs, 1);
	assert_null(m->next);
	assert_int_equal(m->data_off, RTE_PKTMBUF_HEADROOM);
	assert_int_equal(m->ol_flags & ~RTE_MBUF_F_EXTERNAL, 0);
	if (check_bytes)
		assert_memory_equal(rte_pktmbuf_mtod(m, const uint8_t *), frame, FRAME);
}

static void
alloc_fresh(struct surge_burst *b, uint32_t n, int check_bytes)
{
	assert_int_equal(surge_burst_alloc(b, n), n);
	for (uint32_t i = 0; i < n; i++) {
		assert_ptr_equal(b->data[i], rte_pktmbuf_mtod((struct rte_mbuf *)b->mbuf[i], uint8_t *));
		assert_int_equal(b->len[i], FRAME);
		assert_fresh(b->mbuf[i], check_bytes);
	}
}

static void
check_free_mbuf(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
	const struct rte_mbuf *m = obj;

	(void)mp, (void)arg, (void)idx;
	assert_int_equal(rte_mbuf_refcnt_read(m), 1);
	assert_int_equal(m->nb_segs, 1);
	assert_null(m->next);
	assert_int_equal(m->data_off, RTE_PKTMBUF_HEADROOM);
}

static void
assert_pool_whole(int pool)
{
	struct surge_pool_info pi;

	ok(surge_pool_info(pool, &pi));
	assert_int_equal(pi.avail, pi.size);
	rte_mempool_obj_iter(pool_get(pool)->mp, check_free_mbuf, NULL);
}

static void
test_ports_open(void **state)
{
	struct surge_port_conf ring = { .rxq = 1, .txq = 1, .clones = 1 };
	struct surge_port_conf null = { .rxq = 1, .txq = 1, .clones = 1 };
	struct surge_port_conf tap = { .rxq = 1, .txq = 1, .csum_offload = 1 };
	struct surge_port_info pi;

	(void)state;
	ok(RING = (uint16_t)surge_port_find("net_ring0"));
	ok(NUL = (uint16_t)surge_port_find("net_null0"));
	ok(surge_port_open(RING, &ring));
	ok(surge_port_open(NUL, &null));
	if (!have_tap)
		return;
	TAP = (uint16_t)surge_port_find("net_tap0");
	ok(surge_port_open(TAP, &tap));
	ok(surge_port_info(TAP, &pi));
	if ((pi.tx_offloads & (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM)) == 0)
		have_tap = 0;     /* a kernel without the offloads: the rest still runs */
}

/* Sends, clones, probes, the ring hand-over, refused and stopped sends:
 * nothing of it may show on the next allocation of the same mbufs. */
static void
test_cycle_keeps_invariants(void **state)
{
	int pool = template_pool();
	struct surge_burst *b = surge_burst_new(pool, 64);
	struct surge_burst *rx = surge_burst_new(-1, 256);
	uint32_t probe_seq = 0;

	(void)state;
	assert_non_null(b);
	assert_non_null(rx);
	for (int round = 0; round < ROUNDS; round++) {
		int sent;

		switch (round % 6) {
		case 0:         /* plain send into the sink */
			alloc_fresh(b, 64, 1);
			assert_int_equal(surge_tx_send(NUL, 0, b, 1), 64);
			break;
		case 1:         /* eight references each, all freed by the sink */
			alloc_fresh(b, 16, 1);
			assert_int_equal(surge_tx_send(NUL, 0, b, 8), 128);
			break;
		case 2:         /* probes over the ring: the receiver frees them */
			alloc_fresh(b, 32, 1);
			for (uint32_t i = 0; i < 32; i += 4)
				ok(surge_probe_mark(b, i, 42, probe_seq++));
			sent = surge_tx_send(RING, 0, b, 1);
			assert_int_equal(sent, 32);
			assert_int_equal(surge_rx_recv(RING, 0, rx), 32);
			surge_burst_free(rx);
			break;
		case 3:         /* clones over the ring: four references come back */
			alloc_fresh(b, 8, 1);
			assert_int_equal(surge_tx_send(RING, 0, b, 4), 32);
			assert_int_equal(surge_rx_recv(RING, 0, rx), 32);
			surge_burst_free(rx);
			break;
		case 4:         /* a refused send (a frame longer than the MTU) and a free */
			alloc_fresh(b, 8, 1);
			b->len[3] = 9000;
			assert_true(surge_tx_send(NUL, 0, b, 1) < 0);
			assert_int_equal(b->n, 8);
			b->len[3] = FRAME;
			surge_burst_free(b);
			break;
		case 5:         /* frames cut shorter than the template */
			alloc_fresh(b, 16, 1);
			for (uint32_t i = 0; i < 16; i++)
				b->len[i] = (uint16_t)(14 + i);
			assert_int_equal(surge_tx_send(NUL, 0, b, 1), 16);
			break;
		}
	}
	alloc_fresh(b, 64, 1);
	surge_burst_destroy(b);
	surge_burst_destroy(rx);
	assert_pool_whole(pool);
}

/* The send's shortcut for untouched bursts (burst.c fresh_ok) must still
 * put the right lengths on the wire, and a changed len[] must win: the ring
 * hands the same mbufs to its receiver, whose lengths are the driver's. */
static void
test_lengths_on_the_wire(void **state)
{
	int pool = template_pool();
	struct surge_burst *b = surge_burst_new(pool, 16);
	struct surge_burst *rx = surge_burst_new(-1, 64);

	(void)state;
	for (int round = 0; round < 3; round++) {
		alloc_fresh(b, 16, 1);
		if (round == 1)
			b->len[5] = 33;                   /* one shorter frame */
		if (round == 2) {
			b->len[7] = 20;                   /* changed, then restored */
			b->len[7] = FRAME;
		}
		assert_int_equal(surge_tx_send(RING, 0, b, 1), 16);
		assert_int_equal(surge_rx_recv(RING, 0, rx), 16);
		for (uint32_t i = 0; i < 16; i++) {
			uint16_t want = round == 1 && i == 5 ? 33 : FRAME;

			assert_int_equal(rx->len[i], want);
			assert_int_equal(((struct rte_mbuf *)rx->mbuf[i])->pkt_len, want);
		}
		surge_burst_free(rx);
	}
	surge_burst_destroy(b);
	surge_burst_destroy(rx);
	assert_pool_whole(pool);
}

/* Sends on the tap, which may refuse packets while its link is down: either
 * way nothing stays in the burst and the refused mbufs went back. */
static void
sent_or_freed(struct surge_burst *b, uint16_t port)
{
	assert_true(surge_tx_send(port, 0, b, 1) >= 0);
	assert_int_equal(b->n, 0);
}

/* Checksum offload writes flags (and pseudo-header sums) into the mbufs of
 * the pool: the next allocation must not carry the flags, or a send on a
 * port without offload would ask the driver for checksums it never enabled. */
static void
test_offload_flags_cleared(void **state)
{
	int pool;
	struct surge_burst *b;
	int offloaded = 0;

	(void)state;
	if (!have_tap)
		skip();
	pool = template_pool();
	b = surge_burst_new(pool, 32);
	assert_non_null(b);
	for (int round = 0; round < 50; round++) {
		alloc_fresh(b, 32, 0);
		if (round % 2 == 0) {
			/* the tap may refuse to take them while its link is down:
			 * either way the mbufs come back to the pool */
			if (round == 10)
				b->len[0] = 20;           /* shorter than its headers */
			sent_or_freed(b, TAP);
			offloaded = 1;
		} else {
			assert_int_equal(surge_tx_send(NUL, 0, b, 1), 32);
		}
	}
	assert_true(offloaded);
	assert_int_equal(pool_get(pool)->offloaded, 1);
	surge_burst_destroy(b);
	assert_pool_whole(pool);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ports_open),
		cmocka_unit_test(test_cycle_keeps_invariants),
		cmocka_unit_test(test_lengths_on_the_wire),
		cmocka_unit_test(test_offload_flags_cleared),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
