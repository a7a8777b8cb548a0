// The little of HTTP/1.1 the echo server and its load generator speak: a
// message head ends at CRLF CRLF and may carry Content-Length and Connection.
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <string_view>

namespace echo {

struct Head {
  size_t head_len = 0;        // bytes up to and including the blank line
  size_t content_length = 0;  // 0 when absent
  bool close = false;         // "Connection: close"
};

enum class ParseResult { Incomplete, Ok, Bad };

// Looks for a complete head at the start of `bytes`. Bad when it is malformed
// (no start line, a Content-Length that is not a number) or longer than max_head.
ParseResult parse_head(std::string_view bytes, Head& out, size_t max_head = 64 * 1024);

}  // namespace echo
