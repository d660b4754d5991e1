#include "server/stream_formats.h"

#include "server/api_error.h"
#include "server/sse.h"

namespace edgeinfer::server {

json stream_error_json(const GenerationResult& r) {
  if (r.finish == FinishReason::Error) {
    return error_json(500, "generation failed: " + r.error, "server_error", "", "generation_error");
  }
  return error_json(503, "the request was cancelled before it finished (the server is shutting down)",
                    "unavailable_error", "", "cancelled");
}

namespace {

class ChatStream : public StreamFormat {
 public:
  ChatStream(ResponseMeta m, const Tokenizer& tok, bool logprobs, bool include_usage)
      : m_(std::move(m)), tok_(tok), logprobs_(logprobs), include_usage_(include_usage) {}

  std::string begin() override {
    return sse_data(chat_chunk_json(m_, json{{"role", "assistant"}, {"content", ""}}, nullptr, nullptr));
  }
  std::string delta(const TokenEvent& ev) override {
    if (ev.text.empty() && !(logprobs_ && !ev.logprobs.empty())) return {};
    return sse_data(chat_chunk_json(m_, json{{"content", ev.text}}, nullptr,
                                    logprobs_ ? chat_logprobs_json(tok_, ev.logprobs) : json(nullptr)));
  }
  std::string end(const GenerationResult& r) override {
    if (r.failed()) return sse_data(stream_error_json(r)) + sse_done();
    json last = chat_chunk_json(m_, json::object(), r.client_finish_reason(), nullptr);
    last["usage"] = usage_json(r.timings);
    last["timings"] = timings_json(r.timings);
    std::string out = sse_data(last);
    if (include_usage_) {
      json u = chat_chunk_json(m_, json::object(), nullptr, nullptr);
      u["choices"] = json::array();
      u["usage"] = usage_json(r.timings);
      u["timings"] = timings_json(r.timings);
      out += sse_data(u);
    }
    return out + sse_done();
  }

 private:
  ResponseMeta m_;
  const Tokenizer& tok_;
  bool logprobs_, include_usage_;
};

class CompletionStream : public StreamFormat {
 public:
  CompletionStream(ResponseMeta m, const Tokenizer& tok, bool logprobs, bool include_usage)
      : m_(std::move(m)), tok_(tok), logprobs_(logprobs), include_usage_(include_usage) {}

  std::string delta(const TokenEvent& ev) override {
    if (ev.text.empty() && !(logprobs_ && !ev.logprobs.empty())) return {};
    json lp = logprobs_ ? completion_logprobs_json(tok_, ev.logprobs, text_offset_) : json(nullptr);
    text_offset_ += ev.text.size();
    return sse_data(completion_chunk_json(m_, ev.text, nullptr, std::move(lp)));
  }
  std::string end(const GenerationResult& r) override {
    if (r.failed()) return sse_data(stream_error_json(r)) + sse_done();
    json last = completion_chunk_json(m_, "", r.client_finish_reason(), nullptr);
    last["usage"] = usage_json(r.timings);
    last["timings"] = timings_json(r.timings);
    std::string out = sse_data(last);
    if (include_usage_) {
      json u = completion_chunk_json(m_, "", nullptr, nullptr);
      u["choices"] = json::array();
      u["usage"] = usage_json(r.timings);
      u["timings"] = timings_json(r.timings);
      out += sse_data(u);
    }
    return out + sse_done();
  }

 private:
  ResponseMeta m_;
  const Tokenizer& tok_;
  bool logprobs_, include_usage_;
  size_t text_offset_ = 0;
};

class InfillStream : public StreamFormat {
 public:
  explicit InfillStream(std::string model) : model_(std::move(model)) {}
  std::string delta(const TokenEvent& ev) override {
    if (ev.text.empty() && ev.tokens.empty()) return {};
    return sse_data(infill_chunk_json(ev.text, ev.tokens));
  }
  std::string end(const GenerationResult& r) override {
    if (r.failed()) return sse_data(stream_error_json(r));
    json last = infill_json(model_, r);
    last["content"] = "";  // the text was streamed already
    last["tokens"] = json::array();
    return sse_data(last);
  }

 private:
  std::string model_;
};

}  // namespace

std::unique_ptr<StreamFormat> chat_stream_format(ResponseMeta meta, const Tokenizer& tok, bool logprobs,
                                                 bool include_usage) {
  return std::make_unique<ChatStream>(std::move(meta), tok, logprobs, include_usage);
}

std::unique_ptr<StreamFormat> completion_stream_format(ResponseMeta meta, const Tokenizer& tok, bool logprobs,
                                                       bool include_usage) {
  return std::make_unique<CompletionStream>(std::move(meta), tok, logprobs, include_usage);
}

std::unique_ptr<StreamFormat> infill_stream_format(std::string model) {
  return std::make_unique<InfillStream>(std::move(model));
}

}  // namespace edgeinfer::server
