/* bench/campaign's zlib target: inflates the input (zlib or gzip framing, detected by zlib), and
 * when that succeeds, deflates the output again at a level and strategy taken from the input and
 * checks that inflating it gives the same bytes back. A mismatch is a bug in zlib: abort(). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { OUT_MAX = 1 << 20 };

/* Inflates LEN bytes at IN into OUT (capacity CAP); returns the output length, or -1 when the
 * stream is not a complete, valid one. */
static long inflate_all(const uint8_t *in, size_t len, uint8_t *out, size_t cap, int window_bits)
{
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, window_bits) != Z_OK) return -1;
    s.next_in = (Bytef *)in;
    s.avail_in = (uInt)len;
    s.next_out = out;
    s.avail_out = (uInt)cap;
    int rc = inflate(&s, Z_FINISH);
    long n = (long)s.total_out;
    inflateEnd(&s);
    return rc == Z_STREAM_END ? n : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t plain[OUT_MAX], packed[OUT_MAX + OUT_MAX / 100 + 1024], again[OUT_MAX];
    if (size < 1) return 0;
    long n = inflate_all(data + 1, size - 1, plain, sizeof plain, 15 + 32);
    if (n < 0) return 0;

    int level = data[0] % 10, strategy = (data[0] / 10) % 5;
    z_stream s;
    memset(&s, 0, sizeof s);
    if (deflateInit2(&s, level, Z_DEFLATED, 15, 8, strategy) != Z_OK) abort();
    s.next_in = plain;
    s.avail_in = (uInt)n;
    s.next_out = packed;
    s.avail_out = sizeof packed;
    if (deflate(&s, Z_FINISH) != Z_STREAM_END) abort();
    size_t packed_len = s.total_out;
    deflateEnd(&s);

    if (inflate_all(packed, packed_len, again, sizeof again, 15) != n ||
        memcmp(plain, again, (size_t)n))
        abort();
    return 0;
}
