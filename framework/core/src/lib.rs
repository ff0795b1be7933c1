//! The incremental core: a salsa database from recipe to shard text, and the plugin registry.
