/* Corpus merging (-merge=1), run in a child process so that an input that crashes or hangs
 * costs that input, never the whole merge. */
#include "engine/modes/merge.h"
#include "engine/base/clock.h"
#include "engine/base/files.h"
#include "engine/base/fsutil.h"
#include "engine/modes/mcf.h"
#include "engine/modes/setcover.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Progress a merge child reports before each input, so the parent knows which one killed it;
 * with -set_cover_merge=1 also each input's features, after it ran. */
typedef struct {
    long long index;      /* input about to run; -1 after the first folder, -2 when done, -4
                           * when NFEATURES feature ids of input OF follow */
    size_t cov, ft;       /* the coverage so far, in the note of -1 only */
    size_t of, nfeatures; /* in the note of -4 only */
} merge_note;

/* What the parent keeps of a merge: with -set_cover_merge=1, the features of each input its
 * children ran (LISTS, one per input; NULL in a plain merge). */
typedef struct {
    sift_setcover_input *lists;
    size_t n, nold;   /* inputs, the first NOLD of the first folder */
    merge_note first; /* the first -1 note heard: the coverage where the first folder ended */
    merge_note last;  /* the last note of the child running now */
    size_t skipped, attempts;
} merge_run;

typedef struct {
    size_t size;
    char *path;
} sized_path;

static int by_size(const void *a, const void *b)
{
    const sized_path *x = a, *y = b;
    /* Ties by path: the order, and so the merge's result, is the same on every run. */
    int by = (x->size > y->size) - (x->size < y->size);
    return by ? by : strcmp(x->path, y->path);
}

/* Lists the files of DIRS sorted by size, smallest first. */
static sized_path *list_sorted(char *const *dirs, size_t ndirs, size_t *count)
{
    sift_pathlist list = {0};
    char err[4352];
    for (size_t i = 0; i < ndirs; i++) {
        if (sift_fs_list(&list, dirs[i], err, sizeof err) != 0) {
            fprintf(stderr, "sift: corpus folder %s\n", err);
            sift_pathlist_free(&list);
            return NULL;
        }
    }
    sized_path *out = calloc(list.count + 1, sizeof(*out));
    for (size_t i = 0; out && i < list.count; i++) {
        struct stat st;
        out[i].size = stat(list.paths[i], &st) == 0 ? (size_t)st.st_size : 0;
        out[i].path = list.paths[i];
    }
    if (out) {
        qsort(out, list.count, sizeof(*out), by_size);
        *count = list.count;
        free(list.paths); /* the strings now belong to OUT */
    } else {
        sift_pathlist_free(&list);
    }
    return out;
}

static void free_sorted(sized_path *p, size_t n)
{
    for (size_t i = 0; p && i < n; i++)
        free(p[i].path);
    free(p);
}

/* The edges and features of F's coverage (shared by the merge processes) into N. */
static void count_coverage(sift_fuzzer *f, merge_note *n)
{
    sift_snapshot_count(f->snap, SIFT_DOMAIN_BIT(SIFT_DOMAIN_EDGES), &n->cov, NULL);
    sift_snapshot_count(f->snap, f->mask, NULL, &n->ft);
}

/* Counting scans the whole snapshot, which took more time than running the inputs: it is done
 * once, where the first folder ends. */
static void note(int fd, long long index, sift_fuzzer *f)
{
    merge_note n = {.index = index};
    if (index == -1) count_coverage(f, &n);
    if (write(fd, &n, sizeof n) != sizeof n) _exit(1);
}

static bool read_input(sift_fuzzer *f, const char *path, uint8_t **data, size_t *size)
{
    char err[4352];
    size_t max = f->opts->max_len ? (size_t)f->opts->max_len : (size_t)1 << 20;
    if (sift_fs_read(path, max, data, size, NULL, err, sizeof err) == 0) return true;
    fprintf(stderr, "sift: skipping %s\n", err);
    return false;
}

static void try_file(sift_fuzzer *f, const char *path, bool save) SIFT_FRAME(try_file);
static void try_file(sift_fuzzer *f, const char *path, bool save)
{
    uint8_t *data;
    size_t size;
    if (!read_input(f, path, &data, &size)) return;
    sift_fuzzer_try(f, data, size, save, NULL);
    free(data);
}

/* With -set_cover_merge=1: runs input I at PATH, taking its coverage in when it is the first
 * folder's (INITIAL), and sends the parent all its features. */
static void list_file(sift_fuzzer *f, int fd, size_t i, const char *path, bool initial)
    SIFT_FRAME(list_file);
static void list_file(sift_fuzzer *f, int fd, size_t i, const char *path, bool initial)
{
    uint8_t *data;
    size_t size;
    if (!read_input(f, path, &data, &size)) return;
    if (initial) sift_fuzzer_execute(f, data, size);
    sift_exec_features(f, data, size, initial);
    free(data);
    const sift_features *l = &f->exec.features;
    merge_note n = {.index = -4, .of = i, .nfeatures = l->n};
    if (sift_file_write_all(fd, (const uint8_t *)&n, sizeof n) != 0 ||
        sift_file_write_all(fd, (const uint8_t *)l->ids, l->n * sizeof(*l->ids)) != 0)
        _exit(1);
}

/* The child: tries the inputs from START on, the first NOLD (the first folder's) only to learn
 * their coverage, but those that stopped an earlier merge of the same files (MCF); LIST: only
 * lists the features of each (list_file). */
static void merge_child(sift_fuzzer *f, int fd, const sized_path *inputs, size_t n, size_t nold,
                        size_t start, const sift_mcf *mcf, bool list) SIFT_FRAME(merge_child);
static void merge_child(sift_fuzzer *f, int fd, const sized_path *inputs, size_t n, size_t nold,
                        size_t start, const sift_mcf *mcf, bool list)
{
    for (size_t i = start; i <= n; i++) {
        if (i == nold) note(fd, -1, f);
        if (i == n) break;
        if (mcf->failed && mcf->failed[i]) continue;
        note(fd, (long long)i, f);
        sift_mcf_started(mcf, i, inputs[i].size);
        if (list)
            list_file(f, fd, i, inputs[i].path, i < nold);
        else
            try_file(f, inputs[i].path, i >= nold);
        sift_mcf_done(mcf, i);
        /* SIGUSR1 or SIGUSR2: the progress so far is in the control file. */
        if (f->fault.stop_requested == SIFT_STOP_GRACEFUL) _exit(0);
    }
    note(fd, -2, f);
    _exit(0);
}

/* Moves F's coverage into memory its merge children share, so that a child started after a
 * crash or hang knows all that those before it found. Returns the mapping's size, 0 on error. */
static size_t share_snapshot(sift_fuzzer *f, void **mem)
{
    size_t cap[SIFT_DOMAIN_COUNT];
    sift_exec_capacity(f->exec.rt, cap);
    size_t len = sift_snapshot_bytes(cap);
    *mem = len ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)
               : MAP_FAILED;
    sift_snapshot *snap;
    if (*mem == MAP_FAILED || sift_snapshot_create(&snap, cap, *mem, len) != SIFT_OK) {
        if (*mem != MAP_FAILED) munmap(*mem, len);
        fprintf(stderr, "sift: merge: cannot map the shared coverage: %s\n", strerror(errno));
        return 0;
    }
    sift_snapshot_free(f->snap);
    f->snap = snap;
    return len;
}

/* How often the parent looks at interrupts while it waits for a child's note. */
#define WATCH_SLICE_MS 50

/* Reads the NFEATURES ids of a -4 note into R's list of its input; false when the child died
 * before it sent them all. */
static bool read_features(int fd, merge_run *r, const merge_note *n)
{
    if (!r->lists || n->of >= r->n) return false;
    sift_setcover_input *l = &r->lists[n->of];
    free(l->ids);
    l->n = 0;
    l->ids = malloc((n->nfeatures ? n->nfeatures : 1) * sizeof(*l->ids));
    if (!l->ids) return false;
    for (size_t got = 0, want = n->nfeatures * sizeof(*l->ids); got < want;) {
        ssize_t in = read(fd, (char *)l->ids + got, want - got);
        if (in <= 0) return false;
        got += (size_t)in;
    }
    l->n = n->nfeatures;
    return true;
}

/* Reads notes until the child exits, goes silent for longer than the timeout, or SIGINT or
 * SIGTERM comes (then the child is killed). SIGUSR1 or SIGUSR2 is passed on to the child, which
 * stops after its input. Returns its status. */
static int watch_child(sift_fuzzer *f, pid_t pid, int fd, merge_run *r)
{
    uint64_t hang_ns = sift_fault_hang_ns(f->opts);
    uint64_t heard = sift_now_ns();
    bool passed_on = false;
    for (;;) {
        if (f->fault.stop_requested == SIFT_STOP_INTERRUPT) {
            kill(pid, SIGKILL);
            break;
        }
        if (f->fault.stop_requested == SIFT_STOP_GRACEFUL && !passed_on) {
            kill(pid, SIGUSR2);
            passed_on = true;
        }
        if (!sift_fs_wait_readable(fd, WATCH_SLICE_MS)) {
            if (!hang_ns || sift_now_ns() - heard < hang_ns) continue;
            kill(pid, SIGKILL); /* a hang: the input it was running is to blame */
            break;
        }
        merge_note n;
        ssize_t got = read(fd, &n, sizeof n);
        if (got != (ssize_t)sizeof n) break;
        heard = sift_now_ns();
        if (n.index == -4) {
            if (!read_features(fd, r, &n)) break;
            continue;
        }
        if (n.index == -1 && r->first.index == 0) r->first = n;
        r->last = n;
    }
    int status;
    waitpid(pid, &status, 0);
    return status;
}

/* Runs the children over INPUTS (the first NOLD from the first folder) until all were tried,
 * skipping each input a child died on; LIST: they list features (merge_child). Returns 0, 1
 * with a message, or when a signal stopped it, libFuzzer's exit code for that signal
 * (SIFT_EXIT_INTERRUPTED, or 0 after SIGUSR1 or SIGUSR2) after its line; -1 when stopped by
 * SIGUSR1 or SIGUSR2 (its line said), so that nothing more is done. */
static int run_children(sift_fuzzer *f, const sized_path *inputs, size_t n, size_t nold,
                        const sift_mcf *mcf, merge_run *r, bool list)
{
    size_t start = 0;
    for (;;) {
        r->attempts++;
        int pipefd[2];
        if (pipe(pipefd) != 0) {
            fprintf(stderr, "sift: merge: %s\n", strerror(errno));
            return 1;
        }
        fflush(stderr);
        pid_t pid = sift_fault_fork();
        if (pid == 0) {
            close(pipefd[0]);
            merge_child(f, pipefd[1], inputs, n, nold, start, mcf, list);
        }
        close(pipefd[1]);
        r->last = (merge_note){.index = -3};
        int status = watch_child(f, pid, pipefd[0], r);
        close(pipefd[0]);
        if (f->fault.stop_requested == SIFT_STOP_INTERRUPT) return sift_fault_interrupted();
        if (f->fault.stop_requested == SIFT_STOP_GRACEFUL) {
            sift_fault_say_stop(SIFT_STOP_GRACEFUL);
            return -1;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && r->last.index == -2) return 0;
        if (r->last.index < 0) {
            fprintf(stderr, "sift: merge: the merge process died before its first input\n");
            return 1;
        }
        fprintf(stderr, "MERGE-OUTER: %s crashed or hung the target; skipping it\n",
                inputs[r->last.index].path);
        r->skipped++;
        start = (size_t)r->last.index + 1;
        if (start >= n) return 0;
    }
}

/* With -set_cover_merge=1, after the children listed every input's features: runs the inputs
 * greedy set cover picks (setcover.h) in the order picked, each kept and saved as -merge=1
 * keeps an input that adds coverage. */
static int run_picked(sift_fuzzer *f, const sized_path *inputs, merge_run *r)
{
    size_t nknown = 0;
    for (size_t i = 0; i < r->nold; i++)
        nknown += r->lists[i].n;
    sift_feature_id *known = malloc((nknown ? nknown : 1) * sizeof(*known));
    size_t *order = malloc((r->n ? r->n : 1) * sizeof(*order));
    sized_path *picked = calloc(r->n + 1, sizeof(*picked));
    size_t added, count = (size_t)-1;
    if (known && order && picked) {
        nknown = 0;
        for (size_t i = 0; i < r->nold; i++) {
            if (!r->lists[i].n) continue; /* skipped, or without features */
            memcpy(known + nknown, r->lists[i].ids, r->lists[i].n * sizeof(*known));
            nknown += r->lists[i].n;
        }
        count =
            sift_setcover_pick(r->lists + r->nold, r->n - r->nold, known, nknown, order, &added);
    }
    int rc = 1;
    if (count == (size_t)-1) {
        fprintf(stderr, "sift: merge: out of memory for the set cover\n");
    } else {
        for (size_t i = 0; i < count; i++)
            picked[i] = inputs[r->nold + order[i]];
        sift_mcf none = {.fd = -1};
        rc = run_children(f, picked, count, 0, &none, r, false);
    }
    free(known);
    free(order);
    free(picked); /* the paths belong to INPUTS */
    return rc;
}

/* libFuzzer's closing lines, from the coverage the children shared. */
static void report(sift_fuzzer *f, merge_run *r)
{
    fprintf(stderr, "MERGE-OUTER: successful in %zu attempt(s)\n", r->attempts);
    merge_note end;
    count_coverage(f, &end);
    size_t after = 0;
    free_sorted(list_sorted(f->opts->inputs, 1, &after), after);
    fprintf(stderr,
            "MERGE-OUTER: %zu new files with %zu new features added; %zu new coverage edges"
            "%s\n",
            after - r->nold, end.ft - r->first.ft, end.cov - r->first.cov,
            r->skipped ? " (some inputs skipped)" : "");
}

static int merge_inputs(sift_fuzzer *f, const sized_path *inputs, size_t n, size_t nold,
                        const sift_mcf *mcf)
{
    merge_run r = {.n = n, .nold = nold};
    if (f->opts->set_cover_merge && !(r.lists = calloc(n + 1, sizeof(*r.lists)))) {
        fprintf(stderr, "sift: merge: out of memory for %zu inputs\n", n);
        return 1;
    }
    int rc = run_children(f, inputs, n, nold, mcf, &r, r.lists != NULL);
    if (rc == 0 && r.lists) {
        /* The attempts reported are those over all the inputs. The baseline stays the first
         * note of the first folder's end (watch_child keeps the first). */
        size_t attempts = r.attempts;
        rc = run_picked(f, inputs, &r);
        r.attempts = attempts;
    }
    if (rc == 0) report(f, &r);
    for (size_t i = 0; r.lists && i < n; i++)
        free(r.lists[i].ids);
    free(r.lists);
    return rc < 0 ? 0 : rc;
}

int sift_merge(sift_fuzzer *f)
{
    const sift_options *o = f->opts;
    if (o->ninputs < 2) {
        fprintf(stderr, "sift: -merge=1 needs at least two corpus folders (into, from...)\n");
        return 1;
    }
    f->dir.path = o->inputs[0];
    size_t n = 0, nold = 0;
    sized_path *fresh = list_sorted(o->inputs + 1, o->ninputs - 1, &n);
    sized_path *inputs = list_sorted(o->inputs, 1, &nold);
    /* One list, the first folder's inputs first, so that a crash or hang among them costs that
     * input only, as among the others. */
    sized_path *all = fresh && inputs ? realloc(inputs, (nold + n + 1) * sizeof(*all)) : NULL;
    if (all) {
        inputs = all;
        memcpy(inputs + nold, fresh, n * sizeof(*fresh));
        free(fresh);
        fresh = NULL;
        n += nold;
    }
    /* The mapping outlives the merge: F's snapshot lives in it until sift_fuzzer_free. */
    void *shared;
    int rc = 1;
    const char **names = all ? calloc(n + 1, sizeof(*names)) : NULL;
    for (size_t i = 0; names && i < n; i++)
        names[i] = inputs[i].path;
    sift_mcf mcf;
    if (names && share_snapshot(f, &shared) &&
        sift_mcf_open(&mcf, o->merge_control_file, names, n, nold) == 0) {
        if (mcf.done) {
            rc = 0;
        } else {
            fprintf(stderr, "MERGE-OUTER: %zu files, %zu in the initial corpus\n", n, nold);
            if (o->merge_control_file)
                fprintf(stderr, "MERGE-INNER: using the control file '%s'\n",
                        o->merge_control_file);
            rc = merge_inputs(f, inputs, n, nold, &mcf);
        }
        sift_mcf_close(&mcf);
    }
    free(names);
    free_sorted(fresh, n);
    free_sorted(inputs, all ? n : nold);
    return rc;
}
