/* The merge control file: a header (the number of files, how many of them are in the first
 * corpus, one path a line) and then, for each input a merge runs, "STARTED i size" before and
 * "FT i" and "COV i" after it. libFuzzer lists its feature and edge ids on the FT and COV
 * lines; sift's features are its own, and its lines carry none. */
#include "engine/modes/mcf.h"
#include "engine/base/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The number that LINE holds after WORD (digits, then a space or the end of the line). */
static bool number_after(const char *line, const char *word, size_t *out)
{
    size_t len = strlen(word);
    if (strncmp(line, word, len) != 0 || line[len] < '0' || line[len] > '9') return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(line + len, &end, 10);
    if (errno || (*end != ' ' && *end != '\n' && *end != 0)) return false;
    *out = (size_t)v;
    return true;
}

/* Whether IN starts with the header of NAMES; leaves IN after it. */
static bool same_header(FILE *in, const char *const *names, size_t n, size_t nold)
{
    char line[4200];
    size_t got_n, got_old;
    if (!fgets(line, sizeof line, in) || !number_after(line, "", &got_n) || got_n != n ||
        !fgets(line, sizeof line, in) || !number_after(line, "", &got_old) || got_old != nold)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!fgets(line, sizeof line, in)) return false;
        line[strcspn(line, "\n")] = 0;
        if (strcmp(line, names[i]) != 0) return false;
    }
    return true;
}

/* Marks the inputs of IN's progress lines that STARTED without an FT after them; returns the
 * number of inputs started (libFuzzer's "first not processed file"). */
static size_t read_progress(FILE *in, bool *failed, size_t n)
{
    char line[256];
    size_t started = 0;
    while (fgets(line, sizeof line, in)) {
        size_t i;
        if (number_after(line, "STARTED ", &i) && i < n) {
            failed[i] = true;
            if (i + 1 > started) started = i + 1;
        }
        if (number_after(line, "FT ", &i) && i < n) failed[i] = false;
    }
    return started;
}

/* Written whole through a temporary of sift_write_whole's (created new, so a link planted in
 * its place is never followed), then renamed over PATH. */
static int write_header(const char *path, const char *const *names, size_t n, size_t nold)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out) return -1;
    fprintf(out, "%zu\n%zu\n", n, nold);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s\n", names[i]);
    int rc = fclose(out) == 0 ? sift_write_whole(path, (const uint8_t *)text, len, false) : -1;
    free(text);
    return rc;
}

int sift_mcf_open(sift_mcf *m, const char *path, const char *const *names, size_t n, size_t nold)
{
    *m = (sift_mcf){.fd = -1};
    if (!path) return 0;
    m->failed = calloc(n + 1, sizeof(*m->failed));
    if (!m->failed) {
        fprintf(stderr, "sift: -merge_control_file=%s: out of memory\n", path);
        return -1;
    }
    bool provided = false, resume = false;
    size_t started = 0;
    FILE *in = fopen(path, "r");
    if (in) {
        provided = fgetc(in) != EOF;
        if (provided) {
            rewind(in);
            fprintf(stderr, "MERGE-OUTER: non-empty control file provided: '%s'\n", path);
            resume = same_header(in, names, n, nold);
        }
        if (resume) started = read_progress(in, m->failed, n);
        (void)fclose(in);
    }
    if (provided && !resume) fprintf(stderr, "MERGE-OUTER: bad control file, will overwrite it\n");
    if (!resume && write_header(path, names, n, nold) != 0) {
        fprintf(stderr, "sift: -merge_control_file=%s: cannot write: %s\n", path, strerror(errno));
        return -1;
    }
    m->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (m->fd < 0) {
        fprintf(stderr, "sift: -merge_control_file=%s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    size_t skipped = 0;
    for (size_t i = 0; i < n; i++)
        skipped += m->failed[i];
    if (!resume) return 0;
    fprintf(stderr, "MERGE-OUTER: control file ok, %zu files total, first not processed file %zu\n",
            n, started);
    m->done = started == n && !skipped;
    if (m->done) {
        fprintf(stderr, "MERGE-OUTER: nothing to do, merge has been completed before\n");
        return 0;
    }
    /* Its lines carry no features, unlike libFuzzer's: the inputs run again, but those. */
    for (size_t i = 0; i < n; i++)
        if (m->failed[i])
            fprintf(stderr,
                    "MERGE-OUTER: '%s' will be skipped as unlucky (merge has stumbled on it the "
                    "last time)\n",
                    names[i]);
    return 0;
}

static void append(const sift_mcf *m, const char *line, int len)
{
    /* A line that cannot be written only costs the next merge its skips. */
    if (m->fd >= 0 && len > 0) {
        ssize_t written = write(m->fd, line, (size_t)len);
        (void)written;
    }
}

void sift_mcf_started(const sift_mcf *m, size_t i, size_t size)
{
    char line[64];
    int len = snprintf(line, sizeof line, "STARTED %zu %zu\n", i, size);
    append(m, line, len);
}

void sift_mcf_done(const sift_mcf *m, size_t i)
{
    char line[64];
    int len = snprintf(line, sizeof line, "FT %zu\nCOV %zu\n", i, i);
    append(m, line, len);
}

void sift_mcf_close(sift_mcf *m)
{
    if (m->fd >= 0) close(m->fd);
    free(m->failed);
    *m = (sift_mcf){.fd = -1};
}
