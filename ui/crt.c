/* crt.c - curses set-up and teardown, palette, keys, terminal rescue.
 *
 * The file-scope variables below are the only mutable globals in ui/:
 * signal handlers must reach them, and curses itself is process-global,
 * so there is exactly one terminal to rescue. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "crt.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "text.h"

/* Sanitizer reports bypass our signal handlers; ask the runtime to give
 * the terminal back (and replay the captured report) before it exits. */
#if defined(__SANITIZE_ADDRESS__)
#define CRT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CRT_SANITIZED 1
#endif
#endif
#ifdef CRT_SANITIZED
#include <sanitizer/common_interface_defs.h>
#endif

#define ESC_DELAY_MS 25 /* Esc is a key here, not the start of a sequence */

static const int quit_signals[] = { SIGINT, SIGTERM, SIGHUP };
static const int fatal_signals[] = { SIGSEGV, SIGABRT, SIGBUS, SIGFPE };
#define NQUIT (sizeof quit_signals / sizeof quit_signals[0])
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])

static volatile sig_atomic_t quit_flag;
static volatile sig_atomic_t continued; /* back from a stop: repaint */
static volatile pid_t curses_tid;       /* the thread that draws */
static volatile sig_atomic_t curses_active;
static volatile sig_atomic_t tty_saved;
static struct termios saved_tty;      /* the modes before curses */
static volatile sig_atomic_t stderr_fd = -1;  /* the real stderr, dup'ed */
static volatile sig_atomic_t capture_fd = -1; /* where stderr goes now */
static SCREEN *screen;
static FILE *tty_in;                  /* opened /dev/tty when stdin is not */
static struct sigaction old_quit[NQUIT], old_fatal[NFATAL], old_tstp;

/* ---- stderr capture ---------------------------------------------------- */

static int open_capture_file(void)
{
	char path[] = "/tmp/pytop-stderr-XXXXXX";
	int fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0)
		return fd;
	fd = mkstemp(path);
	if (fd >= 0)
		unlink(path);
	return fd;
}

static void capture_stderr(void)
{
	int cap = open_capture_file();
	int saved = cap >= 0 ? fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3) : -1;

	if (saved < 0) {
		if (cap >= 0)
			close(cap);
		return; /* no capture: messages may show on screen */
	}
	fflush(stderr);
	if (dup2(cap, STDERR_FILENO) < 0) {
		close(cap);
		close(saved);
		return;
	}
	stderr_fd = saved;
	capture_fd = cap;
}

/* Async-signal-safe: dup2, lseek, read, write, close only. */
static void release_stderr(void)
{
	int saved = stderr_fd, cap = capture_fd;
	char buf[4096];
	ssize_t n;

	if (saved < 0)
		return;
	stderr_fd = -1;
	capture_fd = -1;
	dup2(saved, STDERR_FILENO);
	close(saved);
	lseek(cap, 0, SEEK_SET);
	while ((n = read(cap, buf, sizeof buf)) > 0)
		if (write(STDERR_FILENO, buf, (size_t)n) < 0)
			break;
	close(cap);
}

/* ---- signals ----------------------------------------------------------- */

static void on_quit(int sig)
{
	(void)sig;
	quit_flag = 1;
}

/* Put the terminal back, then pass the signal on to the handler that was
 * there before curses (the engine's: it stops a launched program), or the
 * default action: the signal stays blocked until we return, then it is
 * delivered again, and pytop dies of it. */
static void on_fatal(int sig)
{
	crt_restore_terminal();
	for (size_t i = 0; i < NFATAL; i++)
		if (fatal_signals[i] == sig)
			sigaction(sig, &old_fatal[i], NULL);
	raise(sig);
}

/* Ctrl-Z: give the terminal back, then stop as whoever handled SIGTSTP
 * before curses says (the engine releases the target first, and stops
 * pytop; see src/sampler/job_control.h); once continued, the view repaints.
 * Curses calls are made on the thread that draws, which this signal
 * interrupts, as ncurses' own SIGTSTP handler does. */
static void on_tstp(int sig)
{
	int saved_errno = errno;

	if ((pid_t)syscall(SYS_gettid) != curses_tid) {
		syscall(SYS_tgkill, getpid(), curses_tid, sig);
		errno = saved_errno;
		return;
	}
	if (old_tstp.sa_handler == SIG_IGN || (old_tstp.sa_flags & SA_SIGINFO)) {
		errno = saved_errno;
		return; /* pytop was started with Ctrl-Z ignored */
	}
	if (curses_active)
		endwin();
	if (old_tstp.sa_handler != SIG_DFL)
		old_tstp.sa_handler(sig);
	else
		raise(SIGSTOP); /* no one else to ask: SIGTSTP is blocked in here */
	continued = 1;
	errno = saved_errno;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a signal must wake the key wait at once. */
	sa.sa_handler = on_quit;
	for (size_t i = 0; i < NQUIT; i++)
		sigaction(quit_signals[i], &sa, &old_quit[i]);
	/* Ours before curses': it leaves alone a handler it finds. */
	curses_tid = (pid_t)syscall(SYS_gettid);
	sa.sa_handler = on_tstp;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTSTP, &sa, &old_tstp);
	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_RESETHAND;
	for (size_t i = 0; i < NFATAL; i++)
		sigaction(fatal_signals[i], &sa, &old_fatal[i]);
}

static void restore_signals(void)
{
	for (size_t i = 0; i < NQUIT; i++)
		sigaction(quit_signals[i], &old_quit[i], NULL);
	for (size_t i = 0; i < NFATAL; i++)
		sigaction(fatal_signals[i], &old_fatal[i], NULL);
	sigaction(SIGTSTP, &old_tstp, NULL);
}

bool crt_quit_requested(void)
{
	return quit_flag != 0;
}

bool crt_take_continued(void)
{
	bool was = continued != 0;

	continued = 0;
	return was;
}

/* ---- palette ----------------------------------------------------------- */

static void palette_mono(struct crt *crt)
{
	static const attr_t mono[CRT_NELEMS] = {
		[CRT_NORMAL] = A_NORMAL,
		[CRT_HEADER] = A_BOLD,
		[CRT_STATUS] = A_BOLD,
		[CRT_TITLE] = A_REVERSE,
		[CRT_TITLE_SORTED] = A_BOLD,
		[CRT_SELECTED] = A_REVERSE | A_BOLD,
		[CRT_FILE] = A_NORMAL,
		[CRT_KEY] = A_BOLD,
		[CRT_LABEL] = A_REVERSE,
		[CRT_PROMPT] = A_BOLD,
		/* the blocks' fill characters tell the kinds apart */
		[CRT_FLAME_PY] = A_NORMAL,
		[CRT_FLAME_NAT] = A_NORMAL,
		[CRT_FLAME_SYS] = A_NORMAL,
	};

	memcpy(crt->attr, mono, sizeof mono);
	crt->color = false;
}

static void palette_color(struct crt *crt)
{
	/* fg, bg per element; -1 = the terminal's own (use_default_colors) */
	static const short pairs[CRT_NELEMS][2] = {
		[CRT_NORMAL] = { -1, -1 },
		[CRT_HEADER] = { COLOR_CYAN, -1 },
		[CRT_STATUS] = { COLOR_YELLOW, -1 },
		[CRT_TITLE] = { COLOR_BLACK, COLOR_GREEN },
		[CRT_TITLE_SORTED] = { COLOR_BLACK, COLOR_CYAN },
		[CRT_SELECTED] = { COLOR_BLACK, COLOR_CYAN },
		[CRT_FILE] = { COLOR_CYAN, -1 },
		[CRT_KEY] = { -1, -1 },
		[CRT_LABEL] = { COLOR_BLACK, COLOR_CYAN },
		[CRT_PROMPT] = { COLOR_YELLOW, -1 },
		[CRT_FLAME_PY] = { COLOR_BLACK, COLOR_YELLOW },
		[CRT_FLAME_NAT] = { COLOR_BLACK, COLOR_GREEN },
		[CRT_FLAME_SYS] = { COLOR_WHITE, COLOR_RED },
	};
	static const attr_t extra[CRT_NELEMS] = {
		[CRT_HEADER] = A_BOLD, [CRT_STATUS] = A_BOLD,
		[CRT_KEY] = A_BOLD, [CRT_PROMPT] = A_BOLD,
	};
	bool defaults = use_default_colors() == OK;

	for (int e = 0; e < CRT_NELEMS; e++) {
		short fg = pairs[e][0], bg = pairs[e][1];

		if (!defaults) {
			fg = fg < 0 ? COLOR_WHITE : fg;
			bg = bg < 0 ? COLOR_BLACK : bg;
		}
		init_pair((short)(e + 1), fg, bg);
		crt->attr[e] = (attr_t)COLOR_PAIR(e + 1) | extra[e];
	}
	crt->color = true;
}

/* ---- life cycle -------------------------------------------------------- */

static bool locale_is_utf8(void)
{
	const char *cs = nl_langinfo(CODESET);

	return strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0;
}

static void setup_modes(void)
{
	cbreak();   /* keys at once; Ctrl-C still raises SIGINT */
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	intrflush(stdscr, FALSE);
	curs_set(0); /* may fail on dumb terminals; harmless */
	set_escdelay(ESC_DELAY_MS);
}

/* TERM=dumb and friends: nothing full-screen can be drawn. */
static bool can_address_cursor(void)
{
	char cap[] = "cup";
	const char *cup = tigetstr(cap);

	return cup != NULL && cup != (const char *)-1;
}

static void close_tty_in(void)
{
	if (tty_in != NULL)
		fclose(tty_in);
	tty_in = NULL;
}

int crt_init(struct crt *crt, bool want_color)
{
	const char *term = getenv("TERM");

	setlocale(LC_ALL, "");
	crt->utf8 = locale_is_utf8();
	quit_flag = 0;
	if (tcgetattr(STDOUT_FILENO, &saved_tty) == 0)
		tty_saved = 1;
	/* Keys come from the terminal even when stdin is redirected (an
	 * endless EOF would otherwise spin the loop). */
	tty_in = isatty(STDIN_FILENO) ? NULL : fopen("/dev/tty", "re");
	if (!isatty(STDIN_FILENO) && tty_in == NULL) {
		fprintf(stderr, "pytop: no terminal to read keys from; "
		        "use -b for batch output\n");
		return -1;
	}
	/* Ours first: curses leaves alone the handlers it finds installed. */
	install_signals();
	screen = newterm(NULL, stdout, tty_in != NULL ? tty_in : stdin);
	if (screen == NULL) {
		restore_signals();
		close_tty_in();
		fprintf(stderr, "pytop: cannot use the terminal (TERM=%s); "
		        "set TERM or use -b for batch output\n",
		        term != NULL ? term : "unset");
		return -1;
	}
	set_term(screen);
	if (!can_address_cursor()) {
		endwin();
		delscreen(screen);
		screen = NULL;
		restore_signals();
		close_tty_in();
		fprintf(stderr, "pytop: the terminal (TERM=%s) cannot move "
		        "the cursor; use -b for batch output\n",
		        term != NULL ? term : "unset");
		return -1;
	}
	setup_modes();
	if (want_color && has_colors() && start_color() == OK)
		palette_color(crt);
	else
		palette_mono(crt);
	capture_stderr();
	curses_active = 1;
#ifdef CRT_SANITIZED
	__sanitizer_set_death_callback(crt_restore_terminal);
#endif
	return 0;
}

void crt_restore_terminal(void)
{
	if (curses_active) {
		curses_active = 0;
		endwin();
		/* endwin restores the modes too; this covers the case where
		 * it was interrupted half-way by a crash. */
		if (tty_saved)
			tcsetattr(STDOUT_FILENO, TCSADRAIN, &saved_tty);
	}
	release_stderr();
}

void crt_done(void)
{
	bool was_active = curses_active != 0 || screen != NULL;

	crt_restore_terminal();
	if (!was_active)
		return;
	if (screen != NULL) {
		delscreen(screen);
		screen = NULL;
	}
	close_tty_in();
	restore_signals();
}

/* ---- input and output -------------------------------------------------- */

int crt_read_key(int timeout_ms)
{
	wint_t ch;
	int r;

	wtimeout(stdscr, timeout_ms);
	r = wget_wch(stdscr, &ch);
	if (r == ERR)
		return CRT_NO_KEY;
	if (r == KEY_CODE_YES)
		return CRT_KEYCODE((int)ch);
	return (int)ch;
}

void crt_put(const struct crt *crt, int y, int x, enum crt_elem elem,
             const char *text)
{
	char fitted[4096];

	if (y < 0 || y >= LINES || x < 0 || x >= COLS)
		return;
	text_fit(fitted, sizeof fitted, text, COLS - x, TEXT_CUT_RIGHT,
	         crt->utf8);
	attrset(crt->attr[elem]);
	mvaddstr(y, x, fitted); /* ERR at the bottom-right cell is expected */
	attrset(A_NORMAL);
}

void crt_fill(const struct crt *crt, int y, int x, enum crt_elem elem)
{
	if (y < 0 || y >= LINES || x < 0 || x >= COLS)
		return;
	mvhline(y, x, ' ' | crt->attr[elem], COLS - x);
}
