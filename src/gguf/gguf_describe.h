#pragma once
// A human-readable summary of a GGUF file for `edgeinfer info`: version, alignment, every
// metadata key with its value (long strings and arrays abbreviated), a table of tensors
// (name, type, shape, bytes) and totals per tensor type.
#include <string>

#include "gguf/gguf_file.h"

namespace edgeinfer {

std::string describe_gguf(const GgufFile& file);

}  // namespace edgeinfer
