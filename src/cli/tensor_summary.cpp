#include "cli/tensor_summary.h"

#include <cstdio>
#include <map>
#include <string>

namespace edgeinfer::cli {

void print_tensor_summary(const std::vector<QuantizedTensor>& tensors) {
  std::map<std::string, std::pair<int, uint64_t>> by_type;
  std::map<std::string, std::pair<int, std::string>> notes;  // note -> count, first tensor
  for (const QuantizedTensor& t : tensors) {
    auto& e = by_type[std::string(tensor_type_name(t.dst_type))];
    e.first += 1;
    e.second += t.dst_bytes;
    if (!t.note.empty()) {
      auto& n = notes[t.note];
      if (n.first++ == 0) n.second = t.name;
    }
  }
  for (const auto& [name, e] : by_type) {
    std::printf("  %-6s %4d tensors %10.2f MiB\n", name.c_str(), e.first, e.second / 1048576.0);
  }
  for (const auto& [note, n] : notes) {
    std::printf("  fallback: %s (%d tensor%s, e.g. %s)\n", note.c_str(), n.first, n.first == 1 ? "" : "s",
                n.second.c_str());
  }
}

}  // namespace edgeinfer::cli
