//! The flat form of functions (rpt_api::abi::flat) on real lifted IR: the x86 demo's functions
//! round-trip exactly, and an answer after `fold-constants` gives back what the pass gives in
//! process, with the functions it left alone marked unchanged.

#[path = "common/demo.rs"]
mod demo;

use rpt_api::abi::flat;
use rpt_api::{BatchContext, PassParams, PassPlugin};
use rpt_pass_example::FoldConstants;

#[test]
fn lifted_functions_round_trip() {
    let funcs = demo::lifted().expect("the demo lifts").functions;
    assert!(funcs.len() > 20, "the demo has {} functions", funcs.len());
    for func in &funcs {
        let mut bytes = Vec::new();
        flat::encode_function_into(func, &mut bytes);
        assert_eq!(bytes.len(), flat::function_len(func));
        assert_eq!(flat::decode_function(&bytes).as_ref(), Ok(func), "{}", func.name());
        // Cut short anywhere (a sample of lengths: every one would take long in a debug build).
        for len in (0..bytes.len()).step_by(97).chain([bytes.len() - 1]) {
            assert!(
                flat::decode_function(&bytes[..len]).is_err(),
                "{} cut at {len}",
                func.name()
            );
        }
    }
    let batch = flat::encode_batch(&funcs);
    assert_eq!(batch.len(), flat::batch_len(&funcs));
    assert_eq!(flat::decode_batch(&batch, funcs.len()), Ok(funcs));
}

#[test]
fn an_answer_after_a_pass_matches_the_pass_in_process() {
    let demo::Demo {
        functions: funcs,
        state,
        helpers,
    } = demo::lifted().expect("the demo lifts");
    let cx = BatchContext {
        state: &state,
        helpers: &helpers,
        facts: &[],
    };
    let params = PassParams::new();
    let sent: Vec<Vec<u8>> = funcs
        .iter()
        .map(|f| {
            let mut bytes = Vec::new();
            flat::encode_function_into(f, &mut bytes);
            bytes
        })
        .collect();
    let sent: Vec<&[u8]> = sent.iter().map(Vec::as_slice).collect();

    let mut folded = funcs.clone();
    FoldConstants.run_all(&mut folded, &cx, &params).expect("the pass runs");
    let mut answer = Vec::new();
    flat::encode_answer_into(&folded, &sent, &mut answer);
    let decoded = flat::decode_answer(&answer, funcs.len()).expect("the answer decodes");
    let mut applied = funcs.clone();
    for (slot, func) in applied.iter_mut().zip(decoded.iter().cloned()) {
        if let Some(func) = func {
            *slot = func;
        }
    }
    assert_eq!(applied, folded);
    for ((before, after), entry) in funcs.iter().zip(&folded).zip(&decoded) {
        assert_eq!(entry.is_none(), before == after, "{}", before.name());
    }
}
