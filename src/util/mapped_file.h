#pragma once
// A read-only memory map of a whole file. Move-only; unmaps on destruction.
#include <cstddef>
#include <cstdint>
#include <string>

namespace edgeinfer {

class MappedFile {
 public:
  MappedFile() = default;
  // Maps `path` read-only. Throws Error("<path>: <reason>") when it cannot be opened or mapped.
  static MappedFile open(const std::string& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace edgeinfer
