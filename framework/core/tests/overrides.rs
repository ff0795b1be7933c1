//! Overrides: a guarded replacement of one guest function by a named C function.

use std::path::Path;
use std::sync::Arc;

use rpt_core::{CoreError, Registry, RptDb, Session, generate, original_bytes_sha256};
use rpt_ir::GuestAddr;

/// `cb_add` of the demo: `mov eax,[esp+8]; mov edx,[esp+4]; add eax,edx; ret` (11 bytes).
const CB_ADD: u64 = 0x4014b0;

fn demo() -> rpt_recipe::LoadedRecipe {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    rpt_recipe::load(&root.join("recipes/demo-x86.ron")).expect("the demo recipe loads")
}

fn db() -> RptDb {
    let mut registry = Registry::new();
    registry.add_guest(Arc::new(rpt_guest_x86_pe::X86Pe));
    RptDb::new(registry)
}

fn with_override(loaded: &rpt_recipe::LoadedRecipe, function: u64, sha: &str) -> rpt_recipe::Recipe {
    let mut recipe = loaded.recipe.clone();
    recipe.overrides.push(rpt_recipe::Override {
        function,
        c_symbol: "my_add".into(),
        original_sha256: sha.into(),
    });
    recipe
}

fn cb_add_bytes_hash(loaded: &rpt_recipe::LoadedRecipe) -> String {
    let image = rpt_guest_x86_pe::loader_pe::load(&loaded.image).expect("loads");
    // Three instructions of 4, 4 and 2 bytes, each running to the next; the last one, `ret` at
    // 0x4014ba, spans 16 bytes (its own byte, padding, and the start of cb_sub at 0x4014c0).
    let bytes = image.bytes_at(GuestAddr(CB_ADD), 10 + 16).expect("in the image");
    assert_eq!(bytes[10], 0xc3, "ret");
    assert_eq!(&bytes[..4], &[0x8b, 0x44, 0x24, 0x08], "mov eax, [esp+8]");
    rpt_recipe::sha256_hex(bytes)
}

fn generate_with(
    recipe: rpt_recipe::Recipe,
    loaded: &rpt_recipe::LoadedRecipe,
) -> Result<rpt_core::Generation, CoreError> {
    let db = db();
    let s = Session::new(&db, recipe, Arc::from(loaded.image.clone()), "demo.lst".into());
    generate(&db, s, &|_, _, _| {})
}

fn file(g: &rpt_core::Generation, pred: impl Fn(&str) -> bool) -> Vec<&str> {
    g.files
        .iter()
        .filter(|f| pred(&f.path))
        .map(|f| f.contents.as_str())
        .collect()
}

#[test]
fn the_original_bytes_are_the_marked_instructions_in_address_order() {
    let loaded = demo();
    let db = db();
    let s = Session::new(
        &db,
        loaded.recipe.clone(),
        Arc::from(loaded.image.clone()),
        "demo.lst".into(),
    );
    let f = rpt_core::FunctionId::new(&db, GuestAddr(CB_ADD));
    let lifted = rpt_core::lifted_function(&db, s, f).clone().expect("lifts");
    let image = rpt_core::guest_image(&db, s).clone().expect("loads");
    assert_eq!(
        original_bytes_sha256(&lifted.function, &image),
        cb_add_bytes_hash(&loaded)
    );
}

#[test]
fn an_override_replaces_exactly_one_function_body() {
    let loaded = demo();
    let plain = generate_with(loaded.recipe.clone(), &loaded).expect("generates");
    let hash = cb_add_bytes_hash(&loaded);
    let overridden = generate_with(with_override(&loaded, CB_ADD, &hash), &loaded).expect("generates");

    let shards = |g: &rpt_core::Generation| file(g, |p| p.starts_with("shard_")).join("\n");
    let before = shards(&plain);
    let after = shards(&overridden);
    assert!(after.contains("void my_add(struct cpu *restrict c);"), "{after}");
    assert!(after.contains("__attribute__((musttail)) return my_add(c);"), "{after}");
    assert!(!before.contains("my_add"));
    // Every other line of C is unchanged: the override touches one function's body only.
    let removed: Vec<&str> = before.lines().filter(|l| !after.lines().any(|m| m == *l)).collect();
    assert!(
        removed
            .iter()
            .all(|l| !l.starts_with("void f_") && !l.contains("f_004014b0(")),
        "{removed:?}"
    );
    let ir = file(&overridden, |p| p.starts_with("ir/")).join("\n");
    assert!(ir.contains("; replaced by the C function `my_add`"), "{ir}");
    assert!(ir.contains("function f_004014b0 {"), "{ir}");
    assert_eq!(
        file(&plain, |p| p == "functab.c"),
        file(&overridden, |p| p == "functab.c")
    );
}

#[test]
fn an_override_whose_guard_fails_is_an_error_naming_the_function_and_both_hashes() {
    let loaded = demo();
    let wrong = "0".repeat(64);
    let e = generate_with(with_override(&loaded, CB_ADD, &wrong), &loaded).expect_err("guard fails");
    let actual = cb_add_bytes_hash(&loaded);
    assert!(
        matches!(&e, CoreError::OverrideMismatch { function, actual: a, .. } if function.0 == CB_ADD && *a == actual),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.contains("f_004014b0") && text.contains(&actual) && text.contains(&wrong),
        "{text}"
    );
}

#[test]
fn an_override_of_an_address_that_is_no_function_is_an_error() {
    let loaded = demo();
    let e = generate_with(with_override(&loaded, CB_ADD + 4, &"0".repeat(64)), &loaded).expect_err("no function");
    assert!(matches!(e, CoreError::OverrideNotAFunction { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains("names f_004014b4, which is not a discovered function"),
        "{e}"
    );
}
