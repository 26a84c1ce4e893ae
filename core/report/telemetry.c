/* SPDX-License-Identifier: BSD-3-Clause
 *
 * telemetry.c - /surge/... commands on DPDK's telemetry socket.
 *
 * Every DPDK process serves /var/run/dpdk/PREFIX/dpdk_telemetry.v2; surge
 * gives each run its own PREFIX (run/eal.c) and adds its own commands there, so
 * `dpdk-telemetry.py -f PREFIX` and any collector that speaks DPDK telemetry
 * read a running surge with no new protocol. The callbacks run on DPDK's
 * telemetry thread and only read: the same per-lcore and per-queue slots the
 * stats line and the results series read (one writer each, 64-bit loads).
 *
 * Counter names map to keys DPDK accepts (control.h counter_tel_key).
 *
 * DPDK 22.11 nests only arrays in a dict, so replies are flat dicts with
 * keys like tx0_packets; rates are integers (pps, bit/s, ns), percentages
 * integers, gauges strings ("%g").
 *
 * DPDK 22.11 cannot unregister a command, and its telemetry threads live
 * until the process exits: a client may ask while the run tears down
 * (ports closed, latency receivers and pools freed, EAL cleaned up, the run
 * context freed). So every command runs behind one gate that outlives the
 * run context: a static mutex and an open flag. telemetry_close() (the first
 * step of the tear-down) shuts it while holding the mutex, so it waits for a
 * command in progress; after it every command answers -EINVAL and reads
 * nothing of the run.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_telemetry.h>

#include "report.h"

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static int gate_open;          /* under gate: the run's state may be read */

static void
put(struct rte_tel_data *d, const char *prefix, int idx, const char *name, uint64_t v)
{
	char key[64];

	snprintf(key, sizeof(key), "%s%d_%s", prefix, idx, name);
	rte_tel_data_add_dict_u64(d, key, v);
}

static int
param_int(const char *params, int max)
{
	char *end;
	long v;

	if (params == NULL || *params == '\0')
		return -1;
	/* decimal digits only: strtol alone took " 0", "+0" and "-0" as 0 */
	if (*params < '0' || *params > '9')
		return -2;
	v = strtol(params, &end, 10);
	return *end == '\0' && v >= 0 && v < max ? (int)v : -2;
}

static int
cmd_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct runtime *r = rt();
	uint64_t now = rte_rdtsc();

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "version", surge_version());
	rte_tel_data_add_dict_u64(d, "pid", (uint64_t)getpid());
	rte_tel_data_add_dict_u64(d, "tsc_hz", rt_hz());
	rte_tel_data_add_dict_u64(d, "running", (uint64_t)surge_running());
	rte_tel_data_add_dict_u64(d, "tasks", (uint64_t)surge_task_count());
	rte_tel_data_add_dict_u64(d, "elapsed_ms", r->start_tsc ?
				  (now - r->start_tsc) * 1000 / rt_hz() : 0);
	rte_tel_data_add_dict_u64(d, "ports", (uint64_t)rte_eth_dev_count_avail());
	rte_tel_data_add_dict_u64(d, "latency_receivers", (uint64_t)surge_latency_count());
	rte_tel_data_add_dict_u64(d, "counters", (uint64_t)surge_counter_count());
	return 0;
}

/* Every worker lcore that ran a task: its function, state and idle share. */
static int
cmd_tasks(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *states[] = { "idle", "running", "done", "failed" };
	struct runtime *r = rt();
	unsigned id;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	RTE_LCORE_FOREACH_WORKER(id) {
		struct surge_lcore_stats ls;
		uint64_t total;
		char key[64], fn[SURGE_NAME_MAX];
		int st = __atomic_load_n(&r->lcore[id].state, __ATOMIC_ACQUIRE);

		if (surge_lcore_stats((int)id, &ls) != 0 || (ls.busy_cycles + ls.idle_cycles == 0 && st == 0))
			continue;
		total = ls.busy_cycles + ls.idle_cycles;
		snprintf(key, sizeof(key), "lcore%u_fn", id);
		/* DPDK's JSON writer mangles a byte above 0x7f (an answer no
		 * JSON reader takes): a task's name in ASCII, '?' for the rest */
		report_text(fn, sizeof(fn), r->lcore[id].fn, sizeof(r->lcore[id].fn), TEXT_ASCII);
		rte_tel_data_add_dict_string(d, key, fn);
		snprintf(key, sizeof(key), "lcore%u_state", id);
		rte_tel_data_add_dict_string(d, key, states[st & 3]);
		put(d, "lcore", (int)id, "busy_cycles", ls.busy_cycles);
		put(d, "lcore", (int)id, "idle_cycles", ls.idle_cycles);
		put(d, "lcore", (int)id, "idle_pct", total ? ls.idle_cycles * 100 / total : 0);
	}
	return 0;
}

/* /surge/queues,PORT: surge's own counters of each queue and the pacer's
 * target and achieved rate. */
static int
cmd_queues(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int port = param_int(params, RTE_MAX_ETHPORTS);
	struct port_state *ps;

	(void)cmd;
	/* queue slots go when the ports close, after the stop: a stopped run
	 * answers no more queue reads; port:close() frees them under the stats
	 * lock, held here while they are read */
	if (port < 0 || !surge_running())
		return -EINVAL;
	pthread_mutex_lock(&rt()->stats_lock);
	if (!rt()->port[port].opened) {
		pthread_mutex_unlock(&rt()->stats_lock);
		return -EINVAL;
	}
	ps = &rt()->port[port];
	rte_tel_data_start_dict(d);
	for (int q = 0; q < ps->conf.txq; q++) {
		const struct surge_queue_stats *st = &ps->txq[q].st;
		struct surge_rate_stats rs;

		put(d, "tx", q, "packets", st->packets);
		put(d, "tx", q, "bytes", st->bytes);
		put(d, "tx", q, "drops", st->drops);
		{
			char key[32];

			snprintf(key, sizeof(key), "tx%d_lcore", q);
			rte_tel_data_add_dict_int(d, key, st->lcore);
		}
		if (surge_txq_rate_stats((uint16_t)port, (uint16_t)q, &rs) == 0) {
			put(d, "tx", q, "target_pps", (uint64_t)rs.target_pps);
			put(d, "tx", q, "achieved_pps", (uint64_t)rs.pps);
			put(d, "tx", q, "achieved_l1_bps", (uint64_t)rs.l1_bps);
		}
	}
	for (int q = 0; q < ps->conf.rxq; q++) {
		put(d, "rx", q, "packets", ps->rxq[q].st.packets);
		put(d, "rx", q, "bytes", ps->rxq[q].st.bytes);
	}
	pthread_mutex_unlock(&rt()->stats_lock);
	return 0;
}

/* /surge/latency: the receivers' ids; /surge/latency,ID: one summary. */
static int
cmd_latency(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int id = param_int(params, SURGE_LATENCY_MAX);
	struct surge_latency l;

	(void)cmd;
	if (id == -1) {
		rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
		for (int i = 0; i < surge_latency_count(); i++)
			rte_tel_data_add_array_int(d, i);
		return 0;
	}
	if (id < 0 || surge_latency_get(id, &l) != 0)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "probes", l.probes);
	rte_tel_data_add_dict_u64(d, "lost", l.lost);
	rte_tel_data_add_dict_u64(d, "duplicated", l.duplicated);
	rte_tel_data_add_dict_u64(d, "reordered", l.reordered);
	rte_tel_data_add_dict_u64(d, "min_ns", (uint64_t)l.min_ns);
	rte_tel_data_add_dict_u64(d, "mean_ns", (uint64_t)l.mean_ns);
	rte_tel_data_add_dict_u64(d, "p50_ns", (uint64_t)l.p50_ns);
	rte_tel_data_add_dict_u64(d, "p99_ns", (uint64_t)l.p99_ns);
	rte_tel_data_add_dict_u64(d, "p999_ns", (uint64_t)l.p999_ns);
	rte_tel_data_add_dict_u64(d, "max_ns", (uint64_t)l.max_ns);
	return 0;
}

static int
cmd_counters(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (int i = 0; i < surge_counter_count(); i++) {
		struct surge_counter_info ci;
		char v[32], key[SURGE_NAME_MAX];

		if (surge_counter_get(i, &ci) != 0)
			continue;
		/* DPDK refuses (drops) a key with '-' or '.': the mapped key,
		 * unique since surge_counter_new refuses clashes */
		counter_tel_key(ci.name, key, sizeof(key));
		if (ci.kind == SURGE_COUNTER) {
			rte_tel_data_add_dict_u64(d, key, ci.total);
		} else {
			snprintf(v, sizeof(v), "%g", ci.value);
			rte_tel_data_add_dict_string(d, key, v);
		}
	}
	return 0;
}

/* Each command behind the gate (telemetry_cb has no user data: one
 * wrapper per command). */
#define GATED(fn) \
	static int \
	gated_##fn(const char *cmd, const char *params, struct rte_tel_data *d) \
	{ \
		int rc = -EINVAL; \
		pthread_mutex_lock(&gate); \
		if (gate_open && rt_current != NULL) \
			rc = fn(cmd, params, d); \
		pthread_mutex_unlock(&gate); \
		return rc; \
	}
GATED(cmd_info)
GATED(cmd_tasks)
GATED(cmd_queues)
GATED(cmd_latency)
GATED(cmd_counters)

void
telemetry_close(void)
{
	pthread_mutex_lock(&gate);
	gate_open = 0;
	pthread_mutex_unlock(&gate);
}

int
telemetry_register(void)
{
	static const struct {
		const char *name;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{ "/surge/info", gated_cmd_info, "surge version, pid, TSC Hz, running tasks. No parameters" },
		{ "/surge/tasks", gated_cmd_tasks, "tasks per lcore: function, state, busy/idle cycles, idle %. No parameters" },
		{ "/surge/queues", gated_cmd_queues, "surge's per-queue counters and pacer rates. Parameters: port id" },
		{ "/surge/latency", gated_cmd_latency, "latency receivers (no parameter) or one summary. Parameters: receiver id" },
		{ "/surge/counters", gated_cmd_counters, "the scripts' custom counters and gauges. No parameters" },
	};
	int rc = 0;

	pthread_mutex_lock(&gate);
	gate_open = 1;
	pthread_mutex_unlock(&gate);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		rc |= rte_telemetry_register_cmd(cmds[i].name, cmds[i].fn, cmds[i].help);
	return rc != 0 ? -EINVAL : 0;
}
