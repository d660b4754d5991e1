#pragma once
// Text -> token id lookup over a vocabulary's token strings. Open addressing with the ids
// stored in the slots (the strings stay in the vocabulary), so a lookup by string_view never
// allocates and the index stays valid when its owner is moved.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace edgeinfer {

class TokenIndex {
 public:
  // Indexes texts[0..n). When two tokens share a text, the later id wins (as llama.cpp's map).
  void build(const std::vector<std::string>& texts);
  // Id of the token whose text is `s`, or -1.
  int32_t find(const std::vector<std::string>& texts, std::string_view s) const;

  static uint64_t hash(std::string_view s);

 private:
  struct Slot {
    int32_t id;     // -1 = empty
    uint32_t tag;   // high hash bits: most mismatches are rejected without touching the string
  };
  std::vector<Slot> slots_;  // size is a power of two
  uint64_t mask_ = 0;
};

}  // namespace edgeinfer
