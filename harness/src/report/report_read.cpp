// Reading reports and journals a run at a time (see report_read.h). A report
// is scanned member by member and each element of its runs[] parsed alone;
// anything the scan does not expect (a syntax error, a run before the schema,
// a value the checks refuse) is handed to the reader of the whole document,
// whose message names the file, the path and what is wrong there.
#include "report/report_read.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "report/journal.h"
#include "sys/input_file.h"
#include "sys/json_read.h"

namespace mh {

namespace {

// One element of runs[] is two levels below the report's top.
constexpr JsonLimits kRunLimits{kFileLimits.max_bytes, kFileLimits.max_depth - 2};

// The raw text of a JSON document, read in blocks, value by value.
class Scanner {
 public:
  explicit Scanner(std::FILE* f) : f_(f), buf_(size_t(1) << 20) {}

  int peek() { return pos_ < end_ || refill() ? static_cast<unsigned char>(buf_[pos_]) : -1; }
  int get() { return pos_ < end_ || refill() ? static_cast<unsigned char>(buf_[pos_++]) : -1; }
  void skip_space() {
    for (int c = peek(); c == ' ' || c == '\n' || c == '\r' || c == '\t'; c = peek()) ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  // The text of the next value, whatever it holds: brackets are matched, not
  // checked (the parser of the value checks them).
  bool value(std::string& out) {
    out.clear();
    skip_space();
    const int c = peek();
    if (c == '"') return string(out);
    if (c == '{' || c == '[') return container(out);
    for (int d = peek(); d >= 0 && !is_delimiter(d); d = peek()) out += static_cast<char>(get());
    return !out.empty();
  }

 private:
  static bool is_delimiter(int c) { return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
  bool refill() {
    pos_ = 0;
    end_ = std::fread(buf_.data(), 1, buf_.size(), f_);
    return end_ > 0;
  }
  // Appends the bytes up to the next one `stop` takes (not included), a
  // block at a time; false at the end of the text.
  template <typename Stop>
  bool copy_until(std::string& out, Stop stop) {
    while (pos_ < end_ || refill()) {
      size_t i = pos_;
      while (i < end_ && !stop(buf_[i])) ++i;
      out.append(buf_.data() + pos_, i - pos_);
      pos_ = i;
      if (i < end_) return true;
    }
    return false;
  }
  // A string with its quotes; `out` already holds what came before it.
  bool string(std::string& out) {
    out += static_cast<char>(get());
    while (copy_until(out, [](char c) { return c == '"' || c == '\\'; })) {
      const int c = get();
      out += static_cast<char>(c);
      if (c == '"') return true;
      const int escaped = get();
      if (escaped < 0) return false;
      out += static_cast<char>(escaped);
    }
    return false;
  }
  bool container(std::string& out) {
    int depth = 0;
    auto special = [](char c) { return c == '"' || c == '{' || c == '[' || c == '}' || c == ']'; };
    while (copy_until(out, special)) {
      const int c = peek();
      if (c == '"') {
        if (!string(out)) return false;
        continue;
      }
      out += static_cast<char>(get());
      if (c == '{' || c == '[') ++depth;
      if ((c == '}' || c == ']') && --depth == 0) return true;
    }
    return false;
  }

  std::FILE* f_;
  std::vector<char> buf_;
  size_t pos_ = 0, end_ = 0;
};

// Drops the sampled series but its last sample (ReadSettings::series).
void keep_last_sample(RunRecord& r) {
  if (r.samples.size() <= 1) return;
  r.samples.erase(r.samples.begin(), r.samples.end() - 1);
  r.samples.shrink_to_fit();
}

// A run's document without a JSON value per sampled cell: the cells of
// samples.COLUMN arrays go into SampleCells (those columns stay empty arrays
// in the document), everything else into the document. Gives up (returns
// false, and the parse stops) on what the checks would refuse anyway: a
// column cell that is not a number or null, nesting past the limit.
class RunParser {
 public:
  using Dom = nlohmann::detail::json_sax_dom_parser<Json>;
  RunParser(Json& doc, SampleCells& cells) : dom_(doc, false), cells_(&cells) {}

  bool null() { return column_ ? cell(std::nullopt) : dom_.null(); }
  bool boolean(bool b) { return !column_ && dom_.boolean(b); }
  bool number_integer(Json::number_integer_t v) {
    return column_ ? within_double(v < 0 ? -static_cast<double>(v) : static_cast<double>(v)) && cell(static_cast<double>(v))
                   : dom_.number_integer(v);
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    return column_ ? within_double(static_cast<double>(v)) && cell(static_cast<double>(v)) : dom_.number_unsigned(v);
  }
  bool number_float(Json::number_float_t v, const Json::string_t& s) { return column_ ? cell(v) : dom_.number_float(v, s); }
  bool string(Json::string_t& s) { return !column_ && dom_.string(s); }
  bool binary(Json::binary_t& b) { return !column_ && dom_.binary(b); }
  bool key(Json::string_t& k) {
    if (depth_ <= 2) keys_[depth_] = k;
    return dom_.key(k);
  }
  bool start_object(std::size_t n) {
    if (column_ || !deeper()) return false;
    if (depth_ == 2) in_samples_ = keys_[1] == "samples";
    return dom_.start_object(n);
  }
  bool end_object() {
    if (depth_-- == 2) in_samples_ = false;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    if (column_ || !deeper()) return false;
    if (depth_ == 3 && in_samples_) {
      column_ = &(*cells_)[keys_[2]];
      // A report's runs have columns of much the same length: room for as many as the last one's.
      column_->reserve(rows_hint_);
    }
    return dom_.start_array(n);
  }
  bool end_array() {
    if (depth_-- == 3 && column_) {
      rows_hint_ = column_->size();
      column_ = nullptr;
    }
    return dom_.end_array();
  }
  template <typename Exception>
  bool parse_error(std::size_t, const std::string&, const Exception&) {
    return false;
  }

 private:
  bool deeper() { return ++depth_ <= kRunLimits.max_depth; }
  // Past 2^53 a double no longer holds every integer: the checks refuse it.
  static bool within_double(double magnitude) { return magnitude <= static_cast<double>(kMaxCount); }
  bool cell(std::optional<double> v) {
    column_->push_back(v);
    return true;
  }

  Dom dom_;
  SampleCells* cells_;
  std::vector<std::optional<double>>* column_ = nullptr;
  int depth_ = 0;
  std::string keys_[3];  // the last key at the run's top (1) and one level down (2)
  bool in_samples_ = false;
  static inline thread_local size_t rows_hint_ = 0;
};

// One run's text, parsed and checked; nullopt when anything is wrong with it.
std::optional<RunRecord> run_from_text(const std::string& text, const std::string& name, const ReadSettings& settings) {
  if (text.size() > kRunLimits.max_bytes) return std::nullopt;
  Json j;
  SampleCells cells;
  RunParser parser(j, cells);
  if (!Json::sax_parse(text.begin(), text.end(), &parser) || !j.is_object()) return std::nullopt;
  std::string error;
  auto r = read_checked<RunRecord>([&] { return run_from_json(JsonIn(j, name)); }, error);
  if (!r || !samples_from_cells(cells, *r)) return std::nullopt;
  if (!settings.series) keep_last_sample(*r);
  return r;
}

// A scan of a report, member by member. `scanned` false means the scan gave
// up and the whole document decides (the runs handed on so far counted in
// `runs_read`).
struct Scan {
  bool scanned = false;
  size_t runs_read = 0;
};

// runs[], its elements one at a time; the top read so far must be a report's.
bool scan_runs(Scanner& s, const Json& top, const std::string& path, const ReadSettings& settings, ReportData& head,
               const std::function<void(RunRecord&&)>& each, Scan& scan) {
  if (!top.contains("schema")) return false;  // the whole document names what is missing or out of order
  std::string error;
  auto h = read_checked<ReportData>([&] { return report_head_from(JsonIn(top, path)); }, error);
  if (!h || !s.take('[')) return false;
  head = std::move(*h);
  std::string text;
  if (s.take(']')) return true;
  do {
    if (!s.value(text)) return false;
    auto r = run_from_text(text, path, settings);
    if (!r) return false;
    ++scan.runs_read;
    each(std::move(*r));
  } while (s.take(','));
  return s.take(']');
}

// The report's top-level members in turn, runs[] as it comes.
Scan scan_report(std::FILE* f, const std::string& path, const ReadSettings& settings, ReportData& head,
                 const std::function<void(RunRecord&&)>& each) {
  Scanner s(f);
  Scan scan;
  Json top = Json::object();
  std::string key_text, text;
  bool runs_seen = false;
  if (!s.take('{')) return scan;
  for (bool first = true; !s.take('}'); first = false) {
    if (!first && !s.take(',')) return scan;
    s.skip_space();
    if (s.peek() != '"' || !s.value(key_text) || !s.take(':')) return scan;
    auto key = parse_json(key_text, path, kFileLimits, text);
    if (!key || !key->is_string() || top.contains(key->get<std::string>())) return scan;
    if (*key == "runs") {
      if (!scan_runs(s, top, path, settings, head, each, scan)) return scan;
      runs_seen = true;
      top["runs"] = Json::array();
      continue;
    }
    std::string error;
    auto value = s.value(text) ? parse_json(text, path, kFileLimits, error) : std::nullopt;
    if (!value) return scan;
    top[key->get<std::string>()] = std::move(*value);
  }
  s.skip_space();
  if (!runs_seen || s.peek() >= 0) return scan;
  // Members after runs[] (none the harness writes) are checked as well.
  std::string error;
  auto h = read_checked<ReportData>([&] { return report_head_from(JsonIn(top, path)); }, error);
  if (!h) return scan;
  head = std::move(*h);
  scan.scanned = true;
  return scan;
}

// The whole document, for what the scan could not take: its error, or its
// runs when the scan handed on none yet.
bool read_whole(const std::string& path, const Scan& scan, ReportData& head,
                const std::function<void(RunRecord&&)>& each, std::string& error) {
  auto whole = read_report_document(path, error);
  if (!whole) return false;
  if (scan.runs_read > 0) {
    error = path + ": cannot be read a run at a time (a member given twice?)";
    return false;
  }
  std::vector<RunRecord> runs = std::move(whole->runs);
  head = std::move(*whole);
  for (auto& r : runs) each(std::move(r));
  return true;
}

// Whether the file opens as a journal's header does (its schema first).
bool is_journal(std::FILE* f) {
  const std::string prefix = json_text(Json{{"schema", kJournalSchema}});
  std::string start(prefix.size() - 1, '\0');
  const size_t got = std::fread(start.data(), 1, start.size(), f);
  std::rewind(f);
  return got == start.size() && prefix.starts_with(start);
}

// What is wrong with a journal's line that run_from_text refused, as the
// checking reader names it. Always false.
bool run_line_error(const std::string& line, const std::string& name, std::string& error) {
  auto run = parse_json(line, name, kRunLimits, error);
  if (!run) return false;
  auto r = read_checked<RunRecord>([&] { return run_from_json(JsonIn(*run, name)); }, error);
  if (r) error = name + ": not a run the harness can read";
  return false;
}

// A file's lines in turn, each without its newline.
class Lines {
 public:
  explicit Lines(std::FILE* f) : f_(f) {}
  ~Lines() { std::free(buf_); }
  Lines(const Lines&) = delete;
  Lines& operator=(const Lines&) = delete;
  // The next line; false at the end. `ended`: a newline ended it.
  bool next(std::string& line, bool& ended) {
    const ssize_t n = ::getline(&buf_, &cap_, f_);
    if (n < 0) return false;
    ended = n > 0 && buf_[n - 1] == '\n';
    line.assign(buf_, static_cast<size_t>(n) - (ended ? 1 : 0));
    return true;
  }
  bool at_end() {
    const int c = std::getc(f_);
    if (c == EOF) return true;
    std::ungetc(c, f_);
    return false;
  }

 private:
  std::FILE* f_;
  char* buf_ = nullptr;
  size_t cap_ = 0;
};

// The journal's lines in turn: the header, then a run per line. A last line
// without its newline, or one that is not a whole run, was cut off by a crash:
// ignored, with a warning.
bool read_journal(std::FILE* f, const std::string& path, const ReadSettings& settings, ReportData& head,
                  const std::function<void(RunRecord&&)>& each, std::string& error) {
  Lines lines(f);
  std::string line;
  bool ended = false;
  lines.next(line, ended);
  auto header = parse_json(line, path + " line 1", kFileLimits, error);
  if (!header) return false;
  auto h = read_checked<ReportData>([&] { return report_head_from(JsonIn(*header, path + " line 1"), kJournalSchema); },
                                    error);
  if (!h) return false;
  head = std::move(*h);
  head.complete = false;
  for (size_t n = 2; lines.next(line, ended); ++n) {
    const std::string name = fmt::format("{} line {}", path, n);
    auto r = ended ? run_from_text(line, name, settings) : std::nullopt;
    if (!r && lines.at_end()) {
      fmt::print(stderr, "harness: warning: {}: the last line is cut short (the harness stopped while writing it): "
                         "that run is left out\n", name);
      break;
    }
    if (!r) return run_line_error(line, name, error);
    each(std::move(*r));
  }
  return true;
}

}  // namespace

bool read_report_runs(const std::string& path, const ReadSettings& settings, ReportData& head,
                      const std::function<void(RunRecord&&)>& each, std::string& error) {
  // A FIFO, a device or a link to one is refused before anything is read.
  auto f = input_file::open_file(path, error);
  if (!f) return false;
  struct stat st {};
  if (::fstat(fileno(f.get()), &st) != 0 || static_cast<size_t>(st.st_size) > kFileLimits.max_bytes) {
    error = fmt::format("{}: larger than the {} bytes this reader takes", path, kFileLimits.max_bytes);
    return false;
  }
  if (is_journal(f.get())) return read_journal(f.get(), path, settings, head, each, error);
  const Scan scan = scan_report(f.get(), path, settings, head, each);
  return scan.scanned || read_whole(path, scan, head, each, error);
}

bool read_journal_runs(std::FILE* f, const std::string& name, const ReadSettings& settings, ReportData& head,
                       const std::function<void(RunRecord&&)>& each, std::string& error) {
  return read_journal(f, name, settings, head, each, error);
}

std::optional<ReportData> read_report(const std::string& path, std::string& error, const ReadSettings& settings) {
  ReportData d;
  std::vector<RunRecord> runs;
  if (!read_report_runs(path, settings, d, [&](RunRecord&& r) { runs.push_back(std::move(r)); }, error))
    return std::nullopt;
  d.runs = std::move(runs);
  return d;
}

namespace {

// The report a journal's own name says: NAME for NAME.journal-XXXXXX (the
// random part output_file::open_beside makes), "" for any other name.
std::string report_of_journal_name(const std::string& path) {
  static constexpr std::string_view kInfix = ".journal-";
  static constexpr size_t kRandom = 6;
  const size_t at = path.rfind(kInfix);
  if (at == std::string::npos || path.size() != at + kInfix.size() + kRandom) return "";
  const std::string base = path.substr(0, at);
  if (base.empty() || base.back() == '/') return "";
  for (size_t i = at + kInfix.size(); i < path.size(); ++i)
    if (!std::isalnum(static_cast<unsigned char>(path[i]))) return "";
  return base;
}

// Whether a journal's header, which names its report as the harness was given
// it (relative to where that harness ran), names `report`: the same file, or
// a relative name that `report`'s full path ends with.
bool names_report(const std::string& named, const std::string& report) {
  namespace fs = std::filesystem;
  std::error_code ec1, ec2;
  const fs::path full = fs::weakly_canonical(report, ec1);
  if (!named.empty() && fs::weakly_canonical(named, ec2) == full && !ec1 && !ec2) return true;
  const fs::path rel = fs::path(named).lexically_normal();
  if (named.empty() || rel.is_absolute() || rel.empty() || *rel.begin() == ".." || ec1) return false;
  std::vector<fs::path> tail(rel.begin(), rel.end()), whole(full.begin(), full.end());
  if (!tail.empty() && tail.back().empty()) return false;  // a folder's name, "r/"
  return tail.size() <= whole.size() && std::equal(tail.rbegin(), tail.rend(), whole.rbegin());
}

}  // namespace

std::string resumed_report(const std::string& path, std::string& error) {
  auto f = input_file::open_file(path, error);
  if (!f) return "";
  if (!is_journal(f.get())) return path;
  // What --resume writes is what the journal's name says, never a path read
  // from its content: a header naming another file is refused.
  const std::string report = report_of_journal_name(path);
  if (report.empty()) {
    error = fmt::format("cannot resume {}: a journal is named REPORT.journal-XXXXXX after the report it is kept for, "
                        "and this name says no report (give the report to write with --out)", path);
    return "";
  }
  Lines lines(f.get());
  std::string line;
  bool ended = false;
  lines.next(line, ended);
  std::string parse_error;
  auto header = parse_json(line, path + " line 1", kFileLimits, parse_error);
  const Json* named = header && header->is_object() && header->contains("report") ? &(*header)["report"] : nullptr;
  if (!named || !named->is_string()) {
    error = fmt::format("cannot resume {}: its header names no report ({})", path,
                        parse_error.empty() ? "no \"report\" string" : parse_error);
    return "";
  }
  if (!names_report(named->get<std::string>(), report)) {
    error = fmt::format("cannot resume {}: its header names the report '{}', but its name says {}; nothing was written "
                        "(a journal is kept beside its report, so one of them was moved or edited)",
                        path, named->get<std::string>(), report);
    return "";
  }
  return report;
}

}  // namespace mh
