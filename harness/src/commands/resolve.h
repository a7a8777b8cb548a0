// Turning what the user names into what an execution runs: the installation
// layout, workloads and suites into jobs, allocator specs and pins into arms
// (exit-2 errors, each naming the bad part, before anything runs). Reads the
// environment and the data files; main thread only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "inputs/pins.h"
#include "inputs/plan.h"

namespace mh {

// Where the workload binaries, this build's libraries and the data files are:
// beside the harness, in the same layout in the build tree and when installed.
struct Layout {
  std::string libexec, libdir, share, source;
};
Layout find_layout();

// One workload with its arguments, or a suite (optionally one shard of it).
std::optional<std::vector<Job>> resolve_jobs(const Layout& l, const std::string& workload,
                                             const std::vector<std::string>& args, const std::string& suite,
                                             const std::string& shard, std::string& error);

// The one job of a program (harness -- PROGRAM ARGS, or a suite's command
// entry), with the settings program.h resolved.
Job program_job(Program p);

// The heap ledger library of this build or installation; false with the
// error when it is not there.
std::string ledger_library(const Layout& l);
bool ledger_built(const Layout& l, std::string& error);

// An allocator spec, a name from the pins file, or NAME@REV[:options] of a pin
// with a repository (scav@REV; built on demand, exit 2 when the build fails).
std::optional<AllocatorSpec> resolve_allocator(const Layout& l, const std::string& text, std::string& error);
// The pins file: $MEMHARNESS_PINS, else the installed allocators/pins.json.
std::string pins_file(const Layout& l);
// Where pins are built ($MEMHARNESS_PIN_CACHE, else build/pins of the source
// tree) and which tree {memharness} is.
PinPaths pin_paths(const Layout& l);
// The pins file with MEMHARNESS_PIN_SOURCES applied (see parse_pin_sources).
std::optional<PinsFile> load_pins_with_sources(const Layout& l, std::string& error);
// The pin of that name with a repository (pointed at its local source when
// MEMHARNESS_PIN_SOURCES names one); nullopt naming the ones there are.
std::optional<RepoPin> find_repo_pin(const Layout& l, const std::string& name, std::string& error);

}  // namespace mh
