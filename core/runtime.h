/* SPDX-License-Identifier: BSD-3-Clause
 *
 * runtime.h - state shared by the core's modules (not part of the FFI ABI).
 *
 * A run has exactly one struct runtime, made by main() before EAL start-up and
 * torn down after the last task ended. Everything mutable lives in it, split so
 * that each piece has one writer: an lcore writes only its own lcore_slot and
 * the queue slots it claimed; the main lcore writes the rest.
 */
#ifndef SURGE_RUNTIME_H
#define SURGE_RUNTIME_H

#include <stdint.h>
#include <rte_config.h>
#include <rte_common.h>
#include <rte_spinlock.h>

#include "include/surge.h"
#include "cli.h"

#define SURGE_POOL_MAX 64
#define SURGE_LATENCY_MAX 64
#define SURGE_PCAP_MAX 256
#define SURGE_ERR_MAX 512

struct lua_State;
struct rte_mempool;
struct rte_mbuf;
struct latency;
struct pool_state;
struct pcap_file;

enum task_state { TASK_IDLE, TASK_RUNNING, TASK_DONE, TASK_FAILED };

struct lcore_slot {
	char err[SURGE_ERR_MAX];      /* surge_last_error() of this lcore */
	/* task hand-off: main writes before launch, the lcore writes after */
	char fn[SURGE_NAME_MAX];
	char *args;
	size_t args_len;
	char *result;                 /* serialised results or the error text */
	size_t result_len;
	volatile int state;           /* enum task_state */
	/* idle policy and time accounting: written by this lcore only */
	struct surge_idle idle;
	uint32_t sleep_us;            /* current adaptive sleep after light polls */
	uint32_t empty_polls;         /* consecutive empty polls: a long idle spell sleeps deeper */
	uint8_t idle_chosen;          /* the task set its idle policy itself */
	uint64_t task_start_tsc;
	uint64_t task_end_tsc;
	uint64_t idle_cycles;
	uint64_t sleeps;
	double oversleep_ns;          /* how late sleeps wake: rises fast, decays slowly */
	uint64_t last_poll_tsc;       /* end of the previous rx poll */
	volatile uint64_t wait_since; /* start of the wait in progress, 0 = none */
} __rte_cache_aligned;

/* A rate request, written by whoever sets the rate (a seqlock: seq is odd
 * while it is being written) and read by the lcore that owns the queue. */
struct rate_req {
	uint32_t seq;
	struct surge_rate r;
	double bps_limit;             /* the link's speed in bit/s, 0 if unknown */
	int hw_active;                /* the NIC's queue rate limiter is set */
} __rte_cache_aligned;

/* The owner's view of the schedule. */
struct pacer {
	uint32_t seq_seen;
	int active;
	struct surge_rate r;
	double next;                  /* TSC of the next departure */
	double gap;                   /* pps: cycles between packets */
	double cyc_per_bit;           /* bit rates: cycles per bit */
	double overhead;              /* bytes added to len for bit rates */
	uint64_t rng;
	uint64_t start_tsc;
	uint32_t on_count;
	uint64_t packets, bytes;      /* since the rate was set */
	uint64_t first_tsc;           /* first departure */
	uint64_t last_tsc;            /* last departure */
	double last_gap;              /* cycles: the spacing the pacer works at now */
	double gap_sum;               /* cycles: every gap the schedule gave so far */
	double max_late;              /* cycles: catch-up bound (burst) or tolerance (skip) */
	double late_cyc;              /* cycles: a departure this much past its time is late */
	double skipped;               /* cycles of schedule given up */
	uint64_t late;                /* packets that left late (more than late_cyc) */
	uint64_t unsent;              /* not yet due when the run stopped */
};

struct queue_slot {
	struct surge_queue_stats st;  /* one writer: the owning lcore */
	const struct rte_mempool *pool; /* fast-free queues: the only pool seen */
	struct pacer pc;              /* tx: owner only */
	struct rate_req req;          /* tx: any lcore, seqlock */
	int8_t intr;                  /* rx: 1 in the owner's epoll, -1 no interrupt, 0 untried */
} __rte_cache_aligned;

struct port_state {
	int opened;                   /* configured: resources to release */
	int started;                  /* running: rx/tx allowed */
	struct surge_port_conf conf;
	struct rte_mempool *rx_pool;
	struct queue_slot *txq;
	struct queue_slot *rxq;
	uint8_t fast_free;
	uint8_t handover;             /* driver passes tx mbufs to a receiver (net_ring) */
	uint8_t rx_intr;              /* configured with rx queue interrupts (rxintr.c) */
	uint16_t mtu;
	uint32_t max_len;             /* longest frame sent, without FCS: MTU + header + 2 tags */
	uint64_t tx_offloads;         /* enabled RTE_ETH_TX_OFFLOAD_* */
	uint64_t csum;                /* the checksum ones among them */
	char driver[SURGE_NAME_MAX];
};

struct pool_state {
	struct rte_mempool *mp;
	uint8_t *tmpl;                /* copy of the template bytes, NULL if filled per mbuf */
	uint16_t tmpl_len;
	uint8_t single_owner;
	volatile uint8_t probed;      /* some mbuf was marked as a latency probe */
	uint8_t ip_version;           /* template layout for checksum offload */
	uint8_t l4_proto;
	uint16_t l2_len, l3_len;
	int32_t owner_lcore;
	uint64_t alloc_fail;          /* updated with relaxed atomics */
};

/* A TSC reading and the CLOCK_MONOTONIC_RAW time taken with it. */
struct tsc_pair {
	uint64_t tsc;
	uint64_t ns;
};

struct runtime {
	volatile int stop;
	int eal_up;                   /* EAL started: lcores and ports exist */
	struct surge_opts opts;
	uint64_t tsc_hz;              /* measured by rt_tsc_calibrate(): the run's only Hz */
	struct tsc_pair tsc_ref;      /* the calibration's first pair, for the check at exit */
	double tsc_drift_ppm;         /* whole run against tsc_hz, set at exit */
	uint64_t start_tsc;           /* first task launch */
	uint64_t end_tsc;             /* last task finished */
	uint64_t last_print_tsc;
	uint64_t *prev_tx, *prev_rx, *prev_txb, *prev_rxb; /* per port, for interval rates */
	uint64_t prev_busy[RTE_MAX_LCORE], prev_idle[RTE_MAX_LCORE]; /* per lcore: total and idle cycles */
	struct lcore_slot lcore[RTE_MAX_LCORE];
	struct port_state port[RTE_MAX_ETHPORTS];
	struct pool_state pool[SURGE_POOL_MAX];
	int npools;
	rte_spinlock_t pool_lock;     /* pools and latency receivers register from any lcore */
	struct latency *lat[SURGE_LATENCY_MAX];
	int nlat;
	int probe_field;              /* mbuf dynfield: probe offset to stamp at tx, 0 = none */
	struct pcap_file *pcap[SURGE_PCAP_MAX]; /* pcap.c: readers and writers, by id */
	int npcap;
};

/* runtime.c */
struct runtime *rt(void);
int rt_create(const struct surge_opts *opts);
void rt_destroy(void);
int rt_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rt_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t tsc_measure_hz(struct tsc_pair *first);
void rt_tsc_calibrate(void);
void rt_tsc_check(void);
uint64_t rt_hz(void);            /* the calibrated TSC Hz (after EAL start-up) */

/* eal.c */
int eal_start(const struct surge_opts *opts, const char *prog);
void eal_stop(void);

/* port.c */
int ports_close_all(void);
void queues_release(unsigned lcore);
int port_open_default(uint16_t port);
void port_print_devices(void);

/* pool.c */
struct pool_state *pool_get(int id);
int pools_check_and_free(void);

/* eal.c, exposed for the unit tests */
long eal_hugepages_free_mb(const char *meminfo, const char *mounts);

/* task.c */
struct lua_State *vm_new(const char *script);
int tasks_stop_and_wait(void);
int master_run(const char *script, int argc, char **argv);

/* rate.c */
double pacer_gap(struct pacer *p, uint16_t len, double now, uint32_t custom_ns, double hz);
int pacer_refresh(struct queue_slot *s, double hz, uint64_t now);
uint32_t pace_push(uint16_t port, uint16_t q, struct queue_slot *s, struct rte_mbuf **pkts,
		   uint32_t n, uint32_t clones, const uint32_t *gap_ns, uint32_t ptr_base, int stamp);
int pace_timed_burst(uint16_t port, uint16_t q, struct queue_slot *s);
uint32_t push_all(uint16_t port, uint16_t q, struct rte_mbuf **pkts, uint32_t n, int stamp);

/* rxintr.c */
int rx_intr_capable(const char *driver);
int rx_intr_wait(uint16_t port, uint16_t q);
void rx_intr_forget(uint16_t port, uint16_t q);

/* offload.c */
uint64_t offload_csum_pick(uint64_t capa);
void offload_csum_prepare(struct rte_mbuf *m, const struct pool_state *p, uint64_t csum);

/* latency.c */
int latency_init(void);
void latency_free_all(void);
void probes_stamp(struct rte_mbuf **m, uint32_t n);
void probe_unmark(const struct pool_state *p, struct rte_mbuf *m);
void probe_clear(struct rte_mbuf *m);

/* idle.c */
void idle_task_begin(void);
void idle_task_end(void);
void idle_wait_until(uint64_t target, uint64_t period);
void idle_before_poll(uint16_t port, uint16_t q);
uint32_t master_nap_us(uint64_t until);
void idle_for_latency(void);
void idle_after_poll(uint32_t n, uint32_t cap, uint64_t poll_start);

/* pcap.c: closes what scripts left open; returns the writers that failed */
int pcap_close_all(void);

/* stats.c */
void stats_tick(int force);
void stats_summary(void);

#endif /* SURGE_RUNTIME_H */
