/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_cli.c - surge's own command line (core/front/cli.c), no DPDK involved.
 *
 * Proves that every surge option is parsed into struct surge_opts in both the
 * "--opt value" and "--opt=value" forms, that everything after the script (or
 * the first test file) is handed to the script untouched, and that each kind
 * of mistake returns -EINVAL with a message naming the offending text.
 */
#define _GNU_SOURCE     /* mkdtemp, symlink */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"

static struct surge_opts o;
static char err[256];

/* Parses a NULL-terminated list of words (argv[0] = "surge" is added). */
#define ARGV(...) ((char *[]){ "surge", __VA_ARGS__, NULL })
#define PARSE(...) parse(ARGV(__VA_ARGS__))

static int
parse(char **argv)
{
	int argc = 0;

	while (argv[argc] != NULL)
		argc++;
	memset(err, 0, sizeof(err));
	return cli_parse(argc, argv, &o, err, sizeof(err));
}

/* Doubles agree to within eps (cmocka 1.1.5's float compare is single precision). */
#define assert_near(a, b, eps)                                             \
	do {                                                               \
		double d_ = (double)(a) - (double)(b);                     \
		if (d_ > (eps) || d_ < -(eps))                             \
			fail_msg("%.9g != %.9g", (double)(a), (double)(b)); \
	} while (0)

/* The call fails with -EINVAL and the message contains `needle`. */
#define assert_fails_naming(needle, ...)                                   \
	do {                                                               \
		assert_int_equal(PARSE(__VA_ARGS__), -EINVAL);             \
		if (strstr(err, (needle)) == NULL)                         \
			fail_msg("message '%s' does not name '%s'", err, (needle)); \
	} while (0)

static void
test_run_defaults(void **state)
{
	(void)state;
	assert_int_equal(PARSE("run", "flood.lua"), 0);
	assert_int_equal(o.cmd, CMD_RUN);
	assert_string_equal(o.script, "flood.lua");
	assert_int_equal(o.nvdev, 0);
	assert_int_equal(o.npci, 0);
	assert_null(o.lcores);
	assert_null(o.eal);
	assert_int_equal(o.no_huge, 0);
	assert_int_equal(o.quiet, 0);
	assert_true(o.duration == 0.0);
	assert_true(o.stats_interval == 1.0);
	assert_int_equal(o.stats_interval_set, 0);   /* the default: a scenario has none */
	assert_int_equal(o.script_argc, 0);
}

static void
test_every_option(void **state)
{
	(void)state;
	assert_int_equal(PARSE("run", "--vdev", "net_ring0", "--vdev=net_null0,no-rx=1",
			       "--pci", "0000:01:00.0", "--pci=0000:01:00.1", "--lcores", "0-2",
			       "--no-huge", "--eal", "--log-level=debug -n 4", "--duration", "2.5s",
			       "--stats-interval=500ms", "-q", "s.lua"), 0);
	assert_int_equal(o.cmd, CMD_RUN);
	assert_int_equal(o.nvdev, 2);
	assert_string_equal(o.vdev[0], "net_ring0");
	assert_string_equal(o.vdev[1], "net_null0,no-rx=1");
	assert_int_equal(o.npci, 2);
	assert_string_equal(o.pci[0], "0000:01:00.0");
	assert_string_equal(o.pci[1], "0000:01:00.1");
	assert_string_equal(o.lcores, "0-2");
	assert_string_equal(o.eal, "--log-level=debug -n 4");
	assert_int_equal(o.no_huge, 1);
	assert_int_equal(o.quiet, 1);
	assert_true(o.duration == 2.5);
	assert_true(o.stats_interval == 0.5);
	assert_int_equal(o.stats_interval_set, 1);   /* given: a scenario keeps it */
	assert_string_equal(o.script, "s.lua");
	assert_int_equal(o.script_argc, 0);

	/* the long spelling of -q, and the = form of the remaining ones */
	assert_int_equal(PARSE("run", "--quiet", "--lcores=1@0", "--eal=-n 2", "--duration=1m", "s.lua"), 0);
	assert_int_equal(o.quiet, 1);
	assert_string_equal(o.lcores, "1@0");
	assert_string_equal(o.eal, "-n 2");
	assert_true(o.duration == 60.0);
}

static void
test_duration_units(void **state)
{
	static const struct { const char *text; double sec; } cases[] = {
		{ "10", 10.0 }, { "2.5s", 2.5 }, { "500ms", 0.5 }, { "1m", 60.0 },
		{ "2min", 120.0 }, { "1h", 3600.0 }, { "0", 0.0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(PARSE("run", "--duration", (char *)cases[i].text, "s.lua"), 0);
		assert_near(o.duration, cases[i].sec, 1e-9);
	}
	assert_int_equal(PARSE("run", "--stats-interval", "0", "s.lua"), 0);
	assert_true(o.stats_interval == 0.0);
}

static void
test_vdev_limit(void **state)
{
	char *argv[2 + 2 * (SURGE_MAX_DEVS + 1) + 2];
	static char names[SURGE_MAX_DEVS][16];
	int argc = 0;

	(void)state;
	argv[argc++] = "surge";
	argv[argc++] = "run";
	for (int i = 0; i < SURGE_MAX_DEVS; i++) {
		snprintf(names[i], sizeof(names[i]), "net_null%d", i);
		argv[argc++] = "--vdev";
		argv[argc++] = names[i];
	}
	argv[argc++] = "s.lua";
	argv[argc] = NULL;
	assert_int_equal(parse(argv), 0);
	assert_int_equal(o.nvdev, SURGE_MAX_DEVS);

	argv[argc - 1] = "--vdev";      /* one more than fits */
	argv[argc++] = "net_null99";
	argv[argc++] = "s.lua";
	argv[argc] = NULL;
	assert_int_equal(parse(argv), -EINVAL);
	assert_non_null(strstr(err, "--vdev"));
}

/* issue 7.11: a device given twice would be one port with two specs, the
 * second silently lost (or two net_pcap devices writing one file) */
static void
test_vdev_twice(void **state)
{
	(void)state;
	assert_int_equal(PARSE("run", "--vdev", "net_ring0", "--vdev", "net_ring1", "s.lua"), 0);
	assert_int_equal(PARSE("run", "--vdev", "net_pcap0,tx_pcap=a", "--vdev", "net_pcap0,tx_pcap=b",
			       "s.lua"), -EINVAL);
	assert_non_null(strstr(err, "option --vdev: device 'net_pcap0,tx_pcap=b' given twice"));
	assert_int_equal(PARSE("run", "--pci", "0000:01:00.0", "--pci", "0000:01:00.0", "s.lua"), -EINVAL);
	assert_non_null(strstr(err, "--pci"));
}

/* issue 7.4, 7.5, 7.18: the stop and memory options and their bounds */
static void
test_bounds(void **state)
{
	(void)state;
	assert_int_equal(PARSE("run", "s.lua"), 0);
	assert_true(o.vm_memory == 0);     /* vm_budget_default() decides */
	assert_near(o.stop_grace, 2.0, 1e-9);
	assert_int_equal(PARSE("run", "--vm-memory", "512M", "--stop-grace=500ms", "s.lua"), 0);
	assert_true(o.vm_memory == 512ULL << 20);
	assert_near(o.stop_grace, 0.5, 1e-9);
	assert_int_equal(PARSE("run", "--vm-memory=2G", "s.lua"), 0);
	assert_true(o.vm_memory == 2ULL << 30);
	assert_int_equal(PARSE("run", "--vm-memory", "1M", "s.lua"), -EINVAL);
	assert_non_null(strstr(err, "option --vm-memory: '1M'"));
	assert_int_equal(PARSE("run", "--vm-memory", "lots", "s.lua"), -EINVAL);
	assert_int_equal(PARSE("run", "--stop-grace", "10ms", "s.lua"), -EINVAL);
	assert_non_null(strstr(err, "option --stop-grace: '10ms'"));
	/* a stats line every microsecond would be the whole output */
	assert_int_equal(PARSE("run", "--stats-interval", "1e-6", "s.lua"), -EINVAL);
	assert_non_null(strstr(err, "option --stats-interval: '1e-6'"));
	assert_int_equal(PARSE("run", "--stats-interval", "0", "s.lua"), 0);
	assert_int_equal(PARSE("run", "--stats-interval", "10ms", "s.lua"), 0);
	/* "-" is a script: standard input */
	assert_int_equal(PARSE("run", "-q", "-", "a"), 0);
	assert_string_equal(o.script, "-");
}

static void
test_script_args_split(void **state)
{
	(void)state;
	assert_int_equal(PARSE("run", "--no-huge", "flood.lua", "--rate", "10", "--help", "-q",
			       "--vdev", "x"), 0);
	assert_string_equal(o.script, "flood.lua");
	assert_int_equal(o.no_huge, 1);
	/* -q and --vdev after the script are the script's, not surge's */
	assert_int_equal(o.quiet, 0);
	assert_int_equal(o.nvdev, 0);
	assert_int_equal(o.script_argc, 6);
	assert_string_equal(o.script_argv[0], "--rate");
	assert_string_equal(o.script_argv[1], "10");
	assert_string_equal(o.script_argv[2], "--help");
	assert_string_equal(o.script_argv[3], "-q");
	assert_string_equal(o.script_argv[5], "x");

	/* "--" ends surge's options: a script whose name starts with '-' */
	assert_int_equal(PARSE("run", "-q", "--", "-odd.lua", "a"), 0);
	assert_int_equal(o.quiet, 1);
	assert_string_equal(o.script, "-odd.lua");
	assert_int_equal(o.script_argc, 1);
	assert_string_equal(o.script_argv[0], "a");
}

static void
test_test_command(void **state)
{
	(void)state;
	assert_int_equal(PARSE("test", "--no-huge", "--vdev", "net_ring0", "a.lua", "b.lua"), 0);
	assert_int_equal(o.cmd, CMD_TEST);
	assert_null(o.script);
	assert_int_equal(o.no_huge, 1);
	assert_int_equal(o.nvdev, 1);
	assert_int_equal(o.script_argc, 2);
	assert_string_equal(o.script_argv[0], "a.lua");
	assert_string_equal(o.script_argv[1], "b.lua");

	assert_int_equal(PARSE("test"), 0);     /* no files: run them all */
	assert_int_equal(o.cmd, CMD_TEST);
	assert_int_equal(o.script_argc, 0);
}

static void
test_devices_version_help(void **state)
{
	(void)state;
	assert_int_equal(PARSE("devices", "--vdev", "net_null0"), 0);
	assert_int_equal(o.cmd, CMD_DEVICES);
	assert_int_equal(o.nvdev, 1);
	assert_null(o.script);
	assert_int_equal(o.script_argc, 0);

	assert_int_equal(PARSE("--version"), 0);
	assert_int_equal(o.cmd, CMD_VERSION);
	assert_int_equal(PARSE("version"), 0);
	assert_int_equal(o.cmd, CMD_VERSION);
	assert_int_equal(PARSE("--help"), 0);
	assert_int_equal(o.cmd, CMD_HELP);
	assert_int_equal(PARSE("-h"), 0);
	assert_int_equal(o.cmd, CMD_HELP);
	assert_int_equal(PARSE("help"), 0);
	assert_int_equal(o.cmd, CMD_HELP);
}

static void
test_errors(void **state)
{
	char *only_prog[] = { "surge", NULL };

	(void)state;
	assert_int_equal(parse(only_prog), -EINVAL);
	assert_non_null(strstr(err, "missing command"));

	assert_fails_naming("'flood'", "flood", "x.lua");
	assert_fails_naming("unknown command", "flood", "x.lua");
	assert_fails_naming("'--bogus'", "run", "--bogus", "s.lua");
	assert_fails_naming("'--no-huge=1'", "run", "--no-huge=1", "s.lua");
	assert_fails_naming("'--vdevx'", "run", "--vdevx", "a", "s.lua");
	assert_fails_naming("'-x'", "test", "-x");
	assert_fails_naming("--vdev", "run", "--vdev");
	assert_fails_naming("needs a value", "run", "--vdev");
	assert_fails_naming("--pci", "run", "--pci=", "s.lua");
	assert_fails_naming("--lcores", "devices", "--lcores");
	assert_fails_naming("--duration", "run", "--duration");
	assert_fails_naming("--stats-interval", "run", "--stats-interval");
	assert_fails_naming("'abc'", "run", "--duration", "abc", "s.lua");
	assert_fails_naming("--duration", "run", "--duration=10x", "s.lua");
	assert_fails_naming("'-5'", "run", "--duration", "-5", "s.lua");
	assert_fails_naming("--stats-interval", "run", "--stats-interval", "fast", "s.lua");
	assert_fails_naming("SCRIPT", "run");
	assert_fails_naming("SCRIPT", "run", "--no-huge", "-q");
	assert_fails_naming("run", "run", "--");
}

/* --path (both forms, repeatable, limited) and the scenarios command; a
 * scenario name takes the script's place and its options follow it. */
static void
test_path_and_scenarios(void **state)
{
	(void)state;
	assert_int_equal(PARSE("run", "--path", "/a", "--path=/b", "rfc2544", "--sizes", "64"), 0);
	assert_int_equal(o.npath, 2);
	assert_string_equal(o.path[0], "/a");
	assert_string_equal(o.path[1], "/b");
	assert_string_equal(o.script, "rfc2544");
	assert_int_equal(o.script_argc, 2);
	assert_string_equal(o.script_argv[1], "64");
	assert_int_equal(PARSE("scenarios", "--path", "/x"), 0);
	assert_int_equal(o.cmd, CMD_SCENARIOS);
	assert_null(o.script);
	assert_int_equal(o.npath, 1);
	assert_fails_naming("--path needs a value", "run", "--path");
	{
		char *argv[2 * SURGE_MAX_DEVS + 5];
		int argc = 0;

		argv[argc++] = "surge";
		argv[argc++] = "run";
		for (int i = 0; i <= SURGE_MAX_DEVS; i++) {
			argv[argc++] = "--path";
			argv[argc++] = "/d";
		}
		argv[argc] = NULL;
		assert_int_equal(cli_parse(argc, argv, &o, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "too many --path"));
	}
}

static void
test_parse_seconds(void **state)
{
	static const char *const bad[] = {
		"", "-1", "-0.5s", "abc", "s", "ms", "10x", "10 s", "10sec", "5ms ",
		"nan", "inf", "1e10", "2e7m",
	};
	double v = 42.0;

	(void)state;
	assert_int_equal(cli_parse_seconds(NULL, &v), -EINVAL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (cli_parse_seconds(bad[i], &v) != -EINVAL)
			fail_msg("'%s' was accepted as %g seconds", bad[i], v);
		assert_true(v == 42.0);          /* a failure leaves *out alone */
	}
	assert_int_equal(cli_parse_seconds("0.25", &v), 0);
	assert_near(v, 0.25, 1e-12);
	assert_int_equal(cli_parse_seconds("1500ms", &v), 0);
	assert_near(v, 1.5, 1e-12);
	assert_int_equal(cli_parse_seconds("1e9", &v), 0);   /* the largest accepted */
	assert_near(v, 1e9, 1e-3);
}

/* --output and --file-prefix (results files, telemetry prefix), and plot */
static void
test_results_options(void **state)
{
	(void)state;
	assert_int_equal(PARSE("run", "--output", "r.json", "--file-prefix=gen1", "s.lua"), 0);
	assert_string_equal(o.output, "r.json");
	assert_string_equal(o.file_prefix, "gen1");
	assert_int_equal(o.argc, 6);
	assert_string_equal(o.argv[4], "--file-prefix=gen1");
	assert_int_equal(PARSE("run", "--output=x.csv", "s.lua"), 0);
	assert_string_equal(o.output, "x.csv");
	assert_int_equal(PARSE("run", "--output", "-", "s.lua"), 0);
	assert_string_equal(o.output, "-");
	assert_string_equal(o.script, "s.lua");
	assert_fails_naming("option --output: 'r.txt' must end in .json or .csv", "run", "--output", "r.txt", "s.lua");
	assert_fails_naming("option --output: '.csv' must end", "run", "--output", ".csv", "s.lua");
	assert_fails_naming("option --output needs a value", "run", "--output");
	assert_fails_naming("option --file-prefix: 'a/b'", "run", "--file-prefix", "a/b", "s.lua");
	assert_int_equal(PARSE("plot", "r.json", "-o", "r.svg"), 0);
	assert_int_equal(o.cmd, CMD_PLOT);
	assert_string_equal(o.script, "r.json");
	assert_int_equal(o.script_argc, 2);
	assert_fails_naming("missing FILE.json", "plot");   /* main() prints it as "surge plot: ..." */
}

/* Issue 23 item 12f: --output that is the script or an input file named on
 * the command line, by identity (a link or another spelling too), is refused;
 * a new file, or an existing one named nowhere else, is not. */
static void
test_output_clash(void **state)
{
	char dir[] = "/tmp/surge-clash-XXXXXX", s[64], out[64], lnk[64], pc[64], other[64], arg[128];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(s, sizeof(s), "%s/s.lua", dir);
	snprintf(out, sizeof(out), "%s/new.json", dir);
	snprintf(lnk, sizeof(lnk), "%s/link.json", dir);
	snprintf(pc, sizeof(pc), "%s/in.csv", dir);
	snprintf(other, sizeof(other), "%s/old.json", dir);
	assert_non_null(f = fopen(s, "w"));
	fclose(f);
	assert_non_null(f = fopen(pc, "w"));
	fclose(f);
	assert_non_null(f = fopen(other, "w"));
	fclose(f);
	assert_int_equal(symlink(s, lnk), 0);
	assert_int_equal(PARSE("run", "--output", out, s), 0);
	assert_int_equal(cli_output_clash(&o, err, sizeof(err)), 0);          /* not there yet */
	assert_int_equal(PARSE("run", "--output", other, s), 0);
	assert_int_equal(cli_output_clash(&o, err, sizeof(err)), 0);          /* there, named nowhere else */
	assert_int_equal(PARSE("run", "--output", lnk, s), 0);
	assert_int_equal(cli_output_clash(&o, err, sizeof(err)), -EEXIST);    /* a link to the script */
	assert_non_null(strstr(err, "--output"));
	assert_non_null(strstr(err, "is the script"));
	snprintf(arg, sizeof(arg), "%s/./in.csv", dir);                       /* another spelling */
	assert_int_equal(PARSE("run", "--output", pc, s, "--in", arg), 0);
	assert_int_equal(cli_output_clash(&o, err, sizeof(err)), -EEXIST);    /* a script option's file */
	assert_non_null(strstr(err, "is the input file"));
	snprintf(arg, sizeof(arg), "net_pcap0,rx_pcap=%s,tx_pcap=/dev/null", pc);
	assert_int_equal(PARSE("run", "--vdev", arg, "--output", pc, s), 0);
	assert_int_equal(cli_output_clash(&o, err, sizeof(err)), -EEXIST);    /* inside a --vdev */
	snprintf(arg, sizeof(arg), "--output=%s", pc);
	assert_int_equal(PARSE("run", arg, s), 0);
	assert_int_equal(cli_output_clash(&o, err, sizeof(err)), 0);          /* only its own word */
	unlink(s);
	unlink(pc);
	unlink(lnk);
	unlink(other);
	rmdir(dir);
}

/* repl [SCRIPT [args]], run -i, --control, attach PATH [-e CODE] */
static void
test_repl_attach(void **state)
{
	(void)state;
	assert_int_equal(PARSE("repl"), 0);
	assert_int_equal(o.cmd, CMD_REPL);
	assert_null(o.script);
	assert_int_equal(PARSE("repl", "--no-huge", "--control", "/tmp/s", "x.lua", "--rate", "1"), 0);
	assert_string_equal(o.script, "x.lua");
	assert_string_equal(o.control, "/tmp/s");
	assert_int_equal(o.script_argc, 2);
	assert_int_equal(PARSE("run", "-i", "--control=/tmp/c", "x.lua", "-i"), 0);
	assert_true(o.interactive);
	assert_string_equal(o.control, "/tmp/c");
	assert_int_equal(o.script_argc, 1);               /* the script's own -i */
	assert_int_equal(PARSE("attach", "/tmp/s"), 0);
	assert_int_equal(o.cmd, CMD_ATTACH);
	assert_string_equal(o.control, "/tmp/s");
	assert_null(o.eval);
	assert_int_equal(PARSE("attach", "/tmp/s", "-e", "tasks()"), 0);
	assert_string_equal(o.eval, "tasks()");
	assert_int_equal(PARSE("attach", "-e", "1", "/tmp/s"), 0);
	assert_string_equal(o.control, "/tmp/s");
	assert_fails_naming("missing the socket PATH", "attach");
	assert_fails_naming("needs Lua code", "attach", "/tmp/s", "-e");
	assert_fails_naming("unexpected 'b'", "attach", "/tmp/s", "b");
	assert_fails_naming("--control needs", "run", "--control");
	assert_fails_naming("unknown option '-i'", "repl", "-i");   /* repl is interactive already */
	assert_fails_naming("unknown option '--control'", "test", "--control", "/tmp/s");
}

/* --metrics [ADDR:]PORT: numeric addresses only, 127.0.0.1 unless given;
 * run and repl only; every refusal names the option */
static void
test_metrics(void **state)
{
	static const struct { char *spec; const char *addr; int port; } good[] = {
		{ "9100", "127.0.0.1", 9100 }, { ":9100", "127.0.0.1", 9100 }, { "0", "127.0.0.1", 0 },
		{ "0.0.0.0:65535", "0.0.0.0", 65535 }, { "10.1.2.3:80", "10.1.2.3", 80 },
		{ "[::1]:9100", "::1", 9100 }, { "[::]:1", "::", 1 },
	};
	static char *const bad[] = {
		"", "x", "9100x", "65536", "-1", "+80", " 80", "localhost:9100", "1.2.3:9100", "300.1.1.1:80",
		"::1:9100", "[::1]", "[::1]:", "127.0.0.1:", "127.0.0.1", "[nope]:80", "1.2.3.4:99999999999999999999",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(PARSE("run", "--metrics", good[i].spec, "x.lua"), 0);
		assert_string_equal(o.metrics, good[i].spec);
		assert_string_equal(o.metrics_addr, good[i].addr);
		assert_int_equal(o.metrics_port, good[i].port);
	}
	assert_int_equal(PARSE("repl", "--metrics=9100"), 0);
	assert_int_equal(o.metrics_port, 9100);
	assert_int_equal(PARSE("run", "x.lua"), 0);
	assert_null(o.metrics);
	for (size_t i = 1; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_fails_naming("option --metrics: '", "run", "--metrics", bad[i], "x.lua");
	assert_fails_naming("option --metrics needs [ADDR:]PORT", "run", "--metrics");
	assert_fails_naming("option --metrics needs [ADDR:]PORT", "run", "--metrics=", "x.lua");
	assert_fails_naming("unknown option '--metrics'", "test", "--metrics", "9100");
}

/* surge otg: --listen (the --metrics parser, port 1..65535), --http, --cert/--key */
static void
test_otg(void **state)
{
	static const struct { char *spec; const char *addr; int port; } good[] = {
		{ "8443", "127.0.0.1", 8443 }, { ":1", "127.0.0.1", 1 }, { "0.0.0.0:65535", "0.0.0.0", 65535 },
		{ "[::1]:8443", "::1", 8443 },
	};
	static char *const bad[] = { "0", "x", "65536", "localhost:8443", "::1:8443", "127.0.0.1:", "1.2.3.4.5:80" };

	(void)state;
	assert_int_equal(PARSE("otg"), 0);
	assert_int_equal(o.cmd, CMD_OTG);
	assert_string_equal(o.otg_addr, "127.0.0.1");
	assert_int_equal(o.otg_port, 8443);
	assert_int_equal(o.otg_http, 0);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(PARSE("otg", "--listen", good[i].spec), 0);
		assert_string_equal(o.otg_addr, good[i].addr);
		assert_int_equal(o.otg_port, good[i].port);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_fails_naming("option --listen: '", "otg", "--listen", bad[i]);
	assert_fails_naming("option --listen needs [ADDR:]PORT", "otg", "--listen");
	assert_int_equal(PARSE("otg", "--http", "--vdev", "net_ring0"), 0);
	assert_int_equal(o.otg_http, 1);
	assert_int_equal(PARSE("otg", "--cert", "c.pem", "--key", "k.pem"), 0);
	assert_string_equal(o.otg_cert, "c.pem");
	assert_fails_naming("option --cert: give --cert and --key together", "otg", "--cert", "c.pem");
	assert_fails_naming("option --key: give --cert and --key together", "otg", "--key", "k.pem");
	assert_fails_naming("option --cert: --http serves plain HTTP", "otg", "--http", "--cert", "c", "--key", "k");
	assert_fails_naming("otg: unexpected argument 'x.lua'", "otg", "x.lua");
	assert_fails_naming("unknown option '--listen'", "run", "--listen", "8443", "x.lua");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_defaults),
		cmocka_unit_test(test_every_option),
		cmocka_unit_test(test_duration_units),
		cmocka_unit_test(test_vdev_limit),
		cmocka_unit_test(test_vdev_twice),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_script_args_split),
		cmocka_unit_test(test_test_command),
		cmocka_unit_test(test_devices_version_help),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_parse_seconds),
		cmocka_unit_test(test_results_options),
		cmocka_unit_test(test_output_clash),
		cmocka_unit_test(test_repl_attach),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_otg),
		cmocka_unit_test(test_path_and_scenarios),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
