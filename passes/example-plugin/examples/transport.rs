//! What it costs to carry IR across the plugin boundary: a program-wide pass over 50,000
//! functions, cloned from the x86 demo's lifted functions, through a loaded plugin library.
//!
//! ```text
//! cargo build --release -p rpt-pass-example --features export-plugin --lib
//! cargo run --release -p rpt-pass-example --example transport -- target/release/librpt_pass_example.so [shared|flat]
//! ```
//!
//! The second argument picks the transport: `shared` (the default; the plugin works on the
//! functions in place when its layout key is this build's) or `flat` (encoded, decoded, and the
//! same again for the answer). It prints the time of each part; docs/benchmarks/plugin-transport.md
//! records the numbers, from callgrind as well. The pass itself runs in process on the same
//! functions, so the difference is the transport.

#[path = "../tests/common/demo.rs"]
mod demo;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rpt_api::abi::{LoadedPlugin, Transport, flat, load_with};
use rpt_api::{BatchContext, FunctionContext, PassParams, PassPlugin};
use rpt_ir::{Function, GuestAddr, Program};
use rpt_pass_example::FoldConstants;

/// How many functions the program has; `RPT_BENCH_FUNCTIONS` lowers it for runs under callgrind.
fn function_count() -> usize {
    std::env::var("RPT_BENCH_FUNCTIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50_000)
}

fn per_function(total: Duration) -> f64 {
    total.as_secs_f64() * 1e6 / function_count() as f64
}

fn report(label: &str, total: Duration) {
    println!(
        "{label:<48} {:>10.3} ms {:>8.3} us/function",
        total.as_secs_f64() * 1e3,
        per_function(total)
    );
}

fn main() -> Result<(), String> {
    let library = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .ok_or("usage: transport <path to librpt_pass_example.so built with --features export-plugin>")?;

    // The demo's functions as the x86 guest lifts them; the program cycles through them.
    let demo::Demo {
        functions: lifted,
        state,
        helpers,
    } = demo::lifted()?;
    let nth = |i: usize| lifted[i % lifted.len()].clone();
    let program: Vec<Function> = (0..function_count()).map(nth).collect();
    let insts: usize = program.iter().flat_map(|f| &f.blocks).map(|b| b.insts.len() + 1).sum();
    println!(
        "{} functions cloned from the demo's {} lifted functions: {insts} instructions, {:.0} per function",
        function_count(),
        lifted.len(),
        insts as f64 / function_count() as f64
    );

    let wanted = match std::env::args().nth(2).as_deref() {
        None | Some("shared") => Transport::Shared,
        Some("flat") => Transport::Flat,
        Some(other) => return Err(format!("unknown transport `{other}` (shared or flat)")),
    };
    let (LoadedPlugin::Pass(plugin), transport) = load_with(&library, wanted).map_err(|e| e.to_string())? else {
        return Err(format!("{} is not a pass plugin", library.display()));
    };
    println!("transport: {transport:?}");
    let params = PassParams::new();
    let batch_cx = rpt_api::BatchContext {
        state: &state,
        helpers: &helpers,
        facts: &[],
    };
    let function_cx = batch_cx.function(0);

    if transport == Transport::Flat {
        flat_form_alone(&program)?;
    }

    // The pass in process, for the work the plugin does besides transport.
    let mut in_process = program.clone();
    let work = phase_first_in_process(&mut in_process, &batch_cx, &params)?;
    report("pass in process (no transport)", work);

    // The whole program through `run_all`, as a program-wide pass calls it.
    let mut batch = program;
    let batched = phase_first_run_all(plugin.as_ref(), &mut batch, &batch_cx, &params)?;
    assert!(batch == in_process, "the plugin and the in-process pass disagree");
    drop(batch);
    report("pass through the plugin, run_all", batched);
    report("  of which transport", batched.saturating_sub(work));

    // One call per function, as the per-function query makes them.
    let one_by_one = phase_per_call(plugin.as_ref(), &nth, &in_process, &function_cx, &params)?;
    report("pass through the plugin, a call per function", one_by_one);
    report("  of which transport", one_by_one.saturating_sub(work));

    // The pass again over its own output: where it finds nothing more to fold, the plugin answers
    // "unchanged" and the host decodes nothing.
    let mut again_in_process = in_process.clone();
    let again_work = phase_second_in_process(&mut again_in_process, &batch_cx, &params)?;
    let unchanged = again_in_process.iter().zip(&in_process).filter(|(a, b)| a == b).count();
    println!("second run: {unchanged} of {} functions unchanged", function_count());
    report("second run in process (no transport)", again_work);
    let mut again = in_process;
    let again_plugin = phase_second_run_all(plugin.as_ref(), &mut again, &batch_cx, &params)?;
    assert!(again == again_in_process, "the plugin and the in-process pass disagree");
    report("second run through the plugin, run_all", again_plugin);
    report("  of which transport", again_plugin.saturating_sub(again_work));
    drop(again_in_process);

    // A whole-program analysis request carries the whole program to the plugin at once. The
    // example pass has no analysis and answers at once, so all of this is transport.
    let whole = Program {
        state: state.clone(),
        helpers: helpers.clone(),
        functions: again
            .into_iter()
            .enumerate()
            .map(|(i, f)| (GuestAddr(i as u64), f))
            .collect(),
        ..Program::default()
    };
    let analysis = phase_analyze(plugin.as_ref(), &whole, &params)?;
    report("whole-program analysis request (all transport)", analysis);
    Ok(())
}

/// The flat form alone: every function encoded and decoded once each way, no call. (Each copy of
/// the program takes a few GB at 50,000 functions, so copies are dropped early.)
fn flat_form_alone(program: &[Function]) -> Result<(), String> {
    let timed = |f: &mut dyn FnMut()| {
        let started = Instant::now();
        f();
        started.elapsed()
    };
    let (mut request, mut decoded, mut answer, mut back) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let encode_request = timed(&mut || request = flat::encode_batch(program));
    let mut failure = None;
    let decode_request = timed(&mut || match flat::decode_batch(&request, program.len()) {
        Ok(funcs) => decoded = funcs,
        Err(e) => failure = Some(e),
    });
    let request_len = request.len();
    drop(request);
    let encode_answer = timed(&mut || answer = flat::encode_batch(&decoded));
    drop(decoded);
    let decode_answer = timed(&mut || match flat::decode_batch(&answer, program.len()) {
        Ok(funcs) => back = funcs,
        Err(e) => failure = Some(e),
    });
    if let Some(e) = failure {
        return Err(e.to_string());
    }
    println!(
        "  encode {:.1} ms, decode {:.1} ms (each way; drops not counted)",
        encode_request.as_secs_f64() * 1e3,
        decode_request.as_secs_f64() * 1e3
    );
    let codec = encode_request + decode_request + encode_answer + decode_answer;
    assert!(back == program, "the flat form does not round-trip");
    println!(
        "request {:.1} MB, answer {:.1} MB ({} bytes per function)",
        request_len as f64 / 1e6,
        answer.len() as f64 / 1e6,
        answer.len() / function_count()
    );
    report("encode + decode, both directions", codec);
    drop((answer, back));
    Ok(())
}

// Each measured phase is a function of its own, so that callgrind reports its instructions apart:
// `callgrind_annotate --inclusive=yes callgrind.out.N | grep phase_`.

#[inline(always)]
fn timed_run_all(
    pass: &dyn PassPlugin,
    funcs: &mut [Function],
    cx: &BatchContext<'_>,
    params: &PassParams,
) -> Result<Duration, String> {
    let started = Instant::now();
    pass.run_all(funcs, cx, params)
        .map_err(|(i, e)| format!("function {i}: {e}"))?;
    Ok(started.elapsed())
}

#[inline(never)]
fn phase_first_in_process(
    funcs: &mut [Function],
    cx: &BatchContext<'_>,
    params: &PassParams,
) -> Result<Duration, String> {
    // Distinct bodies, or the compiler merges the phases into one symbol.
    std::hint::black_box("phase_first_in_process");
    timed_run_all(&FoldConstants, funcs, cx, params)
}

#[inline(never)]
fn phase_second_in_process(
    funcs: &mut [Function],
    cx: &BatchContext<'_>,
    params: &PassParams,
) -> Result<Duration, String> {
    // Distinct bodies, or the compiler merges the phases into one symbol.
    std::hint::black_box("phase_second_in_process");
    timed_run_all(&FoldConstants, funcs, cx, params)
}

#[inline(never)]
fn phase_first_run_all(
    plugin: &dyn PassPlugin,
    funcs: &mut [Function],
    cx: &BatchContext<'_>,
    params: &PassParams,
) -> Result<Duration, String> {
    // Distinct bodies, or the compiler merges the phases into one symbol.
    std::hint::black_box("phase_first_run_all");
    timed_run_all(plugin, funcs, cx, params)
}

#[inline(never)]
fn phase_second_run_all(
    plugin: &dyn PassPlugin,
    funcs: &mut [Function],
    cx: &BatchContext<'_>,
    params: &PassParams,
) -> Result<Duration, String> {
    // Distinct bodies, or the compiler merges the phases into one symbol.
    std::hint::black_box("phase_second_run_all");
    timed_run_all(plugin, funcs, cx, params)
}

/// The whole program to the plugin's `analyze`.
#[inline(never)]
fn phase_analyze(plugin: &dyn PassPlugin, program: &Program, params: &PassParams) -> Result<Duration, String> {
    let started = Instant::now();
    let analysis = plugin.analyze(program, params).map_err(|e| e.to_string())?;
    let elapsed = started.elapsed();
    if analysis.is_some() {
        return Err("the example pass has no analysis, but the plugin answered with one".to_string());
    }
    Ok(elapsed)
}

/// One function through one call (the pass's work included).
#[inline(never)]
fn phase_one_call(
    plugin: &dyn PassPlugin,
    func: &mut Function,
    cx: &FunctionContext<'_>,
    params: &PassParams,
) -> Result<(), String> {
    plugin.run(func, cx, params).map_err(|e| e.to_string())
}

/// Each function through its own call, compared with the in-process result; the clone of each
/// input and the comparison (not transport) are outside `phase_one_call` and the timing.
#[inline(never)]
fn phase_per_call(
    plugin: &dyn PassPlugin,
    nth: &dyn Fn(usize) -> Function,
    expected: &[Function],
    cx: &FunctionContext<'_>,
    params: &PassParams,
) -> Result<Duration, String> {
    let mut total = Duration::ZERO;
    for (i, expected) in expected.iter().enumerate() {
        let mut func = nth(i);
        let started = Instant::now();
        phase_one_call(plugin, &mut func, cx, params)?;
        total += started.elapsed();
        assert!(func == *expected, "the plugin and the in-process pass disagree");
    }
    Ok(total)
}
