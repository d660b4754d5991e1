#include "reference.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace edgeinfer::jinja_test {

std::vector<ReferenceResult> render_reference(const std::vector<ReferenceCase>& cases) {
  nlohmann::ordered_json job;
  job["now"] = nlohmann::ordered_json::array();
  for (int v : kNow) job["now"].push_back(v);
  job["cases"] = nlohmann::ordered_json::array();
  for (const auto& c : cases)
    job["cases"].push_back(
        {{"id", c.id}, {"template", c.source}, {"vars", c.vars}, {"transformers_tojson", c.transformers_tojson}});

  char path[] = "/tmp/edgeinfer_jinja_job_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) throw std::runtime_error("cannot create a temporary file for the reference job");
  close(fd);
  {
    std::ofstream f(path, std::ios::binary);
    f << job.dump();
  }
  std::string cmd = std::string(EDGEINFER_REFERENCE_PYTHON) + " " + EDGEINFER_SOURCE_DIR +
                    "/tests/jinja/render_reference.py " + path;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    std::remove(path);
    throw std::runtime_error("cannot run " + cmd);
  }
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  std::remove(path);
  if (status != 0) throw std::runtime_error("reference renderer failed (exit " + std::to_string(status) + "): " + cmd);
  auto parsed = nlohmann::json::parse(out);
  if (!parsed.is_array() || parsed.size() != cases.size())
    throw std::runtime_error("reference renderer returned " + std::to_string(parsed.size()) + " results for " +
                             std::to_string(cases.size()) + " cases");
  std::vector<ReferenceResult> results;
  for (const auto& r : parsed) {
    ReferenceResult rr;
    rr.ok = r.at("ok").get<bool>();
    if (rr.ok)
      rr.output = r.at("output").get<std::string>();
    else
      rr.error = r.at("error").get<std::string>();
    results.push_back(std::move(rr));
  }
  return results;
}

}  // namespace edgeinfer::jinja_test
