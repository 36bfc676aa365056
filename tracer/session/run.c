#define _GNU_SOURCE 1
/*
 * Running a program under the shim (run.h), for run, probe, doctor and
 * replay: the options they share, the trace directory, the shim's path,
 * and the child itself.
 *
 * The program is started with execvp (no shell: its arguments pass through
 * untouched), LD_PRELOAD gets libcutrace.so in front of whatever was there,
 * and CUTRACE_DIR points at the run's trace directory, so children
 * (torchrun workers, DataLoader workers, shell wrappers) are traced too.
 * Signals sent to cutrace are forwarded; the exit status is the program's
 * (128+N when signal N killed it).
 */
#include "tracer.h"
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "embed.h"
#include "inject_rules.h"
#include "parse.h"
#include "tracedir.h"

int ct_find_shim(char *out, size_t len)
{
	char dir[PATH_MAX];
	const char *env = getenv("CUTRACE_LIB");
	/* the installed tree's (cmake/install.cmake) first, so that a shim left
	 * in PREFIX/lib by an older install does not win; then the build tree's */
	static const char *const rel[] = { "../lib/cutrace/libcutrace.so", "../lib/libcutrace.so",
					   "../lib64/libcutrace.so", "libcutrace.so", NULL };

	if (env && *env) {
		if (access(env, R_OK) == 0 && realpath(env, out))
			return 0;
		return -1;
	}
	if (ct_self_dir(dir, sizeof dir) < 0)
		return -1;
	for (int i = 0; rel[i]; i++) {
		char p[PATH_MAX * 2];
		snprintf(p, sizeof p, "%s/%s", dir, rel[i]);
		if (access(p, R_OK) == 0 && strlen(p) < len && realpath(p, out))
			return 0;
	}
	return -1;
}

/* The missing directories above dir, as mkdir -p makes them (0777 less the
 * umask); the trace directory itself is made 0700 by the caller. */
static void make_parents(const char *dir)
{
	char p[PATH_MAX];
	size_t n = strlen(dir);

	if (n >= sizeof p)
		return;
	memcpy(p, dir, n + 1);
	for (char *q = p + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = 0;
		if (mkdir(p, 0777) < 0 && errno != EEXIST) {
			*q = '/';
			return; /* the caller's mkdir says why */
		}
		*q = '/';
	}
}

/* Check (and create) a trace directory the way the shim will judge it:
 * component by component, no symbolic link others could have planted, no
 * component owned by another user, also for root (common/tracedir.c). */
int ct_prepare_dir(const char *dir, char *why, size_t whylen)
{
	char w[PATH_MAX + 128];
	int fd;

	if (mkdir(dir, 0700) < 0 && errno == ENOENT) {
		make_parents(dir);
		errno = 0;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(why, whylen, "cannot create trace directory %s: %s", dir, strerror(errno));
		return -1;
	}
	fd = ct_tracedir_open(dir, 1, w, sizeof w);
	if (fd < 0) {
		snprintf(why, whylen, "cannot use trace directory %s: %s", dir, w);
		return -1;
	}
	close(fd);
	if (access(dir, W_OK | X_OK) < 0) {
		snprintf(why, whylen, "trace directory %s is not writable: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

const char *ct_run_dir_shown(const struct ct_run_opts *o, char *buf, size_t len)
{
	const char *slash = strrchr(o->dir, '/');

	if (!ct_stable() || o->dir_arg || !slash || strncmp(slash, "/run-", 5))
		return o->dir;
	snprintf(buf, len, "%.*s/run-<time>", (int)(slash - o->dir), o->dir);
	return buf;
}

int ct_default_run_dir(char *out, size_t len)
{
	char base[PATH_MAX], why[PATH_MAX + 128];
	const char *env = getenv("CUTRACE_DIR");
	time_t now = time(NULL);
	struct tm tm;

	if (env && *env)
		snprintf(base, sizeof base, "%s", env);
	else
		snprintf(base, sizeof base, "/tmp/cutrace-%u", (unsigned)geteuid());
	if (ct_prepare_dir(base, why, sizeof why) < 0) {
		ct_err("%s", why);
		return -1;
	}
	localtime_r(&now, &tm);
	for (int i = 0; i < 100; i++) {
		int n = snprintf(out, len, "%s/run-%04d%02d%02d-%02d%02d%02d-%d%s%.0d", base,
				 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
				 tm.tm_sec, (int)getpid(), i ? "-" : "", i);
		if (n < 0 || (size_t)n >= len)
			return -1;
		if (mkdir(out, 0700) == 0)
			return 0;
		if (errno != EEXIST) {
			ct_err("cannot create trace directory %s: %s", out, strerror(errno));
			return -1;
		}
	}
	return -1;
}

/* ---- running the child -------------------------------------------------------------- */
static volatile pid_t child_pid;

static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	/* terminal signals (SI_KERNEL) already reach the child through the
	 * process group; only those sent to us in particular are passed on */
	if ((sig == SIGINT || sig == SIGQUIT) && si && si->si_code == SI_KERNEL)
		return;
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* ---- --timeout: the program's whole tree is killed ---------------------------------- */
/* every process whose chain of parents leads to us (cutrace is a subreaper
 * with --timeout, so orphans of the tree are re-parented to us and stay in
 * it); returns how many were found, pids in out */
static int tree_pids(pid_t *out, int max)
{
	static struct { pid_t pid, ppid; } all[32768];
	int n = 0, found = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t self = getpid();

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < (int)(sizeof all / sizeof all[0])) {
		char path[300], buf[512], *rp;
		int fd;
		ssize_t len;
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = 0;
		/* "pid (comm) S ppid ...": comm may hold spaces and ')' */
		rp = strrchr(buf, ')');
		if (!rp || rp[1] != ' ' || !rp[2] || rp[3] != ' ')
			continue;
		all[n].pid = (pid_t)strtol(e->d_name, NULL, 10);
		all[n].ppid = (pid_t)strtol(rp + 4, NULL, 10);
		n++;
	}
	closedir(d);
	/* grow the set from ourselves until nothing new joins */
	for (bool more = true; more;) {
		more = false;
		for (int i = 0; i < n; i++) {
			bool in = false, parent_in = all[i].ppid == self;
			for (int k = 0; k < found && !(in && parent_in); k++) {
				in |= out[k] == all[i].pid;
				parent_in |= out[k] == all[i].ppid;
			}
			if (!in && parent_in && found < max) {
				out[found++] = all[i].pid;
				more = true;
			}
		}
	}
	return found;
}

/* what the last ct_spawn_traced saw of its child's end (run.h) */
static pid_t tree_killed[4096];
static struct ct_spawn_result last = { .killed = tree_killed };

/* stop the tree (so no process forks past us), then kill it; returns how
 * many processes were killed */
static int kill_tree(pid_t child)
{
	pid_t *pids = tree_killed;
	int n = 0, prev = -1;

	kill(child, SIGSTOP);
	for (int round = 0; round < 20 && n != prev; round++) {
		prev = n;
		n = tree_pids(pids, (int)(sizeof tree_killed / sizeof tree_killed[0]));
		for (int i = 0; i < n; i++)
			kill(pids[i], SIGSTOP);
	}
	kill(child, SIGKILL);
	for (int i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	last.nkilled = n;
	return n > 0 ? n : 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* wait for the child; with a timeout, kill its tree when it runs out */
static void wait_child(const struct ct_run_opts *o, pid_t pid, int *st, char *const *argv)
{
	uint64_t deadline, step = 1000000; /* 1 ms, growing to 50 ms */

	if (!o->timeout_ns) {
		while (waitpid(pid, st, 0) < 0 && errno == EINTR)
			;
		return;
	}
	deadline = mono_ns() + o->timeout_ns;
	for (;;) {
		pid_t r = waitpid(pid, st, WNOHANG);
		uint64_t now;
		if (r == pid || (r < 0 && errno != EINTR))
			break;
		now = mono_ns();
		if (now >= deadline) {
			int n = kill_tree(pid);
			last.timed_out = true;
			last.end_mono_ns = mono_ns();
			while (waitpid(pid, st, 0) < 0 && errno == EINTR)
				;
			fprintf(stderr, "cutrace: timeout: '%s' ran longer than %s: killed it (SIGKILL)%s\n",
				argv[0], o->timeout_arg ? o->timeout_arg : "the limit",
				n > 1 ? " with the processes it started" : "");
			break;
		}
		struct timespec ts = { 0, (long)(deadline - now < step ? deadline - now : step) };
		nanosleep(&ts, NULL);
		if (step < 50000000)
			step *= 2;
	}
	/* orphans of the tree were re-parented to us: reap them */
	for (int i = 0; i < 200; i++) {
		struct timespec ts = { 0, 1000000 };
		pid_t r = waitpid(-1, NULL, WNOHANG);
		if (r < 0 && errno != EINTR)
			break; /* none left */
		if (r == 0)
			nanosleep(&ts, NULL);
	}
}

int ct_spawn_traced(const struct ct_run_opts *o, char **argv, int *status_out)
{
	static const int fwd[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM,
				   SIGCONT, SIGWINCH };
	struct sigaction sa, old[sizeof fwd / sizeof fwd[0]];
	char preload[PATH_MAX * 4];
	const char *prev = getenv("LD_PRELOAD");
	int pipefd[2], st = 0, err = 0;
	pid_t pid;
	ssize_t n;

	if (prev && *prev)
		snprintf(preload, sizeof preload, "%s:%s", o->shim, prev);
	else
		snprintf(preload, sizeof preload, "%s", o->shim);
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		ct_err("pipe: %s", strerror(errno));
		return -1;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof fwd / sizeof fwd[0]; i++)
		sigaction(fwd[i], &sa, &old[i]);
	/* with --timeout the program's whole tree must be found again: what its
	 * processes leave behind is re-parented to us, not to init */
	if (o->timeout_ns)
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ct_err("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		for (size_t i = 0; i < sizeof fwd / sizeof fwd[0]; i++)
			sigaction(fwd[i], &old[i], NULL);
		if (o->mute_child) {
			int nul = open("/dev/null", O_WRONLY);
			if (nul >= 0) {
				dup2(nul, 1);
				dup2(nul, 2);
				if (nul > 2)
					close(nul);
			}
		}
		setenv("LD_PRELOAD", preload, 1);
		setenv("CUTRACE_DIR", o->dir, 1);
		if (o->inject && *o->inject)
			setenv("CUTRACE_INJECT", o->inject, 1);
		if (o->size && *o->size)
			setenv("CUTRACE_SIZE", o->size, 1);
		for (int i = 0; i < o->nenv; i++) {
			char name[128], val[4096];
			const char *eq = strchr(o->env[i], '=');
			bool prepend = eq && eq > o->env[i] && eq[-1] == '+';
			size_t nl;
			if (!eq)
				continue;
			nl = (size_t)(eq - o->env[i]) - (prepend ? 1 : 0);
			if (nl >= sizeof name)
				continue;
			memcpy(name, o->env[i], nl);
			name[nl] = 0;
			const char *cur = getenv(name);
			if (prepend && cur && *cur)
				snprintf(val, sizeof val, "%s:%s", eq + 1, cur);
			else
				snprintf(val, sizeof val, "%s", eq + 1);
			setenv(name, val, 1);
		}
		execvp(argv[0], argv);
		err = errno;
		if (write(pipefd[1], &err, sizeof err) < 0)
			_exit(127);
		_exit(err == ENOENT ? 127 : 126);
	}
	child_pid = pid;
	close(pipefd[1]);
	n = read(pipefd[0], &err, sizeof err);
	close(pipefd[0]);
	memset(&last, 0, sizeof last);
	last.killed = tree_killed;
	last.pid = pid;
	ct_format_duration(o->timeout_ns, last.limit, sizeof last.limit);
	wait_child(o, pid, &st, argv);
	if (!last.timed_out)
		last.end_mono_ns = mono_ns();
	last.wait_status = st;
	last.waited = true;
	child_pid = 0;
	for (size_t i = 0; i < sizeof fwd / sizeof fwd[0]; i++)
		sigaction(fwd[i], &old[i], NULL);
	if (n == (ssize_t)sizeof err) {
		ct_err("cannot run '%s': %s", argv[0], strerror(err));
		*status_out = err == ENOENT ? 127 : 126;
		return 1;
	}
	if (WIFEXITED(st))
		*status_out = WEXITSTATUS(st);
	else if (WIFSIGNALED(st))
		*status_out = 128 + WTERMSIG(st);
	else
		*status_out = 1;
	return 0;
}

/* -o DIR that already holds traces would mix an earlier run into this
 * run's verdicts: refused */
static int dir_has_traces(const char *dir)
{
	char **paths = NULL, err[256];
	int n = ct_list_traces(dir, &paths, err, sizeof err);

	if (n > 0)
		ct_free_paths(paths, n);
	else if (n == 0)
		ct_free_paths(paths, 0);
	return n > 0 ? n : 0;
}

/* a directory this run made and nothing was traced into: removed (with
 * the shim and probe a one-file cutrace wrote into it), so that a command
 * that never touched CUDA leaves no empty run-... behind.  true: removed */
bool ct_run_dir_remove_empty(const struct ct_run_opts *o)
{
	char p[PATH_MAX + 32];
	static const char *const carried[] = { "libcutrace.so", "cutrace-probe" };

	if (!o->dir_created || dir_has_traces(o->dir))
		return false;
	/* the markers of warnings said once per process tree (shim/trace.c) */
	DIR *d = opendir(o->dir);
	for (struct dirent *e; d && (e = readdir(d));)
		if (!strncmp(e->d_name, ".warned-", 8))
			(void)unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	for (size_t i = 0; i < sizeof carried / sizeof carried[0]; i++) {
		snprintf(p, sizeof p, "%s/.cutrace/%s", o->dir, carried[i]);
		unlink(p);
	}
	snprintf(p, sizeof p, "%s/.cutrace", o->dir);
	rmdir(p);
	return rmdir(o->dir) == 0;
}

const struct ct_spawn_result *ct_spawn_last(void)
{
	return &last;
}

/* "60 s", "700 ms", "1.5 s", "2 min" */
const char *ct_format_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 120000000000ull && ns % 60000000000ull == 0)
		snprintf(buf, len, "%llu min", (unsigned long long)(ns / 60000000000ull));
	else if (ns >= 1000000000ull && ns % 1000000000ull == 0)
		snprintf(buf, len, "%llu s", (unsigned long long)(ns / 1000000000ull));
	else if (ns >= 1000000000ull)
		snprintf(buf, len, "%.3g s", (double)ns / 1e9);
	else
		snprintf(buf, len, "%.3g ms", (double)ns / 1e6);
	return buf;
}

/* does /proc/PID/environ hold CUTRACE_DIR=dir (a process of this run)? */
static bool runs_here(uint32_t pid, const char *dir)
{
	char path[64], buf[65536], want[PATH_MAX + 16];
	ssize_t n;
	int fd;
	size_t wl;

	snprintf(path, sizeof path, "/proc/%u/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	wl = (size_t)snprintf(want, sizeof want, "CUTRACE_DIR=%s", dir);
	for (char *p = buf; p < buf + n; p += strlen(p) + 1)
		if (strlen(p) == wl && !memcmp(p, want, wl))
			return true;
	return false;
}

void ct_spawn_end_of(const char *dir, uint32_t pid, bool last_image, bool exited, struct ct_proc_end *e)
{
	memset(e, 0, sizeof *e);
	if (!last.waited)
		return;
	if (last.timed_out) {
		bool killed = pid == (uint32_t)last.pid && last_image;
		for (int i = 0; i < last.nkilled && !killed; i++)
			killed = (uint32_t)last.killed[i] == pid;
		if (killed && !exited) {
			e->kind = CT_END_TIMEOUT;
			e->code = SIGKILL;
			e->at_mono_ns = last.end_mono_ns;
			snprintf(e->limit, sizeof e->limit, "%s", last.limit);
			return;
		}
	}
	if (pid == (uint32_t)last.pid && last_image) {
		if (WIFEXITED(last.wait_status)) {
			e->kind = CT_END_EXIT;
			e->code = WEXITSTATUS(last.wait_status);
		} else if (WIFSIGNALED(last.wait_status)) {
			e->kind = CT_END_SIGNAL;
			e->code = WTERMSIG(last.wait_status);
		}
		e->at_mono_ns = last.end_mono_ns;
		return;
	}
	if (!exited && dir && runs_here(pid, dir))
		e->kind = CT_END_RUNNING;
}

/* ---- the options run, probe and replay share (their rows are in each
 * command's table, tracer/cmd/cmd_*.c; their values are read here) ------------------- */
static char injbuf[4096];

void ct_run_opts_init(struct ct_run_opts *o)
{
	memset(o, 0, sizeof *o);
	injbuf[0] = 0;
	o->inject = injbuf;
}

int ct_run_opt(const struct ct_cmd_spec *c, struct ct_run_opts *o, int key, const struct ct_optval *v)
{
	size_t used = strlen(injbuf), n;

	switch (key) {
	case 'o': o->dir_arg = v->s; return 1;
	case 'q': o->quiet = true; return 1;
	case CT_RUN_O_SCENARIO: o->scenario = v->s; return 1;
	case CT_RUN_O_LIB: o->lib_arg = v->s; return 1;
	case CT_RUN_O_NO_TIME: o->no_time = true; return 1;
	case CT_RUN_O_PIDS: o->keep_pids = true; return 1;
	case CT_RUN_O_SIZE:
		/* the shim reads CUTRACE_SIZE with the same parser (common/parse.c),
		 * which checked it against the same limits already */
		o->size = v->s;
		return 1;
	case CT_RUN_O_TIMEOUT:
		o->timeout_ns = v->n;
		o->timeout_arg = v->s;
		return 1;
	case CT_RUN_O_INJECT:
		n = strlen(v->s);
		if (!v->s[strspn(v->s, " \t\n;")])
			return ct_opts_error(c,
					     "--inject needs a rule, not '%s' (see 'cutrace run --help-inject')",
					     v->s),
			       -1;
		if (used + n + 2 >= sizeof injbuf)
			return ct_opts_error(c, "too many --inject rules (%zu bytes at most)",
					     sizeof injbuf - 2),
			       -1;
		if (used)
			injbuf[used++] = ';';
		memcpy(injbuf + used, v->s, n + 1);
		return 1;
	}
	return 0;
}

/* the shim would trace nothing: CUTRACE_DISABLE in our environment, which
 * the program inherits; "" when tracing is on */
const char *ct_tracing_off_reason(void)
{
	static char why[160];
	const char *off = getenv("CUTRACE_DISABLE");

	/* the shim's test (shim/trace.c read_config) */
	if (off && *off && strcmp(off, "0")) {
		snprintf(why, sizeof why,
			 "CUTRACE_DISABLE=%.40s came from the environment: the shim records "
			 "nothing (unset it to trace)",
			 off);
		return why;
	}
	return "";
}

int ct_run_setup(struct ct_run_opts *o)
{
	static char dirbuf[PATH_MAX];
	static char shimbuf[PATH_MAX];
	char why[PATH_MAX + 128], err[512];
	struct ct_rule rules[CT_RULES_MAX];
	const char *inherited = getenv("CUTRACE_INJECT");

	/* the rules first: a bad rule must stop us before anything is created.
	 * Rules in an inherited CUTRACE_INJECT are kept and come first, the
	 * --inject rules after them: the program gets both */
	if (inherited && inherited[strspn(inherited, " \t\n;")]) {
		if (ct_rules_parse(inherited, rules, CT_RULES_MAX, err, sizeof err) < 0) {
			ct_err("CUTRACE_INJECT (from the environment): %s (see 'cutrace run --help-inject')",
			       err);
			return -1;
		}
		if (o->inject) {
			char both[4096];
			int n = snprintf(both, sizeof both, "%s%s%s", inherited, *o->inject ? ";" : "", o->inject);
			if (n < 0 || (size_t)n >= sizeof both) {
				ct_err("CUTRACE_INJECT and the --inject rules are too long together");
				return -1;
			}
			memcpy(o->inject, both, (size_t)n + 1);
		}
	}
	if (o->inject && *o->inject && ct_rules_parse(o->inject, rules, CT_RULES_MAX, err, sizeof err) < 0) {
		ct_err("%s (see 'cutrace run --help-inject')", err);
		return -1;
	}
	/* an inherited CUTRACE_SIZE (no --size) is checked as --size is: the
	 * shim would clamp it or fall back to 16M, and say so only in the trace */
	if (!o->size && getenv("CUTRACE_SIZE")) {
		uint64_t bytes;
		int sc = ct_size_check(getenv("CUTRACE_SIZE"), &bytes);
		if (sc < 0) {
			ct_err("CUTRACE_SIZE (from the environment): '%.40s' %s", getenv("CUTRACE_SIZE"),
			       ct_size_why(sc));
			return -1;
		}
	}
	if (o->lib_arg) {
		if (access(o->lib_arg, R_OK) < 0 || !realpath(o->lib_arg, shimbuf)) {
			ct_err("cannot read the shim %s: %s", o->lib_arg, strerror(errno));
			return -1;
		}
	} else if (ct_embed_has(CT_EMBED_SHIM) && !(getenv("CUTRACE_LIB") && *getenv("CUTRACE_LIB"))) {
		shimbuf[0] = 0; /* the one-file cutrace's own, written out below */
	} else if (ct_find_shim(shimbuf, sizeof shimbuf) < 0) {
		const char *env = getenv("CUTRACE_LIB");
		if (env && *env)
			ct_err("cannot read the shim CUTRACE_LIB=%s: %s", env, strerror(errno));
		else
			ct_err("libcutrace.so not found next to cutrace (set CUTRACE_LIB or use --lib)");
		return -1;
	}
	o->shim = shimbuf;
	o->dir_created = false;
	if (o->dir_arg) {
		int old;
		struct stat st;
		bool existed = stat(o->dir_arg, &st) == 0;
		/* judged as given, before realpath: a symbolic link planted on the
		 * way must be refused, not resolved */
		if (ct_prepare_dir(o->dir_arg, why, sizeof why) < 0) {
			ct_err("%s", why);
			return -1;
		}
		if (!realpath(o->dir_arg, dirbuf)) {
			ct_err("cannot resolve trace directory %s: %s", o->dir_arg, strerror(errno));
			return -1;
		}
		o->dir_created = !existed;
		if (!o->print_only && (old = dir_has_traces(dirbuf)) > 0) {
			ct_err("%s already holds %d trace file%s of an earlier run: they would be mixed into this "
			       "run's verdicts; give a new directory, or remove them",
			       dirbuf, old, old == 1 ? "" : "s");
			return -1;
		}
	} else if (ct_default_run_dir(dirbuf, sizeof dirbuf) < 0) {
		return -1;
	} else {
		o->dir_created = true;
	}
	o->dir = dirbuf;
	if (!shimbuf[0] && ct_embed_write(CT_EMBED_SHIM, dirbuf, shimbuf, sizeof shimbuf, why, sizeof why) < 0) {
		ct_err("cannot write out the shim this cutrace carries: %s (set CUTRACE_LIB or use --lib)", why);
		return -1;
	}
	if (o->scenario && ct_scenario_rules(o->scenario, o) < 0)
		return -1;
	/* the shim takes at most CT_RULES_MAX rules: check the whole list once more */
	if (o->scenario && *o->inject && ct_rules_parse(o->inject, rules, CT_RULES_MAX, err, sizeof err) < 0) {
		ct_err("with scenario '%s': %s", o->scenario, err);
		return -1;
	}
	return 0;
}
