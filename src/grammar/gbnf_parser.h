// GBNF text (llama.cpp's grammar format, grammars/README.md there) -> a compiled Grammar.
//
//   root   ::= "{" ws pair ("," ws pair)* "}"     a rule; `root` is where parsing starts
//   pair   ::= key ws ":" ws [0-9]+               sequences, literals, character classes
//   key    ::= [a-z_] [a-z0-9_-]{0,15}             ranges, {m}, {m,}, {m,n}, * + ?
//   ws     ::= ([ \t\n] | "\\" [^\x00-\x1F])?       escapes \x.. \u.... \U........ \t \n \r
//                                                  \\ \" \[ \] \-, negation [^...], '.'
// Comments run from # to the end of the line. A rule ends at a newline, except inside
// parentheses and after `|` or `::=`. Repetitions are expanded into helper rules (S{2,4} is
// S S S', S' ::= S S'' |, S'' ::= S |), named after their rule ("ws_3").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "grammar/grammar.h"

namespace vkllm::grammar {

// Bounds that keep a hostile grammar from exhausting memory or the stack.
struct GbnfLimits {
    size_t max_text_bytes = size_t(4) << 20;
    size_t max_rules = 100000;              // helper rules included
    size_t max_elements = size_t(1) << 21;  // over all rules, after repetitions are expanded
    int max_nesting = 64;                   // parentheses within parentheses
    uint32_t max_repetition = 4096;         // the largest m or n of {m,n}
};

// Parses and checks: every referenced rule is defined, no rule is defined twice, `root` exists,
// no rule is left-recursive (a rule that can reach itself before consuming a character: the
// stack-based engine would loop on it). Throws vkllm::Error VKLLM_ERR_INVALID_ARGUMENT with
// "line L, column C: ..." for every error that has a place in the text.
Grammar parse_gbnf(std::string_view text, std::string_view root = "root",
                   const GbnfLimits &limits = {});

}  // namespace vkllm::grammar
