/* The supervisor's setup from the command line and the folders. */
#ifndef SIFT_SUPER_SETUP_H
#define SIFT_SUPER_SETUP_H

#include "engine/campaign/super_state.h"

/* Checks the flags and folders, lists the saved inputs, maps the shared memory and opens the
 * logs. Prints one line and returns non-zero when it cannot go on. */
int sift_super_setup(sift_super *s);

/* Removes -fork's temporary log folder, if any. */
void sift_super_remove_tmp_logs(sift_super *s);

#endif
