// harness: parse the command line, then hand the Options to the command.
#include "commands/commands.h"
#include "sys/interrupt.h"
#include "options.h"

int main(int argc, char** argv) {
  mh::interrupt::install();
  auto parsed = mh::parse_options(argc, argv);
  if (!parsed.options) return parsed.exit_code;
  const mh::Options& o = *parsed.options;
  switch (o.command) {
    case mh::Command::List: return mh::list_command(o);
    case mh::Command::Compare: return mh::compare_command(o);
    case mh::Command::Merge: return mh::merge_command(o);
    case mh::Command::Plot: return mh::plot_command(o);
    case mh::Command::Bisect: return mh::bisect_command(o);
    case mh::Command::Sweep: return mh::sweep_command(o);
    case mh::Command::Run: break;
  }
  return mh::run_command(o);
}
