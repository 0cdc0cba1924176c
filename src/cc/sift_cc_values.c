/* Splitting a compile into clang, sift-instrument and clang again. The first step is the
 * user's command, with sift's flags, for one source and with -emit-llvm: clang optimises the
 * module and applies coverage and sanitizers as usual, so sift-instrument sees the code that
 * will run. The last step only generates code: -Xclang -disable-llvm-passes keeps clang from
 * optimising or instrumenting the module a second time, and the user's flags that matter to
 * code generation (-O, -fPIC, -m..., -target, -g...) still apply. */
#include "cc/sift_cc_values.h"
#include "cc/text.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct {
    int *inputs; /* indexes into the plan's arguments */
    bool *source;
    int ninputs, nsources;
    const char *out; /* -o's value, or NULL */
    bool compile_only, declined;
    bool deps, dep_file, dep_target; /* -MD/-MMD, -MF, -MT/-MQ */
} scan;

static bool starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

static bool in_list(const char *arg, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(arg, *list)) return true;
    return false;
}

/* What each -x language, and each file extension under -x none, means. */
static bool source_language(const char *lang)
{
    static const char *const langs[] = {"c", "c++", "cpp-output", "c++-cpp-output", NULL};
    return in_list(lang, langs);
}

static bool source_extension(const char *path)
{
    static const char *const exts[] = {".c",   ".i",   ".cc", ".cp", ".cxx", ".cpp",
                                       ".CPP", ".c++", ".C",  ".ii", NULL};
    const char *dot = strrchr(path, '.');
    return dot && !strchr(dot, '/') && in_list(dot, exts);
}

/* Dependency-file flags: the first step writes the file, the others must not. */
static const char *const dep_switches[] = {"-MD", "-MMD", "-MP", "-MG", "-MV", NULL};
static const char *const dep_values[] = {"-MF", "-MT", "-MQ", "-MJ", NULL};

static int dep_value_flag(const char *arg)
{
    for (int i = 0; dep_values[i]; i++)
        if (starts(arg, dep_values[i])) return arg[3] ? 1 : 2;
    return 0;
}

static bool declines(const char *arg)
{
    static const char *const exact[] = {
        "-E",         "-S",   "-M",        "-MM",       "-fsyntax-only",
        "-emit-llvm", "-###", "--analyze", "-emit-ast", "--precompile",
        "-",          NULL};
    return in_list(arg, exact) || (starts(arg, "-flto") && strcmp(arg, "-flto=none") != 0);
}

static bool read_command(const sift_cc_plan *plan, scan *s)
{
    memset(s, 0, sizeof(*s));
    s->inputs = calloc((size_t)plan->nargs + 1, sizeof(*s->inputs));
    s->source = calloc((size_t)plan->nargs + 1, sizeof(*s->source));
    if (!s->inputs || !s->source) return false;
    const char *lang = "none";
    for (int i = 0; i < plan->nargs; i++) {
        const char *a = plan->args[i];
        bool has_next = i + 1 < plan->nargs;
        if (declines(a)) s->declined = true;
        if (a[0] != '-') {
            bool src = !strcmp(lang, "none") ? source_extension(a) : source_language(lang);
            s->source[s->ninputs] = src;
            s->inputs[s->ninputs++] = i;
            s->nsources += src;
        } else if (!strcmp(a, "-c")) {
            s->compile_only = true;
        } else if (!strcmp(a, "-o") && has_next) {
            s->out = plan->args[++i];
        } else if (!strcmp(a, "-x") && has_next) {
            lang = plan->args[++i];
        } else if (starts(a, "-x") && a[2]) {
            lang = a + 2;
        } else if (!strcmp(a, "-MD") || !strcmp(a, "-MMD")) {
            s->deps = true;
        } else if (dep_value_flag(a)) {
            s->dep_file |= starts(a, "-MF");
            s->dep_target |= !starts(a, "-MF") && !starts(a, "-MJ");
            i += dep_value_flag(a) - 1;
        } else if (has_next && sift_cc_takes_value(a)) {
            i++;
        }
    }
    return true;
}

static void scan_free(scan *s)
{
    free(s->inputs);
    free(s->source);
}

bool sift_cc_values_applies(const sift_cc_plan *plan)
{
    scan s;
    bool ok = read_command(plan, &s) && !s.declined && s.nsources > 0 &&
              !(s.compile_only && s.out && s.ninputs > 1);
    scan_free(&s);
    return ok;
}

/* An argument vector under construction; strings made here are owned by OWNED. */
typedef struct {
    char **v;
    int n, cap;
    char **owned;
    int nowned, owned_cap;
} argv_t;

static bool grow(char ***v, int *cap, int need)
{
    if (need <= *cap) return true;
    int cap2 = *cap ? *cap * 2 : 64;
    while (cap2 < need)
        cap2 *= 2;
    char **grown = realloc(*v, (size_t)cap2 * sizeof(**v));
    if (!grown) return false;
    *v = grown;
    *cap = cap2;
    return true;
}

static bool push(argv_t *a, const char *arg)
{
    if (!arg || !grow(&a->v, &a->cap, a->n + 2)) return false;
    a->v[a->n++] = (char *)arg;
    a->v[a->n] = NULL;
    return true;
}

static bool push_all(argv_t *a, char *const *list)
{
    for (; *list; list++)
        if (!push(a, *list)) return false;
    return true;
}

/* Keeps STR (allocated, may be NULL) until the end, and returns it. */
static char *own(argv_t *a, char *str)
{
    if (!str || !grow(&a->owned, &a->owned_cap, a->nowned + 1)) {
        free(str);
        return NULL;
    }
    a->owned[a->nowned++] = str;
    return str;
}

/* PATH's file name with its extension replaced by EXT, in the folder of PATH when KEEP_DIR. */
static char *with_extension(const char *path, const char *ext, bool keep_dir)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    const char *start = keep_dir ? path : name;
    const char *dot = strrchr(name, '.');
    size_t stem = (size_t)((dot && dot != name ? dot : name + strlen(name)) - start);
    char *out = malloc(stem + strlen(ext) + 1);
    if (!out) return NULL;
    memcpy(out, start, stem);
    memcpy(out + stem, ext, strlen(ext) + 1);
    return out;
}

static int run(char **argv)
{
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0) {
        fprintf(stderr, "sift-cc: cannot run %s: %s\n", argv[0], strerror(rc));
        return 127;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return 127;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The user's arguments without inputs other than KEEP_INPUT (-1 for none), -o, -c and, when
 * NO_DEPS, dependency-file and language flags. */
static bool push_user_args(argv_t *a, const sift_cc_plan *plan, const scan *s, int keep_input,
                           bool no_deps)
{
    int next_input = 0;
    for (int i = 0; i < plan->nargs; i++) {
        const char *arg = plan->args[i];
        bool has_next = i + 1 < plan->nargs;
        if (next_input < s->ninputs && s->inputs[next_input] == i) {
            next_input++;
            if (i == keep_input && !push(a, arg)) return false;
        } else if (!strcmp(arg, "-c")) {
        } else if (!strcmp(arg, "-o") && has_next) {
            i++;
        } else if (no_deps && (in_list(arg, dep_switches) || dep_value_flag(arg))) {
            i += dep_value_flag(arg) == 2;
        } else if (no_deps && starts(arg, "-x")) {
            i += !arg[2] && has_next;
        } else {
            bool pair = has_next && sift_cc_takes_value(arg);
            if (!push(a, arg) || (pair && !push(a, plan->args[++i]))) return false;
        }
    }
    return true;
}

typedef struct {
    const sift_cc_plan *plan;
    const sift_cc_values_tools *tools;
    scan s;
    char *tmp;    /* scratch folder */
    argv_t files; /* what was written into it, to remove */
} job;

static int out_of_memory(void)
{
    fprintf(stderr, "sift-cc: out of memory\n");
    return 1;
}

static void argv_free(argv_t *a)
{
    for (int i = 0; i < a->nowned; i++)
        free(a->owned[i]);
    free(a->owned);
    free(a->v);
}

/* The first step's flags for a dependency file: clang names the file and its target after
 * the object it would write, which is no longer the first step's output. */
static bool push_dep_names(argv_t *a, const scan *s, const char *src)
{
    if (!s->deps) return true;
    if (!s->dep_file &&
        !(push(a, "-MF") && push(a, own(a, s->out ? with_extension(s->out, ".d", true)
                                                  : with_extension(src, ".d", false)))))
        return false;
    return s->dep_target ||
           (push(a, "-MT") && push(a, s->out ? s->out : own(a, with_extension(src, ".o", false))));
}

/* Source number N (its index INPUT in the arguments) to OBJ. */
static int compile_one(job *j, int n, int input, const char *obj)
{
    const char *src = j->plan->args[input];
    char num[16];
    snprintf(num, sizeof num, "/%d", n);
    char *bc = own(&j->files, sift_cc_join3(j->tmp, num, ".bc"));
    char *ibc = own(&j->files, sift_cc_join3(j->tmp, num, ".sift.bc"));
    argv_t a = {0};
    if (!bc || !ibc || !push(&a, j->tools->compiler) || !push_all(&a, j->tools->compile) ||
        !push_user_args(&a, j->plan, &j->s, input, false) || !push_dep_names(&a, &j->s, src) ||
        !push(&a, "-c") || !push(&a, "-emit-llvm") || !push(&a, "-o") || !push(&a, bc) ||
        !push(&a, "-Wno-unused-command-line-argument")) {
        argv_free(&a);
        return out_of_memory();
    }
    int rc = run(a.v);
    argv_free(&a);
    if (rc != 0) return rc;

    char *instrument[] = {(char *)j->tools->instrument, bc, "-o", ibc, NULL, NULL, NULL};
    if (j->plan->values_max_struct) {
        instrument[4] = "-max-struct";
        instrument[5] = j->plan->values_max_struct;
    }
    if ((rc = run(instrument)) != 0) return rc;

    a = (argv_t){0};
    if (!push(&a, j->tools->compiler) || !push_user_args(&a, j->plan, &j->s, -1, true) ||
        !push(&a, "-c") || !push(&a, "-x") || !push(&a, "ir") || !push(&a, ibc) ||
        !push(&a, "-o") || !push(&a, obj) || !push(&a, "-Xclang") ||
        !push(&a, "-disable-llvm-passes") || !push(&a, "-Wno-unused-command-line-argument")) {
        argv_free(&a);
        return out_of_memory();
    }
    rc = run(a.v);
    argv_free(&a);
    return rc;
}

/* The user's link with each source replaced by its object. A language set with -x would make
 * clang read the object as source, so objects go in under -x none and the language after. */
static int link_all(job *j, const char *const *objs)
{
    argv_t a = {0};
    int next_input = 0, source = 0;
    const char *lang = NULL;
    bool ok = push(&a, j->tools->compiler) && push_all(&a, j->tools->compile);
    for (int i = 0; ok && i < j->plan->nargs; i++) {
        const char *arg = j->plan->args[i];
        bool has_next = i + 1 < j->plan->nargs;
        if (next_input < j->s.ninputs && j->s.inputs[next_input] == i) {
            if (!j->s.source[next_input++])
                ok = push(&a, arg);
            else if (lang)
                ok = push(&a, "-x") && push(&a, "none") && push(&a, objs[source++]) &&
                     push(&a, "-x") && push(&a, lang);
            else
                ok = push(&a, objs[source++]);
        } else if (in_list(arg, dep_switches) || dep_value_flag(arg)) {
            i += dep_value_flag(arg) == 2;
        } else if (!strcmp(arg, "-x") && has_next) {
            lang = j->plan->args[++i];
            ok = push(&a, arg) && push(&a, lang);
        } else {
            if (starts(arg, "-x") && arg[2]) lang = arg + 2;
            bool pair = has_next && sift_cc_takes_value(arg);
            ok = push(&a, arg) && (!pair || push(&a, j->plan->args[++i]));
        }
    }
    int rc = ok && push_all(&a, j->tools->link) ? run(a.v) : out_of_memory();
    argv_free(&a);
    return rc;
}

static int run_job(job *j)
{
    const char *base = getenv("TMPDIR");
    j->tmp = sift_cc_join3(base && *base ? base : "/tmp", "/sift-cc-", "XXXXXX");
    if (!j->tmp || !mkdtemp(j->tmp)) {
        fprintf(stderr, "sift-cc: cannot create a scratch folder: %s\n", strerror(errno));
        return 1;
    }
    const char **objs = calloc((size_t)j->s.nsources + 1, sizeof(*objs));
    if (!objs) return out_of_memory();
    int rc = 0;
    for (int k = 0, n = 0; k < j->s.ninputs && rc == 0; k++) {
        if (!j->s.source[k]) continue;
        const char *src = j->plan->args[j->s.inputs[k]];
        char num[16];
        snprintf(num, sizeof num, "/%d", n);
        const char *obj = !j->s.compile_only ? own(&j->files, sift_cc_join3(j->tmp, num, ".o"))
                          : j->s.out         ? j->s.out
                                             : own(&j->files, with_extension(src, ".o", false));
        if (!obj) {
            rc = out_of_memory();
            break;
        }
        objs[n] = obj;
        rc = compile_one(j, n++, j->s.inputs[k], obj);
    }
    if (rc == 0 && !j->s.compile_only) rc = link_all(j, objs);
    free(objs);
    return rc;
}

int sift_cc_values_run(const sift_cc_plan *plan, const sift_cc_values_tools *tools)
{
    job j = {.plan = plan, .tools = tools};
    int rc = read_command(plan, &j.s) ? run_job(&j) : out_of_memory();
    /* Objects named in the user's folder are results; only the scratch folder goes. */
    for (int i = 0; i < j.files.nowned; i++) {
        if (j.tmp && starts(j.files.owned[i], j.tmp)) unlink(j.files.owned[i]);
        free(j.files.owned[i]);
    }
    if (j.tmp) rmdir(j.tmp);
    free(j.files.owned);
    free(j.tmp);
    scan_free(&j.s);
    return rc;
}
