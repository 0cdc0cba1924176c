/* Sorting lists of unsigned integer keys in place, for the corpus's feature lists: a least
 * significant digit radix sort, since a comparison sort through a function pointer (qsort) was
 * a twentieth of a libxml2 campaign, spent on every kept input. */
#ifndef SIFT_RADIX_H
#define SIFT_RADIX_H

#include <stddef.h>
#include <stdint.h>

/* Sort the N keys at KEYS ascending; TMP has room for N keys, and its contents are lost. */
void sift_radix_sort32(uint32_t *keys, uint32_t *tmp, size_t n);
void sift_radix_sort64(uint64_t *keys, uint64_t *tmp, size_t n);

#endif
