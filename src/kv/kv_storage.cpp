#include "kv/kv_storage.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "util/error.h"

namespace edgeinfer {

size_t KvStorage::row_bytes_for(int64_t kv_dim, TensorType type) {
  if (type != TensorType::F32 && type != TensorType::F16 && type != TensorType::Q8_0) {
    throw Error("KV cache type " + std::string(tensor_type_name(type)) + " is not supported (f32, f16, q8_0)");
  }
  auto b = tensor_row_bytes(type, kv_dim);
  if (!b) {
    throw Error("KV cache type " + std::string(tensor_type_name(type)) + " needs the KV width (" +
                std::to_string(kv_dim) + ") to be a multiple of its block size");
  }
  return static_cast<size_t>(*b);
}

KvStorage::KvStorage(int64_t n_layer, int64_t kv_dim, int32_t block_size, int32_t n_blocks, TensorType type)
    : type_(type), n_layer_(n_layer), kv_dim_(kv_dim), block_size_(block_size), n_blocks_(n_blocks) {
  if (n_layer <= 0 || kv_dim <= 0 || block_size <= 0 || n_blocks <= 0) {
    throw Error("KV cache: layers, width, block size and block count must be positive");
  }
  row_bytes_ = row_bytes_for(kv_dim, type);
  const size_t rows = static_cast<size_t>(n_layer) * 2 * n_blocks * block_size;
  if (rows > std::numeric_limits<size_t>::max() / row_bytes_) throw Error("KV cache: size overflows");
  total_bytes_ = rows * row_bytes_;
  const size_t rounded = (total_bytes_ + 63) / 64 * 64;
  base_ = static_cast<uint8_t*>(std::aligned_alloc(64, rounded));
  if (!base_) {
    throw Error("KV cache: cannot allocate " + std::to_string(total_bytes_ >> 20) + " MiB");
  }
  // Touching the memory now makes the allocation real up front (no page faults while decoding).
  std::memset(base_, 0, rounded);
}

KvStorage::~KvStorage() { std::free(base_); }

}  // namespace edgeinfer
