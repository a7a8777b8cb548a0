// /proc parsers on fixture files taken from a real process.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "measure/proc_tree.h"
#include "sys/procfs.h"
#include "test_util.h"

namespace mh::procfs {
namespace {

std::string fixture(const std::string& name) { return test::slurp(std::string(FIXTURE_DIR) + "/" + name); }

TEST(Procfs, NotMallocCountsStacksAndNamedMappings) {
  // [stack], an unnamed mapping holding a thread's stack pointer, a named one;
  // the heap, an unnamed one without a stack pointer (malloc's) and a file's are not counted.
  const std::string smaps =
      "55d0a0000000-55d0a0100000 rw-p 00000000 00:00 0                          [heap]\n"
      "Rss:                 900 kB\nAnonymous:           900 kB\n"
      "7f0000000000-7f0000800000 rw-p 00000000 00:00 0 \n"
      "Rss:                 120 kB\nAnonymous:           120 kB\nVmFlags: rd wr mr mw me ac\n"
      "7f0001000000-7f0002000000 rw-p 00000000 00:00 0 \n"
      "Anonymous:          4000 kB\n"
      "7f0003000000-7f0003100000 rw-p 00000000 00:00 0                          [anon:jit cache]\n"
      "Anonymous:            64 kB\n"
      "7f0004000000-7f0004100000 r--p 00000000 08:01 1234                       /usr/lib/libc.so.6\n"
      "Anonymous:             8 kB\n"
      "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n"
      "Anonymous:            36 kB\n";
  const NotMalloc n = parse_not_malloc(smaps, {0x7f00007ff000, 0x7ffc00020000, 0x10});
  EXPECT_EQ(n.stacks_kb, 120 + 36);
  EXPECT_EQ(n.named_kb, 64);
  EXPECT_EQ(parse_not_malloc(smaps, {}).stacks_kb, 36);  // no thread's pointer known: [stack] alone
}

TEST(Procfs, SyscallFileGivesTheStackPointer) {
  EXPECT_EQ(parse_syscall_sp("202 0x7f1 0x80 0x0 0x0 0x0 0x0 0x7ffd5c3a0e88 0x7f12a3b4c5d6\n"), 0x7ffd5c3a0e88u);
  EXPECT_EQ(parse_syscall_sp("-1 0x7ffd5c3a0000 0x401000\n"), 0x7ffd5c3a0000u);
  EXPECT_EQ(parse_syscall_sp("running\n"), std::nullopt);
  EXPECT_EQ(parse_syscall_sp(""), std::nullopt);
  EXPECT_EQ(parse_syscall_sp("202 zz 0x80 0x0 0x0 0x0 0x0 0xq 0x1\n"), std::nullopt);
}

TEST(Procfs, StatKeepsANameWithSpacesAndParens) {
  auto f = parse_stat(fixture("stat.txt"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->comm, "web (worker) 1");
  EXPECT_EQ(f->state, 'R');
  EXPECT_EQ(f->minflt, 2862);
  EXPECT_EQ(f->majflt, 7);
  EXPECT_EQ(f->utime_ticks, 1);
  EXPECT_EQ(f->stime_ticks, 1);  // field 15; 16 and 17 are the children's
  EXPECT_EQ(f->num_threads, 1);
}

TEST(Procfs, StatRejectsTruncatedText) {
  EXPECT_FALSE(parse_stat("123 (x) S 1 2 3"));
  EXPECT_FALSE(parse_stat("no parens at all"));
}

TEST(Procfs, StatmResidentAndSharedPages) {
  auto r = parse_statm_resident_shared_pages(fixture("statm.txt"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 3382);
  EXPECT_EQ(r->second, 1663);
  EXPECT_FALSE(parse_statm_resident_shared_pages("17 4"));
}

TEST(Procfs, StatusFields) {
  auto kv = parse_kv(fixture("status.txt"));
  EXPECT_EQ(kv["VmHWM"], 13528);
  EXPECT_EQ(kv["RssAnon"], 6876);
  EXPECT_EQ(kv["RssFile"], 6652);
  EXPECT_EQ(kv["RssShmem"], 0);
  EXPECT_EQ(kv["Threads"], 1);
  EXPECT_EQ(kv["voluntary_ctxt_switches"], 61);
  EXPECT_EQ(kv["nonvoluntary_ctxt_switches"], 6);
  EXPECT_EQ(kv.count("Name"), 0u);  // not a number
}

TEST(Procfs, SmapsRollupSkipsTheHeaderLine) {
  auto kv = parse_kv(fixture("smaps_rollup.txt"));
  EXPECT_EQ(kv["Rss"], 13528);
  EXPECT_EQ(kv["Anonymous"], 6876);
  EXPECT_EQ(kv["AnonHugePages"], 2048);
}

TEST(Procfs, Schedstat) {
  auto s = parse_schedstat(fixture("schedstat.txt"));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->cpu_ns, 34994557u);
  EXPECT_EQ(s->wait_ns, 791875u);
  EXPECT_EQ(s->timeslices, 68u);
  EXPECT_FALSE(parse_schedstat("12 x"));
}

TEST(Procfs, BracketedChoice) {
  EXPECT_EQ(parse_bracketed_choice(fixture("thp_enabled.txt")), "madvise");
  EXPECT_EQ(parse_bracketed_choice("[always] madvise never"), "always");
}

TEST(Procfs, ReaderSamplesThisProcess) {
  ProcReader r(getpid());
  Sample s;
  ASSERT_TRUE(r.sample(s, true));
  EXPECT_GT(s.rss_kb, 1000);
  EXPECT_GE(s.rss_kb, s.anon_kb);
  EXPECT_GE(s.threads, 1);
  EXPECT_GT(s.minflt, 0);
  auto threads = r.threads();
  ASSERT_FALSE(threads.empty());
  EXPECT_EQ(threads.front().tid, getpid());
}

TEST(Procfs, AFileThatCannotBeReadIsNamedNotZero) {
  // A /proc where smaps_rollup is missing (older kernels, restricted mounts).
  namespace fs = std::filesystem;
  fs::path root = test::scratch("fake-proc");
  fs::create_directories(root / "4242");
  for (const char* f : {"statm", "stat", "status"}) fs::copy_file(fs::path(FIXTURE_DIR) / (std::string(f) + ".txt"), root / "4242" / f);
  ProcReader r(4242, root.string());
  ASSERT_TRUE(r.unreadable().count("anon_huge_kb"));
  EXPECT_NE(r.unreadable().at("anon_huge_kb").find("smaps_rollup"), std::string::npos);
  Sample s;
  EXPECT_TRUE(r.sample(s, true));  // the rest is still sampled
  EXPECT_GT(s.rss_kb, 0);
  EXPECT_TRUE(r.error().empty());

  // Without statm nothing can be sampled, and the reader says which file.
  fs::remove(root / "4242" / "statm");
  ProcReader gone(4242, root.string());
  EXPECT_FALSE(gone.sample(s, false));
  EXPECT_NE(gone.error().find("statm"), std::string::npos) << gone.error();
}

TEST(Procfs, FreePageReportingIsOnOnlyWhereABalloonOffersIt) {
  // A /sys with a block device and a balloon (virtio ids 2 and 5), as a
  // Firecracker guest shows them; features one character per bit, bit 0 first.
  namespace fs = std::filesystem;
  const fs::path sys = test::scratch("fake-sys");
  auto put = [&](const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
  };
  put(sys / "bus/virtio/devices/virtio1/device", "0x0002\n");
  put(sys / "bus/virtio/devices/virtio1/features", "0110011000000000\n");
  EXPECT_EQ(free_page_reporting(sys.string()), "off");  // no balloon
  put(sys / "bus/virtio/devices/virtio0/device", "0x0005\n");
  put(sys / "bus/virtio/devices/virtio0/features", "0110000000000000\n");
  EXPECT_EQ(free_page_reporting(sys.string()), "off");  // a balloon without the reporting bit
  put(sys / "bus/virtio/devices/virtio0/features", "0110010100000000\n");
  EXPECT_EQ(free_page_reporting(sys.string()), "on (virtio-balloon)");
  put(sys / "module/page_reporting/parameters/page_reporting_order", "9\n");
  EXPECT_EQ(free_page_reporting(sys.string()), "on (virtio-balloon, order 9)");
  put(sys / "module/page_reporting/parameters/page_reporting_order", "9; rm -rf\n");
  EXPECT_EQ(free_page_reporting(sys.string()), "on (virtio-balloon)");  // only a number is shown
  EXPECT_EQ(free_page_reporting((sys / "none").string()), "off");       // no virtio bus at all
}

TEST(Procfs, AColumnNotReadYetOrMissingFromStatusIsNullNotZero) {
  namespace fs = std::filesystem;
  fs::path root = test::scratch("fake-proc-no-shmem");
  fs::create_directories(root / "4243");
  for (const char* f : {"statm", "stat"}) fs::copy_file(fs::path(FIXTURE_DIR) / (std::string(f) + ".txt"), root / "4243" / f);
  std::ofstream(root / "4243" / "smaps_rollup") << "Rss:                1000 kB\n";
  std::string status;
  for_each_line(fixture("status.txt"), [&](std::string_view line) {
    if (!line.starts_with("RssShmem:")) status += std::string(line) + "\n";
  });
  std::ofstream(root / "4243" / "status") << status;
  ProcReader r(4243, root.string());
  Sample before;
  ASSERT_TRUE(r.sample(before, false, /*with_status=*/false));
  for (const char* column : {"shmem_kb", "file_kb", "anon_huge_kb"}) EXPECT_TRUE(cell_missing(before, column)) << column;
  EXPECT_FALSE(cell_missing(before, "rss_kb"));
  Sample at_mark;
  ASSERT_TRUE(r.sample(at_mark, true, /*with_status=*/true));
  EXPECT_TRUE(cell_missing(at_mark, "shmem_kb"));
  EXPECT_FALSE(cell_missing(at_mark, "file_kb"));
  EXPECT_TRUE(cell_missing(at_mark, "anon_huge_kb"));  // this smaps_rollup has no AnonHugePages
  EXPECT_NE(r.null_cells().at("shmem_kb").find("no RssShmem"), std::string::npos) << r.null_cells().at("shmem_kb");
}

// A fake /proc of a tree 100 -> {101 -> 103, 102} beside an unrelated 200,
// every process with the fixture's statm, stat (with its parent) and status;
// with or without the per-thread children files.
std::filesystem::path fake_tree(const std::string& name, bool children_files) {
  namespace fs = std::filesystem;
  fs::path root = test::scratch(name);
  const std::map<int, int> parent = {{100, 1}, {101, 100}, {102, 100}, {103, 101}, {200, 1}};
  const std::string stat = fixture("stat.txt");
  const std::string after_ppid = stat.substr(stat.find(") R 5727 ") + 9);
  for (auto [pid, ppid] : parent) {
    fs::path dir = root / std::to_string(pid);
    fs::create_directories(dir / "task" / std::to_string(pid));
    for (const char* f : {"statm", "status"}) fs::copy_file(fs::path(FIXTURE_DIR) / (std::string(f) + ".txt"), dir / f);
    std::ofstream(dir / "stat") << pid << " (p" << pid << ") S " << ppid << " " << after_ppid;
  }
  if (children_files) {
    // 100's children come from two of its threads.
    fs::create_directories(root / "100" / "task" / "105");
    std::ofstream(root / "100" / "task" / "100" / "children") << "101 ";
    std::ofstream(root / "100" / "task" / "105" / "children") << "102 ";
    std::ofstream(root / "101" / "task" / "101" / "children") << "103 ";
    for (int pid : {102, 103, 200}) std::ofstream(root / std::to_string(pid) / "task" / std::to_string(pid) / "children");
  }
  return root;
}

TEST(ProcTree, DescendantsAreSummedFoundEitherWay) {
  ProcReader one(100, fake_tree("one", false).string());
  Sample alone;
  ASSERT_TRUE(one.sample(alone, false));
  for (bool children_files : {true, false}) {
    const auto root = fake_tree(children_files ? "tree-children" : "tree-scan", children_files);
    ProcTree tree(100, root.string());
    EXPECT_STREQ(tree.how(), children_files ? "children files" : "scan of /proc");
    tree.discover();
    Sample s;
    EXPECT_EQ(tree.add_descendants(s, false, true, true), 3) << tree.how();  // 101, 102, 103; not 100 nor 200
    EXPECT_EQ(s.rss_kb, 3 * alone.rss_kb);
    EXPECT_EQ(s.anon_kb, 3 * alone.anon_kb);
    EXPECT_EQ(s.threads, 3 * alone.threads);
    // Each descendant's faults include the children it waited for (stat field 11).
    auto f = parse_stat(fixture("stat.txt"));
    EXPECT_EQ(s.minflt, 3 * (f->minflt + f->cminflt));
    // An ended process drops out at the next discovery (its open files would
    // still read here, unlike a real /proc's).
    std::filesystem::remove_all(root / "103");
    if (children_files) std::ofstream(root / "101" / "task" / "101" / "children") << "";
    tree.discover();
    Sample after;
    EXPECT_EQ(tree.add_descendants(after, false, true, true), 2) << tree.how();
  }
}

TEST(Procfs, StatGivesTheParentAndTheWaitedForChildren) {
  auto f = parse_stat(fixture("stat.txt"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->ppid, 5727);
  EXPECT_EQ(f->cminflt, 6572);
  EXPECT_EQ(f->cmajflt, 1);
  EXPECT_EQ(f->cutime_ticks, 3);
  EXPECT_EQ(f->cstime_ticks, 1);
}

}  // namespace
}  // namespace mh::procfs
