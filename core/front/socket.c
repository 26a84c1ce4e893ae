/* SPDX-License-Identifier: BSD-3-Clause
 *
 * socket.c - the --control UNIX socket `surge attach` talks to.
 *
 * Everything is non-blocking and served from the master's loop between
 * polls: a silent or vanished client costs the run nothing, one that does
 * not read its replies about a second per reply before it is dropped. Only
 * the instance's user and root are served (peer_refused). A request
 * is evaluated whole, in the master VM; a client that sends something that is
 * not a frame gets one error reply and is disconnected. A request or a reply
 * larger than CONTROL_MAX_FRAME is refused with an error reply that says so
 * (the request's bytes are read and dropped): the connection goes on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "front.h"

#define HEADER_MAX 12   /* decimal digits of a length and the newline */
#define MIN_SIZE(a, b) ((a) < (b) ? (a) : (b))

void
control_init(struct control *c)
{
	memset(c, 0, sizeof(*c));
	c->lfd = -1;
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		c->cl[i].fd = -1;
}

static int
unix_addr(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	strcpy(a->sun_path, path);
	return 0;
}

int
control_check(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un a;
	struct stat st;
	int fd, rc;

	if (unix_addr(path, &a) != 0) {
		/* the reason first: the path may be longer than err, which cuts it */
		snprintf(err, errlen, "--control: path longer than %zu bytes (%zu): %s", sizeof(a.sun_path) - 1,
			 strlen(path), path);
		return -ENAMETOOLONG;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "--control %s: exists and is not a socket", path);
			return -EEXIST;
		}
		/* a socket somebody answers on belongs to a live instance */
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		rc = fd >= 0 ? connect(fd, (struct sockaddr *)&a, sizeof(a)) : -1;
		if (fd >= 0)
			close(fd);
		if (rc == 0) {
			snprintf(err, errlen, "--control %s: another surge is listening there", path);
			return -EADDRINUSE;
		}
	}
	return 0;
}

int
control_listen(struct control *c, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un a;
	mode_t old;
	int fd, rc;

	if ((rc = control_check(path, err, errlen)) != 0)
		return rc;
	unix_addr(path, &a);   /* fits: control_check said so */
	unlink(path);          /* anything there is a socket left by a run that died */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "--control %s: socket: %s", path, strerror(errno));
		return -errno;
	}
	old = umask(0177);                  /* born 0600: no window where others may connect */
	rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (rc != 0 || chmod(path, 0600) != 0 || listen(fd, 8) != 0) {
		rc = -errno;
		snprintf(err, errlen, "--control %s: %s", path, strerror(errno));
		close(fd);
		return rc;
	}
	c->lfd = fd;
	snprintf(c->path, sizeof(c->path), "%s", path);
	return 0;
}

int
control_pollfds(const struct control *c, struct pollfd *p, int max)
{
	int n = 0;

	if (c->lfd < 0)
		return 0;
	p[n++] = (struct pollfd){ .fd = c->lfd, .events = POLLIN };
	for (int i = 0; i < CONTROL_MAX_CLIENTS && n < max; i++)
		if (c->cl[i].fd >= 0 && !c->cl[i].eof)
			p[n++] = (struct pollfd){ .fd = c->cl[i].fd, .events = POLLIN };
	return n;
}

static void
drop(struct control_client *k)
{
	close(k->fd);
	free(k->buf);
	k->fd = -1;
	k->eof = 0;
	k->skip = 0;
	k->buf = NULL;
	k->len = k->cap = 0;
}

/* Who may attach: this process's user and root, whatever the socket file's
 * mode has become (the 0600 of control_listen is the first gate; a chmod, or
 * a file system that ignores socket modes, must not open the master VM to
 * other users: a client runs any Lua there). Others get one error reply. */
static int
peer_refused(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	char msg[160];
	int known = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && len == sizeof(cr), ml;

	if (known && (cr.uid == geteuid() || cr.uid == 0))
		return 0;
	if (known)
		ml = snprintf(msg, sizeof(msg), "uid %u may not attach: only uid %u (the instance's user) and root may",
			      (unsigned)cr.uid, (unsigned)geteuid());
	else
		ml = snprintf(msg, sizeof(msg), "who is attaching cannot be told (SO_PEERCRED): refused");
	control_frame_send(fd, 'e', msg, (size_t)ml);
	close(fd);
	return 1;
}

static void
accept_all(struct control *c)
{
	int fd;

	while ((fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		int i;

		if (peer_refused(fd))
			continue;
		for (i = 0; i < CONTROL_MAX_CLIENTS && c->cl[i].fd >= 0; i++)
			;
		if (i == CONTROL_MAX_CLIENTS) {
			control_frame_send(fd, 'e', "too many clients attached", 25);
			close(fd);
			continue;
		}
		c->cl[i].fd = fd;
		c->cl[i].id = ++c->next_id;
	}
}

/* Reads what is there; 0 = keep the client, -1 = it left. */
static int
fill(struct control_client *k)
{
	for (;;) {
		ssize_t r;

		if (k->cap - k->len < 4096) {
			/* room for the largest frame and its header, no more */
			size_t cap = MIN_SIZE(k->cap ? k->cap * 2 : 8192, CONTROL_MAX_FRAME + 2 * HEADER_MAX);
			char *b;

			if (cap > k->cap) {
				if ((b = realloc(k->buf, cap)) == NULL)
					return -1;
				k->buf = b;
				k->cap = cap;
			} else if (k->len == k->cap) {
				return 0;   /* full: it holds a whole frame, or bytes that are none */
			}
		}
		r = read(k->fd, k->buf + k->len, k->cap - k->len);
		if (r > 0) {
			k->len += (size_t)r;
			continue;
		}
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		return -1;
	}
}

static void
consume(struct control_client *k, size_t n)
{
	memmove(k->buf, k->buf + n, k->len - n);
	k->len -= n;
}

/* 1 with a whole frame, 0 for not yet, -1 for bytes that are no frame,
 * -2 for a frame over the limit (its length in *len; its bytes are
 * dropped as they come). */
static int
frame_take(struct control_client *k, char **req, size_t *len)
{
	size_t i, n = 0;

	if (k->skip > 0) {
		n = MIN_SIZE(k->skip, k->len);
		consume(k, n);
		k->skip -= n;
		if (k->skip > 0)
			return 0;
		n = 0;
	}

	for (i = 0; i < k->len && i < HEADER_MAX; i++) {
		char ch = k->buf[i];

		if (ch == '\n')
			break;
		if (ch < '0' || ch > '9')
			return -1;
		n = n * 10 + (size_t)(ch - '0');
	}
	if (i == k->len)
		return 0;
	if (i == 0 || i == HEADER_MAX || n == 0)
		return -1;
	if (n > CONTROL_MAX_FRAME) {
		consume(k, i + 1);
		k->skip = n;
		*len = n;
		return -2;
	}
	if (k->len < i + 1 + n)
		return 0;
	if ((*req = malloc(n + 1)) == NULL)
		return -1;
	memcpy(*req, k->buf + i + 1, n);
	(*req)[n] = '\0';
	*len = n;
	consume(k, i + 1 + n);
	return 1;
}

int
control_next(struct control *c, const struct pollfd *p, int n, int *client, char **req, size_t *len)
{
	static const char bad[] = "not a surge request (expected LENGTH, a newline, then LENGTH bytes)";
	int news = 0, found = 0;

	for (int j = 0; j < n; j++) {
		if (p[j].revents == 0)
			continue;
		if (p[j].fd == c->lfd) {
			news = 1;
			continue;
		}
		for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
			if (c->cl[i].fd == p[j].fd && !c->cl[i].eof && fill(&c->cl[i]) != 0)
				c->cl[i].eof = 1;   /* gone: its whole requests are still served */
	}
	/* one request per call: the master evaluates it before reading more */
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct control_client *k = &c->cl[i];
		int rc;

		if (k->fd < 0)
			continue;
		if (found) {
			if (k->eof && k->len == 0 && k->skip == 0)
				drop(k);   /* gone with nothing left to serve: its slot is free */
			continue;
		}
		rc = frame_take(k, req, len);
		if (rc == 1) {
			*client = k->id;
			found = 1;
			continue;
		}
		if (rc == -2) {
			char msg[160];
			int ml = snprintf(msg, sizeof(msg), "the request is %zu bytes, more than the %u bytes "
					  "a request may have: not evaluated", *len, CONTROL_MAX_FRAME);

			if (control_frame_send(k->fd, 'e', msg, (size_t)ml) != 0)
				drop(k);
			i--;   /* what follows it may already be here */
		} else if (rc < 0) {
			control_frame_send(k->fd, 'e', bad, sizeof(bad) - 1);
			drop(k);
		} else if (k->eof) {
			drop(k);
		}
	}
	/* new clients are counted after those that left gave their slots
	 * back: accepting first refused a client that came as another went
	 * ("too many clients attached" with a slot about to be free) */
	if (news)
		accept_all(c);
	return found;
}

int
control_frame_send(int fd, char status, const char *text, size_t len)
{
	char head[HEADER_MAX + 2];
	int hl = snprintf(head, sizeof(head), "%zu\n%c", len + 1, status);
	struct iovec_like { const char *p; size_t n; } parts[2] = { { head, (size_t)hl }, { text, len } };

	for (int k = 0; k < 2; k++) {
		const char *p = parts[k].p;
		size_t left = parts[k].n;
		int waits = 0;

		while (left > 0) {
			ssize_t w = send(fd, p, left, MSG_NOSIGNAL);

			if (w > 0) {
				p += w;
				left -= (size_t)w;
			} else if (w < 0 && (errno == EAGAIN || errno == EINTR) && waits++ < 100) {
				struct pollfd pf = { .fd = fd, .events = POLLOUT };

				poll(&pf, 1, 10);   /* at most ~1 s for a client that does not read */
			} else {
				return -1;
			}
		}
	}
	return 0;
}

int
control_fd(const struct control *c, int client)
{
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (c->cl[i].fd >= 0 && c->cl[i].id == client)
			return c->cl[i].fd;
	return -1;
}

void
control_reply(struct control *c, int client, char status, const char *text, size_t len)
{
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (c->cl[i].fd >= 0 && c->cl[i].id == client) {
			char msg[200];

			/* a client could not take it (control_frame_recv): say why instead */
			if (len + 1 > CONTROL_MAX_FRAME) {
				int ml = snprintf(msg, sizeof(msg), "the reply is %zu bytes, more than the %u bytes a "
						  "reply may have: return less (or write it to a file)", len + 1,
						  CONTROL_MAX_FRAME);

				status = 'e';
				text = msg;
				len = (size_t)ml;
			}
			if (control_frame_send(c->cl[i].fd, status, text, len) != 0)
				drop(&c->cl[i]);
			return;
		}
}

char *
control_frame_recv(int fd, size_t *len)
{
	char head[HEADER_MAX + 1];
	size_t n = 0, got = 0;
	char *buf;
	int i;

	for (i = 0; i < HEADER_MAX; i++) {
		if (read(fd, &head[i], 1) != 1)
			return NULL;
		if (head[i] == '\n')
			break;
		if (head[i] < '0' || head[i] > '9')
			return NULL;
		n = n * 10 + (size_t)(head[i] - '0');
	}
	if (i == 0 || i == HEADER_MAX || n == 0 || n > CONTROL_MAX_FRAME || (buf = malloc(n + 1)) == NULL)
		return NULL;
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			free(buf);
			return NULL;
		}
		got += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

void
control_close(struct control *c)
{
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (c->cl[i].fd >= 0)
			drop(&c->cl[i]);
	if (c->lfd >= 0) {
		close(c->lfd);
		unlink(c->path);
		c->lfd = -1;
	}
}
