/* The canary runtime: magma_log() records, per bug, the first time any process of a campaign
 * reached its site and the first time its condition held, in the file named by
 * SIFT_CANARY_FILE (created by canary_tool init). Without that variable, or when the file
 * cannot be mapped, canaries record nothing and cost one load. Compiled without coverage
 * instrumentation, so that it adds no feedback of its own.
 *
 * Magma's API passes no context, so the mapping and a per-process cache of call sites are
 * globals; after a bug's first reach and trigger a call costs a pointer lookup and two loads. */
#define _GNU_SOURCE
#include "canary.h"
#include "canary_file.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SITE_CACHE 128 /* distinct bug names a process looks up fast; more still work */

typedef struct {
    _Atomic(const char *) bug; /* the name's address: Magma's patches pass string literals */
    _Atomic(sift_canary_slot *) slot;
} site;

static sift_canary_file *g_file;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static site g_sites[SITE_CACHE];

/* Maps the file between two inaccessible pages: a bug's wild write that runs past its buffer
 * (a memset over the next mappings, as libsndfile's SND001 does) faults at a guard page
 * instead of wiping the campaign's records. */
static void *map_guarded(int fd, size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t span = (size + page - 1) / page * page;
    char *reserved = mmap(NULL, span + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (reserved == MAP_FAILED) return MAP_FAILED;
    void *m = mmap(reserved + page, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (m == MAP_FAILED) munmap(reserved, span + 2 * page);
    return m;
}

static void map_file(void)
{
    const char *path = getenv("SIFT_CANARY_FILE");
    int fd = path ? open(path, O_RDWR | O_CLOEXEC) : -1;
    struct stat st;
    if (fd < 0) return;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(sift_canary_file)) {
        void *m = map_guarded(fd, sizeof(sift_canary_file));
        if (m != MAP_FAILED && ((sift_canary_file *)m)->magic == SIFT_CANARY_MAGIC) g_file = m;
    }
    close(fd);
}

/* The slot of BUG in the file, claimed when it has none yet; NULL when the file is full. */
static sift_canary_slot *find_slot(const char *bug)
{
    uint64_t key = sift_canary_key(bug);
    for (unsigned i = 0; i < SIFT_CANARY_SLOTS; i++) {
        sift_canary_slot *s = &g_file->slots[(key + i) % SIFT_CANARY_SLOTS];
        uint64_t held = atomic_load_explicit(&s->key, memory_order_acquire);
        if (!held && atomic_compare_exchange_strong(&s->key, &held, key)) {
            strncpy(s->name, bug, SIFT_CANARY_NAME - 1);
            return s;
        }
        if (held == key) return s;
    }
    return NULL;
}

static sift_canary_slot *slot_of(const char *bug)
{
    uintptr_t h = ((uintptr_t)bug >> 3) * 0x9e3779b97f4a7c15ull;
    site *c = &g_sites[(h >> 32) % SITE_CACHE];
    if (atomic_load_explicit(&c->bug, memory_order_acquire) == bug)
        return atomic_load_explicit(&c->slot, memory_order_relaxed);
    sift_canary_slot *s = find_slot(bug);
    if (s) {
        atomic_store_explicit(&c->slot, s, memory_order_relaxed);
        atomic_store_explicit(&c->bug, bug, memory_order_release);
    }
    return s;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sets *FIRST to now unless a process set it before. */
static void first_time(_Atomic uint64_t *first)
{
    uint64_t none = 0;
    if (!atomic_load_explicit(first, memory_order_relaxed))
        atomic_compare_exchange_strong(first, &none, now_ns());
}

void magma_log(const char *bug, int condition)
{
    pthread_once(&g_once, map_file);
    if (!g_file) return;
    sift_canary_slot *s = slot_of(bug);
    if (!s) return;
    first_time(&s->reached_ns);
    if (condition) first_time(&s->triggered_ns);
}
