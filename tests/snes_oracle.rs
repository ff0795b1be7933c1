//! The project's SNES ROMs (tests/guests/snes/) recompiled by rpt and run frame by frame against
//! bsnes-mercury (the Debian libretro core, driven by `rpt_testkit::bsnes`): WRAM, VRAM, CGRAM and
//! OAM are compared at every frame boundary (where bsnes ends a frame: the vblank NMI), for 600
//! frames on x86-64 and a shorter run on AArch64 and LoongArch64. A difference is reported with the
//! first differing frame, the region and address, and both values.
//!
//! The recompiled program writes its frame hashes itself (`RPT_SNES_FRAME_HASHES`, the same line
//! format as the oracle's) and ends after the frames asked for (`RPT_SNES_MAX_FRAMES`); on a
//! difference both sides are run again to dump that frame (`RPT_SNES_DUMP_FRAME`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use rpt_testkit::bsnes::{self, FrameHashes, FrameState};
use rpt_tests::matrix::{self, HOSTS};
use rpt_tests::{rpt_binary, sha256_file, stderr_of, workspace_root};

/// A sample ROM and how long to run it.
struct Sample {
    /// The ROM under tests/guests/snes/.
    rom: &'static str,
    /// Its joypad script there, if it reads the joypad.
    input: Option<&'static str>,
    /// WRAM ranges (offsets from `$7E:0000`, inclusive) both sides report as zeros: where the ROM
    /// records what bsnes v094 is known to get wrong, with the reason.
    oracle_deviations: &'static [(u32, u32, &'static str)],
}

/// cputest.sfc's quirk log (tests/guests/snes/README.md): emulation-mode cases where bsnes v094
/// differs from the 65C816 — page wrapping of `[dp]`, `[dp],Y` and `(dp,X)` with E=1, the `(dp,X)`
/// quirk with DL≠0, PEI (bsnes wraps its pointer within the page) and PLB at S=$01FF (bsnes reads
/// $0100, the CPU $0200). The hardware is the rule; rpt's lift tests check these cases.
const CPUTEST_QUIRKS: (u32, u32, &str) = (0xf800, 0xfeff, "emulation-mode cases bsnes v094 gets wrong");

const SAMPLES: [Sample; 2] = [
    Sample {
        rom: "cputest.sfc",
        input: None,
        oracle_deviations: &[CPUTEST_QUIRKS],
    },
    Sample {
        rom: "nmi.sfc",
        input: Some("input.txt"),
        oracle_deviations: &[],
    },
];

/// Frames compared on x86-64, and on the foreign hosts (which run under qemu-user).
const FRAMES: u32 = 600;
const FOREIGN_FRAMES: u32 = 60;

fn sample_dir() -> PathBuf {
    workspace_root().join("tests/guests/snes")
}

/// A recipe for `rom` in `work`, counting guest instructions so the compiled share is reported.
fn recipe(work: &Path, rom: &Path) -> PathBuf {
    let text = format!(
        "(\n    guest: \"snes-rom\",\n    image: \"{}\",\n    image_sha256: \"{}\",\n    platform: \"snes\",\n    host: \"x86-64\",\n    count_instructions: true,\n)\n",
        rom.display(),
        sha256_file(rom)
    );
    let stem = rom.file_stem().and_then(|s| s.to_str()).unwrap_or("rom");
    let path = work.join(format!("{stem}.ron"));
    fs::write(&path, text).expect("writing the recipe");
    path
}

/// Runs the recompiled ROM on `host` for `frames` frames in the sandbox `work`, with `env` on top
/// of the frame settings; returns rpt's stderr.
fn run_rpt(
    recipe: &Path,
    host: &str,
    work: &Path,
    frames: u32,
    input: Option<&Path>,
    env: &[(&str, String)],
) -> String {
    let mut cmd = Command::new(rpt_binary());
    cmd.arg("run")
        .arg(recipe)
        .args(["--host", host])
        .arg("--gen-dir")
        .arg(work.join("gen"))
        .arg("--cache-dir")
        .arg(work.join("cache"))
        .env("CI", "1")
        .env("RPT_SANDBOX", work)
        .env("RPT_SNES_MAX_FRAMES", frames.to_string());
    if let Some(input) = input {
        fs::copy(input, work.join("input.txt")).expect("copying the input script");
        cmd.env("RPT_SNES_INPUT", "input.txt");
    }
    for (name, value) in env {
        cmd.env(name, value);
    }
    let out = matrix::output_with_input(cmd, b"").expect("rpt starts");
    let stderr = stderr_of(&out);
    assert!(
        out.status.success(),
        "rpt run {} on {host} failed:\n{stderr}",
        recipe.display()
    );
    stderr
}

/// The first byte where two frames differ: region, offset, ours, theirs.
fn first_difference(ours: &FrameState, theirs: &FrameState) -> Option<(&'static str, usize, u8, u8)> {
    let regions = [
        ("WRAM ($7E0000 + offset)", &ours.wram, &theirs.wram),
        ("VRAM (byte offset)", &ours.vram, &theirs.vram),
        ("CGRAM (byte offset)", &ours.cgram, &theirs.cgram),
        ("OAM (byte offset)", &ours.oam, &theirs.oam),
    ];
    regions.into_iter().find_map(|(name, a, b)| {
        a.iter()
            .zip(b.iter())
            .position(|(x, y)| x != y)
            .map(|at| (name, at, a[at], b[at]))
    })
}

/// The compiled share the runtime reports, as its line says it.
fn compiled_share(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("rpt: guest instructions run compiled: "))
        .unwrap_or("(not reported)")
        .to_string()
}

/// Runs `sample` on `host` for `frames` frames in both and compares every frame.
fn agrees_with_bsnes(sample: &Sample, host: &str, frames: u32) {
    let rom = sample_dir().join(sample.rom);
    let input = sample.input.map(|i| sample_dir().join(i));
    let work = tempfile::tempdir().expect("tempdir");
    let recipe = recipe(work.path(), &rom);
    let skip: Vec<(u32, u32)> = sample.oracle_deviations.iter().map(|&(lo, hi, _)| (lo, hi)).collect();
    let zero_wram = skip
        .iter()
        .map(|(lo, hi)| format!("{lo:x}-{hi:x}"))
        .collect::<Vec<_>>()
        .join(",");
    let stderr = run_rpt(
        &recipe,
        host,
        work.path(),
        frames,
        input.as_deref(),
        &[
            ("RPT_SNES_FRAME_HASHES", "hashes.txt".to_string()),
            ("RPT_SNES_ZERO_WRAM", zero_wram.clone()),
        ],
    );
    let text = fs::read_to_string(work.path().join("hashes.txt")).expect("the recompiled ROM wrote its frame hashes");
    let ours: Vec<FrameHashes> = text
        .lines()
        .map(|l| FrameHashes::parse(l).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let theirs = bsnes::run_skipping(&rom, frames, input.as_deref(), &skip).unwrap_or_else(|e| panic!("bsnes: {e}"));
    eprintln!(
        "{} on {host}: {} frames; guest instructions run compiled: {}",
        sample.rom,
        ours.len(),
        compiled_share(&stderr)
    );
    let differing = ours.iter().zip(&theirs).find(|(a, b)| a != b).map(|(a, _)| a.frame);
    if let Some(frame) = differing {
        run_rpt(
            &recipe,
            host,
            work.path(),
            frame + 1,
            input.as_deref(),
            &[
                ("RPT_SNES_DUMP_FRAME", frame.to_string()),
                ("RPT_SNES_DUMP_FILE", "frame.bin".to_string()),
                ("RPT_SNES_ZERO_WRAM", zero_wram.clone()),
            ],
        );
        let dump = fs::read(work.path().join("frame.bin")).expect("the recompiled ROM dumped the frame");
        let ours = FrameState::from_dump(&dump).expect("a whole dump");
        let theirs =
            bsnes::dump_frame_skipping(&rom, frame, input.as_deref(), &skip).unwrap_or_else(|e| panic!("bsnes: {e}"));
        match first_difference(&ours, &theirs) {
            Some((region, at, a, b)) => panic!(
                "{} on {host}: frame {frame} differs first in {region} at {at:#x}: rpt {a:#04x}, bsnes {b:#04x}",
                sample.rom
            ),
            None => panic!(
                "{} on {host}: frame {frame}'s hashes differ but its dumps agree",
                sample.rom
            ),
        }
    }
    assert_eq!(
        ours.len(),
        frames as usize,
        "{} on {host}: the recompiled ROM ran {} frames",
        sample.rom,
        ours.len()
    );
}

fn oracle_available() -> bool {
    if bsnes::core_path().is_none() {
        eprintln!("skipped: the bsnes-mercury core is not installed (scripts/install-deps.sh installs it)");
        return false;
    }
    true
}

#[test]
fn every_sample_agrees_with_bsnes_for_600_frames_on_x86_64() {
    if !oracle_available() {
        return;
    }
    for sample in &SAMPLES {
        agrees_with_bsnes(sample, HOSTS[0], FRAMES);
    }
}

/// CI's reduced set on the foreign hosts: the NMI sample (compiling the CPU exerciser's 300,000
/// lines of C twice more costs minutes); `every_sample_agrees_with_bsnes_on_the_foreign_hosts`
/// runs them all (`cargo test -p rpt-tests --test snes_oracle -- --ignored`).
#[test]
fn the_nmi_sample_agrees_with_bsnes_on_the_foreign_hosts() {
    if !oracle_available() {
        return;
    }
    for host in &HOSTS[1..] {
        for sample in SAMPLES.iter().filter(|s| s.rom == "nmi.sfc") {
            agrees_with_bsnes(sample, host, FOREIGN_FRAMES);
        }
    }
}

#[test]
#[ignore = "minutes of compiling; CI runs the NMI sample on the foreign hosts"]
fn every_sample_agrees_with_bsnes_on_the_foreign_hosts() {
    if !oracle_available() {
        return;
    }
    for host in &HOSTS[1..] {
        for sample in &SAMPLES {
            agrees_with_bsnes(sample, host, FOREIGN_FRAMES);
        }
    }
}

#[test]
fn the_demo_recipe_writes_png_frames() {
    let work = tempfile::tempdir().expect("tempdir");
    fs::create_dir(work.path().join("frames")).expect("the frames directory");
    let recipe = workspace_root().join("recipes/demo-snes.ron");
    let input = sample_dir().join("input.txt");
    run_rpt(
        &recipe,
        HOSTS[0],
        work.path(),
        90,
        Some(&input),
        &[("RPT_SNES_PICTURES", "frames".to_string())],
    );
    let png = |frame: u32| {
        let path = work.path().join(format!("frames/frame-{frame:05}.png"));
        fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    for frame in [0, 45, 89] {
        let bytes = png(frame);
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "frame {frame} is a PNG");
        // IHDR: 256 x 224.
        assert_eq!(&bytes[16..24], &[0, 0, 1, 0, 0, 0, 0, 224], "frame {frame}'s size");
        for region in ["vram", "cgram", "oam"] {
            let raw = work.path().join(format!("frames/frame-{frame:05}.{region}"));
            assert!(raw.is_file(), "{} is missing", raw.display());
        }
    }
    // The picture changes: the counters and the colours move.
    assert_ne!(png(45), png(89));
}

/// A 32 KiB LoROM: reset at `$8000` runs `code`; `more` are (address, bytes) in bank 0; NMI at
/// `$FF00` is RTI. The header is valid (checksum and all).
fn hand_rom(code: &[u8], more: &[(u16, &[u8])]) -> Vec<u8> {
    let mut rom = vec![0u8; 0x8000];
    rom[..code.len()].copy_from_slice(code);
    for (addr, bytes) in more {
        let at = usize::from(*addr) - 0x8000;
        rom[at..at + bytes.len()].copy_from_slice(bytes);
    }
    rom[0x7f00] = 0x40;
    let header = 0x7fc0;
    rom[header..header + 21].copy_from_slice(b"RPT TIER TEST        ");
    rom[header + 0x15] = 0x20;
    rom[header + 0x17] = 0x05;
    rom[header + 0x2a..header + 0x2c].copy_from_slice(&0xff00u16.to_le_bytes());
    rom[header + 0x3a..header + 0x3c].copy_from_slice(&0xff00u16.to_le_bytes());
    rom[header + 0x3c..header + 0x3e].copy_from_slice(&0x8000u16.to_le_bytes());
    let sum = rpt_guest_snes_rom::loader_rom::checksum(&rom);
    rom[header + 0x1c..header + 0x1e].copy_from_slice(&(!sum).to_le_bytes());
    rom[header + 0x1e..header + 0x20].copy_from_slice(&sum.to_le_bytes());
    rom
}

#[test]
fn code_reached_only_through_a_pointer_table_runs_in_the_tier_then_compiled() {
    if !oracle_available() {
        return;
    }
    // Reset: SEI; CLC; XCE; REP #$30; LDX #$0002; JSR ($9000,X); LDA #$0080 (NMI on); SEP #$20;
    // STA $4200; loop: WAI; BRA loop. Pointer table at $9000: $0000, $A000. $A000 (16-bit, found by
    // no walk): LDA #$1234; STA $7E0100; INC A; STA $7E0102; RTS.
    let code = [
        0x78, 0x18, 0xfb, 0xc2, 0x30, 0xa2, 0x02, 0x00, 0xfc, 0x00, 0x90, 0xa9, 0x80, 0x00, 0xe2, 0x20, 0x8d, 0x00,
        0x42, 0xcb, 0x80, 0xfd,
    ];
    let routine = [
        0xa9, 0x34, 0x12, 0x8f, 0x00, 0x01, 0x7e, 0x1a, 0x8f, 0x02, 0x01, 0x7e, 0x60,
    ];
    let rom_bytes = hand_rom(&code, &[(0x9000, &[0x00, 0x00, 0x00, 0xa0]), (0xa000, &routine)]);
    let work = tempfile::tempdir().expect("tempdir");
    let rom = work.path().join("tier.sfc");
    fs::write(&rom, &rom_bytes).expect("writing the ROM");
    let recipe = recipe(work.path(), &rom);
    let theirs = bsnes::run(&rom, 10, None).unwrap_or_else(|e| panic!("bsnes: {e}"));
    let mut shares = Vec::new();
    for run in ["first", "second"] {
        let stderr = run_rpt(
            &recipe,
            HOSTS[0],
            work.path(),
            10,
            None,
            &[("RPT_SNES_FRAME_HASHES", "hashes.txt".to_string())],
        );
        let text = fs::read_to_string(work.path().join("hashes.txt")).expect("frame hashes");
        let ours: Vec<FrameHashes> = text
            .lines()
            .map(|l| FrameHashes::parse(l).expect("a hash line"))
            .collect();
        assert_eq!(ours, theirs, "{run} run: the frames differ from bsnes\n{stderr}");
        shares.push(compiled_share(&stderr));
        if run == "first" {
            let coverage = fs::read_to_string(work.path().join("gen/tier/tier-coverage.txt"))
                .unwrap_or_else(|e| panic!("no coverage file: {e}\n{stderr}"));
            // The routine's 16-bit variant: the key holds native mode and both 16-bit widths.
            assert!(coverage.contains("0x0700a000"), "coverage file:\n{coverage}");
        } else {
            assert!(
                stderr.contains("1 of them new"),
                "the recompile did not read the coverage file\n{stderr}"
            );
        }
    }
    assert!(
        !shares[0].contains("(100.00%)"),
        "the first run ran everything compiled: {}",
        shares[0]
    );
    assert!(
        shares[1].contains("(100.00%)"),
        "the second run left the tier in use: {}",
        shares[1]
    );
}
