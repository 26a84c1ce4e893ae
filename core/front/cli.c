/* SPDX-License-Identifier: BSD-3-Clause
 *
 * cli.c - parse `surge COMMAND [surge options] [SCRIPT [script options]]`.
 *
 * Surge options come before the script; everything after the script belongs
 * to it (the script's own configure() parses that). Kept free of DPDK so the
 * unit tests can drive it directly.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <arpa/inet.h>

#include "cli.h"

struct unit {
	const char *suffix;
	double factor;
};

/* A non-negative number followed by one of the units' suffixes (any case),
 * at most `max` once scaled: the one parser behind times and sizes. */
static int
parse_scaled(const char *s, const struct unit *units, double max, double *out)
{
	char *end;
	double v;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	v = strtod(s, &end);
	if (end == s)
		return -EINVAL;
	for (const struct unit *u = units; u->suffix != NULL; u++) {
		if (strcasecmp(end, u->suffix) == 0) {
			if (!(v >= 0.0) || v * u->factor > max)
				return -EINVAL;
			*out = v * u->factor;
			return 0;
		}
	}
	return -EINVAL;
}

int
cli_parse_seconds(const char *s, double *out)
{
	static const struct unit units[] = {
		{ "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "m", 60 }, { "min", 60 }, { "h", 3600 }, { NULL, 0 },
	};

	return parse_scaled(s, units, 1e9, out);
}

int
cli_parse_bytes(const char *s, unsigned long long *out)
{
	static const struct unit units[] = {
		{ "", 1 }, { "b", 1 }, { "k", 1024.0 }, { "kb", 1024.0 }, { "m", 1048576.0 }, { "mb", 1048576.0 },
		{ "g", 1073741824.0 }, { "gb", 1073741824.0 }, { "t", 1099511627776.0 }, { "tb", 1099511627776.0 },
		{ NULL, 0 },
	};
	double v;

	if (parse_scaled(s, units, 1e15, &v) != 0)
		return -EINVAL;
	*out = (unsigned long long)v;
	return 0;
}

/* The name part of a --vdev spec ("net_pcap0" of "net_pcap0,tx_pcap=x"). */
static size_t
vdev_name_len(const char *spec)
{
	return strcspn(spec, ",");
}

#define PLOT_USAGE "surge plot FILE.json [-o OUT.svg|png]"

static int
fail(char *err, size_t errlen, const char *fmt, const char *a, const char *b)
{
	snprintf(err, errlen, fmt, a, b);
	return -EINVAL;
}

/* Returns the option's value from "--opt=value" or the next argument. */
static const char *
take_value(int argc, char **argv, int *i, const char *arg, size_t namelen)
{
	if (arg[namelen] == '=')
		return arg + namelen + 1;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

static int
is_opt(const char *arg, const char *name, size_t *len)
{
	*len = strlen(name);
	return strncmp(arg, name, *len) == 0 && (arg[*len] == '\0' || arg[*len] == '=');
}

static int
parse_command(const char *word, enum surge_cmd *cmd)
{
	static const struct { const char *name; enum surge_cmd cmd; } cmds[] = {
		{ "run", CMD_RUN }, { "test", CMD_TEST }, { "devices", CMD_DEVICES }, { "show", CMD_SHOW },
		{ "plot", CMD_PLOT }, { "scenarios", CMD_SCENARIOS },
		{ "help", CMD_HELP }, { "--help", CMD_HELP }, { "-h", CMD_HELP },
		{ "--version", CMD_VERSION }, { "version", CMD_VERSION },
		{ "repl", CMD_REPL }, { "attach", CMD_ATTACH }, { "otg", CMD_OTG },
	};
	for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
		if (strcmp(word, cmds[k].name) == 0) {
			*cmd = cmds[k].cmd;
			return 0;
		}
	}
	return -EINVAL;
}

/* `surge attach PATH [-e CODE]`: a client, none of the run's options. */
static int
parse_attach(int argc, char **argv, struct surge_opts *o, char *err, size_t errlen)
{
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "-e") == 0 || strcmp(argv[i], "--eval") == 0) {
			if (i + 1 >= argc)
				return fail(err, errlen, "option %s needs Lua code%s", argv[i], "");
			o->eval = argv[++i];
		} else if (argv[i][0] == '-' || o->control != NULL) {
			return fail(err, errlen, "attach: unexpected '%s' (usage: surge attach PATH [-e CODE])%s",
				    argv[i], "");
		} else {
			o->control = argv[i];
		}
	}
	if (o->control == NULL)
		return fail(err, errlen, "attach: missing the socket PATH (usage: surge attach PATH [-e CODE])%s%s",
			    "", "");
	return 0;
}

/* --- one handler per option: the value is there and not empty ---------- */

static int
set_devs(const char *name, const char *v, const char **list, int *cnt, int pci, char *err, size_t errlen)
{
	if (*cnt >= SURGE_MAX_DEVS)
		return fail(err, errlen, "too many %s options%s", name, "");
	for (int k = 0; k < *cnt; k++) {
		size_t len = pci ? strlen(v) : vdev_name_len(v);

		if ((pci ? strlen(list[k]) : vdev_name_len(list[k])) == len && strncmp(list[k], v, len) == 0)
			return fail(err, errlen, "option %s: device '%s' given twice "
				    "(each device needs its own name, e.g. net_ring0 and net_ring1)", name, v);
	}
	list[(*cnt)++] = v;
	return 0;
}

static int
opt_vdev(struct surge_opts *o, const char *v, char *err, size_t errlen)
{
	return set_devs("--vdev", v, o->vdev, &o->nvdev, 0, err, errlen);
}

static int
opt_pci(struct surge_opts *o, const char *v, char *err, size_t errlen)
{
	return set_devs("--pci", v, o->pci, &o->npci, 1, err, errlen);
}

static int
opt_path(struct surge_opts *o, const char *v, char *err, size_t errlen)
{
	if (o->npath >= SURGE_MAX_DEVS)
		return fail(err, errlen, "too many --path options%s%s", "", "");
	o->path[o->npath++] = v;
	return 0;
}

static int
opt_output(struct surge_opts *o, const char *v, char *err, size_t errlen)
{
	size_t l = strlen(v);

	if (strcmp(v, "-") != 0 && (l < 5 || (strcmp(v + l - 5, ".json") != 0 && strcmp(v + l - 4, ".csv") != 0)))
		return fail(err, errlen, "option --output: '%s' must end in .json or .csv (or be - for JSON on stdout)%s", v, "");
	o->output = v;
	return 0;
}

static int
opt_file_prefix(struct surge_opts *o, const char *v, char *err, size_t errlen)
{
	if (strlen(v) > 40 || strpbrk(v, "/ ") != NULL)
		return fail(err, errlen, "option --file-prefix: '%s' must be a name of at most 40 characters without / or spaces%s", v, "");
	o->file_prefix = v;
	return 0;
}

static int
opt_packets(struct surge_opts *o, const char *v, char *err, size_t errlen)
{
	char *end;
	long k = strtol(v, &end, 10);

	if (*end != '\0' || k < 1 || k > 1000000)
		return fail(err, errlen, "option --packets: '%s' is not a count (1..1000000)%s", v, "");
	o->packets = (int)k;
	return 0;
}

static int
opt_vm_memory(struct surge_opts *o, const char *v, char *err, size_t errlen)
{
	if (cli_parse_bytes(v, &o->vm_memory) != 0 || o->vm_memory < SURGE_VM_MEMORY_MIN)
		return fail(err, errlen, "option --vm-memory: '%s' is not a size of 16M or more (try 512M, 2G)%s", v, "");
	return 0;
}

static int
opt_stop_grace(struct surge_opts *o, const char *v, char *err, size_t errlen)
{
	if (cli_parse_seconds(v, &o->stop_grace) != 0 || o->stop_grace < 0.1 || o->stop_grace > 3600)
		return fail(err, errlen, "option --stop-grace: '%s' is not a time from 100ms to 1h (try 2, 500ms)%s", v, "");
	return 0;
}

static int
opt_duration(struct surge_opts *o, const char *v, char *err, size_t errlen)
{
	if (cli_parse_seconds(v, &o->duration) != 0)
		return fail(err, errlen, "option --duration: '%s' is not a time (try 10, 2.5s, 500ms)%s", v, "");
	return 0;
}

static int
opt_stats_interval(struct surge_opts *o, const char *v, char *err, size_t errlen)
{
	o->stats_interval_set = 1;
	if (cli_parse_seconds(v, &o->stats_interval) != 0 ||
	    (o->stats_interval > 0 && o->stats_interval < SURGE_STATS_INTERVAL_MIN))
		return fail(err, errlen, "option --stats-interval: '%s' is not 0 (none) or a time of 10ms or "
			    "more (try 1, 0.5s)%s", v, "");
	return 0;
}

/* [ADDR:]PORT: PORT, :PORT, 0.0.0.0:PORT, [::1]:PORT, the address numeric
 * (nothing to resolve before EAL, no surprise interface), `dflt` unless
 * given. Port 0 (any free one) only where min_port says so. 0 or -EINVAL. */
static int
parse_addr_port(const char *v, char *out, size_t outlen, int *port_out, long min_port, const char *dflt)
{
	const char *colon = strrchr(v, ':'), *port = colon != NULL ? colon + 1 : v;
	size_t alen = colon != NULL ? (size_t)(colon - v) : 0;
	const char *addr = v;
	unsigned char bin[sizeof(struct in6_addr)];
	char *end;
	long p;

	if (alen >= 2 && v[0] == '[' && v[alen - 1] == ']') {
		addr++;
		alen -= 2;
	}
	p = strtol(port, &end, 10);
	if (*port < '0' || *port > '9' || *end != '\0' || p > 65535 || p < min_port || alen >= outlen)
		return -EINVAL;
	if (alen == 0) {
		snprintf(out, outlen, "%s", dflt);
	} else {
		memcpy(out, addr, alen);
		out[alen] = '\0';
		if (inet_pton(AF_INET, out, bin) != 1 && inet_pton(AF_INET6, out, bin) != 1)
			return -EINVAL;
		/* an IPv6 address needs its brackets: "::1:9100" reads two ways */
		if (strchr(out, ':') != NULL && addr == v)
			return -EINVAL;
	}
	*port_out = (int)p;
	return 0;
}

/* An [ADDR:]PORT option's value into addr, *port and *kept (127.0.0.1
 * unless given), or its one-line error naming the option and examples. */
static int
addr_port_option(const char *name, const char *v, char *addr, size_t addrlen, int *port, long min_port,
		 const char **kept, const char *examples, char *err, size_t errlen)
{
	if (parse_addr_port(v, addr, addrlen, port, min_port, "127.0.0.1") == 0) {
		*kept = v;
		return 0;
	}
	snprintf(err, errlen, "option %s: '%s' is not [ADDR:]PORT with a numeric address%s (try %s)", name, v,
		 min_port > 0 ? " and a port 1..65535" : "", examples);
	return -EINVAL;
}

/* --metrics [ADDR:]PORT: 127.0.0.1 unless given: the metrics are readable
 * by anyone who can connect. */
static int
opt_metrics(struct surge_opts *o, const char *v, char *err, size_t errlen)
{
	return addr_port_option("--metrics", v, o->metrics_addr, sizeof(o->metrics_addr), &o->metrics_port, 0,
				&o->metrics, "9100, 127.0.0.1:9100, 0.0.0.0:9100, [::1]:9100", err, errlen);
}

int
cli_parse_listen(const char *v, struct surge_opts *o, char *err, size_t errlen)
{
	return addr_port_option("--listen", v, o->otg_addr, sizeof(o->otg_addr), &o->otg_port, 1,
				&o->otg_listen, "8443, 127.0.0.1:8443, 0.0.0.0:8443, [::1]:8443", err, errlen);
}

static int
opt_listen(struct surge_opts *o, const char *v, char *err, size_t errlen)
{
	return cli_parse_listen(v, o, err, errlen);
}

/* The options before the script: a flag sets an int, a text option keeps
 * its value ("--opt V" or "--opt=V"), any other option's value goes to its
 * handler. `only` limits one to some commands (elsewhere it is unknown);
 * `missing` is the error for an empty value. */
#define ALL_CMDS 0u
#define ONLY(c) (1u << (c))
static const struct option {
	const char *name, *alias;
	size_t flag;            /* offsetof the int a flag sets, 0 = takes a value */
	size_t text;            /* offsetof the const char * a text option sets */
	int (*set)(struct surge_opts *o, const char *v, char *err, size_t errlen);
	unsigned only;
	const char *missing;
} options[] = {
	{ "--no-huge", NULL, offsetof(struct surge_opts, no_huge), 0, NULL, ALL_CMDS, NULL },
	{ "-i", NULL, offsetof(struct surge_opts, interactive), 0, NULL, ONLY(CMD_RUN), NULL },
	{ "--quiet", "-q", offsetof(struct surge_opts, quiet), 0, NULL, ALL_CMDS, NULL },
	{ "--control", NULL, 0, offsetof(struct surge_opts, control), NULL, ONLY(CMD_RUN) | ONLY(CMD_REPL),
	  "option --control needs a socket path" },
	{ "--metrics", NULL, 0, 0, opt_metrics, ONLY(CMD_RUN) | ONLY(CMD_REPL),
	  "option --metrics needs [ADDR:]PORT (try 9100, 127.0.0.1:9100)" },
	{ "--vdev", NULL, 0, 0, opt_vdev, ALL_CMDS, NULL },
	{ "--pci", NULL, 0, 0, opt_pci, ALL_CMDS, NULL },
	{ "--lcores", NULL, 0, offsetof(struct surge_opts, lcores), NULL, ALL_CMDS, NULL },
	{ "--eal", NULL, 0, offsetof(struct surge_opts, eal), NULL, ALL_CMDS, NULL },
	{ "--duration", NULL, 0, 0, opt_duration, ALL_CMDS, NULL },
	{ "--stats-interval", NULL, 0, 0, opt_stats_interval, ALL_CMDS, NULL },
	{ "--packets", NULL, 0, 0, opt_packets, ALL_CMDS, NULL },
	{ "--output", NULL, 0, 0, opt_output, ALL_CMDS, NULL },
	{ "--file-prefix", NULL, 0, 0, opt_file_prefix, ALL_CMDS, NULL },
	{ "--path", NULL, 0, 0, opt_path, ALL_CMDS, NULL },
	{ "--vm-memory", NULL, 0, 0, opt_vm_memory, ALL_CMDS, NULL },
	{ "--stop-grace", NULL, 0, 0, opt_stop_grace, ALL_CMDS, NULL },
	{ "--listen", NULL, 0, 0, opt_listen, ONLY(CMD_OTG), "option --listen needs [ADDR:]PORT (try 8443)" },
	{ "--http", NULL, offsetof(struct surge_opts, otg_http), 0, NULL, ONLY(CMD_OTG), NULL },
	{ "--cert", NULL, 0, offsetof(struct surge_opts, otg_cert), NULL, ONLY(CMD_OTG),
	  "option --cert needs a PEM file" },
	{ "--key", NULL, 0, offsetof(struct surge_opts, otg_key), NULL, ONLY(CMD_OTG), "option --key needs a PEM file" },
};

/* The option `a` names (a flag only without "=value"), or NULL. */
static const struct option *
find_option(const char *a, enum surge_cmd cmd, size_t *len)
{
	for (size_t k = 0; k < sizeof(options) / sizeof(options[0]); k++) {
		const struct option *op = &options[k];

		if (op->only != ALL_CMDS && !(op->only & ONLY(cmd)))
			continue;
		if ((is_opt(a, op->name, len) || (op->alias != NULL && is_opt(a, op->alias, len))) &&
		    (!op->flag || a[*len] == '\0'))
			return op;
	}
	return NULL;
}

/* What follows the options: the script (or plot's file and its -o). */
static int
parse_operands(int argc, char **argv, int i, struct surge_opts *o, char *err, size_t errlen)
{
	if (o->cmd == CMD_PLOT) {
		if (i >= argc)
			return fail(err, errlen, "missing FILE.json (usage: " PLOT_USAGE ")%s%s", "", "");
		o->script = argv[i++];
		/* plot's own arguments are known here: a wrong one is a command-line
		 * error (exit 2) like any other */
		for (int k = i; k < argc; k += 2) {
			int out = strcmp(argv[k], "-o") == 0 || strcmp(argv[k], "--output") == 0;

			if (!out || k + 1 >= argc)
				return fail(err, errlen, "%s '%s' (usage: " PLOT_USAGE ")",
					    out ? "missing a file name after" : "unknown argument", argv[k]);
		}
	} else if (o->cmd == CMD_RUN || o->cmd == CMD_SHOW) {
		if (i >= argc)
			return fail(err, errlen, "%s: missing SCRIPT (usage: surge %s [options] SCRIPT [script options])",
				    argv[1], argv[1]);
		o->script = argv[i++];
	} else if (o->cmd == CMD_REPL && i < argc) {
		o->script = argv[i++];    /* optional: its functions, for launch() */
	} else if ((o->cmd == CMD_DEVICES || o->cmd == CMD_SCENARIOS || o->cmd == CMD_OTG) && i < argc) {
		return fail(err, errlen, "%s: unexpected argument '%s' (it takes none)", argv[1], argv[i]);
	}
	o->script_argc = argc - i;
	o->script_argv = argv + i;
	return 0;
}

int
cli_parse(int argc, char **argv, struct surge_opts *o, char *err, size_t errlen)
{
	int i, rc;

	memset(o, 0, sizeof(*o));
	o->stats_interval = 1.0;
	o->packets = 4;
	o->argc = argc;
	o->argv = argv;
	o->vm_memory = 0;           /* vm_budget_default(): 1G, less where memory is short */
	o->stop_grace = SURGE_STOP_GRACE_DEFAULT;
	snprintf(o->otg_addr, sizeof(o->otg_addr), "127.0.0.1");
	o->otg_port = 8443;
	if (argc < 2)
		return fail(err, errlen, "missing command (try 'surge --help')%s%s", "", "");
	if (parse_command(argv[1], &o->cmd) != 0)
		return fail(err, errlen, "unknown command '%s' (try 'surge --help')%s", argv[1], "");
	if (o->cmd == CMD_HELP || o->cmd == CMD_VERSION) {
		if (argc > 2)
			return fail(err, errlen, "%s: unexpected argument '%s' (it takes none)", argv[1], argv[2]);
		return 0;
	}
	if (o->cmd == CMD_ATTACH)
		return parse_attach(argc, argv, o, err, errlen);
	for (i = 2; i < argc; i++) {
		const char *a = argv[i], *v;
		const struct option *op;
		size_t n;

		if (a[0] != '-' || strcmp(a, "-") == 0)
			break;                      /* the script (or first test file) */
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if ((op = find_option(a, o->cmd, &n)) == NULL)
			return fail(err, errlen, "unknown option '%s' (try 'surge --help')%s", a, "");
		if (op->flag) {
			*(int *)((char *)o + op->flag) = 1;
			continue;
		}
		v = take_value(argc, argv, &i, a, n);
		if (v == NULL || *v == '\0')
			return op->missing != NULL ? fail(err, errlen, "%s%s", op->missing, "")
						   : fail(err, errlen, "option %s needs a value%s", op->name, "");
		if (op->text)
			*(const char **)((char *)o + op->text) = v;
		else if ((rc = op->set(o, v, err, errlen)) != 0)
			return rc;
	}
	if (o->cmd == CMD_OTG && (o->otg_cert == NULL) != (o->otg_key == NULL))
		return fail(err, errlen, "option %s: give --cert and --key together%s",
			    o->otg_cert == NULL ? "--key" : "--cert", "");
	if (o->cmd == CMD_OTG && o->otg_http && o->otg_cert != NULL)
		return fail(err, errlen, "option --cert: --http serves plain HTTP, with no certificate%s%s", "", "");
	return parse_operands(argc, argv, i, o, err, errlen);
}

void
cli_usage(const char *prog)
{
	printf("usage: %s COMMAND [options] [SCRIPT [script options]]\n"
	       "\n"
	       "commands:\n"
	       "  run SCRIPT [args]   run a Lua traffic script (SCRIPT --help lists its options)\n"
	       "  run NAME [args]     run a scenario by name (rfc2544, load-latency, ...;\n"
	       "                      NAME --help lists its options)\n"
	       "  scenarios           list the scenarios with their descriptions\n"
	       "  test [FILE...]      run Lua tests inside surge (default: every tests/lua/*.lua)\n"
	       "  devices             list ports: driver, MAC, link, NUMA socket, offloads\n"
	       "  repl [SCRIPT [args]] a Lua prompt with the ports and tasks live (SCRIPT's\n"
	       "                      functions loaded, master not called); see docs/repl.md\n"
	       "  attach PATH [-e CODE] the prompt of a run started with --control PATH\n"
	       "  otg                 serve the Open Traffic Generator API (snappi, gosnappi,\n"
	       "                      featureprofiles): HTTPS on 127.0.0.1:8443; see docs/otg.md\n"
	       "  show SCRIPT [args]  print the first packets the script's show(args) makes,\n"
	       "                      decoded and as hex, without opening any port\n"
	       "  plot FILE.json      draw a results file with gnuplot: FILE.svg, or -o OUT.svg|png\n"
	       "  --version           print the version\n"
	       "  --help              this text\n"
	       "\n"
	       "options (before SCRIPT):\n"
	       "  --vdev SPEC         add a virtual device, e.g. net_null0,no-rx=1 (repeatable)\n"
	       "  --pci ADDR          use this PCI device (repeatable)\n"
	       "  --lcores LIST       EAL lcore list, e.g. 0-2 or '0@0,1@1,2@1'\n"
	       "  --no-huge           use 4 KB pages instead of hugepages\n"
	       "  --eal \"ARGS\"        extra EAL arguments\n"
	       "  --duration TIME     stop after TIME (10, 2.5s, 500ms)\n"
	       "  --stats-interval T  seconds between stats lines (0 = none; default 1, none for a scenario)\n"
	       "  --quiet, -q         no periodic stats, progress, info lines or EAL notices\n"
	       "  --vm-memory SIZE    memory each Lua VM may allocate (default 1G, or 3/4 of the\n"
	       "                      memory the cgroup / machine has left when that is less)\n"
	       "  --stop-grace TIME   after a stop, how much CPU time code may run before the\n"
	       "                      watchdog ends the run (default 2s; blocked code: 10x, 5s or more)\n"
	       "  --output FILE       write the results: FILE.json, FILE.csv, - (JSON on stdout)\n"
	       "  --file-prefix NAME  EAL file prefix (default surge-PID); telemetry socket:\n"
	       "                      /var/run/dpdk/NAME/dpdk_telemetry.v2\n"
	       "  -i                  run: open the prompt when master reaches surge.wait()\n"
	       "  --control PATH      run, repl: serve `surge attach` on this UNIX socket\n"
	       "  --metrics [ADDR:]PORT run, repl: serve Prometheus metrics at\n"
	       "                      http://ADDR:PORT/metrics (ADDR default 127.0.0.1;\n"
	       "                      see docs/metrics.md)\n"
	       "  --listen [ADDR:]PORT otg: where to serve (default 127.0.0.1:8443)\n"
	       "  --http              otg: plain HTTP instead of HTTPS\n"
	       "  --cert FILE --key FILE otg: the HTTPS certificate and key (PEM; default a\n"
	       "                      self-signed pair made at the first start, kept in\n"
	       "                      $XDG_STATE_HOME/surge/otg or ~/.local/state/surge/otg)\n"
	       "  --packets N         show: how many packets to print (default 4)\n"
	       "  --path DIR          also look for modules and scenarios in DIR (repeatable;\n"
	       "                      SURGE_PATH=DIR:DIR does the same)\n"
	       "\n"
	       "SCRIPT may be '-' (read from standard input) or a pipe such as <(cmd).\n"
	       "With no --vdev or --pci and no NIC bound to DPDK, surge uses the virtual\n"
	       "sink net_null0 (no-rx=1). Without free hugepages it falls back to --no-huge.\n",
	       prog);
}

/* One word of the command line is the --output file itself (dev and inode:
 * a different spelling, a hard link or a symlink is the same file). */
static int
same_file(const struct stat *out, const char *path)
{
	struct stat st;

	return path[0] != '\0' && stat(path, &st) == 0 && st.st_dev == out->st_dev && st.st_ino == out->st_ino;
}

int
cli_output_clash(const struct surge_opts *o, char *err, size_t errlen)
{
	struct stat out;
	char piece[4096];

	if (o->output == NULL || strcmp(o->output, "-") == 0 || stat(o->output, &out) != 0 || !S_ISREG(out.st_mode))
		return 0;              /* nothing there yet (or a device): nothing to lose */
	if (o->script != NULL && strcmp(o->script, "-") != 0 && same_file(&out, o->script)) {
		snprintf(err, errlen, "--output %s: is the script %s; refusing to overwrite it", o->output, o->script);
		return -EEXIST;
	}
	/* every other word, and each piece of it after '=' or ',' (a --vdev's
	 * rx_pcap=FILE, a script's --pcap=FILE): an input file named there */
	for (int i = 1; i < o->argc; i++) {
		const char *a = o->argv[i];

		if (a == o->output || (o->output > a && o->output <= a + strlen(a)))
			continue;      /* the --output value itself */
		for (const char *p = a; *p != '\0';) {
			size_t n = strcspn(p, ",=");

			if (n < sizeof(piece)) {
				memcpy(piece, p, n);
				piece[n] = '\0';
				if (same_file(&out, piece)) {
					snprintf(err, errlen, "--output %s: is the input file %s (in '%s'); refusing to overwrite it",
						 o->output, piece, a);
					return -EEXIST;
				}
			}
			p += n + (p[n] != '\0');
		}
	}
	return 0;
}
