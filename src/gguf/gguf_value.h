#pragma once
// A GGUF metadata value: a scalar, a string, or an array (arrays may nest).
// Arrays of scalars and strings are stored flat and typed, so a 150k-entry vocabulary costs one
// vector, not 150k values.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace edgeinfer {

enum class GgufValueType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};

std::string_view gguf_value_type_name(GgufValueType t);
bool gguf_value_type_is_integer(GgufValueType t);

class GgufValue {
 public:
  // Scalars of every integer type are held as int64/uint64; floats as double.
  using Array = std::vector<GgufValue>;
  using Storage = std::variant<uint64_t, int64_t, double, bool, std::string,
                               std::vector<uint64_t>, std::vector<int64_t>, std::vector<double>,
                               std::vector<uint8_t> /*bool array*/, std::vector<std::string>,
                               Array /*nested arrays*/>;

  GgufValue() = default;
  GgufValue(GgufValueType type, GgufValueType array_type, Storage storage)
      : type_(type), array_type_(array_type), storage_(std::move(storage)) {}

  // Convenience constructors (used by the writer and by tests).
  static GgufValue from_uint(GgufValueType t, uint64_t v);
  static GgufValue from_int(GgufValueType t, int64_t v);
  static GgufValue from_float(GgufValueType t, double v);
  static GgufValue from_bool(bool v);
  static GgufValue from_string(std::string v);
  static GgufValue from_string_array(std::vector<std::string> v);
  static GgufValue from_int_array(GgufValueType elem, std::vector<int64_t> v);
  static GgufValue from_uint_array(GgufValueType elem, std::vector<uint64_t> v);
  static GgufValue from_float_array(GgufValueType elem, std::vector<double> v);
  static GgufValue from_bool_array(std::vector<uint8_t> v);
  static GgufValue from_nested_array(GgufValueType elem, Array v);

  GgufValueType type() const { return type_; }
  // Element type when type() == ARRAY.
  GgufValueType array_type() const { return array_type_; }
  bool is_array() const { return type_ == GgufValueType::ARRAY; }
  bool is_integer() const { return gguf_value_type_is_integer(type_); }
  bool is_string() const { return type_ == GgufValueType::STRING; }

  // Scalar accessors. Each throws Error when the value has another kind or does not fit
  // ("expected an integer, got string", "value 300 out of range").
  int64_t as_int() const;
  uint64_t as_uint() const;
  double as_float() const;  // any integer or float scalar
  bool as_bool() const;
  const std::string& as_string() const;

  // Array accessors; throw Error when this is not an array of a fitting element type.
  size_t array_size() const;
  const std::vector<std::string>& as_string_array() const;
  std::vector<int64_t> as_int_array() const;  // any integer element type
  std::vector<float> as_float_array() const;  // any integer or float element type
  const Array& as_nested_array() const;       // element type ARRAY

  const Storage& storage() const { return storage_; }
  // Same type, element type and values (as for floats, NaN never compares equal).
  bool operator==(const GgufValue& other) const = default;
  std::string to_display_string(size_t max_items = 8) const;  // for `edgeinfer info`

 private:
  GgufValueType type_ = GgufValueType::UINT8;
  GgufValueType array_type_ = GgufValueType::UINT8;
  Storage storage_;
};

}  // namespace edgeinfer
