//! The SNES platform (`platform/`) compiled natively with clang-19 (or `cc` where it is missing)
//! together with a C driver (`tests/platform/driver.c`) that plays the CPU, and the host services
//! the platform asks for given with the C library (`tests/platform/snes_host_libc.c`): each driver
//! subcommand checks one subject in C and prints `ok`; this file runs them, and checks what the
//! frame hook writes (the hash file, the dump, raw memories, PNG pictures), the power-on memories
//! against the oracle's, and how bad input scripts and settings are reported.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const WRAM: usize = 131_072;
const VRAM: usize = 65_536;
const CGRAM: usize = 512;
const OAM: usize = 544;

/// How long one driver run may take: a driver that loops would otherwise hang the test.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// clang-19 as the hosts use it, or the system's `cc` on a machine without it.
fn compiler() -> &'static str {
    let clang = Command::new("clang-19").arg("--version").output();
    if clang.is_ok_and(|o| o.status.success()) {
        "clang-19"
    } else {
        "cc"
    }
}

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// This process's directory: a debug and a release run may go on at the same time.
fn process_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rpt-guest-snes-rom-platform-{}", std::process::id()))
}

/// The driver, built once per test process.
fn driver() -> &'static Path {
    static DRIVER: OnceLock<PathBuf> = OnceLock::new();
    DRIVER.get_or_init(|| {
        let out_dir = process_dir();
        fs::create_dir_all(&out_dir).unwrap();
        let exe = out_dir.join("driver");
        let platform = crate_dir().join("platform");
        let mut sources: Vec<PathBuf> = fs::read_dir(&platform)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "c"))
            .collect();
        sources.sort();
        sources.push(crate_dir().join("tests/platform/snes_host_libc.c"));
        sources.push(crate_dir().join("tests/platform/driver.c"));
        let out = Command::new(compiler())
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-g"])
            .arg("-I")
            .arg(&platform)
            .args(&sources)
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("the C compiler runs");
        assert!(
            out.status.success(),
            "compiling the platform and driver failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        exe
    })
}

/// A fresh directory for one test's files, removed when the test passes (kept to look at when it fails).
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = process_dir().join(name);
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = fs::remove_dir_all(&self.0);
        }
    }
}

/// Runs a driver subcommand with exactly the given RPT_SNES_* variables, within RUN_LIMIT.
fn run(test: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(driver());
    cmd.arg(test)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, _) in std::env::vars() {
        if key.starts_with("RPT_SNES_") {
            cmd.env_remove(key);
        }
    }
    cmd.envs(env.iter().copied());
    let mut child = cmd.spawn().expect("the driver runs");
    // Read both pipes while the driver runs, so a talkative failure cannot block it.
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut v = Vec::new();
        out_pipe.read_to_end(&mut v).unwrap();
        v
    });
    let stderr = std::thread::spawn(move || {
        let mut v = Vec::new();
        err_pipe.read_to_end(&mut v).unwrap();
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            panic!("driver {test} ran longer than {RUN_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    Output { status, stdout, stderr }
}

fn run_ok(test: &str, env: &[(&str, &str)]) {
    let out = run(test, env);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.trim_end() == "ok",
        "driver {test} failed ({}):\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn memory_map_mirrors_and_open_bus() {
    run_ok("memory_map", &[]);
}

#[test]
fn wram_port() {
    run_ok("wram_port", &[]);
}

#[test]
fn vram_increment_modes_remapping_and_prefetch() {
    run_ok("vram", &[]);
}

#[test]
fn cgram_write_and_read_latches() {
    run_ok("cgram", &[]);
}

#[test]
fn oam_low_and_high_tables() {
    run_ok("oam", &[]);
}

#[test]
fn multiply_and_divide() {
    run_ok("math", &[]);
}

#[test]
fn general_dma() {
    run_ok("dma", &[]);
}

#[test]
fn hdma_direct_and_indirect() {
    run_ok("hdma", &[]);
}

#[test]
fn vblank_nmi_irq_and_wai() {
    run_ok("nmi", &[]);
}

#[test]
fn apu_port_handshake() {
    run_ok("apu", &[]);
}

#[test]
fn renderer_modes_priorities_and_sprites() {
    run_ok("render", &[]);
}

#[test]
fn auto_joypad_read_from_input_script() {
    let dir = Scratch::new("joypad");
    let script = dir.join("input.txt");
    fs::write(&script, "# joypad 1\n\n1 8000\n3 0x0C40   # Up, Down, X\n").unwrap();
    run_ok("joypad", &[("RPT_SNES_INPUT", script.to_str().unwrap())]);
}

#[test]
fn auto_joypad_read_after_an_nmi_frame_end_reads_the_next_frame() {
    let dir = Scratch::new("joypad-nmi");
    let script = dir.join("input.txt");
    fs::write(&script, "0 0080\n1 8000\n3 0C40\n").unwrap();
    run_ok("joypad_nmi", &[("RPT_SNES_INPUT", script.to_str().unwrap())]);
}

#[test]
fn frames_end_at_the_nmi_or_at_line_241() {
    run_ok("frame_boundary", &[]);
}

/// The first index where two memories differ, for a message that says where.
fn first_difference(platform: &[u8], oracle: &[u8]) -> Option<usize> {
    (0..platform.len().max(oracle.len())).find(|&i| platform.get(i) != oracle.get(i))
}

#[test]
fn power_on_memory_is_the_oracles() {
    let dir = Scratch::new("power-on");
    let dump = dir.join("memories.bin");
    run_ok("power_on_memory", &[("SNES_DRIVER_DUMP", dump.to_str().unwrap())]);
    let bytes = fs::read(&dump).unwrap();
    let platform = rpt_testkit::bsnes::FrameState::from_dump(&bytes).unwrap();
    let oracle = rpt_testkit::bsnes::power_on_state();
    for (name, ours, theirs) in [
        ("WRAM", &platform.wram, &oracle.wram),
        ("VRAM", &platform.vram, &oracle.vram),
        ("CGRAM", &platform.cgram, &oracle.cgram),
        ("OAM", &platform.oam, &oracle.oam),
    ] {
        if let Some(i) = first_difference(ours, theirs) {
            panic!(
                "{name} at power-on differs from bsnes's first at byte {i:#x}: {:02x?} where the oracle has {:02x?}",
                ours.get(i),
                theirs.get(i)
            );
        }
    }
}

#[test]
fn wai_with_no_interrupt_enabled_exits() {
    let out = run("wai_forever", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no interrupt can arrive"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("WAI returned"));
}

#[test]
fn wai_with_no_interrupt_enabled_runs_to_the_frame_limit() {
    let dir = Scratch::new("wai-limit");
    let hashes = dir.join("hashes.txt");
    let out = run(
        "wai_forever",
        &[
            ("RPT_SNES_FRAME_HASHES", hashes.to_str().unwrap()),
            ("RPT_SNES_MAX_FRAMES", "3"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(fs::read_to_string(&hashes).unwrap().lines().count(), 3);
}

fn fnv1a64(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Parses `<frame> wram:<hex16> vram:<hex16> cgram:<hex16> oam:<hex16>`.
fn parse_hash_line(line: &str) -> (u64, [u64; 4]) {
    let fields: Vec<&str> = line.split(' ').collect();
    assert_eq!(fields.len(), 5, "hash line `{line}`");
    let frame = fields[0].parse().unwrap_or_else(|_| panic!("frame number in `{line}`"));
    let mut hashes = [0; 4];
    for (i, name) in ["wram", "vram", "cgram", "oam"].iter().enumerate() {
        let hex = fields[i + 1]
            .strip_prefix(&format!("{name}:"))
            .unwrap_or_else(|| panic!("{name}: in `{line}`"));
        assert_eq!(hex.len(), 16, "`{line}`");
        assert!(
            hex.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)),
            "`{line}`"
        );
        hashes[i] = u64::from_str_radix(hex, 16).unwrap();
    }
    (frame, hashes)
}

#[test]
fn frame_hashes_dump_and_raw_memories() {
    let dir = Scratch::new("frames");
    let hashes = dir.join("hashes.txt");
    let dump = dir.join("dump.bin");
    let pictures = dir.join("pictures");
    fs::create_dir(&pictures).unwrap();
    let out = run(
        "frames",
        &[
            ("RPT_SNES_FRAME_HASHES", hashes.to_str().unwrap()),
            ("RPT_SNES_DUMP_FRAME", "3"),
            ("RPT_SNES_DUMP_FILE", dump.to_str().unwrap()),
            ("RPT_SNES_PICTURES", pictures.to_str().unwrap()),
            ("RPT_SNES_MAX_FRAMES", "6"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));

    let text = fs::read_to_string(&hashes).unwrap();
    let lines: Vec<(u64, [u64; 4])> = text.lines().map(parse_hash_line).collect();
    assert_eq!(lines.len(), 6);
    for (i, (frame, _)) in lines.iter().enumerate() {
        assert_eq!(*frame, i as u64);
    }
    // The driver's main loop writes WRAM every frame, so its hash changes; VRAM stays.
    assert_ne!(lines[2].1[0], lines[3].1[0]);
    assert_eq!(lines[2].1[1], lines[3].1[1]);

    let bytes = fs::read(&dump).unwrap();
    assert_eq!(bytes.len(), WRAM + VRAM + CGRAM + OAM);
    let (wram, rest) = bytes.split_at(WRAM);
    let (vram, rest) = rest.split_at(VRAM);
    let (cgram, oam) = rest.split_at(CGRAM);
    assert_eq!(lines[3].1, [fnv1a64(wram), fnv1a64(vram), fnv1a64(cgram), fnv1a64(oam)]);
    // The driver's NMI handler n writes n to WRAM byte n. Frame 3 ends as the fourth NMI is
    // raised, before its handler runs: it holds the first three handlers' writes, not the fourth's.
    assert_eq!(&wram[..4], &[0, 1, 2, 0]);
    assert_eq!(fs::read(pictures.join("frame-00003.vram")).unwrap(), vram);
    assert_eq!(fs::read(pictures.join("frame-00003.cgram")).unwrap(), cgram);
    assert_eq!(fs::read(pictures.join("frame-00003.oam")).unwrap(), oam);
    for frame in 0..6 {
        assert!(pictures.join(format!("frame-{frame:05}.png")).exists());
    }
    assert!(!pictures.join("frame-00006.png").exists());
}

// ---- PNG checks, written here independently of the C writer

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                0xedb8_8320 ^ (crc >> 1)
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Checks a PNG's structure and CRCs, inflates its stored deflate blocks, checks the Adler-32,
/// and returns width, height and the RGB pixels.
fn decode_png(png: &[u8]) -> (u32, u32, Vec<u8>) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "signature");
    let mut pos = 8;
    let mut chunks = Vec::new();
    while pos < png.len() {
        let len = be32(&png[pos..]) as usize;
        let kind = &png[pos + 4..pos + 8];
        let data = &png[pos + 8..pos + 8 + len];
        let crc = be32(&png[pos + 8 + len..]);
        assert_eq!(
            crc,
            crc32(&png[pos + 4..pos + 8 + len]),
            "CRC of {}",
            String::from_utf8_lossy(kind)
        );
        chunks.push((kind.to_vec(), data.to_vec()));
        pos += 12 + len;
    }
    assert_eq!(pos, png.len());
    let kinds: Vec<&[u8]> = chunks.iter().map(|(k, _)| k.as_slice()).collect();
    assert_eq!(kinds, [&b"IHDR"[..], b"IDAT", b"IEND"]);
    let ihdr = &chunks[0].1;
    assert_eq!(ihdr.len(), 13);
    let (width, height) = (be32(ihdr), be32(&ihdr[4..]));
    assert_eq!(
        &ihdr[8..],
        &[8, 2, 0, 0, 0],
        "8-bit truecolour, deflate, filter 0, no interlace"
    );

    let z = &chunks[1].1;
    assert_eq!(
        (u16::from(z[0]) << 8 | u16::from(z[1])) % 31,
        0,
        "zlib header check bits"
    );
    assert_eq!(z[0] & 0x0f, 8, "deflate");
    let mut raw = Vec::new();
    let mut p = 2;
    loop {
        let header = z[p];
        assert_eq!(header & 0b110, 0, "stored block");
        let len = usize::from(u16::from_le_bytes([z[p + 1], z[p + 2]]));
        let nlen = u16::from_le_bytes([z[p + 3], z[p + 4]]);
        assert_eq!(nlen, !(len as u16));
        raw.extend_from_slice(&z[p + 5..p + 5 + len]);
        p += 5 + len;
        if header & 1 == 1 {
            break;
        }
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    assert_eq!(be32(&z[p..]), b << 16 | a, "Adler-32");
    assert_eq!(p + 4, z.len());

    let row = 1 + 3 * width as usize;
    assert_eq!(raw.len(), row * height as usize);
    let mut rgb = Vec::with_capacity(raw.len());
    for line in raw.chunks(row) {
        assert_eq!(line[0], 0, "filter type none");
        rgb.extend_from_slice(&line[1..]);
    }
    (width, height, rgb)
}

#[test]
fn pictures_are_valid_deterministic_pngs() {
    let mut files = Vec::new();
    for run_index in 0..2 {
        let dir = Scratch::new(&format!("png-{run_index}"));
        let out = run(
            "frames",
            &[
                ("RPT_SNES_PICTURES", dir.0.to_str().unwrap()),
                ("RPT_SNES_MAX_FRAMES", "2"),
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        files.push(fs::read(dir.join("frame-00001.png")).unwrap());
    }
    assert_eq!(files[0], files[1], "the same frames give the same bytes");
    let (width, height, rgb) = decode_png(&files[0]);
    assert_eq!((width, height), (256, 224));
    let pixel = |x: usize, y: usize| {
        let i = 3 * (y * 256 + x);
        [rgb[i], rgb[i + 1], rgb[i + 2]]
    };
    // The driver's backdrop is CGRAM colour 0 = 0x2108 (8, 8, 8 of 31): 0x42 in 8 bits.
    assert_eq!(pixel(200, 10), [0x42, 0x42, 0x42]);
    // Its diagonal of red, green and blue tiles.
    let colours: std::collections::BTreeSet<[u8; 3]> = rgb.chunks(3).map(|c| [c[0], c[1], c[2]]).collect();
    for colour in [[0xff, 0, 0], [0, 0xff, 0], [0, 0, 0xff]] {
        assert!(colours.contains(&colour), "{colour:?} drawn");
    }
}

/// Runs the driver's `power` with an input script and returns its exit status and stderr.
fn run_with_script(dir: &Scratch, name: &str, script: &str) -> (Option<i32>, String, PathBuf) {
    let path = dir.join(&format!("{name}.txt"));
    fs::write(&path, script).unwrap();
    let out = run("power", &[("RPT_SNES_INPUT", path.to_str().unwrap())]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        path,
    )
}

#[test]
fn input_script_errors_name_the_file_and_line() {
    let cases = [
        ("input-bad-value", "0 0000\n# fine\n5 0x1g00\n", 3, "bad joypad value"),
        ("input-too-wide", "1 12345\n", 1, "bad joypad value"),
        ("input-bad-frame", "\n\nx1 0000\n", 3, "bad frame number"),
        ("input-order", "1 0000\n4 8000\n4 0080\n", 3, "is not after frame 4"),
        ("input-fields", "1 0000 0001\n", 1, "expected `<frame> <hex16>`"),
        ("input-missing", "  7\n", 1, "expected `<frame> <hex16>`"),
    ];
    let dir = Scratch::new("input");
    for (name, script, line, message) in cases {
        let (status, stderr, path) = run_with_script(&dir, name, script);
        assert_eq!(status, Some(2), "{name}: {stderr}");
        let location = format!("{}:{line}:", path.display());
        assert!(stderr.contains(&location), "{name}: `{stderr}` lacks `{location}`");
        assert!(stderr.contains(message), "{name}: `{stderr}` lacks `{message}`");
    }
    let (status, stderr, _) = run_with_script(&dir, "input-good", "# nothing but comments\n\n0 0\n10 0xFFFF\n");
    assert_eq!(status, Some(0), "{stderr}");
}

#[test]
fn settings_errors_name_the_file_or_variable() {
    let dir = Scratch::new("settings");
    let missing = dir.join("no-such-dir/input.txt");
    let out = run("power", &[("RPT_SNES_INPUT", missing.to_str().unwrap())]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(missing.to_str().unwrap()));

    let unwritable = dir.join("no-such-dir/hashes.txt");
    let out = run("power", &[("RPT_SNES_FRAME_HASHES", unwritable.to_str().unwrap())]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(unwritable.to_str().unwrap()));

    let out = run("power", &[("RPT_SNES_MAX_FRAMES", "ten")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("RPT_SNES_MAX_FRAMES"));

    let out = run("power", &[("RPT_SNES_DUMP_FRAME", "3")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("RPT_SNES_DUMP_FILE"));
}
