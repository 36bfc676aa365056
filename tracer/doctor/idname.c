/*
 * User and group names for doctor's device-node lines, read from
 * /etc/passwd and /etc/group (name:password:id:...) rather than through
 * getpwuid/getgrgid: those go through NSS, which in the static one-file
 * cutrace would dlopen the NSS modules of whatever glibc the machine has.
 * The owners of /dev/nvidia* are local accounts (root, a video or render
 * group); an id found in neither file is printed as a number.
 */
#include "idname.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ct_id_name(const char *file, unsigned id, char *buf, size_t len)
{
	char line[1024];
	FILE *f = fopen(file, "re");
	int found = -1;

	if (!f)
		return -1;
	while (found < 0 && fgets(line, sizeof line, f)) {
		char *name = line, *c1 = strchr(line, ':'), *c2, *end;
		unsigned long v;

		if (!c1 || c1 == line || !(c2 = strchr(c1 + 1, ':')))
			continue;
		v = strtoul(c2 + 1, &end, 10);
		if (end == c2 + 1 || *end != ':' || v != id)
			continue;
		*c1 = 0;
		if (strlen(name) < len) {
			memcpy(buf, name, strlen(name) + 1);
			found = 0;
		}
	}
	fclose(f);
	return found;
}
