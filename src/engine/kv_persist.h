#pragma once
// Persisting hot prefix-cache blocks across restarts.
//
// One file per cache identity, <dir>/prefix-<root>.eikv, where root (kv/block_hash.h) already
// covers the model file, KV element type and block size. Layout, little-endian:
//   header:  "EIKVPFX1", u32 version, u32 block_size, u32 n_layer, u32 kv_dim, u32 kv_type,
//            u32 reserved, u64 row_bytes, u64 root, u64 n_records, u64 xxh3(header so far)
//   record:  u64 hash, u64 parent, K rows then V rows of every layer
//            ([n_layer][block_size][row_bytes] each), u64 xxh3(record so far)
// Records are written parents first, so loading can insert chains in order. A file whose header
// does not match this engine, or any record whose checksum fails, makes the whole file ignored
// (the caller prints a warning); nothing of it is loaded.
#include <cstdint>
#include <string>

#include "kv/kv_storage.h"
#include "kv/prefix_cache.h"

namespace edgeinfer {

// Writes up to max_blocks of the hottest cached blocks (atomically: temp file + rename).
// Returns the number written. Throws Error on I/O failure.
int32_t save_prefix_cache(const std::string& dir, BlockHash root, const KvStorage& kv, const PrefixCache& cache,
                          int32_t max_blocks);

// Loads the file for `root` from dir into free blocks of an otherwise empty cache; loaded blocks
// end up cached and unreferenced (reusable, evictable). Returns the number loaded; 0 when there
// is no file. Throws Error (nothing loaded) for a foreign or corrupt file.
int32_t load_prefix_cache(const std::string& dir, BlockHash root, KvStorage& kv, PrefixCache& cache);

std::string prefix_cache_path(const std::string& dir, BlockHash root);

}  // namespace edgeinfer
