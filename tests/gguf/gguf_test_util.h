#pragma once
// Helpers shared by the GGUF tests: a small valid file built with GgufWriter, parsing from an
// exactly-sized heap copy (so AddressSanitizer sees any read past the end), byte patching.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_file.h"

namespace edgeinfer::test {

using Bytes = std::vector<uint8_t>;

// A GGUF v3 file with metadata of many types and four tensors (q4_0, f32, q8_0, f32); the last
// tensor is a multiple of the alignment long, so every truncation cuts into something checked.
Bytes small_gguf();

// A parsed copy that owns its bytes (GgufFile::parse does not copy).
struct OwnedGguf {
  std::unique_ptr<uint8_t[]> bytes;
  GgufFile file;
};
OwnedGguf parse_copy(const Bytes& b, const std::string& name = "test.gguf");

// Parses b and returns the Error message; "" if it parsed (the test then fails on its own terms).
std::string parse_error(const Bytes& b, const std::string& name = "test.gguf");

// Offset of the first occurrence of `needle` at or after `from`; fails the test when absent.
size_t find_bytes(const Bytes& hay, std::string_view needle, size_t from = 0);

void put_u32(Bytes& b, size_t at, uint32_t v);
void put_u64(Bytes& b, size_t at, uint64_t v);
uint64_t get_u64(const Bytes& b, size_t at);

// Position of the field right after the GGUF string `s` (its length prefix precedes it).
size_t after_string(const Bytes& b, std::string_view s);

}  // namespace edgeinfer::test
