// expr.hpp - a small expression language: tokens, a recursive-descent parser, an AST evaluated
// through virtual calls, with parse and evaluation errors thrown as exceptions.
#ifndef CXX_SAMPLE_EXPR_HPP
#define CXX_SAMPLE_EXPR_HPP

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sample {

struct Token {
    enum Kind { Number, Name, Op, LParen, RParen, Comma, Let, If, Then, Else, End } kind;
    std::string text;
    long value;
    int line, column;
};

std::vector<Token> tokenize(const std::string &source);

class Env;

class Node {
public:
    virtual ~Node();
    virtual long eval(Env &env, int depth) const = 0;
    virtual std::string show() const = 0;
    virtual int size() const { return 1; }
};

using NodePtr = std::unique_ptr<Node>;

struct Function {
    std::vector<std::string> params;
    std::shared_ptr<Node> body;
};

class Env {
public:
    explicit Env(const Env *parent = nullptr) : parent_(parent) {}
    long get(const std::string &name, int depth) const;
    void set(const std::string &name, long value) { vars_[name] = value; }
    void define(const std::string &name, Function f) { funcs_[name] = std::move(f); }
    const Function &function(const std::string &name, int depth) const;
    long calls = 0;
    const Env *root() const { return parent_ ? parent_->root() : this; }

private:
    const Env *parent_;
    std::map<std::string, long> vars_;
    std::map<std::string, Function> funcs_;
};

// Parses one statement: `let name(params) = expr`, `let name = expr`, or an expression.
class Parser {
public:
    explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}
    // Returns the expression to print, or null after a definition.
    NodePtr statement(Env &env);

private:
    NodePtr expression();
    NodePtr conditional();
    NodePtr comparison();
    NodePtr sum();
    NodePtr product();
    NodePtr unary();
    NodePtr primary();
    const Token &peek() const { return tokens_[pos_]; }
    const Token &next() { return tokens_[pos_++]; }
    bool accept(Token::Kind kind, const char *text = nullptr);
    const Token &expect(Token::Kind kind, const char *what);
    [[noreturn]] void fail(const std::string &what) const;

    std::vector<Token> tokens_;
    size_t pos_ = 0;
};

// Runs a script line by line; returns the number of lines that failed.
int run_script(const std::string &script);

} // namespace sample

#endif
