/* The -out folder in AFL++'s layout. Every file is written whole (temporary, fsync, rename) so
 * that a kill at any moment leaves either the old state or the new one, never half a file. */
#include "engine/campaign/outdir.h"
#include "engine/base/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const subdirs[] = {"queue", "crashes", "hangs"};

/* Creates the folder PATH, or checks that the one there takes new files: a campaign that could
 * not save its finds stops before it starts. A folder of sift's OWN (queue/, crashes/, ...)
 * must be a real folder: a link planted there would send sift's files, and the removal of
 * temporaries, anywhere. The -out folder itself comes from the command line and may be one. */
static int make_dir(const char *path, bool own)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST) {
        struct stat st;
        char err[4352];
        int found = own ? lstat(path, &st) : stat(path, &st);
        if (found == 0 && S_ISLNK(st.st_mode)) {
            fprintf(stderr, "sift: -out: %s: a symbolic link, not a folder\n", path);
            return -1;
        }
        if (found == 0 && S_ISDIR(st.st_mode)) {
            if (sift_fs_check_writable(path, err, sizeof err) == 0) return 0;
            fprintf(stderr, "sift: -out: cannot write into %s\n", err);
            return -1;
        }
        if (errno == EEXIST) errno = ENOTDIR;
    }
    fprintf(stderr, "sift: -out: cannot create the folder %s: %s\n", path, strerror(errno));
    return -1;
}

long sift_outdir_id(const char *name)
{
    if (strncmp(name, "id:", 3) != 0) return -1;
    long id = 0;
    const char *p = name + 3;
    if (*p < '0' || *p > '9') return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        id = id * 10 + (*p - '0');
        if (id > SIFT_OUTDIR_ID_MAX) return -1;
    }
    return *p == ',' || *p == '\0' ? id : -1;
}

static bool is_temporary(const char *name)
{
    return name[0] == '.' && strstr(name, ".tmp.") != NULL;
}

/* FLAGS: O_NOFOLLOW for a folder of sift's own, which a link must not stand in for; 0 for one
 * named on the command line. */
static size_t clean(const char *dir, int flags)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return 0;
    }
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (is_temporary(e->d_name) && unlinkat(dirfd(d), e->d_name, 0) == 0) n++;
    closedir(d);
    return n;
}

size_t sift_outdir_clean(const char *dir)
{
    return clean(dir, 0);
}

/* The next id after every "id:N" in DIR. */
static uint32_t next_id(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    long max = -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        long id = sift_outdir_id(e->d_name);
        if (id > max) max = id;
    }
    closedir(d);
    return (uint32_t)(max + 1);
}

/* A campaign killed in the middle of a write may leave plot_data with a torn last line, and a
 * line appended to it would be one that no reader takes: the torn tail is cut back to the last
 * whole line. */
static void mend_plot(const char *dir)
{
    char path[4096], buf[4096];
    snprintf(path, sizeof path, "%s/plot_data", dir);
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    off_t end = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : 0, cut = end;
    while (cut > 0) {
        size_t n = cut < (off_t)sizeof buf ? (size_t)cut : sizeof buf, i = n;
        if (pread(fd, buf, n, cut - (off_t)n) != (ssize_t)n) {
            cut = end; /* unreadable: left as it is */
            break;
        }
        while (i > 0 && buf[i - 1] != '\n')
            i--;
        cut -= (off_t)(n - i);
        if (i > 0) break;
    }
    if (cut < end && ftruncate(fd, cut) != 0)
        fprintf(stderr, "sift: -out: cannot cut the torn last line of %s: %s\n", path,
                strerror(errno));
    close(fd);
}

int sift_outdir_open(sift_outdir *o, const char *dir)
{
    memset(o, 0, sizeof(*o));
    o->lock = -1;
    if (make_dir(dir, false) != 0) return -1;
    /* Before anything is removed: the temporaries of a campaign running there are in flight. */
    char err[4352];
    if ((o->lock = sift_fs_lock(dir, err, sizeof err)) < 0) {
        fprintf(stderr, "sift: -out: %s\n", err);
        return -1;
    }
    o->dir = strdup(dir);
    if (!o->dir) {
        sift_outdir_close(o);
        return -1;
    }
    o->cleaned = sift_outdir_clean(dir);
    mend_plot(dir);
    for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, subdirs[i]);
        if (make_dir(path, true) != 0) {
            sift_outdir_close(o);
            return -1;
        }
        o->cleaned += clean(path, O_NOFOLLOW);
        uint32_t next = next_id(path);
        if (i == 0) o->next_id = next;
        if (i == 1) o->next_crash = next;
        if (i == 2) o->next_hang = next;
    }
    return 0;
}

void sift_outdir_close(sift_outdir *o)
{
    free(o->dir);
    o->dir = NULL;
    if (o->lock >= 0) close(o->lock);
    o->lock = -1;
}

int sift_outdir_list_queue(const sift_outdir *o, sift_pathlist *out)
{
    char path[4096], err[4352];
    snprintf(path, sizeof path, "%s/queue", o->dir);
    if (sift_fs_list_own(out, path, err, sizeof err) != 0) {
        fprintf(stderr, "sift: -out: %s\n", err);
        return -1;
    }
    return 0;
}

void sift_outdir_safe(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("._+-", *s)))
            *s = '_';
}

static long entry_path(sift_outdir *o, const char *sub, uint32_t *next, const char *desc,
                       char *path, size_t cap)
{
    /* Every id up to the largest is readable back (sift_outdir_id), so that the next start
     * goes on after it; past it, a name would be reused. */
    if (*next > SIFT_OUTDIR_ID_MAX) {
        fprintf(stderr, "sift: -out: no id is left after id:%u in %s/%s\n", *next - 1, o->dir, sub);
        return -1;
    }
    int n = snprintf(path, cap, "%s/%s/id:%06u%s%s", o->dir, sub, *next, desc && *desc ? "," : "",
                     desc ? desc : "");
    if (n < 0 || (size_t)n >= cap) {
        fprintf(stderr, "sift: -out: the path %s/%s/id:%06u,... is too long\n", o->dir, sub, *next);
        return -1;
    }
    /* A file name has at most 255 bytes; the description is cut, never the id. */
    char *base = strrchr(path, '/') + 1;
    if (strlen(base) > 200) base[200] = '\0';
    return (long)(*next)++;
}

static long write_entry(sift_outdir *o, const char *sub, uint32_t *next, const uint8_t *data,
                        size_t size, const char *desc)
{
    char path[4096];
    long id = entry_path(o, sub, next, desc, path, sizeof path);
    if (id >= 0 && sift_write_atomic(path, data, size) != 0) {
        fprintf(stderr, "sift: -out: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return id;
}

long sift_outdir_queue_path(sift_outdir *o, const char *desc, char *path, size_t cap)
{
    return entry_path(o, "queue", &o->next_id, desc, path, cap);
}

long sift_outdir_queue(sift_outdir *o, const uint8_t *data, size_t size, const char *desc)
{
    return write_entry(o, "queue", &o->next_id, data, size, desc);
}

long sift_outdir_fault(sift_outdir *o, bool hang, const uint8_t *data, size_t size,
                       const char *desc)
{
    return hang ? write_entry(o, "hangs", &o->next_hang, data, size, desc)
                : write_entry(o, "crashes", &o->next_crash, data, size, desc);
}

/* The keys afl-whatsup and afl-plot read, in AFL++ 4's order; what sift has no notion of
 * (cycles, depth, pending entries, stability) is written as AFL++ writes it at the start. */
static int write_fuzzer_stats(sift_outdir *o, const sift_outdir_stats *st)
{
    char text[4096];
    double cvg = st->total_edges ? 100.0 * (double)st->edges_found / (double)st->total_edges : 0;
    int n = snprintf(
        text, sizeof text,
        "start_time        : %llu\nlast_update       : %llu\nrun_time          : %llu\n"
        "fuzzer_pid        : %u\ncycles_done       : 0\ncycles_wo_finds   : 0\n"
        "execs_done        : %llu\nexecs_per_sec     : %0.02f\nexecs_ps_last_min : %0.02f\n"
        "corpus_count      : %llu\ncorpus_favored    : %llu\ncorpus_found      : %llu\n"
        "corpus_imported   : %llu\ncorpus_variable   : 0\nmax_depth         : 0\n"
        "cur_item          : 0\npending_favs      : 0\npending_total     : 0\n"
        "stability         : 100.00%%\nbitmap_cvg        : %0.02f%%\n"
        "saved_crashes     : %llu\nsaved_hangs       : %llu\nlast_find         : %llu\n"
        "last_crash        : %llu\nlast_hang         : %llu\nexecs_since_crash : %llu\n"
        "exec_timeout      : %llu\nslowest_exec_ms   : %llu\npeak_rss_mb       : %llu\n"
        "cpu_affinity      : -1\nedges_found       : %llu\ntotal_edges       : %llu\n"
        "var_byte_count    : 0\nhavoc_expansion   : 0\nauto_dict_entries : 0\n"
        "testcache_size    : 0\ntestcache_count   : 0\ntestcache_evict   : 0\n"
        "afl_banner        : %s\nafl_version       : sift\ntarget_mode       : default\n"
        "command_line      : %s\n",
        (unsigned long long)st->start_time, (unsigned long long)st->now,
        (unsigned long long)(st->now - st->start_time), (unsigned)st->pid,
        (unsigned long long)st->execs, st->execs_per_sec, st->execs_ps_last_min,
        (unsigned long long)st->corpus_count, (unsigned long long)st->corpus_favored,
        (unsigned long long)st->corpus_found, (unsigned long long)st->corpus_imported, cvg,
        (unsigned long long)st->saved_crashes, (unsigned long long)st->saved_hangs,
        (unsigned long long)st->last_find, (unsigned long long)st->last_crash,
        (unsigned long long)st->last_hang, (unsigned long long)st->execs_since_crash,
        (unsigned long long)st->exec_timeout_ms, (unsigned long long)st->slowest_exec_ms,
        (unsigned long long)st->peak_rss_mb, (unsigned long long)st->edges_found,
        (unsigned long long)st->total_edges, st->banner, st->command_line);
    char path[4096];
    snprintf(path, sizeof path, "%s/fuzzer_stats", o->dir);
    if (n < 0 || (size_t)n >= sizeof text ||
        sift_write_atomic(path, (const uint8_t *)text, (size_t)n) != 0) {
        fprintf(stderr, "sift: -out: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int append_plot(sift_outdir *o, const sift_outdir_stats *st)
{
    char path[4096], line[512];
    snprintf(path, sizeof path, "%s/plot_data", o->dir);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "sift: -out: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct stat sb;
    int n = 0;
    if (fstat(fd, &sb) == 0 && sb.st_size == 0)
        n = snprintf(line, sizeof line,
                     "# relative_time, cycles_done, cur_item, corpus_count, pending_total, "
                     "pending_favs, map_size, saved_crashes, saved_hangs, max_depth, "
                     "execs_per_sec, total_execs, edges_found\n");
    double cvg = st->total_edges ? 100.0 * (double)st->edges_found / (double)st->total_edges : 0;
    n += snprintf(line + n, sizeof line - (size_t)n,
                  "%llu, 0, 0, %llu, 0, 0, %0.02f%%, %llu, %llu, 0, %0.02f, %llu, %llu\n",
                  (unsigned long long)(st->now - st->start_time),
                  (unsigned long long)st->corpus_count, cvg, (unsigned long long)st->saved_crashes,
                  (unsigned long long)st->saved_hangs, st->execs_per_sec,
                  (unsigned long long)st->execs, (unsigned long long)st->edges_found);
    /* One write of a whole line: a reader never sees half of one. */
    int rc = write(fd, line, (size_t)n) == n ? 0 : -1;
    close(fd);
    return rc;
}

int sift_outdir_report(sift_outdir *o, const sift_outdir_stats *st, bool plot)
{
    int rc = write_fuzzer_stats(o, st);
    if (plot && append_plot(o, st) != 0) rc = -1;
    return rc;
}
