//! The x86-64 host: clang target, register counts, L1I geometry and runner.
