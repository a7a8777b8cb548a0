// stats.cpp - the counters and their JSON form. Counters are shared by all threads and
// only touched with relaxed atomics; stats_json() formats without allocating (no stdio).
#include "stats.h"

#include "options.h"
#include "os.h"
#include "scavenger.h"

namespace scav {

Stats g_stats;

namespace {

class Writer {
 public:
  Writer(char* buf, size_t len) : buf_(buf), len_(len) {}
  void raw(const char* s) {
    while (*s) put(*s++);
  }
  void put(char c) {
    if (n_ + 1 < len_) buf_[n_] = c;
    n_++;
  }
  void num(int64_t v) {
    if (v < 0) {
      put('-');
      v = -v;
    }
    char d[24];
    int k = 0;
    uint64_t u = uint64_t(v);
    do { d[k++] = char('0' + u % 10); u /= 10; } while (u);
    while (k) put(d[--k]);
  }
  void field(const char* key, int64_t v) { field("", key, v); }
  void field(const char* prefix, const char* key, int64_t v) {
    put(first_ ? '{' : ',');
    first_ = false;
    put('"');
    raw(prefix);
    raw(key);
    raw("\":");
    num(v);
  }
  size_t finish() {
    if (first_) put('{');
    put('}');
    if (len_) buf_[n_ < len_ ? n_ : len_ - 1] = 0;
    return n_;
  }

 private:
  char* buf_;
  size_t len_;
  size_t n_ = 0;
  bool first_ = true;
};

template <class T>
int64_t ld(const std::atomic<T>& a) {
  return int64_t(a.load(std::memory_order_relaxed));
}

size_t bytes(const std::atomic<int64_t>& a) {
  int64_t v = ld(a);
  return v > 0 ? size_t(v) : 0;
}

}  // namespace

StatsView stats_view() {
  const Stats& s = g_stats;
  return {bytes(s.arena_committed), bytes(s.page_bytes), bytes(s.huge_blocks), bytes(s.huge_bytes),
          bytes(s.huge_cached),     bytes(s.purge_pending), size_t(ld(s.purged))};
}

size_t stats_json(char* buf, size_t len) {
  const Stats& s = g_stats;
  Writer w(buf, len);
  int64_t committed = ld(s.arena_committed) + ld(s.arena_meta) + ld(s.huge_bytes) +
                      ld(s.huge_cached);
  // With MADV_FREE the kernel may still hold purged ranges; we cannot see that, so the
  // estimate is the committed figure either way.
  w.field("allocated", ld(s.page_bytes) + ld(s.huge_bytes));
  w.field("committed", committed);
  w.field("resident_estimate", committed);
  w.field("purged", ld(s.purged));
  w.field("purge_passes", ld(s.purge_passes));
  w.field("purge_pending", ld(s.purge_pending));
  w.field("purge_calls", ld(s.purge_calls));
  w.field("scavenger_wakes", ld(s.scavenger_wakes));
  w.field("scavenger_turns", ld(s.scavenger_turns));
  w.field("scavenger_started", ld(s.scavenger_started));
  w.field("pages_freed", ld(s.pages_freed));
  w.field("pages_allocated", ld(s.pages_alloc));
  w.field("page_bytes", ld(s.page_bytes));
  w.field("huge_bytes", ld(s.huge_bytes));
  w.field("huge_blocks", ld(s.huge_blocks));
  w.field("huge_cached", ld(s.huge_cached));
  w.field("arena_committed", ld(s.arena_committed));
  w.field("arena_meta", ld(s.arena_meta));
  w.field("arenas", ld(s.arenas));
  w.field("heaps", ld(s.heaps));
  w.field("idle_handoffs", ld(s.idle_handoffs));
  w.field("cache_steals", ld(s.cache_steals));
  w.field("os_mmaps", ld(s.os_mmaps));
  w.field("os_munmaps", ld(s.os_munmaps));
  w.field("purge_delay_ms", option(Opt::kPurgeDelayMs));
  w.field("thp", option(Opt::kThp));
  // The hold of each kind of memory (scavenger.h): small pages under the first names
  // these figures had, then large pages and the huge cache.
  const uint64_t now = os::now_ms();
  w.field("purge_refaults", ld(s.purge_refaults));
  w.field("purge_refault_bytes", ld(s.purge_refault_bytes));
  struct KindNames {
    HoldKind kind;
    const char* hold_ms;
    const char* prefix;
  };
  for (const KindNames& k : {KindNames{HoldKind::kSmall, "purge_hold_ms", "hold_"},
                             KindNames{HoldKind::kLarge, "large_hold_ms", "large_"},
                             KindNames{HoldKind::kHuge, "huge_hold_ms", "huge_"}}) {
    w.field(k.hold_ms, int64_t(purge_hold_ms(k.kind)));
    w.field(k.prefix, "kept_bytes", ld(s.hold_kept[unsigned(k.kind)]));
    if (k.kind != HoldKind::kHuge) w.field(k.prefix, "cached_bytes", ld(s.hold_cached[unsigned(k.kind)]));
    w.field(k.prefix, "budget_bytes", int64_t(hold_budget_bytes(k.kind, now)));
    w.field(k.prefix, "refault_bytes", int64_t(hold_refault_bytes(k.kind, now)));
    w.field(k.prefix, "shrinks", ld(s.hold_shrinks[unsigned(k.kind)]));
  }
  w.field("interiors_purged", ld(s.interiors_purged));
  w.field("remote_batched", ld(s.remote_batched));
  w.field("thp_collapse_ms", option(Opt::kThpCollapseMs));
  w.field("thp_collapses", ld(s.thp_collapses));
  w.field("thp_collapse_added", ld(s.thp_collapse_added));
  w.field("thp_collapse_skips", ld(s.thp_collapse_skips));
  w.field("thp_collapse_failures", ld(s.thp_collapse_failures));
  w.field("thp_collapsed_bytes", ld(s.thp_collapsed_bytes));
  return w.finish();
}

}  // namespace scav
