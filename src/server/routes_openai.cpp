// POST /v1/chat/completions, POST /v1/completions, GET /v1/models.
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

void chat_completions(ServerContext& ctx, const httplib::Request& http, const std::string& body, httplib::Response& res) {
  const auto t_arrival = Clock::now();
  const ChatRequest r = parse_chat_request(parse_body(body));
  check_model(ctx, r.model);
  std::vector<int32_t> prompt = ctx.prompts->chat_prompt(r);
  auto gen = admit_and_start(ctx, http, std::move(prompt), r.gen, "messages", t_arrival);
  const ResponseMeta meta{ctx.new_id("chatcmpl"), ctx.created_unix, ctx.model_id};
  const bool logprobs = r.gen.n_logprobs >= 0;
  if (r.gen.stream) {
    stream_generation(ctx, res, std::move(gen),
                      chat_stream_format(meta, *ctx.tok, logprobs, r.gen.include_usage), r.gen.t_max_predict_ms);
    return;
  }
  const GenerationResult out = run_to_end(*gen, r.gen.t_max_predict_ms);
  throw_if_failed(out);
  send_json(res, 200, chat_completion_json(meta, out, *ctx.tok, logprobs));
}

void completions(ServerContext& ctx, const httplib::Request& http, const std::string& body, httplib::Response& res) {
  const auto t_arrival = Clock::now();
  const CompletionRequest r = parse_completion_request(parse_body(body));
  check_model(ctx, r.model);
  std::vector<int32_t> prompt = ctx.prompts->completion_prompt(r);
  auto gen = admit_and_start(ctx, http, std::move(prompt), r.gen, "prompt", t_arrival);
  const ResponseMeta meta{ctx.new_id("cmpl"), ctx.created_unix, ctx.model_id};
  const bool logprobs = r.gen.n_logprobs >= 0;
  if (r.gen.stream) {
    stream_generation(ctx, res, std::move(gen),
                      completion_stream_format(meta, *ctx.tok, logprobs, r.gen.include_usage), r.gen.t_max_predict_ms);
    return;
  }
  const GenerationResult out = run_to_end(*gen, r.gen.t_max_predict_ms);
  throw_if_failed(out);
  send_json(res, 200, completion_json(meta, out, *ctx.tok, logprobs));
}

void models(ServerContext& ctx, const httplib::Request&, httplib::Response& res) {
  json m;
  m["id"] = ctx.model_id;
  m["object"] = "model";
  m["created"] = ctx.created_unix;
  m["owned_by"] = "edgeinfer";
  json meta;
  meta["n_ctx"] = ctx.prompts->n_ctx();
  meta["n_ctx_train"] = ctx.model->config().n_ctx_train;
  meta["n_vocab"] = ctx.tok->n_vocab();
  meta["arch"] = ctx.model->config().arch;
  meta["size_bytes"] = ctx.model->weight_bytes();
  meta["chat_template"] = ctx.prompts->template_is_fallback() ? "fallback (ChatML-style)" : "model";
  m["meta"] = std::move(meta);
  send_json(res, 200, json{{"object", "list"}, {"data", json::array({std::move(m)})}});
}

}  // namespace

void register_openai_routes(ServerContext& ctx, httplib::Server& http) {
  auto bind_post = [&ctx](void (*f)(ServerContext&, const httplib::Request&, const std::string&, httplib::Response&)) {
    return guarded_post(ctx, [&ctx, f](const httplib::Request& q, const std::string& b, httplib::Response& s) {
      f(ctx, q, b, s);
    });
  };
  for (const char* p : {"/v1/chat/completions", "/chat/completions"}) http.Post(p, bind_post(chat_completions));
  for (const char* p : {"/v1/completions", "/completions"}) http.Post(p, bind_post(completions));
  for (const char* p : {"/v1/models", "/models"}) {
    http.Get(p, guarded(ctx, [&ctx](const httplib::Request& q, httplib::Response& s) { models(ctx, q, s); }));
  }
}

}  // namespace edgeinfer::server
