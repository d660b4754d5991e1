#include "server/prompt_builder.h"

#include "gguf/gguf_file.h"
#include "server/api_error.h"
#include "tokenizer/chat_defaults.h"
#include "tokenizer/fim.h"
#include "tokenizer/jinja/errors.h"
#include "util/error.h"

namespace edgeinfer::server {

PromptBuilder::PromptBuilder(const Tokenizer& tok, const GgufFile& gguf, const std::string& template_source,
                             int32_t n_ctx)
    : tok_(tok), n_ctx_(n_ctx) {
  if (!template_source.empty()) {
    const std::string bos = tok.bos() >= 0 ? tok.token_text(tok.bos()) : "";
    const std::string eos = tok.eos() >= 0 ? tok.token_text(tok.eos()) : "";
    tmpl_ = std::make_unique<ChatTemplate>(template_source, bos, eos);
  } else {
    ModelChatTemplate m = load_chat_template(gguf, tok);
    tmpl_ = std::move(m.tmpl);
    is_fallback_ = m.is_fallback;
  }
}

std::string PromptBuilder::render_chat(const json& messages, const json& tools) const {
  try {
    return tmpl_->apply(messages, tools, /*add_generation_prompt=*/true);
  } catch (const jinja::RaisedError& e) {
    // The template's own message ("Conversation roles must alternate user/assistant/...").
    throw invalid_param("messages", std::string("the chat template rejected the messages: ") + e.what(),
                        "invalid_messages");
  } catch (const Error& e) {
    throw invalid_param("messages", std::string("the chat template could not render the messages: ") + e.what(),
                        "template_error");
  }
}

std::vector<int32_t> PromptBuilder::chat_prompt(const ChatRequest& r) const {
  return tokenize_chat_prompt(tok_, render_chat(r.messages, r.tools));
}

std::vector<int32_t> PromptBuilder::completion_prompt(const CompletionRequest& r) const {
  if (r.suffix) {
    if (!has_fim(tok_)) {
      throw invalid_param("suffix", "this model's vocabulary has no fill-in-the-middle tokens, so 'suffix' is not supported",
                          "fim_not_supported");
    }
    if (!r.prompt_text) {
      throw invalid_param("prompt", "'suffix' needs the prompt as text, not token ids");
    }
    FimRequest f;
    f.prefix = *r.prompt_text;
    f.suffix = *r.suffix;
    return build_fim_prompt(tok_, f);
  }
  if (r.prompt_text) {
    std::vector<int32_t> ids = tok_.encode(*r.prompt_text, /*add_special=*/true, /*parse_special=*/true);
    if (ids.empty()) throw invalid_param("prompt", "'prompt' is empty (it gives no tokens)", "empty_prompt");
    return ids;
  }
  check_vocab(r.prompt_tokens, "prompt");
  return r.prompt_tokens;
}

std::vector<int32_t> PromptBuilder::infill_prompt(const InfillRequest& r) const {
  if (!has_fim(tok_)) {
    throw ApiError(400, "this model's vocabulary has no fill-in-the-middle tokens; /infill needs a FIM model",
                   "invalid_request_error", "", "fim_not_supported");
  }
  FimRequest f;
  f.prefix = r.input_prefix;
  f.suffix = r.input_suffix;
  f.prompt = r.prompt;
  f.extra = r.input_extra;
  // Like llama.cpp: keep the end of the prefix and the start of the suffix when they are long,
  // leaving room to generate.
  const size_t budget = n_ctx_ > 64 ? static_cast<size_t>(n_ctx_) * 3 / 4 : static_cast<size_t>(n_ctx_);
  f.max_prefix_tokens = budget * 2 / 3;
  f.max_suffix_tokens = budget / 3;
  f.max_extra_tokens = budget / 2;
  return build_fim_prompt(tok_, f);
}

void PromptBuilder::check_vocab(const std::vector<int32_t>& ids, const std::string& param) const {
  const int32_t n_vocab = tok_.n_vocab();
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= n_vocab) {
      throw invalid_param(param + "[" + std::to_string(i) + "]",
                          "token id " + std::to_string(ids[i]) + " is outside the vocabulary (0.." +
                              std::to_string(n_vocab - 1) + ")");
    }
  }
}

int32_t PromptBuilder::check_fits(size_t n_prompt, const GenerationOptions& g, const std::string& prompt_param) const {
  const size_t ctx = static_cast<size_t>(n_ctx_);
  if (n_prompt >= ctx) {
    throw invalid_param(prompt_param, "the prompt has " + std::to_string(n_prompt) + " tokens; this model's context holds " +
                                          std::to_string(ctx) + " (prompt and generated tokens together)",
                        "context_length_exceeded");
  }
  const int32_t room = static_cast<int32_t>(ctx - n_prompt);
  if (!g.max_tokens) return room;
  if (*g.max_tokens > n_ctx_) {
    throw invalid_param(g.max_tokens_param, "'" + g.max_tokens_param + "' is " + std::to_string(*g.max_tokens) +
                                                "; this model's context holds " + std::to_string(ctx) + " tokens",
                        "context_length_exceeded");
  }
  if (*g.max_tokens > room) {
    throw invalid_param(g.max_tokens_param, "the context holds " + std::to_string(ctx) + " tokens, but " +
                                                std::to_string(n_prompt) + " are in the prompt and '" + g.max_tokens_param +
                                                "' asks for " + std::to_string(*g.max_tokens) + " more",
                        "context_length_exceeded");
  }
  return *g.max_tokens;
}

}  // namespace edgeinfer::server
