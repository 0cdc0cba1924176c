/* Small string helpers shared by sift-cc and sift-instrument. */
#ifndef SIFT_CC_TEXT_H
#define SIFT_CC_TEXT_H

/* A + B + C in a new allocation (free() it); NULL when out of memory. */
char *sift_cc_join3(const char *a, const char *b, const char *c);

#endif
