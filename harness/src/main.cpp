// harness: parse the command line, then hand the Options to the command.
#include "commands.h"
#include "options.h"

int main(int argc, char** argv) {
  auto parsed = mh::parse_options(argc, argv);
  if (!parsed.options) return parsed.exit_code;
  return parsed.options->list ? mh::list_command(*parsed.options) : mh::run_command(*parsed.options);
}
