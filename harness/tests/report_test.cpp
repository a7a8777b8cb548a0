// The report writer on fake records: fields, nulls, canonical text, atomic write.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "report/report_json.h"
#include "sys/output_file.h"
#include "test_util.h"

namespace mh {
namespace {

RunRecord fake_run(int rep) {
  RunRecord r;
  r.workload = "burst-writefile";
  r.params = Json{{"calls", 3}};
  r.allocator.name = r.allocator.family = "glibc";
  r.allocator.verified = true;
  r.repetition = rep;
  r.status = Status::Ok;
  r.exit.code = 0;
  for (int i = 0; i < 4; ++i) {
    Sample s;
    s.t_ms = i * 10.0;
    s.rss_kb = 1000 + i * 100;
    s.minflt = i;
    r.samples.push_back(s);
  }
  r.marks.push_back(Mark{15.5, "start", r.samples[1], 1310, true, {}, {}});
  r.peak_rss_kb = 1300;
  r.final_rss_kb = 1200;
  r.hwm_kb.value = 1310;
  r.perf["task-clock"].value = 12345;
  r.perf["cycles"].reason = "not supported on this machine";
  r.workload_metrics["calls"].value = 3;
  r.threads.push_back(ThreadStat{42, "pool-0", 100, 20, 3, 1});
  return r;
}

Json context() { return Json{{"date", "2026-01-01T00:00:00Z"}, {"host", "h"}}; }

TEST(Report, TopLevelShape) {
  Json j = make_report(context(), {fake_run(1), fake_run(2)});
  EXPECT_EQ(j["schema"], "memharness.report/1");
  EXPECT_EQ(j["context"]["host"], "h");
  ASSERT_EQ(j["runs"].size(), 2u);
  ASSERT_EQ(j["summary"].size(), 1u);
  EXPECT_EQ(j["summary"][0]["runs_ok"], 2);
  EXPECT_EQ(j["summary"][0]["metrics"]["peak_rss_kb"]["median"], 1300);
}

TEST(Report, SamplesAreColumnsOfEqualLength) {
  Json run = run_to_json(fake_run(1));
  for (const auto& c : sample_columns()) {
    ASSERT_TRUE(run["samples"].contains(c.name)) << c.name;
    EXPECT_EQ(run["samples"][c.name].size(), 4u) << c.name;
  }
  EXPECT_EQ(run["samples"]["rss_kb"][3], 1300);
}

TEST(Report, UnmeasuredIsNullWithAReasonNeverZero) {
  Json m = run_to_json(fake_run(1))["metrics"];
  EXPECT_TRUE(m["perf"]["cycles"]["value"].is_null());
  EXPECT_EQ(m["perf"]["cycles"]["reason"], "not supported on this machine");
  EXPECT_EQ(m["perf"]["task-clock"]["value"], 12345);
  RunRecord r = fake_run(1);
  r.hwm_kb = Maybe{std::nullopt, "the workload did not report its VmHWM"};
  Json m2 = run_to_json(r)["metrics"];
  EXPECT_TRUE(m2["hwm_kb"].is_null());
  EXPECT_EQ(m2["hwm_kb_reason"], "the workload did not report its VmHWM");
}

TEST(Report, MarksThreadsAndAllocator) {
  Json run = run_to_json(fake_run(1));
  EXPECT_EQ(run["marks"][0]["name"], "start");
  EXPECT_EQ(run["marks"][0]["t_ms"], 15.5);
  EXPECT_EQ(run["marks"][0]["sample"]["rss_kb"], 1100);
  EXPECT_EQ(run["threads"][0]["name"], "pool-0");
  EXPECT_EQ(run["threads"][0]["wait_ns"], 20);
  EXPECT_EQ(run["allocator"]["verified"], true);
  EXPECT_EQ(run["status"], "ok");
}

TEST(Report, HeapSitesAtAMarkAreWrittenAndReadBack) {
  RunRecord r = fake_run(1);
  HeapSites h;
  h.interval_bytes = 65536;
  h.top.push_back(HeapSite{1048576.4, 2048, 16, {{"/usr/bin/prog", 0x1f3b}, {"[anonymous]", 0x7f00}}});
  h.rest = HeapSite{4096, 100, 1, {}};
  h.rest_sites = 1;
  r.marks[0].heap_sites = h;
  const Json run = run_to_json(r);
  const Json& sites = run["marks"][0]["heap_sites"];
  EXPECT_EQ(sites["top"][0]["bytes"], 1048576);
  EXPECT_EQ(sites["top"][0]["frames"][0]["offset"], "0x1f3b");
  EXPECT_EQ(sites["rest"]["sites"], 1);
  EXPECT_FALSE(sites["rest"].contains("frames"));
  const std::string what = "report";
  const RunRecord back = run_from_json(JsonIn(run, what));
  ASSERT_TRUE(back.marks[0].heap_sites);
  EXPECT_EQ(back.marks[0].heap_sites->top[0].frames[1].object, "[anonymous]");
  EXPECT_EQ(back.marks[0].heap_sites->top[0].frames[1].offset, 0x7f00u);
  EXPECT_EQ(back.marks[0].heap_sites->interval_bytes, 65536u);
  // A mark without sites has none, in the report and read back.
  EXPECT_FALSE(run_to_json(fake_run(1))["marks"][0].contains("heap_sites"));
}

TEST(Report, TheHeapSitesAtThePeakAreWrittenAndReadBackWithTheirLiveHeap) {
  RunRecord r = fake_run(1);
  EXPECT_FALSE(run_to_json(r).contains("heap_sites_peak"));
  HeapSites h;
  h.interval_bytes = 524288;
  h.top.push_back(HeapSite{67108864, 8000000, 102, {{"/usr/bin/prog", 0x2b4d}}});
  h.heap_live_bytes = 85204992;
  h.snapshots = 371;
  r.heap_sites_peak = h;
  const Json run = run_to_json(r);
  const Json& peak = run["heap_sites_peak"];
  EXPECT_EQ(peak["heap_live_bytes"], 85204992);
  EXPECT_EQ(peak["snapshots"], 371);
  EXPECT_EQ(peak["top"][0]["frames"][0]["offset"], "0x2b4d");
  // A mark's sites have no snapshot fields.
  r.marks[0].heap_sites = h;
  EXPECT_FALSE(run_to_json(r)["marks"][0]["heap_sites"].contains("snapshots"));
  const std::string what = "report";
  const RunRecord back = run_from_json(JsonIn(run, what));
  ASSERT_TRUE(back.heap_sites_peak);
  EXPECT_EQ(back.heap_sites_peak->heap_live_bytes, 85204992);
  EXPECT_EQ(back.heap_sites_peak->snapshots, 371u);
  EXPECT_EQ(back.heap_sites_peak->interval_bytes, 524288u);
  EXPECT_EQ(back.heap_sites_peak->top[0].samples, 102);
}

TEST(Report, SymbolisedFramesAndTheirObjectsAreWrittenAndReadBack) {
  RunRecord r = fake_run(1);
  HeapSites h;
  HeapFrame named("/usr/bin/prog", 0x1f3b), gone("/lib/gone.so", 0x10);
  named.function = "load(int)";
  named.file = "/src/prog.cpp";
  named.line = 42;
  named.source = "dwarf";
  gone.source = "none";
  gone.reason = "cannot open it: No such file or directory";
  h.top.push_back(HeapSite{4096, 10, 1, {named, gone}});
  r.marks[0].heap_sites = h;
  r.heap_objects["/usr/bin/prog"] = HeapObject{"0a1b2c", ""};
  r.heap_objects["/lib/gone.so"] = HeapObject{std::nullopt, "cannot open it: No such file or directory"};
  const Json run = run_to_json(r);
  const Json& frames = run["marks"][0]["heap_sites"]["top"][0]["frames"];
  EXPECT_EQ(frames[0]["function"], "load(int)");
  EXPECT_EQ(frames[0]["line"], 42);
  EXPECT_TRUE(frames[1]["function"].is_null());
  EXPECT_EQ(frames[1]["source"], "none");
  EXPECT_EQ(run["heap_objects"]["/usr/bin/prog"]["build_id"], "0a1b2c");
  EXPECT_TRUE(run["heap_objects"]["/lib/gone.so"]["build_id"].is_null());
  const std::string what = "report";
  const RunRecord back = run_from_json(JsonIn(run, what));
  const auto& f = back.marks[0].heap_sites->top[0].frames;
  EXPECT_EQ(f[0].file, "/src/prog.cpp");
  EXPECT_EQ(f[0].line, 42);
  EXPECT_EQ(f[1].reason, gone.reason);
  EXPECT_EQ(back.heap_objects.at("/usr/bin/prog").build_id, "0a1b2c");
  EXPECT_FALSE(back.heap_objects.at("/lib/gone.so").build_id);
  // A run without call sites has no table of objects.
  EXPECT_FALSE(run_to_json(fake_run(1)).contains("heap_objects"));
}

TEST(Report, CanonicalTextIsStableAndParses) {
  Json j = make_report(context(), {fake_run(1)});
  std::string a = dump_canonical(j), b = dump_canonical(Json::parse(a));
  EXPECT_EQ(a, b);
  EXPECT_NE(a.find("\"rss_kb\": [1000, 1100, 1200, 1300]"), std::string::npos) << "columns stay on one line";
}

TEST(Report, AtomicWriteReplacesTheFileAndLeavesNoTemporary) {
  std::string path = test::scratch("atomic.json");
  ASSERT_EQ(output_file::write_atomic(path, "{\"a\": 1}\n"), "");
  ASSERT_EQ(output_file::write_atomic(path, "{\"a\": 2}\n"), "");
  EXPECT_EQ(test::slurp(path), "{\"a\": 2}\n");
  for (const auto& e : std::filesystem::directory_iterator(SCRATCH_DIR))
    EXPECT_NE(e.path().string().rfind(path + ".tmp.", 0), 0u) << e.path();
}

TEST(Report, UnwritablePathIsReportedBeforeAnythingRuns) {
  EXPECT_NE(output_file::check_target("/proc/memharness/report.json"), "");
  EXPECT_NE(output_file::check_target(SCRATCH_DIR), "");  // a directory
  EXPECT_EQ(output_file::check_target(test::scratch("ok.json")), "");
}

TEST(Report, TheTextMadeRunByRunIsTheCanonicalOne) {
  Json context{{"command", "harness -w burst-writefile"}};
  std::vector<RunRecord> runs;
  EXPECT_EQ(report_text(context, runs, false), dump_canonical(make_report(context, runs, false)));
  for (int rep = 1; rep <= 3; ++rep) {
    runs.push_back(fake_run(rep));
    EXPECT_EQ(report_text(context, runs, rep == 3), dump_canonical(make_report(context, runs, rep == 3)));
  }
  EXPECT_EQ(Json::parse(report_text(context, runs, false))["complete"], false);
}

TEST(Report, UnreadableColumnsAndAnEmptyRunAreNullWithTheReason) {
  RunRecord r = fake_run(1);
  r.sampler.unreadable["anon_huge_kb"] = "cannot open /proc/1/smaps_rollup: No such file or directory";
  Json j = run_to_json(r);
  EXPECT_TRUE(j["samples"]["anon_huge_kb"].is_null());
  EXPECT_TRUE(j["marks"][0]["sample"]["anon_huge_kb"].is_null());
  EXPECT_EQ(j["sampler"]["unreadable"]["anon_huge_kb"], r.sampler.unreadable["anon_huge_kb"]);
  EXPECT_EQ(j["samples"]["rss_kb"].size(), 4u);

  RunRecord empty = fake_run(2);
  empty.samples.clear();
  Json e = run_to_json(empty);
  EXPECT_TRUE(e["metrics"]["peak_rss_kb"].is_null());
  EXPECT_FALSE(e["metrics"]["peak_rss_kb_reason"].get<std::string>().empty());
}

}  // namespace
}  // namespace mh
