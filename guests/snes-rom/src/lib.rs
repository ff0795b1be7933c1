//! The SNES ROM guest: the cartridge loader ([`loader_rom`]: LoROM, HiROM and ExHiROM told apart by
//! scoring the internal header candidates), the 65816 decoder ([`decode`]: all 256 opcodes, with
//! operand lengths that depend on the M and X flags), discovery with the widths tracked along
//! every path ([`discover`]), the lifter (`lift/`), the register file ([`state`]), and the SNES
//! platform's C part in `platform/`.
//!
//! This crate owns everything rpt knows about the 65816 and SNES cartridges; the rest of rpt sees
//! it only through [`rpt_api::GuestPlugin`], implemented by [`SnesRom`].
//!
//! Function keys: one routine entered with different widths is one compiled function per entry
//! state. rpt names functions by guest address, so this guest's addresses are function keys: the
//! 24-bit address with the entry state in bits 24–26 ([`decode::Widths::key`]), RESET's state
//! (emulation mode) being the plain address. Every function, exit and coverage entry this guest
//! hands rpt is a key; marks and listing lines are plain addresses.

#![deny(missing_docs)]

pub mod decode;
pub mod discover;
mod lift;
pub mod loader_rom;
pub mod state;

use std::borrow::Cow;
use std::collections::BTreeSet;

use rpt_api::discover::Entry;
use rpt_api::{
    Diagnostic, Discovery, Externs, GuestError, GuestImage, GuestOptions, GuestPlugin, LiftResult, MemoryModel,
    ParamValue, PluginInfo, Seeds, Severity, SourceFile,
};
use rpt_ir::{ExitReason, Function, FunctionBuilder, GuestAddr, HelperDecl, StateDesc, Type};

use crate::decode::Widths;
use crate::loader_rom::Mapping;

pub use lift::{BUS_READ, BUS_WRITE, MASTER_CLOCKS_PER_CYCLE, POLL, WAIT, helpers};

/// The SNES ROM guest plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct SnesRom;

/// The name recipes use for this guest.
pub const NAME: &str = "snes-rom";
/// The one platform: the console (memory map, PPU ports, DMA, timing) in `platform/`.
pub const PLATFORM: &str = "snes";
/// The guest option naming the cartridge's mapping (`lorom`, `hirom`, `exhirom`) where the header
/// does not say it plausibly.
pub const MAPPING_OPTION: &str = "mapping";

/// The guest option pinning the widths routines are entered in, for code the walk cannot see
/// entered that way (reached through a pointer table, or after a PLP the walk could not follow):
/// `"808123:m16x16, 80a000:emu"` — a 24-bit hex address, then `emu` (emulation mode) or
/// `m8x8`, `m8x16`, `m16x8`, `m16x16` (native mode with those widths). Each becomes a function
/// entry in those widths.
pub const PIN_WIDTHS_OPTION: &str = "pin_widths";

/// The export names pinned entries travel under from `load` to `discover`.
const PINNED_EXPORT: &str = "pinned:";

/// The entries `pin_widths` names.
fn pinned_widths(options: &GuestOptions) -> Result<Vec<(u32, Widths)>, GuestError> {
    let Some(value) = options.get(PIN_WIDTHS_OPTION) else {
        return Ok(Vec::new());
    };
    let bad = |why: String| GuestError::BadOption {
        name: PIN_WIDTHS_OPTION.to_string(),
        why,
    };
    let ParamValue::Str(text) = value else {
        return Err(bad("give a string like \"808123:m16x16, 80a000:emu\"".to_string()));
    };
    let mut out = Vec::new();
    for item in text.split([',', ' ']).filter(|i| !i.is_empty()) {
        let (addr, widths) = item
            .split_once(':')
            .ok_or_else(|| bad(format!("`{item}` is not ADDRESS:WIDTHS")))?;
        let addr = u32::from_str_radix(addr.trim_start_matches('$'), 16)
            .ok()
            .filter(|a| *a <= 0xff_ffff)
            .ok_or_else(|| bad(format!("`{addr}` is not a 24-bit hex address")))?;
        let widths = match widths {
            "emu" => Widths::RESET,
            "m8x8" => NATIVE_ENTRY_WIDTHS[0],
            "m8x16" => NATIVE_ENTRY_WIDTHS[1],
            "m16x8" => NATIVE_ENTRY_WIDTHS[2],
            "m16x16" => NATIVE_ENTRY_WIDTHS[3],
            other => return Err(bad(format!("`{other}` is not emu, m8x8, m8x16, m16x8 or m16x16"))),
        };
        out.push((addr, widths));
    }
    Ok(out)
}

/// The widths a native-mode interrupt handler may be entered in: the interrupted code's, any.
pub const NATIVE_ENTRY_WIDTHS: [Widths; 4] = [
    Widths {
        m8: true,
        x8: true,
        emulation: false,
    },
    Widths {
        m8: true,
        x8: false,
        emulation: false,
    },
    Widths {
        m8: false,
        x8: true,
        emulation: false,
    },
    Widths {
        m8: false,
        x8: false,
        emulation: false,
    },
];

/// The mapping the options name, if any.
fn mapping_option(options: &GuestOptions) -> Result<Option<Mapping>, GuestError> {
    let Some(value) = options.get(MAPPING_OPTION) else {
        return Ok(None);
    };
    let bad = || GuestError::BadOption {
        name: MAPPING_OPTION.to_string(),
        why: "give one of \"lorom\", \"hirom\", \"exhirom\"".to_string(),
    };
    match value {
        ParamValue::Str(name) => Mapping::from_name(name).map(Some).ok_or_else(bad),
        _ => Err(bad()),
    }
}

/// The function keys of discovery's entries: default-context ones as they are, the others with
/// their widths in the key.
fn keys_of(found: rpt_api::discover::Found<Widths>) -> Discovery {
    let mut discovery = found.discovery;
    for Entry { addr, context } in found.variants {
        discovery.functions.insert(GuestAddr(context.key(addr.0 as u32)));
    }
    discovery
}

/// Splits function keys into the walker's plain entries and variants.
fn entries_of(keys: &BTreeSet<GuestAddr>) -> (BTreeSet<GuestAddr>, BTreeSet<Entry<Widths>>) {
    let mut plain = BTreeSet::new();
    let mut variants = BTreeSet::new();
    for &key in keys {
        match Widths::from_key(key.0) {
            Some((addr, widths)) if widths == Widths::RESET => {
                plain.insert(GuestAddr(u64::from(addr)));
            }
            Some((addr, widths)) => {
                variants.insert(Entry {
                    addr: GuestAddr(u64::from(addr)),
                    context: widths,
                });
            }
            None => {}
        }
    }
    (plain, variants)
}

/// A function that is only a guest fault at `key`: what lifting answers for a key that names no
/// state the CPU can be in.
fn fault_function(key: GuestAddr, state: &StateDesc) -> LiftResult {
    let mut function = Function::new(key);
    let mut b = FunctionBuilder::new(&mut function, state);
    let block = b.create_block();
    b.jump(block, Vec::new());
    b.switch_to_block(block);
    b.exit_at(key, ExitReason::Unliftable, Type::I32);
    LiftResult {
        function,
        diagnostics: vec![Diagnostic {
            severity: Severity::Error,
            addr: key,
            message: format!("{key} names no 65816 entry state (emulation mode with 16-bit registers)"),
        }],
        listing: Vec::new(),
    }
}

impl GuestPlugin for SnesRom {
    fn info(&self) -> PluginInfo {
        rpt_api::plugin_info!(NAME)
    }

    fn check_options(&self, options: &GuestOptions) -> Result<(), GuestError> {
        for name in options.keys() {
            if name != MAPPING_OPTION && name != PIN_WIDTHS_OPTION {
                return Err(GuestError::BadOption {
                    name: name.clone(),
                    why: format!("the {NAME} guest's options are `{MAPPING_OPTION}` and `{PIN_WIDTHS_OPTION}`"),
                });
            }
        }
        mapping_option(options)?;
        pinned_widths(options).map(|_| ())
    }

    fn state(&self, _options: &GuestOptions) -> StateDesc {
        state::state_desc()
    }

    fn helpers(&self, _options: &GuestOptions) -> Vec<HelperDecl> {
        helpers()
    }

    fn memory_model(&self, _platform: &str, _options: &GuestOptions) -> MemoryModel {
        MemoryModel {
            address_bits: 24,
            big_endian: false,
            // Assembly has no calling convention: a routine may take and leave anything in any
            // register, so nothing is scratch and everything passes through a call.
            stack_pointer: None,
            scratch_registers: Vec::new(),
            call_registers: state::state_desc().iter().map(|(id, _)| id).collect(),
        }
    }

    fn platforms(&self) -> Vec<String> {
        vec![PLATFORM.to_string()]
    }

    fn convert_image(&self, _file: &[u8]) -> Result<Vec<u8>, GuestError> {
        Err(GuestError::BadImage(format!(
            "the {NAME} guest loads SNES ROM files as they are; it converts nothing"
        )))
    }

    fn load(&self, image: &[u8], platform: &str, options: &GuestOptions) -> Result<GuestImage, GuestError> {
        rpt_api::find_platform(&[PLATFORM], platform, |p| p)?;
        let cartridge = loader_rom::parse(image, mapping_option(options)?)?;
        let mut image = cartridge.image();
        // Pinned entries travel as exports named by their key (`discover` takes them back out).
        for (addr, widths) in pinned_widths(options)? {
            if !image.is_code(GuestAddr(u64::from(addr))) {
                return Err(GuestError::BadOption {
                    name: PIN_WIDTHS_OPTION.to_string(),
                    why: format!("${addr:06X} is not in the cartridge's ROM"),
                });
            }
            image.exports.insert(
                format!("{PINNED_EXPORT}{:07x}", widths.key(addr)),
                GuestAddr(widths.key(addr)),
            );
        }
        Ok(image)
    }

    /// A cartridge imports nothing: the platform is reached through the bus.
    fn externs(&self, _image: &GuestImage, platform: &str) -> Result<Externs, GuestError> {
        rpt_api::find_platform(&[PLATFORM], platform, |p| p)?;
        Ok(Externs::default())
    }

    fn discover(&self, image: &GuestImage, seeds: &Seeds) -> Discovery {
        let native: BTreeSet<Entry<Widths>> = image
            .exports
            .iter()
            .filter(|(name, _)| loader_rom::NATIVE_VECTORS.contains(&name.as_str()))
            .flat_map(|(_, &addr)| {
                NATIVE_ENTRY_WIDTHS
                    .into_iter()
                    .map(move |context| Entry { addr, context })
            })
            .collect();
        let pinned: BTreeSet<GuestAddr> = image
            .exports
            .iter()
            .filter(|(name, _)| name.starts_with(PINNED_EXPORT))
            .map(|(_, &key)| key)
            .collect();
        let mut plain_image = image.clone();
        plain_image
            .exports
            .retain(|name, _| !loader_rom::NATIVE_VECTORS.contains(&name.as_str()) && !name.starts_with(PINNED_EXPORT));
        // Seeds are function keys (a coverage file names where the tier was entered, widths and
        // all): those in RESET's state are plain addresses, the others entries in their widths.
        let mut entries = native;
        let mut plain_seeds = Seeds::default();
        let entry_keys: BTreeSet<GuestAddr> = pinned.union(&seeds.entry_points).copied().collect();
        for (keys, plain) in [
            (&entry_keys, &mut plain_seeds.entry_points),
            (&seeds.function_hints, &mut plain_seeds.function_hints),
        ] {
            let (addresses, variants) = entries_of(keys);
            plain.extend(addresses);
            entries.extend(variants);
        }
        keys_of(rpt_api::discover::discover_with_entries(
            &discover::W65816,
            &plain_image,
            &plain_seeds,
            entries,
        ))
    }

    fn lift(
        &self,
        image: &GuestImage,
        entry: GuestAddr,
        functions: &BTreeSet<GuestAddr>,
        _options: &GuestOptions,
    ) -> LiftResult {
        let (plain, variants) = entries_of(functions);
        let walker = rpt_api::discover::Walker::with_variants(&discover::W65816, image, Cow::Owned(plain), variants);
        lift::lift_function(&walker, entry).unwrap_or_else(|| fault_function(entry, &state::state_desc()))
    }

    fn lift_uncovered(
        &self,
        image: &GuestImage,
        functions: &BTreeSet<GuestAddr>,
        covered: &BTreeSet<GuestAddr>,
        _options: &GuestOptions,
    ) -> Vec<LiftResult> {
        let (plain, variants) = entries_of(functions);
        // The tier sweeps the banks functions were found in, in every entry state functions were
        // found in: other mirrors of the same ROM and other states are where code rarely runs.
        let banks: BTreeSet<u64> = plain
            .iter()
            .chain(variants.iter().map(|e| &e.addr))
            .map(|a| a.0 >> 16)
            .collect();
        let mut contexts: BTreeSet<Widths> = variants.iter().map(|e| e.context).collect();
        contexts.insert(Widths::RESET);
        let fill = fill_runs(image, &banks);
        let in_fill = |addr: GuestAddr| fill.range(..=addr.0).next_back().is_some_and(|(_, &end)| addr.0 < end);
        let walker = rpt_api::discover::Walker::with_variants(&discover::W65816, image, Cow::Owned(plain), variants);
        let mut out = Vec::new();
        for context in contexts {
            let found = rpt_api::tier::uncovered_instructions_in(&walker, covered, context, |s| {
                banks.contains(&(s.addr.0 >> 16))
            });
            out.extend(
                found
                    .into_iter()
                    .filter(|&addr| !in_fill(addr))
                    .filter_map(|addr| lift::lift_instruction(&walker, GuestAddr(context.key(addr.0 as u32)))),
            );
        }
        out
    }

    fn runtime_sources(&self, platform: &str, _options: &GuestOptions) -> Result<Vec<SourceFile>, GuestError> {
        rpt_api::find_platform(&[PLATFORM], platform, |p| p)?;
        Ok(RUNTIME_SOURCES
            .iter()
            .map(|(path, contents)| SourceFile {
                path: path.to_string(),
                contents: contents.to_string(),
            })
            .collect())
    }
}

/// The guest's C part (`runtime/`: the CPU's side of the console, the host services on rpt's
/// runtime) and the SNES platform (`platform/`), as they go into a generation's `src/guest/`.
const RUNTIME_SOURCES: [(&str, &str); 13] = [
    ("guest/snes_runtime.c", include_str!("../runtime/snes_runtime.c")),
    ("guest/snes_host_rpt.c", include_str!("../runtime/snes_host_rpt.c")),
    ("guest/snes.h", include_str!("../platform/snes.h")),
    ("guest/snes_host.h", include_str!("../platform/snes_host.h")),
    ("guest/snes_internal.h", include_str!("../platform/snes_internal.h")),
    ("guest/snes_apu.c", include_str!("../platform/snes_apu.c")),
    ("guest/snes_bus.c", include_str!("../platform/snes_bus.c")),
    ("guest/snes_dma.c", include_str!("../platform/snes_dma.c")),
    ("guest/snes_frame.c", include_str!("../platform/snes_frame.c")),
    ("guest/snes_png.c", include_str!("../platform/snes_png.c")),
    ("guest/snes_ppu.c", include_str!("../platform/snes_ppu.c")),
    ("guest/snes_render.c", include_str!("../platform/snes_render.c")),
    ("guest/snes_timing.c", include_str!("../platform/snes_timing.c")),
];

/// Runs of one byte value 16 or more long in the ROM segments of `banks`, start to end: a
/// cartridge's padding and blank fill (`$00`, `$FF`), not code. The tier's sweep leaves them out;
/// a cartridge is mostly data, and every byte of fill would otherwise be an instruction row.
fn fill_runs(image: &GuestImage, banks: &BTreeSet<u64>) -> std::collections::BTreeMap<u64, u64> {
    const MIN_RUN: usize = 16;
    let mut runs = std::collections::BTreeMap::new();
    for segment in image
        .segments
        .iter()
        .filter(|s| s.flags.execute && banks.contains(&(s.addr.0 >> 16)))
    {
        let bytes = &segment.bytes;
        let mut start = 0;
        while start < bytes.len() {
            let value = bytes[start];
            let len = bytes[start..].iter().take_while(|&&b| b == value).count();
            if len >= MIN_RUN {
                runs.insert(segment.addr.0 + start as u64, segment.addr.0 + (start + len) as u64);
            }
            start += len;
        }
    }
    runs
}

/// This guest as rpt registers it.
pub fn plugin() -> rpt_api::Plugin {
    rpt_api::Plugin::Guest(std::sync::Arc::new(SnesRom))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_helper_is_defined_in_c() {
        let all: String = RUNTIME_SOURCES.iter().map(|(_, text)| *text).collect();
        for h in helpers() {
            assert!(
                all.contains(&format!(" rpt_helper_{}(struct cpu *restrict c", h.name)),
                "rpt_helper_{} is not defined",
                h.name
            );
        }
    }
}
