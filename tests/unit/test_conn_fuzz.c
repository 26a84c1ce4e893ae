/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_conn_fuzz.c - the connection engine against a peer that crafts any
 * segment (issue 31): a bounded, deterministic fuzzer feeding three engines
 * (a server, a server whose on_request hook answers at random, a client)
 * frames made near each connection's state (its ports, sequence numbers
 * at, around and far from rcv_nxt and snd_nxt, every combination of flags,
 * requests, responses and random bytes as payload, option bytes of any
 * kind and length, lengths that lie), with the engines' clocks moved and
 * their timers run between them, the hooks' actions drawn at random. Every
 * frame goes through seg_parse and the state machine as the wire's would.
 *
 * Proves, for each of SURGE_FUZZ_SECONDS (default 3) of inputs: no crash
 * (and, in the sanitizer pass, no read or write out of bounds), no hang,
 * each engine's table consistent (its concurrent count its entries in
 * use), and at the end, every connection reset (fsm_abort, as e:abort()
 * does): each engine's attempted connections all counted once (completed +
 * failed + aborted + closed_other), no event lost, the pool full again.
 * SURGE_FUZZ_SEED replays a run.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "run.h"
#include "conn.h"
#include "check.h"
#include "fuzz_ref.h"
#include "conn_fixture.h"

static uint64_t rng;

#define SRV 0x0a010002u    /* the engines' address */
#define SRV2 0x0a010007u   /* engine 0's (a server) second (issue 33) */
#define PEER 0x0a010001u   /* the peer's */

static int
group_setup(void **state)
{
	const char *seed = getenv("SURGE_FUZZ_SEED");

	(void)state;
	rng = seed != NULL ? strtoull(seed, NULL, 0) : 0xc0ffee2026ULL;
	if (rng == 0)
		rng = 1;
	return conn_fixture_start("test_conn_fuzz");
}

static const char *const payloads[] = {
	"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\nGET /c HTTP/1.1\r\nConnection: close\r\n\r\n",
	"GET / HTTP/1.0\r\n\r\n",
	"GET /x HTTP/1.1\r\nHost:",
	"\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
	"HTTP/1.1 2000 OK\r\nContent-Length: 5\r\n\r\nhello",
	"HTTP/1.1 200 OK\r\nContent-Length: 4294967295\r\n\r\n",
	"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n",
};

/* A frame from PEER:sport to dst:dport near connection c's state (NULL: a
 * new 4-tuple), everything in it drawn; its length */
static uint32_t
craft(uint8_t *f, uint32_t room, const struct conn *c, uint32_t dst, uint16_t sport,
      uint16_t dport)
{
	uint8_t *ip = f + 14, *tcp = ip + 20;
	uint32_t opt = 0, len = 0, seq, ack, r = fuzz_xbelow(&rng, 16);
	static const uint8_t flagsets[] = { TF_ACK, TF_ACK | TF_PSH, TF_SYN, TF_SYN | TF_ACK, TF_RST, TF_RST | TF_ACK,
					    TF_FIN | TF_ACK, TF_FIN | TF_ACK | TF_PSH, 0, TF_FIN, TF_SYN | TF_FIN };
	uint8_t flags = fuzz_xbelow(&rng, 8) == 0 ? (uint8_t)fuzz_xbelow(&rng, 64) : flagsets[fuzz_xbelow(&rng, sizeof(flagsets))];

	seq = c != NULL ? c->rcv_nxt : (uint32_t)fuzz_xorshift(&rng);
	ack = c != NULL ? c->snd_nxt : (uint32_t)fuzz_xorshift(&rng);
	/* at, next to, a window away or anywhere */
	seq += r < 8 ? 0 : r < 11 ? fuzz_xbelow(&rng, 3) - 1u : r < 14 ? (fuzz_xbelow(&rng, 2) ? 65536u : -65536u) + fuzz_xbelow(&rng, 100) : (uint32_t)fuzz_xorshift(&rng);
	r = fuzz_xbelow(&rng, 16);
	ack += r < 6 ? 0 : r < 10 ? (c != NULL ? c->snd_una - c->snd_nxt : 0) : r < 13 ? fuzz_xbelow(&rng, 4000) - 2000u
		     : (uint32_t)fuzz_xorshift(&rng);
	memset(f, 0, 14 + 60 + 20);
	memcpy(f, "\x02\0\0\0\0\x02", 6);
	memcpy(f + 6, "\x02\0\0\0\0\x01", 6);
	put16(f + 12, 0x0800);
	if (fuzz_xbelow(&rng, 4) == 0) {                    /* options: any kind, any length */
		opt = 4 * (1 + fuzz_xbelow(&rng, 10));
		for (uint32_t i = 0; i < opt; i++)
			tcp[20 + i] = fuzz_xbelow(&rng, 3) == 0 ? (uint8_t)fuzz_xbelow(&rng, 4) : (uint8_t)fuzz_xorshift(&rng);
		if (fuzz_xbelow(&rng, 2))
			memcpy(tcp + 20, "\x02\x04", 2);
	}
	r = fuzz_xbelow(&rng, 8);
	if (r < 5) {
		const char *p = payloads[fuzz_xbelow(&rng, sizeof(payloads) / sizeof(payloads[0]))];

		len = (uint32_t)strlen(p);
		if (fuzz_xbelow(&rng, 4) == 0)
			len = fuzz_xbelow(&rng, len + 1);           /* cut anywhere */
		memcpy(tcp + 20 + opt, p, len);
	} else if (r == 5) {
		len = fuzz_xbelow(&rng, room - 14 - 20 - 20 - opt);
		for (uint32_t i = 0; i < len; i++)
			tcp[20 + opt + i] = (uint8_t)fuzz_xorshift(&rng);
	}
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(40 + opt + len));
	ip[8] = 64;
	ip[9] = 6;
	put32(ip + 12, PEER);
	put32(ip + 16, dst);
	put16(tcp, sport);
	put16(tcp + 2, dport);
	put32(tcp + 4, seq);
	put32(tcp + 8, ack);
	tcp[12] = (uint8_t)((5 + opt / 4) << 4);
	tcp[13] = flags;
	put16(tcp + 14, fuzz_xbelow(&rng, 8) == 0 ? (uint16_t)fuzz_xbelow(&rng, 64) : 65535);
	((struct rte_ipv4_hdr *)ip)->hdr_checksum = rte_ipv4_cksum((struct rte_ipv4_hdr *)ip);
	((struct rte_tcp_hdr *)tcp)->cksum = rte_ipv4_udptcp_cksum((struct rte_ipv4_hdr *)ip, tcp);
	if (fuzz_xbelow(&rng, 16) == 0)                     /* a header field that lies (the sums may no longer hold) */
		f[14 + fuzz_xbelow(&rng, 40)] = (uint8_t)fuzz_xorshift(&rng);
	if (fuzz_xbelow(&rng, 32) == 0)
		return fuzz_xbelow(&rng, 14 + 40 + opt + len);   /* cut short */
	return 14 + 40 + opt + len;
}

/* Every connection counted, and a server's each found by its key (the
 * peer's address and port, the address it was opened to), not by the
 * same peer's port to its other address */
static void
check_table(struct conn_engine *e)
{
	uint64_t used = 0;

	for (uint32_t i = 0; i < e->conf.capacity; i++) {
		const struct conn *c = &e->tab[i];
		struct seg sg = { .src_ip = c->peer_ip, .sport = c->peer_port, .dport = e->conf.local_port };

		if (c->state == CS_FREE)
			continue;
		used++;
		if (e->conf.role == SURGE_CONN_SERVER) {
			sg.addr = c->addr;
			assert_ptr_equal(conn_lookup(e, &sg), c);
			sg.addr = (c->addr + 1) % e->naddr;
			assert_true(e->naddr == 1 || conn_lookup(e, &sg) != c);
		}
	}
	assert_int_equal(used, e->st.concurrent);
}

static void
engine_fuzz(void **state)
{
	static uint8_t big[3000], small[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
	static const uint8_t two[] = { 10, 1, 0, 2, 10, 1, 0, 7 };    /* SRV, SRV2 */
	static const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	static uint8_t f[2048];
	const uint8_t *tpl[1] = { small };
	const uint32_t tlen[1] = { sizeof(small) - 1 };
	const char *sec = getenv("SURGE_FUZZ_SECONDS");
	double secs = sec != NULL ? atof(sec) : 3;
	struct surge_conn_conf c;
	struct conn_engine *eng[3];
	struct surge_conn_hooks *pub = NULL;
	struct surge_pool_info pi;
	uint64_t frames = 0, segs = 0;
	time_t t0 = time(NULL);
	int id;

	(void)state;
	memset(big, 'b', sizeof(big));
	for (int k = 0; k < 3; k++) {
		memset(&c, 0, sizeof(c));
		c.role = k == 2 ? SURGE_CONN_CLIENT : SURGE_CONN_SERVER;
		c.ip_version = 4;
		c.data = k == 2 ? (const uint8_t *)req : big;
		c.data_len = k == 2 ? (uint32_t)strlen(req) : sizeof(big);
		c.capacity = 16;
		c.expect = SURGE_CONN_EXPECT_HTTP;
		c.expect_status = k == 2 ? 200 : 0;
		c.rto_us = 10000;
		c.retries = 3;
		c.time_wait_us = fuzz_xbelow(&rng, 2) ? 0 : 20000;
		c.idle_us = 50000;
		c.local_ip4 = SRV;
		if (k == 0) {           /* a server on two addresses: one peer port to both, two connections */
			c.local_addrs = two;
			c.local_count = 2;
		}
		c.local_port = k == 2 ? 2000 : 80;
		c.peer_ip4 = PEER;
		c.peer_port = k == 2 ? 80 : 0;
		c.requests = k == 2 ? 2 : 0;
		c.mss = 536;
		c.window = 8192;
		memcpy(c.local_mac, "\x02\0\0\0\0\x01", 6);
		memcpy(c.peer_mac, "\x02\0\0\0\0\x02", 6);
		id = surge_conn_new(&c);
		if (id < 0)
			fail_msg("surge_conn_new: %s", surge_last_error());
		if (k == 1 && surge_conn_hooks(id, 1u << SURGE_CONN_EV_REQUEST | 1u << SURGE_CONN_EV_CLOSED, tpl, tlen, 1,
					       &pub) != 0)
			fail_msg("surge_conn_hooks: %s", surge_last_error());
		eng[k] = conn_engine_get(id);
		eng[k]->tx.b = TX;
		eng[k]->tx.port = 0;
		eng[k]->tx.q = 0;
		eng[k]->sw_csum = 1;
	}
	while (frames < 2000000 && (frames % 4096 != 0 || difftime(time(NULL), t0) < secs)) {
		struct conn_engine *e = eng[fuzz_xbelow(&rng, 3)];
		int client = e->conf.role == SURGE_CONN_CLIENT;
		uint32_t i = fuzz_xbelow(&rng, e->conf.capacity);
		const struct conn *cn = e->tab[i].state != CS_FREE && fuzz_xbelow(&rng, 8) != 0 ? &e->tab[i] : NULL;
		uint16_t sport, dport;
		uint32_t n, dst = SRV;

		if (client) {
			if (cn == NULL && fuzz_xbelow(&rng, 4) == 0 && e->st.concurrent < e->conf.capacity)
				fsm_open(e);
			sport = 80;
			dport = cn != NULL ? cn->local_port : (uint16_t)(2000 + fuzz_xbelow(&rng, e->conf.capacity + 2));
		} else {
			sport = cn != NULL ? cn->peer_port : (uint16_t)(40000 + fuzz_xbelow(&rng, 24));
			dport = fuzz_xbelow(&rng, 16) == 0 ? (uint16_t)fuzz_xbelow(&rng, 100) : 80;
			if (e->naddr > 1)
				dst = cn != NULL ? e->addr4[cn->addr] : fuzz_xbelow(&rng, 2) ? SRV2 : SRV;
		}
		n = craft(f, sizeof(f), cn, dst, sport, dport);
		segs += conn_frame(e, f, n, 0) == SEG_TCP;
		frames++;
		if (fuzz_xbelow(&rng, 8) == 0) {                    /* time passes: the timers */
			e->now += fuzz_xbelow(&rng, 30000);
			conn_timers(e);
		}
		if (e->hk != NULL && fuzz_xbelow(&rng, 2) == 0) {   /* the hook's actions, at random, at the next poll */
			struct surge_conn_event *ev = pub->ev[pub->cur];

			for (uint32_t k = 0; k < pub->n; k++) {
				ev[k].action = (uint8_t)fuzz_xbelow(&rng, 5);       /* 4: none of the actions */
				ev[k].tpl = (uint8_t)fuzz_xbelow(&rng, 3);          /* 2: no such template */
			}
			conn_events_apply(e);
		}
		drop_written(e);
		if (frames % 1024 == 0)
			check_table(e);
	}
	fprintf(stderr, "test_conn_fuzz: %" PRIu64 " frames, %" PRIu64 " to the engines as TCP, %.0f s\n", frames,
		segs, difftime(time(NULL), t0));
	assert_true(segs > frames / 2);                 /* the frames reached the state machine */
	for (int k = 0; k < 3; k++) {
		struct conn_engine *e = eng[k];
		const struct surge_conn_stats *st = &e->st;

		check_table(e);
		for (uint32_t i = 0; i < e->conf.capacity; i++)
			if (e->tab[i].state != CS_FREE)
				fsm_abort(e, &e->tab[i]);
		drop_written(e);
		assert_int_equal(st->concurrent, 0);
		if (st->attempted != st->completed + st->failed_timeout + st->failed_rst + st->failed_bad + st->aborted +
					     st->closed_other)
			fail_msg("engine %d: %" PRIu64 " attempted, %" PRIu64 " completed, %" PRIu64 " failed, %" PRIu64
				 " aborted, %" PRIu64 " closed other", k, st->attempted, st->completed,
				 st->failed_timeout + st->failed_rst + st->failed_bad, st->aborted, st->closed_other);
		fprintf(stderr, "test_conn_fuzz: engine %d: %" PRIu64 " attempted, %" PRIu64 " established, %" PRIu64
			" completed, %" PRIu64 " failed, %" PRIu64 " responses, %" PRIu64 " rx_bad, %" PRIu64 " rx_dropped\n",
			k, st->attempted, st->established, st->completed,
			st->failed_timeout + st->failed_rst + st->failed_bad, st->responses, st->rx_bad, st->rx_dropped);
		assert_true(st->established > 0);       /* the fuzz got past handshakes */
	}
	assert_int_equal(pub->lost, 0);
	assert_int_equal(surge_pool_info(POOL, &pi), 0);
	assert_int_equal(pi.avail + TX->n, pi.size);    /* every frame back (the burst holds none) */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(engine_fuzz),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
