/* Creates and reads canary files (canary_file.h):
 *   canary_tool init FILE   a new file whose campaign starts now
 *   canary_tool dump FILE   one line per bug: its name, then the seconds from the campaign's
 *                           start to its first reach and its first trigger ("-" for never) */
#include "canary_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int init(const char *path)
{
    sift_canary_file f = {.magic = SIFT_CANARY_MAGIC};
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    f.start_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, &f, sizeof f) != (ssize_t)sizeof f || close(fd) != 0) {
        fprintf(stderr, "canary_tool: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

static void seconds(uint64_t at, uint64_t start)
{
    if (at)
        printf("\t%.3f", (double)(at > start ? at - start : 0) / 1e9);
    else
        printf("\t-");
}

static int dump(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    sift_canary_file *f = fd < 0 ? MAP_FAILED : mmap(NULL, sizeof *f, PROT_READ, MAP_SHARED, fd, 0);
    if (fd >= 0) close(fd);
    if (f == MAP_FAILED || f->magic != SIFT_CANARY_MAGIC) {
        fprintf(stderr, "canary_tool: %s: not a canary file\n", path);
        return 1;
    }
    for (unsigned i = 0; i < SIFT_CANARY_SLOTS; i++) {
        const sift_canary_slot *s = &f->slots[i];
        if (!atomic_load(&s->key)) continue;
        printf("%.*s", SIFT_CANARY_NAME, s->name);
        seconds(atomic_load(&s->reached_ns), f->start_ns);
        seconds(atomic_load(&s->triggered_ns), f->start_ns);
        printf("\n");
    }
    munmap(f, sizeof *f);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "init")) return init(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "dump")) return dump(argv[2]);
    fprintf(stderr, "usage: canary_tool init|dump FILE\n");
    return 2;
}
