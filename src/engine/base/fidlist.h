/* An entry's dense feature indices, packed: ascending, each stored as its distance from the one
 * before in LEB128 (7 bits a byte, the high bit set on every byte but a number's last). The
 * indices are handed out in order of discovery, and an input has most of the features found
 * early, so most distances take one byte where a plain list takes four: these lists are most of
 * a large target's corpus memory (docs/scheduling.md). */
#ifndef SIFT_FIDLIST_H
#define SIFT_FIDLIST_H

#include <stddef.h>
#include <stdint.h>

/* The most bytes N indices can take. */
static inline size_t sift_fidlist_bound(size_t n)
{
    return n * 5;
}

/* Sorts the N distinct indices at FIDS in place (with SCRATCH, room for N more) and writes them
 * packed to OUT, which has room for sift_fidlist_bound(N) bytes. Returns the bytes written. */
size_t sift_fidlist_pack(uint32_t *fids, size_t n, uint32_t *scratch, uint8_t *out);

/* A reader of a packed list; it knows nothing of the list's length, which its owner keeps. */
typedef struct {
    const uint8_t *at;
    uint32_t fid; /* the index read last */
} sift_fidlist_reader;

static inline sift_fidlist_reader sift_fidlist_read(const uint8_t *packed)
{
    return (sift_fidlist_reader){.at = packed, .fid = 0};
}

/* The next index of the list: the caller reads no more of them than the list holds. */
static inline uint32_t sift_fidlist_next(sift_fidlist_reader *r)
{
    uint32_t b = *r->at++, step = b & 0x7f;
    for (unsigned shift = 7; b & 0x80; shift += 7) {
        b = *r->at++;
        step |= (b & 0x7f) << shift;
    }
    return r->fid += step;
}

#endif
