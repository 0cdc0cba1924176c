/* Reading a compiler command line: sanitizer lists, coverage choices, and whether it links. */
#include "cc/sift_cc_args.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Driver flags whose value may come as the next argument, which is then no input file. */
static const char *const separate_value[] = {"-o",
                                             "-x",
                                             "-I",
                                             "-D",
                                             "-U",
                                             "-L",
                                             "-l",
                                             "-include",
                                             "-imacros",
                                             "-isystem",
                                             "-iquote",
                                             "-idirafter",
                                             "-isysroot",
                                             "-iprefix",
                                             "-iwithprefix",
                                             "-iwithprefixbefore",
                                             "-ivfsoverlay",
                                             "-MF",
                                             "-MT",
                                             "-MQ",
                                             "-MJ",
                                             "-Xlinker",
                                             "-Xclang",
                                             "-Xassembler",
                                             "-Xpreprocessor",
                                             "-target",
                                             "-arch",
                                             "-u",
                                             "-T",
                                             "-z",
                                             "-e",
                                             "-B",
                                             "-mllvm",
                                             "--sysroot",
                                             "-resource-dir",
                                             "-working-directory",
                                             "--param",
                                             "-serialize-diagnostics",
                                             "-dependency-file",
                                             "-dependency-dot",
                                             "-F",
                                             "-aux-info",
                                             NULL};

/* Flags after which the driver stops before linking. */
static const char *const stop_before_link[] = {"-c", "-S", "-E", "-M", "-MM", "-fsyntax-only",
                                               NULL};

typedef struct {
    bool fuzzer; /* -fsanitize=fuzzer */
    bool inputs, compile_only, shared;
    bool user_coverage, version;
    unsigned interceptors;  /* sanitizers in effect that intercept memcmp and friends */
    int values;             /* -fsift-values / -fno-sift-values, -1 for neither */
    const char *max_struct; /* the value of -fsift-values-max-struct= */
} scan_state;

/* The sanitizers whose runtimes define memcmp, strcmp, ... weakly: linking sift's comparison
 * interposers beside them would silently turn off their checks of those calls. */
static const char *const intercepting_sanitizers[] = {"address", "memory", "thread", NULL};

static bool one_of(const char *arg, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(arg, *list)) return true;
    return false;
}

static bool starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

static bool item_is(const char *item, size_t n, const char *word)
{
    return strlen(word) == n && !strncmp(item, word, n);
}

static int out_of_memory(void)
{
    fprintf(stderr, "sift-cc: out of memory\n");
    return -1;
}

/* Takes fuzzer and fuzzer-no-link out of the list of ARG, whose first PREFIX bytes are
 * "-fsanitize=" or "-fno-sanitize=", and notes fuzzer in S. *OUT receives what to pass on to
 * clang: a copy of ARG with the rest of the list, or NULL when nothing is left. */
static int sanitize_list(scan_state *s, const char *arg, size_t prefix, bool enable, char **out)
{
    char *kept = malloc(strlen(arg) + 1);
    if (!kept) return out_of_memory();
    memcpy(kept, arg, prefix);
    size_t len = prefix;
    for (const char *item = arg + prefix; *item;) {
        size_t n = strcspn(item, ",");
        if (item_is(item, n, "fuzzer")) {
            s->fuzzer = enable;
        } else if (item_is(item, n, "fuzzer-no-link")) {
            /* Instrumentation is on either way; what links follows from -fsanitize=fuzzer. */
        } else if (n) {
            if (!enable && item_is(item, n, "all")) s->fuzzer = false;
            if (!enable && item_is(item, n, "all")) s->interceptors = 0;
            for (unsigned k = 0; intercepting_sanitizers[k]; k++) {
                if (!item_is(item, n, intercepting_sanitizers[k])) continue;
                if (enable)
                    s->interceptors |= 1u << k;
                else
                    s->interceptors &= ~(1u << k);
            }
            if (len > prefix) kept[len++] = ',';
            memcpy(kept + len, item, n);
            len += n;
        }
        item += n + (item[n] == ',');
    }
    kept[len] = '\0';
    if (len == prefix) {
        free(kept);
        kept = NULL;
    }
    *out = kept;
    return 0;
}

/* The user's -fsanitize-coverage= list: a counter kind of their own replaces sift's, and kinds
 * the runtime has no callbacks for are refused here rather than as undefined symbols later.
 * trace-pc builds, as under clang -fsanitize=fuzzer, and the program says at its first edge
 * that it is not supported (rt/sancov.c), as libFuzzer's does. */
static int coverage_list(scan_state *s, const char *list)
{
    for (const char *item = list; *item;) {
        size_t n = strcspn(item, ",");
        if (item_is(item, n, "inline-8bit-counters") || item_is(item, n, "trace-pc-guard"))
            s->user_coverage = true;
        if (item_is(item, n, "inline-bool-flag")) {
            fprintf(stderr,
                    "sift-cc: -fsanitize-coverage=%.*s is not supported by the sift runtime "
                    "(use inline-8bit-counters or trace-pc-guard)\n",
                    (int)n, item);
            return -1;
        }
        item += n + (item[n] == ',');
    }
    return 0;
}

/* Notes what ARG says about the command. *USED receives how many arguments it took (2 when the
 * next one is its value). KEEP, NULL for a response-file token, receives what to pass on. */
static int note(scan_state *s, const char *arg, bool has_next, int *used, char **keep)
{
    *used = 1;
    bool fno = starts(arg, "-fno-sanitize=");
    if (fno || starts(arg, "-fsanitize=")) {
        char *rest;
        if (sanitize_list(s, arg, fno ? 14 : 11, !fno, &rest) < 0) return -1;
        bool changed = !rest || strcmp(rest, arg) != 0;
        if (keep) {
            *keep = rest;
            return 0;
        }
        free(rest);
        if (changed) {
            fprintf(stderr, "sift-cc: give %s on the command line, not in a response file\n", arg);
            return -1;
        }
        return 0;
    }
    bool values_on = !strcmp(arg, "-fsift-values");
    bool max_struct = starts(arg, "-fsift-values-max-struct=");
    if (values_on || max_struct || !strcmp(arg, "-fno-sift-values")) {
        /* sift-cc's own flags: clang would refuse them. */
        if (!keep) {
            fprintf(stderr, "sift-cc: give %s on the command line, not in a response file\n", arg);
            return -1;
        }
        const char *n = max_struct ? arg + strlen("-fsift-values-max-struct=") : NULL;
        if (n && (!*n || strspn(n, "0123456789") != strlen(n) || strlen(n) > 18)) {
            fprintf(stderr, "sift-cc: %s: expected a number of bytes\n", arg);
            return -1;
        }
        if (n)
            s->max_struct = n;
        else
            s->values = values_on;
        *keep = NULL;
        return 0;
    }
    if (keep && !(*keep = strdup(arg))) return out_of_memory();
    if (arg[0] != '-' || !arg[1])
        s->inputs = true;
    else if (starts(arg, "-fsanitize-coverage="))
        return coverage_list(s, arg + strlen("-fsanitize-coverage="));
    else if (one_of(arg, stop_before_link))
        s->compile_only = true;
    else if (!strcmp(arg, "-shared") || !strcmp(arg, "--shared") || !strcmp(arg, "-r"))
        s->shared = true;
    else if (!strcmp(arg, "--version"))
        s->version = true;
    else if (!strcmp(arg, "-fmemory-profile"))
        s->interceptors |= 1u << 3;
    else if (has_next && sift_cc_takes_value(arg))
        *used = 2;
    return 0;
}

/* Reads PATH whole, NUL-terminated. NULL when it cannot be read. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t len = 0, cap = 4096;
    char *text = malloc(cap);
    while (text) {
        len += fread(text + len, 1, cap - 1 - len, f);
        if (len < cap - 1) break;
        char *grown = realloc(text, cap * 2);
        if (!grown) free(text);
        text = grown;
        cap *= 2;
    }
    bool failed = ferror(f);
    (void)fclose(f); /* read only: ferror said whether the reads failed */
    if (!text || failed) {
        free(text);
        return NULL;
    }
    text[len] = '\0';
    return text;
}

/* Splits TEXT in place into arguments the way clang reads a response file on Linux:
 * whitespace separates, quotes group, a backslash takes the next character literally. Fills
 * ARGS (room for one per byte pair, enough for any split) and returns their number. */
static int split(char *text, char **args)
{
    int n = 0;
    char *r = text, *w = text;
    for (;;) {
        while (isspace((unsigned char)*r))
            r++;
        if (!*r) return n;
        args[n++] = w;
        for (char quote = 0; *r && (quote || !isspace((unsigned char)*r)); r++) {
            if (*r == '\\' && r[1])
                *w++ = *++r;
            else if ((*r == '\'' || *r == '"') && (!quote || quote == *r))
                quote = quote ? 0 : *r;
            else
                *w++ = *r;
        }
        /* Step past the separator before terminating: W may be where R was. */
        if (*r) r++;
        *w++ = '\0';
    }
}

/* A response file's arguments tell what the command builds, but are not rewritten: clang reads
 * the file itself. One that cannot be read is an input name to clang, as here. */
static int note_response_file(scan_state *s, const char *path)
{
    char *text = read_text(path);
    if (!text) {
        s->inputs = true;
        return 0;
    }
    char **args = malloc((strlen(text) / 2 + 1) * sizeof(*args));
    if (!args) {
        free(text);
        return out_of_memory();
    }
    int n = split(text, args), rc = 0;
    for (int i = 0, used; i < n && rc == 0; i += used)
        rc = note(s, args[i], i + 1 < n, &used, NULL);
    free(args);
    free(text);
    return rc;
}

int sift_cc_plan_args(int argc, char **argv, sift_cc_plan *plan)
{
    *plan = (sift_cc_plan){0};
    plan->args = calloc((size_t)argc + 1, sizeof(*plan->args));
    if (!plan->args) return out_of_memory();
    scan_state s = {.values = -1};
    for (int i = 0; i < argc; i++) {
        int used = 1, rc;
        char *keep = NULL;
        if (argv[i][0] == '@') {
            rc = note_response_file(&s, argv[i] + 1);
            if (rc == 0 && !(keep = strdup(argv[i]))) rc = out_of_memory();
        } else {
            rc = note(&s, argv[i], i + 1 < argc, &used, &keep);
        }
        if (rc < 0) {
            free(keep);
            sift_cc_plan_free(plan);
            return -1;
        }
        if (keep) plan->args[plan->nargs++] = keep;
        if (used == 2 && !(plan->args[plan->nargs++] = strdup(argv[++i]))) {
            sift_cc_plan_free(plan);
            return out_of_memory();
        }
    }
    /* An executable built from instrumented objects needs the callbacks they call, engine or
     * not: -fsanitize=fuzzer-no-link links the runtime too, as clang links a sanitizer runtime
     * with weak callbacks for it, so that a configure check or a project's own tools link. */
    bool executable = s.inputs && !s.compile_only && !s.shared;
    plan->link = !executable ? SIFT_CC_LINK_NONE : s.fuzzer ? SIFT_CC_LINK_FUZZER : SIFT_CC_LINK_RT;
    plan->user_coverage = s.user_coverage;
    plan->version = s.version;
    plan->interceptors = s.interceptors != 0;
    plan->values = s.values;
    if (s.max_struct && !(plan->values_max_struct = strdup(s.max_struct))) {
        sift_cc_plan_free(plan);
        return out_of_memory();
    }
    return 0;
}

bool sift_cc_takes_value(const char *arg)
{
    return one_of(arg, separate_value);
}

void sift_cc_plan_free(sift_cc_plan *plan)
{
    for (int i = 0; i < plan->nargs; i++)
        free(plan->args[i]);
    free(plan->args);
    free(plan->values_max_struct);
    *plan = (sift_cc_plan){0};
}
