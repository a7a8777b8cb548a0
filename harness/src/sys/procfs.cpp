// /proc parsing and per-process reading (see procfs.h).
#include "sys/procfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/escape.h"

namespace mh::procfs {

namespace {

// The sampled columns the heap ledger gives (record.cpp).
constexpr const char* kLedgerColumns[] = {"heap_live_kb", "heap_blocks", "heap_allocs"};

}  // namespace

namespace {

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\n' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

template <class T>
bool to_num(std::string_view s, T& out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

std::optional<StatFields> parse_stat(std::string_view text) {
  // "pid (comm) state ppid ..." - comm is everything between the first '(' and
  // the last ')', since a thread may name itself "a) b".
  auto open = text.find('(');
  auto close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  StatFields f;
  f.comm = std::string(text.substr(open + 1, close - open - 1));
  auto rest = split_ws(text.substr(close + 1));
  // rest[0] is field 3 (state); field N is rest[N - 3].
  if (rest.size() < 18) return std::nullopt;
  f.state = rest[0].empty() ? '?' : rest[0][0];
  if (!to_num(rest[4 - 3], f.ppid) || !to_num(rest[10 - 3], f.minflt) || !to_num(rest[11 - 3], f.cminflt) ||
      !to_num(rest[12 - 3], f.majflt) || !to_num(rest[13 - 3], f.cmajflt) || !to_num(rest[14 - 3], f.utime_ticks) ||
      !to_num(rest[15 - 3], f.stime_ticks) || !to_num(rest[16 - 3], f.cutime_ticks) ||
      !to_num(rest[17 - 3], f.cstime_ticks) || !to_num(rest[20 - 3], f.num_threads))
    return std::nullopt;
  return f;
}

std::optional<std::pair<int64_t, int64_t>> parse_statm_resident_shared_pages(std::string_view text) {
  auto fields = split_ws(text);
  int64_t resident = 0, shared = 0;
  if (fields.size() < 3 || !to_num(fields[1], resident) || !to_num(fields[2], shared)) return std::nullopt;
  return std::make_pair(resident, shared);
}

void for_each_line(std::string_view text, const std::function<void(std::string_view)>& f) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    f(text.substr(pos, eol - pos));
    pos = eol + 1;
  }
}

std::map<std::string, int64_t> parse_kv(std::string_view text) {
  std::map<std::string, int64_t> out;
  for_each_line(text, [&](std::string_view line) {
    auto colon = line.find(':');
    if (colon == std::string_view::npos) return;
    auto fields = split_ws(line.substr(colon + 1));
    int64_t v = 0;
    if (!fields.empty() && to_num(fields[0], v)) out.emplace(std::string(line.substr(0, colon)), v);
  });
  return out;
}

std::optional<SchedStat> parse_schedstat(std::string_view text) {
  auto f = split_ws(text);
  SchedStat s;
  if (f.size() < 3 || !to_num(f[0], s.cpu_ns) || !to_num(f[1], s.wait_ns) || !to_num(f[2], s.timeslices))
    return std::nullopt;
  return s;
}

namespace {

std::optional<uint64_t> hex_of(std::string_view w) {
  if (w.size() > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) w.remove_prefix(2);
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v, 16);
  if (ec != std::errc() || end != w.data() + w.size()) return std::nullopt;
  return v;
}

// Where a mapping's KiB go: stacks, named, or neither (malloc's, or a file's).
enum class Owner { None, Stack, Named };

}  // namespace

NotMalloc parse_not_malloc(std::string_view smaps, const std::vector<uint64_t>& stack_pointers) {
  NotMalloc out;
  Owner owner = Owner::None;
  for_each_line(smaps, [&](std::string_view line) {
    const auto w = split_ws(line);
    if (w.empty()) return;
    if (const size_t dash = w[0].find('-'); dash != std::string_view::npos && w[0].back() != ':') {
      // A mapping's header: "START-END PERMS OFFSET DEV INODE [NAME]".
      const auto from = hex_of(w[0].substr(0, dash)), to = hex_of(w[0].substr(dash + 1));
      const std::string_view name = w.size() > 5 ? w[5] : std::string_view{};
      owner = Owner::None;
      if (name == "[stack]") owner = Owner::Stack;
      else if (name.substr(0, 6) == "[anon:") owner = Owner::Named;
      else if (from && to && name.empty())
        for (uint64_t sp : stack_pointers)
          if (sp >= *from && sp < *to) owner = Owner::Stack;
      return;
    }
    if (owner == Owner::None || w[0] != "Anonymous:" || w.size() < 2) return;
    int64_t kb = 0;
    if (!to_num(w[1], kb)) return;
    (owner == Owner::Stack ? out.stacks_kb : out.named_kb) += kb;
  });
  return out;
}

std::optional<uint64_t> parse_syscall_sp(std::string_view text) {
  const auto w = split_ws(text.substr(0, text.find('\n')));
  if (w.size() == 3 && w[0] == "-1") return hex_of(w[1]);
  if (w.size() == 9) return hex_of(w[7]);
  return std::nullopt;
}

std::string parse_bracketed_choice(std::string_view text) {
  auto a = text.find('['), b = text.find(']');
  if (a == std::string_view::npos || b == std::string_view::npos || b < a) return std::string(text);
  return std::string(text.substr(a + 1, b - a - 1));
}

std::optional<std::string> read_text(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string free_page_reporting(const std::string& sys) {
  constexpr int kBalloon = 5, kReporting = 5;  // virtio device id; VIRTIO_BALLOON_F_REPORTING
  std::error_code ec;
  for (std::filesystem::directory_iterator it(sys + "/bus/virtio/devices", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string dev = it->path().string();
    const auto id = read_text(dev + "/device");
    if (!id || std::strtol(id->c_str(), nullptr, 0) != kBalloon) continue;
    // One character per feature bit, bit 0 first.
    const auto features = read_text(dev + "/features").value_or("");
    if (features.size() <= size_t(kReporting) || features[kReporting] != '1') continue;
    const auto order = read_text(sys + "/module/page_reporting/parameters/page_reporting_order");
    std::string shown = order ? order->substr(0, order->find('\n')) : "";
    if (shown.find_first_not_of("0123456789") != std::string::npos) shown.clear();
    return shown.empty() ? "on (virtio-balloon)" : "on (virtio-balloon, order " + shown + ")";
  }
  return "off";
}

ProcReader::ProcReader(int pid, const std::string& root, bool with_waited_children)
    : pid_(pid), root_(root), with_waited_children_(with_waited_children), page_kb_(sysconf(_SC_PAGESIZE) / 1024), tick_ms_(1000.0 / sysconf(_SC_CLK_TCK)) {
  auto open_proc = [&](const char* name, std::string& why) {
    std::string path = root + "/" + std::to_string(pid) + "/" + name;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 && why.empty()) why = "cannot open " + path + ": " + std::strerror(errno);
    return fd;
  };
  statm_fd_ = open_proc("statm", error_);
  stat_fd_ = open_proc("stat", error_);
  status_fd_ = open_proc("status", error_);
  // Without smaps_rollup (older kernels, a restricted /proc) only
  // AnonHugePages is missing: that column is null with the reason.
  std::string smaps_error;
  smaps_fd_ = open_proc("smaps_rollup", smaps_error);
  if (smaps_fd_ < 0) unreadable_["anon_huge_kb"] = unreadable_["lazyfree_kb"] = smaps_error;
  for (const char* column : kLedgerColumns) unreadable_[column] = "the run did not use the heap ledger (--ledger)";
  buf_.reserve(8192);
}

void ProcReader::use_ledger(const std::string& library) {
  ledger_.emplace(pid_, library, root_);
  for (const char* column : kLedgerColumns) unreadable_.erase(column);
}

void ProcReader::read_ledger(Sample& out, bool at_mark) {
  if (!ledger_) return;
  const auto c = ledger_->read(at_mark);
  const std::string why = c ? "" : "heap ledger: " + ledger_->why();
  // A figure out of range is null with the reason, never written as read.
  auto cell = [&](const char* column, int64_t& field, const std::optional<int64_t> LedgerCounts::*figure, int64_t unit) {
    const std::optional<int64_t> v = c ? (*c).*figure : std::nullopt;
    field = v ? *v / unit : 0;
    note(out, column, !c ? why : v ? "" : kLedgerOutOfRange);
  };
  cell("heap_live_kb", out.heap_live_kb, &LedgerCounts::live_bytes, 1024);
  cell("heap_blocks", out.heap_blocks, &LedgerCounts::live_blocks, 1);
  cell("heap_allocs", out.heap_allocs, &LedgerCounts::allocs, 1);
}

ProcReader::~ProcReader() {
  for (int fd : {statm_fd_, stat_fd_, status_fd_, smaps_fd_, clear_refs_fd_})
    if (fd >= 0) ::close(fd);
}

bool ProcReader::pread_all(int fd, std::string& buf) {
  // proc files regenerate their text on a read at offset 0, so the descriptor
  // stays open across samples.
  buf.resize(8192);
  size_t off = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf.data() + off, buf.size() - off, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    off += static_cast<size_t>(n);
    if (n == 0 || off < buf.size()) break;
    buf.resize(buf.size() * 2);
  }
  buf.resize(off);
  return off > 0;
}

bool ProcReader::sample(Sample& out, bool with_smaps, bool with_status, bool with_stat) {
  if (statm_fd_ < 0 || stat_fd_ < 0 || status_fd_ < 0) return false;
  if (!pread_all(statm_fd_, buf_)) {
    if (error_.empty()) error_ = "cannot read " + root_ + "/" + std::to_string(pid_) + "/statm: " + std::strerror(errno);
    return false;
  }
  auto pages = parse_statm_resident_shared_pages(buf_);
  // A process whose memory is gone (exiting, zombie) reads as 0 resident pages.
  if (!pages || pages->first == 0) return false;
  out.rss_kb = pages->first * page_kb_;
  out.anon_kb = (pages->first - pages->second) * page_kb_;
  split_shared(out, pages->second * page_kb_);

  if (with_stat) {
    if (!pread_all(stat_fd_, buf_)) return false;
    auto st = parse_stat(buf_);
    if (!st) return false;
    const int64_t c = with_waited_children_ ? 1 : 0;
    last_stat_.minflt = st->minflt + c * st->cminflt;
    last_stat_.majflt = st->majflt + c * st->cmajflt;
    last_stat_.utime_ms = double(st->utime_ticks + c * st->cutime_ticks) * tick_ms_;
    last_stat_.stime_ms = double(st->stime_ticks + c * st->cstime_ticks) * tick_ms_;
    last_stat_.threads = st->num_threads;
  }
  out.minflt = last_stat_.minflt;
  out.majflt = last_stat_.majflt;
  out.utime_ms = last_stat_.utime_ms;
  out.stime_ms = last_stat_.stime_ms;
  out.threads = last_stat_.threads;

  if (with_status) {
    if (!pread_all(status_fd_, buf_)) return false;
    const auto status = parse_kv(buf_);
    read_status_split(out, status);
    if (auto it = status.find("VmHWM"); it != status.end()) last_hwm_kb_ = it->second;
    else last_hwm_kb_.reset();
  }
  read_smaps(out, with_smaps);
  read_ledger(out, with_status);
  return true;
}

void ProcReader::note(Sample& out, const char* column, const std::string& why) {
  if (why.empty()) {
    out.missing &= ~column_bit(column);
    return;
  }
  out.missing |= column_bit(column);
  auto [it, fresh] = null_cells_.emplace(column, why);
  if (!fresh && it->second.find(why) == std::string::npos) it->second += "; " + why;
}

// statm's shared is RssFile + RssShmem, from the same counters as status: the
// shmem of the last status read splits it.
void ProcReader::split_shared(Sample& out, int64_t shared_kb) {
  const std::string why =
      shmem_kb_ ? ""
                : "not read yet: the split of shared memory into file and shmem comes from /proc/PID/status, read "
                  "at marks";
  out.shmem_kb = shmem_kb_.value_or(0);
  out.file_kb = shared_kb - out.shmem_kb;
  note(out, "shmem_kb", why);
  note(out, "file_kb", why);
}

// status's own split; a key it lacks is not a 0 (statm's anonymous part stands
// in for RssAnon).
void ProcReader::read_status_split(Sample& out, const std::map<std::string, int64_t>& status) {
  const auto key = [&](const char* name) -> std::optional<int64_t> {
    const auto it = status.find(name);
    return it == status.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  const std::string lacks = "/proc/PID/status has no ";
  if (auto anon = key("RssAnon")) out.anon_kb = *anon;
  shmem_kb_ = key("RssShmem");
  out.shmem_kb = shmem_kb_.value_or(0);
  note(out, "shmem_kb", shmem_kb_ ? "" : lacks + "RssShmem");
  const auto file = key("RssFile");
  out.file_kb = file.value_or(0);
  note(out, "file_kb", file ? "" : lacks + "RssFile");
}

void ProcReader::read_smaps(Sample& out, bool with_smaps) {
  if (with_smaps && smaps_fd_ >= 0 && pread_all(smaps_fd_, buf_)) {
    const auto kv = parse_kv(buf_);
    const auto value = [&](const char* key, const char* column) {
      const auto it = kv.find(key);
      if (it == kv.end()) null_cells_.emplace(column, std::string("/proc/PID/smaps_rollup has no ") + key);
      return it == kv.end() ? std::nullopt : std::optional<int64_t>(it->second);
    };
    anon_huge_kb_ = value("AnonHugePages", "anon_huge_kb");
    lazyfree_kb_ = value("LazyFree", "lazyfree_kb");
  }
  const std::string not_yet =
      "not read yet: /proc/PID/smaps_rollup is read at marks and every --smaps-ms (0, the default: at marks only)";
  out.anon_huge_kb = anon_huge_kb_.value_or(0);
  note(out, "anon_huge_kb", anon_huge_kb_ ? "" : not_yet);
  out.lazyfree_kb = lazyfree_kb_.value_or(0);
  note(out, "lazyfree_kb", lazyfree_kb_ ? "" : not_yet);
}

bool ProcReader::reset_hwm() {
  if (clear_refs_fd_ == -1) {
    const std::string path = root_ + "/" + std::to_string(pid_) + "/clear_refs";
    clear_refs_fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (clear_refs_fd_ < 0) {
      reset_error_ = "cannot open " + path + ": " + std::strerror(errno);
      clear_refs_fd_ = -2;  // do not try again
    }
  }
  if (clear_refs_fd_ < 0) return false;
  ssize_t n;
  do n = ::pwrite(clear_refs_fd_, "5", 1, 0);
  while (n < 0 && errno == EINTR);
  if (n == 1) return true;
  if (reset_error_.empty())
    reset_error_ = "cannot write 5 to " + root_ + "/" + std::to_string(pid_) + "/clear_refs: " + std::strerror(errno);
  return false;
}

std::optional<NotMalloc> ProcReader::not_malloc() const {
  if (!ledger_) return std::nullopt;
  const std::string base = root_ + "/" + std::to_string(pid_);
  std::vector<uint64_t> stack_pointers;
  if (DIR* d = opendir((base + "/task").c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.')
        if (auto text = read_text(base + "/task/" + e->d_name + "/syscall"))
          if (auto sp = parse_syscall_sp(*text)) stack_pointers.push_back(*sp);
    closedir(d);
  }
  const auto smaps = read_text(base + "/smaps");
  if (!smaps || smaps->empty()) return std::nullopt;
  return parse_not_malloc(*smaps, stack_pointers);
}

std::vector<ThreadStat> ProcReader::threads() const {
  std::vector<ThreadStat> out;
  std::string dir = root_ + "/" + std::to_string(pid_) + "/task";
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string base = dir + "/" + e->d_name + "/";
    ThreadStat t;
    t.tid = std::atoi(e->d_name);
    auto comm = read_text(base + "comm");
    auto sched = read_text(base + "schedstat");
    auto status = read_text(base + "status");
    if (!comm || !sched || !status) continue;  // the thread ended meanwhile
    t.name = *comm;
    while (!t.name.empty() && t.name.back() == '\n') t.name.pop_back();
    t.name = escape::shown(t.name);  // a name the thread gave itself
    if (auto s = parse_schedstat(*sched)) {
      t.cpu_ns = s->cpu_ns;
      t.wait_ns = s->wait_ns;
    } else if (auto st = read_text(base + "stat")) {
      // Without schedstats the tick-based CPU time is the best there is.
      if (auto f = parse_stat(*st)) t.cpu_ns = uint64_t((f->utime_ticks + f->stime_ticks) * tick_ms_ * 1e6);
    }
    auto kv = parse_kv(*status);
    t.vol_ctxsw = uint64_t(kv["voluntary_ctxt_switches"]);
    t.invol_ctxsw = uint64_t(kv["nonvoluntary_ctxt_switches"]);
    out.push_back(std::move(t));
  }
  closedir(d);
  return out;
}

}  // namespace mh::procfs
