#pragma once
// Cross-origin requests (browsers): off unless --cors-origin is given. When on, responses carry
// Access-Control-Allow-Origin (the configured origin, or "*") and preflight OPTIONS requests are
// answered 204 with the allowed methods and headers.
#include <httplib.h>

#include <string>

namespace edgeinfer::server {

// Adds the CORS response headers when `origin` (the configured value) is not empty.
void add_cors_headers(const std::string& origin, const httplib::Request& req, httplib::Response& res);
// Answers a preflight request.
void answer_preflight(const std::string& origin, const httplib::Request& req, httplib::Response& res);

}  // namespace edgeinfer::server
