// Strings that come from outside (workload, program, allocator and mark names,
// output tails, reports read back) escaped for where they are shown: one
// function per destination, and every table, progress line and export passes
// such strings through the one for its destination. Pure functions.
#pragma once

#include <string>
#include <string_view>

namespace mh::escape {

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
