/* Sync with other instances. A peer's folder may hold anything: every name is checked, every
 * file opened relative to its folder without following links and read only when it is a
 * regular file of a sane size, and each problem is said once, in one line. */
#define _GNU_SOURCE
#include "engine/campaign/sync.h"
#include "engine/base/files.h"
#include "engine/base/clock.h"
#include "engine/campaign/outdir.h"
#include "engine/base/humanize.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SCAN_EVERY_NS  SIFT_SECOND_NS
#define SETTLE_SECONDS 1   /* a peer may still be writing a younger file: AFL++ writes in place */
#define ROUND_MAX      256 /* entries imported per round */
#define NAME_MAX_LEN   64

typedef struct {
    char name[NAME_MAX_LEN + 1];
    uint32_t next_id, pending; /* imported up to, and taken in the running round */
    struct timespec mtime;     /* of its queue folder when last listed */
    time_t recorded;           /* when next_id was last written down */
} peer;

typedef struct {
    uint32_t id;
    char *name;
} candidate;

struct sift_sync {
    char *dir, *name, *out;
    size_t max_len;
    uint64_t next_scan_ns;
    peer *peers;
    size_t npeers;
    sift_replay_item items[ROUND_MAX];
    size_t item_peer[ROUND_MAX];
    uint32_t item_id[ROUND_MAX];
    char *item_path[ROUND_MAX];
    size_t nitems;
    sift_corpus *said; /* problems reported already, by the hash of their line */
};

/* AFL++ takes letters, digits, '_' and '-' in -M/-S names; '.' and '+' are harmless too. */
static bool good_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > NAME_MAX_LEN || s[0] == '.') return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("_-.+", *s)))
            return false;
    return true;
}

__attribute__((format(printf, 2, 3))) static void say_once(sift_sync *s, const char *fmt, ...)
{
    char line[4096], key[41];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    sift_sha1_hex((const uint8_t *)line, strlen(line), key);
    if (sift_corpus_find(s->said, key) >= 0) return;
    sift_corpus_add(s->said, NULL, 0, NULL, 0, 0, key, 0);
    char shown[sizeof line];
    fprintf(stderr, "sift: sync: %s\n", sift_human_name(line, shown, sizeof shown));
}

static int make_dir(const char *path)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST) {
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
        errno = ENOTDIR;
    }
    fprintf(stderr, "sift: -sync_dir: cannot create the folder %s: %s\n", path, strerror(errno));
    return -1;
}

sift_sync *sift_sync_open(const char *dir, const char *name, size_t max_len)
{
    if (!good_name(name)) {
        fprintf(stderr,
                "sift: -name=%s: expected 1 to %d letters, digits, '_', '-', '.' or '+', "
                "not starting with '.'\n",
                name, NAME_MAX_LEN);
        return NULL;
    }
    sift_sync *s = calloc(1, sizeof(*s));
    char synced[4096];
    if (!s || !(s->said = sift_corpus_new()) || !(s->dir = strdup(dir)) ||
        !(s->name = strdup(name)) || asprintf(&s->out, "%s/%s", dir, name) < 0) {
        free(s);
        return NULL;
    }
    s->max_len = max_len;
    snprintf(synced, sizeof synced, "%s/.synced", s->out);
    if (make_dir(dir) != 0 || make_dir(s->out) != 0 || make_dir(synced) != 0) {
        sift_sync_close(s);
        return NULL;
    }
    sift_outdir_clean(synced);
    return s;
}

static void end_round(sift_sync *s)
{
    for (size_t i = 0; i < s->nitems; i++) {
        free((void *)s->items[i].data);
        free(s->item_path[i]);
    }
    s->nitems = 0;
}

void sift_sync_close(sift_sync *s)
{
    if (!s) return;
    end_round(s);
    sift_corpus_free(s->said);
    free(s->peers);
    free(s->dir);
    free(s->name);
    free(s->out);
    free(s);
}

const char *sift_sync_out(const sift_sync *s)
{
    return s->out;
}

static peer *find_peer(sift_sync *s, const char *name)
{
    for (size_t i = 0; i < s->npeers; i++)
        if (!strcmp(s->peers[i].name, name)) return &s->peers[i];
    peer *grown = realloc(s->peers, (s->npeers + 1) * sizeof(*grown));
    if (!grown) return NULL;
    s->peers = grown;
    peer *p = &s->peers[s->npeers++];
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof p->name, "%s", name);
    /* Where the last campaign got to with this peer, as AFL++ records it: a 32-bit id. */
    char path[4096];
    snprintf(path, sizeof path, "%s/.synced/%s", s->out, name);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    uint32_t id;
    struct stat st;
    if (fd >= 0 && read(fd, &id, sizeof id) == (ssize_t)sizeof id) p->next_id = id;
    if (fd >= 0 && fstat(fd, &st) == 0) p->recorded = st.st_mtime;
    if (fd >= 0) close(fd);
    p->pending = p->next_id;
    return p;
}

static int by_id(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Reads one queue entry; returns 1 when taken, 0 to skip it, -1 to stop at it for now. */
static int take_entry(sift_sync *s, int qfd, const char *qpath, peer *p, const candidate *c)
{
    int fd = openat(qfd, c->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP)
            say_once(s, "%s/%s: a symbolic link; skipped", qpath, c->name);
        else
            say_once(s, "%s/%s: %s; skipped", qpath, c->name, strerror(errno));
        return errno == ENOENT ? -1 : 0;
    }
    struct stat st;
    int rc = 0;
    uint8_t *data = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        say_once(s, "%s/%s: not a regular file; skipped", qpath, c->name);
    } else if (st.st_size == 0) {
        say_once(s, "%s/%s: empty; skipped", qpath, c->name);
    } else if ((uint64_t)st.st_size > s->max_len) {
        say_once(s, "%s/%s: %lld bytes, more than -max_len=%zu; skipped", qpath, c->name,
                 (long long)st.st_size, s->max_len);
    } else if (time(NULL) - st.st_mtime < SETTLE_SECONDS) {
        rc = -1;
    } else if ((data = malloc((size_t)st.st_size))) {
        ssize_t got = pread(fd, data, (size_t)st.st_size, 0);
        if (got == st.st_size) {
            size_t i = s->nitems++;
            s->items[i] = (sift_replay_item){.data = data, .size = (size_t)got};
            s->item_peer[i] = (size_t)(p - s->peers);
            s->item_id[i] = c->id;
            if (asprintf(&s->item_path[i], "%s/%s", qpath, c->name) < 0) s->item_path[i] = NULL;
            data = NULL;
            rc = 1;
        } else {
            rc = -1; /* shrank or grew while read: the next round sees it whole */
        }
    }
    free(data);
    close(fd);
    return rc;
}

static void scan_peer(sift_sync *s, int dfd, const char *name)
{
    int pfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (pfd < 0) {
        if (errno == ELOOP || errno == ENOTDIR)
            say_once(s, "%s/%s: not a folder (or a link to one); skipped", s->dir, name);
        return;
    }
    int qfd = openat(pfd, "queue", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    peer *p = qfd >= 0 ? find_peer(s, name) : NULL;
    /* An AFL++ instance writes its cmdline when it starts: one started since the ids were
     * written down may have begun a new queue from id 0, which is imported again (entries seen
     * before add nothing), as AFL++ does. */
    struct stat st;
    if (p && p->recorded && p->next_id && fstatat(pfd, "cmdline", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        st.st_mtime > p->recorded) {
        say_once(s, "%s/%s: restarted since the last sync; importing its queue again", s->dir,
                 name);
        p->next_id = p->pending = 0;
        p->recorded = time(NULL);
        p->mtime = (struct timespec){0};
    }
    close(pfd);
    if (qfd < 0) return; /* a peer that is starting, or a stranger's folder */
    char qpath[4096];
    snprintf(qpath, sizeof qpath, "%s/%s/queue", s->dir, name);
    DIR *d = p && fstat(qfd, &st) == 0 ? fdopendir(qfd) : NULL;
    if (!d) {
        close(qfd);
        return;
    }
    /* Listing a big queue costs; one that did not change since the last look is skipped. */
    bool same = st.st_mtim.tv_sec == p->mtime.tv_sec && st.st_mtim.tv_nsec == p->mtime.tv_nsec;
    candidate *cand = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while (!same && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        long id = sift_outdir_id(e->d_name);
        if (id < 0) {
            say_once(s, "%s/%s: not an AFL++ queue entry (id:NNNNNN,...); skipped", qpath,
                     e->d_name);
            continue;
        }
        if ((uint32_t)id < p->next_id) continue;
        if (n == cap) {
            candidate *grown = realloc(cand, (cap = cap ? cap * 2 : 64) * sizeof(*grown));
            if (!grown) break;
            cand = grown;
        }
        if (!(cand[n].name = strdup(e->d_name))) break;
        cand[n++].id = (uint32_t)id;
    }
    if (n) qsort(cand, n, sizeof(*cand), by_id);
    bool stopped = false;
    for (size_t i = 0; i < n && s->nitems < ROUND_MAX && !stopped; i++) {
        int rc = take_entry(s, dirfd(d), qpath, p, &cand[i]);
        if (rc < 0)
            stopped = true;
        else
            p->pending = cand[i].id + 1;
    }
    /* Come back to this folder when the round left something in it. */
    if (!same && !stopped && s->nitems < ROUND_MAX) p->mtime = st.st_mtim;
    for (size_t i = 0; i < n; i++)
        free(cand[i].name);
    free(cand);
    closedir(d);
}

size_t sift_sync_scan(sift_sync *s, uint64_t now_ns, const sift_replay_item **items)
{
    if (now_ns < s->next_scan_ns) return 0;
    s->next_scan_ns = now_ns + SCAN_EVERY_NS;
    end_round(s);
    int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        say_once(s, "%s: %s", s->dir, strerror(errno));
        if (dfd >= 0) close(dfd);
        return 0;
    }
    struct dirent *e;
    while ((e = readdir(d)) && s->nitems < ROUND_MAX) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, s->name)) continue;
        if (!good_name(e->d_name)) {
            say_once(s, "%s: an instance name with odd characters; skipped", s->dir);
            continue;
        }
        scan_peer(s, dirfd(d), e->d_name);
    }
    closedir(d);
    *items = s->items;
    if (!s->nitems) sift_sync_commit(s);
    return s->nitems;
}

void sift_sync_describe(const sift_sync *s, size_t item, char *desc, size_t cap)
{
    if (item >= s->nitems) {
        snprintf(desc, cap, "sync:unknown");
        return;
    }
    snprintf(desc, cap, "sync:%s,src:%06u", s->peers[s->item_peer[item]].name, s->item_id[item]);
}

const char *sift_sync_path(const sift_sync *s, size_t item)
{
    return item < s->nitems && s->item_path[item] ? s->item_path[item] : s->dir;
}

int sift_sync_commit(sift_sync *s)
{
    int rc = 0;
    for (size_t i = 0; i < s->npeers; i++) {
        peer *p = &s->peers[i];
        if (p->pending == p->next_id) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/.synced/%s", s->out, p->name);
        if (sift_write_atomic(path, (const uint8_t *)&p->pending, sizeof p->pending) != 0) {
            fprintf(stderr, "sift: sync: cannot write %s: %s\n", path, strerror(errno));
            rc = -1;
            continue;
        }
        p->next_id = p->pending;
        p->recorded = time(NULL);
    }
    end_round(s);
    return rc;
}
