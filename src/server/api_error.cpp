#include "server/api_error.h"

namespace edgeinfer::server {

ApiError::ApiError(int status, std::string message, std::string type, std::string param, std::string code)
    : std::runtime_error(std::move(message)),
      status_(status),
      type_(std::move(type)),
      param_(std::move(param)),
      code_(std::move(code)) {}

nlohmann::ordered_json ApiError::to_json() const { return error_json(status_, what(), type_, param_, code_); }

ApiError invalid_param(const std::string& param, const std::string& message, const std::string& code) {
  return ApiError(400, message, "invalid_request_error", param, code);
}

nlohmann::ordered_json error_json(int status, const std::string& message, const std::string& type, const std::string& param,
                          const std::string& code) {
  nlohmann::ordered_json e;
  e["message"] = message;
  e["type"] = type.empty() ? default_error_type(status) : type;
  e["param"] = param.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(param);
  e["code"] = code.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(code);
  return nlohmann::ordered_json{{"error", std::move(e)}};
}

const char* default_error_type(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "invalid_request_error";
    case 429: return "rate_limit_error";
    case 503: return "unavailable_error";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

}  // namespace edgeinfer::server
