#pragma once
// Typed reads of request fields. Every failure is an ApiError (400) naming the field and saying
// what was expected, so a client learns exactly what to fix. A field that is absent or JSON null
// reads as "not given" (SDKs send null for unset options).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace edgeinfer::server {

// Ordered: tool schemas keep their key order on the way to the chat template, and responses
// print their fields in the documented order.
using json = nlohmann::ordered_json;

// The body must be a JSON object.
const json& require_object(const json& body);
// The field's value, or nullptr when absent or null.
const json* find_field(const json& obj, std::string_view name);

// An integer (a float with an integral value is accepted) within [lo, hi].
std::optional<int64_t> opt_int(const json& obj, std::string_view name, int64_t lo, int64_t hi);
// A finite number within [lo, hi].
std::optional<double> opt_number(const json& obj, std::string_view name, double lo, double hi);
std::optional<bool> opt_bool(const json& obj, std::string_view name);
// A string of at most max_bytes bytes.
std::optional<std::string> opt_string(const json& obj, std::string_view name, size_t max_bytes = SIZE_MAX);

// Same checks on a value already found; `param` names it in errors (e.g. "messages[2].content").
int64_t as_int(const json& v, const std::string& param, int64_t lo, int64_t hi);
double as_number(const json& v, const std::string& param, double lo, double hi);
const std::string& as_string(const json& v, const std::string& param);

// "integer", "string", "array"... for error messages.
const char* json_type_name(const json& v);

// JSON text for a response. Generated text can hold bytes that are not valid UTF-8 (a token
// piece cut mid-character, an error message quoting the client's bytes): those are replaced by
// U+FFFD rather than failing the response.
std::string dump_json(const json& v);

}  // namespace edgeinfer::server
