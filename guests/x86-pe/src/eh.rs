//! C++ exception landing pads, found statically (docs/cxx-exceptions.md).
//!
//! mingw's i686 g++ uses DWARF-2 unwinding: each function has an FDE in `.eh_frame`, and a function
//! with cleanups or handlers names its LSDA (a table in `.gcc_except_table`, which the linker puts in
//! `.rdata`) through the FDE's augmentation. The LSDA's call-site table gives, for each range of
//! calls, the landing pad the unwinder jumps to when an exception passes that call: an address in
//! the middle of the function, entered from a frame further down the stack.
//!
//! rpt reads both: every landing pad becomes an entry of its own (a function lifted from there,
//! as a computed-goto target is), and every FDE function that owns a landing pad establishes a
//! resume point when it is entered, so the unwinder's final jump can drop the host frames above it
//! (`platform/cxx_eh.c`). `.eh_frame` is read with `gimli`; the LSDA, which no DWARF standard
//! describes, by hand after GCC's `libsupc++/eh_personality.cc`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use gimli::{BaseAddresses, CieOrFde, EhFrame, LittleEndian, Pointer, UnwindSection};
use rpt_api::GuestImage;
use rpt_ir::GuestAddr;

/// The extern a function owning landing pads calls on entry to run under a resume point
/// (`rpt_x86_eh_frame`, platform/cxx_eh.c). Like import thunks, it is an address no guest code
/// occupies: just below the thunks.
pub const EH_FRAME_EXTERN: GuestAddr = GuestAddr(0xffef_ff00);
/// The extern lifted in place of the unwinder's final `ret` (`rpt_x86_eh_install`).
pub const EH_INSTALL_EXTERN: GuestAddr = GuestAddr(0xffef_ff10);

/// Why the exception tables could not be read.
#[derive(Debug, thiserror::Error)]
pub enum EhError {
    /// `.eh_frame` itself is malformed.
    #[error("cannot read .eh_frame: {0}")]
    EhFrame(#[from] gimli::Error),
    /// An LSDA is malformed or uses an encoding rpt does not read.
    #[error("cannot read the LSDA at {at} of the function at {function}: {why}")]
    Lsda {
        /// The LSDA's address.
        at: GuestAddr,
        /// The FDE's function.
        function: GuestAddr,
        /// What is wrong.
        why: &'static str,
    },
}

/// A function with exception-handling code: its FDE's range and the landing pads of its LSDA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EhFunction {
    /// The FDE's first address.
    pub start: GuestAddr,
    /// One past its last address.
    pub end: GuestAddr,
    /// The landing pads of its call-site table, in address order.
    pub landing_pads: BTreeSet<GuestAddr>,
}

/// The exception tables of an image: every FDE function whose LSDA has at least one landing pad.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EhInfo {
    /// By the FDE's start.
    pub functions: BTreeMap<GuestAddr, EhFunction>,
}

impl EhInfo {
    /// Every landing pad of every function.
    pub fn landing_pads(&self) -> impl Iterator<Item = GuestAddr> + '_ {
        self.functions.values().flat_map(|f| f.landing_pads.iter().copied())
    }

    /// Whether the function entered at `entry` owns landing pads (and so needs a resume point).
    pub fn owns_landing_pads(&self, entry: GuestAddr) -> bool {
        self.functions.contains_key(&entry)
    }

    /// Whether the image has any landing pad at all (the C++ runtime support is then needed).
    pub fn is_empty(&self) -> bool {
        self.functions.is_empty()
    }
}

/// Whether a section holds the unwind tables: `.eh_frame`, as long as PE's eight-byte names allow.
fn is_eh_frame(name: &str) -> bool {
    name == ".eh_fram" || name == ".eh_frame"
}

/// Reads the exception tables of `image`; an image without `.eh_frame` has none.
pub fn read(image: &GuestImage) -> Result<EhInfo, EhError> {
    let mut info = EhInfo::default();
    let Some(seg) = image.segments.iter().find(|s| is_eh_frame(&s.name)) else {
        return Ok(info);
    };
    let mut eh = EhFrame::new(&seg.bytes, LittleEndian);
    eh.set_address_size(4);
    let bases = BaseAddresses::default().set_eh_frame(seg.addr.0);
    let mut entries = eh.entries(&bases);
    while let Some(entry) = entries.next()? {
        let CieOrFde::Fde(partial) = entry else {
            continue;
        };
        let fde = partial.parse(|section, bases, offset| section.cie_from_offset(bases, offset))?;
        let lsda = match fde.lsda() {
            None => continue,
            Some(Pointer::Direct(a)) => GuestAddr(a),
            Some(Pointer::Indirect(slot)) => match read_u32(image, GuestAddr(slot)) {
                Some(a) => GuestAddr(u64::from(a)),
                None => continue,
            },
        };
        let start = GuestAddr(fde.initial_address());
        let landing_pads = lsda_landing_pads(image, lsda, start).map_err(|why| EhError::Lsda {
            at: lsda,
            function: start,
            why,
        })?;
        if !landing_pads.is_empty() {
            let end = GuestAddr(start.0 + fde.len());
            info.functions.insert(
                start,
                EhFunction {
                    start,
                    end,
                    landing_pads,
                },
            );
        }
    }
    Ok(info)
}

/// The image's exception tables, read once per image: the lifter asks for every function it lifts.
/// A malformed table counts as none (discovery reports the error once).
///
/// The key is `.eh_frame` itself and a hash of the data sections (where the LSDAs are), so a process
/// that handles two images never answers for the wrong one; code is left out of the hash, which
/// keeps a lift's cost to a pass over the data.
pub(crate) fn cached(image: &GuestImage) -> Arc<EhInfo> {
    use std::hash::{Hash, Hasher};
    type Cache = Mutex<Option<((Vec<u8>, u64), Arc<EhInfo>)>>;
    static CACHE: Cache = Mutex::new(None);
    let Some(eh_frame) = image.segments.iter().find(|s| is_eh_frame(&s.name)) else {
        return Arc::default();
    };
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for s in image.segments.iter().filter(|s| !s.flags.execute) {
        s.addr.0.hash(&mut hasher);
        s.bytes.hash(&mut hasher);
    }
    let key = (eh_frame.bytes.clone(), hasher.finish());
    // A poisoned lock only means another lift panicked; the cached value is still whole.
    let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((k, info)) = guard.as_ref()
        && *k == key
    {
        return info.clone();
    }
    let info = Arc::new(read(image).unwrap_or_default());
    *guard = Some((key, info.clone()));
    info
}

fn read_u32(image: &GuestImage, at: GuestAddr) -> Option<u32> {
    let b = image.bytes_at(at, 4)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

const DW_EH_PE_OMIT: u8 = 0xff;

/// A cursor over guest memory, reading what LSDAs are made of.
struct Cursor<'a> {
    image: &'a GuestImage,
    at: u64,
}

impl Cursor<'_> {
    fn u8(&mut self) -> Result<u8, &'static str> {
        let b = self
            .image
            .bytes_at(GuestAddr(self.at), 1)
            .and_then(|b| b.first().copied());
        self.at += 1;
        b.ok_or("it runs past the end of its section")
    }

    fn uleb(&mut self) -> Result<u64, &'static str> {
        let (mut v, mut shift) = (0u64, 0u32);
        loop {
            let b = self.u8()?;
            if shift < 64 {
                v |= u64::from(b & 0x7f) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
    }

    fn sleb(&mut self) -> Result<i64, &'static str> {
        let (mut v, mut shift) = (0i64, 0u32);
        loop {
            let b = self.u8()?;
            if shift < 64 {
                v |= i64::from(b & 0x7f) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                if shift < 64 && b & 0x40 != 0 {
                    v |= -1i64 << shift;
                }
                return Ok(v);
            }
        }
    }

    fn fixed(&mut self, n: u32) -> Result<u64, &'static str> {
        let mut v = 0u64;
        for i in 0..n {
            v |= u64::from(self.u8()?) << (8 * i);
        }
        Ok(v)
    }

    /// A `DW_EH_PE_*` encoded value: absolute or PC-relative, of any size (what GCC emits on i386).
    fn encoded(&mut self, enc: u8) -> Result<u64, &'static str> {
        let here = self.at;
        let raw = match enc & 0x0f {
            0x00 | 0x03 => self.fixed(4)?,
            0x01 => self.uleb()?,
            0x02 => self.fixed(2)?,
            0x04 => self.fixed(8)?,
            0x09 => self.sleb()? as u64,
            0x0a => self.fixed(2)? as u16 as i16 as i64 as u64,
            0x0b => self.fixed(4)? as u32 as i32 as i64 as u64,
            0x0c => self.fixed(8)?,
            _ => return Err("a pointer encoding rpt does not read"),
        };
        let value = match enc & 0x70 {
            0x00 => raw,
            0x10 => here.wrapping_add(raw),
            _ => return Err("a pointer application rpt does not read (only absolute and pc-relative)"),
        };
        if enc & 0x80 != 0 {
            return read_u32(self.image, GuestAddr(value & 0xffff_ffff))
                .map(u64::from)
                .ok_or("an indirect pointer outside the image");
        }
        Ok(value & 0xffff_ffff)
    }
}

/// The landing pads of the LSDA at `at`, for the function starting at `start`.
fn lsda_landing_pads(image: &GuestImage, at: GuestAddr, start: GuestAddr) -> Result<BTreeSet<GuestAddr>, &'static str> {
    let mut c = Cursor { image, at: at.0 };
    let lp_start_enc = c.u8()?;
    let lp_start = if lp_start_enc == DW_EH_PE_OMIT {
        start.0
    } else {
        c.encoded(lp_start_enc)?
    };
    if c.u8()? != DW_EH_PE_OMIT {
        c.uleb()?; // the type table's offset: the personality routine's business, not ours
    }
    let cs_enc = c.u8()?;
    let cs_len = c.uleb()?;
    let end = c.at + cs_len;
    let mut pads = BTreeSet::new();
    while c.at < end {
        c.encoded(cs_enc & 0x0f)?; // the call range's start, relative to the function
        c.encoded(cs_enc & 0x0f)?; // its length
        let pad = c.encoded(cs_enc & 0x0f)?;
        c.uleb()?; // the action
        if pad != 0 {
            let pad = GuestAddr((lp_start + pad) & 0xffff_ffff);
            if !image.is_code(pad) {
                return Err("a landing pad outside executable code");
            }
            pads.insert(pad);
        }
    }
    if c.at != end {
        return Err("the call-site table's last record runs past its length");
    }
    Ok(pads)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rpt_api::{GuestImage, Segment, SegmentFlags};
    use rpt_ir::GuestAddr;

    use super::*;

    fn segment(name: &str, addr: u64, bytes: Vec<u8>, execute: bool) -> Segment {
        Segment {
            name: name.to_string(),
            addr: GuestAddr(addr),
            mem_size: bytes.len() as u64,
            bytes,
            flags: SegmentFlags {
                read: true,
                write: false,
                execute,
            },
        }
    }

    fn image(segments: Vec<Segment>) -> GuestImage {
        GuestImage {
            segments,
            entry: GuestAddr(0x1000),
            exports: BTreeMap::new(),
            imports: Vec::new(),
        }
    }

    /// An LSDA as GCC writes it for i386: no LPStart, a type table, uleb128 call sites.
    #[test]
    fn an_lsda_gives_its_landing_pads_relative_to_the_function() {
        let lsda = vec![
            0xff, // LPStart omitted: the function's start
            0x00, 0x10, // type table: absptr, offset 0x10 (skipped)
            0x01, 13, // call sites: uleb128, 13 bytes
            0x05, 0x04, 0x20, 0x01, // [+5, +9) lands at +0x20, action 1
            0x10, 0x03, 0x00, 0x00, // [+0x10, +0x13) has no landing pad
            0x18, 0x02, 0xa0, 0x01, 0x00, // [+0x18, +0x1a) lands at +0xa0 (a two-byte uleb128)
        ];
        let img = image(vec![
            segment(".text", 0x1000, vec![0x90; 0x200], true),
            segment(".rdata", 0x4000, lsda, false),
        ]);
        let pads = lsda_landing_pads(&img, GuestAddr(0x4000), GuestAddr(0x1000)).expect("readable");
        assert_eq!(
            pads.into_iter().collect::<Vec<_>>(),
            vec![GuestAddr(0x1020), GuestAddr(0x10a0)]
        );
    }

    #[test]
    fn a_truncated_lsda_is_an_error_not_a_panic() {
        let img = image(vec![
            segment(".text", 0x1000, vec![0x90; 0x100], true),
            segment(".rdata", 0x4000, vec![0xff, 0xff, 0x01, 40, 0x05], false),
        ]);
        assert!(lsda_landing_pads(&img, GuestAddr(0x4000), GuestAddr(0x1000)).is_err());
    }

    #[test]
    fn a_landing_pad_outside_code_is_refused() {
        let img = image(vec![
            segment(".text", 0x1000, vec![0x90; 0x10], true),
            segment(
                ".rdata",
                0x4000,
                vec![0xff, 0xff, 0x01, 4, 0x00, 0x02, 0x7f, 0x00],
                false,
            ),
        ]);
        assert!(lsda_landing_pads(&img, GuestAddr(0x4000), GuestAddr(0x1000)).is_err());
    }

    #[test]
    fn an_image_without_eh_frame_has_no_landing_pads() {
        let img = image(vec![segment(".text", 0x1000, vec![0x90; 0x10], true)]);
        assert!(read(&img).expect("nothing to read").is_empty());
    }

    /// The committed C++ sample: every landing pad lies in the code, and most in their own FDE's
    /// range (GCC moves some to a `.cold` part with an FDE of its own, whose LSDA names them).
    #[test]
    fn the_cxx_sample_has_landing_pads_in_its_functions() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/guests/x86/cxx/cxx.exe");
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let img = crate::loader_pe::load(&bytes).expect("a PE");
        let info = read(&img).expect("readable tables");
        let pads: Vec<GuestAddr> = info.landing_pads().collect();
        assert!(info.functions.len() > 100, "{} EH functions", info.functions.len());
        assert!(pads.len() > info.functions.len());
        let inside = info
            .functions
            .values()
            .flat_map(|f| f.landing_pads.iter().map(move |p| (f, p)))
            .filter(|(f, p)| f.start <= **p && **p < f.end)
            .count();
        assert!(
            inside * 10 >= pads.len() * 9,
            "{inside} of {} pads inside their FDE",
            pads.len()
        );
        assert!(pads.iter().all(|&p| img.is_code(p)));
    }
}
