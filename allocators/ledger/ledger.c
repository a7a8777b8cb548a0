/* The heap ledger: preloaded ahead of the allocator under test, it forwards every
   allocation entry point to the next definition and counts what each block's
   usable size says the allocator handed out. The harness reads the counters from
   outside (memharness_ledger.h). No lock and no system call on the allocation path. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <unwind.h>

#include <memharness/ledger.h>

#define API __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

API struct memharness_ledger memharness_ledger = {
    .magic = MEMHARNESS_LEDGER_MAGIC,
    .version = MEMHARNESS_LEDGER_VERSION,
    .slots = MEMHARNESS_LEDGER_SLOTS,
    .slots_used = 1,
};

/* ---- the definitions behind the ledger ---------------------------------- */

typedef void* (*alloc_fn)(size_t);
typedef void (*free_fn)(void*);
typedef void* (*new_nothrow_fn)(size_t, const void*);
typedef void* (*new_aligned_fn)(size_t, size_t);
typedef void* (*new_aligned_nothrow_fn)(size_t, size_t, const void*);
typedef void (*delete_sized_fn)(void*, size_t);
typedef void (*delete_aligned_fn)(void*, size_t);
typedef void (*delete_sized_aligned_fn)(void*, size_t, size_t);
typedef void (*delete_nothrow_fn)(void*, const void*);
typedef void (*delete_aligned_nothrow_fn)(void*, size_t, const void*);

static struct {
  void* (*malloc)(size_t);
  void (*free)(void*);
  void* (*calloc)(size_t, size_t);
  void* (*realloc)(void*, size_t);
  void* (*reallocarray)(void*, size_t, size_t);
  void* (*memalign)(size_t, size_t);
  int (*posix_memalign)(void**, size_t, size_t);
  void* (*aligned_alloc)(size_t, size_t);
  void* (*valloc)(size_t);
  void* (*pvalloc)(size_t);
  size_t (*usable)(void*);
  void (*free_sized)(void*, size_t);
  void (*free_aligned_sized)(void*, size_t, size_t);
  void* (*mallocx)(size_t, int);
  void* (*rallocx)(void*, size_t, int);
  size_t (*xallocx)(void*, size_t, size_t, int);
  void (*sdallocx)(void*, size_t, int);
  void (*dallocx)(void*, int);
  /* operator new and delete, by mangled name (x86-64: size_t is unsigned long). */
  alloc_fn Znwm, Znam;
  new_nothrow_fn ZnwmRKSt9nothrow_t, ZnamRKSt9nothrow_t;
  new_aligned_fn ZnwmSt11align_val_t, ZnamSt11align_val_t;
  new_aligned_nothrow_fn ZnwmSt11align_val_tRKSt9nothrow_t, ZnamSt11align_val_tRKSt9nothrow_t;
  free_fn ZdlPv, ZdaPv;
  delete_sized_fn ZdlPvm, ZdaPvm;
  delete_nothrow_fn ZdlPvRKSt9nothrow_t, ZdaPvRKSt9nothrow_t;
  delete_aligned_fn ZdlPvSt11align_val_t, ZdaPvSt11align_val_t;
  delete_sized_aligned_fn ZdlPvmSt11align_val_t, ZdaPvmSt11align_val_t;
  delete_aligned_nothrow_fn ZdlPvSt11align_val_tRKSt9nothrow_t, ZdaPvSt11align_val_tRKSt9nothrow_t;
} next;

/* ---- bootstrap: what the lookup of the next malloc itself allocates ------ */

/* dlsym may allocate (its error state) before there is a next malloc to call.
   Those few blocks come from here and are never freed nor counted. */
static char boot[1 << 16] __attribute__((aligned(64)));
static size_t boot_used;

static int is_boot(const void* p) { return (const char*)p >= boot && (const char*)p < boot + sizeof boot; }

static void* boot_alloc(size_t n) {
  const size_t start = (boot_used + 16 + 15) & ~(size_t)15;
  if (n > sizeof boot || start + n > sizeof boot) return NULL;
  boot_used = start + n;
  memcpy(boot + start - sizeof n, &n, sizeof n);
  return boot + start;
}

static size_t boot_size(const void* p) {
  size_t n;
  memcpy(&n, (const char*)p - sizeof n, sizeof n);
  return n;
}

/* Inside a forwarded call (operator new calling malloc under glibc, the slot
   bookkeeping's own allocations) nothing more is counted: a block counts once. */
static TLS volatile int depth;

static int state; /* 0: not resolved, 1: resolving, 2: ready */
static TLS volatile int resolving_here; /* volatile: read back through dlsym's own calls into malloc */
static pthread_key_t exit_key;

static void release_slot(void* unused);
static void after_fork_in_child(void);
static void sampling_init(void);
static void before_fork(void);
static void after_fork(void);

#define RESOLVE(field, name) next.field = (__typeof__(next.field))dlsym(RTLD_NEXT, name)

static void resolve_all(void) {
  RESOLVE(malloc, "malloc");
  RESOLVE(free, "free");
  RESOLVE(calloc, "calloc");
  RESOLVE(realloc, "realloc");
  RESOLVE(reallocarray, "reallocarray");
  RESOLVE(memalign, "memalign");
  RESOLVE(posix_memalign, "posix_memalign");
  RESOLVE(aligned_alloc, "aligned_alloc");
  RESOLVE(valloc, "valloc");
  RESOLVE(pvalloc, "pvalloc");
  RESOLVE(usable, "malloc_usable_size");
  RESOLVE(free_sized, "free_sized");
  RESOLVE(free_aligned_sized, "free_aligned_sized");
  RESOLVE(mallocx, "mallocx");
  RESOLVE(rallocx, "rallocx");
  RESOLVE(xallocx, "xallocx");
  RESOLVE(sdallocx, "sdallocx");
  RESOLVE(dallocx, "dallocx");
  RESOLVE(Znwm, "_Znwm");
  RESOLVE(Znam, "_Znam");
  RESOLVE(ZnwmRKSt9nothrow_t, "_ZnwmRKSt9nothrow_t");
  RESOLVE(ZnamRKSt9nothrow_t, "_ZnamRKSt9nothrow_t");
  RESOLVE(ZnwmSt11align_val_t, "_ZnwmSt11align_val_t");
  RESOLVE(ZnamSt11align_val_t, "_ZnamSt11align_val_t");
  RESOLVE(ZnwmSt11align_val_tRKSt9nothrow_t, "_ZnwmSt11align_val_tRKSt9nothrow_t");
  RESOLVE(ZnamSt11align_val_tRKSt9nothrow_t, "_ZnamSt11align_val_tRKSt9nothrow_t");
  RESOLVE(ZdlPv, "_ZdlPv");
  RESOLVE(ZdaPv, "_ZdaPv");
  RESOLVE(ZdlPvm, "_ZdlPvm");
  RESOLVE(ZdaPvm, "_ZdaPvm");
  RESOLVE(ZdlPvRKSt9nothrow_t, "_ZdlPvRKSt9nothrow_t");
  RESOLVE(ZdaPvRKSt9nothrow_t, "_ZdaPvRKSt9nothrow_t");
  RESOLVE(ZdlPvSt11align_val_t, "_ZdlPvSt11align_val_t");
  RESOLVE(ZdaPvSt11align_val_t, "_ZdaPvSt11align_val_t");
  RESOLVE(ZdlPvmSt11align_val_t, "_ZdlPvmSt11align_val_t");
  RESOLVE(ZdaPvmSt11align_val_t, "_ZdaPvmSt11align_val_t");
  RESOLVE(ZdlPvSt11align_val_tRKSt9nothrow_t, "_ZdlPvSt11align_val_tRKSt9nothrow_t");
  RESOLVE(ZdaPvSt11align_val_tRKSt9nothrow_t, "_ZdaPvSt11align_val_tRKSt9nothrow_t");
}

/* True while the caller must be served from the bootstrap arena: this thread is
   the one looking the next definitions up. Another thread waits for it. */
static int resolve(void) {
  if (resolving_here) return 1;
  int expected = 0;
  if (__atomic_compare_exchange_n(&state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    resolving_here = 1;
    resolve_all();
    ++depth;
    void* warm = next.malloc(1);
    if (warm) next.usable(warm);
    next.free(warm);
    --depth;
    pthread_key_create(&exit_key, release_slot);
    sampling_init();
    pthread_atfork(before_fork, after_fork, after_fork_in_child);
    memharness_ledger.pid = (int32_t)getpid();
    memharness_ledger.next_malloc = (uint64_t)(uintptr_t)next.malloc;
    resolving_here = 0;
    __atomic_store_n(&state, 2, __ATOMIC_RELEASE);
    return 0;
  }
  while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 2) sched_yield();
  return 0;
}

static inline int bootstrapping(void) {
  if (__builtin_expect(__atomic_load_n(&state, __ATOMIC_ACQUIRE) == 2, 1)) return 0;
  return resolve();
}

__attribute__((constructor(101))) static void ledger_init(void) { bootstrapping(); }

/* ---- counting ------------------------------------------------------------ */

/* The thread's own slot; null until it has one, and for a thread on the shared slot. */
static TLS struct memharness_ledger_slot* my_slot;
static TLS int on_shared; /* the thread counts in the shared slot (atomic adds) */
static TLS volatile int exiting; /* the thread's slot was released: the shared slot from now on */

static struct memharness_ledger_slot* const shared_slot = &memharness_ledger.slot[0];

static struct memharness_ledger_slot* claim_slot(void) {
  if (exiting) return shared_slot;
  for (uint32_t i = 1; i < MEMHARNESS_LEDGER_SLOTS; ++i) {
    struct memharness_ledger_slot* s = &memharness_ledger.slot[i];
    uint32_t free_ = 0;
    if (__atomic_load_n(&s->owned, __ATOMIC_RELAXED) ||
        !__atomic_compare_exchange_n(&s->owned, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      continue;
    uint32_t used = __atomic_load_n(&memharness_ledger.slots_used, __ATOMIC_RELAXED);
    while (used < i + 1 && !__atomic_compare_exchange_n(&memharness_ledger.slots_used, &used, i + 1, 1,
                                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    }
    ++depth; /* pthread_setspecific may allocate its second-level table */
    pthread_setspecific(exit_key, s);
    --depth;
    return s;
  }
  return shared_slot; /* more live threads than slots */
}

/* At thread exit: the slot's counts stay (they are part of the sum); the next
   thread to claim it adds to them. */
static void release_slot(void* slot) {
  exiting = 1;
  on_shared = 1;
  my_slot = NULL;
  struct memharness_ledger_slot* s = slot;
  if (s && s != shared_slot) __atomic_store_n(&s->owned, 0, __ATOMIC_RELEASE);
}

/* Only the forking thread lives on in the child: every other slot is free
   again, and the calls counted so far were the parent's. The live blocks stay
   counted: the child holds its copy of each, as its RSS does. */
static void after_fork_in_child(void) {
  for (uint32_t i = 0; i < MEMHARNESS_LEDGER_SLOTS; ++i) {
    struct memharness_ledger_slot* s = &memharness_ledger.slot[i];
    if (s != my_slot) s->owned = 0;
    s->allocs = 0;
    s->alloc_bytes = 0;
  }
  memharness_ledger.pid = (int32_t)getpid();
  after_fork(); /* the child keeps the sampled blocks: its copies of them */
}

static inline void bump(int64_t* field, int64_t by, int shared) {
  if (UNLIKELY(shared)) __atomic_fetch_add(field, by, __ATOMIC_RELAXED);
  else __atomic_store_n(field, __atomic_load_n(field, __ATOMIC_RELAXED) + by, __ATOMIC_RELAXED);
}

static inline void add_to(struct memharness_ledger_slot* s, int64_t bytes, int64_t blocks, int64_t allocated,
                          int shared) {
  bump(&s->live_bytes, bytes, shared);
  bump(&s->live_blocks, blocks, shared);
  if (allocated >= 0) {
    bump((int64_t*)&s->allocs, 1, shared);
    bump((int64_t*)&s->alloc_bytes, allocated, shared);
  }
}

/* A thread's first count, and every count of a thread on the shared slot. */
__attribute__((noinline)) static void count_slow(int64_t bytes, int64_t blocks, int64_t allocated) {
  if (!on_shared) {
    struct memharness_ledger_slot* s = claim_slot();
    if (s != shared_slot) {
      my_slot = s;
      add_to(s, bytes, blocks, allocated, 0);
      return;
    }
    on_shared = 1;
  }
  add_to(shared_slot, bytes, blocks, allocated, 1);
}

/* allocated: the usable bytes of an allocation, or -1 for a free or a resize in place. */
static inline void count(int64_t bytes, int64_t blocks, int64_t allocated) {
  struct memharness_ledger_slot* s = my_slot;
  if (UNLIKELY(!s)) return count_slow(bytes, blocks, allocated);
  add_to(s, bytes, blocks, allocated, 0);
}

/* ---- sampled call sites ---------------------------------------------------- */

/* Allocations are sampled by bytes: each thread counts down a gap drawn from an
   exponential distribution (mean: the interval), so a block of s usable bytes
   is sampled with probability 1 - exp(-s/interval) and stands for
   s / (1 - exp(-s/interval)) bytes, unbiased for small and large blocks alike.
   The unsampled path is one subtraction and one branch, no lock.

   The unwinder is libgcc's _Unwind_Backtrace: built with glibc 2.35 or later
   (Debian 12 and later), libgcc finds a frame's unwind tables through
   _dl_find_object, which takes no lock and is async-signal-safe, so a sample
   inside dlopen (the loader's lock held) or in a signal handler does not wait
   for the loader. libunwind's unw_backtrace finds them through dl_iterate_phdr
   for every address it has not cached (the loader's lock), and would be a
   second library preloaded into every program. Both read the DWARF CFI, so
   neither needs frame pointers. */
static TLS int64_t sample_left;    /* bytes until this thread's next sample */
static TLS uint64_t sample_rng;    /* 0 until the thread's first allocation */
static uint64_t sample_seed = 0x9e3779b97f4a7c15ull;
static uint32_t thread_serial;
static volatile int table_lock;    /* sampled allocations and frees of sampled blocks */
static uint32_t* stack_index;      /* hash -> stack id + 1 (open addressing) */
/* How many sampled blocks have their home slot in each group of 4 slots: a
   free looks at this (64 KiB, mostly in cache) before the block table (4 MiB,
   a cache miss per free). A count that reached its limit stays there. */
static uint16_t* home_counts;

#define STACK_INDEX (MEMHARNESS_LEDGER_STACKS * 2u)
#define HOME_COUNTS (MEMHARNESS_LEDGER_BLOCKS / 4u)

static uint64_t next_random(void) {
  uint64_t x = sample_rng; /* xorshift64*: state never 0 */
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  sample_rng = x;
  return x * 0x2545f4914f6cdd1dull;
}

static int64_t next_gap(void) {
  const double u = ((double)(next_random() >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
  const double gap = -log(u) * (double)memharness_ledger.sample_interval;
  return gap > 9e18 ? INT64_MAX : (int64_t)gap + 1;
}

static uint64_t parse_env(const char* name, uint64_t fallback) {
  const char* v = getenv(name);
  if (!v || !*v) return fallback;
  uint64_t n = 0;
  for (; *v >= '0' && *v <= '9'; ++v) n = n * 10 + (uint64_t)(*v - '0');
  return *v ? fallback : n;
}

/* At start-up (resolve): the interval, the seed, the tables. */
static void sampling_init(void) {
  memharness_ledger.sample_interval = parse_env("MEMHARNESS_LEDGER_SAMPLE", 524288);
  sample_seed = parse_env("MEMHARNESS_LEDGER_SEED", sample_seed);
  if (memharness_ledger.sample_interval == 0) return;
  const size_t blocks = MEMHARNESS_LEDGER_BLOCKS * sizeof(struct memharness_ledger_block);
  const size_t stacks = MEMHARNESS_LEDGER_STACKS * sizeof(struct memharness_ledger_stack);
  const size_t index = STACK_INDEX * sizeof(uint32_t);
  const size_t counts = HOME_COUNTS * sizeof(uint16_t);
  const size_t sites = MEMHARNESS_LEDGER_STACKS * sizeof(struct memharness_ledger_site);
  char* region =
      mmap(NULL, blocks + stacks + index + counts + 2 * sites, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) {
    memharness_ledger.sample_interval = 0;
    return;
  }
  stack_index = (uint32_t*)(region + blocks + stacks);
  home_counts = (uint16_t*)(region + blocks + stacks + index);
  memharness_ledger.stacks = (uint64_t)(uintptr_t)(region + blocks);
  memharness_ledger.sites = (uint64_t)(uintptr_t)(region + blocks + stacks + index + counts);
  memharness_ledger.peak_sites = memharness_ledger.sites + sites;
  __atomic_store_n(&memharness_ledger.blocks, (uint64_t)(uintptr_t)region, __ATOMIC_RELEASE);
}

static void lock_tables(void) {
  while (__atomic_exchange_n(&table_lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
}

static void unlock_tables(void) { __atomic_store_n(&table_lock, 0, __ATOMIC_RELEASE); }

static struct memharness_ledger_block* block_table(void) {
  return (struct memharness_ledger_block*)(uintptr_t)memharness_ledger.blocks;
}

/* A sequence number that is odd while the table it guards is written (the
   reader outside retries). Under the lock. */
static void begin_write(uint64_t* seq) {
  __atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void end_write(uint64_t* seq) { __atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE); }

static struct memharness_ledger_site* site_table(void) {
  return (struct memharness_ledger_site*)(uintptr_t)memharness_ledger.sites;
}

/* A block joins (+1) or leaves (-1) its stack's live sums. Under the lock. A
   stack left without blocks is exactly 0 again, whatever rounding gathered. */
static void add_to_site(uint32_t stack, double weight, uint64_t size, int sign) {
  struct memharness_ledger_site* s = &site_table()[stack];
  begin_write(&memharness_ledger.sites_seq);
  const int64_t n = s->samples + sign;
  s->samples = n;
  s->bytes = n ? s->bytes + sign * weight : 0;
  s->var = n ? s->var + sign * weight * (weight - (double)size) : 0;
  end_write(&memharness_ledger.sites_seq);
}

/* At a sampled allocation, under the lock: the live heap is the slots' sum
   (up to 256 loads, never on the unsampled path); more than 1% above the last
   snapshot's, the live sums are copied into the peak table. The snapshot may
   lag the true peak by 1% and by the unsampled allocations after the last sample. */
static void snapshot_if_peak(void) {
  const uint32_t used = __atomic_load_n(&memharness_ledger.slots_used, __ATOMIC_ACQUIRE);
  int64_t live = 0;
  for (uint32_t i = 0; i < used && i < MEMHARNESS_LEDGER_SLOTS; ++i)
    live += __atomic_load_n(&memharness_ledger.slot[i].live_bytes, __ATOMIC_RELAXED);
  const int64_t last = memharness_ledger.peak_live_bytes;
  if (memharness_ledger.snapshots != 0 && live <= last + last / 100) return;
  const uint32_t stacks = memharness_ledger.stacks_used;
  begin_write(&memharness_ledger.peak_seq);
  memcpy((void*)(uintptr_t)memharness_ledger.peak_sites, site_table(), stacks * sizeof(struct memharness_ledger_site));
  memharness_ledger.peak_stacks = stacks;
  memharness_ledger.peak_live_bytes = live;
  ++memharness_ledger.snapshots;
  end_write(&memharness_ledger.peak_seq);
}

/* Probes are bounded: a block that finds no slot within them is not kept. */
#define PROBES 64u

static inline uint32_t block_home(uint64_t addr) {
  return (uint32_t)((addr >> 4) * 0x9e3779b97f4a7c15ull >> 40) & (MEMHARNESS_LEDGER_BLOCKS - 1);
}

/* Under the lock. */
static void count_home(uint64_t addr, int by) {
  uint16_t* c = &home_counts[block_home(addr) / 4];
  if (*c != UINT16_MAX) __atomic_store_n(c, (uint16_t)(*c + by), __ATOMIC_RELAXED);
}

struct frames {
  uint64_t* at;
  uint32_t n, skip;
};

static _Unwind_Reason_Code one_frame(struct _Unwind_Context* ctx, void* arg) {
  struct frames* f = arg;
  const uint64_t ip = (uint64_t)_Unwind_GetIP(ctx);
  if (ip == 0) return _URC_END_OF_STACK;
  if (f->skip) {
    --f->skip; /* the ledger's own frames */
    return _URC_NO_REASON;
  }
  f->at[f->n++] = ip;
  return f->n == MEMHARNESS_LEDGER_FRAMES ? _URC_END_OF_STACK : _URC_NO_REASON;
}

/* The stack's id, appended when new; -1 when the table is full. Under the lock. */
static int64_t stack_id(const uint64_t* frame, uint32_t n) {
  uint64_t h = 0xcbf29ce484222325ull ^ n;
  for (uint32_t i = 0; i < n; ++i) h = (h ^ frame[i]) * 0x100000001b3ull;
  struct memharness_ledger_stack* stacks = (struct memharness_ledger_stack*)(uintptr_t)memharness_ledger.stacks;
  for (uint32_t probe = 0, i = (uint32_t)(h >> 32); probe < STACK_INDEX; ++probe, ++i) {
    uint32_t* slot = &stack_index[i & (STACK_INDEX - 1)];
    if (*slot == 0) {
      const uint32_t id = memharness_ledger.stacks_used;
      if (id == MEMHARNESS_LEDGER_STACKS) return -1;
      stacks[id].hash = h;
      stacks[id].depth = n;
      memcpy(stacks[id].frame, frame, n * sizeof *frame);
      *slot = id + 1;
      __atomic_store_n(&memharness_ledger.stacks_used, id + 1, __ATOMIC_RELEASE);
      return id;
    }
    const struct memharness_ledger_stack* s = &stacks[*slot - 1];
    if (s->hash == h && s->depth == n && memcmp(s->frame, frame, n * sizeof *frame) == 0) return *slot - 1;
  }
  return -1;
}

static void keep_block(uint64_t addr, int64_t stack, uint64_t size, double weight) {
  struct memharness_ledger_block* t = block_table();
  for (uint32_t probe = 0, i = block_home(addr); stack >= 0 && probe < PROBES; ++probe, ++i) {
    struct memharness_ledger_block* b = &t[i & (MEMHARNESS_LEDGER_BLOCKS - 1)];
    if (b->addr > MEMHARNESS_LEDGER_GONE) continue;
    b->stack = (uint32_t)stack;
    b->size = size;
    b->weight = weight;
    __atomic_store_n(&b->addr, addr, __ATOMIC_RELEASE);
    count_home(addr, 1);
    add_to_site((uint32_t)stack, weight, size, 1);
    __atomic_fetch_add(&memharness_ledger.blocks_live, 1, __ATOMIC_RELAXED);
    return;
  }
  __atomic_fetch_add(&memharness_ledger.dropped, 1, __ATOMIC_RELAXED);
}

/* The countdown passed 0 (or the thread's first allocation): p, of `usable`
   bytes, is sampled when the gap ended inside it. Called at depth 0. */
__attribute__((noinline)) static void sample_slow(void* p, int64_t usable) {
  if (memharness_ledger.sample_interval == 0) {
    sample_left = INT64_MAX;
    return;
  }
  if (sample_rng == 0) { /* the thread's first allocation: its own stream */
    const uint32_t serial = __atomic_add_fetch(&thread_serial, 1, __ATOMIC_RELAXED);
    uint64_t z = sample_seed + serial * 0x9e3779b97f4a7c15ull; /* splitmix64: every seed its own stream */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    sample_rng = (z ^ (z >> 31)) | 1;
    sample_left += next_gap();
    if (sample_left >= 0) return;
  }
  sample_left = next_gap();
  ++depth; /* the unwinder may allocate (its first call) */
  uint64_t frame[MEMHARNESS_LEDGER_FRAMES];
  struct frames f = {frame, 0, 2};
  _Unwind_Backtrace(one_frame, &f);
  const double s = (double)usable;
  const double weight = s / -expm1(-s / (double)memharness_ledger.sample_interval);
  lock_tables();
  keep_block((uint64_t)(uintptr_t)p, stack_id(frame, f.n), (uint64_t)usable, weight);
  snapshot_if_peak();
  unlock_tables();
  --depth;
}

/* A freed block leaves the sampled set. Looked up without the lock (slots never
   move: a freed one is marked gone), removed under it. */
__attribute__((noinline)) static void unsample(void* p) {
  const uint64_t addr = (uint64_t)(uintptr_t)p;
  struct memharness_ledger_block* t = block_table();
  for (uint32_t probe = 0, i = block_home(addr); probe < PROBES; ++probe, ++i) {
    struct memharness_ledger_block* b = &t[i & (MEMHARNESS_LEDGER_BLOCKS - 1)];
    const uint64_t a = __atomic_load_n(&b->addr, __ATOMIC_ACQUIRE);
    if (a == MEMHARNESS_LEDGER_EMPTY) return;
    if (a != addr) continue;
    ++depth;
    lock_tables();
    if (b->addr == addr) {
      __atomic_store_n(&b->addr, MEMHARNESS_LEDGER_GONE, __ATOMIC_RELEASE);
      count_home(addr, -1);
      add_to_site(b->stack, b->weight, b->size, -1);
      __atomic_fetch_sub(&memharness_ledger.blocks_live, 1, __ATOMIC_RELAXED);
    }
    unlock_tables();
    --depth;
    return;
  }
}

static inline void sample_alloc(void* p, int64_t usable) {
  if (UNLIKELY((sample_left -= usable) < 0)) sample_slow(p, usable);
}

static inline void sample_free(void* p) {
  if (UNLIKELY(__atomic_load_n(&memharness_ledger.blocks_live, __ATOMIC_RELAXED) != 0) &&
      __atomic_load_n(&home_counts[block_home((uint64_t)(uintptr_t)p) / 4], __ATOMIC_RELAXED) != 0)
    unsample(p);
}

/* fork: the child must not inherit a lock held by a thread that is not in it. */
static void before_fork(void) { lock_tables(); }
static void after_fork(void) { unlock_tables(); }

/* The usable size. tcmalloc's first answer calls operator new (its
   MallocExtension instance), which would ask again: resolve() asks once with
   counting off, so that no later answer allocates. */
static inline int64_t usable_of(void* p) { return (int64_t)next.usable(p); }

static inline void counted_alloc(void* p) {
  if (p && depth == 0) {
    const int64_t u = usable_of(p);
    count(u, 1, u);
    sample_alloc(p, u);
  }
}

static inline void counted_free(void* p) {
  if (depth == 0) {
    count(-usable_of(p), -1, -1);
    sample_free(p);
  }
}

/* Every free's start: false for nothing to free (null, a bootstrap block). */
static inline int freeing(void* p) {
  if (!p || UNLIKELY(is_boot(p))) return 0;
  bootstrapping();
  counted_free(p);
  return 1;
}

/* Before a block may move: a sampled one leaves the table while its address
   is still its own (another thread may be handed it as soon as it is freed). */
static inline void resize_begins(void* p) {
  if (p && depth == 0) sample_free(p);
}

/* A block that may have moved: the old usable size out, the new one in (an
   allocation of the new size). */
__attribute__((always_inline)) static inline void counted_resize(void* old, size_t old_usable, void* now,
                                                                  size_t n) {
  if (depth != 0) return;
  if (now) {
    const int64_t u = usable_of(now);
    count(u - (int64_t)old_usable, old ? 0 : 1, u);
    sample_alloc(now, u);
  } else if (old && n == 0) {
    count(-(int64_t)old_usable, -1, -1); /* realloc(p, 0) freed p */
  }
}

/* ---- the C entry points ---------------------------------------------------- */

API void* malloc(size_t n) {
  if (UNLIKELY(bootstrapping())) return boot_alloc(n);
  void* p = next.malloc(n);
  counted_alloc(p);
  return p;
}

API void free(void* p) {
  if (!freeing(p)) return;
  next.free(p);
}

API void* calloc(size_t n, size_t size) {
  if (UNLIKELY(bootstrapping())) {
    size_t total;
    return __builtin_mul_overflow(n, size, &total) ? NULL : boot_alloc(total); /* the arena is zero */
  }
  void* p = next.calloc(n, size);
  counted_alloc(p);
  return p;
}

static void* realloc_from_boot(void* p, size_t n) {
  void* q = malloc(n);
  if (q) memcpy(q, p, boot_size(p) < n ? boot_size(p) : n);
  return q;
}

API void* realloc(void* p, size_t n) {
  if (UNLIKELY(bootstrapping())) return boot_alloc(n);
  if (p && UNLIKELY(is_boot(p))) return realloc_from_boot(p, n);
  const size_t old = p && depth == 0 ? (size_t)usable_of(p) : 0;
  resize_begins(p);
  void* q = next.realloc(p, n);
  counted_resize(p, old, q, n);
  return q;
}

API void* reallocarray(void* p, size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  if (!next.reallocarray || UNLIKELY(bootstrapping()) || (p && is_boot(p))) return realloc(p, total);
  const size_t old = p && depth == 0 ? (size_t)usable_of(p) : 0;
  resize_begins(p);
  void* q = next.reallocarray(p, n, size);
  counted_resize(p, old, q, total);
  return q;
}

API void* memalign(size_t align, size_t n) {
  bootstrapping();
  void* p = next.memalign(align, n);
  counted_alloc(p);
  return p;
}

API int posix_memalign(void** out, size_t align, size_t n) {
  bootstrapping();
  const int rc = next.posix_memalign(out, align, n);
  if (rc == 0) counted_alloc(*out);
  return rc;
}

API void* aligned_alloc(size_t align, size_t n) {
  bootstrapping();
  void* p = next.aligned_alloc(align, n);
  counted_alloc(p);
  return p;
}

API void* valloc(size_t n) {
  bootstrapping();
  void* p = next.valloc(n);
  counted_alloc(p);
  return p;
}

API void* pvalloc(size_t n) {
  bootstrapping();
  void* p = next.pvalloc(n);
  counted_alloc(p);
  return p;
}

API size_t malloc_usable_size(void* p) {
  if (!p) return 0;
  if (UNLIKELY(is_boot(p))) return boot_size(p);
  bootstrapping();
  return next.usable(p);
}

API void free_sized(void* p, size_t n) {
  if (!freeing(p)) return;
  if (next.free_sized) next.free_sized(p, n);
  else next.free(p);
}

API void free_aligned_sized(void* p, size_t align, size_t n) {
  if (!freeing(p)) return;
  if (next.free_aligned_sized) next.free_aligned_sized(p, align, n);
  else next.free(p);
}

/* jemalloc's own API, for programs built against it; under an allocator without
   it these fail as an allocation failure would. */
API void* mallocx(size_t n, int flags) {
  bootstrapping();
  if (!next.mallocx) return NULL;
  void* p = next.mallocx(n, flags);
  counted_alloc(p);
  return p;
}

API void* rallocx(void* p, size_t n, int flags) {
  bootstrapping();
  if (!next.rallocx) return NULL;
  const size_t old = depth == 0 ? (size_t)usable_of(p) : 0;
  resize_begins(p);
  void* q = next.rallocx(p, n, flags);
  if (q) counted_resize(p, old, q, n);
  return q;
}

API size_t xallocx(void* p, size_t n, size_t extra, int flags) {
  bootstrapping();
  if (!next.xallocx) return next.usable(p);
  const size_t old = (size_t)usable_of(p);
  const size_t now = next.xallocx(p, n, extra, flags);
  if (depth == 0 && now != old) count((int64_t)now - (int64_t)old, 0, -1);
  return now;
}

API void sdallocx(void* p, size_t n, int flags) {
  if (!freeing(p)) return;
  if (next.sdallocx) next.sdallocx(p, n, flags);
  else next.free(p);
}

API void dallocx(void* p, int flags) {
  if (!freeing(p)) return;
  if (next.dallocx) next.dallocx(p, flags);
  else next.free(p);
}

/* ---- C++ operator new and delete ----------------------------------------- */

/* The next definition is the allocator's own or libstdc++'s (which calls
   malloc: the depth guard keeps that from counting twice). A throwing new
   unwinds through here (built with -fexceptions), the guard restored on the way. */
static void leave(int* unused) {
  (void)unused;
  --depth;
}
#define FORWARDED int guard_ __attribute__((cleanup(leave))) = (++depth, 0)

static void missing(const char* name) {
  static const char msg[] = "memharness ledger: no definition of ";
  (void)!write(2, msg, sizeof msg - 1);
  (void)!write(2, name, strlen(name));
  (void)!write(2, " behind the ledger\n", 19);
  _exit(127);
}

#define NEW(sym, params, args)                   \
  API void* _##sym params {                      \
    bootstrapping();                             \
    void* p;                                     \
    {                                            \
      if (!next.sym) missing(#sym);              \
      FORWARDED;                                 \
      p = next.sym args;                         \
    }                                            \
    counted_alloc(p); /* the guard is off again */ \
    return p;                                    \
  }

NEW(Znwm, (size_t n), (n))
NEW(Znam, (size_t n), (n))
NEW(ZnwmRKSt9nothrow_t, (size_t n, const void* nt), (n, nt))
NEW(ZnamRKSt9nothrow_t, (size_t n, const void* nt), (n, nt))
NEW(ZnwmSt11align_val_t, (size_t n, size_t al), (n, al))
NEW(ZnamSt11align_val_t, (size_t n, size_t al), (n, al))
NEW(ZnwmSt11align_val_tRKSt9nothrow_t, (size_t n, size_t al, const void* nt), (n, al, nt))
NEW(ZnamSt11align_val_tRKSt9nothrow_t, (size_t n, size_t al, const void* nt), (n, al, nt))

/* A sized or aligned delete without its own next definition falls back on the
   plainer one, as the C++ library's own would. */
#define DELETE(sym, params, args, fallback)            \
  API void _##sym params {                             \
    if (!freeing(p)) return;                           \
    FORWARDED;                                         \
    if (next.sym) next.sym args;                       \
    else fallback;                                     \
  }

DELETE(ZdlPv, (void* p), (p), next.free(p))
DELETE(ZdaPv, (void* p), (p), next.free(p))
DELETE(ZdlPvm, (void* p, size_t n), (p, n), next.ZdlPv ? next.ZdlPv(p) : next.free(p))
DELETE(ZdaPvm, (void* p, size_t n), (p, n), next.ZdaPv ? next.ZdaPv(p) : next.free(p))
DELETE(ZdlPvRKSt9nothrow_t, (void* p, const void* nt), (p, nt), next.ZdlPv ? next.ZdlPv(p) : next.free(p))
DELETE(ZdaPvRKSt9nothrow_t, (void* p, const void* nt), (p, nt), next.ZdaPv ? next.ZdaPv(p) : next.free(p))
DELETE(ZdlPvSt11align_val_t, (void* p, size_t al), (p, al), next.free(p))
DELETE(ZdaPvSt11align_val_t, (void* p, size_t al), (p, al), next.free(p))
DELETE(ZdlPvmSt11align_val_t, (void* p, size_t n, size_t al), (p, n, al),
       next.ZdlPvSt11align_val_t ? next.ZdlPvSt11align_val_t(p, al) : next.free(p))
DELETE(ZdaPvmSt11align_val_t, (void* p, size_t n, size_t al), (p, n, al),
       next.ZdaPvSt11align_val_t ? next.ZdaPvSt11align_val_t(p, al) : next.free(p))
DELETE(ZdlPvSt11align_val_tRKSt9nothrow_t, (void* p, size_t al, const void* nt), (p, al, nt),
       next.ZdlPvSt11align_val_t ? next.ZdlPvSt11align_val_t(p, al) : next.free(p))
DELETE(ZdaPvSt11align_val_tRKSt9nothrow_t, (void* p, size_t al, const void* nt), (p, al, nt),
       next.ZdaPvSt11align_val_t ? next.ZdaPvSt11align_val_t(p, al) : next.free(p))
