/* main() of a harness built with sift-cc -fsanitize=fuzzer. */
#include "engine/driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    return sift_driver_main(argc, argv, LLVMFuzzerTestOneInput);
}
