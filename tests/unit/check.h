/* SPDX-License-Identifier: BSD-3-Clause
 *
 * check.h - assertions the unit tests share (include after cmocka.h and
 * include/surge.h).
 */
#ifndef SURGE_TEST_CHECK_H
#define SURGE_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
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

/* Starts EAL once for a group of tests, the way `surge test` does (no
 * hugepages, quiet), with the given virtual devices. EAL refusing options
 * surge built from good ones is a surge bug (-1, the group fails); a host
 * that cannot run it at all (permissions, memory) skips the test (77). */
static inline int
test_eal_start(struct surge_opts *o, const char *name, const char *const *vdevs, int n)
{
	int rc;

	o->cmd = CMD_TEST;
	o->no_huge = 1;
	o->quiet = 1;
	for (int i = 0; i < n; i++)
		o->vdev[i] = vdevs[i];
	o->nvdev = n;
	if (rt_create(o) != 0)
		return -1;
	if ((rc = boot_start(o, name)) == 0)
		return 0;
	fprintf(stderr, "%s: EAL did not start: %s\n", name, surge_last_error());
	if (rc == -EINVAL)
		return -1;
	exit(77);
}

/* Undoes test_eal_start: ports closed, pools checked and freed, EAL down. */
static inline int
test_eal_stop(void)
{
	ports_close_all();
	pools_check_and_free();
	eal_stop();
	rt_destroy();
	return 0;
}

#endif
