/*
 * rel_plant DIR WHAT N PROGRAM [ARGS...]: plant something where the shim
 * will create its trace file, then run PROGRAM there.
 *
 * The child is forked first and waits; its pid and REL_FAKE_REALTIME_NS
 * (which librel_fakeclock.so makes the shim see as its start time) give the
 * exact names the shim tries: DIR/HOST-PID-NS.cutrace, then
 * DIR/HOST-PID-NS-K.cutrace for K = 1..7.  The first N names get WHAT:
 *   symlink  a symbolic link to DIR/../victim (a file the test watches)
 *   file     a regular file holding "precious\n"
 *   fifo     a named pipe (opening it for writing would block)
 * Then the child execs PROGRAM; rel_plant exits with its status.  The
 * planted names are written to DIR/../planted, one per line.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

static void sanitize(char *s)
{
	/* the shim keeps [A-Za-z0-9._-] of the host name and turns the rest into '_' */
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '-' || *s == '.' || *s == '_'))
			*s = '_';
}

int main(int argc, char **argv)
{
	int go[2], st;
	char host[128], path[4096], victim[4096], list[4096];
	struct utsname u;
	const char *ns = getenv("REL_FAKE_REALTIME_NS");
	FILE *lf;

	if (argc < 5 || !ns) {
		fprintf(stderr, "usage: REL_FAKE_REALTIME_NS=N rel_plant DIR symlink|file|fifo N PROGRAM [ARGS...]\n");
		return 2;
	}
	const char *dir = argv[1], *what = argv[2];
	int n = atoi(argv[3]);
	if (uname(&u) < 0 || pipe(go) < 0)
		return 2;
	snprintf(host, sizeof host, "%s", u.nodename);
	sanitize(host);
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		close(go[0]);
		execvp(argv[4], argv + 4);
		_exit(127);
	}
	close(go[0]);
	snprintf(victim, sizeof victim, "%s/../victim", dir);
	snprintf(list, sizeof list, "%s/../planted", dir);
	lf = fopen(list, "w");
	for (int k = 0; k < n && k < 8; k++) {
		if (k == 0)
			snprintf(path, sizeof path, "%s/%s-%d-%s.cutrace", dir, host, (int)pid, ns);
		else
			snprintf(path, sizeof path, "%s/%s-%d-%s-%d.cutrace", dir, host, (int)pid, ns, k);
		int r = -1;
		if (!strcmp(what, "symlink"))
			r = symlink(victim, path);
		else if (!strcmp(what, "fifo"))
			r = mkfifo(path, 0666);
		else {
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
			r = fd >= 0 && write(fd, "precious\n", 9) == 9 ? close(fd) : -1;
		}
		if (r < 0) {
			fprintf(stderr, "rel_plant: %s: %s\n", path, strerror(errno));
			return 2;
		}
		if (lf)
			fprintf(lf, "%s\n", path);
	}
	if (lf)
		fclose(lf);
	if (write(go[1], "x", 1) != 1)
		return 2;
	close(go[1]);
	if (waitpid(pid, &st, 0) != pid)
		return 2;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
