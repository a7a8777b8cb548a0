// The plot command: runs the plotting script that fits with a Python that has
// matplotlib (scripts/lib/find-python picks it and names the Debian package
// when there is none).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "commands/commands.h"
#include "commands/resolve.h"
#include "sys/output_file.h"
#include "sys/spawn.h"

namespace mh {

namespace {

// harness plot --help: what the command does, then each script's own help.
int plot_help(const std::string& scripts, const std::string& python) {
  fmt::print(
      "Usage: harness plot REPORT... -o FILE.png|svg [--metric COLUMN] [--workload NAME]\n"
      "   or: harness plot --compare COMPARISON.json -o FILE.png|svg [--metric NAME]...\n"
      "   or: harness plot --compare OLD.json NEW.json -o FILE.png|svg [--allocator NAME] ...\n"
      "   or: harness plot --flame REPORT -o FILE.png|svg [--mark NAME] [--allocator NAME]\n\n"
      "The first form runs scripts/plot_rss.py, the --compare ones scripts/plot_compare.py, --flame "
      "scripts/plot_flame.py, with the arguments as given. Their options:\n");
  for (const char* script : {"plot_rss.py", "plot_compare.py", "plot_flame.py"}) {
    auto c = run_capture({python, scripts + "/" + script, "--help"});
    fmt::print("\n{}{}", c.out, c.exit_code == 0 ? "" : c.err);
  }
  return 0;
}

// The scripts' -o FILE, checked as every file the harness writes is: a device
// or a link there is refused rather than replaced.
std::string check_plot_output(const std::vector<std::string>& args) {
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "-o" || args[i] == "--output")
      if (auto e = output_file::check_file(args[i + 1]); !e.empty()) return args[i] + ": " + e;
  return "";
}

}  // namespace

int plot_command(const Options& o) {
  auto l = find_layout();
  std::vector<std::string> args = o.inputs;
  const bool help = !args.empty() && (args.front() == "-h" || args.front() == "--help");
  std::string script = "plot_rss.py";
  for (auto [flag, named] : {std::pair{"--compare", "plot_compare.py"}, std::pair{"--flame", "plot_flame.py"}})
    if (!args.empty() && args.front() == flag) {
      script = named;
      args.erase(args.begin());
      break;
    }
  std::string scripts = l.share + "/scripts";
  if (!std::filesystem::exists(scripts + "/" + script)) scripts = l.source + "/scripts";
  if (!std::filesystem::exists(scripts + "/" + script)) {
    fmt::print(stderr, "harness plot: cannot find {} under {}/scripts or {}/scripts\n", script, l.share, l.source);
    return 2;
  }
  auto py = run_capture({"/bin/sh", scripts + "/lib/find-python", "matplotlib"});
  if (py.exit_code != 0) {
    fmt::print(stderr, "harness plot: {}", py.err);
    return 2;
  }
  std::string python = py.out.substr(0, py.out.find('\n'));
  if (help) return plot_help(scripts, python);
  if (auto e = check_plot_output(args); !e.empty()) return bad_input("harness plot", e);
  // plot_compare.py runs `harness compare` on two reports, plot_flame.py `harness export`: this harness,
  // unless the user named one.
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) setenv("MEMHARNESS_HARNESS", self.c_str(), 0);
  std::vector<std::string> argv = {python, scripts + "/" + script};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  execv(python.c_str(), cargv.data());
  fmt::print(stderr, "harness plot: cannot run {}: {}\n", python, std::strerror(errno));
  return 2;
}

}  // namespace mh
