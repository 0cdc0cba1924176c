/* Reports from crash handlers: text gathered in a fixed buffer and written with write(2) to the
 * report descriptor, so no allocation and no stdio. Long text is flushed in pieces. */
#ifndef SIFT_REPORT_H
#define SIFT_REPORT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char buf[1024];
    size_t len;
} sift_report;

void sift_report_str(sift_report *o, const char *s);
void sift_report_u64(sift_report *o, uint64_t v);
/* DATA in base64, as libFuzzer's "Base64: " line. */
void sift_report_base64(sift_report *o, const uint8_t *data, size_t size);
/* The text of ERR (strerror is not async-signal-safe): the failures a write to disk meets. */
void sift_report_errno(sift_report *o, int err);
void sift_report_flush(sift_report *o);

/* Where reports go: stderr unless moved (a driver that closes stderr for -close_fd_mask
 * passes a duplicate of it here). */
void sift_report_set_fd(int fd);
int sift_report_fd(void);

/* Prints DATA as libFuzzer does before an artifact line when it is at most 256 bytes: a hex
 * array line ("0x46,0x55,") and an escaped ASCII line. */
void sift_report_unit(const uint8_t *data, size_t size);

#endif
