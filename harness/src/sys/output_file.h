// The files the harness writes (reports, comparisons, exports, sweep and
// bisect state, rescued runs): a target checked before anything runs, written
// through a new file of an unpredictable name beside it, then renamed over it.
// "-" is standard output. Main thread only.
#pragma once

#include <string>

namespace mh::output_file {

// The name that means standard output (--out -, --export-csv -).
inline constexpr const char* kStdout = "-";

// "" when `path` can be written: "-"; or a path that does not exist or is a
// regular file, in a folder that exists or can be made and takes new files.
// Anything else that exists there (a folder, a device, a symbolic link, a
// pipe) is refused, since writing would replace it. Creates nothing.
// Otherwise the error, naming the path.
std::string check_target(const std::string& path);
// check_target for a file the harness reads back or rewrites as it goes
// (bisect and sweep state, plots): "-" is refused.
std::string check_file(const std::string& path);

// Writes `text` to `path`: "-" to standard output; otherwise into a new file
// of a random name in the target's folder (O_EXCL | O_NOFOLLOW: a name planted
// there is never followed), synced, then renamed over the target, so that a
// reader sees the old file or the new one, never half of one. The target is
// checked again just before (check_target); missing folders are made. Returns
// "" or the error.
std::string write_atomic(const std::string& path, const std::string& text);

// Writes `text` into a new file `dir/PREFIX<random>SUFFIX`, created with
// O_EXCL | O_NOFOLLOW (for shared folders such as /tmp, where a predictable
// name could be planted). Returns its path, or "" with `error`.
std::string write_new(const std::string& dir, const std::string& prefix, const std::string& suffix,
                      const std::string& text, std::string& error);

// A new file beside `path`, named after it (`NAME.PREFIX<random>`) and created
// as write_new creates one (missing folders made), left open for appending:
// its descriptor, or -1 with `error`. `made` is its path.
int open_beside(const std::string& path, const std::string& infix, std::string& made, std::string& error);
// All of `text` appended to `fd` and synced to the disk before it returns:
// "" or the error, naming `name`. The descriptor stays open.
std::string append_synced(int fd, const std::string& text, const std::string& name);

}  // namespace mh::output_file
