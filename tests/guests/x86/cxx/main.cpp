// main.cpp - the C++ sample: an expression language, shapes, a ledger with transactions that roll
// back, and exceptions thrown and caught across many frames (see README.md).
#include "errors.hpp"
#include "expr.hpp"
#include "shapes.hpp"

#include <exception>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

namespace sample {

void json_demo();
void containers_demo();

// ---------------------------------------------------------------- the ledger

class Account {
public:
    Account(std::string name, long balance, long limit) : name_(std::move(name)), balance_(balance), limit_(limit) {}
    virtual ~Account() {}
    const std::string &name() const { return name_; }
    long balance() const { return balance_; }
    virtual void withdraw(long amount) {
        if (amount <= 0)
            throw LedgerError(name_, "withdrawal of " + std::to_string(amount));
        if (balance_ - amount < -limit_)
            throw LedgerError(name_, "insufficient funds for " + std::to_string(amount));
        balance_ -= amount;
    }
    virtual void deposit(long amount) {
        if (amount <= 0)
            throw LedgerError(name_, "deposit of " + std::to_string(amount));
        balance_ += amount;
    }
    virtual std::string type() const { return "account"; }

protected:
    std::string name_;
    long balance_, limit_;
};

// Frozen accounts refuse everything: the exception leaves through a virtual call.
class FrozenAccount : public Account {
public:
    FrozenAccount(std::string name, long balance) : Account(std::move(name), balance, 0) {}
    void withdraw(long) override { throw LedgerError(name_, "account is frozen"); }
    void deposit(long) override { throw LedgerError(name_, "account is frozen"); }
    std::string type() const override { return "frozen"; }
};

// Savings accounts count withdrawals and refuse a fourth.
class SavingsAccount : public Account {
public:
    SavingsAccount(std::string name, long balance) : Account(std::move(name), balance, 0) {}
    void withdraw(long amount) override {
        if (withdrawals_ == 3)
            throw LedgerError(name_, "too many withdrawals");
        Account::withdraw(amount);
        withdrawals_++;
    }
    std::string type() const override { return "savings"; }

private:
    int withdrawals_ = 0;
};

class Ledger {
public:
    void open(Account *a) { accounts_[a->name()].reset(a); }
    Account &find(const std::string &name) {
        auto it = accounts_.find(name);
        if (it == accounts_.end())
            throw LedgerError(name, "no such account");
        return *it->second;
    }

    // A batch of transfers applies completely or not at all: the journal undoes what was done
    // when a later transfer throws, from its destructor if it was not committed.
    class Journal {
    public:
        explicit Journal(Ledger &l) : ledger_(l) {}
        ~Journal() {
            if (!committed_) {
                for (auto it = done_.rbegin(); it != done_.rend(); ++it) {
                    ledger_.accounts_[it->to]->withdraw(it->amount);
                    ledger_.accounts_[it->from]->Account::deposit(it->amount);
                }
                Trace::note("rolled-back-" + std::to_string(done_.size()));
            }
        }
        void transfer(const std::string &from, const std::string &to, long amount) {
            Account &a = ledger_.find(from);
            Account &b = ledger_.find(to);
            a.withdraw(amount);
            try {
                b.deposit(amount);
            } catch (...) {
                a.Account::deposit(amount);
                throw;
            }
            done_.push_back(Move{from, to, amount});
        }
        void commit() { committed_ = true; }

    private:
        struct Move {
            std::string from, to;
            long amount;
        };
        Ledger &ledger_;
        std::vector<Move> done_;
        bool committed_ = false;
    };

    void batch(const std::vector<std::string> &lines) {
        Journal j(*this);
        for (const std::string &line : lines) {
            std::istringstream in(line);
            std::string from, to;
            long amount = 0;
            if (!(in >> from >> to >> amount))
                throw Error(500, "bad transfer line '" + line + "'");
            j.transfer(from, to, amount);
        }
        j.commit();
    }

    void print() const {
        for (const auto &kv : accounts_)
            out() << "    " << std::left << std::setw(8) << kv.first << std::right << std::setw(8)
                  << kv.second->balance() << " (" << kv.second->type() << ")\n";
    }

private:
    std::map<std::string, std::unique_ptr<Account>> accounts_;
};

void ledger_demo() {
    out() << "== ledger\n";
    Ledger l;
    l.open(new Account("alice", 100, 50));
    l.open(new Account("bob", 20, 0));
    l.open(new SavingsAccount("carol", 500));
    l.open(new FrozenAccount("dave", 70));
    const std::vector<std::vector<std::string>> batches = {
        {"alice bob 30", "bob carol 10"},
        {"alice bob 100", "bob alice 5"},
        {"carol alice 10", "carol bob 10", "carol alice 1", "carol bob 1"},
        {"bob alice 10", "alice dave 5"},
        {"alice erin 1"},
        {"alice bob x"},
        {"bob alice 1", "alice bob -4"},
        {"alice bob 40", "bob alice 40", "alice bob 60"},
    };
    int n = 0;
    for (const auto &b : batches) {
        n++;
        try {
            l.batch(b);
            out() << "  batch " << n << ": ok {" << Trace::take() << "}\n";
        } catch (const LedgerError &e) {
            out() << "  batch " << n << ": " << e.kind() << " on " << e.account() << ": " << e.what() << " {"
                  << Trace::take() << "}\n";
        } catch (const Error &e) {
            out() << "  batch " << n << ": " << e.kind() << " " << e.code() << ": " << e.what() << " {"
                  << Trace::take() << "}\n";
        }
        l.print();
    }
}

// ---------------------------------------------------------------- construction under exceptions

// Its constructor throws for the n-th instance: in an array, the elements built before it are
// destroyed in reverse order as the exception leaves the array's construction.
struct Brick {
    static int built, fail_at;
    Sentry sentry;
    int id;
    Brick() : sentry("b" + std::to_string(built)), id(built) {
        if (built++ == fail_at)
            throw Error(1000 + id, "brick " + std::to_string(id) + " cracked");
    }
};
int Brick::built = 0;
int Brick::fail_at = -1;

// A function-try-block: the handler sees the member's exception, then it is rethrown on its own.
class Wall {
public:
    explicit Wall(int fail_at) try : bricks_(make(fail_at)) {
        Trace::note("wall-up");
    } catch (const Error &e) {
        Trace::note("wall-failed-" + std::to_string(e.code()));
    }
    size_t size() const { return bricks_->size(); }

private:
    static std::unique_ptr<std::vector<int>> make(int fail_at) {
        Brick::built = 0;
        Brick::fail_at = fail_at;
        Brick row[4];
        auto ids = std::unique_ptr<std::vector<int>>(new std::vector<int>);
        for (const Brick &b : row)
            ids->push_back(b.id);
        return ids;
    }
    std::unique_ptr<std::vector<int>> bricks_;
};

void construction_demo() {
    out() << "== construction\n";
    for (int fail_at : {-1, 0, 2, 3}) {
        try {
            Wall w(fail_at);
            out() << "  wall of " << w.size() << " {" << Trace::take() << "}\n";
        } catch (const Error &e) {
            out() << "  " << e.what() << " {" << Trace::take() << "}\n";
        }
    }
}

// ---------------------------------------------------------------- exceptions across many frames

// Recursion that throws at the bottom: every level holds a Sentry and a string.
long descend(int level, int bottom, std::vector<int> &path) {
    Sentry s("d" + std::to_string(level));
    std::string here = "level" + std::to_string(level);
    path.push_back(level);
    if (level == bottom) {
        if (bottom % 3 == 0)
            throw Abort{bottom, "abort at " + here};
        if (bottom % 3 == 1)
            throw std::out_of_range(here);
        throw EvalError(here, level);
    }
    return descend(level + 1, bottom, path) + static_cast<long>(here.size());
}

// Catches, adds context and rethrows a different type, or rethrows the same one.
long translate(int bottom) {
    std::vector<int> path;
    try {
        return descend(0, bottom, path);
    } catch (const std::out_of_range &e) {
        Trace::note("translate");
        throw Error(600 + static_cast<int>(path.size()), std::string("out of range at ") + e.what());
    } catch (const Error &) {
        Trace::note("rethrow");
        throw;
    }
}

void frames_demo() {
    out() << "== frames\n";
    for (int bottom = 1; bottom <= 7; bottom++) {
        try {
            out() << "  " << bottom << ": " << translate(bottom) << "\n";
        } catch (const Abort &a) {
            out() << "  " << bottom << ": Abort(" << a.status << ", " << a.reason << ")";
        } catch (const Error &e) {
            out() << "  " << bottom << ": " << e.kind() << " " << e.code() << " " << e.what();
        }
        out() << " {" << Trace::take() << "}\n";
    }
    // The standard library's own throws.
    std::vector<int> v{1, 2, 3};
    try {
        out() << v.at(10);
    } catch (const std::out_of_range &e) {
        out() << "  vector::at: " << e.what() << "\n";
    }
    for (const char *s : {"42", "-17", "x9", "99999999999999999999"}) {
        try {
            out() << "  stoi(" << s << ") = " << std::stoi(s) << "\n";
        } catch (const std::invalid_argument &e) {
            out() << "  stoi(" << s << "): invalid_argument " << e.what() << "\n";
        } catch (const std::out_of_range &e) {
            out() << "  stoi(" << s << "): out_of_range " << e.what() << "\n";
        }
    }
    std::map<std::string, int> m{{"one", 1}};
    try {
        out() << m.at("two");
    } catch (const std::exception &e) {
        out() << "  map::at: " << e.what() << "\n";
    }
    // exception_ptr: capture now, rethrow later, twice.
    std::exception_ptr saved;
    try {
        throw DivideByZero(7);
    } catch (...) {
        saved = std::current_exception();
    }
    for (int i = 0; i < 2; i++) {
        try {
            std::rethrow_exception(saved);
        } catch (const EvalError &e) {
            out() << "  rethrown " << e.kind() << " depth " << e.depth() << "\n";
        }
    }
    // Nested exceptions.
    try {
        try {
            throw std::runtime_error("inner");
        } catch (...) {
            std::throw_with_nested(Error(700, "outer"));
        }
    } catch (const Error &e) {
        out() << "  nested: " << e.what();
        try {
            std::rethrow_if_nested(e);
        } catch (const std::exception &inner) {
            out() << " <- " << inner.what();
        }
        out() << "\n";
    }
}

} // namespace sample

static const char *const SCRIPT = R"(# definitions and arithmetic
let x = 6 * 7
x - 2 * (3 + 4)
let sq(n) = n * n
let fact(n) = if n <= 1 then 1 else n * fact(n - 1)
let fib(n) = if n < 2 then n else fib(n - 1) + fib(n - 2)
sq(x) + fact(10)
fib(15)
let gcd(a, b) = if b == 0 then a else gcd(b, a % b)
gcd(1071, 462)
let inv(n) = 100 / n
let chain(n) = if n == 0 then inv(0) else chain(n - 1) + 1
chain(5)
inv(4) + inv(0)
let loop(n) = loop(n + 1)
loop(0)
fact(3, 4)
undefined(1)
y + 1
1 + * 2
(1 + 2
let = 5
3 $ 4
12345678901234
-(-(-5)) % 3
if fact(5) > 100 then gcd(fib(20), fib(15)) else 0
)";

int main() {
    using namespace sample;
    out() << "== script\n";
    int failures = run_script(SCRIPT);
    shapes_demo();
    ledger_demo();
    json_demo();
    containers_demo();
    construction_demo();
    frames_demo();
    out() << "== done: " << failures << " script failures\n";
    return 0;
}
