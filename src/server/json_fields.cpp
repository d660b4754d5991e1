#include "server/json_fields.h"

#include <cmath>

#include "server/api_error.h"

namespace edgeinfer::server {

namespace {

std::string range_text(double lo, double hi) {
  auto fmt = [](double x) {
    if (x == std::floor(x) && std::fabs(x) < 1e15) return std::to_string(static_cast<int64_t>(x));
    std::string s = std::to_string(x);
    while (!s.empty() && s.back() == '0') s.pop_back();
    return s;
  };
  return "[" + fmt(lo) + ", " + fmt(hi) + "]";
}

}  // namespace

const char* json_type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    default: return "value";
  }
}

const json& require_object(const json& body) {
  if (!body.is_object()) {
    throw ApiError(400, std::string("the request body must be a JSON object, got ") + json_type_name(body),
                   "invalid_request_error", "", "invalid_body");
  }
  return body;
}

const json* find_field(const json& obj, std::string_view name) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

int64_t as_int(const json& v, const std::string& param, int64_t lo, int64_t hi) {
  int64_t x = 0;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) {
      throw invalid_param(param, "'" + param + "' must be within " + range_text(double(lo), double(hi)));
    }
    x = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    x = v.get<int64_t>();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || d < -9.2e18 || d > 9.2e18) {
      throw invalid_param(param, "'" + param + "' must be an integer", "invalid_type");
    }
    x = static_cast<int64_t>(d);
  } else {
    throw invalid_param(param, "'" + param + "' must be an integer, got " + json_type_name(v), "invalid_type");
  }
  if (x < lo || x > hi) throw invalid_param(param, "'" + param + "' must be within " + range_text(double(lo), double(hi)));
  return x;
}

double as_number(const json& v, const std::string& param, double lo, double hi) {
  if (!v.is_number()) {
    throw invalid_param(param, "'" + param + "' must be a number, got " + json_type_name(v), "invalid_type");
  }
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) {
    throw invalid_param(param, "'" + param + "' must be a finite number within " + range_text(lo, hi));
  }
  return d;
}

const std::string& as_string(const json& v, const std::string& param) {
  if (!v.is_string()) {
    throw invalid_param(param, "'" + param + "' must be a string, got " + json_type_name(v), "invalid_type");
  }
  return v.get_ref<const std::string&>();
}

std::optional<int64_t> opt_int(const json& obj, std::string_view name, int64_t lo, int64_t hi) {
  const json* v = find_field(obj, name);
  if (!v) return std::nullopt;
  return as_int(*v, std::string(name), lo, hi);
}

std::optional<double> opt_number(const json& obj, std::string_view name, double lo, double hi) {
  const json* v = find_field(obj, name);
  if (!v) return std::nullopt;
  return as_number(*v, std::string(name), lo, hi);
}

std::optional<bool> opt_bool(const json& obj, std::string_view name) {
  const json* v = find_field(obj, name);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) {
    throw invalid_param(std::string(name), "'" + std::string(name) + "' must be a boolean, got " + json_type_name(*v),
                        "invalid_type");
  }
  return v->get<bool>();
}

std::optional<std::string> opt_string(const json& obj, std::string_view name, size_t max_bytes) {
  const json* v = find_field(obj, name);
  if (!v) return std::nullopt;
  const std::string& s = as_string(*v, std::string(name));
  if (s.size() > max_bytes) {
    throw invalid_param(std::string(name), "'" + std::string(name) + "' is longer than " + std::to_string(max_bytes) + " bytes");
  }
  return s;
}

std::string dump_json(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace edgeinfer::server
