/* SPDX-License-Identifier: BSD-3-Clause
 *
 * repl.c - the terminal and the control socket, served between polls.
 *
 * The prompt runs in the master VM (lua/surge/repl.lua); this file gives it
 * one call, read(prompt, ms), that waits at most `ms` for the next thing to
 * do: a line typed at the terminal, a request from an attached client, a
 * Ctrl-C, or nothing (so the caller can reap tasks and print what they
 * reported). libedit is driven through its callback interface, one
 * character at a time when poll() says one is there, so the master never
 * blocks inside the editor and typed code never runs anywhere but here.
 * Without a terminal, stdin is read as plain lines and nothing is echoed.
 *
 * Code typed at the prompt or sent by a client runs with a count hook
 * (eval_hook) that ends it when a Ctrl-C came, when the run stopped
 * (SIGTERM, SIGHUP, --duration, surge.stop()) or when the client that sent
 * it left: the one way typed code is interrupted, so a loop typed anywhere
 * never outlives the run or wedges the instance.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <editline/readline.h>
#include <lauxlib.h>
#include <lua.h>

#include "front.h"

/* The longest line the prompt takes (bytes), as long as a control request may
 * be: a longer one is refused whole with one error line, never cut. */
#define LINE_MAX_BYTES CONTROL_MAX_FRAME
/* libedit (3.1-20221030 and others) writes rl_line_buffer[rl_end] = '\0'
 * after every key through a pointer it set once, in rl_initialize, to a
 * buffer of 1 KiB that it reallocates (and so frees) as the line grows: a
 * line of a few thousand characters wrote past the heap block (malloc():
 * invalid next size). rl_line_buffer points at this reservation instead,
 * address space only until written, far larger than a line can get between
 * two looks at its length (LINE_MAX_BYTES, checked after every key). */
#define LINEBUF_RESERVE ((size_t)64 << 20)
#define INBUF_START 65536
/* A key sequence no terminal sends, bound to libedit's ed-redisplay: after
 * a paste went into the line at once, key_getc gives it to libedit, which
 * then draws the whole line (insert_pasted). */
#define REDRAW_BIND "bind ^[[9999~ ed-redisplay"
#define REDRAW_KEYS "\033[9999~"
#define HISTORY_MAX_BYTES (16 << 20) /* a larger ~/.surge_history is not read (history_usable) */
#define HISTORY_LINE_MAX 4096  /* a longer line is not kept in the history */
#define PEND_BYTES 65536       /* keys read ahead at once: a pasted line comes in chunks this big */
#define PASTE_WAIT_MS 5        /* a pause in a paste longer than this ends it */
#define PASTE_MIN 16           /* plain bytes at once that make a paste, not typing */
#define EVAL_HOOK_COUNT 1000   /* instructions between two looks of eval_hook */
#define CLIENT_CHECK_MS 50     /* how often eval_hook asks whether the client left */

struct repl_state {
	struct control ctl;
	lua_State *L;                 /* the master VM, for completion */
	int completer;                /* registry ref of the Lua completer, LUA_NOREF = none */
	int started;                  /* a prompt session is open */
	int tty;                      /* stdin and stdout are a terminal: libedit */
	int editing;                  /* libedit shows the prompt and takes keys */
	int touched;                  /* a key came since the prompt was shown */
	volatile sig_atomic_t evaluating; /* typed code is running in the master VM */
	volatile sig_atomic_t eval_intr;  /* Ctrl-C arrived while it ran */
	volatile sig_atomic_t intr;   /* Ctrl-C arrived at the prompt */
	int eval_fd;                  /* the client whose request runs, -1 = the terminal's */
	uint64_t eval_checked_ms;     /* when eval_hook last looked at that client */
	const char *eval_why;         /* why eval_hook ended the code, NULL = it did not */
	uint64_t eval_why_ms;         /* when it first said so */
	struct sigaction old_int;
	char *line;                   /* a finished line from libedit */
	int line_state;               /* 0 none, 1 line, 2 end of input */
	int eof_held;                 /* VEOF is off while no editor reads (tty_hold_eof) */
	struct termios cooked;        /* the terminal's settings before that */
	char *history;                /* history file, NULL = none */
	int discard;                  /* a line over LINE_MAX_BYTES: skip to its newline */
	unsigned char pend[PEND_BYTES]; /* keys read ahead (a paste), not yet given to libedit */
	char paste[3 * PEND_BYTES + 1]; /* a run of pend as it goes into the line (insert_pasted) */
	size_t pendlen, pendoff;
	size_t inserted;              /* bytes put in the line since libedit last set rl_end */
	int bulk;                     /* pasted text may go in whole (REDRAW_KEYS is bound) */
	const char *redraw;           /* REDRAW_KEYS left to give libedit, NULL = none */
	char *inbuf;                  /* not a terminal: bytes up to the next newline */
	size_t inlen, incap;
	int in_eof;
	char **cands;                 /* completion candidates of the current Tab */
	int ncands, cand_next;
};

static struct repl_state *
state(void)
{
	struct runtime *r = rt();

	if (r->repl == NULL) {
		r->repl = calloc(1, sizeof(*r->repl));
		if (r->repl != NULL) {
			control_init(&r->repl->ctl);
			r->repl->completer = LUA_NOREF;
			r->repl->eval_fd = -1;
		}
	}
	return r->repl;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
tty_hold_eof(int fd, struct termios *saved)
{
	struct termios t;

	if (tcgetattr(fd, saved) != 0 || !(saved->c_lflag & ICANON))
		return 0;
	t = *saved;
	t.c_cc[VEOF] = _POSIX_VDISABLE;
	return tcsetattr(fd, TCSANOW, &t) == 0;   /* TCSANOW: what is typed stays */
}

void
tty_release_eof(int fd, const struct termios *saved)
{
	tcsetattr(fd, TCSANOW, saved);
}

/* The editor stopped reading the terminal (a line came, Ctrl-C, watch()):
 * from now until it reads again, a Ctrl-D is kept as a key for it. */
static void
hold_eof(struct repl_state *s)
{
	if (s->tty && s->started && !s->eof_held)
		s->eof_held = tty_hold_eof(STDIN_FILENO, &s->cooked);
}

static void
release_eof(struct repl_state *s)
{
	if (s->eof_held) {
		tty_release_eof(STDIN_FILENO, &s->cooked);
		s->eof_held = 0;
	}
}

/* The client of the running request is gone (it was killed, or detached):
 * asked at most every CLIENT_CHECK_MS, a poll() being a syscall. Gone is a
 * hang-up (POLLHUP: the client's socket closed), not a half-close: a client
 * that shut down only its sending side (POLLRDHUP, `shutdown(SHUT_WR)` after
 * its last request) still reads the reply, and its command runs to the end. */
static int
client_left(struct repl_state *s)
{
	struct pollfd p = { .fd = s->eval_fd, .events = 0 };
	uint64_t now;

	if (s->eval_fd < 0 || (now = now_ms()) - s->eval_checked_ms < CLIENT_CHECK_MS)
		return 0;
	s->eval_checked_ms = now;
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)) != 0;
}

/* Every EVAL_HOOK_COUNT instructions of interpreted code while typed code
 * runs (compiled code calls no hooks: typed code runs interpreted). The
 * reason stays until the evaluation ends, so code that catches the error
 * with pcall and loops on is ended again. A run stop is acted on when calls
 * into surge would raise "run stopped" (run/monitor.c), giving a typed
 * `while surge.running()` loop the same time to end by itself. */
static void
eval_hook(lua_State *L, lua_Debug *ar)
{
	struct repl_state *s = rt()->repl;

	(void)ar;
	if (s == NULL || !s->evaluating)
		return;
	if (s->eval_why == NULL) {
		if (s->eval_intr)
			s->eval_why = "interrupted (Ctrl-C)";
		else if (!surge_running() && surge_run_check() != 0)
			s->eval_why = "interrupted (the run stopped)";
		else if (client_left(s))
			s->eval_why = "interrupted (the client left)";
	}
	if (s->eval_why != NULL) {
		uint64_t now = now_ms();
		double grace = rt_stop_grace();

		/* code that catches the interrupt and goes on holds the prompt and
		 * every client for ever: after the grace period the run stops, and
		 * the watchdog ends what still runs then (exit 3) */
		if (s->eval_why_ms == 0)
			s->eval_why_ms = now;
		else if (surge_running() && now - s->eval_why_ms > (uint64_t)(grace * 1000)) {
			fprintf(stderr, "surge: error: the command goes on %.1f s after it was %s (a pcall "
				"around its loop?): stopping the run\n", (double)(now - s->eval_why_ms) / 1000,
				s->eval_why);
			surge_stop();
		}
		lua_pushstring(L, s->eval_why);   /* no position: where a loop was is no news */
		lua_error(L);
	}
}

/* The watchdog's: the process ends without repl_free, the socket must not
 * stay behind (a later --control on the path would find a dead socket). */
static void
repl_forget_socket(void)
{
	const struct runtime *r = rt();

	if (r == NULL || r->repl == NULL)
		return;
	if (r->repl->ctl.lfd >= 0)
		unlink(r->repl->ctl.path);
	if (r->repl->eof_held)   /* the shell gets its Ctrl-D back */
		tcsetattr(STDIN_FILENO, TCSANOW, &r->repl->cooked);
}

static int
repl_evaluating(void)
{
	const struct runtime *r = rt();

	if (r == NULL || r->repl == NULL || !r->repl->evaluating)
		return 0;
	return r->repl->eval_why != NULL ? 2 : 1;
}

static void
on_intr(int sig)
{
	struct runtime *r = rt();

	(void)sig;
	if (r == NULL || r->repl == NULL)
		return;
	/* a flag is all a signal handler sets: eval_hook acts on it */
	if (r->repl->evaluating)
		r->repl->eval_intr = 1;
	else
		r->repl->intr = 1;
}

/* One line at the prompt says a line was too long; nothing of it runs. */
static void
refuse_line(void)
{
	printf("error: the line is longer than the %u bytes a line may have: not run\n", LINE_MAX_BYTES);
	fflush(stdout);
}

/* rl_line_buffer's reservation (LINEBUF_RESERVE), kept for the process:
 * libedit holds on to the pointer. */
static char *linebuf;

static int
own_line_buffer(void)
{
	if (linebuf == NULL) {
		void *m = mmap(NULL, LINEBUF_RESERVE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (m == MAP_FAILED)
			return -1;
		linebuf = m;
	}
	rl_line_buffer = linebuf;
	return 0;
}

static void
on_line(char *line)
{
	struct repl_state *s = rt()->repl;

	free(s->line);
	if (line != NULL && strlen(line) > LINE_MAX_BYTES) {
		refuse_line();
		free(line);
		line = NULL;
		s->line = NULL;
		s->line_state = 0;
		s->editing = 0;
		rl_callback_handler_remove();
		return;
	}
	s->line = line;
	s->line_state = line != NULL ? 1 : 2;
	s->editing = 0;
	rl_callback_handler_remove();   /* (libedit puts the terminal back in cooked mode) */
	hold_eof(s);                    /* the line runs now: a Ctrl-D typed meanwhile is kept */
}

/* libedit's key reader: one character (UTF-8 decoded) from the terminal,
 * noting that the line was touched, which Ctrl-C needs to know (libedit's
 * rl_end is not kept up to date in callback mode). */
static int
key_byte(struct repl_state *s, FILE *f, unsigned char *b)
{
	if (s->pendoff < s->pendlen) {
		*b = s->pend[s->pendoff++];
		return 1;
	}
	return read(fileno(f), b, 1) == 1;
}

/* The next key byte without taking it: it stays for the next key_byte (a
 * UTF-8 sequence cut short must not swallow the key after it). */
static int
key_peek(struct repl_state *s, FILE *f, unsigned char *b)
{
	if (s->pendoff == s->pendlen) {
		if (read(fileno(f), s->pend, 1) != 1)
			return 0;
		s->pendoff = 0;
		s->pendlen = 1;
	}
	*b = s->pend[s->pendoff];
	return 1;
}

/* The length of the well-formed UTF-8 sequence at p (n bytes there), 0 if
 * it is not one or is cut short: no overlong form, no surrogate, at most
 * U+10FFFF (RFC 3629). */
static size_t
utf8_seq(const unsigned char *p, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, lo = p[0] == 0xe0 ? 0xa0 : 0x80, hi = p[0] == 0xed ? 0x9f : 0xbf;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, lo = p[0] == 0xf0 ? 0x90 : 0x80, hi = p[0] == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t k = 2; k < len; k++)
		if ((p[k] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* Whether p (n bytes) is the start of a well-formed UTF-8 sequence that the
 * read cut short: its end is still to come. */
static int
utf8_cut(const unsigned char *p, size_t n)
{
	unsigned char seq[4] = { 0x80, 0x80, 0x80, 0x80 };
	size_t len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;

	if (n >= len)
		return 0;
	memcpy(seq, p, n);   /* the missing bytes as continuations: valid so far? */
	if (p[0] == 0xe0 && n == 1)
		seq[1] = 0xa0;
	if (p[0] == 0xf0 && n == 1)
		seq[1] = 0x90;
	return utf8_seq(seq, len) == len;
}

static int
key_getc(FILE *f)
{
	struct repl_state *s = rt()->repl;
	unsigned char b, seq[4];
	size_t len, n = 1;

	if (s->redraw != NULL) {
		int c = (unsigned char)*s->redraw++;

		if (*s->redraw == '\0')
			s->redraw = NULL;
		return c;
	}
	if (!key_byte(s, f, &b))
		return -1;
	s->touched = 1;
	if (b < 0x80)
		return b;
	/* a character past ASCII: its bytes as UTF-8 decodes them, checked as
	 * they come; a byte that cannot start or continue one is U+FFFD, and
	 * the byte that cut a sequence short stays a key of its own (the lead
	 * byte 0xff took the three keys after it) */
	seq[0] = b;
	len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
	while (n < len && key_peek(s, f, &b) && (b & 0xc0) == 0x80) {
		seq[n++] = b;
		s->pendoff++;
	}
	if (utf8_seq(seq, n) != n || n < 2)
		return 0xfffd;
	if (n == 2)
		return ((seq[0] & 0x1f) << 6) | (seq[1] & 0x3f);
	if (n == 3)
		return ((seq[0] & 0x0f) << 12) | ((seq[1] & 0x3f) << 6) | (seq[2] & 0x3f);
	return ((seq[0] & 0x07) << 18) | ((seq[1] & 0x3f) << 12) | ((seq[2] & 0x3f) << 6) | (seq[3] & 0x3f);
}

/* A line grown past LINE_MAX_BYTES is refused there and then, and what is
 * left of it (a paste goes on) is skipped to its end. */
static void
check_length(struct repl_state *s)
{
	if (s->editing && (size_t)rl_end + s->inserted > LINE_MAX_BYTES) {
		fputs("\n", stdout);
		refuse_line();
		rl_callback_handler_remove();
		s->editing = 0;
		s->discard = 1;
	}
}

/* Keys waiting at the terminal (within ms), read ahead into pend. */
static int
read_ahead(struct repl_state *s, int ms)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	ssize_t r;

	if (s->pendoff < s->pendlen)
		return 1;
	if (poll(&p, 1, ms) <= 0 || !(p.revents & POLLIN))
		return 0;
	r = read(STDIN_FILENO, s->pend, sizeof(s->pend));
	if (r <= 0)
		return 0;   /* end of input: libedit's own read sees it next */
	s->pendoff = 0;
	s->pendlen = (size_t)r;
	return 1;
}

/*
 * A paste: libedit (3.1-20221030) converts the whole line from wide to
 * narrow characters after every key (el_gets, and el_line for rl_end), so a
 * line fed one key at a time cost time quadratic in its length (measured
 * through a pty: 10 000 characters 6.6 s, 65 000 over 5 minutes, nearly all
 * in wcrtomb). Runs of printable ASCII waiting at the terminal (at least
 * PASTE_MIN bytes: typing goes key by key) go into the line at once instead
 * (rl_insert_text), as long as more come within PASTE_WAIT_MS; then
 * REDRAW_KEYS, given to libedit as keys, draws the line once and sets
 * rl_end. Any other byte (Enter, Tab, an escape sequence, UTF-8) goes
 * through libedit's key handling as typed. Returns whether it inserted.
 */
static int
insert_pasted(struct repl_state *s)
{
	int any = 0;

	/* once a paste began, a pause of PASTE_WAIT_MS ends it: a terminal that
	 * hands it over in small pieces costs one drawing, not one a piece */
	while (s->bulk && s->editing && !s->discard && read_ahead(s, any ? PASTE_WAIT_MS : 0)) {
		size_t i = s->pendoff, end = s->pendlen, out = 0;

		/* what a paste holds as text: printable ASCII, tabs (a key of its own
		 * a tab completes; in a paste it is indentation: 10 000 of them each
		 * ran the completer), whole UTF-8 characters (libedit's locale is
		 * UTF-8: start) and, as key_getc reads them, any other byte past
		 * ASCII as U+FFFD, in one insert; a character the read cut goes
		 * through key_getc, which waits for its end */
		while (i < end) {
			unsigned char c = s->pend[i];
			size_t l = (c >= 0x20 && c < 0x7f) || c == '\t' ? 1 : c >= 0x80 ? utf8_seq(s->pend + i, end - i) : 0;

			if (l == 0 && c >= 0x80 && utf8_cut(s->pend + i, end - i))
				break;
			if (l == 0 && c < 0x80)
				break;
			if (l == 0) {
				memcpy(s->paste + out, "\xef\xbf\xbd", 3);
				out += 3;
				i++;
				continue;
			}
			memcpy(s->paste + out, s->pend + i, l);
			out += l;
			i += l;
		}
		if (i == s->pendoff || (!any && i - s->pendoff < PASTE_MIN))
			break;   /* a key typed, or no plain character: libedit's */
		s->paste[out] = '\0';
		rl_insert_text(s->paste);
		s->inserted += out;
		s->pendoff = i;
		s->touched = 1;
		any = 1;
		check_length(s);
		if (s->pendoff < s->pendlen)
			break;   /* a key that is not plain text follows: draw, then it */
	}
	return any;
}

/* One key to libedit (or a pasted run of them). */
static void
feed_editor(struct repl_state *s)
{
	if (insert_pasted(s)) {
		if (!s->editing)
			return;   /* refused: too long */
		s->redraw = REDRAW_KEYS;   /* the next call draws the line */
	}
	/* after the insert: growing the line, it pointed rl_line_buffer at a
	 * conversion buffer of libedit's that the next key reallocates */
	own_line_buffer();
	rl_callback_read_char();
	s->inserted = 0;      /* rl_end counts it now */
	check_length(s);
}

/* Skipping the rest of a refused line: the keys up to its Enter, those read
 * ahead first. */
static void
skip_keys(struct repl_state *s)
{
	unsigned char buf[4096];
	ssize_t r;

	if (s->pendoff < s->pendlen) {
		while (s->pendoff < s->pendlen) {
			unsigned char c = s->pend[s->pendoff++];

			if (c == '\r' || c == '\n') {
				s->discard = 0;
				return;
			}
		}
		return;   /* the rest when the terminal has more */
	}
	r = read(STDIN_FILENO, buf, sizeof(buf));
	if (r == 0)
		s->discard = 0;   /* the terminal closed: libedit says end of input */
	for (ssize_t i = 0; i < r; i++) {
		if (buf[i] == '\r' || buf[i] == '\n') {
			memcpy(s->pend, buf + i + 1, (size_t)(r - i - 1));
			s->pendlen = (size_t)(r - i - 1);
			s->pendoff = 0;
			s->discard = 0;
			return;
		}
	}
}

/* ---- completion: libedit asks, the Lua completer answers ---------------- */

static void
free_cands(struct repl_state *s)
{
	for (int i = s->cand_next; i < s->ncands; i++)
		free(s->cands[i]);
	free(s->cands);
	s->cands = NULL;
	s->ncands = s->cand_next = 0;
}

static char *
next_cand(const char *text, int st)
{
	struct repl_state *s = rt()->repl;

	if (st == 0) {
		lua_State *L = s->L;

		free_cands(s);
		lua_rawgeti(L, LUA_REGISTRYINDEX, s->completer);
		lua_pushstring(L, text);
		if (lua_pcall(L, 1, 1, 0) == 0 && lua_istable(L, -1)) {
			int n = (int)lua_objlen(L, -1);

			s->cands = calloc((size_t)n + 1, sizeof(char *));
			for (int i = 1; s->cands != NULL && i <= n; i++) {
				lua_rawgeti(L, -1, i);
				if (lua_isstring(L, -1))
					s->cands[s->ncands++] = strdup(lua_tostring(L, -1));
				lua_pop(L, 1);
			}
		}
		lua_pop(L, 1);
	}
	if (s->cand_next >= s->ncands)
		return NULL;
	return s->cands[s->cand_next++];   /* libedit frees it */
}

static char **
complete(const char *text, int start, int end)
{
	(void)start;
	(void)end;
	rl_attempted_completion_over = 1;   /* never fall back to file names */
	if (rt()->repl->completer == LUA_NOREF)
		return NULL;
	return rl_completion_matches(text, next_cand);
}

/* ---- the Lua module ------------------------------------------------------ */

static int
l_options(lua_State *L)
{
	const struct surge_opts *o = &rt()->opts;

	lua_createtable(L, 0, 3);
	lua_pushboolean(L, o->interactive);
	lua_setfield(L, -2, "interactive");
	if (o->control != NULL) {
		lua_pushstring(L, o->control);
		lua_setfield(L, -2, "control");
	}
	lua_pushboolean(L, o->cmd == CMD_REPL);
	lua_setfield(L, -2, "repl");
	return 1;
}

/* The history file is read only when it is a regular file of at most
 * HISTORY_MAX_BYTES (or not there yet): libedit reads whatever the path
 * names to its end, and ~/.surge_history -> /dev/full or /dev/zero never
 * ends. One that is not taken is not written either (that would replace it). */
static int
history_usable(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return errno == ENOENT;
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "surge: warning: %s is not a regular file: the history is neither read nor saved\n",
			path);
		return 0;
	}
	if (st.st_size > HISTORY_MAX_BYTES) {
		fprintf(stderr, "surge: warning: %s is over %d MiB: the history is neither read nor saved\n", path,
			HISTORY_MAX_BYTES >> 20);
		return 0;
	}
	return 1;
}

/* start([history_path]) -> is_tty: opens the prompt session. */
static int
l_start(lua_State *L)
{
	struct repl_state *s = state();
	const char *hist = luaL_optstring(L, 1, NULL);
	struct sigaction sa;

	if (s == NULL)
		return luaL_error(L, "out of memory for the prompt");
	if (s->started)
		return luaL_error(L, "a prompt is already open");
	s->L = L;
	s->started = 1;
	s->tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	rt()->interactive = 1;
	rt()->at_prompt = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_intr;    /* no SA_RESTART: poll() wakes up */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &s->old_int);
	if (s->tty) {
		/* key_getc decodes keys as UTF-8 and libedit encodes its wide
		 * characters back in the thread's locale: in the C locale surge runs
		 * in, every character past ASCII was dropped from the line (`é`
		 * typed or pasted: an empty string). This thread's LC_CTYPE only. */
		locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);

		if (utf8 == (locale_t)0)
			utf8 = newlocale(LC_CTYPE_MASK, "", (locale_t)0);
		if (utf8 != (locale_t)0)
			uselocale(utf8);
		rl_readline_name = "surge";
		rl_catch_signals = 0;        /* Ctrl-C is ours: it cancels the line */
		rl_getc_function = key_getc;
		rl_attempted_completion_function = complete;
		rl_basic_word_break_characters = " \t\n\"'`@$><=;|&{(,+-*/%^#[]~";
		rl_completion_append_character = '\0';
		rl_initialize();
		/* (libedit keeps the tty's keys; a ~/.editrc may bind others) */
		s->bulk = rl_parse_and_bind(REDRAW_BIND) == 0;
		if (own_line_buffer() != 0)
			return luaL_error(L, "out of memory for the prompt");
		using_history();
		stifle_history(1000);
		if (hist != NULL && history_usable(hist) && (s->history = strdup(hist)) != NULL)
			read_history(s->history);
	}
	lua_pushboolean(L, s->tty);
	return 1;
}

static void
stop_editing(struct repl_state *s)
{
	if (s->editing) {
		rl_callback_handler_remove();
		s->editing = 0;
		hold_eof(s);
	}
}

static int
l_stop(lua_State *L)
{
	struct repl_state *s = rt()->repl;

	(void)L;
	if (s == NULL || !s->started)
		return 0;
	if (s->editing)
		fputs("\n", stdout);   /* leaving mid-line (SIGTERM, --duration): end it */
	stop_editing(s);
	release_eof(s);
	if (s->tty && s->history != NULL)
		write_history(s->history);
	sigaction(SIGINT, &s->old_int, NULL);
	s->started = 0;
	rt()->at_prompt = 0;
	return 0;
}

static int
l_set_completer(lua_State *L)
{
	struct repl_state *s = state();

	luaL_checktype(L, 1, LUA_TFUNCTION);
	if (s == NULL)
		return luaL_error(L, "out of memory for the prompt");
	luaL_unref(L, LUA_REGISTRYINDEX, s->completer);
	lua_pushvalue(L, 1);
	s->completer = luaL_ref(L, LUA_REGISTRYINDEX);
	return 0;
}

static int
l_listen(lua_State *L)
{
	struct repl_state *s = state();
	char err[256];

	if (s == NULL)
		return luaL_error(L, "out of memory for the control socket");
	if (control_listen(&s->ctl, luaL_checkstring(L, 1), err, sizeof(err)) != 0) {
		lua_pushnil(L);
		lua_pushstring(L, err);
		return 2;
	}
	lua_pushboolean(L, 1);
	return 1;
}

static int
l_reply(lua_State *L)
{
	struct repl_state *s = rt()->repl;
	size_t len;
	const char *st = luaL_checkstring(L, 2), *text = luaL_checklstring(L, 3, &len);

	if (s != NULL)
		control_reply(&s->ctl, (int)luaL_checkinteger(L, 1), st[0], text, len);
	return 0;
}

static int
l_history_add(lua_State *L)
{
	struct repl_state *s = rt()->repl;
	size_t len;
	const char *line = luaL_checklstring(L, 1, &len);

	/* a pasted line of a megabyte is not kept: 1000 lines (stifle_history)
	 * of at most this, escaped by libedit (up to 4 bytes a byte), stay
	 * under HISTORY_MAX_BYTES, so the file is read again next time */
	if (s != NULL && s->tty && len <= HISTORY_LINE_MAX)
		add_history(line);
	return 0;
}

/* Prints text while the prompt may be on screen, then draws it again. */
static int
l_notify(lua_State *L)
{
	struct repl_state *s = rt()->repl;
	const char *text = luaL_checkstring(L, 1);

	if (s != NULL && s->editing) {
		fputs("\r\033[K", stdout);
		fputs(text, stdout);
		fflush(stdout);
		rl_forced_update_display();
	} else {
		fputs(text, stdout);
		fflush(stdout);
	}
	return 0;
}

/*
 * evaluating(true [, client]): typed code (of that client, or the
 * terminal's) starts running; eval_hook watches it from now on.
 * evaluating(false) -> why | nil: it ended; why it was interrupted, if it was.
 */
static int
l_evaluating(lua_State *L)
{
	struct repl_state *s = state();

	if (s == NULL)
		return luaL_error(L, "out of memory for the prompt");
	if (lua_toboolean(L, 1)) {
		s->L = L;
		s->eval_why = NULL;
		s->eval_why_ms = 0;
		s->eval_intr = 0;
		s->eval_fd = lua_isnoneornil(L, 2) ? -1 : control_fd(&s->ctl, (int)luaL_checkinteger(L, 2));
		s->eval_checked_ms = 0;
		lua_sethook(L, eval_hook, LUA_MASKCOUNT, EVAL_HOOK_COUNT);
		s->evaluating = 1;
		return 0;
	}
	s->evaluating = 0;
	lua_sethook(L, NULL, 0, 0);
	s->eval_fd = -1;
	if (s->eval_why == NULL)
		return 0;
	lua_pushstring(L, s->eval_why);
	s->eval_why = NULL;
	return 1;
}

static int
l_quiet(lua_State *L)
{
	rt()->at_prompt = lua_toboolean(L, 1);
	return 0;
}

/* key(ms) -> true when a key (or Ctrl-C) came within ms; the key is eaten. */
static int
l_key(lua_State *L)
{
	struct repl_state *s = rt()->repl;
	int ms = (int)luaL_checkinteger(L, 1), hit = 0;
	struct termios old, raw;
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	int tty = s != NULL && s->tty && tcgetattr(STDIN_FILENO, &old) == 0;

	if (s != NULL)
		stop_editing(s);
	if (tty) {
		raw = old;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	if (poll(tty ? &p : NULL, tty ? 1 : 0, ms) > 0 && (p.revents & POLLIN)) {
		char c;

		hit = read(STDIN_FILENO, &c, 1) == 1;
	}
	if (s != NULL && s->intr) {
		s->intr = 0;
		hit = 1;
	}
	if (tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &old);
	lua_pushboolean(L, hit);
	return 1;
}

/* Not a terminal: the next whole line of stdin, if one is buffered. A line
 * longer than LINE_MAX_BYTES is refused (one error line) and skipped to its
 * newline: never cut into lines that would run as other code. */
static int
take_plain_line(struct repl_state *s, lua_State *L)
{
	for (;;) {
		char *nl = s->inlen > 0 ? memchr(s->inbuf, '\n', s->inlen) : NULL;
		size_t n = nl != NULL ? (size_t)(nl - s->inbuf) : s->inlen, drop = nl != NULL ? n + 1 : n;

		if (nl == NULL && !(s->in_eof && s->inlen > 0)) {
			if (s->discard || s->inlen > LINE_MAX_BYTES) {
				if (!s->discard)
					refuse_line();
				s->discard = 1;
				s->inlen = 0;
			}
			return 0;
		}
		if (!s->discard && n <= LINE_MAX_BYTES) {
			lua_pushliteral(L, "line");
			lua_pushlstring(L, s->inbuf, n);
		} else if (!s->discard)
			refuse_line();
		memmove(s->inbuf, s->inbuf + drop, s->inlen - drop);
		s->inlen -= drop;
		if (!s->discard && n <= LINE_MAX_BYTES)
			return 2;
		s->discard = 0;
	}
}

static void
read_plain(struct repl_state *s)
{
	ssize_t r;

	if (s->incap - s->inlen < INBUF_START / 4) {
		size_t cap = s->incap != 0 ? s->incap * 2 : INBUF_START;
		char *b = realloc(s->inbuf, cap);

		if (b == NULL) {
			fputs("surge: error: out of memory for the line read from stdin\n", stderr);
			s->in_eof = 1;
			return;
		}
		s->inbuf = b;
		s->incap = cap;
	}
	r = read(STDIN_FILENO, s->inbuf + s->inlen, s->incap - s->inlen);
	if (r > 0)
		s->inlen += (size_t)r;
	else if (r == 0 || (errno != EINTR && errno != EAGAIN))
		s->in_eof = 1;
}

/*
 * read(prompt|nil, ms): the next event, at most ms from now.
 *   "line", text | "eof" | "intr", had_text | "request", client, text | "timeout"
 * With prompt nil only the control socket is served (surge run --control).
 */
static int
l_read(lua_State *L)
{
	struct repl_state *s = state();
	const char *prompt = luaL_optstring(L, 1, NULL);
	uint64_t until = now_ms() + (uint64_t)luaL_optinteger(L, 2, 100);
	int term = prompt != NULL && s != NULL && s->started;

	if (s == NULL)
		return luaL_error(L, "out of memory for the prompt");
	for (;;) {
		struct pollfd p[CONTROL_MAX_CLIENTS + 2];
		int n = 0, k, client, had;
		char *req = NULL;
		size_t len;
		uint64_t now;

		if (s->intr) {
			s->intr = 0;
			had = s->editing && s->touched;
			if (s->editing) {
				rl_replace_line("", 0);
				fputs("^C\n", stdout);
				fflush(stdout);
				stop_editing(s);
			}
			lua_pushliteral(L, "intr");
			lua_pushboolean(L, had);
			return 2;
		}
		if (s->line_state != 0) {
			int st = s->line_state;

			s->line_state = 0;
			if (st == 2) {
				if (s->tty)
					fputs("\n", stdout);
				lua_pushliteral(L, "eof");
				return 1;
			}
			lua_pushliteral(L, "line");
			lua_pushstring(L, s->line);
			free(s->line);
			s->line = NULL;
			return 2;
		}
		if (term && !s->tty) {
			if ((k = take_plain_line(s, L)) != 0)
				return k;
			if (s->in_eof) {
				lua_pushliteral(L, "eof");
				return 1;
			}
		}
		if (term && s->tty && !s->editing && !s->discard) {
			release_eof(s);   /* libedit takes the settings it finds as the cooked ones */
			rl_callback_handler_install(prompt, on_line);
			s->editing = 1;
			s->touched = 0;
			s->inserted = 0;
		}
		if (term && s->tty && s->discard && s->pendoff < s->pendlen) {
			skip_keys(s);     /* a refused paste's rest, read ahead already */
			continue;
		}
		if (term && s->tty && s->editing && s->pendoff < s->pendlen) {
			feed_editor(s);   /* keys after a skipped line, read already */
			continue;
		}
		if (term)
			p[n++] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
		n += control_pollfds(&s->ctl, p + n, CONTROL_MAX_CLIENTS + 2 - n);
		now = now_ms();
		/* a timeout of 0 still looks: surge.poll() serves clients so */
		k = poll(p, (nfds_t)n, now >= until ? 0 : (int)(until - now));
		if (k < 0 && errno == EINTR)
			continue;
		if (term && k > 0 && p[0].revents != 0) {
			if (s->tty && s->discard)
				skip_keys(s);
			else if (s->tty)
				feed_editor(s);
			else
				read_plain(s);
		}
		/* also without news: a request may wait in a buffer behind another */
		if (k >= 0 && control_next(&s->ctl, p + term, n - term, &client, &req, &len)) {
			lua_pushliteral(L, "request");
			lua_pushinteger(L, client);
			lua_pushlstring(L, req, len);
			free(req);
			return 3;
		}
		if (k == 0 && now_ms() >= until) {
			lua_pushliteral(L, "timeout");
			return 1;
		}
	}
}

static int
l_unlisten(lua_State *L)
{
	(void)L;
	if (rt()->repl != NULL)
		control_close(&rt()->repl->ctl);
	return 0;
}

static int
open_replio(lua_State *L)
{
	static const luaL_Reg fns[] = {
		{ "options", l_options }, { "start", l_start }, { "stop", l_stop },
		{ "set_completer", l_set_completer }, { "listen", l_listen }, { "unlisten", l_unlisten },
		{ "reply", l_reply }, { "history_add", l_history_add }, { "notify", l_notify },
		{ "quiet", l_quiet }, { "key", l_key }, { "read", l_read },
		{ "evaluating", l_evaluating }, { NULL, NULL },
	};

	lua_newtable(L);
	luaL_register(L, NULL, fns);
	return 1;
}

static void
repl_register(lua_State *L)
{
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "preload");
	lua_pushcfunction(L, open_replio);
	lua_setfield(L, -2, "surge.replio");
	lua_pop(L, 2);
}

static void
repl_free(void)
{
	struct repl_state *s = rt()->repl;

	if (s == NULL)
		return;
	if (s->started)
		l_stop(s->L);
	control_close(&s->ctl);
	free_cands(s);
	free(s->line);
	free(s->history);
	free(s->inbuf);
	free(s);
	rt()->repl = NULL;
	rt()->interactive = 0;
}

/* What a run asks of the prompt (run/run.h): its module in master's VM,
 * undoing what a session left, whether typed code runs (for the
 * watchdog's line), the socket to remove when the watchdog ends the run. */
const struct run_hooks repl_hooks = {
	.master_vm_open = repl_register,
	.master_vm_close = repl_free,
	.evaluating = repl_evaluating,
	.watchdog_exit = repl_forget_socket,
};
