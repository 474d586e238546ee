// Text <-> token ids for a model: special-token recognition, the pre-tokenizer and BPE,
// SentencePiece or WordPiece encoding, and decoding that can stream.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/bpe.h"
#include "tokenizer/pretokenize.h"
#include "tokenizer/spm.h"
#include "tokenizer/vocab.h"
#include "tokenizer/wordpiece.h"

namespace vkllm::tokenizer {

struct EncodeOptions {
    bool add_special = false;  // BOS / EOS as the vocabulary asks
    // Control and unknown token text (<|im_end|>, <start_of_turn>) becomes those tokens. A
    // SentencePiece vocabulary's user-defined tokens are matched either way.
    bool parse_special = false;
};

class Tokenizer {
  public:
    // Throws VKLLM_ERR_UNSUPPORTED for an unknown pre-tokenizer name.
    explicit Tokenizer(Vocab vocab);
    // What the caller should log once about this vocabulary ("" when nothing): a BPE file
    // without tokenizer.ggml.pre, which gets llama.cpp's default rules.
    const std::string &warning() const { return warning_; }
    Tokenizer(const Tokenizer &) = delete;
    Tokenizer &operator=(const Tokenizer &) = delete;

    const Vocab &vocab() const { return vocab_; }
    std::vector<int32_t> encode(std::string_view text, EncodeOptions options) const;
    // Two texts as one input (a query and a document for a reranker). With add_special, BOS
    // and EOS as the vocabulary adds them and SEP (else EOS) between: BERT's
    // [CLS] a [SEP] b [SEP]. Without, the ids of one after the other.
    std::vector<int32_t> encode_pair(std::string_view first, std::string_view second,
                                     EncodeOptions options) const;

    // The bytes of one token. Control and unknown tokens (BOS, <|im_end|>) are empty unless
    // `special` asks for their text. VKLLM_ERR_INVALID_ARGUMENT for an id outside the
    // vocabulary (here and in decode and StreamDecoder::push).
    std::string piece(int32_t id, bool special) const;
    // The text of a sequence; the space SentencePiece's dummy prefix or WordPiece's first word
    // put in front is removed again.
    std::string decode(const std::vector<int32_t> &ids, bool special) const;
    bool is_end_of_generation(int32_t id) const;

  private:
    void encode_text(std::string_view text, bool first, std::vector<int32_t> &out) const;
    // The longest special token that starts at text[pos] and may be matched, or -1.
    int32_t special_at(std::string_view text, size_t pos, bool parse_special) const;

    Vocab vocab_;
    std::unique_ptr<PreTokenizer> pre_;  // BPE only
    std::string warning_;
    std::unique_ptr<BpeEncoder> bpe_;
    std::unique_ptr<SpmEncoder> spm_;
    std::unique_ptr<WordPieceEncoder> wpm_;
    std::vector<int32_t> specials_[256];  // by first byte, longest first
};

// Turns a stream of tokens into text that never ends inside a UTF-8 character: the bytes of
// an incomplete character are held until the tokens that complete it arrive.
class StreamDecoder {
  public:
    // `at_text_start`: the stream begins a text, so the space SentencePiece's dummy prefix or
    // WordPiece puts before the first word is dropped; a continuation (generated after a
    // prompt) keeps it.
    StreamDecoder(const Tokenizer &tokenizer, bool special, bool at_text_start = true)
        : tokenizer_(tokenizer),
          special_(special),
          at_text_start_(at_text_start),
          first_(at_text_start) {}

    // The text that became complete with this token (may be empty).
    std::string push(int32_t id);
    // What is still held (an incomplete character at the end of the stream); the decoder is
    // then ready for a new stream.
    std::string flush();
    const Tokenizer &tokenizer() const { return tokenizer_; }

  private:
    const Tokenizer &tokenizer_;
    bool special_;
    bool at_text_start_;
    bool first_;
    std::string pending_;
};

}  // namespace vkllm::tokenizer
