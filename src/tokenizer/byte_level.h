#pragma once
// GPT-2 byte-level alphabet: every byte value is shown as one printable code point (bytes that
// are printable Latin-1 map to themselves; the others to U+0100 and up, in byte order), so
// byte-level BPE token strings are valid UTF-8 text. "Ġ" (U+0120) is the space byte.
#include <cstdint>
#include <string>
#include <string_view>

namespace edgeinfer::byte_level {

// Code point shown for byte b.
uint32_t byte_to_codepoint(uint8_t b);
// UTF-8 text (1 or 2 bytes) shown for byte b.
std::string_view byte_to_utf8(uint8_t b);
// Byte for code point cp, or -1 when cp is not in the alphabet.
int byte_from_codepoint(uint32_t cp);
// Appends the byte-level form of raw bytes.
void encode(std::string_view raw, std::string& out);
// Appends the raw bytes of byte-level text; code points outside the alphabet are copied as
// their UTF-8 text.
void decode(std::string_view text, std::string& out);

}  // namespace edgeinfer::byte_level
