/* Writes sift(1) to stdout: the fixed sections here, the options from the flag table, so that
 * the installed page cannot drift from what -help=1 prints. */
#include "engine/base/options.h"
#include "sift/version.h"

#include <stdio.h>
#include <string.h>

/* Text as roff reads it: a backslash is an escape, a leading dot or quote a request, and '-'
 * a hyphen that man may break lines at (flags need the minus sign, \-). */
static void text(const char *s)
{
    if (*s == '.' || *s == '\'') fputs("\\&", stdout);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", stdout);
        else if (*s == '-')
            fputs("\\-", stdout);
        else
            putchar(*s);
    }
}

static void option(void *ctx, const sift_flag_doc *doc)
{
    (void)ctx;
    fputs(".TP\n\\fB\\-", stdout);
    text(doc->name);
    fputs("=\\fI", stdout);
    text(doc->value);
    fputs("\\fR\n", stdout);
    text(doc->help);
    /* A file name flag has no default value; its help says what happens without one. */
    if (strcmp(doc->def, "none") != 0) {
        fputs(" Default: ", stdout);
        text(doc->def);
        putchar('.');
    }
    putchar('\n');
}

int main(void)
{
    printf(".TH SIFT 1 \"\" \"sift %s\" \"User Commands\"\n", SIFT_VERSION);
    /* Flag and function names broken at a hyphen would read as two words. */
    fputs(".nh\n", stdout);
    fputs(".SH NAME\n"
          "sift, sift\\-cc, sift\\-c++ \\- coverage\\-guided fuzzer for libFuzzer harnesses\n"
          ".SH SYNOPSIS\n"
          ".B sift\\-cc\n"
          "[\\fIclang options\\fR] \\fB\\-fsanitize=fuzzer\\fR[\\fB,\\fIsanitizers\\fR] "
          "\\fIharness.c\\fR \\fB\\-o\\fR \\fIharness\\fR\n"
          ".br\n"
          ".I harness\n"
          "[\\fB\\-\\fIflag\\fB=\\fIvalue\\fR ...] [\\fIcorpus_dir\\fR ... | \\fIfile\\fR ...]\n"
          ".br\n"
          ".B sift show\n"
          "[\\fB\\-o\\fR \\fIplot.svg\\fR] [\\fB\\-\\-no\\-plot\\fR] \\fIout_dir\\fR\n"
          ".SH DESCRIPTION\n"
          "sift runs libFuzzer harnesses, programs that define\n"
          ".BR LLVMFuzzerTestOneInput (),\n"
          "with libFuzzer's flags and artifacts.\n"
          ".PP\n"
          ".B sift\\-cc\n"
          "and\n"
          ".B sift\\-c++\n"
          "run clang and clang++ with the user's arguments, adding sift's coverage "
          "instrumentation.\n"
          "With \\fB\\-fsanitize=fuzzer\\fR they link sift's runtime and engine, which provides\n"
          ".BR main ();\n"
          "with \\fB\\-fsanitize=fuzzer\\-no\\-link\\fR they instrument only, for the code under "
          "test; with neither, an executable gets the runtime only.\n"
          "Other sanitizers in the list are passed to clang.\n"
          "They find sift's libraries in \\fI../lib\\fR next to their own folder, and its "
          "headers in \\fI../include\\fR.\n"
          ".PP\n"
          "Given folders, a harness fuzzes: it loads them as the corpus and writes new inputs "
          "into the first.\n"
          "Given files, it runs each once, to reproduce a crash.\n"
          "A crash, timeout, leak or out\\-of\\-memory is reported on stderr and its input saved "
          "as an artifact, \\fIcrash\\-\\fR<sha1>, \\fItimeout\\-\\fR<sha1>, ...\n"
          "On a terminal, progress is a live view redrawn in place (see \\fB\\-status\\fR).\n"
          ".PP\n"
          ".B sift show\n"
          "reads the output folder of a campaign (\\fB\\-workers=\\fIN\\fB \\-out=\\fIout_dir\\fR) "
          "and prints its run time, executions, exec/s, coverage, corpus, crashes and hangs "
          "with their paths and its last find; it plots coverage over time from "
          "\\fIout_dir/plot_data\\fR into \\fIout_dir/coverage.svg\\fR, or the file of "
          "\\fB\\-o\\fR.\n"
          ".SH OPTIONS\n"
          "Flags are written \\fB\\-\\fIname\\fB=\\fIvalue\\fR, with one dash; a value out of "
          "range is an error. An unknown flag is skipped with a warning, and arguments that "
          "start with \\fB\\-\\-\\fR are ignored, as libFuzzer does.\n"
          "When a flag is repeated, the last value wins.\n",
          stdout);
    sift_options_foreach(option, NULL);
    fputs(".SH ENVIRONMENT\n"
          ".TP\n"
          ".B SIFT_CLANG\n"
          "The compiler sift\\-cc runs (default: clang).\n"
          ".TP\n"
          ".B SIFT_CLANGXX\n"
          "The compiler sift\\-c++ runs (default: clang++).\n"
          ".SH EXIT STATUS\n"
          "0 when the run ends without a finding.\n"
          "The value of \\fB\\-error_exitcode\\fR after a crash or a leak, the sanitizer's own "
          "code after a sanitizer report, the value of \\fB\\-timeout_exitcode\\fR after a "
          "timeout, 71 after an out\\-of\\-memory, 1 for a usage error.\n"
          ".SH EXAMPLES\n"
          ".nf\n"
          "sift\\-cc \\-g \\-O1 \\-fsanitize=fuzzer,address harness.c \\-o harness\n"
          "mkdir corpus && ./harness corpus/\n"
          "\\&./harness crash\\-<sha1>\n"
          ".fi\n"
          ".SH SEE ALSO\n"
          ".BR clang (1)\n",
          stdout);
    return ferror(stdout) ? 1 : 0;
}
