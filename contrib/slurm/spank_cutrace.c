/*
 * spank_cutrace.so: `srun --cutrace[=DIR] ...` runs every task under
 * cutrace's shim and prints the job summary once when the step ends.
 *
 *   plugstack.conf:
 *     optional /usr/local/lib/cutrace/spank_cutrace.so shim=/usr/local/lib/cutrace/libcutrace.so cutrace=/usr/local/bin/cutrace
 *
 * In each task (remote context, slurm_spank_task_init, as the user, in the
 * task's working directory): DIR (default cutrace-JOBID.STEPID, relative
 * to the working directory: a shared file system collects every node's)
 * and DIR/NODENAME are made, CUTRACE_DIR is DIR/NODENAME and the shim goes
 * in front of LD_PRELOAD.  The shim records the rank, local rank, job id,
 * step id and node name (SLURM_PROCID, SLURM_LOCALID, SLURM_JOB_ID,
 * SLURM_STEP_ID, SLURMD_NODENAME) in each trace's context.  In srun (local
 * context, slurm_spank_exit) `cutrace show --summary DIR` prints the job's
 * summary on srun's standard error: which ranks failed, on which nodes,
 * and why.
 *
 * Built when Slurm's <slurm/spank.h> is there (Debian: libslurm-dev).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slurm/spank.h>

SPANK_PLUGIN(cutrace, 1);

#ifndef CUTRACE_PREFIX
#define CUTRACE_PREFIX "/usr/local"
#endif

static int enabled;
static char dir_arg[PATH_MAX];
static char shim[PATH_MAX] = CUTRACE_PREFIX "/lib/cutrace/libcutrace.so";
static char cutrace[PATH_MAX] = CUTRACE_PREFIX "/bin/cutrace";
static char job_dir[PATH_MAX]; /* srun: the directory to summarize */

static int opt_cutrace(int val, const char *optarg, int remote)
{
	(void)val;
	(void)remote;
	enabled = 1;
	if (optarg && optarg[0])
		snprintf(dir_arg, sizeof dir_arg, "%s", optarg);
	return 0;
}

struct spank_option spank_options[] = {
	{ "cutrace", "DIR",
	  "trace CUDA start-up of every task with cutrace; traces in DIR (default cutrace-JOBID.STEPID), one "
	  "subdirectory per node; the job summary when the step ends",
	  2, 0, opt_cutrace },
	SPANK_OPTIONS_TABLE_END
};

static void plugin_args(int ac, char **av)
{
	for (int i = 0; i < ac; i++) {
		if (!strncmp(av[i], "shim=", 5))
			snprintf(shim, sizeof shim, "%s", av[i] + 5);
		else if (!strncmp(av[i], "cutrace=", 8))
			snprintf(cutrace, sizeof cutrace, "%s", av[i] + 8);
		else
			slurm_error("cutrace: unknown plugin argument '%s' (shim=PATH, cutrace=PATH)", av[i]);
	}
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)sp;
	plugin_args(ac, av);
	return ESPANK_SUCCESS;
}

/* DIR for this job step: the argument, or cutrace-JOBID.STEPID */
static void step_dir(spank_t sp, char *out, size_t len)
{
	uint32_t job = 0, step = 0;

	spank_get_item(sp, S_JOB_ID, &job);
	spank_get_item(sp, S_JOB_STEPID, &step);
	if (dir_arg[0])
		snprintf(out, len, "%s", dir_arg);
	else
		snprintf(out, len, "cutrace-%u.%u", job, step);
}

static int make_dir(const char *p)
{
	if (mkdir(p, 0700) == 0 || errno == EEXIST)
		return 0;
	slurm_error("cutrace: cannot create %s: %s", p, strerror(errno));
	return -1;
}

/* srun: remember where the tasks will write (relative to srun's working
 * directory, as the tasks' is by default) */
int slurm_spank_local_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (enabled)
		step_dir(sp, job_dir, sizeof job_dir);
	return ESPANK_SUCCESS;
}

/* each task, just before exec: the trace directory and the shim */
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	char dir[PATH_MAX], node[256], sub[PATH_MAX + 300], pre[8192], val[PATH_MAX + 8200];

	(void)ac;
	(void)av;
	if (!enabled || !spank_remote(sp))
		return ESPANK_SUCCESS;
	if (access(shim, R_OK) != 0) {
		slurm_error("cutrace: %s: %s: the task runs untraced (plugstack.conf: shim=PATH)", shim,
			    strerror(errno));
		return ESPANK_SUCCESS;
	}
	step_dir(sp, dir, sizeof dir);
	if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof node) != ESPANK_SUCCESS || !node[0])
		gethostname(node, sizeof node);
	snprintf(sub, sizeof sub, "%s/%s", dir, node);
	if (make_dir(dir) < 0 || make_dir(sub) < 0)
		return ESPANK_SUCCESS;
	if (sub[0] != '/') {
		char cwd[PATH_MAX], abs[2 * PATH_MAX + 300];
		if (getcwd(cwd, sizeof cwd)) {
			snprintf(abs, sizeof abs, "%s/%s", cwd, sub);
			spank_setenv(sp, "CUTRACE_DIR", abs, 1);
		} else {
			spank_setenv(sp, "CUTRACE_DIR", sub, 1);
		}
	} else {
		spank_setenv(sp, "CUTRACE_DIR", sub, 1);
	}
	if (spank_getenv(sp, "LD_PRELOAD", pre, sizeof pre) == ESPANK_SUCCESS && pre[0])
		snprintf(val, sizeof val, "%s %s", shim, pre);
	else
		snprintf(val, sizeof val, "%s", shim);
	spank_setenv(sp, "LD_PRELOAD", val, 1);
	return ESPANK_SUCCESS;
}

/* srun, once, when the step is over: the job summary on stderr */
int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	struct stat st;
	pid_t pid;
	int status;

	(void)sp;
	(void)ac;
	(void)av;
	if (!enabled || spank_context() != S_CTX_LOCAL || !job_dir[0])
		return ESPANK_SUCCESS;
	if (stat(job_dir, &st) != 0) {
		fprintf(stderr,
			"cutrace: no traces in %s: no task did anything CUDA-related (or it is not on a "
			"shared file system)\n",
			job_dir);
		return ESPANK_SUCCESS;
	}
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		dup2(2, 1);
		execl(cutrace, cutrace, "show", "--summary", job_dir, (char *)NULL);
		fprintf(stderr, "cutrace: cannot run %s: %s (plugstack.conf: cutrace=PATH)\n", cutrace,
			strerror(errno));
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	fprintf(stderr, "cutrace: traces in %s (cutrace show %s)\n", job_dir, job_dir);
	return ESPANK_SUCCESS;
}
