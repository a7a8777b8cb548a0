// Strings that come from outside (workload, program, allocator and mark names,
// output tails, reports read back) made valid UTF-8 where they enter a record,
// and escaped for where they are shown: one function per destination, and
// every table, progress line and export passes such strings through the one
// for its destination. Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mh::escape {

// Where text enters a record, it becomes valid UTF-8 in one of two ways.
//
// Text only shown (an output tail, a process or thread name, a symbol): each
// byte that is not part of a UTF-8 character becomes U+FFFD.
std::string shown(std::string_view s);
// The same over the last `max_bytes` bytes at most of `s`, cut where a
// character starts: a cut never splits one.
std::string shown_tail(std::string_view s, size_t max_bytes);
// Text that identifies something (argv, environment values, paths,
// revisions, machine labels: what the run hash, the resume check and the
// history key are made of): each byte that is not UTF-8 as \xHH (lowercase
// hex), and a backslash doubled where what follows it in the result starts
// with a backslash or an x (and would read as an escape). Reversible, so two
// byte strings never name one thing; valid UTF-8 without "\\" or "\x" is kept
// as it is.
std::string identity(std::string_view s);
// Each word of a command line so.
std::vector<std::string> identity(const std::vector<std::string>& words);
// The bytes `identity` was given: from_identity(identity(s)) == s for every s.
std::string from_identity(std::string_view s);

// For the terminal: control characters (C0, DEL, C1) and bytes that are not
// UTF-8 as visible escapes (\n, \t, \e, \x07, \u009b, \xff) and a backslash
// doubled, so that no string can move the cursor, clear the screen or pass
// for another. Printable text, UTF-8 included, is kept.
std::string terminal(std::string_view s);
// The same, keeping line ends: a message of several lines.
std::string terminal_lines(std::string_view s);
// For markdown (a table cell, a heading, a PR comment): as on the terminal,
// then what markdown or the HTML inside it would read as structure
// (| ` [ ] < > &) made literal, so that a string stays one cell of one row.
// * and _ stay: names hold them (MB*s, peak_rss_kb), and at worst they
// emphasise. Then what GitHub would turn into a mention, a reference or a
// link gets an invisible U+2060 WORD JOINER (kWordJoiner) where it breaks
// the pattern: after every @ (@user, @org/team, user@sha, an address),
// after a # before a digit (#123, owner/repo#123), in GH-123 (GH, joiner,
// -), after the colon of :// (any scheme) and before the dot of www. The
// text reads the same; the comment mentions no one and links nowhere the
// harness did not write.
std::string markdown(std::string_view s);
inline constexpr std::string_view kWordJoiner = "\xe2\x81\xa0";  // U+2060
// For CSV (RFC 4180): a text cell that a spreadsheet would evaluate as a
// formula (starting with = + - @, a tab or CR) prefixed with ', then a
// field with a comma, a quote, CR or LF in double quotes, its quotes
// doubled; anything else as is. Python's csv module reads back the string
// (with that ' where one was added).
std::string csv(std::string_view s);
// For JSON text inside an HTML <script> element: < > & as \u escapes (which
// JSON.parse reads back as they were), so that no string in it can close the
// element or open another.
std::string script_json(std::string_view json);

}  // namespace mh::escape
