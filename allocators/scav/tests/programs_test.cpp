// programs_test.cpp - real programs under LD_PRELOAD=libscav.so must print what they
// print without it. Each run sets SCAV_VERBOSE=1 and checks that scav's option table
// appeared on stderr, so a test cannot pass with glibc's malloc by accident. This
// binary itself does not link scav.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef SCAV_LIB_PATH
#error "SCAV_LIB_PATH must name libscav.so"
#endif

namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/scav-prog-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path_ + "'";
    if (system(cmd.c_str())) {}
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs `script` with /bin/sh; with preload, the script's environment has LD_PRELOAD
// and SCAV_VERBOSE=1 (the shell itself is preloaded too, as is every child).
Result run(const std::string& script, bool preload, const std::string& dir) {
  std::string out = dir + "/stdout", err = dir + "/stderr";
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    if (chdir(dir.c_str())) _exit(126);
    if (preload) {
      setenv("LD_PRELOAD", SCAV_LIB_PATH, 1);
      setenv("SCAV_VERBOSE", "1", 1);
    } else {
      unsetenv("LD_PRELOAD");
    }
    setenv("LC_ALL", "C", 1);
    execl("/bin/sh", "sh", "-c", script.c_str(), (char*)nullptr);
    _exit(127);
  }
  Result r;
  int st = 0;
  waitpid(pid, &st, 0);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

bool served_by_scav(const Result& r) { return r.err.find("scav: version") != std::string::npos; }

void same_output(const std::string& script, int min_out = 1) {
  TempDir a, b;
  Result plain = run(script, false, a.path());
  Result scav = run(script, true, b.path());
  ASSERT_EQ(plain.status, 0) << plain.err;
  ASSERT_EQ(scav.status, 0) << scav.err;
  EXPECT_TRUE(served_by_scav(scav)) << scav.err;
  EXPECT_FALSE(served_by_scav(plain));
  EXPECT_GE(int(plain.out.size()), min_out);
  EXPECT_EQ(plain.out, scav.out);
}

TEST(Programs, Python) {
  same_output(
      "/usr/bin/python3 -c '"
      "import hashlib\n"
      "d = {}\n"
      "for i in range(400000):\n"
      "    d[\"k%d\" % i] = [str(i * 7)] * (i % 5)\n"
      "l = sorted(d.items(), key=lambda kv: kv[0][::-1])\n"
      "s = \"\".join(k + \"\".join(v) for k, v in l[::97])\n"
      "del d, l\n"
      "b = [bytearray(1000 + i % 300000) for i in range(300)]\n"
      "print(len(s), hashlib.sha256(s.encode()).hexdigest(), sum(map(len, b)))\n"
      "'",
      20);
}

TEST(Programs, Git) {
  same_output(
      "set -e\n"
      "export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=A "
      "GIT_COMMITTER_EMAIL=a@x HOME=$PWD GIT_CONFIG_NOSYSTEM=1\n"
      "export GIT_AUTHOR_DATE='2024-01-01T00:00:00Z' GIT_COMMITTER_DATE='2024-01-01T00:00:00Z'\n"
      "git -c init.defaultBranch=main init -q repo && cd repo\n"
      "for i in 1 2 3 4 5 6 7 8 9 10; do seq 1 $((i*300)) > f$i.txt; done\n"
      "git add . && git commit -q -m first\n"
      "for i in 1 2 3; do seq 5 $((i*500)) >> f$i.txt; done\n"
      "git commit -q -am second\n"
      "git log --stat\n"
      "git gc -q\n"
      "git fsck\n",
      100);
}

TEST(Programs, GxxCompilesAndRuns) {
  const char* src =
      "#include <map>\n#include <string>\n#include <vector>\n#include <iostream>\n"
      "int main() { std::map<std::string, std::vector<int>> m;\n"
      "  for (int i = 0; i < 100000; i++) m[std::to_string(i % 5000)].push_back(i);\n"
      "  long s = 0; for (auto& [k, v] : m) s += long(k.size()) * long(v.size());\n"
      "  std::cout << m.size() << ' ' << s << std::endl; }\n";
  TempDir d;
  std::ofstream(d.path() + "/t.cpp") << src;
  Result r = run("g++ -O1 -o t t.cpp && ./t", true, d.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(served_by_scav(r));
  EXPECT_EQ(r.out, "5000 377800\n");
  // The compiled program under glibc prints the same.
  Result p = run("./t", false, d.path());
  EXPECT_EQ(p.out, r.out);
}

TEST(Programs, Sort100MB) {
  // Deterministic input: 100 MB of pseudo-random lines. LC_ALL=C sort output is
  // unique (bytewise order), so "sorted and the same multiset of lines" is the same as
  // "equal to glibc's output", without paying for a second 100 MB sort.
  TempDir d;
  std::string in = d.path() + "/in.txt";
  uint64_t x = 88172645463325252ull, multiset = 0;
  size_t lines = 0;
  {
    FILE* f = fopen(in.c_str(), "w");
    ASSERT_NE(f, nullptr);
    size_t written = 0;
    char line[128];
    while (written < 100u * 1000 * 1000) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      int n = snprintf(line, sizeof line, "%016llx %llu %s\n", (unsigned long long)x,
                       (unsigned long long)(x % 100000), (x & 1) ? "alpha" : "omega-omega");
      fwrite(line, 1, size_t(n), f);
      written += size_t(n);
      lines++;
    }
    fclose(f);
  }
  auto line_hash = [](const std::string& s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
  };
  {
    std::ifstream f(in);
    std::string s;
    while (std::getline(f, s)) multiset += line_hash(s);
  }
  Result r = run("sort -o out.txt in.txt", true, d.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(served_by_scav(r));
  std::ifstream f(d.path() + "/out.txt");
  std::string prev, s;
  uint64_t got = 0;
  size_t n = 0;
  bool ordered = true;
  while (std::getline(f, s)) {
    if (n && s < prev) ordered = false;
    got += line_hash(s);
    prev.swap(s);
    n++;
  }
  EXPECT_TRUE(ordered);
  EXPECT_EQ(n, lines);
  EXPECT_EQ(got, multiset);
}

TEST(Programs, CmakeVersion) { same_output("cmake --version", 10); }

TEST(Programs, BadOptionWarnsAndKeepsDefault) {
  TempDir d;
  Result r = run("SCAV_PURGE_DELAY_MS=soon SCAV_ARENA_RESERVE=2G ls / > /dev/null", true, d.path());
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("bad value 'soon' for option purge_delay_ms"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("purge_delay_ms = 100 "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("arena_reserve = 2G "), std::string::npos) << r.err;
}

// Under RLIMIT_AS of 1 GiB programs still run (each arena used to
// reserve 1 GiB + 64 MiB, so `ls` died with "memory exhausted").
TEST(Programs, RunUnderAOneGibAddressSpaceLimit) {
  TempDir d;
  Result r = run("ulimit -v 1048576 && ls / > /dev/null && "
                 "/usr/bin/python3 -c 'print(sum(len(str(i)) for i in range(100000)))'",
                 true, d.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(served_by_scav(r));
  EXPECT_EQ(r.out, "488890\n");
}

// What a thread costs in resident memory (its stack and the C
// library's share included), against glibc's malloc in the same program. One small
// block: at most twice glibc's (plus a page of measurement noise). One block in each
// of 18 classes: each class has pages of its own, so one OS page per class is the
// floor; beyond it, at most twice glibc's. (Before: 30.6 and 304.9 KiB per thread,
// glibc 8.9 and 14.9.)
struct ThreadCost {
  double total = -1, bare = -1;
};

ThreadCost thread_cost(const char* pattern, bool preload) {
  TempDir d;
  Result r = run(std::string(SCAV_THREAD_RSS_PATH) + " " + pattern, preload, d.path());
  EXPECT_EQ(r.status, 0) << r.err;
  ThreadCost c;
  std::istringstream in(r.out);
  std::string name, bare;
  in >> name >> c.total >> bare >> c.bare;
  EXPECT_EQ(name, pattern) << r.out;
  return c;
}

TEST(Programs, ThreadCostNearGlibcs) {
  struct Case {
    const char* pattern;
    double floor_kib;
  };
  for (Case k : {Case{"one", 0}, Case{"classes18", 18 * 4}}) {
    ThreadCost glibc = thread_cost(k.pattern, false), scav = thread_cost(k.pattern, true);
    std::printf("%s: glibc %.1f KiB, scav %.1f KiB per thread (a bare thread: %.1f, %.1f)\n",
                k.pattern, glibc.total, scav.total, glibc.bare, scav.bare);
    EXPECT_GT(glibc.total, 0.0) << k.pattern;
    EXPECT_LE(scav.total, k.floor_kib + 2 * glibc.total + 4) << k.pattern;
  }
}

}  // namespace
