#pragma once
// Reads a GGUF file (versions 2 and 3) through a read-only mmap. Every count, length, offset
// and tensor extent is checked against the file size with overflow-safe arithmetic; a
// malformed file throws edgeinfer::Error naming the file and the problem, never crashes,
// hangs or allocates more than the file could describe.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gguf/gguf_value.h"
#include "quant/tensor_type.h"
#include "util/mapped_file.h"

namespace edgeinfer {

struct GgufTensorInfo {
  std::string name;
  TensorType type = TensorType::F32;
  // ne[0] is the innermost (contiguous) dimension: a weight with ne = {n_in, n_out} is the
  // row-major matrix [n_out][n_in]. Between 1 and 4 dimensions.
  std::vector<int64_t> ne;
  uint64_t offset = 0;            // relative to the start of the data section
  const uint8_t* data = nullptr;  // points into the mapping
  uint64_t n_bytes = 0;

  int64_t n_elements() const;
  int64_t n_rows() const;  // product of ne[1..]
};

class GgufFile {
 public:
  // Maps and parses `path`. Throws Error("<path>: <problem>") on any malformed content.
  static GgufFile open(const std::string& path);
  // Parses bytes held in memory (tests, fuzzing); `name` is used in error messages.
  // The caller keeps `data` alive for the lifetime of the returned object.
  static GgufFile parse(const uint8_t* data, size_t size, std::string name);

  GgufFile(GgufFile&&) noexcept;
  GgufFile& operator=(GgufFile&&) noexcept;
  ~GgufFile();

  const std::string& path() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // start of the tensor data section
  size_t file_size() const { return size_; }
  // Whether the bytes are a read-only map of a file (open), which can drop pages it no longer
  // needs and read them back on use; false when parsed from memory.
  bool is_file_mapped() const { return file_.data() != nullptr; }

  // Metadata in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  const GgufValue* find(std::string_view key) const;  // nullptr when absent
  // Same, but throws Error("<path>: missing metadata key 'k'") when absent.
  const GgufValue& get(std::string_view key) const;

  // Typed getters. The required forms throw Error("<path>: missing metadata key 'k'") or
  // ("<path>: metadata key 'k': expected ..., got ...").
  int64_t get_int(std::string_view key) const;
  double get_float(std::string_view key) const;
  const std::string& get_string(std::string_view key) const;
  std::optional<int64_t> get_int_opt(std::string_view key) const;
  std::optional<double> get_float_opt(std::string_view key) const;
  std::optional<bool> get_bool_opt(std::string_view key) const;
  std::optional<std::string> get_string_opt(std::string_view key) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const;  // nullptr when absent

 private:
  GgufFile() = default;
  void parse_all();

  MappedFile file_;  // empty when parsed from memory
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string name_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::unordered_map<std::string, size_t> metadata_index_;
  std::vector<GgufTensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
};

}  // namespace edgeinfer
