/* SPDX-License-Identifier: BSD-3-Clause
 *
 * state.h - the run's state: structs only, shared by every layer of the core
 * (not part of the FFI ABI; functions are declared by each layer's header).
 *
 * A run has exactly one struct runtime, made by main() before EAL start-up and
 * torn down after the last task ended. Everything mutable lives in it, split so
 * that each piece has one writer: an lcore writes only its own lcore_slot and
 * the queue slots it claimed; the main lcore writes the rest.
 */
#ifndef SURGE_STATE_H
#define SURGE_STATE_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <rte_config.h>
#include <rte_common.h>
#include <rte_spinlock.h>

#include "surge.h"
#include "opts.h"

#define SURGE_POOL_MAX 64
#define SURGE_LATENCY_MAX 64
#define SURGE_PCAP_MAX 256
#define SURGE_ERR_MAX 512

struct lua_State;
struct lua_Debug;
struct rte_mempool;
struct rte_mbuf;
struct latency;
struct conn_engine;
struct hosts_table;
struct pool_state;
struct pcap_file;
struct repl_state;
struct otg_server;
struct run_hooks;
struct metrics_server;

enum task_state { TASK_IDLE, TASK_RUNNING, TASK_DONE, TASK_FAILED };

/* What one Lua VM may allocate (vm.c): past limit the VM gets "not enough
 * memory" at its next bytecode, also in compiled code. */
struct vm_mem {
	size_t used;
	size_t limit;
	size_t granted;               /* drawn from the VMs' shared budget (vm_budget.c) */
	int over;                     /* a budget ran out, VM_OVER_* (sticky, for the hint) */
	/* past a budget (vm.c): the error waits for the VM's next bytecode */
	int pending;                  /* the error's hook is set, not run yet */
	size_t ceiling;               /* 0, or where the reserve ends: refused past it */
	size_t ran_out_at;            /* what was used when the budget ran out */
	size_t rearm_at;              /* past this, in the reserve: the error again */
	int stepmul;                  /* the GC's, while pending */
	struct lua_State *L;          /* the VM's main thread, for its hook */
	void (*saved_hook)(struct lua_State *, struct lua_Debug *);
	int saved_mask, saved_count;  /* the hook the error's hook replaced */
};
enum { VM_OVER_OWN = 1, VM_OVER_SHARED = 2 };

/* What all VMs together may allocate (run/vm_budget.c). */
struct vm_total {
	uint64_t limit;               /* 0 = not sized yet; UINT64_MAX = nothing says */
	uint64_t used;                /* atomic: the VMs' granted chunks */
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
	uint8_t sent_since_poll;      /* a send left packets since then: the round was not idle */
	volatile uint64_t wait_since; /* start of the wait in progress, 0 = none */
	uint64_t stop_seen_tsc;       /* first time this lcore saw a stop without a run-wide one */
	uint64_t refused_tsc;        /* its last call refused with "run stopped" (run_state.c) */
	uint64_t refused_cpu_ns;      /* this thread's CPU time at that refusal (run_state.c) */
	clockid_t cpu_clock;          /* this lcore's thread's CPU clock, for the watchdog */
	volatile int cpu_clock_ok;    /* cpu_clock is set (release: the monitor reads it) */
	struct vm_mem mem;            /* the VM running on this lcore */
} __rte_cache_aligned;

/* Custom counters and gauges of one lcore: written by that lcore only. */
struct counter_slot {
	uint64_t count[SURGE_COUNTER_MAX];
	double gauge[SURGE_COUNTER_MAX];
	uint64_t used[SURGE_COUNTER_MAX / 64]; /* bit i: this lcore wrote counter/gauge i */
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
	uint8_t stalled;              /* tx: the driver took nothing for STALL_MS (dataplane/handoff.c) */
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
	/* some free mbuf may hold a length other than tmpl_len (the pool not
	 * yet filled, or a send gave one of its mbufs another length): until
	 * then every mbuf holds data_len = pkt_len = tmpl_len and alloc need
	 * not write them (issue 20). Goes from 0 to 1 only, before the mbufs
	 * it concerns go back to the pool (surge_pool_fill clears it, idle). */
	volatile uint8_t resized;
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
	struct vm_total vm_total;
	size_t script_len;
	uint64_t tsc_hz;              /* measured by rt_tsc_calibrate(): the run's only Hz */
	int rdtscp;                   /* rt_tsc_calibrate(): the CPU has RDTSCP (recv.c's receive time) */
	volatile int rx_tsc_ordered;  /* the run has a latency receiver: a poll orders its receive time
				       * (burst.h rx_poll_begin; set by latency.c) */
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
	pthread_t monitor;            /* run/monitor.c: duration and watchdog */
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
	/* pools, latency receivers, pcap files, counter names register from any lcore */
	rte_spinlock_t registry_lock;
	pthread_mutex_t stats_lock;   /* the stats line's state and the results series: the
				       * monitor thread samples, master reads and records */
	struct latency *lat[SURGE_LATENCY_MAX];
	int nlat;
	struct conn_engine *conn[SURGE_CONN_MAX]; /* conn_poll.c: TCP engines, by id */
	int nconn;
	struct hosts_table *hosts[SURGE_HOSTS_MAX]; /* hosts_poll.c: emulated host tables, by id */
	int nhosts;
	int probe_field;              /* mbuf dynfield: probe offset to stamp at tx, 0 = none */
	struct pcap_file *pcap[SURGE_PCAP_MAX]; /* pcap.c: readers and writers, by id */
	int npcap;
	struct counter_slot counters[RTE_MAX_LCORE]; /* counters.c */
	struct counter_name counter_names[SURGE_COUNTER_MAX];
	int ncounters;
	struct series series;         /* series.c */
	volatile int signal;          /* the signal that stopped the run */
	char file_prefix[64];         /* run/eal.c: EAL's --file-prefix */
	char startup_cpus[256];       /* run/eal.c: the CPUs it could run on before EAL, "0-3,6" */
	char json_stdout[32];         /* --output -: /dev/fd/N, the real stdout */
	/* live control (front/repl.c, front/socket.c): main lcore only */
	int interactive;              /* a prompt is open: a failed task does not stop the run */
	int at_prompt;                /* no periodic stats lines while someone types */
	struct repl_state *repl;
	struct otg_server *otg;       /* front/otg_http.c: surge otg's server, main lcore only */
	/* set from above (run/boot.c): a port is about to close (report/series.c
	 * records a results row, so the port's counts are kept up to its close) */
	void (*port_closing)(void);
	const struct run_hooks *hooks; /* run/hooks.c: what the front end registered */
	struct metrics_server *metrics; /* report/metrics.c: --metrics, NULL = none */
};

#endif /* SURGE_STATE_H */
