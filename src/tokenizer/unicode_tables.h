// The generated Unicode tables (unicode_tables.cpp, made by tools/gen_unicode_tables.py),
// sorted for binary search. Only unicode.cpp reads them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tokenizer/unicode.h"

namespace vkllm::tokenizer {

namespace tables {

// The first run starts at 0.
struct CategoryRun {
    uint32_t first;  // the run lasts until the next run's first
    Category category;
};
struct CombiningRange {
    uint32_t first, last;
    uint8_t ccc;  // never 0: code points outside every range are starters
};
// One step of a canonical decomposition, not Hangul (algorithmic): cp -> first [second].
struct Decomposition {
    uint32_t cp, first, second;  // second is 0 for singletons
};
// Primary composites: first + second -> composite; sorted by (first, second).
struct Composition {
    uint32_t first, second, composite;
};
struct Range {
    uint32_t first, last;
};

extern const CategoryRun kCategoryRuns[];
extern const size_t kCategoryRunCount;
extern const CombiningRange kCombiningRanges[];
extern const size_t kCombiningRangeCount;
extern const Decomposition kDecompositions[];
extern const size_t kDecompositionCount;
extern const Composition kCompositions[];
extern const size_t kCompositionCount;
extern const Range kWhitespace[];
extern const size_t kWhitespaceCount;
extern const Range kHan[];  // sorted, disjoint
extern const size_t kHanCount;
extern const Range kControl[];  // Cc, Cf, Co, Cs; sorted, disjoint
extern const size_t kControlCount;
extern const Decomposition kLowercase[];  // cp -> its full lowercase mapping; sorted by cp
extern const size_t kLowercaseCount;

}  // namespace tables

}  // namespace vkllm::tokenizer
