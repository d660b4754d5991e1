#include "cli_test_util.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

extern char** environ;

namespace edgeinfer::test {

CliResult run_cli(const std::vector<std::string>& args) {
  char tmpl[] = "/tmp/edgeinfer-cli-test-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) return {};
  ::close(fd);
  std::vector<std::string> argv_s = {EDGEINFER_CLI_PATH};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, tmpl, O_WRONLY | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  CliResult r;
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) == 0) {
    int st = 0;
    if (::waitpid(pid, &st, 0) == pid && WIFEXITED(st)) r.exit_code = WEXITSTATUS(st);
  }
  posix_spawn_file_actions_destroy(&fa);
  std::ifstream in(tmpl);
  std::stringstream ss;
  ss << in.rdbuf();
  r.output = ss.str();
  ::unlink(tmpl);
  return r;
}

std::string data_file(const std::string& rel) {
  const char* d = std::getenv("EDGEINFER_DATA");
  return (d && *d ? std::string(d) : std::string(EDGEINFER_SOURCE_DIR) + "/../shared/data") + "/" + rel;
}

}  // namespace edgeinfer::test
