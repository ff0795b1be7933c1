//! The PowerPC DOL guest: the DOL loader (and an ELF-to-DOL converter for test programs), a
//! table-driven decoder for the 750CL user ISA as Gekko/Broadway use it, function discovery, the
//! lifter to rpt's IR, the register file, and the `linux-syscalls` platform with its C part.
//!
//! This crate owns everything rpt knows about PowerPC and DOL files; the rest of rpt sees it only
//! through [`rpt_api::GuestPlugin`], implemented by [`PpcDol`]. It knows nothing of salsa,
//! recipes or the C emitter.
//!
//! Map: [`state`] (slots: GPRs, FPRs with paired-single halves, CR fields as slots of their own, XER bits packed),
//! [`loader_dol`] (DOL → segments, with the GameCube address map checked), [`elf2dol`],
//! [`decode`] (the row table: bit patterns, mnemonics, lift functions), `discover` (functions,
//! jump tables), `lift/` (one file per instruction family; paired singles in `lift/ps.rs`),
//! [`estimate`] (fres/frsqrte) and [`quantize`] (psq_l/psq_st), whose definitions are C,
//! [`platform`], the C files in `runtime/` and `platform/`, and [`interp`], which runs the
//! helpers' C for the IR interpreter.

#![deny(missing_docs)]

pub mod decode;
mod discover;
pub mod elf2dol;
pub mod estimate;
pub mod interp;
mod lift;
pub mod loader_dol;
mod nonlocal;
pub mod platform;
pub mod quantize;
pub mod state;

use std::borrow::Cow;
use std::collections::BTreeSet;

use rpt_api::{
    Discovery, Externs, GuestError, GuestImage, GuestOptions, GuestPlugin, LiftResult, MemoryModel, PluginInfo, Seeds,
    SourceFile,
};
use rpt_ir::{Effects, GuestAddr, HelperDecl, StateDesc, Type};

pub use lift::alu::rotate_mask;
pub use lift::fp::DEFAULT_NAN;
pub use lift::system::{SC_HELPER, TIMEBASE_HELPER};

/// The PowerPC DOL guest plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct PpcDol;

#[cfg(feature = "export-plugin")]
rpt_api::export_guest!(PpcDol, PpcDol);

/// The name recipes use for this guest.
pub const NAME: &str = "ppc-dol";

/// Every helper lifted code may call.
pub fn helpers() -> Vec<HelperDecl> {
    let mut out = lift::system::helpers();
    out.extend(lift::ps::helpers());
    for name in [estimate::FRES_HELPER, estimate::FRSQRTE_HELPER] {
        out.push(HelperDecl {
            name: name.to_string(),
            params: vec![Type::I64],
            result: Some(Type::I64),
            effects: Effects::PURE,
            touches: Vec::new(),
        });
    }
    out
}

impl GuestPlugin for PpcDol {
    /// The options name the program's own `setjmp` and `longjmp` ([`nonlocal`]); any other is a typo.
    fn check_options(&self, options: &GuestOptions) -> Result<(), GuestError> {
        nonlocal::check_options(options)
    }

    fn state(&self, _options: &GuestOptions) -> StateDesc {
        state::state_desc()
    }

    fn helpers(&self, _options: &GuestOptions) -> Vec<HelperDecl> {
        helpers()
    }

    fn memory_model(&self, _platform: &str, _options: &GuestOptions) -> MemoryModel {
        MemoryModel {
            address_bits: 32,
            big_endian: true,
            stack_pointer: Some(crate::state::gpr(1)),
            scratch_registers: crate::state::scratch_registers(),
            call_registers: crate::state::call_registers(),
        }
    }

    fn platforms(&self) -> Vec<String> {
        platform::PLATFORMS.iter().map(|p| p.name.to_string()).collect()
    }

    /// A PowerPC ELF executable linked at GameCube addresses becomes a DOL ([`elf2dol`]).
    fn convert_image(&self, file: &[u8]) -> Result<Vec<u8>, GuestError> {
        elf2dol::convert(file)
    }

    fn load(&self, image: &[u8], _platform: &str, options: &GuestOptions) -> Result<GuestImage, GuestError> {
        let mut image = loader_dol::load(image)?;
        nonlocal::add_imports(&mut image, options)?;
        Ok(image)
    }

    /// A DOL imports nothing and reaches the platform through `sc`; the only imports are the
    /// program's own `setjmp` and `longjmp` when the recipe names them ([`nonlocal`]).
    fn externs(&self, image: &GuestImage, platform: &str) -> Result<Externs, GuestError> {
        platform::find(platform)?;
        Ok(Externs {
            implemented: image
                .imports
                .iter()
                .map(|i| (i.thunk, nonlocal::symbol(&i.name)))
                .collect(),
            missing: Vec::new(),
            // The only imports are the program's own setjmp and longjmp, whose C reads and
            // restores the CR fields.
            flag_transparent: BTreeSet::new(),
            // setjmp touches every register; longjmp reads its arguments and never returns.
            state_use: nonlocal::state_use(image),
        })
    }

    fn discover(&self, image: &GuestImage, seeds: &Seeds) -> Discovery {
        discover::discover(image, seeds)
    }

    fn lift(
        &self,
        image: &GuestImage,
        entry: GuestAddr,
        functions: &BTreeSet<GuestAddr>,
        _options: &GuestOptions,
    ) -> LiftResult {
        let isa = discover::Ppc::new(image);
        let walker = discover::Walker::new(&isa, image, Cow::Borrowed(functions));
        lift::lift_function(&walker, entry)
    }

    fn lift_uncovered(
        &self,
        image: &GuestImage,
        functions: &BTreeSet<GuestAddr>,
        covered: &BTreeSet<GuestAddr>,
        _options: &GuestOptions,
    ) -> Vec<LiftResult> {
        let isa = discover::Ppc::new(image);
        let walker = discover::Walker::new(&isa, image, Cow::Borrowed(functions));
        rpt_api::tier::uncovered_instructions(&walker, covered)
            .into_iter()
            .filter_map(|addr| lift::lift_instruction(&walker, addr))
            .collect()
    }

    fn runtime_sources(&self, platform: &str, _options: &GuestOptions) -> Result<Vec<SourceFile>, GuestError> {
        platform::runtime_sources(platform)
    }

    fn info(&self) -> PluginInfo {
        rpt_api::plugin_info!(NAME)
    }
}

/// This guest as rpt registers it (`framework/cli/Cargo.toml` lists the built-in ones).
pub fn plugin() -> rpt_api::Plugin {
    rpt_api::Plugin::Guest(std::sync::Arc::new(PpcDol))
}
