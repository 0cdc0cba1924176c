/* -trace: the input runs with the hooks pushing every value into their thread's ring, and a
 * consumer thread drains the rings into the trace file while it runs, so that no record is
 * dropped however long the input runs. When the input dies, the fault handlers call back here
 * on the dying thread, which drains what is left before the report: the records of a crash
 * are there up to the crash. Output is formatted by hand into a fixed buffer and written with
 * write(2), as the crash path may run in a signal handler on a broken heap.
 *
 * Nothing printed depends on the run: pointers appear as null, an offset into the input, or
 * "pointer"; threads are numbered in the order they first record; record numbers start at 0. */
#define _GNU_SOURCE
#include "engine/modes/trace.h"
#include "engine/contain/report.h"
#include "engine/base/clock.h"
#include "engine/base/fsutil.h"
#include "rt/values.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRACE_THREADS 64 /* threads with a depth of their own; the rest share the last */
#define DRAIN_WAIT_NS 10000000ull
#define FATAL_WAIT_NS SIFT_SECOND_NS

struct sift_trace {
    int fd;
    sift_trace_format format;
    const sift_rt_state *rt;
    unsigned depth[TRACE_THREADS];
    /* The text line of a call in progress: its values follow until another record arrives. */
    bool open;
    uint32_t open_thread;
    uint64_t open_fn;
    unsigned open_slot;
    /* The harness's input, from the records of LLVMFuzzerTestOneInput's entry. */
    uint64_t input, input_len;
    bool have_input;
    atomic_int busy; /* held by whoever formats: the consumer thread or the crash path */
    atomic_bool stop;
    size_t len;
    char buf[1 << 16];
};

static void write_all(int fd, const char *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, buf + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        done += (size_t)n;
    }
}

/* Writes the complete lines gathered so far, or everything when ALL: a line in progress stays
 * back, so that it does not end up split around what else goes to the same file (a sanitizer's
 * report on stderr). */
static void flush(sift_trace *t, bool all)
{
    size_t n = t->len;
    while (!all && n > 0 && t->buf[n - 1] != '\n')
        n--;
    write_all(t->fd, t->buf, n);
    memmove(t->buf, t->buf + n, t->len - n);
    t->len -= n;
}

static void put(sift_trace *t, const char *s, size_t n)
{
    while (n > 0) {
        if (t->len == sizeof(t->buf)) flush(t, true);
        size_t room = sizeof(t->buf) - t->len, k = n < room ? n : room;
        memcpy(t->buf + t->len, s, k);
        t->len += k;
        s += k;
        n -= k;
    }
}

static void puts_(sift_trace *t, const char *s)
{
    put(t, s, strlen(s));
}

static void put_u64(sift_trace *t, uint64_t v)
{
    char digits[20];
    size_t n = 0;
    do {
        digits[sizeof(digits) - 1 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(t, digits + sizeof(digits) - n, n);
}

static void put_i64(sift_trace *t, int64_t v)
{
    if (v < 0) put(t, "-", 1);
    put_u64(t, v < 0 ? -(uint64_t)v : (uint64_t)v);
}

static void put_hex(sift_trace *t, uint64_t v)
{
    char digits[16];
    size_t n = 0;
    do {
        digits[sizeof(digits) - 1 - n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    put(t, "0x", 2);
    put(t, digits + sizeof(digits) - n, n);
}

/* Names are identifiers and C++ punctuation; escaping keeps any other byte from breaking the
 * line. */
static void put_json_string(sift_trace *t, const char *s)
{
    put(t, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            put(t, "\\", 1);
            put(t, s, 1);
        } else if (c < 0x20) {
            put(t, "\\u00", 4);
            put(t, &"0123456789abcdef"[c >> 4], 1);
            put(t, &"0123456789abcdef"[c & 15], 1);
        } else {
            put(t, s, 1);
        }
    }
    put(t, "\"", 1);
}

static void put_value(sift_trace *t, uint8_t type, uint64_t v)
{
    bool json = t->format == SIFT_TRACE_JSON;
    if (type & SIFT_VALUES_POINTER) {
        if (json) put(t, "\"", 1);
        if (!v) {
            puts_(t, "null");
        } else if (t->have_input && v >= t->input && v - t->input <= t->input_len) {
            puts_(t, "input+");
            put_u64(t, v - t->input);
        } else {
            puts_(t, "pointer");
        }
        if (json) put(t, "\"", 1);
        return;
    }
    int64_t s = sift_values_signed(v, type);
    uint64_t magnitude;
    if (type & SIFT_VALUES_SIGNED) {
        put_i64(t, s);
        magnitude = s < 0 ? -(uint64_t)s : (uint64_t)s;
    } else {
        magnitude = (uint64_t)s;
        put_u64(t, magnitude);
    }
    /* Large values are often tags and magic numbers, which read better in hex. */
    if (!json && magnitude >= 65536) {
        unsigned width = type & SIFT_VALUES_WIDTH;
        puts_(t, " (");
        put_hex(t, width >= 8 ? (uint64_t)s : (uint64_t)s & ((1ull << 8 * width) - 1));
        puts_(t, ")");
    }
}

int sift_trace_format_of(const char *path, const char *format, sift_trace_format *out)
{
    if (format) {
        if (!strcmp(format, "text") || !strcmp(format, "json")) {
            *out = format[0] == 'j' ? SIFT_TRACE_JSON : SIFT_TRACE_TEXT;
            return 0;
        }
        return -1;
    }
    size_t n = strlen(path);
    *out = n >= 6 && !strcmp(path + n - 6, ".jsonl") ? SIFT_TRACE_JSON : SIFT_TRACE_TEXT;
    return 0;
}

sift_trace *sift_trace_new(int fd, sift_trace_format format, const sift_rt_state *rt)
{
    sift_trace *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    t->fd = fd;
    t->format = format;
    t->rt = rt;
    return t;
}

void sift_trace_free(sift_trace *t)
{
    free(t);
}

static unsigned *depth_of(sift_trace *t, uint32_t thread)
{
    return &t->depth[thread < TRACE_THREADS ? thread : TRACE_THREADS - 1];
}

/* What a record names: its function, and its slot when it has one. */
typedef struct {
    const sift_values_fn *fn;
    const sift_values_slot *slot;
} named;

static named name_of(const sift_trace *t, const sift_ring_record *r)
{
    named n = {sift_values_lookup(t->rt, r->fn), NULL};
    if (n.fn && r->slot != SIFT_RING_NO_SLOT && r->slot < n.fn->nslots)
        n.slot = &n.fn->slots[r->slot];
    return n;
}

static void put_function(sift_trace *t, const named *n, uint64_t id)
{
    if (n->fn) {
        puts_(t, n->fn->name);
        return;
    }
    puts_(t, "<function ");
    put_hex(t, id);
    puts_(t, ">");
}

static void close_line(sift_trace *t)
{
    if (!t->open) return;
    const sift_values_fn *fn = sift_values_lookup(t->rt, t->open_fn);
    puts_(t, ")");
    if (fn) {
        puts_(t, "  ");
        puts_(t, fn->file);
        if (fn->line) {
            puts_(t, ":");
            put_u64(t, fn->line);
        }
    }
    puts_(t, "\n");
    t->open = false;
}

static void line_start(sift_trace *t, const sift_ring_record *r, unsigned depth)
{
    puts_(t, "#");
    put_u64(t, r->seq);
    if (r->thread) {
        puts_(t, " [");
        put_u64(t, r->thread);
        puts_(t, "]");
    }
    puts_(t, " ");
    for (unsigned i = 0; i < depth; i++)
        puts_(t, "  ");
}

static void put_slot(sift_trace *t, const named *n, const sift_ring_record *r)
{
    if (n->slot) {
        puts_(t, n->slot->name);
        puts_(t, "=");
        put_value(t, n->slot->type, r->value);
        return;
    }
    puts_(t, "slot");
    put_u64(t, r->slot);
    puts_(t, "=");
    put_u64(t, r->value);
}

static void text_record(sift_trace *t, const sift_ring_record *r, const named *n)
{
    unsigned *depth = depth_of(t, r->thread);
    bool continues = t->open && t->open_thread == r->thread && t->open_fn == r->fn &&
                     r->kind != SIFT_RING_RETURN && r->slot != SIFT_RING_NO_SLOT &&
                     r->slot > t->open_slot;
    if (continues) {
        puts_(t, ", ");
        put_slot(t, n, r);
        t->open_slot = r->slot;
        return;
    }
    close_line(t);
    if (r->kind == SIFT_RING_RETURN) {
        if (*depth) --*depth;
        line_start(t, r, *depth);
        put_function(t, n, r->fn);
        if (r->slot == SIFT_RING_NO_SLOT) {
            puts_(t, " returned\n");
        } else {
            puts_(t, " -> ");
            if (n->slot)
                put_value(t, n->slot->type, r->value);
            else
                put_u64(t, r->value);
            puts_(t, "\n");
        }
        return;
    }
    /* A value whose call was cut off by another thread's records gets a line of its own. */
    bool starts = r->kind == SIFT_RING_ENTRY && (r->slot == 0 || r->slot == SIFT_RING_NO_SLOT);
    line_start(t, r, *depth);
    put_function(t, n, r->fn);
    if (!starts) {
        puts_(t, ": ");
        put_slot(t, n, r);
        puts_(t, "\n");
        return;
    }
    ++*depth;
    puts_(t, "(");
    t->open = true;
    t->open_thread = r->thread;
    t->open_fn = r->fn;
    t->open_slot = 0;
    if (r->slot == SIFT_RING_NO_SLOT) {
        close_line(t);
        return;
    }
    put_slot(t, n, r);
}

static void json_record(sift_trace *t, const sift_ring_record *r, const named *n)
{
    static const char *const kinds[] = {"entry", "field", "return"};
    puts_(t, "{\"seq\":");
    put_u64(t, r->seq);
    puts_(t, ",\"thread\":");
    put_u64(t, r->thread);
    puts_(t, ",\"kind\":\"");
    puts_(t, r->kind < 3 ? kinds[r->kind] : "unknown");
    puts_(t, "\",\"function\":");
    if (n->fn) {
        put_json_string(t, n->fn->name);
        puts_(t, ",\"file\":");
        put_json_string(t, n->fn->file);
        puts_(t, ",\"line\":");
        put_u64(t, n->fn->line);
    } else {
        puts_(t, "null,\"id\":\"");
        put_hex(t, r->fn);
        puts_(t, "\"");
    }
    puts_(t, ",\"slot\":");
    if (n->slot)
        put_json_string(t, n->slot->name);
    else if (r->slot == SIFT_RING_NO_SLOT)
        puts_(t, "null");
    else
        put_u64(t, r->slot);
    puts_(t, ",\"value\":");
    if (n->slot)
        put_value(t, n->slot->type, r->value);
    else if (r->slot == SIFT_RING_NO_SLOT)
        puts_(t, "null");
    else
        put_u64(t, r->value);
    puts_(t, "}\n");
}

void sift_trace_record(void *ctx, const sift_ring_record *r)
{
    sift_trace *t = ctx;
    named n = name_of(t, r);
    /* The harness's entry tells where the input lies, so that pointers into it can be shown
     * as offsets, the same in every run. */
    if (n.fn && r->kind == SIFT_RING_ENTRY && !strcmp(n.fn->name, "LLVMFuzzerTestOneInput")) {
        if (r->slot == 0 && n.slot && n.slot->type & SIFT_VALUES_POINTER) {
            t->input = r->value;
            t->input_len = 0;
            t->have_input = true;
        } else if (r->slot == 1 && t->have_input) {
            t->input_len = r->value;
        }
    }
    if (t->format == SIFT_TRACE_JSON)
        json_record(t, r, &n);
    else
        text_record(t, r, &n);
}

void sift_trace_finish(sift_trace *t)
{
    if (t->format == SIFT_TRACE_TEXT) close_line(t);
    uint64_t dropped = sift_ring_dropped();
    if (dropped) {
        if (t->format == SIFT_TRACE_JSON) {
            puts_(t, "{\"dropped\":");
            put_u64(t, dropped);
            puts_(t, "}\n");
        } else {
            puts_(t, "# ");
            put_u64(t, dropped);
            puts_(t, " records dropped: a ring was full\n");
        }
    }
    flush(t, true);
}

/* Takes the formatter; false when WAIT_NS passed first. */
static bool lock(sift_trace *t, uint64_t wait_ns)
{
    uint64_t deadline = sift_now_ns() + wait_ns;
    for (;;) {
        int idle = 0;
        if (atomic_compare_exchange_strong(&t->busy, &idle, 1)) return true;
        if (sift_now_ns() >= deadline) return false;
        sched_yield();
    }
}

static void unlock(sift_trace *t)
{
    atomic_store(&t->busy, 0);
}

static void *consume(void *arg)
{
    sift_trace *t = arg;
    for (;;) {
        bool stop = atomic_load(&t->stop);
        /* After the crash path took the formatter it keeps it until the process exits. */
        while (!lock(t, DRAIN_WAIT_NS))
            ;
        size_t n = sift_ring_drain(sift_trace_record, t, DRAIN_WAIT_NS);
        flush(t, false);
        unlock(t);
        if (n == 0) {
            if (stop) return NULL;
            struct timespec pause = {0, 1000000};
            nanosleep(&pause, NULL);
        }
    }
}

/* The fault handlers' last call before an input's report: everything recorded so far goes
 * out. Runs on the dying thread. */
static void on_fatal(void *ctx)
{
    sift_trace *t = ctx;
    sift_values_set_mode((sift_rt_state *)t->rt, 0);
    if (!lock(t, FATAL_WAIT_NS)) return;
    sift_ring_drain(sift_trace_record, t, FATAL_WAIT_NS);
    sift_trace_finish(t);
}

static int open_output(const char *path)
{
    if (!strcmp(path, "-")) return sift_report_fd();
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) fprintf(stderr, "sift: -trace=%s: cannot create: %s\n", path, strerror(errno));
    return fd;
}

static int start_consumer(sift_trace *t, pthread_t *thread)
{
    /* Signals meant for the process (the timeout alarm, interrupts) go to the input's thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(thread, NULL, consume, t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int sift_trace_run(sift_fuzzer *f)
{
    const sift_options *o = f->opts;
    sift_trace_format format;
    if (sift_trace_format_of(o->trace, o->trace_format, &format) != 0) {
        fprintf(stderr, "sift: -trace_format=%s: expected text or json\n", o->trace_format);
        return 1;
    }
    if (sift_values_count(f->exec.rt) == 0) {
        fprintf(stderr, "sift: -trace: this program has no value instrumentation (build it with "
                        "sift-cc -fsift-values)\n");
        return 1;
    }
    uint8_t *data;
    size_t size;
    if (sift_fs_read_one("-trace", o->inputs, o->ninputs, &data, &size) != 0) return 1;
    f->fault.inputs_are_files = true;
    sift_ring_reset();
    int fd = open_output(o->trace);
    sift_trace *t = fd >= 0 ? sift_trace_new(fd, format, f->exec.rt) : NULL;
    pthread_t consumer;
    if (fd >= 0 && (!t || start_consumer(t, &consumer) != 0)) {
        fprintf(stderr, "sift: -trace: cannot start the record consumer\n");
        sift_trace_free(t);
        t = NULL;
    }
    if (!t) {
        if (fd >= 0 && fd != sift_report_fd()) close(fd);
        free(data);
        return 1;
    }
    fprintf(stderr, "Running: %s\n", o->inputs[0]);
    f->fault.before_report = on_fatal;
    f->fault.before_report_ctx = t;
    sift_values_set_mode(f->exec.rt, SIFT_VALUES_RECORD);
    sift_fuzzer_execute(f, data, size);
    sift_values_set_mode(f->exec.rt, 0);
    atomic_store(&t->stop, true);
    pthread_join(consumer, NULL);
    f->fault.before_report = NULL;
    sift_ring_drain(sift_trace_record, t, DRAIN_WAIT_NS);
    sift_trace_finish(t);
    fprintf(stderr, "Traced %s into %s\n", o->inputs[0],
            strcmp(o->trace, "-") ? o->trace : "stderr");
    if (fd != sift_report_fd()) close(fd);
    sift_trace_free(t);
    free(data);
    return 0;
}
