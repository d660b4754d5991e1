#include "tokenizer/token_index.h"

#include <xxhash.h>

namespace edgeinfer {

uint64_t TokenIndex::hash(std::string_view s) { return XXH3_64bits(s.data(), s.size()); }

void TokenIndex::build(const std::vector<std::string>& texts) {
  size_t cap = 16;
  while (cap < texts.size() * 2) cap <<= 1;  // load factor <= 0.5
  slots_.assign(cap, Slot{-1, 0});
  mask_ = cap - 1;
  for (size_t id = 0; id < texts.size(); ++id) {
    const uint64_t full = hash(texts[id]);
    const auto tag = static_cast<uint32_t>(full >> 32);
    uint64_t h = full & mask_;
    while (true) {
      Slot& slot = slots_[h];
      if (slot.id < 0 || (slot.tag == tag && texts[static_cast<size_t>(slot.id)] == texts[id])) {
        slot = Slot{static_cast<int32_t>(id), tag};
        break;
      }
      h = (h + 1) & mask_;
    }
  }
}

int32_t TokenIndex::find(const std::vector<std::string>& texts, std::string_view s) const {
  if (slots_.empty()) return -1;
  const uint64_t full = hash(s);
  const auto tag = static_cast<uint32_t>(full >> 32);
  uint64_t h = full & mask_;
  while (true) {
    const Slot slot = slots_[h];
    if (slot.id < 0) return -1;
    if (slot.tag == tag && texts[static_cast<size_t>(slot.id)] == s) return slot.id;
    h = (h + 1) & mask_;
  }
}

}  // namespace edgeinfer
