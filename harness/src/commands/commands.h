// The harness's commands, each taking the parsed Options and returning the
// process exit code: 0 all well, 1 a run failed (or a regression), 2 bad input.
#pragma once

#include "options.h"

namespace mh {

int list_command(const Options& o);
int run_command(const Options& o);
int compare_command(const Options& o);
int merge_command(const Options& o);
int plot_command(const Options& o);
int bisect_command(const Options& o);
int sweep_command(const Options& o);

}  // namespace mh
