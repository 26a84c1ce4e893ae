/* SPDX-License-Identifier: BSD-3-Clause
 *
 * fuzz_ref.h - what the fuzz targets' references and checks share, in the
 * ctest build and the libFuzzer build alike (tests/CMakeLists.txt
 * surge_fuzz): be() reads big-endian numbers byte by byte, apart from the
 * parsers' own readers; fail_on() prints the input the parser and the
 * reference disagree on and aborts (libFuzzer keeps it as a crash); the
 * xorshift the fuzzers draw from (fuzz_driver.h, and the engine fuzzers
 * test_conn_fuzz.c and test_pcap_fuzz.c, which replay by SURGE_FUZZ_SEED).
 * Define FUZZ_NAME, the test's name for its messages, before including.
 */
#ifndef FUZZ_REF_H
#define FUZZ_REF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static inline unsigned long
be(const uint8_t *p, int n)
{
	unsigned long v = 0;

	for (int i = 0; i < n; i++)
		v = v * 256 + p[i];
	return v;
}

#ifdef FUZZ_NAME
static inline void
fail_on(const char *what, long got, long want, const uint8_t *p, size_t n)
{
	fprintf(stderr, FUZZ_NAME ": %s: %ld, the reference %ld, for %zu bytes:\n", what, got, want, n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%02x", p[i]);
	fprintf(stderr, "\n");
	abort();
}
#endif

static inline uint64_t
fuzz_xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* a draw below n (0 when n is 0) */
static inline uint32_t
fuzz_xbelow(uint64_t *s, uint32_t n)
{
	return n ? (uint32_t)(fuzz_xorshift(s) % n) : 0;
}

#endif
