#include "server/cors.h"

namespace edgeinfer::server {

void add_cors_headers(const std::string& origin, const httplib::Request& req, httplib::Response& res) {
  if (origin.empty()) return;
  if (origin == "*") {
    res.set_header("Access-Control-Allow-Origin", "*");
  } else {
    // One configured origin: echo it only to that origin, so caches keep answers apart.
    if (req.get_header_value("Origin") == origin) res.set_header("Access-Control-Allow-Origin", origin);
    res.set_header("Vary", "Origin");
  }
}

void answer_preflight(const std::string& origin, const httplib::Request& req, httplib::Response& res) {
  add_cors_headers(origin, req, res);
  res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
  res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Api-Key, X-Priority");
  res.set_header("Access-Control-Max-Age", "600");
  res.status = 204;
}

}  // namespace edgeinfer::server
