// `edgeinfer tokenize`: text to token ids with a model's own vocabulary.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace edgeinfer::cli {

namespace {

struct TokenizeOptions {
  std::string model;
  std::string text;
  std::string file;
  bool ids = false;
  bool pieces = false;
  bool no_bos = false;
  bool parse_special = false;
};

// Printable form of a piece: quotes, backslashes and control bytes escaped.
std::string escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

int tokenize(const TokenizeOptions& o) {
  std::string text = o.text;
  if (!o.file.empty()) {
    std::ifstream in(o.file, std::ios::binary);
    if (!in) throw Error(o.file + ": cannot open");
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  // Only the vocabulary is needed: no weights are bound, so vocab-only GGUFs work too.
  GgufFile f = GgufFile::open(o.model);
  Tokenizer tok = Tokenizer::from_gguf(f);
  const std::vector<int32_t> ids = tok.encode(text, /*add_special=*/!o.no_bos, o.parse_special);
  if (o.ids) {
    for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? " %d" : "%d", ids[i]);
    std::printf("\n");
  } else if (o.pieces) {
    for (size_t i = 0; i < ids.size(); ++i) {
      std::printf(i ? " '%s'" : "'%s'", escape(tok.token_to_piece(ids[i], true)).c_str());
    }
    std::printf("\n");
  } else {
    for (int32_t id : ids) std::printf("%6d -> '%s'\n", id, escape(tok.token_to_piece(id, true)).c_str());
  }
  std::fprintf(stderr, "%zu tokens\n", ids.size());
  return 0;
}

}  // namespace

void add_tokenize_command(CLI::App& app, Registry& r) {
  auto o = std::make_shared<TokenizeOptions>();
  CLI::App* sub = app.add_subcommand("tokenize", "Turn text into token ids with a model's vocabulary");
  sub->add_option("-m,--model", o->model, "GGUF model (or vocab-only GGUF)")->required()->check(CLI::ExistingFile);
  auto* text = sub->add_option("text", o->text, "Text to tokenize");
  auto* file = sub->add_option("-f,--file", o->file, "Read the text from a file")->check(CLI::ExistingFile);
  text->excludes(file);
  auto* ids = sub->add_flag("--ids", o->ids, "Print only the ids, space-separated on one line");
  auto* pieces = sub->add_flag("--pieces", o->pieces, "Print only the token pieces");
  ids->excludes(pieces);
  sub->add_flag("--no-bos", o->no_bos, "Add no BOS/EOS (by default they are added as the model's metadata says)");
  sub->add_flag("--parse-special", o->parse_special, "Map special-token text such as <|im_start|> to its id");
  r.add(sub, [o, text, file] {
    if (text->count() == 0 && file->count() == 0) throw Error("give TEXT or -f FILE");
    return tokenize(*o);
  });
}

}  // namespace edgeinfer::cli
