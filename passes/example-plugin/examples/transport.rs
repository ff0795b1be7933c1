//! What it costs to carry IR across the plugin boundary: a program-wide pass over 50,000
//! functions, cloned from the x86 demo's lifted functions, through a loaded plugin library.
//!
//! ```text
//! cargo build --release -p rpt-pass-example --features export-plugin --lib
//! cargo run --release -p rpt-pass-example --example transport -- target/release/librpt_pass_example.so
//! ```
//!
//! It prints the time of each part; docs/benchmarks/plugin-transport.md records the numbers. The
//! pass itself runs in process on the same functions, so the difference is the transport: encode,
//! the call, decode in the plugin, and the same again for the answer.

#[path = "../tests/common/demo.rs"]
mod demo;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rpt_api::abi::{LoadedPlugin, flat, load};
use rpt_api::{PassParams, PassPlugin};
use rpt_ir::Function;
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
        "{label:<44} {:>9.1} ms {:>8.2} us/function",
        total.as_secs_f64() * 1e3,
        per_function(total)
    );
}

fn main() -> Result<(), String> {
    let library = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .ok_or("usage: transport <path to librpt_pass_example.so built with --features export-plugin>")?;

    // The demo's functions as the x86 guest lifts them.
    let (lifted, state) = demo::lifted()?;
    let program: Vec<Function> = lifted.iter().cycle().take(function_count()).cloned().collect();
    let insts: usize = program.iter().flat_map(|f| &f.blocks).map(|b| b.insts.len() + 1).sum();
    println!(
        "{} functions cloned from the demo's {} lifted functions: {insts} instructions, {:.0} per function",
        function_count(),
        lifted.len(),
        insts as f64 / function_count() as f64
    );

    let LoadedPlugin::Pass(plugin) = load(&library).map_err(|e| e.to_string())? else {
        return Err(format!("{} is not a pass plugin", library.display()));
    };
    let params = PassParams::new();
    let helpers = std::collections::BTreeMap::new();
    let batch_cx = rpt_api::BatchContext {
        state: &state,
        helpers: &helpers,
        facts: &[],
    };
    let function_cx = batch_cx.function(0);

    // The flat form alone: every function encoded and decoded once each way, no call.
    let started = Instant::now();
    let request = flat::encode_batch(&program);
    let encoded = started.elapsed();
    let decoded = flat::decode_batch(&request, program.len()).map_err(|e| e.to_string())?;
    println!(
        "  encode {:.1} ms, decode {:.1} ms",
        encoded.as_secs_f64() * 1e3,
        (started.elapsed() - encoded).as_secs_f64() * 1e3
    );
    let answer = flat::encode_batch(&decoded);
    let back = flat::decode_batch(&answer, decoded.len()).map_err(|e| e.to_string())?;
    let codec = started.elapsed();
    assert!(back == program, "the flat form does not round-trip");
    println!(
        "request {:.1} MB, answer {:.1} MB ({} bytes per function)",
        request.len() as f64 / 1e6,
        answer.len() as f64 / 1e6,
        answer.len() / function_count()
    );
    report("encode + decode, both directions", codec);
    drop((request, decoded, answer, back));

    // The pass in process, for the work the plugin does besides transport.
    let mut in_process = program.clone();
    let started = Instant::now();
    FoldConstants
        .run_all(&mut in_process, &batch_cx, &params)
        .map_err(|(i, e)| format!("function {i}: {e}"))?;
    let work = started.elapsed();
    report("pass in process (no transport)", work);

    // The whole program in one call.
    let mut batch = program.clone();
    let started = Instant::now();
    plugin
        .run_all(&mut batch, &batch_cx, &params)
        .map_err(|(i, e)| format!("function {i}: {e}"))?;
    let batched = started.elapsed();
    assert!(batch == in_process, "the plugin and the in-process pass disagree");
    report("pass through the plugin, one call", batched);
    report("  of which transport", batched.saturating_sub(work));

    // One call per function, as the per-function query makes them.
    let mut single = program.clone();
    let started = Instant::now();
    for func in &mut single {
        plugin.run(func, &function_cx, &params).map_err(|e| e.to_string())?;
    }
    let one_by_one = started.elapsed();
    assert!(single == in_process, "the plugin and the in-process pass disagree");
    report("pass through the plugin, a call per function", one_by_one);
    report("  of which transport", one_by_one.saturating_sub(work));

    // The pass again over its own output: where it finds nothing more to fold, the plugin answers
    // "unchanged" and the host decodes nothing.
    let mut again_in_process = in_process.clone();
    let started = Instant::now();
    FoldConstants
        .run_all(&mut again_in_process, &batch_cx, &params)
        .map_err(|(i, e)| format!("function {i}: {e}"))?;
    let again_work = started.elapsed();
    let unchanged = again_in_process.iter().zip(&in_process).filter(|(a, b)| a == b).count();
    println!("second run: {unchanged} of {} functions unchanged", function_count());
    report("second run in process (no transport)", again_work);
    let mut again = in_process.clone();
    let started = Instant::now();
    plugin
        .run_all(&mut again, &batch_cx, &params)
        .map_err(|(i, e)| format!("function {i}: {e}"))?;
    let again_plugin = started.elapsed();
    assert!(again == again_in_process, "the plugin and the in-process pass disagree");
    report("second run through the plugin, one call", again_plugin);
    report("  of which transport", again_plugin.saturating_sub(again_work));
    Ok(())
}
