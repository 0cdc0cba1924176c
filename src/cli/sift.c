/* sift, the command-line tool next to the harnesses: sift show DIR summarizes a campaign's
 * output folder (docs/watching.md). Fuzzing itself runs in the harness binary. */
#include "cli/show.h"
#include "sift/version.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fputs(
        "Usage: sift COMMAND [options]\n"
        "\n"
        "Commands:\n"
        "  show [-o FILE] DIR  summarize the output folder of a campaign (-out=DIR) and plot its\n"
        "                      coverage over time into DIR/coverage.svg\n"
        "\n"
        "Options:\n"
        "  -h, --help          print this help (sift COMMAND --help: the command's)\n"
        "  -V, --version       print the version\n"
        "\n"
        "Fuzzing runs in the harness: sift-cc -fsanitize=fuzzer harness.c -o harness, then\n"
        "./harness -help=1 for its flags (man sift).\n",
        out);
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;
    if (!cmd) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        if (argc > 2 && !strcmp(argv[2], "show"))
            sift_show_usage(stdout);
        else
            usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("sift %s\n", SIFT_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "show")) return sift_show_main(argc - 1, argv + 1);
    fprintf(stderr, "sift: unknown command %s (see sift --help)\n", cmd);
    return 2;
}
