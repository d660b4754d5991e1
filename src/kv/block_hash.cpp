#include "kv/block_hash.h"

#include <xxhash.h>

#include <string>

#include "util/error.h"

namespace edgeinfer {

BlockHash hash_block(BlockHash parent, std::span<const int32_t> block_tokens, uint64_t extra_key) {
  const XXH64_hash_t content = XXH3_64bits_withSeed(block_tokens.data(), block_tokens.size_bytes(), parent);
  return XXH3_64bits_withSeed(&extra_key, sizeof(extra_key), content);
}

void extend_block_hashes(std::span<const int32_t> tokens, int32_t block_size, BlockHash root,
                         uint64_t extra_key, std::vector<BlockHash>& hashes) {
  if (block_size < 1) throw Error("block hashes: block_size = " + std::to_string(block_size) + " must be >= 1");
  const size_t b = static_cast<size_t>(block_size);
  const size_t n_full = tokens.size() / b;
  for (size_t i = hashes.size(); i < n_full; ++i) {
    const BlockHash parent = i == 0 ? root : hashes[i - 1];
    hashes.push_back(hash_block(parent, tokens.subspan(i * b, b), extra_key));
  }
}

}  // namespace edgeinfer
