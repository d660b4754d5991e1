#pragma once
// Writing JSON bodies and OpenAI-style errors into httplib responses.
#include <httplib.h>

#include "server/api_error.h"
#include "server/json_fields.h"

namespace edgeinfer::server {

void send_json(httplib::Response& res, int status, const json& body);
// Status, error body, and Retry-After when the error has one.
void send_error(httplib::Response& res, const ApiError& e);

}  // namespace edgeinfer::server
