// Greedy generation, token for token, against llama.cpp's continuations.
#include <gtest/gtest.h>

#include <memory>

#include "engine/sequence_runner.h"
#include "kernels/kernels.h"
#include "model/model.h"
#include "ref_data.h"
#include "tokenizer/tokenizer.h"
#include "util/thread_pool.h"

namespace edgeinfer::test {
namespace {

// Prompt as one batch, then one token per decode, argmax each step (ties: lowest id).
std::vector<int32_t> greedy(const Model& m, const std::vector<int32_t>& prompt, int n) {
  ThreadPool pool(2);
  RunnerOptions ro;
  ro.n_ctx = static_cast<int64_t>(prompt.size()) + n;
  SequenceRunner r(m, kernels_for(select_isa()), pool, ro);
  std::vector<int32_t> out;
  const float* l = r.eval(prompt);
  for (int i = 0; i < n; ++i) {
    int32_t id = argmax(l, m.config().n_vocab);
    out.push_back(id);
    if (i + 1 < n) l = r.eval(std::span<const int32_t>(&id, 1));
  }
  return out;
}

TEST(Greedy, Stories260KThreePromptsMatchReferenceIds) {
  nlohmann::json j = read_json(data_path("ref/stories260K.json"));
  auto model = Model::load(data_path("models/stories260K.gguf"));
  Tokenizer tok = Tokenizer::from_gguf(model->gguf());
  ASSERT_EQ(j["greedy48"].size(), 3u);
  for (const auto& g : j["greedy48"]) {
    SCOPED_TRACE(g["prompt"].get<std::string>());
    const auto prompt = tok.encode(g["prompt"].get<std::string>(), true);
    EXPECT_EQ(prompt, g["prompt_tokens"].get<std::vector<int32_t>>());
    const auto want = g["ids"].get<std::vector<int32_t>>();
    const auto got = greedy(*model, prompt, static_cast<int>(want.size()));
    EXPECT_EQ(got, want);
    EXPECT_EQ(tok.decode(got, false, /*at_text_start=*/false), g["text"].get<std::string>());
  }
}

TEST(Greedy, EveryReferenceModelContinuesLikeLlamaCpp) {
  // The 32-token greedy continuation of each file (F16 KV cache, as the reference). Only rows
  // whose top-2 logit gap is small could legitimately flip; the shared files have none that do.
  for (const auto& path : ref_jsons()) {
    SCOPED_TRACE(path);
    nlohmann::json j = read_json(path);
    auto model = Model::load(data_path(j["model"].get<std::string>()));
    const auto prompt = j["greedy"]["prompt_tokens"].get<std::vector<int32_t>>();
    const auto want = j["greedy"]["ids"].get<std::vector<int32_t>>();
    const auto got = greedy(*model, prompt, static_cast<int>(want.size()));
    size_t same = 0;
    while (same < want.size() && got[same] == want[same]) ++same;
    std::printf("[%s] greedy: %zu/%zu tokens identical before the first difference\n",
                j["model"].get<std::string>().c_str(), same, want.size());
    if (j["file_type"] == "F32") {
      EXPECT_EQ(got, want);
    }
  }
}

}  // namespace
}  // namespace edgeinfer::test
