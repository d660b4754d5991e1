#include "engine/kv_persist.h"

#include <xxhash.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "util/error.h"

namespace edgeinfer {

namespace {

constexpr char kMagic[8] = {'E', 'I', 'K', 'V', 'P', 'F', 'X', '1'};
constexpr uint32_t kVersion = 1;

#pragma pack(push, 1)
struct Header {
  char magic[8];
  uint32_t version;
  uint32_t block_size;
  uint32_t n_layer;
  uint32_t kv_dim;
  uint32_t kv_type;
  uint32_t reserved;
  uint64_t row_bytes;
  uint64_t root;
  uint64_t n_records;
  uint64_t checksum;
};
#pragma pack(pop)

Header make_header(BlockHash root, const KvStorage& kv, uint64_t n_records) {
  Header h{};
  std::memcpy(h.magic, kMagic, 8);
  h.version = kVersion;
  h.block_size = static_cast<uint32_t>(kv.block_size());
  h.n_layer = static_cast<uint32_t>(kv.n_layer());
  h.kv_dim = static_cast<uint32_t>(kv.kv_dim());
  h.kv_type = static_cast<uint32_t>(kv.type());
  h.row_bytes = kv.row_bytes();
  h.root = root;
  h.n_records = n_records;
  h.checksum = XXH3_64bits(&h, offsetof(Header, checksum));
  return h;
}

size_t block_payload_bytes(const KvStorage& kv) {
  return 2 * static_cast<size_t>(kv.n_layer()) * kv.block_size() * kv.row_bytes();
}

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

void read_exact(std::FILE* f, void* dst, size_t n, const std::string& path) {
  if (std::fread(dst, 1, n, f) != n) throw Error(path + ": truncated");
}

}  // namespace

std::string prefix_cache_path(const std::string& dir, BlockHash root) {
  char name[64];
  std::snprintf(name, sizeof(name), "prefix-%016llx.eikv", static_cast<unsigned long long>(root));
  return (std::filesystem::path(dir) / name).string();
}

int32_t save_prefix_cache(const std::string& dir, BlockHash root, const KvStorage& kv, const PrefixCache& cache,
                          int32_t max_blocks) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot create folder: " + ec.message());

  // Order parents before children, dropping blocks whose chain back to the root is broken.
  std::vector<CachedBlock> hot = cache.hot_blocks(max_blocks);
  std::unordered_map<BlockHash, const CachedBlock*> by_hash;
  for (const auto& b : hot) by_hash[b.hash] = &b;
  std::vector<const CachedBlock*> ordered;
  std::unordered_set<BlockHash> emitted;
  std::vector<const CachedBlock*> chain;
  for (const auto& b : hot) {
    chain.clear();
    const CachedBlock* cur = &b;
    bool rooted = false;
    while (cur && !emitted.count(cur->hash)) {
      chain.push_back(cur);
      if (cur->parent == root) {
        rooted = true;
        break;
      }
      if (emitted.count(cur->parent)) {
        rooted = true;
        break;
      }
      auto it = by_hash.find(cur->parent);
      cur = it == by_hash.end() ? nullptr : it->second;
      if (chain.size() > hot.size()) break;  // defensive: a cycle cannot happen with chained hashes
    }
    if (!rooted) continue;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      if (emitted.insert((*it)->hash).second) ordered.push_back(*it);
    }
  }

  const std::string path = prefix_cache_path(dir, root);
  const std::string tmp = path + ".tmp";
  {
    File f(std::fopen(tmp.c_str(), "wb"));
    if (!f) throw Error(tmp + ": cannot open for writing");
    const Header h = make_header(root, kv, ordered.size());
    bool ok = std::fwrite(&h, sizeof(h), 1, f.get()) == 1;
    std::vector<uint8_t> rec(16 + block_payload_bytes(kv) + 8);
    const size_t block_rows = static_cast<size_t>(kv.block_size()) * kv.row_bytes();
    for (const CachedBlock* b : ordered) {
      if (!ok) break;
      uint8_t* p = rec.data();
      std::memcpy(p, &b->hash, 8);
      std::memcpy(p + 8, &b->parent, 8);
      p += 16;
      for (int64_t l = 0; l < kv.n_layer(); ++l) {
        std::memcpy(p, kv.k_row(l, b->block, 0), block_rows);
        p += block_rows;
        std::memcpy(p, kv.v_row(l, b->block, 0), block_rows);
        p += block_rows;
      }
      const uint64_t sum = XXH3_64bits(rec.data(), rec.size() - 8);
      std::memcpy(p, &sum, 8);
      ok = std::fwrite(rec.data(), rec.size(), 1, f.get()) == 1;
    }
    ok = ok && std::fflush(f.get()) == 0;
    if (!ok) {
      std::filesystem::remove(tmp, ec);
      throw Error(tmp + ": write failed");
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw Error(path + ": cannot rename into place: " + ec.message());
  return static_cast<int32_t>(ordered.size());
}

int32_t load_prefix_cache(const std::string& dir, BlockHash root, KvStorage& kv, PrefixCache& cache) {
  const std::string path = prefix_cache_path(dir, root);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return 0;
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) throw Error(path + ": cannot open");
  Header h{};
  read_exact(f.get(), &h, sizeof(h), path);
  const Header want = make_header(root, kv, h.n_records);
  if (std::memcmp(h.magic, kMagic, 8) != 0 || h.version != kVersion) throw Error(path + ": not a prefix cache file");
  if (h.checksum != XXH3_64bits(&h, offsetof(Header, checksum))) throw Error(path + ": header checksum mismatch");
  if (h.root != root || h.block_size != want.block_size || h.n_layer != want.n_layer || h.kv_dim != want.kv_dim ||
      h.kv_type != want.kv_type || h.row_bytes != want.row_bytes) {
    throw Error(path + ": written for another model or KV layout");
  }
  const size_t rec_bytes = 16 + block_payload_bytes(kv) + 8;
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec || h.n_records > (file_size - sizeof(Header)) / rec_bytes ||
      sizeof(Header) + h.n_records * rec_bytes != file_size) {
    throw Error(path + ": size does not match its record count");
  }
  // Pass 1: every checksum, before anything is loaded.
  std::vector<uint8_t> rec(rec_bytes);
  for (uint64_t i = 0; i < h.n_records; ++i) {
    read_exact(f.get(), rec.data(), rec_bytes, path);
    uint64_t sum;
    std::memcpy(&sum, rec.data() + rec_bytes - 8, 8);
    if (sum != XXH3_64bits(rec.data(), rec_bytes - 8)) {
      throw Error(path + ": record " + std::to_string(i) + " checksum mismatch");
    }
  }
  // Pass 2: load into free blocks while they last.
  std::fseek(f.get(), sizeof(Header), SEEK_SET);
  const size_t block_rows = static_cast<size_t>(kv.block_size()) * kv.row_bytes();
  std::vector<BlockId> loaded;
  std::unordered_set<BlockHash> present;
  for (uint64_t i = 0; i < h.n_records && cache.n_free() > 0; ++i) {
    read_exact(f.get(), rec.data(), rec_bytes, path);
    BlockHash hash, parent;
    std::memcpy(&hash, rec.data(), 8);
    std::memcpy(&parent, rec.data() + 8, 8);
    if (parent != root && !present.count(parent)) continue;  // orphan: unreachable
    BlockId b;
    if (!cache.allocate(1, std::span<BlockId>(&b, 1))) break;
    const uint8_t* p = rec.data() + 16;
    for (int64_t l = 0; l < kv.n_layer(); ++l) {
      std::memcpy(kv.k_row(l, b, 0), p, block_rows);
      p += block_rows;
      std::memcpy(kv.v_row(l, b, 0), p, block_rows);
      p += block_rows;
    }
    if (cache.insert(std::span<const BlockHash>(&hash, 1), std::span<const BlockId>(&b, 1), parent) == 1) {
      present.insert(hash);
    }
    loaded.push_back(b);
  }
  cache.release(loaded);
  return static_cast<int32_t>(present.size());
}

}  // namespace edgeinfer
