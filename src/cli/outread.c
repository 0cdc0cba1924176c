/* Reading an output folder: strict parsers, so that a damaged file is named, never guessed at. */
#define _GNU_SOURCE
#include "cli/outread.h"
#include "engine/base/humanize.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes the message into ERR; -1. A macro, so that the analyzer, which does not follow calls
 * into variadic functions, sees the -1 its callers return. */
#define fail(err, errlen, ...) (snprintf((err), (errlen), __VA_ARGS__), -1)

/* TEXT (LEN bytes) fit to quote in a message: at most 40 bytes, control bytes as '?'. */
static const char *quote(const char *text, size_t len, char buf[48])
{
    size_t n = len > 40 ? 40 : len;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        buf[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    snprintf(buf + n, 48 - n, "%s", len > 40 ? "..." : "");
    return buf;
}

int sift_out_check_dir(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return fail(err, errlen, "%s: %s", dir,
                    errno == ENOENT ? "no such folder" : strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return fail(err, errlen, "%s: not a folder (give the output folder of sift -out)", dir);
    return 0;
}

/* Another folder below DIR that holds FILE: DIR is then a -sync_dir, the hint names one. */
static bool instance_below(const char *dir, const char *file, char *name, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        struct stat st;
        if ((size_t)snprintf(path, sizeof path, "%s/%s/%s", dir, e->d_name, file) < sizeof path &&
            stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            sift_human_name(e->d_name, name, cap);
            found = true;
        }
    }
    closedir(d);
    return found;
}

/* Reads DIR/NAME whole, NUL-terminated. */
static int read_file(const char *dir, const char *name, char **buf, size_t *len, char *err,
                     size_t errlen)
{
    *buf = NULL;
    *len = 0;
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return fail(err, errlen, "%s/%s: the path is too long", dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        char inst[256];
        if (errno != ENOENT) return fail(err, errlen, "%s: %s", path, strerror(errno));
        if (instance_below(dir, name, inst, sizeof inst))
            return fail(err, errlen,
                        "%s: no such file; %s holds instances (a -sync_dir?): show %s/%s", path,
                        dir, dir, inst);
        return fail(err, errlen, "%s: no such file (is %s an output folder of sift -out?)", path,
                    dir);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return fail(err, errlen, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return fail(err, errlen, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > SIFT_OUT_MAX_FILE) {
        close(fd);
        return fail(err, errlen, "%s: too large (%lld bytes; at most %u MiB are read)", path,
                    (long long)st.st_size, SIFT_OUT_MAX_FILE >> 20);
    }
    /* The size may change while a campaign writes: read to the end, up to the limit. */
    size_t cap = (size_t)st.st_size + 4096, n = 0;
    char *b = malloc(cap + 1);
    while (b) {
        if (n == cap) {
            if (cap >= SIFT_OUT_MAX_FILE) break;
            char *grown = realloc(b, cap * 2 + 1);
            if (!grown) {
                free(b);
                b = NULL;
                break;
            }
            b = grown;
            cap *= 2;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(b);
            close(fd);
            return fail(err, errlen, "%s: %s", path, strerror(e));
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (!b) return fail(err, errlen, "%s: out of memory reading it", path);
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

/* Walks the lines of a file's text: each must end in '\n' and hold no NUL byte. */
typedef struct {
    const char *p, *end;
    size_t number;
} lines;

/* The next line (without its newline, nor a '\r' before it) into *LINE, *LEN; 1, 0 at the end,
 * or -1 with the message. */
static int next_line(lines *l, const char *path, const char **line, size_t *len, char *err,
                     size_t errlen)
{
    if (l->p >= l->end) return 0;
    l->number++;
    const char *nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
    if (!nl)
        return fail(err, errlen, "%s:%zu: truncated line (no newline at the end)", path, l->number);
    if (memchr(l->p, '\0', (size_t)(nl - l->p)))
        return fail(err, errlen, "%s:%zu: malformed line (a NUL byte)", path, l->number);
    *line = l->p;
    *len = (size_t)(nl - l->p);
    if (*len && (*line)[*len - 1] == '\r') (*len)--;
    l->p = nl + 1;
    return 1;
}

static bool parse_u64(const char *s, size_t n, uint64_t *out)
{
    if (!n) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10) return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* A finite number that is not negative; a trailing '%' is allowed when PERCENT. */
static bool parse_double(const char *s, size_t n, bool percent, double *out)
{
    if (percent && n && s[n - 1] == '%') n--;
    if (!n || n > 63 || !((s[0] >= '0' && s[0] <= '9') || s[0] == '.')) return false;
    char buf[64];
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (errno || *end || !isfinite(v) || v < 0) return false;
    *out = v;
    return true;
}

static void trim(const char **s, size_t *n)
{
    while (*n && ((*s)[0] == ' ' || (*s)[0] == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

typedef enum { KEY_U64, KEY_DOUBLE, KEY_PERCENT, KEY_TEXT } key_kind;

/* The keys read from fuzzer_stats, by AFL++ 4's name and the name older AFL++ wrote. */
static const struct {
    const char *name, *old;
    key_kind kind;
    size_t offset, size;
    bool required;
} keys[] = {
#define K(name, old, kind, req)                                                                    \
    {                                                                                              \
#name, old, kind, offsetof(sift_out_stats, name), sizeof(((sift_out_stats *)0)->name), req \
    }
    K(start_time, NULL, KEY_U64, true),
    K(last_update, NULL, KEY_U64, true),
    K(run_time, NULL, KEY_U64, false),
    K(fuzzer_pid, NULL, KEY_U64, false),
    K(execs_done, NULL, KEY_U64, true),
    K(execs_per_sec, NULL, KEY_DOUBLE, true),
    K(corpus_count, "paths_total", KEY_U64, true),
    K(corpus_favored, "paths_favored", KEY_U64, true),
    K(saved_crashes, "unique_crashes", KEY_U64, true),
    K(saved_hangs, "unique_hangs", KEY_U64, true),
    K(last_find, "last_path", KEY_U64, true),
    K(last_crash, NULL, KEY_U64, false),
    K(last_hang, NULL, KEY_U64, false),
    K(edges_found, NULL, KEY_U64, false),
    K(total_edges, NULL, KEY_U64, false),
    K(bitmap_cvg, NULL, KEY_PERCENT, false),
    K(banner, "afl_banner", KEY_TEXT, false),
    K(version, "afl_version", KEY_TEXT, false),
#undef K
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static size_t key_index(const char *name)
{
    size_t k = 0;
    while (k < NKEYS && strcmp(keys[k].name, name) != 0)
        k++;
    return k;
}

int sift_out_read_stats(const char *dir, sift_out_stats *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof(*st));
    char *text, path[4096], q[48];
    size_t len;
    if (read_file(dir, "fuzzer_stats", &text, &len, err, errlen) != 0) return -1;
    snprintf(path, sizeof path, "%s/fuzzer_stats", dir);
    bool seen[NKEYS] = {false};
    lines l = {text, text + len, 0};
    const char *line;
    size_t n;
    int rc;
    if (len == 0) {
        free(text);
        return fail(err, errlen, "%s: empty file", path);
    }
    while ((rc = next_line(&l, path, &line, &n, err, errlen)) == 1) {
        trim(&line, &n);
        if (!n) continue;
        size_t key = 0;
        while (key < n && ((line[key] >= 'a' && line[key] <= 'z') ||
                           (line[key] >= '0' && line[key] <= '9') || line[key] == '_'))
            key++;
        const char *colon = memchr(line, ':', n);
        bool spaces_only = colon && colon >= line + key;
        for (const char *c = line + key; spaces_only && c < colon; c++)
            spaces_only = *c == ' ' || *c == '\t';
        if (!key || !spaces_only) {
            rc = fail(err, errlen, "%s:%zu: malformed line \"%s\" (expected \"key : value\")", path,
                      l.number, quote(line, n, q));
            break;
        }
        const char *value = colon + 1;
        size_t vlen = (size_t)(line + n - value);
        trim(&value, &vlen);
        size_t k = 0;
        while (k < NKEYS &&
               !((strlen(keys[k].name) == key && !memcmp(line, keys[k].name, key)) ||
                 (keys[k].old && strlen(keys[k].old) == key && !memcmp(line, keys[k].old, key))))
            k++;
        if (k == NKEYS) continue; /* a key sift has no use for */
        void *field = (char *)st + keys[k].offset;
        bool ok = true;
        if (keys[k].kind == KEY_U64)
            ok = parse_u64(value, vlen, field);
        else if (keys[k].kind == KEY_DOUBLE || keys[k].kind == KEY_PERCENT)
            ok = parse_double(value, vlen, keys[k].kind == KEY_PERCENT, field);
        else
            snprintf(field, keys[k].size, "%s", quote(value, vlen, q));
        if (!ok) {
            rc = fail(err, errlen, "%s:%zu: %s: \"%s\" is not a number", path, l.number,
                      keys[k].name, quote(value, vlen, q));
            break;
        }
        seen[k] = true;
    }
    free(text);
    if (rc < 0) return -1;
    for (size_t k = 0; k < NKEYS; k++)
        if (keys[k].required && !seen[k])
            return fail(err, errlen, "%s: no %s line (not a complete fuzzer_stats)", path,
                        keys[k].name);
    st->has_edges = seen[key_index("edges_found")] && seen[key_index("total_edges")];
    /* Older AFL++ wrote no run_time. */
    if (!seen[key_index("run_time")])
        st->run_time = st->last_update > st->start_time ? st->last_update - st->start_time : 0;
    return 0;
}

/* The index of the first of NAMES among the header's columns, or -1. */
static long column(char **cols, size_t ncols, const char *a, const char *b)
{
    for (size_t i = 0; i < ncols; i++)
        if (!strcmp(cols[i], a)) return (long)i;
    for (size_t i = 0; b && i < ncols; i++)
        if (!strcmp(cols[i], b)) return (long)i;
    return -1;
}

static void free_columns(char **cols, size_t n)
{
    for (size_t i = 0; cols && i < n; i++)
        free(cols[i]);
    free(cols);
}

/* Splits the header "# a, b, c" into its names. */
static char **header_columns(const char *line, size_t n, size_t *ncols)
{
    size_t commas = 0;
    for (size_t i = 0; i < n; i++)
        commas += line[i] == ',';
    char **cols = calloc(commas + 1, sizeof(*cols));
    *ncols = 0;
    if (!cols) return NULL;
    line++; /* the '#' */
    n--;
    for (;;) {
        size_t len = 0;
        while (len < n && line[len] != ',')
            len++;
        const char *name = line;
        size_t nlen = len;
        trim(&name, &nlen);
        if (!(cols[*ncols] = strndup(name, nlen))) {
            free_columns(cols, *ncols);
            return NULL;
        }
        (*ncols)++;
        if (len == n) break;
        line += len + 1;
        n -= len + 1;
    }
    return cols;
}

/* The columns of plot_data that the plot reads: time, coverage and corpus size. */
typedef struct {
    char **names;
    size_t n;
    long want[3]; /* indices of time, coverage and corpus size */
    bool unix_time;
} plot_columns;

/* Reads the header LINE (N bytes) of PATH into C; 1, or -1 after a message in ERR. */
static int read_header(const char *path, const char *line, size_t n, plot_columns *c,
                       bool *cov_is_percent, char *err, size_t errlen)
{
    if (n < 2 || line[0] != '#')
        return fail(err, errlen,
                    "%s:1: no header line (expected \"# relative_time, ..., edges_found\")", path);
    if (!(c->names = header_columns(line, n, &c->n))) return fail(err, errlen, "out of memory");
    long t = column(c->names, c->n, "relative_time", NULL);
    if (t < 0 && (t = column(c->names, c->n, "unix_time", NULL)) >= 0) c->unix_time = true;
    long cov = column(c->names, c->n, "edges_found", NULL);
    if (cov < 0 && (cov = column(c->names, c->n, "map_size", NULL)) >= 0) *cov_is_percent = true;
    long corpus = column(c->names, c->n, "corpus_count", "paths_total");
    const char *missing = t < 0        ? "relative_time"
                          : cov < 0    ? "edges_found (or map_size)"
                          : corpus < 0 ? "corpus_count"
                                       : NULL;
    if (missing) return fail(err, errlen, "%s:1: the header names no %s column", path, missing);
    c->want[0] = t, c->want[1] = cov, c->want[2] = corpus;
    return 1;
}

/* The wanted fields of the data LINE (N bytes, line NUMBER of PATH) into V; 1, or -1 after a
 * message in ERR. */
static int read_fields(const char *path, size_t number, const char *line, size_t n,
                       const plot_columns *c, double v[3], char *err, size_t errlen)
{
    char q[48];
    size_t field = 0;
    const char *p = line, *end = line + n;
    for (;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *f = p;
        size_t flen = (size_t)((comma ? comma : end) - p);
        trim(&f, &flen);
        for (int i = 0; i < 3; i++)
            if ((long)field == c->want[i] && !parse_double(f, flen, true, &v[i]))
                return fail(err, errlen, "%s:%zu: %s: \"%s\" is not a number", path, number,
                            c->names[field], quote(f, flen, q));
        field++;
        if (!comma) break;
        p = comma + 1;
    }
    if (field != c->n)
        return fail(err, errlen, "%s:%zu: malformed line: %zu fields where the header names %zu",
                    path, number, field, c->n);
    return 1;
}

/* Where the next point goes on the time axis, across resumed sessions. */
typedef struct {
    size_t cap;
    double offset, last, first_unix;
} plot_axis;

/* Appends the point V (time, coverage, corpus size) to PLOT; false when out of memory. */
static bool append_point(sift_out_plot *plot, plot_axis *a, bool unix_time, double v[3])
{
    if (unix_time) {
        if (a->first_unix < 0) a->first_unix = v[0];
        v[0] = v[0] >= a->first_unix ? v[0] - a->first_unix : 0;
    }
    /* A resumed campaign starts its relative times at 0 again: its line continues the axis
     * where the last run ended. */
    if (!plot->n) plot->sessions = 1;
    if (plot->n && v[0] + a->offset < a->last) {
        a->offset = a->last;
        plot->sessions++;
    }
    if (plot->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 256;
        sift_out_point *grown = realloc(plot->points, a->cap * sizeof(*grown));
        if (!grown) return false;
        plot->points = grown;
    }
    a->last = v[0] + a->offset;
    plot->points[plot->n++] = (sift_out_point){.time = a->last, .cov = v[1], .corpus = v[2]};
    return true;
}

int sift_out_read_plot(const char *dir, sift_out_plot *plot, char *err, size_t errlen)
{
    memset(plot, 0, sizeof(*plot));
    char *text, path[4096];
    size_t len;
    if (read_file(dir, "plot_data", &text, &len, err, errlen) != 0) return -1;
    snprintf(path, sizeof path, "%s/plot_data", dir);
    if (len == 0) {
        free(text);
        return fail(err, errlen, "%s: empty file", path);
    }
    lines l = {text, text + len, 0};
    const char *line;
    size_t n;
    plot_columns cols = {0};
    plot_axis axis = {.first_unix = -1};
    int rc = next_line(&l, path, &line, &n, err, errlen);
    if (rc == 1) rc = read_header(path, line, n, &cols, &plot->cov_is_percent, err, errlen);
    while (rc == 1 && (rc = next_line(&l, path, &line, &n, err, errlen)) == 1) {
        if (n && line[0] == '#') continue; /* a header again, or a comment */
        double v[3] = {0, 0, 0};
        rc = read_fields(path, l.number, line, n, &cols, v, err, errlen);
        if (rc == 1 && !append_point(plot, &axis, cols.unix_time, v))
            rc = fail(err, errlen, "%s: out of memory reading it", path);
    }
    free_columns(cols.names, cols.n);
    free(text);
    if (rc == 0 && plot->n == 0)
        rc = fail(err, errlen, "%s: no data lines yet, only the header", path);
    if (rc < 0) {
        sift_out_plot_free(plot);
        return -1;
    }
    return 0;
}

void sift_out_plot_free(sift_out_plot *plot)
{
    free(plot->points);
    plot->points = NULL;
    plot->n = 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sift_out_list(const char *dir, const char *sub, char ***paths, size_t *n, char *err,
                  size_t errlen)
{
    *paths = NULL;
    *n = 0;
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, sub) >= sizeof path)
        return fail(err, errlen, "%s/%s: the path is too long", dir, sub);
    DIR *d = opendir(path);
    if (!d) {
        if (errno == ENOENT) return 0;
        return fail(err, errlen, "%s: %s", path, strerror(errno));
    }
    size_t cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.txt")) continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            char **grown = realloc(*paths, cap * sizeof(*grown));
            if (!grown) {
                rc = fail(err, errlen, "%s: out of memory listing it", path);
                break;
            }
            *paths = grown;
        }
        if (asprintf(&(*paths)[*n], "%s/%s", path, e->d_name) < 0) {
            rc = fail(err, errlen, "%s: out of memory listing it", path);
            break;
        }
        (*n)++;
    }
    closedir(d);
    if (rc < 0) {
        sift_out_list_free(*paths, *n);
        *paths = NULL;
        *n = 0;
        return -1;
    }
    if (*n) qsort(*paths, *n, sizeof(**paths), by_name);
    return 0;
}

void sift_out_list_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}
