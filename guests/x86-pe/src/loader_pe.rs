//! The PE32 loader: sections become segments, imports get thunk addresses written into their IAT slots.
//!
//! Decisions written down here:
//! - The image is placed at its preferred `ImageBase`, so base relocations are ignored.
//!   Programs built with `--disable-dynamicbase` (as rpt's recipes ask) never need them, and a
//!   flat 4 GiB guest address space always has room at the preferred base.
//! - The PE headers are loaded as a read-only segment named `headers` at `ImageBase`, as Windows
//!   maps them; some programs read their own headers.
//! - Import `i` (in import-descriptor order, then thunk order) gets the thunk address
//!   `0xfff00000 + 16*i` (docs/c-abi.md), and the loader stores that address into its IAT slot,
//!   so `call [__imp_X]` reaches the platform's extern through ordinary dispatch.
//! - Imports by ordinal are named `#<ordinal>`; no platform implements them, so they surface as
//!   `MissingImport` errors rather than silent misbehaviour.
//! - The Windows loader calls TLS callbacks (data directory 9) before the entry point; they are added
//!   to the exports as `tls_callback_<i>`, so discovery lifts them although only data names them.
//! - Refused with a message: a truncated file, sections that overlap or lie beyond 4 GiB or beyond
//!   the file, an entry point outside every section (a DLL may have none), an import table or TLS
//!   directory that is not inside the file's section data, and import names outside the file.
//! - Bad input never panics: every read of file data is bounds-checked and reported as `BadImage`.

use std::collections::BTreeMap;

use object::LittleEndian as LE;
use object::pe;
use object::read::pe::{ImageNtHeaders, ImageOptionalHeader, ImageThunkData, PeFile32};
use rpt_api::{GuestError, GuestImage, Import, Segment, SegmentFlags};
use rpt_ir::GuestAddr;

/// Where the first import's thunk lives; import `i` is at `THUNK_BASE + THUNK_STRIDE * i`.
pub const THUNK_BASE: u32 = 0xfff0_0000;
/// The distance between two import thunks.
pub const THUNK_STRIDE: u32 = 16;

fn bad(message: impl Into<String>) -> GuestError {
    GuestError::BadImage(message.into())
}

/// Parses a PE32 (32-bit x86) image into segments, entry, exports and imports.
pub fn load(file: &[u8]) -> Result<GuestImage, GuestError> {
    // Check the optional header's magic ourselves first: object's own error for a PE32+ file
    // does not say that the file is simply the wrong width.
    match object::read::pe::optional_header_magic(file) {
        Ok(pe::IMAGE_NT_OPTIONAL_HDR32_MAGIC) => {}
        Ok(pe::IMAGE_NT_OPTIONAL_HDR64_MAGIC) => {
            return Err(bad(
                "this is a 64-bit PE (PE32+); the x86-pe guest loads 32-bit PE32 images only",
            ));
        }
        Ok(magic) => return Err(bad(format!("not a PE32 image: optional header magic {magic:#06x}"))),
        Err(e) => return Err(bad(format!("not a PE image: {e}"))),
    }
    let pe = PeFile32::parse(file).map_err(|e| bad(format!("malformed PE32 image: {e}")))?;
    let nt = pe.nt_headers();
    let machine = nt.file_header().machine.get(LE);
    if machine != pe::IMAGE_FILE_MACHINE_I386 {
        return Err(bad(format!("PE machine type {machine:#06x} is not i386 (0x014c)")));
    }
    let opt = nt.optional_header();
    let base = u32::try_from(opt.image_base()).map_err(|_| bad("ImageBase does not fit in 32 bits"))?;

    let mut segments = Vec::new();
    segments.push(headers_segment(file, base, opt.size_of_headers())?);
    for section in pe.section_table().iter() {
        segments.push(section_segment(file, base, section)?);
    }
    segments.sort_by_key(|s| s.addr);
    for pair in segments.windows(2) {
        if let [a, b] = pair
            && a.addr.0.saturating_add(a.mem_size) > b.addr.0
        {
            return Err(bad(format!("sections `{}` and `{}` overlap", a.name, b.name)));
        }
    }

    let entry_rva = opt.address_of_entry_point();
    let entry = GuestAddr(u64::from(
        base.checked_add(entry_rva)
            .ok_or_else(|| bad("the entry point lies beyond 4 GiB"))?,
    ));
    let is_dll = nt.file_header().characteristics.get(LE).intersects(pe::IMAGE_FILE_DLL);
    // A DLL may have no entry point (RVA 0); a program must start inside one of its sections.
    let entry_in_section = segments.iter().any(|s| s.name != "headers" && in_segment(s, entry.0));
    let no_entry = is_dll && entry_rva == 0;
    if !entry_in_section && !no_entry {
        return Err(bad(format!(
            "the entry point {:#x} (RVA {entry_rva:#x}) lies outside every section",
            entry.0
        )));
    }
    let data_dirs = pe.data_directories();
    check_directory(
        &segments,
        base,
        &data_dirs,
        pe::IMAGE_DIRECTORY_ENTRY_IMPORT,
        "import table",
    )?;
    let mut exports = exports(&pe, base)?;
    for (i, callback) in tls_callbacks(&segments, base, &data_dirs)?.into_iter().enumerate() {
        exports.insert(format!("tls_callback_{i}"), callback);
    }
    let imports = imports(&pe, base)?;
    for import in &imports {
        write_slot(&mut segments, import)?;
    }
    Ok(GuestImage {
        segments,
        entry,
        exports,
        imports,
    })
}

/// Checks that data directory `index`, when present, lies in bytes the file holds for a section.
fn check_directory(
    segments: &[Segment],
    base: u32,
    dirs: &object::read::pe::DataDirectories<'_>,
    index: usize,
    what: &str,
) -> Result<(), GuestError> {
    let Some(dir) = dirs.get(index) else { return Ok(()) };
    let (rva, size) = (dir.virtual_address.get(LE), dir.size.get(LE));
    if rva == 0 {
        return Ok(());
    }
    let start = u64::from(base) + u64::from(rva);
    let inside = segments.iter().any(|s| {
        s.name != "headers" && start >= s.addr.0 && start + u64::from(size.max(1)) <= s.addr.0 + s.bytes.len() as u64
    });
    if inside {
        Ok(())
    } else {
        Err(bad(format!(
            "the {what} (RVA {rva:#x}, {size:#x} bytes) lies outside the data the file holds for its sections"
        )))
    }
}

/// Whether `addr` lies in the segment's memory range.
fn in_segment(s: &Segment, addr: u64) -> bool {
    addr >= s.addr.0 && addr - s.addr.0 < s.mem_size
}

/// Reads a 32-bit word of initialised image data at a guest address.
fn word_at(segments: &[Segment], addr: u64) -> Option<u32> {
    let seg = segments.iter().find(|s| in_segment(s, addr))?;
    let off = usize::try_from(addr - seg.addr.0).ok()?;
    let bytes = seg.bytes.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

/// The TLS callbacks the Windows loader calls before the entry point (data directory 9), so
/// discovery can lift them even though only data names them.
fn tls_callbacks(
    segments: &[Segment],
    base: u32,
    dirs: &object::read::pe::DataDirectories<'_>,
) -> Result<Vec<GuestAddr>, GuestError> {
    let Some(dir) = dirs.get(pe::IMAGE_DIRECTORY_ENTRY_TLS) else {
        return Ok(Vec::new());
    };
    if dir.virtual_address.get(LE) == 0 {
        return Ok(Vec::new());
    }
    check_directory(segments, base, dirs, pe::IMAGE_DIRECTORY_ENTRY_TLS, "TLS directory")?;
    let tls = u64::from(base) + u64::from(dir.virtual_address.get(LE));
    // IMAGE_TLS_DIRECTORY32.AddressOfCallBacks is its fourth word: a VA of a zero-terminated array.
    let table = word_at(segments, tls + 12).ok_or_else(|| bad("the TLS directory is truncated"))?;
    let mut out = Vec::new();
    if table == 0 {
        return Ok(out);
    }
    for i in 0..256u64 {
        let callback = word_at(segments, u64::from(table) + 4 * i).ok_or_else(|| {
            bad(format!(
                "the TLS callback table at {table:#x} lies outside the image's data"
            ))
        })?;
        if callback == 0 {
            return Ok(out);
        }
        out.push(GuestAddr(u64::from(callback)));
    }
    Err(bad(format!("the TLS callback table at {table:#x} has no end")))
}

fn headers_segment(file: &[u8], base: u32, size_of_headers: u32) -> Result<Segment, GuestError> {
    let len = usize::try_from(size_of_headers).unwrap_or(usize::MAX).min(file.len());
    let bytes = file.get(..len).ok_or_else(|| bad("truncated headers"))?.to_vec();
    Ok(Segment {
        name: "headers".to_string(),
        addr: GuestAddr(u64::from(base)),
        mem_size: bytes.len() as u64,
        bytes,
        flags: SegmentFlags {
            read: true,
            write: false,
            execute: false,
        },
    })
}

fn section_segment(file: &[u8], base: u32, section: &pe::ImageSectionHeader) -> Result<Segment, GuestError> {
    let name = String::from_utf8_lossy(section.raw_name())
        .trim_end_matches('\0')
        .to_string();
    let rva = section.virtual_address.get(LE);
    let vsize = section.virtual_size.get(LE);
    let raw_size = section.size_of_raw_data.get(LE);
    let raw_ptr = section.pointer_to_raw_data.get(LE);
    // Old linkers leave VirtualSize zero; the raw size is then the section's size (PE/COFF spec).
    let mem_size = if vsize == 0 { raw_size } else { vsize };
    let addr = base
        .checked_add(rva)
        .ok_or_else(|| bad(format!("section `{name}` lies beyond 4 GiB")))?;
    if u64::from(addr) + u64::from(mem_size) > 1 << 32 {
        return Err(bad(format!(
            "section `{name}` ({addr:#x} + {mem_size:#x}) extends beyond 4 GiB"
        )));
    }
    let init = raw_size.min(mem_size) as usize;
    let bytes = if init == 0 {
        Vec::new()
    } else {
        let start = raw_ptr as usize;
        file.get(start..start.saturating_add(init))
            .ok_or_else(|| {
                bad(format!(
                    "section `{name}` claims file bytes {raw_ptr:#x}..{:#x} but the file has {:#x} bytes",
                    u64::from(raw_ptr) + init as u64,
                    file.len()
                ))
            })?
            .to_vec()
    };
    let ch = section.characteristics.get(LE);
    let flags = SegmentFlags {
        read: ch.intersects(pe::IMAGE_SCN_MEM_READ),
        write: ch.intersects(pe::IMAGE_SCN_MEM_WRITE),
        execute: ch.intersects(pe::IMAGE_SCN_MEM_EXECUTE | pe::IMAGE_SCN_CNT_CODE),
    };
    Ok(Segment {
        name,
        addr: GuestAddr(u64::from(addr)),
        bytes,
        mem_size: u64::from(mem_size),
        flags,
    })
}

fn exports(pe: &PeFile32<'_>, base: u32) -> Result<BTreeMap<String, GuestAddr>, GuestError> {
    let mut out = BTreeMap::new();
    let Some(table) = pe.export_table().map_err(|e| bad(format!("bad export table: {e}")))? else {
        return Ok(out);
    };
    for export in table.exports().map_err(|e| bad(format!("bad export table: {e}")))? {
        // Forwarders name code in another DLL; there is nothing here to lift for them.
        let object::read::pe::ExportTarget::Address(rva) = export.target else {
            continue;
        };
        let name = match export.name {
            Some(n) => String::from_utf8_lossy(n).into_owned(),
            None => format!("#{}", export.ordinal.0),
        };
        out.insert(name, GuestAddr(u64::from(base.wrapping_add(rva))));
    }
    Ok(out)
}

fn imports(pe: &PeFile32<'_>, base: u32) -> Result<Vec<Import>, GuestError> {
    let mut out = Vec::new();
    let Some(table) = pe.import_table().map_err(|e| bad(format!("bad import table: {e}")))? else {
        return Ok(out);
    };
    let mut descriptors = table.descriptors().map_err(|e| bad(format!("bad import table: {e}")))?;
    while let Some(desc) = descriptors
        .next()
        .map_err(|e| bad(format!("bad import descriptor: {e}")))?
    {
        let module = table
            .name(desc.name.get(LE))
            .map_err(|e| bad(format!("bad import module name: {e}")))?;
        let module = String::from_utf8_lossy(module).into_owned();
        let iat = desc.first_thunk.get(LE);
        // The lookup table keeps the names even when the IAT was pre-bound; old linkers omit it.
        let lookup = match desc.original_first_thunk.get(LE) {
            0 => iat,
            rva => rva,
        };
        let mut thunks = table
            .thunks(lookup)
            .map_err(|e| bad(format!("bad import thunks of {module}: {e}")))?;
        let mut index: u32 = 0;
        while let Some(thunk) = thunks
            .next::<pe::ImageNtHeaders32>()
            .map_err(|e| bad(format!("bad import thunks of {module}: {e}")))?
        {
            let name = if thunk.is_ordinal() {
                format!("#{}", thunk.ordinal())
            } else {
                let (_hint, name) = table
                    .hint_name(thunk.address())
                    .map_err(|e| bad(format!("bad import name in {module}: {e}")))?;
                String::from_utf8_lossy(name).into_owned()
            };
            let slot_rva = index
                .checked_mul(4)
                .and_then(|o| iat.checked_add(o))
                .and_then(|r| r.checked_add(base))
                .ok_or_else(|| bad(format!("IAT of {module} lies beyond 4 GiB")))?;
            let thunk_addr = u32::try_from(out.len())
                .ok()
                .and_then(|i| i.checked_mul(THUNK_STRIDE))
                .and_then(|o| THUNK_BASE.checked_add(o))
                .ok_or_else(|| bad("too many imports for the thunk area at 0xfff00000"))?;
            out.push(Import {
                module: module.clone(),
                name,
                slot: GuestAddr(u64::from(slot_rva)),
                thunk: GuestAddr(u64::from(thunk_addr)),
            });
            index += 1;
        }
    }
    Ok(out)
}

fn write_slot(segments: &mut [Segment], import: &Import) -> Result<(), GuestError> {
    let slot = import.slot.0;
    let seg = segments
        .iter_mut()
        .find(|s| slot >= s.addr.0 && slot - s.addr.0 < s.mem_size)
        .ok_or_else(|| {
            bad(format!(
                "the IAT slot of {}!{} at {:#x} is in no section",
                import.module, import.name, slot
            ))
        })?;
    let off = (slot - seg.addr.0) as usize;
    let dest = seg.bytes.get_mut(off..off.saturating_add(4)).ok_or_else(|| {
        bad(format!(
            "the IAT slot of {}!{} at {:#x} is not in initialised data",
            import.module, import.name, slot
        ))
    })?;
    dest.copy_from_slice(&(import.thunk.0 as u32).to_le_bytes());
    Ok(())
}
