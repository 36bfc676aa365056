/*
 * tests/rooms: a file that pretends to be in the read room and calls the
 * diagnosis, a room above it.  Its door check (tests.cmake) must fail to
 * link with "undefined reference to `ct_verdict_line'".  Not part of any
 * product.
 */
#include <stdio.h>

struct ct_verdict;
/* diag.h is not on the read room's include path: declared by hand, as a
 * careless change would */
void ct_verdict_line(FILE *f, const struct ct_verdict *v);
void ct_canary_backward(void);

void ct_canary_backward(void)
{
	ct_verdict_line(stderr, NULL);
}
