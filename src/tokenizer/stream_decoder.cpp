#include "tokenizer/stream_decoder.h"

#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace edgeinfer {

namespace {

constexpr const char* kReplacementUtf8 = "\xEF\xBF\xBD";

}  // namespace

StreamDecoder::StreamDecoder(const Tokenizer& tok, bool show_special, bool at_text_start)
    : tok_(&tok), show_special_(show_special), at_text_start_(at_text_start) {}

void StreamDecoder::reset() {
  emitted_ = false;
  pending_.clear();
}

std::string StreamDecoder::push(int32_t id) {
  const size_t before = pending_.size();
  tok_->append_piece(id, show_special_, pending_);
  if (pending_.size() > before && !emitted_) {
    // Same leading-space rule as Tokenizer::decode: only the first piece that has text.
    if (at_text_start_ && tok_->strips_leading_space() && pending_[before] == ' ')
      pending_.erase(before, 1);
    emitted_ = true;
  }

  // Emit every complete code point; replace bytes that can never complete one; keep an
  // unfinished sequence at the end.
  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(pending_.data());
  const size_t n = pending_.size();
  size_t i = 0, copied_to = 0;
  while (i < n) {
    size_t len = 1;
    const utf8::SeqStatus st = utf8::classify(p + i, n - i, len);
    if (st == utf8::SeqStatus::Valid) {
      i += len;
    } else if (st == utf8::SeqStatus::Incomplete) {
      break;
    } else {
      out.append(pending_, copied_to, i - copied_to);
      out.append(kReplacementUtf8);
      i += len;
      copied_to = i;
    }
  }
  out.append(pending_, copied_to, i - copied_to);
  pending_.erase(0, i);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out;
  if (!pending_.empty()) out = kReplacementUtf8;  // an unfinished sequence
  pending_.clear();
  return out;
}

}  // namespace edgeinfer
