#pragma once
// Stop strings over streamed text. Text that might be the start of a stop string is held back
// until it is clear either way, so a client never sees part of a stop string.
#include <string>
#include <string_view>
#include <vector>

namespace edgeinfer {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);

  // Appends new text. Returns the text that is now safe to emit. When a stop string completes,
  // stopped() becomes true, the returned text ends right before it, and later input is ignored.
  std::string push(std::string_view text);
  // The held-back text, for the end of a stream that did not stop on a string.
  std::string flush();

  bool stopped() const { return stopped_; }
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace edgeinfer
