// expr.cpp - tokenizer, parser and evaluator of the expression language (expr.hpp).
//
// Errors travel as exceptions: the tokenizer and parser throw ParseError from deep in the
// recursive descent, the evaluator throws EvalError and DivideByZero from deep in recursive
// calls of user functions (through virtual eval), and run_script catches them by base class.
#include "expr.hpp"
#include "errors.hpp"

#include <cctype>
#include <sstream>

namespace sample {

std::vector<Token> tokenize(const std::string &source) {
    std::vector<Token> tokens;
    int line = 1, column = 1;
    size_t i = 0;
    auto push = [&](Token::Kind kind, std::string text, long value, int col) {
        tokens.push_back(Token{kind, std::move(text), value, line, col});
    };
    while (i < source.size()) {
        char c = source[i];
        int start = column;
        if (c == '\n') {
            line++;
            column = 1;
            i++;
            continue;
        }
        if (std::isspace(static_cast<unsigned char>(c))) {
            i++;
            column++;
            continue;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            long v = 0;
            std::string text;
            while (i < source.size() && std::isdigit(static_cast<unsigned char>(source[i]))) {
                if (v > 100000000L)
                    throw ParseError(line, start, "number too large: " + text + "...");
                v = v * 10 + (source[i] - '0');
                text += source[i];
                i++;
                column++;
            }
            push(Token::Number, text, v, start);
            continue;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            std::string text;
            while (i < source.size() &&
                   (std::isalnum(static_cast<unsigned char>(source[i])) || source[i] == '_')) {
                text += source[i];
                i++;
                column++;
            }
            Token::Kind kind = Token::Name;
            if (text == "let")
                kind = Token::Let;
            else if (text == "if")
                kind = Token::If;
            else if (text == "then")
                kind = Token::Then;
            else if (text == "else")
                kind = Token::Else;
            push(kind, text, 0, start);
            continue;
        }
        std::string two = source.substr(i, 2);
        if (two == "==" || two == "!=" || two == "<=" || two == ">=") {
            push(Token::Op, two, 0, start);
            i += 2;
            column += 2;
            continue;
        }
        switch (c) {
        case '+':
        case '-':
        case '*':
        case '/':
        case '%':
        case '<':
        case '>':
        case '=':
            push(Token::Op, std::string(1, c), 0, start);
            break;
        case '(':
            push(Token::LParen, "(", 0, start);
            break;
        case ')':
            push(Token::RParen, ")", 0, start);
            break;
        case ',':
            push(Token::Comma, ",", 0, start);
            break;
        default: {
            std::string what = "unexpected character '";
            what += c;
            what += "'";
            throw ParseError(line, start, what);
        }
        }
        i++;
        column++;
    }
    tokens.push_back(Token{Token::End, "<end>", 0, line, column});
    return tokens;
}

Node::~Node() {}

namespace {

class Number : public Node {
public:
    explicit Number(long v) : v_(v) {}
    long eval(Env &, int) const override { return v_; }
    std::string show() const override { return std::to_string(v_); }

private:
    long v_;
};

class Variable : public Node {
public:
    explicit Variable(std::string name) : name_(std::move(name)) {}
    long eval(Env &env, int depth) const override { return env.get(name_, depth); }
    std::string show() const override { return name_; }

private:
    std::string name_;
};

class Negate : public Node {
public:
    explicit Negate(NodePtr e) : e_(std::move(e)) {}
    long eval(Env &env, int depth) const override { return -e_->eval(env, depth); }
    std::string show() const override { return "(-" + e_->show() + ")"; }
    int size() const override { return 1 + e_->size(); }

private:
    NodePtr e_;
};

class Binary : public Node {
public:
    Binary(std::string op, NodePtr l, NodePtr r) : op_(std::move(op)), l_(std::move(l)), r_(std::move(r)) {}
    long eval(Env &env, int depth) const override {
        long a = l_->eval(env, depth);
        long b = r_->eval(env, depth);
        if (op_ == "+")
            return a + b;
        if (op_ == "-")
            return a - b;
        if (op_ == "*")
            return a * b;
        if (op_ == "/" || op_ == "%") {
            if (b == 0)
                throw DivideByZero(depth);
            return op_ == "/" ? a / b : a % b;
        }
        if (op_ == "<")
            return a < b;
        if (op_ == ">")
            return a > b;
        if (op_ == "<=")
            return a <= b;
        if (op_ == ">=")
            return a >= b;
        if (op_ == "==")
            return a == b;
        if (op_ == "!=")
            return a != b;
        throw EvalError("unknown operator " + op_, depth);
    }
    std::string show() const override { return "(" + l_->show() + " " + op_ + " " + r_->show() + ")"; }
    int size() const override { return 1 + l_->size() + r_->size(); }

private:
    std::string op_;
    NodePtr l_, r_;
};

class Conditional : public Node {
public:
    Conditional(NodePtr c, NodePtr t, NodePtr e) : c_(std::move(c)), t_(std::move(t)), e_(std::move(e)) {}
    long eval(Env &env, int depth) const override {
        return c_->eval(env, depth) ? t_->eval(env, depth) : e_->eval(env, depth);
    }
    std::string show() const override {
        return "if " + c_->show() + " then " + t_->show() + " else " + e_->show();
    }
    int size() const override { return 1 + c_->size() + t_->size() + e_->size(); }

private:
    NodePtr c_, t_, e_;
};

class Call : public Node {
public:
    Call(std::string name, std::vector<NodePtr> args) : name_(std::move(name)), args_(std::move(args)) {}
    long eval(Env &env, int depth) const override {
        if (depth > 200)
            throw EvalError("recursion too deep in " + name_, depth);
        const Function &f = env.function(name_, depth);
        if (f.params.size() != args_.size()) {
            std::ostringstream s;
            s << name_ << " takes " << f.params.size() << " arguments, not " << args_.size();
            throw EvalError(s.str(), depth);
        }
        Env local(&env);
        for (size_t i = 0; i < args_.size(); i++)
            local.set(f.params[i], args_[i]->eval(env, depth));
        const_cast<Env *>(env.root())->calls++;
        try {
            return f.body->eval(local, depth + 1);
        } catch (DivideByZero &) {
            // Only the innermost call notes it; the exception goes on unchanged.
            if (depth == 0)
                Trace::note("div0-in-" + name_);
            throw;
        }
    }
    std::string show() const override {
        std::string s = name_ + "(";
        for (size_t i = 0; i < args_.size(); i++)
            s += (i ? ", " : "") + args_[i]->show();
        return s + ")";
    }
    int size() const override {
        int n = 1;
        for (const NodePtr &a : args_)
            n += a->size();
        return n;
    }

private:
    std::string name_;
    std::vector<NodePtr> args_;
};

} // namespace

long Env::get(const std::string &name, int depth) const {
    auto it = vars_.find(name);
    if (it != vars_.end())
        return it->second;
    if (parent_)
        return parent_->get(name, depth);
    throw EvalError("undefined variable " + name, depth);
}

const Function &Env::function(const std::string &name, int depth) const {
    auto it = funcs_.find(name);
    if (it != funcs_.end())
        return it->second;
    if (parent_)
        return parent_->function(name, depth);
    throw EvalError("undefined function " + name, depth);
}

void Parser::fail(const std::string &what) const {
    const Token &t = tokens_[pos_];
    throw ParseError(t.line, t.column, what + " before '" + t.text + "'");
}

bool Parser::accept(Token::Kind kind, const char *text) {
    if (peek().kind != kind || (text && peek().text != text))
        return false;
    pos_++;
    return true;
}

const Token &Parser::expect(Token::Kind kind, const char *what) {
    if (peek().kind != kind)
        fail(std::string("expected ") + what);
    return next();
}

NodePtr Parser::statement(Env &env) {
    if (accept(Token::Let)) {
        std::string name = expect(Token::Name, "a name after let").text;
        if (accept(Token::LParen)) {
            Function f;
            if (!accept(Token::RParen)) {
                do
                    f.params.push_back(expect(Token::Name, "a parameter").text);
                while (accept(Token::Comma));
                expect(Token::RParen, "')' after the parameters");
            }
            if (!accept(Token::Op, "="))
                fail("expected '='");
            f.body = expression();
            expect(Token::End, "the end of the definition");
            env.define(name, std::move(f));
            return nullptr;
        }
        if (!accept(Token::Op, "="))
            fail("expected '='");
        NodePtr value = expression();
        expect(Token::End, "the end of the definition");
        env.set(name, value->eval(env, 0));
        return nullptr;
    }
    NodePtr e = expression();
    expect(Token::End, "the end of the expression");
    return e;
}

NodePtr Parser::expression() { return conditional(); }

NodePtr Parser::conditional() {
    if (!accept(Token::If))
        return comparison();
    NodePtr c = expression();
    expect(Token::Then, "then");
    NodePtr t = expression();
    expect(Token::Else, "else");
    NodePtr e = expression();
    return NodePtr(new Conditional(std::move(c), std::move(t), std::move(e)));
}

NodePtr Parser::comparison() {
    NodePtr l = sum();
    static const char *const ops[] = {"<", ">", "<=", ">=", "==", "!="};
    for (const char *op : ops) {
        if (accept(Token::Op, op))
            return NodePtr(new Binary(op, std::move(l), sum()));
    }
    return l;
}

NodePtr Parser::sum() {
    NodePtr l = product();
    for (;;) {
        if (accept(Token::Op, "+"))
            l = NodePtr(new Binary("+", std::move(l), product()));
        else if (accept(Token::Op, "-"))
            l = NodePtr(new Binary("-", std::move(l), product()));
        else
            return l;
    }
}

NodePtr Parser::product() {
    NodePtr l = unary();
    for (;;) {
        if (accept(Token::Op, "*"))
            l = NodePtr(new Binary("*", std::move(l), unary()));
        else if (accept(Token::Op, "/"))
            l = NodePtr(new Binary("/", std::move(l), unary()));
        else if (accept(Token::Op, "%"))
            l = NodePtr(new Binary("%", std::move(l), unary()));
        else
            return l;
    }
}

NodePtr Parser::unary() {
    if (accept(Token::Op, "-"))
        return NodePtr(new Negate(unary()));
    return primary();
}

NodePtr Parser::primary() {
    if (peek().kind == Token::Number)
        return NodePtr(new Number(next().value));
    if (peek().kind == Token::Name) {
        std::string name = next().text;
        if (!accept(Token::LParen))
            return NodePtr(new Variable(name));
        std::vector<NodePtr> args;
        if (!accept(Token::RParen)) {
            do
                args.push_back(expression());
            while (accept(Token::Comma));
            expect(Token::RParen, "')' after the arguments");
        }
        return NodePtr(new Call(name, std::move(args)));
    }
    if (accept(Token::LParen)) {
        NodePtr e = expression();
        expect(Token::RParen, "')'");
        return e;
    }
    fail("expected a number, a name or '('");
}

int run_script(const std::string &script) {
    Env env;
    std::istringstream lines(script);
    std::string line;
    int failures = 0, number = 0;
    while (std::getline(lines, line)) {
        number++;
        if (line.empty() || line[0] == '#')
            continue;
        try {
            Sentry s("line" + std::to_string(number));
            Parser p(tokenize(line));
            NodePtr e = p.statement(env);
            if (e)
                out() << "  " << e->show() << " = " << e->eval(env, 0) << " [" << e->size() << " nodes]\n";
        } catch (const ParseError &err) {
            failures++;
            out() << "  parse error " << err.code() << " at " << err.line() << ":" << err.column() << ": "
                  << err.what() << "\n";
        } catch (const DivideByZero &err) {
            failures++;
            out() << "  " << err.kind() << " at depth " << err.depth() << "\n";
        } catch (const Error &err) {
            failures++;
            out() << "  " << err.kind() << " " << err.code() << ": " << err.what() << "\n";
        }
        std::string trace = Trace::take();
        if (trace != "+line" + std::to_string(number) + " -line" + std::to_string(number))
            out() << "  trace: " << trace << "\n";
    }
    out() << "  calls: " << env.calls << ", failures: " << failures << "\n";
    return failures;
}

} // namespace sample
