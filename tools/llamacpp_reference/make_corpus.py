#!/usr/bin/env python3
"""Writes tests/data/tokenizer_corpus.json: vkllm's own tokenizer test strings, which go with
the 107 of tests/data/tokenizer/reference-corpus.json (none repeated from there) to make the
corpus tokenize.mjs runs through llama.cpp. Runs of digits, spaces and repeats are built here so
that every length is covered; the rest is written out.

    python3 tools/llamacpp_reference/make_corpus.py [--shared tests/data/tokenizer/reference-corpus.json] [OUT]
"""

import argparse
import json
import os

MIXED = [
    "東京は日本の首都です。人口は約1400万人。",
    "我爱自然语言处理，也喜欢机器学习！",
    "繁體中文與简体中文混合：電腦／电脑",
    "한국어 문장입니다. 토크나이저가 잘 작동하나요?",
    "서울특별시 강남구 테헤란로 123",
    "カタカナとひらがなと漢字がまざった文章です",
    "ｆｕｌｌｗｉｄｔｈ　ＡＳＣＩＩ　１２３",
    "مرحبا بالعالم، كيف حالك اليوم؟",
    "السلام عليكم ورحمة الله وبركاته ١٢٣٤٥",
    "English mixed with العربية and back again",
    "नमस्ते, आप कैसे हैं? मैं ठीक हूँ।",
    "हिन्दी में संख्या १२३ और English words",
    "ภาษาไทยไม่มีช่องว่างระหว่างคำ",
    "สวัสดีครับ 123 ขอบคุณมาก",
    "Привет, мир! Как дела? Всё хорошо.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "ПРОПИСНЫЕ БУКВЫ И строчные буквы",
    "Καλημέρα κόσμε! Η γλώσσα είναι ελληνική.",
    "ΑΒΓΔΕ αβγδε ΣΊΣΥΦΟΣ ς σ",
    "İstanbul'a gittim ve Ankara'dan döndüm.",
    "Türkiye'nin başkenti Ankara'dır; İzmir'de yaşıyorum.",
    "ŞEKER'İ ALDIM ı i İ I",
    "Ünïcödé äöü ß Straße Größe naïve façade",
    "Đà Nẵng, Việt Nam: Tiếng Việt có dấu",
    "Polski: zażółć gęślą jaźń",
    "עברית: שלום עולם 2024",
    "ქართული ენა და Հայերեն լեզու",
    "Ελληνικά, русский, 中文, عربى, हिन्दी in one line",
    "mixed数字123和English单词abc混合",
    "Zero\u200bwidth\u200cjoiner\u200dmarks and soft\u00adhyphen",
    "no\u00a0break\u00a0space and narrow\u202fno-break",
    "ideographic\u3000space　here",
    "e\u0301 a\u0300 o\u0308 n\u0303 combining accents",
    "\u212b \u00c5 A\u030a \u2126 \u03a9 ﬁ ﬂ ℌ ① ㈱",
    "\u1112\u1161\u11ab\u1100\u1173\u11af decomposed Hangul jamo",
    "Vie\u0323\u0302t Nam, o\u0302\u0301 and a\u0306\u0300",
    "\u0958\u0959 and \u0915\u093c\u0916\u093c nukta forms",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙 𝒔𝒄𝒓𝒊𝒑𝒕",
    "Ⅻ roman numeral and ½ ¾ fractions ²³",
    "vertical\x0btab and form\x0cfeed",
    "control\x01chars\x7fhere",
]

CODE = [
    "def add(a, b):\n  return a + b\n",
    "class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, x):\n        self.items.append(x)\n",
    "if x:\n        deeply()\n                deeper()\n",
    "func main() {\n\tfmt.Println(\"hello\")\n\tfor i := 0; i < 10; i++ {\n\t\tsum += i\n\t}\n}\n",
    "fn main() -> Result<(), Box<dyn Error>> {\n    let v: Vec<u8> = vec![1, 2, 3];\n    Ok(())\n}\n",
    "#include <stdio.h>\n\nint main(void) {\n  puts(\"hi\");\n  return 0;\n}\n",
    "template <typename T>\nstd::unique_ptr<T> make() { return std::make_unique<T>(); }",
    "public static void main(String[] args) {\n        System.out.println(args.length);\n}",
    "const f = async (x) => {\n  await fetch(`/api/${x}`);\n};\n",
    "let obj = { a: 1, 'b': [2, 3], \"c\": null };",
    "SELECT u.id, COUNT(*) AS n\n  FROM users u\n  JOIN orders o ON o.user_id = u.id\n GROUP BY u.id;",
    "#!/bin/bash\nset -euo pipefail\nfor f in *.txt; do\n    echo \"$f\"\ndone\n",
    "x=$((1 + 2)) && echo ${x:-default} | grep -E '^[0-9]+$'",
    "<div class=\"container\">\n  <span id='a'>&amp; &lt;tag&gt;</span>\n</div>",
    "body { margin: 0 auto; padding: 4px 8px; }\n.btn:hover { color: #ff00ff; }",
    "(defun fact (n)\n  (if (<= n 1) 1 (* n (fact (- n 1)))))",
    "main :: IO ()\nmain = mapM_ print [x * x | x <- [1..10]]",
    "    four spaces\n        eight spaces\n\tone tab\n\t\ttwo tabs\n",
    "\t\tleading tabs then text",
    "\t \t mixed tab space\t\t  ",
    "if (a) {\r\n    b();\r\n}\r\n",
    "a == b != c <= d >= e && f || g",
    "i++; j--; k += 2; l -= 3; m *= 4; n /= 5; o %= 6;",
    "arr[0][1] = map[\"key\"]->value.field;",
    "x = lambda *args, **kwargs: (args, kwargs)",
    "@decorator\ndef f(): ...",
    "# comment\n// comment\n/* block */\n-- sql\n<!-- html -->",
    "print(f\"{name!r:>10} {value:.3f}\")",
    "__init__ __main__ _private __dunder__",
    "snake_case_name camelCaseName PascalCaseName SCREAMING_CASE kebab-case",
    "std::vector<std::pair<int, std::string>>",
    "0b1111_0000 0o755 0xDEAD_BEEF 1_000_000",
]

NUMBERS = [
    "12,345.67 and 1.234.567,89",
    "3.14 2.718 1.618 0.5 .5 5.",
    "1e10 1E-10 6.022e+23 -0.0001",
    "$1,299.99 €49,90 £5 ¥1000 ₹12,34,567",
    "+1-800-555-0199 (123) 456-7890",
    "192.168.0.1 10.0.0.255 ::1 fe80::1ff:fe23:4567:890a",
    "2023-12-25 25/12/2023 12.25.2023 11:59:59.999",
    "100% 50°C 3/4 1:2 2^10 10**3",
    "v1.2.3 v10.20.30-beta.1+build.456",
    "ISBN 978-3-16-148410-0",
    "4111 1111 1111 1111",
    "٠١٢٣٤٥٦٧٨٩ ०१२३४५६७८९ ０１２３",
    "page 7 of 12, chapter 3, line 42",
    "1st 2nd 3rd 4th 21st 100th",
    "99 bottles, 98 bottles, 97 bottles",
]

CONTRACTIONS = [
    "I'm you're he's she's it's we're they're",
    "I've you've we've they've I'd you'd he'd",
    "I'll you'll she'll we'll they'll",
    "can't won't don't isn't aren't wasn't weren't",
    "I'M YOU'RE HE'S IT'S WE'RE THEY'RE",
    "I'VE YOU'D WE'LL CAN'T WON'T",
    "Don't Won't Can't I'Ll We'Ve They'Re",
    "dOn'T wE'vE tHeY'rE",
    "'s 't 're 've 'm 'll 'd",
    "'S 'T 'RE 'VE 'M 'LL 'D",
    "o'clock rock'n'roll ma'am y'all",
    "the dog's bone, the dogs' bones",
    "'twas 'tis 'em",
    "it''s double '' apostrophes",
    "Let`s use backticks and ‘single’ “double” quotes",
]

PUNCTUATION = [
    "!!!???...",
    "?!?!?!",
    "...and then... nothing...",
    "----------",
    "==========",
    "**********",
    "~~~~~ ##### $$$$$ %%%%%",
    "(((nested))) [[[brackets]]] {{{braces}}}",
    "«guillemets» „German“ 「Japanese」 『quotes』",
    "end.\nStart, middle; end: done!",
    "a—b–c-d…e",
    "<<>> <=> => -> <- :: ;; ,,",
    "@#&*^%$!",
    "。、！？「」（）",
]

MARKDOWN = [
    "# Title\n\n## Subtitle\n\nSome *emphasis* and **strong** text.",
    "- item one\n- item two\n  - nested item\n    - deeper\n",
    "1. first\n2. second\n3. third\n",
    "```python\nprint('hi')\n```\n",
    "> quoted line\n> another\n",
    "| col a | col b |\n|-------|:-----:|\n| 1     | 2     |\n",
    "[link text](https://example.com/path?x=1) and ![img](a.png)",
    "Inline `code` and ~~strike~~ and __underline__",
    "---\ntitle: front matter\ntags: [a, b]\n---\n",
]

JSON_STRINGS = [
    "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}",
    "{\n  \"name\": \"vkllm\",\n  \"version\": \"0.1.0\",\n  \"deps\": []\n}",
    "[1,2,3,4,5,6,7,8,9,10]",
    "{\"escaped\": \"line\\nbreak \\\"quote\\\" \\u00e9\"}",
    "{\n\t\"tabbed\": {\n\t\t\"deep\": 1\n\t}\n}",
    "[{\"id\":1},{\"id\":2}]",
]

URLS = [
    "https://www.example.com/a/b/c.html?query=1&other=two#frag",
    "http://localhost:8080/api/v1/users/42",
    "ftp://files.example.org/pub/README.txt",
    "mailto:someone@example.com?subject=Hello%20World",
    "user.name+tag@sub.domain.co.uk",
    "https://en.wikipedia.org/wiki/Byte_pair_encoding",
    "git@github.com:owner/repo.git",
    "file:///home/user/My%20Documents/report.pdf",
]

CHAT = [
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>",
    "<|im_start|><|im_end|>",
    "<|im_start|> spaced <|im_end|>",
    "text<|im_start|>glued<|im_end|>text",
    "<bos><start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n",
    "<start_of_turn>model\nHi there!<end_of_turn>",
    "<bos>",
    "<bos><bos>",
    "<eos> <pad> <unk> <mask>",
    "<start_of_turn> <end_of_turn>",
    "<|endoftext|>after end",
    "<|im_start|assistant",
    "< |im_start| >",
    "<start_of_image> <end_of_image>",
    "<|im_start|>user\n<bos>mixed<end_of_turn><|im_end|>",
]

EMOJI = [
    "😀😃😄😁",
    "👍🏽 👍🏿 👋🏻",
    "👨‍👩‍👧‍👦 family",
    "🏳️‍🌈 🏴‍☠️",
    "❤️ ♥ ✔️ ✅",
    "🇫🇷🇩🇪🇯🇵",
    "1️⃣ 2️⃣ #️⃣",
    "emoji😀between🎉words",
    "🧑‍💻 coding 👩🏾‍🔬 science",
    "🤖🤖🤖🤖🤖🤖🤖🤖",
]

LONG = [
    "a" * 100,
    "ab" * 60,
    "the " * 50,
    "Hello world! " * 20,
    "0" * 64,
    "-" * 80,
    "\n" * 30,
    "日本" * 40,
    "🎉" * 25,
    "abc def ghi jkl mno pqr stu vwx yz " * 8,
]


def generated():
    out = []
    digits = "1234567890" * 2
    for n in range(1, 13):
        out.append(digits[:n])
        out.append("x" + digits[:n] + " " + digits[:n][::-1] + "y")
    for n in range(2, 41):
        out.append(" " * n)
    for n in (2, 3, 5, 8, 13, 21, 40):
        out.append("word" + " " * n + "word")
        out.append(" " * n + "lead")
        out.append("trail" + " " * n)
    out += [
        " \n", "\n ", " \n ", "\t\n\t", "\n\t\n", "\r\n\r\n", " \r\n", "\r\n ", "\r \n",
        "a\r\nb\r\nc", "\r\r\n\n", "  \t  \n  \t  ", "\n\n  \n\n", "\t" * 8,
        "x \t \t y", "end of line   \n   start of line",
    ]
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(root, "tests", "data", "tokenizer",
                                                     "reference-corpus.json"))
    ap.add_argument("out", nargs="?", default=os.path.join(root, "tests", "data",
                                                          "tokenizer_corpus.json"))
    args = ap.parse_args()
    written = (MIXED + CODE + NUMBERS + CONTRACTIONS + PUNCTUATION + MARKDOWN + JSON_STRINGS
               + URLS + CHAT + EMOJI + LONG)
    shared = set(json.load(open(args.shared, encoding="utf-8")))
    unique = []
    for s in written:
        if s in shared or s in unique:
            raise SystemExit(f"duplicate string: {s!r}")
        unique.append(s)
    # A run whose length the shared corpus already has ("1234567", "  ") is tested there.
    unique += [s for s in generated() if s not in shared and s not in unique]
    doc = {
        "description": "vkllm's own tokenizer test strings: mixed scripts, code with indentation, "
                       "digit runs of length 1..12, separators, whitespace runs of 2..40, emoji, "
                       "contractions, punctuation, markdown, JSON, URLs, chat text with special-token "
                       "text, long repeats. Used together with (and never repeating) the 107 strings "
                       "of tests/data/tokenizer/reference-corpus.json.",
        "generated_by": "python3 tools/llamacpp_reference/make_corpus.py",
        "strings": unique,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print(f"{args.out}: {len(unique)} strings")


if __name__ == "__main__":
    main()
