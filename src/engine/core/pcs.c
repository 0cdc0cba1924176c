/* Covered program counters, reported as libFuzzer reports them (pcs.h). */
#include "engine/core/pcs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A sanitizer runtime's, when one is linked in. */
extern void __sanitizer_symbolize_pc(void *pc, const char *fmt, char *out, size_t size)
    __attribute__((weak));

/* The PC tables hold the address of each block's counter update; the symbolizer describes the
 * instruction after it, as libFuzzer's GetNextInstructionPc does on x86. */
static void describe(uintptr_t pc, const char *fmt, char *out, size_t cap)
{
    out[0] = 0;
    if (__sanitizer_symbolize_pc) __sanitizer_symbolize_pc((void *)(pc + 1), fmt, out, cap);
    if (!out[0]) snprintf(out, cap, "%p", (void *)(pc + 1));
}

bool sift_pcs_wanted(const sift_options *o)
{
    return o->print_pcs || o->print_funcs || o->exit_on_src_pos || o->print_coverage ||
           o->print_full_coverage;
}

static bool is_covered(const sift_pcs *p, size_t i)
{
    return i < p->cap && p->covered[i / 64] >> (i % 64) & 1;
}

/* The edges domain's index of an edges feature: its counter, less the count's bucket. */
static size_t edge_of(sift_feature_id id)
{
    return (size_t)(id >> 3 & (((uint64_t)1 << 37) - 1));
}

/* Marks edge I covered; false when it was already, or out of memory. */
static bool cover(sift_pcs *p, size_t i)
{
    if (i >= p->cap) {
        size_t cap = (i / 64 + 1) * 64 * 2, words = cap / 64, old = p->cap / 64;
        uint64_t *grown = realloc(p->covered, words * sizeof(*grown));
        if (!grown) return false;
        memset(grown + old, 0, (words - old) * sizeof(*grown));
        p->covered = grown;
        p->cap = cap;
    }
    if (is_covered(p, i)) return false;
    p->covered[i / 64] |= (uint64_t)1 << (i % 64);
    return true;
}

/* The module of RT that edge I belongs to, with its PC table; NULL for none. */
static const sift_rt_pcs *module_of(const sift_rt_state *rt, size_t i)
{
    for (size_t m = 0; m < rt->npcs; m++)
        if (rt->pcs[m].pcs && i >= rt->pcs[m].first && i - rt->pcs[m].first < rt->pcs[m].len)
            return &rt->pcs[m];
    return NULL;
}

static void check_src_pos(const sift_options *o, uintptr_t pc)
{
    char where[1024];
    describe(pc, "%F %L", where, sizeof where);
    if (!strstr(where, o->exit_on_src_pos)) return;
    fprintf(stderr, "INFO: found line matching '%s', exiting.\n", o->exit_on_src_pos);
    fflush(stderr);
    _Exit(0);
}

void sift_pcs_observe(sift_pcs *p, const sift_options *o, const sift_rt_state *rt,
                      const sift_feature_id *ids, size_t n, bool report)
{
    /* Up to -print_funcs of the functions first covered, of how many. */
    uintptr_t funcs[64];
    size_t nfuncs = 0, shown = o->print_funcs < 64 ? (size_t)o->print_funcs : 64;
    for (size_t k = 0; k < n; k++) {
        if (sift_feature_domain(ids[k]) != SIFT_DOMAIN_EDGES) continue;
        size_t i = edge_of(ids[k]);
        if (!cover(p, i) || !report) continue;
        const sift_rt_pcs *m = module_of(rt, i);
        if (!m) continue;
        uintptr_t pc = m->pcs[2 * (i - m->first)], flags = m->pcs[2 * (i - m->first) + 1];
        char where[1024];
        if (o->print_pcs) {
            describe(pc, "%p %F %L", where, sizeof where);
            fprintf(stderr, "\tNEW_PC: %s\n", where);
        }
        if (flags & 1 && nfuncs++ < shown) funcs[nfuncs - 1] = pc;
        if (o->exit_on_src_pos) check_src_pos(o, pc);
    }
    for (size_t k = 0; k < nfuncs && k < shown; k++) {
        char where[1024];
        describe(funcs[k], "%p %F %L", where, sizeof where);
        fprintf(stderr, "\tNEW_FUNC[%zu/%zu]: %s\n", k + 1, nfuncs, where);
    }
}

bool sift_pcs_function_entry(const sift_rt_state *rt, const char *name, size_t *edge)
{
    for (size_t m = 0; m < rt->npcs; m++) {
        const sift_rt_pcs *mod = &rt->pcs[m];
        for (size_t i = 0; mod->pcs && i < mod->len; i++) {
            if (!(mod->pcs[2 * i + 1] & 1)) continue;
            char func[1024];
            describe(mod->pcs[2 * i], "%F", func, sizeof func);
            /* The symbolizer's "in f0"; its bare address when it knows no name. */
            if (strcmp(strncmp(func, "in ", 3) ? func : func + 3, name) != 0) continue;
            *edge = mod->first + i;
            return true;
        }
    }
    return false;
}

bool sift_pcs_features_hold(const sift_feature_id *ids, size_t n, size_t edge)
{
    for (size_t k = 0; k < n; k++)
        if (sift_feature_domain(ids[k]) == SIFT_DOMAIN_EDGES && edge_of(ids[k]) == edge)
            return true;
    return false;
}

/* One function of module M, its PCs FIRST..LAST-1 (FIRST its entry), as -print_coverage (or
 * with FULL, -print_full_coverage) lists it. */
static void print_function(const sift_pcs *p, const sift_rt_pcs *m, size_t first, size_t last,
                           bool full)
{
    char file[512], func[512], line[64], where[600];
    uintptr_t entry = m->pcs[2 * first];
    describe(entry, "%s", file, sizeof file);
    describe(entry, "%F", func, sizeof func);
    describe(entry, "%l", line, sizeof line);
    const char *name = strncmp(func, "in ", 3) == 0 ? func + 3 : func;
    size_t covered = 0;
    for (size_t i = first; i < last; i++)
        covered += is_covered(p, m->first + i);
    if (full) {
        for (int want = 0; want < 2; want++) {
            fputc(want ? 'C' : 'U', stderr);
            for (size_t i = first; i < last; i++)
                if (is_covered(p, m->first + i) == want) {
                    describe(m->pcs[2 * i], " %l", where, sizeof where);
                    fputs(where, stderr);
                }
            fputc('\n', stderr);
        }
        return;
    }
    bool hit = is_covered(p, m->first + first);
    fprintf(stderr, "%sCOVERED_FUNC: hits: %d edges: %zu/%zu %s %s:%s\n", hit ? "" : "UN",
            hit ? 1 : 0, covered, last - first, name, file, line);
    for (size_t i = first; hit && i < last; i++)
        if (!is_covered(p, m->first + i)) {
            describe(m->pcs[2 * i], "%s:%l", where, sizeof where);
            fprintf(stderr, "  UNCOVERED_PC: %s\n", where);
        }
}

void sift_pcs_print_coverage(const sift_pcs *p, const sift_options *o, const sift_rt_state *rt)
{
    for (int full = 0; full < 2; full++) {
        if (!(full ? o->print_full_coverage : o->print_coverage)) continue;
        if (!__sanitizer_symbolize_pc) {
            fprintf(stderr, "INFO: __sanitizer_symbolize_pc is not available, not printing "
                            "coverage\n");
            return;
        }
        fprintf(stderr, full ? "FULL COVERAGE:\n" : "COVERAGE:\n");
        for (size_t k = 0; k < rt->npcs; k++) {
            const sift_rt_pcs *m = &rt->pcs[k];
            for (size_t first = 0; m->pcs && first < m->len;) {
                size_t last = first + 1;
                while (last < m->len && !(m->pcs[2 * last + 1] & 1))
                    last++;
                print_function(p, m, first, last, full);
                first = last;
            }
        }
    }
}

void sift_pcs_free(sift_pcs *p)
{
    free(p->covered);
    *p = (sift_pcs){0};
}
