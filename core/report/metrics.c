/* SPDX-License-Identifier: BSD-3-Clause
 *
 * metrics.c - Prometheus metrics: `--metrics [ADDR:]PORT` serves GET
 * /metrics over HTTP (docs/metrics.md lists what it holds).
 *
 * HTTP is libmicrohttpd's: it parses requests, answers malformed ones (400)
 * and runs one thread of its own that polls every connection, so a slow or
 * idle client makes no other wait for it. Slots are what clients could
 * hold: a client that trickles a header line now and then is never idle, so
 * libmicrohttpd's inactivity timeout never ends it, and 64 of them took
 * every slot for good (issue 31). So when every slot is taken, the
 * connection that has waited longest since it opened or its last answer is
 * shut down, once it has had CONN_GRACE_NS (struct conn, make_room below):
 * a slot is free again within the grace, in order of arrival (the kernel's
 * queue), and a scraper, whose request comes with its connection, has the
 * grace to send it however fast others reconnect. We
 * bind the listening socket ourselves, before EAL starts, so a bad address
 * or a port in use is a command-line error (exit 2) that names --metrics,
 * and a port 0 can be told back; libmicrohttpd then takes that socket.
 *
 * The answer is built on libmicrohttpd's thread and only reads, as DPDK
 * telemetry's commands do (telemetry.c): the per-queue and per-lcore slots
 * (one writer each, 64-bit loads), the pacer's figures, copies of the
 * latency histograms, the counters' cells. Queue slots are read under the
 * stats lock, which only master and the monitor take (a port closing frees
 * them under it); nothing the data plane takes is taken here. Until EAL is
 * up (metrics_open) the answer is 503; the thread is joined before the
 * tear-down frees anything (metrics_stop, the first step of boot_finish).
 *
 * Format: the Prometheus text format 0.0.4, or OpenMetrics 1.0.0 when the
 * scraper's Accept asks for it (Prometheus does): one writer, the family
 * headers and the trailing "# EOF" differ.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "hist.h"
#include "report.h"

#define CONN_LIMIT 64          /* open connections at once; the last slot frees one */
#define CONN_TIMEOUT_S 10      /* an idle or stalled client is dropped after this */
#define ACCEPT_QUEUE 1024      /* the kernel's queue of connections not yet taken:
				* while it has room a scraper's SYN is never dropped
				* (a drop is a 1 s, then 3 s, retry) */
#define CONN_GRACE_NS 250000000ULL   /* a connection is not shut down to make room
				      * before this, from its start or last answer */
#define LABEL_MAX 256          /* a label value's bytes, escapes included */

/* An open connection, oldest first in the server's list: ordered by when it
 * opened or its last answer was sent (since). Under the server's lock:
 * libmicrohttpd's callbacks and the reaper thread take it. */
struct conn {
	struct conn *prev, *next;
	MHD_socket fd;
	uint64_t since;            /* CLOCK_MONOTONIC ns */
	uint8_t busy;              /* a request of it is being answered */
	uint8_t closing;           /* shut down: libmicrohttpd closes it next */
};

struct metrics_server {
	struct MHD_Daemon *d;
	volatile int open;         /* EAL is up: the run's state may be read */
	pthread_mutex_t lock;      /* the connections, live, stopping */
	pthread_cond_t wake;       /* the reaper: a full table, or the stop */
	pthread_t reaper;
	int stopping;
	struct conn *head, *tail;
	unsigned live;             /* connections not closing */
};

/* Latency buckets: 8 per power of two from 64 ns to 2^34 ns (17 s), each
 * bound a bucket boundary of core/base/hist.c, so every count is exact:
 * latencies are whole ns rounded down, so "below the bound in ns" is
 * "at most the bound in seconds". */
#define LAT_FIRST_EXP 6
#define LAT_PER_OCTAVE 8
#define LAT_OCTAVES 28
#define LAT_BOUNDS (LAT_OCTAVES * LAT_PER_OCTAVE + 1)

static uint64_t
lat_bound_ns(unsigned i)
{
	unsigned e = LAT_FIRST_EXP + i / LAT_PER_OCTAVE, j = i % LAT_PER_OCTAVE;

	return (1ULL << e) + ((uint64_t)j << (e - 3));
}

/* --- the exposition writer ---------------------------------------------- */

enum kind { COUNTER, GAUGE, HISTOGRAM, INFO };

struct out {
	char *p;
	size_t len, cap;
	int om;                    /* OpenMetrics, else text 0.0.4 */
	int failed;                /* out of memory: the answer is a 500 */
	char fam[96];              /* the family whose header was written last */
};

static void __attribute__((format(printf, 2, 3)))
outf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	while (!o->failed) {
		size_t room = o->cap - o->len;
		char *p;

		va_start(ap, fmt);
		n = vsnprintf(o->p + o->len, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->failed = 1;
		} else if ((size_t)n < room) {
			o->len += (size_t)n;
			return;
		} else if ((p = realloc(o->p, o->cap * 2 + (size_t)n)) == NULL) {
			o->failed = 1;
		} else {
			o->p = p;
			o->cap = o->cap * 2 + (size_t)n;
		}
	}
}

/* One character of s (n bytes left, n >= 1) copied into ch: its length if it
 * is well-formed UTF-8 (RFC 3629: shortest form, no surrogate, at most
 * U+10FFFF), else minus the bytes of its longest well-formed start (at
 * least 1), which one U+FFFD replaces. Each byte is read once: a task's
 * name may be rewritten while it is read. */
static int
utf8_char(const unsigned char *s, size_t n, unsigned char ch[4])
{
	unsigned char c = ch[0] = s[0], lo = 0x80, hi = 0xbf;
	int len;

	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4)      /* a continuation, an overlong lead, beyond U+10FFFF */
		return -1;
	len = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (c == 0xe0)
		lo = 0xa0;             /* overlong */
	else if (c == 0xed)
		hi = 0x9f;             /* UTF-16 surrogates */
	else if (c == 0xf0)
		lo = 0x90;             /* overlong */
	else if (c == 0xf4)
		hi = 0x8f;             /* beyond U+10FFFF */
	for (int k = 1; k < len; k++) {
		if ((size_t)k >= n)
			return -k;
		ch[k] = s[k];
		if (ch[k] < (k == 1 ? lo : 0x80) || ch[k] > (k == 1 ? hi : 0xbf))
			return -k;
	}
	return len;
}

size_t
report_text(char *out, size_t cap, const char *in, size_t max, enum text_mode mode)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t k = 0, i = 0;

	if (cap == 0)
		return 0;
	while (i < max && s[i] != '\0') {
		unsigned char ch[4];
		const char *w = (const char *)ch;
		int n = utf8_char(s + i, max - i, ch);
		size_t wn = n > 0 ? (size_t)n : 3;

		if (mode == TEXT_ASCII) {
			if (n != 1 || ch[0] < 0x20 || ch[0] == 0x7f)
				w = "?";
			wn = 1;
		} else if (n < 0) {
			w = "\xef\xbf\xbd";   /* U+FFFD for what is not UTF-8 */
		} else if (ch[0] == '\\' || ch[0] == '\n' || (mode == TEXT_LABEL && ch[0] == '"')) {
			w = ch[0] == '\\' ? "\\\\" : ch[0] == '\n' ? "\\n" : "\\\"";
			wn = 2;
		}
		if (k + wn >= cap)
			break;                 /* cut before a character, never inside */
		memcpy(out + k, w, wn);
		k += wn;
		i += n > 0 ? (size_t)n : (size_t)-n;
	}
	out[k] = '\0';
	return k;
}

/* Appends NAME="VALUE" to labels (len bytes), a comma first unless it is
 * the first: the one way a label is written. */
static void
label(char *labels, size_t len, const char *name, const char *value, size_t max)
{
	char v[LABEL_MAX + 1];
	size_t n = strlen(labels);

	report_text(v, sizeof(v), value, max, TEXT_LABEL);
	snprintf(labels + n, len - n, "%s%s=\"%s\"", n > 0 ? "," : "", name, v);
}

/* Writes the family's header before its first sample. The text format
 * names a counter's family with its _total and has no info type. */
static void
family(struct out *o, const char *name, enum kind k, const char *help)
{
	static const char *types[] = { "counter", "gauge", "histogram", "info" };
	const char *suffix = "", *type = types[k];

	if (strcmp(o->fam, name) == 0)
		return;
	snprintf(o->fam, sizeof(o->fam), "%s", name);
	if (!o->om && k == COUNTER)
		suffix = "_total";
	else if (!o->om && k == INFO) {
		suffix = "_info";
		type = "gauge";
	}
	outf(o, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix, type);
}

static const char *
sample_suffix(enum kind k)
{
	return k == COUNTER ? "_total" : k == INFO ? "_info" : "";
}

static void
put_u64(struct out *o, const char *name, enum kind k, const char *help, const char *labels, uint64_t v)
{
	family(o, name, k, help);
	outf(o, "%s%s%s%s%s %" PRIu64 "\n", name, sample_suffix(k), *labels ? "{" : "", labels,
	     *labels ? "}" : "", v);
}

static void
put_dbl(struct out *o, const char *name, enum kind k, const char *help, const char *labels, double v)
{
	family(o, name, k, help);
	outf(o, "%s%s%s%s%s %.17g\n", name, sample_suffix(k), *labels ? "{" : "", labels,
	     *labels ? "}" : "", v);
}

/* --- what a scrape reads ------------------------------------------------ */

static void
run_info(struct out *o)
{
	struct runtime *r = rt();
	const struct surge_opts *opt = &r->opts;
	char labels[8 * (LABEL_MAX + 16)] = "", pid[16];
	uint64_t end = r->end_tsc ? r->end_tsc : rte_rdtsc();

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	label(labels, sizeof(labels), "version", surge_version(), SIZE_MAX);
	label(labels, sizeof(labels), "commit", surge_git_commit(), SIZE_MAX);
	label(labels, sizeof(labels), "dpdk_version", surge_dpdk_version(), SIZE_MAX);
	label(labels, sizeof(labels), "command", opt->cmd == CMD_REPL ? "repl" : "run", SIZE_MAX);
	/* a path is bytes: not UTF-8, or cut, it would void the whole scrape */
	label(labels, sizeof(labels), "script", opt->script != NULL ? opt->script : "", SIZE_MAX);
	label(labels, sizeof(labels), "file_prefix", r->file_prefix, sizeof(r->file_prefix));
	label(labels, sizeof(labels), "pid", pid, SIZE_MAX);
	put_u64(o, "surge_run", INFO, "the run: surge's version and commit, DPDK's, the command and script",
		labels, 1);
	put_u64(o, "surge_running", GAUGE, "1 while the run goes on, 0 once it stops", "",
		(uint64_t)surge_running());
	put_u64(o, "surge_tasks", GAUGE, "tasks running on worker lcores", "", (uint64_t)surge_task_count());
	put_dbl(o, "surge_run_elapsed_seconds", GAUGE, "time since master() started (the summary's span)", "",
		r->start_tsc && end > r->start_tsc ? (double)(end - r->start_tsc) / (double)rt_hz() : 0);
}

enum qfield { Q_PACKETS, Q_BYTES, Q_DROPS, Q_UNSENT, Q_LATE, Q_TARGET, Q_PPS, Q_L1BPS };

static const struct qfam {
	const char *name;
	enum kind k;
	uint8_t tx;
	uint8_t field;
	const char *help;
} qfams[] = {
	{ "surge_tx_packets", COUNTER, 1, Q_PACKETS, "packets handed to the driver" },
	{ "surge_tx_bytes", COUNTER, 1, Q_BYTES, "L2 bytes (without FCS) handed to the driver" },
	{ "surge_rx_packets", COUNTER, 0, Q_PACKETS, "packets taken from the driver" },
	{ "surge_rx_bytes", COUNTER, 0, Q_BYTES, "L2 bytes (without FCS) taken from the driver" },
	{ "surge_tx_dropped_packets", COUNTER, 1, Q_DROPS, "packets the driver refused until the run gave them up" },
	{ "surge_tx_unsent_packets", COUNTER, 1, Q_UNSENT, "paced packets not yet due when the run stopped" },
	{ "surge_tx_late_packets", COUNTER, 1, Q_LATE, "paced packets that left later than their schedule" },
	{ "surge_tx_target_packets_per_second", GAUGE, 1, Q_TARGET, "the rate asked of a paced queue" },
	{ "surge_tx_achieved_packets_per_second", GAUGE, 1, Q_PPS, "the rate a paced queue achieved since its rate was set" },
	{ "surge_tx_achieved_l1_bytes_per_second", GAUGE, 1, Q_L1BPS,
	  "the L1 rate (FCS, preamble and gap included) a paced queue achieved, bytes/s" },
};

/* Under the stats lock: the queue slots of an opened port stay. */
static void
queues(struct out *o)
{
	struct runtime *r = rt();
	char labels[64];
	uint16_t port;

	for (size_t f = 0; f < sizeof(qfams) / sizeof(qfams[0]); f++) {
		const struct qfam *qf = &qfams[f];

		RTE_ETH_FOREACH_DEV(port) {
			const struct port_state *ps = &r->port[port];
			int n;

			if (!ps->opened)
				continue;
			n = qf->tx ? ps->conf.txq : ps->conf.rxq;
			for (int q = 0; q < n; q++) {
				const struct surge_queue_stats *st = qf->tx ? &ps->txq[q].st : &ps->rxq[q].st;
				struct surge_rate_stats rs;
				uint64_t v;

				snprintf(labels, sizeof(labels), "port=\"%u\",queue=\"%d\"", port, q);
				if (qf->field >= Q_LATE) {
					/* a queue without a rate has no pacer figures */
					if (surge_txq_rate_stats(port, (uint16_t)q, &rs) != 0 ||
					    (rs.packets == 0 && rs.target_pps <= 0))
						continue;
					if (qf->field == Q_LATE)
						put_u64(o, qf->name, qf->k, qf->help, labels, rs.late);
					else
						put_dbl(o, qf->name, qf->k, qf->help, labels,
							qf->field == Q_TARGET ? rs.target_pps :
							qf->field == Q_PPS ? rs.pps : rs.l1_bps / 8);
					continue;
				}
				v = qf->field == Q_PACKETS ? __atomic_load_n(&st->packets, __ATOMIC_RELAXED) :
				    qf->field == Q_BYTES ? __atomic_load_n(&st->bytes, __ATOMIC_RELAXED) :
				    qf->field == Q_DROPS ? __atomic_load_n(&st->drops, __ATOMIC_RELAXED) :
				    __atomic_load_n(&st->unsent, __ATOMIC_RELAXED);
				put_u64(o, qf->name, qf->k, qf->help, labels, v);
			}
		}
	}
}

/* The NIC's own counters of each started port (a port stops, under the
 * stats lock, before it closes). */
static void
ports(struct out *o)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} pf[] = {
		{ "surge_port_rx_missed_packets", "packets the NIC dropped for want of room (imissed)",
		  offsetof(struct rte_eth_stats, imissed) },
		{ "surge_port_rx_errors", "erroneous received packets (ierrors)", offsetof(struct rte_eth_stats, ierrors) },
		{ "surge_port_tx_errors", "failed transmissions (oerrors)", offsetof(struct rte_eth_stats, oerrors) },
		{ "surge_port_rx_nombuf", "receive mbuf allocation failures (rx_nombuf)",
		  offsetof(struct rte_eth_stats, rx_nombuf) },
	};
	struct rte_eth_stats s[RTE_MAX_ETHPORTS];
	uint8_t ok[RTE_MAX_ETHPORTS] = { 0 };
	char labels[32];
	uint16_t port;

	RTE_ETH_FOREACH_DEV(port)
		ok[port] = __atomic_load_n(&rt()->port[port].started, __ATOMIC_ACQUIRE) &&
			   rte_eth_stats_get(port, &s[port]) == 0;
	for (size_t f = 0; f < sizeof(pf) / sizeof(pf[0]); f++) {
		RTE_ETH_FOREACH_DEV(port) {
			if (!ok[port])
				continue;
			snprintf(labels, sizeof(labels), "port=\"%u\"", port);
			put_u64(o, pf[f].name, COUNTER, pf[f].help, labels,
				*(const uint64_t *)((const char *)&s[port] + pf[f].off));
		}
	}
}

static void
lcores(struct out *o)
{
	struct runtime *r = rt();
	unsigned id;

	RTE_LCORE_FOREACH_WORKER(id) {
		struct surge_lcore_stats ls;
		uint64_t total;
		char labels[2 * (LABEL_MAX + 16)] = "", lc[16];
		int st = __atomic_load_n(&r->lcore[id].state, __ATOMIC_ACQUIRE);

		if (surge_lcore_stats((int)id, &ls) != 0 || (ls.busy_cycles + ls.idle_cycles == 0 && st == 0))
			continue;
		total = ls.busy_cycles + ls.idle_cycles;
		snprintf(lc, sizeof(lc), "%u", id);
		label(labels, sizeof(labels), "lcore", lc, SIZE_MAX);
		label(labels, sizeof(labels), "task", r->lcore[id].fn, sizeof(r->lcore[id].fn));
		put_dbl(o, "surge_lcore_idle_ratio", GAUGE,
			"share of its task's time the lcore waited (pacing, sleeping, empty polls), 0..1", labels,
			total ? (double)ls.idle_cycles / (double)total : 0);
	}
}

static void
latency(struct out *o)
{
	int n = surge_latency_count();
	struct hist *h = n > 0 ? malloc((size_t)n * sizeof(*h)) : NULL;
	struct surge_latency *l = n > 0 ? calloc((size_t)n, sizeof(*l)) : NULL;
	char labels[64];

	if (n > 0 && (h == NULL || l == NULL)) {
		o->failed = 1;
		n = 0;
	}
	/* one copy of each, so its buckets, count and sum agree */
	for (int i = 0; i < n; i++)
		if (latency_hist_copy(i, &h[i]) != 0 || surge_latency_get(i, &l[i]) != 0)
			n = i;
	for (int i = 0; i < n; i++) {
		uint64_t cum = 0;
		unsigned k = 0;

		family(o, "surge_latency_seconds", HISTOGRAM, "latency of the probes a receiver matched");
		for (unsigned b = 0; b < LAT_BOUNDS; b++) {
			uint64_t bound = lat_bound_ns(b);

			for (; k < HIST_BUCKETS && hist_bucket_high(k) < bound; k++)
				cum += h[i].bucket[k];
			outf(o, "surge_latency_seconds_bucket{receiver=\"%d\",le=\"%.12g\"} %" PRIu64 "\n", i,
			     (double)bound / 1e9, cum);
		}
		for (; k < HIST_BUCKETS; k++)
			cum += h[i].bucket[k];
		outf(o, "surge_latency_seconds_bucket{receiver=\"%d\",le=\"+Inf\"} %" PRIu64 "\n", i, cum);
		outf(o, "surge_latency_seconds_count{receiver=\"%d\"} %" PRIu64 "\n", i, cum);
		outf(o, "surge_latency_seconds_sum{receiver=\"%d\"} %.17g\n", i, h[i].sum / 1e9);
	}
	for (int i = 0; i < n; i++) {
		snprintf(labels, sizeof(labels), "receiver=\"%d\"", i);
		put_u64(o, "surge_latency_probes", COUNTER, "probes received, duplicates not counted", labels,
			l[i].probes);
	}
	for (int i = 0; i < n; i++) {
		snprintf(labels, sizeof(labels), "receiver=\"%d\"", i);
		put_u64(o, "surge_latency_duplicated_probes", COUNTER, "probes received again", labels,
			l[i].duplicated);
	}
	for (int i = 0; i < n; i++) {
		snprintf(labels, sizeof(labels), "receiver=\"%d\"", i);
		put_u64(o, "surge_latency_reordered_probes", COUNTER, "probes that came after a later one",
			labels, l[i].reordered);
	}
	for (int i = 0; i < n; i++) {
		snprintf(labels, sizeof(labels), "receiver=\"%d\"", i);
		/* a gauge: a late probe makes a lost one found */
		put_u64(o, "surge_latency_lost_probes", GAUGE, "sequence numbers not seen below the highest seen",
			labels, l[i].lost);
	}
	free(h);
	free(l);
}

/* surge.counter NAME: surge_script_KEY_total, surge.gauge NAME:
 * surge_script_KEY, KEY the name as the telemetry socket has it (letters,
 * digits and _): control.h counter_metric_name, unique by surge_counter_new */
static void
counters(struct out *o)
{
	for (int i = 0; i < surge_counter_count(); i++) {
		struct surge_counter_info ci;
		char name[SURGE_NAME_MAX + 32], help[LABEL_MAX + 32], raw[LABEL_MAX + 1];

		if (surge_counter_get(i, &ci) != 0)
			continue;
		counter_metric_name(ci.name, ci.kind, name, sizeof(name));
		/* OpenMetrics' help escapes " as a label does */
		report_text(raw, sizeof(raw), ci.name, sizeof(ci.name), o->om ? TEXT_LABEL : TEXT_HELP);
		if (ci.kind == SURGE_COUNTER) {
			name[strlen(name) - strlen("_total")] = '\0';   /* the family's name */
			snprintf(help, sizeof(help), "the script's surge.counter %s", raw);
			put_u64(o, name, COUNTER, help, "", ci.total);
		} else {
			snprintf(help, sizeof(help), "the script's surge.gauge %s", raw);
			put_dbl(o, name, GAUGE, help, "", ci.value);
		}
	}
}

static void
expose(struct out *o)
{
	run_info(o);
	pthread_mutex_lock(&rt()->stats_lock);
	queues(o);
	pthread_mutex_unlock(&rt()->stats_lock);
	ports(o);
	lcores(o);
	latency(o);
	counters(o);
	if (o->om)
		outf(o, "# EOF\n");
}

/* --- connections: a full table frees its oldest ------------------------- */

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void
conn_unlink(struct metrics_server *m, struct conn *k)
{
	*(k->prev != NULL ? &k->prev->next : &m->head) = k->next;
	*(k->next != NULL ? &k->next->prev : &m->tail) = k->prev;
	k->prev = k->next = NULL;
}

static void
conn_append(struct metrics_server *m, struct conn *k)
{
	k->prev = m->tail;
	*(m->tail != NULL ? &m->tail->next : &m->head) = k;
	m->tail = k;
}

/* Under the lock, while every slot is taken: shuts down the oldest
 * connection not being answered (else the oldest), if it had its grace;
 * returns when the next will have had it (0: the table is not full).
 * One slot is kept free, so libmicrohttpd, which stops accepting while
 * every slot is taken, mostly never does. shutdown, not close: the socket
 * stays libmicrohttpd's, which sees the end and closes it, after its
 * NOTIFY_CLOSED, which takes the lock: no descriptor is reused under us. */
static uint64_t
make_room(struct metrics_server *m, uint64_t now)
{
	while (m->live >= CONN_LIMIT) {
		struct conn *x, *old = NULL;

		for (x = m->head; x != NULL; x = x->next) {
			if (x->closing)
				continue;
			if (!x->busy) {
				old = x;
				break;
			}
			if (old == NULL)
				old = x;
		}
		if (old == NULL)
			return 0;
		if (now - old->since < CONN_GRACE_NS)
			return old->since + CONN_GRACE_NS;
		(void)shutdown(old->fd, SHUT_RDWR);
		old->closing = 1;
		m->live--;
	}
	return 0;
}

/* Its own thread (libmicrohttpd has no timer for us): shuts the oldest down
 * when its grace ends while the table is full. Idle otherwise. */
static void *
reaper(void *arg)
{
	struct metrics_server *m = arg;

	pthread_mutex_lock(&m->lock);
	while (!m->stopping) {
		uint64_t due = make_room(m, mono_ns());
		struct timespec ts = { .tv_sec = (time_t)(due / 1000000000ULL),
				       .tv_nsec = (long)(due % 1000000000ULL) };

		if (due == 0)
			pthread_cond_wait(&m->wake, &m->lock);
		else
			pthread_cond_timedwait(&m->wake, &m->lock, &ts);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* libmicrohttpd's thread: a connection opened (it is the newest) or was
 * closed. A client trickling its headers, one reading an answer a byte at
 * a time or one saying nothing keeps its slot until it is the oldest and
 * the table is full. */
static void
on_connection(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_ConnectionNotificationCode code)
{
	struct metrics_server *m = cls;
	const union MHD_ConnectionInfo *ci;
	struct conn *k = *ctx;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (k != NULL) {
			pthread_mutex_lock(&m->lock);
			conn_unlink(m, k);
			m->live -= !k->closing;
			pthread_mutex_unlock(&m->lock);
			free(k);
			*ctx = NULL;
		}
		return;
	}
	if (code != MHD_CONNECTION_NOTIFY_STARTED ||
	    (ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD)) == NULL ||
	    (k = calloc(1, sizeof(*k))) == NULL)
		return;       /* untracked: the inactivity timeout still ends it */
	k->fd = ci->connect_fd;
	*ctx = k;
	pthread_mutex_lock(&m->lock);
	k->since = mono_ns();
	conn_append(m, k);
	m->live++;
	if (make_room(m, k->since) != 0)
		pthread_cond_signal(&m->wake);   /* all young: the reaper waits for the oldest */
	pthread_mutex_unlock(&m->lock);
}

static struct conn *
conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci != NULL ? ci->socket_context : NULL;
}

/* libmicrohttpd's thread: a request's answer was sent (or the request
 * ended): the connection is the newest again, an idle keep-alive one. */
static void
on_completed(void *cls, struct MHD_Connection *c, void **req, enum MHD_RequestTerminationCode toe)
{
	struct metrics_server *m = cls;
	struct conn *k = conn_of(c);

	(void)req;
	(void)toe;
	if (k == NULL)
		return;
	pthread_mutex_lock(&m->lock);
	k->busy = 0;
	k->since = mono_ns();
	conn_unlink(m, k);
	conn_append(m, k);
	pthread_mutex_unlock(&m->lock);
}

/* --- HTTP ----------------------------------------------------------------- */

static enum MHD_Result
reply(struct MHD_Connection *c, unsigned status, const char *type, char *body, size_t len,
      enum MHD_ResponseMemoryMode mode, const char *allow)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result rc;

	if (resp == NULL) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;        /* libmicrohttpd closes the connection */
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (allow != NULL)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	rc = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return rc;
}

static enum MHD_Result
refuse(struct MHD_Connection *c, unsigned status, const char *text, const char *allow)
{
	return reply(c, status, "text/plain; charset=utf-8", (char *)text, strlen(text), MHD_RESPMEM_PERSISTENT,
		     allow);
}

/* Every request, at its first call (a body, if any, is never read: the
 * answer is queued before it, and libmicrohttpd discards it). */
static enum MHD_Result
answer(void *cls, struct MHD_Connection *c, const char *url, const char *method, const char *version,
       const char *upload, size_t *upload_size, void **req)
{
	struct metrics_server *m = cls;
	struct out o = { 0 };
	const char *accept;
	struct conn *k = conn_of(c);

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)req;
	if (k != NULL) {
		pthread_mutex_lock(&m->lock);
		k->busy = 1;          /* until on_completed */
		pthread_mutex_unlock(&m->lock);
	}
	if (strcmp(url, "/metrics") != 0)
		return refuse(c, MHD_HTTP_NOT_FOUND, "not found: surge serves GET /metrics only\n", NULL);
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0)
		return refuse(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: surge serves GET /metrics only\n",
			      MHD_HTTP_METHOD_GET);
	if (!__atomic_load_n(&m->open, __ATOMIC_ACQUIRE))
		return refuse(c, MHD_HTTP_SERVICE_UNAVAILABLE, "surge is starting\n", NULL);
	accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	o.om = accept != NULL && strstr(accept, "application/openmetrics-text") != NULL;
	o.cap = 64 * 1024;
	if ((o.p = malloc(o.cap)) == NULL)
		o.failed = 1;
	else
		expose(&o);
	if (o.failed) {
		free(o.p);
		return refuse(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", NULL);
	}
	return reply(c, MHD_HTTP_OK,
		     o.om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
			  : "text/plain; version=0.0.4; charset=utf-8",
		     o.p, o.len, MHD_RESPMEM_MUST_FREE, NULL);
}

/* --- start and stop (run/boot.c) -------------------------------------- */

static int
bind_spec(const struct surge_opts *opt, int *port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	int fd, one = 1, err;

	if (inet_pton(AF_INET, opt->metrics_addr, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)opt->metrics_port);
		len = sizeof(*a4);
	} else if (inet_pton(AF_INET6, opt->metrics_addr, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)opt->metrics_port);
		len = sizeof(*a6);
	} else {
		return rt_error(-EINVAL, "--metrics %s: not a numeric address", opt->metrics);
	}
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return rt_error(-errno, "--metrics %s: %s", opt->metrics, strerror(errno));
	/* a run just ended may leave connections in TIME_WAIT on the port */
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, ACCEPT_QUEUE) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
		err = errno;
		close(fd);
		return rt_error(-err, "--metrics %s: %s", opt->metrics, strerror(err));
	}
	*port = ntohs(ss.ss_family == AF_INET ? a4->sin_port : a6->sin6_port);
	return fd;
}

static void
reaper_stop(struct metrics_server *m)
{
	pthread_mutex_lock(&m->lock);
	m->stopping = 1;
	pthread_cond_signal(&m->wake);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->reaper, NULL);
}

int
metrics_start(void)
{
	struct runtime *r = rt();
	const struct surge_opts *opt = &r->opts;
	struct metrics_server *m;
	pthread_condattr_t ca;
	sigset_t all, old;
	int fd, port = 0, err;

	if (opt->metrics == NULL)
		return 0;
	if ((fd = bind_spec(opt, &port)) < 0)
		return fd;
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		close(fd);
		return rt_error(-ENOMEM, "--metrics %s: out of memory", opt->metrics);
	}
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);   /* the reaper's deadlines are mono_ns */
	pthread_cond_init(&m->wake, &ca);
	pthread_condattr_destroy(&ca);
	/* its threads take no signal: SIGINT and the rest go to surge's own
	 * threads (signals.c); they inherit this mask */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if ((err = pthread_create(&m->reaper, NULL, reaper, m)) != 0) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		close(fd);
		free(m);
		return rt_error(-err, "--metrics %s: %s", opt->metrics, strerror(err));
	}
	/* MHD_USE_ITC: metrics_stop can take the socket back (quiesce) */
	m->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC, 0, NULL, NULL, answer, m,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_LIMIT,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_TIMEOUT_S,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, m,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, m,
				MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (m->d == NULL) {
		/* fd is not closed: whether libmicrohttpd did is not said */
		reaper_stop(m);
		pthread_cond_destroy(&m->wake);
		pthread_mutex_destroy(&m->lock);
		free(m);
		return rt_error(-EIO, "--metrics %s: libmicrohttpd could not start", opt->metrics);
	}
	r->metrics = m;
	rt_info("metrics: http://%s%s%s:%d/metrics", strchr(opt->metrics_addr, ':') ? "[" : "",
		opt->metrics_addr, strchr(opt->metrics_addr, ':') ? "]" : "", port);
	return 0;
}

void
metrics_open(void)
{
	if (rt()->metrics != NULL)
		__atomic_store_n(&rt()->metrics->open, 1, __ATOMIC_RELEASE);
}

void
metrics_stop(void)
{
	struct metrics_server *m = rt()->metrics;
	MHD_socket fd;

	if (m == NULL)
		return;
	/* no new connection from here; the stop joins the thread, so a scrape
	 * in progress ends first. A quiesced socket is ours to close, else
	 * libmicrohttpd closes it. */
	reaper_stop(m);
	fd = MHD_quiesce_daemon(m->d);
	MHD_stop_daemon(m->d);     /* each connection's NOTIFY_CLOSED frees its conn */
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	pthread_cond_destroy(&m->wake);
	pthread_mutex_destroy(&m->lock);
	free(m);
	rt()->metrics = NULL;
}
