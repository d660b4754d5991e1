#pragma once
// Small UTF-8 helpers shared by the tokenizers and the streaming detokenizer. They never throw:
// tokenizers must accept arbitrary bytes, so an invalid sequence is reported as one byte long.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace edgeinfer::utf8 {

inline constexpr uint32_t kReplacement = 0xFFFD;

// Bytes a sequence starting with lead byte `b` claims (1 for ASCII, continuation and invalid
// lead bytes: those are treated as single-byte units).
inline size_t lead_len(unsigned char b) {
  if (b < 0xC2) return 1;  // ASCII, continuation bytes, overlong leads C0/C1
  if (b < 0xE0) return 2;
  if (b < 0xF0) return 3;
  if (b < 0xF5) return 4;
  return 1;
}

enum class SeqStatus { Valid, Incomplete, Invalid };

// Classifies the sequence starting at s[0] (n > 0 bytes available). `len` receives the bytes of
// a valid sequence, or of the valid-so-far prefix when Incomplete or Invalid (the "maximal
// subpart" that one U+FFFD replaces; at least 1).
inline SeqStatus classify(const unsigned char* s, size_t n, size_t& len) {
  const unsigned char b = s[0];
  if (b < 0x80) {
    len = 1;
    return SeqStatus::Valid;
  }
  const size_t need = lead_len(b);
  if (need == 1) {
    len = 1;
    return SeqStatus::Invalid;
  }
  for (size_t i = 1; i < need; ++i) {
    if (i >= n) {
      len = i;
      return SeqStatus::Incomplete;
    }
    const unsigned char c = s[i];
    // Second-byte ranges exclude overlongs (E0, F0), surrogates (ED) and > U+10FFFF (F4).
    unsigned char lo = 0x80, hi = 0xBF;
    if (i == 1) {
      if (b == 0xE0) lo = 0xA0;
      else if (b == 0xED) hi = 0x9F;
      else if (b == 0xF0) lo = 0x90;
      else if (b == 0xF4) hi = 0x8F;
    }
    if (c < lo || c > hi) {
      len = i;
      return SeqStatus::Invalid;
    }
  }
  len = need;
  return SeqStatus::Valid;
}

// Length of the unit at s[i]: a whole valid code point, else 1 byte.
inline size_t unit_len(std::string_view s, size_t i) {
  size_t len = 1;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data()) + i;
  if (classify(p, s.size() - i, len) != SeqStatus::Valid) return 1;
  return len;
}

// Decodes the unit at s[i] (advancing i); invalid bytes decode to U+FFFD.
inline uint32_t decode(std::string_view s, size_t& i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data()) + i;
  size_t len = 1;
  if (classify(p, s.size() - i, len) != SeqStatus::Valid) {
    i += 1;
    return kReplacement;
  }
  i += len;
  switch (len) {
    case 1: return p[0];
    case 2: return (uint32_t(p[0] & 0x1F) << 6) | (p[1] & 0x3F);
    case 3: return (uint32_t(p[0] & 0x0F) << 12) | (uint32_t(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    default:
      return (uint32_t(p[0] & 0x07) << 18) | (uint32_t(p[1] & 0x3F) << 12) | (uint32_t(p[2] & 0x3F) << 6) |
             (p[3] & 0x3F);
  }
}

inline void append(std::string& out, uint32_t cp) {
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

// True when every byte of s belongs to a valid UTF-8 sequence.
inline bool is_valid(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t len = 1;
    if (classify(reinterpret_cast<const unsigned char*>(s.data()) + i, s.size() - i, len) != SeqStatus::Valid)
      return false;
    i += len;
  }
  return true;
}

}  // namespace edgeinfer::utf8
