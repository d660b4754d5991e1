#include "tokenizer/chat_template.h"

#include <utility>

#include "util/error.h"

namespace edgeinfer {

namespace {

jinja::TemplateOptions template_options() {
  jinja::TemplateOptions o;
  o.name = "chat template";
  o.lex.trim_blocks = true;
  o.lex.lstrip_blocks = true;
  return o;
}

}  // namespace

ChatTemplate::ChatTemplate(const std::string& source, std::string bos_token, std::string eos_token)
    : ChatTemplate(source, std::move(bos_token), std::move(eos_token), Options{}) {}

ChatTemplate::ChatTemplate(const std::string& source, std::string bos_token, std::string eos_token, Options options)
    : template_(source, template_options()),
      bos_(std::move(bos_token)),
      eos_(std::move(eos_token)),
      options_(std::move(options)) {}

template <class Json>
std::string ChatTemplate::apply_impl(const Json& messages, const Json& tools, bool add_generation_prompt,
                                     const Json& extra) const {
  if (!messages.is_array()) throw Error("chat template: messages must be a JSON array");
  if (!tools.is_null() && !tools.is_array()) throw Error("chat template: tools must be null or a JSON array");
  if (!extra.is_null() && !extra.is_object()) throw Error("chat template: extra variables must be a JSON object");

  std::vector<std::pair<std::string, jinja::Value>> vars;
  vars.emplace_back("messages", jinja::from_json(messages));
  vars.emplace_back("tools", jinja::from_json(tools));
  vars.emplace_back("add_generation_prompt", jinja::Value::boolean(add_generation_prompt));
  vars.emplace_back("bos_token", jinja::Value::string(bos_));
  vars.emplace_back("eos_token", jinja::Value::string(eos_));
  if (extra.is_object()) {
    for (auto it = extra.begin(); it != extra.end(); ++it) {
      for (const auto& [name, v] : vars)
        if (name == it.key()) throw Error("chat template: extra variable '" + it.key() + "' would replace a built-in variable");
      vars.emplace_back(it.key(), jinja::from_json(it.value()));
    }
  }

  jinja::RenderConfig config;
  config.limits = options_.limits;
  config.json_style = options_.json_style;
  if (options_.now) {
    config.now = options_.now();
  } else {
    std::time_t t = std::time(nullptr);
    localtime_r(&t, &config.now);
  }
  return template_.render(std::move(vars), config);
}

std::string ChatTemplate::apply(const nlohmann::json& messages, const nlohmann::json& tools, bool add_generation_prompt,
                                const nlohmann::json& extra) const {
  return apply_impl(messages, tools, add_generation_prompt, extra);
}

std::string ChatTemplate::apply(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                                bool add_generation_prompt, const nlohmann::ordered_json& extra) const {
  return apply_impl(messages, tools, add_generation_prompt, extra);
}

}  // namespace edgeinfer
