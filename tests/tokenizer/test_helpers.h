#pragma once
// Shared helpers for the tokenizer tests: data paths, loading vocabularies, golden files.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"
#include "util/data_path.h"
#include "util/error.h"

namespace edgeinfer::test {

inline std::string tokenizer_dir() { return data_dir() + "/tokenizer"; }
inline std::string vocab_path(const std::string& name) { return tokenizer_dir() + "/ggml-vocab-" + name + ".gguf"; }
inline std::string stories_path() { return data_dir() + "/models/stories260K.gguf"; }

// Loads once per test process (vocabularies of 100k tokens take a fraction of a second each);
// a Tokenizer is immutable, so sharing it between tests is safe.
inline Tokenizer load_tokenizer(const std::string& path) {
  static std::map<std::string, Tokenizer> loaded;
  auto it = loaded.find(path);
  if (it != loaded.end()) return it->second;
  GgufFile f = GgufFile::open(path);
  Tokenizer t = Tokenizer::from_gguf(f);
  loaded.emplace(path, t);
  return t;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The .inp convention: every case is followed by "\n__ggml_vocab_test__\n".
inline std::vector<std::string> read_inputs(const std::string& path) {
  const std::string data = read_file(path);
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> cases;
  size_t pos = 0;
  while (true) {
    const size_t next = data.find(sep, pos);
    if (next == std::string::npos) break;
    cases.push_back(data.substr(pos, next - pos));
    pos = next + sep.size();
  }
  return cases;
}

// The .out convention: one line of space-separated ids per case.
inline std::vector<std::vector<int32_t>> read_outputs(const std::string& path) {
  std::istringstream in(read_file(path));
  std::vector<std::vector<int32_t>> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<int32_t> ids;
    int64_t id;
    while (ls >> id) ids.push_back(static_cast<int32_t>(id));
    out.push_back(std::move(ids));
  }
  return out;
}

inline std::string ids_to_string(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

}  // namespace edgeinfer::test
