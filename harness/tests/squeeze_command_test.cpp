// harness squeeze's table and question, read back from a finished squeeze:
// a band's row says its cost and what a lower --threshold asks, and a squeeze
// of another threshold is another question.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sys/cgroup.h"
#include "test_util.h"

namespace mh {
namespace {

namespace fs = std::filesystem;

// burst-writefile under glibc judged on workload.burst_ms at 5%: every probe
// from 113 to 199 MB on the threshold (3.7 to 6.6% within rounds after 20
// rounds), the search done with its band (a measured squeeze, its runs left out).
const std::string kBand = std::string(FIXTURE_DIR) + "/squeeze-band.json";

std::vector<std::string> band_args(const std::string& out, const std::string& threshold) {
  return {"squeeze", "-a", "glibc", "-w", "burst-writefile", "--calls", "100", "--size", "1M",
          "--metric", "workload.burst_ms", "--threshold", threshold, "-o", out};
}

bool no_memory_group() { return cgroup::own_dir("memory").empty() && !cgroup::v2_memory_why_not().empty(); }

// A squeeze refuses to start without a memory cgroup: these skip there.
class SqueezeCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (no_memory_group()) GTEST_SKIP() << "no memory cgroup can be made here: a squeeze refuses to start";
  }
};

// The band's squeeze copied into the scratch folder as `name`, and the
// harness resuming it at `threshold` percent.
Captured resume_band(const std::string& name, const std::string& threshold, std::string& out) {
  out = test::scratch(name);
  fs::copy_file(kBand, out, fs::copy_options::overwrite_existing);
  return test::run_harness(band_args(out, threshold), 60);
}

TEST_F(SqueezeCommand, ABandWiderThanTheWidthSaysItsCostAndWhatALowerThresholdAsks) {
  std::string out;
  const auto r = resume_band("squeeze-band.json", "5", out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("resuming " + out), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("the cost sits on the threshold from 113.2 to 199.2 MB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("its cost there is 3.7 to 6.6%: a --threshold below that asks where the cost begins"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("workload.burst_ms within 5% of unlimited"), std::string::npos) << r.out;
  // Nothing was run: the finished search's probes are as they were.
  const Json before = test::load_json(kBand), after = test::load_json(out);
  EXPECT_EQ(after["results"][0]["probes"], before["results"][0]["probes"]);
  const Json band = after["results"][0]["on_threshold_change"];
  ASSERT_TRUE(band.is_array()) << after["results"][0].dump();
  EXPECT_NEAR(band[0].get<double>(), 0.037064, 1e-6);  // the least change of the six on the threshold
  EXPECT_NEAR(band[1].get<double>(), 0.065848, 1e-6);  // the most
}

TEST_F(SqueezeCommand, ALimitNeverReachedIsMarkedInTheTable) {
  std::string out;
  const auto reached = resume_band("squeeze-band-reached.json", "5", out);
  ASSERT_EQ(reached.exit_code, 0) << reached.err;
  EXPECT_NE(reached.out.find("glibc            208           108-208"), std::string::npos) << reached.out;
  // The same search had its limit, 208 MB, never reached (no limit event).
  Json j = test::load_json(out);
  for (auto& p : j["results"][0]["probes"])
    if (p["limit_bytes"] == j["results"][0]["limit_bytes"]) p["never_reached"] = true;
  std::ofstream(out) << j.dump();
  const auto never = test::run_harness(band_args(out, "5"), 60);
  ASSERT_EQ(never.exit_code, 0) << never.err;
  EXPECT_NE(never.out.find("glibc           208*           108-208"), std::string::npos) << never.out;
  EXPECT_NE(never.out.find("* never reached: no limited run had a limit event"), std::string::npos) << never.out;
  EXPECT_TRUE(test::load_json(out)["results"][0]["limit_never_reached"].get<bool>());
}

TEST_F(SqueezeCommand, AnotherThresholdIsAnotherQuestion) {
  std::string out;
  const auto r = resume_band("squeeze-band-10.json", "10", out);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is the squeeze of another question"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"threshold\":0.05"), std::string::npos) << r.err;
  EXPECT_EQ(test::slurp(out), test::slurp(kBand)) << "a refused squeeze leaves the file as it was";
}

}  // namespace
}  // namespace mh
