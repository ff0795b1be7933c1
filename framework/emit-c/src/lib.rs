//! The C backend: IR to C shards, the CPU header, the function table and the listing.
