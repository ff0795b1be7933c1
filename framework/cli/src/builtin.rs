//! The plugins built into the rpt binary, registered through the same interfaces dynamic plugins use.
//!
//! The list comes from `build.rs`: every `rpt-guest-*`, `rpt-host-*` and `rpt-pass-*` crate this
//! crate depends on.

use rpt_core::Registry;

include!(concat!(env!("OUT_DIR"), "/builtin_plugins.rs"));

/// A registry holding every built-in guest, host and pass.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    for plugin in BUILTIN_PLUGINS {
        registry.add(plugin());
    }
    registry
}
