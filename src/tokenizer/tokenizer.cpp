// Tokenizer: encode (special-token partition, then the vocabulary's algorithm per fragment),
// decode, and accessors.
#include "tokenizer/tokenizer.h"


#include "tokenizer/byte_level.h"
#include "tokenizer/spm.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/utf8.h"
#include "tokenizer/word_cache.h"
#include "tokenizer/wpm.h"
#include "util/error.h"

namespace edgeinfer {

void Tokenizer::Impl::encode_bpe(std::string_view text, WordCache& cache, std::vector<int32_t>& out) const {
  BpeScratch bpe;
  std::vector<int32_t> ids;
  std::string encoded, sanitized;
  pre->split(text, [&](size_t offset, size_t length) {
    const std::string_view word = text.substr(offset, length);
    const bool cacheable = cache.cacheable(word);
    if (cacheable && cache.lookup(word, out)) return;
    const size_t start = out.size();
    bool whole = false;
    if (vocab.ignore_merges) {
      encoded.clear();
      byte_level::encode(word, encoded);
      const int32_t id = vocab.find(encoded);
      if (id >= 0) {
        out.push_back(id);
        whole = true;
      }
    }
    if (!whole) {
      bool missing = false;
      ids.resize(word.size());
      for (size_t i = 0; i < word.size(); ++i) {
        ids[i] = byte_level_token[static_cast<unsigned char>(word[i])];
        missing |= ids[i] < 0;
      }
      if (missing) {
        // Some vocabularies have no token for bytes that never occur in valid UTF-8 (C0, C1,
        // F5-FF). Such input is invalid UTF-8: encode its invalid sequences as U+FFFD, as the
        // reference engine does, instead of dropping bytes.
        sanitized.clear();
        for (size_t i = 0; i < word.size();) {
          size_t len = 1;
          const auto* p = reinterpret_cast<const unsigned char*>(word.data()) + i;
          if (utf8::classify(p, word.size() - i, len) == utf8::SeqStatus::Valid) {
            sanitized.append(word.substr(i, len));
          } else {
            sanitized.append("\xEF\xBF\xBD");
          }
          i += len;
        }
        ids.resize(sanitized.size());
        for (size_t i = 0; i < sanitized.size(); ++i)
          ids[i] = byte_level_token[static_cast<unsigned char>(sanitized[i])];
      }
      bpe_merge(merges, ids.data(), ids.size(), bpe, out);
    }
    if (cacheable) cache.store(word, out.data() + start, out.size() - start);
  });
}

std::string_view Tokenizer::Impl::piece(int32_t id, bool show_special) const {
  if (id < 0 || id >= vocab.size())
    throw Error(vocab.name + ": token id " + std::to_string(id) + " out of range [0, " +
                std::to_string(vocab.size()) + ")");
  if (!show_special && (vocab.attr[static_cast<size_t>(id)] & (kAttrControl | kAttrUnknown))) return {};
  return pieces[static_cast<size_t>(id)];
}

void Tokenizer::encode_into(std::string_view text, bool add_special, bool parse_special,
                            std::vector<int32_t>& out) const {
  const Impl& im = *impl_;
  const Vocab& v = im.vocab;
  std::vector<Fragment> frags;
  im.partition(text, parse_special, frags);
  WordCache cache(text.size() >= WordCache::kMinText);

  switch (v.type) {
    case VocabType::Spm: {
      if (add_special && v.add_bos && v.bos >= 0) out.push_back(v.bos);
      bool prev_special = true;  // the text start counts as "after a special token"
      std::string escaped;
      for (const Fragment& f : frags) {
        if (f.token >= 0) {
          out.push_back(f.token);
          prev_special = true;
          continue;
        }
        escaped.clear();
        if (v.add_space_prefix && prev_special) escaped.append("\xE2\x96\x81");
        for (char c : text.substr(f.offset, f.length)) {
          if (c == ' ') escaped.append("\xE2\x96\x81");
          else escaped.push_back(c);
        }
        spm_encode(v, escaped, cache, out);
        prev_special = false;
      }
      if (add_special && v.add_eos && v.eos >= 0) out.push_back(v.eos);
      break;
    }
    case VocabType::Bpe: {
      if (add_special && v.add_bos && v.bos >= 0) out.push_back(v.bos);
      for (const Fragment& f : frags) {
        if (f.token >= 0) out.push_back(f.token);
        else im.encode_bpe(text.substr(f.offset, f.length), cache, out);
      }
      if (add_special && v.add_eos && v.eos >= 0) out.push_back(v.eos);
      break;
    }
    case VocabType::Wpm: {
      if (add_special && v.add_bos && v.bos >= 0) out.push_back(v.bos);
      for (const Fragment& f : frags) {
        if (f.token >= 0) out.push_back(f.token);
        else wpm_encode(v, text.substr(f.offset, f.length), out);
      }
      if (add_special && v.add_sep && v.sep >= 0) out.push_back(v.sep);
      break;
    }
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 2 + 4);  // typical: 2.5-4 bytes per token
  encode_into(text, add_special, parse_special, out);
  return out;
}

std::string Tokenizer::token_to_piece(int32_t id, bool show_special) const {
  return std::string(impl_->piece(id, show_special));
}

void Tokenizer::append_piece(int32_t id, bool show_special, std::string& out) const {
  out.append(impl_->piece(id, show_special));
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool show_special, bool at_text_start) const {
  std::string out;
  out.reserve(ids.size() * 4);  // typical piece length; avoids repeated regrowth for long outputs
  bool strip = at_text_start && strips_leading_space();
  for (int32_t id : ids) {
    std::string_view p = impl_->piece(id, show_special);
    if (p.empty()) continue;
    if (strip && p[0] == ' ') p.remove_prefix(1);
    strip = false;  // only the first piece that has text
    out.append(p);
  }
  return out;
}

VocabType Tokenizer::type() const { return impl_->vocab.type; }
int32_t Tokenizer::n_vocab() const { return impl_->vocab.size(); }
const std::string& Tokenizer::name() const { return impl_->vocab.name; }
const std::string& Tokenizer::pre_tokenizer() const { return impl_->pre_name; }

const std::string& Tokenizer::token_text(int32_t id) const {
  impl_->piece(id, true);  // range check
  return impl_->vocab.text[static_cast<size_t>(id)];
}
float Tokenizer::token_score(int32_t id) const {
  impl_->piece(id, true);
  return impl_->vocab.score[static_cast<size_t>(id)];
}

int32_t Tokenizer::bos() const { return impl_->vocab.bos; }
int32_t Tokenizer::eos() const { return impl_->vocab.eos; }
int32_t Tokenizer::eot() const { return impl_->vocab.eot; }
int32_t Tokenizer::eom() const { return impl_->vocab.eom; }
int32_t Tokenizer::unk() const { return impl_->vocab.unk; }
int32_t Tokenizer::pad() const { return impl_->vocab.pad; }
int32_t Tokenizer::sep() const { return impl_->vocab.sep; }

bool Tokenizer::is_eog(int32_t id) const {
  return id >= 0 && id < impl_->vocab.size() && impl_->vocab.eog[static_cast<size_t>(id)] != 0;
}
bool Tokenizer::is_control(int32_t id) const {
  return id >= 0 && id < impl_->vocab.size() && (impl_->vocab.attr[static_cast<size_t>(id)] & kAttrControl);
}
bool Tokenizer::is_byte(int32_t id) const {
  return id >= 0 && id < impl_->vocab.size() && (impl_->vocab.attr[static_cast<size_t>(id)] & kAttrByte);
}
bool Tokenizer::is_user_defined(int32_t id) const {
  return id >= 0 && id < impl_->vocab.size() && (impl_->vocab.attr[static_cast<size_t>(id)] & kAttrUserDefined);
}

bool Tokenizer::add_bos() const { return impl_->vocab.add_bos && impl_->vocab.bos >= 0; }
bool Tokenizer::add_eos() const {
  const Vocab& v = impl_->vocab;
  if (v.type == VocabType::Wpm) return v.add_sep && v.sep >= 0;
  return v.add_eos && v.eos >= 0;
}
bool Tokenizer::strips_leading_space() const {
  const Vocab& v = impl_->vocab;
  return (v.type == VocabType::Spm && v.add_space_prefix) || v.type == VocabType::Wpm;
}
const Tokenizer::Fim& Tokenizer::fim() const { return impl_->vocab.fim; }

}  // namespace edgeinfer
