/* SPDX-License-Identifier: BSD-3-Clause
 *
 * series.c - the run's time series, for the results file.
 *
 * At every stats-line tick (and once more at the end of the run) the main
 * lcore appends one row of cumulative counters per opened port, queue, task
 * lcore and custom counter. Lua (lua/surge/results.lua) turns consecutive
 * rows into interval rates and writes JSON or CSV; keeping the rows
 * cumulative means the series always adds up to the final totals.
 * Sampling goes on with --quiet or --stats-interval 0 (then once a second),
 * so a results file never depends on what was printed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "report.h"

static struct surge_sample *
next_row(struct series *s)
{
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 256;
		struct surge_sample *rows = realloc(s->rows, cap * sizeof(*rows));

		if (rows == NULL)
			return NULL;
		s->rows = rows;
		s->cap = cap;
	}
	memset(&s->rows[s->n], 0, sizeof(s->rows[0]));
	return &s->rows[s->n++];
}

static int
add(struct series *s, double t, uint8_t kind, uint16_t port, uint16_t id,
    const struct surge_sample *v)
{
	struct surge_sample *row = next_row(s);

	if (row == NULL)
		return -ENOMEM;
	*row = *v;
	row->t = t;
	row->kind = kind;
	row->port = port;
	row->id = id;
	row->tick = s->ticks;
	return 0;
}

static int
record_ports(struct series *s, double t)
{
	uint16_t port;
	int rc = 0;

	RTE_ETH_FOREACH_DEV(port) {
		struct port_state *ps = &rt()->port[port];
		struct queue_totals qt;
		struct surge_sample tot;

		if (!ps->opened)
			continue;
		for (uint16_t q = 0; q < ps->conf.txq; q++) {
			const struct surge_queue_stats *st = &ps->txq[q].st;
			struct surge_sample v = { .tx_packets = st->packets, .tx_bytes = st->bytes,
						  .drops = st->drops, .unsent = st->unsent };

			rc |= add(s, t, SURGE_SAMPLE_TXQ, port, q, &v);
		}
		for (uint16_t q = 0; q < ps->conf.rxq; q++) {
			const struct surge_queue_stats *st = &ps->rxq[q].st;
			struct surge_sample v = { .rx_packets = st->packets, .rx_bytes = st->bytes };

			rc |= add(s, t, SURGE_SAMPLE_RXQ, port, q, &v);
		}
		queue_totals(port, &qt);
		tot = (struct surge_sample){ .tx_packets = qt.tx_packets, .tx_bytes = qt.tx_bytes,
					     .rx_packets = qt.rx_packets, .rx_bytes = qt.rx_bytes,
					     .drops = qt.drops, .unsent = qt.unsent };
		rc |= add(s, t, SURGE_SAMPLE_PORT, port, 0, &tot);
	}
	return rc;
}

static int
record_rest(struct series *s, double t)
{
	unsigned id;
	int rc = 0;

	RTE_LCORE_FOREACH_WORKER(id) {
		struct surge_lcore_stats ls;
		struct surge_sample v = { 0 };

		if (surge_lcore_stats((int)id, &ls) != 0 || ls.busy_cycles + ls.idle_cycles == 0)
			continue;
		v.busy_cycles = ls.busy_cycles;
		v.idle_cycles = ls.idle_cycles;
		rc |= add(s, t, SURGE_SAMPLE_LCORE, 0, (uint16_t)id, &v);
	}
	for (int c = 0; c < surge_counter_count(); c++) {
		struct surge_counter_info ci;
		struct surge_sample v = { 0 };

		if (surge_counter_get(c, &ci) != 0)
			continue;
		v.value = ci.value;
		v.flags = ci.flags;
		v.tx_packets = ci.total;
		rc |= add(s, t, SURGE_SAMPLE_COUNTER, 0, (uint16_t)c, &v);
	}
	return rc;
}

void
series_tick(uint64_t now, int force)
{
	struct runtime *r = rt();
	struct series *s = &r->series;
	double every = r->opts.stats_interval > 0 ? r->opts.stats_interval : 1.0;
	uint64_t hz = rt_hz();
	double t;

	if (r->start_tsc == 0 && !force)
		return;
	if (s->last_tsc == 0)
		s->last_tsc = r->start_tsc;
	if (!force && (double)(now - s->last_tsc) < every * (double)hz)
		return;
	/* a run's end is its last row: later calls add nothing new */
	if (r->end_tsc != 0 && s->n > 0 && s->rows[s->n - 1].t >= (double)(r->end_tsc - r->start_tsc) / hz)
		return;
	if (r->end_tsc != 0 && now > r->end_tsc)
		now = r->end_tsc;
	t = r->start_tsc != 0 && now > r->start_tsc ? (double)(now - r->start_tsc) / (double)hz : 0.0;
	if (record_ports(s, t) != 0 || record_rest(s, t) != 0)
		rt_info("out of memory for the results series: rows from %.1f s are missing", t);
	s->ticks++;
	s->last_tsc = now;
}

/* The monitor thread samples (stats_tick) while master records and reads:
 * each under the stats lock, so a row is never read while rows move. */
int
surge_series_record(void)
{
	struct runtime *r = rt();

	if (!surge_is_main())
		return rt_error(-EPERM, "the series is sampled by master only");
	pthread_mutex_lock(&r->stats_lock);
	series_tick(rte_rdtsc(), 1);
	pthread_mutex_unlock(&r->stats_lock);
	return 0;
}

void
series_record_now(void)
{
	(void)surge_series_record();
}

uint32_t
surge_series_count(void)
{
	struct runtime *r = rt();
	uint32_t n;

	pthread_mutex_lock(&r->stats_lock);
	n = r->series.n;
	pthread_mutex_unlock(&r->stats_lock);
	return n;
}

int
surge_series_get(uint32_t i, struct surge_sample *out)
{
	struct runtime *r = rt();
	int rc = 0;

	pthread_mutex_lock(&r->stats_lock);
	if (i >= r->series.n)
		rc = rt_error(-EINVAL, "no series row %u", i);
	else
		*out = r->series.rows[i];
	pthread_mutex_unlock(&r->stats_lock);
	return rc;
}
