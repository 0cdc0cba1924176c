/* sift show DIR: the summary of a campaign's output folder and its coverage plot. */
#ifndef SIFT_CLI_SHOW_H
#define SIFT_CLI_SHOW_H

#include <stdio.h>

/* ARGV[0] is "show". Returns the exit status: 0, 1 for a folder it cannot read as an output
 * folder (one line on stderr), 2 for a usage error. */
int sift_show_main(int argc, char **argv);

void sift_show_usage(FILE *out);

#endif
