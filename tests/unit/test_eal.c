/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_eal.c - the hugepage probe behind surge's automatic --no-huge
 * (eal_hugepages_free_mb in core/run/eal.c), fed fake /proc files.
 *
 * Proves: free pages of a mounted hugetlbfs count (2 MB and 1 GB pages), an
 * unmounted hugetlbfs, missing files and a meminfo without hugepage lines
 * all count as 0 MB, so surge falls back to --no-huge instead of failing.
 * The start-up sweep (eal_sweep_dead_runs) removes a dead run's surge-PID
 * folder holding EAL's files, and nothing else: not a live pid's, not this
 * process's, not other names, not a symlink, not a folder with a file EAL
 * does not make or a socket that still answers.
 * `surge repl`'s default lcore map (eal_repl_lcores): four lcores over the
 * CPUs it may use when it has fewer, EAL's own default from four CPUs up.
 * No EAL is started.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
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

/* snprintf that fails the test on truncation (the paths here are short) */
static void __attribute__((format(printf, 3, 4)))
fmt(char *buf, size_t len, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(buf, len, f, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < len);
}

/* base/name as a folder holding the given entries (NULL-ended). */
static void
make_run_dir(const char *base, const char *name, const char *const *files)
{
	char path[PATH_MAX];

	fmt(path, sizeof(path), "%s/%s", base, name);
	assert_int_equal(mkdir(path, 0700), 0);
	for (; files != NULL && *files != NULL; files++) {
		fmt(path, sizeof(path), "%s/%s/%s", base, name, *files);
		write_file(path, "");
	}
}

static int
exists(const char *base, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	fmt(path, sizeof(path), "%s/%s", base, name);
	return lstat(path, &st) == 0;
}

static void
test_sweep(void **state)
{
	static const char *const eal_files[] = { "dpdk_telemetry.v2", NULL };
	static const char *const odd_files[] = { "dpdk_telemetry.v2", "notes.txt", NULL };
	char base[PATH_MAX], live[32], self[32], path[PATH_MAX], target[PATH_MAX];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd;

	(void)state;
	fmt(base, sizeof(base), "%s/dpdk", dir);
	assert_int_equal(mkdir(base, 0700), 0);
	/* pid_max is at most 4194304: these pids do not exist */
	make_run_dir(base, "surge-99999901", eal_files);        /* dead, EAL's files: removed */
	make_run_dir(base, "surge-99999902", NULL);             /* dead, empty: removed */
	make_run_dir(base, "surge-99999903", odd_files);        /* a file EAL does not make */
	make_run_dir(base, "notsurge-99999904", eal_files);
	make_run_dir(base, "surge-99999905x", eal_files);
	make_run_dir(base, "surge-099999906", eal_files);       /* not how a pid is written */
	make_run_dir(base, "rte", eal_files);
	fmt(live, sizeof(live), "surge-%d", (int)getppid());
	make_run_dir(base, live, eal_files);                    /* a live process's */
	fmt(self, sizeof(self), "surge-%d", (int)getpid());
	make_run_dir(base, self, eal_files);                    /* this process's */
	/* a symlink named like a dead run's, to a folder of EAL's files */
	make_run_dir(dir, "elsewhere", eal_files);
	fmt(target, sizeof(target), "%s/elsewhere", dir);
	fmt(path, sizeof(path), "%s/surge-99999907", base);
	assert_int_equal(symlink(target, path), 0);
	/* a dead pid's folder whose telemetry socket still answers */
	make_run_dir(base, "surge-99999908", NULL);
	fmt(sa.sun_path, sizeof(sa.sun_path), "%s/surge-99999908/dpdk_telemetry.v2", base);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	/* one whose socket is gone (bound, then closed): removed */
	make_run_dir(base, "surge-99999909", NULL);
	{
		struct sockaddr_un sb = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

		fmt(sb.sun_path, sizeof(sb.sun_path), "%s/surge-99999909/dpdk_telemetry.v2", base);
		assert_int_equal(bind(fd, (struct sockaddr *)&sb, sizeof(sb)), 0);
		assert_int_equal(listen(fd, 1), 0);
		close(fd);
	}

	assert_int_equal(eal_sweep_dead_runs(base), 3);
	assert_false(exists(base, "surge-99999901"));
	assert_false(exists(base, "surge-99999902"));
	assert_false(exists(base, "surge-99999909"));
	assert_true(exists(base, "surge-99999903"));
	assert_true(exists(base, "notsurge-99999904"));
	assert_true(exists(base, "surge-99999905x"));
	assert_true(exists(base, "surge-099999906"));
	assert_true(exists(base, "rte"));
	assert_true(exists(base, live));
	assert_true(exists(base, self));
	assert_true(exists(base, "surge-99999907"));
	assert_true(exists(dir, "elsewhere/dpdk_telemetry.v2"));
	assert_true(exists(base, "surge-99999908/dpdk_telemetry.v2"));
	/* a second sweep finds nothing more; a missing base is no error */
	assert_int_equal(eal_sweep_dead_runs(base), 0);
	fmt(path, sizeof(path), "%s/nowhere", dir);
	assert_int_equal(eal_sweep_dead_runs(path), 0);
	close(lfd);
	fmt(path, sizeof(path), "rm -rf '%s' '%s'", base, target);
	assert_int_equal(system(path), 0);
}

static void
test_repl_lcores(void **state)
{
	char buf[64];

	(void)state;
	eal_repl_lcores(buf, sizeof(buf), "0", 1);
	assert_string_equal(buf, "(0-3)@(0)");
	eal_repl_lcores(buf, sizeof(buf), "2,5-6", 3);
	assert_string_equal(buf, "(0-3)@(2,5-6)");
	eal_repl_lcores(buf, sizeof(buf), "0-3", 4);   /* one lcore per CPU is enough */
	assert_string_equal(buf, "");
	eal_repl_lcores(buf, sizeof(buf), "", 0);      /* affinity unknown: EAL's default */
	assert_string_equal(buf, "");
	/* surge otg's: eight (master and seven ports' tasks) */
	eal_floating_lcores(buf, sizeof(buf), "0-1", 2, 8);
	assert_string_equal(buf, "(0-7)@(0-1)");
	eal_floating_lcores(buf, sizeof(buf), "0-7", 8, 8);
	assert_string_equal(buf, "");
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
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_repl_lcores),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
