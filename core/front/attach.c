/* SPDX-License-Identifier: BSD-3-Clause
 *
 * attach.c - `surge attach PATH [-e CODE]`: the prompt of another surge.
 *
 * A plain client of the control socket (socket.c): no EAL, no VM. Each
 * line goes to the running instance, which evaluates it in its master VM
 * and sends back what to print. With -e, one request and its reply, the exit
 * code saying whether it worked (for shell scripts and CI).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include <editline/readline.h>

#include "front.h"

static int
dial(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "surge: attach %s: path too long\n", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		fprintf(stderr, "surge: attach %s: %s (is a surge running with --control %s?)\n",
			path, strerror(errno), path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Sends kind+text; returns the reply (status in [0]) or NULL when the
 * instance went away. A send that fails still reads: an instance that
 * refuses a client (socket.c, peer_refused) says why and closes, and that
 * reply, not "closed the connection", is what the user must see. */
static char *
ask(int fd, char kind, const char *text, size_t *len)
{
	control_frame_send(fd, kind, text, strlen(text));
	return control_frame_recv(fd, len);
}

static int attach_fd = -1;   /* for the completion callback (this process is only a client) */

static char *
next_cand(const char *text, int st)
{
	static char *list, *pos;   /* the reply of the current Tab */
	char *nl, *out;
	size_t len;

	if (st == 0) {
		free(list);
		list = ask(attach_fd, 'c', text, &len);
		pos = list != NULL && list[0] == 'o' ? list + 1 : NULL;
	}
	if (pos == NULL || *pos == '\0')
		return NULL;
	nl = strchr(pos, '\n');
	out = nl != NULL ? strndup(pos, (size_t)(nl - pos)) : strdup(pos);
	pos = nl != NULL ? nl + 1 : pos + strlen(pos);
	return out;
}

static char **
complete(const char *text, int start, int end)
{
	(void)start;
	(void)end;
	rl_attempted_completion_over = 1;
	return rl_completion_matches(text, next_cand);
}

static int
print_reply(char *r, size_t len)
{
	fwrite(r + 1, 1, len - 1, r[0] == 'e' ? stderr : stdout);
	if (len > 1 && r[len - 1] != '\n')
		fputc('\n', r[0] == 'e' ? stderr : stdout);
	fflush(stdout);
	return r[0] == 'e' ? 1 : 0;
}

/* VEOF is off for the whole interactive session (front.h, tty_hold_eof),
 * not only while a request runs: a Ctrl-D that reached the terminal in
 * cooked mode with VEOF on was taken by the line discipline as end of file
 * and lost, and the gaps between libedit's raw mode and a request (after
 * Enter, after the reply) were such windows. libedit's own Ctrl-D binding
 * (end of file on an empty line) does the leaving. The settings come back
 * when the client leaves: at its return, or at a signal that ends it
 * (Ctrl-C ends the client; libedit restores its modes, then calls this). */
static struct termios session_cooked;
static volatile sig_atomic_t session_held;

static void
session_release(void)
{
	if (session_held) {
		tty_release_eof(STDIN_FILENO, &session_cooked);
		session_held = 0;
	}
}

static void
session_signal(int sig)
{
	session_release();   /* tcsetattr: async-signal-safe */
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
session_hold(void)
{
	static const int ends[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_handler = session_signal };

	session_held = tty_hold_eof(STDIN_FILENO, &session_cooked);
	if (!session_held)
		return;
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		sigaction(ends[i], &sa, NULL);
}

int
attach_main(const char *path, const char *code)
{
	int fd = dial(path), rc = 0, more = 0;
	char hist[4096] = "";
	const char *home = getenv("HOME");
	size_t len;
	char *r, *line;

	if (fd < 0)
		return 1;
	if (code != NULL) {
		if ((r = ask(fd, 'e', code, &len)) == NULL) {
			fprintf(stderr, "surge: attach %s: the instance closed the connection\n", path);
			close(fd);
			return 1;
		}
		if (r[0] == 'm') {
			fprintf(stderr, "surge: attach -e: the code is incomplete (an unfinished statement)\n");
			rc = 1;
		} else {
			rc = print_reply(r, len);
		}
		free(r);
		close(fd);
		return rc;
	}
	attach_fd = fd;
	rl_readline_name = "surge";
	rl_attempted_completion_function = complete;
	rl_basic_word_break_characters = " \t\n\"'`@$><=;|&{(,+-*/%^#[]~";
	rl_completion_append_character = '\0';
	using_history();
	if (home != NULL) {
		snprintf(hist, sizeof(hist), "%s/.surge_history", home);
		read_history(hist);
	}
	session_hold();
	while ((line = readline(more ? "   >> " : "surge> ")) != NULL) {
		if (line[0] != '\0')
			add_history(line);
		r = ask(fd, 'e', line, &len);
		free(line);
		if (r == NULL) {
			fprintf(stderr, "surge: attach %s: the instance closed the connection\n", path);
			rc = 1;
			break;
		}
		more = r[0] == 'm';
		if (!more)
			print_reply(r, len);
		free(r);
	}
	session_release();
	if (hist[0] != '\0')
		write_history(hist);
	close(fd);
	return rc;
}
