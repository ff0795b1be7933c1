//! The SNES oracle: bsnes v094 (Debian's libretro core bsnes-mercury, accuracy profile) run frame
//! by frame by a small C front-end, `bsnes/bsnes_oracle.c`, so a recompiled SNES program can be
//! compared with it at every frame boundary.
//!
//! [`run`] gives the hashes of WRAM, VRAM, CGRAM and OAM after every frame, [`dump_frame`] the
//! bytes after one. A frame is one `retro_run`; frame 0 is the state after the first.
//!
//! # What the recompiled side must produce
//!
//! This module is the one place that defines the hash, the dump and the input script; the C
//! front-end follows it.
//!
//! - **Hash**: FNV-1a 64 ([`fnv1a64`]: offset basis `0xcbf29ce484222325`, prime `0x100000001b3`)
//!   over each region's bytes, printed one frame a line as [`FrameHashes`]' `Display` writes it:
//!   `<frame> wram:<16 hex> vram:<16 hex> cgram:<16 hex> oam:<16 hex>`.
//! - **Dump**: WRAM (131072 bytes, `$7E:0000` on), VRAM (65536), CGRAM (512), OAM (544),
//!   concatenated in that order ([`FrameState::to_dump`]). VRAM word `w` is bytes `2w` (the `$2118`
//!   half) and `2w + 1` (the `$2119` half); CGRAM colour `c` is bytes `2c` and `2c + 1`; OAM is the
//!   512-byte table then the 32-byte one, in the order `$2104` writes them from address 0.
//! - **Input script** (`--input`, shared with the recompiled platform): `#` starts a comment, blank
//!   lines are ignored, every other line is `<frame> <hex16>` (frame decimal, value hexadecimal
//!   with or without `0x`), frames increasing. From that `retro_run` on, joypad 1 holds the value,
//!   laid out as the auto-joypad read delivers it in `$4219:$4218` (bit 15 B, 14 Y, 13 Select,
//!   12 Start, 11 Up, 10 Down, 9 Left, 8 Right, 7 A, 6 X, 5 L, 4 R). Bits 3-0 must be 0, and Up
//!   with Down or Left with Right is refused: bsnes reads neither of such a pair (measured: `0C00`,
//!   `0300` and `FFF0` read as `0000`, `0000` and `F0F0`), where a real joypad reads both.
//!
//! # In short, for a platform that matches this oracle
//!
//! End frame `k` where the vblank NMI is raised, before its handler runs (with NMI off, at the
//! start of line 241 instead); compare the memories there. Start frame `k + 1` with that NMI
//! handler, and give the auto-joypad read of that vblank the script's value for frame `k + 1`.
//! Start frame 0 at power-on with the memories of [`power_on_state`]. The rest of this comment
//! says what was measured and how.
//!
//! # What was measured
//!
//! The calibration ROM (`bsnes/calibrate/`, checked by `tests/bsnes.rs`) found the following.
//!
//! **Where a frame ends, with NMI enabled** (`$4200` bit 7): `retro_run` returns when the CPU
//! raises the vblank NMI at the start of line 225, before the NMI handler runs. The NMI of a
//! frame's vblank is the first thing the next `retro_run` does: after frame `k` the program has
//! taken exactly `k` NMIs, the main loop's last counter latch before every boundary is on line 224,
//! and the NMI handler latches V=225, H≈78 at the start of the next run. An H/V IRQ at line 224
//! dot 300 is taken before the boundary; a probe (not kept in the ROM) moved that IRQ along line
//! 224 and found it taken before the boundary up to HTIME 332 and after it from HTIME 334, which with
//! the IRQ's latency puts the boundary within the first ~20 dots of line 225. This is
//! bsnes-mercury's "lag fix": the scheduler exits from the CPU's interrupt poll that raises the NMI,
//! in the middle of an instruction; the oracle reports the state after that instruction completes.
//!
//! **Where a frame ends, with NMI disabled**: at the start of line 241, bsnes's plain frame event
//! (the last latch before the boundary is on line 240). So the frame in which a program turns NMI
//! off runs from line 225 to line 241 of the next video frame, 278 lines; later ones 262 lines
//! (241 to 241). The source also ends a frame at once when `$4200` turns NMI on while the NMI line
//! is still high (in vblank, before `$4210` is read); that case was not measured.
//!
//! **The first frame** starts at power-on: loading the ROM powers the machine on, and the first
//! `retro_run` starts the CPU's reset at line 0, dot 0 (the ROM's first latch, after the 186 clocks
//! of reset and ten instructions, reads V=0, H=95). Frame 0 therefore runs from power-on to the
//! first NMI, 225 lines when the program enables NMI in time, and holds no NMI and no auto-joypad
//! read.
//!
//! **Input**: the auto-joypad read runs right after the NMI (its busy flag, `$4212` bit 0, was
//! last seen set on line 227), so it falls in the `retro_run` after the boundary, and reads the
//! script's value for that run: at the end of frame `k >= 1` the program has read the value for
//! frame `k`. The value for frame 0 reaches no auto-read when NMI is on (a manual `$4016` read
//! in frame 0 would see it). With NMI off the read at line 225 of run `k` also gets frame `k`'s
//! value. A `$4218` read during the auto-read (an NMI handler's first instructions) sees a partly
//! shifted value; programs wait for `$4212` bit 0 to clear.
//!
//! **Power-on memory**: bsnes v094 fills WRAM, VRAM, OAM and CGRAM at power-on from a generator
//! seeded with `time(0)`. The front-end defines `time()` to return 0 (it is linked `-rdynamic`,
//! and the core it loads with `dlopen` binds to it), so every run is the same. From `x = 0`, each
//! value is `x = (x >> 1) ^ (if x & 1 == 0 { 0xEDB88320 } else { 0 })`, and a byte is its low 8
//! bits: WRAM is the first 131072 bytes, one is used elsewhere, then VRAM takes 65536, OAM 544 and
//! CGRAM 512 ([`power_on_state`]). WRAM and VRAM were checked against the calibration ROM's frame
//! 0, OAM and CGRAM once against a variant of it that leaves them alone.
//!
//! **CGRAM** keeps 15 bits a colour: a `$2122` write stores bit 7 of the high byte as 0 (the ROM
//! wrote `5 + 13i` to byte `i`; the odd bytes read back with bit 7 clear). At power-on, though,
//! the high bytes hold the generator's raw bytes, bit 7 included. **OAM** keeps all 8 bits of all
//! 544 bytes. **VRAM** written through `$2118`/`$2119` at word `$1234` lands at bytes `$2468` on,
//! low byte first.
//!
//! **Open bus**: `lda $2000` and `lda $4000` (nothing mapped) read `$20` and `$40`, the last byte
//! on the bus, which is the high byte of the address just fetched. The second read of `$213D` at
//! reset read `$00`: the PPU2 open-bus bits 7-1 start as 0.
//!
//! **Where OAM and CGRAM come from**: the libretro API exposes only WRAM (memory id 2) and VRAM
//! (id 3). The front-end finds VRAM in `retro_serialize`'s state once, by filling it with a pattern
//! and searching the state for it; bsnes v094's PPU serializes VRAM, then OAM (544 bytes), then
//! CGRAM (512), back to back, which the OAM and CGRAM the calibration ROM wrote confirm.
//!
//! **The oracle never perturbs the emulation**: `retro_serialize` first runs every emulated chip to
//! its next synchronization point, and the PPU's is the start of its next scanline, so serializing
//! in the middle of a run moved the PPU up to a line ahead of the CPU (the counters an NMI handler
//! latched then read V=226, H=0 in some frames instead of V=225). The front-end serializes only in
//! a forked child, once per frame, and the emulation goes on in the parent as if it never did.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::cbuild::CCompiler;
use crate::process_scratch;

/// Where Debian's package `libretro-bsnes-mercury-accuracy` installs the core.
pub const CORE: &str = "/usr/lib/x86_64-linux-gnu/libretro/bsnes_mercury_accuracy_libretro.so";

/// Bytes of WRAM, `$7E:0000`-`$7F:FFFF`.
pub const WRAM_SIZE: usize = 131_072;
/// Bytes of VRAM.
pub const VRAM_SIZE: usize = 65_536;
/// Bytes of CGRAM: 256 colours of two bytes.
pub const CGRAM_SIZE: usize = 512;
/// Bytes of OAM: the 512-byte table and the 32-byte one.
pub const OAM_SIZE: usize = 544;
/// Bytes of a dump: the four regions in the order WRAM, VRAM, CGRAM, OAM.
pub const DUMP_SIZE: usize = WRAM_SIZE + VRAM_SIZE + CGRAM_SIZE + OAM_SIZE;

/// FNV-1a 64 of `bytes`: the hash of every region in the oracle's output.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The hashes of the four regions after one frame: one line of the oracle's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHashes {
    /// Which frame: 0 after the first `retro_run`.
    pub frame: u32,
    /// [`fnv1a64`] of WRAM.
    pub wram: u64,
    /// [`fnv1a64`] of VRAM.
    pub vram: u64,
    /// [`fnv1a64`] of CGRAM.
    pub cgram: u64,
    /// [`fnv1a64`] of OAM.
    pub oam: u64,
}

impl FrameHashes {
    /// Reads one line as the oracle prints it (and `Display` writes it).
    pub fn parse(line: &str) -> Result<FrameHashes, String> {
        let bad = || format!("not a line of frame hashes: `{line}`");
        let mut words = line.split_ascii_whitespace();
        let frame = words.next().and_then(|w| w.parse().ok()).ok_or_else(bad)?;
        let mut hash = |name: &str| {
            words
                .next()
                .and_then(|w| w.strip_prefix(name))
                .and_then(|w| w.strip_prefix(':'))
                .filter(|hex| hex.len() == 16)
                .and_then(|hex| u64::from_str_radix(hex, 16).ok())
                .ok_or_else(bad)
        };
        let hashes = FrameHashes {
            frame,
            wram: hash("wram")?,
            vram: hash("vram")?,
            cgram: hash("cgram")?,
            oam: hash("oam")?,
        };
        match words.next() {
            None => Ok(hashes),
            Some(_) => Err(bad()),
        }
    }
}

impl fmt::Display for FrameHashes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} wram:{:016x} vram:{:016x} cgram:{:016x} oam:{:016x}",
            self.frame, self.wram, self.vram, self.cgram, self.oam
        )
    }
}

/// The guest-visible memories after one frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameState {
    /// WRAM, [`WRAM_SIZE`] bytes from `$7E:0000`.
    pub wram: Vec<u8>,
    /// VRAM, [`VRAM_SIZE`] bytes, word `w` at bytes `2w` (low) and `2w + 1` (high).
    pub vram: Vec<u8>,
    /// CGRAM, [`CGRAM_SIZE`] bytes, colour `c` at bytes `2c` (low) and `2c + 1` (high).
    pub cgram: Vec<u8>,
    /// OAM, [`OAM_SIZE`] bytes: the 512-byte table, then the 32-byte one.
    pub oam: Vec<u8>,
}

impl FrameState {
    /// Splits a dump: WRAM, VRAM, CGRAM and OAM, concatenated.
    pub fn from_dump(bytes: &[u8]) -> Result<FrameState, String> {
        if bytes.len() != DUMP_SIZE {
            return Err(format!("a dump is {DUMP_SIZE} bytes, not {}", bytes.len()));
        }
        let (wram, rest) = bytes.split_at(WRAM_SIZE);
        let (vram, rest) = rest.split_at(VRAM_SIZE);
        let (cgram, oam) = rest.split_at(CGRAM_SIZE);
        Ok(FrameState {
            wram: wram.to_vec(),
            vram: vram.to_vec(),
            cgram: cgram.to_vec(),
            oam: oam.to_vec(),
        })
    }

    /// The dump of this state, as `--dump-file` writes it.
    pub fn to_dump(&self) -> Vec<u8> {
        [&self.wram[..], &self.vram, &self.cgram, &self.oam].concat()
    }

    /// The line the oracle prints for this state as frame `frame`.
    pub fn hashes(&self, frame: u32) -> FrameHashes {
        FrameHashes {
            frame,
            wram: fnv1a64(&self.wram),
            vram: fnv1a64(&self.vram),
            cgram: fnv1a64(&self.cgram),
            oam: fnv1a64(&self.oam),
        }
    }
}

/// What bsnes v094 puts in the four regions at power-on, with the seed the front-end gives it:
/// see "Power-on memory" in the module's documentation.
pub fn power_on_state() -> FrameState {
    // bsnes's generator, seeded with time(0), which the front-end answers with 0.
    let mut x: u32 = 0;
    let mut bytes = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                x = (x >> 1) ^ if x & 1 == 0 { 0xedb8_8320 } else { 0 };
                x as u8
            })
            .collect()
    };
    let wram = bytes(WRAM_SIZE);
    // One value between WRAM and VRAM goes to another chip's power-on.
    bytes(1);
    let vram = bytes(VRAM_SIZE);
    let oam = bytes(OAM_SIZE);
    let cgram = bytes(CGRAM_SIZE);
    FrameState { wram, vram, cgram, oam }
}

/// The core, or `None` when the Debian package `libretro-bsnes-mercury-accuracy` is not installed.
pub fn core_path() -> Option<PathBuf> {
    let core = Path::new(CORE);
    core.is_file().then(|| core.to_path_buf())
}

/// The calibration ROM: its source, layout and build script are beside it in `bsnes/calibrate/`.
pub fn calibration_rom() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bsnes/calibrate/calibrate.sfc")
}

/// The front-end, built once per test process into its scratch directory; panics with the
/// compiler's messages when it cannot be built.
pub fn oracle() -> &'static Path {
    static ORACLE: OnceLock<PathBuf> = OnceLock::new();
    ORACLE.get_or_init(|| {
        let dir = process_scratch().join("bsnes-oracle");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("bsnes/bsnes_oracle.c");
        let cc = CCompiler {
            command: "cc",
            cflags: &["-std=c11", "-O2", "-Wall", "-Wextra"],
            // -rdynamic exports the front-end's time() to the core (see "Power-on memory").
            ldflags: &["-rdynamic", "-ldl"],
            hint: "the bsnes oracle needs a C compiler with libdl (Debian package gcc)",
        };
        cc.build(&dir, &[source], "bsnes_oracle")
    })
}

/// Runs `rom` for `frames` frames, with joypad 1 following the script at `input` (none held
/// without one), and gives the hashes after every frame.
pub fn run(rom: &Path, frames: u32, input: Option<&Path>) -> Result<Vec<FrameHashes>, String> {
    run_skipping(rom, frames, input, &[])
}

/// [`run`] with the WRAM ranges `skip` (offsets from `$7E:0000`, inclusive) hashed as zeros: where
/// a test program records what bsnes is known to get wrong, so a comparison skips exactly those
/// bytes. The recompiled side zeroes the same ranges (`RPT_SNES_ZERO_WRAM`).
pub fn run_skipping(
    rom: &Path,
    frames: u32,
    input: Option<&Path>,
    skip: &[(u32, u32)],
) -> Result<Vec<FrameHashes>, String> {
    let stdout = invoke(rom, frames, input, None, skip)?;
    let hashes = stdout.lines().map(FrameHashes::parse).collect::<Result<Vec<_>, _>>()?;
    let numbered = hashes.iter().enumerate().all(|(i, h)| h.frame as usize == i);
    if hashes.len() != frames as usize || !numbered {
        return Err(format!(
            "the oracle printed frames {:?} of {frames}",
            hashes.iter().map(|h| h.frame).collect::<Vec<_>>()
        ));
    }
    Ok(hashes)
}

/// Runs `rom` up to and including frame `frame` (0 is the first), with joypad 1 following the
/// script at `input`, and gives the memories after it.
pub fn dump_frame(rom: &Path, frame: u32, input: Option<&Path>) -> Result<FrameState, String> {
    dump_frame_skipping(rom, frame, input, &[])
}

/// [`dump_frame`] with the WRAM ranges `skip` zeroed, as [`run_skipping`] hashes them.
pub fn dump_frame_skipping(
    rom: &Path,
    frame: u32,
    input: Option<&Path>,
    skip: &[(u32, u32)],
) -> Result<FrameState, String> {
    let file = tempfile::Builder::new()
        .prefix("bsnes-dump-")
        .tempfile_in(process_scratch())
        .map_err(|e| format!("creating a dump file: {e}"))?;
    let frames = frame.checked_add(1).ok_or("no frame comes after frame u32::MAX")?;
    invoke(rom, frames, input, Some((frame, file.path())), skip)?;
    let bytes = std::fs::read(file.path()).map_err(|e| format!("reading {}: {e}", file.path().display()))?;
    FrameState::from_dump(&bytes)
}

/// Runs the front-end and gives what it printed, or its complaint.
fn invoke(
    rom: &Path,
    frames: u32,
    input: Option<&Path>,
    dump: Option<(u32, &Path)>,
    skip: &[(u32, u32)],
) -> Result<String, String> {
    let core = core_path().ok_or_else(|| {
        format!("{CORE} is missing: the SNES oracle needs Debian's package libretro-bsnes-mercury-accuracy")
    })?;
    let mut cmd = Command::new(oracle());
    cmd.arg(core).arg(rom).arg(frames.to_string());
    if let Some(input) = input {
        cmd.arg("--input").arg(input);
    }
    if let Some((frame, file)) = dump {
        cmd.arg("--dump-frame")
            .arg(frame.to_string())
            .arg("--dump-file")
            .arg(file);
    }
    for (low, high) in skip {
        cmd.arg("--zero-wram").arg(format!("{low:x}-{high:x}"));
    }
    let out = cmd.output().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("{cmd:?} printed something not UTF-8: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_print_and_parse_the_same() {
        let hashes = FrameHashes {
            frame: 7,
            wram: fnv1a64(b""),
            vram: fnv1a64(b"a"),
            cgram: 1,
            oam: u64::MAX,
        };
        let line = hashes.to_string();
        assert_eq!(
            line,
            "7 wram:cbf29ce484222325 vram:af63dc4c8601ec8c cgram:0000000000000001 oam:ffffffffffffffff"
        );
        assert_eq!(FrameHashes::parse(&line), Ok(hashes));
        assert!(FrameHashes::parse("7 wram:1").is_err());
        assert!(FrameHashes::parse(&format!("{line} extra")).is_err());
    }

    #[test]
    fn a_dump_splits_into_the_four_regions_and_back() {
        let state = power_on_state();
        let dump = state.to_dump();
        assert_eq!(dump.len(), DUMP_SIZE);
        assert_eq!(FrameState::from_dump(&dump), Ok(state));
        assert!(FrameState::from_dump(&dump[1..]).is_err());
    }
}
