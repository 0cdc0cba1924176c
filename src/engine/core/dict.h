/* Dictionaries in the AFL/libFuzzer format: name="value" lines with \xNN escapes. */
#ifndef SIFT_DICT_H
#define SIFT_DICT_H

#include <stddef.h>
#include <stdint.h>

#define SIFT_DICT_MAX_ENTRY 128

typedef struct {
    uint8_t data[SIFT_DICT_MAX_ENTRY];
    uint8_t len;
} sift_dict_entry;

typedef struct {
    sift_dict_entry *entries;
    size_t count, cap;
    size_t error_line; /* the line of the last parse error (1 = the first), 0 for none */
} sift_dict;

/* Adds one entry (1..SIFT_DICT_MAX_ENTRY bytes); duplicates are kept once. -1 on bad length or
 * no memory. */
int sift_dict_add(sift_dict *d, const uint8_t *data, size_t len);

/* Parses the dictionary file PATH into D. On error writes "PATH:LINE: problem" into ERR and
 * returns -1 (entries parsed before the error are left in D). */
int sift_dict_load(sift_dict *d, const char *path, char *err, size_t errlen);

/* Parses dictionary text TEXT (LEN bytes); NAME is used in error messages. */
int sift_dict_parse(sift_dict *d, const char *name, const char *text, size_t len, char *err,
                    size_t errlen);

void sift_dict_free(sift_dict *d);

#endif
