/* Replay children: each runs its share of a list of inputs, telling the supervisor through a
 * pipe which input it is about to run, so that a death is blamed on that input alone. */
#define _GNU_SOURCE
#include "engine/campaign/replay.h"
#include "engine/base/files.h"
#include "engine/base/clock.h"
#include "engine/base/fsutil.h"
#include "engine/campaign/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The most a replayed input may hold when -max_len does not say, as for seeds. */
#define READ_MAX (1u << 20)

enum { NOTE_RUNNING, NOTE_UNREADABLE, NOTE_DONE };

typedef struct {
    int64_t index;
    int32_t kind;
} note;

static void send_note(int fd, size_t index, int kind)
{
    note n = {.index = (int64_t)index, .kind = kind};
    if (write(fd, &n, sizeof n) != (ssize_t)sizeof n) _exit(1);
}

static void publish(sift_replay *rp, unsigned ring, sift_fuzzer *f, bool added, size_t item,
                    const uint8_t *data, size_t size, sift_dlog_scratch *s)
{
    sift_dlog_entry d = {.origin = (uint32_t)item, .execs = f->stats.execs};
    if (added) {
        const sift_entry *e = sift_corpus_at(f->corpus, sift_corpus_count(f->corpus) - 1);
        d.exec_ns = e->exec_ns;
        d.data = e->data;
        d.size = e->size;
        d.features = sift_corpus_entry_features(f->corpus, e);
        d.nfeatures = d.features ? e->nfeatures : 0; /* none when out of memory */
        memcpy(d.name, e->name, sizeof d.name);
    } else {
        if (!rp->announce_known) return;
        d.flags = SIFT_DLOG_KNOWN;
        sift_sha1_hex(data, size, d.name);
    }
    if (sift_dlog_publish(&rp->sh->log, ring, &d, s) != 0 && errno == E2BIG && d.nfeatures) {
        d.nfeatures = 0;
        sift_dlog_publish(&rp->sh->log, ring, &d, s);
    }
}

static void child_main(sift_replay *rp, unsigned k, size_t start, int fd) SIFT_FRAME(child_main);
static void child_main(sift_replay *rp, unsigned k, size_t start, int fd)
{
    static sift_options o;
    o = *rp->opts;
    o.stats_file = NULL;
    static sift_fuzzer f;
    if (sift_fuzzer_init(&f, &o, rp->target, rp->argv0) != 0 || sift_worker_share(&f, rp->sh))
        _exit(1);
    sift_dlog_scratch s = {0};
    size_t max = o.max_len ? (size_t)o.max_len : READ_MAX;
    for (size_t i = start; i < rp->n; i += rp->nchildren) {
        const sift_replay_item *it = &rp->items[i];
        uint8_t *owned = NULL;
        const uint8_t *data = it->data;
        size_t size = it->size;
        char err[4352];
        if (it->path && sift_fs_read(it->path, max, &owned, &size, NULL, err, sizeof err) != 0) {
            fprintf(stderr, "sift: %s\n", err);
            send_note(fd, i, NOTE_UNREADABLE);
            continue;
        }
        if (owned) data = owned;
        send_note(fd, i, NOTE_RUNNING);
        bool added = sift_fuzzer_try(&f, data, size, false, NULL);
        publish(rp, rp->first_ring + k, &f, added, i, data, size, &s);
        free(owned);
    }
    send_note(fd, 0, NOTE_DONE);
    fflush(NULL);
    _exit(0);
}

static int spawn(sift_replay *rp, unsigned k, size_t start) SIFT_FRAME(spawn);
static int spawn(sift_replay *rp, unsigned k, size_t start)
{
    sift_replay_child *c = &rp->kids[k];
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        fprintf(stderr, "sift: replay: cannot make a pipe: %s\n", strerror(errno));
        return -1;
    }
    int log = rp->log_fds ? rp->log_fds[k] : -1;
    c->log_from = log >= 0 ? lseek(log, 0, SEEK_END) : 0;
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "sift: replay: cannot fork: %s\n", strerror(errno));
        close(pipefd[0]);
        close(pipefd[1]);
        return -1;
    }
    if (pid == 0) {
        sift_shared_child(parent, log);
        close(pipefd[0]);
        child_main(rp, k, start, pipefd[1]);
    }
    close(pipefd[1]);
    fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
    *c = (sift_replay_child){.pid = pid,
                             .notes = pipefd[0],
                             .running = -1,
                             .next = start,
                             .note_ns = sift_now_ns(),
                             .log_from = c->log_from};
    return 0;
}

int sift_replay_start(sift_replay *rp)
{
    rp->failed = 0;
    rp->kids = calloc(rp->nchildren, sizeof(*rp->kids));
    if (!rp->kids) return -1;
    for (unsigned k = 0; k < rp->nchildren; k++) {
        rp->kids[k].done = k >= rp->n;
        rp->kids[k].notes = -1;
        if (!rp->kids[k].done && spawn(rp, k, k) != 0) return -1;
    }
    return 0;
}

static void read_notes(sift_replay *rp, sift_replay_child *c)
{
    note n;
    while (read(c->notes, &n, sizeof n) == (ssize_t)sizeof n) {
        c->note_ns = sift_now_ns();
        if (n.kind == NOTE_DONE) {
            c->done = true;
        } else if (n.kind == NOTE_UNREADABLE) {
            rp->failed++;
            if (rp->on_fail) rp->on_fail(rp->ctx, (size_t)n.index, SIFT_REPLAY_UNREADABLE, 0, "");
        } else {
            c->running = n.index;
        }
    }
}

/* Child K is gone: either it finished, or the input it was running killed it. */
static void reap(sift_replay *rp, unsigned k, int status, bool hung) SIFT_FRAME(reap);
static void reap(sift_replay *rp, unsigned k, int status, bool hung)
{
    sift_replay_child *c = &rp->kids[k];
    read_notes(rp, c);
    close(c->notes);
    c->notes = -1;
    c->pid = 0;
    if (c->done || c->running < 0) {
        c->done = true;
        return;
    }
    const sift_options *o = rp->opts;
    bool hang = hung || (WIFEXITED(status) && WEXITSTATUS(status) == o->timeout_exitcode);
    char artifact[4096] = "";
    int log = rp->log_fds ? rp->log_fds[k] : -1;
    if (log >= 0) sift_shared_artifact(log, c->log_from, artifact, sizeof artifact);
    rp->failed++;
    if (rp->on_fail)
        rp->on_fail(rp->ctx, (size_t)c->running, hang ? SIFT_REPLAY_HANG : SIFT_REPLAY_CRASH,
                    status, artifact);
    size_t next = (size_t)c->running + rp->nchildren;
    if (next >= rp->n || spawn(rp, k, next) != 0) c->done = true;
}

unsigned sift_replay_poll(sift_replay *rp, int wait_ms)
{
    struct pollfd *p = calloc(rp->nchildren, sizeof(*p));
    unsigned np = 0;
    for (unsigned k = 0; p && k < rp->nchildren; k++)
        if (rp->kids[k].pid) p[np++] = (struct pollfd){.fd = rp->kids[k].notes, .events = POLLIN};
    if (np) poll(p, np, wait_ms);
    free(p);
    uint64_t limit = sift_fault_hang_ns(rp->opts);
    unsigned running = 0;
    for (unsigned k = 0; k < rp->nchildren; k++) {
        sift_replay_child *c = &rp->kids[k];
        if (!c->pid) continue;
        read_notes(rp, c);
        int status;
        pid_t got = waitpid(c->pid, &status, WNOHANG);
        bool hung = false;
        if (got == 0 && limit && sift_now_ns() - c->note_ns > limit) {
            kill(c->pid, SIGKILL);
            got = waitpid(c->pid, &status, 0);
            hung = true;
        }
        if (got == c->pid) reap(rp, k, status, hung);
        running += c->pid != 0;
    }
    return running;
}

void sift_replay_end(sift_replay *rp)
{
    for (unsigned k = 0; rp->kids && k < rp->nchildren; k++) {
        sift_replay_child *c = &rp->kids[k];
        if (!c->pid) continue;
        kill(c->pid, SIGKILL);
        waitpid(c->pid, NULL, 0);
        close(c->notes);
    }
    free(rp->kids);
    rp->kids = NULL;
}
