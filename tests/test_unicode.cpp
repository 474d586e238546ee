// The Unicode layer: UTF-8 decoding of bad input, general categories and White_Space of chosen
// code points from Unicode 14.0, NFC on the cases that exercise each step of it, NFD, the
// lowercase mapping and the control/format ranges BERT's normalizer uses.
#include <gtest/gtest.h>

#include <vector>

#include "tokenizer/unicode.h"

using namespace vkllm::tokenizer;

static std::string utf8(uint32_t cp) {
    std::string s;
    utf8_append(s, cp);
    return s;
}

static void expect_decodes(std::string_view s, uint32_t cp, uint32_t len) {
    Utf8Char c = utf8_decode(s, 0);
    EXPECT_TRUE(c.valid) << s;
    EXPECT_EQ(c.cp, cp) << s;
    EXPECT_EQ(c.len, len) << s;
}

static void expect_invalid(std::string_view s) {
    Utf8Char c = utf8_decode(s, 0);
    EXPECT_FALSE(c.valid) << testing::PrintToString(std::string(s));
    EXPECT_EQ(c.cp, kReplacementChar);
    EXPECT_EQ(c.len, 1u);
}

TEST(Utf8, DecodesOneToFourByteSequences) {
    expect_decodes("A", 'A', 1);
    expect_decodes("\xC3\xA9", 0xE9, 2);
    expect_decodes("\xE2\x82\xAC", 0x20AC, 3);
    expect_decodes("\xF0\x9F\x98\x80", 0x1F600, 4);
    expect_decodes("\xF4\x8F\xBF\xBF", 0x10FFFF, 4);
    expect_decodes("\xEF\xBF\xBD", kReplacementChar, 3);
}

TEST(Utf8, InvalidSequencesConsumeOneByteAsReplacementChar) {
    expect_invalid("\x80");                  // continuation byte first
    expect_invalid("\xFF");                  // never in UTF-8
    expect_invalid("\xC3");                  // truncated at the end
    expect_invalid("\xE2\x82");              // truncated at the end
    expect_invalid("\xE2\x82z");             // continuation missing
    expect_invalid("\xC0\xAF");              // overlong '/'
    expect_invalid("\xE0\x80\xAF");          // overlong '/'
    expect_invalid("\xF0\x80\x80\xAF");      // overlong '/'
    expect_invalid("\xED\xA0\x80");          // surrogate U+D800
    expect_invalid("\xED\xBF\xBF");          // surrogate U+DFFF
    expect_invalid("\xF4\x90\x80\x80");      // U+110000
    expect_invalid("\xF8\x88\x80\x80\x80");  // five-byte form
}

TEST(Utf8, NextWalksInvalidBytesOneByOne) {
    std::string_view s = "a\xE2\x82\xC3\xA9";
    std::vector<uint32_t> cps;
    size_t pos = 0;
    uint32_t cp;
    while (utf8_next(s, pos, cp))
        cps.push_back(cp);
    EXPECT_EQ(cps, (std::vector<uint32_t>{'a', kReplacementChar, kReplacementChar, 0xE9}));
    EXPECT_EQ(pos, s.size());
}

TEST(Utf8, EncodesEachLengthBoundaryAndReplacesNonScalars) {
    for (uint32_t cp : {0x0u, 0x7Fu, 0x80u, 0x7FFu, 0x800u, 0xFFFFu, 0x10000u, 0x10FFFFu}) {
        std::string s = utf8(cp);
        expect_decodes(s, cp, uint32_t(s.size()));
    }
    EXPECT_EQ(utf8(0x7FF), "\xDF\xBF");
    EXPECT_EQ(utf8(0xD800), "\xEF\xBF\xBD");
    EXPECT_EQ(utf8(0x110000), "\xEF\xBF\xBD");
}

TEST(Categories, LettersByCase) {
    EXPECT_EQ(category('A'), Category::Lu);
    EXPECT_EQ(category(0x0416), Category::Lu);  // Ж
    EXPECT_EQ(category('z'), Category::Ll);
    EXPECT_EQ(category(0x00DF), Category::Ll);   // ß
    EXPECT_EQ(category(0x01C5), Category::Lt);   // ǅ
    EXPECT_EQ(category(0x02B0), Category::Lm);   // ʰ
    EXPECT_EQ(category(0x3005), Category::Lm);   // 々
    EXPECT_EQ(category(0x4E00), Category::Lo);   // CJK
    EXPECT_EQ(category(0x0915), Category::Lo);   // Devanagari KA
    EXPECT_EQ(category(0x0E01), Category::Lo);   // Thai KO KAI
    EXPECT_EQ(category(0x0627), Category::Lo);   // Arabic ALEF
    EXPECT_EQ(category(0xD55C), Category::Lo);   // Hangul syllable
    EXPECT_EQ(category(0x2B738), Category::Lo);  // CJK Extension B
    EXPECT_TRUE(is_upper(0x1D400));              // mathematical bold A
    EXPECT_TRUE(is_lower(0x0101));
    EXPECT_TRUE(is_titlecase(0x1F88));
    EXPECT_TRUE(is_modifier_letter(0xFF70));
    EXPECT_TRUE(is_other_letter(0x05D0));
    for (uint32_t cp : {0x41u, 0x61u, 0x1C5u, 0x2B0u, 0x4E00u})
        EXPECT_TRUE(is_letter(cp)) << cp;
}

TEST(Categories, MarksAndNumbers) {
    EXPECT_EQ(category(0x0301), Category::Mn);
    EXPECT_EQ(category(0x093F), Category::Mc);  // Devanagari vowel sign I
    EXPECT_EQ(category(0x20DD), Category::Me);  // combining enclosing circle
    EXPECT_EQ(category('7'), Category::Nd);
    EXPECT_EQ(category(0x0967), Category::Nd);  // Devanagari one
    EXPECT_EQ(category(0x2160), Category::Nl);  // Roman numeral one
    EXPECT_EQ(category(0x00BD), Category::No);  // ½
    EXPECT_TRUE(is_mark(0x0E31));               // Thai MAI HAN-AKAT
    EXPECT_TRUE(is_mark(0x064E));               // Arabic FATHA
    EXPECT_TRUE(is_number(0x00B2));             // ²
    EXPECT_FALSE(is_letter(0x0301));
    EXPECT_FALSE(is_number('a'));
}

TEST(Categories, PunctuationAndSymbolsHaveTheirOwn) {
    EXPECT_EQ(category('!'), Category::Po);
    EXPECT_EQ(category('_'), Category::Pc);
    EXPECT_EQ(category('('), Category::Ps);
    EXPECT_EQ(category(0x2019), Category::Pf);  // right single quotation mark
    EXPECT_EQ(category('+'), Category::Sm);
    EXPECT_EQ(category('$'), Category::Sc);
    EXPECT_EQ(category('^'), Category::Sk);
    EXPECT_EQ(category(0x1F600), Category::So);
}

TEST(Categories, HanIsTheScriptNotTheBlock) {
    EXPECT_TRUE(is_han(0x4E2D));
    EXPECT_TRUE(is_han(0x3005));   // ideographic iteration mark
    EXPECT_TRUE(is_han(0x20000));  // extension B
    EXPECT_FALSE(is_han(0x3042));  // hiragana
    EXPECT_FALSE(is_han(0x3001));  // ideographic comma: common script
    EXPECT_FALSE(is_han('a'));
}

TEST(Categories, EverythingElseIsOther) {
    for (uint32_t cp : {0x0u, 0x20u, 0xA0u, 0xFFFDu + 2, 0x0378u /* unassigned */,
                        0xE000u /* private use */, 0x10FFFFu}) {
        EXPECT_EQ(category(cp), Category::Other) << cp;
        EXPECT_FALSE(is_letter(cp) || is_mark(cp) || is_number(cp)) << cp;
    }
}

TEST(Categories, WhitespaceIsTheWhiteSpaceProperty) {
    for (uint32_t cp : {0x09u, 0x0Au, 0x0Bu, 0x0Cu, 0x0Du, 0x20u, 0x85u, 0xA0u, 0x1680u, 0x2000u,
                        0x200Au, 0x2028u, 0x2029u, 0x202Fu, 0x205Fu, 0x3000u})
        EXPECT_TRUE(is_whitespace(cp)) << cp;
    // Zero-width space, the file/group/record/unit separators that Python's str.isspace()
    // accepts, and the Mongolian vowel separator (no longer White_Space) are not.
    for (uint32_t cp : {0x08u, 0x0Eu, 0x1Cu, 0x1Fu, 0x200Bu, 0x180Eu, 0xFEFFu, 0x61u})
        EXPECT_FALSE(is_whitespace(cp)) << cp;
}

TEST(Categories, CombiningClass) {
    EXPECT_EQ(combining_class('a'), 0);
    EXPECT_EQ(combining_class(0x0301), 230);
    EXPECT_EQ(combining_class(0x0323), 220);
    EXPECT_EQ(combining_class(0x0327), 202);
    EXPECT_EQ(combining_class(0x094D), 9);  // virama
    EXPECT_EQ(combining_class(0x1D165), 216);
    EXPECT_EQ(combining_class(0x10FFFF), 0);
}

TEST(Nfc, ComposesBaseAndCombiningMark) {
    EXPECT_EQ(nfc("cafe\xCC\x81"), "caf\xC3\xA9");              // e + U+0301 -> é
    EXPECT_EQ(nfc("A\xCC\x8A"), "\xC3\x85");                    // A + ring -> Å
    EXPECT_EQ(nfc(utf8(0x0B47) + utf8(0x0B3E)), utf8(0x0B4B));  // two starters compose
}

TEST(Nfc, ComposesHangulJamo) {
    EXPECT_EQ(nfc(utf8(0x1112) + utf8(0x1161) + utf8(0x11AB)), utf8(0xD55C));  // L+V+T -> 한
    EXPECT_EQ(nfc(utf8(0x1100) + utf8(0x1161)), utf8(0xAC00));                 // L+V -> 가
    EXPECT_EQ(nfc(utf8(0xAC00) + utf8(0x11A8)), utf8(0xAC01));                 // LV+T -> 각
    EXPECT_EQ(nfc(utf8(0xD55C)), utf8(0xD55C));
}

TEST(Nfc, SingletonsAndExclusionsStayDecomposed) {
    EXPECT_EQ(nfc(utf8(0x0958)), utf8(0x0915) + utf8(0x093C));  // excluded: क़ -> क + ़
    EXPECT_EQ(nfc(utf8(0x0915) + utf8(0x093C)), utf8(0x0915) + utf8(0x093C));
    EXPECT_EQ(nfc(utf8(0x2126)), utf8(0x03A9));  // singleton: ohm sign -> omega
    EXPECT_EQ(nfc(utf8(0x212B)), utf8(0xC5));    // angstrom sign -> Å
}

TEST(Nfc, ReordersMarksByCombiningClassBeforeComposing) {
    EXPECT_EQ(nfc("q" + utf8(0x0307) + utf8(0x0323)), "q" + utf8(0x0323) + utf8(0x0307));
    // a + circumflex (230) + dot below (220): the dot below moves first, so ạ then ậ.
    EXPECT_EQ(nfc("a" + utf8(0x0302) + utf8(0x0323)), utf8(0x1EAD));
    EXPECT_EQ(nfc("e" + utf8(0x0301) + utf8(0x0327)), utf8(0x0229) + utf8(0x0301));
}

TEST(Nfc, BlockedMarkStaysSeparate) {
    EXPECT_EQ(nfc("a" + utf8(0x0301) + utf8(0x0301)), utf8(0xE1) + utf8(0x0301));
    EXPECT_EQ(nfc(utf8(0x1E9B) + utf8(0x0323)), utf8(0x1E9B) + utf8(0x0323));
}

TEST(Nfc, InvalidBytesPassThroughAndBlockComposition) {
    EXPECT_EQ(nfc("\xFF"), "\xFF");
    EXPECT_EQ(nfc("e\xFF\xCC\x81"), "e\xFF\xCC\x81");
    EXPECT_EQ(nfc("\xC3 e\xCC\x81 \xE2\x82"), "\xC3 \xC3\xA9 \xE2\x82");
    EXPECT_EQ(nfc("\xED\xA0\x80"), "\xED\xA0\x80");
}

TEST(Nfc, AsciiAndAlreadyComposedTextIsUnchanged) {
    EXPECT_EQ(nfc(""), "");
    EXPECT_EQ(nfc("Hello, world!\r\n"), "Hello, world!\r\n");
    std::string composed = "caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80";
    EXPECT_EQ(nfc(composed), composed);
}

// Expected values from Python's unicodedata.normalize("NFD", ...) and str.lower(), Unicode 14.
TEST(Nfd, DecomposesRecursivelyAndOrdersMarks) {
    using V = std::vector<uint32_t>;
    EXPECT_EQ(nfd({0xE9}), (V{0x65, 0x301}));                       // é
    EXPECT_EQ(nfd({0x1E69}), (V{0x73, 0x323, 0x307}));              // ṩ: two steps
    EXPECT_EQ(nfd({0x61, 0x301, 0x327}), (V{0x61, 0x327, 0x301}));  // cedilla (202) first
    EXPECT_EQ(nfd({0xD55C}), (V{0x1112, 0x1161, 0x11AB}));          // 한: L V T
    EXPECT_EQ(nfd({0xAC00}), (V{0x1100, 0x1161}));                  // 가: L V
    EXPECT_EQ(nfd({0xF900}), (V{0x8C48}));                          // compatibility ideograph
    EXPECT_EQ(nfd({0x41, 0xFB01}), (V{0x41, 0xFB01}));              // ﬁ is a compatibility form
}

TEST(Lowercase, FullMappingOneCharacterAtATime) {
    auto lower = [](uint32_t cp) {
        std::vector<uint32_t> out;
        append_lowercase(cp, out);
        return out;
    };
    using V = std::vector<uint32_t>;
    EXPECT_EQ(lower('A'), V{'a'});
    EXPECT_EQ(lower('a'), V{'a'});
    EXPECT_EQ(lower(0x130), (V{0x69, 0x307}));  // İ
    EXPECT_EQ(lower(0x3A3), V{0x3C3});          // Σ: σ, never the final ς
    EXPECT_EQ(lower(0x1E9E), V{0xDF});          // ẞ
    EXPECT_EQ(lower(0x1C5), V{0x1C6});          // ǅ (titlecase)
    EXPECT_EQ(lower(0x10400), V{0x10428});      // Deseret
    EXPECT_EQ(lower(0x4E2D), V{0x4E2D});
}

TEST(Categories, ControlOrFormatIsCcCfCoCsNotUnassigned) {
    for (uint32_t cp : {0x0u, 0x7u, 0x85u, 0xADu, 0x200Bu, 0xFEFFu, 0xE000u, 0xE0001u, 0x10FFFDu})
        EXPECT_TRUE(is_control_or_format(cp)) << cp;
    for (uint32_t cp : {0x20u, 0x41u, 0x378u, 0x2028u, 0x3000u, 0x1F600u})
        EXPECT_FALSE(is_control_or_format(cp)) << cp;
}
