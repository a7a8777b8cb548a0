// The live heap's call sites as readers see them (see heap_sites.h).
#include "core/heap_sites.h"

#include <fmt/format.h>

#include <cmath>

#include "core/paths.h"

namespace mh {

namespace {

// What the sites hold in all, in KiB: the mark's heap_live_kb where it was read.
double live_kb(const Mark& m) {
  if (!cell_missing(m.sample, "heap_live_kb")) return double(m.sample.heap_live_kb);
  double bytes = m.heap_sites->rest.bytes;
  for (const auto& s : m.heap_sites->top) bytes += s.bytes;
  return bytes / 1024;
}

// `text` without what nests inside <...> and (...): "f<int>(a, b)" -> "f<…>(…)";
// "(anonymous namespace)" is kept as it is.
std::string elide_nested(const std::string& text) {
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (depth == 0 && std::string_view(text).substr(i).starts_with(kAnonymous)) {
      out += kAnonymous;
      i += kAnonymous.size() - 1;
      continue;
    }
    const char c = text[i];
    const bool opens = c == '<' || c == '(', closes = c == '>' || c == ')';
    if (closes && depth > 0 && --depth == 0) out += "…";
    if (depth == 0) out += c;
    if (opens) ++depth;
  }
  return out;
}

bool starts_with_any(const std::string& s, std::initializer_list<const char*> prefixes) {
  for (const char* p : prefixes)
    if (s.rfind(p, 0) == 0) return true;
  return false;
}

}  // namespace

const HeapSites* peak_sites(const RunRecord& r, std::string* where) {
  if (r.heap_sites_peak) {
    if (where) *where = "peak";
    return &*r.heap_sites_peak;
  }
  const Mark* best = nullptr;
  for (const auto& m : r.marks)
    if (m.heap_sites && (!best || live_kb(m) > live_kb(*best))) best = &m;
  if (best && where) *where = best->name;
  return best ? &*best->heap_sites : nullptr;
}

const HeapSites* sites_at(const RunRecord& r, const std::string& mark) {
  if (mark.empty()) return peak_sites(r);
  for (const auto& m : r.marks)
    if (m.name == mark && m.heap_sites) return &*m.heap_sites;
  return nullptr;
}

std::string frame_name(const HeapFrame& f) {
  // A compiler's clone of a function (" [clone .constprop.0]") is that function: builds differ in them.
  if (!f.function.empty()) return f.function.substr(0, f.function.find(" [clone "));
  return fmt::format("{}+{:#x}", base_name(f.object), f.offset);
}

std::string frame_label(const HeapFrame& f) {
  std::string name = f.function.empty() ? frame_name(f) : elide_nested(frame_name(f));
  if (!f.file.empty() && f.line > 0) name += fmt::format(" ({}:{})", base_name(f.file), f.line);
  // A stripped object's name is its nearest export before the address: somewhere after it.
  if (f.source == "dynsym") name += kDynsymMark;
  return name;
}

std::string stripped_names_note() {
  return fmt::format("{} a stripped object's exported name (its dynamic symbol table): the frame is in code after "
                     "that function's start, not necessarily in it; OBJECT+0xOFFSET: no name at all. Names come "
                     "from the object's debug symbols: on Debian its -dbgsym package (`dpkg -S OBJECT` names the "
                     "package; `apt-get install PACKAGE-dbgsym` from the debug archive), found by the object's build "
                     "ID (`readelf -n OBJECT`), or with DEBUGINFOD_URLS set\n",
                     kDynsymMark);
}

bool allocator_frame(const HeapFrame& f, const std::string& allocator_library) {
  const std::string object = base_name(f.object);
  if (object.rfind("libmemharness-ledger.so", 0) == 0) return true;
  if (!allocator_library.empty() && object == base_name(allocator_library)) return true;
  if (object.rfind("libc.so", 0) == 0)
    return starts_with_any(f.function, {"malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc",
                                        "memalign", "valloc", "pvalloc", "__libc_m", "__libc_c", "__libc_r"});
  if (object.rfind("libstdc++.so", 0) == 0) return starts_with_any(f.function, {"operator new"});
  return false;
}

std::vector<const HeapFrame*> program_frames(const HeapSite& s, const std::string& allocator_library) {
  std::vector<const HeapFrame*> out;
  for (const auto& f : s.frames)
    if (!out.empty() || !allocator_frame(f, allocator_library)) out.push_back(&f);
  return out;
}

std::string site_label(const HeapSite& s, const std::string& allocator_library, size_t callers) {
  const auto frames = program_frames(s, allocator_library);
  std::string out;
  for (size_t i = 0; i < frames.size() && i <= callers; ++i) {
    if (i) out += " <- ";
    out += frame_label(*frames[i]);
  }
  return out.empty() ? "[no frames outside the allocator]" : out;
}

std::string site_key(const HeapSite& s, const std::string& allocator_library) {
  std::string key;
  for (const HeapFrame* f : program_frames(s, allocator_library)) {
    if (!key.empty()) key += ';';
    key += frame_name(*f);
  }
  return key;
}

std::string folded_stack(const HeapSite& s) {
  std::string stack;
  for (auto f = s.frames.rbegin(); f != s.frames.rend(); ++f) {
    std::string name = frame_name(*f);
    for (auto& c : name)
      if (c == ';') c = ',';
    if (!stack.empty()) stack += ';';
    stack += name;
  }
  return stack.empty() ? "[no frames]" : stack;
}

std::string folded_stacks(const HeapSites& h) {
  std::string out;
  auto line = [&](const std::string& stack, double bytes) {
    if (std::llround(bytes) > 0) out += fmt::format("{} {}\n", stack, std::llround(bytes));
  };
  for (const auto& s : h.top) line(folded_stack(s), s.bytes);
  line("[other call sites]", h.rest.bytes);
  return out;
}

}  // namespace mh
