//! End-to-end tests live in tests/*.rs; this library holds what they share.
