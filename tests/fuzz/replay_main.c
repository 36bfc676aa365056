/*
 * Replays files through the fuzz target (fuzz_trace.c) without libFuzzer:
 *   fuzz_replay FILE|DIR...
 * Every regular file named (or found, not recursively, in a DIR) is one input.
 * A crash or sanitizer report fails the run; so does finding no input at all
 * (a missing regression directory must not pass silently).
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		perror(path);
		return -1;
	}
	for (;;) {
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			unsigned char *nb = realloc(buf, ncap);
			if (!nb) {
				fclose(f);
				free(buf);
				fprintf(stderr, "%s: out of memory\n", path);
				return -1;
			}
			buf = nb;
			cap = ncap;
		}
		n = fread(buf + len, 1, cap - len, f);
		if (n == 0)
			break;
		len += n;
	}
	fclose(f);
	/* an exact-size heap copy: ASan then sees any read past the input */
	unsigned char *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, int *count)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!d) {
		perror(dir);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		char *p;
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		if (asprintf(&p, "%s/%s", dir, de->d_name) < 0)
			return -1;
		if (stat(p, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(p);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			names = realloc(names, cap * sizeof *names);
			if (!names)
				return -1;
		}
		names[n++] = p;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		if (replay_file(names[i]) < 0)
			rc = -1;
		else
			(*count)++;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int count = 0, rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: fuzz_replay FILE|DIR...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			rc = 1;
		} else if (S_ISDIR(st.st_mode)) {
			if (replay_dir(argv[i], &count) < 0)
				rc = 1;
		} else if (replay_file(argv[i]) < 0) {
			rc = 1;
		} else {
			count++;
		}
	}
	printf("replayed %d input(s)\n", count);
	if (count == 0) {
		fprintf(stderr, "fuzz_replay: no input found\n");
		return 1;
	}
	return rc;
}
