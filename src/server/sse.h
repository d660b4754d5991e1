#pragma once
// Server-sent events framing (text/event-stream) as OpenAI streams use it: each event is one
// "data: <json>" line followed by a blank line; the stream ends with "data: [DONE]". Comment
// lines (": ...") keep a quiet stream alive and let the server notice a client that went away.
#include <string>
#include <string_view>

#include "server/json_fields.h"

namespace edgeinfer::server {

std::string sse_data(const json& payload);
std::string sse_done();
std::string sse_comment(std::string_view text);

}  // namespace edgeinfer::server
