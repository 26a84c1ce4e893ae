/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_conn.c - the TCP engine's state machine (core/conn/)
 * fed hand-made segments, on a real EAL (for its pools) but no wire: what
 * the engine writes is read back from its tx burst before it is sent.
 *
 * Proves: a server's handshake (SYN-ACK with the MSS option and ack =
 * seq + 1), a request answered by a response segmented at the MSS, a
 * keep-alive second request; segments out of the window, acknowledging
 * what was never sent, with SYN and FIN together, with a wrong checksum, or
 * a reset outside the window are dropped and counted, answered (a duplicate
 * ACK) where TCP says so, and change nothing; a reset in the window ends
 * the connection as failed_rst; a segment for no connection gets an RST; a
 * full table refuses a SYN and counts it; a client's SYN is retransmitted on
 * its fixed RTO and fails as failed_timeout after its retries; a client
 * parses the HTTP status and Content-Length; the server index survives
 * deletions (backward shift) with every remaining connection found; an
 * IPv6 server's SYN-ACK is addressed and checksummed right, and two peers
 * whose addresses fold alike stay two connections.
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
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_tcp.h>
#include <rte_mbuf.h>

#include "run.h"
#include "conn.h"
#include "conn_http.h"
#include "check.h"
#include "conn_fixture.h"

#define SRV 0x0a010002u    /* 10.1.0.2 */
#define CLI 0x0a010001u    /* 10.1.0.1 */

static uint16_t WND = 65535;    /* the window frame() advertises */

static int
group_setup(void **state)
{
	(void)state;
	return conn_fixture_start("test_conn");
}

/* A frame from CLI:sport to dst:dport with valid checksums (csum_ok 0: a wrong one). */
static uint32_t
frame(uint8_t *f, uint32_t dst, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags,
      const char *data, int csum_ok)
{
	uint32_t len = data ? (uint32_t)strlen(data) : 0;
	uint8_t *ip = f + 14, *tcp = ip + 20;

	memset(f, 0, 14 + 40 + len + 16);
	memcpy(f, "\x02\0\0\0\0\x02", 6);
	memcpy(f + 6, "\x02\0\0\0\0\x01", 6);
	put16(f + 12, 0x0800);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(40 + len));
	ip[8] = 64;
	ip[9] = 6;
	put32(ip + 12, CLI);
	put32(ip + 16, dst);
	put16(tcp, sport);
	put16(tcp + 2, dport);
	put32(tcp + 4, seq);
	put32(tcp + 8, ack);
	tcp[12] = 5 << 4;
	tcp[13] = flags;
	put16(tcp + 14, WND);
	if (len)
		memcpy(tcp + 20, data, len);
	((struct rte_ipv4_hdr *)ip)->hdr_checksum = rte_ipv4_cksum((struct rte_ipv4_hdr *)ip);
	((struct rte_tcp_hdr *)tcp)->cksum = rte_ipv4_udptcp_cksum((struct rte_ipv4_hdr *)ip, tcp);
	if (!csum_ok)
		tcp[16] ^= 0x55;
	return 14 + 40 + len;
}

/* What the engine wrote: segment i's flags, seq, ack, payload length. */
struct out {
	uint8_t flags;
	uint32_t seq, ack, len;
	uint16_t mss;
};

static struct out
written(struct conn_engine *e, uint32_t i)
{
	const uint8_t *ip = TX->data[i] + 14, *tcp = ip + 20;
	struct out o = { tcp[13], get32(tcp + 4), get32(tcp + 8),
			 get16(ip + 2) - 20u - (uint32_t)(tcp[12] >> 4) * 4, 0 };

	assert_true(i < e->tx.used);
	if ((tcp[12] >> 4) == 6 && tcp[20] == 2)
		o.mss = get16(tcp + 22);
	return o;
}


static struct conn_engine *
engine(const struct surge_conn_conf *c)
{
	int id = surge_conn_new(c);
	struct conn_engine *e;

	if (id < 0)
		fail_msg("surge_conn_new: %s", surge_last_error());
	e = conn_engine_get(id);
	e->tx.b = TX;
	e->tx.port = 0;
	e->tx.q = 0;
	e->sw_csum = 1;
	return e;
}

/* An engine made already (surge_conn_new), set up as engine() does. */
static struct conn_engine *
engine_of(int id)
{
	struct conn_engine *e = conn_engine_get(id);

	e->tx.b = TX;
	e->tx.port = 0;
	e->tx.q = 0;
	e->sw_csum = 1;
	return e;
}

static const char RESP[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";

static struct surge_conn_conf
server_conf(uint32_t capacity, const uint8_t *data, uint32_t len)
{
	struct surge_conn_conf c;

	memset(&c, 0, sizeof(c));
	c.role = SURGE_CONN_SERVER;
	c.ip_version = 4;
	c.data = data;
	c.data_len = len;
	c.capacity = capacity;
	c.expect = SURGE_CONN_EXPECT_HTTP;
	c.rto_us = 100000;
	c.retries = 3;
	c.time_wait_us = 0;
	c.idle_us = 1000000;
	c.local_ip4 = SRV;
	c.local_port = 80;
	c.mss = 1460;
	c.window = 65535;
	memcpy(c.local_mac, "\x02\0\0\0\0\x01", 6);
	return c;
}

static uint8_t F[4096];

static void
feed(struct conn_engine *e, uint16_t sport, uint32_t seq, uint32_t ack, uint8_t flags, const char *data)
{
	uint32_t n = frame(F, SRV, sport, 80, seq, ack, flags, data, 1);

	assert_int_equal(conn_frame(e, F, n, 0), SEG_TCP);
}

/* SYN, SYN-ACK, ACK: returns the server's ISS. */
static uint32_t
handshake(struct conn_engine *e, uint16_t sport, uint32_t iss_c)
{
	struct out o;

	feed(e, sport, iss_c, 0, TF_SYN, NULL);
	assert_int_equal(e->tx.used, 1);
	o = written(e, 0);
	assert_int_equal(o.flags, TF_SYN | TF_ACK);
	assert_int_equal(o.ack, iss_c + 1);
	assert_int_equal(o.mss, 1460);
	drop_written(e);
	feed(e, sport, iss_c + 1, o.seq + 1, TF_ACK, NULL);
	assert_int_equal(e->tx.used, 0);       /* a bare ACK needs no answer */
	return o.seq;
}

static void
server_handshake_request_response(void **state)
{
	static uint8_t big[3000];
	struct surge_conn_conf c;
	struct conn_engine *e;
	uint32_t iss, isc = 1000;
	const char *req = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	struct out o;

	(void)state;
	memset(big, 'b', sizeof(big));
	c = server_conf(16, big, sizeof(big));
	e = engine(&c);
	iss = handshake(e, 40000, isc);
	assert_int_equal(e->st.established, 1);
	feed(e, 40000, isc + 1, iss + 1, TF_ACK | TF_PSH, req);
	/* 3000 bytes at an MSS of 1460: 1460, 1460, 80; the last with PSH */
	assert_int_equal(e->tx.used, 3);
	assert_int_equal(written(e, 0).len, 1460);
	assert_int_equal(written(e, 0).seq, iss + 1);
	assert_int_equal(written(e, 0).ack, isc + 1 + (uint32_t)strlen(req));
	assert_int_equal(written(e, 1).len, 1460);
	o = written(e, 2);
	assert_int_equal(o.len, 80);
	assert_true(o.flags & TF_PSH);
	drop_written(e);
	assert_int_equal(e->st.requests, 1);
	/* the client acknowledges it all: one response complete */
	feed(e, 40000, isc + 1 + (uint32_t)strlen(req), iss + 1 + 3000, TF_ACK, NULL);
	assert_int_equal(e->st.responses, 1);
	/* keep-alive: a second request on the same connection */
	feed(e, 40000, isc + 1 + (uint32_t)strlen(req), iss + 1 + 3000, TF_ACK | TF_PSH, req);
	assert_int_equal(e->tx.used, 3);
	assert_int_equal(written(e, 0).seq, iss + 1 + 3000);
	drop_written(e);
	assert_int_equal(e->st.requests, 2);
	assert_int_equal(e->st.rx_dropped, 0);
}

/* A request and the FIN in one segment, a window of one MSS: the whole
 * response goes out first (CLOSE_WAIT), then the server's FIN. */
static void
server_half_close_answers_first(void **state)
{
	static uint8_t big[3000];
	struct surge_conn_conf c;
	struct conn_engine *e;
	const char *req = "GET / HTTP/1.1\r\n\r\n";
	uint32_t isc = 100, iss, rseq;
	struct conn *cn;

	(void)state;
	memset(big, 'z', sizeof(big));
	c = server_conf(4, big, sizeof(big));
	e = engine(&c);
	iss = handshake(e, 40100, isc);
	cn = &e->tab[0];
	rseq = isc + 1 + (uint32_t)strlen(req) + 1;       /* after the request and the FIN */
	WND = 1460;
	feed(e, 40100, isc + 1, iss + 1, TF_ACK | TF_PSH | TF_FIN, req);
	assert_int_equal(cn->state, CS_CLOSE_WAIT);
	assert_int_equal(e->tx.used, 2);                  /* 1460 bytes, then the FIN's ACK */
	assert_int_equal(written(e, 0).len, 1460);
	assert_int_equal(written(e, 1).flags, TF_ACK);
	assert_int_equal(written(e, 1).ack, rseq);
	drop_written(e);
	feed(e, 40100, rseq, iss + 1 + 1460, TF_ACK, NULL);
	assert_int_equal(e->tx.used, 1);
	assert_int_equal(written(e, 0).len, 1460);
	drop_written(e);
	feed(e, 40100, rseq, iss + 1 + 2920, TF_ACK, NULL);
	assert_int_equal(written(e, 0).len, 80);
	assert_int_equal(written(e, 0).flags & TF_FIN, 0);
	drop_written(e);
	feed(e, 40100, rseq, iss + 1 + 3000, TF_ACK, NULL);
	assert_int_equal(e->tx.used, 1);                  /* all answered: now our FIN */
	assert_int_equal(written(e, 0).flags, TF_FIN | TF_ACK);
	assert_int_equal(written(e, 0).seq, iss + 1 + 3000);
	assert_int_equal(cn->state, CS_LAST_ACK);
	drop_written(e);
	feed(e, 40100, rseq, iss + 1 + 3001, TF_ACK, NULL);
	assert_int_equal(cn->state, CS_FREE);
	assert_int_equal(e->st.completed, 1);
	assert_int_equal(e->st.responses, 1);
	WND = 65535;
}

static void
bad_segments_dropped_and_counted(void **state)
{
	struct surge_conn_conf c = server_conf(16, (const uint8_t *)RESP, sizeof(RESP) - 1);
	struct conn_engine *e = engine(&c);
	uint32_t isc = 5000, iss, n;
	struct conn *cn;
	struct surge_conn_stats before;

	(void)state;
	iss = handshake(e, 40001, isc);
	cn = &e->tab[0];
	memcpy(&before, &e->st, sizeof(before));

	/* data far past the window: dropped, a duplicate ACK at rcv_nxt */
	feed(e, 40001, isc + 1 + 200000, iss + 1, TF_ACK, "GET / HTTP/1.1\r\n\r\n");
	assert_int_equal(e->st.rx_dropped, before.rx_dropped + 1);
	assert_int_equal(e->tx.used, 1);
	assert_int_equal(written(e, 0).flags, TF_ACK);
	assert_int_equal(written(e, 0).ack, isc + 1);
	drop_written(e);
	assert_int_equal(e->st.requests, 0);

	/* out of order (a hole before it): dropped the same way */
	feed(e, 40001, isc + 10, iss + 1, TF_ACK, "abc");
	assert_int_equal(e->st.rx_dropped, before.rx_dropped + 2);
	drop_written(e);
	assert_int_equal(cn->rcv_nxt, isc + 1);

	/* acknowledges what was never sent */
	feed(e, 40001, isc + 1, iss + 100, TF_ACK, NULL);
	assert_int_equal(e->st.rx_dropped, before.rx_dropped + 3);
	drop_written(e);
	assert_int_equal(cn->snd_una, iss + 1);

	/* no ACK flag in a synchronized state */
	feed(e, 40001, isc + 1, 0, TF_PSH, "x");
	assert_int_equal(e->st.rx_dropped, before.rx_dropped + 4);
	assert_int_equal(cn->rcv_nxt, isc + 1);

	/* SYN and FIN together: malformed, counted as bad, nothing written */
	n = frame(F, SRV, 40001, 80, isc + 1, iss + 1, TF_SYN | TF_FIN, NULL, 1);
	assert_int_equal(conn_frame(e, F, n, 0), SEG_BAD);
	/* a wrong checksum: the same */
	n = frame(F, SRV, 40001, 80, isc + 1, iss + 1, TF_ACK, "GET / HTTP/1.1\r\n\r\n", 0);
	assert_int_equal(conn_frame(e, F, n, 0), SEG_BAD);
	assert_int_equal(e->st.rx_bad, before.rx_bad + 2);
	assert_int_equal(e->tx.used, 0);
	assert_int_equal(e->st.requests, 0);

	/* a reset outside the window: ignored (counted); inside: the end */
	feed(e, 40001, isc + 1 + 100000, 0, TF_RST, NULL);
	assert_int_equal(e->st.rx_dropped, before.rx_dropped + 5);
	assert_int_equal(cn->state, CS_ESTABLISHED);
	feed(e, 40001, isc + 1, 0, TF_RST, NULL);
	assert_int_equal(cn->state, CS_FREE);
	assert_int_equal(e->st.failed_rst, 1);
	assert_int_equal(e->st.concurrent, 0);

	/* a segment for no connection: an RST whose seq is its ack */
	feed(e, 40002, 77, 12345, TF_ACK, NULL);
	assert_int_equal(e->tx.used, 1);
	assert_int_equal(written(e, 0).flags, TF_RST);
	assert_int_equal(written(e, 0).seq, 12345);
	drop_written(e);
	assert_int_equal(e->st.rst_sent, 1);
}

static void
table_full_refuses(void **state)
{
	struct surge_conn_conf c = server_conf(2, (const uint8_t *)RESP, sizeof(RESP) - 1);
	struct conn_engine *e = engine(&c);

	(void)state;
	feed(e, 41000, 1, 0, TF_SYN, NULL);
	feed(e, 41001, 1, 0, TF_SYN, NULL);
	assert_int_equal(e->tx.used, 2);
	drop_written(e);
	feed(e, 41002, 1, 0, TF_SYN, NULL);
	assert_int_equal(e->tx.used, 0);        /* dropped, as a full backlog does */
	assert_int_equal(e->st.refused, 1);
	assert_int_equal(e->st.attempted, 2);
	assert_int_equal(e->st.concurrent, 2);
}

static struct surge_conn_conf
client_conf(uint32_t capacity)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	struct surge_conn_conf c = server_conf(capacity, (const uint8_t *)req, sizeof(req) - 1);

	c.role = SURGE_CONN_CLIENT;
	c.local_ip4 = SRV;
	c.peer_ip4 = CLI;
	c.peer_port = 80;
	c.local_port = 2000;
	c.requests = 1;
	c.expect_status = 200;
	c.connections = 0;
	return c;
}

/* A client's open answered by the server's SYN-ACK (ISS iss_s) on local
 * port `port`: the client's own ISS; nothing left written. */
static uint32_t
client_established(struct conn_engine *e, uint16_t port, uint32_t iss_s)
{
	uint32_t iss, n;

	assert_int_equal(fsm_open(e), 0);
	iss = written(e, 0).seq;
	drop_written(e);
	n = frame(F, SRV, 80, port, iss_s, iss + 1, TF_SYN | TF_ACK, NULL, 1);
	conn_frame(e, F, n, 0);
	drop_written(e);
	return iss;
}

static void
client_syn_retries_then_timeout(void **state)
{
	struct surge_conn_conf c = client_conf(1);
	struct conn_engine *e = engine(&c);
	uint32_t seq;

	(void)state;
	e->now = 1000;
	assert_int_equal(fsm_open(e), 0);
	assert_int_equal(fsm_open(e), -ENOSPC);  /* one entry: full */
	assert_int_equal(e->tx.used, 1);
	assert_int_equal(written(e, 0).flags, TF_SYN);
	seq = written(e, 0).seq;
	drop_written(e);
	for (int i = 1; i <= 3; i++) {
		e->now += 99999;
		conn_timers(e);
		assert_int_equal(e->tx.used, 0);  /* not yet: the RTO is 100 ms */
		e->now += 1;
		conn_timers(e);
		assert_int_equal(e->tx.used, 1);
		assert_int_equal(written(e, 0).flags, TF_SYN);
		assert_int_equal(written(e, 0).seq, seq);
		drop_written(e);
	}
	assert_int_equal(e->st.retransmits, 3);
	e->now += 100000;
	conn_timers(e);
	assert_int_equal(e->st.failed_timeout, 1);
	assert_int_equal(e->st.concurrent, 0);
}

/* A client's response: status and Content-Length from the header. */
static void
client_http_response(void **state)
{
	struct surge_conn_conf c = client_conf(4);
	struct conn_engine *e = engine(&c);
	uint32_t iss, n;
	struct out o;

	(void)state;
	assert_int_equal(fsm_open(e), 0);
	iss = written(e, 0).seq;
	drop_written(e);
	/* the SYN-ACK from the server 10.1.0.1:80 to 10.1.0.2:2000 */
	n = frame(F, SRV, 80, 2000, 7000, iss + 1, TF_SYN | TF_ACK, NULL, 1);
	assert_int_equal(conn_frame(e, F, n, 0), SEG_TCP);
	assert_int_equal(e->st.established, 1);
	o = written(e, 0);                       /* the request carries the ACK */
	assert_int_equal(o.ack, 7001);
	assert_int_equal(o.len, (uint32_t)c.data_len);
	drop_written(e);
	/* a 404 where 200 is expected: a bad response, reset */
	n = frame(F, SRV, 80, 2000, 7001, iss + 1 + c.data_len, TF_ACK,
		  "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", 1);
	assert_int_equal(conn_frame(e, F, n, 0), SEG_TCP);
	assert_int_equal(e->st.failed_bad, 1);
	assert_int_equal(written(e, 0).flags & TF_RST, TF_RST);
	drop_written(e);
	/* a second connection, answered right: completed, then our FIN */
	assert_int_equal(fsm_open(e), 0);
	iss = written(e, 0).seq;
	assert_int_equal(get16(TX->data[0] + 34), 2001);   /* the next source port */
	drop_written(e);
	n = frame(F, SRV, 80, 2001, 9000, iss + 1, TF_SYN | TF_ACK, NULL, 1);
	conn_frame(e, F, n, 0);
	drop_written(e);
	n = frame(F, SRV, 80, 2001, 9001, iss + 1 + c.data_len, TF_ACK, RESP, 1);
	conn_frame(e, F, n, 0);
	assert_int_equal(e->st.completed, 1);
	assert_int_equal(e->st.responses, 1);
	assert_int_equal(written(e, 0).flags, TF_FIN | TF_ACK);
	drop_written(e);
}

/* Issue 31: the status line is parsed strictly (RFC 9112 section 4):
 * "HTTP/1.1 2000 OK" was taken for a 200. Table of lines and what
 * http_status gives, then a client engine fed the 4-digit one: failed_bad. */
static void
client_status_line_strict(void **state)
{
	static const struct { const char *line; int status; } t[] = {
		{ "HTTP/1.1 200 OK\r\n", 200 },
		{ "HTTP/1.0 404 Not Found\r\n", 404 },
		{ "HTTP/1.1 200 \r\n", 200 },                  /* an empty reason */
		{ "HTTP/1.1 503 a\tb \x80\r\n", 503 },         /* HTAB, obs-text */
		{ "HTTP/1.1 2000 OK\r\n", -1 },
		{ "HTTP/1.1 20 OK\r\n", -1 },
		{ "HTTP/1.1 200\r\n", -1 },                    /* no SP after the code */
		{ "HTTP/1.1  200 OK\r\n", -1 },
		{ "HTTP/1.x 200 OK\r\n", -1 },
		{ "HTTP/2.0 200 OK\r\n", -1 },
		{ "http/1.1 200 OK\r\n", -1 },
		{ "HTTP/1.1 2a0 OK\r\n", -1 },
		{ "HTTP/1.1 200 O\x01K\r\n", -1 },            /* a control byte */
		{ "HTTP/1.1 200 OK\n", -1 },                   /* no CR */
		{ "HTTP/1.1 200 OK\r", -1 },                   /* no line end */
		{ "HTTP/1.1 200 OK", -1 },
	};
	struct surge_conn_conf c = client_conf(4);
	struct conn_engine *e;
	uint32_t iss, n;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int got = http_status((const uint8_t *)t[i].line, (uint32_t)strlen(t[i].line));

		if (got != t[i].status)
			fail_msg("http_status(\"%s\") = %d, %d expected", t[i].line, got, t[i].status);
	}
	e = engine(&c);
	assert_int_equal(fsm_open(e), 0);
	iss = written(e, 0).seq;
	drop_written(e);
	n = frame(F, SRV, 80, 2000, 7000, iss + 1, TF_SYN | TF_ACK, NULL, 1);
	assert_int_equal(conn_frame(e, F, n, 0), SEG_TCP);
	drop_written(e);
	n = frame(F, SRV, 80, 2000, 7001, iss + 1 + c.data_len, TF_ACK,
		  "HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n", 1);
	assert_int_equal(conn_frame(e, F, n, 0), SEG_TCP);
	assert_int_equal(e->st.failed_bad, 1);
	assert_int_equal(e->st.completed, 0);
	assert_int_equal(written(e, 0).flags & TF_RST, TF_RST);
	drop_written(e);
	/* a Content-Length with more after its digits is no length either */
	assert_int_equal(http_response_length((const uint8_t *)"HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\n", 39,
					      200, &n), 0);
	assert_int_equal(http_response_length((const uint8_t *)"HTTP/1.1 200 OK\r\nContent-Length: 5 \r\n\r\n", 39,
					      200, &n), 39 + 5);
}

/* Keep-alive with a think time: the second request leaves think_us after
 * the first response, not before. */
static void
client_think_time(void **state)
{
	struct surge_conn_conf c = client_conf(4);
	struct conn_engine *e;
	uint32_t iss, n, len;

	(void)state;
	c.requests = 2;
	c.think_us = 50000;
	e = engine(&c);
	len = c.data_len;
	e->now = 10;
	iss = client_established(e, 2000, 7000);
	n = frame(F, SRV, 80, 2000, 7001, iss + 1 + len, TF_ACK, RESP, 1);
	conn_frame(e, F, n, 0);
	assert_int_equal(e->st.responses, 1);
	assert_int_equal(e->tx.used, 1);                  /* the ACK only */
	assert_int_equal(written(e, 0).len, 0);
	drop_written(e);
	e->now += 49999;
	conn_timers(e);
	assert_int_equal(e->tx.used, 0);
	e->now += 1;
	conn_timers(e);
	assert_int_equal(e->tx.used, 1);                  /* the second request */
	assert_int_equal(written(e, 0).len, len);
	assert_int_equal(written(e, 0).seq, iss + 1 + len);
	drop_written(e);
	assert_int_equal(e->st.requests, 2);
}

/* The server's index: backward-shift deletion keeps every other entry found. */
static void
server_index_deletions(void **state)
{
	enum { N = 600 };
	struct surge_conn_conf c = server_conf(N, (const uint8_t *)RESP, sizeof(RESP) - 1);
	struct conn_engine *e = engine(&c);
	struct conn *cs[N];
	struct seg s;

	(void)state;
	for (int i = 0; i < N; i++) {
		/* peers that collide: few addresses, many ports */
		cs[i] = conn_alloc(e, CLI + (uint32_t)(i % 3), NULL, (uint16_t)(1000 + i), 0);
		assert_non_null(cs[i]);
		cs[i]->state = CS_ESTABLISHED;
	}
	assert_null(conn_alloc(e, CLI, NULL, 9, 0));
	for (int i = 0; i < N; i += 3)
		conn_release(e, cs[i]);
	memset(&s, 0, sizeof(s));
	s.dport = 80;
	for (int i = 0; i < N; i++) {
		s.src_ip = CLI + (uint32_t)(i % 3);
		s.sport = (uint16_t)(1000 + i);
		if (i % 3 == 0)
			assert_null(conn_lookup(e, &s));
		else
			assert_ptr_equal(conn_lookup(e, &s), cs[i]);
	}
	assert_int_equal(e->st.concurrent, N - N / 3);
}

/* IPv6: a server on 2001:db8::2 answers a SYN from 2001:db8::1 with a
 * SYN-ACK whose checksum verifies; a wrong checksum is bad; two peers
 * whose addresses fold alike are two connections. */
static const uint8_t A6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
static uint8_t P6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };

static uint32_t
frame6(uint8_t *f, const uint8_t *src, uint16_t sport, uint32_t seq, uint8_t flags, int csum_ok)
{
	uint8_t *ip = f + 14, *tcp = ip + 40;

	memset(f, 0, 14 + 60);
	memcpy(f, "\x02\0\0\0\0\x02", 6);
	memcpy(f + 6, "\x02\0\0\0\0\x01", 6);
	put16(f + 12, 0x86dd);
	ip[0] = 0x60;
	put16(ip + 4, 20);
	ip[6] = 6;
	ip[7] = 64;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, A6, 16);
	put16(tcp, sport);
	put16(tcp + 2, 80);
	put32(tcp + 4, seq);
	tcp[12] = 5 << 4;
	tcp[13] = flags;
	put16(tcp + 14, 65535);
	((struct rte_tcp_hdr *)tcp)->cksum = rte_ipv6_udptcp_cksum((struct rte_ipv6_hdr *)ip, tcp);
	if (!csum_ok)
		tcp[16] ^= 0x55;
	return 14 + 60;
}

static void
ipv6_server(void **state)
{
	struct surge_conn_conf c = server_conf(8, (const uint8_t *)RESP, sizeof(RESP) - 1);
	struct conn_engine *e;
	uint8_t other[16];
	uint32_t n;
	const uint8_t *ip, *tcp;

	(void)state;
	c.ip_version = 6;
	c.local_ip4 = 0;
	memcpy(c.local_ip6, A6, 16);
	e = engine(&c);
	n = frame6(F, P6, 40000, 100, TF_SYN, 1);
	assert_int_equal(conn_frame(e, F, n, 0), SEG_TCP);
	assert_int_equal(e->tx.used, 1);
	ip = TX->data[0] + 14;
	tcp = ip + 40;
	assert_int_equal(get16(TX->data[0] + 12), 0x86dd);
	assert_memory_equal(ip + 8, A6, 16);
	assert_memory_equal(ip + 24, P6, 16);
	assert_int_equal(tcp[13], TF_SYN | TF_ACK);
	assert_int_equal(get32(tcp + 8), 101);
	/* the checksum written is the one the segment must carry */
	{
		uint8_t seg[24];
		uint16_t sum = get16(tcp + 16);

		memcpy(seg, tcp, 24);
		memset(seg + 16, 0, 2);
		assert_int_equal(sum, rte_be_to_cpu_16(rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)ip, seg)));
	}
	drop_written(e);
	n = frame6(F, P6, 40000, 100, TF_SYN, 0);
	assert_int_equal(conn_frame(e, F, n, 0), SEG_BAD);
	/* another peer with the same folded address (words swapped) and port */
	memcpy(other, P6, 16);
	memcpy(other, P6 + 12, 4);
	memcpy(other + 12, P6, 4);
	assert_int_equal(ip6_fold(other), ip6_fold(P6));
	n = frame6(F, other, 40000, 500, TF_SYN, 1);
	assert_int_equal(conn_frame(e, F, n, 0), SEG_TCP);
	assert_int_equal(e->st.concurrent, 2);
	assert_int_equal(get32(TX->data[0] + 14 + 40 + 8), 501);
	assert_memory_equal(TX->data[0] + 14 + 24, other, 16);
	drop_written(e);
	assert_int_equal(e->st.rx_bad, 1);
}

/* IPv6: a server on 2001:db8::2 and 2001:db8::9 (issue 33 item 4): one
 * peer port to each is a connection each, answered from that address with
 * the checksum over it; 2001:db8::3 is not the engine's. */
static void
server_several_addresses6(void **state)
{
	struct surge_conn_conf c = server_conf(8, (const uint8_t *)RESP, sizeof(RESP) - 1);
	uint8_t two[32], *ip = F + 14, *tcp = ip + 40;
	struct conn_engine *e;
	uint32_t n;

	(void)state;
	memcpy(two, A6, 16);
	memcpy(two + 16, A6, 16);
	two[31] = 9;
	c.ip_version = 6;
	c.local_ip4 = 0;
	c.local_addrs = two;
	c.local_count = 2;
	e = engine(&c);
	for (int a = 0; a < 3; a++) {
		const uint8_t *out;
		uint8_t seg[24];

		n = frame6(F, P6, 40000, 100, TF_SYN, 1);
		ip[39] = a == 2 ? 3 : two[16 * a + 15];            /* to 2001:db8::2, ::9, ::3 */
		put16(tcp + 16, 0);
		((struct rte_tcp_hdr *)tcp)->cksum = rte_ipv6_udptcp_cksum((struct rte_ipv6_hdr *)ip, tcp);
		if (a == 2) {
			assert_int_equal(conn_frame(e, F, n, 0), SEG_OTHER);
			break;
		}
		assert_int_equal(conn_frame(e, F, n, 0), SEG_TCP);
		assert_int_equal(e->tx.used, 1);
		out = TX->data[0] + 14;
		assert_memory_equal(out + 8, two + 16 * a, 16);
		assert_int_equal(out[40 + 13], TF_SYN | TF_ACK);
		memcpy(seg, out + 40, 24);
		memset(seg + 16, 0, 2);
		assert_int_equal(get16(out + 40 + 16),
				 rte_be_to_cpu_16(rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)out, seg)));
		drop_written(e);
	}
	assert_int_equal(e->tx.used, 0);
	assert_int_equal(e->st.concurrent, 2);
}

/* A keep-alive server idle between requests (its RTO timer ticking for
 * the idle limit) answers a request in the middle of a tick: the RTO runs
 * from that response, not from the tick, so nothing is sent again before
 * a whole RTO without its ACK (found by the rfc9693 teardown trials: every
 * second response went out twice). */
static void
server_rto_from_the_response_after_idle(void **state)
{
	struct surge_conn_conf c = server_conf(4, (const uint8_t *)RESP, sizeof(RESP) - 1);
	struct conn_engine *e = engine(&c);
	const char *req = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	uint32_t r = (uint32_t)strlen(req), d = (uint32_t)sizeof(RESP) - 1, iss, isc = 5000;

	(void)state;
	e->now = 1000;
	iss = handshake(e, 42000, isc);
	feed(e, 42000, isc + 1, iss + 1, TF_ACK | TF_PSH, req);
	assert_int_equal(e->tx.used, 1);
	drop_written(e);
	feed(e, 42000, isc + 1 + r, iss + 1 + d, TF_ACK, NULL);   /* the response acknowledged: idle */
	e->now += 100000;                         /* one idle tick */
	conn_timers(e);
	assert_int_equal(e->tx.used, 0);
	e->now += 90000;                          /* 90 ms into the next */
	feed(e, 42000, isc + 1 + r, iss + 1 + d, TF_ACK | TF_PSH, req);
	assert_int_equal(e->tx.used, 1);            /* the second response */
	drop_written(e);
	e->now += 10000;                          /* where the idle tick fell: no retransmission */
	conn_timers(e);
	assert_int_equal(e->tx.used, 0);
	assert_int_equal(e->st.retransmits, 0);
	e->now += 90000;                          /* a whole RTO after the response: sent again */
	conn_timers(e);
	assert_int_equal(e->tx.used, 1);
	assert_int_equal(written(e, 0).seq, iss + 1 + d);
	drop_written(e);
	assert_int_equal(e->st.retransmits, 1);
}

/* Whether the server closes after a request is read from the request
 * line's version and the Connection header lines only (issue 21: the scan
 * that replaced a compare at every byte): "keep-alive" in the path, or
 * "connection: close" inside another header's value, decides nothing. */
static void
server_http_close_from_connection_header(void **state)
{
	static const struct {
		const char *req;
		int close;
	} cases[] = {
		{ "GET /keep-alive HTTP/1.0\r\nHost: x\r\n\r\n", 1 },
		{ "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", 0 },
		{ "GET / HTTP/1.1\r\nHost: x\r\nconnection: close\r\n\r\n", 1 },
		{ "GET / HTTP/1.1\r\nX-Note: connection: close\r\n\r\n", 0 },
		{ "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 0 },
	};
	struct surge_conn_conf c;
	struct conn_engine *e;

	(void)state;
	c = server_conf(16, (const uint8_t *)RESP, (uint32_t)strlen(RESP));
	e = engine(&c);
	/* each case twice, on two connections: the second time the engine's
	 * cache of the last request parsed answers (issue 21, the ka row),
	 * and must answer the same */
	for (uint16_t j = 0; j < 2 * sizeof(cases) / sizeof(cases[0]); j++) {
		uint16_t k = j / 2, sport = (uint16_t)(41000 + j);
		uint32_t iss = handshake(e, sport, 5000);
		struct seg s = { .src_ip = CLI, .sport = sport, .dport = 80 };
		struct conn *cn;

		feed(e, sport, 5001, iss + 1, TF_ACK | TF_PSH, cases[k].req);
		drop_written(e);
		cn = conn_lookup(e, &s);
		assert_non_null(cn);
		if (!!(cn->flags & CF_CLOSE) != cases[k].close)
			fail_msg("\"%s\": close %d, want %d", cases[k].req, !!(cn->flags & CF_CLOSE), cases[k].close);
	}
	assert_int_equal(e->st.requests, 10);
}

/* The 64-bit software sum is rte_raw_cksum's, at every length and
 * alignment (issue 21, the ka row: it verifies every received segment) */
static void
raw_sum_is_dpdks(void **state)
{
	static uint8_t buf[512 + 8];

	(void)state;
	for (uint32_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 151u + (i >> 3) * 7u + 0xa5);
	for (uint32_t off = 0; off < 8; off++)
		for (uint32_t len = 0; len <= 512; len++)
			if (conn_raw_sum(buf + off, len) != rte_raw_cksum(buf + off, len))
				fail_msg("length %u at offset %u: 0x%04x, DPDK's 0x%04x", len, off,
					 conn_raw_sum(buf + off, len), rte_raw_cksum(buf + off, len));
	memset(buf, 0xff, sizeof(buf));
	assert_int_equal(conn_raw_sum(buf, 512), rte_raw_cksum(buf, 512));
	memset(buf, 0, sizeof(buf));
	assert_int_equal(conn_raw_sum(buf, 100), 0);
}

/* A client's response header cache: the same header again has its length
 * without parsing; one that differs at all (its Content-Length, its
 * status) is parsed. */
static void
client_response_cache_exact(void **state)
{
	struct surge_conn_conf c = client_conf(4);
	struct conn_engine *e;
	uint32_t iss, n, seq = 7001, ack;
	const char *resp[3] = { RESP, RESP, "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nhello!!" };

	(void)state;
	c.requests = 3;
	e = engine(&c);
	iss = client_established(e, 2000, 7000);
	ack = iss + 1 + c.data_len;
	for (int k = 0; k < 3; k++) {
		n = frame(F, SRV, 80, 2000, seq, ack, TF_ACK, resp[k], 1);
		assert_int_equal(conn_frame(e, F, n, 0), SEG_TCP);
		assert_int_equal(e->st.responses, k + 1);
		seq += (uint32_t)strlen(resp[k]);
		ack += c.data_len;
		drop_written(e);
	}
	assert_int_equal(e->st.completed, 1);
	assert_int_equal(e->st.failed_bad + e->st.failed_rst + e->st.failed_timeout, 0);
	/* a second connection: RESP's header but a 404 where 200 is expected */
	iss = client_established(e, 2001, 9000);
	n = frame(F, SRV, 80, 2001, 9001, iss + 1 + c.data_len, TF_ACK, "HTTP/1.1 404 OK\r\nContent-Length: 5\r\n\r\nhello",
		  1);
	conn_frame(e, F, n, 0);
	assert_int_equal(e->st.failed_bad, 1);
	drop_written(e);
}


/* Hooks (conn_events.c): a client's connection held at its established and
 * response events (nothing sent past the handshake's ACK until the next
 * poll applies the hook's action), each event recorded once with its
 * values, and a peer's FIN in the same segment as the last response
 * completing the held connection (not a failure: no request can follow). */
static void
client_hooks_hold_and_peer_fin(void **state)
{
	struct surge_conn_conf c = client_conf(4);
	struct surge_conn_hooks *pub = NULL;
	const uint32_t all = (1u << SURGE_CONN_EV_KINDS) - 1;
	const struct surge_conn_event *ev;
	struct conn_engine *e;
	uint32_t iss, n;
	int id;

	(void)state;
	c.requests = 2;
	id = surge_conn_new(&c);
	assert_true(id >= 0);
	assert_int_equal(surge_conn_hooks(id, all, NULL, NULL, 0, &pub), 0);
	assert_int_equal(surge_conn_hooks(id, all, NULL, NULL, 0, &pub), -EBUSY);   /* once */
	e = engine_of(id);
	e->now = 1000;
	assert_int_equal(fsm_open(e), 0);
	iss = written(e, 0).seq;
	drop_written(e);
	e->now = 1300;
	n = frame(F, SRV, 80, 2000, 7000, iss + 1, TF_SYN | TF_ACK, NULL, 1);
	conn_frame(e, F, n, 0);
	assert_int_equal(pub->n, 1);
	ev = &pub->ev[pub->cur][0];
	assert_int_equal(ev->kind, SURGE_CONN_EV_ESTABLISHED);
	assert_int_equal(ev->conn, 0);
	assert_int_equal(ev->time_us, 300);
	assert_int_equal(e->tx.used, 1);                 /* held: the bare ACK only */
	assert_int_equal(written(e, 0).flags, TF_ACK);
	assert_int_equal(written(e, 0).len, 0);
	drop_written(e);
	conn_events_apply(e);                            /* no action written: the engine's course */
	assert_int_equal(pub->n, 0);
	assert_int_equal(e->tx.used, 1);
	assert_int_equal(written(e, 0).len, c.data_len);  /* the first request */
	drop_written(e);
	e->now = 1500;
	n = frame(F, SRV, 80, 2000, 7001, iss + 1 + c.data_len, TF_ACK, RESP, 1);
	conn_frame(e, F, n, 0);
	assert_int_equal(pub->n, 1);
	ev = &pub->ev[pub->cur][0];
	assert_int_equal(ev->kind, SURGE_CONN_EV_RESPONSE);
	assert_int_equal(ev->status, 200);
	assert_int_equal(ev->bytes, (int32_t)strlen(RESP));
	assert_int_equal(ev->requests, 1);
	assert_int_equal(written(e, 0).len, 0);          /* held: the ACK, no second request */
	drop_written(e);
	conn_events_apply(e);
	assert_int_equal(written(e, 0).len, c.data_len);  /* the second request */
	drop_written(e);
	/* the last response and the server's FIN in one segment */
	n = frame(F, SRV, 80, 2000, 7001 + (uint32_t)strlen(RESP), iss + 1 + 2 * c.data_len, TF_ACK | TF_FIN,
		  RESP, 1);
	conn_frame(e, F, n, 0);
	assert_int_equal(e->st.responses, 2);
	assert_int_equal(e->st.completed, 1);
	assert_int_equal(e->st.failed_bad, 0);
	assert_int_equal(pub->n, 1);
	assert_int_equal(written(e, 0).flags, TF_FIN | TF_ACK);   /* our close, LAST_ACK */
	drop_written(e);
	conn_events_apply(e);                            /* no longer held: nothing */
	assert_int_equal(e->tx.used, 0);
	/* the server acknowledges our FIN: the entry is freed, CLOSED completed */
	n = frame(F, SRV, 80, 2000, 7002 + 2 * (uint32_t)strlen(RESP), iss + 2 + 2 * c.data_len, TF_ACK, NULL, 1);
	conn_frame(e, F, n, 0);
	assert_int_equal(e->st.concurrent, 0);
	assert_int_equal(pub->n, 1);
	ev = &pub->ev[pub->cur][0];
	assert_int_equal(ev->kind, SURGE_CONN_EV_CLOSED);
	assert_int_equal(ev->reason, SURGE_CONN_END_COMPLETED);
	assert_int_equal(pub->lost, 0);
}

/* issue 21 item 1: a client on several source addresses. Connection i is
 * on address i / ports (the addresses ascending, whatever order they were
 * given in) and port sport + i % ports, opened taking the addresses in
 * turn: exactly capacity / addresses connections per address, and a segment finds its connection by its
 * destination address and port, consecutive addresses (a subtraction) and
 * scattered ones (a binary search) alike; an address not the engine's is
 * not its frame, a port past an address's share gets an RST from that
 * address. */
static void
client_several_source_addresses(void **state)
{
	static const uint8_t scattered[] = { 10, 1, 0, 9, 10, 1, 0, 2, 10, 1, 0, 5 };  /* given unsorted */
	static const uint8_t run[] = { 10, 1, 0, 3, 10, 1, 0, 2, 10, 1, 0, 4 };
	const uint8_t *lists[2] = { scattered, run };
	const uint32_t sorted[2][3] = { { 0x0a010002u, 0x0a010005u, 0x0a010009u },
					{ 0x0a010002u, 0x0a010003u, 0x0a010004u } };

	(void)state;
	for (int l = 0; l < 2; l++) {
		struct surge_conn_conf c = client_conf(6);
		struct conn_engine *e;
		uint32_t iss[6], per[3] = { 0, 0, 0 }, n;

		c.local_addrs = lists[l];
		c.local_count = 3;
		c.local_ip4 = 0;
		e = engine(&c);
		assert_int_equal(e->addr_run, l);
		assert_int_equal(e->ports, 2);
		/* opens take the addresses in turn: the k-th on address k % 3,
		 * port 2000 + k / 3, table entry address x 2 + port */
		for (int k = 0; k < 6; k++) {
			const uint8_t *ip;
			int i = k % 3 * 2 + k / 3;

			assert_int_equal(fsm_open(e), 0);
			ip = TX->data[0] + 14;
			assert_int_equal(written(e, 0).flags, TF_SYN);
			for (int a = 0; a < 3; a++)
				per[a] += get32(ip + 12) == sorted[l][a];
			assert_int_equal(get32(ip + 12), sorted[l][i / 2]);
			assert_int_equal(get16(ip + 20), 2000 + i % 2);
			assert_int_equal(e->tab[i].state, CS_SYN_SENT);
			iss[i] = written(e, 0).seq;
			drop_written(e);
		}
		assert_int_equal(fsm_open(e), -ENOSPC);         /* 3 x 2: full */
		for (int a = 0; a < 3; a++)
			assert_int_equal(per[a], 2);
		/* each SYN-ACK, to its address and port, finds its connection */
		for (int i = 5; i >= 0; i--) {
			n = frame(F, sorted[l][i / 2], 80, (uint16_t)(2000 + i % 2), 7000, iss[i] + 1, TF_SYN | TF_ACK,
				  NULL, 1);
			assert_int_equal(conn_frame(e, F, n, 0), SEG_TCP);
			assert_int_equal(e->tab[i].state, CS_ESTABLISHED);
			assert_int_equal(get32(TX->data[0] + 14 + 12), sorted[l][i / 2]);   /* the request, from it */
			drop_written(e);
		}
		assert_int_equal(e->st.established, 6);
		/* not one of its addresses: left for Lua */
		n = frame(F, 0x0a010006u, 80, 2000, 7000, iss[0] + 1, TF_SYN | TF_ACK, NULL, 1);
		assert_int_equal(conn_frame(e, F, n, 0), SEG_OTHER);
		/* its address, a port past the address's two: no connection, an RST from that address */
		n = frame(F, sorted[l][1], 80, 2002, 7000, 1, TF_ACK, NULL, 1);
		assert_int_equal(conn_frame(e, F, n, 0), SEG_TCP);
		assert_int_equal(written(e, 0).flags, TF_RST);
		assert_int_equal(get32(TX->data[0] + 14 + 12), sorted[l][1]);
		drop_written(e);
		assert_int_equal(e->st.rx_dropped, 1);
	}
}

/* The same address twice, or more of them than a client may have: one error, no engine. */
static void
client_addresses_misuse(void **state)
{
	static const uint8_t twice[] = { 10, 1, 0, 2, 10, 1, 0, 2 };
	struct surge_conn_conf c = client_conf(4);

	(void)state;
	c.local_addrs = twice;
	c.local_count = 2;
	assert_int_equal(surge_conn_new(&c), -EINVAL);
	assert_non_null(strstr(surge_last_error(), "given twice"));
	c.local_count = SURGE_CONN_ADDR_MAX + 1;
	assert_int_equal(surge_conn_new(&c), -EINVAL);
	/* 2 addresses x 64536 ports from 1000 hold 129072, not 129073 */
	c = client_conf(129073);
	c.local_port = 1000;
	c.local_addrs = (const uint8_t *)"\x0a\x01\x00\x02\x0a\x01\x00\x03";
	c.local_count = 2;
	assert_int_equal(surge_conn_new(&c), -EINVAL);
	assert_non_null(strstr(surge_last_error(), "at most 129072"));
}

/* issue 33 item 4: SURGE_CONN_ADDR_MAX (2^20) scattered addresses, given
 * in descending order, make a client whose segments find their addresses
 * by the binary search (the first, the last, one between; not a gap
 * between two of them); one more is refused before anything is read. */
static void
client_addresses_bound(void **state)
{
	uint32_t n = SURGE_CONN_ADDR_MAX;
	uint8_t *list = malloc((size_t)(n + 1) * 4);
	struct surge_conn_conf c = client_conf(4);
	struct conn_engine *e;

	(void)state;
	assert_non_null(list);
	for (uint32_t i = 0; i < n + 1; i++)          /* 10.0.0.0 + 2 (n - i): every other address */
		put32(list + (size_t)i * 4, 0x0a000000u + 2 * (n - i));
	c.local_addrs = list;
	c.local_count = n + 1;
	assert_int_equal(surge_conn_new(&c), -EINVAL);
	assert_non_null(strstr(surge_last_error(), "1048577 local addresses: 1..1048576"));
	c.local_addrs = list + 4;                       /* 10.0.0.0 + 2 (n - 1) down to 10.0.0.0 */
	c.local_count = n;
	c.local_ip4 = 0;
	e = engine(&c);
	assert_int_equal(e->naddr, n);
	assert_int_equal(e->addr_run, 0);
	assert_int_equal(addr_index(e, 0x0a000000u, NULL), 0);
	assert_int_equal(addr_index(e, 0x0a000000u + 2 * (n - 1), NULL), (int32_t)(n - 1));
	assert_int_equal(addr_index(e, 0x0a000000u + 2 * 12345, NULL), 12345);
	assert_int_equal(addr_index(e, 0x0a000000u + 2 * 12345 + 1, NULL), -1);
	free(list);
}

/* issue 33 item 4: a server on several addresses, scattered (a binary
 * search) and consecutive (a subtraction). One peer's port to each address
 * is one connection per address (the address is in the key), each answered
 * from the address its SYN was sent to, checksums valid for that address;
 * the SYN-ACKs' sequence numbers differ by address; a SYN to another
 * address is not the engine's frame. */
static void
server_several_addresses(void **state)
{
	static const uint8_t scattered[] = { 10, 1, 0, 9, 10, 1, 0, 2, 10, 1, 0, 5 };
	static const uint8_t run[] = { 10, 1, 0, 3, 10, 1, 0, 2, 10, 1, 0, 4 };
	const uint8_t *lists[2] = { scattered, run };
	const uint32_t addr[2][3] = { { 0x0a010009u, 0x0a010002u, 0x0a010005u },
				      { 0x0a010003u, 0x0a010002u, 0x0a010004u } };
	const char *req = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

	(void)state;
	for (int l = 0; l < 2; l++) {
		struct surge_conn_conf c = server_conf(8, (const uint8_t *)RESP, (uint32_t)strlen(RESP));
		struct conn_engine *e;
		uint32_t iss[3], n;

		c.local_addrs = lists[l];
		c.local_count = 3;
		c.local_ip4 = 0;
		e = engine(&c);
		assert_int_equal(e->addr_run, l);
		for (int a = 0; a < 3; a++) {
			uint8_t ip[64];
			uint16_t sum;

			n = frame(F, addr[l][a], 40000, 80, 1000, 0, TF_SYN, NULL, 1);
			assert_int_equal(conn_frame(e, F, n, 0), SEG_TCP);
			assert_int_equal(e->tx.used, 1);
			memcpy(ip, TX->data[0] + 14, 44);                        /* IPv4, TCP with the MSS option */
			assert_int_equal(written(e, 0).flags, TF_SYN | TF_ACK);
			assert_int_equal(get32(ip + 12), addr[l][a]);          /* from the address asked */
			assert_int_equal(get32(ip + 16), CLI);
			assert_int_equal(conn_raw_sum(ip, 20), 0xffff);         /* the IP header's sum */
			sum = get16(ip + 36);
			put16(ip + 36, 0);
			assert_int_equal(sum, rte_be_to_cpu_16(rte_ipv4_udptcp_cksum((struct rte_ipv4_hdr *)ip, ip + 20)));
			iss[a] = written(e, 0).seq;
			for (int b = 0; b < a; b++)
				assert_int_not_equal(iss[a], iss[b]);
			drop_written(e);
		}
		assert_int_equal(e->st.concurrent, 3);
		/* each handshake's ACK and request find their own connection */
		for (int a = 2; a >= 0; a--) {
			n = frame(F, addr[l][a], 40000, 80, 1001, iss[a] + 1, TF_ACK | TF_PSH, req, 1);
			assert_int_equal(conn_frame(e, F, n, 0), SEG_TCP);
			assert_int_equal(e->tx.used, 1);
			assert_int_equal(written(e, 0).len, strlen(RESP));
			assert_int_equal(written(e, 0).seq, iss[a] + 1);
			assert_int_equal(get32(TX->data[0] + 14 + 12), addr[l][a]);
			drop_written(e);
		}
		assert_int_equal(e->st.established, 3);
		assert_int_equal(e->st.requests, 3);
		/* another address: left for the caller, nothing sent */
		n = frame(F, 0x0a010006u, 40001, 80, 1000, 0, TF_SYN, NULL, 1);
		assert_int_equal(conn_frame(e, F, n, 0), SEG_OTHER);
		assert_int_equal(e->tx.used, 0);
		assert_int_equal(e->st.attempted, 3);
		assert_int_equal(e->st.rx_dropped, 0);
	}
}

/* Moves what `from` wrote into `to`, as a wire would; returns the segments. */
static uint32_t
shuttle(struct conn_engine *from, struct conn_engine *to)
{
	static uint8_t buf[64][256];
	uint32_t len[64], n = from->tx.used;

	assert_true(n <= 64);
	for (uint32_t i = 0; i < n; i++) {
		len[i] = TX->len[i];
		assert_true(len[i] <= sizeof(buf[i]));
		memcpy(buf[i], TX->data[i], len[i]);
	}
	drop_written(from);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(conn_frame(to, buf[i], len[i], 0), SEG_TCP);
	return n;
}

/* issue 21 item 2: a client engine against a server engine, segment by
 * segment. A server that closes after its answer (requests = 1, or the
 * request says Connection: close) sends its FIN with the response, and the
 * client's FIN acknowledges both: 3 segments each way a connection (SYN,
 * the request, FIN+ACK; SYN-ACK, the response+FIN, the last ACK), as
 * dperf's; a keep-alive server waits for the client's FIN: 4 + 3. Both
 * ends count the connection completed, nothing failed or retransmitted. */
static void
pair_segments_per_connection(void **state)
{
	static const struct {
		uint32_t srv_requests;
		const char *req;
		uint32_t c2s, s2c;
	} cases[] = {
		{ 1, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 3, 3 },
		{ 0, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 3, 3 },
		{ 0, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 4, 3 },
	};

	(void)state;
	for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct surge_conn_conf sc = server_conf(4, (const uint8_t *)RESP, (uint32_t)strlen(RESP));
		struct surge_conn_conf cc = client_conf(4);
		struct conn_engine *srv, *cli;
		uint32_t c2s = 0, s2c = 0;

		sc.local_ip4 = CLI;             /* the client's peer */
		sc.requests = cases[k].srv_requests;
		cc.data = (const uint8_t *)cases[k].req;
		cc.data_len = (uint32_t)strlen(cases[k].req);
		srv = engine(&sc);
		cli = engine(&cc);
		assert_int_equal(fsm_open(cli), 0);
		for (int round = 0; round < 10 && (cli->tx.used > 0 || srv->tx.used > 0); round++) {
			c2s += shuttle(cli, srv);
			s2c += shuttle(srv, cli);
		}
		if (c2s != cases[k].c2s || s2c != cases[k].s2c)
			fail_msg("case %u: %u segments client to server, %u back; want %u and %u", k, c2s, s2c,
				 cases[k].c2s, cases[k].s2c);
		assert_int_equal(cli->st.completed, 1);
		assert_int_equal(srv->st.completed, 1);
		assert_int_equal(cli->st.concurrent - cli->tw_now, 0);
		assert_int_equal(srv->st.concurrent, 0);
		assert_int_equal(cli->st.failed_bad + cli->st.failed_rst + srv->st.failed_bad, 0);
		assert_int_equal(cli->st.retransmits + srv->st.retransmits + cli->st.rx_dropped + srv->st.rx_dropped, 0);
	}
}

/* Issue 21 (server hooks that act): a server with on_request takes at
 * most SURGE_CONN_PIPELINE pipelined requests (the rest unacknowledged,
 * counted dropped: the peer sends it again), records a REQUEST event for
 * each with its first bytes and path, sends nothing until the actions are
 * applied, then answers in order, each with its chosen template; a FIN
 * chosen for the 4th goes with the 3rd's last byte, and no answer for it. */
/* Issue 31: the responses owed a pipelining client past 2^31 bytes wrapped
 * the outgoing stream's end in 32-bit sequence arithmetic: 2200 pipelined
 * GETs of a 1000000-byte response in one segment, and the server sent
 * nothing more. Now it takes the requests whose responses fit under
 * OWED_BYTES_MAX (1073 of 1000000 bytes), acknowledges those only (the
 * rest, counted once in rx_dropped, the client sends again), sends the
 * first response at once, and takes the rest when they come again. */
static void
server_owed_bytes_bounded(void **state)
{
	static uint8_t seg[14 + 40 + 65536 + 16];
	static char reqs[2200 * 18 + 1];
	const char *one = "GET / HTTP/1.1\r\n\r\n";
	uint32_t r = (uint32_t)strlen(one), body = 1000000, most = OWED_BYTES_MAX / body, isc = 7000, iss, n;
	uint8_t *big = malloc(body);
	struct surge_conn_conf c;
	struct conn_engine *e;
	struct conn *cn;

	(void)state;
	assert_non_null(big);
	memset(big, 'x', body);
	c = server_conf(4, big, body);
	e = engine(&c);
	free(big);                 /* the engine has its copy */
	iss = handshake(e, 40200, isc);
	cn = &e->tab[0];
	reqs[0] = 0;
	for (int i = 0; i < 2200; i++)
		memcpy(reqs + i * r, one, r + 1);
	assert_true((uint64_t)2200 * body > (1ull << 31));     /* what wrapped */
	n = frame(seg, SRV, 40200, 80, isc + 1, iss + 1, TF_ACK | TF_PSH, reqs, 1);
	assert_int_equal(conn_frame(e, seg, n, 0), SEG_TCP);
	assert_int_equal(e->st.requests, most);
	assert_int_equal(cn->owed, most);
	assert_int_equal(e->st.rx_dropped, 1);
	/* a window's worth of the first response went out (seg_emit sends a
	 * full burst on: what is left in it is the window's tail), each
	 * acknowledging the requests taken and no more */
	assert_true(e->tx.used > 0);
	assert_int_equal(written(e, 0).ack, isc + 1 + most * r);
	assert_true(written(e, 0).len > 0);
	assert_int_equal(cn->snd_nxt, iss + 1 + 65535);
	drop_written(e);
	/* the client acknowledges what comes until the first response is in
	 * (the stream goes on past it), then sends the rest again: one more
	 * request taken, for the one answered */
	while (seq_lt(cn->snd_una, iss + 1 + body)) {
		n = frame(seg, SRV, 40200, 80, isc + 1 + most * r, cn->snd_nxt, TF_ACK, NULL, 1);
		assert_int_equal(conn_frame(e, seg, n, 0), SEG_TCP);
		assert_true(e->tx.used > 0);
		drop_written(e);
	}
	assert_int_equal(e->st.responses, 1);
	assert_int_equal(e->st.requests, most);
	n = frame(seg, SRV, 40200, 80, isc + 1 + most * r, cn->snd_una, TF_ACK | TF_PSH, reqs + most * r, 1);
	assert_int_equal(conn_frame(e, seg, n, 0), SEG_TCP);
	assert_int_equal(e->st.requests, most + 1);
	assert_int_equal(cn->owed, most);
	assert_int_equal(e->st.rx_dropped, 2);
	assert_true(e->tx.used > 0);
	assert_int_equal(written(e, e->tx.used - 1).ack, isc + 1 + (most + 1) * r);
	drop_written(e);
}

static void
server_on_request_pipeline(void **state)
{
	static uint8_t big[2000];
	const uint8_t *tpl[1] = { big };
	const uint32_t tlen[1] = { sizeof(big) };
	struct surge_conn_conf c = server_conf(16, (const uint8_t *)RESP, (uint32_t)strlen(RESP));
	struct surge_conn_hooks *pub = NULL;
	struct surge_conn_event *ev;
	struct conn_engine *e;
	const char *one = "GET /a HTTP/1.1\r\n\r\n";
	char six[256] = "";
	uint32_t iss, isc = 5000, r = (uint32_t)strlen(one), rl = (uint32_t)strlen(RESP), seq;
	int id;

	(void)state;
	memset(big, 'z', sizeof(big));
	for (int i = 0; i < 6; i++)
		strcat(six, one);
	id = surge_conn_new(&c);
	assert_true(id >= 0);
	/* a server's templates need REQUEST */
	assert_int_equal(surge_conn_hooks(id, 1u << SURGE_CONN_EV_CLOSED, tpl, tlen, 1, &pub), -EINVAL);
	assert_int_equal(surge_conn_hooks(id, 1u << SURGE_CONN_EV_REQUEST, tpl, tlen, 1, &pub), 0);
	e = engine_of(id);
	iss = handshake(e, 41000, isc);
	feed(e, 41000, isc + 1, iss + 1, TF_ACK | TF_PSH, six);
	assert_int_equal(pub->n, SURGE_CONN_PIPELINE);
	assert_int_equal(e->st.requests, SURGE_CONN_PIPELINE);
	assert_int_equal(e->st.rx_dropped, 1);
	assert_int_equal(e->tx.used, 1);                /* an ACK of the 4 taken, nothing else yet */
	assert_int_equal(written(e, 0).ack, isc + 1 + 4 * r);
	assert_int_equal(written(e, 0).len, 0);
	drop_written(e);
	ev = pub->ev[pub->cur];
	for (int i = 0; i < 4; i++) {
		const uint8_t *h = pub->head[pub->cur] + (size_t)i * SURGE_CONN_HEAD;

		assert_int_equal(ev[i].kind, SURGE_CONN_EV_REQUEST);
		assert_int_equal(ev[i].requests, i + 1);
		assert_int_equal(ev[i].bytes, r);
		assert_int_equal(ev[i].head_len, r);
		assert_memory_equal(h, one, r);
		assert_int_equal(ev[i].path_len, 2);
		assert_memory_equal(h + ev[i].path_off, "/a", 2);
	}
	ev[0].action = SURGE_CONN_ACT_SEND;
	ev[0].tpl = 1;
	ev[1].action = SURGE_CONN_ACT_NEXT;             /* the response */
	ev[2].action = SURGE_CONN_ACT_SEND;
	ev[2].tpl = 1;
	ev[3].action = SURGE_CONN_ACT_FIN;
	conn_events_apply(e);
	/* 2000 (1460 + 540), the 43 of RESP, 2000 again, then our FIN (the
	 * answers before the close were all out when it was chosen) */
	assert_int_equal(e->tx.used, 6);
	seq = iss + 1;
	assert_int_equal(written(e, 0).seq, seq);
	assert_int_equal(written(e, 0).len, 1460);
	assert_int_equal(written(e, 1).len, 540);
	assert_int_equal(written(e, 2).seq, seq + 2000);
	assert_int_equal(written(e, 2).len, rl);
	assert_memory_equal(TX->data[2] + 54, RESP, rl);
	assert_int_equal(written(e, 3).seq, seq + 2000 + rl);
	assert_int_equal(written(e, 4).len, 540);
	assert_int_equal(written(e, 4).flags, TF_ACK | TF_PSH);
	assert_int_equal(written(e, 5).flags, TF_ACK | TF_FIN);
	assert_int_equal(written(e, 5).seq, seq + 4000 + rl);
	assert_int_equal(written(e, 5).len, 0);
	drop_written(e);
	/* all acknowledged: three responses; the last two requests again: dropped */
	feed(e, 41000, isc + 1 + 4 * r, seq + 4000 + rl + 1, TF_ACK | TF_PSH, six + 4 * r);
	assert_int_equal(e->st.responses, 3);
	assert_int_equal(e->st.requests, 4);
	assert_int_equal(e->st.rx_dropped, 2);
	drop_written(e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(server_handshake_request_response),
		cmocka_unit_test(server_half_close_answers_first),
		cmocka_unit_test(bad_segments_dropped_and_counted),
		cmocka_unit_test(table_full_refuses),
		cmocka_unit_test(client_syn_retries_then_timeout),
		cmocka_unit_test(client_http_response),
		cmocka_unit_test(client_status_line_strict),
		cmocka_unit_test(client_several_source_addresses),
		cmocka_unit_test(client_addresses_misuse),
		cmocka_unit_test(client_addresses_bound),
		cmocka_unit_test(server_several_addresses),
		cmocka_unit_test(server_several_addresses6),
		cmocka_unit_test(pair_segments_per_connection),
		cmocka_unit_test(client_think_time),
		cmocka_unit_test(server_index_deletions),
		cmocka_unit_test(ipv6_server),
		cmocka_unit_test(server_rto_from_the_response_after_idle),
		cmocka_unit_test(server_http_close_from_connection_header),
		cmocka_unit_test(client_hooks_hold_and_peer_fin),
		cmocka_unit_test(server_on_request_pipeline),
		cmocka_unit_test(server_owed_bytes_bounded),
		cmocka_unit_test(raw_sum_is_dpdks),
		cmocka_unit_test(client_response_cache_exact),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
