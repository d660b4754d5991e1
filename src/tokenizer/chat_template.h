#pragma once
// A model's chat template (GGUF `tokenizer.chat_template`), rendered the way Hugging Face
// transformers renders it: variables `messages`, `tools`, `add_generation_prompt`,
// `bos_token`, `eos_token` plus any extras, globals `raise_exception(msg)` and
// `strftime_now(fmt)`, trim_blocks + lstrip_blocks, jinja2's sandbox rules.
//
//   ChatTemplate tmpl(gguf_chat_template, "<|begin_of_text|>", "<|eot_id|>");
//   std::string prompt = tmpl.apply(messages, nullptr, /*add_generation_prompt=*/true);
//
// Messages may carry tool_calls, tool results (role "tool") and null content; they are
// passed to the template unchanged. Objects keep their key order when given as
// nlohmann::ordered_json (what Python's json.loads would see); nlohmann::json sorts keys,
// which changes what templates iterating over a tool schema's properties print.
#include <nlohmann/json.hpp>

#include <ctime>
#include <functional>
#include <string>

#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/template.h"

namespace edgeinfer {

class ChatTemplate {
 public:
  struct Options {
    // tojson as plain jinja2 does (the reference renderer) or as transformers overrides it.
    jinja::JsonStyle json_style = jinja::JsonStyle::Jinja2;
    jinja::RenderLimits limits;
    // The time strftime_now() formats; unset means the local time at each apply().
    std::function<std::tm()> now;
  };

  // Parses the template; throws Error naming the line on syntax errors or unsupported
  // constructs.
  ChatTemplate(const std::string& source, std::string bos_token, std::string eos_token);
  ChatTemplate(const std::string& source, std::string bos_token, std::string eos_token, Options options);

  // Renders the prompt. `tools` is null or an array; `extra` is null or an object of
  // additional variables (e.g. date_string, builtin_tools). Throws jinja::RaisedError with
  // the template's own message when it calls raise_exception(), Error otherwise.
  std::string apply(const nlohmann::json& messages, const nlohmann::json& tools, bool add_generation_prompt,
                    const nlohmann::json& extra = {}) const;
  std::string apply(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                    bool add_generation_prompt, const nlohmann::ordered_json& extra = {}) const;

  const std::string& bos_token() const { return bos_; }
  const std::string& eos_token() const { return eos_; }

 private:
  template <class Json>
  std::string apply_impl(const Json& messages, const Json& tools, bool add_generation_prompt, const Json& extra) const;

  jinja::Template template_;
  std::string bos_, eos_;
  Options options_;
};

}  // namespace edgeinfer
