#include "tokenizer/jinja/text.h"

#include "tokenizer/jinja/special_casing.h"

#include <utf8proc.h>

#include <algorithm>
#include <iterator>

namespace edgeinfer::jinja::text {

std::u32string decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    char32_t cp;
    size_t n;
    if (c < 0x80) {
      cp = c;
      n = 1;
    } else if ((c & 0xE0) == 0xC0) {
      cp = c & 0x1F;
      n = 2;
    } else if ((c & 0xF0) == 0xE0) {
      cp = c & 0x0F;
      n = 3;
    } else if ((c & 0xF8) == 0xF0) {
      cp = c & 0x07;
      n = 4;
    } else {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    if (i + n > s.size()) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    bool ok = true;
    for (size_t k = 1; k < n; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) {
        ok = false;
        break;
      }
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (!ok) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += n;
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string encode(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) append_utf8(out, c);
  return out;
}

size_t length(std::string_view s) {
  size_t n = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

namespace {

utf8proc_category_t category(char32_t c) {
  if (c > 0x10FFFF) return UTF8PROC_CATEGORY_CN;
  return utf8proc_category(static_cast<utf8proc_int32_t>(c));
}

bool is_numeric_cat(char32_t c) {
  auto k = category(c);
  return k == UTF8PROC_CATEGORY_ND || k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_NO;
}

char32_t simple_upper(char32_t c) {
  return c < 0x80 ? (c >= 'a' && c <= 'z' ? c - 32 : c)
                  : static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(c)));
}
char32_t simple_lower(char32_t c) {
  return c < 0x80 ? (c >= 'A' && c <= 'Z' ? c + 32 : c)
                  : static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
}
char32_t simple_title(char32_t c) {
  return c < 0x80 ? simple_upper(c)
                  : static_cast<char32_t>(utf8proc_totitle(static_cast<utf8proc_int32_t>(c)));
}

template <size_t N>
const char32_t* special(const SpecialCase (&table)[N], char32_t c) {
  auto it = std::lower_bound(std::begin(table), std::end(table), c, [](const SpecialCase& s, char32_t v) { return s.cp < v; });
  return (it != std::end(table) && it->cp == c) ? it->mapped : nullptr;
}

// Python applies the full (one-to-many) mappings of SpecialCasing.txt on top of the simple ones.
void push_upper(std::u32string& out, char32_t c) {
  if (c >= 0xDF)
    if (const char32_t* m = special(kSpecialUpper, c)) {
      out += m;
      return;
    }
  out.push_back(simple_upper(c));
}
void push_lower(std::u32string& out, char32_t c) {
  if (c == 0x130) {  // the only one-to-many lowercase mapping
    out += U"i\u0307";
    return;
  }
  out.push_back(simple_lower(c));
}
void push_title(std::u32string& out, char32_t c) {
  if (c >= 0xDF)
    if (const char32_t* m = special(kSpecialTitle, c)) {
      out += m;
      return;
    }
  out.push_back(simple_title(c));
}

}  // namespace

bool is_space(char32_t c) {
  switch (c) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x1C: case 0x1D: case 0x1E:
    case 0x1F: case 0x20: case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

bool is_linebreak(char32_t c) {
  switch (c) {
    case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x1C: case 0x1D: case 0x1E: case 0x85:
    case 0x2028: case 0x2029:
      return true;
    default:
      return false;
  }
}

bool is_printable(char32_t c) {
  if (c == ' ') return true;
  if (c < 0x80) return c > 0x20 && c < 0x7F;
  switch (category(c)) {
    case UTF8PROC_CATEGORY_CC: case UTF8PROC_CATEGORY_CF: case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO: case UTF8PROC_CATEGORY_CN: case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP: case UTF8PROC_CATEGORY_ZS:
      return false;
    default:
      return true;
  }
}

bool is_alpha(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  switch (category(c)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
      return true;
    default:
      return false;
  }
}

bool is_digit(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return category(c) == UTF8PROC_CATEGORY_ND;
}

bool is_alnum(char32_t c) { return is_alpha(c) || is_numeric_cat(c); }
bool is_word(char32_t c) { return c == '_' || is_alnum(c); }

bool is_lower(char32_t c) { return c < 0x80 ? (c >= 'a' && c <= 'z') : category(c) == UTF8PROC_CATEGORY_LL; }
bool is_upper(char32_t c) { return c < 0x80 ? (c >= 'A' && c <= 'Z') : category(c) == UTF8PROC_CATEGORY_LU; }
bool is_cased(char32_t c) {
  if (c < 0x80) return is_lower(c) || is_upper(c);
  auto k = category(c);
  return k == UTF8PROC_CATEGORY_LU || k == UTF8PROC_CATEGORY_LL || k == UTF8PROC_CATEGORY_LT;
}

std::string upper(std::string_view s) {
  std::u32string out;
  for (char32_t c : decode(s)) push_upper(out, c);
  return encode(out);
}

std::string lower(std::string_view s) {
  std::u32string out;
  for (char32_t c : decode(s)) push_lower(out, c);
  return encode(out);
}

std::string capitalize(std::string_view s) {
  std::u32string in = decode(s), out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (i == 0)
      push_title(out, in[i]);
    else
      push_lower(out, in[i]);
  }
  return encode(out);
}

std::string title_method(std::string_view s) {
  std::u32string out;
  bool prev_cased = false;
  for (char32_t c : decode(s)) {
    if (prev_cased)
      push_lower(out, c);
    else
      push_title(out, c);
    prev_cased = is_cased(c);
  }
  return encode(out);
}

std::string swapcase(std::string_view s) {
  std::u32string out;
  for (char32_t c : decode(s)) {
    if (is_upper(c))
      push_lower(out, c);
    else if (is_lower(c))
      push_upper(out, c);
    else
      out.push_back(c);
  }
  return encode(out);
}

namespace {

// The code point starting at byte `pos` and its encoded length (invalid bytes: U+FFFD, 1).
char32_t decode_at(std::string_view s, size_t pos, size_t* len) {
  unsigned char c = static_cast<unsigned char>(s[pos]);
  size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (n == 0 || pos + n > s.size()) {
    *len = 1;
    return n == 1 ? c : 0xFFFD;
  }
  std::u32string cp = decode(s.substr(pos, n));
  *len = cp.size() == 1 ? n : 1;
  return cp.size() == 1 ? cp[0] : 0xFFFD;
}

}  // namespace

std::string strip(std::string_view s, const std::string* chars, bool left, bool right) {
  if (!chars) {
    // Whitespace strip without decoding the whole (often long) message text.
    size_t b = 0, e = s.size(), len;
    if (left)
      while (b < e && is_space(decode_at(s, b, &len))) b += len;
    if (right) {
      while (e > b) {
        size_t start = e - 1;
        while (start > b && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80 && e - start < 4) --start;
        if (!is_space(decode_at(s, start, &len)) || start + len != e) break;
        e = start;
      }
    }
    return std::string(s.substr(b, e - b));
  }
  std::u32string in = decode(s);
  std::u32string set;
  if (chars) set = decode(*chars);
  auto strip_me = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : is_space(c); };
  size_t b = 0, e = in.size();
  if (left)
    while (b < e && strip_me(in[b])) ++b;
  if (right)
    while (e > b && strip_me(in[e - 1])) --e;
  return encode(std::u32string_view(in).substr(b, e - b));
}

std::vector<std::string> split_whitespace(std::string_view s, long maxsplit, bool from_right) {
  std::u32string in = decode(s);
  std::vector<std::string> parts;
  if (!from_right) {
    size_t i = 0, n = in.size();
    long splits = 0;
    while (true) {
      while (i < n && is_space(in[i])) ++i;
      if (i >= n) break;
      if (maxsplit >= 0 && splits >= maxsplit) {
        // The remainder keeps its trailing whitespace, as CPython does.
        parts.push_back(encode(std::u32string_view(in).substr(i)));
        break;
      }
      size_t j = i;
      while (j < n && !is_space(in[j])) ++j;
      parts.push_back(encode(std::u32string_view(in).substr(i, j - i)));
      ++splits;
      i = j;
    }
  } else {
    long i = static_cast<long>(in.size()) - 1;
    long splits = 0;
    while (true) {
      while (i >= 0 && is_space(in[static_cast<size_t>(i)])) --i;
      if (i < 0) break;
      if (maxsplit >= 0 && splits >= maxsplit) {
        parts.push_back(encode(std::u32string_view(in).substr(0, static_cast<size_t>(i) + 1)));
        break;
      }
      long j = i;
      while (j >= 0 && !is_space(in[static_cast<size_t>(j)])) --j;
      parts.push_back(encode(std::u32string_view(in).substr(static_cast<size_t>(j + 1), static_cast<size_t>(i - j))));
      ++splits;
      i = j;
    }
    std::reverse(parts.begin(), parts.end());
  }
  return parts;
}

std::vector<std::string> split_sep(std::string_view s, std::string_view sep, long maxsplit, bool from_right) {
  std::vector<std::string> parts;
  // UTF-8 is self-synchronizing, so byte-level search finds exactly the code-point matches.
  if (!from_right) {
    size_t start = 0;
    long splits = 0;
    while (maxsplit < 0 || splits < maxsplit) {
      size_t pos = s.find(sep, start);
      if (pos == std::string_view::npos) break;
      parts.emplace_back(s.substr(start, pos - start));
      start = pos + sep.size();
      ++splits;
    }
    parts.emplace_back(s.substr(start));
  } else {
    size_t end = s.size();
    long splits = 0;
    while (maxsplit < 0 || splits < maxsplit) {
      if (end < sep.size()) break;
      size_t pos = s.rfind(sep, end - sep.size());
      if (pos == std::string_view::npos) break;
      parts.emplace_back(s.substr(pos + sep.size(), end - pos - sep.size()));
      end = pos;
      ++splits;
    }
    parts.emplace_back(s.substr(0, end));
    std::reverse(parts.begin(), parts.end());
  }
  return parts;
}

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
  std::u32string in = decode(s);
  std::vector<std::string> lines;
  size_t i = 0, start = 0, n = in.size();
  while (i < n) {
    if (is_linebreak(in[i])) {
      size_t eol = i;
      size_t next = i + 1;
      if (in[i] == '\r' && next < n && in[next] == '\n') ++next;
      lines.push_back(encode(std::u32string_view(in).substr(start, (keepends ? next : eol) - start)));
      start = i = next;
    } else {
      ++i;
    }
  }
  if (start < n) lines.push_back(encode(std::u32string_view(in).substr(start)));
  return lines;
}

std::string replace(std::string_view s, std::string_view old, std::string_view repl, long count) {
  std::string out;
  if (old.empty()) {
    // Python inserts the replacement before every code point and at the end.
    std::u32string in = decode(s);
    long done = 0;
    for (char32_t c : in) {
      if (count < 0 || done < count) {
        out += repl;
        ++done;
      }
      append_utf8(out, c);
    }
    if (count < 0 || done < count) out += repl;
    return out;
  }
  size_t start = 0;
  long done = 0;
  while (count < 0 || done < count) {
    size_t pos = s.find(old, start);
    if (pos == std::string_view::npos) break;
    out.append(s.substr(start, pos - start));
    out.append(repl);
    start = pos + old.size();
    ++done;
  }
  out.append(s.substr(start));
  return out;
}

size_t count(std::string_view s, std::string_view sub) {
  if (sub.empty()) return length(s) + 1;
  size_t n = 0, start = 0;
  while (true) {
    size_t pos = s.find(sub, start);
    if (pos == std::string_view::npos) return n;
    ++n;
    start = pos + sub.size();
  }
}

long find(std::string_view s, std::string_view sub, bool last) {
  size_t pos = last ? s.rfind(sub) : s.find(sub);
  if (pos == std::string_view::npos) return -1;
  return static_cast<long>(length(s.substr(0, pos)));
}

bool all_of(std::string_view s, bool (*pred)(char32_t)) {
  std::u32string in = decode(s);
  if (in.empty()) return false;
  return std::all_of(in.begin(), in.end(), pred);
}

bool is_lower_str(std::string_view s) {
  bool cased = false;
  for (char32_t c : decode(s)) {
    if (is_upper(c) || category(c) == UTF8PROC_CATEGORY_LT) return false;
    if (is_lower(c)) cased = true;
  }
  return cased;
}

bool is_upper_str(std::string_view s) {
  bool cased = false;
  for (char32_t c : decode(s)) {
    if (is_lower(c) || category(c) == UTF8PROC_CATEGORY_LT) return false;
    if (is_upper(c)) cased = true;
  }
  return cased;
}

}  // namespace edgeinfer::jinja::text
