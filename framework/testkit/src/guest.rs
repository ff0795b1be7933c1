//! Lifting in tests, for any guest: images from raw bytes, lifting with verification, and the
//! text golden files compare.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use rpt_api::{Diagnostic, GuestImage, GuestOptions, GuestPlugin, LiftResult, Seeds, Segment, SegmentFlags};
use rpt_ir::verify::{VerifyContext, verify_function};
use rpt_ir::{GuestAddr, Program, StateDesc};

/// Bytes from hexadecimal digits, white space between them ignored (`dd442404 c3`).
pub fn hex_bytes(text: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if !digits.len().is_multiple_of(2) {
        return Err(format!("`{text}` has an odd number of hex digits"));
    }
    digits
        .chunks(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|s| u8::from_str_radix(s, 16).ok())
                .ok_or_else(|| format!("`{text}` is not hexadecimal"))
        })
        .collect()
}

/// Bytes as hexadecimal digits without spaces (`dd442404c3`), as [`hex_bytes`] reads them back.
pub fn hex_text(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An image of one executable segment, `code` at `addr`, entered at its start.
pub fn code_image(segment: &str, addr: u64, code: &[u8]) -> GuestImage {
    let flags = SegmentFlags {
        read: true,
        write: false,
        execute: true,
    };
    one_segment_image(segment, addr, code, code.len() as u64, flags, GuestAddr(addr))
}

/// An image of one writable data segment of `mem_size` bytes at `addr` that starts with `bytes`,
/// for code elsewhere entered at `entry`.
pub fn data_image(segment: &str, addr: u64, bytes: &[u8], mem_size: u64, entry: GuestAddr) -> GuestImage {
    let flags = SegmentFlags {
        read: true,
        write: true,
        execute: false,
    };
    one_segment_image(segment, addr, bytes, mem_size, flags, entry)
}

/// An image with no segments, entered at `entry`: what a test driver that loads its own memory
/// links in place of a guest's data.
pub fn image_without_segments(entry: GuestAddr) -> GuestImage {
    GuestImage {
        segments: Vec::new(),
        entry,
        exports: BTreeMap::new(),
        imports: Vec::new(),
    }
}

fn one_segment_image(
    segment: &str,
    addr: u64,
    bytes: &[u8],
    mem_size: u64,
    flags: SegmentFlags,
    entry: GuestAddr,
) -> GuestImage {
    GuestImage {
        segments: vec![Segment {
            name: segment.to_string(),
            addr: GuestAddr(addr),
            bytes: bytes.to_vec(),
            mem_size,
            flags,
        }],
        ..image_without_segments(entry)
    }
}

/// The guest's helpers by name under `options`.
pub fn helpers_of(plugin: &dyn GuestPlugin, options: &GuestOptions) -> BTreeMap<String, rpt_ir::HelperDecl> {
    plugin
        .helpers(options)
        .into_iter()
        .map(|h| (h.name.clone(), h))
        .collect()
}

/// Lifts one function and verifies it against the guest's state and helpers, the functions and
/// the image's import thunks; panics with the function's text when it does not verify.
pub fn lift_verified(
    plugin: &dyn GuestPlugin,
    image: &GuestImage,
    entry: GuestAddr,
    functions: &BTreeSet<GuestAddr>,
    options: &GuestOptions,
) -> LiftResult {
    let result = plugin.lift(image, entry, functions, options);
    let state = plugin.state(options);
    let callees: BTreeSet<GuestAddr> = functions
        .iter()
        .copied()
        .chain(image.imports.iter().map(|i| i.thunk))
        .collect();
    let helpers = helpers_of(plugin, options);
    let ctx = VerifyContext {
        state: &state,
        helpers: Some(&helpers),
        callees: Some(&callees),
    };
    if let Err(e) = verify_function(&result.function, ctx) {
        panic!(
            "{} does not verify:\n{e}\n{}",
            entry.function_name(),
            rpt_ir::print::function_to_string(&result.function, &state)
        );
    }
    result
}

/// Discovers and lifts a whole image into a verified program (imports become externs named
/// `module!name`), with every diagnostic of discovery and lifting.
pub fn lift_program(
    plugin: &dyn GuestPlugin,
    image: &GuestImage,
    seeds: &Seeds,
    options: &GuestOptions,
) -> (Program, Vec<Diagnostic>) {
    let discovery = plugin.discover(image, seeds);
    let mut program = Program::new(plugin.state(options));
    program.helpers = helpers_of(plugin, options);
    let mut diagnostics = discovery.diagnostics.clone();
    for &f in &discovery.functions {
        let lifted = lift_verified(plugin, image, f, &discovery.functions, options);
        diagnostics.extend(lifted.diagnostics);
        program.functions.insert(f, lifted.function);
    }
    for import in &image.imports {
        program
            .externs
            .insert(import.thunk, format!("{}!{}", import.module, import.name));
    }
    program.address_taken = discovery.address_taken;
    if let Err(e) = rpt_ir::verify::verify_program(&program) {
        panic!("the program does not verify:\n{e}");
    }
    (program, diagnostics)
}

/// A lifted function as golden files hold it: the listing as comment lines, then the IR, which
/// must read back as the same function (so the golden text is real IR).
pub fn lifted_text(lifted: &LiftResult, state: &StateDesc) -> Result<String, String> {
    let ir = rpt_ir::print::function_to_string(&lifted.function, state);
    let parsed =
        rpt_ir::parse::parse_function(&ir, state).map_err(|e| format!("the lifted IR does not parse back: {e}"))?;
    if parsed != lifted.function {
        return Err(format!("the lifted IR reads back as another function:\n{ir}"));
    }
    let mut out = String::new();
    for (addr, insn) in &lifted.listing {
        let _ = writeln!(out, "; {addr}  {insn}");
    }
    out.push_str(&ir);
    Ok(out)
}

/// Runs the golden lift files in `dir` whose kind is `kind` (`lift x86`): each case's code, the
/// hexadecimal bytes on its `field` line, is placed at `addr` in a segment named `segment` and
/// lifted by `plugin` as one function with default options; its listing and IR are the output.
pub fn run_lift_goldens(
    dir: &std::path::Path,
    plugin: &dyn GuestPlugin,
    kind: &str,
    field: &str,
    segment: &str,
    addr: u64,
) {
    let options = GuestOptions::new();
    let state = plugin.state(&options);
    crate::filetest::run(dir, kind, |case| {
        let line = case.field(field).ok_or_else(|| format!("no `{field}` line"))?;
        let image = code_image(segment, addr, &hex_bytes(line)?);
        let entry = GuestAddr(addr);
        let lifted = lift_verified(plugin, &image, entry, &BTreeSet::from([entry]), &options);
        Ok(crate::filetest::single(lifted_text(&lifted, &state)?))
    });
}
