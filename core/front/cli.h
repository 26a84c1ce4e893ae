/* SPDX-License-Identifier: BSD-3-Clause
 *
 * cli.h - surge's own command line, parsed before DPDK is touched (no DPDK
 * header needed: tests/unit/test_cli.c tests it alone).
 */
#ifndef SURGE_CLI_H
#define SURGE_CLI_H

#include <stddef.h>

#include "opts.h"

/* Parses argv; returns 0, or -EINVAL with a one-line message in err. */
int cli_parse(int argc, char **argv, struct surge_opts *o, char *err, size_t errlen);
/* Parses "5", "2.5s", "100ms", "1m" into seconds; -EINVAL when malformed. */
int cli_parse_seconds(const char *s, double *out);
/* Parses "512M", "2G", "1048576" into bytes; -EINVAL when malformed. */
int cli_parse_bytes(const char *s, unsigned long long *out);

void cli_usage(const char *prog);
/* otg --listen [ADDR:]PORT into o->otg_addr, o->otg_port (otg_http.c
 * checks a listen address given through the FFI with it too) */
int cli_parse_listen(const char *v, struct surge_opts *o, char *err, size_t errlen);
/* --output names a file that exists and is the script or a file named
 * elsewhere on the command line (same device and inode): -EEXIST and a
 * one-line message in err; 0 otherwise. */
int cli_output_clash(const struct surge_opts *o, char *err, size_t errlen);

#endif /* SURGE_CLI_H */
