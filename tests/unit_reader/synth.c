/* Synthetic cutrace files for tests (synth.h). */
#include "synth.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int ct_synth_create(struct ct_synth *s, const char *path, uint64_t size, uint64_t ctx_cap)
{
	struct cutrace_header *h;

	memset(s, 0, offsetof(struct ct_synth, buf));
	s->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (s->fd < 0)
		return -1;
	if (ftruncate(s->fd, (off_t)size) < 0)
		goto fail;
	s->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->map == MAP_FAILED)
		goto fail;
	s->size = size;
	h = s->hdr = s->map;
	if (ct_ring_layout(h, size, ctx_cap) < 0) {
		munmap(s->map, size);
		goto fail;
	}
	/* what shim/trace.c create_trace() fills in */
	memcpy(h->magic, CUTRACE_MAGIC, 8);
	h->endian = CUTRACE_ENDIAN_PROBE;
	h->version_major = CUTRACE_VERSION_MAJOR;
	h->version_minor = CUTRACE_VERSION_MINOR;
	h->header_size = sizeof *h;
	h->slot_size = CUTRACE_SLOT_SIZE;
	h->word_size = sizeof(void *);
	h->flags = CT_HF_EXITED;
	h->pid = CT_SYNTH_PID;
	h->ppid = 1;
	h->uid = h->euid = 1000;
	h->gid = h->egid = 1000;
	h->start_realtime_ns = 1700000000ull * 1000000000ull;
	h->start_mono_ns = 5000000000ull;
	h->create_realtime_ns = h->start_realtime_ns + 1000;
	h->create_mono_ns = h->start_mono_ns + 1000;
	h->writer_version = 100;
	ct_ring_attach(&s->ring, s->map);
	s->ctx = (unsigned char *)s->map + h->ctx_off;
	s->clock = h->start_mono_ns + 1000000;
	return 0;
fail:
	close(s->fd);
	s->fd = -1;
	return -1;
}

void ct_synth_close(struct ct_synth *s)
{
	if (s->map && s->map != MAP_FAILED)
		munmap(s->map, s->size);
	if (s->fd >= 0)
		close(s->fd);
	s->map = NULL;
	s->fd = -1;
}

void ct_synth_ctx(struct ct_synth *s, uint16_t tag, const void *data, uint16_t len)
{
	unsigned char *base = (unsigned char *)s->map + s->hdr->ctx_off;

	if ((uint64_t)(s->ctx - base) + ct_field_size(len) > s->hdr->ctx_cap)
		return;
	s->ctx = ct_put_field(s->ctx, tag, data, len);
	s->hdr->ctx_len = (uint64_t)(s->ctx - base);
}

void ct_synth_ctx_str(struct ct_synth *s, uint16_t tag, const char *str)
{
	ct_synth_ctx(s, tag, str, (uint16_t)strlen(str));
}

void ct_synth_clock(struct ct_synth *s, uint64_t t_ns)
{
	s->clock = t_ns;
}

void ct_synth_begin(struct ct_synth *s, unsigned type, unsigned call, uint32_t tid)
{
	memset(&s->rec, 0, sizeof s->rec);
	memset(&s->x, 0, sizeof s->x);
	s->rec.type = (uint16_t)type;
	s->rec.call = (uint16_t)call;
	s->rec.tid = tid;
	s->len = 0;
}

void ct_synth_exit_info(struct ct_synth *s, uint64_t enter_seq, int64_t ret, int32_t err)
{
	s->x.enter_seq = enter_seq;
	s->x.ret = ret;
	s->x.err = err;
}

void ct_synth_flags(struct ct_synth *s, uint32_t flags)
{
	s->rec.flags |= flags;
}

void ct_synth_field(struct ct_synth *s, uint16_t tag, const void *data, uint16_t len)
{
	uint32_t room = (uint32_t)sizeof s->buf - 64;

	if (s->len + ct_field_size(len) > room)
		return;
	s->len = (uint32_t)(ct_put_field(s->buf + s->len, tag, data, len) - s->buf);
}

void ct_synth_u32(struct ct_synth *s, uint16_t tag, uint32_t v) { ct_synth_field(s, tag, &v, 4); }
void ct_synth_u64(struct ct_synth *s, uint16_t tag, uint64_t v) { ct_synth_field(s, tag, &v, 8); }
void ct_synth_i64(struct ct_synth *s, uint16_t tag, int64_t v) { ct_synth_field(s, tag, &v, 8); }
void ct_synth_str(struct ct_synth *s, uint16_t tag, const char *str)
{
	ct_synth_field(s, tag, str, (uint16_t)strlen(str));
}

static uint32_t head_size(const struct ct_synth *s)
{
	return (uint32_t)sizeof s->rec + (s->rec.type == CT_REC_EXIT ? (uint32_t)sizeof s->x : 0);
}

void ct_synth_pad_to(struct ct_synth *s, uint32_t size)
{
	uint32_t have = head_size(s) + s->len;

	if (size <= have + sizeof(struct cutrace_field))
		return;
	/* one filler field, as shim/trace.c ct_w_commit leaves the unused room */
	uint32_t len = size - have - (uint32_t)sizeof(struct cutrace_field);
	static const unsigned char zeros[CUTRACE_MAX_RECORD];

	len &= ~3u;
	ct_synth_field(s, CT_FLD_FILLER, zeros, (uint16_t)(len > 0xfff0 ? 0xfff0 : len));
}

static int64_t commit(struct ct_synth *s, bool torn)
{
	uint32_t hs = head_size(s);
	struct ct_slot slot;
	unsigned char *p;

	if (ct_ring_reserve(&s->ring, hs + s->len, &slot) < 0)
		return -1;
	/* reserve filled seq and size; the rest is ours */
	s->rec.seq = slot.seq;
	s->rec.size = slot.size;
	s->rec.t_ns = s->clock;
	s->clock += 1000;
	p = (unsigned char *)slot.rec;
	memcpy(p, &s->rec, sizeof s->rec);
	if (s->rec.type == CT_REC_EXIT)
		memcpy(p + sizeof s->rec, &s->x, sizeof s->x);
	memcpy(p + hs, s->buf, s->len);
	if (!torn)
		ct_ring_commit(&s->ring, &slot);
	return (int64_t)slot.seq;
}

int64_t ct_synth_commit(struct ct_synth *s) { return commit(s, false); }
int64_t ct_synth_commit_torn(struct ct_synth *s) { return commit(s, true); }

uint64_t ct_synth_enter(struct ct_synth *s, unsigned call, uint32_t tid)
{
	ct_synth_begin(s, CT_REC_ENTER, call, tid);
	return (uint64_t)ct_synth_commit(s);
}

uint64_t ct_synth_exit(struct ct_synth *s, unsigned call, uint32_t tid, uint64_t enter_seq,
		       int64_t ret, int32_t err)
{
	ct_synth_begin(s, CT_REC_EXIT, call, tid);
	ct_synth_exit_info(s, enter_seq, ret, err);
	return (uint64_t)ct_synth_commit(s);
}
