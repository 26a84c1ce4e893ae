/* SPDX-License-Identifier: BSD-3-Clause
 *
 * otg_http.c - the HTTP(S) server of `surge otg` (docs/otg.md), driven from
 * the master thread: a pull API for the Lua program that answers the
 * requests (lua/surge/otg/main.lua), with no callback into Lua.
 *
 *   surge_otg_open   starts libmicrohttpd (external polling, epoll) on the
 *                    socket otg_prepare bound before EAL (or on one given)
 *   surge_otg_next   runs it until one whole request is there (method,
 *                    path, body), or the timeout; the request's connection
 *                    is suspended until answered
 *   surge_otg_reply  answers a request by its id and resumes its connection
 *   surge_otg_close  stops the server
 *
 * Bounds, so one client cannot hold the others back or take the memory: a
 * body of at most OTG_BODY_MAX bytes (413 beyond, never read whole) and
 * OTG_BUFFERED_MAX of them held at once (503 beyond), a whole
 * request within OTG_REQ_DEADLINE_S of its first byte (a client trickling
 * its body is cut there, as an idle one is after OTG_IDLE_S), at most
 * OTG_CONN_LIMIT connections. Only the master thread touches any of it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "front.h"
#include "otg.h"

#define OTG_BODY_MAX (64u << 20)
#define OTG_BUFFERED_MAX (256u << 20)   /* bodies held at once, all connections: 503 beyond */
#define OTG_REQ_DEADLINE_S 30
#define OTG_IDLE_S 10
#define OTG_CONN_LIMIT 64
#define OTG_PER_IP_LIMIT 16             /* one client cannot take every connection */

enum req_state { REQ_READING, REQ_READY, REQ_TAKEN, REQ_ANSWERED };

struct otg_req {
	struct otg_req *next;           /* the server's list of requests in progress */
	struct MHD_Connection *c;
	uint64_t id;
	enum req_state state;
	int too_big;                    /* over OTG_BODY_MAX: the rest is skipped, 413 */
	int no_room;                    /* over OTG_BUFFERED_MAX with the others: skipped, 503 */
	struct surge_otg *srv;
	struct timespec started;
	char method[16];
	char *path;
	char *body;
	size_t len, cap;
	struct MHD_Response *resp;      /* the answer, queued when MHD calls back after the resume */
	unsigned status;
};

struct surge_otg {
	struct MHD_Daemon *d;
	struct otg_req *reqs;
	uint64_t next_id;
	size_t buffered;                /* the bodies' allocations, every request */
};

struct otg_server {
	int fd;                         /* bound before EAL, -1 = none (taken by the daemon) */
	int tls;
	char *cert_pem, *key_pem;
	char listen[64];
	struct surge_otg *srv;          /* the running server, NULL = not started */
};

static double
elapsed_s(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* ADDR:PORT as cli.c checked it: numeric, IPv6 in brackets. */
static int
bind_listen(const char *addr, int port, char *err, size_t errlen)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	int fd, one = 1, e;

	if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		len = sizeof(*a4);
	} else if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		len = sizeof(*a6);
	} else {
		snprintf(err, errlen, "option --listen: '%s' is not a numeric address", addr);
		return -EINVAL;
	}
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0) {
		e = errno;
		snprintf(err, errlen, "option --listen: %s", strerror(e));
		return -e;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 64) != 0) {
		e = errno;
		close(fd);
		snprintf(err, errlen, "option --listen: %s port %d: %s", addr, port, strerror(e));
		return -e;
	}
	return fd;
}

static void
server_free(struct otg_server *s)
{
	if (s == NULL)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->cert_pem);
	if (s->key_pem != NULL) {
		memset(s->key_pem, 0, strlen(s->key_pem));
		free(s->key_pem);
	}
	free(s);
}

/* The server as the given values say: bound and with its certificate. */
static struct otg_server *
server_prepare(const char *addr, int port, int tls, const char *cert, const char *key, char *err, size_t errlen)
{
	struct otg_server *s = calloc(1, sizeof(*s));
	char info[PATH_MAX + 64];

	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->fd = -1;
	s->tls = tls;
	snprintf(s->listen, sizeof(s->listen), strchr(addr, ':') != NULL ? "[%s]:%d" : "%s:%d", addr, port);
	if (tls && otg_cert_load(cert, key, &s->cert_pem, &s->key_pem, info, sizeof(info), err, errlen) != 0) {
		server_free(s);
		return NULL;
	}
	if ((s->fd = bind_listen(addr, port, err, errlen)) < 0) {
		server_free(s);
		return NULL;
	}
	if (tls && info[0] != '\0')
		rt_info("otg: %s", info);
	return s;
}

int
otg_prepare(const struct surge_opts *o, char *err, size_t errlen)
{
	struct otg_server *s = server_prepare(o->otg_addr, o->otg_port, !o->otg_http, o->otg_cert, o->otg_key, err,
					      errlen);

	if (s == NULL)
		return -EINVAL;
	rt()->otg = s;
	return 0;
}

void
otg_release(void)
{
	struct runtime *r = rt();

	if (r == NULL || r->otg == NULL)
		return;
	if (r->otg->srv != NULL)
		surge_otg_close(r->otg->srv);
	server_free(r->otg);
	r->otg = NULL;
}

static struct otg_req *
req_new(struct surge_otg *srv, struct MHD_Connection *c, const char *method, const char *url)
{
	struct otg_req *q = calloc(1, sizeof(*q));

	if (q == NULL || (q->path = strdup(url)) == NULL) {
		free(q);
		return NULL;
	}
	q->c = c;
	q->srv = srv;
	q->id = ++srv->next_id;
	snprintf(q->method, sizeof(q->method), "%s", method);
	clock_gettime(CLOCK_MONOTONIC, &q->started);
	q->next = srv->reqs;
	srv->reqs = q;
	return q;
}

static void
req_unlink(struct surge_otg *srv, struct otg_req *q)
{
	for (struct otg_req **p = &srv->reqs; *p != NULL; p = &(*p)->next) {
		if (*p == q) {
			*p = q->next;
			break;
		}
	}
	if (q->resp != NULL)
		MHD_destroy_response(q->resp);
	srv->buffered -= q->cap;
	free(q->path);
	free(q->body);
	free(q);
}

static void
completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	(void)c;
	(void)toe;
	if (*con_cls != NULL)
		req_unlink(cls, *con_cls);
	*con_cls = NULL;
}

static enum MHD_Result
queue_text(struct MHD_Connection *c, unsigned status, const char *json)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(json), (void *)json, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result rc;

	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static int
append(struct otg_req *q, const char *data, size_t n)
{
	if (q->too_big || q->no_room || q->len + n > OTG_BODY_MAX) {
		q->too_big = !q->no_room;
		return 0;
	}
	if (q->len + n + 1 > q->cap) {
		size_t cap = q->cap ? q->cap : 4096;
		char *b;

		while (cap < q->len + n + 1)
			cap *= 2;
		if (q->srv->buffered - q->cap + cap > OTG_BUFFERED_MAX) {
			q->no_room = 1;     /* many large bodies at once: this one waits for none */
			return 0;
		}
		if ((b = realloc(q->body, cap)) == NULL)
			return -ENOMEM;
		q->srv->buffered += cap - q->cap;
		q->body = b;
		q->cap = cap;
	}
	memcpy(q->body + q->len, data, n);
	q->len += n;
	q->body[q->len] = '\0';
	return 0;
}

static enum MHD_Result
answer(void *cls, struct MHD_Connection *c, const char *url, const char *method, const char *version,
       const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct surge_otg *srv = cls;
	struct otg_req *q = *con_cls;

	(void)version;
	if (q == NULL) {
		if ((q = req_new(srv, c, method, url)) == NULL)
			return MHD_NO;
		*con_cls = q;
		return MHD_YES;
	}
	if (q->state == REQ_ANSWERED) {         /* resumed: the answer Lua gave */
		enum MHD_Result rc = q->resp != NULL ? MHD_queue_response(c, q->status, q->resp) : MHD_NO;

		if (q->resp != NULL)
			MHD_destroy_response(q->resp);
		q->resp = NULL;
		return rc;
	}
	if (elapsed_s(&q->started) > OTG_REQ_DEADLINE_S)
		return MHD_NO;                   /* a trickling client: the connection is closed */
	if (*upload_data_size != 0) {
		if (append(q, upload_data, *upload_data_size) != 0)
			return MHD_NO;
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (q->no_room)
		return queue_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				  "{\"code\":503,\"kind\":\"internal\",\"errors\":[\"surge otg holds 256 MiB of request "
				  "bodies already: send it again\"]}");
	if (q->too_big)
		return queue_text(c, 413,
				  "{\"code\":413,\"kind\":\"validation\",\"errors\":[\"the request body is larger than "
				  "surge otg takes (64 MiB)\"]}");
	q->state = REQ_READY;                   /* whole: Lua takes it at its next surge_otg_next */
	MHD_suspend_connection(c);
	return MHD_YES;
}

struct surge_otg *
surge_otg_open(const char *listen, int tls, const char *cert, const char *key, char *err, size_t errlen)
{
	struct runtime *r = rt();
	struct otg_server *s;
	struct surge_otg *srv;
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;

	if (listen != NULL) {             /* a server of the caller's, not the command line's */
		struct surge_opts o;
		char cerr[256];

		memset(&o, 0, sizeof(o));
		if (cli_parse_listen(listen, &o, cerr, sizeof(cerr)) != 0) {
			snprintf(err, errlen, "%s", cerr);
			return NULL;
		}
		if (r->otg != NULL) {
			snprintf(err, errlen, "a server is open already");
			return NULL;
		}
		if ((r->otg = server_prepare(o.otg_addr, o.otg_port, tls, cert, key, err, errlen)) == NULL)
			return NULL;
	}
	if ((s = r->otg) == NULL || s->srv != NULL || s->fd < 0) {
		snprintf(err, errlen, "no server to open (surge otg binds it at start)");
		return NULL;
	}
	if ((srv = calloc(1, sizeof(*srv))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (s->tls)
		flags |= MHD_USE_TLS;
	srv->d = MHD_start_daemon(flags, 0, NULL, NULL, answer, srv,
				  MHD_OPTION_LISTEN_SOCKET, s->fd,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned)OTG_CONN_LIMIT,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)OTG_PER_IP_LIMIT,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)OTG_IDLE_S,
				  MHD_OPTION_NOTIFY_COMPLETED, completed, srv,
				  s->tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, s->cert_pem,
				  MHD_OPTION_HTTPS_MEM_KEY, s->key_pem,
				  MHD_OPTION_END);
	if (srv->d == NULL) {
		free(srv);
		snprintf(err, errlen, "libmicrohttpd could not start on %s%s", s->listen,
			 s->tls ? " (is the certificate and key pair valid?)" : "");
		return NULL;
	}
	s->fd = -1;                         /* the daemon's now */
	s->srv = srv;
	/* as at the prompt: a task that fails is an answer's error, not the end of the server */
	r->interactive = 1;
	rt_info("otg: serving the OTG API at %s://%s", s->tls ? "https" : "http", s->listen);
	return srv;
}

static struct otg_req *
ready(struct surge_otg *srv)
{
	struct otg_req *found = NULL;

	/* the oldest whole request: the list is newest first */
	for (struct otg_req *q = srv->reqs; q != NULL; q = q->next)
		if (q->state == REQ_READY)
			found = q;
	return found;
}

int
surge_otg_next(struct surge_otg *srv, int timeout_ms, struct surge_otg_req *out)
{
	const union MHD_DaemonInfo *info;
	struct timespec t0;
	struct otg_req *q;

	if (srv == NULL || out == NULL)
		return -EINVAL;
	info = MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_EPOLL_FD);
	if (info == NULL)
		return -EIO;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		MHD_UNSIGNED_LONG_LONG mhd_ms;
		struct pollfd p = { .fd = info->epoll_fd, .events = POLLIN };
		double left = timeout_ms - elapsed_s(&t0) * 1000;
		int wait;

		if ((q = ready(srv)) != NULL)
			break;
		if (left <= 0 || !surge_running())
			return 0;
		wait = (int)left + 1;
		if (MHD_get_timeout(srv->d, &mhd_ms) == MHD_YES && mhd_ms < (MHD_UNSIGNED_LONG_LONG)wait)
			wait = (int)mhd_ms;
		if (poll(&p, 1, wait) < 0 && errno != EINTR)
			return -errno;
		MHD_run(srv->d);
	}
	q->state = REQ_TAKEN;
	out->id = q->id;
	out->method = q->method;
	out->path = q->path;
	out->body = q->body != NULL ? q->body : "";
	out->len = q->len;
	return 1;
}

int
surge_otg_reply(struct surge_otg *srv, uint64_t id, int status, const char *content_type, const char *body,
		size_t len)
{
	struct otg_req *q;

	if (srv == NULL || status < 100 || status > 599)
		return -EINVAL;
	for (q = srv->reqs; q != NULL && q->id != id; q = q->next)
		;
	if (q == NULL || q->state != REQ_TAKEN)
		return -ENOENT;
	q->resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (q->resp == NULL)
		return -ENOMEM;
	MHD_add_response_header(q->resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				content_type != NULL ? content_type : "application/json");
	q->status = (unsigned)status;
	q->state = REQ_ANSWERED;
	MHD_resume_connection(q->c);
	MHD_run(srv->d);                    /* on its way now, not at the next request */
	return 0;
}

void
surge_otg_close(struct surge_otg *srv)
{
	struct runtime *r = rt();

	if (srv == NULL)
		return;
	/* suspended connections are resumed first: MHD_stop_daemon wants none */
	for (struct otg_req *q = srv->reqs; q != NULL; q = q->next) {
		if (q->state == REQ_READY || q->state == REQ_TAKEN) {
			q->state = REQ_ANSWERED;
			q->status = MHD_HTTP_SERVICE_UNAVAILABLE;
			q->resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
			MHD_resume_connection(q->c);
		}
	}
	MHD_run(srv->d);
	MHD_stop_daemon(srv->d);
	while (srv->reqs != NULL)
		req_unlink(srv, srv->reqs);
	if (r != NULL && r->otg != NULL && r->otg->srv == srv) {
		r->otg->srv = NULL;
		r->interactive = 0;
	}
	free(srv);
}
