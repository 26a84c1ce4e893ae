/* SPDX-License-Identifier: BSD-3-Clause
 *
 * run_state.c - is the run on, how old is its stop, how does it exit.
 *
 * Everything that ends a run early sets one flag with surge_stop(); the
 * stop's age decides when calls into surge start raising "run stopped"
 * (the whole stop path: run/monitor.c and docs/architecture.md).
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_lcore.h>

#include "base.h"

#define RAISE_AFTER 0.25           /* of the grace period: calls raise "run stopped" */
#define SLICE_NS 10000000ull       /* a sliced sleep sees a stop this promptly */
#define WALL_GRACES 10             /* the wall bound: this many grace periods ... */
#define WALL_MIN_S 5.0             /* ... and at least this long */

int
surge_running(void)
{
	/* a task stopped alone (surge_task_stop) sees the run as stopped */
	return rt_live(rt_current, rte_lcore_id());
}

void
surge_stop(void)
{
	uint64_t none = 0;

	if (rt_current == NULL)
		return;
	/* async-signal-safe: the signal handlers call this */
	__atomic_compare_exchange_n(&rt_current->stop_tsc, &none, rte_rdtsc(), 0, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	__atomic_store_n(&rt_current->stop, 1, __ATOMIC_RELAXED);
}

/* os.exit(status) in any VM (lua/surge/core.lua): the run ends as on
 * surge.stop(), and the process exits with this status once the summary,
 * the pool check and the pcap writers' flush are done (a real exit from a
 * VM would skip them all). The first request wins. */
void
surge_exit(int status)
{
	int none = -1;

	if (rt_current == NULL)
		return;
	__atomic_compare_exchange_n(&rt_current->exit_status, &none, status, 0, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	surge_stop();
}

/* What os.exit asked for, -1 = nothing (master's return value then counts). */
int
surge_exit_status(void)
{
	return rt_current != NULL ? __atomic_load_n(&rt_current->exit_status, __ATOMIC_RELAXED) : -1;
}

/* The process's exit status: an error's (rc), else what os.exit asked for. */
int
rt_exit_status(int rc)
{
	int want = rt_current != NULL ? __atomic_load_n(&rt_current->exit_status, __ATOMIC_RELAXED) : -1;

	return rc == 0 && want >= 0 ? want : rc;
}

/* --stop-grace in seconds (its default before the options are read) */
double
rt_stop_grace(void)
{
	const struct runtime *r = rt();

	return r != NULL && r->opts.stop_grace > 0 ? r->opts.stop_grace : SURGE_STOP_GRACE_DEFAULT;
}

uint64_t
rt_grace_cycles(double fraction)
{
	return (uint64_t)(rt_stop_grace() * fraction * (double)rt_hz());
}

double
rt_stop_wall_bound(void)
{
	double w = WALL_GRACES * rt_stop_grace();

	return w > WALL_MIN_S ? w : WALL_MIN_S;
}

/* The grace counts CPU time, not wall time: on a loaded machine a thread
 * that checks surge.running() may get no CPU for seconds after the stop,
 * and ending it then would end code that did nothing wrong. */
int
rt_overdue(double cpu_s, double wall_s)
{
	return cpu_s >= rt_stop_grace() || wall_s >= rt_stop_wall_bound();
}

/* Each lcore's thread says which clock counts its CPU time (once: an EAL
 * thread lives as long as the run); only the monitor reads it. */
void
rt_publish_cpu_clock(void)
{
	struct runtime *r = rt();
	struct lcore_slot *s;

	if (r == NULL)
		return;
	s = &r->lcore[lcore_self()];
	if (!__atomic_load_n(&s->cpu_clock_ok, __ATOMIC_ACQUIRE) &&
	    pthread_getcpuclockid(pthread_self(), &s->cpu_clock) == 0)
		__atomic_store_n(&s->cpu_clock_ok, 1, __ATOMIC_RELEASE);
}

static uint64_t
clock_ns(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts) != 0)
		return UINT64_MAX;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t
rt_cpu_ns(const struct lcore_slot *s)
{
	if (!__atomic_load_n(&s->cpu_clock_ok, __ATOMIC_ACQUIRE))
		return UINT64_MAX;
	return clock_ns(s->cpu_clock);
}

uint64_t
rt_self_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Called when surge_running() is false: 0 while the stop is young, else
 * -ESHUTDOWN with "run stopped" as the lcore's error. A stop of this lcore
 * alone (no run-wide stop time) is timed from when it was first seen. */
int
run_stop_expired(void)
{
	struct runtime *r = rt();
	unsigned id = lcore_self();
	uint64_t now = rte_rdtsc(), t;

	if (r == NULL)
		return 0;
	t = __atomic_load_n(&r->stop_tsc, __ATOMIC_RELAXED);
	if (t == 0) {
		struct lcore_slot *s = &r->lcore[id];

		if (s->stop_seen_tsc == 0)
			s->stop_seen_tsc = now;
		t = s->stop_seen_tsc;
	}
	if (id == rte_get_main_lcore())
		r->master_seen_tsc = now;
	if (now - t < rt_grace_cycles(RAISE_AFTER))
		return 0;
	/* (the watchdog asks how much CPU it ran since the stop when refused) */
	r->lcore[id].refused_cpu_ns = rt_self_cpu_ns();
	r->lcore[id].refused_tsc = now;
	return rt_error(-ESHUTDOWN, "run stopped");
}

/* Microseconds until calls into surge raise "run stopped" (0 = they do). */
uint32_t
run_stop_left_us(void)
{
	struct runtime *r = rt();
	uint64_t t, now = rte_rdtsc(), end;

	if (r == NULL || run_stop_expired() != 0)
		return 0;
	t = __atomic_load_n(&r->stop_tsc, __ATOMIC_RELAXED);
	if (t == 0)
		t = r->lcore[lcore_self()].stop_seen_tsc;
	end = t + rt_grace_cycles(RAISE_AFTER);
	return end > now ? (uint32_t)((end - now) * 1000000 / rt_hz()) + 1 : 0;
}

int
surge_run_check(void)
{
	if (likely(surge_running()))
		return 0;
	return run_stop_expired();
}

/* Running tasks, read only: any thread may ask (DPDK's telemetry thread
 * does); master's polls reap the finished ones (run/task.c). */
int
surge_task_count(void)
{
	const struct runtime *r = rt();
	unsigned id;
	int n = 0;

	if (r == NULL)
		return 0;
	RTE_LCORE_FOREACH_WORKER(id)
		n += __atomic_load_n(&r->lcore[id].state, __ATOMIC_ACQUIRE) == TASK_RUNNING;
	return n;
}

uint64_t
run_deadline(const struct runtime *r)
{
	if (r == NULL || r->opts.duration <= 0 || r->start_tsc == 0)
		return 0;
	return r->start_tsc + (uint64_t)(r->opts.duration * (double)r->tsc_hz);
}

void
sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	if (ns > 0)
		nanosleep(&ts, NULL);
}

void
sleep_sliced(uint64_t ns, void (*tick)(void))
{
	while (ns > 0) {
		uint64_t now = ns < SLICE_NS ? ns : SLICE_NS;

		sleep_ns(now);
		ns -= now;
		if (tick != NULL)
			tick();
		if (!surge_running())
			break;
	}
}

static void
master_alive(void)
{
	rt_current->master_seen_tsc = rte_rdtsc();
}

void
surge_sleep_us(uint32_t us)
{
	if (!surge_running()) {
		/* begun after a stop: sleep, but no longer than until calls into
		 * surge raise "run stopped" - a loop around it neither spins nor
		 * outlives the stop */
		uint32_t left = run_stop_left_us();

		sleep_ns((uint64_t)(us < left ? us : left) * 1000);
		return;
	}
	/* nanosleep in slices, so that a stop ends the sleep; master's sleep
	 * tells the watchdog master is alive */
	sleep_sliced((uint64_t)us * 1000,
		     surge_is_main() && rt_current != NULL && rt_current->eal_up ? master_alive : NULL);
}
