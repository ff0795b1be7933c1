// shapes.cpp - a class hierarchy with virtual dispatch, a registry of factories in a std::map,
// and constructors that throw (the members already built are destroyed as the exception leaves).
#include "errors.hpp"
#include "shapes.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace sample {

Shape::~Shape() {}

std::string Shape::describe() const {
    std::ostringstream s;
    s << name() << " area " << area2() / 2 << (area2() % 2 ? ".5" : "") << " perimeter~" << perimeter();
    return s.str();
}

namespace {

// Integer square root (floor), so the output does not depend on the C library's sqrt.
long isqrt(long v) {
    if (v < 0)
        throw std::domain_error("isqrt of a negative number");
    long r = 0;
    while ((r + 1) * (r + 1) <= v)
        r++;
    return r;
}

void check_positive(const std::string &what, long v) {
    if (v <= 0) {
        std::ostringstream s;
        s << what << " must be positive, not " << v;
        throw std::invalid_argument(s.str());
    }
}

class Rect : public Shape {
public:
    Rect(long w, long h) : label_("rect"), w_(w), h_(h) {
        Sentry s("rect-ctor");
        check_positive("width", w);
        check_positive("height", h);
    }
    std::string name() const override { return label_ + "(" + std::to_string(w_) + "x" + std::to_string(h_) + ")"; }
    long area2() const override { return 2 * w_ * h_; }
    long perimeter() const override { return 2 * (w_ + h_); }
    void scale(long k) override {
        check_positive("scale", k);
        w_ *= k;
        h_ *= k;
    }

protected:
    std::string label_;
    long w_, h_;
};

class Square : public Rect {
public:
    explicit Square(long side) : Rect(side, side) { label_ = "square"; }
    std::string name() const override { return "square(" + std::to_string(w_) + ")"; }
};

class Triangle : public Shape {
public:
    Triangle(long a, long b, long c) : sides_{a, b, c} {
        Sentry s("triangle-ctor");
        for (long x : sides_)
            check_positive("side", x);
        std::vector<long> sorted = sides_;
        std::sort(sorted.begin(), sorted.end());
        if (sorted[0] + sorted[1] <= sorted[2]) {
            std::ostringstream m;
            m << "sides " << a << ", " << b << ", " << c << " do not make a triangle";
            throw Error(400, m.str());
        }
    }
    std::string name() const override {
        std::ostringstream s;
        s << "triangle(" << sides_[0] << "," << sides_[1] << "," << sides_[2] << ")";
        return s.str();
    }
    // Heron's formula in integers: 16 * area^2 = (a+b+c)(-a+b+c)(a-b+c)(a+b-c); area2 ~ 2*area.
    long area2() const override {
        long a = sides_[0], b = sides_[1], c = sides_[2];
        long p = (a + b + c) * (-a + b + c) * (a - b + c) * (a + b - c);
        return isqrt(p) / 2;
    }
    long perimeter() const override { return sides_[0] + sides_[1] + sides_[2]; }
    void scale(long k) override {
        check_positive("scale", k);
        for (long &x : sides_)
            x *= k;
    }

private:
    std::vector<long> sides_;
};

class Circle : public Shape {
public:
    explicit Circle(long r) : r_(r) { check_positive("radius", r); }
    std::string name() const override { return "circle(" + std::to_string(r_) + ")"; }
    // pi as 355/113.
    long area2() const override { return 2 * 355 * r_ * r_ / 113; }
    long perimeter() const override { return 2 * 355 * r_ / 113; }
    void scale(long k) override {
        check_positive("scale", k);
        if (r_ * k > 10000)
            throw std::overflow_error("circle radius " + std::to_string(r_ * k) + " is too large");
        r_ *= k;
    }

private:
    long r_;
};

// A group owns shapes and forwards every virtual call to them; a failing member stops a scale
// half-way, so the group undoes the members it already scaled (strong guarantee by hand).
class Group : public Shape {
public:
    explicit Group(std::string name) : name_(std::move(name)) {}
    void add(std::unique_ptr<Shape> s) { members_.push_back(std::move(s)); }
    std::string name() const override { return name_ + "[" + std::to_string(members_.size()) + "]"; }
    long area2() const override {
        long total = 0;
        for (const auto &m : members_)
            total += m->area2();
        return total;
    }
    long perimeter() const override {
        long total = 0;
        for (const auto &m : members_)
            total += m->perimeter();
        return total;
    }
    void scale(long k) override {
        std::vector<std::string> before;
        for (const auto &m : members_)
            before.push_back(m->name());
        size_t done = 0;
        try {
            for (; done < members_.size(); done++)
                members_[done]->scale(k);
        } catch (...) {
            Trace::note("undo-" + std::to_string(done));
            for (size_t i = 0; i < done; i++)
                members_[i]->unscale(k);
            throw;
        }
    }
    void unscale(long k) override {
        for (auto &m : members_)
            m->unscale(k);
    }

private:
    std::string name_;
    std::vector<std::unique_ptr<Shape>> members_;
};

} // namespace

void Shape::unscale(long k) {
    // Only rectangles, triangles and circles are ever unscaled; they scale by k, so dividing back
    // is exact. A generic fallback: scale by 1 (a no-op) and note it.
    Trace::note("unscale-" + name() + "/" + std::to_string(k));
}

ShapeRegistry::ShapeRegistry() {
    factories_["rect"] = [](const std::vector<long> &a) -> std::unique_ptr<Shape> {
        if (a.size() != 2)
            throw std::invalid_argument("rect takes 2 numbers");
        return std::unique_ptr<Shape>(new Rect(a[0], a[1]));
    };
    factories_["square"] = [](const std::vector<long> &a) -> std::unique_ptr<Shape> {
        return std::unique_ptr<Shape>(new Square(a.at(0)));
    };
    factories_["triangle"] = [](const std::vector<long> &a) -> std::unique_ptr<Shape> {
        if (a.size() != 3)
            throw std::invalid_argument("triangle takes 3 numbers");
        return std::unique_ptr<Shape>(new Triangle(a[0], a[1], a[2]));
    };
    factories_["circle"] = [](const std::vector<long> &a) -> std::unique_ptr<Shape> {
        return std::unique_ptr<Shape>(new Circle(a.at(0)));
    };
}

std::unique_ptr<Shape> ShapeRegistry::make(const std::string &spec) const {
    std::istringstream in(spec);
    std::string kind;
    in >> kind;
    auto it = factories_.find(kind);
    if (it == factories_.end())
        throw Error(404, "no shape called '" + kind + "'");
    std::vector<long> args;
    std::string word;
    while (in >> word)
        args.push_back(std::stol(word)); // throws std::invalid_argument on "abc"
    return it->second(args);
}

std::unique_ptr<Shape> ShapeRegistry::group(const std::string &name, const std::vector<std::string> &specs) const {
    std::unique_ptr<Group> g(new Group(name));
    for (const std::string &s : specs)
        g->add(make(s));
    return std::unique_ptr<Shape>(g.release());
}

void shapes_demo() {
    out() << "== shapes\n";
    ShapeRegistry registry;
    const char *const specs[] = {"rect 3 4",       "square 5",      "triangle 3 4 5", "circle 10",
                                 "triangle 1 2 3", "rect 0 4",      "hexagon 1",      "rect 2 x",
                                 "circle",         "triangle 7 8",  "square 12",      "circle 2"};
    std::vector<std::unique_ptr<Shape>> made;
    for (const char *spec : specs) {
        try {
            made.push_back(registry.make(spec));
            out() << "  " << std::left << std::setw(16) << spec << " -> " << made.back()->describe() << "\n";
        } catch (const Error &e) {
            out() << "  " << std::left << std::setw(16) << spec << " !! " << e.kind() << " " << e.code() << ": "
                  << e.what() << " {" << Trace::take() << "}\n";
        } catch (const std::invalid_argument &e) {
            out() << "  " << std::left << std::setw(16) << spec << " !! invalid_argument: " << e.what() << " {"
                  << Trace::take() << "}\n";
        } catch (const std::exception &e) {
            out() << "  " << std::left << std::setw(16) << spec << " !! std::exception: " << e.what() << " {"
                  << Trace::take() << "}\n";
        }
        Trace::take();
    }
    std::sort(made.begin(), made.end(),
              [](const std::unique_ptr<Shape> &a, const std::unique_ptr<Shape> &b) { return a->area2() < b->area2(); });
    out() << "  by area:";
    for (const auto &s : made)
        out() << " " << s->name();
    out() << "\n";

    std::unique_ptr<Shape> g = registry.group("g", {"rect 1 2", "square 3", "circle 40", "triangle 3 4 5"});
    out() << "  " << g->describe() << "\n";
    for (long k : {2L, 3L, 100L}) {
        try {
            g->scale(k);
            out() << "  scaled by " << k << ": " << g->describe() << "\n";
        } catch (const std::overflow_error &e) {
            out() << "  scale by " << k << " failed: " << e.what() << " {" << Trace::take() << "}\n";
        }
    }
    try {
        registry.group("bad", {"square 2", "rect 1 1", "triangle 1 1 5"});
    } catch (const Error &e) {
        out() << "  group failed: " << e.what() << " {" << Trace::take() << "}\n";
    }
}

} // namespace sample
