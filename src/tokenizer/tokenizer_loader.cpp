// Tokenizer::from_gguf: tokenizer.ggml.* metadata -> Vocab, with the reference engine's defaults
// per vocabulary type and its text-based detection of end-of-generation and FIM tokens.
#include <algorithm>
#include <cctype>
#include <cstdio>

#include "gguf/gguf_file.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/utf8.h"
#include "util/error.h"

namespace edgeinfer {

namespace {

constexpr const char* kKeyModel = "tokenizer.ggml.model";
constexpr const char* kKeyPre = "tokenizer.ggml.pre";
constexpr const char* kKeyTokens = "tokenizer.ggml.tokens";
constexpr const char* kKeyScores = "tokenizer.ggml.scores";
constexpr const char* kKeyTypes = "tokenizer.ggml.token_type";
constexpr const char* kKeyMerges = "tokenizer.ggml.merges";

// GGUF token_type values.
uint32_t attr_from_type(int64_t t) {
  switch (t) {
    case 1: return kAttrNormal;
    case 2: return kAttrUnknown;
    case 3: return kAttrControl;
    case 4: return kAttrUserDefined;
    case 5: return kAttrUnused;
    case 6: return kAttrByte;
    default: return kAttrUndefined;
  }
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Token texts that mark a role; the first one present wins (order = preference).
const std::vector<std::string> kEotNames = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81" "sentence\xEF\xBD\x9C>"};  // <｜end▁of▁sentence｜>
const std::vector<std::string> kEomNames = {"<|eom_id|>"};
const std::vector<std::string> kFimPreNames = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
    "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>",  // <｜fim▁begin｜>
    "<PRE>", "\xE2\x96\x81<PRE>"};
const std::vector<std::string> kFimSufNames = {
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",
    "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "hole\xEF\xBD\x9C>",  // <｜fim▁hole｜>
    "<SUF>", "\xE2\x96\x81<SUF>"};
const std::vector<std::string> kFimMidNames = {
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>",
    "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>",  // <｜fim▁end｜>
    "<MID>", "\xE2\x96\x81<MID>"};
const std::vector<std::string> kFimPadNames = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>"};
const std::vector<std::string> kFimRepNames = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<repo_name>",
                                               "<REPO>", "<reponame>"};
const std::vector<std::string> kFimSepNames = {"<|file_sep|>", "<file_sep>"};
// Texts that end generation wherever they appear in a vocabulary.
const std::vector<std::string> kEogNames = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>",
    "<|end_of_text|>"};

class Loader {
 public:
  Loader(const GgufFile& f, Tokenizer::Impl& impl) : f_(f), impl_(impl), v_(impl.vocab) {}

  void run() {
    v_.name = f_.path();
    const std::string model = required_string(kKeyModel);
    const auto pre = f_.get_string_opt(kKeyPre);
    impl_.pre_name = pre.value_or("");
    set_type_defaults(model);
    load_tokens();
    if (v_.type == VocabType::Bpe) load_bpe();
    read_flags();
    read_special_ids();
    detect_special_by_text();
    collect_eog();
    build_special_tables();
    apply_model_quirks();
    build_byte_tokens();
    build_pieces();
    build_special_index();
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const { throw Error(f_.path() + ": " + msg); }

  std::string required_string(const char* key) const {
    const GgufValue* v = f_.find(key);
    if (!v) fail(std::string("missing metadata key '") + key + "' (the file has no tokenizer)");
    if (!v->is_string()) fail(std::string("metadata key '") + key + "' is not a string");
    return v->as_string();
  }

  void set_type_defaults(const std::string& model) {
    if (model == "llama") {
      v_.type = VocabType::Spm;
      v_.bos = 1;
      v_.eos = 2;
      v_.unk = 0;
      v_.add_space_prefix = true;
      v_.add_bos = true;
    } else if (model == "gpt2") {
      v_.type = VocabType::Bpe;
      v_.bos = 11;
      v_.eos = 11;
      const std::string& pre = impl_.pre_name;
      const PreTokenizerSpec* spec = find_pre_tokenizer(pre.empty() ? "default" : pre);
      if (!spec) {
        std::string names;
        for (const auto& n : known_pre_tokenizers()) names += (names.empty() ? "" : ", ") + n;
        fail("unknown pre-tokenizer '" + pre + "' in '" + kKeyPre + "' (known: " + names + ")");
      }
      spec_ = spec;
      v_.ignore_merges = spec->ignore_merges;
      v_.add_bos = spec->add_bos;
      if (spec->no_bos) v_.bos = -1;
    } else if (model == "bert") {
      v_.type = VocabType::Wpm;
      v_.bos = 101;  // [CLS]
      v_.unk = 100;
      v_.sep = 102;
      v_.pad = 0;
      v_.mask = 103;
      v_.add_bos = true;
      v_.add_sep = true;
    } else {
      fail("unsupported tokenizer model '" + model + "' in '" + kKeyModel + "' (supported: llama, gpt2, bert)");
    }
  }

  void load_tokens() {
    const GgufValue* tv = f_.find(kKeyTokens);
    if (!tv) fail(std::string("missing metadata key '") + kKeyTokens + "'");
    if (!tv->is_array() || tv->array_type() != GgufValueType::STRING)
      fail(std::string("metadata key '") + kKeyTokens + "' is not an array of strings");
    v_.text = tv->as_string_array();
    const size_t n = v_.text.size();
    if (n == 0) fail(std::string("'") + kKeyTokens + "' is empty");
    if (n > static_cast<size_t>(INT32_MAX)) fail("vocabulary too large");
    for (size_t i = 0; i < n; ++i) {
      if (v_.text[i].empty()) v_.text[i] = "[EMPTY_" + std::to_string(i) + "]";
      v_.max_token_len = std::max(v_.max_token_len, v_.text[i].size());
    }

    v_.score.assign(n, 0.0f);
    if (const GgufValue* sv = f_.find(kKeyScores)) {
      if (!sv->is_array()) fail(std::string("metadata key '") + kKeyScores + "' is not an array");
      std::vector<float> s = sv->as_float_array();
      if (s.size() < n)
        fail(std::string("'") + kKeyScores + "' has " + std::to_string(s.size()) + " entries for " +
             std::to_string(n) + " tokens");
      std::copy(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n), v_.score.begin());
    }

    v_.attr.assign(n, kAttrNormal);
    if (const GgufValue* ty = f_.find(kKeyTypes)) {
      if (!ty->is_array()) fail(std::string("metadata key '") + kKeyTypes + "' is not an array");
      std::vector<int64_t> t = ty->as_int_array();
      if (t.size() < n)
        fail(std::string("'") + kKeyTypes + "' has " + std::to_string(t.size()) + " entries for " +
             std::to_string(n) + " tokens");
      for (size_t i = 0; i < n; ++i) v_.attr[i] = attr_from_type(t[i]);
    }
    v_.index.build(v_.text);

    for (const std::string& t : v_.text) {
      for (size_t i = t.find("\xE2\x96\x81", 1); i != std::string::npos; i = t.find("\xE2\x96\x81", i + 3)) {
        size_t start = i - 1;  // the character before this "▁"
        while (start > 0 && (static_cast<unsigned char>(t[start]) & 0xC0) == 0x80) --start;
        size_t pos = start;
        const uint32_t cp = utf8::decode(t, pos);
        if (cp != 0x2581) v_.spm_joiners.push_back(cp);
      }
    }
    std::sort(v_.spm_joiners.begin(), v_.spm_joiners.end());
    v_.spm_joiners.erase(std::unique(v_.spm_joiners.begin(), v_.spm_joiners.end()), v_.spm_joiners.end());
  }

  void load_bpe() {
    const GgufValue* mv = f_.find(kKeyMerges);
    if (!mv) fail(std::string("BPE vocabulary without '") + kKeyMerges + "'");
    if (!mv->is_array() || mv->array_type() != GgufValueType::STRING)
      fail(std::string("metadata key '") + kKeyMerges + "' is not an array of strings");
    impl_.merges.build(v_, mv->as_string_array());
    const std::string pre = impl_.pre_name.empty() ? "default" : impl_.pre_name;
    impl_.pre = std::make_unique<PreTokenizer>(spec_->regexes, f_.path(), pre);
    for (int b = 0; b < 256; ++b)
      impl_.byte_level_token[static_cast<size_t>(b)] = v_.find(byte_level::byte_to_utf8(static_cast<uint8_t>(b)));
  }

  void read_flags() {
    if (auto b = f_.get_bool_opt("tokenizer.ggml.add_space_prefix")) v_.add_space_prefix = *b;
    if (auto b = f_.get_bool_opt("tokenizer.ggml.add_bos_token")) v_.add_bos = *b;
    if (auto b = f_.get_bool_opt("tokenizer.ggml.add_eos_token")) v_.add_eos = *b;
    if (auto b = f_.get_bool_opt("tokenizer.ggml.add_sep_token")) v_.add_sep = *b;
    if (auto b = f_.get_bool_opt("tokenizer.ggml.normalizer.lowercase")) {
      v_.wpm_lowercase = *b;
      v_.wpm_strip_accents = *b;
    }
    if (auto b = f_.get_bool_opt("tokenizer.ggml.normalizer.strip_accents")) v_.wpm_strip_accents = *b;
  }

  void read_id(const char* key, int32_t& id) {
    if (id >= v_.size()) id = -1;  // a type default the vocabulary is too small for
    const GgufValue* val = f_.find(key);
    if (!val) return;
    if (!val->is_integer()) fail(std::string("metadata key '") + key + "' is not an integer");
    const int64_t x = val->as_int();
    if (x >= 0 && x < v_.size()) id = static_cast<int32_t>(x);  // out of range: keep the default
  }

  void read_special_ids() {
    if (v_.type == VocabType::Wpm && !f_.find("tokenizer.ggml.bos_token_id")) read_id("tokenizer.ggml.cls_token_id", v_.bos);
    read_id("tokenizer.ggml.bos_token_id", v_.bos);
    read_id("tokenizer.ggml.eos_token_id", v_.eos);
    read_id("tokenizer.ggml.eot_token_id", v_.eot);
    read_id("tokenizer.ggml.eom_token_id", v_.eom);
    read_id("tokenizer.ggml.unknown_token_id", v_.unk);
    read_id("tokenizer.ggml.seperator_token_id", v_.sep);
    read_id("tokenizer.ggml.padding_token_id", v_.pad);
    read_id("tokenizer.ggml.mask_token_id", v_.mask);
    read_id("tokenizer.ggml.prefix_token_id", v_.fim.pre);
    read_id("tokenizer.ggml.suffix_token_id", v_.fim.suf);
    read_id("tokenizer.ggml.middle_token_id", v_.fim.mid);
    read_id("tokenizer.ggml.fim_pre_token_id", v_.fim.pre);
    read_id("tokenizer.ggml.fim_suf_token_id", v_.fim.suf);
    read_id("tokenizer.ggml.fim_mid_token_id", v_.fim.mid);
    read_id("tokenizer.ggml.fim_pad_token_id", v_.fim.pad);
    read_id("tokenizer.ggml.fim_rep_token_id", v_.fim.rep);
    read_id("tokenizer.ggml.fim_sep_token_id", v_.fim.sep);
  }

  // A role token found by its text is made a control token, so its text in user input stays
  // plain text unless special parsing is asked for.
  void detect(const std::vector<std::string>& names, int32_t& id) {
    if (id >= 0) return;
    for (const std::string& n : names) {
      const int32_t t = v_.find(n);
      if (t >= 0) {
        id = t;
        v_.attr[static_cast<size_t>(t)] |= kAttrControl;
        return;
      }
    }
  }

  void detect_special_by_text() {
    detect(kEotNames, v_.eot);
    detect(kEomNames, v_.eom);
    detect(kFimPreNames, v_.fim.pre);
    detect(kFimSufNames, v_.fim.suf);
    detect(kFimMidNames, v_.fim.mid);
    detect(kFimPadNames, v_.fim.pad);
    detect(kFimRepNames, v_.fim.rep);
    detect(kFimSepNames, v_.fim.sep);
  }

  void collect_eog() {
    v_.eog.assign(v_.text.size(), 0);
    auto mark = [&](int32_t id) {
      if (id >= 0 && id < v_.size()) v_.eog[static_cast<size_t>(id)] = 1;
    };
    mark(v_.fim.pad);
    mark(v_.fim.rep);
    mark(v_.fim.sep);
    for (const std::string& n : kEogNames) {
      const int32_t t = v_.find(n);
      if (t >= 0) {
        mark(t);
        v_.attr[static_cast<size_t>(t)] |= kAttrControl;
      }
    }
    mark(v_.eos);
    mark(v_.eot);
    mark(v_.eom);
  }

  void build_special_tables() {
    for (int32_t id = 0; id < v_.size(); ++id)
      if (v_.attr[static_cast<size_t>(id)] & (kAttrControl | kAttrUserDefined | kAttrUnknown))
        v_.special_tokens.push_back(id);
    // Longest text first (ties by id, for a deterministic order).
    std::stable_sort(v_.special_tokens.begin(), v_.special_tokens.end(), [&](int32_t a, int32_t b) {
      return v_.text[static_cast<size_t>(a)].size() > v_.text[static_cast<size_t>(b)].size();
    });
  }

  // Per-model attributes the GGUF does not carry, as the reference engine sets them.
  void apply_model_quirks() {
    const std::string model_name = lower(f_.get_string_opt("general.name").value_or(""));
    const std::string& pre = impl_.pre_name;
    auto set = [&](std::string_view text, uint32_t flag, bool on) {
      const int32_t id = v_.find(text);
      if (id < 0) return;
      if (on) v_.attr[static_cast<size_t>(id)] |= flag;
      else v_.attr[static_cast<size_t>(id)] &= ~flag;
    };
    if (pre == "jina-v2-de" || pre == "jina-v2-es" || pre == "jina-v2-code") {
      set("<mask>", kAttrLstrip, true);
    } else if (model_name.find("phi-3") != std::string::npos || model_name.find("phi3") != std::string::npos) {
      for (int32_t id : v_.special_tokens) v_.attr[static_cast<size_t>(id)] |= kAttrRstrip;
      set("</s>", kAttrRstrip, true);
      set("<unk>", kAttrRstrip, false);
      set("<s>", kAttrRstrip, false);
      set("<|endoftext|>", kAttrRstrip, false);
    }
  }

  void build_byte_tokens() {
    v_.byte_token.fill(-1);
    for (int b = 0; b < 256; ++b) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "<0x%02X>", b);
      int32_t id = v_.find(buf);
      if (id < 0) id = v_.find(std::string(1, static_cast<char>(b)));
      v_.byte_token[static_cast<size_t>(b)] = id;
    }
  }

  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  }

  // token_to_piece(id, show_special = true) for every token.
  void build_pieces() {
    const size_t n = v_.text.size();
    impl_.pieces.resize(n);
    for (size_t id = 0; id < n; ++id) {
      const std::string& t = v_.text[id];
      const uint32_t a = v_.attr[id];
      std::string& p = impl_.pieces[id];
      if (a & (kAttrControl | kAttrUnknown | kAttrUserDefined)) {
        p = t;
      } else if (a & kAttrNormal) {
        if (v_.type == VocabType::Bpe) {
          byte_level::decode(t, p);
        } else {
          // "▁" (U+2581) stands for a space.
          for (size_t i = 0; i < t.size();) {
            if (t.compare(i, 3, "\xE2\x96\x81") == 0) {
              p.push_back(' ');
              i += 3;
            } else {
              p.push_back(t[i++]);
            }
          }
        }
      } else if (a & kAttrByte) {
        // "<0xXX>"
        if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && hex_value(t[3]) >= 0 && hex_value(t[4]) >= 0)
          p.push_back(static_cast<char>(hex_value(t[3]) * 16 + hex_value(t[4])));
        else
          p = t;
      }
      // Unused / undefined tokens have no text.
    }
  }

  void build_special_index() {
    impl_.special_rank.assign(v_.text.size(), -1);
    for (size_t r = 0; r < v_.special_tokens.size(); ++r) {
      const int32_t id = v_.special_tokens[r];
      impl_.special_rank[static_cast<size_t>(id)] = static_cast<int32_t>(r);
      const uint32_t a = v_.attr[static_cast<size_t>(id)];
      const auto first = static_cast<unsigned char>(v_.text[static_cast<size_t>(id)][0]);
      impl_.special_by_byte[1][first].push_back(id);
      // Control and unknown tokens match only with parse_special; user-defined ones always.
      if (!(a & (kAttrControl | kAttrUnknown))) impl_.special_by_byte[0][first].push_back(id);
    }
  }

  const GgufFile& f_;
  Tokenizer::Impl& impl_;
  Vocab& v_;
  const PreTokenizerSpec* spec_ = nullptr;
};

}  // namespace

Tokenizer Tokenizer::from_gguf(const GgufFile& f) {
  auto impl = std::make_shared<Impl>();
  Loader(f, *impl).run();
  return Tokenizer(std::move(impl));
}

}  // namespace edgeinfer
