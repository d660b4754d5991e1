#include "gguf/gguf_file.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "gguf/gguf_format.h"
#include "util/error.h"

namespace edgeinfer {

namespace {

// Bounds-checked little-endian cursor over the file. Every read states what it reads, so a
// truncated file says where it ended; every failure throws Error("<name>: <problem>").
class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size, const std::string& name) : p_(data), size_(size), name_(name) {}

  [[noreturn]] void fail(const std::string& msg) const { throw Error(name_ + ": " + msg); }

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  void need(size_t n, const std::string& what) const {
    if (n > remaining())
      fail("truncated file: " + what + " at offset " + std::to_string(pos_) + " needs " + std::to_string(n) +
           " bytes, only " + std::to_string(remaining()) + " left");
  }

  template <typename T>
  T read(const std::string& what) {
    need(sizeof(T), what);
    T v = gguf_load_le<T>(p_ + pos_);
    pos_ += sizeof(T);
    return v;
  }

  // A GGUF string: uint64 length then bytes. The length is checked against the bytes left
  // before anything is allocated.
  std::string read_string(const std::string& what) {
    uint64_t len = read<uint64_t>(what + " length");
    if (len > remaining())
      fail(what + ": string length " + std::to_string(len) + " exceeds the remaining " +
           std::to_string(remaining()) + " bytes at offset " + std::to_string(pos_));
    std::string s(reinterpret_cast<const char*>(p_ + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return s;
  }

 private:
  const uint8_t* p_;
  size_t size_;
  size_t pos_ = 0;
  const std::string& name_;
};

template <typename T>
std::vector<T> read_scalars_as(Cursor& c, GgufValueType et, uint64_t count, const std::string& ctx);

class ValueReader {
 public:
  explicit ValueReader(Cursor& c) : c_(c) {}

  GgufValue read(GgufValueType t, const std::string& ctx, int depth) {
    switch (t) {
      case GgufValueType::UINT8: return GgufValue(t, GgufValueType::UINT8, uint64_t{c_.read<uint8_t>(ctx)});
      case GgufValueType::UINT16: return GgufValue(t, GgufValueType::UINT8, uint64_t{c_.read<uint16_t>(ctx)});
      case GgufValueType::UINT32: return GgufValue(t, GgufValueType::UINT8, uint64_t{c_.read<uint32_t>(ctx)});
      case GgufValueType::UINT64: return GgufValue(t, GgufValueType::UINT8, c_.read<uint64_t>(ctx));
      case GgufValueType::INT8: return GgufValue(t, GgufValueType::UINT8, int64_t{c_.read<int8_t>(ctx)});
      case GgufValueType::INT16: return GgufValue(t, GgufValueType::UINT8, int64_t{c_.read<int16_t>(ctx)});
      case GgufValueType::INT32: return GgufValue(t, GgufValueType::UINT8, int64_t{c_.read<int32_t>(ctx)});
      case GgufValueType::INT64: return GgufValue(t, GgufValueType::UINT8, c_.read<int64_t>(ctx));
      case GgufValueType::FLOAT32:
        return GgufValue(t, GgufValueType::UINT8, static_cast<double>(c_.read<float>(ctx)));
      case GgufValueType::FLOAT64: return GgufValue(t, GgufValueType::UINT8, c_.read<double>(ctx));
      case GgufValueType::BOOL: return GgufValue(t, GgufValueType::UINT8, read_bool(ctx));
      case GgufValueType::STRING: return GgufValue(t, GgufValueType::UINT8, c_.read_string(ctx));
      case GgufValueType::ARRAY: return read_array(ctx, depth);
    }
    c_.fail(ctx + ": invalid value type " + std::to_string(static_cast<uint32_t>(t)));
  }

 private:
  bool read_bool(const std::string& ctx) {
    uint8_t b = c_.read<uint8_t>(ctx);
    if (b > 1) c_.fail(ctx + ": invalid bool value " + std::to_string(b) + " (must be 0 or 1)");
    return b != 0;
  }

  GgufValue read_array(const std::string& ctx, int depth) {
    if (depth >= kGgufMaxArrayDepth)
      c_.fail(ctx + ": arrays nested deeper than " + std::to_string(kGgufMaxArrayDepth) + " levels");
    uint32_t raw = c_.read<uint32_t>(ctx + " array element type");
    if (!gguf_value_type_valid(raw)) c_.fail(ctx + ": invalid array element type " + std::to_string(raw));
    auto et = static_cast<GgufValueType>(raw);
    uint64_t count = c_.read<uint64_t>(ctx + " array count");
    // Every element takes at least this many bytes in the file, so a count the rest of the file
    // cannot hold is rejected before anything is reserved.
    uint64_t min_bytes = gguf_min_encoded_size(et);
    if (count > c_.remaining() / min_bytes)
      c_.fail(ctx + ": array count " + std::to_string(count) + " (" + std::string(gguf_value_type_name(et)) +
              ") exceeds the remaining " + std::to_string(c_.remaining()) + " bytes at offset " +
              std::to_string(c_.pos()));
    const auto n = static_cast<size_t>(count);
    switch (et) {
      case GgufValueType::UINT8: return uints<uint8_t>(et, n, ctx);
      case GgufValueType::UINT16: return uints<uint16_t>(et, n, ctx);
      case GgufValueType::UINT32: return uints<uint32_t>(et, n, ctx);
      case GgufValueType::UINT64: return uints<uint64_t>(et, n, ctx);
      case GgufValueType::INT8: return ints<int8_t>(et, n, ctx);
      case GgufValueType::INT16: return ints<int16_t>(et, n, ctx);
      case GgufValueType::INT32: return ints<int32_t>(et, n, ctx);
      case GgufValueType::INT64: return ints<int64_t>(et, n, ctx);
      case GgufValueType::FLOAT32: return floats<float>(et, n, ctx);
      case GgufValueType::FLOAT64: return floats<double>(et, n, ctx);
      case GgufValueType::BOOL: {
        std::vector<uint8_t> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = read_bool(ctx) ? 1 : 0;
        return GgufValue(GgufValueType::ARRAY, et, std::move(v));
      }
      case GgufValueType::STRING: {
        std::vector<std::string> v;
        v.reserve(n);
        for (size_t i = 0; i < n; ++i) v.push_back(c_.read_string(ctx));
        return GgufValue(GgufValueType::ARRAY, et, std::move(v));
      }
      case GgufValueType::ARRAY: {
        GgufValue::Array v;
        v.reserve(n);
        for (size_t i = 0; i < n; ++i) v.push_back(read_array(ctx, depth + 1));
        return GgufValue(GgufValueType::ARRAY, et, std::move(v));
      }
    }
    c_.fail(ctx + ": invalid array element type " + std::to_string(raw));
  }

  template <typename T>
  GgufValue uints(GgufValueType et, size_t n, const std::string& ctx) {
    std::vector<uint64_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = c_.read<T>(ctx);
    return GgufValue(GgufValueType::ARRAY, et, std::move(v));
  }
  template <typename T>
  GgufValue ints(GgufValueType et, size_t n, const std::string& ctx) {
    std::vector<int64_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = c_.read<T>(ctx);
    return GgufValue(GgufValueType::ARRAY, et, std::move(v));
  }
  template <typename T>
  GgufValue floats(GgufValueType et, size_t n, const std::string& ctx) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>(c_.read<T>(ctx));
    return GgufValue(GgufValueType::ARRAY, et, std::move(v));
  }

  Cursor& c_;
};

bool mul_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_mul_overflow(a, b, out); }
bool add_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_add_overflow(a, b, out); }

std::string describe_tensor(const GgufTensorInfo& t) {
  return "tensor " + gguf_printable(t.name) + " (" + std::string(tensor_type_name(t.type)) + ", " +
         gguf_shape_string(t.ne) + ")";
}

}  // namespace

// --- GgufTensorInfo ----------------------------------------------------------------------------

int64_t GgufTensorInfo::n_elements() const {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;  // validated at parse time not to overflow
  return n;
}

int64_t GgufTensorInfo::n_rows() const {
  int64_t n = 1;
  for (size_t i = 1; i < ne.size(); ++i) n *= ne[i];
  return n;
}

// --- GgufFile ----------------------------------------------------------------------------------

GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;
GgufFile::~GgufFile() = default;

GgufFile GgufFile::open(const std::string& path) {
  GgufFile f;
  f.file_ = MappedFile::open(path);
  f.data_ = f.file_.data();
  f.size_ = f.file_.size();
  f.name_ = path;
  f.parse_all();
  return f;
}

GgufFile GgufFile::parse(const uint8_t* data, size_t size, std::string name) {
  GgufFile f;
  f.data_ = data;
  f.size_ = data ? size : 0;
  f.name_ = std::move(name);
  f.parse_all();
  return f;
}

void GgufFile::parse_all() {
  Cursor c(data_, size_, name_);

  // --- header
  if (size_ < 4) c.fail("not a GGUF file (only " + std::to_string(size_) + " bytes)");
  if (std::memcmp(data_, kGgufMagic, 4) != 0) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    for (int i = 0; i < 4; ++i) {
      hex += kHex[data_[i] >> 4];
      hex += kHex[data_[i] & 15];
    }
    c.fail("not a GGUF file (bad magic 0x" + hex + ", expected \"GGUF\")");
  }
  c.read<uint32_t>("magic");
  version_ = c.read<uint32_t>("version");
  if (version_ == 1)
    c.fail("GGUF version 1 is not supported (only versions 2 and 3); convert the model again with a current "
           "converter");
  if (version_ != 2 && version_ != 3) {
    if ((version_ & 0xffffu) == 0 && (version_ >> 24) >= 1 && (version_ >> 24) <= 3)
      c.fail("big-endian GGUF files are not supported (version field " + std::to_string(version_) + ")");
    c.fail("unsupported GGUF version " + std::to_string(version_) + " (only versions 2 and 3)");
  }
  const uint64_t n_tensors = c.read<uint64_t>("tensor count");
  const uint64_t n_kv = c.read<uint64_t>("metadata count");
  if (n_kv > c.remaining() / kGgufMinKvBytes)
    c.fail("metadata count " + std::to_string(n_kv) + " exceeds what the remaining " +
           std::to_string(c.remaining()) + " bytes can hold");

  // --- metadata
  metadata_.reserve(static_cast<size_t>(n_kv));
  ValueReader values(c);
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = c.read_string("metadata key #" + std::to_string(i));
    if (key.empty()) c.fail("metadata key #" + std::to_string(i) + " is empty");
    std::string ctx = "metadata key " + gguf_printable(key);
    if (metadata_index_.count(key)) c.fail("duplicate " + ctx);
    uint32_t raw = c.read<uint32_t>(ctx + " value type");
    if (!gguf_value_type_valid(raw)) c.fail(ctx + ": invalid value type " + std::to_string(raw));
    GgufValue v = values.read(static_cast<GgufValueType>(raw), ctx, 0);
    metadata_index_.emplace(key, metadata_.size());
    metadata_.emplace_back(std::move(key), std::move(v));
  }

  // --- alignment
  alignment_ = kGgufDefaultAlignment;
  if (const GgufValue* a = find(kGgufAlignmentKey)) {
    if (!a->is_integer())
      c.fail(std::string(kGgufAlignmentKey) + " must be an unsigned integer, got " +
             (a->is_array() ? "an array" : std::string(gguf_value_type_name(a->type()))));
    uint64_t al = 0;
    bool negative = gguf_value_type_is_signed(a->type()) && a->as_int() < 0;
    if (!negative) al = a->as_uint();
    if (negative || al == 0 || (al & (al - 1)) != 0)
      c.fail(std::string(kGgufAlignmentKey) + " " + a->to_display_string() + " is not a nonzero power of two");
    alignment_ = al;
  }

  // --- tensor infos
  if (n_tensors > c.remaining() / kGgufMinTensorInfoBytes)
    c.fail("tensor count " + std::to_string(n_tensors) + " exceeds what the remaining " +
           std::to_string(c.remaining()) + " bytes can hold");
  tensors_.reserve(static_cast<size_t>(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    t.name = c.read_string("tensor #" + std::to_string(i) + " name");
    if (t.name.empty()) c.fail("tensor #" + std::to_string(i) + " has an empty name");
    std::string ctx = "tensor " + gguf_printable(t.name);
    if (tensor_index_.count(t.name)) c.fail("duplicate " + ctx);
    uint32_t n_dims = c.read<uint32_t>(ctx + " n_dims");
    if (n_dims < 1 || n_dims > kGgufMaxDims)
      c.fail(ctx + ": n_dims " + std::to_string(n_dims) + " out of range (1.." + std::to_string(kGgufMaxDims) + ")");
    t.ne.resize(n_dims);
    uint64_t n_elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t ne = c.read<uint64_t>(ctx + " dimension " + std::to_string(d));
      if (ne == 0) c.fail(ctx + ": dimension " + std::to_string(d) + " is 0");
      if (ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        c.fail(ctx + ": dimension " + std::to_string(d) + " (" + std::to_string(ne) + ") is too large");
      if (mul_overflows(n_elements, ne, &n_elements) ||
          n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        c.fail(ctx + ": element count overflows (dimensions so far " + gguf_shape_string(t.ne, d) + " x " +
               std::to_string(ne) + ")");
      t.ne[d] = static_cast<int64_t>(ne);
    }
    uint32_t type_id = c.read<uint32_t>(ctx + " type");
    if (!tensor_type_info(type_id))
      c.fail(ctx + ": unknown tensor type id " + std::to_string(type_id));
    t.type = static_cast<TensorType>(type_id);
    t.offset = c.read<uint64_t>(ctx + " offset");

    auto row = tensor_row_bytes(t.type, t.ne[0]);
    if (!row)
      c.fail(describe_tensor(t) + ": first dimension " + std::to_string(t.ne[0]) +
             " is not a multiple of the block size " + std::to_string(tensor_type_info(t.type).block_size));
    if (mul_overflows(*row, static_cast<uint64_t>(t.n_rows()), &t.n_bytes))
      c.fail(describe_tensor(t) + ": byte size overflows");
    if (t.offset % alignment_ != 0)
      c.fail(describe_tensor(t) + ": offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
             std::to_string(alignment_));
    tensor_index_.emplace(t.name, tensors_.size());
    tensors_.push_back(std::move(t));
  }

  // --- data section: starts at the first aligned offset after the tensor infos
  uint64_t pad = (alignment_ - c.pos() % alignment_) % alignment_;
  if (add_overflows(c.pos(), pad, &data_offset_)) c.fail("data section offset overflows");

  for (GgufTensorInfo& t : tensors_) {
    uint64_t begin = 0, end = 0;
    if (add_overflows(data_offset_, t.offset, &begin) || add_overflows(begin, t.n_bytes, &end) || end > size_)
      c.fail(describe_tensor(t) + " extends past end of file (offset " + std::to_string(data_offset_) + " + " +
             std::to_string(t.offset) + ", size " + std::to_string(t.n_bytes) + ", file size " +
             std::to_string(size_) + ")");
    t.data = data_ + begin;
  }

  // Tensors may be stored in any order but must not share bytes.
  std::vector<size_t> order(tensors_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return tensors_[a].offset < tensors_[b].offset; });
  for (size_t i = 1; i < order.size(); ++i) {
    const GgufTensorInfo& prev = tensors_[order[i - 1]];
    const GgufTensorInfo& cur = tensors_[order[i]];
    if (prev.offset + prev.n_bytes > cur.offset)  // both terms bounded by the file size
      c.fail(describe_tensor(cur) + " at data offset " + std::to_string(cur.offset) + " overlaps " +
             describe_tensor(prev) + " at data offset " + std::to_string(prev.offset) + " (size " +
             std::to_string(prev.n_bytes) + ")");
  }
}

// --- lookups -----------------------------------------------------------------------------------

const GgufValue* GgufFile::find(std::string_view key) const {
  auto it = metadata_index_.find(std::string(key));
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

const GgufValue& GgufFile::get(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) throw Error(name_ + ": missing metadata key '" + std::string(key) + "'");
  return *v;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {

// Runs a value accessor, prefixing its error with the file and key.
template <typename F>
auto with_key(const std::string& file, std::string_view key, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    throw Error(file + ": metadata key '" + std::string(key) + "': " + e.what());
  }
}

}  // namespace

int64_t GgufFile::get_int(std::string_view key) const {
  const GgufValue& v = get(key);
  return with_key(name_, key, [&] { return v.as_int(); });
}

double GgufFile::get_float(std::string_view key) const {
  const GgufValue& v = get(key);
  return with_key(name_, key, [&] { return v.as_float(); });
}

const std::string& GgufFile::get_string(std::string_view key) const {
  const GgufValue& v = get(key);
  return with_key(name_, key, [&]() -> const std::string& { return v.as_string(); });
}

std::optional<int64_t> GgufFile::get_int_opt(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  return with_key(name_, key, [&] { return v->as_int(); });
}

std::optional<double> GgufFile::get_float_opt(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  return with_key(name_, key, [&] { return v->as_float(); });
}

std::optional<bool> GgufFile::get_bool_opt(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  return with_key(name_, key, [&] { return v->as_bool(); });
}

std::optional<std::string> GgufFile::get_string_opt(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  return with_key(name_, key, [&] { return v->as_string(); });
}

}  // namespace edgeinfer
