#pragma once
// Turns parsed requests into prompt token ids for the model being served, and checks what needs
// the model: the prompt and the requested generation against the context, token ids against the
// vocabulary, fill-in-the-middle support. Chat messages go through the model's chat template
// (GGUF tokenizer.chat_template, or a --chat-template-file); a model without one (stories260K)
// uses the project's ChatML-style fallback (tokenizer/chat_defaults.h):
//   <|im_start|>{role}\n{content}<|im_end|>\n ... <|im_start|>assistant\n
// Failures are ApiError 400 naming the field (context_length_exceeded, fim_not_supported, ...).
#include <memory>
#include <string>
#include <vector>

#include "server/json_fields.h"
#include "server/request_parsing.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace edgeinfer {
class GgufFile;
}

namespace edgeinfer::server {

class PromptBuilder {
 public:
  // `template_source` overrides the model's template when non-empty. Throws Error when a
  // template does not parse.
  PromptBuilder(const Tokenizer& tok, const GgufFile& gguf, const std::string& template_source, int32_t n_ctx);

  bool template_is_fallback() const { return is_fallback_; }
  int32_t n_ctx() const { return n_ctx_; }

  // The rendered chat prompt (text) and its tokens.
  std::string render_chat(const json& messages, const json& tools) const;
  std::vector<int32_t> chat_prompt(const ChatRequest& r) const;
  // Text prompts get BOS when the vocabulary adds one; special-token text is parsed, as
  // llama.cpp's server does. With a suffix, the fill-in-the-middle layout is used.
  std::vector<int32_t> completion_prompt(const CompletionRequest& r) const;
  std::vector<int32_t> infill_prompt(const InfillRequest& r) const;

  // Checks token ids against the vocabulary (400 naming `param`).
  void check_vocab(const std::vector<int32_t>& ids, const std::string& param) const;
  // The prompt must leave room for at least one generated token, and an explicit max_tokens must
  // fit with the prompt in the context. Returns the max_tokens to request from the engine.
  int32_t check_fits(size_t n_prompt, const GenerationOptions& g, const std::string& prompt_param) const;

 private:
  const Tokenizer& tok_;
  std::unique_ptr<ChatTemplate> tmpl_;
  bool is_fallback_ = false;
  int32_t n_ctx_;
};

}  // namespace edgeinfer::server
