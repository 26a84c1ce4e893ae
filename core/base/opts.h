/* SPDX-License-Identifier: BSD-3-Clause
 *
 * opts.h - surge's own options, as front/cli.c parses them (before DPDK is
 * touched) and every layer reads them from the run context.
 */
#ifndef SURGE_OPTS_H
#define SURGE_OPTS_H

#include <stddef.h>

#define SURGE_MAX_DEVS 32

enum surge_cmd { CMD_NONE, CMD_RUN, CMD_TEST, CMD_DEVICES, CMD_SHOW, CMD_PLOT, CMD_HELP, CMD_VERSION,
		 CMD_REPL, CMD_ATTACH, CMD_SCENARIOS, CMD_OTG };

struct surge_opts {
	enum surge_cmd cmd;
	const char *vdev[SURGE_MAX_DEVS];
	int nvdev;
	const char *pci[SURGE_MAX_DEVS];
	int npci;
	const char *path[SURGE_MAX_DEVS]; /* --path: module and scenario folders */
	int npath;
	const char *lcores;       /* EAL --lcores syntax, NULL = one per CPU */
	const char *eal;          /* extra EAL arguments, split on spaces */
	int no_huge;
	int quiet;
	double duration;          /* seconds, 0 = until the script ends */
	double stats_interval;    /* seconds between lines, 0 = none */
	int stats_interval_set;   /* --stats-interval given: a scenario keeps it */
	int packets;              /* show: how many packets to print */
	const char *output;       /* --output FILE (.json, .csv, - for JSON on stdout) */
	const char *file_prefix;  /* --file-prefix NAME, NULL = surge-PID */
	int argc;                 /* surge's whole command line, for the results */
	char **argv;
	int interactive;          /* run -i: the prompt opens at surge.wait() */
	const char *control;      /* run/repl --control PATH; attach: the socket */
	const char *eval;         /* attach -e CODE */
	const char *metrics;      /* run/repl --metrics [ADDR:]PORT as given, NULL = none */
	char metrics_addr[48];    /* its numeric address (127.0.0.1 when none was given) */
	int metrics_port;         /* its port, 0 = any free one */
	unsigned long long vm_memory; /* bytes each Lua VM may allocate, 0 = vm_budget_default() */
	double stop_grace;        /* seconds from a stop to the watchdog */
	const char *otg_listen;   /* otg --listen ADDR:PORT as given, NULL = 127.0.0.1:8443 */
	char otg_addr[48];        /* its numeric address */
	int otg_port;
	int otg_http;             /* otg --http: plain HTTP, not HTTPS */
	const char *otg_cert;     /* otg --cert/--key: PEM files, NULL = the self-signed pair */
	const char *otg_key;
	const char *script;       /* run: the script; test: NULL */
	int script_argc;          /* what follows the script (or test files) */
	char **script_argv;
};

#define SURGE_VM_MEMORY_DEFAULT (1ULL << 30)
#define SURGE_VM_MEMORY_MIN (16ULL << 20)
#define SURGE_STOP_GRACE_DEFAULT 2.0
#define SURGE_STATS_INTERVAL_MIN 0.01

#endif
