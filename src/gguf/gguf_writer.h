#pragma once
// Writes GGUF version 3 files: metadata in the order added, then tensor infos, then the tensor
// data, each tensor at an offset aligned to `alignment()` (32 unless general.alignment says
// otherwise). Tensor bytes either come from memory the caller keeps alive, or are produced while
// the file is written, so a large model never has to be held twice.
//
//   GgufWriter w;
//   w.add("general.architecture", GgufValue::from_string("llama"));
//   w.add_tensor("token_embd.weight", TensorType::F32, {64, 512}, ptr, 64 * 512 * 4);
//   w.write("out.gguf");  // temp file + rename: readers never see a half-written file
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gguf/gguf_value.h"
#include "quant/tensor_type.h"

namespace edgeinfer {

// Receives a piece of a tensor's bytes; may be called any number of times per tensor.
using GgufByteSink = std::function<void(const void* data, size_t size)>;
// Delivers one tensor's bytes through `sink` at write time, exactly the tensor's byte size in all.
using GgufTensorProducer = std::function<void(const GgufByteSink& sink)>;

class GgufWriter {
 public:
  GgufWriter() = default;

  // Appends a metadata pair. Throws Error on an empty or duplicate key, or on a value that cannot
  // be encoded (storage not matching its type, out-of-range integer, arrays nested too deep).
  // "general.alignment" must be an integer power of two and sets alignment().
  void add(std::string key, GgufValue value);
  // Replaces the value of an existing key in place, or appends it.
  void set(std::string key, GgufValue value);
  bool has(std::string_view key) const;
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }

  // Shorthands for the common scalar types.
  void add_string(std::string key, std::string v) { add(std::move(key), GgufValue::from_string(std::move(v))); }
  void add_uint32(std::string key, uint32_t v) {
    add(std::move(key), GgufValue::from_uint(GgufValueType::UINT32, v));
  }
  void add_int32(std::string key, int32_t v) { add(std::move(key), GgufValue::from_int(GgufValueType::INT32, v)); }
  void add_float32(std::string key, float v) {
    add(std::move(key), GgufValue::from_float(GgufValueType::FLOAT32, v));
  }
  void add_bool(std::string key, bool v) { add(std::move(key), GgufValue::from_bool(v)); }

  // Sets the tensor data alignment (a nonzero power of two) and records it as general.alignment
  // (updating the key if present, appending it as uint32 otherwise, unless it is the default 32).
  void set_alignment(uint64_t alignment);
  uint64_t alignment() const { return alignment_; }

  // A tensor whose bytes are at `data` (exactly `size` bytes, which must equal the size its type
  // and shape imply). The memory must stay valid until write()/write_to_memory() return.
  // ne[0] is the contiguous dimension; 1..4 dimensions, each > 0.
  void add_tensor(std::string name, TensorType type, std::vector<int64_t> ne, const void* data, size_t size);
  // A tensor whose bytes `producer` streams out while the file is written.
  void add_tensor(std::string name, TensorType type, std::vector<int64_t> ne, GgufTensorProducer producer);

  size_t metadata_count() const { return metadata_.size(); }
  size_t tensor_count() const { return tensors_.size(); }
  // Size in bytes of the file write() would produce.
  uint64_t file_size() const;

  // Writes to `path` through a temporary file in the same folder, renamed over `path` once
  // complete and flushed. Throws Error("<path>: <problem>"); the temporary file is removed then.
  void write(const std::string& path) const;
  // The same bytes, in memory (tests, small files).
  std::vector<uint8_t> write_to_memory() const;

  // Abstract byte destination used by the writer (exposed for the implementation's helpers).
  class Out {
   public:
    virtual ~Out() = default;
    virtual void write(const void* data, size_t size) = 0;
  };

 private:
  struct Tensor {
    std::string name;
    TensorType type;
    std::vector<int64_t> ne;
    uint64_t n_bytes = 0;
    const void* data = nullptr;  // when held in memory
    GgufTensorProducer producer;  // otherwise
  };

  Tensor& new_tensor(std::string name, TensorType type, std::vector<int64_t> ne);
  void check_alignment_value(const GgufValue& v) const;
  uint64_t header_size() const;  // everything before the data section, unpadded
  void serialize(Out& out) const;

  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::unordered_map<std::string, size_t> metadata_index_;
  std::vector<Tensor> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
  uint64_t alignment_ = 32;
};

}  // namespace edgeinfer
