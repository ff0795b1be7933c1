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

/// Runs the golden lift files in `dir` whose kind is `kind` (`lift x86`). A case's code is the
/// hexadecimal bytes of its `field` lines (`bytes 90 c3 ; nop; ret`: what follows `;` is a comment),
/// placed at `addr` in an executable segment named `segment`.
///
/// By default the code is lifted as one function entered at `addr`, and the output is its listing
/// and IR. A file of kind `KIND program` is a whole image instead: discovery finds its functions,
/// and the output is what discovery concluded, every diagnostic, and each function's listing and
/// IR. Its input may add `data ADDR HEX` (a read-only segment), `import MODULE!NAME SLOT THUNK`,
/// `hint ADDR`, `entry_point ADDR` (the recipe's seeds) and `entry ADDR` (the image's entry).
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
        let code: Vec<u8> = case
            .fields(field)
            .map(|line| hex_bytes(uncommented(line)))
            .collect::<Result<Vec<_>, _>>()?
            .concat();
        if code.is_empty() {
            return Err(format!("no `{field}` line"));
        }
        let mut image = code_image(segment, addr, &code);
        if case.args.first().map(String::as_str) != Some("program") {
            let entry = GuestAddr(addr);
            let lifted = lift_verified(plugin, &image, entry, &BTreeSet::from([entry]), &options);
            return Ok(crate::filetest::single(lifted_text(&lifted, &state)?));
        }
        let seeds = add_program_lines(case, &mut image)?;
        let discovery = plugin.discover(&image, &seeds);
        let names = |set: &BTreeSet<GuestAddr>| {
            let names: Vec<String> = set.iter().map(|a| a.function_name()).collect();
            if names.is_empty() {
                "(none)".to_string()
            } else {
                names.join(" ")
            }
        };
        let mut out = format!(
            "; functions: {}\n; address taken: {}\n",
            names(&discovery.functions),
            names(&discovery.address_taken)
        );
        write_diagnostics(&mut out, "discovery", &discovery.diagnostics);
        for &f in &discovery.functions {
            let lifted = lift_verified(plugin, &image, f, &discovery.functions, &options);
            write_diagnostics(&mut out, "lift", &lifted.diagnostics);
            out.push_str(&lifted_text(&lifted, &state)?);
        }
        Ok(crate::filetest::single(out))
    });
}

/// One comment line per diagnostic, naming what made it.
fn write_diagnostics(out: &mut String, by: &str, diagnostics: &[Diagnostic]) {
    for d in diagnostics {
        let _ = writeln!(out, "; {by}: {:?} at {}: {}", d.severity, d.addr, d.message);
    }
}

/// A golden input line without its trailing `; comment`.
fn uncommented(line: &str) -> &str {
    line.split(';').next().unwrap_or_default().trim()
}

fn parse_addr(text: &str) -> Result<GuestAddr, String> {
    let digits = text.strip_prefix("0x").unwrap_or(text);
    u64::from_str_radix(digits, 16)
        .map(GuestAddr)
        .map_err(|_| format!("`{text}` is not a hexadecimal address"))
}

/// Adds a program case's data, imports and entry to `image`, and returns its seeds.
fn add_program_lines(case: &crate::filetest::Case, image: &mut GuestImage) -> Result<Seeds, String> {
    for line in case.fields("data") {
        let (addr, hex) = uncommented(line).split_once(' ').ok_or("`data ADDR HEX`")?;
        let bytes = hex_bytes(hex)?;
        image.segments.push(Segment {
            name: "data".to_string(),
            addr: parse_addr(addr)?,
            mem_size: bytes.len() as u64,
            bytes,
            flags: SegmentFlags {
                read: true,
                write: false,
                execute: false,
            },
        });
    }
    for line in case.fields("import") {
        let words: Vec<&str> = uncommented(line).split_whitespace().collect();
        let [name, slot, thunk] = words.as_slice() else {
            return Err(format!("`import MODULE!NAME SLOT THUNK`, not `{line}`"));
        };
        let (module, name) = name.split_once('!').ok_or("an import is `MODULE!NAME`")?;
        image.imports.push(rpt_api::Import {
            module: module.to_string(),
            name: name.to_string(),
            slot: parse_addr(slot)?,
            thunk: parse_addr(thunk)?,
        });
    }
    if let Some(entry) = case.field("entry") {
        image.entry = parse_addr(uncommented(entry))?;
    }
    let addrs = |key| {
        case.fields(key)
            .map(|l| parse_addr(uncommented(l)))
            .collect::<Result<BTreeSet<_>, _>>()
    };
    Ok(Seeds {
        entry_points: addrs("entry_point")?,
        function_hints: addrs("hint")?,
    })
}
