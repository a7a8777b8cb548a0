// The process tree's members and their sum (see proc_tree.h).
#include "measure/proc_tree.h"

#include <dirent.h>
#include <unistd.h>

#include <charconv>
#include <set>

namespace mh::procfs {

namespace {

// The numeric names in a folder (pids in /proc, tids in /proc/PID/task).
std::vector<int> numeric_entries(const std::string& dir) {
  std::vector<int> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    int n = 0;
    const char* end = e->d_name + std::char_traits<char>::length(e->d_name);
    auto r = std::from_chars(e->d_name, end, n);
    if (r.ec == std::errc() && r.ptr == end) out.push_back(n);
  }
  closedir(d);
  return out;
}

std::vector<int> pids_in(const std::string& text) {
  std::vector<int> out;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    while (p < end && (*p == ' ' || *p == '\n')) ++p;
    int n = 0;
    auto r = std::from_chars(p, end, n);
    if (r.ec != std::errc()) break;
    out.push_back(n);
    p = r.ptr;
  }
  return out;
}

}  // namespace

ProcTree::ProcTree(int root_pid, const std::string& proc_root)
    : root_pid_(root_pid),
      root_(proc_root),
      children_files_(access((proc_root + "/" + std::to_string(root_pid) + "/task/" + std::to_string(root_pid) +
                              "/children").c_str(),
                             R_OK) == 0) {}

std::vector<int> ProcTree::children_of(int pid) const {
  std::vector<int> out;
  const std::string task = root_ + "/" + std::to_string(pid) + "/task/";
  // Each thread's children: a child's parent is the thread that forked it.
  for (int tid : numeric_entries(task))
    if (auto text = read_text(task + std::to_string(tid) + "/children"))
      for (int child : pids_in(*text)) out.push_back(child);
  return out;
}

std::vector<int> ProcTree::descendants_by_scan() const {
  std::multimap<int, int> children;  // ppid -> pid
  for (int pid : numeric_entries(root_))
    if (auto text = read_text(root_ + "/" + std::to_string(pid) + "/stat"))
      if (auto st = parse_stat(*text)) children.emplace(st->ppid, pid);
  std::vector<int> out;
  std::vector<int> todo = {root_pid_};
  while (!todo.empty()) {
    const int pid = todo.back();
    todo.pop_back();
    auto [a, b] = children.equal_range(pid);
    for (auto it = a; it != b; ++it) {
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

void ProcTree::discover() {
  std::vector<int> found;
  if (children_files_) {
    std::vector<int> todo = children_of(root_pid_);
    while (!todo.empty()) {
      const int pid = todo.back();
      todo.pop_back();
      found.push_back(pid);
      for (int child : children_of(pid)) todo.push_back(child);
    }
  } else {
    found = descendants_by_scan();
  }
  const std::set<int> now(found.begin(), found.end());
  for (auto it = members_.begin(); it != members_.end();)
    it = now.count(it->first) ? std::next(it) : members_.erase(it);
  for (int pid : now)
    if (pid != root_pid_ && !members_.count(pid))
      members_.emplace(pid, std::make_unique<ProcReader>(pid, root_, /*with_waited_children=*/true));
}

int ProcTree::add_descendants(Sample& s, bool with_smaps, bool with_status, bool with_stat) {
  int counted = 0;
  for (auto& [pid, reader] : members_) {
    Sample m;
    if (!reader->sample(m, with_smaps, with_status, with_stat)) continue;  // ended meanwhile
    for (const auto& c : sample_columns())
      if (c.summed) c.set(s, c.get(s) + c.get(m));
    // A sum with a part not measured is not measured.
    s.missing |= m.missing;
    for (const auto& [column, why] : reader->null_cells()) null_cells_.emplace(column, why);
    ++counted;
  }
  return counted;
}

std::vector<ThreadStat> ProcTree::threads() const {
  std::vector<ThreadStat> out;
  for (const auto& [pid, reader] : members_)
    for (auto& t : reader->threads()) out.push_back(std::move(t));
  return out;
}

}  // namespace mh::procfs
