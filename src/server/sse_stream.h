#pragma once
// Streams a generation to its client as server-sent events through httplib's chunked content
// provider. The provider runs on the connection's thread: it waits a little for engine events,
// writes what they format to, and sends an SSE comment when the stream has been quiet for a
// second, so that a client that went away is noticed (the write fails) even while the request
// waits in the queue. A failed write, or the connection ending early, cancels the request at
// once; the engine then frees its KV blocks within one step.
#include <httplib.h>

#include <memory>

#include "server/generation.h"
#include "server/stream_formats.h"

namespace edgeinfer::server {

struct ServerContext;

void stream_generation(ServerContext& ctx, httplib::Response& res, std::unique_ptr<Generation> gen,
                       std::unique_ptr<StreamFormat> fmt, int64_t t_max_predict_ms);

}  // namespace edgeinfer::server
