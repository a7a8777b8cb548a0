// The live heap's call sites of one run as a pprof profile (profile.proto,
// gzipped), the heap profile `go tool pprof` and its web UI read. A pure
// function of the record; any thread.
#pragma once

#include <string>

#include "core/record.h"

namespace mh {

// An estimate of how many blocks stand behind a site's `bytes` from `samples`
// sampled blocks, taking its blocks to be of one size s: the ledger samples a
// block of s bytes with probability p(s) = 1 - exp(-s/interval) and counts it
// as s/p(s) bytes, so s solves s/p(s) = bytes/samples and the blocks number
// bytes/s (s at least 1 byte). 0 without samples.
double estimated_objects(double bytes, int64_t samples, uint64_t interval_bytes);

// The profile of `sites` (of run `r`, at `where`: "peak" or a mark's name):
// sample types inuse_objects/count (estimated_objects) and inuse_space/bytes,
// the latter the default; period type space/bytes, the sampling interval;
// each site a sample whose locations are its frames outside the allocator,
// innermost first, labelled with its standard error in bytes and its number
// of samples; every other site one "[other call sites]" sample. Gzipped; ""
// with `error` when zlib fails.
std::string pprof_profile(const RunRecord& r, const HeapSites& sites, const std::string& where, std::string& error);

}  // namespace mh
