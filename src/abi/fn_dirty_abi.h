/* What sift-instrument compiles into a module for the function index of its edge counters
 * (docs/coverage-api.md), and the runtime reads. For every function that has sanitizer
 * coverage's pc table, in pc-table order, one byte in SIFT_FN_DIRTY_SECTION that the function
 * sets to 1 at its entry; a constructor passes the section's bounds to the hook, after
 * sanitizer coverage registered the module's counters and pc table. */
#ifndef SIFT_FN_DIRTY_ABI_H
#define SIFT_FN_DIRTY_ABI_H

#define SIFT_FN_DIRTY_SECTION   "__sift_fn_dirty"
#define SIFT_FN_DIRTY_INIT_HOOK "__sift_fn_dirty_init"
/* After sanitizer coverage's constructors (priority 2). */
#define SIFT_FN_DIRTY_CTOR_PRIORITY 3

#endif
