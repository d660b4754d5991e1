// Writer → reader round trips of every metadata value type (scalars at their limits, empty and
// nested arrays) and of tensor data; value accessors and display.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "gguf_test_util.h"
#include "util/error.h"

namespace edgeinfer {
namespace {

using test::Bytes;
using test::parse_copy;
using VT = GgufValueType;

void expect_same(const GgufValue& a, const GgufValue& b) {
  EXPECT_EQ(a.type(), b.type());
  if (a.is_array()) {
    EXPECT_EQ(a.array_type(), b.array_type());
  }
  EXPECT_TRUE(a.storage() == b.storage()) << a.to_display_string() << " vs " << b.to_display_string();
}

std::vector<std::pair<std::string, GgufValue>> every_value_type() {
  std::vector<std::pair<std::string, GgufValue>> v;
  auto add = [&](std::string k, GgufValue x) { v.emplace_back(std::move(k), std::move(x)); };
  add("u8.min", GgufValue::from_uint(VT::UINT8, 0));
  add("u8.max", GgufValue::from_uint(VT::UINT8, 255));
  add("i8.min", GgufValue::from_int(VT::INT8, -128));
  add("i8.max", GgufValue::from_int(VT::INT8, 127));
  add("u16.max", GgufValue::from_uint(VT::UINT16, 65535));
  add("i16.min", GgufValue::from_int(VT::INT16, -32768));
  add("u32.max", GgufValue::from_uint(VT::UINT32, 4294967295u));
  add("i32.min", GgufValue::from_int(VT::INT32, std::numeric_limits<int32_t>::min()));
  add("u64.max", GgufValue::from_uint(VT::UINT64, std::numeric_limits<uint64_t>::max()));
  add("i64.min", GgufValue::from_int(VT::INT64, std::numeric_limits<int64_t>::min()));
  add("i64.max", GgufValue::from_int(VT::INT64, std::numeric_limits<int64_t>::max()));
  add("f32", GgufValue::from_float(VT::FLOAT32, 3.14159265358979));
  add("f32.tiny", GgufValue::from_float(VT::FLOAT32, 1e-40));  // subnormal
  add("f32.inf", GgufValue::from_float(VT::FLOAT32, -INFINITY));
  add("f64", GgufValue::from_float(VT::FLOAT64, 2.718281828459045));
  add("bool.t", GgufValue::from_bool(true));
  add("bool.f", GgufValue::from_bool(false));
  add("str", GgufValue::from_string("hello, world"));
  add("str.empty", GgufValue::from_string(""));
  add("str.utf8", GgufValue::from_string("\xe2\x96\x81Hello \xe4\xb8\x96\xe7\x95\x8c"));
  add("str.nul", GgufValue::from_string(std::string("a\0b", 3)));
  add("arr.u8", GgufValue::from_uint_array(VT::UINT8, {0, 1, 255}));
  add("arr.i8", GgufValue::from_int_array(VT::INT8, {-128, 0, 127}));
  add("arr.u16", GgufValue::from_uint_array(VT::UINT16, {65535, 7}));
  add("arr.i16", GgufValue::from_int_array(VT::INT16, {-32768, 32767}));
  add("arr.u32", GgufValue::from_uint_array(VT::UINT32, {4294967295u}));
  add("arr.i32", GgufValue::from_int_array(VT::INT32, {-1, 2, -3}));
  add("arr.u64", GgufValue::from_uint_array(VT::UINT64, {std::numeric_limits<uint64_t>::max(), 0}));
  add("arr.i64", GgufValue::from_int_array(VT::INT64, {std::numeric_limits<int64_t>::min(), 5}));
  add("arr.f32", GgufValue::from_float_array(VT::FLOAT32, {0.5, -1.25, 1e30}));
  add("arr.f64", GgufValue::from_float_array(VT::FLOAT64, {1e300, -0.0}));
  add("arr.bool", GgufValue::from_bool_array({1, 0, 1, 1}));
  add("arr.str", GgufValue::from_string_array({"<unk>", "", "\xe2\x96\x81the"}));
  add("arr.empty.u32", GgufValue::from_uint_array(VT::UINT32, {}));
  add("arr.empty.str", GgufValue::from_string_array({}));
  add("arr.empty.f64", GgufValue::from_float_array(VT::FLOAT64, {}));
  add("arr.empty.bool", GgufValue::from_bool_array({}));
  add("arr.empty.arr", GgufValue::from_nested_array(VT::ARRAY, {}));
  add("arr.arr", GgufValue::from_nested_array(
                     VT::ARRAY, {GgufValue::from_string_array({"a", "b"}), GgufValue::from_int_array(VT::INT32, {}),
                                 GgufValue::from_float_array(VT::FLOAT32, {1.5}),
                                 GgufValue::from_nested_array(VT::ARRAY, {})}));
  // Three levels: [[[1, 2], []], [[true]]]
  add("arr.arr.arr",
      GgufValue::from_nested_array(
          VT::ARRAY,
          {GgufValue::from_nested_array(VT::ARRAY, {GgufValue::from_uint_array(VT::UINT8, {1, 2}),
                                                    GgufValue::from_uint_array(VT::UINT8, {})}),
           GgufValue::from_nested_array(VT::ARRAY, {GgufValue::from_bool_array({1})})}));
  return v;
}

TEST(GgufRoundTrip, EveryValueType) {
  auto values = every_value_type();
  GgufWriter w;
  for (const auto& [k, v] : values) w.add(k, v);
  Bytes bytes = w.write_to_memory();
  EXPECT_EQ(bytes.size(), w.file_size());
  auto parsed = parse_copy(bytes);
  const GgufFile& f = parsed.file;
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_TRUE(f.tensors().empty());
  ASSERT_EQ(f.metadata().size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    SCOPED_TRACE(values[i].first);
    EXPECT_EQ(f.metadata()[i].first, values[i].first);  // file order kept
    ASSERT_NE(f.find(values[i].first), nullptr);
    expect_same(*f.find(values[i].first), values[i].second);
  }
  // Writing what was read gives the same bytes.
  GgufWriter w2;
  for (const auto& [k, v] : f.metadata()) w2.add(k, v);
  EXPECT_EQ(w2.write_to_memory(), bytes);
}

TEST(GgufRoundTrip, ValueAccessors) {
  auto parsed = parse_copy([] {
    GgufWriter w;
    for (const auto& [k, v] : every_value_type()) w.add(k, v);
    return w.write_to_memory();
  }());
  const GgufFile& f = parsed.file;
  EXPECT_EQ(f.get_int("u8.max"), 255);
  EXPECT_EQ(f.get_int("i8.min"), -128);
  EXPECT_EQ(f.get_int("i64.min"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f.get("u64.max").as_uint(), std::numeric_limits<uint64_t>::max());
  EXPECT_THROW(f.get_int("u64.max"), Error);  // does not fit int64
  EXPECT_THROW(f.get("i8.min").as_uint(), Error);
  EXPECT_EQ(f.get("i8.max").as_uint(), 127u);
  EXPECT_FLOAT_EQ(static_cast<float>(f.get_float("f32")), 3.14159265f);
  EXPECT_DOUBLE_EQ(f.get_float("f64"), 2.718281828459045);
  EXPECT_DOUBLE_EQ(f.get_float("u32.max"), 4294967295.0);  // integers read as floats
  EXPECT_EQ(f.get_bool_opt("bool.t"), std::optional<bool>(true));
  EXPECT_EQ(f.get_bool_opt("bool.f"), std::optional<bool>(false));
  EXPECT_EQ(f.get_bool_opt("absent"), std::nullopt);
  EXPECT_THROW(f.get_bool_opt("u8.max"), Error);
  EXPECT_EQ(f.get_string("str"), "hello, world");
  EXPECT_EQ(f.get_string("str.nul"), std::string("a\0b", 3));
  EXPECT_EQ(f.get_string_opt("absent"), std::nullopt);
  EXPECT_EQ(f.get_int_opt("absent"), std::nullopt);
  EXPECT_EQ(f.get_int_opt("i32.min"), std::optional<int64_t>(std::numeric_limits<int32_t>::min()));
  EXPECT_EQ(f.get_float_opt("absent"), std::nullopt);
  EXPECT_THROW(f.get_float("str"), Error);
  EXPECT_THROW(f.get_string("u8.max"), Error);
  EXPECT_THROW(f.get_int("arr.u8"), Error);

  EXPECT_EQ(f.get("arr.u8").array_size(), 3u);
  EXPECT_EQ(f.get("arr.empty.arr").array_size(), 0u);
  EXPECT_EQ(f.get("arr.i8").as_int_array(), (std::vector<int64_t>{-128, 0, 127}));
  EXPECT_EQ(f.get("arr.u16").as_int_array(), (std::vector<int64_t>{65535, 7}));
  EXPECT_THROW(f.get("arr.u64").as_int_array(), Error);  // 2^64-1 does not fit
  EXPECT_EQ(f.get("arr.f32").as_float_array(), (std::vector<float>{0.5f, -1.25f, 1e30f}));
  EXPECT_EQ(f.get("arr.i32").as_float_array(), (std::vector<float>{-1.f, 2.f, -3.f}));
  EXPECT_THROW(f.get("arr.str").as_float_array(), Error);
  EXPECT_EQ(f.get("arr.str").as_string_array()[2], "\xe2\x96\x81the");
  EXPECT_THROW(f.get("arr.u8").as_string_array(), Error);
  EXPECT_THROW(f.get("str").array_size(), Error);
  const auto& nested = f.get("arr.arr.arr").as_nested_array();
  ASSERT_EQ(nested.size(), 2u);
  EXPECT_EQ(nested[0].as_nested_array()[0].as_int_array(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(nested[0].as_nested_array()[1].array_size(), 0u);
  EXPECT_EQ(nested[1].as_nested_array()[0].array_type(), GgufValueType::BOOL);
  EXPECT_THROW(f.get("arr.u8").as_nested_array(), Error);
}

TEST(GgufRoundTrip, DisplayStrings) {
  EXPECT_EQ(GgufValue::from_uint(VT::UINT32, 42).to_display_string(), "42");
  EXPECT_EQ(GgufValue::from_int(VT::INT8, -3).to_display_string(), "-3");
  EXPECT_EQ(GgufValue::from_float(VT::FLOAT32, 1e-5).to_display_string(), "1e-05");
  EXPECT_EQ(GgufValue::from_bool(true).to_display_string(), "true");
  EXPECT_EQ(GgufValue::from_string("a\"b\n").to_display_string(), "\"a\\\"b\\n\"");
  EXPECT_EQ(GgufValue::from_int_array(VT::INT32, {1, 2, 3}).to_display_string(), "[1, 2, 3]");
  std::vector<std::string> many(512, "tok");
  std::string d = GgufValue::from_string_array(many).to_display_string(3);
  EXPECT_EQ(d, "[string \u00d7 512] [\"tok\", \"tok\", \"tok\", ...]");
  std::string long_string(5000, 'x');
  EXPECT_LT(GgufValue::from_string(long_string).to_display_string().size(), 200u);
  EXPECT_EQ(GgufValue::from_nested_array(VT::ARRAY, {GgufValue::from_string_array({"a"}),
                                                     GgufValue::from_nested_array(VT::ARRAY, {})})
                .to_display_string(),
            "[[\"a\"], []]");
}

TEST(GgufRoundTrip, ValueConstructorsCheckRanges) {
  EXPECT_THROW(GgufValue::from_uint(VT::UINT8, 256), Error);
  EXPECT_THROW(GgufValue::from_int(VT::INT8, 128), Error);
  EXPECT_THROW(GgufValue::from_int(VT::UINT32, -1), Error);
  EXPECT_THROW(GgufValue::from_uint(VT::INT64, std::numeric_limits<uint64_t>::max()), Error);
  EXPECT_THROW(GgufValue::from_uint(VT::STRING, 1), Error);
  EXPECT_THROW(GgufValue::from_float(VT::INT32, 1.0), Error);
  EXPECT_THROW(GgufValue::from_int_array(VT::UINT16, {70000}), Error);
  EXPECT_THROW(GgufValue::from_uint_array(VT::INT8, {200}), Error);
  EXPECT_THROW(GgufValue::from_nested_array(VT::ARRAY, {GgufValue::from_bool(true)}), Error);
  EXPECT_THROW(GgufValue::from_nested_array(VT::UINT8, {}), Error);
  // Integers given through the other signedness are stored canonically for their type.
  EXPECT_EQ(GgufValue::from_int(VT::UINT32, 7).as_uint(), 7u);
  EXPECT_EQ(GgufValue::from_uint(VT::INT16, 7).as_int(), 7);
}

TEST(GgufRoundTrip, TensorsAndAlignment) {
  for (uint64_t alignment : {uint64_t{32}, uint64_t{1}, uint64_t{8}, uint64_t{64}, uint64_t{4096}}) {
    SCOPED_TRACE(alignment);
    GgufWriter w;
    w.add_string("general.architecture", "test");
    w.set_alignment(alignment);
    std::vector<float> a(3 * 5), b(7);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) * 0.5f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = -static_cast<float>(i);
    std::vector<uint8_t> q(3 * 2 * 18);  // q4_0 [64, 3]
    for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<uint8_t>(i);
    w.add_tensor("a", TensorType::F32, {5, 3}, a.data(), a.size() * 4);
    w.add_tensor("q", TensorType::Q4_0, {64, 3}, q.data(), q.size());
    // Streamed in uneven pieces.
    w.add_tensor("b", TensorType::F32, {7, 1, 1, 1}, [&](const GgufByteSink& sink) {
      const auto* p = reinterpret_cast<const uint8_t*>(b.data());
      sink(p, 3);
      sink(p + 3, 0);
      sink(p + 3, b.size() * 4 - 3);
    });
    Bytes bytes = w.write_to_memory();
    EXPECT_EQ(bytes.size(), w.file_size());
    auto parsed = parse_copy(bytes);
    const GgufFile& f = parsed.file;
    EXPECT_EQ(f.alignment(), alignment);
    EXPECT_EQ(f.find("general.alignment") != nullptr, alignment != 32);
    EXPECT_EQ(f.data_offset() % alignment, 0u);
    ASSERT_EQ(f.tensors().size(), 3u);
    const auto& ta = f.tensors()[0];
    const auto& tq = f.tensors()[1];
    const auto& tb = f.tensors()[2];
    EXPECT_EQ(ta.name, "a");
    EXPECT_EQ(ta.ne, (std::vector<int64_t>{5, 3}));
    EXPECT_EQ(ta.n_bytes, a.size() * 4);
    EXPECT_EQ(std::memcmp(ta.data, a.data(), ta.n_bytes), 0);
    EXPECT_EQ(tq.type, TensorType::Q4_0);
    EXPECT_EQ(tq.n_rows(), 3);
    EXPECT_EQ(tq.n_elements(), 192);
    EXPECT_EQ(std::memcmp(tq.data, q.data(), q.size()), 0);
    EXPECT_EQ(tb.ne, (std::vector<int64_t>{7, 1, 1, 1}));
    EXPECT_EQ(std::memcmp(tb.data, b.data(), b.size() * 4), 0);
    for (const auto& t : f.tensors()) {
      EXPECT_EQ(t.offset % alignment, 0u);
      EXPECT_EQ(static_cast<uint64_t>(t.data - parsed.bytes.get()) % alignment, 0u);
    }
  }
}

TEST(GgufRoundTrip, AlignmentFromMetadataKey) {
  GgufWriter w;
  w.add("general.alignment", GgufValue::from_uint(VT::UINT32, 128));
  EXPECT_EQ(w.alignment(), 128u);
  float x[4] = {1, 2, 3, 4};
  w.add_tensor("x", TensorType::F32, {4}, x, sizeof x);
  w.add_tensor("y", TensorType::F32, {4}, x, sizeof x);
  auto parsed = parse_copy(w.write_to_memory());
  EXPECT_EQ(parsed.file.alignment(), 128u);
  EXPECT_EQ(parsed.file.tensors()[1].offset, 128u);
  // set_alignment updates the existing key instead of adding a second one.
  w.set_alignment(256);
  auto parsed2 = parse_copy(w.write_to_memory());
  EXPECT_EQ(parsed2.file.alignment(), 256u);
  EXPECT_EQ(parsed2.file.get_int("general.alignment"), 256);
  EXPECT_EQ(parsed2.file.metadata().size(), 1u);
}

TEST(GgufRoundTrip, SmallFileParses) {
  Bytes b = test::small_gguf();
  auto parsed = parse_copy(b);
  const GgufFile& f = parsed.file;
  EXPECT_EQ(f.tensors().size(), 4u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.find_tensor("output.weight")->n_bytes, 136u);
  // The last tensor ends exactly at the end of the file (the truncation test relies on it).
  const auto& last = f.tensors().back();
  EXPECT_EQ(f.data_offset() + last.offset + last.n_bytes, b.size());
}

}  // namespace
}  // namespace edgeinfer
