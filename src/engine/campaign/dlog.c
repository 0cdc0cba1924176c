/* The discovery log. One ring of bytes per producer: a producer that dies halfway through a
 * record never published it, so no reader can stall on it, which one ring shared by all would
 * have to guard against. The protocol is in docs/workers.md. */
#include "engine/campaign/dlog.h"
#include "engine/base/clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DLOG_MAGIC   0x31474f4c54464953ull /* "SIFTLOG1" */
#define FRAME_CHECK  0x5344521du
#define FRAME_BYTES  8u
#define HEADER_BYTES 184u /* the fixed part of a record after its frame */
#define HEX_NAME     40u

/* How long a producer sleeps while the supervisor makes room. */
#define FULL_WAIT_NS 200000
/* How far a producer may run ahead of the supervisor (or by one record, when that is larger):
 * what a ring holds undrained is what a stop has to save or drop, and how long a find waits to
 * be saved. Some hundreds of finds, a fraction of a second of the supervisor's saving. */
#define BACKLOG_BYTES ((size_t)64 * 1024)

static size_t round8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static size_t header_bytes(void)
{
    return (sizeof(sift_dlog_header) + 63) & ~(size_t)63;
}

size_t sift_dlog_bytes(unsigned nrings, size_t ring_bytes)
{
    if (nrings == 0 || ring_bytes < 4096 || (ring_bytes & (ring_bytes - 1))) return 0;
    size_t per = sizeof(sift_dlog_ring) + ring_bytes;
    if (per < ring_bytes || nrings > (SIZE_MAX - header_bytes()) / per) return 0;
    return header_bytes() + per * nrings;
}

void sift_dlog_init(sift_dlog *log, void *mem, unsigned nrings, size_t ring_bytes)
{
    log->hdr = mem;
    log->base = (uint8_t *)mem + header_bytes();
    log->nrings = nrings;
    log->ring_bytes = ring_bytes;
    log->hdr->magic = DLOG_MAGIC;
    log->hdr->nrings = nrings;
    log->hdr->ring_bytes = ring_bytes;
}

static sift_dlog_ring *ring_at(const sift_dlog *log, unsigned ring)
{
    return (sift_dlog_ring *)(log->base + (sizeof(sift_dlog_ring) + log->ring_bytes) * ring);
}

static uint8_t *ring_data(const sift_dlog *log, unsigned ring)
{
    return (uint8_t *)(ring_at(log, ring) + 1);
}

size_t sift_dlog_max_record(const sift_dlog *log)
{
    return log->ring_bytes / 2;
}

uint64_t sift_dlog_head(const sift_dlog *log, unsigned ring)
{
    return atomic_load_explicit(&ring_at(log, ring)->head, memory_order_acquire);
}

uint64_t sift_dlog_generation(const sift_dlog *log)
{
    return atomic_load_explicit(&log->hdr->published, memory_order_acquire);
}

void sift_dlog_release(sift_dlog *log, unsigned ring, uint64_t cursor)
{
    atomic_store_explicit(&ring_at(log, ring)->drained, cursor, memory_order_release);
}

void sift_dlog_close(sift_dlog *log)
{
    atomic_store_explicit(&log->hdr->closed, 1, memory_order_relaxed);
}

void sift_dlog_scratch_free(sift_dlog_scratch *s)
{
    free(s->buf);
    free(s->features);
    *s = (sift_dlog_scratch){0};
}

static int reserve_buf(sift_dlog_scratch *s, size_t n)
{
    if (n <= s->cap) return 0;
    size_t cap = s->cap ? s->cap : 4096;
    while (cap < n)
        cap *= 2;
    uint8_t *grown = realloc(s->buf, cap);
    if (!grown) return -1;
    s->buf = grown;
    s->cap = cap;
    return 0;
}

static size_t leb_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static uint8_t *put_leb(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static size_t feature_bytes(const sift_dlog_entry *e)
{
    size_t n = 0;
    sift_feature_id prev = 0;
    for (size_t i = 0; i < e->nfeatures; i++) {
        n += leb_size(e->features[i] - prev);
        prev = e->features[i];
    }
    return n;
}

size_t sift_dlog_record_size(const sift_dlog_entry *e)
{
    return round8(FRAME_BYTES + HEADER_BYTES + e->size + feature_bytes(e));
}

static uint8_t *put_u32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, sizeof v);
    return p + sizeof v;
}

static uint8_t *put_u64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, sizeof v);
    return p + sizeof v;
}

/* Names and operators are copied at their fixed widths, NUL-padded. */
static uint8_t *put_text(uint8_t *p, const char *s, size_t width)
{
    size_t n = strnlen(s, width);
    memcpy(p, s, n);
    memset(p + n, 0, width - n);
    return p + width;
}

static size_t encode(const sift_dlog_entry *e, uint8_t *out, size_t fbytes)
{
    size_t len = round8(FRAME_BYTES + HEADER_BYTES + e->size + fbytes);
    uint8_t *p = put_u32(out, (uint32_t)len);
    p = put_u32(p, (uint32_t)len ^ FRAME_CHECK);
    p = put_u32(p, e->flags);
    p = put_u32(p, e->origin);
    p = put_u64(p, e->exec_ns);
    p = put_u64(p, e->published_ns);
    p = put_u64(p, e->execs);
    p = put_text(p, e->name, HEX_NAME);
    p = put_text(p, e->parent, HEX_NAME);
    p = put_text(p, e->op, sizeof(e->op));
    p = put_u64(p, e->size);
    p = put_u64(p, e->nfeatures);
    p = put_u64(p, fbytes);
    if (e->size) memcpy(p, e->data, e->size);
    p += e->size;
    sift_feature_id prev = 0;
    for (size_t i = 0; i < e->nfeatures; i++) {
        p = put_leb(p, e->features[i] - prev);
        prev = e->features[i];
    }
    memset(p, 0, (size_t)(out + len - p));
    return len;
}

/* Ring offsets wrap: copies in and out go in up to two pieces. */
static void copy_in(uint8_t *ring, size_t ring_bytes, uint64_t pos, const uint8_t *src, size_t n)
{
    size_t at = (size_t)(pos & (ring_bytes - 1));
    size_t first = n < ring_bytes - at ? n : ring_bytes - at;
    memcpy(ring + at, src, first);
    memcpy(ring, src + first, n - first);
}

static void copy_out(const uint8_t *ring, size_t ring_bytes, uint64_t pos, uint8_t *dst, size_t n)
{
    size_t at = (size_t)(pos & (ring_bytes - 1));
    size_t first = n < ring_bytes - at ? n : ring_bytes - at;
    memcpy(dst, ring + at, first);
    memcpy(dst + first, ring, n - first);
}

int sift_dlog_publish(sift_dlog *log, unsigned ring, sift_dlog_entry *e, sift_dlog_scratch *s)
{
    size_t fbytes = feature_bytes(e);
    size_t len = round8(FRAME_BYTES + HEADER_BYTES + e->size + fbytes);
    if (e->size > log->ring_bytes || len > sift_dlog_max_record(log)) {
        errno = E2BIG;
        return -1;
    }
    if (reserve_buf(s, len) != 0) {
        errno = ENOMEM;
        return -1;
    }
    sift_dlog_ring *r = ring_at(log, ring);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t end = head + len;
    size_t backlog = log->ring_bytes < BACKLOG_BYTES ? log->ring_bytes : BACKLOG_BYTES;
    for (;;) {
        uint64_t drained = atomic_load_explicit(&r->drained, memory_order_acquire);
        if (end - drained <= (drained == head ? log->ring_bytes : backlog)) break;
        if (atomic_load_explicit(&log->hdr->closed, memory_order_relaxed)) {
            errno = ECANCELED;
            return -1;
        }
        struct timespec pause = {0, FULL_WAIT_NS};
        nanosleep(&pause, NULL);
    }
    e->published_ns = sift_now_ns();
    encode(e, s->buf, fbytes);
    /* A reader that copied bytes of this span checks RESERVE afterwards: announce the span
     * before touching it, and publish HEAD only once it is whole. */
    atomic_store_explicit(&r->reserve, end, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    copy_in(ring_data(log, ring), log->ring_bytes, head, s->buf, len);
    atomic_store_explicit(&r->head, end, memory_order_release);
    atomic_fetch_add_explicit(&log->hdr->published, 1, memory_order_release);
    return 0;
}

static uint32_t get_u32(const uint8_t **p)
{
    uint32_t v;
    memcpy(&v, *p, sizeof v);
    *p += sizeof v;
    return v;
}

static uint64_t get_u64(const uint8_t **p)
{
    uint64_t v;
    memcpy(&v, *p, sizeof v);
    *p += sizeof v;
    return v;
}

static void get_text(const uint8_t **p, char *out, size_t width)
{
    memcpy(out, *p, width);
    out[width] = '\0';
    *p += width;
}

/* Decodes a record that passed its frame check; -1 when its contents disagree with its length. */
static int decode(const uint8_t *rec, size_t len, sift_dlog_entry *e, sift_dlog_scratch *s)
{
    const uint8_t *p = rec + FRAME_BYTES, *end = rec + len;
    *e = (sift_dlog_entry){0};
    e->flags = get_u32(&p);
    e->origin = get_u32(&p);
    e->exec_ns = get_u64(&p);
    e->published_ns = get_u64(&p);
    e->execs = get_u64(&p);
    get_text(&p, e->name, HEX_NAME);
    get_text(&p, e->parent, HEX_NAME);
    memcpy(e->op, p, sizeof(e->op));
    e->op[sizeof(e->op) - 1] = '\0';
    p += sizeof(e->op);
    uint64_t size = get_u64(&p), nfeatures = get_u64(&p), fbytes = get_u64(&p);
    if (size > (size_t)(end - p) || fbytes > (size_t)(end - p) - size || nfeatures > fbytes)
        return -1;
    e->data = p;
    e->size = (size_t)size;
    p += size;
    if (nfeatures > s->fcap) {
        sift_feature_id *grown = realloc(s->features, nfeatures * sizeof(*grown));
        if (!grown) return -1;
        s->features = grown;
        s->fcap = nfeatures;
    }
    const uint8_t *fend = p + fbytes;
    sift_feature_id prev = 0;
    for (uint64_t i = 0; i < nfeatures; i++) {
        uint64_t v = 0;
        for (unsigned shift = 0;; shift += 7) {
            if (p == fend || shift > 63) return -1;
            uint8_t b = *p++;
            v |= (uint64_t)(b & 0x7f) << shift;
            if (!(b & 0x80)) break;
        }
        prev += v;
        s->features[i] = prev;
    }
    e->features = s->features;
    e->nfeatures = (size_t)nfeatures;
    return 0;
}

int sift_dlog_read(const sift_dlog *log, unsigned ring, uint64_t *cursor, sift_dlog_entry *e,
                   sift_dlog_scratch *s)
{
    sift_dlog_ring *r = ring_at(log, ring);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t at = *cursor;
    if (at == head) return 0;
    const uint8_t *data = ring_data(log, ring);
    uint8_t frame[FRAME_BYTES];
    if (head - at > log->ring_bytes) goto behind;
    copy_out(data, log->ring_bytes, at, frame, sizeof frame);
    uint32_t len, check;
    memcpy(&len, frame, sizeof len);
    memcpy(&check, frame + 4, sizeof check);
    if ((len ^ FRAME_CHECK) != check || len < FRAME_BYTES + HEADER_BYTES || (len & 7) ||
        len > head - at || reserve_buf(s, len) != 0)
        goto behind;
    copy_out(data, log->ring_bytes, at, s->buf, len);
    /* The producer announces a span in RESERVE before writing it: if RESERVE has come within a
     * ring of what was copied, the copy may be torn. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&r->reserve, memory_order_relaxed) - at > log->ring_bytes) goto behind;
    if (decode(s->buf, len, e, s) != 0) goto behind;
    *cursor = at + len;
    return 1;
behind:
    *cursor = atomic_load_explicit(&r->head, memory_order_acquire);
    return -1;
}
