/* Entries of zero bytes with the features listed, for the tests of the corpus and of its
 * scheduler. Included after cmocka.h. */
#ifndef SIFT_TEST_CORPUS_ADD_H
#define SIFT_TEST_CORPUS_ADD_H

#include "engine/core/corpus.h"

/* Adds an input of SIZE zero bytes named NAME with the features listed. */
static inline sift_entry *add_list(sift_corpus *c, const char *name, size_t size, uint64_t exec_ns,
                                   const sift_feature_id *f, size_t n)
{
    static const uint8_t zeros[128];
    assert_true(size <= sizeof(zeros));
    return sift_corpus_add(c, zeros, size, f, n, exec_ns, name, 0);
}

#define add(c, name, size, exec_ns, ...)                                                           \
    add_list(c, name, size, exec_ns, (const sift_feature_id[]){__VA_ARGS__},                       \
             sizeof((const sift_feature_id[]){__VA_ARGS__}) / sizeof(sift_feature_id))

#endif
