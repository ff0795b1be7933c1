// shapes.hpp - shapes with virtual dispatch and a registry of factories.
#ifndef CXX_SAMPLE_SHAPES_HPP
#define CXX_SAMPLE_SHAPES_HPP

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sample {

class Shape {
public:
    virtual ~Shape();
    virtual std::string name() const = 0;
    // Twice the area, so that half units stay exact in integers.
    virtual long area2() const = 0;
    virtual long perimeter() const = 0;
    virtual void scale(long k) = 0;
    virtual void unscale(long k);
    std::string describe() const;
};

class ShapeRegistry {
public:
    ShapeRegistry();
    // `kind n n ...`: throws Error for an unknown kind, std::invalid_argument for bad numbers.
    std::unique_ptr<Shape> make(const std::string &spec) const;
    std::unique_ptr<Shape> group(const std::string &name, const std::vector<std::string> &specs) const;

private:
    std::map<std::string, std::function<std::unique_ptr<Shape>(const std::vector<long> &)>> factories_;
};

void shapes_demo();

} // namespace sample

#endif
