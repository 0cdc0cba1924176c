/* libFuzzer's recommended dictionary: the comparison operands that mutations wrote into inputs
 * the corpus took, with how often, printed at the end of a run for a -dict file of the next. */
#ifndef SIFT_RECDICT_H
#define SIFT_RECDICT_H

#include "engine/core/dict.h"

#include <stddef.h>

typedef struct {
    sift_dict_entry *words;
    size_t *uses; /* per word: inputs taken that a mutation writing it made */
    size_t n, cap;
} sift_recdict;

/* The N operands TOKENS went into an input the corpus took. */
void sift_recdict_note(sift_recdict *r, const sift_dict_entry *tokens, unsigned n);

/* libFuzzer's block, "###### Recommended dictionary. ######" to its end line, of the words not
 * in MANUAL (-dict); nothing when none is left. */
void sift_recdict_print(const sift_recdict *r, const sift_dict *manual);

void sift_recdict_free(sift_recdict *r);

/* W as libFuzzer's PrintASCII writes a dictionary word: in double quotes, printable bytes as
 * they are, '\\' and '"' escaped, the others as \xNN, so that it reads back as a -dict entry.
 * Writes at most CAP bytes, NUL included (SIFT_RECDICT_QUOTED holds any word); returns the
 * length written. */
#define SIFT_RECDICT_QUOTED (4 * SIFT_DICT_MAX_ENTRY + 3)
size_t sift_recdict_quote(const sift_dict_entry *w, char *out, size_t cap);

#endif
