/* SPDX-License-Identifier: BSD-3-Clause
 *
 * surge.h - the FFI ABI between the C core and LuaJIT.
 *
 * This is the only header Lua sees. The build copies everything between the
 * ABI-BEGIN and ABI-END markers into lua/surge/cdef.lua, so the text there must
 * stay FFI-clean: no macros, no inline functions, no DPDK types, only opaque
 * handles (small integer ids) and fixed-size structs that surge owns.
 *
 * Conventions: every symbol starts with surge_; fallible calls return 0 (or a
 * count) on success and -errno on failure, with a readable message for the
 * calling lcore in surge_last_error().
 */
#ifndef SURGE_H
#define SURGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI-BEGIN */
enum {
	SURGE_BURST_MAX = 256,   /* most packets one burst holds */
	SURGE_NAME_MAX = 64
};

/* What a rate's value counts. */
enum surge_rate_unit {
	SURGE_RATE_PPS = 1,      /* packets per second */
	SURGE_RATE_L1_BPS = 2,   /* bit/s on the wire: frame + FCS + 20 B preamble/SFD/IFG */
	SURGE_RATE_L2_BPS = 3,   /* bit/s of frames, FCS included */
	SURGE_RATE_LINK_PCT = 4  /* percent of the port's link speed, at L1 */
};

/* How departures are spaced. */
enum surge_pace_pattern {
	SURGE_PACE_CONSTANT = 0, /* even gaps */
	SURGE_PACE_POISSON = 1,  /* exponential gaps with the rate's mean */
	SURGE_PACE_ONOFF = 2,    /* on_pkts at the rate (0 = unpaced), then off_s of silence */
	SURGE_PACE_RAMP = 3,     /* linear from value to ramp_to over ramp_s, then ramp_to */
	SURGE_PACE_GAPS = 4      /* the gap after each packet from burst.gap_ns[i] */
};

/* What a paced queue does when it finds itself behind its schedule (the
 * core was taken away): send the late packets at once, up to max_late_us of
 * schedule, so the average holds; or drop the missed schedule so the gaps
 * hold (the packets leave later, the rate falls short by the time lost). */
enum surge_catchup {
	SURGE_CATCHUP_BURST = 0,
	SURGE_CATCHUP_SKIP = 1
};

/* What a loop does while it has nothing to do. */
enum surge_idle_mode {
	SURGE_IDLE_BUSY = 0,     /* spin */
	SURGE_IDLE_PAUSE = 1,    /* spin with the CPU's pause hint */
	SURGE_IDLE_SLEEP = 2     /* sleep: long pacing waits, and growing sleeps after light polls */
};

/* A batch of packets as Lua sees it. C keeps the mbuf pointers; Lua writes
 * packet bytes through data[i] and frame lengths through len[i], and C
 * applies the lengths when the burst is sent. Fields marked "read-only in
 * Lua" are named ro_NAME in Lua's cdef (cmake/gen_cdef.cmake) and read as
 * burst.NAME through pool.lua, which refuses assignments to them. */
struct surge_burst {
	uint32_t n;                       /* read-only in Lua: packets currently held */
	uint32_t cap;                     /* read-only in Lua: most packets alloc/recv will take */
	int32_t pool;                     /* read-only in Lua: pool id alloc draws from, -1 for rx-only */
	uint32_t probes;                  /* packets marked as latency probes */
	uint64_t tsc;                     /* recv: TSC when the burst was received */
	void *mbuf[SURGE_BURST_MAX];      /* read-only in Lua: the mbufs, opaque to Lua */
	uint8_t *data[SURGE_BURST_MAX];   /* read-only in Lua: first byte of each frame */
	uint16_t len[SURGE_BURST_MAX];    /* frame length (without FCS) */
	uint32_t gap_ns[SURGE_BURST_MAX]; /* SURGE_PACE_GAPS: wait after packet i, before the next */
	uint32_t from_alloc;              /* read-only in Lua: the mbufs are as alloc left them */
	uint32_t timed;                   /* gap_ns holds a pcap reader's timing: a send paces by it */
	uint32_t plain;                   /* read-only in Lua: every mbuf held is plain (burst.h) */
};

struct surge_rate {
	double value;        /* in `unit`; 0 = unpaced */
	double ramp_to;      /* SURGE_PACE_RAMP: final value, same unit */
	double ramp_s;       /* SURGE_PACE_RAMP: seconds from value to ramp_to */
	double off_s;        /* SURGE_PACE_ONOFF: silence after each on period */
	uint64_t seed;       /* SURGE_PACE_POISSON: random seed, 0 = fixed default */
	uint32_t on_pkts;    /* SURGE_PACE_ONOFF: packets per on period */
	uint8_t unit;        /* enum surge_rate_unit */
	uint8_t pattern;     /* enum surge_pace_pattern */
	uint8_t hw;          /* 1 = use the NIC's queue rate limit when it has one */
	uint8_t catchup;     /* enum surge_catchup: after falling behind the schedule */
	uint32_t max_late_us;/* most schedule caught up at once (burst) or tolerated (skip); 0 = 10000 */
};

/* What a paced queue achieved since its rate was last set. */
struct surge_rate_stats {
	uint64_t packets;
	uint64_t bytes;
	double seconds;
	double pps;          /* achieved */
	double l1_bps;       /* achieved */
	double target_pps;   /* requested: the rate for constant/Poisson pps, else what the schedule asked */
	uint64_t late;       /* packets sent back to back to catch up with the schedule */
	double skipped_s;    /* schedule given up (SURGE_CATCHUP_SKIP, or beyond max_late_us) */
	uint64_t unsent;     /* not yet due when the run stopped: never handed to the driver */
	uint8_t catchup;     /* enum surge_catchup in force */
	uint8_t reserved[3];
	uint32_t max_late_us;
};

struct surge_idle {
	uint8_t mode;           /* enum surge_idle_mode */
	uint8_t batch;          /* SURGE_IDLE_SLEEP: pacing waits sleep max_sleep_us at least (low CPU,
				 * packets leave in small batches); 0 = sleep only the part of a gap
				 * beyond the measured wake-up lateness and spin to the departure */
	uint8_t rx_intr;        /* SURGE_IDLE_SLEEP: once sleeps reach max_sleep_us, block on the
				 * queue's RX interrupt where the port has one (default 1) */
	uint8_t reserved;
	uint32_t max_sleep_us;  /* SURGE_IDLE_SLEEP: longest sleep after light polls */
	uint32_t step_us;       /* SURGE_IDLE_SLEEP: growth per light poll */
	uint32_t sleep_min_us;  /* pacing waits longer than this sleep (SURGE_IDLE_SLEEP) */
};

/* Where an lcore's time went since its task started. */
struct surge_lcore_stats {
	uint64_t busy_cycles;
	uint64_t idle_cycles;    /* waiting for pacing, sleeping, or polling nothing */
	uint64_t sleeps;
	int32_t lcore;
	uint32_t reserved;
};

struct surge_port_conf {
	uint16_t rxq;              /* receive queues */
	uint16_t txq;              /* transmit queues */
	uint16_t rxd;              /* descriptors per rx queue, 0 = driver default */
	uint16_t txd;              /* descriptors per tx queue, 0 = driver default */
	uint32_t link_timeout_ms;  /* wait this long for link up, 0 = don't wait */
	uint8_t promisc;           /* 1 = promiscuous mode */
	uint8_t clones;            /* 1 = tx queues may send clones (no FAST_FREE) */
	uint16_t mtu;              /* 0 = the port's current MTU; larger frames are refused */
	uint8_t csum_offload;      /* 1 = IPv4/UDP/TCP checksums by the port where it can */
	uint8_t reserved[3];
};

struct surge_port_info {
	char name[SURGE_NAME_MAX];
	char driver[SURGE_NAME_MAX];
	uint8_t mac[6];
	uint8_t link_up;
	uint8_t started;
	uint32_t link_speed_mbps;
	int32_t socket;
	uint16_t max_rxq;
	uint16_t max_txq;
	uint16_t rxq;
	uint16_t txq;
	uint8_t fast_free;         /* tx queues use MBUF_FAST_FREE */
	uint8_t clones;            /* tx queues accept clone sends */
	uint16_t mtu;
	uint64_t rx_offload_capa;
	uint64_t tx_offload_capa;
	uint64_t tx_offloads;      /* enabled: RTE_ETH_TX_OFFLOAD_* bits */
};

/* Hardware/driver counters of a port (rte_eth_stats). */
struct surge_port_stats {
	uint64_t ipackets;
	uint64_t opackets;
	uint64_t ibytes;
	uint64_t obytes;
	uint64_t imissed;
	uint64_t ierrors;
	uint64_t oerrors;
	uint64_t rx_nombuf;
};

/* Counters surge keeps for one queue, written only by the lcore using it. */
struct surge_queue_stats {
	uint64_t packets;   /* handed to / taken from the driver */
	uint64_t bytes;     /* L2 bytes, without FCS */
	uint64_t drops;     /* tx: refused by the driver (given up when the run stopped) */
	uint64_t bursts;    /* calls that moved at least one packet */
	int32_t lcore;      /* owner, -1 while unused */
	uint32_t reserved;
	uint64_t unsent;    /* tx: paced packets not yet due when the run stopped (never handed over) */
};

struct surge_pool_conf {
	uint32_t size;       /* mbufs in the pool */
	uint32_t cache;      /* per-lcore cache, 0 = default */
	uint16_t data_room;  /* bytes of frame per mbuf, 0 = default */
	uint8_t single_owner;/* 1 = SP/SC ring: one lcore allocates and frees */
	uint8_t reserved;
	int32_t socket;      /* NUMA socket, -1 = the calling lcore's */
};

struct surge_pool_info {
	char name[SURGE_NAME_MAX];
	uint32_t size;
	uint32_t avail;
	uint64_t alloc_fail;  /* allocations that came back short */
	uint16_t data_room;
	uint16_t tmpl_len;    /* frame length set by surge_pool_fill */
	int32_t socket;
	uint8_t single_owner;
	uint8_t reserved[3];
	int32_t owner_lcore;  /* lcore that created it */
};

/* What a latency receiver saw. Times in nanoseconds. */
struct surge_latency {
	uint64_t probes;       /* probes received (duplicates excluded) */
	uint64_t lost;         /* sequence numbers never seen, below the highest seen */
	uint64_t duplicated;
	uint64_t reordered;    /* arrived after a higher sequence number */
	double min_ns;
	double mean_ns;
	double p50_ns;
	double p90_ns;
	double p99_ns;
	double p999_ns;
	double max_ns;
};

/* Latency probe format, version 1 (16 bytes at the offset the marker and
 * receiver agree on; see docs/architecture.md "Latency probes"):
 *   0  magic "SRGP" (0x53 0x52 0x47 0x50): format version 1
 *   4  sequence number, uint32, host byte order (little-endian here)
 *   8  send TSC, uint64, host byte order: written as the driver takes the
 *      packet; 0 = marked but never sent
 * A later layout gets a new magic, so a receiver never misreads one. */
enum {
	SURGE_PROBE_VERSION = 1,
	SURGE_PROBE_LEN = 16
};

/* One probe as a receiver matched it. */
struct surge_latency_sample {
	uint64_t ns;           /* receive TSC - send TSC, in ns */
	uint32_t seq;
	uint32_t duplicate;    /* 1: seen before (not in the histogram) */
};

/* One non-empty histogram bucket: values low_ns..high_ns (inclusive). */
struct surge_hist_bucket {
	uint64_t low_ns;
	uint64_t high_ns;
	uint64_t count;
};

/* One row of the layout table used to prove C and LuaJIT agree. */
struct surge_abi_field {
	const char *type;    /* "struct surge_burst" */
	const char *field;   /* "" for the struct itself */
	uint32_t offset;
	uint32_t size;
};

/* --- run state and errors ---------------------------------------------- */
const char *surge_version(void);
const char *surge_last_error(void);
int surge_running(void);
void surge_stop(void);
void surge_exit(int status);   /* os.exit(status): stop, then exit with it (0..255) */
int surge_exit_status(void);   /* what os.exit asked for, -1 = nothing */
/* 0 while the run goes on (or stopped moments ago); -ESHUTDOWN ("run
 * stopped") once a stop is older than a quarter of --stop-grace. */
int surge_run_check(void);
/* master.lua, right before master(args): the run's clock starts (--duration,
 * stats lines, the summary), also for scripts that launch no task. */
void surge_run_start(void);
/* Ends the run's clock now (the summary's and the results' end), if a later
 * task launch does not start it again; master.lua calls it before the
 * results file is written so both cover the same span. */
void surge_run_end(void);
/* Seconds on the run's clock (the results series' t: since master() or the
 * first task started), 0 before it starts; stops at surge_run_end(). */
double surge_run_elapsed(void);
int surge_lcore_id(void);
int surge_is_main(void);
uint64_t surge_tsc(void);
uint64_t surge_tsc_hz(void);
/* A TSC reading as CLOCK_MONOTONIC_RAW nanoseconds (the clock the TSC was
 * calibrated against): for comparing surge's times with other programs'. */
uint64_t surge_tsc_to_ns(uint64_t tsc);
void surge_sleep_us(uint32_t us);
int surge_quiet(void);
double surge_duration(void);
const struct surge_abi_field *surge_abi_fields(uint32_t *count);

/* --- tasks (one LuaJIT VM per lcore) ------------------------------------ */
int surge_task_launch(const char *fn, const char *args, size_t len);
int surge_task_poll(uint32_t wait_ms);
int surge_task_result(int task, const char **text, size_t *len);
int surge_task_count(void);
/* Asks one task to end: surge.running() turns false on its lcore only. */
int surge_task_stop(int task);

/* --- ports and queues --------------------------------------------------- */
int surge_port_count(void);
int surge_port_open(uint16_t port, const struct surge_port_conf *conf);
/* the settings an open (started) port runs with: rxd/txd the counts its
 * queues got, mtu its MTU. Returns 1 (out filled), 0 when the port is not
 * open, or -errno */
int surge_port_conf(uint16_t port, struct surge_port_conf *out);
int surge_port_info(uint16_t port, struct surge_port_info *out);
int surge_port_stats(uint16_t port, struct surge_port_stats *out);
int surge_port_find(const char *name);
/* link up (1) or down (0), promiscuous on (1) or off (0), on an open port;
 * -ENOTSUP where the device cannot */
int surge_port_set_link(uint16_t port, int up);
int surge_port_set_promisc(uint16_t port, int on);
int surge_vdev_add(const char *spec);
/* closes an open port (master); remove: detach its device too. Returns the
 * port number it has again, or 0 after a remove */
int surge_port_close(uint16_t port, int remove);
int surge_txq_stats(uint16_t port, uint16_t queue, struct surge_queue_stats *out);
int surge_rxq_stats(uint16_t port, uint16_t queue, struct surge_queue_stats *out);

/* --- pools and bursts --------------------------------------------------- */
int surge_pool_create(const struct surge_pool_conf *conf);
/* bytes == NULL sets the frame length only (after filling via surge_pool_data) */
int surge_pool_fill(int pool, const uint8_t *bytes, uint16_t len);
int surge_pool_data(int pool, uint8_t **data, uint32_t max);
int surge_pool_info(int pool, struct surge_pool_info *out);
int surge_pool_count(void);
/* Where the template's headers are, for checksum offload: ip_version 4 or 6
 * (0 = no IP), l4_proto 17 (UDP), 6 (TCP) or 0. */
int surge_pool_layout(int pool, uint16_t l2_len, uint16_t l3_len, uint8_t ip_version, uint8_t l4_proto);

struct surge_burst *surge_burst_new(int pool, uint32_t cap);
void surge_burst_destroy(struct surge_burst *b);
uint32_t surge_burst_alloc(struct surge_burst *b, uint32_t n);
void surge_burst_free(struct surge_burst *b);
int surge_burst_refcnt(const struct surge_burst *b, uint32_t i);
/* 0 when packet i's len[] fits its mbuf and holds an Ethernet header */
int surge_burst_frame_ok(const struct surge_burst *b, uint32_t i);

int surge_tx_send(uint16_t port, uint16_t queue, struct surge_burst *b, uint32_t clones);
/* surge_tx_send without waiting for a paced queue's schedule: sends the
 * packets that are due now and keeps the others in b (moved to its front,
 * b->n of them) for a later call. Returns the packets sent or -errno. */
int surge_tx_send_due(uint16_t port, uint16_t queue, struct surge_burst *b);
/* surge_tx_send, then surge_burst_alloc(b, n) in the same call (n = 0: none):
 * a TX loop's two calls a burst as one. Returns what the send returned;
 * b->n is what the alloc got. */
int surge_tx_send_alloc(uint16_t port, uint16_t queue, struct surge_burst *b, uint32_t clones, uint32_t n);

/* --- latency probes ---------------------------------------------------- */
int surge_probe_mark(struct surge_burst *b, uint32_t i, uint16_t off, uint32_t seq);
int surge_latency_new(void);
int surge_latency_scan(int id, const struct surge_burst *b, uint16_t off);
int surge_latency_add(int id, uint64_t ns, uint32_t seq);
/* Empties receiver id (its counts and histogram) for a new measurement; only
 * while no lcore adds to it. */
int surge_latency_reset(int id);
int surge_latency_get(int id, struct surge_latency *out);
double surge_latency_percentile(int id, double q);
/* surge_latency_scan that also writes each probe it found to out (at most
 * max; the rest are still counted). Returns the probes found. */
int surge_latency_scan_samples(int id, const struct surge_burst *b, uint16_t off,
			       struct surge_latency_sample *out, uint32_t max);
/* The histogram's non-empty buckets in ascending order, at most max written;
 * returns how many there are (call with max = 0 to size the array). */
int surge_latency_buckets(int id, struct surge_hist_bucket *out, uint32_t max);

/* --- rates and idle ----------------------------------------------------- */
int surge_rate_parse(const char *text, struct surge_rate *out);
int surge_txq_set_rate(uint16_t port, uint16_t queue, const struct surge_rate *r);
int surge_txq_rate_stats(uint16_t port, uint16_t queue, struct surge_rate_stats *out);
int surge_idle_set(const struct surge_idle *policy);
int surge_idle_get(struct surge_idle *out);
int surge_lcore_stats(int lcore, struct surge_lcore_stats *out);
int surge_rx_recv(uint16_t port, uint16_t queue, struct surge_burst *b);
/* --- pcap files --------------------------------------------------------- */
/* A pcap reader (the whole file in memory, replayed into bursts) or writer. */
struct surge_pcap_info {
	uint64_t records;      /* reader: records in the file; writer: packets written */
	uint64_t bytes;        /* captured bytes of those records */
	uint64_t next;         /* reader: record (0-based) the next fill starts at */
	uint64_t duration_ns;  /* reader: last record's timestamp - first record's */
	double speed;          /* reader: gap_ns = original gap / speed; 0 = no gaps */
	uint32_t loops;        /* reader: passes over the file, 0 = forever */
	uint32_t pass;         /* reader: the pass (0-based) the next fill reads */
	uint32_t snaplen;
	uint32_t linktype;     /* DLT_* of the file; 1 = Ethernet */
	uint16_t max_len;      /* reader: longest record */
	uint8_t nano;          /* writer: nanosecond timestamps (a reader reads both) */
	uint8_t writer;        /* 1 = writer, 0 = reader */
	uint32_t reserved;
};

/* snaplen 0 = 65535. Writes every packet of b with b->tsc as its time (wall
 * clock; b->tsc == 0: now). Returns the packets written. */
int surge_pcap_open_write(const char *path, uint32_t snaplen, int nano);
int surge_pcap_write(int id, const struct surge_burst *b);
/* Reads the file (pcap or pcapng, Ethernet) into memory. */
int surge_pcap_open_read(const char *path);
/* loops: passes over the file, 0 = forever; speed: gaps divided by it, 0 = none */
int surge_pcap_replay(int id, uint32_t loops, double speed);
/* Allocates up to max (0 = b->cap) mbufs from b's pool and copies the next
 * records into them; gap_ns[i] = original time from record i to the record
 * after it, divided by speed (what SURGE_PACE_GAPS waits after packet i).
 * Returns the count, 0 after the last pass, -EAGAIN while the pool is empty. */
int surge_pcap_fill(int id, struct surge_burst *b, uint32_t max);
int surge_pcap_rewind(int id);
int surge_pcap_info(int id, struct surge_pcap_info *out);
/* Flushes and closes a writer (returns packets written) or frees a reader
 * (returns its records). Anything left open is closed at the end of the run. */
int64_t surge_pcap_close(int id);
/* --- custom counters and gauges --------------------------------------- */
/* A counter is a per-lcore uint64 cell, written only by that lcore (no
 * atomics) and summed by the main lcore; a gauge is a per-lcore double whose
 * reported value is the sum over the lcores that set it. */
enum surge_counter_kind {
	SURGE_COUNTER = 0,
	SURGE_GAUGE = 1
};

/* surge_counter_info.flags */
enum surge_counter_flag {
	SURGE_COUNTER_SATURATED = 1    /* a gauge's sum beyond a double: value is +-DBL_MAX;
					* a counter's past 2^64: total is UINT64_MAX */
};

enum {
	SURGE_COUNTER_MAX = 256
};

struct surge_counter_info {
	char name[SURGE_NAME_MAX];
	uint8_t kind;          /* enum surge_counter_kind */
	uint8_t flags;         /* SURGE_COUNTER_SATURATED */
	uint8_t reserved[2];
	uint32_t lcores;       /* lcores that wrote it */
	uint64_t total;        /* counter: sum over lcores */
	double value;          /* gauge: sum over the lcores that set it, exact to a
				* long double, clamped (flags) past DBL_MAX; counter: total */
};

/* Returns the id of the counter or gauge called name (made on first use;
 * the same name gives the same id on every lcore, a kind clash -EEXIST). */
int surge_counter_new(const char *name, int kind);
/* This lcore's cell of counter id (NULL if unknown or of the other kind). */
uint64_t *surge_counter_cell(int id);
double *surge_gauge_cell(int id);
int surge_counter_count(void);
int surge_counter_get(int id, struct surge_counter_info *out);

/* --- results: the series sampled with the stats line ------------------- */
enum surge_sample_kind {
	SURGE_SAMPLE_PORT = 0,   /* tx_* and rx_*: sums of the port's queues */
	SURGE_SAMPLE_TXQ = 1,
	SURGE_SAMPLE_RXQ = 2,
	SURGE_SAMPLE_LCORE = 3,  /* busy/idle cycles of the task on `id` */
	SURGE_SAMPLE_COUNTER = 4 /* value: counter or gauge `id` */
};

/* One row of the series: cumulative values at time t (seconds since the
 * first task started). Consecutive rows of one (kind, port, id) give the
 * interval rates. */
struct surge_sample {
	double t;
	double value;          /* counters and gauges */
	uint64_t tx_packets;
	uint64_t tx_bytes;
	uint64_t rx_packets;
	uint64_t rx_bytes;
	uint64_t drops;
	uint64_t unsent;       /* 0 until struct surge_queue_stats counts it */
	uint64_t busy_cycles;
	uint64_t idle_cycles;
	uint32_t tick;         /* sampling round, 0-based */
	uint16_t port;
	uint16_t id;           /* queue, lcore or counter */
	uint8_t kind;          /* enum surge_sample_kind */
	uint8_t flags;         /* counters: surge_counter_info.flags */
	uint8_t reserved[6];
};

/* Samples every opened port, queue, task lcore and counter now (main only). */
int surge_series_record(void);
uint32_t surge_series_count(void);
int surge_series_get(uint32_t i, struct surge_sample *out);
/* argv[i] of surge's own command line, NULL past the end. */
const char *surge_cmdline(int i);
const char *surge_git_commit(void);
const char *surge_dpdk_version(void);
/* The signal that stopped the run, 0 if none. */
int surge_signal(void);
/* EAL's file prefix: the telemetry socket is /var/run/dpdk/PREFIX/dpdk_telemetry.v2. */
const char *surge_file_prefix(void);
/* --output FILE, NULL if none. */
const char *surge_output(void);

/* --- the measuring receiver (surge.dut) --------------------------------- */
/* Per-flow counting of surge's test frames (lua/surge/dut/counters.lua
 * explains the scheme): a flow is a UDP source port sport0 .. sport0 +
 * flows - 1 towards dport (or its own port, dport_of), its 16-bit sequence number in the first two
 * payload bytes, a latency probe right after it. Lua allocates the arrays
 * and keeps them alive; C counts into them. */
enum { SURGE_DUT_WINDOW = 128 };   /* sequence numbers each flow remembers */
struct surge_dut_flow {
	double rx;              /* unique frames */
	double reord;           /* of them, late */
	double dup;             /* copies of counted frames (not in rx) */
	int32_t expect;         /* next sequence number expected, -1 before the first */
	uint32_t reserved;
	uint64_t seen[2];       /* bit s mod 128: number s, of the 128 before expect, was counted */
	uint64_t spare[2];      /* a flow a cache line: a frame reads one line of its flow's */
};
/* A class's availability intervals (y1564): its frames in the order they
 * were tagged (the j-th frame of the class: flow j mod flows, sequence
 * number j div flows), cut into n intervals of per frames, the last one
 * taking the rest. Each unique frame counts in the interval it was sent
 * in, from its flow and its sequence number unwrapped against the flow's
 * highest so far (lua/surge/dut/trial.lua's M.unwrap), however late. */
struct surge_dut_ivl {
	uint32_t per;           /* frames an interval; 0: the class has none */
	uint32_t n;             /* intervals */
	uint32_t first;         /* the class's first flow (of the receiver's) */
	uint32_t flows;         /* its flows */
	double *rx;             /* [n] unique frames received, by the interval they were sent in */
	int64_t *hi;            /* [flows] highest unwrapped sequence number of each, -1 before the first */
};
struct surge_dut_rx {
	uint32_t flows;
	uint16_t sport0;
	uint16_t dport;         /* every flow's destination port, unless dport_of */
	const uint16_t *dport_of;/* [flows] each flow's own destination port (a frame counts only there), NULL: dport */
	struct surge_dut_ivl *ivl;/* [nclasses + 1] each class's intervals (by class_of), NULL: none */
	double total;           /* unique test frames counted */
	double reordered;       /* of them, late */
	double duplicated;      /* copies of counted frames (not in total) */
	struct surge_dut_flow *flow;   /* [flows], 64-byte aligned */
	const int16_t *class_of;/* [flows] the flow's class (1-based), NULL: no latency */
	const int32_t *lat;     /* [nclasses + 1] latency receiver of each class, -1: none */
	uint32_t nclasses;
	uint32_t n_other;       /* surge_dut_rx_count: frames of the burst that are not test traffic */
	uint16_t other[SURGE_BURST_MAX]; /* their indices in the burst */
};
/* Counts every test frame of a received burst in one pass (parse, flow,
 * sequence, latency probe) and lists the rest in st->other (ARP/NDP and
 * anything else, for Lua). Frames shorter than an Ethernet header are
 * neither. Returns st->n_other or -errno. */
int surge_dut_rx_count(struct surge_dut_rx *st, const struct surge_burst *b);
/* A receive into b counted as surge_dut_rx_count counts: the measuring
 * receiver's poll in one call, which parses each frame in the one pass
 * that reads its mbuf (the queue's counts and b->plain as surge_rx_recv
 * sets them). Returns the packets received or -errno; the frames that are
 * not test traffic are listed in st->other, and b->data[] and b->len[]
 * are set for those only (the rest of the burst is counted, held until
 * the next poll or free). */
int surge_dut_rx_poll(uint16_t port, uint16_t queue, struct surge_burst *b, struct surge_dut_rx *st);
/* One frame already parsed: u is its UDP header, avail the bytes from u to
 * the frame's end. 1 when it was test traffic of st (counted), else 0. */
int surge_dut_count_udp(struct surge_dut_rx *st, const uint8_t *u, uint32_t avail);

/* Latency receivers made so far (ids 0..count-1); their buckets:
 * surge_latency_buckets(). */
int surge_latency_count(void);
/* --- OTG flow counts (core/dataplane/tag_count.c, docs/otg.md) --------- */
/* A count of lua/surge/otg/stats.lua's block: per port and flow what it
 * received, per tag value of a tagged flow what was sent and received.
 * Whole doubles: master reads them while a port's task adds. */
struct surge_otg_count {
	double frames;
	double bytes;           /* with the FCS */
	double first;           /* received: TSC of the first, 0 before it */
	double last;            /* received: TSC of the last */
};
enum {
	SURGE_OTG_TAGS_MAX = 12,   /* tagged bits a flow at most, so tags too */
	SURGE_OTG_TAG_LEN = 6      /* "SOTG" and the flow's number (big-endian), right after its headers */
};
/* One metric tag: len bits (1..12) from bit `bit` (0..7, 0 the most
 * significant) of the frame's byte `byte`. */
struct surge_otg_tagbits {
	uint16_t byte;
	uint8_t bit;
	uint8_t len;
};
/* A tagged flow's reader: its tags' bits one after the other are the
 * value, counted in slots[at + value]. */
struct surge_otg_tagger {
	uint32_t at;            /* the flow's first slot of the row counted */
	uint16_t hb;            /* its header length: a received frame's tag bits are read when its tag is there */
	uint8_t n;              /* tags, 1..SURGE_OTG_TAGS_MAX */
	uint8_t reserved;
	struct surge_otg_tagbits tag[SURGE_OTG_TAGS_MAX];
};
/* A latency probe of a timed flow, for surge_latency_add. */
struct surge_otg_probe {
	int32_t lat;            /* the flow's latency receiver */
	uint32_t seq;
	uint64_t ns;            /* receive TSC - send TSC, in ns (0 when the send's is later) */
};
/* What a port's task counts of what it receives. Lua allocates the
 * arrays and keeps them alive; C counts into them. */
struct surge_otg_rx {
	uint32_t nflows;        /* a tag's flow number below it is a flow's */
	uint32_t noffs;
	const uint16_t *offs;   /* [noffs] where a frame's tag may start, tried in order */
	struct surge_otg_count *rx;          /* [nflows] this port's row */
	const int32_t *lat;     /* [nflows] each flow's latency receiver, -1: none; NULL: no flow timed */
	const int32_t *tagger_of;/* [nflows] each flow's index in taggers, -1: untagged; NULL: none tagged */
	const struct surge_otg_tagger *taggers;
	struct surge_otg_count *slots;       /* [nslots] the tag counts (taggers' at: this port's row) */
	uint32_t nslots;
	uint32_t n_other;       /* out: the burst's frames without a tag at any offset */
	double ns_per_cycle;    /* the TSC's */
	uint32_t n_probe;       /* out: probes of timed flows (stamped ones) */
	uint32_t reserved;
	uint16_t other[SURGE_BURST_MAX];     /* out: their indices in the burst */
	struct surge_otg_probe probe[SURGE_BURST_MAX];   /* out */
};
/* Counts a received burst's frames by their tag (at the first of offs
 * where a frame holds "SOTG"), a tagged flow's also by value when its tag
 * is at its header length, and lists the probes of timed flows and the
 * frames with no tag. Reads nothing past a frame's length. Returns
 * st->n_other or -EINVAL. */
int surge_otg_rx_count(struct surge_otg_rx *st, const struct surge_burst *b);
/* A tagged flow's frames before they are sent: each one's value (0xffff:
 * its tagged bits past its end) and length. */
struct surge_otg_tx {
	uint32_t n;             /* frames read */
	uint32_t reserved;
	uint16_t value[SURGE_BURST_MAX];
	uint16_t len[SURGE_BURST_MAX];
};
/* Before a send: reads b's frames' values by t and counts each as sent
 * in slots[t->at + value] (of nslots): a send mostly sends them all. Returns
 * b->n or -EINVAL. */
int surge_otg_tx_read(struct surge_otg_tx *tx, const struct surge_otg_tagger *t, const struct surge_burst *b,
		      struct surge_otg_count *slots, uint32_t nslots);
/* After a send of the first `sent` of them (surge_tx_send_due keeps the
 * rest, read again with the next send): takes the others' counts back.
 * Returns the frames taken back or -EINVAL. */
int surge_otg_tx_unsent(const struct surge_otg_tx *tx, const struct surge_otg_tagger *t,
			struct surge_otg_count *slots, uint32_t nslots, uint32_t sent);

/* --- TCP connections (docs/connections.md) ------------------------------ */
enum surge_conn_role {
	SURGE_CONN_CLIENT = 0,
	SURGE_CONN_SERVER = 1
};

/* How the client ends a connection once its requests are answered. */
enum surge_conn_close {
	SURGE_CONN_CLOSE_FIN = 0,    /* FIN, then TIME_WAIT */
	SURGE_CONN_CLOSE_RST = 1     /* RST: no TIME_WAIT on either side */
};

/* How a message's end is found: the client's response, the server's request. */
enum surge_conn_expect {
	SURGE_CONN_EXPECT_LEN = 0,   /* exactly expect_len bytes */
	SURGE_CONN_EXPECT_HTTP = 1   /* HTTP/1.1: client: status line + Content-Length; server: up to CRLF CRLF */
};

enum surge_conn_hist {
	SURGE_CONN_HIST_CONNECT = 0, /* SYN sent to the first response byte */
	SURGE_CONN_HIST_RESPONSE = 1 /* request sent to its last response byte */
};

enum {
	SURGE_CONN_MAX = 64,         /* engines in a run */
	SURGE_CONN_DATA_MAX = 1048576,
	SURGE_CONN_ADDR_MAX = 1 << 20 /* a client's sources or a server's addresses: 4 bytes each (IPv6 16),
				       * allocated for those given (docs/connections.md) */
};

struct surge_conn_conf {
	struct surge_rate rate;      /* client: opens per second (unit pps); value 0 = at the concurrency cap */
	const uint8_t *data;         /* the request (client) or response (server); copied */
	const uint8_t *local_addrs;  /* local_count addresses (a client's sources, a server's to listen on),
				      * network order, 4 (IPv4) or 16 (IPv6) bytes each, copied; NULL:
				      * local_ip4 / local_ip6 alone */
	uint64_t connections;        /* client: connections to open, 0 = until the run stops */
	uint32_t data_len;           /* 1..SURGE_CONN_DATA_MAX; a client's request fits one segment (mss) */
	uint32_t capacity;           /* table entries (client: at most local_count x (65536 - local_port)) */
	uint32_t local_count;        /* addresses in local_addrs (1..SURGE_CONN_ADDR_MAX; 0 = 1) */
	uint32_t concurrency;        /* client: most connections open at once, 0 = capacity */
	uint32_t requests;           /* client: requests per connection (>= 1); server: answered before
				      * the server closes, 0 = until the client closes */
	uint32_t expect_len;         /* SURGE_CONN_EXPECT_LEN: the message's bytes */
	uint32_t expect_status;      /* client, HTTP: the status a response must carry (0 = any) */
	uint32_t rto_us;             /* retransmission timeout (fixed: no backoff) */
	uint32_t time_wait_us;       /* TIME_WAIT's length (a shortcut of 2 MSL: docs/connections.md) */
	uint32_t idle_us;            /* a connection waiting this long on its peer with nothing
				      * unacknowledged fails as a timeout */
	uint32_t think_us;           /* client: the pause between a response and the next request */
	uint32_t local_ip4;          /* ip_version 4, host order */
	uint32_t peer_ip4;           /* ip_version 4, client: the server (host order) */
	uint16_t local_port;         /* server: the listening port; client: the first source port */
	uint16_t peer_port;          /* client: the server's port */
	uint16_t mss;                /* segment payload sent at most (lowered to a peer's MSS option) */
	uint16_t window;             /* receive window advertised (no scaling) */
	uint8_t local_mac[6];
	uint8_t peer_mac[6];         /* client: the server's or gateway's MAC; server: all zero = the
				      * source MAC of the first SYN */
	uint8_t local_ip6[16];       /* ip_version 6: the engine's address */
	uint8_t peer_ip6[16];        /* ip_version 6, client: the server */
	uint8_t role;                /* enum surge_conn_role */
	uint8_t close;               /* enum surge_conn_close */
	uint8_t expect;              /* enum surge_conn_expect */
	uint8_t retries;             /* timer expiries without progress before a connection fails */
	uint8_t ip_version;          /* 4 or 6 */
	uint8_t reserved[3];
};

/* An engine's counters, cumulative; written by its lcore only. */
struct surge_conn_stats {
	uint64_t attempted;          /* client: SYNs opened; server: SYNs taken into the table */
	uint64_t established;
	uint64_t completed;          /* every request answered (client) / closed cleanly (server) */
	uint64_t failed_timeout;     /* retries ran out */
	uint64_t failed_rst;         /* reset by the peer before completion */
	uint64_t failed_bad;         /* client: a response not as expected; server: a request too long */
	uint64_t refused;            /* the table was full: a server's SYN dropped, a client's due open
				      * not made (paced clients; unpaced ones wait for room) */
	uint64_t retransmits;        /* segments sent again on a timeout */
	uint64_t requests;           /* client: requests sent; server: requests received */
	uint64_t responses;          /* client: responses received whole; server: responses sent */
	uint64_t rst_sent;
	uint64_t rst_rcvd;
	uint64_t rx_segments;        /* TCP segments to the engine's address */
	uint64_t tx_segments;
	uint64_t rx_dropped;         /* out of window, unexpected flags, no connection */
	uint64_t rx_bad;             /* malformed, or a wrong checksum */
	uint64_t tx_nobufs;          /* segments not sent: the pool was empty */
	uint64_t time_wait;          /* connections that went through TIME_WAIT */
	uint64_t concurrent;         /* connections in the table now */
	uint64_t concurrent_max;
	uint64_t rx_other;           /* frames not for the engine, handed back to Lua (ARP, ...) */
	uint64_t bytes_sent;         /* payload bytes, first transmissions */
	uint64_t bytes_rcvd;         /* payload bytes taken in order */
	uint64_t tx_full;            /* segments the port's full TX ring did not take: dropped, not
				      * waited for (the RTO sends them again) */
	uint64_t aborted;            /* reset or dropped by surge_conn_abort (the run's end) before
				      * being counted otherwise */
	uint64_t closed_other;       /* ended counted nowhere else: a server's closed with no answer
				      * given and nothing failed. attempted = completed + failed_* +
				      * aborted + closed_other + those open and not yet counted */
};

/* Makes an engine on the calling lcore (the one that polls it). Returns its id. */
int surge_conn_new(const struct surge_conn_conf *conf);
/* One round: receives a burst into rx, runs every TCP segment for the
 * engine through the state machine, fires due timers, opens what the
 * client's schedule allows, and sends what that wrote (frames from tx's
 * pool). Frames not for the engine are left in rx (rx->n of them) for the
 * caller (ARP: surge.dut.neigh), who frees them. Returns rx->n or -errno. */
int surge_conn_poll(int id, uint16_t port, uint16_t rxq, uint16_t txq, struct surge_burst *rx,
		    struct surge_burst *tx);
int surge_conn_stats(int id, struct surge_conn_stats *out);
/* 1 when a client opened all its connections and none is left but in TIME_WAIT, else 0 */
int surge_conn_done(int id);
/* Resets every open connection (an RST each, counted in rst_sent; each not
 * counted yet counted in aborted) and empties the table. */
int surge_conn_abort(int id, uint16_t port, uint16_t txq, struct surge_burst *tx);
double surge_conn_percentile(int id, int which, double q);
int surge_conn_buckets(int id, int which, struct surge_hist_bucket *out, uint32_t max);
int surge_conn_count(void);

/* Per-connection hooks (docs/connections.md, "Per-connection hooks"): an
 * engine with hooks set records its connections' events of the kinds asked
 * for during each poll into ev[cur][0..n); Lua calls the user's functions
 * for them after the poll. A client's ESTABLISHED and RESPONSE events hold
 * their connection until the next poll, which applies the action a hook
 * wrote into the event (nothing written: what the engine would have done);
 * a server's REQUEST event holds that request's response the same way. */
enum surge_conn_event_kind {
	SURGE_CONN_EV_ESTABLISHED = 0,   /* handshake done; time_us: from the SYN */
	SURGE_CONN_EV_RESPONSE = 1,      /* client: a response whole: status, bytes, time_us (from its request) */
	SURGE_CONN_EV_FAILED = 2,        /* counted in failed_*: reason SURGE_CONN_FAIL_* */
	SURGE_CONN_EV_CLOSED = 3,        /* its table entry freed: reason SURGE_CONN_END_* */
	SURGE_CONN_EV_REQUEST = 4,       /* server: a request received whole: bytes, requests (its number);
					  * its first bytes in head[cur]; its response waits for the action */
	SURGE_CONN_EV_KINDS = 5
};

enum surge_conn_reason {
	SURGE_CONN_FAIL_TIMEOUT = 1,
	SURGE_CONN_FAIL_RST = 2,
	SURGE_CONN_FAIL_BAD = 3,
	SURGE_CONN_END_COMPLETED = 4,    /* counted in completed */
	SURGE_CONN_END_FAILED = 5,       /* counted in failed_* */
	SURGE_CONN_END_OTHER = 6         /* neither (a server's connection closed before an answer) */
};

/* What a client's held connection does next, or a server's answer to a
 * request (event.action). */
enum surge_conn_action {
	SURGE_CONN_ACT_NEXT = 0,         /* the engine's own course: the next request, think time, or the
					  * close; a server: the response (template 0) */
	SURGE_CONN_ACT_SEND = 1,         /* client: one more request, template event.tpl (even past
					  * `requests`); server: the response template event.tpl */
	SURGE_CONN_ACT_FIN = 2,          /* close now with a FIN (client: counted completed; server: after
					  * the responses before this request, which gets none) */
	SURGE_CONN_ACT_RST = 3           /* close now with an RST (client: counted completed) */
};

enum {
	SURGE_CONN_TEMPLATES_MAX = 64,   /* a client's request or a server's response templates (0 = conf.data) */
	SURGE_CONN_HEAD = 64,            /* a request's first bytes a server's REQUEST event keeps */
	SURGE_CONN_PIPELINE = 4          /* a server with on_request: requests taken on a connection and
					  * not yet answered (acknowledged); a request past them waits
					  * unacknowledged (docs/connections.md) */
};

/* The numbers are int32_t, not uint32_t, because LuaJIT reads an int32
 * field as an integer and a uint32 one as a double (a conversion and float
 * arithmetic in the hook's trace); each fits: conn < 2^24, a response's
 * bytes < 2^31, time_us < 35 min, requests < 65536. */
struct surge_conn_event {
	int32_t conn;                    /* the connection's table index: 0..capacity-1, reused once closed */
	uint8_t kind;                    /* enum surge_conn_event_kind */
	uint8_t reason;                  /* FAILED, CLOSED: enum surge_conn_reason */
	uint8_t action;                  /* written by a hook: enum surge_conn_action */
	uint8_t tpl;                     /* the template of its last request; SEND: the next one's */
	int32_t status;                  /* RESPONSE, HTTP: the status line's code (0: by length) */
	int32_t bytes;                   /* RESPONSE: its bytes */
	int32_t time_us;                 /* ESTABLISHED: since the SYN; RESPONSE: since its request */
	int32_t requests;                /* requests sent on it (client) or received (server) so far;
					  * REQUEST: this one's number (1: the first) */
	uint8_t head_len;                /* REQUEST: its first bytes kept in head: min(bytes, SURGE_CONN_HEAD) */
	uint8_t path_off, path_len;      /* REQUEST: the request line's second word ("GET /a HTTP/1.1":
					  * /a) in head, up to a space, '?' or CR (0, 0: none) */
	uint8_t reserved;
};

struct surge_conn_hooks {
	struct surge_conn_event *ev[2];  /* ev[cur][0..n): the last poll's events (two: the next poll
					  * reads one's actions while it records into the other) */
	uint32_t cur, n, cap;
	uint32_t mask;                   /* kinds recorded: bits 1 << SURGE_CONN_EV_* */
	uint32_t templates;              /* a client's request templates (0: the request itself) */
	uint32_t lost;                   /* events not recorded for want of room: 0 (the bound is
					  * docs/connections.md's), checked by Lua after each poll */
	uint8_t *head[2];                /* REQUEST events (a server's, with the kind asked for): event i's
					  * request's first min(bytes, SURGE_CONN_HEAD) bytes at
					  * head[cur] + i * SURGE_CONN_HEAD; else NULL */
};

/* Sets hooks on an engine not yet polled: `kinds` a mask of 1 << SURGE_CONN_EV_*;
 * extra templates data[i], len[i] (template i + 1), copied: a client's
 * requests, or a server's responses (with REQUEST only). *out: where the events are, the engine's own. 0 or -errno. */
int surge_conn_hooks(int id, uint32_t kinds, const uint8_t *const *data, const uint32_t *len, uint32_t ntpl,
		     struct surge_conn_hooks **out);
/* --- emulated hosts (core/hosts/, docs/hosts.md) -----------------------
 * A table of N hosts behind one port, made and polled by one lcore: host i
 * has MAC mac + i, the table's VLAN, and address ip4 + i (or one a DHCPv4
 * server gives it). A poll answers ARP and ICMP echo for bound hosts, runs
 * RFC 5227 probes and announcements and the DHCPv4 clients, and records
 * events (bound, conflict, ...) that Lua pulls with surge_hosts_events. */
enum {
	SURGE_HOSTS_MAX = 64,            /* tables in a run */
	SURGE_HOSTS_COUNT_MAX = 1 << 24, /* hosts in a table */
	SURGE_HOSTS_BIND_BUCKETS = 21    /* the binding-time histogram's buckets */
};
enum surge_hosts_state {
	SURGE_HOST_IDLE = 0,      /* not started yet */
	SURGE_HOST_PROBING = 1,   /* RFC 5227 probes out, the address not used yet */
	SURGE_HOST_ANNOUNCING = 2,
	SURGE_HOST_BOUND = 3,     /* the address is the host's: ARP and ICMP echo answered */
	SURGE_HOST_CONFLICT = 4,  /* another station holds the address (counted, an event) */
	SURGE_HOST_SELECTING = 5, /* DHCPDISCOVER out, waiting for an offer */
	SURGE_HOST_REQUESTING = 6,
	SURGE_HOST_RENEWING = 7,
	SURGE_HOST_REBINDING = 8,
	SURGE_HOST_GAVE_UP = 9,   /* DHCP: no lease after the retries, a NAK storm or a lease lost */
	SURGE_HOST_RELEASED = 10,
	SURGE_HOST_DECLINED = 11, /* DHCP: the ACKed address answered an ARP probe: DECLINEd, waiting to start over */
	SURGE_HOST_STATES = 12
};
struct surge_hosts_conf {
	uint32_t count;              /* hosts, 1..SURGE_HOSTS_COUNT_MAX */
	uint32_t ip4;                /* host 0's address (host byte order); 0 with dhcp */
	uint32_t net4;               /* dhcp: the subnet its addresses come from (host order), its */
	uint32_t net4_len;           /* prefix length 12..32: bound hosts are answered for there */
	uint8_t mac[6];              /* host 0's MAC; host i's is this plus i */
	uint16_t vlan;               /* 802.1Q VLAN id, 0 = untagged */
	uint8_t dhcp;                /* 1: each host is a DHCPv4 client */
	uint8_t dad;                 /* 1: RFC 5227 probes before a static address is used */
	uint8_t announce;            /* gratuitous ARP announcements once bound (0..255) */
	uint8_t retries;             /* DHCP: transmissions of a message before giving up (1..16) */
	uint32_t probe_ms;           /* RFC 5227 PROBE_MIN (1000); probes 1..2x this apart */
	uint32_t rto_ms;             /* DHCP: first retransmission (RFC 2131: 4000), doubled to 64 s */
	double rate;                 /* hosts started per second (DHCPDISCOVERs), 0 = unpaced */
	uint32_t outstanding;        /* DHCP: most transactions open at once, 0 = count */
	uint32_t renewals;           /* DHCP: renewals per host before it lets its lease go, 0 = forever */
	/* server: a DHCPv4 server (core/hosts/hosts_server.c): host i is the
	 * pool's address ip4 + i, mac the server's; no dhcp, no dad */
	uint8_t server;
	uint8_t pad_[3];
	uint32_t server4;            /* server: its address, the server identifier (option 54) */
	uint32_t lease_s;            /* server: the leases' length in seconds */
	/* IPv6 (core/hosts/hosts_nd.c): with ip6 1 each host has the link-local
	 * fe80::EUI-64(MAC), answers NS and echo, sends RSs and takes the
	 * SLAAC address from an RA's prefix; ip6_addr (not ::) a static
	 * address for host 0, host i's + i */
	uint8_t ip6;
	uint8_t dad6;                /* DAD: NSs sent for each address (RFC 4862 DupAddrDetectTransmits), 0 none */
	uint8_t rs;                  /* router solicitations until an RA comes (RFC 4861: 3) */
	uint8_t dhcp6;               /* DHCPv6 client (RFC 8415, with ip6): 1 IA_NA, 2 IA_PD, 4 rapid commit (bits) */
	uint8_t ip6_addr[16];
	/* QinQ: an outer tag (802.1ad S-tag) before the 802.1Q one (vlan,
	 * then required), 0 none; its TPID 0x88a8 or 0x8100 */
	uint16_t outer_vlan;
	uint16_t outer_tpid;
};
struct surge_hosts_stats {
	uint64_t rx_frames;          /* frames the table took (the rest stay in the rx burst) */
	uint64_t rx_other;
	uint64_t rx_bad;             /* malformed ARP, IPv4 or DHCP */
	uint64_t tx_frames;
	uint64_t tx_nobufs;          /* frames not written: the pool was empty (sent by a retry) */
	uint64_t tx_full;            /* frames the TX ring refused */
	uint64_t arp_request_rx;     /* requests for one of the table's bound addresses */
	uint64_t arp_reply_tx;
	uint64_t arp_probe_tx;
	uint64_t arp_announce_tx;
	uint64_t arp_conflict;       /* RFC 5227: another station claimed a host's address */
	uint64_t icmp_echo_rx;
	uint64_t icmp_reply_tx;
	uint64_t dhcp_discover_tx;
	uint64_t dhcp_offer_rx;
	uint64_t dhcp_request_tx;
	uint64_t dhcp_ack_rx;
	uint64_t dhcp_nak_rx;
	uint64_t dhcp_release_tx;
	uint64_t dhcp_retransmits;
	uint64_t dhcp_bad;           /* replies refused: garbage, a lease time of 0, no server id */
	uint64_t dhcp_stray;         /* replies for no transaction of ours (wrong xid, state) */
	uint64_t dhcp_renewed;
	uint64_t dhcp_gave_up;
	uint64_t dhcp_lost;          /* leases that ended unrenewed, or a NAK took (the host starts over) */
	uint64_t events_lost;        /* events not pulled before the ring filled */
	/* multicast (core/hosts/hosts_mcast.c, docs/hosts.md "Multicast") */
	uint64_t igmp_query_rx;      /* IGMP queries taken (general and group-specific) */
	uint64_t igmp_v2_report_tx;
	uint64_t igmp_v3_report_tx;
	uint64_t igmp_leave_tx;
	uint64_t mld_query_rx;
	uint64_t mld_v1_report_tx;
	uint64_t mld_v2_report_tx;
	uint64_t mld_done_tx;
	uint64_t mcast_bad;          /* IGMP or MLD queries malformed or with a bad checksum */
	uint64_t state[SURGE_HOST_STATES];   /* hosts in each state now */
	uint64_t bytes_per_host;     /* the table's memory divided by its hosts */
	/* DHCP clients: bindings by the time from a host's first DISCOVER to
	 * its ACK; bucket k counts those under 2^k ms (k < 20), 20 the rest */
	uint64_t bind_ms[SURGE_HOSTS_BIND_BUCKETS];
	uint64_t bind_ms_sum;
	/* a DHCP server table (conf.server) */
	uint64_t dhcps_discover_rx;
	uint64_t dhcps_offer_tx;
	uint64_t dhcps_request_rx;
	uint64_t dhcps_ack_tx;
	uint64_t dhcps_nak_tx;
	uint64_t dhcps_release_rx;
	uint64_t dhcps_no_address;   /* DISCOVERs not answered: the pool was taken */
	/* IPv6 */
	uint64_t nd_ns_rx;           /* neighbour solicitations for a host's address */
	uint64_t nd_na_tx;           /* advertisements: solicited answers and DAD defences */
	uint64_t nd_dad_tx;          /* DAD probes (NS from ::) */
	uint64_t nd_conflict;        /* DAD: another station has (or probes for) a host's address */
	uint64_t nd_rs_tx;
	uint64_t nd_ra_rx;
	uint64_t nd_prefix;          /* RA prefixes taken for SLAAC (a new one, or new lifetimes) */
	uint64_t icmp6_echo_rx;
	uint64_t icmp6_reply_tx;
	uint64_t hosts6_ll;          /* hosts whose link-local address is assigned (DAD done) */
	uint64_t hosts6_static;
	uint64_t hosts6_slaac;
	uint64_t dhcp6_solicit_tx;
	uint64_t dhcp6_advertise_rx;
	uint64_t dhcp6_request_tx;   /* Requests, Renews and Rebinds */
	uint64_t dhcp6_reply_rx;
	uint64_t dhcp6_release_tx;
	uint64_t dhcp6_retransmits;
	uint64_t dhcp6_noaddr;       /* advertisements and replies refused: NoAddrsAvail, NoPrefixAvail, an IA missing */
	uint64_t dhcp6_bad;          /* garbage to port 546, a status other than success, no server identifier */
	uint64_t dhcp6_stray;        /* for no transaction of ours */
	uint64_t dhcp6_gave_up;
	uint64_t dhcp6_lost;         /* bindings whose valid lifetime ended unrenewed (the host solicits again) */
	uint64_t hosts6_dhcp;        /* hosts holding a DHCPv6 binding (bound, renewing, rebinding) */
	/* DHCPv4 clients' scripted behaviour (surge_hosts_dhcp4, docs/hosts.md "DHCP options") */
	uint64_t dhcp_declined;      /* DHCPDECLINEs sent: an ACKed address answered the ARP check */
	uint64_t dhcp_left_renewals; /* hosts that released after their `renewals` renewals */
	uint64_t dhcp_left_after;    /* hosts that released after leave_after_ms bound */
	uint64_t dhcp_overload;      /* replies whose options went on in sname / file (option 52), read */
	/* echo requests the hosts originate (surge_hosts_ping): each one sent
	 * ends in a reply or a timeout; round trips in microseconds */
	uint64_t ping_tx;
	uint64_t ping_reply;
	uint64_t ping_timeout;
	uint64_t ping_skipped;       /* requests not sent: the host had no address of the family then, or the ring refused it */
	uint64_t ping_stray;         /* echo replies to a host matching no request of its (late, duplicate) */
	uint64_t ping_resolve_tx;    /* ARP requests, NSs for the next hop */
	uint64_t ping_unresolved;    /* pings whose next hop never answered (none of their requests sent) */
	uint64_t ping_rtt_min_us, ping_rtt_max_us, ping_rtt_sum_us;
	/* DHCPv4 relay (surge_hosts_dhcp4's relay4, docs/hosts.md "DHCP relay") */
	uint64_t dhcp_relay_mismatch;   /* relayed replies whose option 82 is not the one sent (RFC 3046 2.2: echoed) */
	uint64_t dhcp_relay_unresolved; /* messages the relay dropped: the next hop's MAC not resolved yet (ARP sent) */
};
enum surge_hosts_event_kind {
	SURGE_HOSTS_EV_BOUND = 1,    /* the address is the host's (static after DAD, or a DHCP ACK) */
	SURGE_HOSTS_EV_CONFLICT = 2,
	SURGE_HOSTS_EV_RENEWED = 3,
	SURGE_HOSTS_EV_GAVE_UP = 4,
	SURGE_HOSTS_EV_LOST = 5,     /* a lease expired or a NAK took it */
	SURGE_HOSTS_EV_RELEASED = 6,
	SURGE_HOSTS_EV_JOINED = 7,   /* a host's first report for a membership sent (ip4: its first IPv4 group) */
	SURGE_HOSTS_EV_LEFT = 8,     /* a host's last leave, done or state-change report sent */
	SURGE_HOSTS_EV_DECLINED = 9, /* DHCP: the ACKed address was in use (ARP check): DECLINEd */
	SURGE_HOSTS_EV_ADDR6 = 16,   /* IPv6: an address assigned after DAD (link-local, static, SLAAC) */
	SURGE_HOSTS_EV_CONFLICT6 = 17   /* IPv6: DAD found the address taken */
};
struct surge_hosts_event {
	uint32_t host;
	uint32_t ip4;                /* host order */
	uint32_t ms;                 /* since the table was made */
	uint8_t kind;                /* enum surge_hosts_event_kind */
	uint8_t membership;          /* JOINED, LEFT: the membership (surge_hosts_join's id) */
	uint8_t pad[2];
};
struct surge_hosts_host {
	uint32_t ip4, server4, lease_s, bound_ms;
	uint8_t mac[6];
	uint8_t state;
	uint8_t tries;
	/* DHCP: options from the last ACK (0 absent): subnet mask (1), the
	 * first router (3), the first two DNS servers (6) */
	uint32_t mask4, router4, dns4[2];
};
/* A table, its id (0..SURGE_HOSTS_MAX-1), or -errno with the error set. */
int surge_hosts_new(const struct surge_hosts_conf *conf);
/* One turn: receive a burst on rxq, take the table's frames (ARP, ICMP
 * echo, DHCP replies), fire due timers, start what the rate allows, send
 * on txq from the tx burst's pool. Frames not the table's stay in rx
 * (returned: their count), or -errno. The table's lcore only. */
int surge_hosts_poll(int id, uint16_t port, uint16_t rxq, uint16_t txq, struct surge_burst *rx,
		     struct surge_burst *tx);
/* surge_hosts_poll without receiving: the table takes its frames from
 * those in rx (what another table's poll of the same queue left), the
 * rest stay. Several tables share one port so. */
int surge_hosts_take(int id, uint16_t port, uint16_t txq, struct surge_burst *rx, struct surge_burst *tx);
int surge_hosts_stats(int id, struct surge_hosts_stats *out);
/* table id's configuration (as made; any thread: the REPL's hosts()) */
int surge_hosts_conf_get(int id, struct surge_hosts_conf *out);
/* The events since the last pull, oldest first, at most max: their count. */
int surge_hosts_events(int id, struct surge_hosts_event *out, uint32_t max);
int surge_hosts_host(int id, uint32_t host, struct surge_hosts_host *out);
/* IPv6: a host's addresses (:: where it has none) and which are in DAD and
 * assigned (bits 1 link-local, 2 static, 4 SLAAC) */
struct surge_hosts_host6 {
	uint8_t ll[16], static6[16], slaac[16];
	uint8_t tentative, assigned;
	uint8_t pad[2];
	uint32_t valid_s, preferred_s;   /* the SLAAC prefix's lifetimes left, UINT32_MAX infinite */
	/* DHCPv6: the state (0 idle, 1 soliciting, 2 requesting, 3 bound, 4
	 * renewing, 5 rebinding, 6 gave up, 7 released), the IA_NA address and
	 * the IA_PD prefix (:: and 0 when none), the IAID, T1, T2 and the valid
	 * lifetime granted */
	uint8_t dhcp6_state, pd_len;
	uint8_t pad2[2];
	uint8_t dhcp6_addr[16], pd[16];
	uint32_t iaid, t1_s, t2_s, dhcp6_valid_s;
};
int surge_hosts_host6(int id, uint32_t host, struct surge_hosts_host6 *out);
/* DHCPv4 clients' options out and scripted behaviour (docs/hosts.md "DHCP
 * options"), given before the table's first poll. Patterns: "%d" is the
 * host's number (first + its index), "%%" a %, the rest as it is; each
 * expands to at most 255 bytes. */
enum { SURGE_HOSTS_PATTERN = 64,      /* a pattern's bytes, its NUL included */
       SURGE_HOSTS_DHCP_OPTS = 240 }; /* the further options' bytes (codes, lengths, values) */
struct surge_hosts_dhcp4 {
	char hostname[SURGE_HOSTS_PATTERN];     /* option 12, "" none */
	char circuit_id[SURGE_HOSTS_PATTERN];   /* option 82 sub-option 1 (RFC 3046), "" none */
	char remote_id[SURGE_HOSTS_PATTERN];    /* option 82 sub-option 2 */
	uint8_t opts[SURGE_HOSTS_DHCP_OPTS];    /* options as sent (code, length, value ...): a 61 or 55
						 * here replaces the client's own */
	uint32_t opts_len;
	uint32_t first;              /* the number "%d" gives host 0 */
	uint8_t arp_check;           /* ARP-probe an ACKed address; DECLINE it when answered (RFC 2131 3.1.5) */
	uint8_t pad[3];
	uint32_t decline_wait_ms;    /* after a DECLINE, before the next DISCOVER (RFC 2131: 10 s) */
	uint32_t leave_after_ms;     /* bound this long since its first ACK, a host releases (0 never) */
	/* relay (RFC 2131 4.1, RFC 3046; docs/hosts.md "DHCP relay"): with
	 * relay4 not 0 the hosts' messages leave as a relay agent's: from
	 * relay4 and relay_mac to relay_server4 (UDP 67 to 67), giaddr
	 * relay4, hops 1; the server's replies come to relay4 */
	uint32_t relay4;             /* the relay agent's address (giaddr), 0: no relay */
	uint32_t relay_server4;      /* the server's address */
	uint8_t relay_mac[6];        /* the relay's MAC: its frames' source, its ARP replies' */
	uint8_t relay_gw_mac[6];     /* the next hop's MAC towards the server; all zero: ARP for relay_server4 */
};
/* 0 or -errno; the table's lcore, before its first poll */
int surge_hosts_dhcp4(int id, const struct surge_hosts_dhcp4 *o);
/* What surge_hosts_new(conf) and then surge_hosts_dhcp4(o) (o NULL: none)
 * would refuse, refused without making a table: 0 or -errno with the
 * error set (a refused table would hold one of the run's slots) */
int surge_hosts_check(const struct surge_hosts_conf *conf, const struct surge_hosts_dhcp4 *o);
/* DHCP: hosts first..first+n-1 that hold a lease send DHCPRELEASE at the
 * next polls and go to RELEASED; their count. The table's lcore only. */
int surge_hosts_release(int id, uint32_t first, uint32_t n);
/* 1 when no host is waiting on anything (each bound, in conflict, gave up
 * or released; renewals not counted; no membership joining or leaving), else 0 */
int surge_hosts_settled(int id);
int surge_hosts_count(void);
/* Multicast: hosts first..first+nhosts-1 join ngroups groups from group
 * (its last 32 bits counted up) with IGMP (af 4: version 2 or 3) or MLD
 * (af 6: version 1 or 2); each host reports them `robustness` times, the
 * first at the next poll, the rest within unsolicited_ms, answers queries
 * and, after surge_hosts_leave, sends its leaves (docs/hosts.md). */
enum { SURGE_HOSTS_MSHIPS = 64 };   /* memberships in a table */
struct surge_hosts_join {
	uint8_t group[16];           /* the first group: IPv4 in the first 4 bytes (network order), or IPv6 */
	uint32_t ngroups;            /* 1.. */
	uint32_t first, nhosts;
	uint8_t af;                  /* 4 IGMP, 6 MLD */
	uint8_t version;             /* IGMP 2 or 3, MLD 1 or 2 */
	uint8_t robustness;          /* 1..7 (RFC 3376: 2) */
	uint8_t pad;
	uint32_t unsolicited_ms;     /* the unsolicited report interval (v2 / MLDv1: 10000, v3 / MLDv2: 1000) */
};
struct surge_hosts_mship {
	uint8_t state;               /* 0 free, 1 joining, 2 joined, 3 leaving */
	uint8_t af, version, version_now;   /* version_now: the version answered in (an older querier's) */
	uint32_t ngroups, first, nhosts;
	uint64_t reports, leaves, queries;  /* frames sent for it, queries that asked it */
};
/* The membership's id (0..SURGE_HOSTS_MSHIPS-1) or -errno; the table's lcore only */
int surge_hosts_join(int id, const struct surge_hosts_join *j);
/* Hosts first..first+n-1 of membership m (n 0: to its last) leave its
 * groups at the next polls; the hosts before and after them stay joined,
 * each part in a new membership: rest[0] and rest[1] (-1 none). 0 or -errno */
int surge_hosts_leave(int id, int m, uint32_t first, uint32_t n, int32_t *rest);
int surge_hosts_mship(int id, int m, struct surge_hosts_mship *out);
/* Ping: hosts first..first+nhosts-1 each send `count` echo requests to
 * target from their own address, interval_ms apart (the table's rate
 * paces the hosts within a round), to the next hop's MAC: `mac`, or the
 * one ARP / ND finds for `via` (a gateway) or, all zero, the target; a
 * request unanswered after timeout_ms times out. One ping at a time
 * (surge_hosts_settled is 0 while it runs). 0 or -errno; the table's lcore only. */
struct surge_hosts_ping {
	uint8_t target[16];          /* IPv4 in the first 4 bytes (network order), or IPv6 */
	uint8_t via[16];             /* the gateway, all zero: the target is on-link */
	uint8_t mac[6];              /* the next hop's MAC, all zero: resolved */
	uint8_t af;                  /* 4 ICMP, 6 ICMPv6 */
	uint8_t pad;
	uint32_t first, nhosts;
	uint32_t count;              /* requests a host, 1..65535 */
	uint32_t interval_ms;        /* 1..3600000 */
	uint32_t timeout_ms;         /* 1..60000 */
	uint32_t size;               /* echo data bytes 8..1472 (IPv6 1452): the first 8 the send time */
};
int surge_hosts_ping(int id, const struct surge_hosts_ping *p);
/* --- surge otg's HTTP server (core/front/otg_http.c, docs/otg.md) -------
 * A pull API: master asks for the next whole request and answers it by id;
 * the server never calls into Lua. */
struct surge_otg;
struct surge_otg_req {
	uint64_t id;             /* what surge_otg_reply answers */
	const char *method;      /* "GET", "POST", ... */
	const char *path;        /* "/config" (no query string) */
	const char *body;        /* len bytes (NUL after them), valid until answered */
	size_t len;
};
/* listen NULL: the server `surge otg` bound at start (--listen, --http,
 * --cert/--key); else "ADDR:PORT" with tls 1/0 and cert/key PEM files
 * (NULL, NULL: the self-signed pair). NULL with err set on failure. */
struct surge_otg *surge_otg_open(const char *listen, int tls, const char *cert, const char *key, char *err,
				 size_t errlen);
/* Waits at most timeout_ms for a whole request: 1 with *req set, 0 none
 * (or the run stopped), -errno. */
int surge_otg_next(struct surge_otg *srv, int timeout_ms, struct surge_otg_req *req);
/* Answers request id (the body is copied): 0, -ENOENT (no such request). */
int surge_otg_reply(struct surge_otg *srv, uint64_t id, int status, const char *content_type, const char *body,
		    size_t len);
void surge_otg_close(struct surge_otg *srv);
/* ABI-END */

#ifdef __cplusplus
}
#endif
#endif /* SURGE_H */
