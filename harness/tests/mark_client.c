/* A program of the user's own that marks its phases with memharness/mark.h:
   64 MiB allocated and touched, then freed. Run without the harness, it
   prints "-1 -1" and exits 0.

   With arguments it misbehaves, for the harness's bounds:
     marks COUNT BYTES   COUNT marks with names of BYTES bytes, as raw lines of
                         the protocol (mark.h cuts names short), then exits
     data COUNT BYTES    COUNT data messages of BYTES bytes each, keys distinct
     ledger-garbage      writes out-of-range values over its own heap ledger's
                         counters and tables (run with --ledger --heap-sample),
                         then marks */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memharness/ledger.h"
#include "memharness/mark.h"

/* COUNT lines of PREFIX, BYTES of 'x', SUFFIX (a sequence number where %d is). */
static int send_lines(long count, long bytes, const char* prefix, const char* suffix) {
  int fd = memharness_fd_("MEMHARNESS_MARK_FD");
  size_t cap = (size_t)bytes + 128;
  char* line = malloc(cap);
  if (fd < 0 || !line) return 1;
  for (long i = 0; i < count; ++i) {
    size_t len = (size_t)snprintf(line, cap, prefix, i);
    memset(line + len, 'x', (size_t)bytes);
    len += (size_t)bytes;
    len += (size_t)snprintf(line + len, cap - len, suffix, i);
    if (memharness_write_(fd, line, len) < 0) return 1;
  }
  free(line);
  return 0;
}

static int ledger_garbage(void) {
  struct memharness_ledger* l = dlsym(RTLD_DEFAULT, "memharness_ledger");
  void* held[64];
  if (!l) return 2;
  for (int i = 0; i < 64; ++i) held[i] = malloc(64 << 10); /* sampled stacks to read */
  memharness_mark("before");
  /* Slots no thread owns: their sum overflows, and one is negative. */
  l->slots_used = MEMHARNESS_LEDGER_SLOTS;
  l->slot[MEMHARNESS_LEDGER_SLOTS - 1].live_blocks = INT64_MAX;
  l->slot[MEMHARNESS_LEDGER_SLOTS - 2].live_blocks = INT64_MAX;
  l->slot[MEMHARNESS_LEDGER_SLOTS - 3].live_bytes = INT64_MIN;
  l->slot[MEMHARNESS_LEDGER_SLOTS - 4].allocs = UINT64_MAX;
  l->dropped = UINT64_MAX;
  l->snapshots = UINT64_MAX;
  l->peak_live_bytes = INT64_MIN;
  struct memharness_ledger_site* sites = (struct memharness_ledger_site*)(uintptr_t)l->sites;
  struct memharness_ledger_site* peak = (struct memharness_ledger_site*)(uintptr_t)l->peak_sites;
  for (uint32_t i = 0; sites && i < l->stacks_used; ++i) {
    sites[i].bytes = NAN;
    sites[i].samples = -5;
  }
  for (uint32_t i = 0; peak && i < l->peak_stacks; ++i) peak[i].var = NAN;
  int garbage = memharness_mark("garbage");
  for (int i = 0; i < 64; ++i) free(held[i]);
  printf("%d\n", garbage);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "marks") == 0)
    return send_lines(atol(argv[2]), atol(argv[3]), "{\"mark\": \"%ld", "\"}\n");
  if (argc == 4 && strcmp(argv[1], "data") == 0)
    return send_lines(atol(argv[2]), atol(argv[3]), "{\"data\": {\"key\": \"k%ld\", \"value\": \"", "\"}}\n");
  if (argc == 2 && strcmp(argv[1], "ledger-garbage") == 0) return ledger_garbage();
  const size_t size = (size_t)64 << 20;
  char* p = malloc(size);
  if (!p) return 1;
  /* Every page written through a volatile pointer: the compiler may not drop
     the stores of a buffer it sees freed unread. */
  for (size_t i = 0; i < size; i += 4096) ((volatile char*)p)[i] = 1;
  int allocated = memharness_mark("allocated");
  free(p);
  int freed = memharness_mark("freed \"quoted\"");
  memharness_metric("marks_answered", (allocated == 0) + (freed == 0));
  printf("%d %d\n", allocated, freed);
  return 0;
}
