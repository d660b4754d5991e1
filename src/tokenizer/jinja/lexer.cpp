#include "tokenizer/jinja/lexer.h"

#include <cstdio>

#include "tokenizer/jinja/text.h"
#include "util/error.h"

namespace edgeinfer::jinja {

namespace {

[[noreturn]] void fail(const std::string& name, int line, const std::string& msg) {
  throw Error(name + ":" + std::to_string(line) + ": " + msg);
}

// Decodes one UTF-8 code point at `pos` (source is valid enough; invalid bytes count as one).
char32_t code_point_at(const std::string& s, size_t pos, size_t* len) {
  unsigned char c = static_cast<unsigned char>(s[pos]);
  size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
  if (pos + n > s.size()) n = 1;
  std::u32string cps = text::decode(std::string_view(s).substr(pos, n));
  *len = n;
  return cps.empty() ? 0xFFFD : cps[0];
}

size_t skip_space(const std::string& s, size_t pos, int* line) {
  while (pos < s.size()) {
    size_t len;
    char32_t c = code_point_at(s, pos, &len);
    if (!text::is_space(c)) break;
    if (c == '\n') ++*line;
    pos += len;
  }
  return pos;
}

// Python str.rstrip() on template data.
std::string rstrip_space(const std::string& s) {
  std::u32string cps = text::decode(s);
  size_t e = cps.size();
  while (e > 0 && text::is_space(cps[e - 1])) --e;
  return text::encode(std::u32string_view(cps).substr(0, e));
}

bool starts_with(const std::string& s, size_t pos, const char* lit) {
  for (size_t i = 0; lit[i]; ++i)
    if (pos + i >= s.size() || s[pos + i] != lit[i]) return false;
  return true;
}

// Whitespace control in front of a tag: `-` strips all trailing whitespace of the data;
// lstrip_blocks strips spaces/tabs between the last line start and a block or comment tag.
std::string strip_before_tag(std::string data, char sign, bool is_variable, bool line_starting, const LexOptions& o) {
  if (sign == '-') return rstrip_space(data);
  if (sign != '+' && o.lstrip_blocks && !is_variable) {
    size_t nl = data.rfind('\n');
    size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
    if (l_pos > 0 || line_starting) {
      std::u32string tail = text::decode(std::string_view(data).substr(l_pos));
      bool all_ws = !tail.empty();
      for (char32_t c : tail) all_ws = all_ws && text::is_space(c);
      if (all_ws) data.resize(l_pos);
    }
  }
  return data;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Python's backslashreplace form of a code point (what jinja2 feeds to unicode-escape).
std::string backslash_form(char32_t c) {
  char buf[16];
  if (c < 0x100)
    std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
  else if (c < 0x10000)
    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
  else
    std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(c));
  return buf;
}

// Decodes the body of a string literal with Python's unicode-escape rules.
std::string decode_string(const std::string& body, const std::string& name, int line) {
  std::string out;
  size_t i = 0, n = body.size();
  while (i < n) {
    char c = body[i];
    if (c != '\\') {
      out += c;
      ++i;
      continue;
    }
    if (i + 1 >= n) {
      out += '\\';
      ++i;
      continue;
    }
    char e = body[i + 1];
    i += 2;
    auto read_hex = [&](int digits) -> char32_t {
      if (i + static_cast<size_t>(digits) > n) fail(name, line, "truncated escape in string literal");
      char32_t v = 0;
      for (int k = 0; k < digits; ++k) {
        int h = hex_value(body[i + static_cast<size_t>(k)]);
        if (h < 0) fail(name, line, "truncated escape in string literal");
        v = v * 16 + static_cast<char32_t>(h);
      }
      i += static_cast<size_t>(digits);
      return v;
    };
    auto put = [&](char32_t cp) {
      if (cp > 0x10FFFF) fail(name, line, "illegal Unicode character in string literal");
      if (cp >= 0xD800 && cp <= 0xDFFF) fail(name, line, "lone surrogate escape in string literal");
      text::append_utf8(out, cp);
    };
    switch (e) {
      case '\n': break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x': put(read_hex(2)); break;
      case 'u': put(read_hex(4)); break;
      case 'U': put(read_hex(8)); break;
      case 'N': fail(name, line, "\\N{...} escapes are not supported");
      default:
        if (e >= '0' && e <= '7') {
          char32_t v = static_cast<char32_t>(e - '0');
          for (int k = 0; k < 2 && i < n && body[i] >= '0' && body[i] <= '7'; ++k) v = v * 8 + static_cast<char32_t>(body[i++] - '0');
          put(v);
        } else if (static_cast<unsigned char>(e) >= 0x80) {
          // jinja2 first turns the non-ASCII character into its backslash form; the
          // preceding backslash then escapes that form's own backslash.
          size_t len;
          char32_t cp = code_point_at(body, i - 1, &len);
          i = i - 1 + len;
          out += '\\';
          out += backslash_form(cp).substr(1);
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return out;
}

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Matches (\d+_)*\d+ at pos; returns the end or pos when nothing matched.
size_t match_digits(const std::string& s, size_t pos) {
  size_t i = pos;
  if (i >= s.size() || !is_digit(s[i])) return pos;
  while (i < s.size() && is_digit(s[i])) ++i;
  while (i + 1 < s.size() && s[i] == '_' && is_digit(s[i + 1])) {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i;
  }
  return i;
}

std::string without_underscores(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '_') out += c;
  return out;
}

class Lexer {
 public:
  Lexer(const std::string& src, const LexOptions& o, const std::string& name) : s_(src), o_(o), name_(name) {}

  std::vector<Token> run() {
    size_t pos = 0;
    bool line_starting = true;
    while (pos < s_.size()) {
      size_t open = find_open(pos);
      if (open == std::string::npos) {
        emit_data(s_.substr(pos));
        break;
      }
      std::string data = s_.substr(pos, open - pos);
      char kind = s_[open + 1];  // '{', '%' or '#'
      size_t after = open + 2;
      char sign = (after < s_.size() && (s_[after] == '-' || s_[after] == '+')) ? s_[after] : 0;
      size_t raw_end;
      if (kind == '%' && match_raw_begin(open, &raw_end)) {
        emit_data(strip_before_tag(data, sign, false, line_starting, o_));
        line_ += count_newlines(s_, open, raw_end);
        pos = lex_raw(raw_end, s_[raw_end - 1] == '\n', &line_starting);
        continue;
      }
      emit_data(strip_before_tag(data, sign, kind == '{', line_starting, o_));
      pos = after + (sign ? 1 : 0);
      if (kind == '#') {
        pos = lex_comment(pos, &line_starting);
      } else {
        pos = lex_tag(pos, kind == '{', &line_starting);
      }
    }
    tokens_.push_back(Token{Tok::Eof, "", line_});
    return std::move(tokens_);
  }

 private:
  static int count_newlines(const std::string& s, size_t from, size_t to) {
    int n = 0;
    for (size_t i = from; i < to; ++i) n += s[i] == '\n';
    return n;
  }

  size_t find_open(size_t pos) const {
    while (true) {
      size_t p = s_.find('{', pos);
      if (p == std::string::npos || p + 1 >= s_.size()) return std::string::npos;
      char k = s_[p + 1];
      if (k == '{' || k == '%' || k == '#') return p;
      pos = p + 1;
    }
  }

  void emit_data(std::string text) {
    if (text.empty()) return;
    int lines = count_newlines(text, 0, text.size());
    tokens_.push_back(Token{Tok::Data, std::move(text), line_});
    line_ += lines;
  }

  // {%[-+]? \s* raw \s* (-%}\s* | %})
  bool match_raw_begin(size_t open, size_t* end) const {
    size_t i = open + 2;
    if (i < s_.size() && (s_[i] == '-' || s_[i] == '+')) ++i;
    int dummy = 0;
    i = skip_space(s_, i, &dummy);
    if (!starts_with(s_, i, "raw")) return false;
    i = skip_space(s_, i + 3, &dummy);
    if (starts_with(s_, i, "-%}")) {
      *end = skip_space(s_, i + 3, &dummy);
      return true;
    }
    if (starts_with(s_, i, "%}")) {
      *end = i + 2;
      return true;
    }
    return false;
  }

  size_t lex_raw(size_t pos, bool line_starting, bool* line_starting_out) {
    size_t search = pos;
    while (true) {
      size_t p = s_.find("{%", search);
      if (p == std::string::npos) fail(name_, line_, "Missing end of raw directive");
      size_t i = p + 2;
      char sign = 0;
      if (i < s_.size() && (s_[i] == '-' || s_[i] == '+')) sign = s_[i++];
      int dummy = 0;
      i = skip_space(s_, i, &dummy);
      if (starts_with(s_, i, "endraw")) {
        i = skip_space(s_, i + 6, &dummy);
        size_t end = std::string::npos;
        if (starts_with(s_, i, "+%}")) {
          end = i + 3;
        } else if (starts_with(s_, i, "-%}")) {
          end = skip_space(s_, i + 3, &dummy);
        } else if (starts_with(s_, i, "%}")) {
          end = i + 2;
          if (o_.trim_blocks && end < s_.size() && s_[end] == '\n') ++end;
        }
        if (end != std::string::npos) {
          emit_data(strip_before_tag(s_.substr(pos, p - pos), sign, false, line_starting, o_));
          line_ += count_newlines(s_, p, end);
          *line_starting_out = s_[end - 1] == '\n';
          return end;
        }
      }
      search = p + 2;
    }
  }

  size_t lex_comment(size_t pos, bool* line_starting) {
    size_t q = s_.find("#}", pos);
    if (q == std::string::npos) fail(name_, line_, "Missing end of comment tag");
    char sign = (q > pos && (s_[q - 1] == '-' || s_[q - 1] == '+')) ? s_[q - 1] : 0;
    size_t end = q + 2;
    if (sign == '-') {
      end = skip_space(s_, end, &line_);
    } else if (!sign && o_.trim_blocks && end < s_.size() && s_[end] == '\n') {
      ++end;
      ++line_;
    }
    line_ += count_newlines(s_, pos, q + 2);
    *line_starting = s_[end - 1] == '\n';
    return end;
  }

  size_t lex_tag(size_t pos, bool variable, bool* line_starting) {
    tokens_.push_back(Token{variable ? Tok::VarBegin : Tok::BlockBegin, "", line_});
    std::vector<char> balance;
    while (true) {
      if (pos >= s_.size()) fail(name_, line_, variable ? "unexpected end of template, expected '}}'" : "unexpected end of template, expected '%}'");
      if (balance.empty()) {
        size_t end = std::string::npos;
        if (variable) {
          if (starts_with(s_, pos, "-}}")) {
            end = skip_space(s_, pos + 3, &line_);
          } else if (starts_with(s_, pos, "}}")) {
            end = pos + 2;
          }
        } else {
          if (starts_with(s_, pos, "+%}")) {
            end = pos + 3;
          } else if (starts_with(s_, pos, "-%}")) {
            end = skip_space(s_, pos + 3, &line_);
          } else if (starts_with(s_, pos, "%}")) {
            end = pos + 2;
            if (o_.trim_blocks && end < s_.size() && s_[end] == '\n') {
              ++end;
              ++line_;
            }
          }
        }
        if (end != std::string::npos) {
          tokens_.push_back(Token{variable ? Tok::VarEnd : Tok::BlockEnd, "", line_});
          *line_starting = s_[end - 1] == '\n';
          return end;
        }
      }
      size_t len;
      char32_t cp = code_point_at(s_, pos, &len);
      if (text::is_space(cp)) {
        pos = skip_space(s_, pos, &line_);
        continue;
      }
      char c = s_[pos];
      if (size_t e = match_float(pos); e != pos) {
        Token t{Tok::Float, s_.substr(pos, e - pos), line_};
        t.float_value = std::stod(without_underscores(t.text));
        tokens_.push_back(std::move(t));
        pos = e;
      } else if (is_digit(c)) {
        pos = lex_integer(pos);
      } else if (is_name_start(c)) {
        size_t e2 = pos;
        while (e2 < s_.size() && is_name_char(s_[e2])) ++e2;
        tokens_.push_back(Token{Tok::Name, s_.substr(pos, e2 - pos), line_});
        pos = e2;
      } else if (c == '\'' || c == '"') {
        pos = lex_string(pos);
      } else {
        pos = lex_operator(pos, &balance);
      }
    }
  }

  // (?<!\.)(\d+_)*\d+((\.(\d+_)*\d+)?e[+\-]?(\d+_)*\d+|\.(\d+_)*\d+), case-insensitive
  size_t match_float(size_t pos) const {
    if (pos > 0 && s_[pos - 1] == '.') return pos;
    size_t i = match_digits(s_, pos);
    if (i == pos) return pos;
    size_t frac_end = i;
    if (i < s_.size() && s_[i] == '.') {
      size_t f = match_digits(s_, i + 1);
      if (f != i + 1) frac_end = f;
    }
    size_t j = frac_end;
    if (j < s_.size() && (s_[j] == 'e' || s_[j] == 'E')) {
      size_t k = j + 1;
      if (k < s_.size() && (s_[k] == '+' || s_[k] == '-')) ++k;
      size_t ee = match_digits(s_, k);
      if (ee != k) return ee;
    }
    return frac_end != i ? frac_end : pos;
  }

  size_t lex_integer(size_t pos) {
    size_t i = pos;
    int base = 10;
    if (s_[i] == '0' && i + 1 < s_.size() && (s_[i + 1] == 'x' || s_[i + 1] == 'X' || s_[i + 1] == 'o' || s_[i + 1] == 'O' || s_[i + 1] == 'b' || s_[i + 1] == 'B')) {
      char p = static_cast<char>(s_[i + 1] | 0x20);
      base = p == 'x' ? 16 : p == 'o' ? 8 : 2;
      size_t j = i + 2;
      auto ok = [&](char ch) {
        int h = hex_value(ch);
        return h >= 0 && h < base;
      };
      while (j < s_.size() && (ok(s_[j]) || (s_[j] == '_' && j + 1 < s_.size() && ok(s_[j + 1])))) ++j;
      if (j == i + 2) base = 10;  // just "0"
      else i = j;
    }
    if (base == 10) {
      if (s_[i] == '0') {
        ++i;
        while (i < s_.size() && (s_[i] == '0' || (s_[i] == '_' && i + 1 < s_.size() && s_[i + 1] == '0'))) ++i;
      } else {
        i = match_digits(s_, i);
      }
    }
    std::string digits = without_underscores(std::string_view(s_).substr(pos, i - pos));
    if (base != 10) digits = digits.substr(2);
    Token t{Tok::Int, s_.substr(pos, i - pos), line_};
    try {
      size_t used = 0;
      unsigned long long v = std::stoull(digits, &used, base);
      if (v > static_cast<unsigned long long>(INT64_MAX)) throw std::out_of_range("int");
      t.int_value = static_cast<int64_t>(v);
    } catch (const std::exception&) {
      fail(name_, line_, "integer literal " + t.text + " is too large");
    }
    tokens_.push_back(std::move(t));
    return i;
  }

  size_t lex_string(size_t pos) {
    char q = s_[pos];
    size_t i = pos + 1;
    int start_line = line_;
    while (i < s_.size() && s_[i] != q) {
      if (s_[i] == '\\' && i + 1 < s_.size()) ++i;
      if (s_[i] == '\n') ++line_;
      ++i;
    }
    if (i >= s_.size()) fail(name_, start_line, "unterminated string literal");
    tokens_.push_back(Token{Tok::String, decode_string(s_.substr(pos + 1, i - pos - 1), name_, start_line), start_line});
    return i + 1;
  }

  size_t lex_operator(size_t pos, std::vector<char>* balance) {
    static const char* const kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : kTwo) {
      if (starts_with(s_, pos, op)) {
        tokens_.push_back(Token{Tok::Op, op, line_});
        return pos + 2;
      }
    }
    char c = s_[pos];
    static const std::string kOne = "+-/*%~[](){}><=.:|,;";
    if (kOne.find(c) == std::string::npos) {
      std::string shown = s_.substr(pos, 1);
      fail(name_, line_, "unexpected char '" + shown + "'");
    }
    if (c == '(' || c == '[' || c == '{') {
      balance->push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    } else if (c == ')' || c == ']' || c == '}') {
      if (balance->empty()) fail(name_, line_, std::string("unexpected '") + c + "'");
      char expected = balance->back();
      balance->pop_back();
      if (expected != c) fail(name_, line_, std::string("unexpected '") + c + "', expected '" + expected + "'");
    }
    tokens_.push_back(Token{Tok::Op, std::string(1, c), line_});
    return pos + 1;
  }

  const std::string& s_;
  const LexOptions& o_;
  const std::string& name_;
  std::vector<Token> tokens_;
  int line_ = 1;
};

}  // namespace

std::vector<Token> tokenize(const std::string& source, const LexOptions& opts, const std::string& name) {
  // jinja2 normalizes \r\n and \r to \n and drops one trailing newline before lexing.
  std::string src;
  src.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      src += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      src += source[i];
    }
  }
  if (!opts.keep_trailing_newline && !src.empty() && src.back() == '\n') src.pop_back();
  return Lexer(src, opts, name).run();
}

}  // namespace edgeinfer::jinja
