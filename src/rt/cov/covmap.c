/* Coverage maps: registering counter arrays, and reading them out (take, export, reset). */
#include "rt/cov/scan.h"

#include <stdlib.h>
#include <string.h>

#define EXPORT_MAGIC "SFX1"

const char *sift_strerror(int status)
{
    switch (status) {
    case SIFT_OK:
        return "success";
    case SIFT_EINVAL:
        return "invalid argument (null pointer, unknown domain or bad size)";
    case SIFT_ESHAPE:
        return "domain sizes do not match (snapshot or export of another map's shape)";
    case SIFT_ENOMEM:
        return "out of memory";
    case SIFT_ESPACE:
        return "output buffer too small";
    case SIFT_EFORMAT:
        return "malformed coverage export";
    default:
        return "unknown error";
    }
}

sift_covmap *sift_covmap_new(void)
{
    return calloc(1, sizeof(sift_covmap));
}

void sift_covmap_free(sift_covmap *map)
{
    if (!map) return;
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++) {
        sift_domain_map *dom = &map->domains[d];
        for (size_t i = 0; i < dom->nregions; i++) {
            if (dom->regions[i].owned) {
                free(dom->regions[i].counters);
                free(dom->regions[i].dirty);
            }
            free(dom->regions[i].fn_start);
        }
        free(dom->regions);
    }
    free(map);
}

static sift_domain_map *domain_of(const sift_covmap *map, sift_domain domain)
{
    if (!map || (unsigned)domain >= SIFT_DOMAIN_COUNT) return NULL;
    return (sift_domain_map *)&map->domains[domain];
}

static int add_region(sift_covmap *map, sift_domain domain, sift_region r, size_t *first)
{
    sift_domain_map *dom = domain_of(map, domain);
    if (!dom || !r.counters || r.len == 0 || r.len > SIFT_DOMAIN_MAX_LEN - dom->size)
        return SIFT_EINVAL;
    if (dom->nregions == dom->cap) {
        size_t cap = dom->cap ? dom->cap * 2 : 4;
        sift_region *grown = realloc(dom->regions, cap * sizeof(*grown));
        if (!grown) return SIFT_ENOMEM;
        dom->regions = grown;
        dom->cap = cap;
    }
    r.first = dom->size;
    dom->regions[dom->nregions++] = r;
    dom->size += r.len;
    if (first) *first = r.first;
    return SIFT_OK;
}

int sift_covmap_alloc(sift_covmap *map, sift_domain domain, size_t len, uint8_t **counters,
                      size_t *first)
{
    if (!domain_of(map, domain) || len == 0 || len > SIFT_DOMAIN_MAX_LEN) return SIFT_EINVAL;
    size_t lines = (len + SIFT_LINE - 1) / SIFT_LINE;
    sift_region r = {.len = len, .owned = true};
    r.counters = aligned_alloc(SIFT_LINE, lines * SIFT_LINE);
    r.dirty = calloc(lines, 1);
    if (!r.counters || !r.dirty) {
        free(r.counters);
        free(r.dirty);
        return SIFT_ENOMEM;
    }
    memset(r.counters, 0, lines * SIFT_LINE);
    int rc = add_region(map, domain, r, first);
    if (rc != SIFT_OK) {
        free(r.counters);
        free(r.dirty);
        return rc;
    }
    if (counters) *counters = r.counters;
    return SIFT_OK;
}

int sift_covmap_attach(sift_covmap *map, sift_domain domain, uint8_t *counters, size_t len,
                       size_t *first)
{
    sift_region r = {.counters = counters, .len = len};
    return add_region(map, domain, r, first);
}

int sift_covmap_index_functions(sift_covmap *map, sift_domain domain, size_t first, uint8_t *dirty,
                                const uint32_t *starts, size_t n)
{
    sift_domain_map *dom = domain_of(map, domain);
    if (!dom || !dirty || !starts || n == 0 || n > SIFT_DOMAIN_MAX_LEN || starts[0] != 0)
        return SIFT_EINVAL;
    sift_region *r = NULL;
    for (size_t i = 0; i < dom->nregions && !r; i++)
        if (dom->regions[i].first == first) r = &dom->regions[i];
    if (!r || r->dirty || r->fn_dirty) return SIFT_EINVAL;
    for (size_t k = 1; k < n; k++)
        if (starts[k] < starts[k - 1] || starts[k] > r->len) return SIFT_EINVAL;
    uint32_t *copy = malloc((n + 1) * sizeof(*copy));
    if (!copy) return SIFT_ENOMEM;
    memcpy(copy, starts, n * sizeof(*copy));
    copy[n] = (uint32_t)r->len;
    r->fn_dirty = dirty;
    r->fn_start = copy;
    r->nfns = n;
    return SIFT_OK;
}

size_t sift_covmap_size(const sift_covmap *map, sift_domain domain)
{
    const sift_domain_map *dom = domain_of(map, domain);
    return dom ? dom->size : 0;
}

int sift_covmap_counters(sift_covmap *map, sift_domain domain, size_t first, sift_counters *out)
{
    sift_domain_map *dom = domain_of(map, domain);
    if (!dom || !out) return SIFT_EINVAL;
    for (size_t i = 0; i < dom->nregions; i++) {
        sift_region *r = &dom->regions[i];
        if (r->dirty && first >= r->first && first < r->first + r->len) {
            *out = (sift_counters){r->counters, r->dirty, r->len};
            return SIFT_OK;
        }
    }
    return SIFT_EINVAL;
}

typedef struct {
    uint8_t *out;
} take_ctx;

static bool take_line(void *ctx, uint8_t *counters, size_t len, size_t first)
{
    take_ctx *t = ctx;
    sift_scan_classify(counters, len, t->out + first);
    memset(counters, 0, len);
    return true;
}

int sift_covmap_take(sift_covmap *map, sift_domain domain, uint8_t *out, size_t cap)
{
    sift_domain_map *dom = domain_of(map, domain);
    if (!dom || !out) return SIFT_EINVAL;
    if (cap < dom->size) return SIFT_ESPACE;
    memset(out, 0, dom->size);
    take_ctx t = {out};
    sift_scan_domain(dom, take_line, &t, true);
    return SIFT_OK;
}

static bool reset_line(void *ctx, uint8_t *counters, size_t len, size_t first)
{
    (void)ctx;
    (void)first;
    memset(counters, 0, len);
    return true;
}

int sift_covmap_reset(sift_covmap *map, unsigned mask)
{
    if (!map || (mask & ~SIFT_DOMAINS_ALL)) return SIFT_EINVAL;
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++)
        if (mask & SIFT_DOMAIN_BIT(d)) sift_scan_domain(&map->domains[d], reset_line, NULL, true);
    return SIFT_OK;
}

/* Export writer: counts every byte, stores only those that fit. */
typedef struct {
    uint8_t *buf;
    size_t cap, len;
    size_t next; /* index after the previous entry */
} export_ctx;

static void put_byte(export_ctx *e, uint8_t b)
{
    if (e->len < e->cap) e->buf[e->len] = b;
    e->len++;
}

static void put_varint(export_ctx *e, size_t v)
{
    while (v >= 0x80) {
        put_byte(e, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    put_byte(e, (uint8_t)v);
}

static bool export_line(void *ctx, uint8_t *counters, size_t len, size_t first)
{
    export_ctx *e = ctx;
    for (size_t i = 0; i < len; i++) {
        if (!counters[i]) continue;
        put_varint(e, first + i - e->next);
        put_byte(e, sift_bucket_table[counters[i]]);
        e->next = first + i + 1;
    }
    return true;
}

int sift_covmap_export(sift_covmap *map, unsigned mask, uint8_t *buf, size_t cap, size_t *len)
{
    if (!map || !len || (!buf && cap) || (mask & ~SIFT_DOMAINS_ALL)) return SIFT_EINVAL;
    export_ctx e = {.buf = buf, .cap = cap};
    for (size_t i = 0; i < 4; i++)
        put_byte(&e, (uint8_t)EXPORT_MAGIC[i]);
    unsigned present = 0;
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++)
        if ((mask & SIFT_DOMAIN_BIT(d)) && map->domains[d].size) present |= SIFT_DOMAIN_BIT(d);
    put_byte(&e, (uint8_t)present);
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++)
        if (present & SIFT_DOMAIN_BIT(d)) put_varint(&e, map->domains[d].size);
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++) {
        if (!(present & SIFT_DOMAIN_BIT(d))) continue;
        e.next = 0;
        sift_scan_domain(&map->domains[d], export_line, &e, false);
        put_varint(&e, 0); /* an entry with no bucket ends the domain */
        put_byte(&e, 0);
    }
    *len = e.len;
    if (e.len > cap) return SIFT_ESPACE;
    return sift_covmap_reset(map, present);
}

static int get_varint(const uint8_t **p, const uint8_t *end, size_t *v)
{
    size_t out = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*p >= end) return SIFT_EFORMAT;
        uint8_t b = *(*p)++;
        out |= (size_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = out;
            return SIFT_OK;
        }
    }
    return SIFT_EFORMAT;
}

/* Reads the header: which domains the export holds and their sizes. */
static int read_shape(const uint8_t **p, const uint8_t *end, unsigned *present,
                      size_t sizes[SIFT_DOMAIN_COUNT])
{
    if (end - *p < 5 || memcmp(*p, EXPORT_MAGIC, 4) != 0) return SIFT_EFORMAT;
    *p += 4;
    *present = *(*p)++;
    if (*present & ~SIFT_DOMAINS_ALL) return SIFT_EFORMAT;
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++) {
        sizes[d] = 0;
        if ((*present & SIFT_DOMAIN_BIT(d)) && (get_varint(p, end, &sizes[d]) != SIFT_OK ||
                                                sizes[d] == 0 || sizes[d] > SIFT_DOMAIN_MAX_LEN))
            return SIFT_EFORMAT;
    }
    return SIFT_OK;
}

int sift_export_shape(const uint8_t *buf, size_t len, size_t sizes[SIFT_DOMAIN_COUNT])
{
    if (!buf || !sizes) return SIFT_EINVAL;
    unsigned present;
    return read_shape(&buf, buf + len, &present, sizes);
}

int sift_export_foreach(const uint8_t *buf, size_t len, sift_export_fn fn, void *ctx)
{
    if (!buf || !fn) return SIFT_EINVAL;
    const uint8_t *p = buf, *end = buf + len;
    unsigned present;
    size_t sizes[SIFT_DOMAIN_COUNT];
    int rc = read_shape(&p, end, &present, sizes);
    if (rc != SIFT_OK) return rc;
    for (int d = 0; d < SIFT_DOMAIN_COUNT; d++) {
        if (!(present & SIFT_DOMAIN_BIT(d))) continue;
        for (size_t next = 0, gap;;) {
            if (get_varint(&p, end, &gap) != SIFT_OK || p >= end) return SIFT_EFORMAT;
            uint8_t buckets = *p++;
            if (!buckets) break;
            if (gap >= sizes[d] - next || (buckets & (buckets - 1))) return SIFT_EFORMAT;
            next += gap;
            fn(ctx, (sift_domain)d, next, buckets);
            next++;
        }
    }
    return p == end ? SIFT_OK : SIFT_EFORMAT;
}
