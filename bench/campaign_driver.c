/* bench/campaign's coverage driver: runs every file named on the command line through
 * LLVMFuzzerTestOneInput once, in a build with clang's source-based coverage. An input that
 * crashes or hangs must not lose the profile of the inputs before it: the handler writes the
 * profile, records the input's position in $SIFT_DRIVER_POS, and exits; the caller restarts
 * after it. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int __llvm_profile_write_file(void);

/* The signal handler's view of where the run is: globals because a handler has no arguments. */
static volatile sig_atomic_t driver_pos;
static const char *driver_pos_path;

static void driver_write_pos(void)
{
    if (!driver_pos_path) return;
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%d\n", (int)driver_pos);
    int fd = open(driver_pos_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        if (write(fd, buf, (size_t)n) < 0) {
        }
        close(fd);
    }
}

static void driver_on_fault(int sig)
{
    (void)sig;
    __llvm_profile_write_file();
    driver_write_pos();
    _exit(3);
}

int main(int argc, char **argv)
{
    driver_pos_path = getenv("SIFT_DRIVER_POS");
    int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGALRM};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], driver_on_fault);
    for (int i = 1; i < argc; i++) {
        driver_pos = i;
        FILE *f = fopen(argv[i], "rb");
        if (!f) continue;
        struct stat st;
        if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
            fclose(f);
            continue;
        }
        size_t len = (size_t)st.st_size;
        uint8_t *buf = malloc(len ? len : 1);
        if (!buf || fread(buf, 1, len, f) != len) {
            free(buf);
            fclose(f);
            continue;
        }
        fclose(f);
        alarm(10);
        LLVMFuzzerTestOneInput(buf, len);
        alarm(0);
        free(buf);
    }
    return 0;
}
