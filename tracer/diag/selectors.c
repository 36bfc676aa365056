/*
 * Device selectors (see selectors.h): CUDA_VISIBLE_DEVICES read the way the
 * driver reads it, NVIDIA_VISIBLE_DEVICES the way the container runtime does.
 */
#include "selectors.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *ct_sel_stop_text(enum ct_sel_stop stop)
{
	switch (stop) {
	case CT_SEL_END: return "is valid";
	case CT_SEL_EMPTY: return "is empty";
	case CT_SEL_NOT_INDEX: return "is neither a GPU index nor a GPU-/MIG- UUID";
	case CT_SEL_NEGATIVE: return "is negative";
	case CT_SEL_RANGE: return "is out of range";
	case CT_SEL_UUID: return "matches no GPU's UUID";
	case CT_SEL_AMBIGUOUS: return "is a UUID prefix that matches more than one GPU";
	case CT_SEL_MIG: return "is a MIG device, and no GPU here is in MIG mode";
	case CT_SEL_DUPLICATE: return "names a GPU a second time (a repeated GPU hides every GPU)";
	}
	return "?";
}

/* " 12abc" -> 12 (strtoul-like: leading blanks, an optional sign, digits,
 * the rest ignored); -2 when no digit, -1 for a negative number */
static long index_of(const char *t)
{
	int sign = 1;
	long v = 0;
	bool digit = false;

	while (*t == ' ' || *t == '\t')
		t++;
	if (*t == '+' || *t == '-')
		sign = *t++ == '-' ? -1 : 1;
	for (; *t >= '0' && *t <= '9'; t++) {
		digit = true;
		if (v < 100000000)
			v = v * 10 + (*t - '0');
	}
	if (!digit)
		return -2;
	return sign < 0 && v > 0 ? -1 : v;
}

static void stop_at(struct ct_sel *s, enum ct_sel_stop why, int pos, const char *tok)
{
	s->stop = why;
	s->stop_at = pos;
	snprintf(s->stop_tok, sizeof s->stop_tok, "%s", tok);
}

void ct_sel_cuda(const char *value, int ngpus, const char *const *uuids, int nuuids, struct ct_sel *s)
{
	bool all_uuids = ngpus > 0 && nuuids >= ngpus;
	bool unknown = false;
	int pos = 0;

	memset(s, 0, sizeof *s);
	s->stop_at = -1;
	for (int i = 0; all_uuids && i < ngpus; i++)
		if (!uuids[i] || !uuids[i][0])
			all_uuids = false;
	if (!value[0]) {
		stop_at(s, CT_SEL_EMPTY, 0, "");
		return;
	}
	for (const char *p = value;; pos++) {
		size_t n = strcspn(p, ",");
		char tok[96];
		int pick = -1;

		snprintf(tok, sizeof tok, "%.*s", (int)(n < sizeof tok - 1 ? n : sizeof tok - 1), p);
		/* blanks around an entry do not count */
		while (tok[0] == ' ' || tok[0] == '\t')
			memmove(tok, tok + 1, strlen(tok));
		for (size_t l = strlen(tok); l && (tok[l - 1] == ' ' || tok[l - 1] == '\t');)
			tok[--l] = 0;
		s->entries++;
		if (!strncasecmp(tok, "GPU-", 4)) {
			if (all_uuids) {
				size_t l = strlen(tok);
				for (int i = 0; i < ngpus; i++)
					if (l > 4 && !strncasecmp(uuids[i], tok, l))
						pick = pick == -1 ? i : -3;
				if (pick == -1 || pick == -3) {
					stop_at(s, pick == -1 ? CT_SEL_UUID : CT_SEL_AMBIGUOUS, pos, tok);
					break;
				}
			} else {
				unknown = true;
			}
		} else if (!strncasecmp(tok, "MIG-", 4)) {
			unknown = true; /* MIG UUIDs are not in /proc nor in the trace */
		} else {
			long v = index_of(tok);
			if (v == -2) {
				stop_at(s, CT_SEL_NOT_INDEX, pos, tok);
				break;
			}
			if (v == -1) {
				stop_at(s, CT_SEL_NEGATIVE, pos, tok);
				break;
			}
			if (ngpus >= 0 && v >= ngpus) {
				stop_at(s, CT_SEL_RANGE, pos, tok);
				break;
			}
			pick = (int)v;
		}
		if (pick >= 0) {
			for (int k = 0; k < s->visible && k < CT_SEL_MAX; k++)
				if (s->order[k] == pick) {
					stop_at(s, CT_SEL_DUPLICATE, pos, tok);
					s->visible = 0;
					return;
				}
			if (s->visible < CT_SEL_MAX)
				s->order[s->visible] = pick;
		}
		s->visible++;
		p += n;
		if (!*p)
			break;
		p++;
	}
	if (unknown)
		s->visible = -1;
}

int ct_sel_nvidia(const char *value)
{
	int n = 0;

	if (!value[0] || !strcasecmp(value, "void") || !strcasecmp(value, "none"))
		return -2;
	if (!strcasecmp(value, "all"))
		return -1;
	for (const char *p = value; *p; p++)
		n += *p == ',';
	return n + 1;
}
