// Unit tests of the Jinja interpreter: language_cases.txt rendered side by side with Python's
// jinja2 (the reference, run at test time), plus direct checks of what the reference cannot
// show: error messages and lines, limits, the Value model and the JSON conversion.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "reference.h"
#include "tokenizer/jinja/errors.h"
#include "tokenizer/jinja/pyformat.h"
#include "tokenizer/jinja/template.h"
#include "util/error.h"

namespace edgeinfer::jinja_test {
namespace {

using jinja::RenderConfig;
using jinja::Template;
using jinja::Value;

RenderConfig fixed_config() {
  RenderConfig c;
  c.now.tm_year = kNow[0] - 1900;
  c.now.tm_mon = kNow[1] - 1;
  c.now.tm_mday = kNow[2];
  c.now.tm_hour = kNow[3];
  c.now.tm_min = kNow[4];
  c.now.tm_sec = kNow[5];
  c.now.tm_isdst = -1;
  std::tm copy = c.now;
  timegm(&copy);  // fills in weekday and day of year
  c.now.tm_wday = copy.tm_wday;
  c.now.tm_yday = copy.tm_yday;
  return c;
}

struct Outcome {
  bool ok = false;
  bool raised = false;  // raise_exception() was called
  std::string text;     // output, or the error message
};

Outcome render_ours(const std::string& source, const nlohmann::ordered_json& vars, const std::string& name) {
  Outcome o;
  try {
    jinja::TemplateOptions opts;
    opts.name = name;
    Template t(source, opts);
    std::vector<std::pair<std::string, Value>> v;
    for (auto it = vars.begin(); it != vars.end(); ++it) v.emplace_back(it.key(), jinja::from_json(it.value()));
    o.text = t.render(std::move(v), fixed_config());
    o.ok = true;
  } catch (const jinja::RaisedError& e) {
    o.raised = true;
    o.text = e.what();
  } catch (const Error& e) {
    o.text = e.what();
  }
  return o;
}

std::string render(const std::string& source, const nlohmann::ordered_json& vars = nlohmann::ordered_json::object()) {
  Outcome o = render_ours(source, vars, "t");
  if (!o.ok) throw Error(o.text);
  return o.text;
}

std::string error_of(const std::string& source) {
  Outcome o = render_ours(source, nlohmann::ordered_json::object(), "t");
  EXPECT_FALSE(o.ok) << source << " rendered " << o.text;
  return o.text;
}

std::vector<ReferenceCase> load_cases() {
  std::ifstream f(std::string(EDGEINFER_SOURCE_DIR) + "/tests/jinja/language_cases.txt", std::ios::binary);
  if (!f) throw std::runtime_error("cannot open tests/jinja/language_cases.txt");
  std::vector<ReferenceCase> cases;
  std::string line;
  std::vector<std::string> body;
  auto flush = [&] {
    if (cases.empty()) return;
    std::string s;
    for (size_t i = 0; i < body.size(); ++i) s += (i ? "\n" : "") + body[i];
    cases.back().source = s;
    body.clear();
  };
  while (std::getline(f, line)) {
    if (line.rfind("### ", 0) == 0) {
      flush();
      ReferenceCase c;
      std::string header = line.substr(4);
      size_t bar = header.find(" | ");
      c.id = header.substr(0, bar);
      if (bar != std::string::npos) c.vars = nlohmann::ordered_json::parse(header.substr(bar + 3));
      cases.push_back(std::move(c));
    } else if (!cases.empty()) {
      body.push_back(line);
    }
  }
  flush();
  return cases;
}

TEST(JinjaLanguage, MatchesPythonJinja2OnEveryCase) {
  std::vector<ReferenceCase> cases = load_cases();
  ASSERT_GT(cases.size(), 100u);
  std::vector<ReferenceResult> expected = render_reference(cases);
  int same = 0, raising = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    Outcome ours = render_ours(c.source, c.vars, c.id);
    const auto& ref = expected[i];
    if (ref.ok) {
      EXPECT_TRUE(ours.ok) << c.id << ": jinja2 rendered " << ref.output << "\nours failed: " << ours.text;
      if (ours.ok) {
        EXPECT_EQ(ours.text, ref.output) << c.id;
        same += ours.text == ref.output;
      }
    } else {
      ++raising;
      EXPECT_FALSE(ours.ok) << c.id << ": jinja2 raised " << ref.error << "\nours rendered: " << ours.text;
      if (ref.error.rfind("TemplateError: ", 0) == 0) {
        EXPECT_TRUE(ours.raised) << c.id << ": " << ours.text;
        EXPECT_EQ(ours.text, ref.error.substr(15)) << c.id;
      }
      same += !ours.ok;
    }
  }
  std::printf("language cases: %d/%zu agree with jinja2 (%d of them raise in both)\n", same, cases.size(), raising);
}

// ---- things the reference cannot show ------------------------------------------------------

TEST(JinjaLanguage, ErrorsNameTemplateAndLine) {
  std::string e = error_of("line one\n{{ x.y }}");
  EXPECT_NE(e.find("t:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("'x' is undefined"), std::string::npos) << e;

  e = error_of("a\n\n{% if %}");
  EXPECT_NE(e.find("t:3:"), std::string::npos) << e;

  e = error_of("{{ 'a'|nosuch }}");
  EXPECT_NE(e.find("no filter named 'nosuch'"), std::string::npos) << e;

  e = error_of("{{ x|groupby('a') }}");
  EXPECT_NE(e.find("unsupported filter 'groupby'"), std::string::npos) << e;

  e = error_of("{% extends 'base.html' %}");
  EXPECT_NE(e.find("unsupported template construct '{% extends %}'"), std::string::npos) << e;

  e = error_of("{% for x in y recursive %}{% endfor %}");
  EXPECT_NE(e.find("recursive"), std::string::npos) << e;

  e = error_of("\n{% include 'x' %}");
  EXPECT_NE(e.find("t:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("include"), std::string::npos) << e;

  e = error_of("{{ cycler('a') }}");
  EXPECT_NE(e.find("cycler"), std::string::npos) << e;

  e = error_of("{% break %}");
  EXPECT_NE(e.find("outside of a for loop"), std::string::npos) << e;
}

TEST(JinjaLanguage, RaiseExceptionCarriesTheTemplatesMessage) {
  Template t("{{ raise_exception('Roles must alternate') }}");
  try {
    t.render({}, fixed_config());
    FAIL() << "no exception";
  } catch (const jinja::RaisedError& e) {
    EXPECT_STREQ(e.what(), "Roles must alternate");
  }
}

TEST(JinjaLanguage, LimitsStopRunawayTemplates) {
  RenderConfig c = fixed_config();
  c.limits.max_output_bytes = 1000;
  EXPECT_THROW(Template("{% for i in range(10000) %}xxxxxxxx{% endfor %}").render({}, c), Error);
  EXPECT_THROW(Template("{{ 'x' * 100000 }}").render({}, c), Error);
  EXPECT_THROW(Template("{{ 'x' * 9223372036854775807 }}").render({}, c), Error);
  EXPECT_EQ(Template("{{ '' * 9223372036854775807 }}").render({}, c), "");

  c = fixed_config();
  c.limits.max_steps = 10000;
  EXPECT_THROW(Template("{% for i in range(100000) %}{% endfor %}").render({}, c), Error);
  EXPECT_THROW(Template("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}").render({}, c), Error);

  c = fixed_config();
  std::string e;
  try {
    Template("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}").render({}, c);
  } catch (const Error& err) {
    e = err.what();
  }
  EXPECT_NE(e.find("nested too deeply"), std::string::npos) << e;

  // Doubling a list in a loop hits the sequence bound instead of memory.
  c.limits.max_sequence_items = 1 << 16;
  EXPECT_THROW(Template("{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}").render({}, c),
               Error);

  // Deeply nested source fails at parse time, not with a stack overflow.
  EXPECT_THROW(Template("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}"), Error);
  EXPECT_THROW(Template("{{ " + std::string(3000, '[') + std::string(3000, ']') + " }}"), Error);
  EXPECT_THROW(Template("{{ " + std::string(3000, '-') + "1 }}"), Error);
  EXPECT_THROW(Template("{{ " + std::string(3000, '{') + std::string(3000, '}') + " }}"), Error);
  std::string nested_ifs;
  for (int i = 0; i < 1000; ++i) nested_ifs += "{% if true %}";
  EXPECT_THROW(Template{nested_ifs}, Error);
}

TEST(JinjaLanguage, SelfReferencingNamespaceIsReleased) {
  // A namespace holding itself and a macro capturing its scope form reference cycles; the
  // interpreter breaks them when the render ends (ASan's leak checker verifies this).
  EXPECT_EQ(render("{% set ns = namespace() %}{% set ns.self = [ns] %}{% macro m() %}{{ ns.self|length }}{% endmacro %}"
                   "{% set ns.m = m %}{{ ns.m() }}"),
            "1");
}

TEST(JinjaLanguage, TemplateIsReusableAndIndependentPerRender) {
  Template t("{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}");
  for (int i = 0; i < 3; ++i) {
    nlohmann::json msgs = nlohmann::json::array();
    for (int k = 0; k <= i; ++k) msgs.push_back({{"role", "user"}});
    EXPECT_EQ(t.render({{"messages", jinja::from_json(msgs)}}, fixed_config()), std::to_string(i + 1));
  }
}

TEST(JinjaLanguage, NewlinesAreNormalized) {
  EXPECT_EQ(render("a\r\nb\rc\r\n"), "a\nb\nc");
  EXPECT_EQ(render("{% if true %}\r\nx{% endif %}"), "x");
}

TEST(JinjaLanguage, ValueModel) {
  EXPECT_EQ(jinja::float_repr(0.1), "0.1");
  EXPECT_EQ(jinja::float_repr(1e22), "1e+22");
  EXPECT_EQ(jinja::float_repr(123456789.0), "123456789.0");
  EXPECT_EQ(jinja::float_repr(5e-324), "5e-324");
  EXPECT_EQ(jinja::string_repr("it's"), "\"it's\"");
  EXPECT_TRUE(jinja::equals(Value::integer(1), Value::floating(1.0)));
  EXPECT_TRUE(jinja::equals(Value::boolean(true), Value::integer(1)));
  EXPECT_FALSE(jinja::equals(Value::list({Value::integer(1)}), Value::tuple({Value::integer(1)})));
  EXPECT_TRUE(Value::iterator({}).truthy());
  EXPECT_FALSE(Value::list({}).truthy());
}

TEST(JinjaLanguage, FromJsonKeepsOrderAndTypes) {
  auto j = nlohmann::ordered_json::parse(R"({"z": 1, "a": [true, null, 1.5, "s", 18446744073709551615]})");
  EXPECT_THROW(jinja::from_json(j), Error);  // beyond int64
  j["a"].erase(4);
  Value v = jinja::from_json(j);
  EXPECT_EQ(jinja::py_str(v), "{'z': 1, 'a': [True, None, 1.5, 's']}");

  nlohmann::json deep = nlohmann::json::array();
  nlohmann::json* cur = &deep;
  for (int i = 0; i < 1000; ++i) {
    cur->push_back(nlohmann::json::array());
    cur = &(*cur)[0];
  }
  EXPECT_THROW(jinja::from_json(deep), Error);
}

TEST(JinjaLanguage, TransformersJsonStyle) {
  RenderConfig c = fixed_config();
  c.json_style = jinja::JsonStyle::Transformers;
  Template t("{{ {'b': 'é<', 'a': 1}|tojson }}|{{ [1, 2]|tojson(indent=2) }}|{{ 'a'|tojson + '<' }}");
  EXPECT_EQ(t.render({}, c), "{\"b\": \"é<\", \"a\": 1}|[\n  1,\n  2\n]|\"a\"<");
}

}  // namespace
}  // namespace edgeinfer::jinja_test
