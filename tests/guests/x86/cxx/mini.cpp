// mini.cpp - the C++ sample's small sibling, for CI: exceptions across frames, rethrow, destructors
// during unwinding, catch by base class, an exception leaving a virtual call and a constructor,
// without iostreams (printf only), so that it recompiles in a minute (README.md).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

std::string trace;

struct Guard {
    explicit Guard(const char *n) : name(n) { trace += std::string("+") + name; }
    ~Guard() { trace += std::string("-") + name; }
    const char *name;
};

struct Fault : std::runtime_error {
    Fault(const std::string &what, int code) : std::runtime_error(what), code(code) {}
    virtual const char *kind() const { return "Fault"; }
    int code;
};

struct DeepFault : Fault {
    DeepFault(const std::string &what, int code) : Fault(what, code) {}
    const char *kind() const override { return "DeepFault"; }
};

struct Plain {
    int value;
};

class Worker {
public:
    virtual ~Worker() {}
    virtual int work(int n) = 0;
};

class Doubler : public Worker {
public:
    int work(int n) override {
        Guard g("dbl");
        if (n > 50)
            throw Fault("too big for the doubler: " + std::to_string(n), n);
        return 2 * n;
    }
};

class Chain : public Worker {
public:
    Chain(Worker *next, int limit) : next_(next), limit_(limit) {
        if (limit < 0)
            throw std::invalid_argument("negative limit");
    }
    int work(int n) override {
        Guard g("chain");
        std::vector<int> scratch(4, n);
        if (n == limit_)
            throw DeepFault("limit " + std::to_string(limit_) + " reached", limit_);
        if (n == 13)
            throw Plain{13};
        return next_->work(n + scratch[3]) + 1;
    }

private:
    Worker *next_;
    int limit_;
};

int descend(int depth, int n, Worker &w) {
    Guard g(depth % 2 ? "odd" : "even");
    if (depth == 0)
        return w.work(n);
    return descend(depth - 1, n, w) + 1;
}

int checked(int depth, int n, Worker &w) {
    try {
        return descend(depth, n, w);
    } catch (const DeepFault &f) {
        trace += "|deep";
        throw;
    } catch (const std::exception &) {
        trace += "|std";
        throw;
    }
}

} // namespace

int main() {
    Doubler d;
    Chain c(&d, 7);
    const int inputs[] = {1, 7, 13, 20, 30, 3};
    for (int n : inputs) {
        trace.clear();
        try {
            std::printf("%d -> %d", n, checked(n % 4, n, c));
        } catch (const Fault &f) {
            std::printf("%d: %s %d %s", n, f.kind(), f.code, f.what());
        } catch (const Plain &p) {
            std::printf("%d: Plain %d", n, p.value);
        }
        std::printf(" [%s]\n", trace.c_str());
    }
    try {
        Chain bad(&d, -1);
        std::printf("unexpected\n");
    } catch (const std::invalid_argument &e) {
        std::printf("constructor: %s\n", e.what());
    }
    int caught = 0;
    for (int i = 0; i < 1000; i++) {
        try {
            descend(i % 5, 60, d);
        } catch (const std::runtime_error &) {
            caught++;
        }
    }
    std::printf("caught %d\n", caught);
    return 0;
}
