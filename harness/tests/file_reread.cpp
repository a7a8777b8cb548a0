// A program whose memory is part anonymous, part page cache: it holds
// ANON_MB of touched heap, writes a file of FILE_MB in DIR (not tmpfs: there
// the file would be shared memory, which no limit can reclaim without swap),
// reads it back PASSES times and removes it. Under a limit between its
// anonymous need and that plus the file, the kernel reclaims the file's
// cache to make room, and the run stalls on memory (PSI).
// Usage: file_reread DIR ANON_MB FILE_MB PASSES
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: file_reread DIR ANON_MB FILE_MB PASSES\n");
    return 2;
  }
  const size_t anon_mb = std::strtoul(argv[2], nullptr, 10), file_mb = std::strtoul(argv[3], nullptr, 10);
  const int passes = std::atoi(argv[4]);
  std::vector<char> held(anon_mb << 20);
  for (size_t i = 0; i < held.size(); i += 4096) held[i] = char(i >> 12);
  const std::string path = std::string(argv[1]) + "/file_reread." + std::to_string(getpid());
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::perror(path.c_str());
    return 3;
  }
  std::vector<char> chunk(1 << 20, 'x');
  for (size_t i = 0; i < file_mb; ++i)
    if (write(fd, chunk.data(), chunk.size()) != ssize_t(chunk.size())) return 4;
  unsigned long sum = 0;
  for (int p = 0; p < passes; ++p)
    for (off_t at = 0; pread(fd, chunk.data(), chunk.size(), at) > 0; at += off_t(chunk.size())) sum += chunk[7];
  close(fd);
  unlink(path.c_str());
  std::printf("%lu %d\n", sum, held[4096]);
  return 0;
}
