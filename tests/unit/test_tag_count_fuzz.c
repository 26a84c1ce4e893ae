/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_tag_count_fuzz.c - a fuzz target for an OTG port's counts of what
 * it receives and sends (core/dataplane/tag_count.c): the received bytes
 * are the network's. Each input is a frame; a burst holds it and some of
 * its prefixes, each in an allocation of its exact size (a read past a
 * frame's length is the sanitizer pass's failure). The counts per flow,
 * per tag value, the probes and the frames without a tag are checked
 * against a reference written apart from the counter: the tag searched
 * byte by byte, the tagged bits read one bit at a time from the frame's
 * bytes, each bit's byte checked against the length. The sent side's
 * counts (read and count the burst, take the unsent back) against the
 * same reference.
 *
 * As test_hosts_fuzz.c: in ctest, a bounded deterministic fuzzer mutating
 * the seeds of tests/fuzz/tag_count/ for SURGE_FUZZ_SECONDS (default 3) or
 * 400 000 inputs (SURGE_FUZZ_SEED replays a run); with libFuzzer
 * (fuzz/tag_count in a clang build, or by hand):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DSURGE_LIBFUZZER -Icore/include \
 *     tests/unit/test_tag_count_fuzz.c core/dataplane/tag_count.c -o tag_count_fuzz
 *   ./tag_count_fuzz tests/fuzz/tag_count
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FUZZ_NAME "test_tag_count_fuzz"
#include "fuzz_ref.h"
#include "surge.h"

/* The configuration: tags at 42, 46 and 62 (the header lengths); flow 0
 * timed (latency receiver 7); flow 1 tagged at 46, a 10-bit tag across
 * bytes 34-35 (a UDP source port's low bits); flow 2 tagged at 62, 4 bits
 * of byte 0 then the last 3 bits of its headers; flow 3 untagged. */
#define NFLOWS 4
#define NSLOTS (1024 + 120)         /* 8 slots short of flow 2's last values: those not counted */
static const uint16_t offs[] = { 42, 46, 62 };
static const int32_t lat[NFLOWS] = { 7, -1, -1, -1 };
static const int32_t tagger_of[NFLOWS] = { -1, 0, 1, -1 };
#define HZ_NS 0.5                   /* ns a TSC cycle */
#define TSC 1000000ULL

struct rtag {
	unsigned first_bit, len;    /* from the frame's start */
};
struct rflow {
	unsigned hb, at, ntags;
	struct rtag tag[2];
};
static const struct rflow rtagged[2] = {
	{ 46, 0, 1, { { 34 * 8 + 6, 10 } } },
	{ 62, 1024, 2, { { 0, 4 }, { 62 * 8 - 3, 3 } } },
};

/* --- the reference ------------------------------------------------------- */

struct rcount {
	unsigned long frames, bytes;
};
struct ref {
	struct rcount flow[NFLOWS];
	struct rcount slot[NSLOTS];
	unsigned long probes, probe_seq_sum, probe_ns_sum;
	unsigned other[SURGE_BURST_MAX], nother;
};

/* the bit at position pos of frame p (l bytes): 0/1, or -1 past l */
static int
bit_at(const uint8_t *p, size_t l, unsigned pos)
{
	if (pos / 8 >= l)
		return -1;
	return (p[pos / 8] >> (7 - pos % 8)) & 1;
}

/* the value of the tagged flow f in frame p, -1 when a bit is past l */
static long
ref_value(const struct rflow *f, const uint8_t *p, size_t l)
{
	long v = 0;

	for (unsigned t = 0; t < f->ntags; t++) {
		for (unsigned i = 0; i < f->tag[t].len; i++) {
			int b = bit_at(p, l, f->tag[t].first_bit + i);

			if (b < 0)
				return -1;
			v = v * 2 + b;
		}
	}
	return v;
}

static unsigned long
le(const uint8_t *p, int n)
{
	unsigned long v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v * 256 + p[i];
	return v;
}

static void
ref_frame(struct ref *r, unsigned idx, const uint8_t *p, size_t l)
{
	for (unsigned j = 0; j < sizeof(offs) / sizeof(offs[0]); j++) {
		unsigned o = offs[j];

		if (l < o + 6 || p[o] != 'S' || p[o + 1] != 'O' || p[o + 2] != 'T' || p[o + 3] != 'G')
			continue;
		unsigned long k = be(p + o + 4, 2);

		if (k >= NFLOWS)
			return;
		r->flow[k].frames++;
		r->flow[k].bytes += l + 4;
		if (tagger_of[k] >= 0 && rtagged[tagger_of[k]].hb == o) {
			long v = ref_value(&rtagged[tagger_of[k]], p, l);

			if (v >= 0 && rtagged[tagger_of[k]].at + (unsigned long)v < NSLOTS) {
				r->slot[rtagged[tagger_of[k]].at + v].frames++;
				r->slot[rtagged[tagger_of[k]].at + v].bytes += l + 4;
			}
		}
		if (lat[k] >= 0 && l >= o + 6 + 16 && memcmp(p + o + 6, "SRGP", 4) == 0 && le(p + o + 14, 8) != 0) {
			unsigned long sent = le(p + o + 14, 8);

			r->probes++;
			r->probe_seq_sum += le(p + o + 10, 4);
			r->probe_ns_sum += sent < TSC ? (unsigned long)((double)(TSC - sent) * HZ_NS) : 0;
		}
		return;
	}
	r->other[r->nother++] = idx;
}

/* --- the target ---------------------------------------------------------- */

static void
tagger(struct surge_otg_tagger *t, const struct rflow *f)
{
	memset(t, 0, sizeof(*t));
	t->at = f->at;
	t->hb = (uint16_t)f->hb;
	t->n = (uint8_t)f->ntags;
	for (unsigned i = 0; i < f->ntags; i++) {
		t->tag[i].byte = (uint16_t)(f->tag[i].first_bit / 8);
		t->tag[i].bit = (uint8_t)(f->tag[i].first_bit % 8);
		t->tag[i].len = (uint8_t)f->tag[i].len;
	}
}

static unsigned long
sum_probe(const struct surge_otg_rx *st, int seq)
{
	unsigned long s = 0;

	for (uint32_t i = 0; i < st->n_probe; i++) {
		if (st->probe[i].lat != 7)
			fail_on("a probe's receiver", st->probe[i].lat, 7, NULL, 0);
		s += seq ? st->probe[i].seq : st->probe[i].ns;
	}
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the frame and its prefixes cut at a few lengths (each in its own allocation) */
	static const size_t cut[] = { 0, 1, 3, 7, 17 };
	static struct surge_burst b;
	static struct surge_otg_rx st;
	static struct surge_otg_count rx[NFLOWS], slots[NSLOTS];
	static struct surge_otg_tx tx;
	static struct ref r;
	struct surge_otg_tagger tg[2];
	uint8_t *frame[sizeof(cut) / sizeof(cut[0])];
	uint32_t n = 0;

	if (size > 0xffff)
		return 0;
	memset(&b, 0, sizeof(b));
	memset(&st, 0, sizeof(st));
	memset(rx, 0, sizeof(rx));
	memset(slots, 0, sizeof(slots));
	memset(&r, 0, sizeof(r));
	tagger(&tg[0], &rtagged[0]);
	tagger(&tg[1], &rtagged[1]);
	for (size_t c = 0; c < sizeof(cut) / sizeof(cut[0]); c++) {
		if (cut[c] > size || (c > 0 && cut[c] == 0))
			continue;
		size_t l = size - cut[c];

		frame[n] = malloc(l ? l : 1);
		if (frame[n] == NULL)
			abort();
		memcpy(frame[n], data, l);
		b.data[n] = frame[n];
		b.len[n] = (uint16_t)l;
		ref_frame(&r, n, frame[n], l);
		n++;
	}
	b.n = n;
	b.tsc = TSC;
	st.nflows = NFLOWS;
	st.noffs = sizeof(offs) / sizeof(offs[0]);
	st.offs = offs;
	st.rx = rx;
	st.lat = lat;
	st.tagger_of = tagger_of;
	st.taggers = tg;
	st.slots = slots;
	st.nslots = NSLOTS;
	st.ns_per_cycle = HZ_NS;

	int got = surge_otg_rx_count(&st, &b);

	if (got != (int)r.nother || st.n_other != r.nother)
		fail_on("frames without a tag", got, r.nother, data, size);
	for (uint32_t i = 0; i < r.nother; i++)
		if (st.other[i] != r.other[i])
			fail_on("a frame without a tag", st.other[i], r.other[i], data, size);
	for (int k = 0; k < NFLOWS; k++) {
		if (rx[k].frames != (double)r.flow[k].frames || rx[k].bytes != (double)r.flow[k].bytes)
			fail_on("a flow's frames", (long)rx[k].frames, (long)r.flow[k].frames, data, size);
		if (r.flow[k].frames > 0 && (rx[k].first != (double)TSC || rx[k].last != (double)TSC))
			fail_on("a flow's first TSC", (long)rx[k].first, (long)TSC, data, size);
	}
	for (int s = 0; s < NSLOTS; s++)
		if (slots[s].frames != (double)r.slot[s].frames || slots[s].bytes != (double)r.slot[s].bytes)
			fail_on("a tag value's frames", (long)slots[s].frames, (long)r.slot[s].frames, data, size);
	if (st.n_probe != r.probes || sum_probe(&st, 1) != r.probe_seq_sum || sum_probe(&st, 0) != r.probe_ns_sum)
		fail_on("probes", st.n_probe, (long)r.probes, data, size);

	/* the sent side: the burst read by flow 1's and flow 2's readers, counted, the last ones taken back */
	for (int f = 0; f < 2; f++) {
		uint32_t sent = n > 0 ? data[0] % (n + 1) : 0;

		memset(slots, 0, sizeof(slots));
		if (surge_otg_tx_read(&tx, &tg[f], &b, slots, NSLOTS) != (int)n)
			fail_on("frames read", tx.n, n, data, size);
		if (surge_otg_tx_unsent(&tx, &tg[f], slots, NSLOTS, sent) < 0)
			fail_on("unsent", -1, 0, data, size);
		memset(r.slot, 0, sizeof(r.slot));
		for (uint32_t i = 0; i < sent; i++) {
			long v = ref_value(&rtagged[f], b.data[i], b.len[i]);

			if (v >= 0 && rtagged[f].at + (unsigned long)v < NSLOTS) {
				r.slot[rtagged[f].at + v].frames++;
				r.slot[rtagged[f].at + v].bytes += b.len[i] + 4u;
			}
		}
		for (int s = 0; s < NSLOTS; s++)
			if (slots[s].frames != (double)r.slot[s].frames || slots[s].bytes != (double)r.slot[s].bytes)
				fail_on("a sent tag value's frames", (long)slots[s].frames, (long)r.slot[s].frames, data,
					size);
	}
	for (uint32_t i = 0; i < n; i++)
		free(frame[i]);
	return 0;
}

#ifndef SURGE_LIBFUZZER
/* --- the bounded fuzzer ctest runs (fuzz_driver.h) ---------------------- */

#include "fuzz_driver.h"

/* pieces of the grammar: the tag, flow numbers, the probe's magic */
static const struct fuzz_token tokens[] = {
	FUZZ_TOKEN("SOTG"), FUZZ_TOKEN("SOTG\x00\x00"), FUZZ_TOKEN("SOTG\x00\x01"), FUZZ_TOKEN("SOTG\x00\x02"),
	FUZZ_TOKEN("\x00\x03"), FUZZ_TOKEN("\xff\xff"), FUZZ_TOKEN("SRGP"), FUZZ_TOKEN("\x00"),
};

int
main(void)
{
	static struct fuzz z;
	unsigned long flows[NFLOWS] = { 0 }, other = 0;
	uint8_t *p;
	size_t n;

	if (fuzz_start(&z, FUZZ_NAME, "tag_count", 0x5eed2026c0deULL) != 0)
		return 1;
	while ((p = fuzz_next(&z, tokens, sizeof(tokens) / sizeof(tokens[0]), &n)) != NULL) {
		struct ref r;

		LLVMFuzzerTestOneInput(p, n);
		memset(&r, 0, sizeof(r));
		ref_frame(&r, 0, p, n);
		for (int k = 0; k < NFLOWS; k++)
			flows[k] += r.flow[k].frames;
		other += r.nother;
		free(p);
	}
	fprintf(stderr, FUZZ_NAME ": %d seeds, %llu inputs: flows %lu %lu %lu %lu, %lu without a tag, %.0f s\n",
		z.nseeds, (unsigned long long)z.rounds, flows[0], flows[1], flows[2], flows[3], other,
		difftime(time(NULL), z.t0));
	/* the campaign reached every flow and the frames without a tag */
	for (int k = 0; k < NFLOWS; k++)
		if (z.rounds < 1000 || flows[k] < z.rounds / 100 || other < z.rounds / 100) {
			fprintf(stderr, FUZZ_NAME ": too few inputs of each kind: the mutations miss the tags\n");
			return 1;
		}
	printf("1 passed, 0 failed\n");
	return 0;
}
#endif
