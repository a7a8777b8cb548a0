// The symboliser on files of this build: a function of this file (compiled
// with -g) by name, file and line; a program by its .symtab and a stripped
// copy of it; a stripped library by its .dynsym; a file that is not there.
#include "sys/symbolize.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mh_test {

__attribute__((noinline)) const void* caller_address() {
  const void* r = __builtin_return_address(0);
  asm volatile("" ::: "memory");
  return r;
}

// The return address of a call on kCallLine (the barrier after it keeps it from being a tail call).
constexpr int kCallLine = __LINE__ + 2;
__attribute__((noinline)) const void* symbolize_probe() {
  const void* r = caller_address();
  asm volatile("" ::: "memory");
  return r;
}

}  // namespace mh_test

namespace mh {
namespace {

namespace fs = std::filesystem;

// The frame of an address of this process: its file and the offset from the file's start.
HeapFrame frame_of_address(const void* p) {
  const auto addr = reinterpret_cast<uint64_t>(p);
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    unsigned long long start = 0, end = 0, offset = 0;
    char path[4096] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %*s %llx %*s %*s %4095s", &start, &end, &offset, path) == 4 &&
        addr >= start && addr < end)
      return HeapFrame{path, addr - start + offset};
  }
  return HeapFrame{"[anonymous]", addr};
}

// The value nm gives a defined symbol of a file (-D: of its dynamic symbols).
uint64_t nm_value(const std::string& file, const std::string& symbol, bool dynamic) {
  const std::string command = std::string("nm ") + (dynamic ? "-D " : "") + "--defined-only '" + file + "'";
  FILE* p = popen(command.c_str(), "r");
  uint64_t value = 0;
  char line[1024];
  while (p && std::fgets(line, sizeof line, p)) {
    std::istringstream in(line);
    std::string addr, type, name;
    if (in >> addr >> type >> name && name == symbol) value = std::strtoull(addr.c_str(), nullptr, 16);
  }
  if (p) pclose(p);
  return value;
}

// A stripped copy of `file` in a fresh folder.
std::string stripped_copy(const std::string& file) {
  const fs::path dir = fs::temp_directory_path() / ("symbolize-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path copy = dir / fs::path(file).filename();
  fs::copy_file(file, copy, fs::copy_options::overwrite_existing);
  EXPECT_EQ(std::system(("strip --strip-all '" + copy.string() + "'").c_str()), 0);
  return copy.string();
}

TEST(Symbolize, AReturnAddressWithDwarfByFunctionFileAndTheCallsLine) {
  HeapFrame f = frame_of_address(mh_test::symbolize_probe());
  ASSERT_EQ(f.object.front(), '/') << f.object;
  symbolize_frame(f);
  EXPECT_EQ(f.function, "mh_test::symbolize_probe()");
  EXPECT_EQ(fs::path(f.file).filename(), "symbolize_test.cpp");
  EXPECT_EQ(f.line, mh_test::kCallLine);
  EXPECT_EQ(f.source, "dwarf");
  EXPECT_TRUE(heap_object(f.object).build_id) << heap_object(f.object).reason;
}

TEST(Symbolize, AProgramBySymtabAndAStrippedCopyByNothingButItsOffset) {
  const uint64_t main_at = nm_value(HEAP_HOLDER, "main", false);
  ASSERT_NE(main_at, 0u);
  HeapFrame f{HEAP_HOLDER, main_at + 1};
  symbolize_frame(f);
  EXPECT_EQ(f.function, "main");
  EXPECT_TRUE(f.source == "symtab" || f.source == "dwarf") << f.source;
  HeapFrame s{stripped_copy(HEAP_HOLDER), main_at + 1};
  symbolize_frame(s);
  EXPECT_EQ(s.source, "none");
  EXPECT_EQ(s.function, "");
  EXPECT_NE(s.reason, "");
  // The build ID survives strip: the frame can be named later from the unstripped file.
  EXPECT_EQ(heap_object(s.object).build_id, heap_object(HEAP_HOLDER).build_id);
}

TEST(Symbolize, AStrippedLibraryByItsDynamicSymbols) {
  const uint64_t malloc_at = nm_value(LEDGER_LIBRARY, "malloc", true);
  ASSERT_NE(malloc_at, 0u);
  HeapFrame f{stripped_copy(LEDGER_LIBRARY), malloc_at + 1};
  symbolize_frame(f);
  EXPECT_EQ(f.function, "malloc");
  EXPECT_EQ(f.source, "dynsym");
}

TEST(Symbolize, AMissingFileKeepsObjectAndOffsetWithTheReason) {
  HeapFrame f{"/nonexistent/libgone.so", 0x1234};
  symbolize_frame(f);
  EXPECT_EQ(f.source, "none");
  EXPECT_EQ(f.function, "");
  EXPECT_NE(f.reason.find("cannot open it"), std::string::npos) << f.reason;
  EXPECT_FALSE(heap_object(f.object).build_id);
  HeapFrame jit{"[anonymous]", 0x7f0012345678};
  symbolize_frame(jit);
  EXPECT_EQ(jit.source, "none");
  EXPECT_NE(jit.reason, "");
}

}  // namespace
}  // namespace mh
