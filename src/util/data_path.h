#pragma once
// Where the reference data lives: $EDGEINFER_DATA, else ../shared/data relative to the
// working directory (the layout of a checkout next to shared/).
#include <cstdlib>
#include <string>

namespace edgeinfer {

inline std::string data_dir() {
  const char* env = std::getenv("EDGEINFER_DATA");
  if (env && *env) return env;
  return "../shared/data";
}

}  // namespace edgeinfer
