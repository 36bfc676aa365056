/*
 * Sets written short (ranges.c): numbers as ranges ("0-511", "100-140,200")
 * and host names as a Slurm hostlist ("node[01-64]", "gpu[1-3,7],login1"),
 * for job summaries of thousands of processes.
 */
#ifndef CT_RANGES_H
#define CT_RANGES_H

#include <stddef.h>
#include <stdint.h>

/*
 * Sorts v[0..n) in place, drops the duplicates and writes the values into
 * buf (size bytes, always NUL-terminated when size > 0) as comma-separated
 * ranges: "0-511", "100-140,200", "-3--1,5" for negative ones.  What does not
 * fit is cut at a whole item and marked ",..." ("..." alone when not even the
 * first fits).  Returns the number of distinct values.
 */
size_t ct_ranges_ints(char *buf, size_t size, int64_t *v, size_t n);

/*
 * Host names as a hostlist, the form Slurm reads and prints (scontrol show
 * hostnames): names that differ only in their last run of digits share one
 * bracket, "node[01-64]", "rack1-n[1-4].ib"; zero-padded numbers stay in
 * their width ("n[08-10]"; "n9" and "n10" make "n[9-10]"), a name alone or
 * without digits is written as it is, groups are sorted and separated by
 * commas: "gpu[1-3,7],login1".  Sorts the pointers in hosts[0..n) (not the
 * strings), drops duplicates, NULLs and empty names; cut like ct_ranges_ints (",..." and
 * "...]" inside a bracket).  Returns the number of distinct names.
 */
size_t ct_ranges_hosts(char *buf, size_t size, const char **hosts, size_t n);

#endif
