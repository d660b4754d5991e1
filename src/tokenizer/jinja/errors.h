#pragma once
// Exceptions of the template engine.
//  - Failure: thrown anywhere inside evaluation with a plain message ("'x' is undefined");
//    Template::render turns it into an edgeinfer::Error that names the template and line.
//  - RaisedError: the template called raise_exception(msg); what() is exactly msg, so a
//    server can hand the author's message to the client unchanged.
#include <stdexcept>
#include <string>

#include "util/error.h"

namespace edgeinfer::jinja {

class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RaisedError : public Error {
 public:
  using Error::Error;
};

}  // namespace edgeinfer::jinja
