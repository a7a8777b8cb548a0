// Own-process memory readers (see proc_self.h). Every reading goes through a
// stack buffer and raw read(): no stdio, no std::string, no heap.
#include "mhwl/proc_self.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace mhwl {

namespace {

// Reads a whole small /proc file into buf (NUL-terminated); returns its length or -1.
ssize_t slurp(const char* path, char* buf, size_t cap) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t off = 0;
  while (off + 1 < cap) {
    ssize_t n = ::read(fd, buf + off, cap - 1 - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  ::close(fd);
  buf[off] = '\0';
  return static_cast<ssize_t>(off);
}

// The number after "key" at the start of a line of buf, or -1.
long field_kb(const char* buf, const char* key) {
  const size_t klen = std::strlen(key);
  for (const char* line = buf; line && *line;) {
    if (std::strncmp(line, key, klen) == 0) return std::strtol(line + klen, nullptr, 10);
    line = std::strchr(line, '\n');
    if (line) ++line;
  }
  return -1;
}

long statm_rss_pages(const char* buf) {
  // "size resident shared ...": the second number.
  char* end = nullptr;
  std::strtol(buf, &end, 10);
  if (end == buf) return -1;
  const char* second = end;
  long pages = std::strtol(second, &end, 10);
  return end == second ? -1 : pages;
}

long page_kb() { return sysconf(_SC_PAGESIZE) / 1024; }

}  // namespace

MemStatus read_mem_status() {
  char buf[4096];
  MemStatus s;
  if (slurp("/proc/self/status", buf, sizeof buf) <= 0) return s;
  s.rss_kb = field_kb(buf, "VmRSS:");
  s.anon_kb = field_kb(buf, "RssAnon:");
  s.file_kb = field_kb(buf, "RssFile:");
  s.shmem_kb = field_kb(buf, "RssShmem:");
  return s;
}

long read_rss_kb() {
  char buf[256];
  if (slurp("/proc/self/statm", buf, sizeof buf) <= 0) return -1;
  long pages = statm_rss_pages(buf);
  return pages < 0 ? -1 : pages * page_kb();
}

long read_anon_huge_kb() {
  char buf[2048];
  if (slurp("/proc/self/smaps_rollup", buf, sizeof buf) <= 0) return -1;
  return field_kb(buf, "AnonHugePages:");
}

long minor_faults() {
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
  return ru.ru_minflt;
}

StatmReader::StatmReader() : fd_(::open("/proc/self/statm", O_RDONLY | O_CLOEXEC)), page_kb_(page_kb()) {}

StatmReader::~StatmReader() {
  if (fd_ >= 0) ::close(fd_);
}

long StatmReader::rss_kb() const {
  if (fd_ < 0) return -1;
  char buf[256];
  ssize_t n;
  // A read at offset 0 regenerates the file's content.
  do n = ::pread(fd_, buf, sizeof buf - 1, 0);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return -1;
  buf[n] = '\0';
  long pages = statm_rss_pages(buf);
  return pages < 0 ? -1 : pages * page_kb_;
}

}  // namespace mhwl
