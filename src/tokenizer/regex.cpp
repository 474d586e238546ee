#include "tokenizer/regex.h"

#include <algorithm>
#include <array>
#include <utility>

#include "common/error.h"
#include "tokenizer/regex_program.h"
#include "tokenizer/unicode.h"

namespace vkllm::tokenizer {

using namespace regex_detail;

namespace {

struct Frame {
    enum Kind : uint32_t { Alt, Retry, Exhausted } kind;
    uint32_t pc;
    size_t pos;    // Retry, Exhausted: where the run starts
    size_t count;  // Retry: code points to take next; Exhausted: where the run ends
};

// A Repeat's known failures: entered anywhere in [lo, hi], it fails. Valid only for the matcher
// whose generation wrote it.
struct MemoEntry {
    uint64_t generation = 0;
    size_t lo = 0, hi = 0;
};

// The matchers' memory, kept per thread so that matching the many small pieces of a text
// allocates nothing.
struct Scratch {
    std::vector<MemoEntry> memo;
    std::vector<Frame> stack;
    uint64_t generation = 0;
};
thread_local Scratch scratch;

// The backtracking matcher. A Repeat that gives back one code point at a time is one stack
// entry, not one per code point. Every failure is a pure function of (instruction, position)
// (nothing is captured), which the memo uses: when an unbounded Repeat starting at p fails with
// its run ending at q, a later try of it from any position in [p, q] can only try continuations
// already known to fail. That keeps patterns such as \s+$ linear over long runs.
class Matcher {
  public:
    Matcher(const Regex::Program &p, const CodePoints &t, size_t begin, size_t end)
        : p_(p),
          t_(t),
          begin_(begin),
          end_(end),
          memo_(scratch.memo),
          stack_(scratch.stack),
          generation_(++scratch.generation),
          budget_(std::max<uint64_t>(uint64_t(end - begin) * 4096, uint64_t(1) << 26)) {
        if (memo_.size() < p.code.size()) memo_.resize(p.code.size());
    }

    // The end of the match of the instructions from pc at pos, or SIZE_MAX.
    size_t run(size_t pc, size_t pos, bool non_empty) {
        size_t start = pos, base = stack_.size();
        for (;;) {
            if (--budget_ == 0)
                fail(VKLLM_ERR_UNSUPPORTED, "pre-tokenizer: the pattern needs too many steps");
            const Inst &in = p_.code[pc];
            bool ok = true;
            switch (in.op) {
                case Op::Class:
                    ok = pos < end_ && p_.test(in.x, t_.cp(pos), t_.props(pos));
                    ++pos, ++pc;
                    break;
                case Op::Repeat:
                    ok = repeat(pc, pos);
                    break;
                case Op::Split:
                    if (in.min && (pos >= end_ || !p_.guards[in.min - 1].admits(t_.cp(pos)))) {
                        pc = in.y;
                        break;
                    }
                    stack_.push_back({Frame::Alt, uint32_t(in.y), pos, 0});
                    pc = in.x;
                    break;
                case Op::Jump:
                    pc = in.x;
                    break;
                case Op::Look: {
                    bool found = run(in.x, pos, false) != SIZE_MAX;
                    ok = found != in.flag;
                    pc = in.y;
                    break;
                }
                case Op::End:
                    ok = pos == end_;
                    ++pc;
                    break;
                case Op::WordBoundary: {
                    bool before = pos > begin_ && (t_.props(pos - 1) & kWord);
                    bool after = pos < end_ && (t_.props(pos) & kWord);
                    ok = before != after;
                    ++pc;
                    break;
                }
                case Op::Match:
                    if (!(non_empty && pos == start)) {
                        stack_.resize(base);
                        return pos;
                    }
                    ok = false;
                    break;
            }
            if (ok) continue;
            if (!backtrack(base, pc, pos)) return SIZE_MAX;
        }
    }

  private:
    // Runs the Repeat at pc from pos; on success pc and pos move past what it takes.
    bool repeat(size_t &pc, size_t &pos) {
        const Inst &in = p_.code[pc];
        bool memo = in.max == kUnbounded && !in.flag;
        const MemoEntry &known = memo_[pc];
        if (memo && known.generation == generation_ && pos >= known.lo && pos <= known.hi)
            return false;
        size_t n = 0;
        while (pos + n < end_ && n < in.max && p_.test(in.x, t_.cp(pos + n), t_.props(pos + n)))
            ++n;
        if (n < in.min) return false;
        if (!in.flag && n > in.min) {
            if (memo) stack_.push_back({Frame::Exhausted, uint32_t(pc), pos, pos + n});
            stack_.push_back({Frame::Retry, uint32_t(pc), pos, n - 1});
        }
        pos += n;
        ++pc;
        return true;
    }

    bool backtrack(size_t base, size_t &pc, size_t &pos) {
        while (stack_.size() > base) {
            Frame f = stack_.back();
            stack_.pop_back();
            switch (f.kind) {
                case Frame::Alt:
                    pc = f.pc, pos = f.pos;
                    return true;
                case Frame::Retry:
                    if (f.count > p_.code[f.pc].min)
                        stack_.push_back({Frame::Retry, f.pc, f.pos, f.count - 1});
                    pc = f.pc + 1, pos = f.pos + f.count;
                    return true;
                case Frame::Exhausted:
                    memo_[f.pc] = {generation_, f.pos, f.count};
                    break;
            }
        }
        return false;
    }

    const Regex::Program &p_;
    const CodePoints &t_;
    size_t begin_, end_;
    std::vector<MemoEntry> &memo_;
    std::vector<Frame> &stack_;
    uint64_t generation_;
    uint64_t budget_;
};

}  // namespace

CodePoints::CodePoints(std::string_view utf8) {
    cps_.reserve(utf8.size());
    props_.reserve(utf8.size());
    offsets_.reserve(utf8.size() + 1);
    for (size_t pos = 0; pos < utf8.size();) {
        Utf8Char c = utf8_decode(utf8, pos);
        cps_.push_back(c.cp);
        props_.push_back(properties(c.cp));
        offsets_.push_back(pos);
        pos += c.len;
    }
    offsets_.push_back(utf8.size());
}

Regex::Regex(std::string_view pattern) : program_(std::make_unique<Program>()) {
    regex_detail::compile(pattern, *program_);
}

Regex::~Regex() = default;
Regex::Regex(Regex &&) noexcept = default;
Regex &Regex::operator=(Regex &&) noexcept = default;

void Regex::find_all(const CodePoints &text, size_t begin, size_t end,
                     std::vector<Match> &out) const {
    Matcher m(*program_, text, begin, end);
    bool non_empty = false;  // after an empty match, the next one may not be empty at that spot
    for (size_t from = begin; from <= end;) {
        size_t start = from, stop = SIZE_MAX;
        for (; start <= end; ++start, non_empty = false) {
            // A try that refuses an empty match fails where others need not: it gets a memo
            // of its own.
            stop = non_empty ? Matcher(*program_, text, begin, end).run(0, start, true)
                             : m.run(0, start, false);
            if (stop != SIZE_MAX) break;
        }
        if (stop == SIZE_MAX) return;
        out.push_back({start, stop});
        non_empty = stop == start;
        from = stop;
    }
}

}  // namespace vkllm::tokenizer
