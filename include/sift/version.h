/* sift's release version, printed by the tools. */
#ifndef SIFT_VERSION_H
#define SIFT_VERSION_H

#define SIFT_VERSION "0.1.0"

#endif
