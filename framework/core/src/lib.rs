//! The incremental core of rpt.
//!
//! This crate owns the salsa database ([`RptDb`]) that holds the pipeline as
//! queries — recipe and image → loaded image → function list → lifted IR per
//! function → IR after passes per function → C per function → shard text — and
//! the [`Registry`] through which it reaches plugins. It knows plugins only
//! through `rpt-api`; it does no process or terminal I/O (progress is reported
//! through a callback the caller supplies).
//!
//! Departure from DESIGN.md §2, written down on purpose: `core` depends on
//! `emit-c`, because the "C per function" and "shard text" queries of §6 live
//! here. The edge still points one way: `emit-c` knows nothing of salsa.

mod db;
mod error;
mod generate;
mod host;
mod queries;
mod registry;

pub use db::{Db, FunctionId, RptDb, Session};
pub use error::CoreError;
pub use generate::{GeneratedFile, Generation, GenerationStats, Stage, generate};
pub use host::{ResolvedHost, host_desc, pipeline, resolve_host};
pub use queries::{
    ORIGINAL_SPAN_LIMIT, ProgramFacts, cpu_header, enabled_passes, function_after_passes, function_c,
    function_override, function_table_c, guest_image, image_c, lifted_function, listing_text, optimized_function,
    original_bytes_sha256, pass_reports, program_analysis, program_facts, recipe_overrides, shard_ir_text, shard_text,
    tier_c,
};
pub use registry::Registry;
