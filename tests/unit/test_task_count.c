/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_task_count.c - surge_task_count() (what DPDK's telemetry thread
 * asks for /surge/info) only reads: it counts the running tasks and never
 * waits for or reaps an lcore, which is master's to do (run/task.c). A task
 * that has said it is done while its lcore still runs (the moment between
 * task_main's last store and its return) must neither block the count nor
 * be taken from master.
 */
#define _GNU_SOURCE       /* pthread_timedjoin_np */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "run.h"
#include "check.h"

static struct surge_opts opts;
static volatile int release;

static int
setup(void **state)
{
	static const char *const vdevs[] = { "net_null0,no-rx=1" };

	(void)state;
	opts.lcores = "(0-1)@(0-1)";
	return test_eal_start(&opts, "test_task_count", vdevs, 1);
}

static int
teardown(void **state)
{
	(void)state;
	return test_eal_stop();
}

/* A task that reports `state` and keeps its lcore until released. */
static int
pretend_task(void *arg)
{
	__atomic_store_n(&rt()->lcore[rte_lcore_id()].state, (int)(intptr_t)arg, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&release, __ATOMIC_ACQUIRE))
		;
	return 0;
}

static void *
count_in_thread(void *arg)
{
	*(int *)arg = surge_task_count();
	return NULL;
}

/* surge_task_count() from another thread, as telemetry calls it: the
 * count, or -1 when it did not return within a second. */
static int
count_from_other_thread(void)
{
	struct timespec until;
	pthread_t t;
	int n = -2;

	assert_int_equal(pthread_create(&t, NULL, count_in_thread, &n), 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 1;
	if (pthread_timedjoin_np(t, NULL, &until) != 0) {
		__atomic_store_n(&release, 1, __ATOMIC_RELEASE);   /* let it end */
		pthread_join(t, NULL);
		return -1;
	}
	return n;
}

static void
run_task(int state, int *count, int *lcore_state)
{
	unsigned w = rte_get_next_lcore(-1, 1, 0);

	assert_true(w < RTE_MAX_LCORE);
	release = 0;
	assert_int_equal(rte_eal_remote_launch(pretend_task, (void *)(intptr_t)state, w), 0);
	while (__atomic_load_n(&rt()->lcore[w].state, __ATOMIC_ACQUIRE) != state)
		;
	*count = count_from_other_thread();
	*lcore_state = rte_eal_get_lcore_state(w);
	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(w);
	rt()->lcore[w].state = TASK_IDLE;
}

static void
counts_a_running_task(void **state)
{
	int n, st;

	(void)state;
	run_task(TASK_RUNNING, &n, &st);
	assert_int_equal(n, 1);
	assert_int_equal(st, RUNNING);
}

static void
does_not_wait_for_a_finishing_task(void **state)
{
	int n, st;

	(void)state;
	run_task(TASK_DONE, &n, &st);
	assert_int_equal(n, 0);          /* -1: it waited for the lcore */
	assert_int_equal(st, RUNNING);   /* still master's to reap */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts_a_running_task),
		cmocka_unit_test(does_not_wait_for_a_finishing_task),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
