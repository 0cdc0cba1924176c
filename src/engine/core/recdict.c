/* libFuzzer's recommended dictionary (recdict.h). */
#include "engine/core/recdict.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libFuzzer's bound on its persistent auto-dictionary: past it, new words are dropped, so that a
 * campaign that keeps finding operands keeps neither growing memory nor slower notes. */
#define RECDICT_MAX_WORDS (1u << 14)

static bool same(const sift_dict_entry *a, const sift_dict_entry *b)
{
    return a->len == b->len && !memcmp(a->data, b->data, a->len);
}

void sift_recdict_note(sift_recdict *r, const sift_dict_entry *tokens, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        size_t i = 0;
        while (i < r->n && !same(&r->words[i], &tokens[k]))
            i++;
        if (i == r->n) {
            if (r->n == RECDICT_MAX_WORDS) continue;
            if (r->n == r->cap) {
                size_t cap = r->cap ? r->cap * 2 : 16;
                sift_dict_entry *words = realloc(r->words, cap * sizeof(*words));
                if (words) r->words = words;
                size_t *uses = words ? realloc(r->uses, cap * sizeof(*uses)) : NULL;
                if (!uses) return; /* a hint less; the campaign goes on */
                r->uses = uses;
                r->cap = cap;
            }
            r->words[r->n] = tokens[k];
            r->uses[r->n++] = 0;
        }
        r->uses[i]++;
    }
}

static bool in_dict(const sift_dict *d, const sift_dict_entry *w)
{
    for (size_t i = 0; i < d->count; i++)
        if (same(&d->entries[i], w)) return true;
    return false;
}

size_t sift_recdict_quote(const sift_dict_entry *w, char *out, size_t cap)
{
    size_t len = 0;
    if (!cap) return 0;
    out[0] = '\0';
    len += (size_t)snprintf(out, cap, "\"");
    for (size_t i = 0; i < w->len && len < cap; i++) {
        unsigned char c = w->data[i];
        if (c == '\\' || c == '"')
            len += (size_t)snprintf(out + len, cap - len, "\\%c", c);
        else if (c >= 32 && c < 127)
            len += (size_t)snprintf(out + len, cap - len, "%c", c);
        else
            len += (size_t)snprintf(out + len, cap - len, "\\x%02x", c);
    }
    if (len < cap) len += (size_t)snprintf(out + len, cap - len, "\"");
    return len < cap ? len : cap - 1;
}

void sift_recdict_print(const sift_recdict *r, const sift_dict *manual)
{
    bool any = false;
    for (size_t i = 0; i < r->n; i++) {
        if (in_dict(manual, &r->words[i])) continue;
        if (!any) fprintf(stderr, "###### Recommended dictionary. ######\n");
        any = true;
        char quoted[SIFT_RECDICT_QUOTED];
        sift_recdict_quote(&r->words[i], quoted, sizeof quoted);
        fprintf(stderr, "%s # Uses: %zu\n", quoted, r->uses[i]);
    }
    if (any) fprintf(stderr, "###### End of recommended dictionary. ######\n");
}

void sift_recdict_free(sift_recdict *r)
{
    free(r->words);
    free(r->uses);
    *r = (sift_recdict){0};
}
