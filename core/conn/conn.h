/* SPDX-License-Identifier: BSD-3-Clause
 *
 * conn.h - the TCP connection engine's internal header (docs/connections.md).
 *
 * One engine belongs to one lcore (the task that made it) and is driven by
 * surge_conn_poll() once per burst. Its state is preallocated when it is
 * made: a table of `struct conn` (64 bytes each, checked below), for a
 * server an open-addressing index of twice the table's size (4 bytes a
 * slot), and its counters and two histograms. Nothing is allocated per
 * packet: frames come from the pool of the tx burst Lua gives to poll.
 *
 * The engine is a layer of its own, core/conn/ (docs/architecture.md):
 * above the data plane (bursts, pools, the pacer, the clock), below run
 * (which frees the engines at a run's end, conn_free_all). Its files are a
 * ladder: each calls only those before it (no cycle; tests/layers):
 *   conn_http.c   HTTP/1.1 parsing: pure, bytes in, numbers out (conn_http.h)
 *   conn_events.c the hooks' recorder: their state, and the events a poll
 *                 records for Lua
 *   conn_table.c  the table: free queue, client index by local port,
 *                 server index by (peer address, peer port), timer lists
 *                 (a release records its CLOSED event)
 *   conn_seg.c    parse a received frame into a struct seg; write a segment
 *   conn_fsm.c    the state machine: what a segment (one function per step
 *                 of RFC 9293 3.10.7.4), a timer, an open or the end does
 *   conn_hooks.c  the hooks' applier: the actions Lua's hooks chose, applied
 *                 through the state machine at the next poll
 *   conn_poll.c   the FFI entry points: make, hooks, poll (receive, timers,
 *                 opens, send), abort, counters
 */
#ifndef SURGE_CONN_H
#define SURGE_CONN_H

#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>

#include "hist.h"
#include "dataplane.h"
#include "wire.h"

enum conn_state {
	CS_FREE = 0,
	CS_SYN_SENT,
	CS_SYN_RCVD,
	CS_ESTABLISHED,
	CS_FIN_WAIT_1,     /* our FIN sent, not yet acknowledged */
	CS_FIN_WAIT_2,     /* our FIN acknowledged, waiting for the peer's */
	CS_CLOSING,        /* both FINs sent, ours not yet acknowledged */
	CS_CLOSE_WAIT,     /* server: the peer closed, our answers still going out */
	CS_LAST_ACK,       /* the peer closed first; our FIN sent */
	CS_TIME_WAIT,
	CS_STATES
};

/* conn.flags */
enum {
	CF_DONE = 1,        /* every request answered: counted as completed */
	CF_FIRST = 2,       /* the first response byte arrived (SYN-to-first-byte taken) */
	CF_FIN_RCVD = 4,    /* the peer's FIN is in (rcv_nxt counts it) */
	CF_FAILED = 8,      /* counted as failed: nothing more is counted for it */
	CF_CLOSE = 16,      /* server: close once the responses owed are acknowledged (the
			     * request asked: HTTP/1.0 without keep-alive, Connection: close) */
	CF_FIN_QUEUED = 32  /* our FIN follows the stream's last byte: it goes out in the
			     * segment that carries it (a server closing with its last
			     * response: 3 segments each way a connection, not 4 + 3) */
};

/* conn.list: which timer list the connection is on */
enum { CL_NONE = 0, CL_RTO = 1, CL_TW = 2, CL_FREE = 3, CL_THINK = 4 };

/* One connection: 64 bytes. Times are in microseconds of the engine's
 * clock (uint32, compared by signed difference: intervals under 35 min). */
struct conn {
	uint32_t peer_ip;       /* IPv4, host order; IPv6: the address folded (its 4 words xored) */
	uint16_t peer_port;     /* host order */
	uint16_t local_port;
	uint32_t snd_una;       /* oldest unacknowledged sequence number */
	uint32_t snd_nxt;       /* next sequence number to send */
	uint32_t rcv_nxt;       /* next sequence number expected */
	uint32_t msg_seq;       /* sequence number of the first byte of the message being sent */
	uint32_t rx_bytes;      /* bytes of the message being received */
	uint32_t rx_expect;     /* its expected length, 0 = not known yet (client) */
	uint32_t t_open;        /* SYN sent (client) or received (server) */
	union {
		uint32_t t_req;     /* client: the current request sent */
		uint32_t addr;      /* server: the index of the engine's address the peer
				     * connected to (a client's is its entry's, i / ports) */
	};
	uint32_t t_timer;       /* when the timer fires */
	uint32_t next, prev;    /* the timer list or the free queue */
	uint16_t peer_wnd;      /* the peer's window, bytes (no scaling) */
	uint16_t requests;      /* requests sent (client) or answered (server) */
	uint8_t state;          /* enum conn_state */
	uint8_t retries;        /* timer expiries since the last progress */
	uint8_t flags;
	uint8_t list;           /* CL_* */
	uint16_t owed;          /* messages queued to send, from msg_seq on (a server's pipelined responses) */
	uint8_t match;          /* server, HTTP: bytes of CR LF CR LF matched so far */
	uint8_t tpl;            /* client: the request template it sends (0: conf.data; hooks choose others) */
};

_Static_assert(sizeof(struct conn) == 64, "struct conn is 64 bytes (docs/connections.md)");

#define CONN_NIL UINT32_MAX

/* A server's responses owed a connection (struct conn owed x their
 * length) stay under this: a quarter of the sequence space, so the
 * outgoing stream's end never wraps behind snd_nxt (conn_fsm.c owed_room) */
#define OWED_BYTES_MAX (1u << 30)

struct conn_list {
	uint32_t head, tail;
};

/* A received frame as the engine reads it. */
struct seg {
	uint8_t *frame;
	const uint8_t *src6;          /* IPv6: the source address (in the frame), else NULL */
	uint32_t src_ip, dst_ip;      /* host order; IPv6: src folded, dst 0 */
	uint32_t addr;                /* the index of the engine's address it was sent to */
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint16_t wnd;
	uint8_t flags;                /* TCP flags */
	uint8_t mss_opt;              /* a SYN carried an MSS option */
	uint16_t mss;
	const uint8_t *payload;
	uint32_t len;                 /* payload bytes */
};

/* TCP flags */
enum { TF_FIN = 0x01, TF_SYN = 0x02, TF_RST = 0x04, TF_PSH = 0x08, TF_ACK = 0x10 };

/* What parsing a frame found. */
enum seg_kind {
	SEG_OTHER = 0,      /* not for the engine (ARP, other protocols): left for Lua */
	SEG_TCP = 1,        /* a TCP segment to the engine's address */
	SEG_BAD = 2         /* TCP to us but malformed or with a wrong checksum: dropped, counted */
};

/* conn.flags, the hooks' bit (conn_events.c, conn_hooks.c): a client connection held for
 * a hook's action; the top bit, apart from the engine's own flags above */
enum { CF_HELD = 128 };

/* The hooks' state (conn_events.c); present only when hooks are set. */
struct conn_hooks {
	struct surge_conn_hooks pub;  /* what Lua reads and writes */
	uint8_t *tpl_data[SURGE_CONN_TEMPLATES_MAX];   /* [0]: the engine's data */
	uint32_t tpl_len[SURGE_CONN_TEMPLATES_MAX];
	uint16_t *status;             /* client: each connection's response status */
	/* server with on_request: each connection's queue of the responses
	 * chosen for its unanswered requests (SURGE_CONN_PIPELINE a
	 * connection, request r at (r - 1) % SURGE_CONN_PIPELINE: a template,
	 * or CH_PENDING until the hook's action is applied), and the first
	 * bytes of the request it is receiving (SURGE_CONN_HEAD a connection) */
	uint8_t *choice;
	uint8_t *rq_head;
	uint8_t stopped;              /* abort: the run's end, no more events */
};

enum { CH_PENDING = 0xff };

_Static_assert((SURGE_CONN_PIPELINE & (SURGE_CONN_PIPELINE - 1)) == 0, "the pipeline is a power of 2");

/* The last message header an engine parsed whole (a client's response
 * header, a server's request), and what parsing it gave: the next one with
 * the same bytes gives the same (a keep-alive peer sends one header over
 * and over), so one memcmp stands for the scans (issue 21, the ka row) */
struct msg_cache {
	uint32_t len;                 /* 0: empty */
	uint32_t val;                 /* client: the response's length; server: 1 = it asks to close */
	uint8_t b[256];
};

struct conn_engine {
	struct surge_conn_conf conf;
	struct surge_conn_stats st;
	uint8_t *data;                /* the request (client) or response (server) bytes */
	uint32_t data_len;
	uint32_t data_sum;            /* their 16-bit ones' complement sum (host order), for a
				       * segment that carries them whole */
	uint32_t mss;                 /* the engine's own, lowered by a peer's MSS option at open */
	uint32_t idle_expiries;       /* timer expiries a connection may wait on its peer */
	uint32_t tw_now;              /* connections in TIME_WAIT now (not counted against concurrency) */
	struct conn *tab;
	uint32_t *index;              /* server: conn index + 1, 0 = empty */
	uint8_t (*peer6)[16];         /* IPv6 server: each connection's peer address */
	uint32_t index_mask;
	/* the engine's addresses (local_count of them, or conf's one),
	 * ascending: a client's connection i is on address i / ports, source
	 * port local_port + i % ports, so a segment finds it by arithmetic; a
	 * server's connection keeps the index of the address it was opened
	 * to (conn.addr) and is keyed by it with the peer's address and port */
	uint32_t naddr, ports;
	uint32_t *addr4;              /* IPv4, host order */
	uint8_t (*addr6)[16];         /* IPv6 */
	uint8_t addr_run;             /* 1: consecutive (the index is a subtraction), 0: a binary search */
	struct conn_list free_q, rto, tw, think;
	struct hist connect_h;        /* SYN to the first response byte, ns */
	struct hist response_h;       /* request sent to its last response byte, ns */
	struct pacer open_pc;         /* the client's open schedule */
	uint64_t tsc0;                /* the engine clock's origin */
	double us_per_cyc;
	uint32_t now;                 /* the engine clock, µs, read once per poll */
	uint32_t iss_salt;
	int32_t owner;                /* the lcore that made it: the only one that polls it */
	uint8_t sw_csum;              /* 1: checksums in software, 0: the port's; 2: not yet known */
	uint8_t opened_all;           /* the client opened conf.connections */
	/* the poll's tx burst: frames written by the state machine go here;
	 * while tx.full (the last flush found the TX ring full) no new opens
	 * until a flush goes out whole (the client keeps to the pace its peer
	 * drains) */
	struct tx_writer tx;
	struct conn_hooks *hk;        /* NULL: no hooks (every event site tests only this) */
	struct msg_cache mc;
};

/* conn_seg.c */
/* ol_flags: the mbuf's, where the port's checksum verdicts are */
enum seg_kind seg_parse(const struct conn_engine *e, uint8_t *frame, uint32_t len, uint64_t ol_flags,
			struct seg *s);
/* Writes a segment of c into the next mbuf of e->tx (allocating it, sending
 * the burst first when full): flags, the sequence number seq, payload bytes
 * data[0..len). 0, or -ENOBUFS when the pool is empty (counted by caller). */
int seg_emit(struct conn_engine *e, const struct conn *c, uint8_t flags, uint32_t seq, const uint8_t *data,
	     uint32_t len);
/* An RST answering s, for a segment no connection takes (RFC 9293 3.10.7.1). */
int seg_emit_reset(struct conn_engine *e, const struct seg *s);

/* conn_table.c */
/* The engine's addresses from its conf (sorted, checked: -EINVAL with the error set) */
int addrs_init(struct conn_engine *e);
/* The index of the engine's address ip (IPv4, host order) or a6 (IPv6), or -1 */
int32_t addr_index(const struct conn_engine *e, uint32_t ip, const uint8_t *a6);
/* The table, its free queue and a server's index: 0 or -ENOMEM, what was
 * allocated then left for table_free (the engine's one release path) */
int table_init(struct conn_engine *e);
/* Frees the addresses and the table; the engine itself is freed after */
void table_free(struct conn_engine *e);
/* peer6: the IPv6 address (a server's peer), else NULL; addr: a server's
 * address the peer connected to (its index; a client's comes with the entry) */
struct conn *conn_alloc(struct conn_engine *e, uint32_t peer_ip, const uint8_t *peer6, uint16_t peer_port,
			uint32_t addr);
/* An IPv6 address folded to the 32 bits a connection keeps */
static inline uint32_t
ip6_fold(const uint8_t *a)
{
	uint32_t v = 0;

	for (int i = 0; i < 16; i += 4)
		v ^= get32(a + i);
	return v;
}
void conn_release(struct conn_engine *e, struct conn *c);
struct conn *conn_lookup(struct conn_engine *e, const struct seg *s);
/* Prefetches what conn_lookup will read for the frame (IPv4; others skipped) */
void conn_prefetch(const struct conn_engine *e, const uint8_t *frame, uint32_t len);
void timer_arm(struct conn_engine *e, struct conn *c, int list, uint32_t after_us);
void timer_stop(struct conn_engine *e, struct conn *c);
static inline uint32_t conn_idx(const struct conn_engine *e, const struct conn *c) { return (uint32_t)(c - e->tab); }

/* conn_fsm.c */
void fsm_input(struct conn_engine *e, struct conn *c, const struct seg *s);
void fsm_listen(struct conn_engine *e, const struct seg *s);
void fsm_timer(struct conn_engine *e, struct conn *c);
int fsm_open(struct conn_engine *e);
/* The run's end: c reset and released, counted aborted unless counted already */
int fsm_abort(struct conn_engine *e, struct conn *c);

/* conn_poll.c: one received frame through the engine (counted by kind;
 * SEG_OTHER ones are the caller's), and the timers due at e->now */
enum seg_kind conn_frame(struct conn_engine *e, uint8_t *frame, uint32_t len, uint64_t ol_flags);
void conn_timers(struct conn_engine *e);
struct conn_engine *conn_engine_get(int id);
/* the TCP engines, freed at the end of the run (core/run/boot.c) */
void conn_free_all(void);

/* conn_hooks.c: the hooks' actions on the last poll's events */
void conn_events_apply(struct conn_engine *e);

/* conn_events.c. Without hooks each call below is one test of e->hk,
 * at a connection's events (not per segment). */
int conn_events_init(struct conn_engine *e, int id, uint32_t kinds, const uint8_t *const *data,
		     const uint32_t *len, uint32_t ntpl, struct surge_conn_hooks **out);
int conn_event_put(struct conn_engine *e, struct conn *c, unsigned kind, unsigned reason);
void conn_event_status(struct conn_engine *e, const struct conn *c, const uint8_t *p, uint32_t n);
/* A server's request received whole (number reqno on c, bytes long; its
 * first bytes: prior ones kept in rq_head, then q[0..len)): its REQUEST
 * event, its response pending the action (template 0 when no event could
 * be recorded) */
void conn_event_request(struct conn_engine *e, struct conn *c, uint16_t reqno, uint32_t bytes, uint32_t prior,
			const uint8_t *q, uint32_t len);
/* The part q[0..len) of the request c is receiving, prior bytes of it before */
void conn_event_request_part(struct conn_engine *e, const struct conn *c, uint32_t prior, const uint8_t *q,
			     uint32_t len);
void conn_events_free(struct conn_engine *e);
/* Records an event when a hook wants it; 1: the connection is held for
 * the hook's action (a client's ESTABLISHED, RESPONSE), its course stops here */
static inline int
conn_hook(struct conn_engine *e, struct conn *c, unsigned kind, unsigned reason)
{
	return unlikely(e->hk != NULL) ? conn_event_put(e, c, kind, reason) : 0;
}
/* Room for a timer's events (two at most): timers wait a poll when not */
static inline int
conn_events_room(const struct conn_engine *e)
{
	return likely(e->hk == NULL) || e->hk->pub.n + 2 <= e->hk->pub.cap;
}
/* A server whose hook chooses each response (on_request) */
static inline int
conn_routed(const struct conn_engine *e)
{
	return unlikely(e->hk != NULL) && e->hk->choice != NULL;
}
/* A routed server's choice for request reqno (1 for the first) of c: its
 * place in c's queue (struct conn_hooks choice) */
static inline uint8_t *
conn_choice(const struct conn_engine *e, const struct conn *c, uint16_t reqno)
{
	return e->hk->choice + (size_t)conn_idx(e, c) * SURGE_CONN_PIPELINE +
	       ((uint16_t)(reqno - 1) & (SURGE_CONN_PIPELINE - 1));
}
/* The message connection c sends: its template (the engine's data unless a hook chose) */
static inline const uint8_t *
conn_msg(const struct conn_engine *e, const struct conn *c)
{
	return likely(c->tpl == 0) ? e->data : e->hk->tpl_data[c->tpl];
}
static inline uint32_t
conn_msg_len(const struct conn_engine *e, const struct conn *c)
{
	return likely(c->tpl == 0) ? e->data_len : e->hk->tpl_len[c->tpl];
}

/* conn_fsm.c, for conn_hooks.c: a client's next request (more: even past
 * conf.requests), or its close now (counted completed) */
void fsm_client_next(struct conn_engine *e, struct conn *c, int more);
void fsm_client_close(struct conn_engine *e, struct conn *c, int rst);
/* A server's answer to request reqno of c, as a hook chose it (enum
 * surge_conn_action; tpl: SEND's template) */
void fsm_server_answer(struct conn_engine *e, struct conn *c, uint16_t reqno, unsigned action, unsigned tpl);

/* The 16-bit ones' complement sum of p[0..len), as rte_raw_cksum gives
 * it (words in native order, folded, not complemented), 8 bytes a step
 * into two 64-bit sums of 32-bit halves (no carry to follow: RFC 1071's
 * sum is the same modulo 0xffff whatever the word size) where DPDK 22.11's
 * takes 2: a received segment's check was most of seg_parse (issue 21) */
static inline uint16_t
conn_raw_sum(const uint8_t *p, uint32_t len)
{
	uint64_t lo = 0, hi = 0, s;

	for (; len >= 8; p += 8, len -= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		lo += (uint32_t)w;
		hi += w >> 32;
	}
	s = lo + hi;
	for (; len >= 2; p += 2, len -= 2) {   /* at most 3 words left */
		uint16_t w;

		memcpy(&w, p, 2);
		s += w;
	}
	if (len > 0)
		s += RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN ? (uint64_t)*p : (uint64_t)*p << 8;
	s = (s >> 32) + (s & 0xffffffffu);
	s = (s >> 32) + (s & 0xffffffffu);
	s = (s >> 16) + (s & 0xffff);
	s = (s >> 16) + (s & 0xffff);
	s = (s >> 16) + (s & 0xffff);
	return (uint16_t)s;
}

/* signed difference of two engine times */
static inline int32_t us_diff(uint32_t a, uint32_t b) { return (int32_t)(a - b); }
static inline int seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static inline int seq_le(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }

#endif /* SURGE_CONN_H */
