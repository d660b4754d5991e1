#pragma once
// The chat template a model should use: its own `tokenizer.chat_template`, or — for base models
// that ship none (stories260K) — a plain ChatML-style fallback, so chat works everywhere.
#include <memory>
#include <string>

#include "tokenizer/chat_template.h"

namespace edgeinfer {

class GgufFile;
class Tokenizer;

// ChatML-style fallback: "<|im_start|>role\ncontent<|im_end|>\n" per message, then
// "<|im_start|>assistant\n" when a generation prompt is asked for.
const std::string& fallback_chat_template();

struct ModelChatTemplate {
  std::unique_ptr<ChatTemplate> tmpl;
  bool is_fallback = false;
};

// Builds the model's template (throws Error when its own template does not parse).
ModelChatTemplate load_chat_template(const GgufFile& f, const Tokenizer& tok);

// Tokenizes a rendered chat prompt: special-token text is parsed (the template wrote it), and
// BOS is added only when the model wants one and the template did not already write it.
std::vector<int32_t> tokenize_chat_prompt(const Tokenizer& tok, const std::string& rendered);

}  // namespace edgeinfer
