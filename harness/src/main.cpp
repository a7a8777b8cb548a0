// harness: parse the command line, then hand the Options to the command. An
// exception that reaches here is a bug of the harness: the run in flight is
// killed, what was written stays written, and the exit status is 3.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <system_error>

#include "commands/commands.h"
#include "options.h"
#include "sys/containment.h"
#include "sys/interrupt.h"

namespace {

int dispatch(const mh::Options& o) {
  switch (o.command) {
    case mh::Command::List: return mh::list_command(o);
    case mh::Command::Compare: return mh::compare_command(o);
    case mh::Command::Merge: return mh::merge_command(o);
    case mh::Command::Plot: return mh::plot_command(o);
    case mh::Command::Bisect: return mh::bisect_command(o);
    case mh::Command::Sweep: return mh::sweep_command(o);
    case mh::Command::History: return mh::history_command(o);
    case mh::Command::Export: return mh::export_command(o);
    case mh::Command::Show: return mh::show_command(o);
    case mh::Command::Run: break;
  }
  return mh::run_command(o);
}

int internal_error(const char* what) {
  mh::interrupt::kill_child_group();
  mh::containment::kill_all_live();
  std::fprintf(stderr,
               "harness: internal error: %s\nThis is a bug of the harness, not of the workload or the input; "
               "the reports already written are kept.\n",
               what);
  return 3;
}

// The reader of standard output went away (`harness --list | head`): the
// listing ends quietly as it would have; any other command could not say all
// it had to, which is a failure of that command, not a bug.
int output_closed(mh::Command command) {
  if (command == mh::Command::List) return 0;
  std::fprintf(stderr, "harness: standard output was closed before the command finished writing to it\n");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  mh::interrupt::install();
  if (auto error = mh::containment::configure(std::getenv("MEMHARNESS_CONTAINMENT")); !error.empty()) {
    std::fprintf(stderr, "harness: %s\n", error.c_str());
    return 2;
  }
  mh::Command command = mh::Command::Run;
  try {
    auto parsed = mh::parse_options(argc, argv);
    if (!parsed.options) return parsed.exit_code;
    command = parsed.options->command;
    return dispatch(*parsed.options);
  } catch (const std::system_error& e) {
    if (e.code() == std::errc::broken_pipe) return output_closed(command);
    return internal_error(e.what());
  } catch (const std::exception& e) {
    return internal_error(e.what());
  } catch (...) {
    return internal_error("an exception of unknown type");
  }
}
