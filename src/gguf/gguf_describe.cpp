#include "gguf/gguf_describe.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "gguf/gguf_format.h"

namespace edgeinfer {

namespace {

// "1,185,376"
std::string with_commas(uint64_t v) {
  std::string digits = std::to_string(v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string pad_right(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string pad_left(const std::string& s, size_t width) {
  return s.size() < width ? std::string(width - s.size(), ' ') + s : s;
}

std::string value_type_label(const GgufValue& v) {
  if (v.is_array()) return "array";
  return std::string(gguf_value_type_name(v.type()));
}

}  // namespace

std::string describe_gguf(const GgufFile& f) {
  std::string out;
  out += "file:        " + f.path() + "\n";
  out += "format:      GGUF v" + std::to_string(f.version()) + ", alignment " + std::to_string(f.alignment()) +
         ", data at offset " + with_commas(f.data_offset()) + ", " + with_commas(f.file_size()) + " bytes\n";

  out += "metadata:    " + std::to_string(f.metadata().size()) + " keys\n";
  size_t key_width = 0;
  for (const auto& [key, value] : f.metadata()) key_width = std::max(key_width, key.size());
  key_width = std::min<size_t>(key_width, 48);
  for (const auto& [key, value] : f.metadata())
    out += "  " + pad_right(key, key_width) + "  " + pad_right(value_type_label(value), 7) + "  " +
           value.to_display_string(8) + "\n";

  const auto& tensors = f.tensors();
  out += "tensors:     " + std::to_string(tensors.size()) + "\n";
  if (!tensors.empty()) {
    size_t name_width = 4;
    for (const auto& t : tensors) name_width = std::max(name_width, t.name.size());
    name_width = std::min<size_t>(name_width, 48);
    out += "  " + pad_right("name", name_width) + "  " + pad_right("type", 8) + "  " + pad_right("shape", 24) +
           "  " + pad_left("bytes", 14) + "\n";
    for (const auto& t : tensors)
      out += "  " + pad_right(t.name, name_width) + "  " + pad_right(std::string(tensor_type_name(t.type)), 8) +
             "  " + pad_right(gguf_shape_string(t.ne), 24) + "  " + pad_left(with_commas(t.n_bytes), 14) + "\n";
  }

  // Totals per tensor type, in type-id order.
  struct Total {
    uint64_t count = 0, elements = 0, bytes = 0;
  };
  std::array<Total, kTensorTypeCount> totals{};
  Total all;
  for (const auto& t : tensors) {
    Total& x = totals[static_cast<uint32_t>(t.type)];
    x.count += 1;
    x.elements += static_cast<uint64_t>(t.n_elements());
    x.bytes += t.n_bytes;
    all.count += 1;
    all.elements += static_cast<uint64_t>(t.n_elements());
    all.bytes += t.n_bytes;
  }
  out += "totals:\n";
  for (uint32_t id = 0; id < kTensorTypeCount; ++id) {
    const Total& x = totals[id];
    if (!x.count) continue;
    out += "  " + pad_right(std::string(tensor_type_name(static_cast<TensorType>(id))), 8) + "  " +
           pad_left(std::to_string(x.count), 5) + " tensors  " + pad_left(with_commas(x.elements), 15) +
           " elements  " + pad_left(with_commas(x.bytes), 15) + " bytes\n";
  }
  out += "  " + pad_right("all", 8) + "  " + pad_left(std::to_string(all.count), 5) + " tensors  " +
         pad_left(with_commas(all.elements), 15) + " elements  " + pad_left(with_commas(all.bytes), 15) +
         " bytes\n";
  return out;
}

}  // namespace edgeinfer
