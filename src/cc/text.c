/* Small string helpers shared by sift-cc and sift-instrument. */
#include "cc/text.h"

#include <stdlib.h>
#include <string.h>

char *sift_cc_join3(const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char *out = malloc(la + lb + lc + 1);
    if (!out) return NULL;
    memcpy(out, a, la);
    memcpy(out + la, b, lb);
    memcpy(out + la + lb, c, lc + 1);
    return out;
}
