//! The SNES oracle against its calibration ROM: where bsnes ends a frame, what power-on leaves in
//! memory, where the front-end finds OAM and CGRAM, and how the joypad script reaches the program
//! (`rpt_testkit::bsnes` writes down what these tests hold).

use std::path::Path;
use std::process::Command;

use rpt_testkit::bsnes::{self, FrameState};
use rpt_testkit::memory_difference;

// What the calibration ROM (bsnes/calibrate/calibrate.s) leaves at the start of WRAM.
const NMI_COUNT: usize = 0x00;
const IRQ_COUNT: usize = 0x02;
const LAST_VH: usize = 0x04;
const JOY: usize = 0x08;
const RESET_V: usize = 0x0a;
const RESET_H: usize = 0x0c;
const NMI_V: usize = 0x0e;
const NMI_H: usize = 0x10;
const BUSY_VH: usize = 0x12;
const OPEN_2000: usize = 0x14;
const OPEN_4000: usize = 0x15;
const OPVCT_HI: usize = 0x16;
const DONE: usize = 0x1c;
/// The bytes below this are the ROM's variables; it writes no other WRAM but the stack.
const VARIABLES_END: usize = 0x20;
/// The stack ($1FFF down) is below $2000 and never deeper than this.
const STACK_BOTTOM: usize = 0x1f00;
/// The ROM turns NMI off in the NMI handler when this many NMIs have been taken.
const NMI_OFF_AT: u16 = 3;

fn word(state: &FrameState, at: usize) -> u16 {
    u16::from_le_bytes([state.wram[at], state.wram[at + 1]])
}

/// A counter latch the ROM stored packed as `(V & 0x7f) << 9 | H`: (V mod 128, H).
fn packed(state: &FrameState, at: usize) -> (u16, u16) {
    let vh = word(state, at);
    (vh >> 9, vh & 0x1ff)
}

/// True when the core is installed; otherwise says why the test does nothing.
fn have_core() -> bool {
    if bsnes::core_path().is_none() {
        println!(
            "skipped: {} is not installed (Debian package libretro-bsnes-mercury-accuracy)",
            bsnes::CORE
        );
        return false;
    }
    true
}

fn dump(frame: u32, input: Option<&Path>) -> FrameState {
    bsnes::dump_frame(&bsnes::calibration_rom(), frame, input).unwrap_or_else(|e| panic!("frame {frame}: {e}"))
}

#[test]
fn a_frame_ends_at_the_nmi_or_at_line_241_without_it() {
    if !have_core() {
        return;
    }
    for frame in 0..6u16 {
        let state = dump(frame.into(), None);
        let at = format!("after frame {frame}");
        assert_eq!(word(&state, DONE), 0xc0de, "{at}: the ROM did not finish its set-up");
        // The first retro_run starts at power-on: the reset's first latch is early in line 0.
        assert_eq!(word(&state, RESET_V), 0, "{at}");
        assert!(
            word(&state, RESET_H) < 120,
            "{at}: reset latched H={}",
            word(&state, RESET_H)
        );
        // Run k starts with the NMI that ended run k-1, so run k ends having taken k NMIs (until
        // the ROM turns NMI off).
        assert_eq!(word(&state, NMI_COUNT), frame.min(NMI_OFF_AT), "{at}: NMIs");
        // Every frame holds exactly one line 224, whose IRQ at dot 300 comes before the boundary.
        assert_eq!(word(&state, IRQ_COUNT), frame + 1, "{at}: IRQs");
        // The main loop's last latch before the boundary: line 224 with NMI on, 240 without.
        let (line, dot) = packed(&state, LAST_VH);
        let want = if frame < NMI_OFF_AT { 224 } else { 240 };
        assert_eq!(
            line,
            want % 128,
            "{at}: the last latch was at line {line} (mod 128), dot {dot}"
        );
        if frame >= 1 {
            // The NMI taken at the start of the run: line 225, early.
            assert_eq!(word(&state, NMI_V), 225, "{at}");
            assert!(
                word(&state, NMI_H) < 150,
                "{at}: NMI entered at dot {}",
                word(&state, NMI_H)
            );
        }
    }
}

#[test]
fn each_run_reads_its_own_line_of_the_joypad_script() {
    if !have_core() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let script = dir.path().join("joypad.txt");
    // From frame 3 on the ROM has NMI off: the reads follow the script there too.
    let values = [0x8000u16, 0x4000, 0x0a80, 0x0000, 0x1070, 0x0550];
    let mut text = String::from("# one value a frame\n\n");
    for (frame, value) in values.iter().enumerate() {
        text += &format!(
            "{frame} {}{value:04X}  # frame {frame}\n",
            if frame % 2 == 0 { "0x" } else { "" }
        );
    }
    std::fs::write(&script, text).expect("write the script");
    for (frame, &value) in values.iter().enumerate() {
        let state = dump(frame as u32, Some(&script));
        // Frame 0 ends before the first auto-read; run k's auto-read gets frame k's value. Frame 3
        // is the one the ROM turns NMI off in: it holds two vblanks, and its second latch (the one
        // the ROM reads last) is taken as the next frame's (bsnes_oracle.c, `latches_this_run`).
        let want = match frame {
            0 => 0,
            3 => values[4],
            _ => value,
        };
        assert_eq!(
            word(&state, JOY),
            want,
            "after frame {frame}: {:04x}",
            word(&state, JOY)
        );
        if frame >= 1 {
            let (line, _) = packed(&state, BUSY_VH);
            assert_eq!(
                line,
                227 % 128,
                "after frame {frame}: the auto-read was busy last on line {line}"
            );
        }
    }
}

#[test]
fn power_on_memory_is_the_seeded_generator_s() {
    if !have_core() {
        return;
    }
    let state = dump(0, None);
    let power_on = bsnes::power_on_state();
    // Frame 0 ends before the first NMI; only the variables and the IRQ's stack differ from
    // power-on.
    let untouched = [VARIABLES_END..STACK_BOTTOM, 0x2000..bsnes::WRAM_SIZE];
    for range in untouched {
        let base = range.start as u64;
        let difference = memory_difference(base, &power_on.wram[range.clone()], &state.wram[range]);
        assert_eq!(difference, None, "WRAM is not what power-on left");
    }
    let written = 0x2468..0x2478;
    for range in [0..written.start, written.end..bsnes::VRAM_SIZE] {
        let base = range.start as u64;
        let difference = memory_difference(base, &power_on.vram[range.clone()], &state.vram[range]);
        assert_eq!(difference, None, "VRAM is not what power-on left");
    }
}

#[test]
fn vram_oam_and_cgram_hold_what_the_rom_wrote() {
    if !have_core() {
        return;
    }
    let state = dump(1, None);
    // Words $0123 $4567 ... at word address $1234, low byte first.
    let vram: Vec<u8> = [0x0123u16, 0x4567, 0x89ab, 0xcdef, 0xfedc, 0xba98, 0x7654, 0x3210]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    assert_eq!(state.vram[0x2468..0x2478], vram[..]);
    let oam: Vec<u8> = (0..544u32).map(|i| (3 + 7 * i) as u8).collect();
    assert_eq!(state.oam, oam, "OAM keeps every bit of all 544 bytes");
    // CGRAM drops bit 7 of each colour's high byte.
    let cgram: Vec<u8> = (0..512u32)
        .map(|i| (5 + 13 * i) as u8 & if i % 2 == 1 { 0x7f } else { 0xff })
        .collect();
    assert_eq!(state.cgram, cgram);
}

#[test]
fn open_bus_reads_the_last_byte_on_the_bus() {
    if !have_core() {
        return;
    }
    let state = dump(0, None);
    assert_eq!(state.wram[OPEN_2000], 0x20, "lda $2000");
    assert_eq!(state.wram[OPEN_4000], 0x40, "lda $4000");
    assert_eq!(state.wram[OPVCT_HI], 0x00, "the high read of $213D");
}

#[test]
fn the_hashes_are_those_of_the_dump_and_every_run_is_the_same() {
    if !have_core() {
        return;
    }
    let rom = bsnes::calibration_rom();
    let first = bsnes::run(&rom, 5, None).expect("the oracle runs");
    assert_eq!(first.len(), 5);
    assert_eq!(bsnes::run(&rom, 5, None).expect("the oracle runs again"), first);
    assert_eq!(dump(4, None).hashes(4), first[4]);
    // The ROM's main loop changes WRAM between any two boundaries; the rest stays put.
    assert!(first.windows(2).all(|w| w[0].wram != w[1].wram));
    assert!(
        first[1..]
            .windows(2)
            .all(|w| (w[0].vram, w[0].cgram, w[0].oam) == (w[1].vram, w[1].cgram, w[1].oam))
    );
}

#[test]
fn a_bad_script_or_rom_is_an_error_naming_it() {
    if !have_core() {
        return;
    }
    let rom = bsnes::calibration_rom();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cases = [
        ("0 0\n0 8000\n", "does not come after"),
        ("0 0\n\n5 1234\n", "signature"),
        ("# comment\n2 0C00\n", "Up and Down"),
        ("1 8000 9\n", "expected"),
        ("x 8000\n", "not a decimal frame"),
        ("1 10000\n", "not a 16-bit"),
    ];
    for (i, (text, complaint)) in cases.iter().enumerate() {
        let script = dir.path().join(format!("script{i}.txt"));
        std::fs::write(&script, text).expect("write the script");
        let error = bsnes::run(&rom, 2, Some(&script)).expect_err(text);
        let line = text.lines().count();
        let place = format!("script{i}.txt:{line}:");
        assert!(error.contains(&place) && error.contains(complaint), "{text:?}: {error}");
    }
    let missing = dir.path().join("missing.sfc");
    let error = bsnes::run(&missing, 1, None).expect_err("no ROM");
    assert!(error.contains("missing.sfc"), "{error}");
}

#[test]
fn the_committed_rom_is_valid_and_what_its_source_builds() {
    let rom = std::fs::read(bsnes::calibration_rom()).expect("the calibration ROM is committed");
    assert_eq!(rom.len(), 0x8000);
    let sum = rom.iter().fold(0u16, |sum, &b| sum.wrapping_add(b.into()));
    let complement = u16::from_le_bytes([rom[0x7fdc], rom[0x7fdd]]);
    let checksum = u16::from_le_bytes([rom[0x7fde], rom[0x7fdf]]);
    assert_eq!((checksum, complement), (sum, !sum), "the header's checksum");
    assert_eq!(rom[0x7fd5], 0x20, "LoROM");
    let tools = ["ca65", "ld65", "python3"];
    if let Some(missing) = tools
        .iter()
        .find(|tool| Command::new(tool).arg("--version").output().is_err())
    {
        println!("not rebuilt: {missing} is missing (Debian packages cc65 and python3)");
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let built = dir.path().join("calibrate.sfc");
    let script = bsnes::calibration_rom().with_file_name("build.sh");
    let out = Command::new("sh").arg(&script).arg(&built).output().expect("sh runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        std::fs::read(&built).expect("the build wrote the ROM") == rom,
        "calibrate.sfc is not what calibrate.s builds: run {}",
        script.display()
    );
}
