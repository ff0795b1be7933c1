//! The x86 PE guest: PE32 loader, iced-x86 decoder, function discovery, the lifter from 32-bit
//! x86 integer code to rpt's IR, the register file, and the `win32-console` platform with its C
//! runtime part.
//!
//! This crate owns everything rpt knows about 32-bit x86 and Windows PE images; the rest of rpt
//! sees it only through [`rpt_api::GuestPlugin`], implemented by [`X86Pe`]. It knows nothing of
//! salsa, recipes or the C emitter.
//!
//! Map: [`state`] (slots), [`loader_pe`] (PE32 → segments, imports with thunks), [`decode`]
//! (iced-x86 and Intel-syntax text), `discover` (strong and weak function discovery, the
//! per-function walk), `lift/` (one file per instruction family; [`is_liftable`] asks its table),
//! [`platform`] (platforms and their import tables), [`x87`] (the x87 helpers' names and numbers),
//! `runtime/` and `platform/` (C files), and [`interp`], which runs the x87 helpers' C for the IR
//! interpreter.

#![deny(missing_docs)]

pub mod decode;
mod discover;
pub mod eh;
pub mod interp;
mod lift;
pub mod loader_pe;
pub mod platform;
pub mod state;
pub mod x87;

use std::borrow::Cow;
use std::collections::BTreeSet;

use rpt_api::{
    Discovery, Externs, GuestError, GuestImage, GuestOptions, GuestPlugin, LiftResult, MemoryModel, PluginInfo, Seeds,
    SourceFile,
};
use rpt_ir::{GuestAddr, HelperDecl, StateDesc};

/// The x86 PE guest plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct X86Pe;

/// The name recipes use for this guest.
pub const NAME: &str = "x86-pe";

impl GuestPlugin for X86Pe {
    /// `x87`: the x87 value model, `"f80"` (exact, the default) or `"f64"` (fast; docs/x87.md).
    /// `ret_eip`: whether `ret` stores the return address in `eip` (default false: nothing reads
    /// it after a lifted return; the option exists to measure that, as RETEIP in
    /// ../shared/reference/001).
    fn check_options(&self, options: &GuestOptions) -> Result<(), GuestError> {
        for (name, value) in options {
            let why = match (name.as_str(), value) {
                ("x87", rpt_api::ParamValue::Str(model)) if x87::Model::from_name(model).is_some() => continue,
                ("x87", _) => "the x87 value model is \"f80\" (exact) or \"f64\" (fast)".to_string(),
                ("ret_eip", rpt_api::ParamValue::Bool(_)) => continue,
                ("ret_eip", _) => "ret_eip is true or false".to_string(),
                _ => "the x86-pe guest has no such option".to_string(),
            };
            return Err(GuestError::BadOption {
                name: name.clone(),
                why,
            });
        }
        Ok(())
    }

    fn state(&self, _options: &GuestOptions) -> StateDesc {
        state::state_desc()
    }

    /// The x87 helpers (integer code is plain IR).
    fn helpers(&self, _options: &GuestOptions) -> Vec<HelperDecl> {
        x87::helpers()
    }

    fn memory_model(&self, _platform: &str, _options: &GuestOptions) -> MemoryModel {
        MemoryModel {
            address_bits: 32,
            big_endian: false,
            stack_pointer: Some(crate::state::ESP),
            scratch_registers: crate::state::scratch_registers(),
            call_registers: crate::state::call_registers(),
        }
    }

    fn platforms(&self) -> Vec<String> {
        platform::PLATFORMS.iter().map(|p| p.name.to_string()).collect()
    }

    /// A PE is loaded as it is; there is nothing to convert.
    fn convert_image(&self, _file: &[u8]) -> Result<Vec<u8>, GuestError> {
        Err(GuestError::BadImage(
            "the x86-pe guest loads PE files as they are and converts no other format".to_string(),
        ))
    }

    fn load(&self, image: &[u8], _platform: &str, _options: &GuestOptions) -> Result<GuestImage, GuestError> {
        loader_pe::load(image)
    }

    fn externs(&self, image: &GuestImage, platform: &str) -> Result<Externs, GuestError> {
        platform::externs(image, platform)
    }

    fn discover(&self, image: &GuestImage, seeds: &Seeds) -> Discovery {
        discover::discover(image, seeds)
    }

    fn lift(
        &self,
        image: &GuestImage,
        entry: GuestAddr,
        functions: &BTreeSet<GuestAddr>,
        options: &GuestOptions,
    ) -> LiftResult {
        let isa = discover::X86::new(image);
        let walker = discover::Walker::new(&isa, image, Cow::Borrowed(functions));
        let ret_eip = matches!(options.get("ret_eip"), Some(rpt_api::ParamValue::Bool(true)));
        lift::lift_function(&walker, entry, ret_eip)
    }

    fn lift_uncovered(
        &self,
        image: &GuestImage,
        functions: &BTreeSet<GuestAddr>,
        covered: &BTreeSet<GuestAddr>,
        options: &GuestOptions,
    ) -> Vec<LiftResult> {
        let isa = discover::X86::new(image);
        let walker = discover::Walker::new(&isa, image, Cow::Borrowed(functions));
        let ret_eip = matches!(options.get("ret_eip"), Some(rpt_api::ParamValue::Bool(true)));
        rpt_api::tier::uncovered_instructions(&walker, covered)
            .into_iter()
            .filter_map(|addr| lift::lift_instruction(&walker, addr, ret_eip))
            .collect()
    }

    fn runtime_sources(&self, platform: &str, options: &GuestOptions) -> Result<Vec<SourceFile>, GuestError> {
        platform::runtime_sources(platform, x87::Model::from_options(options))
    }

    fn info(&self) -> PluginInfo {
        rpt_api::plugin_info!(NAME)
    }
}

/// Whether the lifter has a rule for this instruction (the same table discovery uses).
pub fn is_liftable(insn: &iced_x86::Instruction) -> bool {
    lift::classify(insn).is_some()
}

/// This guest as rpt registers it (`framework/cli/Cargo.toml` lists the built-in ones).
pub fn plugin() -> rpt_api::Plugin {
    rpt_api::Plugin::Guest(std::sync::Arc::new(X86Pe))
}
