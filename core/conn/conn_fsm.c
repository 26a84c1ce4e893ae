/* SPDX-License-Identifier: BSD-3-Clause
 *
 * conn_fsm.c - what a segment or a timer does to a connection (RFC 9293's
 * state machine, reduced as docs/connections.md says).
 *
 * Data is taken in order only: a segment that starts past rcv_nxt is
 * dropped, counted and answered with a duplicate ACK, so the peer sends it
 * again; one that starts before is trimmed. The sender keeps no copy of
 * what it sent: every message is the engine's one request or response
 * template, so a retransmission (go-back-N from snd_una, after a fixed RTO)
 * rewrites the same bytes. Both roles share one outgoing stream model:
 * `owed` copies of the template from msg_seq on.
 */
#include <errno.h>
#include <string.h>

#include "conn.h"
#include "conn_http.h"

static void
count_fail(struct conn_engine *e, struct conn *c, uint64_t *reason)
{
	if (c->flags & (CF_DONE | CF_FAILED))
		return;
	c->flags |= CF_FAILED;
	(*reason)++;
	conn_hook(e, c, SURGE_CONN_EV_FAILED, reason == &e->st.failed_timeout ? SURGE_CONN_FAIL_TIMEOUT
					      : reason == &e->st.failed_rst ? SURGE_CONN_FAIL_RST : SURGE_CONN_FAIL_BAD);
}

/* Whether c's end is counted already: at its failure (count_fail), a
 * client's at its last response (CF_DONE); a server's completion is
 * counted at its release (finish), so it is not before. Every attempted
 * connection is counted once: completed, failed_*, closed_other or
 * aborted (docs/connections.md, "Counters"). */
static inline int
counted(const struct conn_engine *e, const struct conn *c)
{
	return (c->flags & CF_FAILED) || (e->conf.role == SURGE_CONN_CLIENT && (c->flags & CF_DONE));
}

/* The end of a connection: a server counts it complete when it answered
 * at least once and nothing failed (a client counted at its last response);
 * one counted nowhere else (a server's closed before any answer) is
 * closed_other. */
static void
finish(struct conn_engine *e, struct conn *c)
{
	if (!counted(e, c)) {
		if (c->flags & CF_DONE)
			e->st.completed++;
		else
			e->st.closed_other++;
	}
	conn_release(e, c);
}

/* The run's end (surge_conn_abort): c reset (an RST unless its SYN is
 * unanswered) and released, counted aborted unless counted already; one in
 * TIME_WAIT closed: counted as its close. Returns 1 when an RST went out. */
int
fsm_abort(struct conn_engine *e, struct conn *c)
{
	int rst = c->state != CS_SYN_SENT;

	if (c->state == CS_TIME_WAIT) {
		finish(e, c);
		return 0;
	}
	if (!counted(e, c))
		e->st.aborted++;
	if (rst)
		seg_emit(e, c, TF_RST | TF_ACK, c->snd_nxt, NULL, 0);
	conn_release(e, c);
	return rst;
}

static void
abort_conn(struct conn_engine *e, struct conn *c, uint64_t *reason)
{
	count_fail(e, c, reason);
	seg_emit(e, c, TF_RST | TF_ACK, c->snd_nxt, NULL, 0);
	finish(e, c);
}

static uint32_t
iss_for(const struct conn_engine *e, uint32_t peer_ip, uint16_t lport, uint16_t pport)
{
	/* RFC 6528's shape: a clock (4 µs) plus a fixed value per 4-tuple,
	 * so a reused 4-tuple starts above where its last use was */
	uint32_t h = (peer_ip ^ ((uint32_t)lport << 16 | pport) ^ e->iss_salt) * 2654435761u;

	return e->now / 4u + h;
}

/* A routed server's queue (conn_routed): the template of the i-th
 * unanswered response (0: the oldest), or -1 while its choice is pending */
static inline int
routed_tpl(const struct conn_engine *e, const struct conn *c, uint32_t i)
{
	uint8_t v = *conn_choice(e, c, (uint16_t)(c->requests - c->owed + i + 1));

	return v == CH_PENDING ? -1 : v;
}

/* A routed server's stream at offset x from msg_seq: the response that
 * holds it (its bytes, length, x's offset in it, whether it is the stream's
 * last); 0 past the chosen responses (a pending one stops the stream) */
static int
routed_at(const struct conn_engine *e, const struct conn *c, uint32_t x, const uint8_t **msg, uint32_t *dlen,
	  uint32_t *off, int *last)
{
	for (uint32_t i = 0, base = 0; i < c->owed; i++) {
		int t = routed_tpl(e, c, i);

		if (t < 0)
			return 0;
		if (x - base < e->hk->tpl_len[t]) {
			*msg = e->hk->tpl_data[t];
			*dlen = e->hk->tpl_len[t];
			*off = x - base;
			*last = i + 1 == c->owed;
			return 1;
		}
		base += e->hk->tpl_len[t];
	}
	return 0;
}

/* Sends what the window allows of the outgoing stream; segments that
 * start below `high` are retransmissions. Returns 1 when a segment left
 * (it carried an ACK). */
static int
send_data(struct conn_engine *e, struct conn *c, uint32_t high)
{
	uint32_t dlen = conn_msg_len(e, c), end = c->msg_seq + (uint32_t)c->owed * dlen;
	const uint8_t *msg = conn_msg(e, c);
	uint32_t wnd_end = c->snd_una + c->peer_wnd;
	/* new data on a connection with nothing outstanding (not go-back-N) */
	int was_idle = c->snd_una == c->snd_nxt && high == c->snd_nxt;
	int sent = 0, fin = (c->flags & CF_FIN_QUEUED) != 0;
	/* a server whose hook chose each response: the stream is the queue's
	 * responses, each its own template (one test of e->hk without hooks) */
	int routed = conn_routed(e);

	while (seq_lt(c->snd_nxt, wnd_end)) {
		uint32_t off, n;
		uint8_t flags = TF_ACK;
		int last;

		if (likely(!routed)) {
			if (!seq_lt(c->snd_nxt, end))
				break;
			off = (c->snd_nxt - c->msg_seq) % dlen;
			last = c->snd_nxt - off + dlen == end;
		} else if (!routed_at(e, c, c->snd_nxt - c->msg_seq, &msg, &dlen, &off, &last)) {
			break;
		}
		n = dlen - off;
		if (n > e->mss)
			n = e->mss;
		if (n > wnd_end - c->snd_nxt)
			n = wnd_end - c->snd_nxt;
		if (off + n == dlen)
			flags |= TF_PSH;
		if (fin && last && off + n == dlen)
			flags |= TF_FIN;        /* the stream's last byte: our FIN with it */
		if (seg_emit(e, c, flags, c->snd_nxt, msg + off, n) != 0)
			break;                  /* no mbuf: the timer sends it again */
		if (flags & TF_FIN) {
			c->snd_nxt++;           /* the FIN's sequence number, after the data */
			if (c->state == CS_ESTABLISHED)
				c->state = CS_FIN_WAIT_1;
			else if (c->state == CS_CLOSE_WAIT)
				c->state = CS_LAST_ACK;
		}
		if (seq_lt(c->snd_nxt, high))
			e->st.retransmits++;
		else
			e->st.bytes_sent += n;
		if (off == 0 && e->conf.role == SURGE_CONN_CLIENT && !seq_lt(c->snd_nxt, high)) {
			c->t_req = e->now;      /* a request's first byte, first time */
			e->st.requests++;
		}
		c->snd_nxt += n;
		sent = 1;
	}
	if (sent && was_idle) {
		/* the RTO runs from the oldest unacknowledged byte's first
		 * sending (RFC 6298 5.1): an idle connection's timer ticks for
		 * the idle limit and would fire anywhere within one RTO of it */
		c->retries = 0;
		timer_arm(e, c, CL_RTO, e->conf.rto_us);
	}
	return sent;
}

static void
send_fin(struct conn_engine *e, struct conn *c, uint8_t next_state)
{
	seg_emit(e, c, TF_FIN | TF_ACK, c->snd_nxt, NULL, 0);
	c->snd_nxt++;
	c->state = next_state;
	c->retries = 0;
	timer_arm(e, c, CL_RTO, e->conf.rto_us);
}

static void
enter_time_wait(struct conn_engine *e, struct conn *c)
{
	e->st.time_wait++;
	e->tw_now++;
	c->state = CS_TIME_WAIT;
	if (e->conf.time_wait_us == 0) {
		finish(e, c);
		return;
	}
	timer_arm(e, c, CL_TW, e->conf.time_wait_us);
}

/* A client's next request (more: even past conf.requests, a hook's
 * choice), or its close once all are answered. */
void
fsm_client_next(struct conn_engine *e, struct conn *c, int more)
{
	if (more || c->requests < e->conf.requests) {
		c->requests++;
		c->msg_seq = c->snd_nxt;
		c->owed = 1;
		c->rx_bytes = 0;
		c->rx_expect = 0;
		send_data(e, c, c->snd_nxt);
		return;
	}
	fsm_client_close(e, c, e->conf.close == SURGE_CONN_CLOSE_RST);
}

static void
client_next(struct conn_engine *e, struct conn *c)
{
	fsm_client_next(e, c, 0);
}

/* A client's close with every request answered: counted completed. */
void
fsm_client_close(struct conn_engine *e, struct conn *c, int rst)
{
	c->flags |= CF_DONE;
	e->st.completed++;
	if (rst) {
		seg_emit(e, c, TF_RST | TF_ACK, c->snd_nxt, NULL, 0);
		finish(e, c);
		return;
	}
	/* the server's FIN already in (it came with the response): ours
	 * acknowledges it, and no TIME_WAIT here (the server closed first) */
	send_fin(e, c, (c->flags & CF_FIN_RCVD) ? CS_LAST_ACK : CS_FIN_WAIT_1);
}

/* A server's answer to request reqno, chosen by its on_request hook
 * (conn_events.c applies it at the poll after the event). */
void
fsm_server_answer(struct conn_engine *e, struct conn *c, uint16_t reqno, unsigned action, unsigned tpl)
{
	uint8_t *choice = conn_choice(e, c, reqno);
	uint16_t pos = (uint16_t)(reqno - 1 - (uint16_t)(c->requests - c->owed));

	/* still this connection's unanswered request: not closed since, nor
	 * its entry reused, nor cut off by a close chosen before it */
	if ((c->state != CS_ESTABLISHED && c->state != CS_CLOSE_WAIT) || pos >= c->owed || *choice != CH_PENDING)
		return;
	switch (action) {
	case SURGE_CONN_ACT_RST:
		seg_emit(e, c, TF_RST | TF_ACK, c->snd_nxt, NULL, 0);
		finish(e, c);           /* completed when it answered one before */
		return;
	case SURGE_CONN_ACT_FIN:
		/* no answer to this request nor to any after it: the FIN
		 * follows the answers before it (with the last, or once all
		 * are acknowledged: server_acked) */
		c->owed = pos;
		c->requests = (uint16_t)(reqno - 1);
		c->flags |= CF_CLOSE | CF_FIN_QUEUED;
		send_data(e, c, c->snd_nxt);
		if (c->state == CS_ESTABLISHED || c->state == CS_CLOSE_WAIT) {
			/* the answers before it all sent already (the FIN rode
			 * none of them): it goes now, on its own */
			uint32_t len = 0, i;
			int t;

			for (i = 0; i < c->owed && (t = routed_tpl(e, c, i)) >= 0; i++)
				len += e->hk->tpl_len[t];
			if (i == c->owed && c->snd_nxt == c->msg_seq + len)
				send_fin(e, c, c->state == CS_CLOSE_WAIT ? CS_LAST_ACK : CS_FIN_WAIT_1);
		}
		return;
	default:
		*choice = (uint8_t)(action == SURGE_CONN_ACT_SEND ? tpl : 0);
		break;
	}
	send_data(e, c, c->snd_nxt);
}

/* http_response_length (conn_http.c) through the engine's cache: a
 * response header the same, byte for byte, as the last one parsed has its
 * length (the result depends on the header's bytes and the conf alone) */
static uint32_t
http_length_cached(struct conn_engine *e, const uint8_t *p, uint32_t n)
{
	struct msg_cache *mc = &e->mc;
	uint32_t hdr = 0, v;

	if (mc->len != 0 && n >= mc->len && memcmp(p, mc->b, mc->len) == 0)
		return mc->val;
	v = http_response_length(p, n, e->conf.expect_status, &hdr);
	if (v != 0 && hdr <= sizeof(mc->b)) {
		memcpy(mc->b, p, hdr);
		mc->len = hdr;
		mc->val = v;
	}
	return v;
}

static void
client_data(struct conn_engine *e, struct conn *c, const uint8_t *p, uint32_t n)
{
	if (!(c->flags & CF_FIRST)) {
		c->flags |= CF_FIRST;
		hist_add(&e->connect_h, (uint64_t)(uint32_t)(e->now - c->t_open) * 1000);
	}
	if (c->rx_bytes == 0) {
		c->rx_expect = e->conf.expect == SURGE_CONN_EXPECT_HTTP ? http_length_cached(e, p, n)
									: e->conf.expect_len;
		if (unlikely(e->hk != NULL))
			conn_event_status(e, c, p, n);
	}
	c->rx_bytes += n;
	if (c->rx_expect == 0 || c->rx_bytes > c->rx_expect || c->owed != 0) {
		/* a wrong status or header, more than expected, or an answer
		 * before the request was all acknowledged */
		abort_conn(e, c, &e->st.failed_bad);
		return;
	}
	if (c->rx_bytes == c->rx_expect) {
		e->st.responses++;
		hist_add(&e->response_h, (uint64_t)(uint32_t)(e->now - c->t_req) * 1000);
		if (conn_hook(e, c, SURGE_CONN_EV_RESPONSE, 0))
			return;                 /* held: the hook's action, at the next poll */
		if (e->conf.think_us > 0 && c->requests < e->conf.requests)
			timer_arm(e, c, CL_THINK, e->conf.think_us);   /* the next request after it */
		else
			client_next(e, c);
	}
}

/* The requests a server may still take on c: the bytes of the responses
 * owed stay within OWED_BYTES_MAX, so the stream's end (msg_seq + owed x
 * the response's length) is always ahead of snd_nxt in 32-bit sequence
 * arithmetic (past 2^31 it would wrap behind it and nothing more would be
 * sent: issue 31), and owed within its 16 bits. A request past them is not
 * taken (the peer sends it again, as a routed server's past its pipeline). */
static inline uint32_t
owed_room(const struct conn_engine *e, const struct conn *c)
{
	uint32_t most = OWED_BYTES_MAX / e->data_len;

	if (most > UINT16_MAX)
		most = UINT16_MAX;
	return most > c->owed ? most - c->owed : 0;
}

/* Takes the requests in p[0..n) (HTTP: each up to its blank line; else
 * expect_len bytes each) into c's outgoing stream. Returns the bytes taken:
 * n, or, when the responses owed are at their bound (owed_room; a routed
 * server's pipeline), those up to the end of the last request it took (the
 * rest is not acknowledged: the peer sends it again). */
static uint32_t
server_data(struct conn_engine *e, struct conn *c, const uint8_t *p, uint32_t n)
{
	static const uint8_t end[4] = { '\r', '\n', '\r', '\n' };
	uint32_t done = 0, begin = 0, rx = c->rx_bytes, took = n;
	int routed = conn_routed(e);
	/* requests are taken while the responses owed have room: a routed
	 * server's pipeline, anyone's OWED_BYTES_MAX (owed_room) */
	uint32_t room = unlikely(routed) ? SURGE_CONN_PIPELINE - (uint32_t)c->owed : owed_room(e, c);

	if (c->flags & CF_FIN_QUEUED) {
		e->st.rx_dropped++;             /* a request after the last one we answer: our FIN is due */
		return n;
	}
	if (room == 0)
		return 0;

	/* in locals, not through c: stores through c would be reloaded after
	 * every byte read through p (a uint8_t pointer may alias them) */
	if (e->conf.expect == SURGE_CONN_EXPECT_HTTP) {
		uint32_t match = c->match;
		struct msg_cache *mc = &e->mc;

		for (uint32_t i = 0; i < n;) {
			int whole = i == begin && (done > 0 || rx == 0), close;

			/* a request that starts here, the same bytes as the last
			 * one parsed whole: its end and its close, without the scans */
			if (whole && mc->len != 0 && n - i >= mc->len && memcmp(p + i, mc->b, mc->len) == 0) {
				i += mc->len;
				close = (int)mc->val;
				goto request;
			}
			if (match == 0) {          /* nothing matched: on to the next CR */
				const uint8_t *q = memchr(p + i, '\r', n - i);

				if (q == NULL)
					break;
				i = (uint32_t)(q - p);
			}
			match = p[i] == end[match] ? match + 1 : p[i] == '\r' ? 1 : 0;
			i++;
			if (match < 4)
				continue;
			close = http_wants_close(p + begin, i - begin);
			if ((begin > 0 || done > 0 || rx == 0) && i - begin <= sizeof(mc->b)) {
				memcpy(mc->b, p + begin, i - begin);   /* whole in this segment */
				mc->len = i - begin;
				mc->val = (uint32_t)close;
			}
request:
			if (close)
				c->flags |= CF_CLOSE;
			if (unlikely(routed))
				conn_event_request(e, c, (uint16_t)(c->requests + done + 1),
						   (done == 0 ? rx : 0) + i - begin, done == 0 ? rx : 0, p + begin,
						   i - begin);
			match = 0;
			begin = i;
			if (++done == room) {
				took = i;
				break;
			}
		}
		c->match = (uint8_t)match;
		rx = done > 0 ? took - begin : rx + n;
	} else {
		uint32_t left = n;

		while (rx + left >= e->conf.expect_len && done < room) {
			uint32_t part = e->conf.expect_len - rx;

			if (unlikely(routed))
				conn_event_request(e, c, (uint16_t)(c->requests + done + 1), e->conf.expect_len, rx,
						   p + (n - left), part);
			left -= part;
			rx = 0;
			done++;
		}
		if (done == room) {
			took = n - left;
			left = 0;
		}
		begin = n - left;
		rx += left;
	}
	if (unlikely(routed) && took > begin)
		conn_event_request_part(e, c, c->rx_bytes * (done == 0), p + begin, took - begin);
	c->rx_bytes = rx;
	if (c->rx_bytes > 65536) {
		abort_conn(e, c, &e->st.failed_bad);   /* a request that never ends */
		return took;
	}
	if (done == 0)
		return took;
	e->st.requests += done;
	c->requests = (uint16_t)(c->requests + done);
	if (c->owed == 0)
		c->msg_seq = c->snd_nxt;
	c->owed = (uint16_t)(c->owed + done);
	/* the server closes after these answers: its FIN goes with the last
	 * (send_data), as dperf's does, not in a segment of its own */
	if ((c->flags & CF_CLOSE) || (e->conf.requests != 0 && c->requests >= e->conf.requests))
		c->flags |= CF_FIN_QUEUED;
	return took;
}

/* The server's part once the client acknowledged: completed responses
 * leave the stream; with a request limit it closes after the last. */
static void
server_acked(struct conn_engine *e, struct conn *c)
{
	int routed = conn_routed(e);

	while (c->owed > 0) {
		int t = unlikely(routed) ? routed_tpl(e, c, 0) : 0;
		uint32_t len = unlikely(routed) ? (t < 0 ? 0 : e->hk->tpl_len[t]) : e->data_len;

		if (len == 0 || !seq_le(c->msg_seq + len, c->snd_una))
			break;                  /* (a pending response: nothing of it sent) */
		c->msg_seq += len;
		c->owed--;
		e->st.responses++;
		c->flags |= CF_DONE;
	}
	if (c->owed == 0 && c->state == CS_CLOSE_WAIT)
		send_fin(e, c, CS_LAST_ACK);    /* the peer closed first: our answers are all in */
	else if (c->owed == 0 && c->state == CS_ESTABLISHED &&
		 ((c->flags & CF_CLOSE) || (e->conf.requests != 0 && c->requests >= e->conf.requests)))
		send_fin(e, c, CS_FIN_WAIT_1);
}

/* The peer's FIN reached a held client connection: after a whole response
 * it completed (no hook's request can follow a close), before any request
 * (held at ESTABLISHED) it is the failure it always was. */
static void
held_peer_fin(struct conn_engine *e, struct conn *c)
{
	c->flags &= (uint8_t)~CF_HELD;
	if (c->requests > 0 && !(c->flags & (CF_DONE | CF_FAILED))) {
		c->flags |= CF_DONE;
		e->st.completed++;
	}
}

/* The peer's FIN, now counted in rcv_nxt: what it does in each state.
 * Returns 0 where it changes nothing (the caller acknowledges it). */
static int
peer_fin(struct conn_engine *e, struct conn *c)
{
	switch (c->state) {
	case CS_ESTABLISHED:
		if (unlikely(c->flags & CF_HELD))
			held_peer_fin(e, c);        /* held after a whole response: completed */
		if (e->conf.role == SURGE_CONN_CLIENT && !(c->flags & CF_DONE))
			count_fail(e, c, &e->st.failed_bad);   /* closed before the answer was whole */
		if (e->conf.role == SURGE_CONN_SERVER && c->owed > 0) {
			/* a request and the FIN together (a half-close): the
			 * answers go out first, then our FIN (server_acked) */
			c->state = CS_CLOSE_WAIT;
			seg_emit(e, c, TF_ACK, c->snd_nxt, NULL, 0);
			return 1;
		}
		send_fin(e, c, CS_LAST_ACK);       /* its ACK covers the peer's FIN */
		return 1;
	case CS_FIN_WAIT_1:
		seg_emit(e, c, TF_ACK, c->snd_nxt, NULL, 0);
		if (c->snd_una == c->snd_nxt)
			enter_time_wait(e, c);
		else
			c->state = CS_CLOSING;
		return 1;
	case CS_FIN_WAIT_2:
		seg_emit(e, c, TF_ACK, c->snd_nxt, NULL, 0);
		enter_time_wait(e, c);
		return 1;
	case CS_LAST_ACK:
		return 1;                          /* our FIN, sent since, acknowledged it */
	default:
		return 0;
	}
}

static int
rst_acceptable(const struct conn_engine *e, const struct conn *c, const struct seg *s)
{
	if (c->state == CS_SYN_SENT)
		return (s->flags & TF_ACK) && s->ack == c->snd_nxt;
	return !seq_lt(s->seq, c->rcv_nxt) && seq_lt(s->seq, c->rcv_nxt + e->conf.window);
}

/* A segment for a connection, in the steps of RFC 9293 section 3.10.7
 * (SEGMENT ARRIVES), one function each. Each returns 1 when the segment
 * ends there (dropped, answered, or the connection gone), 0 to go on. The
 * RST and SYN bits are looked at before the sequence number (the RFC's
 * first step): each has its own acceptability test (rst_acceptable, the
 * SYN's seq + 1 == rcv_nxt), and the segment without ACK is dropped before
 * it is trimmed, so neither is trimmed or answered as data would be. */

/* What the sequence step leaves of a segment for the text and FIN steps */
struct seg_text {
	const uint8_t *p;       /* its payload from rcv_nxt on */
	uint32_t n, seq;        /* its bytes, and the sequence number of p[0] */
	int need_ack, acked;    /* an ACK is owed; one left since (it carried it) */
};

/* 3.10.7.3: SYN-SENT, a client's SYN answered */
static void
step_syn_sent(struct conn_engine *e, struct conn *c, const struct seg *s)
{
	if ((s->flags & TF_ACK) && s->ack != c->snd_nxt) {
		e->st.rx_dropped++;
		seg_emit_reset(e, s);
		return;
	}
	if ((s->flags & (TF_SYN | TF_ACK)) != (TF_SYN | TF_ACK)) {
		e->st.rx_dropped++;
		return;
	}
	if (s->mss_opt && s->mss < e->mss && s->mss >= 64)
		e->mss = s->mss;
	c->rcv_nxt = s->seq + 1;
	c->snd_una = s->ack;
	c->peer_wnd = s->wnd;
	c->state = CS_ESTABLISHED;
	c->retries = 0;
	e->st.established++;
	timer_arm(e, c, CL_RTO, e->conf.rto_us);
	c->snd_nxt = c->snd_una;
	if (!conn_hook(e, c, SURGE_CONN_EV_ESTABLISHED, 0))
		client_next(e, c);      /* the request carries the handshake's ACK */
	if (c->state == CS_ESTABLISHED && c->snd_nxt == c->snd_una)
		seg_emit(e, c, TF_ACK, c->snd_nxt, NULL, 0);
}

/* 3.10.7.4, second: the RST bit (in the window: the connection fails) */
static int
step_rst(struct conn_engine *e, struct conn *c, const struct seg *s)
{
	if (!(s->flags & TF_RST))
		return 0;
	if (!rst_acceptable(e, c, s)) {
		e->st.rx_dropped++;
		return 1;
	}
	e->st.rst_rcvd++;
	count_fail(e, c, &e->st.failed_rst);
	finish(e, c);
	return 1;
}

/* 3.10.7.4, fourth: the SYN bit (a new connection on a TIME_WAIT 4-tuple,
 * our SYN-ACK lost, our ACK lost, or a stray SYN) */
static int
step_syn(struct conn_engine *e, struct conn *c, const struct seg *s)
{
	if (!(s->flags & TF_SYN))
		return 0;
	if (c->state == CS_TIME_WAIT && e->conf.role == SURGE_CONN_SERVER && seq_lt(c->rcv_nxt, s->seq)) {
		finish(e, c);           /* a new connection on the 4-tuple (RFC 9293 3.10.7.4) */
		fsm_listen(e, s);
		return 1;
	}
	if (c->state == CS_SYN_RCVD && s->seq + 1 == c->rcv_nxt && !(s->flags & TF_ACK)) {
		/* the peer did not get our SYN-ACK */
		seg_emit(e, c, TF_SYN | TF_ACK, c->snd_una, NULL, 0);
		e->st.retransmits++;
		return 1;
	}
	/* a repeated SYN-ACK (our ACK was lost) or a stray SYN: ACK it */
	if (!(s->flags & TF_ACK) || s->seq + 1 != c->rcv_nxt)
		e->st.rx_dropped++;
	seg_emit(e, c, TF_ACK, c->snd_nxt, NULL, 0);
	return 1;
}

/* 3.10.7.4, first: the sequence number. In order, or trimmed to rcv_nxt;
 * past it, wholly before it or more than the window offered: dropped, a
 * duplicate ACK. Fills t with what is left. */
static int
step_seq(struct conn_engine *e, struct conn *c, const struct seg *s, struct seg_text *t)
{
	t->p = s->payload;
	t->n = s->len;
	t->seq = s->seq;
	if (t->seq != c->rcv_nxt) {
		uint32_t skip = c->rcv_nxt - t->seq;

		if (!seq_lt(t->seq, c->rcv_nxt) || skip > t->n || (skip == t->n && !(s->flags & TF_FIN))) {
			if (t->n > 0 || (s->flags & TF_FIN) || t->seq != c->rcv_nxt - 1)
				e->st.rx_dropped++;     /* (a keep-alive probe at rcv_nxt - 1 is no fault) */
			seg_emit(e, c, TF_ACK, c->snd_nxt, NULL, 0);
			return 1;
		}
		t->p += skip;
		t->n -= skip;
		t->seq = c->rcv_nxt;
	}
	if (t->n > e->conf.window) {
		e->st.rx_dropped++;             /* more than the window we offered */
		seg_emit(e, c, TF_ACK, c->snd_nxt, NULL, 0);
		return 1;
	}
	return 0;
}

/* 3.10.7.4, fifth: the ACK field. What was never sent is not taken;
 * SYN-RECEIVED becomes ESTABLISHED; what it acknowledges leaves the stream
 * (a client's request, a server's answers); our FIN acknowledged moves the
 * close on (FIN_WAIT_2, TIME_WAIT, the end). */
static int
step_ack(struct conn_engine *e, struct conn *c, const struct seg *s)
{
	if (seq_lt(c->snd_nxt, s->ack)) {
		e->st.rx_dropped++;             /* acknowledges what was never sent */
		seg_emit(e, c, TF_ACK, c->snd_nxt, NULL, 0);
		return 1;
	}
	if (c->state == CS_SYN_RCVD) {
		if (s->ack != c->snd_nxt) {
			e->st.rx_dropped++;
			seg_emit_reset(e, s);
			return 1;
		}
		c->state = CS_ESTABLISHED;
		e->st.established++;
		conn_hook(e, c, SURGE_CONN_EV_ESTABLISHED, 0);
	}
	c->peer_wnd = s->wnd;
	if (seq_lt(c->snd_una, s->ack)) {
		c->snd_una = s->ack;
		c->retries = 0;
		if (e->conf.role == SURGE_CONN_CLIENT) {
			if (c->owed && seq_le(c->msg_seq + conn_msg_len(e, c), c->snd_una))
				c->owed = 0;    /* the request is all acknowledged */
		} else {
			server_acked(e, c);
		}
		timer_arm(e, c, CL_RTO, e->conf.rto_us);
	}
	switch (c->state) {
	case CS_FIN_WAIT_1:
		if (c->snd_una == c->snd_nxt)
			c->state = CS_FIN_WAIT_2;
		break;
	case CS_CLOSING:
		if (c->snd_una == c->snd_nxt) {
			enter_time_wait(e, c);
			return 1;
		}
		break;
	case CS_LAST_ACK:
		if (c->snd_una == c->snd_nxt) {
			finish(e, c);
			return 1;
		}
		break;
	default:
		break;
	}
	return 0;
}

/* 3.10.7.4, seventh: the segment text, taken where the peer may still send
 * (a client's response, a server's requests); then what the stream has
 * for the window */
static int
step_text(struct conn_engine *e, struct conn *c, const struct seg *s, struct seg_text *t)
{
	uint32_t n = t->n;

	if (n > 0 && (c->state == CS_ESTABLISHED || c->state == CS_FIN_WAIT_1 || c->state == CS_FIN_WAIT_2)) {
		c->rcv_nxt += n;
		e->st.bytes_rcvd += n;
		c->retries = 0;
		t->need_ack = 1;
		if (e->conf.role == SURGE_CONN_CLIENT) {
			uint8_t st = c->state;
			/* a FIN with the data (a server closing with its last
			 * response) is taken before the response is handled, so
			 * the segment that answers it (our FIN) acknowledges both:
			 * 3 segments each way a connection, as dperf's */
			int fin_with = (s->flags & TF_FIN) && !(c->flags & CF_FIN_RCVD);

			if (fin_with) {
				c->rcv_nxt++;
				c->flags |= CF_FIN_RCVD;
			}
			client_data(e, c, t->p, n);
			if (c->state == CS_FREE)
				return 1;       /* answered with an RST */
			if (fin_with) {
				if (!peer_fin(e, c))
					seg_emit(e, c, TF_ACK, c->snd_nxt, NULL, 0);
				return 1;
			}
			t->acked = c->state != st || c->snd_nxt != c->snd_una;
		} else {
			uint32_t took = server_data(e, c, t->p, n);

			if (c->state == CS_FREE)
				return 1;
			if (took < n) {
				/* the responses owed at their bound (owed_room): the
				 * rest is not taken (nor the FIN after it), the peer
				 * sends it again */
				c->rcv_nxt -= n - took;
				e->st.bytes_rcvd -= n - took;
				e->st.rx_dropped++;
			}
		}
	} else if (n > 0) {
		e->st.rx_dropped++;             /* data after the peer's FIN */
	}
	if ((c->state == CS_ESTABLISHED || c->state == CS_CLOSE_WAIT) && c->owed > 0)
		t->acked |= send_data(e, c, c->snd_nxt);
	return 0;
}

/* 3.10.7.4, eighth: the FIN bit, in order (after the text taken), or
 * again (our ACK of it was lost) */
static int
step_fin(struct conn_engine *e, struct conn *c, const struct seg *s, struct seg_text *t)
{
	if ((s->flags & TF_FIN) && t->seq + t->n == c->rcv_nxt && !(c->flags & CF_FIN_RCVD)) {
		c->rcv_nxt++;
		c->flags |= CF_FIN_RCVD;
		if (peer_fin(e, c))
			return 1;
	} else if ((s->flags & TF_FIN) && (c->flags & CF_FIN_RCVD)) {
		t->need_ack = 1;                /* the peer's FIN again: our ACK was lost */
		if (c->state == CS_TIME_WAIT)
			timer_arm(e, c, CL_TW, e->conf.time_wait_us);
	}
	return 0;
}

void
fsm_input(struct conn_engine *e, struct conn *c, const struct seg *s)
{
	struct seg_text t = { NULL, 0, 0, 0, 0 };

	if (step_rst(e, c, s))
		return;
	if (c->state == CS_SYN_SENT) {
		step_syn_sent(e, c, s);
		return;
	}
	if (step_syn(e, c, s))
		return;
	if (!(s->flags & TF_ACK)) {
		e->st.rx_dropped++;             /* the fifth step's first rule, before any trimming */
		return;
	}
	if (step_seq(e, c, s, &t) || step_ack(e, c, s) || step_text(e, c, s, &t) || step_fin(e, c, s, &t))
		return;
	if (t.need_ack && !t.acked)
		seg_emit(e, c, TF_ACK, c->snd_nxt, NULL, 0);
}

void
fsm_listen(struct conn_engine *e, const struct seg *s)
{
	struct conn *c;

	if (s->flags & TF_RST) {
		e->st.rx_dropped++;
		return;
	}
	if (e->conf.role != SURGE_CONN_SERVER || s->dport != e->conf.local_port ||
	    (s->flags & (TF_SYN | TF_ACK)) != TF_SYN) {
		/* no connection takes it: reset (RFC 9293 3.10.7.1) */
		e->st.rx_dropped++;
		seg_emit_reset(e, s);
		return;
	}
	c = conn_alloc(e, s->src_ip, s->src6, s->sport, s->addr);
	if (c == NULL) {
		e->st.refused++;                /* the table is full: dropped, as a full backlog does */
		return;
	}
	if ((e->conf.peer_mac[0] | e->conf.peer_mac[1] | e->conf.peer_mac[2] | e->conf.peer_mac[3] |
	     e->conf.peer_mac[4] | e->conf.peer_mac[5]) == 0)
		memcpy(e->conf.peer_mac, s->frame + 6, 6);
	if (s->mss_opt && s->mss < e->mss && s->mss >= 64)
		e->mss = s->mss;
	e->st.attempted++;
	c->state = CS_SYN_RCVD;
	c->rcv_nxt = s->seq + 1;
	c->snd_una = iss_for(e, s->src_ip ^ s->addr * 2246822519u, c->local_port, s->sport);  /* as fsm_open's */
	c->snd_nxt = c->snd_una + 1;
	c->msg_seq = c->snd_nxt;
	c->peer_wnd = s->wnd;
	c->t_open = e->now;
	seg_emit(e, c, TF_SYN | TF_ACK, c->snd_una, NULL, 0);
	timer_arm(e, c, CL_RTO, e->conf.rto_us);
}

int
fsm_open(struct conn_engine *e)
{
	struct conn *c = conn_alloc(e, e->conf.ip_version == 6 ? ip6_fold(e->conf.peer_ip6) : e->conf.peer_ip4,
				    NULL, e->conf.peer_port, 0);

	if (c == NULL)
		return -ENOSPC;
	e->st.attempted++;
	c->state = CS_SYN_SENT;
	/* the local address in the 4-tuple's value too (several per client) */
	c->snd_una = iss_for(e, c->peer_ip ^ conn_idx(e, c) / e->ports * 2246822519u, c->local_port, c->peer_port);
	c->snd_nxt = c->snd_una + 1;
	c->peer_wnd = 0;
	c->t_open = e->now;
	seg_emit(e, c, TF_SYN, c->snd_una, NULL, 0);
	timer_arm(e, c, CL_RTO, e->conf.rto_us);
	return 0;
}

void
fsm_timer(struct conn_engine *e, struct conn *c)
{
	uint32_t high = c->snd_nxt;

	if (c->list == CL_TW) {
		finish(e, c);
		return;
	}
	if (c->list == CL_THINK) {
		c->retries = 0;
		timer_arm(e, c, CL_RTO, e->conf.rto_us);
		client_next(e, c);
		return;
	}
	c->retries++;
	switch (c->state) {
	case CS_SYN_SENT:
	case CS_SYN_RCVD:
		if (c->retries > e->conf.retries) {
			count_fail(e, c, &e->st.failed_timeout);
			if (c->state == CS_SYN_RCVD)
				seg_emit(e, c, TF_RST | TF_ACK, c->snd_nxt, NULL, 0);
			finish(e, c);   /* a client's unanswered SYN: nothing to reset */
			return;
		}
		seg_emit(e, c, c->state == CS_SYN_SENT ? TF_SYN : TF_SYN | TF_ACK, c->snd_una, NULL, 0);
		e->st.retransmits++;
		break;
	default: {
		int fin_out = c->state == CS_FIN_WAIT_1 || c->state == CS_CLOSING || c->state == CS_LAST_ACK;
		int outstanding = c->snd_una != c->snd_nxt;

		if (outstanding ? c->retries > e->conf.retries : c->retries > e->idle_expiries) {
			/* the peer went quiet: after every answer (a close that
			 * never finished) nothing more is counted */
			abort_conn(e, c, &e->st.failed_timeout);
			return;
		}
		if (!outstanding)
			break;
		/* go back to snd_una: the data (from the templates), then the FIN */
		c->snd_nxt = c->snd_una;
		if (fin_out && c->snd_nxt == high - 1) {
			seg_emit(e, c, TF_FIN | TF_ACK, c->snd_nxt, NULL, 0);
			e->st.retransmits++;
			c->snd_nxt = high;
			break;
		}
		send_data(e, c, high);
		if (fin_out) {
			/* the FIN after the data; a window that took less sends
			 * the rest at the next timeout (go-back-N again) */
			if (c->snd_nxt == high - 1) {
				seg_emit(e, c, TF_FIN | TF_ACK, c->snd_nxt, NULL, 0);
				e->st.retransmits++;
			}
			c->snd_nxt = high;
		}
		break;
	}
	}
	timer_arm(e, c, CL_RTO, e->conf.rto_us);
}
