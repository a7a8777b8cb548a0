// Bad input, case by case: each exits 2 before anything runs, with a message
// that names the bad value (and, where there is a list, the valid ones); no
// report is written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "report/report_json.h"
#include "sys/output_file.h"
#include "test_util.h"

namespace mh {
namespace {

namespace fs = std::filesystem;

struct Case {
  const char* name;
  std::vector<std::string> args;
  std::vector<std::string> needles;  // each must be in the message
};

// Reports to feed compare, merge and --resume: made with the report writer
// from records, so that their content is known.
std::string make_report_file(const std::string& name, const std::string& workload, const Json& plan) {
  RunRecord r;
  r.workload = workload;
  r.params = Json{{"calls", 3}};
  r.allocator.name = r.allocator.family = "glibc";
  r.allocator.verified = true;
  r.repetition = 1;
  r.status = Status::Ok;
  r.samples.push_back(Sample{});
  std::string path = test::scratch(name);
  output_file::write_atomic(path, dump_canonical(make_report(Json{{"plan", plan}}, {r})));
  return path;
}

std::string write_text(const std::string& name, const std::string& text) {
  std::string path = test::scratch(name);
  std::ofstream(path) << text;
  return path;
}

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, ExitsTwoNamingTheValue) {
  const Case& c = GetParam();
  const std::string out = test::scratch(std::string(c.name) + ".json");
  auto args = c.args;
  // Where the command would write a report, a path that must stay absent.
  if (std::find(args.begin(), args.end(), "--out") == args.end() && !args.empty() && args[0] != "merge" &&
      args[0] != "bisect")
    args.insert(args.end(), {"--out", out});
  auto r = test::run_harness(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  for (const auto& n : c.needles) EXPECT_NE(r.err.find(n), std::string::npos) << "missing '" << n << "' in: " << r.err;
  EXPECT_FALSE(fs::exists(out)) << "a report was written";
}

std::vector<Case> cases() {
  const std::string truncated = write_text("truncated.json", "{\"schema\": \"memharness.report/1\", \"runs\": [");
  const std::string not_json = write_text("not-json.txt", "peak RSS 480 MB\n");
  const std::string other_schema = write_text("schema2.json", "{\"schema\": \"memharness.report/2\", \"runs\": []}");
  const std::string burst = make_report_file("burst.json", "burst-writefile", Json::object());
  const std::string chain = make_report_file("chain.json", "chain-writefile", Json::object());
  const std::string foreign_plan = make_report_file("foreign.json", "burst-writefile", Json{{"rounds", 9}});
  const std::string not_allocator = "/usr/lib/x86_64-linux-gnu/libz.so.1";
  return {
      {"runs-not-a-number", {"-w", "burst-writefile", "--runs", "three"}, {"three"}},
      {"runs-zero", {"-w", "burst-writefile", "--runs", "0"}, {"0"}},
      {"sample-ms-too-small", {"-w", "burst-writefile", "--sample-ms", "0.5"}, {"0.5"}},
      {"timeout-negative", {"-w", "burst-writefile", "--timeout", "-1"}, {"-1"}},
      {"smaps-ms-negative", {"-w", "burst-writefile", "--smaps-ms", "-5"}, {"-5"}},
      {"unknown-workload", {"-w", "nosuch"}, {"nosuch", "burst-writefile"}},
      {"unknown-suite", {"--suite", "nightly"}, {"nightly", "quick"}},
      {"workload-and-suite", {"-w", "burst-writefile", "--suite", "quick"}, {"--suite"}},
      {"shard-past-the-end", {"--suite", "quick", "--shard", "3/2"}, {"3/2"}},
      {"shard-not-a-fraction", {"--suite", "quick", "--shard", "x"}, {"x"}},
      {"unknown-allocator", {"-w", "burst-writefile", "-a", "nosuch"}, {"nosuch", "jemalloc"}},
      {"allocator-twice", {"-w", "burst-writefile", "-a", "glibc", "-a", "glibc"}, {"glibc", "twice"}},
      {"allocator-missing-file", {"-w", "burst-writefile", "-a", "mine=/nonexistent/libmine.so"},
       {"/nonexistent/libmine.so"}},
      {"allocator-not-a-library", {"-w", "burst-writefile", "-a", "mine=/etc/passwd"}, {"/etc/passwd", "ELF"}},
      {"allocator-not-an-allocator", {"-w", "burst-writefile", "-a", "z=" + not_allocator},
       {not_allocator, "not an allocator", "malloc"}},
      {"parameter-out-of-range", {"-w", "burst-writefile", "--calls", "0"}, {"calls", "0"}},
      {"parameter-not-a-number", {"-w", "burst-writefile", "--calls", "many"}, {"many"}},
      {"unknown-parameter", {"-w", "burst-writefile", "--callz", "3"}, {"--callz", "--calls"}},
      {"memory-limit-not-a-size", {"-w", "burst-writefile", "--memory-limit", "lots"}, {"lots", "512M"}},
      {"memory-limit-zero", {"-w", "burst-writefile", "--memory-limit", "0"}, {"--memory-limit 0"}},
      {"unwritable-out", {"-w", "burst-writefile", "--out", "/proc/version/report.json"}, {"/proc/version"}},
      {"resume-missing-report", {"-w", "burst-writefile", "--resume", "/nonexistent/r.json"}, {"/nonexistent/r.json"}},
      {"resume-another-command", {"-w", "burst-writefile", "--smoke", "--resume", foreign_plan},
       {foreign_plan, "another command"}},
      {"compare-missing-report", {"compare", "/nonexistent/a.json", burst}, {"/nonexistent/a.json"}},
      {"compare-truncated-report", {"compare", truncated, burst}, {truncated, "not JSON"}},
      {"compare-not-json", {"compare", not_json, burst}, {not_json, "not JSON"}},
      {"compare-other-schema", {"compare", other_schema, burst}, {"memharness.report/2", "memharness.report/1"}},
      {"compare-different-workloads", {"compare", burst, chain}, {"burst-writefile", "chain-writefile"}},
      {"compare-unwritable-markdown",
       {"compare", "--baseline", "glibc", "--candidate", "jemalloc", "-w", "burst-writefile", "--smoke", "--export-markdown",
        "/proc/version/table.md"},
       {"--export-markdown", "/proc/version"}},
      {"compare-alpha-out-of-range", {"compare", "--alpha", "2", burst, burst}, {"2"}},
      {"compare-runs-neither-number-nor-auto", {"compare", "--runs", "often", burst, burst}, {"often", "auto"}},
      {"compare-max-runs-below-the-first-look", {"compare", "--runs", "auto", "--max-runs", "3", burst, burst},
       {"3", "5 to 10000"}},
      {"sweep-unknown-preset", {"sweep", "--preset", "fast", "-w", "idle-return", "--smoke"}, {"'fast'", "scav-purge"}},
      {"sweep-not-a-grid", {"sweep", "-a", "scav", "-w", "idle-return", "--smoke"}, {"'scav' is not a grid"}},
      {"sweep-three-options",
       {"sweep", "-a", "jemalloc:narenas=1|2,tcache=true|false,dirty_decay_ms=0|10", "-w", "idle-return"},
       {"varies 3 options"}},
      {"sweep-unknown-metric", {"sweep", "--preset", "scav-purge", "--x", "area", "-w", "idle-return", "--smoke"},
       {"area", "rss_area_mb_s"}},
      {"sweep-unknown-option", {"sweep", "-a", "scav:purge_delay=1|2", "-w", "idle-return", "--smoke"},
       {"purge_delay", "purge_delay_ms"}},
      {"squeeze-given-a-limit", {"squeeze", "-w", "burst-writefile", "--smoke", "--memory-limit", "100M"},
       {"--memory-limit", "what squeeze searches"}},
      {"squeeze-unknown-metric", {"squeeze", "-w", "burst-writefile", "--smoke", "--metric", "speed"},
       {"speed", "wall_ms", "workload.NAME"}},
      {"ready-port-a-word", {"-a", "glibc", "--ready-port", "soon", "--", "true"}, {"soon", "auto", "{port}"}},
      {"ready-port-out-of-range", {"-a", "glibc", "--ready-port", "70000", "--", "true"}, {"70000", "65535", "auto"}},
      {"squeeze-width-out-of-range", {"squeeze", "-w", "burst-writefile", "--smoke", "--width", "2"}, {"2"}},
      {"squeeze-threshold-out-of-range", {"squeeze", "-w", "burst-writefile", "--smoke", "--threshold", "0"},
       {"--threshold", "0"}},
      {"squeeze-metric-without-direction", {"squeeze", "-w", "burst-writefile", "--smoke", "--metric", "majflt"},
       {"majflt", "no direction"}},
      {"bisect-unknown-pin", {"bisect", "--pin", "nosuch", "--good", "HEAD~1", "--bad", "HEAD", "-w", "idle-return"},
       {"nosuch", "scav"}},
      {"bisect-same-commit", {"bisect", "--pin", "scav", "--good", "HEAD", "--bad", "HEAD", "-w", "idle-return"},
       {"the same commit"}},
      {"bisect-unknown-revision",
       {"bisect", "--pin", "scav", "--good", "nosuchrev", "--bad", "HEAD", "-w", "idle-return"},
       {"--good", "'nosuchrev'"}},
      {"bisect-metric-without-direction",
       {"bisect", "--pin", "scav", "--good", "HEAD~1", "--bad", "HEAD", "--metric", "majflt", "-w", "idle-return"},
       {"majflt", "no direction"}},
      {"compare-without-candidate", {"compare", "--baseline", "glibc", "-w", "burst-writefile"}, {"--candidate"}},
      {"compare-missing-thresholds", {"compare", "--thresholds", "/nonexistent/t.json", burst, burst},
       {"/nonexistent/t.json"}},
      {"merge-not-json", {"merge", not_json, burst, "-o", test::scratch("merged.json")}, {not_json}},
  };
}

INSTANTIATE_TEST_SUITE_P(Cases, BadInput, ::testing::ValuesIn(cases()),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace mh
