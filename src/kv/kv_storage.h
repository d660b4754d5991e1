#pragma once
// The memory of a paged KV cache: for each layer, K and V pools of n_blocks blocks of
// block_size token slots, each slot one row of kv_dim elements (all KV heads of one token).
//   K[layer]: [n_blocks][block_size][kv_dim]   (same for V)
// One allocation made up front; nothing is allocated while decoding. Which blocks belong to
// which sequence is decided elsewhere (kv/block_pool.h); the forward pass reads and writes rows
// through a sequence's block table.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "quant/tensor_type.h"

namespace edgeinfer {

class KvStorage {
 public:
  // type: F32 or F16 (Q8_0 where kv_dim is a multiple of 32). Throws Error for other types or
  // when the allocation fails.
  KvStorage(int64_t n_layer, int64_t kv_dim, int32_t block_size, int32_t n_blocks, TensorType type);
  ~KvStorage();
  KvStorage(const KvStorage&) = delete;
  KvStorage& operator=(const KvStorage&) = delete;

  // Bytes per token per layer for one of K or V, for sizing from a memory budget.
  static size_t row_bytes_for(int64_t kv_dim, TensorType type);

  TensorType type() const { return type_; }
  int64_t n_layer() const { return n_layer_; }
  int64_t kv_dim() const { return kv_dim_; }
  int32_t block_size() const { return block_size_; }
  int32_t n_blocks() const { return n_blocks_; }
  size_t row_bytes() const { return row_bytes_; }
  size_t total_bytes() const { return total_bytes_; }

  uint8_t* k_row(int64_t layer, int32_t block, int32_t slot) { return row(0, layer, block, slot); }
  uint8_t* v_row(int64_t layer, int32_t block, int32_t slot) { return row(1, layer, block, slot); }
  const uint8_t* k_row(int64_t layer, int32_t block, int32_t slot) const {
    return const_cast<KvStorage*>(this)->row(0, layer, block, slot);
  }
  const uint8_t* v_row(int64_t layer, int32_t block, int32_t slot) const {
    return const_cast<KvStorage*>(this)->row(1, layer, block, slot);
  }

 private:
  uint8_t* row(int kv, int64_t layer, int32_t block, int32_t slot) {
    const size_t index = ((static_cast<size_t>(layer) * 2 + kv) * n_blocks_ + block) * block_size_ + slot;
    return base_ + index * row_bytes_;
  }

  TensorType type_;
  int64_t n_layer_;
  int64_t kv_dim_;
  int32_t block_size_;
  int32_t n_blocks_;
  size_t row_bytes_ = 0;
  size_t total_bytes_ = 0;
  uint8_t* base_ = nullptr;
};

}  // namespace edgeinfer
