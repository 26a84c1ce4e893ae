/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_task_hint.c - what "no free lcore for task ..." suggests
 * (task_lcore_hint, run/task.c): one lcore more than there are, on the CPUs
 * the process may run on, and never an lcore id DPDK cannot take.
 *
 * Proves: with 2 lcores on CPUs 0-1 it suggests '(0-2)@(0-1)'; the CPU set
 * is the one given, not one CPU per lcore (127 lcores on 2 CPUs suggest
 * '(0-127)@(0-1)', the highest id RTE_MAX_LCORE 128 allows); with
 * RTE_MAX_LCORE lcores (or more) it says no more can be given.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "run.h"
#include "check.h"

static void
test_one_more(void **state)
{
	char b[256];

	(void)state;
	task_lcore_hint(b, sizeof(b), 2, 128, "0-1");
	assert_string_equal(b, "(give more with --lcores, e.g. --lcores '(0-2)@(0-1)')");
	task_lcore_hint(b, sizeof(b), 6, 128, "0-1");
	assert_string_equal(b, "(give more with --lcores, e.g. --lcores '(0-6)@(0-1)')");
	task_lcore_hint(b, sizeof(b), 3, 128, "1,4-5");
	assert_string_equal(b, "(give more with --lcores, e.g. --lcores '(0-3)@(1,4-5)')");
	task_lcore_hint(b, sizeof(b), 2, 128, "");
	assert_string_equal(b, "(give more with --lcores, e.g. --lcores '(0-2)@(0)')");
}

static void
test_capped_at_max(void **state)
{
	char b[256];

	(void)state;
	task_lcore_hint(b, sizeof(b), 127, 128, "0-1");
	assert_string_equal(b, "(give more with --lcores, e.g. --lcores '(0-127)@(0-1)')");
	task_lcore_hint(b, sizeof(b), 128, 128, "0-1");
	assert_string_equal(b, "(and no more lcores can be given: 128 is the most DPDK allows, "
			    "RTE_MAX_LCORE; stop a task first)");
	task_lcore_hint(b, sizeof(b), 200, 128, "0-1");
	assert_string_equal(b, "(and no more lcores can be given: 128 is the most DPDK allows, "
			    "RTE_MAX_LCORE; stop a task first)");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_more),
		cmocka_unit_test(test_capped_at_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
