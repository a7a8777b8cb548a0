// The merge command: joins reports (the shards of a job matrix, or runs made
// apart) into one, with the summary computed again over all runs.
#include <fmt/format.h>

#include "commands.h"
#include "report_json.h"

namespace mh {

int merge_command(const Options& o) {
  std::vector<RunRecord> runs;
  Json contexts = Json::array();
  for (const auto& path : o.inputs) {
    std::string error;
    auto report = read_report(path, error);
    if (!report) {
      fmt::print(stderr, "harness: {}\n", error);
      return 2;
    }
    contexts.push_back(report->context);
    for (auto& r : report->runs) runs.push_back(std::move(r));
  }
  Json context = contexts[0];
  context["merged_from"] = contexts;
  if (auto e = write_atomic(o.out, dump_canonical(make_report(context, runs))); !e.empty()) {
    fmt::print(stderr, "harness: {}\n", e);
    return 2;
  }
  fmt::print("merged {} runs from {} reports into {}\n", runs.size(), o.inputs.size(), o.out);
  return 0;
}

}  // namespace mh
