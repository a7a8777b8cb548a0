// What `harness page`, `compare --page` and `harness show` share: the folder
// of the pages' libraries, a report's headline figures, a page written from
// runs. Main thread only.
#pragma once

#include <string>
#include <vector>

#include "commands/resolve.h"
#include "report/page.h"
#include "report/report_read.h"

namespace mh {

// Where scripts/lib/page-libs.sh put the pages' libraries: $MEMHARNESS_PAGE_LIBS,
// else the first of PREFIX/page-libs (the build tree's build/page-libs),
// SHARE/page-libs (an installation) that exists, else the first.
std::string page_libs_dir(const Layout& l);

// report_headlines (a report's headline metrics by workload) is in resolve.h.

// The page of `runs` (named `name`) and, when not null, their comparison, into
// `dir`; "" or the error.
std::string write_runs_page(const std::string& dir, const std::string& name, const std::vector<RunRecord>& runs,
                            double diff_k, const Json& comparison);

}  // namespace mh
