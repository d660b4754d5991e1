// llama.cpp-compatible endpoints: POST /infill, /tokenize, /detokenize, /apply-template.
#include "server/http_reply.h"
#include "server/response_format.h"
#include "server/route_support.h"
#include "server/routes.h"
#include "server/server_context.h"
#include "server/sse_stream.h"
#include "server/stream_formats.h"

namespace edgeinfer::server {

namespace {

using Clock = std::chrono::steady_clock;

void infill(ServerContext& ctx, const httplib::Request& http, const std::string& body, httplib::Response& res) {
  const auto t_arrival = Clock::now();
  const json j = parse_body(body);
  const InfillRequest r = parse_infill_request(j);
  if (auto model = opt_string(j, "model", 1024)) check_model(ctx, *model);
  std::vector<int32_t> prompt = ctx.prompts->infill_prompt(r);
  auto gen = admit_and_start(ctx, http, std::move(prompt), r.gen, "input_prefix", t_arrival);
  if (r.gen.stream) {
    stream_generation(ctx, res, std::move(gen), infill_stream_format(ctx.model_id), r.gen.t_max_predict_ms);
    return;
  }
  const GenerationResult out = run_to_end(*gen, r.gen.t_max_predict_ms);
  throw_if_failed(out);
  send_json(res, 200, infill_json(ctx.model_id, out));
}

void tokenize(ServerContext& ctx, const httplib::Request&, const std::string& body, httplib::Response& res) {
  const TokenizeRequest r = parse_tokenize_request(parse_body(body));
  const std::vector<int32_t> ids = ctx.tok->encode(r.content, r.add_special, r.parse_special);
  json tokens = json::array();
  for (int32_t id : ids) {
    if (r.with_pieces) {
      tokens.push_back(json{{"id", id}, {"piece", ctx.tok->token_to_piece(id, /*show_special=*/true)}});
    } else {
      tokens.push_back(id);
    }
  }
  send_json(res, 200, json{{"tokens", std::move(tokens)}});
}

void detokenize(ServerContext& ctx, const httplib::Request&, const std::string& body, httplib::Response& res) {
  const DetokenizeRequest r = parse_detokenize_request(parse_body(body));
  ctx.prompts->check_vocab(r.tokens, "tokens");
  send_json(res, 200, json{{"content", ctx.tok->decode(r.tokens)}});
}

// The prompt a chat request would be given, without generating (llama.cpp's /apply-template).
void apply_template(ServerContext& ctx, const httplib::Request&, const std::string& body, httplib::Response& res) {
  const json j = parse_body(body);
  json req = j;
  req.erase("stream");  // only the messages and tools matter here
  const ChatRequest r = parse_chat_request(req);
  send_json(res, 200, json{{"prompt", ctx.prompts->render_chat(r.messages, r.tools)}});
}

}  // namespace

void register_native_routes(ServerContext& ctx, httplib::Server& http) {
  auto bind = [&ctx](void (*f)(ServerContext&, const httplib::Request&, const std::string&, httplib::Response&)) {
    return guarded_post(ctx, [&ctx, f](const httplib::Request& q, const std::string& b, httplib::Response& s) {
      f(ctx, q, b, s);
    });
  };
  http.Post("/infill", bind(infill));
  http.Post("/tokenize", bind(tokenize));
  http.Post("/detokenize", bind(detokenize));
  http.Post("/apply-template", bind(apply_template));
}

}  // namespace edgeinfer::server
