/* SPDX-License-Identifier: BSD-3-Clause
 *
 * task.c - one LuaJIT VM per lcore.
 *
 * master() runs in a VM on the main lcore. surge.launch() serialises the
 * task's arguments to Lua source text, and a worker lcore starts a fresh VM
 * that loads the same script and calls the named function with them. Results
 * (or the error with its traceback) come back as text. VMs share nothing but
 * this hand-off and the C core, so no Lua state is ever touched by two lcores.
 * (master's own VM: master.c)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "run.h"

static char *
dup_text(const char *s, size_t len, size_t *out_len)
{
	char *d = malloc(len + 1);

	if (d != NULL) {
		memcpy(d, s, len);
		d[len] = '\0';
		*out_len = len;
	}
	return d;
}

/* A VM that hit its budget says which one and how to raise it, after the
 * first line ("not enough memory (task 'tx', lcore 1)"). */
static char *
with_memory_hint(char *text, size_t *len, const struct vm_mem *m)
{
	char hint[200], *t;
	size_t first, hl;

	if (text == NULL)
		return NULL;
	hint[0] = '\n';
	hint[1] = hint[2] = ' ';
	vm_budget_hint(m, hint + 3, sizeof(hint) - 3);
	hl = strlen(hint);
	first = strcspn(text, "\n");
	if ((t = malloc(*len + hl + 1)) == NULL)
		return text;
	memcpy(t, text, first);
	memcpy(t + first, hint, hl);
	memcpy(t + first + hl, text + first, *len - first + 1);
	free(text);
	*len += hl;
	return t;
}

static int
task_main(void *arg)
{
	struct lcore_slot *s = arg;
	const char *args[3] = { rt()->opts.script != NULL ? rt()->opts.script : "", s->fn, s->args };
	lua_State *L;
	int failed = 1;
	char *text = NULL;
	size_t len = 0;

	s->stop_seen_tsc = 0;
	rt_publish_cpu_clock();
	L = vm_new(rt()->opts.script, &s->mem);
	idle_task_begin();
	if (L == NULL) {
		text = dup_text("out of memory for a LuaJIT VM", 29, &len);
	} else if (vm_call_entry(L, "surge.vm.task", 3, args, 2) != 0) {
		const char *e = lua_tolstring(L, -1, &len);

		text = dup_text(e ? e : "unknown error", e ? len : 13, &len);
		if (s->mem.over)
			text = with_memory_hint(text, &len, &s->mem);
	} else {
		const char *t = lua_tolstring(L, -1, &len);

		failed = !lua_toboolean(L, -2);
		text = dup_text(t ? t : "", t ? len : 0, &len);
		if (failed && s->mem.over)
			text = with_memory_hint(text, &len, &s->mem);
	}
	/* closing the VM runs the finalisers that return bursts to their
	 * pools, on this lcore, before main may look at the pools */
	if (L != NULL)
		lua_close(L);
	idle_task_end();
	queues_release(lcore_self());
	pcap_release(lcore_self());
	s->result = text;
	s->result_len = text != NULL ? len : 0;
	/* a failed task ends the run, except at a prompt, which reports it */
	if (failed && !rt()->interactive)
		surge_stop();
	__atomic_store_n(&s->state, failed ? TASK_FAILED : TASK_DONE, __ATOMIC_RELEASE);
	return 0;
}

/* What to do when every worker lcore is busy, in parentheses: one lcore
 * more than the `lcores` there are now, on the CPUs this process may run on
 * (`cpus`, a --lcores CPU set), or, with `max` (RTE_MAX_LCORE) there
 * already, that no more can be given. Pure, for the unit tests. */
void
task_lcore_hint(char *buf, size_t len, unsigned lcores, unsigned max, const char *cpus)
{
	if (lcores >= max)
		snprintf(buf, len, "(and no more lcores can be given: %u is the most DPDK allows, "
			 "RTE_MAX_LCORE; stop a task first)", max);
	else
		snprintf(buf, len, "(give more with --lcores, e.g. --lcores '(0-%u)@(%s)')",
			 lcores, cpus != NULL && cpus[0] != '\0' ? cpus : "0");
}

int
surge_task_launch(const char *fn, const char *args, size_t len)
{
	struct runtime *r = rt();
	unsigned id, workers = 0;
	char hint[320];

	if (!surge_is_main())
		return rt_error(-EPERM, "surge.launch() is for master(); tasks cannot start tasks");
	if (strlen(fn) >= SURGE_NAME_MAX)
		return rt_error(-EINVAL, "task function name too long: %s", fn);
	RTE_LCORE_FOREACH_WORKER(id) {
		struct lcore_slot *s = &r->lcore[id];

		workers++;
		if (s->state != TASK_IDLE || rte_eal_get_lcore_state(id) != WAIT)
			continue;
		snprintf(s->fn, sizeof(s->fn), "%s", fn);
		free(s->args);
		s->args = dup_text(args, len, &s->args_len);
		free(s->result);
		s->result = NULL;
		if (s->args == NULL)
			return rt_error(-ENOMEM, "out of memory for task arguments");
		s->state = TASK_RUNNING;
		s->stop_req = 0;
		r->launched = 1;
		if (r->start_tsc == 0)
			r->start_tsc = rte_rdtsc();
		r->end_tsc = 0;           /* a later phase: scenario trials, tasks a prompt starts */
		if (rte_eal_remote_launch(task_main, s, id) != 0) {
			s->state = TASK_IDLE;
			return rt_error(-EBUSY, "lcore %u refused the task", id);
		}
		return (int)id;
	}
	task_lcore_hint(hint, sizeof(hint), rte_lcore_count(), RTE_MAX_LCORE, r->startup_cpus);
	return rt_error(-EBUSY, "no free lcore for task '%s': all %u worker lcores are busy %s",
			fn, workers, hint);
}

/* Counts running tasks and reaps finished ones so their lcore can be reused
 * once their result was collected (master only: DPDK's telemetry thread
 * counts with the pure reader surge_task_count). */
int
tasks_running(void)
{
	struct runtime *r = rt();
	unsigned id;
	int n = 0;

	RTE_LCORE_FOREACH_WORKER(id) {
		int st = __atomic_load_n(&r->lcore[id].state, __ATOMIC_ACQUIRE);

		if (st == TASK_RUNNING)
			n++;
		else if (st != TASK_IDLE && rte_eal_get_lcore_state(id) != WAIT)
			rte_eal_wait_lcore(id);
	}
	return n;
}

/* How long master's task polling may sleep: until the next thing due (the
 * caller's deadline, the next stats line, the end of --duration), at most
 * MASTER_NAP_MAX_US so that a task's end or a stop is seen promptly; a
 * shorter nap would wake master more often than anything needs
 * (docs/performance.md "Idle CPU"). */
#define MASTER_NAP_MAX_US 10000
#define MASTER_NAP_MIN_US 100

static uint32_t
master_nap_us(uint64_t until)
{
	struct runtime *r = rt();
	uint64_t now = rte_rdtsc(), due = until, hz = rt_hz(), end = run_deadline(r);
	double us;

	if (end != 0)
		due = RTE_MIN(due, end);
	if (r->start_tsc != 0 && !r->opts.quiet && r->opts.stats_interval > 0)
		due = RTE_MIN(due, (r->last_print_tsc ? r->last_print_tsc : r->start_tsc) +
			      (uint64_t)(r->opts.stats_interval * (double)hz));
	us = due > now ? (double)(due - now) * 1e6 / (double)hz : 0;
	return (uint32_t)RTE_MAX(RTE_MIN(us, (double)MASTER_NAP_MAX_US), (double)MASTER_NAP_MIN_US);
}


int
surge_task_poll(uint32_t wait_ms)
{
	struct runtime *r = rt();
	uint64_t hz = rt_hz(), until = rte_rdtsc() + hz / 1000 * wait_ms;
	int n;

	if (!surge_is_main())
		return rt_error(-EPERM, "surge.wait() and surge.poll() are for master(): a task cannot "
				"wait for tasks");
	for (;;) {
		uint64_t end = run_deadline(r);

		r->master_seen_tsc = rte_rdtsc();
		n = tasks_running();
		if (end != 0 && rte_rdtsc() >= end)
			surge_stop();
		if (!r->monitor_up && !r->at_prompt)
			stats_tick(0);       /* surge test: no monitor thread */
		if (n == 0 || rte_rdtsc() >= until)
			break;
		sleep_ns((uint64_t)master_nap_us(until) * 1000);
	}
	return n;
}

int
surge_task_result(int task, const char **text, size_t *len)
{
	struct lcore_slot *s;
	int st;

	if (task < 0 || task >= RTE_MAX_LCORE)
		return rt_error(-EINVAL, "no task %d", task);
	s = &rt()->lcore[task];
	st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
	if (st == TASK_RUNNING)
		return rt_error(-EAGAIN, "task %d is still running", task);
	if (st == TASK_IDLE)
		return rt_error(-EINVAL, "no task %d", task);
	*text = s->result != NULL ? s->result : "";
	*len = s->result_len;
	/* the lcore may take a new task once main has its result */
	if (rte_eal_get_lcore_state((unsigned)task) != WAIT)
		rte_eal_wait_lcore((unsigned)task);
	s->state = TASK_IDLE;
	return st == TASK_FAILED ? 1 : 0;
}

void
surge_run_start(void)
{
	struct runtime *r = rt();

	/* the run's clock starts with master(): --duration, stats lines and
	 * the summary work for scripts that launch no task */
	if (r != NULL && r->eal_up && (r->opts.cmd == CMD_RUN || r->opts.cmd == CMD_REPL || r->opts.cmd == CMD_OTG) &&
	    r->start_tsc == 0 &&
	    surge_is_main())
		r->start_tsc = rte_rdtsc();
}

void
surge_run_end(void)
{
	struct runtime *r = rt();

	if (r != NULL && r->start_tsc != 0 && r->end_tsc == 0)
		r->end_tsc = rte_rdtsc();
}

double
surge_run_elapsed(void)
{
	struct runtime *r = rt();
	uint64_t now;

	if (r == NULL || r->start_tsc == 0)
		return 0.0;
	now = r->end_tsc != 0 ? r->end_tsc : rte_rdtsc();
	return now > r->start_tsc ? (double)(now - r->start_tsc) / (double)rt_hz() : 0.0;
}

int
surge_task_stop(int task)
{
	struct lcore_slot *s;

	if (task < 0 || task >= RTE_MAX_LCORE || task == (int)rte_get_main_lcore())
		return rt_error(-EINVAL, "no task %d", task);
	s = &rt()->lcore[task];
	if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != TASK_RUNNING)
		return rt_error(-ESRCH, "task %d is not running", task);
	__atomic_store_n(&s->stop_req, 1, __ATOMIC_RELAXED);
	return 0;
}

int
tasks_stop_and_wait(void)
{
	struct runtime *r = rt();
	unsigned id;
	int failed = 0;

	if (!r->eal_up)
		return 0;
	surge_stop();
	rte_eal_mp_wait_lcore();
	RTE_LCORE_FOREACH_WORKER(id) {
		struct lcore_slot *s = &r->lcore[id];

		if (s->state == TASK_FAILED) {
			/* a failure nobody collected still fails the run */
			fprintf(stderr, "surge: task on lcore %u failed: %s\n", id,
				s->result != NULL ? s->result : "?");
			failed++;
		}
		s->state = TASK_IDLE;
	}
	return failed;
}
