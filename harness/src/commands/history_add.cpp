// Runs into the history store, each under its resolved revision (see history_add.h).
#include "commands/history_add.h"

#include <map>

#include "commands/resolve.h"
#include "core/escape.h"
#include "history/from_report.h"
#include "history/store.h"

namespace mh {

namespace {

struct Resolved {
  std::string commit;
  std::optional<int64_t> position;
};

// A revision as a full commit and its first-parent position in `repo`; the
// revision as given, without a position, when git cannot tell (no repository,
// an unknown name).
Resolved resolve_in(const std::string& repo, const std::string& revision) {
  Resolved r{revision, std::nullopt};
  std::string ignored;
  if (repo.empty()) return r;
  // The revision as the record keeps it (escape::identity); git is given its bytes.
  if (auto commit = resolve_commit(repo, escape::from_identity(revision), ignored)) {
    r.commit = *commit;
    r.position = first_parent_position(repo, r.commit);
  }
  return r;
}

// Where each run's revision is looked up, cached per repository and revision.
class Revisions {
 public:
  explicit Revisions(const history::Target& t) : target_(t), layout_(find_layout()) {}

  Resolved of(const history::StoredRun& run, const std::string& harness_revision) {
    std::string repo = target_.cwd, revision = target_.revision;
    if (revision.empty() && !run.allocator_revision.empty()) {
      revision = run.allocator_revision;
      if (repo.empty()) repo = pin_repo(run.allocator);
    }
    if (revision.empty() && !target_.cwd.empty()) revision = "HEAD";
    if (revision.empty()) {
      // Nothing else named: what is measured is this harness's tree (a
      // "-dirty" build is still counted at the commit it was built on).
      revision = harness_revision.substr(0, harness_revision.find("-dirty"));
      repo = layout_.source;
    }
    auto key = repo + "\n" + revision;
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    return cache_[key] = resolve_in(repo, revision);
  }

 private:
  // The repository of a pin ("scav:options" -> scav's), "" when it has none here.
  std::string pin_repo(const std::string& allocator) {
    const std::string name = allocator.substr(0, allocator.find(':'));
    std::string ignored;
    auto pin = find_repo_pin(layout_, name, ignored);
    if (!pin) return "";
    return pin_repository(*pin, pin_paths(layout_), "HEAD", ignored).value_or("");
  }

  const history::Target& target_;
  Layout layout_;
  std::map<std::string, Resolved> cache_;
};

}  // namespace

std::optional<size_t> add_to_history(const history::Target& target, const ReportData& report, std::string& error) {
  auto runs = history::stored_runs(report, target.machine);
  Revisions revisions(target);
  const auto rev = report.context.find("git_revision");
  const std::string harness_revision =
      rev != report.context.end() && rev->is_string() ? rev->get<std::string>() : "";
  for (auto& r : runs) {
    auto resolved = revisions.of(r, harness_revision);
    r.revision = resolved.commit;
    r.position = resolved.position;
  }
  auto store = history::Store::open(target.file, error);
  if (!store) return std::nullopt;
  auto added = store->add(runs, error);
  if (!added) error = target.file + ": " + error;
  return added;
}

}  // namespace mh
