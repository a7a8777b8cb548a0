// Pins: named allocator builds. A pins file gives names to specs a project
// uses ({"pins": {"name": "spec"}}); "scav@REV" is the scav allocator built
// from a git revision of this repository, cached per commit.
#pragma once

#include <optional>
#include <string>

namespace mh {

// The spec a pins file gives `name`, if any.
std::optional<std::string> lookup_pin(const std::string& pins_file, const std::string& name);

bool is_scav_revision(const std::string& spec);  // "scav@REV"

// Builds libscav.so from revision `rev` of the repository at `source` into
// <source>/build/pins/<commit>/ unless it is there already; returns its path.
std::optional<std::string> build_scav_at(const std::string& source, const std::string& rev, std::string& error);

}  // namespace mh
