/* SPDX-License-Identifier: BSD-3-Clause
 *
 * base.h - the bottom layer: the run context and what every layer above
 * needs of it (errors, the clock, the run's state, which lcore slot is
 * mine, claiming and publishing). Calls nothing above it.
 */
#ifndef SURGE_BASE_H
#define SURGE_BASE_H

#include <errno.h>
#include <stdint.h>

#include <rte_lcore.h>

#include "state.h"

/* context.c: the single run context, set once by main() before any lcore
 * starts and cleared after they all stopped; its contents follow the
 * one-writer rule of state.h. Read through rt(), inline: the hot path asks
 * for it on every call. */
extern struct runtime *rt_current;
static inline struct runtime *
rt(void)
{
	return rt_current;
}
int rt_create(const struct surge_opts *opts);
void rt_destroy(void);
int rt_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rt_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The lcore slot of the calling thread: its lcore, or the main lcore's for
 * a thread that is no lcore (main before EAL starts, the monitor, DPDK's
 * telemetry thread). The one answer every module uses. */
static inline unsigned
lcore_self(void)
{
	unsigned id = rte_lcore_id();

	return id < RTE_MAX_LCORE ? id : rte_get_main_lcore();
}

/* True on a thread EAL made an lcore (only those have an idle policy). */
static inline int
lcore_is_eal(void)
{
	return rte_lcore_id() < RTE_MAX_LCORE;
}

/* clock.c: the run's one TSC frequency (see docs/architecture.md "Clock") */
uint64_t tsc_measure_hz(struct tsc_pair *first);
void rt_tsc_calibrate(void);
void rt_tsc_check(void);
uint64_t rt_hz(void);            /* the calibrated TSC Hz (after EAL start-up) */

/* run_state.c: is the run on, how old is its stop, how does it exit. */

/* The one test of "is the run on" for an lcore: no run-wide stop and no
 * one asked this task alone to end (surge_running() is this for the
 * caller's lcore). */
static inline int
rt_live(const struct runtime *r, unsigned lcore)
{
	if (r == NULL || __atomic_load_n(&r->stop, __ATOMIC_RELAXED))
		return 0;
	return lcore >= RTE_MAX_LCORE || !__atomic_load_n(&r->lcore[lcore].stop_req, __ATOMIC_RELAXED);
}
/* Called when the run is not on: 0 while the stop is young, else
 * -ESHUTDOWN with "run stopped" as the lcore's error. */
int run_stop_expired(void);
uint32_t run_stop_left_us(void);  /* until calls raise "run stopped" (0 = they do) */
double rt_stop_grace(void);       /* --stop-grace in seconds */
uint64_t rt_grace_cycles(double fraction);   /* that fraction of it, in TSC cycles */
int rt_exit_status(int rc);       /* an error's rc, else what os.exit asked for */
/* The watchdog's one test (docs/guarantees.md "The watchdog"): code that
 * still runs after a stop is overdue once its thread ran a whole grace
 * period of CPU time since (a thread starved of CPU could not see the stop),
 * or, CPU or not, once rt_stop_wall_bound() seconds passed (a blocking call
 * outside surge burns none). */
int rt_overdue(double cpu_s, double wall_s);
double rt_stop_wall_bound(void);  /* max(5 s, 10 x --stop-grace) */
void rt_publish_cpu_clock(void);  /* the calling lcore's thread CPU clock, for the monitor */
uint64_t rt_cpu_ns(const struct lcore_slot *s);   /* its CPU time so far, UINT64_MAX = unknown */
uint64_t rt_self_cpu_ns(void);    /* the calling thread's CPU time */
#define EXIT_WATCHDOG 3           /* stuck code was ended after the stop's grace period */
/* --duration: the TSC at which the run ends, 0 when none is due yet */
uint64_t run_deadline(const struct runtime *r);
/* Sleeps ns in slices of at most 10 ms, ending early once the run is not
 * on; each slice calls `tick` (NULL: none), e.g. to say master is alive. */
void sleep_sliced(uint64_t ns, void (*tick)(void));
void sleep_ns(uint64_t ns);       /* one plain sleep */

/* claim.c: one owner per object (a queue, a pcap file), and the registries
 * (pools, latency receivers, pcap files, counter names). */

/* Claims `*owner` (-1 = free) for lcore `me`: 0 when it is now, or already
 * was, me's; else -EBUSY with the owner in *holder. */
static inline int
owner_claim(volatile int32_t *owner, int32_t me, int32_t *holder)
{
	int32_t none = -1;

	if (__atomic_load_n(owner, __ATOMIC_ACQUIRE) == me ||
	    __atomic_compare_exchange_n(owner, &none, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	if (holder != NULL)
		*holder = none;
	return -EBUSY;
}
/* For a call only the lcore that made registry entry `id` may make (its
 * polls): 0 when `entry` (NULL: there is none) is the calling lcore's, its
 * `owner`; else the error set and returned, -EINVAL "no WHAT ID" or -EPERM
 * "WHAT ID belongs to lcore N: poll it there". */
int owner_only(const void *entry, int32_t owner, const char *what, int id);
/* Registries are appended under one lock and read without it: an entry is
 * filled in first, then published by raising the count (release); readers
 * load the count (acquire) and read entries below it. */
void registry_lock(void);
void registry_unlock(void);
static inline void
registry_publish(int *count, int n)
{
	__atomic_store_n(count, n, __ATOMIC_RELEASE);
}
static inline int
registry_count(const int *count)
{
	return __atomic_load_n(count, __ATOMIC_ACQUIRE);
}
/* Appends the entry at `entry` (`size` bytes, a pointer) to the registry
 * `slots` (room for `max`) counted by *count, under the lock: its id, or
 * -ENOSPC with the error "too many WHAT (at most MAX)" (the caller frees
 * the entry). One way for every registry of objects made by id. */
int registry_add(int *count, int max, void *slots, size_t size, const void *entry, const char *what);
/* At exit, on one thread: drop(slot) for each entry of the registry
 * `slots` (entries `size` bytes) counted by *count, each slot zeroed after,
 * then the count 0; the sum of what the drops returned (files that failed,
 * pools that leaked). drop NULL: each entry is a pointer to free. One
 * walk for every registry's end. */
int registry_clear(int *count, void *slots, size_t size, int (*drop)(void *slot));
/* How many entries the runtime's registry counted by field N holds (0
 * before there is a runtime), and whether id is one of `size` entries: the
 * one range rule of every get-by-id, count and walk of a registry. */
#define RT_REGISTRY_SIZE(n) (rt() != NULL ? registry_count(&rt()->n) : 0)
/* The end of the runtime's registry `slots` counted by field N:
 * registry_clear with the entry size taken from the slots themselves (0
 * before there is a runtime). */
#define RT_REGISTRY_CLEAR(n, slots, drop) \
	(rt() != NULL ? registry_clear(&rt()->n, rt()->slots, sizeof(rt()->slots[0]), (drop)) : 0)
static inline int
registry_holds(int size, int id)
{
	return id >= 0 && id < size;
}

#endif /* SURGE_BASE_H */
