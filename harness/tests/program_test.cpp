// Any program as a workload (harness -- PROGRAM ARGS): the pure parts
// (word splitting, PATH lookup, maps parsing and the verdict on them, static
// and setuid binaries), then real runs through the harness binary.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "measure/maps_check.h"
#include "inputs/plan.h"
#include "inputs/program.h"
#include "test_util.h"

namespace mh {
namespace {

TEST(Program, WordsSplitLikeAShellWithoutOne) {
  auto w = split_words(R"(redis-benchmark -t 'set,get' -d "64 KiB" a\ b  "x\"y")");
  ASSERT_TRUE(w);
  EXPECT_EQ(*w, (std::vector<std::string>{"redis-benchmark", "-t", "set,get", "-d", "64 KiB", "a b", "x\"y"}));
  EXPECT_FALSE(split_words("echo 'open"));
  EXPECT_TRUE(split_words("")->empty());
}

TEST(Program, FoundInPathLikeExecvp) {
  EXPECT_EQ(find_in_path("sh", "/nonexistent:/bin"), "/bin/sh");
  EXPECT_EQ(find_in_path("no-such-program-anywhere", "/bin:/usr/bin"), "");
  EXPECT_EQ(find_in_path("/bin/sh", ""), "/bin/sh");
  EXPECT_EQ(find_in_path("/etc/passwd", ""), "");  // not executable
}

TEST(Program, SettingsAreCheckedBeforeAnythingRuns) {
  std::string error;
  EXPECT_FALSE(program_from_json(Json{{"command", {"no-such-program-anywhere"}}}, error));
  EXPECT_NE(error.find("'no-such-program-anywhere' not found"), std::string::npos) << error;
  EXPECT_FALSE(program_from_json(Json{{"command", {"true"}}, {"mark_on_output", {"a(b"}}}, error));
  EXPECT_NE(error.find("a(b"), std::string::npos) << error;
  EXPECT_FALSE(program_from_json(Json{{"command", {"true"}}, {"env", {"LD_PRELOAD=/x.so"}}}, error));
  EXPECT_NE(error.find("--allocator"), std::string::npos) << error;
  EXPECT_FALSE(program_from_json(Json{{"command", {"true"}}, {"load", "true"}}, error));
  EXPECT_NE(error.find("--ready"), std::string::npos) << error;
  EXPECT_FALSE(program_from_json(Json{{"command", {"true"}}, {"colour", "red"}}, error));
  EXPECT_NE(error.find("unknown key 'colour'"), std::string::npos) << error;
  auto p = program_from_json(Json{{"command", {"sh", "-c", "true"}}, {"mark_on_output", {"^ready=up", "a=b=c"}},
                                  {"mark_at", {"250", "1000=one-second"}}},
                             error);
  ASSERT_TRUE(p) << error;
  EXPECT_EQ(p->name, "sh");
  EXPECT_EQ(p->output_marks[0].regex, "^ready");
  EXPECT_EQ(p->output_marks[0].name, "up");
  EXPECT_EQ(p->output_marks[1].regex, "a=b");
  EXPECT_EQ(p->timed_marks[0].name, "at-250ms");
  EXPECT_EQ(p->timed_marks[1].name, "one-second");
}

TEST(MapsCheck, MappedFilesInOrder) {
  auto files = mapped_files(
      "559cc10d2000-559cc10d4000 r--p 00000000 fe:00 247134                     /usr/bin/cat\n"
      "559cc4790000-559cc47b1000 rw-p 00000000 00:00 0                          [heap]\n"
      "7f5e4f35d000-7f5e4f37f000 rw-p 00000000 00:00 0 \n"
      "7f5e4f3e0000-7f5e4f406000 r--p 00000000 fe:00 332835                     /usr/lib/libjemalloc.so.2\n"
      "7f5e4f3e0000-7f5e4f406000 r--p 00000000 fe:00 332835                     /usr/lib/libc.so.6\n"
      "7f5e4f406000-7f5e4f55c000 r-xp 00026000 fe:00 332835                     /usr/lib/libc.so.6\n"
      "7f5e4f406000-7f5e4f55c000 r-xp 00026000 fe:00 332835                     /tmp/my lib.so (deleted)\n");
  EXPECT_EQ(files, (std::vector<std::string>{"/usr/bin/cat", "/usr/lib/libjemalloc.so.2", "/usr/lib/libc.so.6",
                                             "/tmp/my lib.so"}));
}

bool defines_if_allocator(const std::string& f) {
  return f.find("libc.so") != std::string::npos || f.find("jemalloc") != std::string::npos ||
         f.find("own-malloc") != std::string::npos;
}

TEST(MapsCheck, VerdictOnThePreloadAndOnGlibc) {
  const std::string cat = "/usr/bin/cat", je = "/usr/lib/libjemalloc.so.2", libc = "/usr/lib/libc.so.6";
  auto v = judge_maps({cat, "/usr/lib/ld-linux-x86-64.so.2"}, cat, je, defines_if_allocator);
  EXPECT_FALSE(v.loaded);
  v = judge_maps({cat, je, libc}, cat, je, defines_if_allocator);
  EXPECT_TRUE(v.verified);
  EXPECT_EQ(v.served_by, je);
  v = judge_maps({cat, libc}, cat, je, defines_if_allocator);
  EXPECT_FALSE(v.verified);
  EXPECT_NE(v.reason.find("LD_PRELOAD was not honoured"), std::string::npos) << v.reason;
  v = judge_maps({cat, libc}, cat, "", defines_if_allocator);
  EXPECT_TRUE(v.verified);
  EXPECT_EQ(v.served_by, libc);
  v = judge_maps({cat, je, libc}, cat, "", defines_if_allocator);  // glibc asked, jemalloc linked in
  EXPECT_FALSE(v.verified);
  EXPECT_NE(v.reason.find(je), std::string::npos) << v.reason;
  v = judge_maps({"/bin/own-malloc", je, libc}, "/bin/own-malloc", je, defines_if_allocator);
  EXPECT_FALSE(v.verified);
  EXPECT_NE(v.reason.find("defines malloc itself"), std::string::npos) << v.reason;
}

TEST(MapsCheck, PythonsHeapIsNamedByTheInterpreterOrAMappedLibpython) {
  const std::string libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  EXPECT_EQ(other_heaps({"/usr/bin/python3.11", libc}, "/usr/bin/python3.11"), std::vector<std::string>{"pymalloc"});
  EXPECT_EQ(other_heaps({"/opt/app", "/usr/lib/libpython3.12.so.1.0", libc}, "/opt/app"),
            std::vector<std::string>{"pymalloc"});
  EXPECT_EQ(other_heaps({"/opt/app", "/usr/lib/libpython3.12d.so", libc}, "/opt/app"),
            std::vector<std::string>{"pymalloc"});
  EXPECT_TRUE(other_heaps({"/usr/bin/sort", libc}, "/usr/bin/sort").empty());
  // A name that only starts like one is not Python.
  EXPECT_TRUE(other_heaps({"/usr/bin/pythonista-helper", "/usr/lib/libpythonista.so", libc}, "/usr/bin/pythonista-helper")
                  .empty());
}

TEST(Program, StaticAndSetuidBinariesCannotTakeAPreload) {
  EXPECT_EQ(preload_obstacle("/bin/true"), "");
#ifdef STATIC_PROGRAM
  EXPECT_NE(preload_obstacle(STATIC_PROGRAM).find("static binary"), std::string::npos);
#endif
  if (geteuid() != 0) GTEST_SKIP() << "making a setuid file of another user needs root";
  const std::string copy = test::scratch("setuid-true");
  std::filesystem::copy_file("/bin/true", copy);
  ASSERT_EQ(chown(copy.c_str(), 65534, 65534), 0);
  ASSERT_EQ(chmod(copy.c_str(), 04755), 0);
  EXPECT_NE(preload_obstacle(copy).find("setuid"), std::string::npos) << preload_obstacle(copy);
  std::filesystem::remove(copy);
}

// Real runs through the harness binary.
struct ProgramRun {
  Captured result;
  Json report;
  const Json& run(size_t i = 0) const { return report["runs"][i]; }
};

ProgramRun run_program(const std::string& name, std::vector<std::string> args) {
  ProgramRun r;
  const std::string out = test::scratch(name + ".json");
  args.insert(args.begin(), {"--runs", "1", "--quiet", "--out", out});
  r.result = test::run_harness(args);
  if (std::filesystem::exists(out)) r.report = test::load_json(out);
  return r;
}

TEST(ProgramRun, TrueIsMeasuredAndVerifiedByItsMaps) {
  // /bin/true lives about a millisecond: held at its entry point, it still
  // has its maps read and one sample taken.
  auto r = run_program("true", {"-a", "glibc", "-a", "jemalloc", "--", "true"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.out << r.result.err;
  ASSERT_EQ(r.report["runs"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const Json& run = r.run(i);
    EXPECT_EQ(run["workload"], "true");
    EXPECT_EQ(run["status"], "ok") << run["exit"].dump();
    EXPECT_EQ(run["allocator"]["verified_by"], "maps");
    EXPECT_EQ(run["allocator"]["verified"], true);
    EXPECT_GE(run["samples"]["rss_kb"].size(), 1u);
    EXPECT_GT(run["metrics"]["peak_rss_kb"].get<int64_t>(), 0);
    EXPECT_EQ(run["params"]["command"], Json({"true"}));
    EXPECT_EQ(run["params"]["stdin"], "/dev/null");
  }
  EXPECT_NE(r.run(0)["allocator"]["served_by"].get<std::string>().find("libc.so"), std::string::npos);
  EXPECT_NE(r.run(1)["allocator"]["served_by"].get<std::string>().find("libjemalloc"), std::string::npos);
}

TEST(ProgramRun, AWorkloadSaysItWasVerifiedByTheProbe) {
  auto r = run_program("probe", {"-a", "glibc", "--workload", "churn-threads", "--smoke"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  EXPECT_EQ(r.run()["allocator"]["verified_by"], "probe");
  EXPECT_EQ(r.run()["curve_info"]["after"]["chosen_by"], "the workload's idle mark");
}

TEST(ProgramRun, NotFoundIsBadInputNamingIt) {
  const std::string out = test::scratch("not-found.json");
  auto c = test::run_harness({"-a", "glibc", "--out", out, "--", "no-such-program-anywhere", "x"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("'no-such-program-anywhere' not found in PATH"), std::string::npos) << c.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(ProgramRun, ANonZeroExitIsAFailedRunWithItsOutput) {
  auto r = run_program("exit3", {"-a", "glibc", "--", "sh", "-c", "echo about to fail; exit 3"});
  EXPECT_EQ(r.result.exit_code, 1);
  EXPECT_EQ(r.run()["status"], "failed");
  EXPECT_EQ(r.run()["exit"]["code"], 3);
  EXPECT_EQ(r.run()["exit"]["error"], "exited with status 3");
  EXPECT_EQ(r.run()["output_tail"], "about to fail\n");
  // ... and ok when that status is the one expected.
  r = run_program("exit3-expected", {"-a", "glibc", "--expect-exit", "3", "--", "sh", "-c", "exit 3"});
  EXPECT_EQ(r.result.exit_code, 0) << r.result.out;
  EXPECT_EQ(r.run()["status"], "ok");
}

TEST(ProgramRun, NameCwdEnvAndStdinReachTheProgram) {
  const std::string in = test::scratch("stdin.txt");
  std::ofstream(in) << "from stdin\n";
  auto r = run_program("settings", {"-a", "glibc", "--name", "shell", "--cwd", "/tmp", "--env", "GREETING=hello",
                                    "--stdin", in, "--", "sh", "-c", "pwd; echo $GREETING; cat"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err << r.result.out;
  EXPECT_EQ(r.run()["workload"], "shell");
  EXPECT_EQ(r.run()["output_tail"], "/tmp\nhello\nfrom stdin\n");
  EXPECT_EQ(r.run()["params"]["env"]["GREETING"], "hello");
  EXPECT_EQ(r.run()["params"]["cwd"], "/tmp");
  EXPECT_NE(r.result.out.find("shell"), std::string::npos);
  // Without --stdin the program reads /dev/null, not the harness's input.
  r = run_program("devnull", {"-a", "glibc", "--", "sh", "-c", "cat; echo end"});
  EXPECT_EQ(r.run()["output_tail"], "end\n");
}

TEST(ProgramRun, AProgramThatDropsThePreloadIsNotVerified) {
  // env execs sleep without LD_PRELOAD: the same process, no jemalloc mapped any more.
  auto r = run_program("dropped", {"-a", "jemalloc", "--", "env", "-u", "LD_PRELOAD", "sleep", "1.3"});
  EXPECT_EQ(r.result.exit_code, 1);
  EXPECT_EQ(r.run()["status"], "failed");
  EXPECT_EQ(r.run()["allocator"]["verified"], false);
  EXPECT_NE(r.run()["exit"]["error"].get<std::string>().find("LD_PRELOAD was not honoured"), std::string::npos)
      << r.run()["exit"].dump();
}

#ifdef STATIC_PROGRAM
TEST(ProgramRun, AStaticBinaryIsAFailedRunSayingWhy) {
  auto r = run_program("static", {"-a", "glibc", "-a", "jemalloc", "--", STATIC_PROGRAM});
  EXPECT_EQ(r.result.exit_code, 1);
  for (const auto& run : r.report["runs"]) {
    EXPECT_EQ(run["status"], "failed");
    EXPECT_EQ(run["allocator"]["verified"], false);
    EXPECT_NE(run["exit"]["error"].get<std::string>().find("allocator not verified"), std::string::npos);
    EXPECT_NE(run["exit"]["error"].get<std::string>().find("static binary"), std::string::npos);
  }
}
#endif

}  // namespace
}  // namespace mh

namespace mh {
namespace {

TEST(ProgramRun, MarksOnOutputAndAtFixedTimes) {
  auto r = run_program("marks", {"-a", "glibc", "--mark-on-output", "^phase (one|two)$", "--mark-on-output",
                                 "all done=finished", "--mark-at", "150=early", "--mark-at", "300", "--", "sh", "-c",
                                 "echo phase one; sleep 0.2; echo phase two; sleep 0.2; echo all done"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  std::vector<std::string> names;
  std::map<std::string, double> at;
  for (const auto& m : r.run()["marks"]) {
    names.push_back(m["name"]);
    at[m["name"]] = m["t_ms"];
    EXPECT_GT(m["sample"]["rss_kb"].get<int64_t>(), 0);  // sampled when the line came
  }
  EXPECT_EQ(names, (std::vector<std::string>{"^phase (one|two)$", "early", "^phase (one|two)$", "at-300ms", "finished"}));
  EXPECT_NEAR(at["early"], 150, 40);
  EXPECT_NEAR(at["at-300ms"], 300, 40);
  EXPECT_GT(at["finished"], 380);
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

TEST(ProgramRun, MarksThroughTheCHeader) {
  auto r = run_program("c-marks", {"-a", "glibc", "--", MARK_CLIENT});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err << r.result.out;
  const Json& marks = r.run()["marks"];
  ASSERT_EQ(marks.size(), 2u) << marks.dump();
  EXPECT_EQ(marks[0]["name"], "allocated");
  EXPECT_EQ(marks[1]["name"], "freed \"quoted\"");
  // Sampled while the program waited: 64 MiB resident, then given back.
  EXPECT_GT(marks[0]["sample"]["rss_kb"].get<int64_t>(), 65536);
  EXPECT_LT(marks[1]["sample"]["rss_kb"].get<int64_t>(), 16384);
  EXPECT_EQ(r.run()["metrics"]["workload"]["marks_answered"]["value"], 2);
  EXPECT_EQ(r.run()["output_tail"], "0 0\n");
  // Without the harness the calls do nothing.
  auto alone = run_capture({MARK_CLIENT});
  EXPECT_EQ(alone.exit_code, 0);
  EXPECT_EQ(alone.out, "-1 -1\n");
}

TEST(ProgramRun, MarksThroughThePythonModule) {
  const std::string script =
      "import memharness_mark as m\n"
      "x = bytearray(64 << 20)\n"
      "ok = m.mark('allocated')\n"
      "del x\n"
      "ok = m.mark('freed') and ok\n"
      "m.metric('answered', 1 if ok else 0)\n"
      "print(ok)\n";
  auto r = run_program("py-marks", {"-a", "glibc", "--env", std::string("PYTHONPATH=") + PYTHON_MARK_DIR, "--",
                                    "/usr/bin/python3", "-c", script});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err << r.result.out;
  const Json& marks = r.run()["marks"];
  ASSERT_EQ(marks.size(), 2u) << marks.dump() << r.run()["output_tail"];
  EXPECT_EQ(marks[0]["name"], "allocated");
  EXPECT_GT(marks[0]["sample"]["rss_kb"].get<int64_t>(), 65536);
  EXPECT_LT(marks[1]["sample"]["rss_kb"].get<int64_t>(), marks[0]["sample"]["rss_kb"].get<int64_t>() - 60000);
  EXPECT_EQ(r.run()["metrics"]["workload"]["answered"]["value"], 1);
  auto alone = run_capture({"/usr/bin/env", std::string("PYTHONPATH=") + PYTHON_MARK_DIR, "/usr/bin/python3", "-c", script});
  EXPECT_EQ(alone.out, "False\n") << alone.err;
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

TEST(ProgramSuite, CommandEntriesBesideWorkloadEntries) {
  const std::string path = test::scratch("suites.json");
  std::ofstream(path) << R"({"suites": {"mixed": {"runs": [
      {"workload": "micro", "args": ["--smoke"]},
      {"command": ["sort", "-r"], "name": "sort-back", "stdin": "/etc/passwd"}]}}})";
  std::string error;
  auto s = load_suite(path, "mixed", error);
  ASSERT_TRUE(s) << error;
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].workload, "micro");
  EXPECT_TRUE((*s)[0].command.is_null());
  EXPECT_EQ((*s)[1].command["name"], "sort-back");
  auto p = program_from_json((*s)[1].command, error);
  ASSERT_TRUE(p) << error;
  EXPECT_EQ(p->argv, (std::vector<std::string>{"sort", "-r"}));
}

TEST(ProgramSuite, TheAppsSuiteAtSmokeSize) {
  // jemalloc: Debian's redis-server links libjemalloc, so under glibc it would
  // be (rightly) not verified; the suite leaves that run out (not_under).
  auto r = run_program("apps-smoke", {"-a", "jemalloc", "--suite", "apps-smoke"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err << r.result.out;
  std::vector<std::string> names;
  for (const auto& run : r.report["runs"]) {
    names.push_back(run["workload"]);
    EXPECT_EQ(run["status"], "ok") << run["exit"].dump() << run["output_tail"];
    EXPECT_EQ(run["allocator"]["verified_by"], "maps");
    for (const auto& arg : run["params"]["command"]) EXPECT_EQ(arg.get<std::string>().find("{share}"), std::string::npos);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"redis", "python-stdlib", "sqlite3", "gxx", "git-gc", "sort"}));
  // g++ is a driver: its compiler cc1plus, a child, is in its samples.
  EXPECT_GE(r.run(3)["sampler"]["processes_max"].get<int64_t>(), 2);
  EXPECT_GT(r.run(3)["metrics"]["peak_rss_kb"].get<int64_t>(), 50000);
  // git gc and sort read inputs their set-up made, unmeasured, in the run's folder.
  for (size_t i : {4, 5}) {
    EXPECT_EQ(r.run(i)["data"]["setup"]["exit_code"], 0) << r.run(i)["data"].dump();
    EXPECT_EQ(r.run(i)["params"]["setup"][1].get<std::string>().find("{share}"), std::string::npos);
  }
  const Json& redis = r.run(0);
  EXPECT_EQ(redis["curve_info"]["after"]["mark"], "load-end");
  EXPECT_GT(redis["metrics"]["workload"]["set_rps"]["value"].get<double>(), 0);
  EXPECT_GT(redis["metrics"]["workload"]["get_rps"]["value"].get<double>(), 0);
}

TEST(ProgramCompare, ACommandComparedUnderTwoPins) {
  const std::string out = test::scratch("compare-true.json");
  auto c = test::run_harness({"compare", "--baseline", "glibc", "--candidate", "jemalloc", "-n", "2", "-q", "-o", out,
                              "--", "true"});
  ASSERT_NE(c.exit_code, 2) << c.err;
  Json comparison = test::load_json(out);
  Json runs = test::load_json(out.substr(0, out.size() - 5) + "-runs.json");
  ASSERT_EQ(runs["runs"].size(), 6u);
  std::map<std::string, int> roles;
  for (const auto& run : runs["runs"]) {
    EXPECT_EQ(run["workload"], "true");
    EXPECT_EQ(run["status"], "ok") << run["exit"].dump();
    ++roles[run["role"]];
  }
  EXPECT_EQ(roles, (std::map<std::string, int>{{"baseline", 2}, {"baseline-again", 2}, {"candidate", 2}}));
  EXPECT_NE(c.out.find("peak_rss_kb"), std::string::npos) << c.out;
  EXPECT_NE(comparison.dump().find("\"true\""), std::string::npos);
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

// A load generator that costs: 0.4 s of CPU and 200 MiB touched (about 50000
// minor faults), then says its rate and whether it got a preload.
const char* kHeavyLoad =
    "/usr/bin/python3 -c \"import os, time; x = bytearray(200 << 20); t = time.process_time()\n"
    "while time.process_time() - t < 0.4: pass\n"
    "print('rps: 1234.5 preload=' + os.environ.get('LD_PRELOAD', 'none'))\"";

TEST(ProgramServer, ReadyByOutputThenLoadThenIdleThenStopped) {
  auto r = run_program("server-regex", {"-a", "jemalloc", "--ready", "^listening", "--load", kHeavyLoad,
                                        "--load-metric", "rps=rps: ([0-9.]+)", "--load-metric", "missing=nope ([0-9]+)",
                                        "--idle", "0.5", "--", "sh", "-c",
                                        "echo starting; sleep 0.3; echo listening now; exec sleep 30"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err << r.result.out;
  const Json& run = r.run();
  EXPECT_EQ(run["status"], "ok") << run["exit"].dump();  // stopped by SIGTERM after the idle time: not a failure
  EXPECT_EQ(run["exit"]["signal"], 15);
  std::map<std::string, double> at;
  for (const auto& m : run["marks"]) at[m["name"]] = m["t_ms"];
  ASSERT_EQ(at.size(), 3u) << run["marks"].dump();
  EXPECT_GE(at["ready"], 290);
  EXPECT_GE(at["load-start"], at["ready"]);
  EXPECT_GT(at["load-end"], at["load-start"] + 350);
  EXPECT_NEAR(run["wall_ms"].get<double>(), at["load-end"] + 500, 150);
  EXPECT_EQ(run["curve_info"]["after"]["mark"], "load-end");
  EXPECT_TRUE(run["metrics"]["curve"]["after.rss_100ms_kb"]["value"].is_number());
  EXPECT_EQ(run["metrics"]["workload"]["rps"]["value"], 1234.5);
  EXPECT_TRUE(run["metrics"]["workload"]["missing"]["value"].is_null());
  EXPECT_NE(run["metrics"]["workload"]["missing"]["reason"].get<std::string>().find("nope"), std::string::npos);
  // The load generator ran without the allocator under test.
  EXPECT_NE(run["data"]["load"]["output_tail"].get<std::string>().find("preload=none"), std::string::npos)
      << run["data"]["load"].dump();
}

TEST(ProgramServer, TheLoadGeneratorCountsInNoneOfTheProgramsFigures) {
  // The program sleeps; the load generator burns 0.4 s of CPU and faults in
  // 200 MiB. It is the harness's child, not the program's: neither the
  // program's rusage nor its perf counters (inherit counts descendants) nor
  // its samples include it, and the report keeps its own figures apart.
  auto r = run_program("server-exclusion", {"-a", "glibc", "--ready", "^up$", "--load", kHeavyLoad, "--", "sh", "-c",
                                            "echo up; exec sleep 30"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err << r.result.out;
  const Json& run = r.run();
  const Json& m = run["metrics"];
  const Json& load = run["data"]["load"];
  EXPECT_GT(load["utime_ms"].get<double>() + load["stime_ms"].get<double>(), 350);
  EXPECT_GT(load["minflt"].get<int64_t>(), 40000);
  EXPECT_LT(m["utime_ms"].get<double>() + m["stime_ms"].get<double>(), 100);
  EXPECT_LT(m["minflt"].get<int64_t>(), 5000);
  EXPECT_LT(m["peak_rss_kb"].get<int64_t>(), 50000);
  if (!m["perf"]["task-clock"]["value"].is_number()) GTEST_SKIP() << "no perf counters here: " << m["perf"].dump();
  EXPECT_LT(m["perf"]["task-clock"]["value"].get<double>(), 100e6);  // ns
  EXPECT_LT(m["perf"]["page-faults"]["value"].get<double>(), 5000);
}

int free_port() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  return ntohs(a.sin_port);
}

TEST(ProgramServer, ReadyByPort) {
  const std::string port = std::to_string(free_port());
  auto r = run_program("server-port",
                       {"-a", "glibc", "--ready-port", port, "--idle", "0.2", "--", "/usr/bin/python3", "-c",
                        "import socket, time\ns = socket.socket()\ns.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                        "time.sleep(0.4)\ns.bind(('127.0.0.1', " + port + "))\ns.listen()\ntime.sleep(30)"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err << r.result.out;
  const Json& run = r.run();
  EXPECT_EQ(run["status"], "ok") << run["exit"].dump();
  ASSERT_EQ(run["marks"].size(), 1u) << run["marks"].dump();
  EXPECT_EQ(run["marks"][0]["name"], "ready");
  EXPECT_GE(run["marks"][0]["t_ms"].get<double>(), 400);
  EXPECT_EQ(run["curve_info"]["after"]["chosen_by"], "the last mark");  // no load: no idle mark of its own
}

TEST(ProgramServer, AnAutoPortIsEachRunsOwnAndWrittenWhereTheCommandSaysPort) {
  // The server listens on the port its argument names, the load connects to
  // the port its own argument names: both are the run's free port.
  ProgramRun r;
  const std::string out = test::scratch("server-auto-port.json");
  r.result = test::run_harness({"--runs", "2", "--quiet", "--out", out, "-a", "glibc", "--ready-port", "auto", "--env", "SERVER_PORT={port}", "--load",
                        "/usr/bin/python3 -c 'import socket, sys; socket.create_connection((\"127.0.0.1\", int(sys.argv[1])))"
                        "; print(\"connected\", sys.argv[1])' {port}",
                        "--load-metric", "port=connected ([0-9]+)", "--idle", "0.1", "--", "/usr/bin/python3", "-c",
                        "import os, socket, sys, time\nassert os.environ['SERVER_PORT'] == sys.argv[1]\n"
                        "s = socket.socket()\ns.bind(('127.0.0.1', int(sys.argv[1])))\ns.listen()\ntime.sleep(30)",
                        "{port}"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err << r.result.out;
  r.report = test::load_json(out);
  ASSERT_EQ(r.report["runs"].size(), 2u);
  std::set<int> ports;
  for (const Json& run : r.report["runs"]) {
    ASSERT_EQ(run["status"], "ok") << run["exit"].dump();
    const int port = run["data"]["port"].get<int>();
    EXPECT_EQ(run["metrics"]["workload"]["port"]["value"].get<double>(), port) << run["metrics"].dump();
    EXPECT_EQ(run["params"]["ready_port"], "auto");
    EXPECT_EQ(run["params"]["command"].back(), "{port}");
    ports.insert(port);
  }
  EXPECT_EQ(ports.size(), 2u) << "each run has a port of its own";
}

TEST(ProgramServer, APortAnotherServerHoldsFailsTheRunBeforeItStarts) {
  // Another server already listens on the program's port: the readiness check
  // and the load would reach it, so the program is not started at all.
  int other = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(other, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(other, 4), 0);
  socklen_t len = sizeof a;
  getsockname(other, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string port = std::to_string(ntohs(a.sin_port));
  const auto marker = std::filesystem::temp_directory_path() / ("mh-port-taken-" + port);
  std::filesystem::remove(marker);
  auto r = run_program("server-port-taken", {"-a", "glibc", "--ready-port", port, "--load", "true", "--", "sh", "-c",
                                             "touch " + marker.string() + "; exec sleep 30"});
  close(other);
  EXPECT_EQ(r.result.exit_code, 1);
  EXPECT_EQ(r.run()["status"], "failed");
  const std::string error = r.run()["exit"]["error"].get<std::string>();
  EXPECT_NE(error.find("127.0.0.1:" + port + " already accepts connections before the program started"),
            std::string::npos) << error;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the program was started";
  std::filesystem::remove(marker);
}

TEST(ProgramServer, NeverReadyIsAFailedRunSayingWhat) {
  auto r = run_program("server-never", {"-a", "glibc", "--ready", "^never", "--ready-timeout", "0.3", "--load", "true",
                                        "--", "sleep", "30"});
  EXPECT_EQ(r.result.exit_code, 1);
  EXPECT_EQ(r.run()["status"], "failed");
  EXPECT_NE(r.run()["exit"]["error"].get<std::string>().find("not ready after"), std::string::npos);
  EXPECT_NE(r.run()["exit"]["error"].get<std::string>().find("^never"), std::string::npos);
  EXPECT_LT(r.run()["wall_ms"].get<double>(), 5000);
}

TEST(ProgramServer, AFailingLoadGeneratorFailsTheRun) {
  auto r = run_program("server-badload", {"-a", "glibc", "--ready", "^up", "--load", "sh -c 'echo refused; exit 4'",
                                          "--", "sh", "-c", "echo up; exec sleep 30"});
  EXPECT_EQ(r.result.exit_code, 1);
  EXPECT_NE(r.run()["exit"]["error"].get<std::string>().find("exit status 4"), std::string::npos)
      << r.run()["exit"].dump();
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

TEST(ProgramRun, TheTreeCountsAChildsMemoryNoTreeDoesNot) {
  // The parent stays small while its child holds 64 MiB for half a second.
  const std::vector<std::string> program = {
      "/usr/bin/python3", "-c",
      "import os, time\n"
      "pid = os.fork()\n"
      "if pid == 0:\n"
      "    b = bytearray(64 << 20)\n"
      "    time.sleep(0.5)\n"
      "    os._exit(0)\n"
      "os.waitpid(pid, 0)\n"};
  auto with_args = [&](std::vector<std::string> args) {
    args.push_back("--");
    args.insert(args.end(), program.begin(), program.end());
    return args;
  };
  const int64_t child_kb = 64 << 10;
  auto tree = run_program("tree", with_args({"-a", "glibc"}));
  ASSERT_EQ(tree.result.exit_code, 0) << tree.result.err << tree.result.out;
  EXPECT_EQ(tree.run()["sampler"]["tree"], true);
  EXPECT_GE(tree.run()["sampler"]["processes_max"].get<int64_t>(), 2);
  EXPECT_GT(tree.run()["metrics"]["peak_rss_kb"].get<int64_t>(), child_kb);

  auto alone = run_program("no-tree", with_args({"-a", "glibc", "--no-tree"}));
  ASSERT_EQ(alone.result.exit_code, 0) << alone.result.err << alone.result.out;
  EXPECT_EQ(alone.run()["sampler"]["tree"], false);
  EXPECT_TRUE(alone.run()["sampler"]["processes_max"].is_null());
  EXPECT_EQ(alone.run()["params"]["tree"], false);
  EXPECT_LT(alone.run()["metrics"]["peak_rss_kb"].get<int64_t>(), child_kb / 2);
}

TEST(ProgramRun, ASetUpMakesTheInputsUnmeasuredWhereTheProgramRuns) {
  auto r = run_program("setup", {"-a", "glibc", "--setup", "sh -c 'sleep 0.5; echo made > input.txt'", "--", "cat",
                                 "input.txt"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err << r.result.out;
  EXPECT_EQ(r.run()["output_tail"], "made\n");
  EXPECT_GE(r.run()["data"]["setup"]["wall_ms"].get<double>(), 500);
  EXPECT_LT(r.run()["wall_ms"].get<double>(), 400);  // the set-up's half second is not in the run
  EXPECT_EQ(r.run()["params"]["setup"], Json({"sh", "-c", "sleep 0.5; echo made > input.txt"}));

  // A set-up that fails fails the run, saying so; the program never runs.
  r = run_program("setup-fails", {"-a", "glibc", "--setup", "sh -c 'echo no space >&2; exit 3'", "--", "true"});
  EXPECT_EQ(r.result.exit_code, 1);
  EXPECT_EQ(r.run()["status"], "failed");
  EXPECT_EQ(r.run()["exit"]["error"], "the set-up sh failed (exit status 3): no space\n");
  EXPECT_TRUE(r.run()["samples"]["rss_kb"].empty());

  // One that is not found is bad input, before anything runs.
  auto c = test::run_harness({"-a", "glibc", "-q", "--setup", "no-such-setup-anywhere x", "--", "true"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("set-up program 'no-such-setup-anywhere' not found in PATH"), std::string::npos) << c.err;
}

TEST(ProgramRun, ABuiltInWorkloadSamplesItsOneProcess) {
  auto r = run_program("one-process", {"-a", "glibc", "--workload", "micro", "--smoke"});
  ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
  EXPECT_EQ(r.run()["sampler"]["tree"], false);
}

TEST(ProgramRun, SampledPeakAgreesWithTimeMinusV) {
  // /usr/bin/time -v around the harness reports the largest maximum resident
  // size of the harness and its children: the program's, when it is the larger.
  if (access("/usr/bin/time", X_OK) != 0) GTEST_SKIP() << "/usr/bin/time is not installed (Debian package time)";
  const std::string out = test::scratch("time-v.json");
  auto c = run_capture({"/usr/bin/time", "-v", HARNESS_BIN, "-a", "glibc", "-n", "1", "-q", "-o", out, "--",
                        "/usr/bin/python3", "-c",
                        "import time\nx = bytearray(150 << 20)\ntime.sleep(0.1)\ndel x\ny = [str(i) for i in range(200000)]"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  auto at = c.err.find("Maximum resident set size (kbytes): ");
  ASSERT_NE(at, std::string::npos) << c.err;
  const double time_kb = std::stod(c.err.substr(at + 36));
  const double peak_kb = test::load_json(out)["runs"][0]["metrics"]["peak_rss_kb"].get<double>();
  EXPECT_NEAR(peak_kb, time_kb, 0.05 * time_kb) << "sampled " << peak_kb << " kB, time -v " << time_kb << " kB";
}

}  // namespace
}  // namespace mh

namespace mh {
namespace {

// The patterns that crashed std::regex's recursive matcher (exit 139) on a long
// line: a program that prints a 1 MiB line, then its marker. The run goes on
// and ends as the program does; the harness does not crash.
TEST(ProgramPatterns, AMebibyteLineIsMatchedOrNotNeverACrash) {
  const std::string print = "import sys; sys.stdout.write('x' * 1048576 + '\\n'); print('a b c listening', flush=True)";
  auto ready = run_program("long-line-ready", {"-a", "glibc", "--ready", "[a-z ]*listening", "--idle", "0",
                                               "--timeout", "30", "--", "python3", "-c", print});
  EXPECT_NE(ready.result.exit_code, 139) << ready.result.err;
  ASSERT_TRUE(ready.report.is_object()) << ready.result.err;
  auto marks = run_program("long-line-marks", {"-a", "glibc", "--mark-on-output", "(x|y)+z=never",
                                               "--mark-on-output", "(a|b)*c=abc", "--", "python3", "-c", print});
  ASSERT_EQ(marks.result.exit_code, 0) << marks.result.err;
  std::vector<std::string> names;
  for (const auto& m : marks.run(0)["marks"]) names.push_back(m["name"]);
  EXPECT_EQ(std::count(names.begin(), names.end(), "abc"), 1) << marks.run(0)["marks"].dump();
  EXPECT_EQ(std::count(names.begin(), names.end(), "never"), 0);
}

}  // namespace
}  // namespace mh
