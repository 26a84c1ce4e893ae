/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_hosts_fuzz.c - a fuzz target for the emulated hosts' frame parser
 * (core/hosts/hosts_parse.c), the bytes any station on the link sends to
 * surge's hosts: ARP, ICMP echo, DHCP replies (and requests, to a server
 * table). Each input is checked against a reference written apart from the parser, slowly and literally
 * from RFC 2131 and 2132 (a DHCP reply's message type, lease time and
 * server identifier, and whether its options are whole), and every pointer
 * the parser hands out must lie inside the input (the sanitizer pass
 * places each input in an allocation of its exact size, so a read past it
 * is a failure).
 *
 * As test_http_fuzz.c: in ctest, a bounded deterministic fuzzer mutating
 * the seeds of tests/fuzz/hosts/ for SURGE_FUZZ_SECONDS (default 3) or
 * 400 000 inputs (SURGE_FUZZ_SEED replays a run); with libFuzzer
 * (fuzz/hosts in a clang build, or by hand):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DSURGE_LIBFUZZER \
 *     -Icore/hosts tests/unit/test_hosts_fuzz.c core/hosts/hosts_parse.c -o hosts_fuzz
 *   ./hosts_fuzz tests/fuzz/hosts
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hosts_parse.h"

/* --- the reference ------------------------------------------------------- */

struct ref {
	int whole;                  /* the options end with 255, each within the input */
	unsigned msg;
	unsigned long lease, server;
};

static unsigned long
be(const uint8_t *p, int n)
{
	unsigned long v = 0;

	for (int i = 0; i < n; i++)
		v = v * 256 + p[i];
	return v;
}

/* RFC 2132 2: options are pad (0), end (255) or code, length, value. The
 * options of the BOOTP message at b (n bytes, the UDP payload), read byte
 * by byte; a message type or a 4-byte option of another length is no
 * usable reply. */
static void
ref_dhcp(const uint8_t *b, size_t n, struct ref *r, int op)
{
	size_t i = 240;

	memset(r, 0, sizeof(*r));
	/* a BOOTREPLY (op 2) for an Ethernet client (htype 1, hlen 6: its
	 * chaddr is a MAC) with the magic cookie */
	if (n < 240 || b[0] != op || b[1] != 1 || b[2] != 6 || be(b + 236, 4) != 0x63825363ul)
		return;
	while (i < n) {
		if (b[i] == 0) {
			i += 1;
		} else if (b[i] == 255) {
			r->whole = r->msg != 0;
			return;
		} else {
			if (i + 1 >= n)
				return;
			size_t len = b[i + 1];

			if (i + 2 + len > n)
				return;
			if (b[i] == 53) {
				if (len != 1 || b[i + 2] < 1 || b[i + 2] > 7)
					return;
				r->msg = b[i + 2];
			}
			if (b[i] == 51 || b[i] == 54 || b[i] == 1 || b[i] == 50 || b[i] == 58 || b[i] == 59) {
				if (len != 4)
					return;
				if (b[i] == 51)
					r->lease = be(b + i + 2, 4);
				if (b[i] == 54)
					r->server = be(b + i + 2, 4);
			}
			if (b[i] == 3 && len < 4)
				return;
			i += 2 + len;
		}
	}
}

static void
fail_on(const char *what, long got, long want, const uint8_t *p, size_t n)
{
	fprintf(stderr, "test_hosts_fuzz: %s: %ld, the reference %ld, for %zu bytes:\n", what, got, want, n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%02x", p[i]);
	fprintf(stderr, "\n");
	abort();
}

static int
inside(const uint8_t *q, size_t len, const uint8_t *p, size_t n)
{
	return q >= p && q + len <= p + n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hframe f;
	enum hframe_kind k = hframe_parse(data, size, &f);

	if (k != f.kind)
		fail_on("the kind returned and the one stored", k, f.kind, data, size);
	if (size >= 14 && !inside(f.src_mac, 6, data, size))
		fail_on("src_mac outside the input", 0, 1, data, size);
	if (k == HF_ARP && !inside(f.sha, 6, data, size))
		fail_on("ARP sha outside the input", 0, 1, data, size);
	if ((k == HF_DHCP || k == HF_DHCP_REQ) && !inside(f.chaddr, 6, data, size))
		fail_on("chaddr outside the input", 0, 1, data, size);
	if (k == HF_ECHO || k == HF_DHCP || k == HF_DHCP_REQ) {
		if ((size_t)f.l2 + f.ip_len > size || f.ihl < 20 || f.ihl > f.ip_len)
			fail_on("the IPv4 lengths past the input", (long)f.l2 + f.ip_len, (long)size, data, size);
	}
	if (k == HF_DHCP || k == HF_DHCP_BAD || k == HF_DHCP_REQ || k == HF_DHCP_REQ_BAD) {
		/* a reply (port 68) or a request (port 67): op 2 or 1 */
		int req = k == HF_DHCP_REQ || k == HF_DHCP_REQ_BAD;
		enum hframe_kind good = req ? HF_DHCP_REQ : HF_DHCP;
		/* the UDP payload, as the reference finds it */
		const uint8_t *ip = data + f.l2;
		size_t ihl = (size_t)(ip[0] & 15) * 4, ulen = be(ip + ihl + 4, 2);
		struct ref r;

		if (ulen >= 8 && ihl + ulen <= be(ip + 2, 2))
			ref_dhcp(ip + ihl + 8, ulen - 8, &r, req ? 1 : 2);
		else
			memset(&r, 0, sizeof(r));
		if ((k == good) != r.whole)
			fail_on("a usable DHCP reply or request", k == good, r.whole, data, size);
		if (k == good && (f.msg != r.msg || f.lease_s != r.lease || f.server_id != r.server))
			fail_on("message type, lease or server", (long)f.msg * 1000 + (f.lease_s != r.lease) * 10 +
				(f.server_id != r.server), (long)r.msg * 1000, data, size);
	}
	return 0;
}

#ifndef SURGE_LIBFUZZER
/* --- the bounded fuzzer ctest runs (fuzz_driver.h) ---------------------- */

#include "fuzz_driver.h"

/* pieces of the grammar: option heads, lengths that run over, the end,
 * a VLAN tag, the ARP and IPv4 types, the DHCP ports */
static const struct fuzz_token tokens[] = {
	FUZZ_TOKEN("\xff"), FUZZ_TOKEN("\0"), FUZZ_TOKEN("\x35\x01\x05"), FUZZ_TOKEN("\x35\x01\x09"),
	FUZZ_TOKEN("\x35\x02\x05"), FUZZ_TOKEN("\x33\x04\0\0"), FUZZ_TOKEN("\x36\x04\x0a\x01"),
	FUZZ_TOKEN("\x33\xff"), FUZZ_TOKEN("\x01\x03\xff"), FUZZ_TOKEN("\x03\0"),
	FUZZ_TOKEN("\x81\0\0\x07"), FUZZ_TOKEN("\x08\x06"), FUZZ_TOKEN("\x45"), FUZZ_TOKEN("\0\x44"),
	FUZZ_TOKEN("\0\x43"), FUZZ_TOKEN("\x32\x04\x0a\x01"), FUZZ_TOKEN("\x01\x01\x06\0"),
};

int
main(void)
{
	static struct fuzz z;
	uint64_t by_kind[HF_KINDS] = { 0 };
	uint8_t *p;
	size_t n;

	if (fuzz_start(&z, "test_hosts_fuzz", "hosts", 0x5eed2026d4c9ULL) != 0)
		return 1;
	while ((p = fuzz_next(&z, tokens, sizeof(tokens) / sizeof(tokens[0]), &n)) != NULL) {
		struct hframe f;

		LLVMFuzzerTestOneInput(p, n);
		by_kind[hframe_parse(p, n, &f)]++;
		free(p);
	}
	fprintf(stderr, "test_hosts_fuzz: %d seeds, %llu inputs: %llu ARP, %llu echo, %llu DHCP, %llu bad DHCP, "
		"%llu DHCP requests, %llu bad requests, %llu bad, %llu other, %.0f s\n", z.nseeds,
		(unsigned long long)z.rounds,
		(unsigned long long)by_kind[HF_ARP], (unsigned long long)by_kind[HF_ECHO],
		(unsigned long long)by_kind[HF_DHCP], (unsigned long long)by_kind[HF_DHCP_BAD],
		(unsigned long long)by_kind[HF_DHCP_REQ], (unsigned long long)by_kind[HF_DHCP_REQ_BAD],
		(unsigned long long)by_kind[HF_BAD], (unsigned long long)by_kind[HF_OTHER], difftime(time(NULL), z.t0));
	/* the campaign reached the grammar: not only refusals */
	if (z.rounds < 1000 || by_kind[HF_DHCP] < z.rounds / 100 || by_kind[HF_DHCP_BAD] < z.rounds / 100 ||
	    by_kind[HF_ARP] < z.rounds / 100 || by_kind[HF_DHCP_REQ] < z.rounds / 100 ||
	    by_kind[HF_DHCP_REQ_BAD] < z.rounds / 100) {
		fprintf(stderr, "test_hosts_fuzz: too few inputs of each kind: the mutations miss the grammar\n");
		return 1;
	}
	printf("1 passed, 0 failed\n");
	return 0;
}
#endif
