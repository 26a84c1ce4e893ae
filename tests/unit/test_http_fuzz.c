/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_http_fuzz.c - a fuzz target for the connection engine's HTTP/1.1
 * parsing (core/conn/conn_http.c), the bytes a peer sends a surge client
 * or server. Each input is checked against a reference written apart from
 * the parser, slowly and literally from RFC 9112: the status line
 * (http_status), a response's length (http_response_length) must agree
 * with it, and every function must stay within the input (the sanitizer
 * pass places each input in an allocation of its exact size, so a read
 * past it is a failure), and http_path's word must lie inside it.
 *
 * Two ways to run it (a third: ctest runs fuzz/http, this file under
 * libFuzzer for 10 s, in a build whose compiler is clang):
 *   - in ctest (both CI passes): a bounded, deterministic fuzzer mutating
 *     the seeds of tests/fuzz/http/ (byte flips, tokens of the grammar
 *     inserted, cuts, duplicated chunks) for SURGE_FUZZ_SECONDS (default
 *     3) or 400 000 inputs; SURGE_FUZZ_SEED replays a run; an input that
 *     fails is printed, to be added to the seeds;
 *   - with libFuzzer, for a longer campaign (conn_http.c is pure: nothing
 *     else to link):
 *       clang -g -O1 -fsanitize=fuzzer,address,undefined -DSURGE_LIBFUZZER \
 *         -Icore/conn tests/unit/test_http_fuzz.c core/conn/conn_http.c -o http_fuzz
 *       ./http_fuzz tests/fuzz/http
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conn_http.h"

/* --- the reference: RFC 9112 read literally ----------------------------- */

static int
ref_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

/* the first CR LF at or after `from`, or -1 */
static long
ref_crlf(const uint8_t *p, size_t n, size_t from)
{
	for (size_t i = from; i + 1 < n; i++)
		if (p[i] == '\r' && p[i + 1] == '\n')
			return (long)i;
	return -1;
}

/* status-line = HTTP-version SP status-code SP [ reason-phrase ] CRLF,
 * HTTP-version "HTTP/1." DIGIT here, reason-phrase *( HTAB / SP / VCHAR / obs-text ) */
static int
ref_status(const uint8_t *p, size_t n)
{
	long end = ref_crlf(p, n, 0);

	if (end < 13)
		return -1;
	if (memcmp(p, "HTTP/1.", 7) != 0 || !ref_digit(p[7]) || p[8] != ' ')
		return -1;
	if (!ref_digit(p[9]) || !ref_digit(p[10]) || !ref_digit(p[11]) || p[12] != ' ')
		return -1;
	for (long i = 13; i < end; i++) {
		uint8_t c = p[i];

		if (!(c == '\t' || c == ' ' || (c >= 0x21 && c <= 0x7e) || c >= 0x80))
			return -1;
	}
	return (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
}

static int
ref_name_is(const uint8_t *p, size_t n, const char *name)
{
	size_t k = strlen(name);

	if (n < k)
		return 0;
	for (size_t i = 0; i < k; i++) {
		uint8_t c = p[i];

		if (c >= 'A' && c <= 'Z')
			c = (uint8_t)(c - 'A' + 'a');
		if (c != (uint8_t)name[i])
			return 0;
	}
	return 1;
}

/* the header's length (through the first CRLF CRLF, 0: none), then the
 * length: the header plus the first Content-Length field's value
 * (OWS 1*DIGIT OWS), 0 for anything else */
static uint64_t
ref_length(const uint8_t *p, size_t n, uint32_t expect, uint32_t *hdr_out)
{
	size_t hdr = 0, line;
	int st;

	for (size_t i = 0; i + 3 < n; i++) {
		if (memcmp(p + i, "\r\n\r\n", 4) == 0) {
			hdr = i + 4;
			break;
		}
	}
	*hdr_out = (uint32_t)hdr;
	if (hdr == 0 || (st = ref_status(p, hdr)) < 0 || (expect != 0 && (uint32_t)st != expect))
		return 0;
	/* the field lines, each after a LF inside the header */
	for (line = 0; line < hdr; line++) {
		size_t j, k;
		uint64_t v = 0;

		if (p[line] != '\n' || line + 1 >= hdr || !ref_name_is(p + line + 1, hdr - line - 1, "content-length:"))
			continue;
		j = line + 16;
		while (j < hdr && (p[j] == ' ' || p[j] == '\t'))
			j++;
		for (k = j; k < hdr && ref_digit(p[k]); k++)
			if (v < (1ull << 40))
				v = v * 10 + (uint64_t)(p[k] - '0');
		if (k == j)
			return 0;
		while (k < hdr && (p[k] == ' ' || p[k] == '\t'))
			k++;
		if (k + 1 >= hdr || p[k] != '\r' || p[k + 1] != '\n')
			return 0;
		return v + hdr >= UINT32_MAX ? 0 : hdr + v;
	}
	return 0;
}

/* --- one input ---------------------------------------------------------- */

static void
fail_on(const char *what, long got, long want, const uint8_t *p, size_t n)
{
	fprintf(stderr, "test_http_fuzz: %s: %ld, the reference %ld, for %zu bytes:\n", what, got, want, n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\') ? "%c" : "\\x%02x", p[i]);
	fprintf(stderr, "\n");
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t n = size > 65536 ? 65536 : (uint32_t)size, hdr = 0, rhdr = 0, off, len;
	int st = http_status(data, n), rst = ref_status(data, n);

	if (st != rst)
		fail_on("http_status", st, rst, data, n);
	for (uint32_t expect = 0; expect <= 200; expect += 200) {
		uint32_t got = http_response_length(data, n, expect, &hdr);
		uint64_t want = ref_length(data, n, expect, &rhdr);

		if (got != want)
			fail_on("http_response_length", got, (long)want, data, n);
		if (hdr != rhdr)
			fail_on("http_response_length's header", hdr, rhdr, data, n);
	}
	(void)http_wants_close(data, n);
	http_path(data, n, &off, &len);
	{
		const uint8_t *sp = memchr(data, ' ', n);
		uint32_t want = sp != NULL ? (uint32_t)(sp - data) + 1 : 0;

		if (off != want)
			fail_on("http_path's offset: after the first space", off, want, data, n);
		if (off + len > n)
			fail_on("http_path: past the input", off + len, n, data, n);
		for (uint32_t i = off; i < off + len; i++)
			if (data[i] == ' ' || data[i] == '?' || data[i] == '\r')
				fail_on("http_path: a word across its end", i, off + len, data, n);
	}
	return 0;
}

#ifndef SURGE_LIBFUZZER
/* --- the bounded fuzzer ctest runs --------------------------------------- */

#define SEEDS_MAX 64
#define INPUT_MAX 4096

static uint64_t rng;

static uint64_t
next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t
below(uint32_t n)
{
	return n ? (uint32_t)(next_rand() % n) : 0;
}

static const char *const tokens[] = {
	"\r\n", "\r\n\r\n", "\r", "\n", " ", "\t", "HTTP/1.1 ", "HTTP/1.0 ", "HTTP/1.", "200", "2000", "20", " OK",
	"Content-Length:", "content-length: ", "CONTENT-LENGTH:", "Content\rLength:", "4294967295",
	"4294967296", "99999999999999999999", "0", "00000000001", "Connection: close", "keep-alive", "GET ",
	"/a?b", "\x80", "\x7f", "\x01", ":", "-",
};

int
main(void)
{
	const char *src = getenv("SURGE_SRC"), *sec = getenv("SURGE_FUZZ_SECONDS"), *seed = getenv("SURGE_FUZZ_SEED");
	static uint8_t seeds[SEEDS_MAX][INPUT_MAX], buf[2 * INPUT_MAX];
	static size_t seed_len[SEEDS_MAX];
	double secs = sec != NULL ? atof(sec) : 3;
	int nseeds = 0;
	uint64_t rounds = 0, statuses = 0, lengths = 0;
	char path[512];
	struct dirent *de;
	DIR *d;
	time_t t0 = time(NULL);

	rng = seed != NULL ? strtoull(seed, NULL, 0) : 0x5eed2026c0ffeeULL;
	if (rng == 0)
		rng = 1;
	snprintf(path, sizeof(path), "%s/tests/fuzz/http", src != NULL ? src : ".");
	if ((d = opendir(path)) == NULL) {
		fprintf(stderr, "test_http_fuzz: no seeds in %s ($SURGE_SRC)\n", path);
		return 1;
	}
	while ((de = readdir(d)) != NULL && nseeds < SEEDS_MAX) {
		char file[768];
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
		if ((f = fopen(file, "rb")) == NULL)
			continue;
		seed_len[nseeds] = fread(seeds[nseeds], 1, INPUT_MAX, f);
		fclose(f);
		nseeds += seed_len[nseeds] > 0;
	}
	closedir(d);
	if (nseeds < 3) {
		fprintf(stderr, "test_http_fuzz: %d seeds in %s\n", nseeds, path);
		return 1;
	}
	/* the seeds as they are, then mutations of them */
	for (int i = 0; i < nseeds; i++) {
		uint8_t *p = malloc(seed_len[i]);

		memcpy(p, seeds[i], seed_len[i]);
		LLVMFuzzerTestOneInput(p, seed_len[i]);
		free(p);
	}
	while (rounds < 400000 && (rounds % 1024 != 0 || difftime(time(NULL), t0) < secs)) {
		int s = (int)below((uint32_t)nseeds);
		size_t n = seed_len[s];
		uint32_t hdr;
		uint8_t *p;

		memcpy(buf, seeds[s], n);
		for (uint32_t k = 0, ops = 1 + below(4); k < ops; k++) {
			uint32_t at = below((uint32_t)n + 1), op = below(5);

			if (op == 0 && n > 0) {                                /* a byte changed */
				buf[below((uint32_t)n)] = (uint8_t)next_rand();
			} else if (op == 1) {                                  /* a token inserted */
				const char *t = tokens[below(sizeof(tokens) / sizeof(tokens[0]))];
				size_t tl = strlen(t);

				if (n + tl <= INPUT_MAX) {
					memmove(buf + at + tl, buf + at, n - at);
					memcpy(buf + at, t, tl);
					n += tl;
				}
			} else if (op == 2 && n > at) {                        /* a range cut out */
				size_t cut = 1 + below((uint32_t)(n - at));

				memmove(buf + at, buf + at + cut, n - at - cut);
				n -= cut;
			} else if (op == 3) {                                  /* truncated */
				n = at;
			} else if (n > at && n * 2 <= INPUT_MAX) {             /* a chunk repeated */
				size_t len = 1 + below((uint32_t)(n - at));

				memmove(buf + at + len, buf + at, n - at);
				n += len;
			}
		}
		p = malloc(n ? n : 1);                  /* exactly the input: a read past it is caught */
		memcpy(p, buf, n);
		LLVMFuzzerTestOneInput(p, n);
		statuses += http_status(p, (uint32_t)n) >= 0;
		lengths += http_response_length(p, (uint32_t)n, 0, &hdr) != 0;
		free(p);
		rounds++;
	}
	/* the campaign reached the grammar: not only refusals */
	fprintf(stderr, "test_http_fuzz: %d seeds, %llu inputs, %llu status lines, %llu lengths, %.0f s\n", nseeds,
		(unsigned long long)rounds, (unsigned long long)statuses, (unsigned long long)lengths,
		difftime(time(NULL), t0));
	if (rounds < 1000 || statuses < rounds / 100 || lengths < rounds / 100) {
		fprintf(stderr, "test_http_fuzz: too few inputs parsed whole: the mutations miss the grammar\n");
		return 1;
	}
	printf("1 passed, 0 failed\n");
	return 0;
}
#endif
