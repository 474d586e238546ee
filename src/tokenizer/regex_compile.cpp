// The compiler of the pre-tokenizers' regular expressions: a recursive-descent parser to a
// syntax tree, then instructions for the matcher in regex.cpp.
#include <algorithm>
#include <array>
#include <utility>

#include "common/error.h"
#include "tokenizer/regex_program.h"

namespace vkllm::tokenizer::regex_detail {

namespace {

uint32_t properties_slow(uint32_t cp) {
    uint32_t p = bit(category(cp));
    if (is_whitespace(cp)) p |= kWhite;
    if (is_han(cp)) p |= kHan;
    return p;
}

constexpr size_t kMaxInstructions = 1 << 16;
constexpr int kMaxNesting = 64;

// The pattern's syntax tree, compiled to instructions right away.
struct Node {
    enum Kind { Empty, Atom, Concat, Alt, Repeat, Look, End, WordBoundary } kind = Empty;
    uint32_t cls = 0;  // Atom: index into the classes
    std::vector<Node> kids;
    uint32_t min = 1, max = 1;
    bool possessive = false, negative = false;
};

class Parser {
  public:
    Parser(std::string_view pattern, std::vector<CharClass> &classes)
        : s_(pattern), classes_(classes) {}

    Node parse() {
        Node n = alternation(0, false);
        if (pos_ < s_.size()) error("unbalanced ')'");
        return n;
    }

  private:
    [[noreturn]] void error(const char *what) const {
        fail(VKLLM_ERR_INTERNAL, "regex: %s at byte %zu of \"%.*s\"", what, pos_, int(s_.size()),
             s_.data());
    }
    bool at_end() const { return pos_ >= s_.size(); }
    bool peek(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
    bool eat(char c) {
        if (!peek(c)) return false;
        ++pos_;
        return true;
    }
    bool eat(std::string_view w) {
        if (s_.compare(pos_, w.size(), w) != 0) return false;
        pos_ += w.size();
        return true;
    }
    uint32_t next_cp() {
        if (at_end()) error("unexpected end");
        Utf8Char c = utf8_decode(s_, pos_);
        pos_ += c.len;
        return c.cp;
    }
    uint32_t add(CharClass c) {
        classes_.push_back(std::move(c));
        return uint32_t(classes_.size() - 1);
    }
    static Node atom(uint32_t cls) {
        Node n;
        n.kind = Node::Atom;
        n.cls = cls;
        return n;
    }

    Node alternation(int depth, bool ignore_case) {
        if (depth > kMaxNesting) error("groups nested too deeply");
        Node alt;
        alt.kind = Node::Alt;
        alt.kids.push_back(sequence(depth, ignore_case));
        while (eat('|'))
            alt.kids.push_back(sequence(depth, ignore_case));
        return alt.kids.size() == 1 ? std::move(alt.kids[0]) : alt;
    }

    Node sequence(int depth, bool ignore_case) {
        Node seq;
        seq.kind = Node::Concat;
        while (!at_end() && !peek('|') && !peek(')'))
            seq.kids.push_back(quantified(depth, ignore_case));
        return seq;
    }

    Node quantified(int depth, bool ignore_case) {
        Node n = primary(depth, ignore_case);
        uint32_t min, max;
        if (eat('?')) {
            min = 0, max = 1;
        } else if (eat('*')) {
            min = 0, max = kUnbounded;
        } else if (eat('+')) {
            min = 1, max = kUnbounded;
        } else if (peek('{') && counted(min, max)) {
        } else {
            return n;
        }
        if (n.kind == Node::Look || n.kind == Node::End || n.kind == Node::WordBoundary)
            error("quantified assertion");
        if (eat('?')) error("lazy quantifiers are not supported");
        Node r;
        r.kind = Node::Repeat;
        r.min = min;
        r.max = max;
        r.possessive = eat('+');
        if (r.possessive && n.kind != Node::Atom)
            error("possessive quantifiers apply to one character or class only");
        r.kids.push_back(std::move(n));
        return r;
    }

    // {n}, {n,}, {n,m}; anything else is a literal '{'.
    bool counted(uint32_t &min, uint32_t &max) {
        size_t save = pos_;
        ++pos_;
        auto number = [&](uint32_t &v) {
            size_t start = pos_;
            v = 0;
            while (!at_end() && s_[pos_] >= '0' && s_[pos_] <= '9') {
                v = v * 10 + uint32_t(s_[pos_++] - '0');
                if (v > 1000) error("repeat count above 1000");
            }
            return pos_ > start;
        };
        if (number(min)) {
            max = min;
            if (eat(',')) {
                if (!number(max)) max = kUnbounded;
            }
            if (eat('}')) {
                if (max < min) error("repeat range with max < min");
                return true;
            }
        }
        pos_ = save;
        return false;
    }

    Node primary(int depth, bool ignore_case) {
        if (eat("(?:")) return group(depth, ignore_case);
        if (eat("(?i:")) return group(depth, true);
        if (eat("(?=") || eat("(?!")) {
            Node n;
            n.kind = Node::Look;
            n.negative = s_[pos_ - 1] == '!';
            n.kids.push_back(group(depth, ignore_case));
            return n;
        }
        if (eat("(?")) error("unsupported group");
        if (eat('(')) return group(depth, ignore_case);
        if (eat('$')) {
            Node n;
            n.kind = Node::End;
            return n;
        }
        if (eat("\\b")) {
            Node n;
            n.kind = Node::WordBoundary;
            return n;
        }
        if (peek('*') || peek('+') || peek('?')) error("nothing to repeat");
        CharClass c;
        c.ignore_case = ignore_case;
        if (eat('[')) {
            c = bracket(depth, ignore_case);
        } else if (eat('.')) {
            c.ranges = {{'\n', '\n'}};
            c.negated = true;
        } else if (eat('\\')) {
            escape(c, false);
        } else {
            uint32_t cp = next_cp();
            c.ranges = {{cp, cp}};
        }
        if (ignore_case) {
            // Folded input meets folded literals.
            for (size_t i = 0, n = c.ranges.size(); i < n; ++i)
                if (c.ranges[i].first == c.ranges[i].second) {
                    uint32_t f = fold(c.ranges[i].first);
                    c.ranges.push_back({f, f});
                }
        }
        return atom(add(std::move(c)));
    }

    Node group(int depth, bool ignore_case) {
        Node n = alternation(depth + 1, ignore_case);
        if (!eat(')')) error("missing ')'");
        return n;
    }

    // After '\': adds the escape's code points to c. In a class, \b is a backspace.
    void escape(CharClass &c, bool in_class) {
        uint32_t e = next_cp();
        auto props = [&](uint32_t mask, bool negated) {
            if (negated)
                c.none_props.push_back(mask);
            else
                c.any_props |= mask;
        };
        switch (e) {
            case 's':
            case 'S':
                return props(kWhite, e == 'S');
            case 'd':
            case 'D':
                return props(bit(Category::Nd), e == 'D');
            case 'w':
            case 'W':
                return props(kWord, e == 'W');
            case 'p':
            case 'P':
                return props(property(), e == 'P');
        }
        uint32_t cp = e;
        switch (e) {
            case 'r':
                cp = '\r';
                break;
            case 'n':
                cp = '\n';
                break;
            case 't':
                cp = '\t';
                break;
            case 'f':
                cp = '\f';
                break;
            case 'v':
                cp = '\v';
                break;
            case 'b':
                if (!in_class) error("misplaced \\b");
                cp = '\b';
                break;
            case 'x': {
                // \xHH or \x{H...}
                bool braced = eat('{');
                cp = 0;
                for (int i = 0; braced ? !eat('}') : i < 2; ++i) {
                    uint32_t h = next_cp();
                    uint32_t v = h >= '0' && h <= '9'   ? h - '0'
                                 : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                 : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                        : 16;
                    if (v == 16 || i == 6) error("bad \\x escape");
                    cp = cp * 16 + v;
                }
                if (cp > 0x10FFFF) error("\\x escape above U+10FFFF");
                break;
            }
            default:
                if (e < 128 &&
                    ((e >= '0' && e <= '9') || (e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')))
                    error("unsupported escape");
        }
        c.ranges.push_back({cp, cp});
    }

    uint32_t property() {
        if (!eat('{')) error("\\p needs {...}");
        size_t start = pos_;
        while (!at_end() && s_[pos_] != '}')
            ++pos_;
        if (!eat('}')) error("unterminated \\p{");
        std::string_view name = s_.substr(start, pos_ - 1 - start);
        static const std::pair<std::string_view, uint32_t> names[] = {
            {"L", kLetters},
            {"Lu", bit(Category::Lu)},
            {"Ll", bit(Category::Ll)},
            {"Lt", bit(Category::Lt)},
            {"Lm", bit(Category::Lm)},
            {"Lo", bit(Category::Lo)},
            {"M", kMarks},
            {"Mn", bit(Category::Mn)},
            {"Mc", bit(Category::Mc)},
            {"Me", bit(Category::Me)},
            {"N", kNumbers},
            {"Nd", bit(Category::Nd)},
            {"Nl", bit(Category::Nl)},
            {"No", bit(Category::No)},
            {"P", kPunctuation},
            {"Pc", bit(Category::Pc)},
            {"Pd", bit(Category::Pd)},
            {"Ps", bit(Category::Ps)},
            {"Pe", bit(Category::Pe)},
            {"Pi", bit(Category::Pi)},
            {"Pf", bit(Category::Pf)},
            {"Po", bit(Category::Po)},
            {"S", kSymbols},
            {"Sm", bit(Category::Sm)},
            {"Sc", bit(Category::Sc)},
            {"Sk", bit(Category::Sk)},
            {"So", bit(Category::So)},
            {"Han", kHan},
        };
        for (const auto &[n, mask] : names)
            if (n == name) return mask;
        error("unknown property");
    }

    // After '[': the class up to its ']'.
    CharClass bracket(int depth, bool ignore_case) {
        if (depth > kMaxNesting) error("classes nested too deeply");
        CharClass c;
        c.ignore_case = ignore_case;
        c.negated = eat('^');
        for (bool first = true;; first = false) {
            if (at_end()) error("unterminated class");
            if (!first && eat(']')) break;  // a leading ']' is literal
            if (eat("&&")) {
                CharClass rest = eat('[') ? bracket(depth + 1, ignore_case) : until_bracket(depth);
                c.all_of.push_back(std::move(rest));
                continue;
            }
            if (eat('[')) {
                c.nested.push_back(bracket(depth + 1, ignore_case));
                continue;
            }
            uint32_t lo;
            if (eat('\\')) {
                CharClass e;
                escape(e, true);
                if (e.ranges.size() != 1 || e.any_props || !e.none_props.empty()) {
                    c.any_props |= e.any_props;
                    for (uint32_t m : e.none_props)
                        c.none_props.push_back(m);
                    for (auto r : e.ranges)
                        c.ranges.push_back(r);
                    continue;
                }
                lo = e.ranges[0].first;
            } else {
                lo = next_cp();
            }
            uint32_t hi = lo;
            if (peek('-') && pos_ + 1 < s_.size() && s_[pos_ + 1] != ']') {
                ++pos_;
                if (eat('\\')) {
                    CharClass e;
                    escape(e, true);
                    if (e.ranges.size() != 1 || e.any_props || !e.none_props.empty())
                        error("class range to a class");
                    hi = e.ranges[0].first;
                } else {
                    hi = next_cp();
                }
                if (hi < lo) error("class range out of order");
            }
            c.ranges.push_back({lo, hi});
        }
        return c;
    }

    // The right operand of && without brackets: the rest of the enclosing class, whose ']'
    // stays for the caller.
    CharClass until_bracket(int depth) {
        CharClass c;
        while (!peek(']')) {
            if (at_end()) error("unterminated class");
            if (eat('[')) {
                c.nested.push_back(bracket(depth + 1, false));
            } else if (eat('\\')) {
                escape(c, true);
            } else {
                uint32_t cp = next_cp();
                c.ranges.push_back({cp, cp});
            }
        }
        return c;
    }

    std::string_view s_;
    size_t pos_ = 0;
    std::vector<CharClass> &classes_;
};

bool nullable(const Node &n) {
    switch (n.kind) {
        case Node::Atom:
            return false;
        case Node::Concat:
            return std::all_of(n.kids.begin(), n.kids.end(), nullable);
        case Node::Alt:
            return std::any_of(n.kids.begin(), n.kids.end(), nullable);
        case Node::Repeat:
            return n.min == 0 || nullable(n.kids[0]);
        default:
            return true;
    }
}

class Compiler {
  public:
    explicit Compiler(Regex::Program &p) : p_(p), code_(p.code) {}

    void node(const Node &n) {
        switch (n.kind) {
            case Node::Empty:
                return;
            case Node::Atom:
                return (void)emit({Op::Class, false, n.cls});
            case Node::Concat:
                for (const Node &k : n.kids)
                    node(k);
                return;
            case Node::Alt: {
                std::vector<size_t> jumps;
                for (size_t i = 0; i < n.kids.size(); ++i) {
                    size_t split = SIZE_MAX;
                    if (i + 1 < n.kids.size()) split = guarded_split(n.kids[i]);
                    if (split != SIZE_MAX) code_[split].x = here();
                    node(n.kids[i]);
                    if (i + 1 < n.kids.size()) jumps.push_back(emit({Op::Jump}));
                    if (split != SIZE_MAX) code_[split].y = here();
                }
                for (size_t j : jumps)
                    code_[j].x = here();
                return;
            }
            case Node::Repeat:
                return repeat(n);
            case Node::Look: {
                size_t look = emit({Op::Look, n.negative});
                code_[look].x = here();
                node(n.kids[0]);
                emit({Op::Match});
                code_[look].y = here();
                return;
            }
            case Node::End:
                return (void)emit({Op::End});
            case Node::WordBoundary:
                return (void)emit({Op::WordBoundary});
        }
    }

  private:
    First first(const Node &n) const {
        First f;
        switch (n.kind) {
            case Node::Atom:
                for (uint32_t cp = 0; cp < 128; ++cp)
                    if (p_.classes[n.cls].test(cp, properties(cp)))
                        f.ascii[cp >> 6] |= uint64_t(1) << (cp & 63);
                f.non_ascii = true;
                f.nullable = false;
                break;
            case Node::Concat:
                for (const Node &k : n.kids) {
                    First g = first(k);
                    f.add(g);
                    if (!g.nullable) {
                        f.nullable = false;
                        break;
                    }
                }
                break;
            case Node::Alt:
                f.nullable = false;
                for (const Node &k : n.kids) {
                    First g = first(k);
                    f.add(g);
                    f.nullable = f.nullable || g.nullable;
                }
                break;
            case Node::Repeat:
                f = first(n.kids[0]);
                f.nullable = f.nullable || n.min == 0;
                break;
            default:  // assertions consume nothing: what follows them decides
                break;
        }
        return f;
    }

    // A Split whose first branch is `taken`, guarded by what can start it.
    size_t guarded_split(const Node &taken) {
        First f = first(taken);
        Inst split{Op::Split};
        if (!f.nullable) {
            p_.guards.push_back(f);
            split.min = uint32_t(p_.guards.size());
        }
        return emit(split);
    }

    size_t here() const { return code_.size(); }
    size_t emit(Inst i) {
        if (code_.size() >= kMaxInstructions) fail(VKLLM_ERR_INTERNAL, "regex: pattern too large");
        code_.push_back(i);
        return code_.size() - 1;
    }

    void repeat(const Node &n) {
        const Node &body = n.kids[0];
        if (body.kind == Node::Atom) {
            Inst i{Op::Repeat, n.possessive, body.cls};
            i.min = n.min;
            i.max = n.max;
            emit(i);
            return;
        }
        // A loop whose body can match nothing would never end.
        if (n.max > 1 && nullable(body))
            fail(VKLLM_ERR_INTERNAL, "regex: a repeated group that can match nothing");
        for (uint32_t i = 0; i < n.min; ++i)
            node(body);
        if (n.max == kUnbounded) {
            size_t split = guarded_split(body);
            code_[split].x = here();
            node(body);
            emit({Op::Jump, false, uint32_t(split)});
            code_[split].y = here();
            return;
        }
        std::vector<size_t> splits;
        for (uint32_t i = n.min; i < n.max; ++i) {
            size_t split = guarded_split(body);
            code_[split].x = here();
            splits.push_back(split);
            node(body);
        }
        for (size_t s : splits)
            code_[s].y = here();
    }

    Regex::Program &p_;
    std::vector<Inst> &code_;
};

}  // namespace

uint32_t properties(uint32_t cp) {
    static const std::array<uint32_t, 128> ascii = [] {
        std::array<uint32_t, 128> a{};
        for (uint32_t c = 0; c < 128; ++c)
            a[c] = properties_slow(c);
        return a;
    }();
    return cp < 128 ? ascii[cp] : properties_slow(cp);
}

void compile(std::string_view pattern, Regex::Program &p) {
    Node tree = Parser(pattern, p.classes).parse();
    Compiler compiler(p);
    compiler.node(tree);
    p.code.push_back({Op::Match});
    for (const CharClass &c : p.classes) {
        std::array<uint64_t, 2> bits{};
        for (uint32_t cp = 0; cp < 128; ++cp)
            if (c.test(cp, properties(cp))) bits[cp >> 6] |= uint64_t(1) << (cp & 63);
        p.ascii.push_back(bits);
    }
}

}  // namespace vkllm::tokenizer::regex_detail
