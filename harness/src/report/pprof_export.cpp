// A run's live heap by call site as a gzipped pprof profile (see
// pprof_export.h): the message is built with the classes protoc generates from
// profile.proto, serialised by protobuf and compressed by zlib.
#include "report/pprof_export.h"

#include <fmt/format.h>
#include <zlib.h>

#include <cmath>
#include <map>

#include "core/heap_sites.h"
#include "report/profile.pb.h"  // generated from profile.proto (build/harness/generated/src)

namespace mh {

namespace pp = perftools::profiles;

double estimated_objects(double bytes, int64_t samples, uint64_t interval_bytes) {
  if (samples <= 0 || bytes <= 0) return 0;
  const double gap = double(std::max<uint64_t>(interval_bytes, 1));
  const double weight = bytes / double(samples);  // s / p(s): rises with s, from `gap` at s -> 0
  auto weight_of = [gap](double s) { return s / -std::expm1(-s / gap); };
  double lo = 1, hi = std::max(weight, 1.0);
  if (weight_of(lo) >= weight) return bytes / lo;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (weight_of(mid) < weight ? lo : hi) = mid;
  }
  return bytes / hi;
}

namespace {

// The profile under construction: strings, functions, mappings and locations
// each entered once, by their text or frame.
class ProfileBuilder {
 public:
  explicit ProfileBuilder(const RunRecord& r) : run_(r) { str(""); }

  int64_t str(const std::string& s) {
    auto [it, added] = strings_.try_emplace(s, int64_t(strings_.size()));
    if (added) p_.add_string_table(s);
    return it->second;
  }

  // A frame's location, named `name` (its frame_name unless given).
  uint64_t location(const HeapFrame& f, const std::string& name = "") {
    const auto key = std::pair{f.object, f.offset};
    if (auto it = locations_.find(key); it != locations_.end()) return it->second;
    pp::Location* loc = p_.add_location();
    loc->set_id(locations_.size() + 1);
    loc->set_mapping_id(mapping(f.object));
    loc->set_address(f.offset);
    pp::Line* line = loc->add_line();
    line->set_function_id(function(name.empty() ? frame_name(f) : name, f.file));
    line->set_line(f.line);
    return locations_[key] = loc->id();
  }

  // A location with no frame behind it ("[other call sites]").
  uint64_t pseudo_location(const std::string& name) { return location(HeapFrame{name, 0}, name); }

  pp::Profile& profile() { return p_; }

 private:
  uint64_t function(const std::string& name, const std::string& file) {
    const auto key = std::pair{name, file};
    if (auto it = functions_.find(key); it != functions_.end()) return it->second;
    pp::Function* fn = p_.add_function();
    fn->set_id(functions_.size() + 1);
    fn->set_name(str(name));
    fn->set_system_name(str(name));
    fn->set_filename(str(file));
    return functions_[key] = fn->id();
  }

  uint64_t mapping(const std::string& object) {
    if (auto it = mappings_.find(object); it != mappings_.end()) return it->second;
    pp::Mapping* m = p_.add_mapping();
    m->set_id(mappings_.size() + 1);
    m->set_filename(str(object));
    if (auto o = run_.heap_objects.find(object); o != run_.heap_objects.end() && o->second.build_id)
      m->set_build_id(str(*o->second.build_id));
    m->set_has_functions(true);  // names come with the report: nothing for pprof to look up
    m->set_has_filenames(true);
    m->set_has_line_numbers(true);
    return mappings_[object] = m->id();
  }

  const RunRecord& run_;
  pp::Profile p_;
  std::map<std::string, int64_t> strings_;
  std::map<std::pair<std::string, std::string>, uint64_t> functions_;
  std::map<std::string, uint64_t> mappings_;
  std::map<std::pair<std::string, uint64_t>, uint64_t> locations_;
};

void add_label(ProfileBuilder& b, pp::Sample& s, const std::string& key, int64_t num, const std::string& unit) {
  pp::Label* l = s.add_label();
  l->set_key(b.str(key));
  l->set_num(num);
  l->set_num_unit(b.str(unit));
}

void add_site(ProfileBuilder& b, const HeapSite& site, const std::vector<uint64_t>& locations, uint64_t interval) {
  if (std::llround(site.bytes) <= 0) return;
  pp::Sample* s = b.profile().add_sample();
  for (uint64_t id : locations) s->add_location_id(id);
  s->add_value(std::llround(estimated_objects(site.bytes, site.samples, interval)));
  s->add_value(std::llround(site.bytes));
  add_label(b, *s, "standard error", std::llround(site.stderr_bytes), "bytes");
  add_label(b, *s, "samples", site.samples, "count");
}

void set_header(ProfileBuilder& b, const RunRecord& r, const HeapSites& sites, const std::string& where) {
  pp::Profile& p = b.profile();
  for (auto [type, unit] : {std::pair{"inuse_objects", "count"}, std::pair{"inuse_space", "bytes"}}) {
    pp::ValueType* v = p.add_sample_type();
    v->set_type(b.str(type));
    v->set_unit(b.str(unit));
  }
  p.set_default_sample_type(b.str("inuse_space"));
  p.mutable_period_type()->set_type(b.str("space"));
  p.mutable_period_type()->set_unit(b.str("bytes"));
  p.set_period(int64_t(sites.interval_bytes));
  for (const auto& c :
       {fmt::format("memharness: the live heap of {} under {}, run {}, at {}", r.workload, r.allocator.name,
                    r.repetition, where),
        fmt::format("sampled every {} bytes on average; inuse_objects is estimated, each site's blocks taken to be "
                    "of one size; labels: each site's standard error in bytes and its samples",
                    sites.interval_bytes)})
    p.add_comment(b.str(c));
}

std::string gzipped(const std::string& bytes, std::string& error) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    error = "zlib: deflateInit2 failed";
    return "";
  }
  std::string out(deflateBound(&z, uLong(bytes.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = uInt(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) {
    error = fmt::format("zlib: deflate returned {}", rc);
    return "";
  }
  return out;
}

}  // namespace

std::string pprof_profile(const RunRecord& r, const HeapSites& sites, const std::string& where, std::string& error) {
  ProfileBuilder b(r);
  set_header(b, r, sites, where);
  for (const auto& site : sites.top) {
    std::vector<uint64_t> ids;
    for (const HeapFrame* f : program_frames(site, r.allocator.library)) ids.push_back(b.location(*f));
    if (ids.empty()) ids.push_back(b.pseudo_location("[no frames outside the allocator]"));
    add_site(b, site, ids, sites.interval_bytes);
  }
  add_site(b, sites.rest, {b.pseudo_location("[other call sites]")}, sites.interval_bytes);
  return gzipped(b.profile().SerializeAsString(), error);
}

}  // namespace mh
