//! Toolchain calls, the content-addressed object cache, linking and running.
