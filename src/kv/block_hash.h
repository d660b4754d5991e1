#pragma once
// Content keys of full KV blocks. A block's hash covers its parent's hash, its tokens and an
// extra key, so equal hashes mean (with 64-bit hash probability) an equal token prefix up to and
// including the block — which is what lets one block's KV be reused by another request:
//
//   hash[0] = H(root,        tokens[0, B),   extra)
//   hash[i] = H(hash[i - 1], tokens[iB, (i+1)B), extra)
//
// H is XXH3-64: the tokens (int32, little-endian bytes) hashed with the parent as seed, then that
// value and the extra key hashed once more, so parent, tokens and extra key never cancel one
// another. Only full blocks have hashes; a partial last block is never cached.
//
// root: what every chain starts from. Callers should derive it from whatever makes KV of equal
// tokens differ — model file identity, KV type, block size — so that, e.g., a prefix cache
// persisted by another model never matches. extra_key: a per-request namespace (cache salt,
// adapter id); 0 when unused.
//
// The values are part of the on-disk format of persisted caches: changing H invalidates them
// (tests pin a few values).
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

namespace edgeinfer {

static_assert(std::endian::native == std::endian::little, "block hashes hash token bytes as little-endian");

using BlockHash = uint64_t;

inline constexpr BlockHash kDefaultRootBlockHash = 0x6564676569666572ull;  // "edgeifer"-ish bytes

// Hash of one full block of tokens under `parent`.
BlockHash hash_block(BlockHash parent, std::span<const int32_t> block_tokens, uint64_t extra_key = 0);

// Incremental hashing of a growing sequence: `hashes` holds the hashes of the first
// hashes.size() blocks of `tokens`; appends those of the further full blocks. Cheap to call after
// every step: already-hashed blocks are not hashed again. block_size >= 1, else Error.
void extend_block_hashes(std::span<const int32_t> tokens, int32_t block_size, BlockHash root,
                         uint64_t extra_key, std::vector<BlockHash>& hashes);

}  // namespace edgeinfer
