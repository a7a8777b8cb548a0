/* memharness/mark.h: marks and metrics from your own program to the harness
   that runs it (harness -- PROGRAM ARGS). Single header, C or C++, nothing to
   link. Without the harness (the variables below absent) every call does
   nothing and returns -1.

   The protocol, for any language: the harness gives the program two inherited
   descriptors in MEMHARNESS_MARK_FD (write) and MEMHARNESS_ACK_FD (read). A
   message is one JSON line written to the mark descriptor:
     {"mark": "NAME", "sync": true}        a mark: the harness samples the
                                            process, then answers with 4 bytes
                                            (a uint32 in host order, 0 here) on
                                            the ack descriptor; wait for them
                                            (the harness gives up after 2 s)
     {"metric": "NAME", "value": 42.5}      a figure of the run (workload.NAME)
     {"metric": "NAME", "value": null,      a time that never came within the
      "above": 3000}                        run: more than 3000 (what the run
                                            had left); compared as longer than
                                            every time below 3000, not dropped
   Marks from one thread at a time: an answer is not addressed to a thread.
   Async-signal-safe apart from getenv: no allocation, no locks. */
#ifndef MEMHARNESS_MARK_H
#define MEMHARNESS_MARK_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline int memharness_fd_(const char* variable) {
  const char* v = getenv(variable);
  char* end = NULL;
  long fd;
  if (!v || !*v) return -1;
  fd = strtol(v, &end, 10);
  return (*end == '\0' && fd >= 0) ? (int)fd : -1;
}

/* Writes all of line; 0 or -1. */
static inline int memharness_write_(int fd, const char* line, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, line, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    line += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Appends name as a JSON string body (quotes and control characters escaped). */
static inline size_t memharness_put_name_(char* buf, size_t len, size_t cap, const char* name) {
  for (; *name && len + 7 < cap; ++name) {
    unsigned char c = (unsigned char)*name;
    if (c == '"' || c == '\\') {
      buf[len++] = '\\';
      buf[len++] = (char)c;
    } else if (c < 0x20) {
      len += (size_t)snprintf(buf + len, cap - len, "\\u%04x", c);
    } else {
      buf[len++] = (char)c;
    }
  }
  return len;
}

/* A mark: returns 0 once the harness has sampled the process, -1 when no
   harness is listening (or it did not answer within 2 s). */
static inline int memharness_mark(const char* name) {
  char line[512];
  size_t len = 0;
  int mark_fd = memharness_fd_("MEMHARNESS_MARK_FD"), ack_fd = memharness_fd_("MEMHARNESS_ACK_FD");
  uint32_t answer = 0;
  if (mark_fd < 0) return -1;
  len = (size_t)snprintf(line, sizeof line, "{\"mark\": \"");
  len = memharness_put_name_(line, len, sizeof line - 24, name);
  len += (size_t)snprintf(line + len, sizeof line - len, "\"%s}\n", ack_fd >= 0 ? ", \"sync\": true" : "");
  if (memharness_write_(mark_fd, line, len) < 0) return -1;
  if (ack_fd < 0) return 0;
  for (;;) {
    struct pollfd p = {ack_fd, POLLIN, 0};
    int r = poll(&p, 1, 2000);
    if (r < 0 && errno == EINTR) continue;
    if (r != 1) return -1;
    ssize_t n = read(ack_fd, &answer, sizeof answer);
    if (n < 0 && errno == EINTR) continue;
    return n == (ssize_t)sizeof answer ? 0 : -1;
  }
}

/* {"metric": "NAME", FIELDS}: FIELDS the rest of the message, under 64 bytes. */
static inline int memharness_send_metric_(const char* name, const char* fields) {
  char line[512];
  size_t len = 0;
  int mark_fd = memharness_fd_("MEMHARNESS_MARK_FD");
  if (mark_fd < 0) return -1;
  len = (size_t)snprintf(line, sizeof line, "{\"metric\": \"");
  len = memharness_put_name_(line, len, sizeof line - 72, name);
  len += (size_t)snprintf(line + len, sizeof line - len, "\", %s}\n", fields);
  return memharness_write_(mark_fd, line, len);
}

/* A figure of the run, in the report as workload.NAME. */
static inline int memharness_metric(const char* name, double value) {
  char fields[64];
  snprintf(fields, sizeof fields, "\"value\": %.17g", value);
  return memharness_send_metric_(name, fields);
}

/* A figure that never came within the run (memory never back by the time the
   program stopped waiting): more than `bound`, in the report as workload.NAME
   null with "above": bound. */
static inline int memharness_metric_above(const char* name, double bound) {
  char fields[64];
  snprintf(fields, sizeof fields, "\"value\": null, \"above\": %.17g", bound);
  return memharness_send_metric_(name, fields);
}

#endif /* MEMHARNESS_MARK_H */
