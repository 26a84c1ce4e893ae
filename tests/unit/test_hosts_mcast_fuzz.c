/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_hosts_mcast_fuzz.c - a fuzz target for the emulated hosts'
 * multicast query parser (core/hosts/hosts_mcast_parse.c): the IGMP and
 * MLD queries any station on the link may send. An input is an Ethernet
 * frame (its type at bytes 12..13, the L3 packet after byte 14); each is
 * checked against a reference written apart, literally from RFC 2236 2,
 * RFC 3376 4.1 and 7.1, RFC 2710 3 and RFC 3810 5.1 (the kind, version,
 * maximum response time, group and source count, the checksums summed
 * word by word), and each input sits in an allocation of its exact size
 * (the sanitizer pass fails a read past it).
 *
 * As test_hosts_fuzz.c: in ctest a bounded deterministic fuzzer mutating
 * the seeds of tests/fuzz/hosts_mcast/; with libFuzzer (fuzz/hosts_mcast
 * in a clang build, or by hand):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DSURGE_LIBFUZZER \
 *     -Icore/hosts tests/unit/test_hosts_mcast_fuzz.c core/hosts/hosts_mcast_parse.c -o mcast_fuzz
 *   ./mcast_fuzz tests/fuzz/hosts_mcast
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FUZZ_NAME "test_hosts_mcast_fuzz"
#include "fuzz_ref.h"
#include "hosts_mcast_parse.h"

/* --- the reference ------------------------------------------------------- */

struct ref {
	int kind, version;
	unsigned long resp_ms, nsrc;
	uint8_t group[16];
};

/* RFC 1071: the 16-bit one's complement of the one's complement sum; a
 * message whose checksum is right sums to 0xffff */
static int
sums_right(const uint8_t *pre, size_t npre, const uint8_t *p, size_t n)
{
	unsigned long s = 0;

	for (size_t i = 0; i < npre; i += 2)
		s += be(pre + i, 2);
	for (size_t i = 0; i < n; i += 2)
		s += i + 1 < n ? be(p + i, 2) : (unsigned long)p[i] * 256;
	while (s > 0xffff)
		s = (s & 0xffff) + (s >> 16);
	return s == 0xffff;
}

/* RFC 3376 4.1.1: a code of 128 or more is 1 exp(3) mant(4): (mant | 0x10) << (exp + 3) */
static unsigned long
igmp_code(unsigned long c)
{
	return c < 128 ? c : ((c & 15) | 16) << (((c >> 4) & 7) + 3);
}

/* RFC 3810 5.1.3: a code of 32768 or more is 1 exp(3) mant(12): (mant | 0x1000) << (exp + 3) */
static unsigned long
mld_code(unsigned long c)
{
	return c < 32768 ? c : ((c & 0xfff) | 0x1000) << (((c >> 12) & 7) + 3);
}

static void
ref_igmp(const uint8_t *ip, size_t len, struct ref *r)
{
	if (len < 20 || ip[0] / 16 != 4 || ip[9] != 2)
		return;
	size_t hl = (ip[0] % 16) * 4, total = be(ip + 2, 2);

	if (hl < 20 || total < hl || total > len || (be(ip + 6, 2) & 0x3fff) != 0)
		return;                        /* not a whole unfragmented datagram */
	const uint8_t *m = ip + hl;
	size_t n = total - hl;

	if (n == 0 || m[0] != 0x11)
		return;
	r->kind = MQ_BAD;
	if (n < 8 || (n > 8 && n < 12) || !sums_right(NULL, 0, m, n))
		return;
	memcpy(r->group, m + 4, 4);
	if (n == 8) {
		r->version = m[1] == 0 ? 1 : 2;
		r->resp_ms = m[1] == 0 ? 10000 : m[1] * 100ul;
		r->kind = MQ_QUERY;
		return;
	}
	r->nsrc = be(m + 10, 2);
	if (12 + r->nsrc * 4 > n)
		return;
	r->version = 3;
	r->resp_ms = igmp_code(m[1]) * 100;
	r->kind = MQ_QUERY;
}

static void
ref_mld(const uint8_t *ip, size_t len, struct ref *r)
{
	if (len < 40 || ip[0] / 16 != 6)
		return;
	size_t end = 40 + be(ip + 4, 2), at = 40;
	int next = ip[6];

	if (end > len)
		return;
	if (next == 0) {
		if (at + 8 > end || at + 8 + ip[at + 1] * 8ul > end)
			return;
		next = ip[at];
		at += 8 + ip[at + 1] * 8ul;
	}
	if (next != 58 || at + 4 > end || ip[at] != 130)
		return;
	const uint8_t *m = ip + at;
	size_t n = end - at;
	uint8_t pseudo[40];

	r->kind = MQ_BAD;
	if (n < 24 || (n > 24 && n < 28))
		return;
	/* RFC 2460 8.1: source, destination, the upper-layer length (32 bits), 3 zero bytes, 58 */
	memcpy(pseudo, ip + 8, 32);
	pseudo[32] = (uint8_t)(n >> 24);
	pseudo[33] = (uint8_t)(n >> 16);
	pseudo[34] = (uint8_t)(n >> 8);
	pseudo[35] = (uint8_t)n;
	pseudo[36] = pseudo[37] = pseudo[38] = 0;
	pseudo[39] = 58;
	if (!sums_right(pseudo, 40, m, n))
		return;
	memcpy(r->group, m + 8, 16);
	if (n == 24) {
		r->version = 1;
		r->resp_ms = be(m + 4, 2);
		r->kind = MQ_QUERY;
		return;
	}
	r->nsrc = be(m + 26, 2);
	if (28 + r->nsrc * 16 > n)
		return;
	r->version = 2;
	r->resp_ms = mld_code(be(m + 4, 2));
	r->kind = MQ_QUERY;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mquery q;
	struct ref r;

	if (size < 14)
		return 0;
	uint16_t type = (uint16_t)be(data + 12, 2);
	enum mquery_kind k = mquery_parse(type, data + 14, size - 14, &q);

	memset(&r, 0, sizeof(r));
	if (type == 0x0800)
		ref_igmp(data + 14, size - 14, &r);
	else if (type == 0x86dd)
		ref_mld(data + 14, size - 14, &r);
	if (k != q.kind)
		fail_on("the kind returned and the one stored", k, q.kind, data, size);
	if ((int)k != r.kind)
		fail_on("the kind", k, r.kind, data, size);
	if (k != MQ_QUERY)
		return 0;
	if (q.version != r.version || q.max_resp_ms != r.resp_ms || q.nsrc != r.nsrc)
		fail_on("version, max response time or sources", (long)q.version * 100000000 + q.max_resp_ms,
			(long)r.version * 100000000 + (long)r.resp_ms, data, size);
	if (memcmp(q.group, r.group, 16) != 0)
		fail_on("the group", 0, 1, data, size);
	return 0;
}

#ifndef SURGE_LIBFUZZER
/* --- the bounded fuzzer ctest runs (fuzz_driver.h) ---------------------- */

#include "fuzz_driver.h"

/* pieces of the grammar: the IPv4 and IPv6 types, IGMP's protocol, the
 * query type, MLD's next headers, router alert, codes past 128 / 32768 */
static const struct fuzz_token tokens[] = {
	FUZZ_TOKEN("\x08\x00"), FUZZ_TOKEN("\x86\xdd"), FUZZ_TOKEN("\x46"), FUZZ_TOKEN("\x02"), FUZZ_TOKEN("\x11"),
	FUZZ_TOKEN("\x11\x80"), FUZZ_TOKEN("\x82\x00"), FUZZ_TOKEN("\x3a"), FUZZ_TOKEN("\x00"),
	FUZZ_TOKEN("\x94\x04\x00\x00"), FUZZ_TOKEN("\x05\x02\x00\x00"), FUZZ_TOKEN("\xff\xff"),
	FUZZ_TOKEN("\x00\x01"),
};

int
main(void)
{
	static struct fuzz z;
	uint64_t by_kind[MQ_QUERY + 1] = { 0 };
	uint8_t *p;
	size_t n;

	if (fuzz_start(&z, "test_hosts_mcast_fuzz", "hosts_mcast", 0x5eed2026a1b2ULL) != 0)
		return 1;
	while ((p = fuzz_next(&z, tokens, sizeof(tokens) / sizeof(tokens[0]), &n)) != NULL) {
		struct mquery q;

		LLVMFuzzerTestOneInput(p, n);
		if (n >= 14)
			by_kind[mquery_parse((uint16_t)be(p + 12, 2), p + 14, n - 14, &q)]++;
		free(p);
	}
	fprintf(stderr, "test_hosts_mcast_fuzz: %d seeds, %llu inputs: %llu queries, %llu bad, %llu other, %.0f s\n",
		z.nseeds, (unsigned long long)z.rounds, (unsigned long long)by_kind[MQ_QUERY],
		(unsigned long long)by_kind[MQ_BAD], (unsigned long long)by_kind[MQ_NONE], difftime(time(NULL), z.t0));
	/* the campaign reached the grammar: not only refusals */
	if (z.rounds < 1000 || by_kind[MQ_QUERY] < z.rounds / 100 || by_kind[MQ_BAD] < z.rounds / 100) {
		fprintf(stderr, "test_hosts_mcast_fuzz: too few inputs of each kind: the mutations miss the grammar\n");
		return 1;
	}
	printf("1 passed, 0 failed\n");
	return 0;
}
#endif
