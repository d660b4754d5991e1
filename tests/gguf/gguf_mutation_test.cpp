// Deterministic random mutation fuzzing of a small valid file: bytes flipped, overwritten with
// boundary values, inserted and deleted. The reader must either accept a mutant (and then every
// tensor lies inside the buffer and the file can be written back) or throw Error — nothing else.
#include <gtest/gtest.h>

#include <random>

#include "gguf/gguf_describe.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "gguf_test_util.h"
#include "util/error.h"

namespace edgeinfer {
namespace {

using namespace edgeinfer::test;

void mutate(Bytes& b, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  static constexpr uint64_t kInteresting[] = {0,          1,           2,          3,
                                              4,          5,           8,          12,
                                              13,         31,          32,         33,
                                              64,         255,         0x7fffffff, 0x80000000,
                                              0xffffffff, 1ull << 32,  1ull << 60, 0x7fffffffffffffffull,
                                              1ull << 63, ~0ull,       ~0ull - 31};
  const int n_mutations = 1 + static_cast<int>(pick(4));
  for (int m = 0; m < n_mutations; ++m) {
    switch (b.empty() ? 2 : pick(6)) {
      case 0:  // flip one bit
        b[pick(b.size())] ^= static_cast<uint8_t>(1u << pick(8));
        break;
      case 1:  // random byte
        b[pick(b.size())] = static_cast<uint8_t>(rng());
        break;
      case 2: {  // insert 1..16 random bytes
        size_t at = b.empty() ? 0 : pick(b.size() + 1);
        size_t n = 1 + pick(16);
        for (size_t i = 0; i < n; ++i) b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), static_cast<uint8_t>(rng()));
        break;
      }
      case 3: {  // delete 1..16 bytes
        size_t at = pick(b.size());
        size_t n = std::min(b.size() - at, 1 + pick(16));
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
        break;
      }
      case 4:    // a boundary value as uint32, at a 4-byte-aligned position (where fields often are)
      case 5: {  // ... or as uint64
        const size_t width = pick(2) ? 4 : 8;
        if (b.size() < width) break;
        size_t at = pick(b.size() - width + 1) & ~size_t{3};
        uint64_t v = kInteresting[pick(std::size(kInteresting))];
        for (size_t i = 0; i < width; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
        break;
      }
    }
  }
}

// What must hold for any file the reader accepts.
void check_accepted(const OwnedGguf& g, size_t size) {
  const GgufFile& f = g.file;
  const uint8_t* begin = g.bytes.get();
  for (const auto& t : f.tensors()) {
    ASSERT_GE(t.data, begin);
    ASSERT_LE(t.data + t.n_bytes, begin + size);
    ASSERT_GT(t.n_bytes, 0u);
    // Touch both ends: AddressSanitizer reports any byte outside the exact-size buffer.
    volatile uint8_t first = t.data[0];
    volatile uint8_t last = t.data[t.n_bytes - 1];
    (void)first;
    (void)last;
  }
  EXPECT_FALSE(describe_gguf(f).empty());
  // Whatever was accepted can be written back and read again identically.
  GgufWriter w;
  for (const auto& [k, v] : f.metadata()) w.add(k, v);
  for (const auto& t : f.tensors()) w.add_tensor(t.name, t.type, t.ne, t.data, t.n_bytes);
  Bytes again = w.write_to_memory();
  auto g2 = parse_copy(again);
  ASSERT_EQ(g2.file.metadata().size(), f.metadata().size());
  ASSERT_EQ(g2.file.tensors().size(), f.tensors().size());
  GgufWriter w2;
  for (const auto& [k, v] : g2.file.metadata()) w2.add(k, v);
  for (const auto& t : g2.file.tensors()) w2.add_tensor(t.name, t.type, t.ne, t.data, t.n_bytes);
  EXPECT_EQ(w2.write_to_memory(), again);
}

TEST(GgufMutation, RandomMutantsOnlyEverThrowError) {
  const Bytes seed = small_gguf();
  std::mt19937_64 rng(0x6767'7566'2025ull);
  constexpr int kMutants = 4000;
  int rejected = 0, accepted = 0;
  for (int i = 0; i < kMutants; ++i) {
    Bytes b = seed;
    mutate(b, rng);
    std::unique_ptr<OwnedGguf> g;
    try {
      g = std::make_unique<OwnedGguf>(parse_copy(b, "mutant.gguf"));
    } catch (const Error& e) {
      ++rejected;
      EXPECT_EQ(std::string(e.what()).rfind("mutant.gguf: ", 0), 0u) << e.what();
      continue;
    } catch (const std::exception& e) {
      FAIL() << "mutant " << i << ": unexpected exception " << e.what();
    }
    ++accepted;
    SCOPED_TRACE("mutant " + std::to_string(i));
    check_accepted(*g, b.size());
  }
  // Both outcomes occur: the mutations reach past the header checks.
  EXPECT_GT(rejected, kMutants / 4);
  EXPECT_GT(accepted, kMutants / 50);
  std::cout << "mutants: " << accepted << " accepted, " << rejected << " rejected\n";
}

}  // namespace
}  // namespace edgeinfer
