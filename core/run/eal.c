/* SPDX-License-Identifier: BSD-3-Clause
 *
 * eal.c - start DPDK's EAL from surge options.
 *
 * Two decisions happen here so that `surge run flood.lua` works on a machine
 * with no NIC and no hugepages: without free, mounted hugepages surge adds
 * --no-huge itself, and with no device named and none found it probes the
 * virtual sink net_null0 (no-rx=1). Each says so in one line.
 */
#define _GNU_SOURCE       /* sched_getaffinity, CPU_ISSET */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_pci.h>

#include "run.h"

#define EAL_ARGV_MAX 128
#define HUGE_MIN_MB 256            /* enough for the default pools and rings */
#define NO_HUGE_MEM_MB "1024"
#define VIRTUAL_DEFAULT "net_null0,no-rx=1"

/* The ports a run gets when it names none and no NIC is bound to DPDK: a
 * sink; `surge test` gets the ones its Lua tests are written for (port 0 a
 * loopback ring, port 1 the sink), as ctest runs them. */
static const char *const *
default_vdevs(enum surge_cmd cmd)
{
	static const char *const run[] = { VIRTUAL_DEFAULT, NULL };
	static const char *const test[] = { "net_ring0", VIRTUAL_DEFAULT, NULL };
	static const char *const none[] = { NULL };   /* otg: its ports come from /config */

	return cmd == CMD_TEST ? test : cmd == CMD_OTG ? none : run;
}

/* Free hugepage memory in MB that DPDK can use: free pages of the default
 * size, and only when a hugetlbfs is mounted. Paths are parameters so the
 * unit tests can feed their own files. */
long
eal_hugepages_free_mb(const char *meminfo, const char *mounts)
{
	char line[512];
	long free_pages = -1, page_kb = -1;
	int mounted = 0;
	FILE *f = fopen(mounts, "r");

	if (f != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strstr(line, " hugetlbfs ") != NULL)
				mounted = 1;
		fclose(f);
	}
	f = fopen(meminfo, "r");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		sscanf(line, "HugePages_Free: %ld", &free_pages);
		sscanf(line, "Hugepagesize: %ld kB", &page_kb);
	}
	fclose(f);
	if (!mounted || free_pages < 0 || page_kb < 0)
		return 0;
	return free_pages * page_kb / 1024;
}

/* True when some PCI device is bound to a driver DPDK can use: a userspace
 * I/O driver, or a bifurcated one (mlx4/mlx5) that DPDK drives beside the
 * kernel. Scanning PCI otherwise only makes DPDK complain about the
 * machine's own kernel NICs. */
static int
pci_nic_available(void)
{
	static const char *const drivers[] = { "vfio-pci", "uio_pci_generic", "igb_uio",
					       "mlx5_core", "mlx4_core" };
	char path[128];

	for (size_t i = 0; i < RTE_DIM(drivers); i++) {
		DIR *d;
		struct dirent *e;
		int found = 0;

		snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s", drivers[i]);
		if ((d = opendir(path)) == NULL)
			continue;
		while (!found && (e = readdir(d)) != NULL)
			found = strchr(e->d_name, ':') != NULL;   /* a PCI address */
		closedir(d);
		if (found)
			return 1;
	}
	return 0;
}

static int
push(char **argv, int *argc, const char *s)
{
	if (*argc >= EAL_ARGV_MAX - 1)
		return rt_error(-E2BIG, "too many EAL arguments");
	argv[(*argc)++] = strdup(s);
	argv[*argc] = NULL;
	return argv[*argc - 1] == NULL ? -ENOMEM : 0;
}

static int
push_split(char **argv, int *argc, const char *s)
{
	char *copy = strdup(s), *save = NULL, *tok;
	int rc = 0;

	if (copy == NULL)
		return -ENOMEM;
	for (tok = strtok_r(copy, " \t", &save); tok != NULL && rc == 0;
	     tok = strtok_r(NULL, " \t", &save))
		rc = push(argv, argc, tok);
	free(copy);
	return rc;
}

static void cpu_list_format(const cpu_set_t *set, char *buf, size_t len);

/* `surge repl` with no lcore map of the user's: at least REPL_LCORES
 * lcores (master, a sender, a receiver and one spare), floating over the
 * CPUs this process may run on when there are fewer of them, so the
 * prompt's common case (a TX and an RX task on a loopback) never meets
 * "no free lcore" on a small machine. `cpus` is that CPU set as --lcores
 * reads it, `ncpus` how many it holds. Writes the --lcores value, or ""
 * when EAL's default (one lcore per CPU) already gives enough. */
#define REPL_LCORES 4
void
eal_repl_lcores(char *buf, size_t len, const char *cpus, int ncpus)
{
	eal_floating_lcores(buf, len, cpus, ncpus, REPL_LCORES);
}

/* `surge otg`: master and a task per port of a config, up to OTG_LCORES - 1
 * ports without --lcores (docs/otg.md) */
#define OTG_LCORES 8

void
eal_floating_lcores(char *buf, size_t len, const char *cpus, int ncpus, int want)
{
	if (ncpus >= want || cpus == NULL || cpus[0] == '\0')
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "(0-%d)@(%s)", want - 1, cpus);
}

/* Whether --eal already maps lcores (-l, -c, --lcores): then it is theirs. */
static int
eal_maps_lcores(const char *eal)
{
	char *copy, *save = NULL, *tok;
	int found = 0;

	if (eal == NULL || (copy = strdup(eal)) == NULL)
		return eal != NULL;      /* (out of memory: leave lcores to EAL) */
	for (tok = strtok_r(copy, " \t", &save); tok != NULL && !found; tok = strtok_r(NULL, " \t", &save))
		found = strncmp(tok, "-l", 2) == 0 || strncmp(tok, "-c", 2) == 0 ||   /* -l 0-3, -l0-3 */
			strcmp(tok, "--lcores") == 0 || strncmp(tok, "--lcores=", 9) == 0;
	free(copy);
	return found;
}

/* EAL options surge cannot honour: a secondary process waits forever for a
 * primary that surge's private (--in-memory or per-process) runtime never
 * provides, and surge owns the ports it uses. */
static int
refuse_eal_options(const char *eal)
{
	static const struct { const char *opt, *why; } refused[] = {
		{ "--proc-type", "surge always runs as its own primary process (a secondary would wait "
				 "forever for a primary)" },
	};

	if (eal == NULL)
		return 0;
	for (size_t i = 0; i < RTE_DIM(refused); i++) {
		const char *at = strstr(eal, refused[i].opt);

		if (at == NULL)
			continue;
		/* --proc-type=primary changes nothing: allow it */
		if ((strncmp(at, "--proc-type=primary", 19) == 0 ||
			       strncmp(at, "--proc-type primary", 19) == 0))
			continue;
		return rt_error(-EINVAL, "--eal: %s is not supported: %s", refused[i].opt, refused[i].why);
	}
	return 0;
}

static int
build_argv(const struct surge_opts *o, const char *prog, char **argv, int *argc)
{
	char prefix[64];
	int rc = 0, no_huge = o->no_huge;

	if ((rc = refuse_eal_options(o->eal)) != 0)
		return rc;
	if (!no_huge && o->eal != NULL && strstr(o->eal, "--no-huge") != NULL)
		no_huge = 1;
	if (!no_huge) {
		long mb = eal_hugepages_free_mb("/proc/meminfo", "/proc/mounts");

		if (mb < HUGE_MIN_MB) {
			fprintf(stderr, "surge: %ld MB of hugepages free (need %d): running with --no-huge\n",
				mb, HUGE_MIN_MB);
			no_huge = 1;
		}
	}
	rc |= push(argv, argc, prog);
	rc |= push(argv, argc, "--log-level=warning");
	rc |= push(argv, argc, "--log-level=lib.telemetry:error");
	/* Every run has its own prefix, so its telemetry socket is
	 * /var/run/dpdk/PREFIX/dpdk_telemetry.v2 (--in-memory alone would put
	 * every surge on the shared default "rte"). */
	const char *user = o->eal != NULL ? strstr(o->eal, "--file-prefix") : NULL;

	if (user != NULL)      /* one given in --eal wins, as EAL takes the last */
		snprintf(prefix, sizeof(prefix), "%.*s", (int)strcspn(user + 14, " \t"), user + 14);
	else if (o->file_prefix != NULL)
		snprintf(prefix, sizeof(prefix), "%s", o->file_prefix);
	else
		snprintf(prefix, sizeof(prefix), "surge-%d", (int)getpid());
	snprintf(rt()->file_prefix, sizeof(rt()->file_prefix), "%s", prefix);
	if (no_huge) {
		/* --no-huge implies legacy memory, which --in-memory refuses; with
		 * no shared config and a per-process prefix nothing is left behind */
		rc |= push(argv, argc, "--no-huge");
		rc |= push(argv, argc, "-m");
		rc |= push(argv, argc, NO_HUGE_MEM_MB);
		rc |= push(argv, argc, "--no-shconf");
	} else {
		rc |= push(argv, argc, "--in-memory");   /* no files left behind */
	}
	rc |= push(argv, argc, "--file-prefix");
	rc |= push(argv, argc, prefix);
	if (o->lcores != NULL) {
		rc |= push(argv, argc, "--lcores");
		rc |= push(argv, argc, o->lcores);
	} else if ((o->cmd == CMD_REPL || o->cmd == CMD_OTG) && !eal_maps_lcores(o->eal)) {
		char cpus[256], map[300];
		cpu_set_t set;

		CPU_ZERO(&set);
		if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
			cpu_list_format(&set, cpus, sizeof(cpus));
			if (o->cmd == CMD_OTG)
				eal_floating_lcores(map, sizeof(map), cpus, CPU_COUNT(&set), OTG_LCORES);
			else
				eal_repl_lcores(map, sizeof(map), cpus, CPU_COUNT(&set));
			if (map[0] != '\0') {
				rc |= push(argv, argc, "--lcores");
				rc |= push(argv, argc, map);
			}
		}
	}
	for (int i = 0; i < o->nvdev; i++) {
		rc |= push(argv, argc, "--vdev");
		rc |= push(argv, argc, o->vdev[i]);
	}
	for (int i = 0; i < o->npci; i++) {
		rc |= push(argv, argc, "-a");
		rc |= push(argv, argc, o->pci[i]);
	}
	if (o->nvdev == 0 && o->npci == 0 && !pci_nic_available()) {
		const char *const *d = default_vdevs(o->cmd);

		for (int i = 0; d[i] != NULL; i++) {
			rc |= push(argv, argc, "--vdev");
			rc |= push(argv, argc, d[i]);
		}
		if (d[0] != NULL && o->cmd == CMD_TEST)
			rt_info("no device given and no NIC bound to DPDK: port 0 is the loopback %s, "
				"port 1 the sink %s", d[0], d[1]);
		else if (d[0] != NULL)
			rt_info("no device given and no NIC bound to DPDK: using the virtual sink %s", d[0]);
	}
	if (o->npci == 0 && (o->nvdev > 0 || !pci_nic_available()))
		rc |= push(argv, argc, "--no-pci");
	if (o->eal != NULL)
		rc |= push_split(argv, argc, o->eal);
	return rc != 0 ? -ENOMEM : 0;
}

/* The notices EAL prints on healthy machines (the 1 GB hugepage line on
 * every run of a machine with only 2 MB pages): never shown, they say
 * nothing wrong, and surge says itself when it runs without hugepages.
 * Anything else EAL says (real warnings) is always shown. */
static int
harmless_notice(const char *line)
{
	static const char *const notices[] = {
		"No free ", "No available ",            /* "... 1048576 kB hugepages reported on node 0" */
		"Detected CPU lcores", "Detected NUMA nodes", "Detected static linkage",
		"Selected IOVA mode", "Multi-process socket", "VFIO support initialized",
	};

	if (strncmp(line, "EAL: ", 5) != 0)
		return 0;
	for (size_t i = 0; i < RTE_DIM(notices); i++)
		if (strncmp(line + 5, notices[i], strlen(notices[i])) == 0)
			return 1;
	return 0;
}

static int check_probed(const struct surge_opts *o);

/* rte_eal_init prints its whole usage text on a bad argument. Its output
 * goes to a temporary file instead: replayed as it was when start-up works,
 * boiled down to its first complaint when it fails. */
struct capture {
	FILE *tmp;
	int saved_out, saved_err;
};

static void
capture_begin(struct capture *c)
{
	fflush(stdout);
	fflush(stderr);
	c->tmp = tmpfile();
	c->saved_out = c->saved_err = -1;
	if (c->tmp == NULL)
		return;
	c->saved_out = dup(STDOUT_FILENO);
	c->saved_err = dup(STDERR_FILENO);
	dup2(fileno(c->tmp), STDOUT_FILENO);
	dup2(fileno(c->tmp), STDERR_FILENO);
}

/* Restores the streams; on failure copies EAL's first complaint to `why`. */
static void
capture_end(struct capture *c, int failed, char *why, size_t whylen)
{
	char line[512];

	why[0] = '\0';
	if (c->tmp == NULL)
		return;
	fflush(stdout);
	fflush(stderr);
	dup2(c->saved_out, STDOUT_FILENO);
	dup2(c->saved_err, STDERR_FILENO);
	close(c->saved_out);
	close(c->saved_err);
	rewind(c->tmp);
	while (fgets(line, sizeof(line), c->tmp) != NULL) {
		if (!failed) {
			if (!harmless_notice(line))
				fputs(line, stderr);
		} else if (why[0] == '\0' && strncmp(line, "EAL: ", 5) == 0 &&
			   strstr(line, "FATAL") == NULL) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(why, whylen, "%.200s", line + 5);
		}
	}
	fclose(c->tmp);
}

/* "0-3,8,10-11", as Linux writes Cpus_allowed_list and --lcores reads a
 * CPU set; cut short (never mid-number) when buf is too small. */
static void
cpu_list_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE; c++) {
		int last = c;
		char item[32];
		size_t n;

		if (!CPU_ISSET(c, set))
			continue;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
			last++;
		n = last > c ? (size_t)snprintf(item, sizeof(item), "%s%d-%d", at ? "," : "", c, last)
			     : (size_t)snprintf(item, sizeof(item), "%s%d", at ? "," : "", c);
		if (at + n >= len)
			break;
		memcpy(buf + at, item, n + 1);
		at += n;
		c = last;
	}
}

/* The CPUs this process may run on, as it started, into the run context:
 * EAL pins the main thread to lcore 0's CPUs, so it is read before
 * rte_eal_init (the "no free lcore" hint names them). */
static void
startup_cpus_read(void)
{
	char *buf = rt()->startup_cpus;
	size_t len = sizeof(rt()->startup_cpus);
	cpu_set_t set;
	long online;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
		cpu_list_format(&set, buf, len);
		return;
	}
	online = sysconf(_SC_NPROCESSORS_ONLN);
	if (online > 1)
		snprintf(buf, len, "0-%ld", online - 1);
	else
		snprintf(buf, len, "0");
}

int
eal_start(const struct surge_opts *o, const char *prog)
{
	char *argv[EAL_ARGV_MAX] = { NULL };
	char prefix_dir[PATH_MAX] = "";
	int argc = 0, rc;

	rc = build_argv(o, prog, argv, &argc);
	for (int i = 0; i + 1 < argc; i++)
		if (strcmp(argv[i], "--file-prefix") == 0 && strncmp(argv[i + 1], "surge-", 6) == 0)
			snprintf(prefix_dir, sizeof(prefix_dir), "/var/run/dpdk/%s", argv[i + 1]);
	if (rc == 0) {
		/* rte_eal_init may reorder argv; we own the strings either way */
		char *copy[EAL_ARGV_MAX];
		struct capture cap;
		char why[256];

		memcpy(copy, argv, sizeof(copy));
		startup_cpus_read();
		capture_begin(&cap);
		rc = rte_eal_init(argc, copy);
		capture_end(&cap, rc < 0, why, sizeof(why));
		if (rc < 0) {
			rc = rt_error(-rte_errno, "DPDK start-up failed: %s (check --vdev, --pci, --lcores, --eal)",
				      why[0] ? why : rte_strerror(rte_errno));
			if (prefix_dir[0] != '\0')
				eal_remove_runtime_dir(prefix_dir);   /* a failed start leaves it behind */
		} else {
			rc = 0;
		}
	}
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	if (rc == -ENOMEM && strcmp(surge_last_error(), "no error") == 0)
		rc = rt_error(-ENOMEM, "out of memory for the EAL arguments");
	if (rc != 0)
		return rc;
	rt()->eal_up = 1;
	return check_probed(o);
}

/* No device named and none found: the virtual sink, said in one line. */
int
eal_default_port(const struct surge_opts *o)
{
	int rc;

	if (rte_eth_dev_count_avail() != 0 || o->nvdev != 0 || o->npci != 0)
		return 0;
	for (const char *const *d = default_vdevs(o->cmd); *d != NULL; d++) {
		rc = rte_dev_probe(*d);
		if (rc < 0)
			return rt_error(rc, "no port found and the virtual default %s failed: %s",
					*d, rte_strerror(-rc));
		rt_info("no port found: using the virtual device %s", *d);
	}
	return 0;
}

/* EAL starts even when a device named with --vdev or --pci fails to probe
 * (it only warns): such a run would go on without the port the user asked
 * for. Each named device must have become a port. */
static int
check_probed(const struct surge_opts *o)
{
	uint16_t port;

	for (int i = 0; i < o->nvdev; i++) {
		char name[RTE_ETH_NAME_MAX_LEN];

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(o->vdev[i], ","), o->vdev[i]);
		if (rte_eth_dev_get_port_by_name(name, &port) != 0)
			return rt_error(-ENODEV, "--vdev %s: the device failed to start (its driver's "
					"reason is printed above)", o->vdev[i]);
	}
	for (int i = 0; i < o->npci; i++) {
		struct rte_pci_addr want, got;
		int found = 0;

		if (rte_pci_addr_parse(o->pci[i], &want) != 0)
			return rt_error(-EINVAL, "--pci %s: not a PCI address (like 0000:01:00.0)", o->pci[i]);
		RTE_ETH_FOREACH_DEV(port) {
			struct rte_eth_dev_info info;

			if (rte_eth_dev_info_get(port, &info) == 0 && info.device != NULL &&
			    rte_pci_addr_parse(rte_dev_name(info.device), &got) == 0 &&
			    rte_pci_addr_cmp(&want, &got) == 0)
				found = 1;
		}
		if (!found)
			return rt_error(-ENODEV, "--pci %s: no port came up for this device (not bound to "
					"a DPDK driver, or its driver failed; see above)", o->pci[i]);
	}
	return 0;
}

void
eal_stop(void)
{
	char dir[PATH_MAX];

	eal_own_runtime_dir(dir, sizeof(dir));
	rt_tsc_check();
	rte_eal_cleanup();
	if (dir[0] != '\0')
		eal_remove_runtime_dir(dir);
}
