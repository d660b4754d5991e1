// libFuzzer entry point for the GGUF reader. Any input must either parse or throw
// edgeinfer::Error; anything else (another exception, a sanitizer report, a trap) is a bug.
// Accepted inputs are also checked: every tensor lies inside the input, the summary renders,
// and the file written back by GgufWriter parses again to the same bytes.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gguf/gguf_describe.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "util/error.h"

namespace {

std::vector<uint8_t> write_back(const edgeinfer::GgufFile& f) {
  edgeinfer::GgufWriter w;
  for (const auto& [key, value] : f.metadata()) w.add(key, value);
  for (const auto& t : f.tensors()) w.add_tensor(t.name, t.type, t.ne, t.data, t.n_bytes);
  return w.write_to_memory();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace edgeinfer;
  std::vector<uint8_t> again;
  try {
    GgufFile f = GgufFile::parse(data, size, "fuzz.gguf");
    for (const auto& t : f.tensors()) {
      if (t.n_bytes == 0 || t.data < data || t.data + t.n_bytes > data + size) __builtin_trap();
      volatile uint8_t first = t.data[0];
      volatile uint8_t last = t.data[t.n_bytes - 1];
      (void)first;
      (void)last;
    }
    if (describe_gguf(f).empty()) __builtin_trap();
    again = write_back(f);
  } catch (const Error&) {
    return 0;
  }
  // What the writer produced from an accepted file must itself be accepted (an Error here
  // escapes as an uncaught exception, which libFuzzer reports) and be a fixed point.
  GgufFile g = GgufFile::parse(again.data(), again.size(), "fuzz-rewritten.gguf");
  if (write_back(g) != again) __builtin_trap();
  return 0;
}
