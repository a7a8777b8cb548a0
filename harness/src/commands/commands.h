// The harness's commands, each taking the parsed Options and returning the
// process exit code: 0 all well, 1 a run failed (or a regression), 2 bad input.
#pragma once

#include <fmt/format.h>

#include <string>

#include "core/escape.h"
#include "options.h"

namespace mh {

int list_command(const Options& o);
int run_command(const Options& o);
int compare_command(const Options& o);
int merge_command(const Options& o);
int plot_command(const Options& o);
int bisect_command(const Options& o);
int sweep_command(const Options& o);
int history_command(const Options& o);
int export_command(const Options& o);
int show_command(const Options& o);

// Input a command refuses: the message after the command's name ("harness
// compare: ..."), and the exit code 2.
inline int bad_input(const char* who, const std::string& message) {
  // A message quotes names from the command line and from reports: shown, never obeyed.
  fmt::print(stderr, "{}: {}\n", who, escape::terminal_lines(message));
  return 2;
}

}  // namespace mh
