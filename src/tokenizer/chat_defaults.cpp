#include "tokenizer/chat_defaults.h"

#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace edgeinfer {

const std::string& fallback_chat_template() {
  static const std::string kTemplate =
      "{% for message in messages %}"
      "{{ '<|im_start|>' + message['role'] + '\\n' + (message['content'] if message['content'] is string else '') + "
      "'<|im_end|>' + '\\n' }}"
      "{% endfor %}"
      "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
  return kTemplate;
}

ModelChatTemplate load_chat_template(const GgufFile& f, const Tokenizer& tok) {
  ModelChatTemplate out;
  const std::string bos = tok.bos() >= 0 ? tok.token_text(tok.bos()) : "";
  const std::string eos = tok.eos() >= 0 ? tok.token_text(tok.eos()) : "";
  auto src = f.get_string_opt("tokenizer.chat_template");
  if (src && !src->empty()) {
    out.tmpl = std::make_unique<ChatTemplate>(*src, bos, eos);
  } else {
    out.tmpl = std::make_unique<ChatTemplate>(fallback_chat_template(), bos, eos);
    out.is_fallback = true;
  }
  return out;
}

std::vector<int32_t> tokenize_chat_prompt(const Tokenizer& tok, const std::string& rendered) {
  bool add_bos = tok.add_bos() && tok.bos() >= 0;
  if (add_bos) {
    const std::string& bos_text = tok.token_text(tok.bos());
    if (!bos_text.empty() && rendered.compare(0, bos_text.size(), bos_text) == 0) add_bos = false;
  }
  std::vector<int32_t> ids;
  if (add_bos) ids.push_back(tok.bos());
  std::vector<int32_t> body = tok.encode(rendered, /*add_special=*/false, /*parse_special=*/true);
  ids.insert(ids.end(), body.begin(), body.end());
  return ids;
}

}  // namespace edgeinfer
