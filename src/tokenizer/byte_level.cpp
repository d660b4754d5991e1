#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/utf8.h"

namespace edgeinfer::byte_level {

namespace {

bool printable(uint32_t b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

struct Tables {
  std::array<uint32_t, 256> cp{};
  std::array<char, 256 * 2> utf8{};  // 2 bytes per entry (second unused for ASCII)
  std::array<uint8_t, 256> utf8_len{};
  std::array<int16_t, 512> from_cp{};  // indexed by code point < 512

  Tables() {
    from_cp.fill(-1);
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      cp[b] = printable(b) ? b : next++;
      std::string s;
      utf8::append(s, cp[b]);
      utf8_len[b] = static_cast<uint8_t>(s.size());
      for (size_t i = 0; i < s.size(); ++i) utf8[b * 2 + i] = s[i];
      from_cp[cp[b]] = static_cast<int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;  // immutable after construction
  return t;
}

}  // namespace

uint32_t byte_to_codepoint(uint8_t b) { return tables().cp[b]; }

std::string_view byte_to_utf8(uint8_t b) {
  const Tables& t = tables();
  return {&t.utf8[b * 2u], t.utf8_len[b]};
}

int byte_from_codepoint(uint32_t cp) { return cp < 512 ? tables().from_cp[cp] : -1; }

void encode(std::string_view raw, std::string& out) {
  const Tables& t = tables();
  for (unsigned char b : raw) out.append(&t.utf8[b * 2u], t.utf8_len[b]);
}

void decode(std::string_view text, std::string& out) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t start = i;
    const uint32_t cp = utf8::decode(text, i);
    const int b = byte_from_codepoint(cp);
    if (b >= 0) out.push_back(static_cast<char>(b));
    else out.append(text.substr(start, i - start));
  }
}

}  // namespace edgeinfer::byte_level
