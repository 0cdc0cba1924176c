/* The live status view. stderr is swapped for a stdio stream of our own (fopencookie) whose
 * writes first erase the view, then go to the terminal, then redraw the view below them: every
 * fprintf(stderr, ...) of the engine and of the target stays readable without knowing about the
 * view. Writes that bypass stdio (the async-signal-safe crash reports of fault.c, a sanitizer's
 * report) land below the view, which is what a report that ends the process wants. */
#define _GNU_SOURCE
#include "engine/progress/view.h"
#include "engine/base/clock.h"
#include "engine/base/humanize.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define REDRAW_NS    SIFT_SECOND_NS
#define MIN_RATE_NS  (SIFT_SECOND_NS / 2) /* shorter intervals keep the last rates: too noisy */
#define TEXT_CAP     (64 * 1024)
#define LINE_CAP     512
#define BASE_LINES   3
#define WORKER_LINES 1 /* the workers' summary line */

bool sift_view_wanted(const sift_options *o)
{
    if (o->status == SIFT_STATUS_TTY) return true;
    if (o->status == SIFT_STATUS_LINES || o->verbosity < 1 || !isatty(STDERR_FILENO)) return false;
    const char *term = getenv("TERM");
    return term && *term && strcmp(term, "dumb") != 0;
}

/* --- Rendering: a pure function of the numbers, so that tests can check it. --- */

typedef struct {
    char *out;
    size_t cap, len;
    unsigned width, lines;
} sink;

/* Appends one line, cut to the width, without control characters (a target name could hold
 * any byte). */
__attribute__((format(printf, 2, 3))) static void line(sink *k, const char *fmt, ...)
{
    char text[LINE_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    size_t n = strlen(text);
    if (k->width > 1 && n > k->width - 1) n = k->width - 1;
    if (k->len + n + 2 > k->cap) return;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        k->out[k->len++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    k->out[k->len++] = '\n';
    k->out[k->len] = '\0';
    k->lines++;
}

static void worker_line(sink *k, unsigned i, const sift_progress_worker *w, bool done)
{
    char pid[16], rate[32], state[64], sp[32];
    if (w->pid > 0)
        snprintf(pid, sizeof pid, "%d", w->pid);
    else
        snprintf(pid, sizeof pid, "-");
    if (w->pid > 0 && w->stalled_ns)
        snprintf(state, sizeof state, "stalled %s",
                 sift_human_span(w->stalled_ns / SIFT_SECOND_NS, sp));
    else
        snprintf(state, sizeof state, "%s", w->pid > 0 ? "alive" : w->finished ? "done" : "down");
    if (w->starts > 1)
        snprintf(state + strlen(state), sizeof state - strlen(state), ", restarted %ux",
                 w->starts - 1);
    line(k, "  %-3u pid %-8s exec/s %-9s %s", i, pid,
         sift_human_count(done ? w->exec_per_sec_avg : w->exec_per_sec, rate), state);
}

unsigned sift_view_render(const sift_progress *st, unsigned width, unsigned max_lines, char *out,
                          size_t cap)
{
    sink k = {.out = out, .cap = cap, .width = width};
    if (cap) out[0] = '\0';
    char a[32], b[32], c[32], d[32];
    const char *target = st->target ? strrchr(st->target, '/') : NULL;
    target = target ? target + 1 : st->target ? st->target : "";
    unsigned limit = max_lines ? max_lines : ~0u;
    char title[LINE_CAP];
    snprintf(title, sizeof title, "sift %s%s  run time %s  execs %s  exec/s %s", target,
             st->done ? " (done)" : "", sift_human_clock(st->run_ns / SIFT_SECOND_NS, a),
             sift_human_count(st->execs, b),
             sift_human_count(st->done ? st->exec_per_sec : st->exec_per_sec_now, c));
    if (st->done)
        line(&k, "%s avg", title);
    else
        line(&k, "%s (avg %s)", title, sift_human_count(st->exec_per_sec, d));
    if (k.lines < limit)
        line(&k, "coverage %s edges  features %s  corpus %s (favored %s, %s)",
             sift_human_count(st->cov, a), sift_human_count(st->ft, b),
             sift_human_count(st->corpus, c), sift_human_count(st->favored, d),
             sift_human_size(st->corpus_bytes, (char[32]){0}));
    if (k.lines < limit) {
        char since[48] = "none yet";
        if (st->found_any)
            snprintf(since, sizeof since, "%s ago",
                     sift_human_span(st->since_new_ns / SIFT_SECOND_NS, a));
        line(&k, "crashes %s  timeouts %s  ooms %s  last new coverage %s",
             sift_human_count(st->crashes, b), sift_human_count(st->timeouts, c),
             sift_human_count(st->ooms, d), since);
    }
    if (!st->nworkers || k.lines >= limit) return k.lines;
    unsigned alive = 0, stalled = 0, restarts = 0;
    for (unsigned i = 0; i < st->nworkers; i++) {
        const sift_progress_worker *w = &st->workers[i];
        alive += w->pid > 0;
        stalled += w->pid > 0 && w->stalled_ns;
        restarts += w->starts > 1 ? w->starts - 1 : 0;
    }
    line(&k, "workers %u  alive %u  stalled %u  restarts %u", st->nworkers, alive, stalled,
         restarts);
    unsigned room = limit - k.lines, shown = st->nworkers;
    if (shown > room) shown = room ? room - 1 : 0;
    for (unsigned i = 0; i < shown; i++)
        worker_line(&k, i, &st->workers[i], st->done);
    if (shown < st->nworkers && k.lines < limit)
        line(&k, "  ... %u more workers", st->nworkers - shown);
    return k.lines;
}

/* --- The terminal. --- */

/* The stdio streams that stand in for stderr and stdout reach the view through their cookie. */
typedef struct {
    sift_view *view;
    int fd;
} view_stream;

struct sift_view {
    pthread_mutex_t lock;
    bool active;
    pid_t owner;
    view_stream err_stream, out_stream;
    FILE *orig_err, *orig_out; /* given back by sift_view_finish */
    FILE *err_file, *out_file; /* the streams standing in for them */
    char text[TEXT_CAP];       /* the view as last rendered */
    char frame[TEXT_CAP * 2];  /* what one redraw writes */
    unsigned lines;            /* lines of it on the screen above the cursor; 0: not drawn */
    bool col0;                 /* the cursor is at the start of a line */
    uint64_t next_ns, rate_ns, rate_execs, rate_now;
    unsigned nworkers;
    uint64_t *w_execs, *w_moved_ns, *w_rate;
    int *w_pid;
};

static void write_all(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        buf += w;
        n -= (size_t)w;
    }
}

/* Moves the cursor from below the drawn view to its first line. */
static size_t up(const sift_view *v, char *buf, size_t cap)
{
    if (!v->lines) return 0;
    int n = snprintf(buf, cap, "\r\033[%uA", v->lines);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* Replaces what is drawn (if anything) with the rendered text, in one write. */
static void draw_locked(sift_view *v)
{
    char *buf = v->frame;
    const size_t cap = sizeof v->frame;
    size_t n = 0;
    if (!v->col0) buf[n++] = '\n';
    n += up(v, buf + n, cap - n);
    unsigned lines = 0;
    for (const char *p = v->text; *p;) {
        size_t len = strcspn(p, "\n");
        if (n + len + 8 > cap) break;
        memcpy(buf + n, p, len);
        n += len;
        memcpy(buf + n, "\033[K\n", 4); /* the rest of an older, longer line */
        n += 4;
        lines++;
        p += len + (p[len] == '\n');
    }
    memcpy(buf + n, "\033[J", 3); /* the lines of an older, longer view */
    n += 3;
    write_all(STDERR_FILENO, buf, n);
    v->lines = lines;
    v->col0 = true;
}

static void erase_locked(sift_view *v)
{
    char buf[32];
    size_t n = up(v, buf, sizeof buf);
    if (!n) return;
    memcpy(buf + n, "\033[J", 3);
    write_all(STDERR_FILENO, buf, n + 3);
    v->lines = 0;
}

/* The write function of the streams that replace stderr and stdout; the cookie is the file
 * descriptor. A child forked after the start writes straight through: its stderr is a log. */
static ssize_t stream_write(void *cookie, const char *buf, size_t n)
{
    const view_stream *vs = cookie;
    sift_view *v = vs->view;
    int fd = vs->fd;
    if (getpid() != v->owner) {
        write_all(fd, buf, n);
        return (ssize_t)n;
    }
    pthread_mutex_lock(&v->lock);
    if (v->active) erase_locked(v);
    write_all(fd, buf, n);
    if (n) v->col0 = buf[n - 1] == '\n';
    /* A line cut in the middle waits for its end, or for the next redraw. */
    if (v->active && v->col0 && v->text[0]) draw_locked(v);
    pthread_mutex_unlock(&v->lock);
    return (ssize_t)n;
}

static FILE *stream(view_stream *vs, int mode)
{
    FILE *f = fopencookie(vs, "w", (cookie_io_functions_t){.write = stream_write});
    if (f) (void)setvbuf(f, NULL, mode, BUFSIZ); /* else the stream's default buffering */
    return f;
}

/* Whether stdout goes to the same terminal as stderr: its lines must then pass the view too. */
static bool stdout_shares_terminal(void)
{
    struct stat out, err;
    return isatty(STDOUT_FILENO) && fstat(STDOUT_FILENO, &out) == 0 &&
           fstat(STDERR_FILENO, &err) == 0 && out.st_rdev == err.st_rdev;
}

sift_view *sift_view_start(void)
{
    sift_view *v = calloc(1, sizeof(*v));
    if (!v || pthread_mutex_init(&v->lock, NULL) != 0) {
        free(v);
        return NULL;
    }
    v->err_stream = (view_stream){.view = v, .fd = STDERR_FILENO};
    v->out_stream = (view_stream){.view = v, .fd = STDOUT_FILENO};
    FILE *err = stream(&v->err_stream, _IONBF);
    if (!err) {
        pthread_mutex_destroy(&v->lock);
        free(v);
        return NULL;
    }
    FILE *out = stdout_shares_terminal() ? stream(&v->out_stream, _IOLBF) : NULL;
    fflush(stdout);
    pthread_mutex_lock(&v->lock);
    v->orig_err = stderr;
    v->orig_out = stdout;
    v->err_file = err;
    v->out_file = out;
    stderr = err; /* glibc: stdin, stdout and stderr are variables one may assign */
    if (out) stdout = out;
    v->owner = getpid();
    v->active = true;
    v->col0 = true;
    pthread_mutex_unlock(&v->lock);
    return v;
}

bool sift_view_active(const sift_view *v)
{
    return v && v->active && getpid() == v->owner;
}

bool sift_view_due(const sift_view *v, uint64_t now_ns)
{
    return sift_view_active(v) && now_ns >= v->next_ns;
}

void sift_view_detach(sift_view *v)
{
    if (!v) return;
    pthread_mutex_lock(&v->lock);
    v->lines = 0;
    v->col0 = true; /* the handlers' lines end in a newline */
    pthread_mutex_unlock(&v->lock);
}

/* Keeps per-slot history as long as the slots; false when out of memory. */
static bool track_workers(sift_view *v, unsigned n)
{
    if (n <= v->nworkers) return true;
    uint64_t *e = realloc(v->w_execs, n * sizeof(*e));
    if (e) v->w_execs = e;
    uint64_t *m = realloc(v->w_moved_ns, n * sizeof(*m));
    if (m) v->w_moved_ns = m;
    uint64_t *r = realloc(v->w_rate, n * sizeof(*r));
    if (r) v->w_rate = r;
    int *p = realloc(v->w_pid, n * sizeof(*p));
    if (p) v->w_pid = p;
    if (!e || !m || !r || !p) return false;
    for (unsigned k = v->nworkers; k < n; k++) {
        v->w_execs[k] = v->w_moved_ns[k] = v->w_rate[k] = 0;
        v->w_pid[k] = 0;
    }
    v->nworkers = n;
    return true;
}

/* The rates since the last update that was at least MIN_RATE_NS ago, and the stalls. */
static void fill_rates(sift_view *v, sift_progress *st, uint64_t now)
{
    bool fresh = !v->rate_ns || now - v->rate_ns >= MIN_RATE_NS;
    uint64_t dt = v->rate_ns ? now - v->rate_ns : 0;
    if (fresh) {
        v->rate_now = dt && st->execs >= v->rate_execs
                          ? (uint64_t)((double)(st->execs - v->rate_execs) * 1e9 / (double)dt)
                          : st->exec_per_sec;
        v->rate_execs = st->execs;
    }
    st->exec_per_sec_now = v->rate_now;
    bool tracked = track_workers(v, st->nworkers);
    for (unsigned k = 0; k < st->nworkers; k++) {
        sift_progress_worker *w = &st->workers[k];
        if (!tracked) break;
        if (w->pid != v->w_pid[k] || w->execs < v->w_execs[k] || !v->rate_ns) {
            /* A new worker in the slot, or the first look at it. */
            v->w_pid[k] = w->pid;
            v->w_moved_ns[k] = now;
            v->w_rate[k] = 0;
            v->w_execs[k] = w->execs;
        } else if (fresh) {
            uint64_t moved = w->execs - v->w_execs[k];
            v->w_rate[k] = dt ? (uint64_t)((double)moved * 1e9 / (double)dt) : 0;
            if (moved) v->w_moved_ns[k] = now;
            v->w_execs[k] = w->execs;
        }
        w->exec_per_sec = w->pid > 0 ? v->w_rate[k] : 0;
        uint64_t still = now - v->w_moved_ns[k];
        w->stalled_ns = w->pid > 0 && still >= SIFT_VIEW_STALL_NS ? still : 0;
    }
    if (fresh) v->rate_ns = now;
}

static void size_of_terminal(unsigned *width, unsigned *height)
{
    struct winsize ws;
    *width = *height = 0; /* not a terminal (-status=tty into a file): no limits */
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
        *width = ws.ws_col;
        *height = ws.ws_row > 1 ? ws.ws_row - 1u : 1u; /* a line for the cursor */
    }
}

void sift_view_update(sift_view *v, sift_progress *st, uint64_t now_ns)
{
    if (!sift_view_active(v)) return;
    pthread_mutex_lock(&v->lock);
    fill_rates(v, st, now_ns);
    unsigned width, height;
    size_of_terminal(&width, &height);
    sift_view_render(st, width, height, v->text, sizeof v->text);
    draw_locked(v);
    v->next_ns = now_ns + REDRAW_NS;
    pthread_mutex_unlock(&v->lock);
}

void sift_view_finish(sift_view **vp, sift_progress *st, uint64_t now_ns)
{
    sift_view *v = *vp;
    if (!sift_view_active(v)) return;
    st->done = true;
    sift_view_update(v, st, now_ns);
    fflush(stdout);
    pthread_mutex_lock(&v->lock);
    v->active = false;
    v->lines = 0;
    stderr = v->orig_err;
    stdout = v->orig_out;
    pthread_mutex_unlock(&v->lock);
    (void)fclose(v->err_file);
    if (v->out_file) (void)fclose(v->out_file);
    pthread_mutex_destroy(&v->lock);
    free(v->w_execs);
    free(v->w_moved_ns);
    free(v->w_rate);
    free(v->w_pid);
    free(v);
    *vp = NULL;
}
