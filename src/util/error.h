#pragma once
// The one exception type the library throws for bad input (files, flags, requests) and for
// resources it cannot get. Messages name the thing at fault and the problem, e.g.
// "model.gguf: tensor 'blk.0.attn_q.weight' extends past the end of the file".
#include <stdexcept>
#include <string>

namespace edgeinfer {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace edgeinfer
