//! The core reuses what an edit does not touch: salsa's early cut-off, observed through query executions.

use std::path::Path;
use std::sync::{Arc, Mutex};

use rpt_core::{Registry, RptDb, Session, generate};
use salsa::Setter;

fn demo() -> rpt_recipe::LoadedRecipe {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    rpt_recipe::load(&root.join("recipes/demo-x86.ron")).expect("the demo recipe loads")
}

struct Logged {
    db: RptDb,
    log: Arc<Mutex<Vec<String>>>,
}

impl Logged {
    fn new() -> Logged {
        let mut registry = Registry::new();
        registry.add_guest(Arc::new(rpt_guest_x86_pe::X86Pe));
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        let db = RptDb::with_execution_log(registry, move |query| {
            if let Ok(mut log) = sink.lock() {
                log.push(query);
            }
        });
        Logged { db, log }
    }

    /// How many times each query ran since the last call, by query name.
    fn executions(&self, query: &str) -> usize {
        let log = self.log.lock().expect("log lock");
        log.iter().filter(|q| q.starts_with(&format!("{query}("))).count()
    }

    fn session(&self, loaded: &rpt_recipe::LoadedRecipe) -> Session {
        Session::new(
            &self.db,
            loaded.recipe.clone(),
            Arc::from(loaded.image.clone()),
            "demo.lst".into(),
        )
    }

    fn reset(&self) {
        self.log.lock().expect("log lock").clear();
    }

    /// Generates the session's program.
    fn generate(&self, s: Session) -> rpt_core::Generation {
        generate(&self.db, s, &|_, _, _| {}).expect("generates")
    }

    /// Forgets the executions so far, gives the session `recipe` and generates again.
    fn regenerate(&mut self, s: Session, recipe: rpt_recipe::Recipe) -> rpt_core::Generation {
        self.reset();
        s.set_recipe(&mut self.db).to(recipe);
        self.generate(s)
    }
}

#[test]
fn changing_the_shard_count_reuses_every_functions_c() {
    let loaded = demo();
    let mut t = Logged::new();
    let s = t.session(&loaded);
    let first = t.generate(s);
    let functions = first.stats.functions;
    assert!(functions > 10);
    assert_eq!(t.executions("function_c"), functions);
    assert_eq!(t.executions("lifted_function"), functions);

    let mut recipe = loaded.recipe.clone();
    recipe.shards += 1;
    let second = t.regenerate(s, recipe.clone());
    assert_eq!(
        t.executions("function_c"),
        0,
        "no function's C depends on the shard count"
    );
    assert_eq!(t.executions("lifted_function"), 0);
    assert_eq!(t.executions("shard_text"), recipe.shards as usize);
    assert_eq!(second.stats.shards, recipe.shards as usize);
}

#[test]
fn a_hint_that_finds_nothing_new_does_not_relift_anything() {
    let loaded = demo();
    let mut t = Logged::new();
    let s = t.session(&loaded);
    let first = t.generate(s);

    let mut recipe = loaded.recipe.clone();
    // The image's entry point is already a function: hinting it changes the recipe, not the function set.
    let image = rpt_core::guest_image(&t.db, s).clone().expect("image loads");
    recipe.function_hints.push(image.entry.0);
    let second = t.regenerate(s, recipe);
    assert_eq!(
        t.executions("program_facts"),
        1,
        "discovery reads the recipe, so it runs again"
    );
    assert_eq!(
        t.executions("lifted_function"),
        0,
        "its result compared equal, so nothing downstream re-ran"
    );
    assert_eq!(t.executions("function_c"), 0);
    assert_eq!(first.files, second.files);
}

#[test]
fn editing_one_override_re_emits_only_that_functions_c() {
    let loaded = demo();
    let mut t = Logged::new();
    let s = t.session(&loaded);
    let first = t.generate(s);

    // cb_add at 0x4014b0; its guard hash as the core computes it.
    let f = rpt_core::FunctionId::new(&t.db, rpt_ir::GuestAddr(0x4014b0));
    let lifted = rpt_core::lifted_function(&t.db, s, f).clone().expect("lifts");
    let image = rpt_core::guest_image(&t.db, s).clone().expect("loads");
    let hash = rpt_core::original_bytes_sha256(&lifted.function, &image);
    let mut recipe = loaded.recipe.clone();
    recipe.overrides.push(rpt_recipe::Override {
        function: 0x4014b0,
        c_symbol: "fast_add".into(),
        original_sha256: hash,
    });
    for symbol in ["fast_add", "faster_add"] {
        recipe.overrides[0].c_symbol = symbol.into();
        let next = t.regenerate(s, recipe.clone());
        assert_eq!(
            t.executions("function_c"),
            1,
            "only the overridden function's C is re-emitted"
        );
        assert_eq!(t.executions("lifted_function"), 0);
        let changed: Vec<&str> = first
            .files
            .iter()
            .zip(&next.files)
            .filter(|(a, b)| a != b)
            .map(|(a, _)| a.path.as_str())
            .collect();
        let shard = format!(
            "shard_{:04}.c",
            rpt_emit_c::shard_of(rpt_ir::GuestAddr(0x4014b0), recipe.shards)
        );
        let ir = format!(
            "ir/shard_{:04}.rir",
            rpt_emit_c::shard_of(rpt_ir::GuestAddr(0x4014b0), recipe.shards)
        );
        assert_eq!(
            changed,
            [ir.as_str(), shard.as_str()],
            "only its shard and IR shard change"
        );
    }
}

/// A per-function pass that says it has no whole-program analysis, and whose `analyze` would fail.
struct NoAnalysis;

impl rpt_api::PassPlugin for NoAnalysis {
    fn info(&self) -> rpt_api::PluginInfo {
        rpt_api::PluginInfo {
            name: "no-analysis".into(),
            version: "0".into(),
            hash: "0".into(),
        }
    }
    fn check_params(&self, _: &rpt_api::PassParams) -> Result<(), rpt_api::PassError> {
        Ok(())
    }
    fn analyze(
        &self,
        _: &rpt_ir::Program,
        _: &rpt_api::PassParams,
    ) -> Result<Option<rpt_api::ProgramAnalysis>, rpt_api::PassError> {
        Err(rpt_api::PassError::Failed("analyze must not be called".into()))
    }
    fn analyzes(&self) -> bool {
        false
    }
    fn run(
        &self,
        _: &mut rpt_ir::Function,
        _: &rpt_api::FunctionContext<'_>,
        _: &rpt_api::PassParams,
    ) -> Result<(), rpt_api::PassError> {
        Ok(())
    }
}

#[test]
fn a_pass_without_an_analysis_is_never_asked_for_one() {
    let loaded = demo();
    let mut registry = Registry::new();
    registry.add_guest(Arc::new(rpt_guest_x86_pe::X86Pe));
    registry.add_pass(Arc::new(NoAnalysis));
    let db = RptDb::new(registry);
    let mut recipe = loaded.recipe.clone();
    recipe.passes = Some(vec![rpt_recipe::PassConfig {
        name: "no-analysis".into(),
        enabled: true,
        params: Default::default(),
    }]);
    let s = Session::new(&db, recipe, Arc::from(loaded.image.clone()), "demo.lst".into());
    let generation = generate(&db, s, &|_, _, _| {}).expect("no analysis is asked for, so none fails");
    assert!(generation.stats.functions > 10);
}
