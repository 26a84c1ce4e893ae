/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_pcap.c - pcap writing and replay (core/io/) on temporary files.
 *
 * Proves: a writer stores every packet of a burst (sizes 14..9000 bytes)
 * with burst.tsc turned into wall-clock time, in nano- or microseconds, cut
 * to snaplen, and libpcap reads back the same bytes and times; the reader
 * loads such a file (and a libpcap-written pcapng-free classic file of
 * another link type is refused), counts records and bytes, and fills bursts
 * from a pool with the same bytes and the original gaps after each record
 * in gap_ns[] (scaled by the speed, none at speed 0); passes: loops = N
 * gives N passes then 0, 0 never ends, rewind starts over; a record larger
 * than the pool's data room fails naming the file and the record, keeps no
 * mbuf and moves no cursor; truncated files (inside a record, a record
 * header, the file header) and garbage fail at open naming the file (and
 * the record); ids are checked (kind, closed); pcap_close_all flushes a
 * writer nobody closed. EAL runs with --no-huge and no devices (mbuf pools
 * need it); the tests skip without it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <pcap/pcap.h>
#include <rte_cycles.h>

#include "run.h"
#include "check.h"

static struct surge_opts opts;
static char dir[64];
static int pool, small_pool;

#define NFRAMES 8
static const uint16_t sizes[NFRAMES] = { 60, 14, 1514, 64, 333, 1000, 9000, 61 };
static const uint32_t gaps_us[NFRAMES] = { 0, 1000, 250, 7, 20000, 1, 123456, 5 }; /* before each */
static uint8_t frames[NFRAMES][9000];

static const char *
path_of(const char *name)
{
	static char p[4][160];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static int
group_setup(void **state)
{
	struct surge_pool_conf big = { .size = 63, .data_room = 9000, .socket = -1 };
	struct surge_pool_conf small = { .size = 31, .data_room = 128, .socket = -1 };
	int rc;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/surge-test-pcap.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	for (int k = 0; k < NFRAMES; k++)
		for (int i = 0; i < sizes[k]; i++)
			frames[k][i] = (uint8_t)(k * 31 + i * 7);
	opts.cmd = CMD_TEST;
	opts.no_huge = 1;
	opts.quiet = 1;
	if (rt_create(&opts) != 0)
		return -1;
	if ((rc = boot_start(&opts, "test_pcap")) != 0) {
		fprintf(stderr, "test_pcap: EAL did not start: %s\n", surge_last_error());
		if (rc == -EINVAL)
			return -1;
		exit(77);
	}
	pool = surge_pool_create(&big);
	small_pool = surge_pool_create(&small);
	return pool < 0 || small_pool < 0 ? -1 : 0;
}

static int
group_teardown(void **state)
{
	char cmd[128];

	(void)state;
	pcap_close_all();
	ports_close_all();
	pools_check_and_free();
	eal_stop();
	rt_destroy();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void
assert_pool_full(int id)
{
	struct surge_pool_info pi;

	assert_int_equal(surge_pool_info(id, &pi), 0);
	assert_int_equal(pi.avail, pi.size);
}

/* Writes the frames, one burst each, spaced by gaps_us; the first at tsc0. */
static void
write_frames(const char *path, uint32_t snaplen, int nano)
{
	struct surge_burst *b = surge_burst_new(-1, 4);
	uint64_t hz = surge_tsc_hz(), t = rte_rdtsc();
	int w = surge_pcap_open_write(path, snaplen, nano);

	ok(w);
	assert_non_null(b);
	for (int k = 0; k < NFRAMES; k++) {
		t += (uint64_t)gaps_us[k] * hz / 1000000;
		b->n = 1;
		b->data[0] = frames[k];
		b->len[0] = sizes[k];
		b->tsc = t;
		assert_int_equal(surge_pcap_write(w, b), 1);
	}
	b->n = 0;                       /* the data are not mbufs */
	surge_burst_destroy(b);
	assert_int_equal(surge_pcap_close(w), NFRAMES);
}

static int64_t
ts_ns(const struct pcap_pkthdr *h, int nano)
{
	return (int64_t)h->ts.tv_sec * 1000000000 + h->ts.tv_usec * (nano ? 1 : 1000);
}

/* libpcap, not surge, reads what the writer wrote. */
static void
test_writer_round_trip_libpcap(void **state)
{
	for (int nano = 0; nano <= 1; nano++) {
		char err[PCAP_ERRBUF_SIZE];
		const char *path = path_of(nano ? "w-ns.pcap" : "w-us.pcap");
		struct pcap_pkthdr *h;
		const u_char *data;
		int64_t prev = 0, now = (int64_t)time(NULL) * 1000000000;
		pcap_t *p;

		(void)state;
		write_frames(path, 0, nano);
		p = pcap_open_offline_with_tstamp_precision(path, nano ? PCAP_TSTAMP_PRECISION_NANO
								 : PCAP_TSTAMP_PRECISION_MICRO, err);
		if (p == NULL)
			fail_msg("%s", err);
		assert_int_equal(pcap_datalink(p), DLT_EN10MB);
		assert_int_equal(pcap_get_tstamp_precision(p), nano ? PCAP_TSTAMP_PRECISION_NANO
								  : PCAP_TSTAMP_PRECISION_MICRO);
		for (int k = 0; k < NFRAMES; k++) {
			int64_t t, gap;

			assert_int_equal(pcap_next_ex(p, &h, &data), 1);
			assert_int_equal(h->len, sizes[k]);
			assert_int_equal(h->caplen, sizes[k]);
			assert_memory_equal(data, frames[k], sizes[k]);
			t = ts_ns(h, nano);
			if (k == 0) {
				/* the first packet's time is the wall clock, give or take */
				assert_true(t > now - 5000000000LL && t < now + 5000000000LL);
			} else {
				gap = t - prev;
				if (llabs(gap - (int64_t)gaps_us[k] * 1000) > (nano ? 2 : 1000))
					fail_msg("frame %d: gap %lld ns, want %u us", k, (long long)gap, gaps_us[k]);
			}
			prev = t;
		}
		assert_int_equal(pcap_next_ex(p, &h, &data), PCAP_ERROR_BREAK);
		pcap_close(p);
	}
}

static void
test_writer_snaplen_and_now(void **state)
{
	const char *path = path_of("snap.pcap");
	struct surge_burst *b = surge_burst_new(-1, 4);
	struct surge_pcap_info info;
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	int w = surge_pcap_open_write(path, 100, 1);
	int64_t now = (int64_t)time(NULL) * 1000000000;
	pcap_t *p;

	(void)state;
	ok(w);
	b->n = 3;
	for (int i = 0; i < 3; i++) {
		b->data[i] = frames[i];
		b->len[i] = sizes[i];
	}
	b->tsc = 0;                     /* generated: stamped now */
	assert_int_equal(surge_pcap_write(w, b), 3);
	ok(surge_pcap_info(w, &info));
	assert_true(info.writer == 1 && info.records == 3 && info.snaplen == 100 && info.nano == 1);
	assert_int_equal(info.bytes, 60 + 14 + 100);
	assert_int_equal(surge_pcap_close(w), 3);
	b->n = 0;
	surge_burst_destroy(b);
	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
	assert_non_null(p);
	assert_int_equal(pcap_snapshot(p), 100);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(pcap_next_ex(p, &h, &data), 1);
		assert_int_equal(h->len, sizes[i]);
		assert_int_equal(h->caplen, sizes[i] < 100 ? sizes[i] : 100);
		assert_memory_equal(data, frames[i], h->caplen);
		assert_true(llabs(ts_ns(h, 1) - now) < 5000000000LL);
	}
	pcap_close(p);
}

static uint32_t
want_gap_after(int k, double speed)
{
	return k + 1 < NFRAMES && speed > 0 ? (uint32_t)(gaps_us[k + 1] * 1000.0 / speed + 0.5) : 0;
}

static void
test_reader_fill(void **state)
{
	const char *path = path_of("r.pcap");
	struct surge_burst *b = surge_burst_new(pool, 32);
	struct surge_pcap_info info;
	uint64_t total = 0, span = 0;
	int r;

	(void)state;
	write_frames(path, 0, 1);
	r = surge_pcap_open_read(path);
	ok(r);
	ok(surge_pcap_info(r, &info));
	for (int k = 0; k < NFRAMES; k++) {
		total += sizes[k];
		span += gaps_us[k];
	}
	assert_true(info.writer == 0 && info.records == NFRAMES && info.bytes == total);
	assert_int_equal(info.max_len, 9000);
	assert_int_equal(info.linktype, 1);
	assert_true(llabs((int64_t)info.duration_ns - (int64_t)(span - gaps_us[0]) * 1000) <= 2);
	assert_true(info.loops == 1 && info.speed == 1 && info.next == 0 && info.pass == 0);

	assert_int_equal(surge_pcap_fill(r, b, 3), 3);        /* max */
	assert_int_equal(surge_pcap_fill(r, b, 0), NFRAMES - 3); /* the rest */
	for (int i = 0; i < NFRAMES - 3; i++) {
		int k = i + 3;

		assert_int_equal(b->len[i], sizes[k]);
		assert_memory_equal(b->data[i], frames[k], sizes[k]);
		if (llabs((int64_t)b->gap_ns[i] - want_gap_after(k, 1)) > 2)
			fail_msg("gap after %d: %u, want %u", k, b->gap_ns[i], want_gap_after(k, 1));
	}
	assert_int_equal(surge_pcap_fill(r, b, 0), 0);        /* end */
	assert_int_equal(b->n, 0);
	ok(surge_pcap_info(r, &info));
	assert_true(info.next == NFRAMES && info.pass == 0);

	/* speed 4 and 0.5; 0 = no gaps */
	for (int s = 0; s < 3; s++) {
		double speed = s == 0 ? 4 : s == 1 ? 0.5 : 0;

		ok(surge_pcap_replay(r, 1, speed));
		ok(surge_pcap_rewind(r));
		assert_int_equal(surge_pcap_fill(r, b, 0), NFRAMES);
		for (int k = 0; k < NFRAMES; k++) {
			assert_memory_equal(b->data[k], frames[k], sizes[k]);
			if (llabs((int64_t)b->gap_ns[k] - want_gap_after(k, speed)) > 2)
				fail_msg("speed %g: gap after %d: %u, want %u", speed, k, b->gap_ns[k],
					 want_gap_after(k, speed));
		}
	}
	assert_int_equal(surge_pcap_replay(r, 1, -1), -EINVAL);
	assert_error_mentions("speed");
	surge_burst_destroy(b);
	assert_int_equal(surge_pcap_close(r), NFRAMES);
	assert_pool_full(pool);
}

static void
test_reader_loops(void **state)
{
	const char *path = path_of("loop.pcap");
	struct surge_burst *b = surge_burst_new(pool, 5);
	struct surge_pcap_info info;
	int r, n, got = 0;

	(void)state;
	write_frames(path, 0, 0);
	r = surge_pcap_open_read(path);
	ok(r);
	ok(surge_pcap_replay(r, 3, 1));
	while ((n = surge_pcap_fill(r, b, 0)) > 0) {
		assert_true(n <= 5);
		for (int i = 0; i < n; i++, got++) {
			int k = got % NFRAMES;

			assert_int_equal(b->len[i], sizes[k]);
			assert_memory_equal(b->data[i], frames[k], sizes[k]);
			/* a pass ends with no gap: the next starts right away */
			assert_true(k != NFRAMES - 1 || b->gap_ns[i] == 0);
		}
	}
	assert_int_equal(n, 0);
	assert_int_equal(got, 3 * NFRAMES);
	ok(surge_pcap_info(r, &info));
	assert_true(info.pass == 2 && info.next == NFRAMES);
	/* forever */
	ok(surge_pcap_replay(r, 0, 0));
	ok(surge_pcap_rewind(r));
	for (int i = 0; i < 100; i++)
		assert_int_equal(surge_pcap_fill(r, b, 0), 5);
	ok(surge_pcap_info(r, &info));
	assert_int_equal(info.pass * NFRAMES + info.next, 500);
	surge_burst_destroy(b);
	ok(surge_pcap_close(r));
	assert_pool_full(pool);
}

static void
test_record_larger_than_data_room(void **state)
{
	const char *path = path_of("big.pcap");
	struct surge_burst *b = surge_burst_new(small_pool, 8);
	struct surge_burst *big = surge_burst_new(pool, 8);
	struct surge_pcap_info info;
	int r;

	(void)state;
	write_frames(path, 0, 1);
	r = surge_pcap_open_read(path);
	ok(r);
	assert_int_equal(surge_pcap_fill(r, b, 0), -EMSGSIZE);
	assert_error_mentions(path);
	assert_error_mentions("record 3 holds 1514 bytes");
	assert_error_mentions("data_room = 9000");
	assert_int_equal(b->n, 0);
	assert_pool_full(small_pool);
	ok(surge_pcap_info(r, &info));
	assert_int_equal(info.next, 0);
	assert_int_equal(surge_pcap_fill(r, b, 2), 2);         /* the two that fit */
	assert_int_equal(surge_pcap_fill(r, big, 0), NFRAMES - 2);
	surge_burst_destroy(b);
	surge_burst_destroy(big);
	ok(surge_pcap_close(r));
	assert_pool_full(small_pool);
	assert_pool_full(pool);
}

static void
write_bytes(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static size_t
read_bytes(const char *path, uint8_t *buf, size_t max)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, max, f);
	fclose(f);
	return n;
}

static void
test_truncated_and_garbage(void **state)
{
	static uint8_t raw[32768];
	const char *full = path_of("full.pcap"), *cut = path_of("cut.pcap");
	size_t n, rec1 = 24 + 16 + 60;
	char want[64];

	(void)state;
	write_frames(full, 0, 0);
	n = read_bytes(full, raw, sizeof(raw));
	assert_true(n > 24 + 16 * NFRAMES && n < sizeof(raw));

	write_bytes(cut, raw, n - 10);                       /* inside the last record */
	assert_int_equal(surge_pcap_open_read(cut), -EINVAL);
	assert_error_mentions(cut);
	snprintf(want, sizeof(want), "record %d:", NFRAMES);
	assert_error_mentions(want);
	assert_error_mentions("truncated");
	assert_null(strchr(surge_last_error(), '\n'));

	write_bytes(cut, raw, rec1 + 5);                     /* inside record 2's header */
	assert_int_equal(surge_pcap_open_read(cut), -EINVAL);
	assert_error_mentions("record 2:");
	assert_error_mentions("truncated");

	write_bytes(cut, raw, 10);                           /* inside the file header */
	assert_int_equal(surge_pcap_open_read(cut), -EINVAL);
	assert_error_mentions(cut);
	assert_error_mentions("truncated");

	write_bytes(cut, raw, rec1);                         /* a whole first record: valid */
	{
		int r = surge_pcap_open_read(cut);
		struct surge_pcap_info info;

		ok(r);
		ok(surge_pcap_info(r, &info));
		assert_int_equal(info.records, 1);
		ok(surge_pcap_close(r));
	}

	for (size_t i = 0; i < 4096; i++)
		raw[i] = (uint8_t)(i * 2654435761u >> 13);
	write_bytes(cut, raw, 4096);
	assert_int_equal(surge_pcap_open_read(cut), -EINVAL);
	assert_error_mentions(cut);
	assert_error_mentions("unknown file format");

	write_bytes(cut, raw, 0);                            /* empty */
	assert_true(surge_pcap_open_read(cut) < 0);
	assert_error_mentions(cut);

	assert_int_equal(surge_pcap_open_read(path_of("nope.pcap")), -ENOENT);
	assert_error_mentions("nope.pcap");
	assert_int_equal(surge_pcap_open_read(dir), -EISDIR);
	assert_true(surge_pcap_open_write(path_of("no/such/dir.pcap"), 0, 0) < 0);
	assert_error_mentions("cannot write");
}

static void
test_other_link_type_and_empty(void **state)
{
	const char *raw = path_of("raw.pcap"), *empty = path_of("empty.pcap");
	struct surge_burst *b = surge_burst_new(pool, 4);
	pcap_t *dead = pcap_open_dead(DLT_RAW, 65535);
	pcap_dumper_t *d = pcap_dump_open(dead, raw);
	struct pcap_pkthdr h = { .caplen = 20, .len = 20 };
	int r;

	(void)state;
	assert_non_null(d);
	pcap_dump((u_char *)d, &h, frames[0]);
	pcap_dump_close(d);
	pcap_close(dead);
	assert_int_equal(surge_pcap_open_read(raw), -ENOTSUP);
	assert_error_mentions("RAW");
	assert_error_mentions("Ethernet");

	dead = pcap_open_dead(DLT_EN10MB, 65535);
	d = pcap_dump_open(dead, empty);
	pcap_dump_close(d);
	pcap_close(dead);
	r = surge_pcap_open_read(empty);
	ok(r);
	ok(surge_pcap_replay(r, 0, 1));                      /* forever over nothing: still ends */
	assert_int_equal(surge_pcap_fill(r, b, 0), 0);
	assert_int_equal(surge_pcap_close(r), 0);
	surge_burst_destroy(b);
}

static void
test_ids(void **state)
{
	struct surge_burst *b = surge_burst_new(pool, 4), *rx = surge_burst_new(-1, 4);
	const char *path = path_of("ids.pcap");
	int w, r;

	(void)state;
	write_frames(path, 0, 0);
	w = surge_pcap_open_write(path_of("ids-w.pcap"), 0, 0);
	r = surge_pcap_open_read(path);
	ok(w);
	ok(r);
	assert_int_equal(surge_pcap_fill(w, b, 0), -EINVAL);
	assert_error_mentions("open for writing, not reading");
	assert_int_equal(surge_pcap_write(r, b), -EINVAL);
	assert_error_mentions("open for reading, not writing");
	assert_int_equal(surge_pcap_fill(r, rx, 0), -EINVAL);
	assert_error_mentions("no pool");
	assert_int_equal(surge_pcap_fill(9999, b, 0), -EINVAL);
	assert_error_mentions("no pcap file 9999");
	assert_int_equal(surge_pcap_fill(-1, b, 0), -EINVAL);
	ok(surge_pcap_close(r));
	assert_int_equal(surge_pcap_close(r), -EBADF);
	assert_error_mentions("is closed");
	assert_int_equal(surge_pcap_fill(r, b, 0), -EBADF);
	assert_int_equal(surge_pcap_close(w), 0);
	assert_int_equal(surge_pcap_write(w, b), -EBADF);
	assert_int_equal(surge_pcap_open_write(path, 300000, 0), -EINVAL);
	assert_error_mentions("snaplen");
	surge_burst_destroy(b);
	surge_burst_destroy(rx);
}

/* Last: pcap_close_all flushes a writer the "script" forgot. */
static void
test_close_all_flushes(void **state)
{
	const char *path = path_of("forgot.pcap");
	struct surge_burst *b = surge_burst_new(-1, 4);
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	int w = surge_pcap_open_write(path, 0, 0);
	int r = surge_pcap_open_read(path_of("r.pcap"));
	pcap_t *p;

	(void)state;
	ok(w);
	ok(r);
	b->n = 1;
	b->data[0] = frames[2];
	b->len[0] = sizes[2];
	assert_int_equal(surge_pcap_write(w, b), 1);
	b->n = 0;
	surge_burst_destroy(b);
	assert_int_equal(pcap_close_all(), 0);
	assert_int_equal(rt()->npcap, 0);
	p = pcap_open_offline(path, err);
	assert_non_null(p);
	assert_int_equal(pcap_next_ex(p, &h, &data), 1);
	assert_int_equal(h->len, sizes[2]);
	assert_memory_equal(data, frames[2], sizes[2]);
	pcap_close(p);
	assert_int_equal(surge_pcap_fill(r, NULL, 0), -EINVAL);  /* gone */
}

/* Found by test_pcap_fuzz: a pcapng record whose timestamp is beyond the
 * year 2262 overflowed the nanosecond time (UBSan); now it is refused. */
static void
test_fuzz_crashes(void **state)
{
	const char *src = getenv("SURGE_SRC");
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/tests/fuzz/pcap/crash-ts-overflow.pcapng", src ? src : ".");
	assert_int_equal(surge_pcap_open_read(path), -EINVAL);
	assert_error_mentions("outside 1970..2262 (damaged file?)");
	assert_error_mentions("crash-ts-overflow.pcapng': record 1 has the timestamp");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writer_round_trip_libpcap),
		cmocka_unit_test(test_writer_snaplen_and_now),
		cmocka_unit_test(test_reader_fill),
		cmocka_unit_test(test_reader_loops),
		cmocka_unit_test(test_record_larger_than_data_room),
		cmocka_unit_test(test_truncated_and_garbage),
		cmocka_unit_test(test_other_link_type_and_empty),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_fuzz_crashes),
		cmocka_unit_test(test_close_all_flushes),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
