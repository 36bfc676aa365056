/*
 * Redaction of secrets in command lines and environment values (redact.h).
 * Written for the shim's constructor: no allocation, no stdio, no locale.
 */
#include "redact.h"

#include <string.h>

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* word w (lower case) occurs in s[0, n), any case */
static bool has_word(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);

	for (size_t i = 0; i + k <= n; i++) {
		size_t j = 0;
		while (j < k && lower(s[i + j]) == w[j])
			j++;
		if (j == k)
			return true;
	}
	return false;
}

/* s[0, n) ends with word w (lower case), any case */
static bool ends_with(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);

	if (n < k)
		return false;
	for (size_t j = 0; j < k; j++)
		if (lower(s[n - k + j]) != w[j])
			return false;
	return true;
}

static bool any_word(const char *s, size_t n, const char *const *words)
{
	for (int i = 0; words[i]; i++)
		if (has_word(s, n, words[i]))
			return true;
	return false;
}

bool ct_secret_name(const char *name, size_t n)
{
	static const char *const words[] = { "token", "secret", "pass",    "pwd", "key",
					     "auth",  "cred",   "private", NULL };
	return any_word(name, n, words);
}

bool ct_secret_option(const char *name, size_t n)
{
	static const char *const words[] = { "token", "passw",      "passphrase", "secret",
					     "key",   "credential", NULL };
	return any_word(name, n, words);
}

/* an option name whose value is a place, not the secret (--token-file PATH) */
static bool names_place(const char *name, size_t n)
{
	static const char *const ends[] = { "file", "path", "dir", "env", "url", "var", NULL };
	for (int i = 0; ends[i]; i++)
		if (ends_with(name, n, ends[i]))
			return true;
	return false;
}

/* ---- the output buffer ------------------------------------------------------ */
struct ob {
	char *p;
	size_t len, cap;
};

static void put(struct ob *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n && o->len < o->cap; i++)
		o->p[o->len++] = s[i];
}

static void put_redacted(struct ob *o)
{
	put(o, CT_REDACTED, sizeof CT_REDACTED - 1);
}

/* ---- tokens and URL credentials inside a string -------------------------------- */
/* the length of a known token at s[0, n) (0: none) and of its kept prefix */
static size_t token_at(const char *s, size_t n, size_t *keep)
{
	static const struct {
		const char *prefix;
		unsigned min; /* characters after the prefix */
		bool dash;    /* '-' and '_' are part of the token */
	} tok[] = {
		{ "hf_", 16, false },        { "ghp_", 20, false },  { "gho_", 20, false },
		{ "ghu_", 20, false },       { "ghs_", 20, false },  { "ghr_", 20, false },
		{ "github_pat_", 20, true }, { "glpat-", 16, true }, { "xoxb-", 10, true },
		{ "xoxa-", 10, true },       { "xoxp-", 10, true },  { "xoxo-", 10, true },
		{ "xoxs-", 10, true },       { "xoxr-", 10, true },  { "AKIA", 16, false },
	};
	for (size_t i = 0; i < sizeof tok / sizeof tok[0]; i++) {
		size_t k = strlen(tok[i].prefix), j;
		if (n < k || memcmp(s, tok[i].prefix, k))
			continue;
		for (j = k; j < n && (alnum(s[j]) || (tok[i].dash && (s[j] == '-' || s[j] == '_'))); j++)
			;
		if (j - k >= tok[i].min) {
			*keep = k;
			return j;
		}
	}
	return 0;
}

/* the userinfo of a URL whose "://" is at s[i]: [i + 3, at) or 0 */
static size_t url_userinfo_end(const char *s, size_t n, size_t i)
{
	size_t at = 0;

	for (size_t j = i + 3; j < n; j++) {
		char c = s[j];
		if (c == '/' || c == '?' || c == '#' || c == 0 || c == ' ')
			break;
		if (c == '@')
			at = j;
	}
	return at;
}

static void put_clean(struct ob *o, const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t keep, t;
		if ((i == 0 || !alnum(s[i - 1])) && (t = token_at(s + i, n - i, &keep)) != 0) {
			put(o, s + i, keep);
			put_redacted(o);
			i += t;
			continue;
		}
		if (i + 3 <= n && !memcmp(s + i, "://", 3)) {
			size_t at = url_userinfo_end(s, n, i);
			if (at) {
				put(o, "://", 3);
				put_redacted(o);
				i = at; /* the '@' and the host follow */
				continue;
			}
		}
		put(o, s + i, 1);
		i++;
	}
}

size_t ct_redact_str(const char *in, size_t n, char *out, size_t cap)
{
	struct ob o = { out, 0, cap ? cap - 1 : 0 };

	if (!cap)
		return 0;
	put_clean(&o, in, n);
	out[o.len] = 0;
	return o.len;
}

/* NAME=VALUE with NAME an identifier (A-Z a-z 0-9 _ . -, not starting with '-') */
static size_t assignment_name(const char *a, size_t n)
{
	size_t i = 0;

	if (!n || a[0] == '-')
		return 0;
	while (i < n && (alnum(a[i]) || a[i] == '_' || a[i] == '.' || a[i] == '-'))
		i++;
	return i < n && a[i] == '=' && i > 0 ? i : 0;
}

size_t ct_redact_argv(const char *in, size_t n, char *out, size_t cap)
{
	struct ob o = { out, 0, cap };
	bool next_secret = false;
	size_t i = 0;

	while (i < n) {
		const char *a = in + i;
		size_t len = 0, eq, name_len;

		while (i + len < n && a[len])
			len++;
		if (next_secret && !(len >= 2 && a[0] == '-' && a[1] == '-')) {
			/* the value of the option before */
			put_redacted(&o);
			next_secret = false;
		} else if (len >= 2 && a[0] == '-') {
			const char *name = a + (a[1] == '-' ? 2 : 1);
			next_secret = false;
			for (eq = 0; name + eq < a + len && name[eq] != '='; eq++)
				;
			if (ct_secret_option(name, eq) && !names_place(name, eq)) {
				if (name + eq < a + len) {
					put(&o, a, (size_t)(name - a) + eq + 1);
					put_redacted(&o);
				} else {
					put(&o, a, len);
					next_secret = true;
				}
			} else {
				put_clean(&o, a, len);
			}
		} else if ((name_len = assignment_name(a, len)) && ct_secret_name(a, name_len) &&
			   !names_place(a, name_len)) {
			next_secret = false;
			put(&o, a, name_len + 1);
			put_redacted(&o);
		} else {
			next_secret = false;
			put_clean(&o, a, len);
		}
		i += len;
		if (i < n) {
			put(&o, "", 1); /* the NUL separator */
			i++;
		}
	}
	return o.len;
}
