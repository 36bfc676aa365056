/*
 * Secrets kept out of trace files: the command line and the environment
 * variables the shim records (shim/trace.c) go through these first, and
 * `cutrace show` applies the same to traces written before.  No allocation,
 * no stdio: the shim calls them in its constructor's room (HACKING.md).
 */
#ifndef CT_REDACT_H
#define CT_REDACT_H

#include <stdbool.h>
#include <stddef.h>

/* What replaces a secret value. */
#define CT_REDACTED "***"

/*
 * Copy the NUL-separated argument vector in[0, n) to out (cap bytes) with
 * the values of secret-looking options and arguments replaced by
 * CT_REDACTED:
 *  - --NAME=VALUE and -NAME=VALUE, and the argument after --NAME / -NAME
 *    (unless it starts with "--"), where NAME contains (any case) token,
 *    passw, passphrase, secret, key or credential (ct_secret_option), unless
 *    it names a place (file, path, dir, env, url or var ends the name:
 *    --token-file keeps its path);
 *  - NAME=VALUE arguments whose NAME looks like a secret variable
 *    (ct_secret_name: env HF_TOKEN=... cmd);
 *  - tokens in any argument: hf_..., ghp_/gho_/ghu_/ghs_/ghr_..., github_pat_...,
 *    glpat-..., xox[abposr]-..., AKIA... (the prefix is kept);
 *  - the user:password of URLs (scheme://USERINFO@host).
 * Returns the bytes written to out (at most cap; an argument cut by cap is
 * still NUL-terminated when it fits).
 */
size_t ct_redact_argv(const char *in, size_t n, char *out, size_t cap);

/* The same for one string (an environment value, a single argument): tokens
 * and URL credentials.  Returns the length written (out NUL-terminated). */
size_t ct_redact_str(const char *in, size_t n, char *out, size_t cap);

/* true when a variable NAME of n bytes looks like it holds a secret: it
 * contains (any case) TOKEN, SECRET, PASS, PWD, KEY, AUTH, CRED or PRIVATE */
bool ct_secret_name(const char *name, size_t n);
/* the same for an option name (without its dashes): token, passw,
 * passphrase, secret, key, credential (not --author, --passes) */
bool ct_secret_option(const char *name, size_t n);

#endif
