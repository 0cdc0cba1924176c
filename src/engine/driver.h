/* The harness binary's entry: parses flags, then reproduces, merges, minimises or fuzzes. */
#ifndef SIFT_DRIVER_H
#define SIFT_DRIVER_H

#include "engine/core/fuzzer.h"

/* Everything main() does; returns the process exit code. */
int sift_driver_main(int argc, char **argv, sift_target_fn target) SIFT_FRAME(sift_driver_main);

#endif
