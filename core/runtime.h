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

#include <pthread.h>
#include <pthread.h>
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
struct repl_state;

enum task_state { TASK_IDLE, TASK_RUNNING, TASK_DONE, TASK_FAILED };

/* What one Lua VM may allocate (vm.c): the allocator refuses past limit, so
 * LuaJIT raises "not enough memory" inside the VM, also in compiled code. */
struct vm_mem {
	size_t used;
	size_t limit;
	int over;                     /* refused once: the reserve is granted */
};

struct lcore_slot {
	char err[SURGE_ERR_MAX];      /* surge_last_error() of this lcore */
	/* task hand-off: main writes before launch, the lcore writes after */
	char fn[SURGE_NAME_MAX];
	char *args;
	size_t args_len;
	char *result;                 /* serialised results or the error text */
	size_t result_len;
	volatile int state;           /* enum task_state */
	volatile int stop_req;        /* surge_task_stop(): this task alone should end */
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
	uint64_t stop_seen_tsc;       /* first time this lcore saw a stop without a run-wide one */
	uint64_t refused_tsc;        /* its last call refused with "run stopped" (stop.c) */
	struct vm_mem mem;            /* the VM running on this lcore */
} __rte_cache_aligned;

/* Custom counters and gauges of one lcore: written by that lcore only. */
struct counter_slot {
	uint64_t count[SURGE_COUNTER_MAX];
	double gauge[SURGE_COUNTER_MAX];
	uint64_t used;                /* bit i: this lcore wrote counter/gauge i */
} __rte_cache_aligned;

/* Names of the counters: registered under pool_lock, read by anyone after
 * ncounters (release/acquire) says they exist. */
struct counter_name {
	char name[SURGE_NAME_MAX];
	uint8_t kind;
};

/* The run's series: appended by the main lcore at each sampling round. */
struct series {
	struct surge_sample *rows;
	uint32_t n, cap;
	uint32_t ticks;
	uint64_t last_tsc;
};

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
	uint8_t stalled;              /* tx: the driver took nothing for STALL_MS (rate.c) */
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
	uint16_t data_delta;          /* each mbuf's data at mbuf + this (0: read data_off) */
	uint8_t single_owner;
	volatile uint8_t probed;      /* some mbuf was marked as a latency probe */
	volatile uint8_t offloaded;   /* some mbuf was given checksum offload flags */
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
	int exit_status;              /* os.exit(N) from a script's VM (surge_exit), -1 = none */
	volatile uint64_t stop_tsc;   /* when surge_stop() was first called, 0 = not yet */
	int eal_up;                   /* EAL started: lcores and ports exist */
	struct surge_opts opts;
	const char *script_text;      /* the script, read once: every VM loads this text */
	size_t script_len;
	uint64_t tsc_hz;              /* measured by rt_tsc_calibrate(): the run's only Hz */
	struct tsc_pair tsc_ref;      /* the calibration's first pair, for the check at exit */
	double tsc_drift_ppm;         /* whole run against tsc_hz, set at exit */
	uint64_t start_tsc;           /* master() started (surge test: first task launch) */
	uint64_t end_tsc;             /* master() and every task ended */
	int launched;                 /* some task was launched */
	volatile int master_active;   /* master's Lua code runs (not the final join) */
	volatile uint64_t master_seen_tsc; /* master was last inside surge_task_poll */
	volatile int prepass;         /* the options pre-pass runs (before EAL, no monitor) */
	int vdev_lock_fd[SURGE_MAX_DEVS]; /* flocks on --vdev tx_pcap= files (pcap_write.c) */
	int nvdev_lock;
	pthread_t monitor;            /* stop.c: duration and watchdog */
	int monitor_up;
	volatile int monitor_quit;
	uint64_t last_print_tsc;
	uint64_t *prev_tx, *prev_rx, *prev_txb, *prev_rxb; /* per port, for interval rates */
	uint64_t prev_busy[RTE_MAX_LCORE], prev_idle[RTE_MAX_LCORE]; /* per lcore: total and idle cycles */
	struct lcore_slot lcore[RTE_MAX_LCORE];
	struct port_state port[RTE_MAX_ETHPORTS];
	struct retired_slots *retired; /* port_close.c: queue slots of closed ports, kept to exit */
	struct pool_state pool[SURGE_POOL_MAX];
	int npools;
	rte_spinlock_t pool_lock;     /* pools and latency receivers register from any lcore */
	pthread_mutex_t stats_lock;   /* the stats line's state and the results series: the
				       * monitor thread samples, master reads and records */
	struct latency *lat[SURGE_LATENCY_MAX];
	int nlat;
	int probe_field;              /* mbuf dynfield: probe offset to stamp at tx, 0 = none */
	struct pcap_file *pcap[SURGE_PCAP_MAX]; /* pcap.c: readers and writers, by id */
	int npcap;
	struct counter_slot counters[RTE_MAX_LCORE]; /* counters.c */
	struct counter_name counter_names[SURGE_COUNTER_MAX];
	int ncounters;
	struct series series;         /* series.c */
	volatile int signal;          /* the signal that stopped the run */
	char file_prefix[64];         /* eal.c: EAL's --file-prefix */
	char json_stdout[32];         /* --output -: /dev/fd/N, the real stdout */
	/* live control (repl.c, control.c): main lcore only */
	int interactive;              /* a prompt is open: a failed task does not stop the run */
	int at_prompt;                /* no periodic stats lines while someone types */
	struct repl_state *repl;
};

/* runtime.c */
/* The single run context: set once by main() before any lcore starts and
 * cleared after they all stopped; its contents follow the one-writer rule
 * at the top of this file. Read through rt(), inline: the hot path asks for
 * it on every call. */
extern struct runtime *rt_current;
static inline struct runtime *
rt(void)
{
	return rt_current;
}
int rt_create(const struct surge_opts *opts);
void rt_destroy(void);
int rt_exit_status(int rc);
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
int port_check(uint16_t port);     /* 0 when the port exists */
void queues_release(unsigned lcore);
int port_open_default(uint16_t port);
void port_print_devices(void);

/* port_close.c */
int ports_close_all(void);
int rx_pool_settle(uint16_t port, struct port_state *ps);

/* burst.c: every entry point taking a burst from Lua calls this first, so
 * no count or pool id in it is trusted: 0, or -EINVAL with the reason */
int burst_check(const struct surge_burst *b);
int burst_frame_len_ok(const struct surge_burst *b, uint32_t i);   /* b checked, i < n */

/* pool.c */
struct pool_state *pool_get(int id);

/* The hot path's checks, inline: an FFI entry reads rt() and its lcore id
 * once and hands them down (a call per check cost ~8 % of a template send). */

/* Pool `id` of runtime r, or NULL when there is none (pool_get's check). */
static inline struct pool_state *
pool_at(struct runtime *r, int id)
{
	if (r == NULL || id < 0 || id >= __atomic_load_n(&r->npools, __ATOMIC_ACQUIRE) ||
	    r->pool[id].mp == NULL)
		return NULL;
	return &r->pool[id];
}

/* surge_running() for the given lcore: the run goes on and no one asked
 * this task alone to end. */
static inline int
rt_live(const struct runtime *r, unsigned lcore)
{
	if (r == NULL || __atomic_load_n(&r->stop, __ATOMIC_RELAXED))
		return 0;
	return lcore >= RTE_MAX_LCORE || !__atomic_load_n(&r->lcore[lcore].stop_req, __ATOMIC_RELAXED);
}
int pools_check_and_free(void);

/* eal.c: the runtime folder of a process that cannot shut EAL down (watchdog) */
void eal_forget(void);
/* eal.c, exposed for the unit tests */
long eal_hugepages_free_mb(const char *meminfo, const char *mounts);

/* vm.c */
struct lua_State *vm_new(const char *script, struct vm_mem *mem);
int script_read(const char *path, char **text, size_t *len);

/* stop.c: the one stop path (see docs/architecture.md) */
int run_stop_expired(void);
uint32_t run_stop_left_us(void);
int monitor_start(void);
void monitor_stop(void);

/* task.c */
int tasks_stop_and_wait(void);
int master_run(const char *script, int argc, char **argv);
/* 0 when `name` is a scenario; else prints why (with the known ones) and returns 2 */
int scenario_check(const char *name);
int master_options(const char *script, int argc, char **argv);

/* rate.c */
double pacer_gap(struct pacer *p, uint16_t len, double now, uint32_t custom_ns, double hz);
int pacer_refresh(struct queue_slot *s, double hz, uint64_t now);
uint32_t pace_push(uint16_t port, uint16_t q, struct queue_slot *s, struct rte_mbuf **pkts,
		   uint32_t n, uint32_t clones, const uint32_t *gap_ns, uint32_t ptr_base, int stamp);
int pace_timed_burst(uint16_t port, uint16_t q, struct queue_slot *s);
uint32_t push_all(uint16_t port, uint16_t q, struct queue_slot *s, struct rte_mbuf **pkts, uint32_t n,
		  int stamp);

/* rxintr.c */
int rx_intr_capable(const char *driver);
int rx_intr_wait(uint16_t port, uint16_t q);
void rx_intr_forget(uint16_t port, uint16_t q);

/* offload.c */
uint64_t offload_csum_pick(uint64_t capa);
void offload_csum_prepare(struct rte_mbuf *m, struct pool_state *p, uint64_t csum);

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
/* pcap.c: the watchdog flushes the writers no running code holds */
void pcap_close_all_abandoned(int master_stuck);
void pcap_release(unsigned lcore);
int pcap_lock_path(const char *path, int *fd_out);

/* series.c: samples when due (force: now); the stats line's clock */
void series_tick(uint64_t now, int force);

/* telemetry.c */
int telemetry_register(void);
/* repl.c: the prompt's terminal and the control socket, as a Lua module
 * for the master VM; repl_free undoes what a session left behind */
void repl_register(struct lua_State *L);
void repl_free(void);
/* code typed at the prompt (or a client's) runs now: 1, 2 once interrupted */
int repl_evaluating(void);
void repl_forget_socket(void);   /* the watchdog's exit: remove the --control socket */

#define EXIT_WATCHDOG 3   /* stuck code was ended after the stop's grace period */
double rt_stop_grace(void);   /* stop.c: --stop-grace in seconds */

/* stats.c */
void stats_tick(int force);
void stats_summary(void);

#endif /* SURGE_RUNTIME_H */
