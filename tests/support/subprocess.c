/* Running programs from tests, capturing their output through unlinked temporary files (no
 * pipes, so that a chatty child cannot block on a full one). */
#define _GNU_SOURCE
#include "subprocess.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void read_back(FILE *f, char *buf)
{
    rewind(f);
    size_t n = fread(buf, 1, SIFT_TEST_OUT_CAP - 1, f);
    buf[n] = '\0';
    (void)fclose(f);
}

void sift_test_run(sift_test_proc *p, const char *const *argv, const char *const *env)
{
    p->status = -1;
    p->out[0] = p->err[0] = '\0';
    size_t n = 0;
    while (argv[n])
        n++;
    char **args = calloc(n + 1, sizeof(*args));
    FILE *out = tmpfile(), *err = tmpfile();
    if (!args || !out || !err) goto done;
    n = 0;
    for (size_t i = 0; argv[i]; i++)
        if (argv[i][0]) args[n++] = (char *)argv[i];
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        for (size_t i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        dup2(null, 0);
        dup2(fileno(out), 1);
        dup2(fileno(err), 2);
        execvp(args[0], args);
        _exit(127);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) goto done;
    p->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
done:
    if (out) read_back(out, p->out);
    if (err) read_back(err, p->err);
    free(args);
}

/* The shell command line that runs FMT's command in folder DIR. */
__attribute__((format(printf, 3, 0))) static void command_line(char line[4200], const char *dir,
                                                               const char *fmt, va_list ap)
{
    char cmd[4096];
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    snprintf(line, 4200, "cd '%s' && %s", dir, cmd);
}

int sift_test_sh(sift_test_proc *p, const char *dir, const char *fmt, ...)
{
    char line[4200];
    va_list ap;
    va_start(ap, fmt);
    command_line(line, dir, fmt, ap);
    va_end(ap);
    sift_test_run(p, (const char *[]){"sh", "-c", line, NULL}, NULL);
    return p->status;
}

/* In the child: becomes J's user, limits file sizes; 0 or -1. */
static int enter_jail(const sift_test_jail *j)
{
    if (j->uid && (setgroups(0, NULL) != 0 || setgid(j->gid) != 0 || setuid(j->uid) != 0))
        return -1;
    if (j->fsize) {
        struct rlimit r = {j->fsize, j->fsize};
        /* An ignored signal stays ignored across exec. */
        if (signal(SIGXFSZ, SIG_IGN) == SIG_ERR || setrlimit(RLIMIT_FSIZE, &r) != 0) return -1;
    }
    return 0;
}

/* Appends what FD has to BUF (holding *LEN bytes, at most SIFT_TEST_OUT_CAP - 1): 1 when it
 * read some, 2 when it would wait, 0 at the end. */
static int pump(int fd, char *buf, size_t *len)
{
    char chunk[4096];
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 2;
    if (n <= 0) return 0;
    size_t room = SIFT_TEST_OUT_CAP - 1 - *len, take = (size_t)n < room ? (size_t)n : room;
    memcpy(buf + *len, chunk, take);
    *len += take;
    buf[*len] = '\0';
    return 1;
}

int sift_test_sh_jailed(sift_test_proc *p, const sift_test_jail *j, const char *dir,
                        const char *fmt, ...)
{
    char line[4200];
    va_list ap;
    va_start(ap, fmt);
    command_line(line, dir, fmt, ap);
    va_end(ap);
    p->status = -1;
    p->out[0] = p->err[0] = '\0';
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0) return -1;
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(out[0]), close(out[1]);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        dup2(null, 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        if (enter_jail(j) != 0) {
            dprintf(2, "sift_test_sh_jailed: %s\n", strerror(errno));
            _exit(126);
        }
        execl("/bin/sh", "sh", "-c", line, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    /* Until the shell is gone; then what is left in the pipes, without waiting for children
     * it left behind and that still hold them. */
    size_t olen = 0, elen = 0;
    struct pollfd fds[2] = {{.fd = out[0], .events = POLLIN}, {.fd = err[0], .events = POLLIN}};
    int status = 0;
    int done = pid < 0;
    while (!done) {
        poll(fds, 2, 50);
        for (int k = 0; k < 2; k++)
            if (fds[k].fd >= 0 && (fds[k].revents & (POLLIN | POLLHUP)) &&
                !pump(fds[k].fd, k ? p->err : p->out, k ? &elen : &olen))
                fds[k].fd = -1;
        done = waitpid(pid, &status, WNOHANG) == pid;
    }
    for (int k = 0; k < 2; k++) {
        if (fds[k].fd < 0) continue;
        fcntl(fds[k].fd, F_SETFL, O_NONBLOCK);
        while (pump(fds[k].fd, k ? p->err : p->out, k ? &elen : &olen) == 1)
            ;
    }
    close(out[0]);
    close(err[0]);
    if (pid > 0) p->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return p->status;
}

int sift_test_fork_jailed(const sift_test_jail *j, int (*fn)(void *ctx), void *ctx)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) _exit(enter_jail(j) != 0 ? 126 : fn(ctx));
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int sift_test_unprivileged(sift_test_jail *j, const char *dir, const char **why)
{
    *j = (sift_test_jail){0};
    if (geteuid() != 0) return 0;
    *j = (sift_test_jail){.uid = SIFT_TEST_NOBODY, .gid = SIFT_TEST_NOBODY};
    sift_test_proc *p = malloc(sizeof(*p));
    int rc = p ? sift_test_sh_jailed(p, j, dir, "true") : -1;
    free(p);
    if (rc == 126)
        *why = "root here cannot become the user 65534 (nobody) (no CAP_SETUID?)";
    else if (rc != 0)
        *why = "the user 65534 (nobody) cannot reach the scratch folder (a folder above it is "
               "closed to others)";
    return rc == 0 ? 0 : -1;
}

char *sift_test_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *dir;
    if (asprintf(&dir, "%s/sift-test-XXXXXX", base && *base ? base : "/tmp") < 0) return NULL;
    if (!mkdtemp(dir)) {
        free(dir);
        return NULL;
    }
    return dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    (void)remove(path); /* what cannot be removed stays: the walk goes on */
    return 0;
}

void sift_test_rmtree(char *dir)
{
    if (!dir) return;
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

char *sift_test_write(const char *dir, const char *name, const char *text, unsigned mode)
{
    char *path;
    if (asprintf(&path, "%s/%s", dir, name) < 0) return NULL;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    size_t len = strlen(text);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
        if (fd >= 0) close(fd);
        free(path);
        return NULL;
    }
    close(fd);
    return path;
}

void sift_test_one_line(const sift_test_proc *p, const char *what, const char *line)
{
    const char *at = strstr(p->err, line);
    if (!at) fail_msg("%s: expected '%s' in:\n%s", what, line, p->err);
    /* A line in libFuzzer's words ("ERROR: ...") is the one error line when no "sift: " is. */
    const char *first = strstr(p->err, "sift: ");
    if (first != (strncmp(line, "sift: ", 6) == 0 ? at : NULL) || strstr(at + 1, "sift: "))
        fail_msg("%s: more lines than '%s':\n%s", what, line, p->err);
}

long sift_test_intact_files(sift_test_proc *p, const char *dir, const char *sub)
{
    if (sift_test_sh(
            p, dir,
            "cd %s && n=0 && for f in * .[!.]*; do [ -e \"$f\" ] && [ \"$f\" != .lock ] || "
            "continue; "
            "[ \"$(sha1sum < \"$f\" | cut -c1-40)\" = \"$f\" ] || { echo \"bad $f\"; exit 1; }; "
            "n=$((n+1)); done; echo $n",
            sub) != 0)
        return -1;
    return strtol(p->out, NULL, 10);
}

unsigned long long sift_test_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000 + (unsigned long long)ts.tv_nsec / 1000000;
}

void sift_test_nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

int sift_test_alive(long pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int zombie = fgets(buf, sizeof buf, f) && strstr(buf, ") Z");
    (void)fclose(f);
    return !zombie;
}
