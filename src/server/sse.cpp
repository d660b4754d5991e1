#include "server/sse.h"

namespace edgeinfer::server {

std::string sse_data(const json& payload) {
  // dump_json() escapes newlines inside strings, so the payload is always one line.
  return "data: " + dump_json(payload) + "\n\n";
}

std::string sse_done() { return "data: [DONE]\n\n"; }

std::string sse_comment(std::string_view text) {
  std::string s = ": ";
  for (char c : text) s += (c == '\n' || c == '\r') ? ' ' : c;
  return s + "\n\n";
}

}  // namespace edgeinfer::server
