// containers.cpp - templates and the other standard containers under exceptions: a ring buffer and
// a matrix that throw on misuse, copy-and-swap assignment that leaves the target unchanged when a
// copy throws, an event queue (std::priority_queue, std::deque, std::set, std::list) whose handlers
// are virtual calls and std::function callbacks that may throw.
#include "errors.hpp"

#include <deque>
#include <functional>
#include <iomanip>
#include <list>
#include <memory>
#include <queue>
#include <set>
#include <sstream>

namespace sample {

namespace {

template <typename T, size_t N> class RingBuffer {
public:
    void push(const T &v) {
        if (size_ == N)
            throw std::length_error("ring buffer full at " + std::to_string(N));
        items_[(head_ + size_) % N] = v;
        size_++;
    }
    T pop() {
        if (size_ == 0)
            throw std::underflow_error("ring buffer empty");
        T v = items_[head_];
        head_ = (head_ + 1) % N;
        size_--;
        return v;
    }
    size_t size() const { return size_; }

private:
    T items_[N];
    size_t head_ = 0, size_ = 0;
};

class Matrix {
public:
    Matrix(size_t rows, size_t cols) : rows_(rows), cols_(cols), cells_(rows * cols) {
        if (rows == 0 || cols == 0)
            throw std::invalid_argument("a matrix needs at least one row and one column");
    }
    long &at(size_t r, size_t c) {
        if (r >= rows_ || c >= cols_) {
            std::ostringstream s;
            s << "cell (" << r << "," << c << ") outside " << rows_ << "x" << cols_;
            throw std::out_of_range(s.str());
        }
        return cells_[r * cols_ + c];
    }
    long at(size_t r, size_t c) const { return const_cast<Matrix *>(this)->at(r, c); }
    Matrix operator*(const Matrix &o) const {
        if (cols_ != o.rows_) {
            std::ostringstream s;
            s << "cannot multiply " << rows_ << "x" << cols_ << " by " << o.rows_ << "x" << o.cols_;
            throw Error(900, s.str());
        }
        Matrix m(rows_, o.cols_);
        for (size_t i = 0; i < rows_; i++)
            for (size_t j = 0; j < o.cols_; j++)
                for (size_t k = 0; k < cols_; k++)
                    m.at(i, j) += at(i, k) * o.at(k, j);
        return m;
    }
    std::string show() const {
        std::ostringstream s;
        for (size_t i = 0; i < rows_; i++) {
            s << "   ";
            for (size_t j = 0; j < cols_; j++)
                s << " " << std::setw(5) << at(i, j);
            s << "\n";
        }
        return s.str();
    }

private:
    size_t rows_, cols_;
    std::vector<long> cells_;
};

// A value whose copy throws on demand: copy-and-swap must leave the target as it was.
struct Fragile {
    static int copies_left;
    std::string name;
    explicit Fragile(std::string n) : name(std::move(n)) {}
    Fragile(const Fragile &o) : name(o.name) {
        if (copies_left-- == 0)
            throw Error(901, "copy of " + o.name + " failed");
    }
    Fragile &operator=(const Fragile &) = default;
};
int Fragile::copies_left = 0;

class Roster {
public:
    void add(const std::string &n) { people_.emplace_back(n); }
    Roster &operator=(const Roster &o) {
        Roster copy(o); // may throw; *this is untouched until the swap
        people_.swap(copy.people_);
        return *this;
    }
    Roster() = default;
    Roster(const Roster &o) : people_(o.people_) {}
    std::string show() const {
        std::string s;
        for (const Fragile &f : people_)
            s += (s.empty() ? "" : ",") + f.name;
        return "[" + s + "]";
    }

private:
    std::vector<Fragile> people_;
};

struct Event {
    int time;
    int seq;
    std::string what;
    bool operator<(const Event &o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

class Handler {
public:
    virtual ~Handler() {}
    virtual void handle(const Event &e, std::deque<std::string> &log) = 0;
};

class Printer : public Handler {
public:
    void handle(const Event &e, std::deque<std::string> &log) override {
        log.push_back(std::to_string(e.time) + ":" + e.what);
        if (log.size() > 6)
            log.pop_front();
    }
};

class Picky : public Handler {
public:
    explicit Picky(std::set<std::string> banned) : banned_(std::move(banned)) {}
    void handle(const Event &e, std::deque<std::string> &log) override {
        Sentry s("picky");
        if (banned_.count(e.what))
            throw Error(902, "refused event '" + e.what + "' at " + std::to_string(e.time));
        log.push_back("ok-" + e.what);
    }

private:
    std::set<std::string> banned_;
};

class Scheduler {
public:
    void at(int time, const std::string &what) { queue_.push(Event{time, seq_++, what}); }
    void on(std::function<void(const Event &)> cb) { callbacks_.push_back(std::move(cb)); }
    void attach(Handler *h) { handlers_.emplace_back(h); }
    // Runs events in time order; a failing event is retried once at time + 10, then dropped.
    void run() {
        while (!queue_.empty()) {
            Event e = queue_.top();
            queue_.pop();
            try {
                dispatch(e);
            } catch (const Error &err) {
                out() << "    t=" << e.time << " " << err.what() << " {" << Trace::take() << "}\n";
                if (retried_.insert(e.what).second)
                    at(e.time + 10, e.what);
            }
        }
    }
    const std::deque<std::string> &log() const { return log_; }

private:
    void dispatch(const Event &e) {
        for (auto &cb : callbacks_)
            cb(e);
        for (auto &h : handlers_)
            h->handle(e, log_);
    }
    std::priority_queue<Event> queue_;
    std::list<std::function<void(const Event &)>> callbacks_;
    std::vector<std::unique_ptr<Handler>> handlers_;
    std::deque<std::string> log_;
    std::set<std::string> retried_;
    int seq_ = 0;
};

} // namespace

void containers_demo() {
    out() << "== containers\n";
    RingBuffer<int, 4> ring;
    for (int round = 0; round < 3; round++) {
        try {
            for (int i = 0; i < 3 + round; i++)
                ring.push(round * 10 + i);
            out() << "  ring has " << ring.size() << "\n";
        } catch (const std::length_error &e) {
            out() << "  ring: " << e.what() << "\n";
        }
        try {
            long sum = 0;
            for (int i = 0; i < 2 + 2 * round; i++)
                sum += ring.pop();
            out() << "  popped sum " << sum << "\n";
        } catch (const std::underflow_error &e) {
            out() << "  ring: " << e.what() << ", " << ring.size() << " left\n";
        }
    }

    Matrix a(2, 3), b(3, 2);
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 3; j++) {
            a.at(i, j) = static_cast<long>(i * 3 + j + 1);
            b.at(j, i) = static_cast<long>(j * 2 + i + 1);
        }
    out() << "  a*b =\n" << (a * b).show();
    out() << "  b*a =\n" << (b * a).show();
    try {
        out() << (a * a).show();
    } catch (const Error &e) {
        out() << "  a*a: " << e.code() << " " << e.what() << "\n";
    }
    try {
        a.at(2, 0) = 1;
    } catch (const std::out_of_range &e) {
        out() << "  a.at: " << e.what() << "\n";
    }
    try {
        Matrix z(0, 3);
    } catch (const std::invalid_argument &e) {
        out() << "  Matrix(0, 3): " << e.what() << "\n";
    }

    Fragile::copies_left = 1000; // adding may copy on reallocation
    Roster team, other;
    team.add("ann");
    team.add("ben");
    other.add("cy");
    other.add("di");
    other.add("ed");
    for (int budget : {1, 2, 3, 10}) {
        Fragile::copies_left = budget;
        try {
            team = other;
            out() << "  copy with budget " << budget << ": " << team.show() << "\n";
        } catch (const Error &e) {
            out() << "  copy with budget " << budget << " failed (" << e.what() << "), team still " << team.show()
                  << "\n";
        }
    }

    Scheduler s;
    int seen = 0;
    s.on([&seen](const Event &e) {
        seen++;
        if (e.what == "explode")
            throw Error(903, "callback exploded at " + std::to_string(e.time));
    });
    s.attach(new Printer);
    s.attach(new Picky({"spam", "explode-not"}));
    const char *const names[] = {"boot", "spam", "tick", "explode", "tock", "spam", "halt"};
    int t = 0;
    for (const char *n : names)
        s.at(t += 3, n);
    s.at(4, "early");
    s.run();
    out() << "  events seen " << seen << ", log:";
    for (const std::string &l : s.log())
        out() << " " << l;
    out() << "\n";
}

} // namespace sample
