/* SPDX-License-Identifier: BSD-3-Clause
 *
 * conn_events.c - per-connection hooks (docs/connections.md, "Per-connection
 * hooks"). Lua's functions cannot run inside a poll (the poll is C's and
 * per burst), so a poll records its connections' events into a preallocated
 * array that Lua reads after it; a client's connection whose ESTABLISHED or
 * RESPONSE event is recorded is held (CF_HELD) where its course would go on,
 * and the next poll applies the action a hook wrote into the event (a
 * request template, a close) or, with none, the engine's own course. Two
 * arrays: the next poll records into one while it reads the actions from
 * the other.
 *
 * The bound (no event is lost): a received segment records at most three
 * events (ESTABLISHED; or RESPONSE, FAILED, CLOSED; a server's ESTABLISHED,
 * FAILED, CLOSED), an applied action at most one (CLOSED after an RST) and
 * actions come from at most one held event per segment of the last poll,
 * so a poll's receive and actions record at most 4 x SURGE_BURST_MAX; the
 * array holds 8 x that, and a due timer (two events at most) waits for the
 * next poll when fewer than two places are left.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"

#define EVENTS_CAP (8 * SURGE_BURST_MAX)

int
conn_event_put(struct conn_engine *e, struct conn *c, unsigned kind, unsigned reason)
{
	struct conn_hooks *hk = e->hk;
	struct surge_conn_hooks *pub = &hk->pub;
	struct surge_conn_event *ev;
	uint32_t i = conn_idx(e, c);

	if (!(pub->mask & (1u << kind)) || hk->stopped)
		return 0;
	if (pub->n >= pub->cap) {
		pub->lost++;            /* not reached: the bound above */
		return 0;
	}
	ev = &pub->ev[pub->cur][pub->n++];
	memset(ev, 0, sizeof(*ev));
	ev->conn = (int32_t)i;
	ev->kind = (uint8_t)kind;
	ev->tpl = c->tpl;
	ev->requests = (int32_t)c->requests;
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

/* A client's response, its first segment: the status line's code, kept
 * for its RESPONSE event ("HTTP/1.x NNN"; else 0) */
void
conn_event_status(struct conn_engine *e, const struct conn *c, const uint8_t *p, uint32_t n)
{
	uint16_t v = 0;

	if (e->hk->status == NULL)
		return;
	if (e->conf.expect == SURGE_CONN_EXPECT_HTTP && n >= 12 && memcmp(p, "HTTP/1.", 7) == 0 &&
	    p[9] >= '0' && p[9] <= '9' && p[10] >= '0' && p[10] <= '9' && p[11] >= '0' && p[11] <= '9')
		v = (uint16_t)((p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0'));
	e->hk->status[conn_idx(e, c)] = v;
}

/* The peer's FIN reached a held client connection: after a whole response
 * it completed (no hook's request can follow a close), before any request
 * (held at ESTABLISHED) it is the failure it always was. */
void
conn_event_peer_fin(struct conn_engine *e, struct conn *c)
{
	c->flags &= (uint8_t)~CF_HELD;
	if (c->requests > 0 && !(c->flags & (CF_DONE | CF_FAILED))) {
		c->flags |= CF_DONE;
		e->st.completed++;
	}
}

void
conn_events_apply(struct conn_engine *e)
{
	struct surge_conn_hooks *pub = &e->hk->pub;
	const struct surge_conn_event *held = pub->ev[pub->cur];
	uint32_t n = pub->n;

	pub->cur ^= 1;
	pub->n = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct surge_conn_event *ev = &held[i];
		struct conn *c = &e->tab[(uint32_t)ev->conn];

		/* held still: not closed since (an RST, a FIN), nor its entry reused */
		if ((ev->kind != SURGE_CONN_EV_ESTABLISHED && ev->kind != SURGE_CONN_EV_RESPONSE) ||
		    !(c->flags & CF_HELD) || c->state != CS_ESTABLISHED)
			continue;
		c->flags &= (uint8_t)~CF_HELD;
		switch (ev->action) {
		case SURGE_CONN_ACT_SEND:
			if (ev->tpl < pub->templates)
				c->tpl = ev->tpl;
			fsm_client_next(e, c, 1);
			break;
		case SURGE_CONN_ACT_FIN:
		case SURGE_CONN_ACT_RST:
			fsm_client_close(e, c, ev->action == SURGE_CONN_ACT_RST);
			break;
		default:
			/* the engine's own course, as client_data takes it */
			if (ev->kind == SURGE_CONN_EV_RESPONSE && e->conf.think_us > 0 &&
			    c->requests < e->conf.requests)
				timer_arm(e, c, CL_THINK, e->conf.think_us);
			else
				fsm_client_next(e, c, 0);
			break;
		}
	}
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
	free(hk->status);
	free(hk);
	e->hk = NULL;
}

int
surge_conn_hooks(int id, uint32_t kinds, const uint8_t *const *data, const uint32_t *len, uint32_t ntpl,
		 struct surge_conn_hooks **out)
{
	struct conn_engine *e = conn_engine_get(id);
	struct conn_hooks *hk;

	if (e == NULL)
		return rt_error(-EINVAL, "no connection engine %d", id);
	if (e->hk != NULL || e->sw_csum != 2)
		return rt_error(-EBUSY, "connection engine %d: hooks are set once, before its first poll", id);
	if (kinds == 0 || kinds >= 1u << SURGE_CONN_EV_KINDS)
		return rt_error(-EINVAL, "connection engine %d: event kinds 0x%x", id, kinds);
	if (ntpl + 1 > SURGE_CONN_TEMPLATES_MAX || (ntpl > 0 && e->conf.role != SURGE_CONN_CLIENT))
		return rt_error(-EINVAL, "connection engine %d: %u templates (a client's, at most %d)", id, ntpl,
				SURGE_CONN_TEMPLATES_MAX - 1);
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
