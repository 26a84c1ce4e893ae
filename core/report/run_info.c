/* SPDX-License-Identifier: BSD-3-Clause
 *
 * run_info.c - what the results file says about the run itself: the
 * command line, surge's commit, DPDK's version, how it ended, where it
 * writes.
 */
#include <rte_version.h>

#include "report.h"

#include "surge_git.h"     /* SURGE_GIT, written at every build (cmake/gen_git.cmake) */

const char *
surge_cmdline(int i)
{
	const struct surge_opts *o = &rt()->opts;

	return i >= 0 && i < o->argc ? o->argv[i] : NULL;
}

const char *
surge_git_commit(void)
{
	return SURGE_GIT;
}

const char *
surge_dpdk_version(void)
{
	return rte_version();
}

int
surge_signal(void)
{
	return rt()->signal;
}

const char *
surge_file_prefix(void)
{
	return rt()->file_prefix[0] != '\0' ? rt()->file_prefix : NULL;
}

const char *
surge_output(void)
{
	return rt()->json_stdout[0] != '\0' ? rt()->json_stdout : rt()->opts.output;
}
