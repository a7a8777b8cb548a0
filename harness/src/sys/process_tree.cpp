// Descendants of a process from /proc (see process_tree.h).
#include "sys/process_tree.h"

#include <dirent.h>
#include <unistd.h>

#include <charconv>
#include <map>

#include "core/escape.h"
#include "sys/procfs.h"

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

Descendants::Descendants(int probe_pid, const std::string& proc_root)
    : root_(proc_root),
      children_files_(access((proc_root + "/" + std::to_string(probe_pid) + "/task/" + std::to_string(probe_pid) +
                              "/children").c_str(),
                             R_OK) == 0) {}

std::vector<int> Descendants::children_of(int pid) const {
  if (!children_files_) return by_scan(pid, true);
  std::vector<int> out;
  const std::string task = root_ + "/" + std::to_string(pid) + "/task/";
  // Each thread's children: a child's parent is the thread that forked it.
  for (int tid : numeric_entries(task))
    if (auto text = read_text(task + std::to_string(tid) + "/children"))
      for (int child : pids_in(*text)) out.push_back(child);
  return out;
}

std::vector<int> Descendants::by_scan(int pid, bool direct_only) const {
  std::multimap<int, int> children;  // ppid -> pid
  for (int p : numeric_entries(root_))
    if (auto text = read_text(root_ + "/" + std::to_string(p) + "/stat"))
      if (auto st = parse_stat(*text)) children.emplace(st->ppid, p);
  std::vector<int> out;
  std::vector<int> todo = {pid};
  while (!todo.empty()) {
    const int parent = todo.back();
    todo.pop_back();
    auto [a, b] = children.equal_range(parent);
    for (auto it = a; it != b; ++it) {
      out.push_back(it->second);
      if (!direct_only) todo.push_back(it->second);
    }
  }
  return out;
}

std::vector<int> Descendants::of(int pid) const {
  if (!children_files_) return by_scan(pid, false);
  std::vector<int> found;
  std::vector<int> todo = children_of(pid);
  while (!todo.empty()) {
    const int p = todo.back();
    todo.pop_back();
    found.push_back(p);
    for (int child : children_of(p)) todo.push_back(child);
  }
  return found;
}

LeftoverProcess describe_process(int pid, const std::string& proc_root) {
  LeftoverProcess p;
  p.pid = pid;
  const std::string dir = proc_root + "/" + std::to_string(pid);
  p.comm = read_text(dir + "/comm").value_or("");
  if (!p.comm.empty() && p.comm.back() == '\n') p.comm.pop_back();
  p.cmdline = read_text(dir + "/cmdline").value_or("");
  while (!p.cmdline.empty() && p.cmdline.back() == '\0') p.cmdline.pop_back();
  for (char& c : p.cmdline)
    if (c == '\0') c = ' ';
  // Names the process gave itself: text only shown.
  p.comm = escape::shown(p.comm);
  p.cmdline = escape::shown(p.cmdline);
  return p;
}

}  // namespace mh::procfs
