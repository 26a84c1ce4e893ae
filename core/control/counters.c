/* SPDX-License-Identifier: BSD-3-Clause
 *
 * counters.c - custom counters and gauges of scripts (surge.counter/gauge).
 *
 * A name is registered once, under the runtime's lock, and gets an id that
 * every lcore shares. Each lcore then writes only its own cell of that id in
 * its own cache-aligned counter_slot, so the hot path is a plain load and
 * store with no atomic and no shared cache line; the main lcore (and the
 * telemetry thread) sum the cells when they read.
 */
#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <string.h>

#include <rte_lcore.h>

#include "control.h"

void
counter_tel_key(const char *name, char *key, size_t len)
{
	size_t i = 0;

	for (; name[i] != '\0' && i + 1 < len; i++) {
		unsigned char c = (unsigned char)name[i];

		key[i] = (char)((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ? c : '_');
	}
	if (len > 0)
		key[i] = '\0';
}

void
counter_metric_name(const char *name, int kind, char *out, size_t len)
{
	char key[SURGE_NAME_MAX];

	counter_tel_key(name, key, sizeof(key));
	snprintf(out, len, "surge_script_%s%s", key, kind == SURGE_COUNTER ? "_total" : "");
}

int
surge_counter_new(const char *name, int kind)
{
	struct runtime *r = rt();
	int id = -1, n, clash = -1, mclash = -1;
	char key[SURGE_NAME_MAX], other[SURGE_NAME_MAX];
	char metric[SURGE_NAME_MAX + 32], mother[SURGE_NAME_MAX + 32];

	if (name == NULL || name[0] == '\0' || strlen(name) >= SURGE_NAME_MAX)
		return rt_error(-EINVAL, "counter name must be 1..%d characters", SURGE_NAME_MAX - 1);
	if (kind != SURGE_COUNTER && kind != SURGE_GAUGE)
		return rt_error(-EINVAL, "counter kind %d unknown", kind);
	counter_tel_key(name, key, sizeof(key));
	counter_metric_name(name, kind, metric, sizeof(metric));
	registry_lock();
	n = r->ncounters;
	for (int i = 0; i < n; i++) {
		if (strcmp(r->counter_names[i].name, name) == 0)
			id = i;
		counter_tel_key(r->counter_names[i].name, other, sizeof(other));
		if (strcmp(other, key) == 0)
			clash = i;
		/* counter "a" is surge_script_a_total, so is gauge "a_total": two
		 * samples of one name would void every scrape */
		counter_metric_name(r->counter_names[i].name, r->counter_names[i].kind, mother, sizeof(mother));
		if (strcmp(mother, metric) == 0)
			mclash = i;
	}
	if (id < 0 && clash >= 0) {
		registry_unlock();
		return rt_error(-EEXIST, "'%s' would read as '%s' on the telemetry socket, as '%s' does "
				"(only letters, digits and _ stay)", name, key, r->counter_names[clash].name);
	}
	if (id < 0 && mclash >= 0) {
		registry_unlock();
		return rt_error(-EEXIST, "'%s' would read as %s on the metrics endpoint, as %s '%s' does",
				name, metric, r->counter_names[mclash].kind == SURGE_GAUGE ? "gauge" : "counter",
				r->counter_names[mclash].name);
	}
	if (id < 0 && n < SURGE_COUNTER_MAX) {
		snprintf(r->counter_names[n].name, SURGE_NAME_MAX, "%s", name);
		r->counter_names[n].kind = (uint8_t)kind;
		registry_publish(&r->ncounters, n + 1);
		id = n;
	}
	registry_unlock();
	if (id < 0)
		return rt_error(-ENOSPC, "too many counters and gauges (at most %d)", SURGE_COUNTER_MAX);
	if (r->counter_names[id].kind != kind)
		return rt_error(-EEXIST, "'%s' is already a %s", name,
				r->counter_names[id].kind == SURGE_GAUGE ? "gauge" : "counter");
	return id;
}

static struct counter_slot *
my_cells(int id, int kind)
{
	struct runtime *r = rt();
	struct counter_slot *s;

	if (!registry_holds(registry_count(&r->ncounters), id) ||
	    r->counter_names[id].kind != kind) {
		rt_error(-EINVAL, "no %s %d", kind == SURGE_GAUGE ? "gauge" : "counter", id);
		return NULL;
	}
	s = &r->counters[lcore_self()];
	s->used[id / 64] |= 1ULL << (id % 64);     /* only this lcore writes its own mask */
	return s;
}

uint64_t *
surge_counter_cell(int id)
{
	struct counter_slot *s = my_cells(id, SURGE_COUNTER);

	return s != NULL ? &s->count[id] : NULL;
}

double *
surge_gauge_cell(int id)
{
	struct counter_slot *s = my_cells(id, SURGE_GAUGE);

	return s != NULL ? &s->gauge[id] : NULL;
}

int
surge_counter_count(void)
{
	return registry_count(&rt()->ncounters);
}

int
surge_counter_get(int id, struct surge_counter_info *out)
{
	struct runtime *r = rt();
	long double sum = 0;
	uint64_t cell;

	if (id < 0 || id >= surge_counter_count())
		return rt_error(-EINVAL, "no counter %d", id);
	memset(out, 0, sizeof(*out));
	memcpy(out->name, r->counter_names[id].name, SURGE_NAME_MAX);
	out->kind = r->counter_names[id].kind;
	for (unsigned lc = 0; lc < RTE_MAX_LCORE; lc++) {
		const struct counter_slot *s = &r->counters[lc];

		if (!(__atomic_load_n(&s->used[id / 64], __ATOMIC_RELAXED) & (1ULL << (id % 64))))
			continue;
		out->lcores++;
		/* a sum past 2^64 (or a cell counter:add saturated) stays at
		 * UINT64_MAX, flagged, instead of wrapping to a small number */
		cell = __atomic_load_n(&s->count[id], __ATOMIC_RELAXED);
		if (cell == UINT64_MAX || __builtin_add_overflow(out->total, cell, &out->total)) {
			out->total = UINT64_MAX;
			if (out->kind == SURGE_COUNTER)
				out->flags |= SURGE_COUNTER_SATURATED;
		}
		sum += s->gauge[id];
	}
	/* Each cell is a finite double (gauge:set refuses NaN and infinities),
	 * but their sum may not be: summed in a long double (x87: 15-bit
	 * exponent, so RTE_MAX_LCORE cells of DBL_MAX cannot overflow it), then
	 * clamped to a finite double with a flag, so a reader (results file,
	 * telemetry, stats line) never sees inf, which JSON cannot hold. */
	if (sum > DBL_MAX || sum < -DBL_MAX) {
		out->value = sum > 0 ? DBL_MAX : -DBL_MAX;
		out->flags |= SURGE_COUNTER_SATURATED;
	} else {
		out->value = (double)sum;
	}
	if (out->kind == SURGE_COUNTER)
		out->value = (double)out->total;
	return 0;
}
