/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_eal.c - the hugepage probe behind surge's automatic --no-huge
 * (eal_hugepages_free_mb in core/run/eal.c), fed fake /proc files.
 *
 * Proves: free pages of a mounted hugetlbfs count (2 MB and 1 GB pages), an
 * unmounted hugetlbfs, missing files and a meminfo without hugepage lines
 * all count as 0 MB, so surge falls back to --no-huge instead of failing.
 * No EAL is started.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "run.h"

static char dir[64];
static char meminfo[128], mounts[128];

static const char *const MOUNTS_HUGE =
	"sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
	"proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
	"hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n"
	"tmpfs /run tmpfs rw,nosuid,nodev,size=1620344k,mode=755 0 0\n";
static const char *const MOUNTS_PLAIN =
	"sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
	"proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
	"tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0\n";

/* A /proc/meminfo with the given hugepage numbers around unrelated lines. */
static void
write_meminfo(long total, long free_pages, long size_kb)
{
	FILE *f = fopen(meminfo, "w");

	assert_non_null(f);
	fprintf(f, "MemTotal:       16301300 kB\n"
		   "MemFree:         9000000 kB\n"
		   "AnonHugePages:         0 kB\n"
		   "ShmemHugePages:        0 kB\n"
		   "HugePages_Total:    %5ld\n"
		   "HugePages_Free:     %5ld\n"
		   "HugePages_Rsvd:        0\n"
		   "HugePages_Surp:        0\n"
		   "Hugepagesize:       %ld kB\n"
		   "Hugetlb:         %ld kB\n"
		   "DirectMap4k:      300000 kB\n",
		total, free_pages, size_kb, total * size_kb);
	fclose(f);
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/surge_test_eal.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(meminfo, sizeof(meminfo), "%s/meminfo", dir);
	snprintf(mounts, sizeof(mounts), "%s/mounts", dir);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(meminfo);
	unlink(mounts);
	return rmdir(dir);
}

static void
test_mounted_2mb(void **state)
{
	(void)state;
	write_meminfo(512, 203, 2048);
	write_file(mounts, MOUNTS_HUGE);
	assert_int_equal(eal_hugepages_free_mb(meminfo, mounts), 406);

	/* the free count, not the total: all in use -> nothing for surge */
	write_meminfo(512, 0, 2048);
	assert_int_equal(eal_hugepages_free_mb(meminfo, mounts), 0);
}

static void
test_mounted_1gb(void **state)
{
	(void)state;
	write_meminfo(8, 3, 1048576);
	write_file(mounts, "none /mnt/huge1g hugetlbfs rw,relatime,pagesize=1024M 0 0\n");
	assert_int_equal(eal_hugepages_free_mb(meminfo, mounts), 3 * 1024);
}

static void
test_not_mounted(void **state)
{
	(void)state;
	write_meminfo(512, 512, 2048);
	write_file(mounts, MOUNTS_PLAIN);
	assert_int_equal(eal_hugepages_free_mb(meminfo, mounts), 0);

	/* "hugetlbfs" as a device name or path is not a hugetlbfs mount */
	write_file(mounts, "hugetlbfs /mnt/hugetlbfs tmpfs rw 0 0\n");
	assert_int_equal(eal_hugepages_free_mb(meminfo, mounts), 0);

	write_file(mounts, "");
	assert_int_equal(eal_hugepages_free_mb(meminfo, mounts), 0);
}

static void
test_missing_files(void **state)
{
	char nowhere[160];

	(void)state;
	snprintf(nowhere, sizeof(nowhere), "%s/does-not-exist", dir);
	write_meminfo(512, 512, 2048);
	write_file(mounts, MOUNTS_HUGE);
	assert_int_equal(eal_hugepages_free_mb(nowhere, mounts), 0);
	assert_int_equal(eal_hugepages_free_mb(meminfo, nowhere), 0);
	assert_int_equal(eal_hugepages_free_mb(nowhere, nowhere), 0);
	/* the same pair with both files present does count: the zeros above
	 * come from the missing file, not from the data */
	assert_int_equal(eal_hugepages_free_mb(meminfo, mounts), 1024);
}

static void
test_no_hugepage_lines(void **state)
{
	(void)state;
	/* a kernel without hugetlb support has neither line */
	write_file(meminfo, "MemTotal:       16301300 kB\nMemFree:         9000000 kB\n");
	write_file(mounts, MOUNTS_HUGE);
	assert_int_equal(eal_hugepages_free_mb(meminfo, mounts), 0);

	/* a page size without a free count (or the reverse) is not enough */
	write_file(meminfo, "Hugepagesize:       2048 kB\n");
	assert_int_equal(eal_hugepages_free_mb(meminfo, mounts), 0);
	write_file(meminfo, "HugePages_Free:     100\n");
	assert_int_equal(eal_hugepages_free_mb(meminfo, mounts), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mounted_2mb),
		cmocka_unit_test(test_mounted_1gb),
		cmocka_unit_test(test_not_mounted),
		cmocka_unit_test(test_missing_files),
		cmocka_unit_test(test_no_hugepage_lines),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
