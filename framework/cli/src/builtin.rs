//! The plugins built into the rpt binary, registered through the same interfaces dynamic plugins use.

use std::sync::Arc;

use rpt_core::Registry;

/// A registry holding every built-in guest, host and pass.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add_guest(Arc::new(rpt_guest_x86_pe::X86Pe));
    registry.add_guest(Arc::new(rpt_guest_ppc_dol::PpcDol));
    registry.add_host(Arc::new(rpt_host_x86_64::X86_64Host));
    registry.add_host(Arc::new(rpt_host_aarch64::Aarch64Host));
    registry.add_host(Arc::new(rpt_host_loongarch64::Loongarch64Host));
    registry.add_pass(Arc::new(rpt_pass_flag_abi::FlagAbiPass));
    registry.add_pass(Arc::new(rpt_pass_memarg::MemargPass));
    registry.add_pass(Arc::new(rpt_pass_x87_regions::X87RegionsPass));
    registry.add_pass(Arc::new(rpt_pass_example::FoldConstants));
    registry
}
