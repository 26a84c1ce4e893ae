/* SPDX-License-Identifier: BSD-3-Clause
 *
 * front.h - the front end, linked into the executable and not into the
 * core: the command line (cli.c), signals (signals.c), the prompt's
 * plumbing: the control socket (socket.c), the terminal and the Lua module
 * that serves both (repl.c), the client (attach.c). Not part of the FFI
 * ABI: the master VM reaches it through the Lua C API module
 * "surge.replio".
 *
 * Wire format, both ways: ASCII decimal LENGTH, '\n', then LENGTH bytes.
 * A request's first byte says what it is: 'e' evaluate a line (lines that
 * leave a statement unfinished are kept until it is complete), 'c' complete
 * a word. A reply's first byte is the status: 'o' done, 'm' more input
 * needed, 'e' error; the rest is the text to print.
 */
#ifndef SURGE_FRONT_H
#define SURGE_FRONT_H

#include <poll.h>
#include <stddef.h>

#include "cli.h"
#include "run.h"

#define CONTROL_MAX_CLIENTS 16
#define CONTROL_MAX_FRAME (1u << 20)   /* one request or reply: 1 MiB */

struct control_client {
	int fd;             /* -1 = free slot */
	int id;             /* connection number, never reused */
	int eof;            /* the client closed its side */
	char *buf;          /* bytes received, not yet a whole request */
	size_t len, cap;
	size_t skip;        /* bytes still to come of a request over the limit */
};

struct control {
	int lfd;            /* listening socket, -1 = none */
	int next_id;
	char path[108];
	struct control_client cl[CONTROL_MAX_CLIENTS];
};

/* socket.c */
void control_init(struct control *c);
/* Binds PATH (mode 0600); refuses a path where a live server answers. */
int control_listen(struct control *c, const char *path, char *err, size_t errlen);
/* 0 when control_listen may take PATH (nothing there, or a socket nobody
 * answers on); main() asks before EAL starts */
int control_check(const char *path, char *err, size_t errlen);
/* Adds the listening socket and the clients to p; returns how many. */
int control_pollfds(const struct control *c, struct pollfd *p, int max);
/* Accepts and reads what poll reported; returns 1 with a whole request
 * (malloc'd, caller frees) and its client id, or 0. */
int control_next(struct control *c, const struct pollfd *p, int n, int *client, char **req, size_t *len);
/* The socket of client id, -1 when it is gone (the prompt watches it
 * while the client's request runs). */
int control_fd(const struct control *c, int client);
/* Sends a reply; a client gone or not reading is dropped. */
void control_reply(struct control *c, int client, char status, const char *text, size_t len);
void control_close(struct control *c);
int control_frame_send(int fd, char status, const char *text, size_t len);
/* Reads one frame from a blocking fd; returns its malloc'd payload or NULL. */
char *control_frame_recv(int fd, size_t *len);

/* attach.c: `surge attach PATH [-e CODE]`, no EAL; returns the exit code */
int attach_main(const char *path, const char *code);

/*
 * repl.c: a Ctrl-D typed while no editor reads the terminal (a command
 * runs) is kept for the editor. In canonical mode the line discipline takes
 * VEOF as "end of file" and stores it as a NUL byte, which the editor later
 * reads as Ctrl-@: the Ctrl-D was lost and the session never ended. While
 * held, VEOF is off, so the 0x04 byte waits in the input queue as type-ahead
 * and the editor sees it (Ctrl-D on an empty line leaves, as in a shell).
 * hold saves the settings in *saved and returns 1 when it changed them;
 * release puts them back (before the editor reads them again).
 */
struct termios;
int tty_hold_eof(int fd, struct termios *saved);
void tty_release_eof(int fd, const struct termios *saved);

/* signals.c: SIGINT, SIGTERM, SIGHUP take the one stop path */
void signals_install(void);
void prepass_watchdog_arm(void);
void prepass_watchdog_disarm(void);

/* repl.c: the prompt's terminal and the control socket, as a Lua module
 * for the master VM (the run hooks front registers) */
extern const struct run_hooks repl_hooks;

#endif
