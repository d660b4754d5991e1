#include "gguf/gguf_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "gguf/gguf_format.h"
#include "util/error.h"

namespace edgeinfer {

namespace {

using Out = GgufWriter::Out;

// Counts bytes only: sizes the header and validates values without writing them.
class CountingOut final : public Out {
 public:
  void write(const void*, size_t size) override { n += size; }
  uint64_t n = 0;
};

class MemoryOut final : public Out {
 public:
  explicit MemoryOut(std::vector<uint8_t>& buf) : buf_(buf) {}
  void write(const void* data, size_t size) override {
    const auto* p = static_cast<const uint8_t*>(data);
    buf_.insert(buf_.end(), p, p + size);
  }

 private:
  std::vector<uint8_t>& buf_;
};

// Buffered writes to a file descriptor; errors name the final path.
class FdOut final : public Out {
 public:
  FdOut(int fd, const std::string& path) : fd_(fd), path_(path) { buf_.reserve(kBufferSize); }
  void write(const void* data, size_t size) override {
    const auto* p = static_cast<const uint8_t*>(data);
    if (buf_.size() + size > kBufferSize) flush();
    if (size >= kBufferSize) {
      write_all(p, size);
    } else {
      buf_.insert(buf_.end(), p, p + size);
    }
  }
  void flush() {
    write_all(buf_.data(), buf_.size());
    buf_.clear();
  }

 private:
  static constexpr size_t kBufferSize = size_t{1} << 20;
  void write_all(const uint8_t* p, size_t n) {
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        throw Error(path_ + ": write failed: " + std::strerror(errno));
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
  }
  int fd_;
  const std::string& path_;
  std::vector<uint8_t> buf_;
};

template <typename T>
void put(Out& out, T v) {
  uint8_t b[sizeof(T)];
  gguf_store_le<T>(v, b);
  out.write(b, sizeof(T));
}

void put_string(Out& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out.write(s.data(), s.size());
}

void put_zeros(Out& out, uint64_t n) {
  static constexpr uint8_t kZeros[64] = {};
  while (n > 0) {
    size_t k = n < sizeof kZeros ? static_cast<size_t>(n) : sizeof kZeros;
    out.write(kZeros, k);
    n -= k;
  }
}

uint64_t pad_to(uint64_t pos, uint64_t alignment) { return (alignment - pos % alignment) % alignment; }

std::string tname(GgufValueType t) { return std::string(gguf_value_type_name(t)); }

[[noreturn]] void bad_storage(const std::string& ctx, const std::string& what) {
  throw Error(ctx + ": " + what + " does not hold the storage its type needs");
}

// Writes one integer of type t from canonical storage, checking the range of the type.
void put_uint(Out& out, GgufValueType t, uint64_t v, const std::string& ctx) {
  auto range = [&](uint64_t hi) {
    if (v > hi) throw Error(ctx + ": value " + std::to_string(v) + " out of range for " + tname(t));
  };
  switch (t) {
    case GgufValueType::UINT8: range(0xff); put<uint8_t>(out, static_cast<uint8_t>(v)); break;
    case GgufValueType::UINT16: range(0xffff); put<uint16_t>(out, static_cast<uint16_t>(v)); break;
    case GgufValueType::UINT32: range(0xffffffffu); put<uint32_t>(out, static_cast<uint32_t>(v)); break;
    default: put<uint64_t>(out, v); break;
  }
}

void put_int(Out& out, GgufValueType t, int64_t v, const std::string& ctx) {
  auto range = [&](int64_t lo, int64_t hi) {
    if (v < lo || v > hi) throw Error(ctx + ": value " + std::to_string(v) + " out of range for " + tname(t));
  };
  switch (t) {
    case GgufValueType::INT8: range(INT8_MIN, INT8_MAX); put<int8_t>(out, static_cast<int8_t>(v)); break;
    case GgufValueType::INT16: range(INT16_MIN, INT16_MAX); put<int16_t>(out, static_cast<int16_t>(v)); break;
    case GgufValueType::INT32: range(INT32_MIN, INT32_MAX); put<int32_t>(out, static_cast<int32_t>(v)); break;
    default: put<int64_t>(out, v); break;
  }
}

void put_float(Out& out, GgufValueType t, double v) {
  if (t == GgufValueType::FLOAT32) {
    put<float>(out, static_cast<float>(v));
  } else {
    put<double>(out, v);
  }
}

void put_value(Out& out, const GgufValue& v, const std::string& ctx, int depth);

void put_array_body(Out& out, const GgufValue& v, const std::string& ctx, int depth) {
  if (depth >= kGgufMaxArrayDepth)
    throw Error(ctx + ": arrays nested deeper than " + std::to_string(kGgufMaxArrayDepth) + " levels");
  const GgufValueType et = v.array_type();
  if (!gguf_value_type_valid(static_cast<uint32_t>(et)))
    throw Error(ctx + ": invalid array element type " + std::to_string(static_cast<uint32_t>(et)));
  put<uint32_t>(out, static_cast<uint32_t>(et));
  const auto& s = v.storage();
  if (gguf_value_type_is_unsigned(et)) {
    const auto* a = std::get_if<std::vector<uint64_t>>(&s);
    if (!a) bad_storage(ctx, "array of " + tname(et));
    put<uint64_t>(out, a->size());
    for (uint64_t x : *a) put_uint(out, et, x, ctx);
  } else if (gguf_value_type_is_signed(et)) {
    const auto* a = std::get_if<std::vector<int64_t>>(&s);
    if (!a) bad_storage(ctx, "array of " + tname(et));
    put<uint64_t>(out, a->size());
    for (int64_t x : *a) put_int(out, et, x, ctx);
  } else if (et == GgufValueType::FLOAT32 || et == GgufValueType::FLOAT64) {
    const auto* a = std::get_if<std::vector<double>>(&s);
    if (!a) bad_storage(ctx, "array of " + tname(et));
    put<uint64_t>(out, a->size());
    for (double x : *a) put_float(out, et, x);
  } else if (et == GgufValueType::BOOL) {
    const auto* a = std::get_if<std::vector<uint8_t>>(&s);
    if (!a) bad_storage(ctx, "array of bool");
    put<uint64_t>(out, a->size());
    for (uint8_t x : *a) put<uint8_t>(out, x ? 1 : 0);
  } else if (et == GgufValueType::STRING) {
    const auto* a = std::get_if<std::vector<std::string>>(&s);
    if (!a) bad_storage(ctx, "array of string");
    put<uint64_t>(out, a->size());
    for (const std::string& x : *a) put_string(out, x);
  } else {
    const auto* a = std::get_if<GgufValue::Array>(&s);
    if (!a) bad_storage(ctx, "array of array");
    put<uint64_t>(out, a->size());
    for (const GgufValue& x : *a) {
      if (!x.is_array()) throw Error(ctx + ": element of an array of arrays is not an array");
      put_array_body(out, x, ctx, depth + 1);
    }
  }
}

// The value's encoding without its leading type field.
void put_value(Out& out, const GgufValue& v, const std::string& ctx, int depth) {
  const GgufValueType t = v.type();
  const auto& s = v.storage();
  if (gguf_value_type_is_unsigned(t)) {
    const auto* x = std::get_if<uint64_t>(&s);
    if (!x) bad_storage(ctx, tname(t) + " value");
    put_uint(out, t, *x, ctx);
  } else if (gguf_value_type_is_signed(t)) {
    const auto* x = std::get_if<int64_t>(&s);
    if (!x) bad_storage(ctx, tname(t) + " value");
    put_int(out, t, *x, ctx);
  } else if (t == GgufValueType::FLOAT32 || t == GgufValueType::FLOAT64) {
    const auto* x = std::get_if<double>(&s);
    if (!x) bad_storage(ctx, tname(t) + " value");
    put_float(out, t, *x);
  } else if (t == GgufValueType::BOOL) {
    const auto* x = std::get_if<bool>(&s);
    if (!x) bad_storage(ctx, "bool value");
    put<uint8_t>(out, *x ? 1 : 0);
  } else if (t == GgufValueType::STRING) {
    const auto* x = std::get_if<std::string>(&s);
    if (!x) bad_storage(ctx, "string value");
    put_string(out, *x);
  } else if (t == GgufValueType::ARRAY) {
    put_array_body(out, v, ctx, depth);
  } else {
    throw Error(ctx + ": invalid value type " + std::to_string(static_cast<uint32_t>(t)));
  }
}

// Validates a value by encoding it into nothing.
void check_value(const GgufValue& v, const std::string& ctx) {
  CountingOut c;
  put_value(c, v, ctx, 0);
}

bool power_of_two(uint64_t a) { return a != 0 && (a & (a - 1)) == 0; }

}  // namespace

// --- metadata ----------------------------------------------------------------------------------

void GgufWriter::check_alignment_value(const GgufValue& v) const {
  uint64_t a = 0;
  try {
    if (!v.is_integer()) throw Error("expected an integer, got " + tname(v.type()));
    a = v.as_uint();
  } catch (const Error& e) {
    throw Error("GgufWriter: metadata key 'general.alignment': " + std::string(e.what()));
  }
  if (!power_of_two(a))
    throw Error("GgufWriter: general.alignment " + std::to_string(a) + " is not a nonzero power of two");
}

void GgufWriter::add(std::string key, GgufValue value) {
  if (key.empty()) throw Error("GgufWriter: empty metadata key");
  if (metadata_index_.count(key)) throw Error("GgufWriter: duplicate metadata key '" + key + "'");
  check_value(value, "GgufWriter: metadata key '" + key + "'");
  if (key == kGgufAlignmentKey) {
    check_alignment_value(value);
    alignment_ = value.as_uint();
  }
  metadata_index_.emplace(key, metadata_.size());
  metadata_.emplace_back(std::move(key), std::move(value));
}

void GgufWriter::set(std::string key, GgufValue value) {
  auto it = metadata_index_.find(key);
  if (it == metadata_index_.end()) {
    add(std::move(key), std::move(value));
    return;
  }
  check_value(value, "GgufWriter: metadata key '" + key + "'");
  if (key == kGgufAlignmentKey) {
    check_alignment_value(value);
    alignment_ = value.as_uint();
  }
  metadata_[it->second].second = std::move(value);
}

bool GgufWriter::has(std::string_view key) const { return metadata_index_.count(std::string(key)) != 0; }

void GgufWriter::set_alignment(uint64_t alignment) {
  if (!power_of_two(alignment))
    throw Error("GgufWriter: alignment " + std::to_string(alignment) + " is not a nonzero power of two");
  if (alignment > std::numeric_limits<uint32_t>::max())
    throw Error("GgufWriter: alignment " + std::to_string(alignment) + " is too large");
  const std::string key(kGgufAlignmentKey);
  if (has(key)) {
    GgufValue& v = metadata_[metadata_index_.at(key)].second;
    set(key, v.type() == GgufValueType::UINT64 ? GgufValue::from_uint(GgufValueType::UINT64, alignment)
                                               : GgufValue::from_uint(GgufValueType::UINT32, alignment));
  } else if (alignment != kGgufDefaultAlignment) {
    add(key, GgufValue::from_uint(GgufValueType::UINT32, alignment));
  }
  alignment_ = alignment;
}

// --- tensors -----------------------------------------------------------------------------------

namespace {

// Validates a tensor's type and shape; returns its size in bytes.
uint64_t checked_tensor_bytes(const std::string& name, TensorType type, const std::vector<int64_t>& ne) {
  const std::string ctx = "GgufWriter: tensor '" + name + "'";
  if (name.empty()) throw Error("GgufWriter: empty tensor name");
  if (!tensor_type_info(static_cast<uint32_t>(type)))
    throw Error(ctx + ": unknown tensor type id " + std::to_string(static_cast<uint32_t>(type)));
  if (ne.empty() || ne.size() > kGgufMaxDims)
    throw Error(ctx + ": " + std::to_string(ne.size()) + " dimensions (must be 1..4)");
  uint64_t rows = 1;
  for (size_t d = 0; d < ne.size(); ++d) {
    if (ne[d] <= 0) throw Error(ctx + ": dimension " + std::to_string(d) + " is " + std::to_string(ne[d]));
    if (d > 0 && __builtin_mul_overflow(rows, static_cast<uint64_t>(ne[d]), &rows))
      throw Error(ctx + ": element count overflows");
  }
  uint64_t elements = 0;
  if (__builtin_mul_overflow(rows, static_cast<uint64_t>(ne[0]), &elements) ||
      elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw Error(ctx + ": element count overflows");
  auto row = tensor_row_bytes(type, ne[0]);
  if (!row)
    throw Error(ctx + " (" + std::string(tensor_type_name(type)) + "): first dimension " + std::to_string(ne[0]) +
                " is not a multiple of the block size " + std::to_string(tensor_type_info(type).block_size));
  uint64_t n_bytes = 0;
  if (__builtin_mul_overflow(*row, rows, &n_bytes)) throw Error(ctx + ": byte size overflows");
  return n_bytes;
}

}  // namespace

GgufWriter::Tensor& GgufWriter::new_tensor(std::string name, TensorType type, std::vector<int64_t> ne) {
  if (tensor_index_.count(name)) throw Error("GgufWriter: duplicate tensor name '" + name + "'");
  Tensor t;
  t.n_bytes = checked_tensor_bytes(name, type, ne);
  t.name = std::move(name);
  t.type = type;
  t.ne = std::move(ne);
  tensor_index_.emplace(t.name, tensors_.size());
  tensors_.push_back(std::move(t));
  return tensors_.back();
}

void GgufWriter::add_tensor(std::string name, TensorType type, std::vector<int64_t> ne, const void* data,
                            size_t size) {
  // Everything is checked before the tensor is recorded, so a failed call changes nothing.
  uint64_t n_bytes = checked_tensor_bytes(name, type, ne);
  if (n_bytes != size)
    throw Error("GgufWriter: tensor '" + name + "' (" + std::string(tensor_type_name(type)) + ", " +
                gguf_shape_string(ne) + ") needs " + std::to_string(n_bytes) + " bytes, got " +
                std::to_string(size));
  if (!data) throw Error("GgufWriter: tensor '" + name + "': null data");
  new_tensor(std::move(name), type, std::move(ne)).data = data;
}

void GgufWriter::add_tensor(std::string name, TensorType type, std::vector<int64_t> ne,
                            GgufTensorProducer producer) {
  if (!producer) throw Error("GgufWriter: tensor '" + name + "': empty producer");
  new_tensor(std::move(name), type, std::move(ne)).producer = std::move(producer);
}

// --- layout and output ---------------------------------------------------------------------------

uint64_t GgufWriter::header_size() const {
  CountingOut c;
  c.n = 4 + 4 + 8 + 8;
  for (const auto& [key, value] : metadata_) {
    c.n += 8 + key.size() + 4;
    put_value(c, value, key, 0);
  }
  for (const Tensor& t : tensors_) c.n += 8 + t.name.size() + 4 + 8 * t.ne.size() + 4 + 8;
  return c.n;
}

uint64_t GgufWriter::file_size() const {
  uint64_t pos = header_size();
  if (!tensors_.empty()) pos += pad_to(pos, alignment_);
  for (const Tensor& t : tensors_) pos += t.n_bytes + pad_to(t.n_bytes, alignment_);
  return pos;
}

void GgufWriter::serialize(Out& out) const {
  out.write(kGgufMagic, 4);
  put<uint32_t>(out, kGgufWriteVersion);
  put<uint64_t>(out, tensors_.size());
  put<uint64_t>(out, metadata_.size());
  for (const auto& [key, value] : metadata_) {
    put_string(out, key);
    put<uint32_t>(out, static_cast<uint32_t>(value.type()));
    put_value(out, value, "GgufWriter: metadata key '" + key + "'", 0);
  }
  // Tensors follow each other, each padded to the alignment, in the order added.
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    put_string(out, t.name);
    put<uint32_t>(out, static_cast<uint32_t>(t.ne.size()));
    for (int64_t d : t.ne) put<uint64_t>(out, static_cast<uint64_t>(d));
    put<uint32_t>(out, static_cast<uint32_t>(t.type));
    put<uint64_t>(out, offset);
    offset += t.n_bytes + pad_to(t.n_bytes, alignment_);
  }
  // The data section starts aligned. A file without tensors has none, and no padding: a huge
  // general.alignment then costs nothing.
  if (!tensors_.empty()) put_zeros(out, pad_to(header_size(), alignment_));
  for (const Tensor& t : tensors_) {
    if (t.data) {
      out.write(t.data, static_cast<size_t>(t.n_bytes));
    } else {
      uint64_t written = 0;
      t.producer([&](const void* p, size_t n) {
        if (n > t.n_bytes - written)
          throw Error("GgufWriter: tensor '" + t.name + "': producer wrote more than its " +
                      std::to_string(t.n_bytes) + " bytes");
        out.write(p, n);
        written += n;
      });
      if (written != t.n_bytes)
        throw Error("GgufWriter: tensor '" + t.name + "': producer wrote " + std::to_string(written) +
                    " bytes, expected " + std::to_string(t.n_bytes));
    }
    put_zeros(out, pad_to(t.n_bytes, alignment_));
  }
}

std::vector<uint8_t> GgufWriter::write_to_memory() const {
  std::vector<uint8_t> buf;
  buf.reserve(static_cast<size_t>(file_size()));
  MemoryOut out(buf);
  serialize(out);
  return buf;
}

void GgufWriter::write(const std::string& path) const {
  std::string tmp = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw Error(path + ": cannot create temporary file " + tmp + ": " + std::strerror(errno));
  auto fail_cleanup = [&] {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
  };
  try {
    FdOut out(fd, path);
    serialize(out);
    out.flush();
    if (::fchmod(fd, 0644) != 0) throw Error(path + ": cannot set permissions: " + std::strerror(errno));
    if (::fsync(fd) != 0) throw Error(path + ": fsync failed: " + std::strerror(errno));
    int rc = ::close(fd);
    fd = -1;
    if (rc != 0) throw Error(path + ": close failed: " + std::strerror(errno));
    if (::rename(tmp.c_str(), path.c_str()) != 0)
      throw Error(path + ": cannot rename " + tmp + " into place: " + std::strerror(errno));
  } catch (const Error& e) {
    fail_cleanup();
    // Every error names the output path: "GgufWriter: <problem>" becomes "<path>: <problem>".
    std::string msg = e.what();
    if (msg.rfind(path + ":", 0) == 0) throw;
    const std::string prefix = "GgufWriter: ";
    if (msg.rfind(prefix, 0) == 0) msg.erase(0, prefix.size());
    throw Error(path + ": " + msg);
  } catch (...) {
    fail_cleanup();
    throw;
  }
}

}  // namespace edgeinfer
