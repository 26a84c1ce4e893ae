/* SPDX-License-Identifier: BSD-3-Clause
 *
 * conn_fixture.h - what the connection engine's unit tests (test_conn.c,
 * test_conn_fuzz.c) stand on: EAL with a null port, a pool of 1023 mbufs
 * and the 64-mbuf burst TX engines write into without sending; freed as a
 * run's end frees them. Include after cmocka.h, conn.h and check.h.
 */
#ifndef CONN_FIXTURE_H
#define CONN_FIXTURE_H

static struct surge_opts opts;
static int POOL = -1;
static struct surge_burst *TX;

static int
conn_fixture_start(const char *name)
{
	static const char *const vdevs[] = { "net_null0,no-rx=1" };
	struct surge_pool_conf c = { .size = 1023, .single_owner = 0, .socket = -1 };
	int rc;

	if ((rc = test_eal_start(&opts, name, vdevs, 1)) != 0)
		return rc;
	POOL = surge_pool_create(&c);
	if (POOL < 0)
		return -1;
	TX = surge_burst_new(POOL, 64);
	return TX == NULL ? -1 : 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	surge_burst_destroy(TX);
	conn_free_all();          /* what boot_stop does at the end of a run */
	return test_eal_stop();
}

/* Forgets what the engine wrote (nothing is sent). */
static void
drop_written(struct conn_engine *e)
{
	TX->n = e->tx.got;
	surge_burst_free(TX);
	e->tx.got = e->tx.used = 0;
}

#endif
