// Where a command's outputs go: a default name that never collides with an
// existing file (reserved with O_EXCL), and an explicit --out that is replaced
// as asked. Main thread only.
#pragma once

#include <string>
#include <vector>

namespace mh {

// Reserves `<stem>-<UTC time to the millisecond><suffix>` for every suffix
// (e.g. ".json" and "-runs.json"), creating each file empty with O_EXCL so that
// neither an earlier report nor a harness started in the same millisecond is
// ever replaced; on a clash it tries `-2`, `-3`, ... before the suffixes.
// Returns the paths in the order of the suffixes, or an empty vector with the
// error.
std::vector<std::string> reserve_new_outputs(const std::string& stem, const std::vector<std::string>& suffixes,
                                             std::string& error);

// "2026-11-30T10:00:14.123Z" in the compact form for file names: "20261130T100014.123Z".
std::string utc_stamp_ms();

}  // namespace mh
