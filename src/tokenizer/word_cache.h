#pragma once
// Per-call memo of word -> token ids. Natural text repeats its words, so BPE/SPM merging runs
// once per distinct word of an encode() call. Owned by that call (no shared mutable state).
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace edgeinfer {

class WordCache {
 public:
  // Short inputs gain nothing from a cache; long words are rarely repeated.
  static constexpr size_t kMinText = 1024;
  static constexpr size_t kMaxWord = 48;

  explicit WordCache(bool enabled) : enabled_(enabled) {}

  bool cacheable(std::string_view word) const { return enabled_ && word.size() <= kMaxWord; }

  // Appends the ids of a cached word to out; false when not cached.
  bool lookup(std::string_view word, std::vector<int32_t>& out) const {
    auto it = map_.find(word);
    if (it == map_.end()) return false;
    out.insert(out.end(), ids_.begin() + it->second.first, ids_.begin() + it->second.first + it->second.second);
    return true;
  }

  void store(std::string_view word, const int32_t* ids, size_t n) {
    map_.emplace(std::string(word), std::make_pair(static_cast<uint32_t>(ids_.size()), static_cast<uint32_t>(n)));
    ids_.insert(ids_.end(), ids, ids + n);
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  bool enabled_;
  std::unordered_map<std::string, std::pair<uint32_t, uint32_t>, Hash, std::equal_to<>> map_;
  std::vector<int32_t> ids_;
};

}  // namespace edgeinfer
