/* The supervisor's setup: flags and folders checked, saved inputs listed, shared memory mapped,
 * logs opened. */
#define _GNU_SOURCE
#include "engine/campaign/super_setup.h"
#include "engine/base/limits.h"
#include "engine/campaign/store.h"
#include "engine/core/seeds.h"
#include "rt/rt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SIFT_SUPER_MAX_WORKERS 1024

/* Smallest first, as libFuzzer loads seeds; on a tie the queue's copy runs first, so that
 * another copy of the same input adds nothing and is not written to the queue again. */
static int by_size(const void *a, const void *b)
{
    const sift_replay_item *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? -1 : 1;
    return (x->data > y->data) - (x->data < y->data);
}

static int list_inputs(sift_super *s)
{
    const sift_options *o = s->o;
    size_t from_queue = 0;
    if (s->has_out && sift_outdir_list_queue(&s->out, &s->paths) != 0) return -1;
    from_queue = s->paths.count;
    size_t first_dir_end = from_queue;
    char err[4352];
    for (size_t i = 0; i < o->ninputs; i++) {
        if (sift_fs_list(&s->paths, o->inputs[i], err, sizeof err) != 0) {
            fprintf(stderr, "sift: corpus folder %s\n", err);
            return -1;
        }
        if (i == 0) first_dir_end = s->paths.count;
    }
    if (o->seed_inputs && sift_seeds_add_inputs(o->seed_inputs, &s->paths) != 0) return -1;
    if (s->paths.skipped)
        fprintf(stderr, "sift: corpus: skipped %zu entries that are not readable files (%s%s)\n",
                s->paths.skipped, s->paths.skipped > 1 ? "first: " : "", s->paths.first_skip);
    size_t n = s->paths.count ? s->paths.count : 1;
    s->items = calloc(n, sizeof(*s->items));
    s->info = calloc(n, sizeof(*s->info));
    if (!s->items || !s->info) return -1;
    size_t largest = 0;
    for (size_t i = 0; i < s->paths.count; i++) {
        struct stat st;
        s->items[i].path = s->paths.paths[i];
        s->items[i].size = stat(s->paths.paths[i], &st) == 0 ? (size_t)st.st_size : 0;
        /* Sorting moves items: the data pointer carries the index to the info array. */
        s->items[i].data = (const uint8_t *)(uintptr_t)(i + 1);
        if (s->items[i].size > largest) largest = s->items[i].size;
    }
    qsort(s->items, s->paths.count, sizeof(*s->items), by_size);
    for (size_t i = 0; i < s->paths.count; i++) {
        size_t was = (size_t)(uintptr_t)s->items[i].data - 1;
        s->items[i].data = NULL;
        const char *base = strrchr(s->items[i].path, '/') + 1;
        sift_super_item *it = &s->info[i];
        it->base = base;
        it->queue_id = -1;
        if (was < from_queue) {
            it->where = SIFT_ON_QUEUE | (strstr(base, ",orig:") ? SIFT_ON_SEED : 0);
            it->queue_id = sift_outdir_id(base);
        } else {
            it->where = was < first_dir_end ? SIFT_ON_DIR : SIFT_ON_SEED;
        }
    }
    s->nitems = s->paths.count;
    if (!s->nitems) {
        /* Nothing saved: the campaign starts from one newline, as libFuzzer does. */
        static const uint8_t newline[] = "\n";
        s->items[0] = (sift_replay_item){.data = newline, .size = 1};
        s->info[0] = (sift_super_item){.where = SIFT_ON_SEED, .queue_id = -1, .base = "newline"};
        s->nitems = 1;
    }
    s->max_len = sift_max_len(o->max_len, largest);
    return 0;
}

static int open_log(sift_super *s, unsigned k, const char *dir)
{
    char path[4096];
    if (k == s->n)
        snprintf(path, sizeof path, "%s/sync.log", dir);
    else if (s->has_out)
        snprintf(path, sizeof path, "%s/worker-%u.log", dir, k);
    else
        snprintf(path, sizeof path, "%s/fuzz-%u.log", dir, k);
    s->logs[k] = open(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (s->logs[k] < 0) {
        fprintf(stderr, "sift: cannot create the log %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int check_args(sift_super *s)
{
    const sift_options *o = s->o;
    if (s->n > SIFT_SUPER_MAX_WORKERS) {
        fprintf(stderr, "sift: -jobs=%u: at most %d workers run at once (set -workers)\n", s->n,
                SIFT_SUPER_MAX_WORKERS);
        return -1;
    }
    for (size_t i = 0; i < o->ninputs; i++) {
        int dir = sift_fs_is_dir(o->inputs[i]);
        if (dir != 1) {
            fprintf(stderr, "sift: %s: %s\n", o->inputs[i],
                    dir < 0 ? strerror(errno) : "not a folder (-workers fuzzes corpus folders)");
            return -1;
        }
    }
    if (!o->sync_dir != !o->name) {
        fprintf(stderr, "sift: %s needs %s\n", o->sync_dir ? "-sync_dir" : "-name",
                o->sync_dir ? "-name=NAME" : "-sync_dir=DIR");
        return -1;
    }
    return 0;
}

/* The dictionary is the workers' to use, but read here first, as libFuzzer's -fork parent
 * does: a malformed one stops the campaign before it starts, and the "Dictionary: N entries"
 * line that ClusterFuzz reads as dict_used is in the campaign's own output. */
static int check_dict(const sift_options *o)
{
    if (!o->dict) return 0;
    sift_dict d = {0};
    char err[512];
    int rc = sift_dict_load(&d, o->dict, err, sizeof err);
    if (rc != 0)
        sift_fuzzer_dict_error(&d, err);
    else
        fprintf(stderr, "Dictionary: %zu entries\n", d.count);
    sift_dict_free(&d);
    return rc;
}

/* The output folder (-out, or the one -sync_dir gives) and the corpus folder, locked, with
 * what a killed campaign left half-written removed; 0, or 1 after a line that says why. */
static int open_folders(sift_super *s)
{
    sift_options *o = s->o;
    const char *out = o->out;
    if (o->sync_dir) {
        if (!(s->sync = sift_sync_open(o->sync_dir, o->name, sift_seed_read_max(o->max_len))))
            return 1;
        if (out && strcmp(out, sift_sync_out(s->sync)) != 0) {
            fprintf(stderr, "sift: -out=%s: with -sync_dir the output folder is %s\n", out,
                    sift_sync_out(s->sync));
            return 1;
        }
        out = sift_sync_out(s->sync);
    }
    if (out) {
        if (sift_outdir_open(&s->out, out) != 0) return 1;
        s->has_out = true;
    }
    const char *corpus_dir = o->ninputs ? o->inputs[0] : NULL;
    size_t cleaned = s->has_out ? s->out.cleaned : 0;
    char err[4352];
    if (corpus_dir && (s->corpus_lock = sift_fs_lock(corpus_dir, err, sizeof err)) < 0) {
        fprintf(stderr, "sift: corpus folder %s\n", err);
        return 1;
    }
    if (corpus_dir) cleaned += sift_outdir_clean(corpus_dir);
    if (cleaned)
        fprintf(stderr, "INFO: removed %zu partial files left by a killed campaign\n", cleaned);
    return 0;
}

/* The memory the workers share (rings, the snapshot) and the supervisor's own tables. */
static int map_shared(sift_super *s)
{
    sift_rt_state *rt = sift_rt();
    size_t cap[SIFT_DOMAIN_COUNT];
    if (!rt) {
        fprintf(stderr, "sift: out of memory setting up coverage maps\n");
        return 1;
    }
    if (s->o->verbosity) sift_exec_print_modules(rt);
    sift_exec_capacity(rt, cap);
    /* A ring holds several of the largest records, so that a burst of finds rarely waits. */
    size_t ring = 1u << 20;
    while (ring / 4 < s->max_len + (64u << 10))
        ring *= 2;
    if (sift_shared_map(&s->sh, s->n, s->n + 1, ring, cap) != 0 ||
        sift_shared_snapshot(&s->sh, &s->snap) != SIFT_OK) {
        fprintf(stderr, "sift: cannot map %u workers' shared memory: %s\n", s->n, strerror(errno));
        return 1;
    }
    s->slots = calloc(s->n, sizeof(*s->slots));
    s->logs = malloc((s->n + 1) * sizeof(*s->logs));
    s->cursors = calloc(s->n + 1, sizeof(*s->cursors));
    const char *corpus_dir = s->o->ninputs ? s->o->inputs[0] : NULL;
    return !s->slots || !s->logs || !s->cursors ||
           sift_store_init(&s->camp, corpus_dir, s->has_out ? &s->out : NULL) != 0;
}

/* Whether the campaign was asked for as libFuzzer's -fork alone, whose parent sift imitates. */
static bool libfuzzer_fork(const sift_options *o)
{
    return o->fork && !o->workers && !o->jobs;
}

/* The folder of the workers' logs into LOGDIR: libFuzzer's -fork keeps its jobs' logs out of
 * the working folder, in a temporary one; -jobs writes fuzz-N.log where it runs, as libFuzzer's
 * -jobs does; with -out they go to its logs/. */
static int log_folder(sift_super *s, char *logdir, size_t size)
{
    const sift_options *o = s->o;
    snprintf(logdir, size, ".");
    if (!s->has_out && libfuzzer_fork(o)) {
        const char *tmp = getenv("TMPDIR");
        snprintf(s->tmp_logdir, sizeof s->tmp_logdir, "%s/sift-fork-XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(s->tmp_logdir)) {
            fprintf(stderr, "sift: cannot create a folder for the logs in %s: %s\n",
                    tmp && *tmp ? tmp : "/tmp", strerror(errno));
            s->tmp_logdir[0] = 0;
            return 1;
        }
        snprintf(logdir, size, "%s", s->tmp_logdir);
    } else if (s->has_out) {
        snprintf(logdir, size, "%s/logs", s->out.dir);
        struct stat st;
        if (mkdir(logdir, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "sift: cannot create %s: %s\n", logdir, strerror(errno));
            return 1;
        }
        /* A link planted there would have the logs written anywhere. */
        if (lstat(logdir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "sift: -out: %s: not a folder (or a symbolic link)\n", logdir);
            return 1;
        }
    }
    return 0;
}

int sift_super_setup(sift_super *s)
{
    sift_options *o = s->o;
    if (check_args(s) != 0 || check_dict(o) != 0 || open_folders(s) != 0) return 1;
    if (list_inputs(s) != 0 || map_shared(s) != 0) return 1;
    char logdir[4096];
    if (log_folder(s, logdir, sizeof logdir) != 0) return 1;
    for (unsigned k = 0; k <= s->n; k++)
        s->logs[k] = -1;
    for (unsigned k = 0; k < s->n + (s->sync != NULL); k++)
        if (open_log(s, k, logdir) != 0) return 1;
    /* libFuzzer's -fork parent prints no such line (its jobs print theirs into their logs), and
     * ClusterFuzz would take one as the campaign's max_len. */
    if (!o->max_len && !libfuzzer_fork(o))
        fprintf(stderr,
                "INFO: -max_len is not provided; libFuzzer will not generate inputs larger than "
                "%zu bytes\n",
                s->max_len);
    fprintf(stderr, "INFO: %u workers (logs: %s/%s), %zu saved inputs to replay\n", s->n, logdir,
            s->has_out ? "worker-N.log" : "fuzz-N.log", s->paths.count);
    s->next_pulse = 1024;
    return 0;
}

void sift_super_remove_tmp_logs(sift_super *s)
{
    if (!s->tmp_logdir[0]) return;
    char path[4200];
    for (unsigned k = 0; k < s->n; k++) {
        snprintf(path, sizeof path, "%s/fuzz-%u.log", s->tmp_logdir, k);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/sync.log", s->tmp_logdir);
    unlink(path);
    rmdir(s->tmp_logdir);
    s->tmp_logdir[0] = 0;
}
