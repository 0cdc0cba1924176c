/* Records of each input the corpus takes, for tools that study a campaign, as libFuzzer writes
 * them: its features into -features_dir, and how it was made into -mutation_graph_file. */
#ifndef SIFT_FINDS_H
#define SIFT_FINDS_H

#include "engine/base/options.h"
#include "engine/core/corpus.h"

#include <stddef.h>

/* Records the input named NAME (its SHA-1) with its N features IDS, made from the entry named
 * BASE by the operators TRACE ("-" separated); BASE is NULL for a seed. Either record is kept
 * only when O asks for it. A file that cannot be written is skipped: the campaign goes on. */
void sift_finds_record(const sift_options *o, const char *name, const sift_feature_id *ids,
                       size_t n, const char *base, const char *trace);

#endif
