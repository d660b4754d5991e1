#pragma once
// Runs the edgeinfer binary as a user would (its path is compiled in) and returns what it printed.
#include <string>
#include <vector>

namespace edgeinfer::test {

struct CliResult {
  int exit_code = -1;  // -1: it could not be started or did not exit normally
  std::string output;  // stdout and stderr together, in the order written
};

CliResult run_cli(const std::vector<std::string>& args);

// A file of the reference data: $EDGEINFER_DATA/rel (default ../shared/data beside the sources).
std::string data_file(const std::string& rel);

}  // namespace edgeinfer::test
