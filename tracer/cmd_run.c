#define _GNU_SOURCE 1
/*
 * cutrace run: run a program with the shim preloaded, then say per traced
 * process whether CUDA initialization worked and, if not, where and why.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inject_rules.h"

static void run_usage(FILE *f)
{
	fprintf(f,
		"usage: cutrace run [-o DIR] [--inject RULE]... [--scenario NAME] [-q] [--size SIZE]\n"
		"                   [--color=auto|always|never] -- CMD [ARGS...]\n\n"
		"Runs CMD with libcutrace.so preloaded, writes one trace per process into DIR\n"
		"(default: a new directory under $CUTRACE_DIR or /tmp/cutrace-UID) and prints a\n"
		"verdict per traced process on stderr.  Exits with CMD's status (128+N if signal N\n"
		"killed it), 2 on usage errors.\n\n"
		"  -o, --output DIR     trace directory (created if missing, must be yours)\n"
		"  --inject RULE        inject a fault (repeatable); see 'cutrace run --help-inject'\n"
		"  --scenario NAME      inject the rules of a named scenario (see 'cutrace scenarios')\n"
		"  -q, --quiet          print only the verdicts of processes that failed\n"
		"  --size SIZE          trace file size per process (default 16M)\n"
		"  --lib PATH           libcutrace.so to preload (default: found next to cutrace)\n");
}

int ct_find_shim(char *out, size_t len)
{
	char dir[PATH_MAX];
	const char *env = getenv("CUTRACE_LIB");
	static const char *const rel[] = { "../lib/libcutrace.so", "../lib/cutrace/libcutrace.so",
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

/* Check (and create) a trace directory the way the shim will judge it. */
int ct_prepare_dir(const char *dir, char *why, size_t whylen)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(why, whylen, "cannot create trace directory %s: %s", dir, strerror(errno));
		return -1;
	}
	if (stat(dir, &st) < 0) {
		snprintf(why, whylen, "cannot use trace directory %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "trace directory %s is not a directory", dir);
		return -1;
	}
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
		snprintf(why, whylen, "trace directory %s is world-writable without the sticky bit", dir);
		return -1;
	}
	if (st.st_uid != geteuid() && geteuid() != 0) {
		snprintf(why, whylen, "trace directory %s belongs to another user", dir);
		return -1;
	}
	if (access(dir, W_OK | X_OK) < 0) {
		snprintf(why, whylen, "trace directory %s is not writable: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
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
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
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

/* ---- option parsing shared by run, probe and replay --------------------------------- */
int ct_run_parse(int argc, char **argv, struct ct_run_opts *o, int *cmd_index, bool need_cmd)
{
	static char injbuf[4096];
	size_t used = 0;
	int i;

	memset(o, 0, sizeof *o);
	injbuf[0] = 0;
	o->inject = injbuf;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			return 1;
		if (!strcmp(a, "--help-inject"))
			return 3;
		if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			o->quiet = true;
			continue;
		}
		if (!strcmp(a, "--print")) {
			o->print_only = true;
			continue;
		}
		if (!strcmp(a, "--json")) {
			o->json = true;
			continue;
		}
		if (!strncmp(a, "--color=", 8)) {
			const char *m = a + 8;
			if (!strcmp(m, "auto")) ct_color_set_mode(CT_COLOR_AUTO);
			else if (!strcmp(m, "always")) ct_color_set_mode(CT_COLOR_ALWAYS);
			else if (!strcmp(m, "never")) ct_color_set_mode(CT_COLOR_NEVER);
			else {
				ct_err("--color must be auto, always or never, not '%s'", m);
				return -1;
			}
			continue;
		}
#define TAKE(longopt)                                                                     \
	(!strcmp(a, longopt) ||                                                           \
	 (!strncmp(a, longopt "=", strlen(longopt) + 1) && (val = a + strlen(longopt) + 1)))
		if (!strcmp(a, "-o") || TAKE("--output") || TAKE("--inject") || TAKE("--scenario") ||
		    TAKE("--size") || TAKE("--lib")) {
			if (!val) {
				if (i + 1 >= argc) {
					ct_err("%s needs a value", a);
					return -1;
				}
				val = argv[++i];
			}
			if (!strncmp(a, "-o", 2) || !strncmp(a, "--output", 8)) {
				o->dir_arg = val;
			} else if (!strncmp(a, "--inject", 8)) {
				size_t n = strlen(val);
				if (used + n + 2 >= sizeof injbuf) {
					ct_err("too many --inject rules");
					return -1;
				}
				if (used)
					injbuf[used++] = ';';
				memcpy(injbuf + used, val, n + 1);
				used += n;
			} else if (!strncmp(a, "--scenario", 10)) {
				o->scenario = val;
			} else if (!strncmp(a, "--size", 6)) {
				if (ct_parse_size(val) < 256 * 1024) {
					ct_err("--size '%s' is not a size of at least 256K (e.g. 16M)", val);
					return -1;
				}
				o->size = val;
			} else {
				o->lib_arg = val;
			}
			continue;
		}
#undef TAKE
		ct_err("unknown option '%s'", a);
		return -1;
	}
	*cmd_index = i;
	if (need_cmd && i >= argc) {
		ct_err("no command to run (cutrace run [OPTIONS] -- CMD [ARGS...])");
		return -1;
	}
	return 0;
}

int ct_run_setup(struct ct_run_opts *o)
{
	static char dirbuf[PATH_MAX];
	static char shimbuf[PATH_MAX];
	char why[PATH_MAX + 128], err[512];
	struct ct_rule rules[CT_RULES_MAX];

	/* the rules first: a bad rule must stop us before anything is created */
	if (o->inject && *o->inject && ct_rules_parse(o->inject, rules, CT_RULES_MAX, err, sizeof err) < 0) {
		ct_err("%s", err);
		fprintf(stderr, "rule grammar: %s\n", ct_rules_grammar);
		return -1;
	}
	if (o->lib_arg) {
		if (access(o->lib_arg, R_OK) < 0 || !realpath(o->lib_arg, shimbuf)) {
			ct_err("cannot read the shim %s: %s", o->lib_arg, strerror(errno));
			return -1;
		}
	} else if (ct_find_shim(shimbuf, sizeof shimbuf) < 0) {
		ct_err("libcutrace.so not found next to cutrace (set CUTRACE_LIB or use --lib)");
		return -1;
	}
	o->shim = shimbuf;
	if (o->dir_arg) {
		if (!realpath(o->dir_arg, dirbuf)) {
			if (ct_prepare_dir(o->dir_arg, why, sizeof why) < 0 || !realpath(o->dir_arg, dirbuf)) {
				ct_err("%s", why);
				return -1;
			}
		} else if (ct_prepare_dir(dirbuf, why, sizeof why) < 0) {
			ct_err("%s", why);
			return -1;
		}
	} else if (ct_default_run_dir(dirbuf, sizeof dirbuf) < 0) {
		return -1;
	}
	o->dir = dirbuf;
	if (o->scenario && ct_scenario_rules(o->scenario, o) < 0)
		return -1;
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct ct_run_opts o;
	int ci, status = 0, r;

	r = ct_run_parse(argc, argv, &o, &ci, true);
	if (r == 1) {
		run_usage(stdout);
		return CT_EXIT_OK;
	}
	if (r == 3) {
		printf("%s\n", ct_rules_grammar);
		return CT_EXIT_OK;
	}
	if (r < 0) {
		run_usage(stderr);
		return CT_EXIT_USAGE;
	}
	if (ct_run_setup(&o) < 0)
		return CT_EXIT_USAGE;
	r = ct_spawn_traced(&o, argv + ci, &status);
	if (r < 0)
		return CT_EXIT_USAGE;
	if (r > 0)
		return status;
	ct_run_report(&o, stderr);
	return status;
}
