/* SPDX-License-Identifier: BSD-3-Clause
 *
 * run_dir.c - EAL's runtime folders (/var/run/dpdk/PREFIX): surge's own is
 * removed when the process ends, normally or by the watchdog, and the
 * folders of earlier surge runs that were killed are removed at start.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_eal.h>

#include "run.h"

/* Without --in-memory EAL keeps a runtime folder (sockets, no config files
 * with --no-shconf) under /var/run/dpdk/PREFIX; ours is per process, so it
 * goes with the process. */
void
eal_remove_runtime_dir(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* The runtime folder EAL made for this process, when it is surge's own to
 * remove: a surge-PID prefix, or a name given with surge's --file-prefix
 * (one given in --eal is the user's own). The one rule for the normal exit
 * and the watchdog's. */
void
eal_own_runtime_dir(char *dir, size_t len)
{
	const char *rd = rte_eal_get_runtime_dir();
	const struct surge_opts *o = &rt()->opts;
	int ours = rd != NULL && (strstr(rd, "/surge-") != NULL ||
				  (o->file_prefix != NULL && (o->eal == NULL || strstr(o->eal, "--file-prefix") == NULL)));

	snprintf(dir, len, "%s", ours ? rd : "");
}

void
eal_forget(void)
{
	char dir[PATH_MAX];

	eal_own_runtime_dir(dir, sizeof(dir));
	if (dir[0] != '\0')
		eal_remove_runtime_dir(dir);
}

/* The runtime folders of earlier surge runs that were killed (SIGKILL, a
 * crash): no exit path of theirs removed them. Removed at start-up, and only
 * those that are surely surge's and surely dead:
 *   - a real folder (not a symlink) named exactly surge-N, N a pid as
 *     "%d" writes it, not this process's, owned by this user;
 *   - no process N (kill(N, 0) fails with ESRCH);
 *   - only what EAL puts there (plain files or sockets with EAL's names),
 *     and no socket in it still answers (a live process in another pid
 *     namespace, or one that reused the pid, keeps its folder).
 * Anything else is left alone; a failure only leaves a folder behind. */
static int
eal_entry_name(const char *n)
{
	static const char *const exact[] = { "dpdk_telemetry.v2", "dpdk_telemetry.v1", "telemetry",
					     "mp_socket", "config", "hugepage_info" };
	static const char *const prefix[] = { "dpdk_telemetry.v2:", "mp_socket_", "fbarray_" };

	for (size_t i = 0; i < RTE_DIM(exact); i++)
		if (strcmp(n, exact[i]) == 0)
			return 1;
	for (size_t i = 0; i < RTE_DIM(prefix); i++)
		if (strncmp(n, prefix[i], strlen(prefix[i])) == 0)
			return 1;
	return 0;
}

/* True when a process listens on the unix socket at path (or the path is
 * too long to try: then it counts as live). */
static int
socket_answers(const char *path)
{
	static const int types[] = { SOCK_SEQPACKET, SOCK_STREAM, SOCK_DGRAM };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(path) >= sizeof(sa.sun_path))
		return 1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	for (size_t i = 0; i < RTE_DIM(types); i++) {
		int fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), ok;

		if (fd < 0)
			continue;
		ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN;
		close(fd);
		if (ok)
			return 1;
	}
	return 0;
}

/* Removes base/name when it holds only EAL's dead leftovers; 1 when removed. */
static int
sweep_one(int basefd, const char *base, const char *name)
{
	struct stat st, dst;
	struct dirent *e;
	char path[PATH_MAX];
	int fd, ok = 1, removed = 0;
	DIR *d;

	if (fstatat(basefd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid())
		return 0;
	fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &dst) != 0 || dst.st_dev != st.st_dev || dst.st_ino != st.st_ino ||
	    (d = fdopendir(fd)) == NULL) {
		close(fd);
		return 0;
	}
	/* first look: everything in it must be EAL's and dead */
	while (ok && (e = readdir(d)) != NULL) {
		struct stat est;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		ok = eal_entry_name(e->d_name) && fstatat(fd, e->d_name, &est, AT_SYMLINK_NOFOLLOW) == 0 &&
		     (S_ISREG(est.st_mode) || S_ISSOCK(est.st_mode));
		if (ok && S_ISSOCK(est.st_mode))
			ok = snprintf(path, sizeof(path), "%s/%s/%s", base, name, e->d_name) <
				     (int)sizeof(path) && !socket_answers(path);
	}
	if (ok) {
		rewinddir(d);
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				unlinkat(fd, e->d_name, 0);
		removed = unlinkat(basefd, name, AT_REMOVEDIR) == 0;
	}
	closedir(d);
	return removed;
}

int
eal_sweep_dead_runs(const char *base)
{
	char dflt[PATH_MAX];
	struct dirent *e;
	int fd, n = 0;
	DIR *d;

	if (base == NULL) {   /* where EAL puts its runtime folders */
		const char *xdg = getenv("XDG_RUNTIME_DIR");

		snprintf(dflt, sizeof(dflt), "%s/dpdk",
			 getuid() == 0 ? "/var/run" : xdg != NULL ? xdg : "/tmp");
		base = dflt;
	}
	fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		char want[32];
		char *end;
		long pid;

		if (strncmp(e->d_name, "surge-", 6) != 0 || e->d_name[6] < '0' || e->d_name[6] > '9')
			continue;
		errno = 0;
		pid = strtol(e->d_name + 6, &end, 10);
		if (errno != 0 || *end != '\0' || pid <= 0 || pid > INT_MAX || pid == (long)getpid())
			continue;
		snprintf(want, sizeof(want), "surge-%ld", pid);   /* no leading zeros, no sign */
		if (strcmp(want, e->d_name) != 0)
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		n += sweep_one(fd, base, e->d_name);
	}
	closedir(d);
	return n;
}
