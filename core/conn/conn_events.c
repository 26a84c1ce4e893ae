/* SPDX-License-Identifier: BSD-3-Clause
 *
 * conn_events.c - per-connection hooks, the recorder (docs/connections.md,
 * "Per-connection hooks"): the hooks' state (made by surge_conn_hooks), and
 * the events a poll records for Lua. Lua's functions cannot run inside a
 * poll (the poll is C's and per burst), so a poll records its connections'
 * events into a preallocated array that Lua reads after it; a client's
 * connection whose ESTABLISHED or RESPONSE event is recorded is held
 * (CF_HELD) where its course would go on, and the next poll applies the
 * action a hook wrote into the event (conn_hooks.c). Two arrays: the next
 * poll records into one while it reads the actions from the other. This
 * file calls no other of the engine's but conn_http.c: the state machine,
 * the table and the applier record through it.
 *
 * A server's on_request is the same mechanism: a request received whole
 * records a REQUEST event and its response waits (CH_PENDING in the
 * connection's queue of choices, hk->choice) for the action the next poll
 * applies; responses go out in their requests' order, each its own
 * template; at most SURGE_CONN_PIPELINE requests a connection wait for
 * their answers (a request past them is not taken: the peer sends it again).
 *
 * The bound (no event is lost): a received segment records at most three
 * events (ESTABLISHED; or RESPONSE, FAILED, CLOSED) and a server's at most
 * ESTABLISHED, SURGE_CONN_PIPELINE REQUESTs, FAILED, CLOSED (7); an applied
 * action records at most one (CLOSED after an RST), and actions come from
 * at most SURGE_CONN_PIPELINE held events per segment of the last poll, so
 * a poll's receive and actions record at most 11 x SURGE_BURST_MAX; the
 * array holds 16 x that, and a due timer (two events at most) waits for
 * the next poll when fewer than two places are left.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "conn_http.h"

#define EVENTS_CAP (16 * SURGE_BURST_MAX)
_Static_assert(3 + 2 * SURGE_CONN_PIPELINE + 1 <= 16, "the events' bound (above)");

/* A new event of c, or NULL when its kind is not hooked or the run ended */
static struct surge_conn_event *
event_new(struct conn_engine *e, const struct conn *c, unsigned kind)
{
	struct conn_hooks *hk = e->hk;
	struct surge_conn_hooks *pub = &hk->pub;
	struct surge_conn_event *ev;

	if (!(pub->mask & (1u << kind)) || hk->stopped)
		return NULL;
	if (pub->n >= pub->cap) {
		pub->lost++;            /* not reached: the bound above */
		return NULL;
	}
	ev = &pub->ev[pub->cur][pub->n++];
	memset(ev, 0, sizeof(*ev));
	ev->conn = (int32_t)conn_idx(e, c);
	ev->kind = (uint8_t)kind;
	ev->tpl = c->tpl;
	ev->requests = (int32_t)c->requests;
	return ev;
}

int
conn_event_put(struct conn_engine *e, struct conn *c, unsigned kind, unsigned reason)
{
	struct conn_hooks *hk = e->hk;
	struct surge_conn_event *ev = event_new(e, c, kind);
	uint32_t i = conn_idx(e, c);

	if (ev == NULL)
		return 0;
	switch (kind) {
	case SURGE_CONN_EV_ESTABLISHED:
		ev->time_us = (int32_t)(e->now - c->t_open);
		break;
	case SURGE_CONN_EV_RESPONSE:
		ev->status = hk->status != NULL ? (int32_t)hk->status[i] : 0;
		ev->bytes = (int32_t)c->rx_bytes;
		ev->time_us = (int32_t)(e->now - c->t_req);
		break;
	case SURGE_CONN_EV_CLOSED:
		reason = (c->flags & CF_FAILED) ? SURGE_CONN_END_FAILED
			 : (c->flags & CF_DONE) ? SURGE_CONN_END_COMPLETED : SURGE_CONN_END_OTHER;
		break;
	default:
		break;
	}
	ev->reason = (uint8_t)reason;
	if (e->conf.role == SURGE_CONN_CLIENT &&
	    (kind == SURGE_CONN_EV_ESTABLISHED || kind == SURGE_CONN_EV_RESPONSE)) {
		c->flags |= CF_HELD;
		return 1;
	}
	return 0;
}

static inline uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* the first bytes kept of the request c is receiving (conn_hooks rq_head) */
static uint8_t *
rq_head(const struct conn_engine *e, const struct conn *c)
{
	return e->hk->rq_head + (size_t)conn_idx(e, c) * SURGE_CONN_HEAD;
}

void
conn_event_request_part(struct conn_engine *e, const struct conn *c, uint32_t prior, const uint8_t *q,
			uint32_t len)
{
	if (prior < SURGE_CONN_HEAD)
		memcpy(rq_head(e, c) + prior, q, min_u32(len, SURGE_CONN_HEAD - prior));
}

void
conn_event_request(struct conn_engine *e, struct conn *c, uint16_t reqno, uint32_t bytes, uint32_t prior,
		   const uint8_t *q, uint32_t len)
{
	struct conn_hooks *hk = e->hk;
	uint8_t *choice = conn_choice(e, c, reqno);
	struct surge_conn_event *ev = event_new(e, c, SURGE_CONN_EV_REQUEST);
	uint8_t *head;

	if (ev == NULL) {
		*choice = 0;            /* no hook will answer it (the run's end): the response */
		return;
	}
	*choice = CH_PENDING;
	ev->requests = reqno;
	ev->bytes = (int32_t)min_u32(bytes, INT32_MAX);
	head = hk->pub.head[hk->pub.cur] + (size_t)(hk->pub.n - 1) * SURGE_CONN_HEAD;
	/* its first bytes: those of earlier segments kept, then this one's */
	prior = min_u32(prior, SURGE_CONN_HEAD);
	memcpy(head, rq_head(e, c), prior);
	memcpy(head + prior, q, min_u32(len, SURGE_CONN_HEAD - prior));
	ev->head_len = (uint8_t)min_u32(bytes, SURGE_CONN_HEAD);
	/* the path, found here (C, per request) so the hook's c:path() is
	 * one string lookup: the word after the first space */
	uint32_t off, plen;

	http_path(head, ev->head_len, &off, &plen);
	ev->path_off = (uint8_t)off;
	ev->path_len = (uint8_t)plen;
}

/* A client's response, its first segment: the status line's code, kept
 * for its RESPONSE event (conn_http.c http_status; 0 when not valid) */
void
conn_event_status(struct conn_engine *e, const struct conn *c, const uint8_t *p, uint32_t n)
{
	int v = 0;

	if (e->hk->status == NULL)
		return;
	if (e->conf.expect == SURGE_CONN_EXPECT_HTTP && (v = http_status(p, n)) < 0)
		v = 0;
	e->hk->status[conn_idx(e, c)] = (uint16_t)v;
}

void
conn_events_free(struct conn_engine *e)
{
	struct conn_hooks *hk = e->hk;

	if (hk == NULL)
		return;
	for (uint32_t i = 1; i < SURGE_CONN_TEMPLATES_MAX; i++)
		free(hk->tpl_data[i]);
	free(hk->pub.ev[0]);
	free(hk->pub.ev[1]);
	free(hk->pub.head[0]);
	free(hk->pub.head[1]);
	free(hk->choice);
	free(hk->rq_head);
	free(hk->status);
	free(hk);
	e->hk = NULL;
}

/* surge_conn_hooks (conn_poll.c) on engine e, number id: the hooks' state,
 * checked and allocated, or -errno with the error set */
int
conn_events_init(struct conn_engine *e, int id, uint32_t kinds, const uint8_t *const *data, const uint32_t *len,
		 uint32_t ntpl, struct surge_conn_hooks **out)
{
	struct conn_hooks *hk;

	if (e->hk != NULL || e->sw_csum != 2)
		return rt_error(-EBUSY, "connection engine %d: hooks are set once, before its first poll", id);
	if (kinds == 0 || kinds >= 1u << SURGE_CONN_EV_KINDS)
		return rt_error(-EINVAL, "connection engine %d: event kinds 0x%x", id, kinds);
	if (ntpl + 1 > SURGE_CONN_TEMPLATES_MAX ||
	    (ntpl > 0 && e->conf.role == SURGE_CONN_SERVER && !(kinds & 1u << SURGE_CONN_EV_REQUEST)))
		return rt_error(-EINVAL, "connection engine %d: %u templates (at most %d; a server's with REQUEST)",
				id, ntpl, SURGE_CONN_TEMPLATES_MAX - 1);
	hk = calloc(1, sizeof(*hk));
	if (hk == NULL)
		return rt_error(-ENOMEM, "out of memory for a connection engine's hooks");
	e->hk = hk;
	hk->pub.cap = EVENTS_CAP;
	hk->pub.mask = kinds;
	hk->pub.templates = ntpl + 1;
	hk->pub.ev[0] = calloc(EVENTS_CAP, sizeof(struct surge_conn_event));
	hk->pub.ev[1] = calloc(EVENTS_CAP, sizeof(struct surge_conn_event));
	if (e->conf.role == SURGE_CONN_CLIENT && (kinds & 1u << SURGE_CONN_EV_RESPONSE))
		hk->status = calloc(e->conf.capacity, sizeof(uint16_t));
	int bad = hk->pub.ev[0] == NULL || hk->pub.ev[1] == NULL ||
		  (e->conf.role == SURGE_CONN_CLIENT && (kinds & 1u << SURGE_CONN_EV_RESPONSE) && hk->status == NULL);

	if (!bad && e->conf.role == SURGE_CONN_SERVER && (kinds & 1u << SURGE_CONN_EV_REQUEST)) {
		/* a server's on_request: each connection's queue of choices and
		 * the first bytes of its request, each event's copy of those */
		hk->choice = calloc(e->conf.capacity, SURGE_CONN_PIPELINE);
		hk->rq_head = calloc(e->conf.capacity, SURGE_CONN_HEAD);
		hk->pub.head[0] = calloc(EVENTS_CAP, SURGE_CONN_HEAD);
		hk->pub.head[1] = calloc(EVENTS_CAP, SURGE_CONN_HEAD);
		bad = hk->choice == NULL || hk->rq_head == NULL || hk->pub.head[0] == NULL || hk->pub.head[1] == NULL;
	}

	hk->tpl_data[0] = e->data;
	hk->tpl_len[0] = e->data_len;
	for (uint32_t i = 0; i < ntpl && !bad; i++) {
		if (data[i] == NULL || len[i] == 0 || len[i] > SURGE_CONN_DATA_MAX) {
			conn_events_free(e);
			return rt_error(-EINVAL, "connection engine %d: template %u is %u bytes: 1..%d", id, i + 1,
					len[i], SURGE_CONN_DATA_MAX);
		}
		hk->tpl_data[i + 1] = malloc(len[i]);
		bad = hk->tpl_data[i + 1] == NULL;
		if (!bad) {
			memcpy(hk->tpl_data[i + 1], data[i], len[i]);
			hk->tpl_len[i + 1] = len[i];
		}
	}
	if (bad) {
		conn_events_free(e);
		return rt_error(-ENOMEM, "out of memory for a connection engine's hooks");
	}
	*out = &hk->pub;
	return 0;
}
