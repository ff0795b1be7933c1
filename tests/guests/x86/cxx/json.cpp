// json.cpp - a JSON reader and writer: values as a class hierarchy with virtual printing and
// lookup, a recursive-descent reader that throws ParseError with the line and column of the
// fault, and path queries that throw when a key or index is missing.
#include "errors.hpp"

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace sample {

namespace json {

class Value;
using ValuePtr = std::shared_ptr<Value>;

class Value {
public:
    virtual ~Value() {}
    virtual void write(std::ostream &o, int indent) const = 0;
    virtual std::string type() const = 0;
    // Lookups fail unless the value is a container; containers override them.
    virtual ValuePtr member(const std::string &key) const {
        throw Error(800, type() + " has no member '" + key + "'");
    }
    virtual ValuePtr element(size_t index) const {
        throw Error(801, type() + " has no element " + std::to_string(index));
    }
    virtual size_t count() const { return 0; }
    virtual long number() const { throw Error(802, type() + " is not a number"); }
    std::string text(int indent = -1) const {
        std::ostringstream o;
        write(o, indent);
        return o.str();
    }
};

class Null : public Value {
public:
    void write(std::ostream &o, int) const override { o << "null"; }
    std::string type() const override { return "null"; }
};

class Bool : public Value {
public:
    explicit Bool(bool b) : b_(b) {}
    void write(std::ostream &o, int) const override { o << (b_ ? "true" : "false"); }
    std::string type() const override { return "bool"; }
    long number() const override { return b_; }

private:
    bool b_;
};

class Number : public Value {
public:
    explicit Number(long v) : v_(v) {}
    void write(std::ostream &o, int) const override { o << v_; }
    std::string type() const override { return "number"; }
    long number() const override { return v_; }

private:
    long v_;
};

void write_string(std::ostream &o, const std::string &s) {
    o << '"';
    for (char c : s) {
        switch (c) {
        case '"':
            o << "\\\"";
            break;
        case '\\':
            o << "\\\\";
            break;
        case '\n':
            o << "\\n";
            break;
        case '\t':
            o << "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                const char *hex = "0123456789abcdef";
                o << "\\u00" << hex[(c >> 4) & 15] << hex[c & 15];
            } else {
                o << c;
            }
        }
    }
    o << '"';
}

class String : public Value {
public:
    explicit String(std::string s) : s_(std::move(s)) {}
    void write(std::ostream &o, int) const override { write_string(o, s_); }
    std::string type() const override { return "string"; }
    size_t count() const override { return s_.size(); }

private:
    std::string s_;
};

void newline(std::ostream &o, int indent) {
    if (indent < 0)
        return;
    o << '\n';
    for (int i = 0; i < indent; i++)
        o << "  ";
}

class Array : public Value {
public:
    void push(ValuePtr v) { items_.push_back(std::move(v)); }
    void write(std::ostream &o, int indent) const override {
        o << '[';
        for (size_t i = 0; i < items_.size(); i++) {
            if (i)
                o << ',';
            newline(o, indent < 0 ? -1 : indent + 1);
            items_[i]->write(o, indent < 0 ? -1 : indent + 1);
        }
        if (!items_.empty())
            newline(o, indent);
        o << ']';
    }
    std::string type() const override { return "array"; }
    ValuePtr element(size_t index) const override {
        if (index >= items_.size())
            throw Error(803, "index " + std::to_string(index) + " past the end of an array of " +
                                 std::to_string(items_.size()));
        return items_[index];
    }
    size_t count() const override { return items_.size(); }

private:
    std::vector<ValuePtr> items_;
};

class Object : public Value {
public:
    void put(const std::string &key, ValuePtr v) {
        if (!fields_.emplace(key, std::move(v)).second)
            throw Error(804, "duplicate key '" + key + "'");
        order_.push_back(key);
    }
    void write(std::ostream &o, int indent) const override {
        o << '{';
        for (size_t i = 0; i < order_.size(); i++) {
            if (i)
                o << ',';
            newline(o, indent < 0 ? -1 : indent + 1);
            write_string(o, order_[i]);
            o << (indent < 0 ? ":" : ": ");
            fields_.at(order_[i])->write(o, indent < 0 ? -1 : indent + 1);
        }
        if (!order_.empty())
            newline(o, indent);
        o << '}';
    }
    std::string type() const override { return "object"; }
    ValuePtr member(const std::string &key) const override {
        auto it = fields_.find(key);
        if (it == fields_.end())
            throw Error(805, "no key '" + key + "'");
        return it->second;
    }
    size_t count() const override { return fields_.size(); }

private:
    std::map<std::string, ValuePtr> fields_;
    std::vector<std::string> order_;
};

class Reader {
public:
    explicit Reader(const std::string &text) : text_(text) {}

    ValuePtr document() {
        ValuePtr v = value(0);
        skip();
        if (pos_ != text_.size())
            fail("text after the document");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string &what) const {
        int line = 1, column = 1;
        for (size_t i = 0; i < pos_ && i < text_.size(); i++) {
            if (text_[i] == '\n') {
                line++;
                column = 1;
            } else {
                column++;
            }
        }
        throw ParseError(line, column, what);
    }

    void skip() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t'))
            pos_++;
    }

    bool literal(const char *word) {
        std::string w(word);
        if (text_.compare(pos_, w.size(), w) != 0)
            return false;
        pos_ += w.size();
        return true;
    }

    ValuePtr value(int depth) {
        Sentry guard(depth == 0 ? "doc" : "v" + std::to_string(depth));
        if (depth > 20)
            fail("nesting deeper than 20");
        skip();
        if (pos_ >= text_.size())
            fail("unexpected end of text");
        char c = text_[pos_];
        if (c == '{')
            return object(depth);
        if (c == '[')
            return array(depth);
        if (c == '"')
            return std::make_shared<String>(string());
        if (c == '-' || (c >= '0' && c <= '9'))
            return number();
        if (literal("true"))
            return std::make_shared<Bool>(true);
        if (literal("false"))
            return std::make_shared<Bool>(false);
        if (literal("null"))
            return std::make_shared<Null>();
        fail(std::string("unexpected '") + c + "'");
    }

    ValuePtr number() {
        size_t start = pos_;
        if (text_[pos_] == '-')
            pos_++;
        while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9')
            pos_++;
        std::string digits = text_.substr(start, pos_ - start);
        try {
            return std::make_shared<Number>(std::stol(digits));
        } catch (const std::out_of_range &) {
            pos_ = start;
            fail("number out of range: " + digits);
        } catch (const std::invalid_argument &) {
            pos_ = start;
            fail("not a number: " + digits);
        }
    }

    std::string string() {
        pos_++;
        std::string s;
        for (;;) {
            if (pos_ >= text_.size())
                fail("unterminated string");
            char c = text_[pos_++];
            if (c == '"')
                return s;
            if (c != '\\') {
                s += c;
                continue;
            }
            if (pos_ >= text_.size())
                fail("unterminated escape");
            char e = text_[pos_++];
            switch (e) {
            case 'n':
                s += '\n';
                break;
            case 't':
                s += '\t';
                break;
            case '"':
            case '\\':
            case '/':
                s += e;
                break;
            default:
                pos_--;
                fail(std::string("unknown escape \\") + e);
            }
        }
    }

    ValuePtr array(int depth) {
        pos_++;
        auto a = std::make_shared<Array>();
        skip();
        if (pos_ < text_.size() && text_[pos_] == ']') {
            pos_++;
            return a;
        }
        for (;;) {
            a->push(value(depth + 1));
            skip();
            if (pos_ < text_.size() && text_[pos_] == ',') {
                pos_++;
                continue;
            }
            if (pos_ < text_.size() && text_[pos_] == ']') {
                pos_++;
                return a;
            }
            fail("expected ',' or ']'");
        }
    }

    ValuePtr object(int depth) {
        pos_++;
        auto o = std::make_shared<Object>();
        skip();
        if (pos_ < text_.size() && text_[pos_] == '}') {
            pos_++;
            return o;
        }
        for (;;) {
            skip();
            if (pos_ >= text_.size() || text_[pos_] != '"')
                fail("expected a key");
            size_t at = pos_;
            std::string key = string();
            skip();
            if (pos_ >= text_.size() || text_[pos_] != ':')
                fail("expected ':'");
            pos_++;
            ValuePtr v = value(depth + 1);
            try {
                o->put(key, v);
            } catch (const Error &) {
                pos_ = at;
                fail("duplicate key '" + key + "'");
            }
            skip();
            if (pos_ < text_.size() && text_[pos_] == ',') {
                pos_++;
                continue;
            }
            if (pos_ < text_.size() && text_[pos_] == '}') {
                pos_++;
                return o;
            }
            fail("expected ',' or '}'");
        }
    }

    const std::string &text_;
    size_t pos_ = 0;
};

// `a.b.3.c`: members by name, elements by number.
ValuePtr query(ValuePtr v, const std::string &path) {
    std::istringstream parts(path);
    std::string part;
    while (std::getline(parts, part, '.')) {
        if (!part.empty() && part[0] >= '0' && part[0] <= '9')
            v = v->element(std::stoul(part));
        else
            v = v->member(part);
    }
    return v;
}

} // namespace json

void json_demo() {
    out() << "== json\n";
    const std::string doc = "{\"name\": \"rpt\", \"version\": 16, \"hosts\": [\"x86-64\", \"aarch64\", "
                            "\"loongarch64\"],\n \"guests\": {\"x86\": {\"bits\": 32, \"pe\": true}, "
                            "\"ppc\": {\"bits\": 32, \"dol\": true}},\n \"empty\": [], \"nothing\": null,"
                            " \"escaped\": \"tab\\there \\\"quoted\\\"\"}";
    json::ValuePtr root;
    try {
        root = json::Reader(doc).document();
    } catch (const ParseError &e) {
        out() << "  unexpected: " << e.what() << "\n";
        return;
    }
    Trace::take();
    out() << root->text(0) << "\n";
    out() << "  compact: " << root->text() << "\n";
    const char *const paths[] = {"name",      "hosts.1",    "guests.x86.bits", "guests.ppc.pe", "hosts.7",
                                 "version.x", "empty.0",    "nothing",         "hosts",         "guests.x86",
                                 "escaped",   "guests.arm", "version"};
    for (const char *p : paths) {
        try {
            json::ValuePtr v = json::query(root, p);
            out() << "  " << p << " = " << v->text() << " (" << v->type() << ", " << v->count() << ")";
            try {
                long n = v->number();
                out() << " number " << n;
            } catch (const Error &e) {
                out() << " [" << e.code() << "]";
            }
            out() << "\n";
        } catch (const Error &e) {
            out() << "  " << p << ": error " << e.code() << ": " << e.what() << "\n";
        }
    }
    const char *const bad[] = {
        "[1, 2,, 3]",       "{\"a\": 1, \"a\": 2}", "[1, 2",           "{\"k\" 1}",    "\"open",
        "[99999999999999999999]", "tru",           "[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]", "{\"x\": \"\\q\"}",
        "[1] 2",            "{\n  \"a\": [\n    1,\n    @\n  ]\n}", "[-]",
    };
    for (const char *b : bad) {
        try {
            json::ValuePtr v = json::Reader(b).document();
            out() << "  parsed: " << v->text() << "\n";
        } catch (const ParseError &e) {
            std::string trace = Trace::take();
            out() << "  " << e.kind() << " " << e.code() << " (" << e.line() << ":" << e.column() << "): " << e.what()
                  << " {" << trace.substr(0, 60) << (trace.size() > 60 ? "..." : "") << "}\n";
        }
    }
}

} // namespace sample
