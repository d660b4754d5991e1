#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/pretokenizer.h"

#include <pcre2.h>

#include "tokenizer/utf8.h"
#include "util/error.h"

namespace edgeinfer {

struct PreTokenizer::Compiled {
  pcre2_code* code = nullptr;
  std::string pattern;
  ~Compiled() {
    if (code) pcre2_code_free(code);
  }
};

namespace {

std::string pcre2_message(int rc) {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(rc, buf, sizeof buf);
  return reinterpret_cast<const char*>(buf);
}

}  // namespace

// Per-call match state: match data sized for the largest pattern, and a JIT stack grown on
// demand (the default 32 KiB machine stack suffices for the shipped patterns on normal text).
class PreTokenizer::Matcher {
 public:
  Matcher() { md_ = pcre2_match_data_create(8, nullptr); }
  ~Matcher() {
    if (md_) pcre2_match_data_free(md_);
    if (mctx_) pcre2_match_context_free(mctx_);
    if (stack_) pcre2_jit_stack_free(stack_);
  }
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;

  // Returns false when there is no match; throws on a matching error.
  bool match(const pcre2_code* code, const char* subject, size_t len, size_t start, size_t& ms, size_t& me,
             const std::string& owner) {
    while (true) {
      const int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(subject), len, start, 0, md_, mctx_);
      if (rc >= 0) {
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md_);
        ms = ov[0];
        me = ov[1];
        return true;
      }
      if (rc == PCRE2_ERROR_NOMATCH) return false;
      if (rc == PCRE2_ERROR_JIT_STACKLIMIT && stack_size_ < (size_t{256} << 20)) {
        grow_stack();
        continue;
      }
      throw Error(owner + ": pre-tokenizer regex failed: " + pcre2_message(rc));
    }
  }

 private:
  void grow_stack() {
    if (stack_) pcre2_jit_stack_free(stack_);
    stack_size_ = stack_size_ ? stack_size_ * 8 : (size_t{1} << 20);
    stack_ = pcre2_jit_stack_create(32 * 1024, stack_size_, nullptr);
    if (!mctx_) mctx_ = pcre2_match_context_create(nullptr);
    if (!stack_ || !mctx_) throw Error("pre-tokenizer: out of memory for the PCRE2 JIT stack");
    pcre2_jit_stack_assign(mctx_, nullptr, stack_);
  }

  pcre2_match_data* md_ = nullptr;
  pcre2_match_context* mctx_ = nullptr;
  pcre2_jit_stack* stack_ = nullptr;
  size_t stack_size_ = 0;
};

PreTokenizer::PreTokenizer(const std::vector<std::string>& regexes, const std::string& owner,
                           const std::string& name)
    : owner_(owner) {
  for (const std::string& pattern : regexes) {
    auto c = std::make_unique<Compiled>();
    c->pattern = pattern;
    int err = 0;
    PCRE2_SIZE err_off = 0;
    // DOLLAR_ENDONLY: "$" means the end of the piece, not "before a final newline".
    const uint32_t opts = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY;
    c->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), opts, &err, &err_off,
                            nullptr);
    if (!c->code)
      throw Error(owner + ": pre-tokenizer '" + name + "': regex /" + pattern + "/ error at offset " +
                  std::to_string(err_off) + ": " + pcre2_message(err));
    // JIT is an optimization; if the platform lacks it the interpreter still gives the same result.
    pcre2_jit_compile(c->code, PCRE2_JIT_COMPLETE);
    regexes_.push_back(std::move(c));
  }
}

PreTokenizer::~PreTokenizer() = default;

void PreTokenizer::split_level(size_t level, std::string_view text, size_t offset, size_t length, Matcher& m,
                               const Emit& emit) const {
  if (level == regexes_.size()) {
    emit(offset, length);
    return;
  }
  const pcre2_code* code = regexes_[level]->code;
  // Each piece is matched as its own subject, so lookarounds and "$" see only the piece.
  const char* subject = text.data() + offset;
  size_t pos = 0, last = 0;
  while (pos < length) {
    size_t ms = 0, me = 0;
    if (!m.match(code, subject, length, pos, ms, me, owner_)) break;
    if (me == ms) {  // empty match: no piece; move on by one character
      if (ms >= length) break;
      pos = ms + utf8::unit_len(std::string_view(subject, length), ms);
      continue;
    }
    if (ms > last) split_level(level + 1, text, offset + last, ms - last, m, emit);
    split_level(level + 1, text, offset + ms, me - ms, m, emit);
    last = me;
    pos = me;
  }
  if (last < length) split_level(level + 1, text, offset + last, length - last, m, emit);
}

void PreTokenizer::split(std::string_view text, const Emit& emit) const {
  if (text.empty()) return;
  Matcher m;
  split_level(0, text, 0, text.size(), m, emit);
}

void PreTokenizer::split(std::string_view text, std::vector<TextSpan>& out) const {
  out.clear();
  split(text, [&](size_t offset, size_t length) { out.push_back({offset, length}); });
}

}  // namespace edgeinfer
