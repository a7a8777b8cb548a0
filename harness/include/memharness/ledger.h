/* The heap ledger's counters as the harness reads them from outside the process
   (process_vm_readv at the exported symbol `memharness_ledger`). Shared by the
   library (ledger.c) and the harness's reader: one layout, versioned. */
#ifndef MEMHARNESS_LEDGER_H
#define MEMHARNESS_LEDGER_H

#include <stdint.h>

#define MEMHARNESS_LEDGER_MAGIC "memharness-ldgr"
#define MEMHARNESS_LEDGER_VERSION 1u
/* Slot 0 is shared (atomic adds) by threads past the others and by threads
   that are exiting; slots 1..N belong to one live thread each. */
#define MEMHARNESS_LEDGER_SLOTS 256u

/* One thread's part. Only its owner writes it (plain loads and stores, no
   lock prefix); a block freed by another thread is subtracted in that thread's
   slot, so only the sum over slots means anything. */
struct memharness_ledger_slot {
  int64_t live_bytes;  /* usable bytes allocated minus usable bytes freed */
  int64_t live_blocks;
  uint64_t allocs;      /* allocation calls (realloc to a new size counts) */
  uint64_t alloc_bytes; /* usable bytes of those allocations */
  uint32_t owned;       /* 1 while a live thread owns the slot */
  uint32_t pad_[7];
};

struct memharness_ledger {
  char magic[16];
  uint32_t version;
  uint32_t slots;       /* MEMHARNESS_LEDGER_SLOTS */
  uint32_t slots_used;  /* highest slot index ever claimed + 1: the reader reads these */
  int32_t pid;          /* the process whose counts these are (reset in a fork's child) */
  uint64_t next_malloc; /* the malloc behind the ledger: which allocator serves it */
  uint64_t pad_[4];
  struct memharness_ledger_slot slot[MEMHARNESS_LEDGER_SLOTS];
};

#endif
