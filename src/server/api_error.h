#pragma once
// Errors answered to HTTP clients, in OpenAI's shape:
//   {"error": {"message": "...", "type": "invalid_request_error", "param": "max_tokens", "code": "..."}}
// Request handlers throw ApiError; the route wrapper turns it into the response. `param` and
// `code` are JSON null when empty.
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace edgeinfer::server {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string message, std::string type, std::string param = {}, std::string code = {});

  int status() const { return status_; }
  const std::string& type() const { return type_; }
  const std::string& param() const { return param_; }
  const std::string& code() const { return code_; }
  // Seconds for a Retry-After header (429 and 503); 0 means none.
  int retry_after_s() const { return retry_after_s_; }
  ApiError& with_retry_after(int seconds) {
    retry_after_s_ = seconds;
    return *this;
  }

  nlohmann::ordered_json to_json() const;

 private:
  int status_;
  std::string type_, param_, code_;
  int retry_after_s_ = 0;
};

// 400 invalid_request_error naming the offending field.
ApiError invalid_param(const std::string& param, const std::string& message, const std::string& code = "invalid_value");

// The JSON body of an error response.
nlohmann::ordered_json error_json(int status, const std::string& message, const std::string& type,
                          const std::string& param = {}, const std::string& code = {});

// The error type OpenAI uses for a status with no more specific one (e.g. 404 → "not_found_error").
const char* default_error_type(int status);

}  // namespace edgeinfer::server
