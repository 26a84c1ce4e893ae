/* SPDX-License-Identifier: BSD-3-Clause
 *
 * ceiling.c - the bare-metal reference that scripts/bench measures surge
 * against: the fastest a TX loop can go on this machine and this sink, with
 * no scripting, no counters and no pacing.
 *
 *   surge-ceiling [EAL options] -- --mode alloc|raw [--size 60] [--burst 32]
 *                                   [--duration S] [--queues N]
 *
 * Two loops, each one per TX queue on its own lcore, sending a template UDP
 * frame written once into every mbuf when the pool is made:
 *   alloc  rte_pktmbuf_alloc_bulk (resets every mbuf's metadata), set the
 *          lengths, rte_eth_tx_burst; what the driver refuses is freed
 *   raw    rte_mempool_get_bulk (no reset: mbufs come back from the driver's
 *          free with refcnt 1, one segment, next NULL, data_off untouched),
 *          set the lengths, rte_eth_tx_burst
 * The difference between the two is what skipping rte_pktmbuf_reset saves;
 * surge's template path is judged as a fraction of each.
 *
 * It prints the same per-second line as surge ("[   1.00s] port 0  TX
 * 123.456 Mpps") so scripts/bench parses both alike. Not a user tool: it is
 * built beside surge only for the benchmark, and is not installed.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#define POOL_SIZE 8191          /* surge's default pool */
#define POOL_CACHE 256
#define MAX_BURST 256
#define MAX_QUEUES 64

enum mode { MODE_ALLOC, MODE_RAW };

struct queue_ctx {
	uint16_t queue;
	struct rte_mempool *mp;
	volatile uint64_t sent;     /* one writer: the queue's lcore */
} __rte_cache_aligned;

struct bench {
	enum mode mode;
	uint16_t size, burst, queues;
	double duration;
	volatile int stop;
	struct queue_ctx q[MAX_QUEUES];
};

/* The one instance: main() owns it, worker lcores read their own slot. */
static struct bench the_bench = { .size = 60, .burst = 32, .queues = 1, .duration = 5 };

static void
on_signal(int sig)
{
	(void)sig;
	the_bench.stop = 1;
}

/* Ethernet/IPv4/UDP from 10.0.0.1:1024 to 10.0.0.2:5000, checksums filled:
 * the same frame surge's udp-flood sends by default. */
static void
fill_frame(uint8_t *f, uint16_t size)
{
	static const uint8_t head[14] = { 0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00 };
	uint16_t ip_len = size - 14, udp_len = size - 34;
	uint32_t sum = 0;

	memset(f, 0, size);
	memcpy(f, head, sizeof(head));
	f[14] = 0x45;
	f[16] = ip_len >> 8;
	f[17] = ip_len & 0xff;
	f[22] = 64;
	f[23] = 17;
	f[26] = 10, f[29] = 1;
	f[30] = 10, f[33] = 2;
	for (int i = 14; i < 34; i += 2)
		sum += (uint32_t)(f[i] << 8 | f[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	f[24] = (uint8_t)(~sum >> 8);
	f[25] = (uint8_t)~sum;
	f[34] = 1024 >> 8;
	f[35] = 1024 & 0xff;
	f[36] = 5000 >> 8;
	f[37] = 5000 & 0xff;
	f[38] = udp_len >> 8;
	f[39] = udp_len & 0xff;
	/* UDP checksum 0: "none", valid for IPv4 */
}

static void
fill_one(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
	struct rte_mbuf *m = obj;
	const uint16_t *size = arg;

	(void)mp, (void)idx;
	fill_frame(rte_pktmbuf_mtod(m, uint8_t *), *size);
	m->data_len = *size;
	m->pkt_len = *size;
}

static int
tx_loop(void *arg)
{
	struct queue_ctx *q = arg;
	struct bench *b = &the_bench;
	struct rte_mbuf *pkts[MAX_BURST];
	const uint16_t n = b->burst, size = b->size;
	uint64_t sent = 0;

	while (!b->stop) {
		uint16_t done;

		if (b->mode == MODE_ALLOC) {
			if (rte_pktmbuf_alloc_bulk(q->mp, pkts, n) != 0)
				continue;
		} else if (rte_mempool_get_bulk(q->mp, (void **)pkts, n) != 0) {
			continue;
		}
		for (uint16_t i = 0; i < n; i++) {
			pkts[i]->data_len = size;
			pkts[i]->pkt_len = size;
		}
		done = rte_eth_tx_burst(0, q->queue, pkts, n);
		if (done < n)
			rte_pktmbuf_free_bulk(pkts + done, n - done);
		sent += done;
		q->sent = sent;
	}
	return 0;
}

static int
parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' }, { "size", required_argument, NULL, 's' },
		{ "burst", required_argument, NULL, 'b' }, { "duration", required_argument, NULL, 'd' },
		{ "queues", required_argument, NULL, 'q' }, { NULL, 0, NULL, 0 },
	};
	struct bench *b = &the_bench;
	int c;
	long v;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (strcmp(optarg, "alloc") == 0)
				b->mode = MODE_ALLOC;
			else if (strcmp(optarg, "raw") == 0)
				b->mode = MODE_RAW;
			else
				return fprintf(stderr, "ceiling: --mode alloc|raw, not '%s'\n", optarg), -EINVAL;
			break;
		case 's':
			v = strtol(optarg, NULL, 10);
			if (v < 42 || v > 1500)
				return fprintf(stderr, "ceiling: --size 42..1500\n"), -EINVAL;
			b->size = (uint16_t)v;
			break;
		case 'b':
			v = strtol(optarg, NULL, 10);
			if (v < 1 || v > MAX_BURST)
				return fprintf(stderr, "ceiling: --burst 1..%d\n", MAX_BURST), -EINVAL;
			b->burst = (uint16_t)v;
			break;
		case 'd':
			b->duration = strtod(optarg, NULL);
			if (!(b->duration > 0 && b->duration < 3600))
				return fprintf(stderr, "ceiling: --duration 0..3600 s\n"), -EINVAL;
			break;
		case 'q':
			v = strtol(optarg, NULL, 10);
			if (v < 1 || v > MAX_QUEUES)
				return fprintf(stderr, "ceiling: --queues 1..%d\n", MAX_QUEUES), -EINVAL;
			b->queues = (uint16_t)v;
			break;
		default:
			return -EINVAL;
		}
	}
	return 0;
}

static int
port_setup(void)
{
	struct bench *b = &the_bench;
	struct rte_eth_conf conf;
	int rc;

	if (rte_eth_dev_count_avail() < 1)
		return fprintf(stderr, "ceiling: no port (give --vdev net_null0,no-rx=1)\n"), -ENODEV;
	if (rte_lcore_count() < (unsigned)b->queues + 1)
		return fprintf(stderr, "ceiling: %u queues need %u lcores (-l 0-%u)\n", b->queues,
			       b->queues + 1, b->queues), -EINVAL;
	memset(&conf, 0, sizeof(conf));
	if ((rc = rte_eth_dev_configure(0, 0, b->queues, &conf)) != 0)
		return fprintf(stderr, "ceiling: configure: %s\n", rte_strerror(-rc)), rc;
	for (uint16_t q = 0; q < b->queues; q++) {
		char name[32];

		snprintf(name, sizeof(name), "ceiling%u", q);
		b->q[q].queue = q;
		b->q[q].mp = rte_pktmbuf_pool_create(name, POOL_SIZE, POOL_CACHE, 0,
						     RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
		if (b->q[q].mp == NULL)
			return fprintf(stderr, "ceiling: pool: %s\n", rte_strerror(rte_errno)), -ENOMEM;
		rte_mempool_obj_iter(b->q[q].mp, fill_one, &b->size);
		if ((rc = rte_eth_tx_queue_setup(0, q, 0, (unsigned)rte_socket_id(), NULL)) != 0)
			return fprintf(stderr, "ceiling: tx queue: %s\n", rte_strerror(-rc)), rc;
	}
	if ((rc = rte_eth_dev_start(0)) != 0)
		return fprintf(stderr, "ceiling: start: %s\n", rte_strerror(-rc)), rc;
	return 0;
}

static uint64_t
total_sent(void)
{
	uint64_t t = 0;

	for (uint16_t q = 0; q < the_bench.queues; q++)
		t += the_bench.q[q].sent;
	return t;
}

int
main(int argc, char **argv)
{
	struct bench *b = &the_bench;
	uint64_t hz, start, last, prev = 0;
	unsigned lcore, q = 0;
	int n = rte_eal_init(argc, argv);

	if (n < 0)
		return fprintf(stderr, "ceiling: EAL: %s\n", rte_strerror(rte_errno)), 1;
	if (parse_args(argc - n, argv + n) != 0 || port_setup() != 0) {
		rte_eal_cleanup();
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (q == b->queues)
			break;
		rte_eal_remote_launch(tx_loop, &b->q[q++], lcore);
	}
	hz = rte_get_tsc_hz();
	start = last = rte_rdtsc();
	while (!b->stop) {
		uint64_t now, sent;

		rte_delay_us_sleep(10000);
		now = rte_rdtsc();
		if (now - start >= (uint64_t)(b->duration * (double)hz))
			b->stop = 1;
		if (now - last < hz && !b->stop)
			continue;
		sent = total_sent();
		printf("[%7.2fs] port 0  TX %8.3f Mpps\n", (double)(now - start) / hz,
		       (double)(sent - prev) / ((double)(now - last) / hz) / 1e6);
		fflush(stdout);
		prev = sent;
		last = now;
	}
	rte_eal_mp_wait_lcore();
	printf("ceiling: %s, %u queue(s): %.3f Mpps over %.2f s\n", b->mode == MODE_RAW ? "raw" : "alloc",
	       b->queues, (double)total_sent() / ((double)(last - start) / hz) / 1e6,
	       (double)(last - start) / hz);
	rte_eth_dev_stop(0);
	rte_eth_dev_close(0);
	for (q = 0; q < b->queues; q++)
		rte_mempool_free(b->q[q].mp);
	rte_eal_cleanup();
	return 0;
}
