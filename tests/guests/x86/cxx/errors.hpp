// errors.hpp - the sample's exception hierarchy and a trace of destructors, shared by every part.
#ifndef CXX_SAMPLE_ERRORS_HPP
#define CXX_SAMPLE_ERRORS_HPP

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace sample {

// Every line the program prints goes through here, so the output is one stream in one order.
std::ostream &out();

// Records what ran during unwinding: destructors append their names, tests print the log.
class Trace {
public:
    static void note(const std::string &what);
    static std::string take();

private:
    static std::vector<std::string> &log();
};

// An object whose destructor leaves a mark: proves destructors run while an exception passes.
class Sentry {
public:
    explicit Sentry(std::string name);
    Sentry(const Sentry &) = delete;
    Sentry &operator=(const Sentry &) = delete;
    ~Sentry();

private:
    std::string name_;
};

// The base of the program's own errors: a code and a message.
class Error : public std::runtime_error {
public:
    Error(int code, const std::string &what) : std::runtime_error(what), code_(code) {}
    int code() const { return code_; }
    virtual std::string kind() const { return "Error"; }

private:
    int code_;
};

class ParseError : public Error {
public:
    ParseError(int line, int column, const std::string &what)
        : Error(100 + line, describe(line, column, what)), line_(line), column_(column) {}
    std::string kind() const override { return "ParseError"; }
    int line() const { return line_; }
    int column() const { return column_; }

private:
    static std::string describe(int line, int column, const std::string &what) {
        std::ostringstream s;
        s << "line " << line << ", column " << column << ": " << what;
        return s.str();
    }
    int line_, column_;
};

class EvalError : public Error {
public:
    EvalError(const std::string &what, int depth) : Error(200 + depth, what), depth_(depth) {}
    std::string kind() const override { return "EvalError"; }
    int depth() const { return depth_; }

private:
    int depth_;
};

class DivideByZero : public EvalError {
public:
    explicit DivideByZero(int depth) : EvalError("division by zero", depth) {}
    std::string kind() const override { return "DivideByZero"; }
};

class LedgerError : public Error {
public:
    LedgerError(const std::string &account, const std::string &what)
        : Error(300, account + ": " + what), account_(account) {}
    std::string kind() const override { return "LedgerError"; }
    const std::string &account() const { return account_; }

private:
    std::string account_;
};

// Not derived from std::exception: caught only by catch (...) or by its own type.
struct Abort {
    int status;
    std::string reason;
};

} // namespace sample

#endif
