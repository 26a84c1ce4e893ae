/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_pcap_fuzz.c - a bounded, deterministic fuzzer for the pcap reader
 * (core/io/pcap_read.c), the one part of surge that parses untrusted bytes.
 *
 * Each round takes a seed of tests/fuzz/pcap/, mutates it (bit flips,
 * boundary values written over header fields, truncation, duplicated or
 * inserted chunks), writes it to a file and opens it. What opens is replayed
 * into mbufs of a large and of a small pool, in loops with gaps; whatever
 * fails must fail with an error naming the file. After each round every pool
 * is full again. Runs SURGE_FUZZ_SECONDS (default 20) in both CI passes; the
 * sanitizer pass turns any overflow into a failure. The PRNG is seeded with
 * SURGE_FUZZ_SEED (default fixed), so a failure is reproduced by the same
 * seed; the input of the round that failed is left in the printed folder.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "run.h"
#include "check.h"
#include "fuzz_ref.h"

#define SEEDS_MAX 32
#define INPUT_MAX (1 << 16)

struct seed {
	uint8_t *data;
	size_t len;
};

static struct surge_opts opts;
static char dir[64];
static int big_pool, small_pool;
static struct seed seeds[SEEDS_MAX];
static int nseeds;
static uint64_t rng;

static int
load_seeds(void)
{
	const char *src = getenv("SURGE_SRC");
	char path[512];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s/tests/fuzz/pcap", src != NULL ? src : ".");
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL && nseeds < SEEDS_MAX) {
		char file[768];
		FILE *f;
		long n;

		if (strstr(e->d_name, ".pcap") == NULL)   /* .pcap and .pcapng */
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		if ((f = fopen(file, "rb")) == NULL)
			continue;
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		rewind(f);
		if (n > 0 && n < INPUT_MAX && (seeds[nseeds].data = malloc((size_t)n)) != NULL &&
		    fread(seeds[nseeds].data, 1, (size_t)n, f) == (size_t)n)
			seeds[nseeds++].len = (size_t)n;
		fclose(f);
	}
	closedir(d);
	return nseeds > 0 ? 0 : -1;
}

static int
group_setup(void **state)
{
	struct surge_pool_conf big = { .size = 127, .data_room = 9000, .socket = -1 };
	struct surge_pool_conf small = { .size = 31, .data_room = 128, .socket = -1 };
	const char *seed = getenv("SURGE_FUZZ_SEED");

	(void)state;
	rng = seed != NULL ? strtoull(seed, NULL, 0) : 0x5eed5eed2026ULL;
	if (rng == 0)
		rng = 1;
	if (load_seeds() != 0) {
		fprintf(stderr, "test_pcap_fuzz: no seeds in $SURGE_SRC/tests/fuzz/pcap\n");
		return -1;
	}
	snprintf(dir, sizeof(dir), "/tmp/surge-test-fuzz.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	opts.cmd = CMD_TEST;
	opts.no_huge = 1;
	opts.quiet = 1;
	if (rt_create(&opts) != 0)
		return -1;
	if (boot_start(&opts, "test_pcap_fuzz") != 0) {
		fprintf(stderr, "test_pcap_fuzz: EAL did not start: %s\n", surge_last_error());
		exit(77);
	}
	big_pool = surge_pool_create(&big);
	small_pool = surge_pool_create(&small);
	return big_pool < 0 || small_pool < 0 ? -1 : 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	pcap_close_all();
	pools_check_and_free();
	eal_stop();
	rt_destroy();
	for (int i = 0; i < nseeds; i++)
		free(seeds[i].data);
	return 0;
}

/* One mutation of buf (len bytes, room for INPUT_MAX); returns the new length. */
static size_t
mutate(uint8_t *buf, size_t len)
{
	static const uint32_t values[] = { 0, 1, 13, 14, 15, 0x7f, 0x80, 0xff, 0xffff, 0x10000,
					   0x40000, 0x7fffffff, 0x80000000, 0xffffffff,
					   0xa1b2c3d4, 0xd4c3b2a1, 0x0a0d0d0a, 0x1a2b3c4d };
	uint32_t at = fuzz_xbelow(&rng, (uint32_t)len);

	switch (fuzz_xbelow(&rng, 6)) {
	case 0:                                  /* bit flips */
		for (uint32_t k = 1 + fuzz_xbelow(&rng, 4); k > 0 && len > 0; k--)
			buf[fuzz_xbelow(&rng, (uint32_t)len)] ^= (uint8_t)(1u << fuzz_xbelow(&rng, 8));
		break;
	case 1: {                                /* a boundary value over a field */
		uint32_t v = values[fuzz_xbelow(&rng, RTE_DIM(values))];

		if (len >= 4) {
			at = fuzz_xbelow(&rng, (uint32_t)len - 3) & ~3u;
			memcpy(buf + at, &v, 4);
		}
		break;
	}
	case 2:                                  /* truncation */
		len = fuzz_xbelow(&rng, (uint32_t)len + 1);
		break;
	case 3: {                                /* duplicate a chunk at the end */
		uint32_t n = fuzz_xbelow(&rng, 256);

		if (at + n <= len && len + n <= INPUT_MAX) {
			memmove(buf + len, buf + at, n);
			len += n;
		}
		break;
	}
	case 4: {                                /* insert random bytes */
		uint32_t n = 1 + fuzz_xbelow(&rng, 64);

		if (len + n <= INPUT_MAX) {
			memmove(buf + at + n, buf + at, len - at);
			for (uint32_t k = 0; k < n; k++)
				buf[at + k] = (uint8_t)fuzz_xorshift(&rng);
			len += n;
		}
		break;
	}
	default:                                 /* a random byte */
		if (len > 0)
			buf[at] = (uint8_t)fuzz_xorshift(&rng);
	}
	return len;
}

/* Replays what opened: every record into mbufs, passes and gaps, then frees. */
static void
replay(int r, const char *path)
{
	struct surge_burst *big = surge_burst_new(big_pool, 32), *small = surge_burst_new(small_pool, 8);
	struct surge_pcap_info info;
	int n, rounds = 0;

	assert_non_null(big);
	assert_non_null(small);
	assert_int_equal(surge_pcap_info(r, &info), 0);
	assert_int_equal(surge_pcap_replay(r, 2, fuzz_xbelow(&rng, 2) ? 0.0 : 3.5), 0);
	while ((n = surge_pcap_fill(r, big, 0)) > 0 && rounds++ < 10000) {
		for (int i = 0; i < n; i++)
			assert_true(big->len[i] >= 14 && big->len[i] <= info.max_len);
		surge_burst_free(big);
	}
	if (n < 0)                               /* only a record above 9000 bytes may fail */
		assert_non_null(strstr(surge_last_error(), path));
	ok(surge_pcap_rewind(r));
	n = surge_pcap_fill(r, small, 0);
	if (n < 0)
		assert_non_null(strstr(surge_last_error(), "data_room"));
	surge_burst_destroy(big);
	surge_burst_destroy(small);
	assert_true(surge_pcap_close(r) >= 0);
}

static void
test_fuzz_reader(void **state)
{
	const char *env = getenv("SURGE_FUZZ_SECONDS");
	double secs = env != NULL ? atof(env) : 20.0;
	uint8_t *buf = malloc(INPUT_MAX);
	char path[128];
	struct timespec t0, t;
	uint64_t rounds = 0, opened = 0;
	struct surge_pool_info pi;

	(void)state;
	assert_non_null(buf);
	snprintf(path, sizeof(path), "%s/input.pcap", dir);
	fprintf(stderr, "test_pcap_fuzz: %d seeds, %.0f s, input in %s (kept on failure)\n", nseeds, secs, path);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		const struct seed *s = &seeds[fuzz_xbelow(&rng, (uint32_t)nseeds)];
		size_t len = s->len;
		FILE *f;
		int r;

		memcpy(buf, s->data, len);
		for (uint32_t k = 1 + fuzz_xbelow(&rng, 3); k > 0; k--)
			len = mutate(buf, len);
		f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(buf, 1, len, f), len);
		fclose(f);
		r = surge_pcap_open_read(path);
		if (r >= 0) {
			opened++;
			replay(r, path);
		} else {
			/* refused: one line naming the file */
			assert_non_null(strstr(surge_last_error(), path));
			assert_null(strchr(surge_last_error(), '\n'));
		}
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	assert_int_equal(surge_pool_info(big_pool, &pi), 0);
	assert_int_equal(pi.avail, pi.size);
	assert_int_equal(surge_pool_info(small_pool, &pi), 0);
	assert_int_equal(pi.avail, pi.size);
	fprintf(stderr, "test_pcap_fuzz: %" PRIu64 " inputs, %" PRIu64 " opened and replayed\n", rounds, opened);
	assert_true(rounds > 100);
	assert_true(opened > 0 && opened < rounds);    /* the mutations reach both paths */
	unlink(path);
	rmdir(dir);
	free(buf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fuzz_reader),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
