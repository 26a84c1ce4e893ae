/* SPDX-License-Identifier: BSD-3-Clause
 *
 * check.h - assertions the unit tests share (include after cmocka.h and
 * include/surge.h).
 */
#ifndef SURGE_TEST_CHECK_H
#define SURGE_TEST_CHECK_H

#include <string.h>

/* A core call that must succeed, failing the test with the core's reason. */
#define ok(call)                                                           \
	do {                                                               \
		int rc_ = (call);                                          \
		if (rc_ < 0)                                               \
			fail_msg("%s = %d: %s", #call, rc_, surge_last_error()); \
	} while (0)

/* The calling lcore's last error names `needle`. */
#define assert_error_mentions(needle)                                      \
	do {                                                               \
		if (strstr(surge_last_error(), (needle)) == NULL)          \
			fail_msg("error '%s' does not mention '%s'",       \
				 surge_last_error(), (needle));            \
	} while (0)

#endif
