/* SPDX-License-Identifier: BSD-3-Clause
 *
 * idle.c - what an lcore does while it has nothing to do, and how long it
 * spent doing it.
 *
 * Two kinds of waiting. A paced sender knows when its next packet is due:
 * under the sleep policy it sleeps only the part of the gap beyond what a
 * sleep usually wakes late (measured as it goes), then spins to the exact
 * departure time - Linux pktgen's hybrid - so each gap keeps its length
 * where the core is free. With `batch` set it sleeps as an idle poller
 * does once deeply idle, at least DEEP_IDLE_FACTOR x max_sleep_us (1 ms by
 * default): packets leave in small batches at a fraction of the CPU (in a
 * VM a wake-up costs tens of microseconds of CPU, so the wake rate is the
 * cost: docs/performance.md "Idle policies"), the average rate still exact,
 * the shape not. A poller does not know when
 * packets will come: after each light poll (less than half a burst) its
 * next poll is preceded by a sleep step_us longer, up to max_sleep_us, and a
 * busy poll resets it to zero (the testpmd --max-sleep-us proposal; Snabb's
 * "breathing" halves instead). The sleep comes before the next poll, never
 * between a poll and its return, so received packets reach Lua at once.
 * Time in waits, sleeps and empty polls counts as idle, so the idle % can
 * be printed beside the packet rate.
 */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include "dataplane.h"

/* Defaults: see docs/architecture.md ("Idle") for the measurements. */
#define DEFAULT_MODE SURGE_IDLE_SLEEP
#define DEFAULT_MAX_SLEEP_US 500
#define DEFAULT_STEP_US 10
#define DEFAULT_SLEEP_MIN_US 50
#define MIN_MARGIN_NS 2000         /* wake at least this early and spin the rest */
#define MIN_SLEEP_NS 5000          /* shorter sleeps cost more than they save */
#define FIRST_OVERSLEEP_NS 60000   /* guess until the first sleeps are measured */
#define MAX_OVERSLEEP_NS 100000    /* later than this is a preemption, not timer lateness */
#define MAX_SLEEP_LIMIT_US 1000000
#define DEEP_IDLE_POLLS 1000       /* empty polls at max_sleep_us (~0.5 s) before sleeping deeper */
#define DEEP_IDLE_FACTOR 2         /* ... sleeps this many times max_sleep_us: half the wake-ups */

static struct lcore_slot *
me(void)
{
	return lcore_is_eal() ? &rt()->lcore[lcore_self()] : NULL;
}

static void
set_defaults(struct surge_idle *p)
{
	memset(p, 0, sizeof(*p));
	p->mode = DEFAULT_MODE;
	p->max_sleep_us = DEFAULT_MAX_SLEEP_US;
	p->step_us = DEFAULT_STEP_US;
	p->sleep_min_us = DEFAULT_SLEEP_MIN_US;
	p->rx_intr = 1;
}

void
idle_task_begin(void)
{
	struct lcore_slot *s = me();

	if (s == NULL)
		return;
	set_defaults(&s->idle);
	s->sleep_us = 0;
	s->empty_polls = 0;
	s->idle_chosen = 0;
	s->sent_since_poll = 0;
	s->idle_cycles = 0;
	s->wait_since = 0;
	s->sleeps = 0;
	s->oversleep_ns = FIRST_OVERSLEEP_NS;
	s->task_end_tsc = 0;
	s->task_start_tsc = rte_rdtsc();
	/* the default 50 us timer slack would make every short sleep long */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
}

void
idle_task_end(void)
{
	struct lcore_slot *s = me();

	if (s != NULL)
		s->task_end_tsc = rte_rdtsc();
}

int
surge_idle_set(const struct surge_idle *p)
{
	struct lcore_slot *s = me();

	if (s == NULL)
		return rt_error(-EINVAL, "idle policy: not on an lcore");
	if (p->mode > SURGE_IDLE_SLEEP)
		return rt_error(-EINVAL, "idle mode %u unknown (busy, pause, sleep)", p->mode);
	if (p->batch > 1 || p->rx_intr > 1)
		return rt_error(-EINVAL, "idle batch and rx_intr are 0 or 1");
	if (p->max_sleep_us > MAX_SLEEP_LIMIT_US)
		return rt_error(-EINVAL, "max_sleep_us %u outside 0..%d", p->max_sleep_us, MAX_SLEEP_LIMIT_US);
	if (p->step_us == 0 || p->step_us > MAX_SLEEP_LIMIT_US)
		return rt_error(-EINVAL, "step_us %u outside 1..%d", p->step_us, MAX_SLEEP_LIMIT_US);
	if (p->sleep_min_us > MAX_SLEEP_LIMIT_US)
		return rt_error(-EINVAL, "sleep_min_us %u outside 0..%d", p->sleep_min_us, MAX_SLEEP_LIMIT_US);
	s->idle = *p;
	s->idle_chosen = 1;
	s->sleep_us = 0;
	s->empty_polls = 0;
	return 0;
}

int
surge_idle_get(struct surge_idle *out)
{
	struct lcore_slot *s = me();

	if (s == NULL)
		return rt_error(-EINVAL, "idle policy: not on an lcore");
	if (s->idle.step_us == 0)
		set_defaults(&s->idle);   /* the main lcore has no task start */
	*out = s->idle;
	return 0;
}

/* Ends a wait: the in-progress mark goes first, so a reader may miss a
 * moment of idle time but never counts it twice. */
static void
end_wait(struct lcore_slot *s, uint64_t cycles)
{
	__atomic_store_n(&s->wait_since, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&s->idle_cycles, s->idle_cycles + cycles, __ATOMIC_RELEASE);
}

/* Waits until `target`; `period` is the typical spacing of these waits (the
 * pacer's gap), which the batch policy uses to decide on sleeping. */
void
idle_wait_until(uint64_t target, uint64_t period)
{
	struct lcore_slot *s = me();
	uint64_t start = rte_rdtsc(), now = start, hz = rt_hz();
	int mode = s != NULL && s->idle.step_us ? s->idle.mode : DEFAULT_MODE;

	if (s != NULL)
		s->wait_since = start;    /* readers count a wait in progress as idle */
	if (mode == SURGE_IDLE_SLEEP && s != NULL && target > now) {
		double left_ns = (double)(target - now) * 1e9 / hz;
		double period_ns = (double)period * 1e9 / hz;
		/* the learnt lateness of a wake-up (a high estimate: it rises fast
		 * and decays slowly), plus a little: sleep until then, spin after */
		double margin = s->oversleep_ns + MIN_MARGIN_NS;
		double ask = 0;

		if (s->idle.batch && RTE_MAX(left_ns, period_ns) >= s->idle.sleep_min_us * 1000.0)
			/* low CPU: gaps are slept through in deep sleeps, so low
			 * rates leave in small batches rather than waking the core
			 * for every packet; the schedule keeps the average exact */
			ask = RTE_MAX(left_ns - margin, s->idle.max_sleep_us * 1000.0 * DEEP_IDLE_FACTOR);
		else if (left_ns >= s->idle.sleep_min_us * 1000.0 && left_ns - margin >= MIN_SLEEP_NS)
			ask = left_ns - margin;
		if (ask > 0) {
			uint64_t t0 = rte_rdtsc();
			double over;

			/* in slices: a stop (--duration, Ctrl-C, a failed task)
			 * ends even a long pacing gap promptly */
			sleep_sliced((uint64_t)ask, NULL);
			over = (double)(rte_rdtsc() - t0) * 1e9 / hz - ask;
			/* a wake-up far later than usual is a preemption, not the
			 * timer's lateness: it must not make every later gap spin */
			over = RTE_MIN(RTE_MAX(over, 0.0), (double)MAX_OVERSLEEP_NS);
			s->oversleep_ns += (over - s->oversleep_ns) / (over > s->oversleep_ns ? 4 : 64);
			s->sleeps++;
		} else if (!s->idle.batch && left_ns >= s->idle.sleep_min_us * 1000.0) {
			/* a gap spun only because of the margin: let the estimate
			 * come down so that it is tried again */
			s->oversleep_ns -= s->oversleep_ns / 256;
		}
	}
	while ((now = rte_rdtsc()) < target && surge_running()) {
		if (mode != SURGE_IDLE_BUSY)
			rte_pause();
	}
	if (s != NULL)
		end_wait(s, now - start);
}

/* After a send that left packets: the round is busy (idle_after_poll). */
void
idle_note_sent(void)
{
	struct lcore_slot *s = me();

	if (s != NULL)
		s->sent_since_poll = 1;
}

/* A latency receiver on this lcore: the default sleep policy would leave
 * probes waiting in the queue while the poller sleeps (up to max_sleep_us on
 * every latency), so unless the task chose its policy itself it polls with
 * pause from now on, and says so once. */
void
idle_for_latency(void)
{
	struct lcore_slot *s = me();

	if (s == NULL || s->idle_chosen)
		return;
	if (s->idle.step_us == 0)
		set_defaults(&s->idle);
	if (s->idle.mode != SURGE_IDLE_SLEEP)
		return;
	s->idle.mode = SURGE_IDLE_PAUSE;
	s->sleep_us = 0;
	rt_info("lcore %u receives latency probes: it polls with idle mode pause, not sleep (sleeping "
		"would add up to %u us to each latency; surge.idle{ mode = \"sleep\" } to keep it)",
		rte_lcore_id(), s->idle.max_sleep_us);
}

/* Before a poll: the sleep the previous light polls earned. Sleeping here
 * rather than after the poll means a poll that gets packets returns them at
 * once; a packet that arrives during the sleep waits in the queue instead. */
void
idle_before_poll(uint16_t port, uint16_t q)
{
	struct lcore_slot *s = me();
	uint64_t now;
	int intr;

	if (s == NULL || s->sleep_us == 0 || s->idle.mode != SURGE_IDLE_SLEEP || !surge_running())
		return;
	now = rte_rdtsc();
	s->wait_since = now;
	intr = s->idle.rx_intr && s->sleep_us >= s->idle.max_sleep_us ? rx_intr_wait(port, q) : -ENOTSUP;
	if (intr == 1)
		s->sleep_us = 0;          /* traffic: poll without sleeping until it is seen */
	else if (intr < 0)
		/* no interrupt: after a long idle spell (no packet for ~0.5 s)
		 * each wake-up is made to count twice as long */
		sleep_sliced((uint64_t)s->sleep_us * 1000 *
			     (s->empty_polls >= DEEP_IDLE_POLLS ? DEEP_IDLE_FACTOR : 1), NULL);
	s->sleeps++;
	s->last_poll_tsc = rte_rdtsc();
	end_wait(s, s->last_poll_tsc - now);
}

/* After a poll: idle accounting, and the sleep the next poll starts with.
 * now: the TSC the poll's caller read right after the poll (recv reads it
 * once, for the burst's receive time: a TSC read costs ~10-25 cycles on
 * these VMs, a tenth of an RX burst's own cost, issue 20). */
void
idle_after_poll(uint32_t n, uint32_t cap, uint64_t now)
{
	struct lcore_slot *s = me();

	if (s == NULL)
		return;
	/* an empty poll makes the whole loop round idle: the poll and the
	 * script's work since the previous one (the task's first poll: no
	 * round before it, nothing) - unless the round sent: a loop that
	 * sends and also polls a queue that receives nothing (an OTG port
	 * task on a TX-only port) is busy sending, not idle (its pacer's waits
	 * count as idle by themselves, in idle_wait_until) */
	if (n == 0 && !s->sent_since_poll && s->last_poll_tsc > s->task_start_tsc)
		s->idle_cycles += now - s->last_poll_tsc;
	s->sent_since_poll = 0;
	s->last_poll_tsc = now;
	if (s->idle.mode != SURGE_IDLE_SLEEP || s->idle.step_us == 0)
		return;
	s->empty_polls = n == 0 ? s->empty_polls + 1 : 0;
	if (n * 2 >= cap)
		s->sleep_us = 0;
	else
		s->sleep_us = RTE_MIN(s->sleep_us + s->idle.step_us, s->idle.max_sleep_us);
}

int
surge_lcore_stats(int lcore, struct surge_lcore_stats *out)
{
	const struct lcore_slot *s;
	uint64_t end, total, idle, since;

	if (lcore < 0 || lcore >= RTE_MAX_LCORE || !rte_lcore_is_enabled((unsigned)lcore))
		return rt_error(-EINVAL, "no lcore %d", lcore);
	s = &rt()->lcore[lcore];
	memset(out, 0, sizeof(*out));
	out->lcore = lcore;
	if (s->task_start_tsc == 0)
		return 0;
	end = s->task_end_tsc ? s->task_end_tsc : rte_rdtsc();
	total = end - s->task_start_tsc;
	/* idle first: the writer clears wait_since before adding to idle_cycles,
	 * so this order may miss a moment of a wait but never counts it twice */
	idle = __atomic_load_n(&s->idle_cycles, __ATOMIC_ACQUIRE);
	since = __atomic_load_n(&s->wait_since, __ATOMIC_ACQUIRE);
	if (since != 0 && s->task_end_tsc == 0 && end > since)
		idle += end - since;            /* the wait in progress so far */
	out->idle_cycles = RTE_MIN(idle, total);
	out->busy_cycles = total - out->idle_cycles;
	out->sleeps = s->sleeps;
	return 0;
}
