#include "tokenizer/token_index.h"

#include <xxhash.h>

namespace edgeinfer {

uint64_t TokenIndex::hash(std::string_view s) { return XXH3_64bits(s.data(), s.size()); }

void TokenIndex::build(const std::vector<std::string>& texts) {
  size_t cap = 16;
  while (cap < texts.size() * 2) cap <<= 1;  // load factor <= 0.5
  slots_.assign(cap, -1);
  mask_ = cap - 1;
  for (size_t id = 0; id < texts.size(); ++id) {
    uint64_t h = hash(texts[id]) & mask_;
    while (true) {
      int32_t& slot = slots_[h];
      if (slot < 0 || texts[static_cast<size_t>(slot)] == texts[id]) {
        slot = static_cast<int32_t>(id);
        break;
      }
      h = (h + 1) & mask_;
    }
  }
}

int32_t TokenIndex::find(const std::vector<std::string>& texts, std::string_view s) const {
  if (slots_.empty()) return -1;
  uint64_t h = hash(s) & mask_;
  while (true) {
    const int32_t slot = slots_[h];
    if (slot < 0) return -1;
    if (texts[static_cast<size_t>(slot)] == s) return slot;
    h = (h + 1) & mask_;
  }
}

}  // namespace edgeinfer
