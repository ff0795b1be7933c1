// support.cpp - the output stream, the destructor trace and Sentry.
#include "errors.hpp"

#include <iostream>

namespace sample {

std::ostream &out() { return std::cout; }

std::vector<std::string> &Trace::log() {
    static std::vector<std::string> entries;
    return entries;
}

void Trace::note(const std::string &what) { log().push_back(what); }

std::string Trace::take() {
    std::string joined;
    for (const std::string &e : log()) {
        if (!joined.empty())
            joined += ' ';
        joined += e;
    }
    log().clear();
    return joined.empty() ? "-" : joined;
}

Sentry::Sentry(std::string name) : name_(std::move(name)) { Trace::note("+" + name_); }

Sentry::~Sentry() { Trace::note("-" + name_); }

} // namespace sample
