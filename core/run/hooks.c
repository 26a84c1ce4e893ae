/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hooks.c - what the front end registered (struct run_hooks in run.h):
 * the run layer calls it where the front end must act, without calling up.
 */
#include "run.h"

static const struct run_hooks no_hooks;

void
run_hooks_set(const struct run_hooks *h)
{
	rt()->hooks = h;
}

const struct run_hooks *
run_hooks(void)
{
	return rt() != NULL && rt()->hooks != NULL ? rt()->hooks : &no_hooks;
}
