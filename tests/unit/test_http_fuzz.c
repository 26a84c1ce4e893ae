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
/* --- the bounded fuzzer ctest runs (fuzz_driver.h) ---------------------- */

#include "fuzz_driver.h"

static const struct fuzz_token tokens[] = {
	FUZZ_TOKEN("\r\n"), FUZZ_TOKEN("\r\n\r\n"), FUZZ_TOKEN("\r"), FUZZ_TOKEN("\n"), FUZZ_TOKEN(" "),
	FUZZ_TOKEN("\t"), FUZZ_TOKEN("HTTP/1.1 "), FUZZ_TOKEN("HTTP/1.0 "), FUZZ_TOKEN("HTTP/1."), FUZZ_TOKEN("200"),
	FUZZ_TOKEN("2000"), FUZZ_TOKEN("20"), FUZZ_TOKEN(" OK"), FUZZ_TOKEN("Content-Length:"),
	FUZZ_TOKEN("content-length: "), FUZZ_TOKEN("CONTENT-LENGTH:"), FUZZ_TOKEN("Content\rLength:"),
	FUZZ_TOKEN("4294967295"), FUZZ_TOKEN("4294967296"), FUZZ_TOKEN("99999999999999999999"), FUZZ_TOKEN("0"),
	FUZZ_TOKEN("00000000001"), FUZZ_TOKEN("Connection: close"), FUZZ_TOKEN("keep-alive"), FUZZ_TOKEN("GET "),
	FUZZ_TOKEN("/a?b"), FUZZ_TOKEN("\x80"), FUZZ_TOKEN("\x7f"), FUZZ_TOKEN("\x01"), FUZZ_TOKEN(":"),
	FUZZ_TOKEN("-"),
};

int
main(void)
{
	static struct fuzz z;
	uint64_t statuses = 0, lengths = 0;
	uint8_t *p;
	size_t n;

	if (fuzz_start(&z, "test_http_fuzz", "http", 0x5eed2026c0ffeeULL) != 0)
		return 1;
	while ((p = fuzz_next(&z, tokens, sizeof(tokens) / sizeof(tokens[0]), &n)) != NULL) {
		uint32_t hdr;

		LLVMFuzzerTestOneInput(p, n);
		statuses += http_status(p, (uint32_t)n) >= 0;
		lengths += http_response_length(p, (uint32_t)n, 0, &hdr) != 0;
		free(p);
	}
	/* the campaign reached the grammar: not only refusals */
	fprintf(stderr, "test_http_fuzz: %d seeds, %llu inputs, %llu status lines, %llu lengths, %.0f s\n", z.nseeds,
		(unsigned long long)z.rounds, (unsigned long long)statuses, (unsigned long long)lengths,
		difftime(time(NULL), z.t0));
	if (z.rounds < 1000 || statuses < z.rounds / 100 || lengths < z.rounds / 100) {
		fprintf(stderr, "test_http_fuzz: too few inputs parsed whole: the mutations miss the grammar\n");
		return 1;
	}
	printf("1 passed, 0 failed\n");
	return 0;
}
#endif
