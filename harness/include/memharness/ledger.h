/* The heap ledger's counters as the harness reads them from outside the process
   (process_vm_readv at the exported symbol `memharness_ledger`). Shared by the
   library (ledger.c) and the harness's reader: one layout, versioned. */
#ifndef MEMHARNESS_LEDGER_H
#define MEMHARNESS_LEDGER_H

#include <stdint.h>

#define MEMHARNESS_LEDGER_MAGIC "memharness-ldgr"
#define MEMHARNESS_LEDGER_VERSION 3u
/* Slot 0 is shared (atomic adds) by threads past the others and by threads
   that are exiting; slots 1..N belong to one live thread each. */
#define MEMHARNESS_LEDGER_SLOTS 256u
/* Sampled blocks (open addressing by address) and their call stacks (appended,
   deduplicated by a hash of the frames), in one region the library maps. */
#define MEMHARNESS_LEDGER_BLOCKS (1u << 17)
#define MEMHARNESS_LEDGER_STACKS (1u << 13)
#define MEMHARNESS_LEDGER_FRAMES 64u
/* A block slot's address when the slot never held a block / held one that was freed. */
#define MEMHARNESS_LEDGER_EMPTY 0u
#define MEMHARNESS_LEDGER_GONE 1u

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

/* A live sampled block: it stands for `weight` bytes of the live heap
   (size / (1 - exp(-size / interval))). addr is written last (release). */
struct memharness_ledger_block {
  uint64_t addr;
  uint32_t stack; /* index into the stack table */
  uint32_t pad_;
  uint64_t size;  /* usable bytes */
  double weight;
};

struct memharness_ledger_stack {
  uint64_t hash;
  uint32_t depth; /* frames used; the innermost first */
  uint32_t pad_;
  uint64_t frame[MEMHARNESS_LEDGER_FRAMES]; /* return addresses */
};

/* One stack's live sampled blocks, summed (an entry per stack id, in the live
   table and in the peak snapshot): bytes = sum of their weights, var = sum of
   w (w - size), samples = how many. Only written under the table lock; a
   stack without live blocks has all three 0. */
struct memharness_ledger_site {
  double bytes;
  double var;
  int64_t samples;
};

struct memharness_ledger {
  char magic[16];
  uint32_t version;
  uint32_t slots;       /* MEMHARNESS_LEDGER_SLOTS */
  uint32_t slots_used;  /* highest slot index ever claimed + 1: the reader reads these */
  int32_t pid;          /* the process whose counts these are (reset in a fork's child) */
  uint64_t next_malloc; /* the malloc behind the ledger: which allocator serves it */
  uint64_t pad_[4];
  /* Sampling (MEMHARNESS_LEDGER_SAMPLE bytes on average between samples; 0: off). */
  uint64_t sample_interval;
  uint64_t blocks;       /* address of the block table (MEMHARNESS_LEDGER_BLOCKS), 0 when off */
  uint64_t stacks;       /* address of the stack table (MEMHARNESS_LEDGER_STACKS) */
  uint32_t stacks_used;  /* stacks appended so far: the reader reads these */
  uint32_t blocks_live;  /* sampled blocks in the table now */
  uint64_t dropped;      /* samples not kept: a table was full */
  /* The per-stack sums (MEMHARNESS_LEDGER_STACKS entries each): of the live
     sampled blocks now, and as they were at the peak snapshot. sites_seq is
     odd while the live sums change (a reader retries). */
  uint64_t sites;
  uint64_t peak_sites;
  uint64_t sites_seq;
  /* The peak snapshot: taken at a sampled allocation when the live heap (the
     slots' sum) is more than 1% above the last snapshot's. peak_seq is
     odd while one is being written; peak_stacks: the entries it holds. */
  uint64_t peak_seq;
  int64_t peak_live_bytes;
  uint64_t snapshots;
  uint32_t peak_stacks;
  uint32_t pad2_;
  struct memharness_ledger_slot slot[MEMHARNESS_LEDGER_SLOTS];
};

#endif
