/* SPDX-License-Identifier: BSD-3-Clause
 *
 * boot.c - the one composition root: what a run brings up, in order, and
 * takes down in reverse.
 *
 * Before EAL: the --metrics socket (boot_listen: a bad address or a port
 * in use is refused like a bad option). Up: the runtime folders of killed surge runs swept (eal.c), the
 * writers' locks on net_pcap's tx_pcap= files, EAL (with its
 * hugepage and device fallbacks, eal.c), the run's clock, the probe field,
 * DPDK telemetry's /surge commands, the virtual default port, and the
 * callbacks lower layers notify upper ones through, then the metrics
 * answer (503 before). Then master() runs
 * with the monitor watching. Down: every task stopped and joined (in
 * master.c), the summary, the metrics server joined, the /surge telemetry commands shut (they answer
 * -EINVAL from then on: DPDK cannot unregister them), the ports closed (draining what is still
 * queued), the pcap files closed, every pool proved full again, EAL
 * cleaned up. A leak or a failed task is a failed run.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <math.h>
#include <string.h>

#include "run.h"
#include "conn.h"
#include "hosts.h"

/* A net_pcap device truncates its tx_pcap= file when it starts: take the
 * writers' flock first, so two runs (or a run and a pcap writer) never
 * write one file. */
static int
lock_tx_pcaps(const struct surge_opts *o)
{
	struct runtime *r = rt();

	for (int i = 0; i < o->nvdev; i++) {
		const char *at = strstr(o->vdev[i], "tx_pcap=");
		char path[PATH_MAX];
		int rc;

		if (at == NULL || r->nvdev_lock >= SURGE_MAX_DEVS)
			continue;
		snprintf(path, sizeof(path), "%.*s", (int)strcspn(at + 8, ","), at + 8);
		if ((rc = pcap_lock_path(path, &r->vdev_lock_fd[r->nvdev_lock])) != 0) {
			char why[SURGE_ERR_MAX];

			snprintf(why, sizeof(why), "%s", surge_last_error());
			return rt_error(rc, "--vdev %s: %s", o->vdev[i], why);
		}
		r->nvdev_lock++;
	}
	return 0;
}

/* net_pcap stamps its tx_pcap= records with DPDK's TSC Hz, which EAL
 * rounds to 10 MHz; surge cannot reach into the driver, so it says how far
 * those timestamps are off its own measured clock (issue 22 item 3: 0.149 %
 * on a 2596.13 MHz host), where that is more than the clock's 20 ppm. */
static void
note_pcap_clock(const struct surge_opts *o)
{
	double dpdk = (double)rte_get_tsc_hz(), real = (double)rt()->tsc_hz;
	double pct = dpdk > 0 ? (real / dpdk - 1) * 100 : 0;

	if (fabs(pct) < 0.002)
		return;
	for (int i = 0; i < o->nvdev; i++)
		if (strstr(o->vdev[i], "tx_pcap=") != NULL)
			rt_info("--vdev %s: net_pcap times its records with DPDK's rounded TSC Hz (%.0f), the TSC "
				"runs at %.0f: gaps in that capture are %.3f %% %s (rates read from it %.3f %% %s); "
				"surge's own pcap writer uses the measured Hz", o->vdev[i], dpdk, real, fabs(pct),
				pct < 0 ? "short" : "long", fabs(pct), pct < 0 ? "high" : "low");
}

int
boot_listen(void)
{
	return metrics_start();
}

int
boot_start(const struct surge_opts *o, const char *prog)
{
	int rc;

	/* killed runs (SIGKILL) left their runtime folders: silently swept */
	(void)eal_sweep_dead_runs(NULL);
	if ((rc = lock_tx_pcaps(o)) != 0 || (rc = eal_start(o, prog)) != 0)
		return rc;
	rt_tsc_calibrate();     /* before any lcore paces or stamps */
	note_pcap_clock(o);
	if ((rc = probe_field_register()) != 0)
		return rc;
	if (telemetry_register() == 0 && o->cmd == CMD_RUN)
		rt_info("telemetry: /var/run/dpdk/%s/dpdk_telemetry.v2 (dpdk-telemetry.py -f %s, then /surge/info)",
			rt()->file_prefix, rt()->file_prefix);
	if ((rc = eal_default_port(o)) != 0)
		return rc;
	rt()->port_closing = series_record_now;
	metrics_open();
	return 0;
}

void
boot_abandon(void)
{
	metrics_stop();
	telemetry_close();
	if (rt()->eal_up)
		eal_stop();      /* started, then a device failed: no runtime folder left */
}

int
boot_run(const struct surge_opts *o)
{
	int rc;

	if (o->cmd == CMD_DEVICES) {
		port_print_devices();
		return 0;
	}
	/* the monitor: --duration, stats lines, the watchdog (a typed command
	 * that ignores the stop is stopped as master() is) */
	if ((o->cmd == CMD_RUN || o->cmd == CMD_REPL || o->cmd == CMD_OTG) && monitor_start() != 0) {
		fprintf(stderr, "surge: %s\n", surge_last_error());
		rc = 1;
	} else {
		rc = master_run(o->script, o->script_argc, o->script_argv);
	}
	monitor_stop();
	stats_summary();
	return rc;
}

int
boot_finish(int rc)
{
	/* before anything is freed: DPDK's telemetry thread may be inside a
	 * /surge command (it waits for it) and asks on until the process ends;
	 * the metrics thread is joined */
	metrics_stop();
	telemetry_close();
	if (ports_close_all() > 0 && rc == 0)
		rc = 1;
	if (pcap_close_all() > 0 && rc == 0)
		rc = 1;
	if (pools_check_and_free() > 0 && rc == 0)
		rc = 1;
	latency_free_all();
	conn_free_all();
	hosts_free_all();
	eal_stop();
	return rc;
}
