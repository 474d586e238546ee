// BERT's text preparation for uncased WordPiece models, as the Hugging Face tokenizers'
// BertNormalizer (clean_text, handle_chinese_chars, strip_accents, lowercase) and
// BertPreTokenizer do it: the words that WordPiece then cuts into pieces.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vkllm::tokenizer {

// The words of `text`, in UTF-8. Control and format characters (U+200B, U+00AD) and invalid
// bytes vanish, joining their neighbours; whitespace separates words; accents are removed after
// canonical decomposition (which splits Hangul syllables into jamo) and the rest lowercased;
// each CJK ideograph and each punctuation character (Unicode P*, and ASCII symbols such as $
// and +) is a word of its own.
std::vector<std::string> bert_words(std::string_view text);

}  // namespace vkllm::tokenizer
