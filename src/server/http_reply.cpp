#include "server/http_reply.h"

namespace edgeinfer::server {

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(dump_json(body), "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) {
  send_json(res, e.status(), e.to_json());
  if (e.retry_after_s() > 0) res.set_header("Retry-After", std::to_string(e.retry_after_s()));
}

}  // namespace edgeinfer::server
