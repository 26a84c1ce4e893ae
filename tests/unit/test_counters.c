/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_counters.c - custom counters and gauges (core/control/counters.c), without
 * EAL: each "lcore" (the per-thread lcore id, set by hand here) writes its
 * own cell on its own cache line, the sum covers exactly the lcores that
 * wrote, names map to one id, and bad names, kinds and overflow are errors.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_lcore.h>

#include "run.h"
#include "check.h"

static int
setup(void **state)
{
	struct surge_opts o;

	(void)state;
	memset(&o, 0, sizeof(o));
	return rt_create(&o);
}

static int
teardown(void **state)
{
	(void)state;
	RTE_PER_LCORE(_lcore_id) = LCORE_ID_ANY;
	rt_destroy();
	return 0;
}

static void
as_lcore(unsigned id)
{
	RTE_PER_LCORE(_lcore_id) = id;
}

static void
cells_per_lcore_sum(void **state)
{
	struct surge_counter_info ci;
	uint64_t *c1, *c2;
	int id;

	(void)state;
	id = surge_counter_new("hits", SURGE_COUNTER);
	assert_int_equal(id, 0);
	as_lcore(1);
	c1 = surge_counter_cell(id);
	as_lcore(2);
	c2 = surge_counter_cell(id);
	assert_non_null(c1);
	assert_non_null(c2);
	/* one writer per cache line: the cells of two lcores never share one */
	assert_true((uintptr_t)c2 / RTE_CACHE_LINE_SIZE != (uintptr_t)c1 / RTE_CACHE_LINE_SIZE);
	*c1 += 1000;
	*c2 += 234;
	ok(surge_counter_get(id, &ci));
	assert_string_equal(ci.name, "hits");
	assert_int_equal(ci.kind, SURGE_COUNTER);
	assert_int_equal(ci.total, 1234);
	assert_int_equal(ci.lcores, 2);
	assert_true(ci.value == 1234.0);
	/* the same name is the same counter, from any lcore */
	as_lcore(3);
	assert_int_equal(surge_counter_new("hits", SURGE_COUNTER), id);
	assert_int_equal(surge_counter_count(), 1);
}

static void
gauges_sum_the_lcores_that_set(void **state)
{
	struct surge_counter_info ci;
	int id;

	(void)state;
	id = surge_counter_new("depth", SURGE_GAUGE);
	ok(id);
	assert_null(surge_counter_cell(id));            /* a gauge has no counter cell */
	assert_error_mentions("no counter");
	as_lcore(4);
	*surge_gauge_cell(id) = 1.5;
	as_lcore(5);
	*surge_gauge_cell(id) = 2.0;
	ok(surge_counter_get(id, &ci));
	assert_int_equal(ci.lcores, 2);
	assert_true(ci.value == 3.5);
	assert_int_equal(surge_counter_new("depth", SURGE_COUNTER), -EEXIST);
	assert_error_mentions("'depth' is already a gauge");
}

/* a sum past 2^64 stays at UINT64_MAX and says so; it never wraps */
static void
counter_sum_saturates(void **state)
{
	struct surge_counter_info ci;
	int id;

	(void)state;
	id = surge_counter_new("big", SURGE_COUNTER);
	ok(id);
	as_lcore(1);
	*surge_counter_cell(id) = UINT64_MAX - 5;
	as_lcore(2);
	*surge_counter_cell(id) = 5;
	ok(surge_counter_get(id, &ci));
	assert_true(ci.total == UINT64_MAX);
	assert_int_equal(ci.flags & SURGE_COUNTER_SATURATED, 0);   /* 2^64 - 1 is a count */
	*surge_counter_cell(id) = 6;
	ok(surge_counter_get(id, &ci));
	assert_true(ci.total == UINT64_MAX);                       /* wrapped, it was 0 */
	assert_int_equal(ci.flags & SURGE_COUNTER_SATURATED, SURGE_COUNTER_SATURATED);
	as_lcore(3);
	*surge_counter_cell(id) = 7;                                /* more after: still there */
	ok(surge_counter_get(id, &ci));
	assert_true(ci.total == UINT64_MAX && (ci.flags & SURGE_COUNTER_SATURATED));
}

static void
bad_input(void **state)
{
	char name[SURGE_NAME_MAX + 1];
	struct surge_counter_info ci;

	(void)state;
	assert_int_equal(surge_counter_new("", SURGE_COUNTER), -EINVAL);
	memset(name, 'x', SURGE_NAME_MAX);
	name[SURGE_NAME_MAX] = '\0';
	assert_int_equal(surge_counter_new(name, SURGE_COUNTER), -EINVAL);
	assert_int_equal(surge_counter_new("k", 7), -EINVAL);
	assert_null(surge_counter_cell(99));
	assert_int_equal(surge_counter_get(-1, &ci), -EINVAL);
	for (int i = 0; i < SURGE_COUNTER_MAX; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		ok(surge_counter_new(name, SURGE_COUNTER));
	}
	assert_int_equal(surge_counter_new("one-too-many", SURGE_COUNTER), -ENOSPC);
	assert_error_mentions("at most 256");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(cells_per_lcore_sum, setup, teardown),
		cmocka_unit_test_setup_teardown(gauges_sum_the_lcores_that_set, setup, teardown),
		cmocka_unit_test_setup_teardown(counter_sum_saturates, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_input, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
