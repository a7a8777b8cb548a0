// Pins file and scav builds per revision (see pins.h).
#include "pins.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "record.h"
#include "spawn.h"

namespace mh {

namespace fs = std::filesystem;

std::optional<std::string> lookup_pin(const std::string& pins_file, const std::string& name) {
  std::ifstream in(pins_file);
  if (!in) return std::nullopt;
  Json j = Json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.contains("pins") || !j["pins"].contains(name) || !j["pins"][name].is_string())
    return std::nullopt;
  return j["pins"][name].get<std::string>();
}

bool is_scav_revision(const std::string& spec) { return spec.rfind("scav@", 0) == 0 && spec.size() > 5; }

std::optional<std::string> build_scav_at(const std::string& source, const std::string& rev, std::string& error) {
  auto tail = [](std::string s) { return s.size() > 2000 ? s.substr(s.size() - 2000) : s; };
  auto git = run_capture({"/usr/bin/git", "-C", source, "rev-parse", "--verify", "--quiet", rev + "^{commit}"},
                         kGitTimeoutS);
  if (git.timed_out) {
    error = "git rev-parse in " + source + " did not finish within " + std::to_string(int(kGitTimeoutS)) + " s";
    return std::nullopt;
  }
  if (git.exit_code != 0) {
    error = "unknown revision '" + rev + "' in " + source + " (scav@REV takes a commit, branch or tag of this repository)";
    return std::nullopt;
  }
  std::string sha = git.out.substr(0, git.out.find('\n'));
  fs::path cache = fs::path(source) / "build" / "pins" / sha.substr(0, 12);
  fs::path lib = cache / "lib" / "libscav.so";
  if (fs::exists(lib)) return lib.string();

  std::cerr << "harness: building scav at " << sha.substr(0, 12) << " into " << cache.string() << "\n";
  std::error_code ec;
  fs::remove_all(cache / "src", ec);
  fs::create_directories(cache / "src", ec);
  std::string tar = (cache / "src.tar").string();
  auto archive = run_capture({"/usr/bin/git", "-C", source, "archive", "--format=tar", "-o", tar, sha}, kGitTimeoutS);
  auto untar = archive.exit_code == 0 ? run_capture({"/bin/tar", "-xf", tar, "-C", (cache / "src").string()}, kGitTimeoutS) : archive;
  fs::remove(tar, ec);
  if (untar.exit_code != 0) {
    error = "cannot extract revision " + sha + ": " + tail(untar.err);
    return std::nullopt;
  }
  fs::path scav_src = cache / "src" / "allocators" / "scav";
  if (!fs::exists(scav_src / "CMakeLists.txt")) {
    error = "revision " + sha.substr(0, 12) + " has no allocators/scav to build";
    return std::nullopt;
  }
  std::string jobs = std::to_string(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  auto configure = run_capture({"/usr/bin/cmake", "-S", scav_src.string(), "-B", (cache / "build").string(),
                                "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF",
                                "-DMEMHARNESS_BUILD_LIBDIR=" + (cache / "lib").string()},
                               kConfigureTimeoutS);
  auto build = configure.exit_code == 0
                   ? run_capture({"/usr/bin/cmake", "--build", (cache / "build").string(), "--target", "scav", "-j", jobs},
                                 kBuildTimeoutS)
                   : configure;
  if (build.exit_code != 0 || !fs::exists(lib)) {
    error = "building scav at " + sha.substr(0, 12) + " failed: " +
            (build.timed_out ? "it did not finish within " + std::to_string(int(configure.timed_out ? kConfigureTimeoutS
                                                                                                   : kBuildTimeoutS)) +
                                   " s"
                             : tail(build.out + build.err));
    return std::nullopt;
  }
  return lib.string();
}

}  // namespace mh
