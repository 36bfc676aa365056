/*
 * The kernel log's NVIDIA lines (/dev/kmsg, readable by root or where
 * kernel.dmesg_restrict is 0): the last line of each kind that explains a
 * CUDA start-up failure, and the decoding of "RmInitAdapter failed!
 * (0xSTAGE:0xSTATUS:LINE)" (tracer/decode/ABI.md Appendix B).  Used by doctor;
 * optional everywhere: an unreadable log is reported, never an error.
 */
#ifndef CT_KMSG_H
#define CT_KMSG_H

#include <stdbool.h>
#include <stdint.h>

enum ct_kmsg_kind {
	CT_KMSG_RMINIT,     /* "RmInitAdapter failed! (0x62:0x40:2168)" */
	CT_KMSG_NEEDS_OPEN, /* "... requires use of the NVIDIA open kernel modules" */
	CT_KMSG_LEGACY, /* "... supported through the NVIDIA 580.xx Legacy drivers" / "will ignore this GPU" */
	CT_KMSG_FIRMWARE,     /* "loading .../gsp_*.bin failed", "Cannot initialize GSP firmware RM" */
	CT_KMSG_FELL_OFF,     /* "GPU has fallen off the bus" */
	CT_KMSG_API_MISMATCH, /* "API mismatch: the client ..." */
	CT_KMSG_KEY_REJECTED, /* nvidia: "Key was rejected by service", "module verification failed" */
	CT_KMSG_XID,          /* "NVRM: Xid (PCI:...): N, ..." */
	CT_KMSG__N
};

struct ct_kmsg {
	bool read;                  /* the log was read */
	int err;                    /* errno of the open when not */
	unsigned records;           /* lines looked at */
	char line[CT_KMSG__N][200]; /* the last line of each kind, "" none */
	/* the last RmInitAdapter line, decoded */
	bool rminit;
	unsigned stage, status, src_line;
};

/* read the log at path (normally "/dev/kmsg"; a regular file of kmsg
 * records or of dmesg lines in tests), at most max_records records */
void ct_kmsg_scan(const char *path, unsigned max_records, struct ct_kmsg *k);

/* "FIRMWARE_INIT_FAILED" ... for an RmInitAdapter stage code; NULL unknown */
const char *ct_rminit_stage_name(unsigned stage);
/* what the stage means in a sentence ("the GSP firmware did not start") */
const char *ct_rminit_stage_text(unsigned stage);

#endif
