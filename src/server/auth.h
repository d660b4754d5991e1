#pragma once
// API keys: a request must present one of the configured keys, as "Authorization: Bearer KEY"
// (what OpenAI clients send) or "X-Api-Key: KEY". Keys are compared in constant time: the
// comparison reads every byte of every configured key whatever the presented value, so timing
// reveals neither which key nor how many leading bytes matched.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace edgeinfer::server {

class ApiKeyAuth {
 public:
  ApiKeyAuth() = default;
  // Empty keys are dropped; no keys at all means authentication is off.
  explicit ApiKeyAuth(std::vector<std::string> keys);

  bool enabled() const { return !keys_.empty(); }
  bool accepts(std::string_view presented) const;

 private:
  std::vector<std::string> keys_;
};

// Equal length and bytes, in time depending only on a.size() (pass the secret as `a`).
bool constant_time_equal(std::string_view a, std::string_view b);

// The key in an Authorization header value ("Bearer KEY", scheme case-insensitive), if any.
std::optional<std::string> bearer_token(std::string_view authorization);

// One key per line; blank lines and lines starting with '#' are skipped; surrounding spaces
// trimmed. Throws Error naming the file when it cannot be read or holds no key.
std::vector<std::string> read_api_key_file(const std::string& path);

}  // namespace edgeinfer::server
