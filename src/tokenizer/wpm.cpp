#include "tokenizer/wpm.h"

#include <utf8proc.h>

#include <string>

#include "tokenizer/utf8.h"

namespace edgeinfer {

namespace {

// Longer words become one [UNK] (BERT's max_input_chars_per_word).
constexpr size_t kMaxWordChars = 100;

bool is_whitespace(uint32_t c) {
  switch (c) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0x85: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

bool is_other(uint32_t c) {
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_CN: case UTF8PROC_CATEGORY_CC: case UTF8PROC_CATEGORY_CF: case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
      return true;
    default:
      return false;
  }
}

// Removed by clean-up (tab, newline and carriage return count as whitespace instead).
bool is_control(uint32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  return is_other(c);
}

bool is_punctuation(uint32_t c) {
  if (c < 0x80) return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS: case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF: case UTF8PROC_CATEGORY_PO:
      return true;
    default:
      return false;
  }
}

bool is_cjk(uint32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

void word_pieces(const Vocab& v, const std::string& word, size_t n_chars, std::string& key,
                 std::vector<int32_t>& out) {
  if (n_chars > kMaxWordChars) {
    if (v.unk >= 0) out.push_back(v.unk);
    return;
  }
  const size_t mark = out.size();
  size_t start = 0;
  while (start < word.size()) {
    // Longest candidate first; ends move back one code point at a time.
    size_t end = word.size();
    const size_t prefix = start == 0 ? 3 : 0;  // "▁"
    while (end - start + prefix > v.max_token_len && end > start) {
      do --end;
      while (end > start && is_continuation_byte(word[end]));
    }
    int32_t found = -1;
    while (end > start) {
      key.clear();
      if (start == 0) key.append("\xE2\x96\x81");
      key.append(word, start, end - start);
      found = v.find(key);
      if (found >= 0) break;
      do --end;
      while (end > start && is_continuation_byte(word[end]));
    }
    if (found < 0) {
      out.resize(mark);
      if (v.unk >= 0) out.push_back(v.unk);
      return;
    }
    out.push_back(found);
    start = end;
  }
}

}  // namespace

void wpm_encode(const Vocab& v, std::string_view text, std::vector<int32_t>& out) {
  std::string word, key;
  size_t word_chars = 0;
  auto flush = [&] {
    if (!word.empty()) word_pieces(v, word, word_chars, key, out);
    word.clear();
    word_chars = 0;
  };
  std::string single;
  size_t i = 0;
  while (i < text.size()) {
    const uint32_t cp = utf8::decode(text, i);
    if (cp == 0 || cp == utf8::kReplacement) continue;
    if (is_whitespace(cp)) {
      flush();
      continue;
    }
    if (is_control(cp)) continue;
    utf8proc_int32_t buf[32];
    utf8proc_ssize_t n = 1;
    buf[0] = static_cast<utf8proc_int32_t>(cp);
    if (v.wpm_strip_accents) {
      int last_boundclass = 0;
      n = utf8proc_decompose_char(buf[0], buf, 32, UTF8PROC_DECOMPOSE, &last_boundclass);
      if (n < 1 || n > 32) {
        n = 1;
        buf[0] = static_cast<utf8proc_int32_t>(cp);
      }
    }
    for (utf8proc_ssize_t k = 0; k < n; ++k) {
      uint32_t c = static_cast<uint32_t>(buf[k]);
      if (v.wpm_strip_accents && utf8proc_category(buf[k]) == UTF8PROC_CATEGORY_MN) continue;
      if (v.wpm_lowercase) c = static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
      if (is_cjk(c) || is_punctuation(c)) {
        flush();
        single.clear();
        utf8::append(single, c);
        word_pieces(v, single, 1, key, out);
      } else {
        utf8::append(word, c);
        ++word_chars;
      }
    }
  }
  flush();
}

}  // namespace edgeinfer
