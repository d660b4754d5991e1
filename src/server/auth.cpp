#include "server/auth.h"

#include <fstream>

#include "util/error.h"

namespace edgeinfer::server {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool constant_time_equal(std::string_view a, std::string_view b) {
  // Walk all of `a` (the configured key, whose length is fixed) whatever `b` holds, folding every
  // difference, including a length mismatch, into one accumulator; no early exit.
  const size_t n = a.size();
  volatile unsigned char diff = static_cast<unsigned char>(a.size() != b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char ca = static_cast<unsigned char>(a[i]);
    const unsigned char cb = b.empty() ? 0 : static_cast<unsigned char>(b[i % b.size()]);
    diff = diff | (ca ^ cb);
  }
  return diff == 0;
}

ApiKeyAuth::ApiKeyAuth(std::vector<std::string> keys) {
  for (auto& k : keys) {
    if (!k.empty()) keys_.push_back(std::move(k));
  }
}

bool ApiKeyAuth::accepts(std::string_view presented) const {
  bool ok = false;
  for (const std::string& k : keys_) ok |= constant_time_equal(k, presented);
  return ok;
}

std::optional<std::string> bearer_token(std::string_view authorization) {
  authorization = trim(authorization);
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    char c = authorization[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kScheme[i]) return std::nullopt;
  }
  if (authorization[kScheme.size()] != ' ') return std::nullopt;
  std::string_view key = trim(authorization.substr(kScheme.size() + 1));
  if (key.empty()) return std::nullopt;
  return std::string(key);
}

std::vector<std::string> read_api_key_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot read the API key file");
  std::vector<std::string> keys;
  std::string line;
  while (std::getline(in, line)) {
    std::string_view t = trim(line);
    if (t.empty() || t.front() == '#') continue;
    keys.emplace_back(t);
  }
  if (keys.empty()) throw Error(path + ": the API key file holds no key (one key per line)");
  return keys;
}

}  // namespace edgeinfer::server
