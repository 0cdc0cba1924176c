/* The fixture of tests that build harnesses or write files, and the reading back of results. */
#define _GNU_SOURCE
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *sift_test_scratch(void)
{
    char *dir = sift_test_tmpdir();
    if (dir && chmod(dir, 0755) != 0) {
        sift_test_rmtree(dir);
        return NULL;
    }
    return dir;
}

void sift_test_scratch_sub(char **scratch, const char *sub, char *dir, char *prefix)
{
    *scratch = sift_test_scratch();
    if (!*scratch) fail_msg("cannot make a scratch folder: %s", strerror(errno));
    snprintf(dir, PATH_MAX, "%s/%s", *scratch, sub);
    if (mkdir(dir, 0700) != 0) fail_msg("cannot make %s: %s", dir, strerror(errno));
    if (prefix) snprintf(prefix, PATH_MAX, "%s/", dir);
}

int sift_test_scratch_setup(void **state)
{
    *state = sift_test_scratch();
    return *state ? 0 : -1;
}

int sift_test_scratch_teardown(void **state)
{
    sift_test_rmtree(*state);
    *state = NULL;
    return 0;
}

int sift_test_build(const char *dir, const char *name, const char *source, const char *flags)
{
    if (!dir) return -1;
    sift_test_proc *p = malloc(sizeof(*p));
    if (!p) return -1;
    int rc = sift_test_sh(
        p, dir, SIFT_BUILD_DIR "/bin/sift-cc -g -O1 -fsanitize=fuzzer %s %s '%s/%s' -o %s",
        SIFT_TEST_SAN, flags, SIFT_SOURCE_DIR, source, name);
    if (rc != 0)
        fprintf(stderr, "building %s from %s failed (%d):\n%s%s", name, source, rc, p->out, p->err);
    free(p);
    return rc == 0 ? 0 : -1;
}

long sift_test_count_entries(const char *dir, const char *sub, const char *glob)
{
    char path[1024];
    snprintf(path, sizeof path, "%s%s%s", dir, sub ? "/" : "", sub ? sub : "");
    DIR *d = opendir(path);
    if (!d) return errno == ENOENT ? 0 : -1;
    long n = 0;
    const struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
             fnmatch(glob, e->d_name, 0) == 0;
    closedir(d);
    return n;
}

double sift_test_json_num(const char *s, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(s, pat);
    return p ? strtod(p + strlen(pat), NULL) : -1;
}

void sift_test_expect_all(const char *text, const char *const *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strstr(text, want[i])) fail_msg("expected '%s' in:\n%s", want[i], text);
}

const char *sift_test_read(const char *dir, const char *rel)
{
    static char text[SIFT_TEST_OUT_CAP];
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *in = fopen(path, "rb");
    if (!in) return NULL;
    size_t n = fread(text, 1, sizeof text - 1, in);
    text[n] = '\0';
    (void)fclose(in);
    return text;
}

void sift_test_capture_begin(sift_test_capture *c)
{
    fflush(stderr);
    FILE *f = tmpfile();
    c->saved = dup(2);
    c->file = f ? dup(fileno(f)) : -1;
    if (f) (void)fclose(f);
    if (c->saved >= 0 && c->file >= 0) dup2(c->file, 2);
}

const char *sift_test_capture_end(sift_test_capture *c)
{
    static char text[SIFT_TEST_OUT_CAP];
    fflush(stderr);
    ssize_t n = c->file >= 0 ? pread(c->file, text, sizeof text - 1, 0) : -1;
    text[n > 0 ? n : 0] = '\0';
    if (c->saved >= 0) {
        dup2(c->saved, 2);
        close(c->saved);
    }
    if (c->file >= 0) close(c->file);
    c->saved = c->file = -1;
    return text;
}

int sift_test_sh_limited(sift_test_proc *p, const char *dir, unsigned long long fsize,
                         bool unprivileged, const char *fmt, ...)
{
    sift_test_jail j = {0};
    const char *why = NULL;
    if (unprivileged && sift_test_unprivileged(&j, dir, &why) != 0) {
        fprintf(stderr, "skipped: %s\n", why);
        skip();
    }
    j.fsize = fsize;
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return sift_test_sh_jailed(p, &j, dir, "%s", cmd);
}
