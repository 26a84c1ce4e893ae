/* SPDX-License-Identifier: BSD-3-Clause
 *
 * conn_hooks.c - per-connection hooks, the applier (docs/connections.md,
 * "Per-connection hooks"): at the start of a poll, the actions Lua's hooks
 * wrote into the last poll's events (conn_events.c recorded them) are
 * applied through the state machine: a held client connection's next
 * request, its close, or the engine's own course; a server's answer to a
 * request. Above conn_fsm.c in the engine's ladder, below conn_poll.c.
 */
#include "conn.h"

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

		if (ev->kind == SURGE_CONN_EV_REQUEST) {
			fsm_server_answer(e, c, (uint16_t)ev->requests, ev->action,
					  ev->tpl < pub->templates ? ev->tpl : 0);
			continue;
		}
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

