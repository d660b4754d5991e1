// Acceptance: every chat template in $EDGEINFER_DATA/templates renders exactly as Python's
// jinja2 renders it (set up as Hugging Face sets it up) for every conversation in
// tests/jinja/conversations, with and without add_generation_prompt, both with jinja2's own
// tojson filter and with transformers' override of it. Expected outputs are produced at test
// time by render_reference.py; a template that raises there must raise here.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "reference.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/jinja/errors.h"
#include "util/data_path.h"
#include "util/error.h"

namespace edgeinfer::jinja_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

constexpr const char* kBos = "<|bos|>";
constexpr const char* kEos = "<|eos|>";

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + p.string());
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<fs::path> files_with_extension(const fs::path& dir, const std::string& ext) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

ChatTemplate::Options fixed_clock() {
  ChatTemplate::Options o;
  o.now = [] {
    std::tm t{};
    t.tm_year = kNow[0] - 1900;
    t.tm_mon = kNow[1] - 1;
    t.tm_mday = kNow[2];
    t.tm_hour = kNow[3];
    t.tm_min = kNow[4];
    t.tm_sec = kNow[5];
    std::tm copy = t;
    timegm(&copy);
    t.tm_wday = copy.tm_wday;
    t.tm_yday = copy.tm_yday;
    return t;
  };
  return o;
}

struct Conversation {
  std::string name;
  ordered_json messages, tools, extra;
};

struct Case {
  size_t template_index;
  const Conversation* conversation;
  bool add_generation_prompt;
  bool transformers_tojson;
  ordered_json extra;
};

TEST(ChatTemplates, EveryTemplateMatchesPythonJinja2) {
  const fs::path template_dir = fs::path(data_dir()) / "templates";
  std::vector<fs::path> template_files = files_with_extension(template_dir, ".jinja");
  ASSERT_FALSE(template_files.empty()) << "no chat templates in " << template_dir << " (set EDGEINFER_DATA)";

  const fs::path source_dir = fs::path(EDGEINFER_SOURCE_DIR) / "tests" / "jinja";
  std::vector<Conversation> conversations;
  for (const auto& p : files_with_extension(source_dir / "conversations", ".json")) {
    ordered_json doc = ordered_json::parse(read_file(p));
    conversations.push_back({p.stem().string(), doc.at("messages"), doc.value("tools", ordered_json()),
                             doc.value("extra", ordered_json::object())});
  }
  ASSERT_GE(conversations.size(), 6u);
  ordered_json template_extras = ordered_json::parse(read_file(source_dir / "template_extras.json"));

  std::vector<std::string> sources, names;
  std::vector<ReferenceCase> ref_cases;
  std::vector<Case> cases;
  for (size_t t = 0; t < template_files.size(); ++t) {
    sources.push_back(read_file(template_files[t]));
    names.push_back(template_files[t].stem().string());
    for (bool hf_json : {false, true}) {
      for (const auto& conv : conversations) {
        for (bool agp : {false, true}) {
          ordered_json extra = conv.extra;
          if (template_extras.contains(names[t]))
            for (auto& [k, v] : template_extras[names[t]].items()) extra[k] = v;
          ordered_json vars = {{"messages", conv.messages}, {"tools", conv.tools}, {"add_generation_prompt", agp},
                               {"bos_token", kBos}, {"eos_token", kEos}};
          for (auto& [k, v] : extra.items()) vars[k] = v;
          std::string id = names[t] + "/" + conv.name + (agp ? "/gen" : "") + (hf_json ? "/transformers-tojson" : "");
          ref_cases.push_back({id, sources[t], vars, hf_json});
          cases.push_back({t, &conv, agp, hf_json, extra});
        }
      }
    }
  }
  std::vector<ReferenceResult> expected = render_reference(ref_cases);

  struct Tally {
    int identical = 0, total = 0, rendered = 0, raised = 0;
  };
  // [template][0: jinja2's tojson, 1: transformers' tojson]
  std::vector<std::array<Tally, 2>> tally(template_files.size());
  std::vector<std::array<std::unique_ptr<ChatTemplate>, 2>> parsed(template_files.size());
  std::vector<std::string> parse_errors(template_files.size());
  for (size_t t = 0; t < template_files.size(); ++t) {
    for (int style = 0; style < 2; ++style) {
      ChatTemplate::Options opts = fixed_clock();
      opts.json_style = style ? jinja::JsonStyle::Transformers : jinja::JsonStyle::Jinja2;
      try {
        parsed[t][style] = std::make_unique<ChatTemplate>(sources[t], kBos, kEos, opts);
      } catch (const Error& e) {
        parse_errors[t] = e.what();
      }
    }
  }

  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const ReferenceResult& ref = expected[i];
    const int style = c.transformers_tojson ? 1 : 0;
    Tally& tl = tally[c.template_index][style];
    ++tl.total;
    bool ok = false, raised = false;
    std::string ours;
    if (const auto& tmpl = parsed[c.template_index][style]) {
      try {
        ours = tmpl->apply(c.conversation->messages, c.conversation->tools, c.add_generation_prompt, c.extra);
        ok = true;
      } catch (const jinja::RaisedError& e) {
        raised = true;
        ours = e.what();
      } catch (const Error& e) {
        ours = e.what();
      }
    } else {
      ours = parse_errors[c.template_index];
    }
    const std::string& id = ref_cases[i].id;
    if (ref.ok) {
      EXPECT_TRUE(ok) << id << ": jinja2 rendered it, ours failed: " << ours;
      if (ok) {
        EXPECT_EQ(ours, ref.output) << id;
        if (ours == ref.output) {
          ++tl.identical;
          ++tl.rendered;
        }
      }
    } else {
      EXPECT_FALSE(ok) << id << ": jinja2 raised " << ref.error << "; ours rendered:\n" << ours;
      if (ref.error.rfind("TemplateError: ", 0) == 0) {
        EXPECT_TRUE(raised) << id << ": expected raise_exception(" << ref.error << "), got: " << ours;
        if (raised) {
          EXPECT_EQ(ours, ref.error.substr(15)) << id;
        }
      }
      if (!ok) {
        ++tl.identical;
        ++tl.raised;
      }
    }
  }

  std::printf("%-46s %-27s %-27s\n", "", "jinja2 tojson", "transformers tojson");
  std::printf("%-46s %9s %8s %7s  %9s %8s %7s\n", "template", "identical", "rendered", "raised", "identical", "rendered",
              "raised");
  for (size_t t = 0; t < template_files.size(); ++t) {
    const Tally& a = tally[t][0];
    const Tally& b = tally[t][1];
    std::printf("%-46s %5d/%-3d %8d %7d  %5d/%-3d %8d %7d\n", names[t].c_str(), a.identical, a.total, a.rendered, a.raised,
                b.identical, b.total, b.rendered, b.raised);
    // Each template must actually render (not just fail alike) for a real set of conversations.
    EXPECT_GE(a.rendered, 6) << names[t] << " renders too few of the test conversations";
  }
}

// ---- ChatTemplate API ----------------------------------------------------------------------

const char* kSimple =
    "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    "{% if tools %}[{{ tools|length }} tools]{% endif %}{% if add_generation_prompt %}<assistant>{% endif %}"
    "{{ suffix|default('') }}";

TEST(ChatTemplateApi, RendersVariables) {
  ChatTemplate t(kSimple, "<s>", "</s>");
  nlohmann::json msgs = {{{"role", "user"}, {"content", "hi"}}};
  EXPECT_EQ(t.apply(msgs, nullptr, false), "<s><user>hi");
  EXPECT_EQ(t.apply(msgs, nlohmann::json::array({{{"type", "function"}}}), true), "<s><user>hi[1 tools]<assistant>");
  EXPECT_EQ(t.apply(msgs, nullptr, false, {{"suffix", "!"}}), "<s><user>hi!");
  EXPECT_EQ(t.bos_token(), "<s>");
  EXPECT_EQ(t.eos_token(), "</s>");
}

TEST(ChatTemplateApi, KeyOrderFollowsTheJsonType) {
  ChatTemplate t("{% for k, v in messages[0]|items %}{{ k }}{% endfor %}", "", "");
  auto ordered = ordered_json::parse(R"([{"role": "user", "content": "x"}])");
  EXPECT_EQ(t.apply(ordered, ordered_json(), false), "rolecontent");
  auto sorted = nlohmann::json::parse(R"([{"role": "user", "content": "x"}])");
  EXPECT_EQ(t.apply(sorted, nullptr, false), "contentrole");
}

TEST(ChatTemplateApi, RejectsBadInput) {
  EXPECT_THROW(ChatTemplate("{% if %}", "", ""), Error);
  EXPECT_THROW(ChatTemplate("{% for x in y %}", "", ""), Error);
  ChatTemplate t(kSimple, "", "");
  EXPECT_THROW(t.apply(nlohmann::json::object(), nullptr, false), Error);
  EXPECT_THROW(t.apply(nlohmann::json::array(), nlohmann::json::object(), false), Error);
  EXPECT_THROW(t.apply(nlohmann::json::array(), nullptr, false, {{"messages", 1}}), Error);
  EXPECT_THROW(t.apply(nlohmann::json::array(), nullptr, false, nlohmann::json::array()), Error);
}

TEST(ChatTemplateApi, RaiseExceptionSurfacesTheMessage) {
  ChatTemplate t("{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}ok",
                 "", "");
  EXPECT_EQ(t.apply(nlohmann::json::parse(R"([{"role": "user"}])"), nullptr, false), "ok");
  try {
    t.apply(nlohmann::json::parse(R"([{"role": "system"}])"), nullptr, false);
    FAIL() << "no exception";
  } catch (const jinja::RaisedError& e) {
    EXPECT_STREQ(e.what(), "System role not supported");
  }
}

TEST(ChatTemplateApi, RuntimeErrorsNameTheLine) {
  ChatTemplate t("line1\n{{ messages[0].content + 1 }}", "", "");
  try {
    t.apply(nlohmann::json::parse(R"([{"content": "x"}])"), nullptr, false);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("chat template:2:"), std::string::npos) << e.what();
  }
}

TEST(ChatTemplateApi, StrftimeNowUsesTheClock) {
  ChatTemplate t("{{ strftime_now('%d %b %Y') }}", "", "", fixed_clock());
  EXPECT_EQ(t.apply(nlohmann::json::array(), nullptr, false), "26 Jul 2024");
  ChatTemplate live("{{ strftime_now('%Y') }}", "", "");
  EXPECT_EQ(live.apply(nlohmann::json::array(), nullptr, false).size(), 4u);
}

TEST(ChatTemplateApi, ConcurrentAppliesShareOneTemplate) {
  ChatTemplate t(
      "{% set ns = namespace(n=0) %}{% macro tag(r) %}<{{ r }}>{% endmacro %}"
      "{% for m in messages %}{% set ns.n = ns.n + 1 %}{{ tag(m.role) }}{{ m.content|trim }}{% endfor %}{{ ns.n }}",
      "", "");
  nlohmann::json msgs = nlohmann::json::array();
  for (int i = 0; i < 50; ++i) msgs.push_back({{"role", i % 2 ? "assistant" : "user"}, {"content", " m" + std::to_string(i) + " "}});
  const std::string expected = t.apply(msgs, nullptr, false);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      for (int i = 0; i < 50; ++i) mismatches[k] += t.apply(msgs, nullptr, false) != expected;
    });
  for (auto& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
  EXPECT_EQ(expected.substr(expected.size() - 2), "50");
}

}  // namespace
}  // namespace edgeinfer::jinja_test
