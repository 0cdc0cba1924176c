/* Running programs from tests, capturing their output through unlinked temporary files (no
 * pipes, so that a chatty child cannot block on a full one). */
#define _GNU_SOURCE
#include "subprocess.h"

#include <fcntl.h>
#include <stdarg.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void read_back(FILE *f, char *buf)
{
    rewind(f);
    size_t n = fread(buf, 1, SIFT_TEST_OUT_CAP - 1, f);
    buf[n] = '\0';
    fclose(f);
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

int sift_test_sh(sift_test_proc *p, const char *dir, const char *fmt, ...)
{
    char cmd[4096], line[4200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "cd '%s' && %s", dir, cmd);
    sift_test_run(p, (const char *[]){"sh", "-c", line, NULL}, NULL);
    return p->status;
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
    remove(path);
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
