// The plot command: runs the plotting script that fits with a Python that has
// matplotlib (scripts/lib/find-python picks it and names the Debian package
// when there is none).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "commands/commands.h"
#include "commands/resolve.h"
#include "core/suggest.h"
#include "sys/output_file.h"
#include "sys/spawn.h"

namespace mh {

namespace {

// The kinds of picture, each drawn by one script (scripts/plot_KIND.py).
struct PlotKind {
  const char* name;
  const char* usage;
};
constexpr PlotKind kPlotKinds[] = {
    {"rss", "harness plot rss REPORT... -o FILE.png|svg [--metric COLUMN] [--workload NAME] [--align MARK] [--xlim "
            "START:END | --window SECONDS]   (RSS over time)"},
    {"heap", "harness plot heap REPORT... -o FILE.png|svg   (RSS, anonymous RSS and the live heap; --ledger runs)"},
    {"compare", "harness plot compare COMPARISON.json|OLD.json NEW.json -o FILE.png|svg [--metric NAME]..."},
    {"flame", "harness plot flame REPORT -o FILE.png|svg [--mark NAME] [--allocator NAME]   (the live heap by "
              "call site)"},
    {"sweep", "harness plot sweep SWEEP.json -o FILE.png|svg   (the points of a sweep, the Pareto front marked)"},
    {"table", "harness plot table REPORT... -o FILE.png|svg [--metric NAME]...   (harness table as heat maps)"},
    {"squeeze", "harness plot squeeze SQUEEZE.json -o FILE.png|svg   (figure of merit and stall against the memory "
                "limit, the limit found marked)"},
};

std::vector<std::string> kind_names() {
  std::vector<std::string> names;
  for (const auto& k : kPlotKinds) names.emplace_back(k.name);
  return names;
}

// The kind the arguments ask for, taken off them: `plot KIND ...`, `plot --KIND ...`
// (the older spelling), or a report first (rss). "" with `error` set for a word
// that is no kind.
std::string take_kind(std::vector<std::string>& args, std::string& error) {
  if (args.empty()) return "rss";
  const std::string first = args.front();
  for (const auto& k : kPlotKinds)
    if (first == k.name || first == std::string("--") + k.name) {
      args.erase(args.begin());
      return k.name;
    }
  std::error_code ec;
  if (first[0] == '-' || std::filesystem::exists(first, ec)) return "rss";
  error = fmt::format("'{}' is neither a kind of plot{} nor a report; the kinds are {}", first,
                      did_you_mean(first, kind_names()), fmt::join(kind_names(), ", "));
  return "";
}

// harness plot --help: what the command does, then each script's own help.
int plot_help(const std::string& scripts, const std::string& python) {
  fmt::print("Usage:\n");
  for (const auto& k : kPlotKinds) fmt::print("  {}\n", k.usage);
  fmt::print(
      "\nKIND may be left out for rss (harness plot REPORT... -o FILE.png). Each kind runs scripts/plot_KIND.py "
      "with the arguments as given.\n\nExit codes: 0 drawn, 1 the script failed, 2 bad input\n\n"
      "Example:\n  harness plot rss results/burst-writefile-*.json -o rss.png\n\nThe scripts' options:\n");
  for (const auto& k : kPlotKinds) {
    auto c = run_capture({python, scripts + "/plot_" + k.name + ".py", "--help"});
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
  std::string error;
  const std::string kind = help ? "rss" : take_kind(args, error);
  if (kind.empty()) return bad_input("harness plot", error);
  const std::string script = "plot_" + kind + ".py";
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
