// A small JSON reader for test data files (reference vectors). Throws std::runtime_error on
// malformed input: test data is trusted, but a broken file should fail loudly.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

struct Json {
    enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
    bool b = false;
    double num = 0;
    std::string str;
    std::vector<Json> arr;
    std::map<std::string, Json> obj;

    const Json &operator[](const std::string &key) const {
        auto it = obj.find(key);
        if (it == obj.end()) throw std::runtime_error("json: no key " + key);
        return it->second;
    }
    bool has(const std::string &key) const { return obj.count(key) != 0; }
    std::vector<int32_t> ints() const {
        std::vector<int32_t> v;
        for (const Json &j : arr)
            v.push_back(int32_t(j.num));
        return v;
    }

    static Json parse(const std::string &text) {
        size_t pos = 0;
        Json j = value(text, pos);
        skip(text, pos);
        if (pos != text.size()) throw std::runtime_error("json: trailing data");
        return j;
    }
    static Json load(const std::string &path) {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw std::runtime_error("json: cannot open " + path);
        std::stringstream ss;
        ss << in.rdbuf();
        return parse(ss.str());
    }

  private:
    static void skip(const std::string &t, size_t &p) {
        while (p < t.size() && (t[p] == ' ' || t[p] == '\n' || t[p] == '\r' || t[p] == '\t'))
            ++p;
    }
    static void expect(const std::string &t, size_t &p, char c) {
        skip(t, p);
        if (p >= t.size() || t[p] != c)
            throw std::runtime_error(std::string("json: expected ") + c);
        ++p;
    }
    static void append_utf8(std::string &out, uint32_t cp) {
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6)), out += char(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += char(0xE0 | (cp >> 12)), out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        } else {
            out += char(0xF0 | (cp >> 18)), out += char(0x80 | ((cp >> 12) & 0x3F));
            out += char(0x80 | ((cp >> 6) & 0x3F)), out += char(0x80 | (cp & 0x3F));
        }
    }
    static uint32_t hex4(const std::string &t, size_t &p) {
        if (p + 4 > t.size()) throw std::runtime_error("json: short \\u escape");
        uint32_t v = uint32_t(std::stoul(t.substr(p, 4), nullptr, 16));
        p += 4;
        return v;
    }
    static std::string string(const std::string &t, size_t &p) {
        expect(t, p, '"');
        std::string out;
        while (p < t.size() && t[p] != '"') {
            char c = t[p++];
            if (c != '\\') {
                out += c;
                continue;
            }
            char e = t[p++];
            switch (e) {
                case 'n':
                    out += '\n';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'u': {
                    uint32_t cp = hex4(t, p);
                    if (cp >= 0xD800 && cp < 0xDC00 && t.compare(p, 2, "\\u") == 0) {
                        p += 2;
                        uint32_t lo = hex4(t, p);
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    }
                    append_utf8(out, cp);
                    break;
                }
                default:
                    out += e;
            }
        }
        expect(t, p, '"');
        return out;
    }
    static Json value(const std::string &t, size_t &p) {
        skip(t, p);
        if (p >= t.size()) throw std::runtime_error("json: unexpected end");
        Json j;
        char c = t[p];
        if (c == '{') {
            j.kind = Object;
            ++p;
            skip(t, p);
            if (t[p] == '}') return ++p, j;
            for (;;) {
                std::string k = string(t, p);
                expect(t, p, ':');
                j.obj[k] = value(t, p);
                skip(t, p);
                if (t[p] == ',') {
                    ++p;
                    continue;
                }
                expect(t, p, '}');
                return j;
            }
        }
        if (c == '[') {
            j.kind = Array;
            ++p;
            skip(t, p);
            if (t[p] == ']') return ++p, j;
            for (;;) {
                j.arr.push_back(value(t, p));
                skip(t, p);
                if (t[p] == ',') {
                    ++p;
                    continue;
                }
                expect(t, p, ']');
                return j;
            }
        }
        if (c == '"') {
            j.kind = String;
            j.str = string(t, p);
            return j;
        }
        if (t.compare(p, 4, "true") == 0) return p += 4, j.kind = Bool, j.b = true, j;
        if (t.compare(p, 5, "false") == 0) return p += 5, j.kind = Bool, j;
        if (t.compare(p, 4, "null") == 0) return p += 4, j;
        size_t used = 0;
        j.kind = Number;
        j.num = std::stod(t.substr(p, 40), &used);
        p += used;
        return j;
    }
};
