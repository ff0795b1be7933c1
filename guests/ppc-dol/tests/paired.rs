//! Paired singles: each instruction on inputs chosen to show its documented Gekko behaviour, run
//! in rpt's IR interpreter and as compiled C, against expected values derived from that
//! behaviour (Dolphin's hardware tests, carried over as facts; qemu has no paired singles).
//!
//! The expected bit patterns were worked out from the rules alone (a Python model with exact
//! rational arithmetic, not rpt's code), e.g. `ps_mul` of 1+2^-23 by frC = 0x3ff0000008000000:
//! Gekko rounds frC's mantissa to 25 bits first (to 1+2^-24), so the single result rounds up to
//! 1+2^-22 (0x3ff0000040000000), where an exact product would give 1+2^-23.
//! A test also checks that binutils (`powerpc-linux-gnu-as -mgekko`) encodes the instructions as
//! the words used here.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use rpt_guest_ppc_dol::state::{FPSCR, cr_field, fpr, gpr, gqr, ps1};
use rpt_ir::interp::{Interpreter, Outcome, Val};
use rpt_ir::{AddrSpace, GuestAddr, Program};
use rpt_testkit::{run_tool, scratch_dir};

/// One test: instruction words, the state they start from, and what must hold afterwards.
struct PsCase {
    name: &'static str,
    words: &'static [u32],
    /// (FPR, ps0, ps1) as bit patterns.
    fprs: &'static [(u32, u64, u64)],
    gprs: &'static [(u32, u32)],
    gqrs: &'static [(u32, u32)],
    fpscr: u32,
    mem: &'static [(u32, &'static [u8])],
    expect_fprs: &'static [(u32, u64, u64)],
    expect_gprs: &'static [(u32, u32)],
    /// (CR field, value).
    expect_cr: &'static [(u32, u32)],
    expect_mem: &'static [(u32, &'static [u8])],
}

const fn f(v: f64) -> u64 {
    v.to_bits()
}

const NAN: u64 = 0x7ff8_0000_0000_0000;
const SNAN_NEG: u64 = 0xfff4_0000_0000_0001;
const BUF: u32 = 0x8010_0000;

const BLANK: PsCase = PsCase {
    name: "",
    words: &[],
    fprs: &[],
    gprs: &[],
    gqrs: &[],
    fpscr: 0,
    mem: &[],
    expect_fprs: &[],
    expect_gprs: &[],
    expect_cr: &[],
    expect_mem: &[],
};

/// 0.1 as a single (what `lfs` of 0.1f gives).
const TENTH_F: u64 = 0x3fb9_9999_a000_0000;

static CASES: &[PsCase] = &[
    PsCase {
        name: "ps_add",
        words: &[0x1022_182a],
        fprs: &[(2, f(1.5), f(-2.0)), (3, f(0.25), f(8.0))],
        expect_fprs: &[(1, f(1.75), f(6.0))],
        ..BLANK
    },
    PsCase {
        name: "ps_sub",
        words: &[0x1022_1828],
        fprs: &[(2, f(1.5), f(-2.0)), (3, f(0.25), f(8.0))],
        expect_fprs: &[(1, f(1.25), f(-10.0))],
        ..BLANK
    },
    PsCase {
        name: "ps_div rounds each half to single",
        words: &[0x1022_1824],
        fprs: &[(2, f(1.0), f(2.0)), (3, f(3.0), f(7.0))],
        expect_fprs: &[(1, 0x3fd5_5555_6000_0000, 0x3fd2_4924_a000_0000)],
        ..BLANK
    },
    PsCase {
        name: "ps_mul rounds frC to 25 bits",
        words: &[0x1022_0132],
        fprs: &[(2, 0x3ff0_0000_2000_0000, f(2.5)), (4, 0x3ff0_0000_0800_0000, f(3.0))],
        expect_fprs: &[(1, 0x3ff0_0000_4000_0000, f(7.5))],
        ..BLANK
    },
    PsCase {
        name: "ps_madd",
        words: &[0x1022_193a],
        fprs: &[(2, f(1.5), f(2.0)), (4, f(2.0), TENTH_F), (3, f(0.25), f(-1.0))],
        expect_fprs: &[(1, 0x400a_0000_0000_0000, 0xbfe9_9999_a000_0000)],
        ..BLANK
    },
    PsCase {
        name: "ps_msub",
        words: &[0x1022_1938],
        fprs: &[(2, f(1.5), f(2.0)), (4, f(2.0), TENTH_F), (3, f(0.25), f(-1.0))],
        expect_fprs: &[(1, 0x4006_0000_0000_0000, 0x3ff3_3333_4000_0000)],
        ..BLANK
    },
    PsCase {
        name: "ps_nmadd",
        words: &[0x1022_193e],
        fprs: &[(2, f(1.5), f(2.0)), (4, f(2.0), TENTH_F), (3, f(0.25), f(-1.0))],
        expect_fprs: &[(1, 0xc00a_0000_0000_0000, 0x3fe9_9999_a000_0000)],
        ..BLANK
    },
    PsCase {
        name: "ps_nmsub",
        words: &[0x1022_193c],
        fprs: &[(2, f(1.5), f(2.0)), (4, f(2.0), TENTH_F), (3, f(0.25), f(-1.0))],
        expect_fprs: &[(1, 0xc006_0000_0000_0000, 0xbff3_3333_4000_0000)],
        ..BLANK
    },
    PsCase {
        name: "ps_muls0 and ps_muls1",
        // ps_muls0 f1,f2,f4; ps_muls1 f5,f2,f4
        words: &[0x1022_0118, 0x10a2_011a],
        fprs: &[(2, f(3.0), f(5.0)), (4, f(0.5), f(4.0))],
        expect_fprs: &[(1, f(1.5), f(2.5)), (5, f(12.0), f(20.0))],
        ..BLANK
    },
    PsCase {
        name: "ps_madds0 and ps_madds1",
        // ps_madds0 f1,f2,f4,f3; ps_madds1 f5,f2,f4,f3
        words: &[0x1022_191c, 0x10a2_191e],
        fprs: &[(2, f(3.0), f(5.0)), (4, f(0.5), f(4.0)), (3, f(1.0), f(1.0))],
        expect_fprs: &[(1, f(2.5), f(3.5)), (5, f(13.0), f(21.0))],
        ..BLANK
    },
    PsCase {
        name: "ps_sum0 and ps_sum1",
        // ps_sum0 f1,f2,f4,f3; ps_sum1 f5,f2,f4,f3 (frC's other half is rounded to single)
        words: &[0x1022_1914, 0x10a2_1916],
        fprs: &[(2, f(1.5), f(99.0)), (3, f(77.0), f(0.25)), (4, f(0.1), f(0.1))],
        expect_fprs: &[(1, f(1.75), TENTH_F), (5, TENTH_F, f(1.75))],
        ..BLANK
    },
    PsCase {
        name: "ps_sel: -0 selects frC, NaN selects frB",
        words: &[0x1022_192e],
        fprs: &[(2, f(-0.0), NAN), (4, f(1.0), f(2.0)), (3, f(3.0), f(4.0))],
        expect_fprs: &[(1, f(1.0), f(4.0))],
        ..BLANK
    },
    PsCase {
        name: "ps_merge keeps double precision",
        // ps_merge00/01/10/11 into f1, f5, f6, f7: (a.ps0,b.ps0) (a.ps0,b.ps1) (a.ps1,b.ps0) (a.ps1,b.ps1)
        words: &[0x1022_1c20, 0x10a2_1c60, 0x10c2_1ca0, 0x10e2_1ce0],
        fprs: &[(2, f(0.1), f(0.2)), (3, f(0.3), f(0.7))],
        expect_fprs: &[
            (1, f(0.1), f(0.3)),
            (5, f(0.1), f(0.7)),
            (6, f(0.2), f(0.3)),
            (7, f(0.2), f(0.7)),
        ],
        ..BLANK
    },
    PsCase {
        name: "ps_neg, ps_abs, ps_nabs, ps_mr are bit operations",
        // ps_neg f1,f3; ps_abs f5,f3; ps_nabs f6,f3; ps_mr f7,f3
        words: &[0x1020_1850, 0x10a0_1a10, 0x10c0_1910, 0x10e0_1890],
        fprs: &[(3, SNAN_NEG, f(-0.0))],
        expect_fprs: &[
            (1, SNAN_NEG & !(1 << 63), f(0.0)),
            (5, SNAN_NEG & !(1 << 63), f(0.0)),
            (6, SNAN_NEG, f(-0.0)),
            (7, SNAN_NEG, f(-0.0)),
        ],
        ..BLANK
    },
    PsCase {
        name: "ps_cmpu0/ps_cmpo0/ps_cmpu1/ps_cmpo1",
        // ps_cmpu0 cr3,f2,f3; ps_cmpo0 cr4,f2,f3; ps_cmpu1 cr5,f2,f3; ps_cmpo1 cr6,f4,f3
        words: &[0x1182_1800, 0x1202_1840, 0x1282_1880, 0x1304_18c0],
        fprs: &[(2, f(1.0), f(5.0)), (3, f(2.0), f(5.0)), (4, f(0.0), NAN)],
        expect_cr: &[(3, 0b1000), (4, 0b1000), (5, 0b0010), (6, 0b0001)],
        ..BLANK
    },
    PsCase {
        name: "ps_res and ps_rsqrte use the 750's tables",
        // ps_res f1,f3; ps_rsqrte f5,f4
        words: &[0x1020_1830, 0x10a0_2034],
        fprs: &[(3, f(2.0), f(-4.0)), (4, f(4.0), f(1.0))],
        expect_fprs: &[
            (1, 0x3fdf_ff00_0000_0000, 0xbfcf_ff00_0000_0000),
            (5, 0x3fdf_fe80_0000_0000, 0x3fef_fe80_0000_0000),
        ],
        ..BLANK
    },
    PsCase {
        name: "ps_add honours the FPSCR rounding mode",
        // mtfsfi 7,1 (toward zero); ps_add f1,f2,f3
        words: &[0xff80_110c, 0x1022_182a],
        fprs: &[(2, f(1.0), f(-1.0)), (3, f(1e-7), f(-1e-7))],
        expect_fprs: &[(1, f(1.0), f(-1.0))],
        ..BLANK
    },
    PsCase {
        name: "psq_l u8 scaled, psq_lu s16, psq_l W=1",
        // psq_l f1,-8(r5),1,3 (GQR3: u8, scale 4) ; psq_lu f5,8(r5),0,2 (GQR2: s16, scale -3)
        // psq_l f6,0(r5),0,3 (both halves)
        words: &[0xe025_bff8, 0xe4a5_2008, 0xe0c5_3000],
        gprs: &[(5, BUF + 8)],
        gqrs: &[(3, (4 << 24) | (4 << 16)), (2, (61 << 24) | (7 << 16))],
        mem: &[(
            BUF,
            &[
                200, 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xf0, 0x01, 0x00,
            ],
        )],
        expect_fprs: &[
            (1, f(12.5), f(1.0)),
            (5, f(-128.0), f(2048.0)),
            (6, f(15.9375), f(15.0)),
        ],
        expect_gprs: &[(5, BUF + 16)],
        ..BLANK
    },
    PsCase {
        name: "psq_st u8 clamps and truncates, s8, float flushes denormals, W=1 stores one",
        // psq_st f1,0(r5),0,1 (GQR1 store: u8 scale 2); psq_stu f2,8(r5),0,2 (s8);
        // psq_st f3,0(r6),0,3 (float); psq_st f4,16(r6),1,1 (W=1)
        words: &[0xf025_1000, 0xf445_2008, 0xf066_3000, 0xf086_9010],
        gprs: &[(5, BUF), (6, BUF + 0x40)],
        gqrs: &[(1, (2 << 8) | 4), (2, 6), (3, 0)],
        fprs: &[
            (1, f(10.9), f(300.0)),
            (2, f(-1.75), f(2.5)),
            (3, f(-1e-40), f(1.5)),
            (4, f(1.0), f(2.0)),
        ],
        mem: &[(BUF + 0x50, &[0xaa, 0xaa, 0xaa])],
        expect_mem: &[
            (BUF, &[43, 255]),
            (BUF + 8, &[0xff, 2]),
            (BUF + 0x40, &[0x80, 0, 0, 0, 0x3f, 0xc0, 0, 0]),
            (BUF + 0x50, &[4, 0xaa, 0xaa]),
        ],
        expect_gprs: &[(5, BUF + 8)],
        ..BLANK
    },
    PsCase {
        name: "psq_lx, psq_stx, psq_lux, psq_stux",
        // psq_lx f1,r5,r6,1,3; psq_stx f1,r5,r6,1,3 would store ps0 only: use
        // psq_lux f7,r5,r6,0,2 and psq_stux f7,r8,r6,0,2.
        words: &[0x1025_358c, 0x10e5_314c, 0x10e8_314e],
        gprs: &[(5, BUF), (6, 4), (8, BUF + 0x80)],
        gqrs: &[(3, 0), (2, 0x0005_0005)],
        mem: &[(BUF + 4, &[0x40, 0x49, 0x0f, 0xdb, 0x12, 0x34, 0x56, 0x78])],
        expect_fprs: &[(1, 0x4009_21fb_6000_0000, f(1.0)), (7, f(16457.0), f(4059.0))],
        expect_gprs: &[(5, BUF + 4), (8, BUF + 0x84)],
        expect_mem: &[(BUF + 0x84, &[0x40, 0x49, 0x0f, 0xdb])],
        ..BLANK
    },
    PsCase {
        name: "lfs fills both halves, lfd only ps0, fadds both",
        // lfs f1,0(r5); lfd f5,8(r5); fadds f6,f2,f3
        words: &[0xc025_0000, 0xc8a5_0008, 0xecc2_182a],
        gprs: &[(5, BUF)],
        fprs: &[(5, f(9.0), f(9.0)), (2, f(1.0), f(7.0)), (3, f(2.0), f(7.0))],
        mem: &[(BUF, &[0x3f, 0xc0, 0, 0, 0, 0, 0, 0, 0x40, 0x10, 0, 0, 0, 0, 0, 0])],
        expect_fprs: &[(1, f(1.5), f(1.5)), (5, f(4.0), f(9.0)), (6, f(3.0), f(3.0))],
        ..BLANK
    },
    PsCase {
        name: "ps_add. sets CR1 from the FPSCR's top nibble",
        words: &[0x1022_182b],
        fpscr: 0x9000_0000,
        fprs: &[(2, f(1.0), f(1.0)), (3, f(1.0), f(1.0))],
        expect_fprs: &[(1, f(2.0), f(2.0))],
        expect_cr: &[(1, 0b1001)],
        ..BLANK
    },
    PsCase {
        name: "ps_add of a NaN gives it quieted with a single's payload",
        words: &[0x1022_182a],
        fprs: &[(2, 0x7ff0_0000_dead_beef, f(1.0)), (3, f(1.0), f(f64::INFINITY))],
        expect_fprs: &[(1, 0x7ff8_0000_c000_0000, f(f64::INFINITY))],
        ..BLANK
    },
];

const CASE_BASE: u32 = 0x8100_0000;
const CASE_STRIDE: u32 = 0x100;

fn case_addr(i: usize) -> u32 {
    CASE_BASE + i as u32 * CASE_STRIDE
}

fn lift(i: usize, case: &PsCase) -> Program {
    common::lift_case(case_addr(i), case.words, BTreeSet::new(), case.name)
}

/// What a run leaves: the checked FPR halves, GPRs, CR fields and memory, as text lines, in
/// the same form for the interpreter and the compiled driver.
fn expected_lines(case: &PsCase) -> Vec<String> {
    let mut out = Vec::new();
    for &(n, p0, p1) in case.expect_fprs {
        out.push(format!("f{n} {p0:016x} {p1:016x}"));
    }
    for &(n, v) in case.expect_gprs {
        out.push(format!("r{n} {v:08x}"));
    }
    for &(n, v) in case.expect_cr {
        out.push(format!("cr{n} {v:x}"));
    }
    for &(addr, bytes) in case.expect_mem {
        for (k, b) in bytes.iter().enumerate() {
            out.push(format!("m{:08x} {b:02x}", addr as usize + k));
        }
    }
    out
}

fn interpret(i: usize, case: &PsCase, program: &Program) -> Vec<String> {
    let desc = &program.state;
    let mut interp = Interpreter::new(program);
    let st = &mut interp.machine.state;
    for &(n, p0, p1) in case.fprs {
        st.set(desc, fpr(n), Val::F64(p0));
        st.set(desc, ps1(n), Val::F64(p1));
    }
    for &(n, v) in case.gprs {
        st.set(desc, gpr(n), Val::Int(u64::from(v)));
    }
    for &(n, v) in case.gqrs {
        st.set(desc, gqr(n), Val::Int(u64::from(v)));
    }
    st.set(desc, FPSCR, Val::Int(u64::from(case.fpscr)));
    for &(addr, bytes) in case.mem {
        interp
            .machine
            .memory
            .write_bytes(AddrSpace::RAM, u64::from(addr), bytes);
    }
    let outcome = interp
        .run(GuestAddr(u64::from(case_addr(i))), &mut common::interpreter_env())
        .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    assert_eq!(outcome, Outcome::Returned, "{}", case.name);
    let m = &interp.machine;
    let bits = |v: Val| match v {
        Val::F64(b) => b,
        other => other.int(),
    };
    let mut out = Vec::new();
    for &(n, _, _) in case.expect_fprs {
        let (p0, p1) = (bits(m.state.get(desc, fpr(n))), bits(m.state.get(desc, ps1(n))));
        out.push(format!("f{n} {p0:016x} {p1:016x}"));
    }
    for &(n, _) in case.expect_gprs {
        out.push(format!("r{n} {:08x}", m.state.get(desc, gpr(n)).int()));
    }
    for &(n, _) in case.expect_cr {
        out.push(format!("cr{n} {:x}", m.state.get(desc, cr_field(n)).int()));
    }
    for &(addr, bytes) in case.expect_mem {
        for k in 0..bytes.len() {
            let a = u64::from(addr) + k as u64;
            out.push(format!("m{a:08x} {:02x}", m.memory.read_u8(AddrSpace::RAM, a)));
        }
    }
    out
}

#[test]
fn paired_singles_in_the_interpreter() {
    let mut failures = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        let program = lift(i, case);
        let got = interpret(i, case, &program);
        let want = expected_lines(case);
        if got != want {
            failures.push(format!("{}:\n  want {want:?}\n  got  {got:?}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A scratch directory of this process (a debug and a release run may go on at the same time),
/// empty.
fn scratch(name: &str) -> PathBuf {
    let dir = scratch_dir(
        env!("CARGO_TARGET_TMPDIR"),
        &format!("rpt-guest-ppc-dol-{name}-{}", std::process::id()),
    );
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the scratch directory");
    dir
}

/// The C driver: sets each case's state, calls its compiled function, prints the checked values.
fn driver(programs: &[Program]) -> String {
    let mut s = String::from(
        "/* The runtime's own main is renamed on the command line; this one is the driver's. */\n#undef main\n#define _DEFAULT_SOURCE 1\n#include \"cpu.h\"\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <sys/mman.h>\n\
         void rpt_ppc_platform_init(struct cpu *c, int argc, char **argv) { (void)c; (void)argc; (void)argv; }\n\
         void rpt_helper_sc(struct cpu *restrict c) { (void)c; abort(); }\n\
         uint64_t rpt_helper_timebase(struct cpu *restrict c) { (void)c; return 0; }\n",
    );
    for (i, _) in programs.iter().enumerate() {
        let _ = writeln!(s, "void f_{:08x}(struct cpu *restrict c);", case_addr(i));
    }
    s.push_str(
        "int main(void)\n{\n\trpt_mem = mmap(NULL, ((uint64_t)1 << 32) + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);\n\tstatic struct cpu cpu;\n\tstruct cpu *c = &cpu;\n",
    );
    for (i, case) in CASES.iter().enumerate() {
        let _ = writeln!(
            s,
            "\tmemset(c, 0, sizeof *c);\n\tmemset(rpt_mem + 0x80100000u, 0, 0x1000);"
        );
        for &(n, p0, p1) in case.fprs {
            let _ = writeln!(
                s,
                "\tc->f{n} = rpt_f64_from_bits(0x{p0:016x}ull); c->ps1_{n} = rpt_f64_from_bits(0x{p1:016x}ull);"
            );
        }
        for &(n, v) in case.gprs {
            let _ = writeln!(s, "\tc->r{n} = 0x{v:08x}u;");
        }
        for &(n, v) in case.gqrs {
            let _ = writeln!(s, "\tc->gqr{n} = 0x{v:08x}u;");
        }
        let _ = writeln!(s, "\tc->fpscr = 0x{:08x}u;", case.fpscr);
        for &(addr, bytes) in case.mem {
            for (k, b) in bytes.iter().enumerate() {
                let _ = writeln!(s, "\trpt_mem[0x{:08x}u] = 0x{b:02x};", addr as usize + k);
            }
        }
        let _ = writeln!(s, "\tf_{:08x}(c);\n\tprintf(\"case {i}\\n\");", case_addr(i));
        for &(n, _, _) in case.expect_fprs {
            let _ = writeln!(
                s,
                "\tprintf(\"f{n} %016llx %016llx\\n\", (unsigned long long)rpt_f64_bits(c->f{n}), (unsigned long long)rpt_f64_bits(c->ps1_{n}));"
            );
        }
        for &(n, _) in case.expect_gprs {
            let _ = writeln!(s, "\tprintf(\"r{n} %08x\\n\", c->r{n});");
        }
        for &(n, _) in case.expect_cr {
            let _ = writeln!(s, "\tprintf(\"cr{n} %x\\n\", c->cr{n} & 15u);");
        }
        for &(addr, bytes) in case.expect_mem {
            for k in 0..bytes.len() {
                let a = addr as usize + k;
                let _ = writeln!(s, "\tprintf(\"m{a:08x} %02x\\n\", rpt_mem[0x{a:08x}u]);");
            }
        }
    }
    s.push_str("\treturn 0;\n}\n");
    s
}

#[test]
fn paired_singles_compiled_to_c() {
    let dir = scratch("paired");
    let programs: Vec<Program> = CASES.iter().enumerate().map(|(i, c)| lift(i, c)).collect();
    let entry = GuestAddr(u64::from(CASE_BASE));
    let exe = common::build_compiled(&dir, &programs, entry, driver(&programs), "paired");
    let out = run_tool(&mut Command::new(&exe), b"", "the compiled paired-single cases");
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut got: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut current = usize::MAX;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("case ") {
            current = n.parse().expect("case number");
        } else {
            got.entry(current).or_default().push(line.to_string());
        }
    }
    let mut failures = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        let want = expected_lines(case);
        let have = got.remove(&i).unwrap_or_default();
        if have != want {
            failures.push(format!("{}:\n  want {want:?}\n  got  {have:?}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn binutils_encodes_the_words_used_here() {
    let dir = scratch("gekko");
    let asm = "ps_add 1,2,3\nps_div 1,2,3\nps_mul 1,2,4\nps_madd 1,2,4,3\nps_nmsub 1,2,4,3\nps_sel 1,2,4,3\n\
               ps_sum0 1,2,4,3\nps_muls1 5,2,4\nps_madds0 1,2,4,3\nps_merge10 6,2,3\nps_nabs 6,3\n\
               ps_cmpo1 cr6,4,3\nps_res 1,3\nps_rsqrte 5,4\npsq_l 1,-8(5),1,3\npsq_lu 5,8(5),0,2\n\
               psq_stu 2,8(5),0,2\npsq_st 4,16(6),1,1\npsq_lux 7,5,6,0,2\npsq_stux 7,8,6,0,2\nps_add. 1,2,3\n";
    let want: [u32; 21] = [
        0x1022_182a,
        0x1022_1824,
        0x1022_0132,
        0x1022_193a,
        0x1022_193c,
        0x1022_192e,
        0x1022_1914,
        0x10a2_011a,
        0x1022_191c,
        0x10c2_1ca0,
        0x10c0_1910,
        0x1304_18c0,
        0x1020_1830,
        0x10a0_2034,
        0xe025_bff8,
        0xe4a5_2008,
        0xf445_2008,
        0xf086_9010,
        0x10e5_314c,
        0x10e8_314e,
        0x1022_182b,
    ];
    std::fs::write(dir.join("ps.s"), asm).expect("write");
    run_tool(
        Command::new("powerpc-linux-gnu-as")
            .current_dir(&dir)
            .args(["-mgekko", "ps.s", "-o", "ps.o"]),
        b"",
        "powerpc-linux-gnu-as (install gcc-powerpc-linux-gnu)",
    );
    run_tool(
        Command::new("powerpc-linux-gnu-objcopy")
            .current_dir(&dir)
            .args(["-O", "binary", "-j", ".text", "ps.o", "ps.bin"]),
        b"",
        "powerpc-linux-gnu-objcopy",
    );
    let bytes = std::fs::read(dir.join("ps.bin")).expect("read");
    let got: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes(c.try_into().expect("4 bytes")))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(got, want);
    // And rpt decodes each one as the mnemonic binutils was given.
    for (line, word) in asm.lines().zip(want) {
        let insn = rpt_guest_ppc_dol::decode::decode(GuestAddr(0), word).unwrap_or_else(|| panic!("{line}: no row"));
        let mnemonic = line.split_whitespace().next().unwrap_or("");
        assert_eq!(insn.mnemonic(), mnemonic, "{line}");
    }
}
