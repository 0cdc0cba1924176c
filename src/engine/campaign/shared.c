/* The memory every process of a campaign shares (layout in docs/workers.md). */
#include "engine/campaign/shared.h"
#include "engine/contain/report.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

extern void __sanitizer_set_report_fd(void *fd) __attribute__((weak));

#define SHARED_MAGIC 0x3152485354464953ull /* "SIFTSHR1" */

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

int sift_shared_map(sift_shared *s, unsigned nworkers, unsigned nrings, size_t ring_bytes,
                    const size_t capacity[SIFT_DOMAIN_COUNT])
{
    memset(s, 0, sizeof(*s));
    size_t head = round_up(sizeof(sift_shared_header), 4096);
    size_t stats = round_up(sizeof(sift_worker_stats) * nworkers, 4096);
    size_t snap = round_up(sift_snapshot_bytes(capacity), 4096);
    size_t log = round_up(sift_dlog_bytes(nrings, ring_bytes), 4096);
    if (!snap || !log || nworkers == 0) {
        errno = EINVAL;
        return -1;
    }
    size_t len = head + stats + snap + log;
    /* Zero-filled and untouched until written: the log's rings cost memory only as they
     * fill. */
    uint8_t *mem =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) return -1;
    s->mem = mem;
    s->len = len;
    s->hdr = (sift_shared_header *)mem;
    s->hdr->magic = SHARED_MAGIC;
    s->workers = (sift_worker_stats *)(mem + head);
    s->nworkers = nworkers;
    s->snap_mem = mem + head + stats;
    s->snap_len = snap;
    memcpy(s->capacity, capacity, sizeof(s->capacity));
    sift_dlog_init(&s->log, mem + head + stats + snap, nrings, ring_bytes);
    /* The first create on zeroed memory lays the snapshot out; every later one joins it. */
    sift_snapshot *view;
    if (sift_shared_snapshot(s, &view) != SIFT_OK) {
        sift_shared_unmap(s);
        errno = ENOMEM;
        return -1;
    }
    sift_snapshot_free(view);
    return 0;
}

void sift_shared_unmap(sift_shared *s)
{
    if (s->mem) munmap(s->mem, s->len);
    memset(s, 0, sizeof(*s));
}

int sift_shared_snapshot(const sift_shared *s, sift_snapshot **out)
{
    return sift_snapshot_create(out, s->capacity, s->snap_mem, s->snap_len);
}

void sift_shared_stop(sift_shared *s)
{
    atomic_store_explicit(&s->hdr->stop, 1, memory_order_release);
    sift_dlog_close(&s->log);
}

int sift_shared_stopping(const sift_shared *s)
{
    return atomic_load_explicit(&s->hdr->stop, memory_order_relaxed);
}

/* A sanitizer that was given its report descriptor in another process takes it for its
 * parent's: in a process the target forks, it would close it and open a report file of its own,
 * named after the pid, in the current folder. Given again after each fork, the descriptor stays
 * the child's too. */
static void keep_report_fd_in_child(void)
{
    __sanitizer_set_report_fd((void *)(intptr_t)sift_report_fd());
}

void sift_shared_child(pid_t parent, int log_fd)
{
    /* The supervisor may have died between fork and prctl: then nobody would kill us. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
    if (log_fd >= 0) {
        dup2(log_fd, STDOUT_FILENO);
        dup2(log_fd, STDERR_FILENO);
        /* Reports go to the log through a descriptor of its own, which the supervisor reads
         * the artifact's name from: a target that closes stderr keeps neither from it. */
        sift_report_set_fd(log_fd);
        if (__sanitizer_set_report_fd) {
            __sanitizer_set_report_fd((void *)(intptr_t)log_fd);
            pthread_atfork(NULL, NULL, keep_report_fd_in_child);
        }
    }
}

/* Reports are short; a window at the end of the log holds the artifact line. */
#define ARTIFACT_WINDOW ((off_t)256 * 1024)

/* The end of the log LOG_FD after offset FROM (at most ARTIFACT_WINDOW bytes), NUL-terminated,
 * to free(); NULL when there is none. */
static char *read_tail(int log_fd, off_t from)
{
    off_t end = lseek(log_fd, 0, SEEK_END);
    if (end < 0 || end <= from) return NULL;
    if (end - from > ARTIFACT_WINDOW) from = end - ARTIFACT_WINDOW;
    size_t len = (size_t)(end - from);
    char *buf = malloc(len + 1);
    ssize_t got = buf ? pread(log_fd, buf, len, from) : -1;
    if (got <= 0) {
        free(buf);
        return NULL;
    }
    buf[got] = '\0';
    return buf;
}

/* What follows the last MARK in BUF, or NULL. */
static char *after_last(char *buf, const char *mark)
{
    char *last = NULL;
    for (char *p = buf; (p = strstr(p, mark)); p += strlen(mark))
        last = p + strlen(mark);
    return last;
}

int sift_shared_artifact(int log_fd, off_t from, char *path, size_t cap)
{
    static const char mark[] = "Test unit written to ", failed[] = "ERROR: cannot write artifact ";
    char *buf = cap ? read_tail(log_fd, from) : NULL;
    if (!buf) return -1;
    int rc = -1;
    char *last = after_last(buf, mark);
    size_t n = last ? strcspn(last, "\n") : 0;
    char *miss = after_last(buf, failed);
    if (miss && (!last || miss > last)) {
        rc = -2;
    } else if (last && n > 0 && n < cap) {
        memcpy(path, last, n);
        path[n] = '\0';
        rc = 0;
    }
    free(buf);
    return rc;
}

int sift_shared_summary(int log_fd, off_t from, char *line, size_t cap)
{
    char *buf = cap ? read_tail(log_fd, from) : NULL;
    char *last = buf ? after_last(buf, "SUMMARY: ") : NULL;
    if (last) snprintf(line, cap, "%.*s", (int)strcspn(last, "\n"), last);
    free(buf);
    return last ? 0 : -1;
}
