// Command-line declaration (see options.h).
#include "options.h"

#include <CLI/CLI.hpp>
#include <iostream>

namespace mh {

ParseOutcome parse_options(int argc, char** argv) {
  Options o;
  o.argv.assign(argv, argv + argc);
  CLI::App app{
      "memharness: runs a workload in a child process under each allocator, samples its memory from outside, "
      "and writes a JSON report.\nWorkload parameters follow the workload: harness --workload burst-writefile "
      "--calls 100 --release-on-pool",
      "harness"};
  app.allow_extras();
  app.add_option("-w,--workload", o.workload, "workload to run (see --list)");
  app.add_option("-a,--allocator", o.allocators,
                 "allocator to run under, repeatable: glibc, jemalloc, mimalloc, tcmalloc, scav, NAME=/path/lib.so; "
                 "options after a colon: jemalloc:background_thread=true,dirty_decay_ms=100 (default: every "
                 "available built-in)");
  app.add_option("-n,--runs", o.runs, "repetitions of each allocator, interleaved")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--timeout", o.timeout_s, "seconds before a run is killed (SIGTERM, then SIGKILL)")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  app.add_option("--sample-ms", o.sample_ms, "sampling interval in milliseconds (at least 1)")
      ->check(CLI::Range(1.0, 60000.0))
      ->capture_default_str();
  app.add_option("-o,--out", o.out, "report file (default results/<workload>-<UTC time>.json)");
  app.add_flag("-q,--quiet", o.quiet, "no progress line");
  app.add_flag("-v,--verbose", o.verbose, "copy each workload's output to stderr");
  app.add_flag("-l,--list", o.list, "list the workloads and their parameters");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::cout << app.help();
    return {std::nullopt, 0};
  } catch (const CLI::ParseError& e) {
    std::cerr << "harness: " << e.what() << "\n";
    return {std::nullopt, 2};
  }
  o.workload_args = app.remaining();
  if (!o.list && o.workload.empty()) {
    std::cerr << "harness: no workload given: use --workload NAME (see harness --list)\n";
    return {std::nullopt, 2};
  }
  return {o, 0};
}

}  // namespace mh
