/* SPDX-License-Identifier: BSD-3-Clause
 *
 * fuzz_driver.h - the bounded fuzzer ctest runs for a pure parser's fuzz
 * target (test_http_fuzz.c, test_hosts_fuzz.c): the seeds of
 * $SURGE_SRC/tests/fuzz/NAME, each run as it is and then mutated (bytes
 * changed, tokens of the grammar inserted, ranges cut, truncation, chunks
 * repeated) for SURGE_FUZZ_SECONDS (default 3) or 400 000 inputs, each in
 * an allocation of its exact size (a read past it is the sanitizer pass's
 * failure). SURGE_FUZZ_SEED replays a run.
 */
#ifndef FUZZ_DRIVER_H
#define FUZZ_DRIVER_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz_ref.h"

#define FUZZ_SEEDS_MAX 64
#define FUZZ_INPUT_MAX 4096
#define FUZZ_ROUNDS_MAX 400000

struct fuzz_token {
	const char *s;
	size_t n;
};
#define FUZZ_TOKEN(lit) { lit, sizeof(lit) - 1 }   /* a literal's bytes, NULs included */

struct fuzz {
	const char *name;            /* the test's, for its messages */
	uint64_t rng;
	double seconds;
	time_t t0;
	uint64_t rounds;
	int nseeds;
	size_t len[FUZZ_SEEDS_MAX];
	uint8_t seed[FUZZ_SEEDS_MAX][FUZZ_INPUT_MAX];
	uint8_t buf[2 * FUZZ_INPUT_MAX];
};

static inline uint64_t
fuzz_rand(struct fuzz *z)
{
	return fuzz_xorshift(&z->rng);
}

static inline uint32_t
fuzz_below(struct fuzz *z, uint32_t n)
{
	return fuzz_xbelow(&z->rng, n);
}

/* The seeds of tests/fuzz/DIR (at least 3), the clock and the rng: 0, or
 * 1 with the reason printed. */
static inline int
fuzz_start(struct fuzz *z, const char *name, const char *dir, uint64_t dflt_seed)
{
	const char *src = getenv("SURGE_SRC"), *sec = getenv("SURGE_FUZZ_SECONDS"), *seed = getenv("SURGE_FUZZ_SEED");
	char path[512];
	struct dirent *de;
	DIR *d;

	z->name = name;
	z->seconds = sec != NULL ? atof(sec) : 3;
	z->rng = seed != NULL ? strtoull(seed, NULL, 0) : dflt_seed;
	if (z->rng == 0)
		z->rng = 1;
	z->t0 = time(NULL);
	snprintf(path, sizeof(path), "%s/tests/fuzz/%s", src != NULL ? src : ".", dir);
	if ((d = opendir(path)) == NULL) {
		fprintf(stderr, "%s: no seeds in %s ($SURGE_SRC)\n", name, path);
		return 1;
	}
	while ((de = readdir(d)) != NULL && z->nseeds < FUZZ_SEEDS_MAX) {
		char file[768];
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
		if ((f = fopen(file, "rb")) == NULL)
			continue;
		z->len[z->nseeds] = fread(z->seed[z->nseeds], 1, FUZZ_INPUT_MAX, f);
		fclose(f);
		z->nseeds += z->len[z->nseeds] > 0;
	}
	closedir(d);
	if (z->nseeds < 3) {
		fprintf(stderr, "%s: %d seeds in %s\n", name, z->nseeds, path);
		return 1;
	}
	return 0;
}

/* The next input, in a malloc of its exact size (*n bytes; the caller
 * frees it), or NULL when the campaign is over: the seeds as they are
 * first, then 1..4 mutations of one. */
static inline uint8_t *
fuzz_next(struct fuzz *z, const struct fuzz_token *tok, size_t ntok, size_t *out_n)
{
	uint8_t *buf = z->buf, *p;
	size_t n;

	if (z->rounds >= FUZZ_ROUNDS_MAX || (z->rounds % 1024 == 0 && z->rounds >= (uint64_t)z->nseeds &&
					     difftime(time(NULL), z->t0) >= z->seconds))
		return NULL;
	if (z->rounds < (uint64_t)z->nseeds) {
		n = z->len[z->rounds];
		memcpy(buf, z->seed[z->rounds], n);
	} else {
		int s = (int)fuzz_below(z, (uint32_t)z->nseeds);

		n = z->len[s];
		memcpy(buf, z->seed[s], n);
		for (uint32_t k = 0, ops = 1 + fuzz_below(z, 4); k < ops; k++) {
			uint32_t at = fuzz_below(z, (uint32_t)n + 1), op = fuzz_below(z, 5);

			if (op == 0 && n > 0) {                                /* a byte changed */
				buf[fuzz_below(z, (uint32_t)n)] = (uint8_t)fuzz_rand(z);
			} else if (op == 1) {                                  /* a token inserted */
				const struct fuzz_token *t = &tok[fuzz_below(z, (uint32_t)ntok)];

				if (n + t->n <= FUZZ_INPUT_MAX) {
					memmove(buf + at + t->n, buf + at, n - at);
					memcpy(buf + at, t->s, t->n);
					n += t->n;
				}
			} else if (op == 2 && n > at) {                        /* a range cut out */
				size_t cut = 1 + fuzz_below(z, (uint32_t)(n - at));

				memmove(buf + at, buf + at + cut, n - at - cut);
				n -= cut;
			} else if (op == 3) {                                  /* truncated */
				n = at;
			} else if (n > at && n * 2 <= FUZZ_INPUT_MAX) {        /* a chunk repeated */
				size_t len = 1 + fuzz_below(z, (uint32_t)(n - at));

				memmove(buf + at + len, buf + at, n - at);
				n += len;
			}
		}
	}
	p = malloc(n ? n : 1);
	if (p == NULL)
		abort();
	memcpy(p, buf, n);
	z->rounds++;
	*out_n = n;
	return p;
}

#endif
