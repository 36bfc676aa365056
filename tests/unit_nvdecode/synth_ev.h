/*
 * Build one ioctl event in memory, field by field, the way shim/capture.c
 * records it (enter: FD, NODE, REQUEST, ARGP, BLOCK_SIZE, BLOCK...; exit:
 * BLOCK, PAYLOAD_SIZE, PAYLOAD, STRING, INJECT), for feeding ct_nv_decode.
 */
#ifndef CT_TEST_SYNTH_EV_H
#define CT_TEST_SYNTH_EV_H

#include <stdint.h>
#include <string.h>

#include "ring.h"
#include "trace.h"

#define SEV_CAP 12288

struct sev {
	struct cutrace_record eh, xh;
	struct cutrace_exit xe;
	unsigned char ef[SEV_CAP], xf[SEV_CAP];
	uint32_t elen, xlen;
	struct ct_event ev;
};

#define NODE_CTL      ((uint32_t)CT_NODE_CTL << 16 | 255u)
#define NODE_GPU(n)   ((uint32_t)CT_NODE_GPU << 16 | (n))
#define NODE_UVM      ((uint32_t)CT_NODE_UVM << 16)
#define NODE_TOOLS    ((uint32_t)CT_NODE_UVM_TOOLS << 16 | 1u)
#define NODE_CAPS(n)  ((uint32_t)CT_NODE_CAPS << 16 | (n))
#define NODE_OTHER    ((uint32_t)CT_NODE_OTHER << 16)

static inline void sev_efield(struct sev *s, uint16_t tag, const void *d, uint16_t len)
{
	s->elen = (uint32_t)(ct_put_field(s->ef + s->elen, tag, d, len) - s->ef);
}

static inline void sev_xfield(struct sev *s, uint16_t tag, const void *d, uint16_t len)
{
	s->xlen = (uint32_t)(ct_put_field(s->xf + s->xlen, tag, d, len) - s->xf);
}

static inline void sev_e32(struct sev *s, uint16_t tag, uint32_t v) { sev_efield(s, tag, &v, 4); }
static inline void sev_e64(struct sev *s, uint16_t tag, uint64_t v) { sev_efield(s, tag, &v, 8); }
static inline void sev_x32(struct sev *s, uint16_t tag, uint32_t v) { sev_xfield(s, tag, &v, 4); }

/* an ioctl enter record; size = the BLOCK_SIZE the shim would record */
static inline void sev_ioctl(struct sev *s, int fd, uint32_t node, uint64_t req, uint32_t size)
{
	memset(s, 0, sizeof *s);
	s->eh.type = CT_REC_ENTER;
	s->eh.call = CT_CALL_ioctl;
	s->eh.seq = 10;
	sev_e32(s, CT_FLD_FD, (uint32_t)fd);
	sev_e32(s, CT_FLD_NODE, node);
	sev_e64(s, CT_FLD_REQUEST, req);
	sev_e64(s, CT_FLD_ARGP, 0x7ffd00001000ull);
	sev_e32(s, CT_FLD_BLOCK_SIZE, size);
}

/* a BLOCK_TAIL field: u32 offset, then the bytes */
static inline void sev_tail(struct sev *s, int exit_rec, uint32_t off, const void *d, uint16_t len)
{
	unsigned char b[4 + 64];
	memcpy(b, &off, 4);
	memcpy(b + 4, d, len > 64 ? 64 : len);
	if (exit_rec)
		sev_xfield(s, CT_FLD_BLOCK_TAIL, b, (uint16_t)(4 + (len > 64 ? 64 : len)));
	else
		sev_efield(s, CT_FLD_BLOCK_TAIL, b, (uint16_t)(4 + (len > 64 ? 64 : len)));
}

static inline void sev_exit(struct sev *s, int64_t ret, int32_t err)
{
	s->xh.type = CT_REC_EXIT;
	s->xh.call = CT_CALL_ioctl;
	s->xh.seq = 11;
	s->xe.enter_seq = 10;
	s->xe.ret = ret;
	s->xe.err = ret < 0 ? err : 0;
	s->ev.has_exit = true;
}

static inline void sev_inject(struct sev *s, uint32_t rule, uint32_t action)
{
	uint32_t v[2] = { rule, action };
	sev_xfield(s, CT_FLD_INJECT, v, sizeof v);
	s->xh.flags |= CT_RF_INJECTED;
}

static inline const struct ct_event *sev_done(struct sev *s)
{
	struct ct_event *e = &s->ev;
	bool has_exit = e->has_exit;

	memset(e, 0, sizeof *e);
	e->seq = s->eh.seq;
	e->call = CT_CALL_ioctl;
	e->type = CT_REC_ENTER;
	e->has_enter = true;
	e->has_exit = has_exit;
	e->enter.hdr = &s->eh;
	e->enter.fields = s->ef;
	e->enter.fields_len = s->elen;
	e->flags = s->eh.flags;
	if (has_exit) {
		e->ret = s->xe.ret;
		e->err = s->xe.err;
		e->exit.hdr = &s->xh;
		e->exit.exit = &s->xe;
		e->exit.fields = s->xf;
		e->exit.fields_len = s->xlen;
		e->flags |= s->xh.flags;
	}
	return e;
}

/* little-endian stores into a block under construction */
static inline void put32(unsigned char *b, uint32_t off, uint32_t v) { memcpy(b + off, &v, 4); }
static inline void put64(unsigned char *b, uint32_t off, uint64_t v) { memcpy(b + off, &v, 8); }

#endif
