// The files the harness reads because a user or a program named them
// (reports, journals, --resume files, history stores, JSON inputs): opened
// without blocking and checked to be regular files before anything reads
// them, so that a FIFO or a device at the path is refused at once. Any thread.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace mh::input_file {

// What a file that is not a regular one is, for a person: "a named pipe".
std::string kind_of(mode_t mode);

// `path` opened read-only with O_NONBLOCK (a FIFO never holds the open) and
// O_NOCTTY, then fstat-checked to be a regular file; its descriptor, or -1
// with the error naming the path ("cannot read p: it is a named pipe, not a
// regular file"). A symbolic link is followed: what it names is checked.
int open_regular(const std::string& path, std::string& error);

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;
// open_regular as a stdio stream; null with the error.
File open_file(const std::string& path, std::string& error);

// All of a regular file up to `max_bytes`; nullopt with the error when it is
// not one, cannot be read, or is larger (reading stops one byte past).
std::optional<std::string> read_all(const std::string& path, size_t max_bytes, std::string& error);

// "" when nothing is at `path` or a regular file is (not followed: a link is
// refused); otherwise "PATH is a named pipe, not a regular file" or the error.
std::string check_regular_or_absent(const std::string& path);

}  // namespace mh::input_file
